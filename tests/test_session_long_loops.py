"""Long loops in the debugger: value breakpoints fire at the right iteration, hit numbers count the
whole run, going back far gives the right values, and the machinery that keeps recording cheap
(breakpoints indexed by the ops they can be met at, ledgers carried through the run, quick
comparisons, names computed when asked) answers as the slow way does."""
from __future__ import annotations

import numpy as np
import pytest

import hlodbg
from hlodbg.engine.debug.expressions import compile_expression
from hlodbg.engine.debug.scope import expression_names, ops_seeing

from .scale_helpers import scale_programs

ITERATIONS = 20_000
FIRES_AT = 12_345  # %a = 0.5 * (i + 1) at iteration i: first above 6172.75 at i = 12,345


def loop(iterations: int = ITERATIONS) -> str:
    """A scalar while loop (benchmarks/scale_programs.py's): %n counts, %a adds a half each
    iteration."""
    return scale_programs().loop_program(iterations)


@pytest.fixture(autouse=True)
def state_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("HLODBG_STATE_DIR", str(tmp_path / "state"))


@pytest.fixture(scope="module")
def program():
    return hlodbg.load(loop())


def _op(program, name: str):
    return next(op for op in program.ops if any(v.name == name for v in op.results))


# An op breakpoint's hits count the times its op ran, its condition aside.
@pytest.mark.parametrize("spec, first_hit", [("%a > 6172.75", 1), ("6172.75 < %a", 1),
                                             ("%a if result > 6172.75", FIRES_AT + 1),
                                             ("%a if (result > 6172.75).any() and hit > 0", FIRES_AT + 1)])
def test_a_value_condition_fires_at_its_iteration_of_a_long_loop(program, spec, first_hit):
    session = program.session(persist=False)
    session.break_at(spec, saved=False)
    stop = session.continue_()
    assert stop.reason == "breakpoint"
    (hit,) = stop.hits
    assert (hit.hit, hit.after) == (first_hit, True)
    assert session.trace.ops[hit.event] is _op(program, "%a")
    assert session.trace.frames[hit.event].iteration == FIRES_AT
    assert float(session.event(hit.event).outputs[0]) == 6173.0
    stop = session.continue_()  # true from there on: the next iteration, hit 2
    assert session.trace.frames[stop.hits[0].event].iteration == FIRES_AT + 1 and stop.hits[0].hit == first_hit + 1
    session.close()


def test_a_nan_breakpoint_alongside_does_not_change_where_or_what_it_counts(program):
    session = program.session(persist=False)
    session.break_at("nan", saved=False)
    bp = session.break_at("%n == 12346", saved=False)
    stop = session.continue_()
    assert [h.breakpoint for h in stop.hits] == [bp]
    assert session.trace.frames[stop.hits[0].event].iteration == FIRES_AT
    assert int(session.event(stop.hits[0].event).outputs[0]) == FIRES_AT + 1
    session.close()


def test_op_breakpoint_hits_are_numbered_across_many_parks(program):
    session = program.session(persist=False)
    bp = session.break_at("%n", saved=False)
    for expected in range(1, 40):
        stop = session.continue_()
        assert stop.hits[0].hit == expected
        assert session.frame.iteration == expected - 1
    assert session.hits(bp) == 38  # met 39 times; the 39th is where we stand, before it runs
    session.breakpoints.enable(bp.id, False)
    # A breakpoint set late counts what the run recorded before it was set.
    late = session.break_at("%a", condition="hit == 45", saved=False)
    stop = session.continue_()
    assert stop.hits[-1].breakpoint is late and stop.hits[-1].hit == 45 and session.frame.iteration == 44
    session.close()


def test_going_back_far_after_a_long_run_under_a_small_budget(program):
    session = program.session(persist=False, memory=64 * 1024)
    assert session.continue_().reason == "end"
    store = session.timeline.main.store
    assert store.bytes <= store.budget and store.evicted > 0
    trace = session.trace
    body_a = _op(program, "%a")
    for iteration in (3, 777, 15_000):
        event = next(e for e in range(len(trace)) if trace.ops[e] is body_a and trace.frames[e].iteration == iteration)
        session.goto(event + 1)  # the body's return, after %a
        assert float(session.value("%a")) == 0.5 * (iteration + 1)
        assert int(session.value("%n")) == iteration + 1
        session.back()
        session.back()  # before %n: back to the loop's state from the iteration before
        assert int(session.value("%i")) == iteration and float(session.value("%acc")) == 0.5 * iteration
        session.back_in()  # into the condition of this iteration
        assert session.frame.kind == "while.cond" and session.frame.iteration == iteration
    assert store.recomputed > 0 and store.bytes <= store.budget + 4096
    session.close()


def test_reverse_continue_finds_the_last_hit_of_a_long_run(program):
    session = program.session(persist=False)
    session.continue_()
    bp = session.break_at("%a > 9999.25", saved=False)  # the last iteration only: %a = 10000
    stop = session.reverse_continue()
    assert stop.hits[0].breakpoint is bp and session.trace.frames[stop.hits[0].event].iteration == ITERATIONS - 1
    session.close()


