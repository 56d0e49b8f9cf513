"""The debugger engine: positions, every control forward and back, time travel, recomputation."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import hlodbg
from hlodbg.engine.debug.breakpoints import BreakpointError
from .helpers import PROGRAMS


DATA = Path(__file__).parent / "data"
NAN_PROGRAM = DATA / "nan_in_loop.mlir"
SAMPLE = Path(__file__).resolve().parents[1] / "sample_programs" / "tiny_model.mlir"
HUNDREDS = np.full(4, 100, np.float32)
ENDLESS_LOOP = """
func.func @main() -> tensor<i32> {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %r = stablehlo.while(%i = %c0) : tensor<i32>
    cond {
      %t = stablehlo.constant dense<true> : tensor<i1>
      stablehlo.return %t : tensor<i1>
    } do {
      %one = stablehlo.constant dense<1> : tensor<i32>
      %n = stablehlo.add %i, %one : tensor<i32>
      stablehlo.return %n : tensor<i32>
    }
  return %r : tensor<i32>
}"""


@pytest.fixture(autouse=True)
def state_dir(tmp_path, monkeypatch):
    """Breakpoint files go to a per-test directory, never the user's."""
    monkeypatch.setenv("HLODBG_STATE_DIR", str(tmp_path / "state"))
    return tmp_path / "state"


@pytest.fixture
def program():
    return hlodbg.load(NAN_PROGRAM)


@pytest.fixture
def session(program):
    s = program.session([HUNDREDS])
    yield s
    s.close()


def _snapshot(session) -> tuple:
    """Where the session is and every value visible there, as bytes (for exact comparisons)."""
    values = {name: (np.asarray(v).dtype.str, np.asarray(v).shape, np.asarray(v).tobytes())
              for name, v in session.values().items()}
    return session.position, session.op.name if session.op else None, values


def _op_at(session) -> str:
    op = session.op
    return "end" if op is None else f"{op.name}:{op.pos.line}"


# -- position ---------------------------------------------------------------------------------


def test_starts_before_the_first_op_with_its_frame_and_line(session):
    assert session.position == 0
    assert session.op.name == "stablehlo.constant"
    (frame,) = session.stack
    assert (frame.function, frame.kind, frame.line) == ("main", "function", 4)
    assert session.value("%x").tolist() == [100] * 4
    with pytest.raises(hlodbg.HlodbgError, match="not computed"):
        session.value("%c0")  # the current op has not run yet


def test_step_over_a_while_runs_the_whole_loop(session):
    session.step()
    assert session.op.name == "stablehlo.while"
    stop = session.step()
    assert stop.reason == "step"
    assert session.op.name == "stablehlo.constant" and session.op.results[0].name == "%zero"
    assert session.value("%r#0") == 5
    assert np.isnan(session.value("%r#1")).all()


def test_step_in_enters_the_loop_condition_body_and_call(session):
    session.step()
    session.step_in()
    assert [(f.kind, f.iteration) for f in session.stack] == [("function", None), ("while.cond", 0)]
    assert session.op.results[0].name == "%n"
    session.step(), session.step(), session.step()  # %n, %lt, return
    assert [(f.kind, f.iteration) for f in session.stack][-1] == ("while.body", 0)
    session.step(), session.step()  # %one, %next
    assert session.op.name == "func.call"
    session.step_in()
    assert [f.function for f in session.stack] == ["main", "main", "update"]
    assert session.value("%a").tolist() == [100] * 4 and session.value("%i") == 0
    stop = session.step_out()
    assert stop.reason == "step"
    assert session.op.name == "stablehlo.return" and session.stack[-1].kind == "while.body"
    assert session.value("%y").tolist() == [10] * 4


def test_loop_values_are_kept_per_iteration(session):
    session.continue_()
    sqrt_events = [e for e in session.events if e.op.name == "stablehlo.sqrt"]
    seen = {}
    for event in sqrt_events:
        session.goto(event.id + 1)  # the return of @update in that iteration
        seen[event.iteration] = session.value("%s")[0]
        session.step_out()
        assert session.value("%y")[0] == seen[event.iteration] or np.isnan(seen[event.iteration])
    assert seen[0] == 10 and seen[1] == 3 and seen[2] == 1 and np.isnan(seen[3])


def test_step_out_of_the_top_frame_finishes(session):
    stop = session.step_out()
    assert stop.reason == "end" and session.finished
    assert session.op is None
    assert session.results[0].shape == (4,)


# -- backwards --------------------------------------------------------------------------------


