"""Call depth is data: a chain of N functions, each calling the next, works through every command
at any depth (engine/run/deep_stack.py, the walks with stacks of their own in memory, the HLO
printer, the graph builder), and a program whose calls form a cycle is refused by the verifier
(engine/ir/call_graph.py) instead of failing with Python's recursion error."""
from __future__ import annotations

import json
import threading

import numpy as np
import pytest

import hlodbg
from hlodbg.cli import main
from hlodbg.engine import VerifyError, parse_module
from hlodbg.engine.ir.call_graph import call_depth
from hlodbg.engine.verify import verify_all

T = "tensor<2xf32>"


def call_chain(depth: int, checked: bool = False) -> str:
    """@main calls @f0, @f0 calls @f1, ... and @f{depth-1} adds its two arguments. `checked`: @main
    takes no arguments and checks the sum (a program for `hlodbg check`)."""
    if checked:
        lines = ["func.func @main() {",
                 f"  %a = stablehlo.constant dense<[1.0, 2.0]> : {T}",
                 f"  %b = stablehlo.constant dense<[3.0, 5.0]> : {T}",
                 f"  %0 = func.call @f0(%a, %b) : ({T}, {T}) -> {T}",
                 f'  "check.expect_almost_eq_const"(%0) {{value = dense<[4.0, 7.0]> : {T}}} : ({T}) -> ()',
                 "  return", "}"]
    else:
        lines = [f"func.func @main(%a: {T}, %b: {T}) -> {T} {{",
                 f"  %0 = func.call @f0(%a, %b) : ({T}, {T}) -> {T}",
                 f"  return %0 : {T}", "}"]
    for i in range(depth):
        lines.append(f"func.func private @f{i}(%a: {T}, %b: {T}) -> {T} {{")
        if i == depth - 1:
            lines.append(f"  %0 = stablehlo.add %a, %b : {T}")
        else:
            lines.append(f"  %0 = func.call @f{i + 1}(%a, %b) : ({T}, {T}) -> {T}")
        lines += [f"  return %0 : {T}", "}"]
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def chain_1000(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("deep") / "chain.mlir"
    path.write_text(call_chain(1000))
    return str(path)


def run_cli(capsys, *argv: str) -> str:
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert code == 0, out + err
    assert "recursion" not in out + err and "internal error" not in out + err
    return out


A = np.array([1.0, 2.0], np.float32)
B = np.array([3.0, 5.0], np.float32)


# -- the command line, 1,000 calls deep ----------------------------------------------------------

def test_verify_print_and_run(chain_1000, capsys):
    assert "1,001 functions" in run_cli(capsys, "verify", chain_1000)
    printed = run_cli(capsys, "print", chain_1000)
    assert len(parse_module(printed).functions) == 1001
    assert "result0" in run_cli(capsys, "run", chain_1000, "--seed", "1")


def test_memory(chain_1000, capsys):
    out = run_cli(capsys, "memory", chain_1000)
    assert "peak" in out


def test_print_to_hlo_reads_back(chain_1000, capsys):
    text = run_cli(capsys, "print", "--to", "hlo", chain_1000)
    program = hlodbg.load(text)
    assert len(program.module.functions) == 1001
    np.testing.assert_array_equal(program.run(A, B)[0], A + B)


@pytest.mark.parametrize("collapse", ["none", "calls", "groups"])
@pytest.mark.parametrize("suffix", ["json", "svg"])
def test_export(chain_1000, capsys, tmp_path, collapse, suffix):
    out = tmp_path / f"graph.{suffix}"
    run_cli(capsys, "export", chain_1000, "--collapse", collapse, "--engine", "layered", "--no-cache", "-o", str(out))
    if suffix == "json":
        graph = json.loads(out.read_text())
        assert len(graph["nodes"]) >= 2000
    else:
        assert out.read_text().rstrip().endswith("</svg>")


def test_explain_the_innermost_op(chain_1000, capsys):
    out = run_cli(capsys, "explain", chain_1000, "@f999:%0", "--at", "1")
    assert "stablehlo.add" in out


def test_diff_against_a_tpu(chain_1000, capsys):
    out = run_cli(capsys, "diff", chain_1000, "--against", "tpu-v5e")
    assert "1001 op instance(s)" in out and "none diverged" in out


def test_check(capsys, tmp_path):
    path = tmp_path / "checked.mlir"
    path.write_text(call_chain(1000, checked=True))
    assert "1 passed" in run_cli(capsys, "check", str(path))


def test_break_on_the_innermost_op(chain_1000, capsys):
    assert main(["run", chain_1000, "--break-on", "@f999:%0"]) == 3  # stopped at the breakpoint
    out, err = capsys.readouterr()
    assert "stopped at breakpoint '@f999:%0'" in out and "@f998 > @f999" in out, out + err


# -- the Python API ------------------------------------------------------------------------------

@pytest.mark.parametrize("depth", [1000, 5000])
def test_program_run(depth):
    program = hlodbg.load(call_chain(depth))
    np.testing.assert_array_equal(program.run(A, B)[0], A + B)


def test_debugging_session_steps_in_and_out_and_back(chain_1000):
    target = hlodbg.load(chain_1000).debug([A, B], persist=False)
    session = target.session
    try:
        for _ in range(1001):
            session.step_in()
            if session.op.name == "stablehlo.add":
                break
        assert session.op.name == "stablehlo.add"
        assert len(session.stack) == 1001
        at_add = session.position
        session.step_out()
        assert len(session.stack) == 1000
        session.goto(at_add)
        assert session.op.name == "stablehlo.add" and len(session.stack) == 1001
        session.back()
        assert session.position < at_add and len(session.stack) == 1000
        session.back_out()
        assert len(session.stack) == 999
        session.continue_()
        assert session.finished
        np.testing.assert_array_equal(session.results[0], A + B)
        session.reverse_continue()
        session.goto(len(session.events) // 2)
        assert len(session.stack) > 1
    finally:
        session.close()


def test_call_depth_counts_calls_and_regions():
    module = parse_module(call_chain(5000))
    assert call_depth(module, "main") == 5000
    assert call_depth(module, "f4990") == 9


# -- recursion is refused --------------------------------------------------------------------------

SELF = f"""
func.func @main(%a: {T}) -> {T} {{
  %0 = func.call @f(%a) : ({T}) -> {T}
  return %0 : {T}
}}
func.func private @f(%a: {T}) -> {T} {{
  %0 = func.call @f(%a) : ({T}) -> {T}
  return %0 : {T}
}}
"""

MUTUAL = f"""
func.func @main(%a: {T}) -> {T} {{
  %0 = func.call @f(%a) : ({T}) -> {T}
  return %0 : {T}
}}
func.func private @f(%a: {T}) -> {T} {{
  %0 = func.call @g(%a) : ({T}) -> {T}
  return %0 : {T}
}}
func.func private @g(%a: {T}) -> {T} {{
  %0 = func.call @f(%a) : ({T}) -> {T}
  return %0 : {T}
}}
"""

# The cycle is closed inside a region: @h calls @f from the body of an if.
THREE = f"""
func.func @main(%a: {T}) -> {T} {{
  %0 = func.call @f(%a) : ({T}) -> {T}
  return %0 : {T}
}}
func.func private @f(%a: {T}) -> {T} {{
  %0 = func.call @g(%a) : ({T}) -> {T}
  return %0 : {T}
}}
func.func private @g(%a: {T}) -> {T} {{
  %0 = func.call @h(%a) : ({T}) -> {T}
  return %0 : {T}
}}
func.func private @h(%a: {T}) -> {T} {{
  %p = stablehlo.constant dense<true> : tensor<i1>
  %0 = "stablehlo.if"(%p) ({{
    %1 = func.call @f(%a) : ({T}) -> {T}
    stablehlo.return %1 : {T}
  }}, {{
    stablehlo.return %a : {T}
  }}) : (tensor<i1>) -> {T}
  return %0 : {T}
}}
"""

COMPOSITE = f"""
func.func @main(%a: {T}) -> {T} {{
  %0 = stablehlo.composite "my.op" %a {{decomposition = @f}} : ({T}) -> {T}
  return %0 : {T}
}}
func.func private @f(%a: {T}) -> {T} {{
  %0 = stablehlo.composite "my.op" %a {{decomposition = @f}} : ({T}) -> {T}
  return %0 : {T}
}}
"""

HLO_MUTUAL = """HloModule m

f {
  p = f32[2] parameter(0)
  ROOT c = f32[2] call(p), to_apply=g
}

g {
  p = f32[2] parameter(0)
  ROOT c = f32[2] call(p), to_apply=f
}

ENTRY main {
  p = f32[2] parameter(0)
  ROOT c = f32[2] call(p), to_apply=f
}
"""

HLO_FUSION = """HloModule m

f {
  p = f32[2] parameter(0)
  ROOT c = f32[2] fusion(p), kind=kLoop, calls=f
}

ENTRY main {
  p = f32[2] parameter(0)
  ROOT c = f32[2] fusion(p), kind=kLoop, calls=f
}
"""


@pytest.mark.parametrize("text, suffix, line, cycle", [
    (SELF, "mlir", 7, "@f -> @f"),
    (MUTUAL, "mlir", 11, "@f -> @g -> @f"),
    (THREE, "mlir", 17, "@f -> @g -> @h -> @f"),
    (COMPOSITE, "mlir", 7, "@f -> @f"),
    (HLO_MUTUAL, "hlo", 10, "@f -> @g -> @f"),
    (HLO_FUSION, "hlo", 5, "@f -> @f"),
], ids=["self", "mutual", "three", "composite", "hlo-mutual", "hlo-fusion"])
def test_recursion_is_a_verify_error_at_the_call(text, suffix, line, cycle, tmp_path, capsys):
    path = tmp_path / f"recursive.{suffix}"
    path.write_text(text)
    for command in ("verify", "run"):
        assert main([command, str(path)]) != 0
        out, err = capsys.readouterr()
        assert f"{path}:{line}:" in err and f"recursively ({cycle})" in err, err
        assert "maximum recursion depth" not in out + err
    with pytest.raises(VerifyError, match="recursively"):
        hlodbg.load(str(path))


def test_every_cycle_is_reported_once():
    errors = verify_all(parse_module(MUTUAL + SELF.replace("@main", "@other").replace("@f", "@k")))
    assert [e.message.split(":")[0] for e in errors] == ["func.call", "func.call"]
    assert sum("@f -> @g -> @f" in e.message for e in errors) == 1
    assert sum("@k -> @k" in e.message for e in errors) == 1


# -- regions nest as deep as the text does, up to a limit said plainly ----------------------------

def nested_ifs(depth: int) -> str:
    """`depth` stablehlo.if ops, each in the true branch of the one before."""
    lines = [f"func.func @main(%a: {T}, %p: tensor<i1>) -> {T} {{"]
    lines += [f'%r{k} = "stablehlo.if"(%p) ({{' for k in range(depth, 0, -1)]
    lines += [f"%r0 = stablehlo.add %a, %a : {T}", f"stablehlo.return %r0 : {T}"]
    for k in range(1, depth + 1):
        lines += ["}, {", f"stablehlo.return %a : {T}", f"}}) : (tensor<i1>) -> {T}",
                  f"{'return' if k == depth else 'stablehlo.return'} %r{k} : {T}"]
    return "\n".join(lines + ["}"]) + "\n"


def test_regions_nested_to_the_limit_work_everywhere(tmp_path, capsys):
    from hlodbg.engine.syntax.mlir.parser import MAX_REGION_NESTING

    path = tmp_path / "nested.mlir"
    path.write_text("module {\n" + nested_ifs(MAX_REGION_NESTING) + "}\n")
    for argv in (["verify"], ["print"], ["run", "--seed", "1"], ["memory"],
                 ["export", "--collapse", "none", "--engine", "layered", "--no-cache", "-o", str(tmp_path / "g.json")]):
        run_cli(capsys, *argv, str(path))
    truth = np.array(True)
    np.testing.assert_array_equal(hlodbg.load(str(path)).run(A, truth)[0], A + A)


def test_regions_nested_past_the_limit_are_a_parse_error(tmp_path, capsys):
    from hlodbg.engine.syntax.mlir.parser import MAX_REGION_NESTING

    path = tmp_path / "nested.mlir"
    path.write_text(nested_ifs(MAX_REGION_NESTING + 1))
    assert main(["verify", str(path)]) != 0
    out, err = capsys.readouterr()
    line = MAX_REGION_NESTING + 2  # the innermost if's line
    assert f"{path}:{line}:" in err and f"regions nest more than {MAX_REGION_NESTING} deep" in err, err


def reduce_bodies_in_bodies(depth: int) -> str:
    """HLO whose computation c{i} reduces with c{i-1} as its body: flat text, regions `depth` deep."""
    lines = ["HloModule m", "", "c0 {", "  a = f32[] parameter(0)", "  b = f32[] parameter(1)",
             "  ROOT s = f32[] add(a, b)", "}", ""]
    for i in range(1, depth):
        lines += [f"c{i} {{", "  a = f32[] parameter(0)", "  b = f32[] parameter(1)",
                  "  v = f32[2] broadcast(a), dimensions={}",
                  f"  ROOT r = f32[] reduce(v, b), dimensions={{0}}, to_apply=c{i - 1}", "}", ""]
    lines += ["ENTRY main {", "  p = f32[2] parameter(0)", "  z = f32[] constant(0)",
              f"  ROOT r = f32[] reduce(p, z), dimensions={{0}}, to_apply=c{depth - 1}", "}"]
    return "\n".join(lines) + "\n"


def test_hlo_bodies_nested_to_the_limit_and_past_it(tmp_path, capsys):
    from hlodbg.engine.syntax.frontend import MAX_REGION_NESTING

    program = hlodbg.load(reduce_bodies_in_bodies(MAX_REGION_NESTING))  # (running it takes 2**100 steps)
    assert len(program.module.functions) == 1
    path = tmp_path / "nested.hlo"
    path.write_text(reduce_bodies_in_bodies(MAX_REGION_NESTING + 1))
    assert main(["verify", str(path)]) != 0
    out, err = capsys.readouterr()
    assert f"nested more than {MAX_REGION_NESTING} deep" in err and "internal error" not in err, err


def test_the_recursion_limit_is_the_ordinary_one_again_once_deep_runs_end():
    # Other threads' stacks are sized for the ordinary limit: a raised one left behind would let a
    # deeply nested file (json, toml) overflow the C stack instead of raising RecursionError.
    import sys

    from hlodbg.engine.run import deep_stack

    program = hlodbg.load(call_chain(1000))
    np.testing.assert_array_equal(program.run(A, B)[0], A + B)
    for _ in range(100):  # the stack thread finishes just after handing its result over
        if sys.getrecursionlimit() == deep_stack._ORDINARY_LIMIT:
            break
        threading.Event().wait(0.05)
    assert sys.getrecursionlimit() == deep_stack._ORDINARY_LIMIT
