"""What a JAX user chasing a bug does with HLO text: save what JAX prints under whatever name,
open it, run it against jax.jit, set breakpoints the way HLO names things, step through fusions.
Each test pins a defect found that way. The programs are generated in-process with small shapes;
the tests that need JAX skip without it."""
from __future__ import annotations

import json

import numpy as np
import pytest

import hlodbg


def _jax():
    jax = pytest.importorskip("jax")
    return jax, pytest.importorskip("jax.numpy")


def _log_loop(x):
    """A fori_loop whose log goes NaN on the third iteration for x = [3, 4, 5]."""
    jax, jnp = _jax()
    return jax.lax.fori_loop(0, 6, lambda i, v: jnp.log(v - 0.5 * i), x)


X = np.array([3.0, 4.0, 5.0], np.float32)


def _texts():
    """(pre-optimization HLO, MLIR, post-optimization HLO) of the NaN loop."""
    jax, _ = _jax()
    lowered = jax.jit(_log_loop).lower(X)
    return lowered.as_text(dialect="hlo"), lowered.as_text(), lowered.compile().as_text()


# -- the language is read from the text, whatever the file is called ----------------------------

@pytest.mark.parametrize("which, name", [(1, "lowered.txt"), (1, "lowered.hlo"), (0, "module.mlir")])
def test_the_text_decides_the_language_not_the_file_name(tmp_path, which, name):
    # `open("out.txt", "w").write(lowered.as_text())` is MLIR in a .txt; an HLO dump renamed .mlir.
    jax, _ = _jax()
    path = tmp_path / name
    path.write_text(_texts()[which])
    got = hlodbg.load(path).run(X)
    np.testing.assert_allclose(np.asarray(got[0] if isinstance(got, list) else got),
                               np.asarray(jax.jit(_log_loop)(X)), rtol=1e-6, equal_nan=True)


# -- breakpoints on the opcodes the HLO text shows -------------------------------------------------

FUSED = """\
HloModule fused

%fused_computation (p0: f32[2,3], p1: f32[3,2]) -> f32[2,2] {
  %p0 = f32[2,3]{1,0} parameter(0)
  %p1 = f32[3,2]{1,0} parameter(1)
  ROOT %dot.1 = f32[2,2]{1,0} dot(%p0, %p1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}

ENTRY %main.3 (x: f32[2,3], y: f32[3,2]) -> (f32[2,2], f32[2]) {
  %x = f32[2,3]{1,0} parameter(0)
  %y = f32[3,2]{1,0} parameter(1)
  %fusion.3 = f32[2,2]{1,0} fusion(%x, %y), kind=kOutput, calls=%fused_computation
  %copy.4 = f32[2,2]{0,1} copy(%fusion.3)
  %b = f32[2]{0} broadcast(f32[] constant(1)), dimensions={}
  %t = (f32[2,2]{0,1}, f32[2]{0}) tuple(%copy.4, %b)
  %gte = f32[2,2]{0,1} get-tuple-element(%t), index=0
  ROOT %out = (f32[2,2]{0,1}, f32[2]{0}) tuple(%gte, %b)
}
"""


@pytest.mark.parametrize("opcode, names", [
    ("fusion", {"%fusion.3"}), ("copy", {"%copy.4"}), ("dot", {"%dot.1"}), ("broadcast", {"%b"}),
    ("get-tuple-element", {"%gte"}),  # not the getters the lowering adds to return the ROOT tuple
])
def test_a_breakpoint_on_an_hlo_opcode_stops_at_the_instructions_of_that_opcode(opcode, names):
    session = hlodbg.load(FUSED).session(persist=False)
    bp = session.break_at(opcode, saved=False)
    assert bp.kind == "kind"
    assert {op.results[0].name for op in bp.ops} == names
    stop = session.continue_()
    assert stop.reason == "breakpoint" and session.op.results[0].name in names


@pytest.mark.parametrize("spec, message", [
    ("dynamic-slice", "the program has no dynamic-slice op"),  # an opcode, not `dynamic - slice`
    ("exponential", "the program has no exponential op"),
    ("abs(reslt).max() > 3", "unknown name 'reslt'"),  # a typo never holds: refused when set
])
def test_a_breakpoint_that_can_never_stop_is_refused_when_it_is_set(spec, message):
    session = hlodbg.load(FUSED).session(persist=False)
    with pytest.raises(hlodbg.HlodbgError, match=message):
        session.break_at(spec, saved=False)