def test_back_in_retraces_step_in_exactly(session):
    forward = []
    while not session.finished:
        forward.append((session.expanded, session.position))
        session.step_in()
    assert any(where[0] is not None for where in forward)  # it went into the reduce's body
    backward = []
    while session.position > 0 or session.expanded is not None:
        session.back_in()
        backward.append((session.expanded, session.position))
    assert backward == forward[::-1]


def test_back_is_the_reverse_of_step_at_every_level(session):
    # Walk into the loop body, then step along it and across iterations (never out of a frame
    # through its return, where back would come back to the op that opened the frame instead).
    for _ in range(5):
        session.step_in()
    path = []
    for _ in range(12):
        path.append(session.position)
        session.step()
    for expected in reversed(path):
        session.back()
        assert session.position == expected


def test_back_out_returns_to_the_op_that_opened_the_frame(session):
    session.run_to("@update:%s")
    call_event = session.frame.owner
    stop = session.back_out()
    assert stop.reason == "step" and session.position == call_event
    assert session.op.name == "func.call"
    session.back_out()  # out of the loop body: before the while
    assert session.op.name == "stablehlo.while"


def test_back_then_forward_gives_identical_values(program):
    s = program.session([HUNDREDS])
    first = []
    while not s.finished:
        first.append(_snapshot(s))
        s.step_in()
    s.goto(0)
    again = []
    while not s.finished:
        again.append(_snapshot(s))
        s.step_in()
    assert again == first
    s.close()


def test_reverse_continue_walks_back_through_hits(session):
    session.break_at("@update:%s")
    stops = []
    while True:
        stop = session.continue_()
        if stop.reason != "breakpoint":
            break
        stops.append((session.position, session.event().iteration))
    assert [it for _, it in stops] == [0, 1, 2, 3, 4]
    reverse = []
    while True:
        stop = session.reverse_continue()
        if stop.reason != "breakpoint":
            break
        reverse.append(session.position)
    assert reverse == [p for p, _ in stops][::-1]
    assert stop.reason == "start" and session.position == 0


def test_goto_and_restart(session):
    session.goto(20)
    assert session.position == 20
    session.restart()
    assert session.position == 0
    session.continue_()
    assert session.finished
    with pytest.raises(BreakpointError, match="does not exist"):
        session.goto(10_000)


def test_restart_with_new_arguments_runs_again(session):
    session.continue_()
    assert np.isnan(session.results[0]).all()
    session.restart([np.full(4, 1e12, np.float32)])
    session.continue_()
    assert np.isfinite(session.results[0]).all()


# -- breakpoints ------------------------------------------------------------------------------


def test_breakpoint_on_a_value_stops_before_its_op(session):
    bp = session.break_at("@update:%s")
    stop = session.continue_()
    assert stop.reason == "breakpoint" and stop.hits[0].breakpoint is bp
    assert session.op.name == "stablehlo.sqrt" and not stop.hits[0].after
    assert stop.hits[0].hit == 1


def test_ignore_count_and_conditions(session):
    session.break_at("@update:%s", ignore=2)
    session.continue_()
    assert session.event().iteration == 2
    session.breakpoints.clear()
    session.restart()
    session.break_at("@update:%s if iteration == 3")
    stop = session.continue_()
    # `hit` counts the times the op was reached, whatever the condition said
    assert session.event().iteration == 3 and stop.hits[0].hit == 4
    session.breakpoints.clear()
    session.restart()
    session.break_at("@update:%s", condition="hit == 2")
    session.continue_()
    assert session.event().iteration == 1


def test_condition_on_results_stops_after_the_op(session):
    session.break_at("@update:%s if nan")
    stop = session.continue_()
    hit = stop.hits[0]
    assert hit.after and session.event(hit.event).op.name == "stablehlo.sqrt"
    assert session.event(hit.event).iteration == 3
    assert session.position == hit.event + 1


def test_nan_breakpoint_finds_the_first_nan_deep_in_a_call_in_a_loop(session):
    session.break_at("nan")
    stop = session.continue_()
    event = session.event(stop.hits[0].event)
    assert event.op.name == "stablehlo.sqrt" and event.frame.function.sym_name == "update"
    assert event.iterations == (3,)
    (operand,) = event.inputs
    assert np.isfinite(operand).all()


def test_expression_breakpoint_and_disable(session):
    bp = session.break_at("abs(result).max() > 50")
    stop = session.continue_()
    assert stop.hits[0].breakpoint is bp and session.event(stop.hits[0].event).op.name == "stablehlo.subtract"
    session.breakpoints.enable(bp.id, False)
    assert session.continue_().reason == "end"


