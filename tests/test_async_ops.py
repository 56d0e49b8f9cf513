"""stablehlo.async_start / async_done and the !stablehlo.future<...> type (spec "async_start",
"async_done", "Types"): parsing and printing, every constraint, semantics on one process and on the
grid, and the debugger stepping into the asynchronous op."""
from __future__ import annotations

import numpy as np
import pytest

import hlodbg
from hlodbg.engine import parse_module
from hlodbg.engine.ir.types import FutureType, TensorType
from hlodbg.engine.syntax.mlir.printer import print_module
from hlodbg.engine.verify import verify

from .helpers import assert_rejected_at, interpret
from .test_grid_collectives import grid_run

GATHER = """
func.func @main(%x: tensor<2xf32>) -> (tensor<4xf32>, tensor<2xf32>) {
  %f = "stablehlo.async_start"(%x) ({
    %g = "stablehlo.all_gather"(%x) {all_gather_dim = 0 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<2xf32>) -> tensor<4xf32>
    "stablehlo.return"(%g) : (tensor<4xf32>) -> ()
  }) : (tensor<2xf32>) -> !stablehlo.future<tensor<4xf32>>
  %local = stablehlo.add %x, %x : tensor<2xf32>
  %r = "stablehlo.async_done"(%f) : (!stablehlo.future<tensor<4xf32>>) -> tensor<4xf32>
  return %r, %local : tensor<4xf32>, tensor<2xf32>
}"""

SLICE = """
func.func @main(%x: tensor<4xi32>) -> tensor<2xi32> {
  %f = "stablehlo.async_start"(%x) ({
    %s = stablehlo.slice %x [1:3] : (tensor<4xi32>) -> tensor<2xi32>
    stablehlo.return %s : tensor<2xi32>
  }) : (tensor<4xi32>) -> !stablehlo.future<tensor<2xi32>>
  %r = "stablehlo.async_done"(%f) : (!stablehlo.future<tensor<2xi32>>) -> tensor<2xi32>
  return %r : tensor<2xi32>
}"""


# StableHLO's own tests (and its C++ verifier, the body being isolated from above) hand the
# operands to the body as block arguments.
GATHER_WITH_ARGUMENTS = """
func.func @main(%x: tensor<2xf32>) -> (tensor<4xf32>, tensor<2xf32>) {
  %f = "stablehlo.async_start"(%x) ({
  ^bb0(%bx: tensor<2xf32>):
    %g = "stablehlo.all_gather"(%bx) {all_gather_dim = 0 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<2xf32>) -> tensor<4xf32>
    "stablehlo.return"(%g) : (tensor<4xf32>) -> ()
  }) : (tensor<2xf32>) -> !stablehlo.future<tensor<4xf32>>
  %local = stablehlo.add %x, %x : tensor<2xf32>
  %r = "stablehlo.async_done"(%f) : (!stablehlo.future<tensor<4xf32>>) -> tensor<4xf32>
  return %r, %local : tensor<4xf32>, tensor<2xf32>
}"""

SLICE_WITH_ARGUMENTS = """
func.func @main(%x: tensor<4xi32>) -> tensor<2xi32> {
  %f = "stablehlo.async_start"(%x) ({
  ^bb0(%bx: tensor<4xi32>):
    %s = stablehlo.slice %bx [1:3] : (tensor<4xi32>) -> tensor<2xi32>
    stablehlo.return %s : tensor<2xi32>
  }) : (tensor<4xi32>) -> !stablehlo.future<tensor<2xi32>>
  %r = "stablehlo.async_done"(%f) : (!stablehlo.future<tensor<2xi32>>) -> tensor<2xi32>
  return %r : tensor<2xi32>
}"""


def _round_trip(text: str) -> str:
    printed = print_module(parse_module(text))
    assert print_module(parse_module(printed)) == printed
    return printed


def test_the_future_type_parses_prints_and_holds_several_tensors():
    text = """
    func.func @main(%f: !stablehlo.future<tensor<2xf32>, tensor<i32>>) -> (tensor<2xf32>, tensor<i32>) {
      %a, %b = "stablehlo.async_done"(%f) : (!stablehlo.future<tensor<2xf32>, tensor<i32>>) -> (tensor<2xf32>, tensor<i32>)
      return %a, %b : tensor<2xf32>, tensor<i32>
    }"""
    module = parse_module(text)
    verify(module)
    (future,) = module.function("main").function_type.inputs
    assert isinstance(future, FutureType) and all(isinstance(t, TensorType) for t in future.types)
    assert str(future) == "!stablehlo.future<tensor<2xf32>, tensor<i32>>"
    assert "!stablehlo.future<tensor<2xf32>, tensor<i32>>" in _round_trip(text)


def test_a_future_of_something_else_than_tensors_is_a_parse_error():
    with pytest.raises(hlodbg.ParseError, match="a future holds tensors"):
        parse_module("func.func @main(%f: !stablehlo.future<!stablehlo.token>) {\n  return\n}")


