"""The HLO printer (engine/syntax/hlo/printer.py), the StableHLO conversion (to_stablehlo.py) and
`hlodbg print --to`.

- Round trips: parse(print(parse(x))) has the IR of parse(x), and printing is a fixed point, for the
  hand-written modules in tests/data/hlo_printer (every construct: fusions, tuples, while and
  conditionals, async pairs and their sugar, layouts with tiles and memory spaces, shardings,
  metadata with stack frames, elided constants, control-predecessors, unknown attributes, literals
  of every kind) and for every form of the JAX corpus (tests/hlo_corpus.py).
- XLA's own parser reads our print and re-prints it as it re-prints the original (XLA's canonical
  short parsable printing; skipped without jax).
- `--to stablehlo`: the conversion parses with the MLIR frontend and runs to XLA's results.
"""
from __future__ import annotations

import ast
import importlib.util
import re
from pathlib import Path

import numpy as np
import pytest

import hlodbg
from hlodbg.cli import main
from hlodbg.engine.ir.core import structural_key
from hlodbg.engine.ir.errors import HlodbgError
from hlodbg.engine.syntax import HLO, MLIR
from hlodbg.engine.syntax.hlo.literal_text import float_text
from hlodbg.engine.syntax.hlo.printer import print_module
from hlodbg.engine.syntax.hlo.to_stablehlo import convert_to_stablehlo, row_major_layout

from .hlo_corpus import BY_NAME, CORPUS

DATA = Path(__file__).parent / "data" / "hlo_printer"
MODULES = sorted(p.name for p in DATA.glob("*.hlo"))
HAS_JAX = importlib.util.find_spec("jax") is not None
needs_jax = pytest.mark.skipif(not HAS_JAX, reason="jax is not installed (XLA's parser is the oracle)")


def parse(text: str, name: str = "<test>"):
    return HLO.parse_all(text, name)[0]


def assert_round_trips(text: str, name: str, short: bool = False) -> str:
    module = parse(text, name)
    printed = print_module(module, short=short)
    again = parse(printed, name + " (printed)")
    if not short:
        assert structural_key(again) == structural_key(module), f"{name}: the printed module differs\n{printed}"
    assert print_module(again, short=short) == printed, f"{name}: printing is not a fixed point"
    return printed


# -- hand-written modules -----------------------------------------------------------------------


@pytest.mark.parametrize("name", MODULES)
def test_hand_written_modules_round_trip(name):
    assert_round_trips((DATA / name).read_text(), name)


@pytest.mark.parametrize("name", MODULES)
def test_short_form_reads_back(name):
    printed = assert_round_trips((DATA / name).read_text(), name, short=True)
    assert "%" not in printed and "metadata=" not in printed and "FileNames" not in printed
    assert re.search(r"^ENTRY [\w.\-]+ \{$", printed, re.M)


def hlo_texts_of_other_tests() -> list[tuple[str, str]]:
    """Every HLO module written in the other HLO test files (string constants the HLO frontend
    recognizes and reads without error: those testing errors are left out)."""
    found = []
    for path in sorted(Path(__file__).parent.glob("test_hlo_*.py")):
        if path.name == Path(__file__).name:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and HLO.recognizes(node.value):
                try:
                    HLO.parse_all(node.value, path.name)
                except HlodbgError:
                    continue
                found.append((f"{path.name}:{node.lineno}", node.value))
    return found


def test_every_module_of_the_other_hlo_tests_round_trips():
    texts = hlo_texts_of_other_tests()
    assert len(texts) >= 20
    for where, text in texts:
        for index, module in enumerate(HLO.parse_all(text, where)):
            printed = print_module(module)
            again = HLO.parse_all(printed, f"{where} (printed)")[0]
            assert structural_key(again) == structural_key(module), f"{where}#{index}\n{printed}"