def test_kind_and_line_breakpoints(session):
    session.break_at("func.call")
    session.continue_()
    assert session.op.name == "func.call"
    session.breakpoints.clear()
    bp = session.break_at("line 20")  # a blank line: the next line with an op
    assert "using line 22" in bp.note
    session.continue_()
    assert session.op.name == "stablehlo.convert" and session.op.pos.line == 22


def test_step_stops_at_a_breakpoint_inside_the_call_it_steps_over(session):
    for _ in range(7):
        session.step_in()
    assert session.op.name == "func.call"
    session.break_at("@update:%d")
    stop = session.step()
    assert stop.reason == "breakpoint" and session.op.name == "stablehlo.subtract"


def test_run_to_an_op(session):
    stop = session.run_to("@update:%d")
    assert stop.reason == "step" and session.op.name == "stablehlo.subtract"
    session.run_to("%sum")
    assert session.op.name == "stablehlo.reduce"


def test_bad_breakpoints_say_why(session):
    with pytest.raises(BreakpointError, match="no value %nope"):
        session.break_at("%nope")
    with pytest.raises(BreakpointError, match="no function @nothing"):
        session.break_at("@nothing:%s")
    with pytest.raises(BreakpointError, match="__class__|underscore|not allowed"):
        session.break_at("result.__class__ is None")
    with pytest.raises(BreakpointError, match="no op comes from model.py:9"):
        session.break_at("model.py:9")


def test_breakpoint_on_a_producer_location():
    program = hlodbg.load(SAMPLE)
    session = program.session(seed=1)
    bp = session.break_at("tiny_model.py:26")
    assert bp.kind == "location" and bp.ops
    session.continue_()
    assert "tiny_model.py:26" in session.event().producer
    session.close()


def test_breakpoints_and_watches_persist_per_program(program, state_dir):
    first = program.session([HUNDREDS])
    first.break_at("@update:%s if iteration == 2")
    first.watch("%a.sum()")
    first.close()
    again = hlodbg.load(NAN_PROGRAM).session([HUNDREDS])
    assert [bp.describe() for bp in again.breakpoints.breakpoints] == ["#1 @update:%s if iteration == 2"]
    again.continue_()
    assert again.event().iteration == 2
    assert again.watches() == [("%a.sum()", 12.0)]  # @update's argument on iteration 2: 3 x 4
    again.close()
    files = list(state_dir.rglob("*.json"))
    assert len(files) == 1 and files[0].name.startswith("nan_in_loop-")


def test_a_corrupt_breakpoint_file_is_reported_and_left_alone(program, state_dir):
    s = program.session([HUNDREDS])
    s.break_at("func.call")
    s.close()
    (path,) = state_dir.rglob("*.json")
    path.write_text("{not json")
    again = program.session([HUNDREDS])
    assert again.breakpoints.breakpoints == []
    assert "not a breakpoint file" in again.breakpoints.messages[0]
    again.break_at("while")
    assert path.read_text() == "{not json"
    again.close()


def test_watches_are_evaluated_where_the_session_stands(session):
    session.watch("%acc.sum() + iteration")
    session.run_to("@update:%s")
    (text, value), = session.watches()
    assert value.startswith("<") and "%acc is not computed" in value  # not visible in @update ...
    session.step_out()
    (_, value), = session.watches()
    assert value == 400.0  # ... but it is in the loop body, iteration 0


# -- recording ------------------------------------------------------------------------------------


def test_a_tiny_memory_budget_recomputes_every_value_identically(program):
    normal = program.session([HUNDREDS])
    normal.continue_()
    tiny = program.session([HUNDREDS], memory=1)
    tiny.continue_()
    store = tiny.timeline.main.store
    assert store.evicted > 0
    for a, b in zip(normal.events, tiny.events):
        for x, y in zip(a.outputs, b.outputs):
            assert np.asarray(x).tobytes() == np.asarray(y).tobytes()
    assert store.recomputed > 0
    tiny.goto(0)
    while not tiny.finished:  # stepping back and forth still sees every value
        tiny.values()
        tiny.step_in()
    normal.close(), tiny.close()


def test_trace_lists_every_op_instance_with_inputs_outputs_and_time(session):
    session.continue_()
    events = session.events
    sqrt = [e for e in events if e.op.name == "stablehlo.sqrt"]
    assert [e.iteration for e in sqrt] == [0, 1, 2, 3, 4]
    assert all(e.seconds >= 0 for e in events)
    assert sqrt[1].inputs[0].tolist() == [9] * 4 and sqrt[1].outputs[0].tolist() == [3] * 4
    assert "update" in sqrt[0].describe() and "iteration 0" in sqrt[0].describe()