# -- the machinery ------------------------------------------------------------------------------


def test_ops_seeing_names_where_every_value_is_visible(program):
    functions = program.module.functions.values()
    n, a, compare = _op(program, "%n"), _op(program, "%a"), _op(program, "%c")
    body_return = a.parent.operations[-1]
    assert ops_seeing(functions, ("a",)) == {a, body_return}
    assert ops_seeing(functions, ("n",)) == {n, a, body_return}
    assert ops_seeing(functions, ("a", "n")) == {a, body_return}
    # Values of the enclosing function reach into both regions of the loop, after their definition.
    seeing_limit = ops_seeing(functions, ("limit",))
    assert compare in seeing_limit and n in seeing_limit and _op(program, "%zero") not in seeing_limit
    main = program.module.functions["main"].body.operations
    assert ops_seeing(functions, ("r#1",)) == {_op(program, "%r#1"), main[-1]}  # its own op, at its end
    assert ops_seeing(functions, ("r",)) == ops_seeing(functions, ("r#0",)) == ops_seeing(functions, ("r#1",))
    assert ops_seeing(functions, ("nowhere",)) == frozenset()


def test_breakpoints_are_indexed_by_the_ops_they_can_be_met_at(program):
    session = program.session(persist=False)
    timeline = session.timeline
    a = _op(program, "%a")
    strict = session.break_at("%a > 1e12", saved=False)
    assert timeline.reach(strict) == {a, a.parent.operations[-1]}
    on_op = session.break_at("%n if result > 5", saved=False)
    assert timeline.reach(on_op) == {_op(program, "%n")}
    nan = session.break_at("nan", saved=False)
    assert timeline.reach(nan) is None
    assert timeline.watch_plan([strict, on_op]) == (timeline.reach(strict) | {_op(program, "%n")}, False)
    assert timeline.watch_plan([strict, nan]) == (timeline.reach(strict), True)
    # `or` may leave %a unread: such an expression is tested at every op.
    loose = session.break_at("iteration == 3 or %a > 1e12", saved=False)
    assert timeline.reach(loose) is None and timeline.watch_plan([strict, loose]) == (None, False)
    assert compile_expression("1 < %a < 3").strict is False and compile_expression("%a if %b else 0").strict is False
    assert compile_expression("abs(%a).max() > 3 + %b").strict is True
    session.close()


def test_an_expression_reading_no_value_stops_at_every_op_it_holds_at(program):
    """Not strict, not indexed: it is asked about every event, terminators included."""
    session = program.session(persist=False)
    session.break_at("iteration == 2 or event < 0", saved=False)
    stop = session.continue_()
    first = stop.hits[0].event
    assert session.trace.frames[first].iteration == 2 and session.trace.frames[first].kind == "while.cond"
    session.close()


@pytest.mark.parametrize("text", ["result > 2", "result >= 2", "2 < result", "result == 2", "result != 2",
                                  "-1 > result", "%x <= +2.5"])
@pytest.mark.parametrize("value", [np.array(2.0, np.float32), np.array([1, 2, 3], np.int32),
                                   np.array([np.nan, 1.0]), np.array(np.nan), np.array(True), np.zeros((0,))])
def test_quick_comparisons_agree_with_the_full_evaluation(text, value):
    expression = compile_expression(text)
    assert expression._quick is not None
    names = {"result": value}
    full = expression.evaluate(names, lambda name: value)
    expected = bool(np.asarray(full).any())
    assert expression.truth(names, lambda name: value) is expected


def test_quick_comparisons_fall_back_for_what_is_not_an_array():
    expression = compile_expression("result > 2")
    assert expression.truth({"result": 3}) is True and expression.truth({"result": np.float32(1)}) is False
    with pytest.raises(Exception, match="result > 2"):
        expression.truth({"result": [1, 3]})
    lookup_fails = compile_expression("%nope > 1")
    with pytest.raises(Exception, match="nope"):
        lookup_fails.truth({}, lambda name: (_ for _ in ()).throw(KeyError(name)))


def test_names_are_computed_when_asked_and_hold_what_they_always_held(program):
    session = program.session(persist=False)
    session.break_at("%a if iteration == 4 and result > 0", saved=False)
    stop = session.continue_()
    view, e = session.timeline.view, stop.hits[0].event
    names = expression_names(view, e, include_results=True, hit=3)
    assert set(names) == {"event", "hit", "iteration", "iterations", "op", "operands", "results", "result"}
    assert (names["event"], names["hit"], names["iteration"], names["iterations"]) == (e, 3, 4, (4,))
    assert names["op"] == "stablehlo.add" and [float(x) for x in names["operands"]] == [2.0, 0.5]
    assert float(names["result"]) == 2.5 and len(names["results"]) == 1
    before = expression_names(view, e, include_results=False)
    assert "result" not in set(before) and len(before) == 6
    with pytest.raises(KeyError):
        before["result"]
    beyond = expression_names(view, len(view.trace) + 5, include_results=True)
    assert dict(beyond) == {"event": len(view.trace) + 5, "hit": 0, "iteration": None, "iterations": ()}
    session.close()