def test_long_form_gives_back_every_fact():
    printed = print_module(parse((DATA / "every_construct.hlo").read_text()))
    for fragment in (
        "HloModule every_construct, is_scheduled=true, entry_computation_layout={(f32[4]{0}, s32[])->",
        "num_partitions=2, frontend_attributes={origin=\"hand\"}",  # counts just before frontend attributes
        "FileNames\n1 \"model.py\"\n", "StackFrames\n1 {file_location_id=1 parent_frame_id=1}",
        "%x.0 = f32[4]{0:T(4)S(1)} parameter(0), sharding={devices=[2]<=[2]}",
        "fusion(%x.0), kind=kLoop, calls=%fused_negate, metadata={op_name=\"jit(outer)/inner/neg\"",
        "while(%init), condition=%cond, body=%body, backend_config={\"known_trip_count\":{\"n\":\"3\"}}",
        "conditional(%k, %wx, %c), branch_computations={%branch_negate, %branch_abs}",
        "async-start(%sel), calls=%wrapped_exp", "%ad = f32[4]{0} async-done(%as)",
        "copy(%ad), control-predecessors={%red}, statistics={visualizing_index=0,stat-0=0.5}",
        "replica_groups=[1,2]<=[2]",  # the iota spelling, not the expanded list
        "%sorted = (f32[4]{0}, s32[4]{0}) sort(%ar, %iota), dimensions={0}, is_stable=true, to_apply=%less, "
        "frontend_attributes={note=\"sorted\"}",
        "ENTRY %main (x.0: f32[4], k: s32[]) -> (f32[4], f32[4], s32[4]) {",
        "ROOT %out = (f32[4]{0}, f32[4]{0}, s32[4]{0}) tuple(%sv, %cp, %si)",
        "constant({1, 2.5, -inf, nan})",
    ):
        assert fragment in printed, fragment
    # `add` is cloned into the reduce and the all-reduce; it prints once, before its users.
    assert printed.count("%add (a: f32[], b: f32[]) -> f32[] {") == 1
    assert printed.index("%add (") < printed.index("ENTRY")
    # The pack rule's tuple and the entry's implicit get-tuple-elements are folded back.
    assert "sorted#" not in printed and "out#" not in printed


def test_async_sugar_prints_as_written():
    printed = print_module(parse((DATA / "async_sugar.hlo").read_text()))
    for fragment in ("replica_count=2", "all-reduce-start(%x), replica_groups={{0,1}}, to_apply=%sum",
                     "%ard = f32[4]{0} all-reduce-done(%ars)",
                     "%ags = (f32[4]{0}, f32[8]{0}) all-gather-start(%x), replica_groups={{0,1}}, dimensions={0}",
                     "%agd = f32[8]{0} all-gather-done(%ags)",
                     "collective-permute-start(%x), source_target_pairs={{0,1},{1,0}}"):
        assert fragment in printed, fragment


def test_unknown_attributes_are_given_back():
    printed = print_module(parse((DATA / "unknown_attributes.hlo").read_text()))
    assert printed.startswith("HloModule unknown_attributes, is_scheduled=true, some_future_header={\"x\":1}\n")
    assert "exponential(%p), result_accuracy={mode=highest}" in printed
    assert "negate(%e), frobnicate={a=1 b=\"x\"}, origin={{\"n\"}}" in printed


def test_elided_constant_prints_elided():
    printed = print_module(parse((DATA / "elided_constant.hlo").read_text()))
    assert "%big = f32[12]{0} constant({...})" in printed


def test_literals_print_their_exact_values():
    printed = print_module(parse((DATA / "literals.hlo").read_text()), short=True)
    for fragment in ("constant({1, 0, 1})", "constant({ { -128, 127 }, { 0, -1 } })",
                     "constant({18446744073709551615, 0})", "constant({0.3008, -1.5, 3.376e+38})",
                     "constant({65504, 6.1035e-05})", "constant({(1, -2), (0.5, inf)})",
                     "constant({-0, nan, -nan, nan(0x1), 1.4013e-45})", "constant({})", "constant({-8, 7})",
                     "constant({ { { 0.1, 0.2 } }, { { 1e+300, -2.5e-300 } } })", "constant(3.14159274)"):
        assert fragment in printed, fragment


@pytest.mark.parametrize("value, dtype, text", [
    (0.1, np.float32, "0.1"), (3.1415927, np.float32, "3.14159274"), (0.30078125, "bfloat16", "0.3008"),
    (1e-45, np.float32, "1.4013e-45"), (-0.0, np.float64, "-0"), (0.1 + 0.2, np.float64, "0.30000000000000004"),
    (2.0 ** 70, np.float64, "1.1805916207174113e+21"), (6.103515625e-05, np.float16, "6.1035e-05"),
])
def test_floats_print_as_xla_prints_them(value, dtype, text):
    import ml_dtypes

    dtype = np.dtype(getattr(ml_dtypes, dtype) if isinstance(dtype, str) else dtype)
    assert float_text(np.asarray(value, dtype), dtype) == text
    assert np.asarray(float(text)).astype(dtype) == np.asarray(value, dtype)