def test_statistics_are_lazy_and_cached(session):
    session.continue_()
    sqrt = [e for e in session.events if e.op.name == "stablehlo.sqrt"]
    summary = session.summary(sqrt[3].id)
    assert summary.nan == 4 and summary is session.summary(sqrt[3].id)
    table = session.op_statistics()
    stats = table[sqrt[0].op]
    assert stats.count == 5 and stats.nan == 4 and stats.bytes == 16 and stats.seconds >= 0


def test_an_execution_error_stops_at_the_failing_op():
    text = """
    func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
      %y = stablehlo.abs %x : tensor<2xf32>
      %z = stablehlo.custom_call @no_such_target(%y) : (tensor<2xf32>) -> tensor<2xf32>
      return %z : tensor<2xf32>
    }"""
    session = hlodbg.load(text).session()
    stop = session.continue_()
    assert stop.reason == "error" and "no_such_target" in stop.message
    assert session.op.name == "stablehlo.custom_call"
    session.back()
    assert session.op.name == "stablehlo.abs"
    session.close()


def test_a_loop_that_never_ends_can_still_be_debugged():
    session = hlodbg.load(ENDLESS_LOOP).session()
    session.break_at("%n if iteration == 1000")
    stop = session.continue_()
    assert stop.reason == "breakpoint" and session.value("%i") == 1000
    session.close()


# -- region bodies ------------------------------------------------------------------------------


def test_step_in_a_reduce_shows_its_body_on_whole_arrays(session):
    session.run_to("%sum")
    after_reduce = session.event().id + 1
    stop = session.step_in()
    assert "all pairs at once" in stop.message and "identical" in stop.message
    assert session.op.name == "stablehlo.add"
    assert any("replayed" in f.note for f in session.stack)
    assert [f.function for f in session.stack][0] == "main"
    while session.op is not None and session.op.name != "stablehlo.return":
        session.step()
    session.step_out()
    assert session.position == after_reduce and session.op.name == "func.return"


def test_continue_and_reverse_continue_leave_a_replayed_body(session):
    session.run_to("%sum")
    session.step_in()
    session.step()
    assert any("replayed" in f.note for f in session.stack)
    stop = session.continue_()  # goes on in the run, not just out of the replay
    assert stop.reason == "end" and session.finished
    session.reverse_continue()
    assert session.position == 0 and len(session.stack) == 1
    session.run_to("%sum")
    session.step_in()
    session.step_in()
    back = session.back()  # inside the replay: one op back, not out of it
    assert back.position == 0 and any("replayed" in f.note for f in session.stack)
    stop = session.reverse_continue()
    assert stop.reason == "start" and session.position == 0 and len(session.stack) == 1


def test_general_bodies_are_recorded_as_vectorised_frames():
    text = """
    func.func @main(%x: tensor<6xf32>, %i: tensor<6xi32>) -> (tensor<f32>, tensor<i32>) {
      %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
      %z = stablehlo.constant dense<0> : tensor<i32>
      %r:2 = stablehlo.reduce(%x init: %ninf), (%i init: %z) across dimensions = [0]
        : (tensor<6xf32>, tensor<6xi32>, tensor<f32>, tensor<i32>) -> (tensor<f32>, tensor<i32>)
        reducer(%a: tensor<f32>, %b: tensor<f32>) (%ai: tensor<i32>, %bi: tensor<i32>) {
          %gt = stablehlo.compare GT, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
          %m = stablehlo.select %gt, %a, %b : tensor<i1>, tensor<f32>
          %mi = stablehlo.select %gt, %ai, %bi : tensor<i1>, tensor<i32>
          stablehlo.return %m, %mi : tensor<f32>, tensor<i32>
        }
      return %r#0, %r#1 : tensor<f32>, tensor<i32>
    }"""
    x = np.array([1, 5, 2, 9, 3, 4], np.float32)
    session = hlodbg.load(text).session([x, np.arange(6, dtype=np.int32)])
    session.run_to("%r")
    session.step_in()
    assert session.stack[-1].kind == "body"
    assert "pair(s) at once" in session.note
    assert session.value("%a").shape == (3,)
    session.continue_()
    assert session.results[0] == 9 and session.results[1] == 3
    session.close()


def test_interrupt_from_another_thread_stops_a_running_continue():
    import threading

    session = hlodbg.load(ENDLESS_LOOP).session(memory="1M")
    timer = threading.Timer(0.3, session.interrupt)
    timer.start()
    stop = session.continue_()
    timer.join()
    assert stop.reason == "interrupted" and session.event().iteration > 10
    session.step()  # the session goes on from where it stopped
    session.back()
    session.close()