@pytest.mark.parametrize("spec", ["%n", "%a > 3", "%a if result > 2"])
def test_hit_numbers_stay_right_whatever_moves_came_before(program, spec):
    """Hit numbers carried along the run (ledgers) agree with counting the recorded events."""
    session = program.session(persist=False)
    bp = session.break_at(spec, saved=False)
    trace = session.trace
    target = _op(program, spec.split()[0])

    def expected(hit) -> int:
        events = [e for e in range(hit.event) if trace.ops[e] is target]
        if spec == "%a > 3":
            events = [e for e in events if float(session.event(e).outputs[0]) > 3]
        return len(events) + 1

    moves = [session.step_in] * 7 + [session.continue_] + [session.step] * 3 + [session.continue_, session.back,
             session.back, session.continue_, session.step_in, session.continue_, session.reverse_continue,
             session.continue_] + [session.step_in] * 12 + [session.continue_, session.continue_]
    hits = 0
    for move in moves:
        stop = move()
        for hit in stop.hits:
            if hit.breakpoint is bp:
                assert hit.hit == expected(hit), (move.__name__, hit)
                hits += 1
    assert hits >= 5
    session.close()


def test_the_budget_counts_what_a_loop_of_scalars_really_keeps(program):
    from hlodbg.engine.debug.budget import ARRAY_OVERHEAD

    session = hlodbg.load(loop(2_000)).session(persist=False)
    session.continue_()
    kept = [e for e in range(len(session.trace)) if session.trace.ops[e].results]
    assert ARRAY_OVERHEAD >= 64  # numpy's object, shape and strides
    assert session.memory_used >= len(kept) * ARRAY_OVERHEAD
    session.close()
    small = hlodbg.load(loop(2_000)).session(persist=False, memory=len(kept) * ARRAY_OVERHEAD // 4)
    small.continue_()
    store = small.timeline.main.store
    assert store.evicted > 0 and store.bytes <= store.budget
    small.close()


def test_a_ledger_keeps_the_times_a_breakpoint_was_met_compactly():
    from hlodbg.engine.debug.timeline import TimeList, TimePoint

    met = TimeList()
    points = [TimePoint(3, 0, 1), TimePoint(3, 1, 0), TimePoint(9, 0, 4), TimePoint(9, 0, 5), TimePoint(12, 1, 0)]
    for point in points:
        met.append(point)
    assert len(met) == 5 and met[-1] == points[-1] and met[1] == points[1]
    for time in [TimePoint(0, 0, -1), *points, TimePoint(9, 0, 4).just_after(), TimePoint.before(9),
                 TimePoint(40, 0, 0)]:
        assert met.count_before(time) == sum(p < time for p in points), time


# A loop whose carried state (4 KiB) is larger than the whole recording budget below.
BIG_STATE_LOOP = """
func.func @main(%x: tensor<1024xf32>) -> tensor<1024xf32> {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %c1 = stablehlo.constant dense<1> : tensor<i32>
  %n = stablehlo.constant dense<ITERATIONS> : tensor<i32>
  %r:2 = stablehlo.while(%i = %c0, %v = %x) : tensor<i32>, tensor<1024xf32>
    cond {
      %p = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %p : tensor<i1>
    } do {
      %i2 = stablehlo.add %i, %c1 : tensor<i32>
      %v2 = stablehlo.sine %v : tensor<1024xf32>
      %v3 = stablehlo.add %v2, %x : tensor<1024xf32>
      stablehlo.return %i2, %v3 : tensor<i32>, tensor<1024xf32>
    }
  return %r#1 : tensor<1024xf32>
}
"""


def _recomputations(iterations: int) -> int:
    """Values the store recomputes for an expression breakpoint tested at every iteration of the
    loop above, under a 1 KiB budget (`hlodbg run --memory 1K --break-on '%v3.max() > 1e30'`)."""
    program = hlodbg.load(BIG_STATE_LOOP.replace("ITERATIONS", str(iterations)))
    session = program.session([np.linspace(-1, 1, 1024, dtype=np.float32)], memory="1K", persist=False)
    try:
        session.break_at("%v3.max() > 1e30")
        assert session.continue_().reason == "end"
        store = session._recorder.store
        assert store.evicted > iterations  # the budget really is too small to keep a loop state
        return store.recomputed
    finally:
        session.close()


def test_a_tiny_budget_keeps_an_expression_breakpoint_linear_in_the_iterations():
    """Every test reads %v3, dropped at once; replaying it must start from a nearby iteration,
    not from the loop's start (which made 10k iterations take over 300 s)."""
    short, long = _recomputations(100), _recomputations(200)
    assert short <= 12 * 100  # a few ops of at most FIRST_CHECKPOINT_STRIDE iterations per test
    assert long <= 2 * short + 50  # twice the iterations, twice the work