# -- XLA's parser as the oracle -------------------------------------------------------------------


@needs_jax
@pytest.mark.parametrize("element", ["f32", "f64", "f16", "bf16", "f8e4m3fn", "f8e5m2", "c64", "c128"])
def test_float_literals_print_as_xla_prints_them(element):
    """XLA's own printing of random constants of each float type is ours, digit for digit."""
    import ml_dtypes

    dtype = {"f32": np.float32, "f64": np.float64, "f16": np.float16, "bf16": ml_dtypes.bfloat16,
             "f8e4m3fn": ml_dtypes.float8_e4m3fn, "f8e5m2": ml_dtypes.float8_e5m2, "c64": np.complex64,
             "c128": np.complex128}[element]
    rng = np.random.default_rng(len(element))
    values = rng.standard_normal(40) * (10.0 ** rng.integers(-8, 8, 40) if element in ("f32", "f64", "c64", "c128") else 1)
    if element.startswith("c"):
        values = values + 1j * rng.standard_normal(40)
    items = [f"({float(v.real)!r}, {float(v.imag)!r})" if element.startswith("c") else repr(float(v))
             for v in values.astype(dtype).astype(np.complex128 if element.startswith("c") else np.float64)]
    text = f"HloModule m\nENTRY e {{\n  ROOT c = {element}[40]{{0}} constant({{{', '.join(items)}}})\n}}\n"
    canonical = xla_canonical(text)
    assert print_module(parse(text), short=True) in canonical.replace(
        canonical[:canonical.index("\n")], "HloModule m")  # the header: XLA adds the computation layout


def xla_canonical(text: str, large_constants: bool = True) -> str:
    from jaxlib import _hlo

    options = _hlo.HloPrintOptions.short_parsable()
    options.print_large_constants = large_constants
    return _hlo.hlo_module_from_text(text).to_string(options)


def assert_xla_prints_alike(original: str, name: str) -> None:
    module = parse(original, name)
    # XLA fills an elided constant with made-up values: compare those elided on both sides.
    large = "{...}" not in original
    expected = xla_canonical(original, large)
    for short in (False, True):
        assert xla_canonical(print_module(module, short=short), large) == expected, f"{name} (short={short})"


# A header-less module gets its name from XLA's parser (`module_<entry>`), ours from the entry; XLA
# refuses attributes it does not know (hlodbg keeps them, to open text from newer XLAs).
XLA_READABLE = [name for name in MODULES if name not in ("headerless.hlo", "unknown_attributes.hlo")]


@needs_jax
@pytest.mark.parametrize("name", XLA_READABLE)
def test_xla_reads_our_print_of_hand_written_modules(name):
    assert_xla_prints_alike((DATA / name).read_text(), name)


# XLA prints an async-start of a one-instruction computation in its sugar form (`exponential-start`),
# which hlodbg reads and prints back as written.
XLA_PRINTS_ALIKE = XLA_READABLE + ["headerless.hlo"]


@needs_jax
@pytest.mark.parametrize("short", [False, True])
@pytest.mark.parametrize("name", XLA_PRINTS_ALIKE)
def test_xla_printing_of_hand_written_modules_is_ours(name, short):
    """XLA's own printing of a module, read by hlodbg and printed again, is the same text."""
    from jaxlib import _hlo

    options = _hlo.HloPrintOptions.short_parsable() if short else _hlo.HloPrintOptions()
    options.print_large_constants = True
    xla_text = _hlo.hlo_module_from_text((DATA / name).read_text()).to_string(options)
    assert print_module(parse(xla_text, name), short=short) == xla_text


# -- the JAX corpus -------------------------------------------------------------------------------

FORMS = ["pre", "post", "post_parsable", "post_elided"]
CASES = [(program.name, form) for program in CORPUS for form in FORMS]


@pytest.mark.parametrize("name, form", CASES)
def test_corpus_prints_byte_for_byte_as_xla(hlo_corpus_dir, name, form):
    """Each form printed in the printing it was made with (pre-optimization text and the short
    parsable form are XLA's short printing, the others its long one) is the file, byte for byte."""
    text = (hlo_corpus_dir / f"{name}.{form}.hlo").read_text()
    assert print_module(parse(text, f"{name}.{form}.hlo"), short=form in ("pre", "post_parsable")) == text