# -- reports name the entry computation, not the word `main` that stood for it ----------------------

def test_memory_and_run_reports_name_the_entry_computation(tmp_path, capsys):
    from hlodbg.cli import main

    path = tmp_path / "fused.hlo"
    path.write_text(FUSED)
    assert hlodbg.load(path).memory().entry == "main.3"
    assert main(["memory", str(path)]) == 0
    text = capsys.readouterr().out
    assert text.startswith(f"{path.name} @main.3 on cpu")
    assert " in @main.3" not in text  # the entry's own buffers go without a function suffix
    assert main(["run", str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["entry"] == "main.3"


# -- expressions name HLO values as the text spells them --------------------------------------------

def test_a_hyphen_before_a_digit_still_subtracts():
    session = hlodbg.load(FUSED).session([np.ones((2, 3), np.float32), np.ones((3, 2), np.float32)],
                                         persist=False)
    session.break_at("%out", saved=False)
    session.continue_()
    session.watch("%copy.4-1")  # a digit after '-': a subtraction, as before
    assert session.watches()[0][1].tolist() == [[2, 2], [2, 2]]


HYPHENATED = """\
HloModule m
ENTRY %e (p: (f32[2], f32[2])) -> f32[2] {
  %p = (f32[2]{0}, f32[2]{0}) parameter(0)
  %get-tuple-element.1 = f32[2]{0} get-tuple-element(%p), index=0
  %get-tuple-element.2 = f32[2]{0} get-tuple-element(%p), index=1
  ROOT %add.3 = f32[2]{0} add(%get-tuple-element.1, %get-tuple-element.2)
}
"""


@pytest.mark.parametrize("text, want", [
    ("%get-tuple-element.1", [1, 2]),
    ("%get-tuple-element.2.max()", 20),
    ("%get-tuple-element.2 - %get-tuple-element.1", [9, 18]),
    ("%get-tuple-element.1-1", [0, 1]),
])
def test_an_expression_reads_a_hyphenated_hlo_name(text, want):
    args = [(np.array([1, 2], np.float32), np.array([10, 20], np.float32))]
    session = hlodbg.load(HYPHENATED).session(args, persist=False)
    session.break_at("add", saved=False)
    session.continue_()
    np.testing.assert_array_equal(session.evaluate(text), want)


def test_a_refused_expression_says_error_once():
    session = hlodbg.load(HYPHENATED).session(persist=False)
    with pytest.raises(hlodbg.HlodbgError) as refused:
        session.evaluate("%add.3 +")
    assert str(refused.value).count("error:") == 1


# -- a post-optimization module has a thousand computations ----------------------------------------

def _many_fusions(count: int) -> str:
    """A module shaped like a post-optimization dump: `count` fused computations, one fusion each."""
    parts = ["HloModule many\n"]
    for i in range(count):
        parts.append(f"%fused_computation.{i} (p: f32[2]) -> f32[2] {{\n  %p = f32[2]{{0}} parameter(0)\n"
                     f"  ROOT %n.{i} = f32[2]{{0}} negate(%p)\n}}\n")
    body = ["  %x = f32[2]{0} parameter(0)"]
    previous = "%x"
    for i in range(count):
        body.append(f"  %fusion.{i} = f32[2]{{0}} fusion({previous}), kind=kLoop, calls=%fused_computation.{i}")
        previous = f"%fusion.{i}"
    body[-1] = body[-1].replace("  %fusion", "  ROOT %fusion", 1)
    parts.append("ENTRY %main.9 (x: f32[2]) -> f32[2] {\n" + "\n".join(body) + "\n}\n")
    return "\n".join(parts)


def test_a_missing_function_lists_a_few_names_closest_first(tmp_path, capsys):
    from hlodbg.cli import main

    path = tmp_path / "many.txt"
    path.write_text(_many_fusions(300))
    assert main(["run", str(path), "--entry", "fused_computation.12x"]) == 2
    message = capsys.readouterr().err
    assert "@fused_computation.12," in message and "and 291 more" in message and len(message) < 600
    assert main(["export", str(path), "--function", "mian", "-o", str(tmp_path / "g.dot")]) == 2
    assert "@main.9" in capsys.readouterr().err


def test_export_function_main_draws_the_entry_computation(tmp_path, capsys):
    from hlodbg.cli import main

    path = tmp_path / "few.txt"
    path.write_text(_many_fusions(3))
    assert main(["export", str(path), "--function", "main", "-o", str(tmp_path / "g.dot")]) == 0
    assert "@main.9" in (tmp_path / "g.dot").read_text()


# -- files a dump directory holds beside the modules -------------------------------------------------

def test_a_dump_directory_names_a_module_to_open(tmp_path):
    (tmp_path / "module_0001.jit_f.before_optimizations.txt").write_text(FUSED)
    (tmp_path / "module_0001.jit_f.cpu_after_optimizations.txt").write_text(FUSED + "\n" * 10)
    (tmp_path / "module_0001.jit_f.cpu_after_optimizations-buffer-assignment.txt").write_text("x" * 999)
    with pytest.raises(hlodbg.ParseError, match=r"directory of XLA dumps \(2 module files\).*"
                                                r"module_0001\.jit_f\.cpu_after_optimizations\.txt$"):
        hlodbg.load(tmp_path)
    (tmp_path / "plain").mkdir()
    with pytest.raises(hlodbg.ParseError, match=r"directory, not a program file \(\.mlir, \.hlo or \.txt\)"):
        hlodbg.load(tmp_path / "plain")


def test_an_hlo_proto_is_named_as_such(tmp_path):
    path = tmp_path / "module_0001.jit_f.before_optimizations.hlo.pb"
    path.write_bytes(b"\x0a\x05jit_f\x12\xff\xfe")
    with pytest.raises(hlodbg.ParseError, match="HLO proto.*--xla_dump_hlo_as_text"):
        hlodbg.load(path)


@pytest.mark.parametrize("command", ["open", "serve", "verify", "print", "run", "check", "export", "memory", "diff"])
def test_every_command_says_it_reads_hlo_text(command, capsys):
    from hlodbg.cli import _parser

    with pytest.raises(SystemExit):
        _parser().parse_args([command, "--help"])
    assert "XLA HLO text (.hlo, .txt" in " ".join(capsys.readouterr().out.split())


@pytest.mark.parametrize("encoding", ["utf-8-sig", "utf-16"])  # Notepad; Windows PowerShell's `>`
def test_a_byte_order_mark_does_not_stop_a_program_from_opening(tmp_path, encoding):
    from hlodbg.engine.run.checking import check_path

    path = tmp_path / "fused.hlo"
    path.write_bytes(FUSED.encode(encoding))
    assert hlodbg.load(path).module.entry.sym_name == "main.3"
    (outcome,) = check_path(str(path))
    assert "not UTF-8" not in str(outcome.error)


# -- memory: an element read out of a tuple is the element's buffer, not a copy ----------------------

TUPLE_ROOT_HLO = """\
HloModule m
ENTRY %e (p: f32[1024]) -> (f32[1024], f32[1024]) {
  %p = f32[1024]{0} parameter(0)
  %a = f32[1024]{0} negate(%p)
  %t = (f32[1024]{0}, f32[1024]{0}) tuple(%a, %p)
  %x = f32[1024]{0} get-tuple-element(%t), index=0
  %b = f32[1024]{0} exponential(%x)
  ROOT %r = (f32[1024]{0}, f32[1024]{0}) tuple(%x, %b)
}
"""

TUPLE_ROOT_MLIR = """\
func.func @main(%p: tensor<1024xf32>) -> (tensor<1024xf32>, tensor<1024xf32>) {
  %a = stablehlo.negate %p : tensor<1024xf32>
  %b = stablehlo.exponential %a : tensor<1024xf32>
  return %a, %b : tensor<1024xf32>, tensor<1024xf32>
}
"""


def test_hlo_tuples_and_their_elements_take_the_bytes_mlir_values_do():
    # The entry's ROOT tuple is unpacked by get-tuple-elements the lowering adds: counted as new
    # buffers, they made every multi-output HLO module's peak up to twice its MLIR form's.
    hlo = hlodbg.load(TUPLE_ROOT_HLO).memory().devices[0]
    mlir = hlodbg.load(TUPLE_ROOT_MLIR).memory().devices[0]
    assert hlo.peak_bytes == mlir.peak_bytes == 3 * 4096
    # %a stays live through %b, which reads it through the tuple.
    liveness = hlo.entry.liveness
    a = next(v for v in liveness.values if v.name == "%a")
    b = next(v for v in liveness.values if v.name == "%b")
    assert liveness.live_range(a)[1] >= liveness.live_range(b)[0]


# -- memory: donation in the header frees the donated parameter, as MLIR's arg attributes do ----------

DONATING_HLO = """\
HloModule m, input_output_alias={ {}: (0, {}, may-alias) }, buffer_donor={ (1, {}) }
ENTRY %e (p: f32[1024], q: f32[1024]) -> f32[1024] {
  %p = f32[1024]{0} parameter(0)
  %q = f32[1024]{0} parameter(1)
  %a = f32[1024]{0} add(%p, %q)
  %b = f32[1024]{0} negate(%a)
  ROOT %c = f32[1024]{0} exponential(%b)
}
"""

DONATING_MLIR = """\
func.func @main(%p: tensor<1024xf32> {tf.aliasing_output = 0 : i32}, %q: tensor<1024xf32> {jax.buffer_donor = true}) -> tensor<1024xf32> {
  %a = stablehlo.add %p, %q : tensor<1024xf32>
  %b = stablehlo.negate %a : tensor<1024xf32>
  %c = stablehlo.exponential %b : tensor<1024xf32>
  return %c : tensor<1024xf32>
}
"""


def test_donated_parameters_are_freed_after_their_last_use_as_in_mlir():
    program = hlodbg.load(DONATING_HLO)
    assert program.module.entry.arg_attrs(0)["tf.aliasing_output"] == 0
    assert program.module.entry.arg_attrs(1)["jax.buffer_donor"] is True
    hlo = program.memory().devices[0]
    assert hlo.peak_bytes == hlodbg.load(DONATING_MLIR).memory().devices[0].peak_bytes == 3 * 4096


SHARED_BRANCH = """\
HloModule shared
%negated (a: f32[2]) -> f32[2] {
  %a = f32[2]{0} parameter(0)
  ROOT %n = f32[2]{0} negate(%a)
}
%same (a: f32[2]) -> f32[2] {
  ROOT %a2 = f32[2]{0} parameter(0)
}
ENTRY %main.1 (i: s32[], x: f32[2]) -> f32[2] {
  %i = s32[] parameter(0)
  %x = f32[2]{0} parameter(1)
  ROOT %c = f32[2]{0} conditional(%i, %x, %x, %x), branch_computations={%negated, %same, %negated}
}
"""


@pytest.mark.parametrize("branch", [0, 2])
def test_a_breakpoint_on_an_instruction_stops_in_every_region_its_computation_became(branch):
    # %negated is cloned into branches 0 and 2; the breakpoint once stopped only in the first.
    session = hlodbg.load(SHARED_BRANCH).session([np.int32(branch), np.ones(2, np.float32)], persist=False)
    session.break_at("%n", saved=False)
    assert session.continue_().reason == "breakpoint"
    assert session.op.results[0].name == "%n"


def test_a_line_breakpoint_on_a_root_stops_once_not_also_at_the_implicit_return():
    session = hlodbg.load(FUSED).session(persist=False)
    bp = session.break_at("line 6", saved=False)  # ROOT %dot.1 of the fused computation
    assert [op.name for op in bp.ops] == ["stablehlo.dot_general"]
    mlir = hlodbg.load(TUPLE_ROOT_MLIR).session(persist=False)
    assert [op.name for op in mlir.break_at("line 4", saved=False).ops] == ["func.return"]  # written: kept


def test_check_on_an_hlo_module_with_parameters_says_to_run_it_instead(tmp_path):
    from hlodbg.engine.run.checking import check_path

    path = tmp_path / "fused.hlo"
    path.write_text(FUSED)
    (outcome,) = check_path(str(path))
    assert "@main.3 takes 2 argument(s)" in str(outcome.error) and "hlodbg run" in str(outcome.error)
