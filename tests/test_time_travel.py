"""Time travel by checkpoints and re-execution (issue 33): a session keeps a window of recent
values and checkpoints of the live state; any earlier value is recomputed from the nearest
checkpoint, and every move lands on the values, events and frames a plain run has."""
from __future__ import annotations

import numpy as np
import pytest

import hlodbg
from hlodbg.engine.debug import values as values_module
from hlodbg.engine.debug.budget import SMALLEST_DEFAULT_BUDGET, default_budget


def chain_program(length: int, size: int = 1000) -> str:
    """A straight line of `length` elementwise ops, each reading the one before and the argument:
    only two values are live at any point, so a checkpoint keeps little."""
    lines = [f"func.func @main(%a: tensor<{size}xf32>) -> tensor<{size}xf32> {{", f"  %v0 = stablehlo.sine %a : tensor<{size}xf32>"]
    for i in range(1, length):
        op = ("add", "multiply", "subtract")[i % 3]
        lines.append(f"  %v{i} = stablehlo.{op} %v{i - 1}, %a : tensor<{size}xf32>")
    lines += [f"  return %v{length - 1} : tensor<{size}xf32>", "}"]
    return "\n".join(lines)


ARG = np.linspace(-1, 1, 1000, dtype=np.float32)


def test_a_value_far_back_is_recomputed_from_the_nearest_checkpoint_not_from_the_start(monkeypatch):
    program = hlodbg.load(chain_program(1000))
    full = program.session([ARG], persist=False)
    full.continue_()
    monkeypatch.setattr(values_module, "FIRST_CHECKPOINT_SECONDS", 1e-7)  # a checkpoint at (almost) every op
    small = program.session([ARG], persist=False, memory=64 * 1024)
    small.continue_()
    store = small.timeline.main.store
    assert store.evicted > 900 and store.bytes <= store.budget + 8192
    before = store.recomputed
    assert small.event(900).outputs[0].tobytes() == full.event(900).outputs[0].tobytes()
    # Without checkpoints the read replays the chain from its start (900 ops).
    assert store.recomputed - before < 500
    for event in (3, 450, 899, 998, 17):
        assert small.event(event).outputs[0].tobytes() == full.event(event).outputs[0].tobytes()
    full.close(), small.close()


def test_the_default_budget_follows_the_arguments():
    assert default_budget(0) == SMALLEST_DEFAULT_BUDGET
    assert default_budget(4 * SMALLEST_DEFAULT_BUDGET) == 4 * SMALLEST_DEFAULT_BUDGET
    # a view of an argument counts its bytes: the arguments a session is given are read-only views
    session = hlodbg.load(chain_program(3, size=1 << 20)).session([np.zeros(1 << 20, np.float32)], persist=False)
    assert session.memory_budget == default_budget(4 << 20)
    session.close()


def test_a_call_result_is_recomputed_from_inside_the_call_not_by_running_the_call_again(monkeypatch):
    """A call's result is what its frame returned: recomputing it recomputes that value from the
    checkpoints inside the callee (opdefs `results_from`), so a dropped layer output costs a few
    ops, not the whole layer."""
    body = chain_program(400).replace("@main", "@layer")
    text = body + """
func.func @main(%a: tensor<1000xf32>) -> tensor<1000xf32> {
  %0 = func.call @layer(%a) : (tensor<1000xf32>) -> tensor<1000xf32>
  %1 = func.call @layer(%0) : (tensor<1000xf32>) -> tensor<1000xf32>
  return %1 : tensor<1000xf32>
}"""
    monkeypatch.setattr(values_module, "FIRST_CHECKPOINT_SECONDS", 1e9)  # nothing kept but the window
    program = hlodbg.load(text)
    full = program.session([ARG], persist=False)
    full.continue_()
    small = program.session([ARG], persist=False, memory=64 * 1024)
    small.continue_()
    calls = [e.id for e in small.events if e.op.name == "func.call"]
    returns = [e.id for e in small.events if e.op.name == "func.return" and e.frame.owner in calls]
    store = small.timeline.main.store
    assert store.sizes.get(calls[0]) is None  # dropped
    first = small.event(calls[0]).outputs[0]
    assert first.tobytes() == full.event(calls[0]).outputs[0].tobytes()
    assert first is small.event(returns[0]).inputs[0]  # the callee's own value, not a second run's
    full.close(), small.close()