def test_xla_dump_files_print_byte_for_byte(hlo_corpus_dir):
    dumps = sorted((hlo_corpus_dir / "dump").glob("*optimizations.txt"))
    dumps = [p for p in dumps if not re.search(r"-(buffer-assignment|live-range|memory-usage)", p.name)]
    assert len(dumps) >= 2
    for path in dumps:
        assert print_module(parse(path.read_text(), path.name)) == path.read_text(), path.name


@pytest.mark.parametrize("name, form", CASES)
def test_corpus_round_trips(hlo_corpus_dir, name, form):
    assert_round_trips((hlo_corpus_dir / f"{name}.{form}.hlo").read_text(), f"{name}.{form}.hlo")


@pytest.mark.parametrize("name, form", CASES)
def test_xla_reads_our_print_of_the_corpus(hlo_corpus_dir, name, form):
    assert_xla_prints_alike((hlo_corpus_dir / f"{name}.{form}.hlo").read_text(), f"{name}.{form}.hlo")


# -- HLO as StableHLO -------------------------------------------------------------------------------


def as_stablehlo(module):
    converted, notes = convert_to_stablehlo(module)
    text = MLIR.print(converted)
    return hlodbg.load(text), notes, converted


def hlo_ops(module) -> list[str]:
    return sorted({op.name for op in module.walk() if op.name.startswith("hlo.")})


def test_control_flow_as_stablehlo_runs_like_the_hlo():
    hlo = hlodbg.load(DATA / "control_flow.hlo")
    program, notes, converted = as_stablehlo(hlo.module)
    assert notes == [] and hlo_ops(converted) == []
    names = {op.name for op in converted.walk()}
    assert {"func.call", "stablehlo.case", "stablehlo.if", "stablehlo.while"} <= names
    whiles = [op for op in converted.walk() if op.name == "stablehlo.while"]
    assert [len(op.operands) for op in whiles] == [2]  # over the tuple's elements
    for op in converted.walk():
        assert not any(k.startswith("hlo.") or k == "xla_shape" for k in op.attributes), op
    x = np.array([1.0, -2.0, 0.5, 3.0], np.float32)
    for k, p in ((0, True), (1, False), (7, True)):
        want = hlo.run(x, np.int32(k), np.bool_(p))
        got = program.run(x, np.int32(k), np.bool_(p))
        for a, b in zip(got, want, strict=True):
            np.testing.assert_array_equal(a, b)


def test_bitcast_is_a_reshape_only_when_the_layouts_allow():
    hlo = hlodbg.load(DATA / "bitcast_layouts.hlo")
    program, notes, converted = as_stablehlo(hlo.module)
    assert len(notes) == 1 and "'flat_b'" in notes[0] and "f32[3,2]{0,1}" in notes[0]
    assert hlo_ops(converted) == ["hlo.bitcast", "hlo.copy"]  # the copy states the operand's layout
    ops = {op.results[0].name.lstrip("%"): op.name for op in converted.walk() if op.results}
    assert ops["flat"] == "stablehlo.reshape"
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.arange(6, dtype=np.float32).reshape(3, 2)
    got, want = program.run(a, b), hlo.run(a, b)
    np.testing.assert_array_equal(got[1], [0, 2, 4, 1, 3, 5])  # column-major bytes, read in order
    for x, y in zip(got, want, strict=True):
        np.testing.assert_array_equal(x, y)


STABLEHLO_FORMS = ["pre", "post", "post_parsable"]


@pytest.mark.parametrize("name, form", [(p.name, f) for p in CORPUS for f in STABLEHLO_FORMS])
def test_corpus_as_stablehlo_reproduces_xla(hlo_corpus_dir, name, form):
    from .test_hlo_differential import assert_every_partition_reproduces, assert_reproduces, recorded

    module = hlodbg.load(hlo_corpus_dir / f"{name}.{form}.hlo").module
    program, notes, converted = as_stablehlo(module)
    assert all(op in ("hlo.bitcast", "hlo.copy") for op in hlo_ops(converted)), hlo_ops(converted)
    if BY_NAME[name].spmd and form != "pre":  # one program per partition, on its local shards
        assert_every_partition_reproduces(program, hlo_corpus_dir, name, f"{form}.hlo as StableHLO")
        return
    inputs, expected, _ = recorded(hlo_corpus_dir, name)
    assert_reproduces(program.run(*inputs), expected, name, f" ({form}.hlo as StableHLO)")


@pytest.mark.parametrize("shape, row_major", [
    (None, True), ("f32[4]", True), ("f32[2,3]{1,0}", True), ("f32[]{}", True), ("f32[3,2]{0,1}", False),
    ("f32[16,1]{0,1}", True), ("f32[1,4,2]{1,2,0}", False), ("f32[4,4]{1,0:T(2,2)}", False),
])
def test_row_major_layouts(shape, row_major):
    assert row_major_layout(shape) is row_major