@pytest.mark.parametrize("text", [GATHER, SLICE, GATHER_WITH_ARGUMENTS, SLICE_WITH_ARGUMENTS])
def test_async_ops_print_and_parse_back_the_same(text):
    verify(parse_module(text))
    printed = _round_trip(text)
    assert '"stablehlo.async_start"(%x) ({' in printed and "-> !stablehlo.future<" in printed
    generic = print_module(parse_module(text), generic=True)
    assert print_module(parse_module(generic)) == printed


# -- constraints: one invalid program per spec constraint -----------------------------------------


def _start(body: str, operands: str = "%x", result: str = "!stablehlo.future<tensor<2xi32>>") -> str:
    return f"""
func.func @main(%x: tensor<4xi32>, %y: tensor<4xi32>) -> () {{
  %f = "stablehlo.async_start"({operands}) ({{
{body}
  }}) : ({", ".join("tensor<4xi32>" for _ in operands.split(", "))}) -> {result}
  return
}}"""


SLICE_BODY = """    %s = stablehlo.slice %x [1:3] : (tensor<4xi32>) -> tensor<2xi32>
    stablehlo.return %s : tensor<2xi32>"""

INVALID = [
    ("two_ops_in_body", _start("""    %s = stablehlo.slice %x [1:3] : (tensor<4xi32>) -> tensor<2xi32>
    %t = stablehlo.add %s, %s : tensor<2xi32>
    stablehlo.return %t : tensor<2xi32>"""), "body must hold one operation and a stablehlo.return", "C1"),
    ("body_takes_more_arguments_than_operands", _start("""  ^bb0(%a: tensor<4xi32>, %b: tensor<4xi32>):
    %s = stablehlo.slice %a [1:3] : (tensor<4xi32>) -> tensor<2xi32>
    stablehlo.return %s : tensor<2xi32>"""), "body takes 2 argument(s) but async_start has 1 operand(s)", "C3"),
    ("body_argument_of_another_type", _start("""  ^bb0(%a: tensor<4xf32>):
    %s = stablehlo.slice %a [1:3] : (tensor<4xf32>) -> tensor<2xf32>
    stablehlo.return %s : tensor<2xf32>"""), "body argument #0 has type tensor<4xf32> but operand #0 is tensor<4xi32>",
     "C3"),
    ("body_takes_arguments_but_reads_the_enclosing_value", _start("""  ^bb0(%a: tensor<4xi32>):
    %s = stablehlo.slice %x [1:3] : (tensor<4xi32>) -> tensor<2xi32>
    stablehlo.return %s : tensor<2xi32>"""), "must be the operands of stablehlo.slice", "C3"),
    ("not_a_collective_or_slice", _start("""    %s = stablehlo.add %x, %x : tensor<4xi32>
    stablehlo.return %s : tensor<4xi32>""", result="!stablehlo.future<tensor<4xi32>>"),
     "body runs stablehlo.add", "C2"),
    ("operands_not_the_ops", _start(SLICE_BODY, operands="%y"), "must be the operands of stablehlo.slice", "C3"),
    ("extra_operand", _start(SLICE_BODY, operands="%x, %y"), "must be the operands of stablehlo.slice", "C3"),
    ("returns_something_else", _start("""    %s = stablehlo.slice %x [1:3] : (tensor<4xi32>) -> tensor<2xi32>
    stablehlo.return %x : tensor<4xi32>""", result="!stablehlo.future<tensor<4xi32>>"),
     "body must return the results of stablehlo.slice", "C4"),
    ("future_of_the_wrong_type", _start(SLICE_BODY, result="!stablehlo.future<tensor<3xi32>>"),
     "result must be !stablehlo.future<tensor<2xi32>>", "C4"),
    ("result_not_a_future", _start(SLICE_BODY, result="tensor<2xi32>"),
     "result must be !stablehlo.future<tensor<2xi32>>", "C4"),
    ("done_returns_another_type", """
func.func @main(%f: !stablehlo.future<tensor<2xi32>>) -> () {
  %r = "stablehlo.async_done"(%f) : (!stablehlo.future<tensor<2xi32>>) -> tensor<2xf32>
  return
}""", "results must be the future's types (tensor<2xi32>)", "C1"),
    ("done_of_a_tensor", """
func.func @main(%t: tensor<2xi32>) -> () {
  %r = "stablehlo.async_done"(%t) : (tensor<2xi32>) -> tensor<2xi32>
  return
}""", "operand #0 must be a !stablehlo.future<...>", "C1"),
]


@pytest.mark.parametrize("name, text, fragment, constraint", INVALID, ids=[case[0] for case in INVALID])
def test_each_constraint_rejects_its_invalid_program_at_the_op(name, text, fragment, constraint):
    assert_rejected_at(text, fragment, constraint, "stablehlo.async_")


# -- semantics ------------------------------------------------------------------------------------