# -- recording changes nothing ----------------------------------------------------------------------

SHARED_PROGRAMS = sorted(p for p in PROGRAMS.glob("*.mlir") if "sharded" not in p.name) if PROGRAMS.is_dir() else []


@pytest.mark.parametrize("path", SHARED_PROGRAMS, ids=lambda p: p.stem)
def test_a_recorded_run_gives_the_unrecorded_results_bit_for_bit(path):
    program = hlodbg.load(path)
    inputs = np.load(path.with_name(path.stem + ".inputs.npz"))
    args = [inputs[k] for k in inputs.files]
    plain = program.run(*args)
    session = program.session(args, persist=False)
    assert session.continue_().reason == "end"
    for a, b in zip(plain, session.results):
        assert np.asarray(a).tobytes() == np.asarray(b).tobytes()
    session.close()


def test_shared_programs_are_present_or_skipped():
    if not SHARED_PROGRAMS:
        pytest.skip("../shared/programs is not here")
    assert len(SHARED_PROGRAMS) >= 7


def test_values_deep_in_a_long_loop_come_back_under_a_small_budget():
    text = """
    func.func @main(%x: tensor<64xf32>) -> tensor<64xf32> {
      %c0 = stablehlo.constant dense<0> : tensor<i32>
      %r:2 = stablehlo.while(%i = %c0, %v = %x) : tensor<i32>, tensor<64xf32>
        cond {
          %n = stablehlo.constant dense<300> : tensor<i32>
          %lt = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
          stablehlo.return %lt : tensor<i1>
        } do {
          %one = stablehlo.constant dense<1> : tensor<i32>
          %next = stablehlo.add %i, %one : tensor<i32>
          %h = stablehlo.constant dense<0.5> : tensor<64xf32>
          %s = stablehlo.sine %v : tensor<64xf32>
          %w = stablehlo.add %s, %h : tensor<64xf32>
          stablehlo.return %next, %w : tensor<i32>, tensor<64xf32>
        }
      return %r#1 : tensor<64xf32>
    }"""
    program = hlodbg.load(text)
    x = np.linspace(-1, 1, 64, dtype=np.float32)
    full = program.session([x], persist=False)
    full.continue_()
    small = program.session([x], persist=False, memory=12 * 1024)
    small.continue_()
    store = small.timeline.main.store
    assert store.evicted > 1000
    sines = [e.id for e in full.events if e.op.name == "stablehlo.sine"]
    for event in (sines[290], sines[7], sines[150]):
        assert small.event(event).outputs[0].tobytes() == full.event(event).outputs[0].tobytes()
    # a checkpoint of the loop state every K iterations keeps a replay short
    before = store.recomputed
    small.event(sines[291]).outputs
    assert store.recomputed - before < 40
    full.close(), small.close()


SHORT = """
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.add %x, %x : tensor<4xf32>
  %1 = stablehlo.multiply %0, %x : tensor<4xf32>
  %2 = stablehlo.add %1, %x : tensor<4xf32>
  return %2 : tensor<4xf32>
}
"""


def test_a_condition_that_fails_to_evaluate_stops_once_and_says_why():
    session = hlodbg.load(SHORT).session([HUNDREDS], persist=False)
    try:
        bp = session.break_at("%1", condition="result[100] > 0")
        stop = session.continue_()
        assert stop.reason == "breakpoint" and stop.hits[0].event == 1
        assert "condition could not be evaluated" in stop.hits[0].failure
        assert "index 100" in stop.hits[0].failure and "index 100" in stop.hits[0].describe()
        assert "not tested again" in bp.note
        assert session.continue_().reason == "end"  # said once: the next failures stop nothing
    finally:
        session.close()


def test_an_expression_breakpoint_that_fails_to_evaluate_stops_but_one_naming_a_value_not_yet_computed_waits():
    session = hlodbg.load(SHORT).session([HUNDREDS], persist=False)
    try:
        session.break_at("result[100] > 0")
        stop = session.continue_()
        assert stop.reason == "breakpoint" and "test could not be evaluated" in stop.hits[0].failure
    finally:
        session.close()
    session = hlodbg.load(SHORT).session([HUNDREDS], persist=False)
    try:
        session.break_at("%2.max() > 1e9")  # %2 is not computed at %0 and %1: that is no failure
        assert session.continue_().reason == "end"
    finally:
        session.close()