ARGMAX = """
func.func @main(%x: tensor<4x10xf32>) -> tensor<4xi32> {
  %0 = stablehlo.iota dim = 1 : tensor<4x10xi32>
  %cst = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %c = stablehlo.constant dense<0> : tensor<i32>
  %1:2 = stablehlo.reduce(%x init: %cst), (%0 init: %c) across dimensions = [1] : (tensor<4x10xf32>, tensor<4x10xi32>, tensor<f32>, tensor<i32>) -> (tensor<4xf32>, tensor<4xi32>)
   reducer(%a: tensor<f32>, %b: tensor<f32>) (%i: tensor<i32>, %j: tensor<i32>)  {
    %2 = stablehlo.compare GT, %a, %b, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %3 = stablehlo.select %2, %a, %b : tensor<i1>, tensor<f32>
    %4 = stablehlo.select %2, %i, %j : tensor<i1>, tensor<i32>
    stablehlo.return %3, %4 : tensor<f32>, tensor<i32>
  }
  return %1#1 : tensor<4xi32>
}"""


def test_a_reducer_body_whose_arguments_were_dropped_reads_its_own_arguments_again(monkeypatch):
    """A reducer's body frames keep their own arguments (pairs of elements, not the reduce's
    operands); once the budget dropped them, reading the body's values must recompute those
    arguments, never take the reduce's operands for them (as a loop's or a call's frame would)."""
    x = np.random.default_rng(0).standard_normal((4, 10)).astype(np.float32)
    program = hlodbg.load(ARGMAX)
    full = program.session([x], persist=False)
    full.continue_()
    small = program.session([x], persist=False, memory=256)
    small.continue_()
    assert small.timeline.main.store.evicted
    for event in small.events:
        if event.op.results:
            assert all(a.tobytes() == b.tobytes() and a.shape == b.shape
                       for a, b in zip(event.outputs, full.event(event.id).outputs)), event.describe()
    full.close(), small.close()


def test_loop_state_passed_on_unchanged_for_many_iterations_is_found_without_recursion():
    """A value a loop hands on untouched is the loop's operand at every iteration: finding it goes
    back through every iteration, in a loop rather than two Python calls per iteration."""
    text = """func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %n = stablehlo.constant dense<3000> : tensor<i32>
  %r:2 = stablehlo.while(%i = %c0, %keep = %x) : tensor<i32>, tensor<4xf32>
    cond {
      %lt = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %lt : tensor<i1>
    } do {
      %one = stablehlo.constant dense<1> : tensor<i32>
      %next = stablehlo.add %i, %one : tensor<i32>
      stablehlo.return %next, %keep : tensor<i32>, tensor<4xf32>
    }
  %y = stablehlo.negate %r#1 : tensor<4xf32>
  return %y : tensor<4xf32>
}"""
    x = np.arange(4, dtype=np.float32)
    session = hlodbg.load(text).session([x], persist=False)
    session.continue_()
    negate = next(e for e in session.events if e.op.name == "stablehlo.negate")
    assert negate.inputs[0].tobytes() == x.tobytes()
    session.close()