# -- MLIR as HLO --------------------------------------------------------------------------------------

MLIR_PROGRAM = """
func.func @main(%x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xf32>, tensor<f32>) {
  %0 = stablehlo.add %x, %y : tensor<4xf32>
  %1 = stablehlo.constant dense<0.0> : tensor<f32>
  %2 = stablehlo.reduce(%0 init: %1) applies stablehlo.add across dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
  return %0, %2 : tensor<4xf32>, tensor<f32>
}
"""


def test_mlir_module_prints_as_hlo_and_runs_alike():
    program = hlodbg.load(MLIR_PROGRAM)
    text = print_module(program.module)
    assert "ROOT %tuple = (f32[4], f32[]) tuple(" in text and "to_apply=%region_0" in text
    again = hlodbg.load(text)
    x, y = np.arange(4, dtype=np.float32), np.ones(4, np.float32)
    for a, b in zip(again.run(x, y), program.run(x, y), strict=True):
        np.testing.assert_array_equal(a, b)


def test_mlir_op_without_hlo_spelling_is_a_located_error():
    text = """
func.func @main(%p: tensor<i1>, %x: tensor<f32>) -> tensor<f32> {
  %0 = "stablehlo.if"(%p) ({
    stablehlo.return %x : tensor<f32>
  }, {
    stablehlo.return %x : tensor<f32>
  }) : (tensor<i1>) -> tensor<f32>
  return %0 : tensor<f32>
}
"""
    with pytest.raises(HlodbgError) as error:
        print_module(hlodbg.load(text).module)
    assert "'stablehlo.if' has no HLO opcode" in str(error.value) and ":3:" in error.value.render()


# -- the command -----------------------------------------------------------------------------------


def test_print_command_targets(capsys):
    path = str(DATA / "control_flow.hlo")
    assert main(["print", path]) == 0
    assert capsys.readouterr().out.startswith("HloModule control_flow")
    assert main(["print", path, "--short"]) == 0
    assert "ENTRY main {" in capsys.readouterr().out
    assert main(["print", path, "--to", "stablehlo"]) == 0
    out = capsys.readouterr().out
    assert "stablehlo.case" in out and not re.search(r"(?<![\w.])hlo\.", out)
    hlodbg.load(out)
    assert main(["print", path, "--to", "mlir"]) == 0
    assert '"hlo.fusion"' in capsys.readouterr().out
    assert main(["print", str(DATA / "bitcast_layouts.hlo"), "--to", "stablehlo"]) == 0
    assert capsys.readouterr().out.startswith("// hlo.bitcast 'flat_b'")


def test_print_command_prints_mlir_as_hlo(tmp_path, capsys):
    path = tmp_path / "program.mlir"
    path.write_text(MLIR_PROGRAM)
    assert main(["print", str(path), "--to", "hlo", "--short"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("HloModule main") and "ENTRY main {" in out and "ROOT tuple = (f32[4], f32[]) tuple(" in out
    hlodbg.load(out)


def test_print_command_refuses_mixed_options(capsys):
    path = str(DATA / "control_flow.hlo")
    assert main(["print", path, "--to", "mlir", "--short"]) == 2
    assert "--short" in capsys.readouterr().err
    assert main(["print", path, "--generic"]) == 2
    assert "--generic" in capsys.readouterr().err


# Self-checking StableHLO programs of the conformance corpus printed as HLO keep passing their
# checks: a while over nine values, a call with four results, result-less check custom calls.
CONFORMANCE_AS_HLO = ["random_categorical_float32_8.mlir", "select_n_int32_18_float32_18_float32_18_float32_18.mlir",
                      "abs_bfloat16_20_20.mlir"]


@pytest.mark.parametrize("name", CONFORMANCE_AS_HLO)
def test_conformance_programs_printed_as_hlo_pass_their_checks(tmp_path, name):
    from hlodbg.engine.run.checking import check_path

    from .helpers import CONFORMANCE, require_shared

    require_shared()
    path = tmp_path / (name[:-len(".mlir")] + ".hlo")
    path.write_text(print_module(hlodbg.load(CONFORMANCE / name).module))
    outcomes = check_path(str(path))
    assert outcomes and all(o.passed and o.checks for o in outcomes), [(o.error, o.failures) for o in outcomes]