def test_async_slice_gives_what_the_slice_gives():
    (result,) = interpret(SLICE, np.array([1, 2, 3, 4], np.int32))
    assert result.dtype == np.int32 and result.tolist() == [2, 3]


def test_async_slice_reading_block_arguments_gives_what_the_slice_gives():
    (result,) = interpret(SLICE_WITH_ARGUMENTS, np.array([1, 2, 3, 4], np.int32))
    assert result.tolist() == [2, 3]


@pytest.mark.parametrize("text", [GATHER, GATHER_WITH_ARGUMENTS])
def test_async_all_gather_on_two_replicas_equals_the_all_gather(text):
    x = {(0, 0): [np.array([1, 2], np.float32)], (1, 0): [np.array([3, 4], np.float32)]}
    results = grid_run(text, x, replicas=2, partitions=1)
    for process, (gathered, local) in results.items():
        assert gathered.tolist() == [1, 2, 3, 4]
        assert local.tolist() == (x[process][0] * 2).tolist()


def test_the_spec_example_gathers_across_the_replica_groups():
    # spec async_start: all_gather along dimension 1 over [[0, 2, 4, 6], [1, 3, 5, 7]] on 8 replicas.
    text = """
    func.func @main(%arg0: tensor<8x2xf32>) -> tensor<8x8xf32> {
      %0 = "stablehlo.async_start"(%arg0) ({
        %1 = "stablehlo.all_gather"(%arg0) {
          all_gather_dim = 1 : i64,
          replica_groups = dense<[[0, 2, 4, 6], [1, 3, 5, 7]]> : tensor<2x4xi64>
        } : (tensor<8x2xf32>) -> tensor<8x8xf32>
        "stablehlo.return"(%1) : (tensor<8x8xf32>) -> ()
      }) : (tensor<8x2xf32>) -> !stablehlo.future<tensor<8x8xf32>>
      %2 = "stablehlo.async_done"(%0) : (!stablehlo.future<tensor<8x8xf32>>) -> tensor<8x8xf32>
      return %2 : tensor<8x8xf32>
    }"""
    inputs = {(r, 0): [np.full((8, 2), r, np.float32)] for r in range(8)}
    results = grid_run(text, inputs, replicas=8, partitions=1)
    for (r, _), (gathered,) in results.items():
        members = [0, 2, 4, 6] if r % 2 == 0 else [1, 3, 5, 7]
        expected = np.concatenate([np.full((8, 2), m, np.float32) for m in members], axis=1)
        np.testing.assert_array_equal(gathered, expected)


def test_the_debugger_steps_into_the_asynchronous_op(tmp_path, monkeypatch):
    monkeypatch.setenv("HLODBG_STATE_DIR", str(tmp_path / "state"))
    session = hlodbg.load(SLICE).session([np.array([1, 2, 3, 4], np.int32)])
    try:
        assert session.op.name == "stablehlo.async_start"
        session.step_in()
        assert [f.kind for f in session.stack] == ["function", "async_start"]
        assert session.op.name == "stablehlo.slice"
        session.step()
        assert session.value("%s").tolist() == [2, 3]
        session.step_out()
        assert session.op.name == "stablehlo.async_done"
        session.step()
        assert session.value("%r").tolist() == [2, 3]
    finally:
        session.close()


def test_on_the_grid_debugger_every_device_meets_at_the_collective_inside(tmp_path, monkeypatch):
    from hlodbg.engine.debug.grid_session import GridSession

    monkeypatch.setenv("HLODBG_STATE_DIR", str(tmp_path / "state"))
    module = hlodbg.load(GATHER).module
    grid = GridSession(module, [np.array([1, 2], np.float32)], num_replicas=2, memory=1 << 28)
    try:
        grid.move("step_in")
        assert {(s.op.name, tuple(f.kind for f in s.stack)) for s in grid.sessions.values()} == {
            ("stablehlo.all_gather", ("function", "async_start"))}
        views = grid.values_of(grid.session.op)
        assert [v.group for v in views] == [(0, 1), (0, 1)]
        assert all(np.asarray(v.outputs[0]).tolist() == [1, 2, 1, 2] for v in views)
    finally:
        grid.close()


def test_a_function_taking_a_future_runs_on_random_arguments(tmp_path, capsys):
    from hlodbg.cli import main

    path = tmp_path / "done.mlir"
    path.write_text("""func.func @main(%f: !stablehlo.future<tensor<2xi32>, tensor<f32>>) -> (tensor<2xi32>, tensor<f32>) {
  %a, %b = "stablehlo.async_done"(%f) : (!stablehlo.future<tensor<2xi32>, tensor<f32>>) -> (tensor<2xi32>, tensor<f32>)
  return %a, %b : tensor<2xi32>, tensor<f32>
}
""")
    assert main(["run", str(path)]) == 0
    out = capsys.readouterr().out
    assert "result0: tensor<2xi32>" in out and "result1: tensor<f32>" in out