def test_program_run_and_the_cli_run_through_one_runner(tmp_path, capsys):
    """One place turns a request into a run (engine/run/request.py): Program.run, `hlodbg run`
    and the NaN scan hand their runs to a Runner, which keeps a one-device interpreter prepared."""
    from hlodbg.cli import main
    from hlodbg.engine.run.request import RunRequest, Runner

    text = chain_program(4, size=8)
    program = hlodbg.load(text)
    x = np.linspace(-1, 1, 8, dtype=np.float32)
    expected = program.run(x)[0]
    runner = Runner()
    request = RunRequest(program.module, [x])
    assert runner.run(request).results[0].tobytes() == expected.tobytes()
    assert runner.interpreter(request) is runner.interpreter(RunRequest(program.module, [x]))  # prepared once
    path = tmp_path / "chain.mlir"
    path.write_text(text)
    np.savez(tmp_path / "x.npz", arg0=x)
    out = tmp_path / "out.npz"
    assert main(["run", str(path), "--args", str(tmp_path / "x.npz"), "--out", str(out)]) == 0
    with np.load(out) as saved:
        assert saved["result0"].tobytes() == expected.tobytes()


NAN_FILL = """func.func @main(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %fill = stablehlo.constant dense<0x7FC00000> : tensor<f32>
  %nans = stablehlo.broadcast_in_dim %fill, dims = [] : (tensor<f32>) -> tensor<4xf32>
  %start = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %zero = stablehlo.constant dense<0.0> : tensor<4xf32>
  %lt = stablehlo.compare LT, %x, %zero : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %picked = stablehlo.select %lt, %nans, %x : tensor<4xi1>, tensor<4xf32>
  %root = stablehlo.sqrt %x : tensor<4xf32>
  return %picked, %root : tensor<4xf32>, tensor<4xf32>
}"""


@pytest.mark.parametrize("kind", ["nan", "nonfinite"])
def test_nan_breakpoints_look_at_computed_values_not_constant_fill_values(kind, tmp_path, capsys):
    """JAX programs hold NaN fill values and -inf reduction starts as constants: a NaN breakpoint
    stops where the run computes a NaN (the select that picks the fill, the sqrt of a negative),
    never at the constants or their broadcasts."""
    from hlodbg.cli import main

    x = np.array([1.0, -4.0, 9.0, 16.0], np.float32)
    session = hlodbg.load(NAN_FILL).session([x], persist=False)
    session.break_at(kind)
    stop = session.continue_()
    assert stop.reason == "breakpoint" and session.trace.ops[stop.hits[0].event].name == "stablehlo.select"
    assert session.trace.ops[session.continue_().hits[0].event].name == "stablehlo.sqrt"
    session.close()
    path = tmp_path / "fill.mlir"
    path.write_text(NAN_FILL)
    np.savez(tmp_path / "x.npz", arg0=x)
    assert main(["run", str(path), "--args", str(tmp_path / "x.npz"), "--break-on", kind]) == 3
    assert "stablehlo.select" in capsys.readouterr().out


def test_a_new_session_of_a_program_takes_the_closed_sessions_prepared_recorder():
    """Preparing every op's step was most of what a new session's run cost on an op-bound
    program: a closed session hands its recorder (steps, folded constants) to the next session of
    the same program, which records the same events and values; the closed one keeps its record
    and printed lines, and interrupting it no longer reaches the recorder."""
    text = """func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = stablehlo.sine %x : tensor<4xf32>
  "interpreter.print"(%y) : (tensor<4xf32>) -> ()
  %z = stablehlo.add %y, %x : tensor<4xf32>
  return %z : tensor<4xf32>
}"""
    program = hlodbg.load(text)
    x = np.arange(4, dtype=np.float32)
    first = program.session([x], persist=False)
    first.continue_()
    recorder, printed = first._recorder, list(first.printed)
    first.close()
    assert first.printed == printed and len(printed) == 1
    second = program.session([x + 1], persist=False)
    assert second._recorder is recorder and second.printed == []
    first.interrupt()  # the closed session's run has ended: the shared recorder is not told
    second.continue_()
    assert second.finished and len(second.printed) == 1
    assert second.results[0].tobytes() == program.run(x + 1)[0].tobytes()
    assert [e.op.name for e in second.events] == [e.op.name for e in first.events]
    assert first.event(2).outputs[0].tobytes() == program.run(x)[0].tobytes()  # the closed record stays
    second.close()
