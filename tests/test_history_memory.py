"""A recording's history (its trace) counts against the session's memory: the estimate matches what
Python really holds, a run that never ends stops with "memory" at its budget instead of growing,
going on past such a stop grows the history a bounded step at a time, and every way back still
gives the loop's true values."""
from __future__ import annotations

import gc
import tracemalloc

import numpy as np
import pytest

import hlodbg
from hlodbg.engine.debug import values as values_module
from hlodbg.engine.debug.recording import HISTORY_CHECK_EVENTS
from hlodbg.engine.debug.trace import EVENT_BYTES, FRAME_RECORD_BYTES
from hlodbg.engine.machine.memory import physical_memory

from .scale_helpers import scale_programs

# Iterations: hundreds of times what fills the tests' budget, yet a run to the end would finish (a
# regression fails rather than hangs).
ENDLESS = 300_000


@pytest.fixture(autouse=True)
def state_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("HLODBG_STATE_DIR", str(tmp_path / "state"))


@pytest.fixture
def small_history(monkeypatch):
    """A history budget of 1 MiB for an explicit --memory, so that a test fills it in a few thousand
    iterations (the real floor, 64 MiB, takes a few hundred thousand)."""
    monkeypatch.setattr(values_module, "SMALLEST_HISTORY_BUDGET", 1 << 20)
    return 1 << 20


def loop(iterations: int) -> str:
    """%i counts up and %acc gains 0.5 each iteration (benchmarks/scale_programs.py)."""
    return scale_programs().loop_program(iterations)


def test_the_history_estimate_is_what_python_holds():
    session = hlodbg.load(loop(20_000)).session(persist=False, memory=1 << 10)
    session.step()
    gc.collect()
    tracemalloc.start()
    try:
        assert session.continue_().reason == "end"
        gc.collect()
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    trace = session.trace
    history = held - session.memory_used  # the values are counted by the store already
    estimate = trace.history_bytes()
    assert estimate == EVENT_BYTES * len(trace) + FRAME_RECORD_BYTES * len(trace.frame_records)
    assert history / 1.5 <= estimate <= history * 1.5, (estimate, history)


def test_an_endless_loop_stops_at_its_memory_budget(small_history):
    session = hlodbg.load(loop(ENDLESS)).session(persist=False, memory=256 << 10)
    stop = session.continue_()
    assert stop.reason == "memory" and not session.finished
    assert "--memory" in stop.message and "memory budget" in stop.message
    store = session.timeline.main.store
    assert session.recording_budget == small_history
    # Checked every HISTORY_CHECK_EVENTS events: at most that many past the budget.
    slack = HISTORY_CHECK_EVENTS * (EVENT_BYTES + FRAME_RECORD_BYTES)
    assert session.recording_bytes <= session.recording_budget + slack
    assert store.bytes <= store.budget

    # Going on: another eighth of the budget at a time, each move stopping again.
    first = stop.position
    again = session.continue_()
    assert again.reason == "memory" and again.position > first
    assert session.recording_budget == small_history + small_history // 8
    assert session.recording_bytes <= session.recording_budget + slack


def test_going_back_after_a_memory_stop_gives_the_loops_values(small_history):
    session = hlodbg.load(loop(ENDLESS)).session(persist=False, memory=64 << 10)
    stop = session.continue_()
    assert stop.reason == "memory"
    trace = session.trace
    for wanted in (3, 700, trace.frames[stop.position].iteration - 2):
        body = next(e for e in range(len(trace)) if trace.frames[e].kind == "while.body"
                    and trace.frames[e].iteration == wanted and trace.ops[e].name == "stablehlo.add")
        session.goto(body + 2)  # past both adds: %a is 0.5 * (wanted + 1)
        assert float(session.value("%a")) == 0.5 * (wanted + 1)
        assert int(session.value("%n")) == wanted + 1
    session.back()
    assert session.position == body + 1
    assert session.restart().reason == "start"
    assert session.step().reason == "step"


def test_a_run_that_fits_is_not_stopped(small_history):
    session = hlodbg.load(loop(800)).session(persist=False, memory=64 << 10)  # about 0.7 MiB of history
    assert session.continue_().reason == "end"
    assert float(np.asarray(session.results[0])) == 400.0


def test_without_memory_the_history_may_take_a_quarter_of_the_machine():
    session = hlodbg.load(loop(10)).session(persist=False)
    store = session.timeline.main.store
    memory = physical_memory()
    assert store.history_budget == max(store.budget, memory // 4 if memory else 4 << 30)
    explicit = hlodbg.load(loop(10)).session(persist=False, memory=1 << 30).timeline.main.store
    assert explicit.history_budget == 1 << 30 and explicit.budget == 1 << 30
    # A grid's devices share it: each its part of the quarter (64 MiB at least).
    grid_text = loop(10).replace("func.func @main", "module attributes {mhlo.num_replicas = 2 : i32} {\nfunc.func @main", 1) + "}\n"
    grid = hlodbg.load(grid_text).debug(persist=False)
    quarter = memory // 4 if memory else 4 << 30
    for device in grid.sessions.values():
        assert device.timeline.main.store.history_budget == max(64 << 20, quarter // 2, device.timeline.main.store.budget)


def test_a_grid_recording_that_fills_its_budget_says_so(small_history):
    text = loop(ENDLESS).replace("func.func @main", "module attributes {mhlo.num_replicas = 2 : i32} {\nfunc.func @main", 1) + "}\n"
    target = hlodbg.load(text).debug(memory=128 << 10, persist=False)
    assert target.error is not None and "memory budget" in str(target.error) and "--memory" in str(target.error)
    assert target.continue_().reason in ("end", "error")


def test_a_pinned_value_is_never_dropped_and_counts_against_the_budget():
    session = hlodbg.load(loop(3_000)).session(persist=False, memory=4 << 10)
    session.step_in()
    # Into the loop, to the return of body #3 (past its adds; loop checkpoints keep every 8th state).
    while session.frame.kind != "while.body" or session.frame.iteration != 3 or session.op.name != "stablehlo.return":
        session.step_in()
    event = session.pin("%a")
    store = session.timeline.main.store
    value = store.trace.results[event]
    session.continue_()
    assert store.evicted > 100 and store.trace.results[event] is value  # kept: the very array
    assert session.pinned == [event]
    session.unpin(event)
    assert session.pinned == []
    with pytest.raises(hlodbg.HlodbgError, match="not an op's result"):
        session.pin("%zero_is_not_a_name")


def test_looking_for_a_nan_stops_with_the_recording_full(small_history):
    from hlodbg.engine.debug.lineage import LineageError, first_nonfinite

    session = hlodbg.load(loop(ENDLESS)).session(persist=False, memory=64 << 10)
    with pytest.raises(LineageError, match="no NaN element before the recording filled its memory"):
        first_nonfinite(session, "nan")


def test_a_batch_run_that_fills_its_recording_says_so(small_history, tmp_path, capsys):
    from hlodbg.cli import main

    path = tmp_path / "endless.mlir"
    path.write_text(loop(ENDLESS))
    status = main(["run", str(path), "--break-on", "%a > 1e30", "--memory", "64K"])
    err = capsys.readouterr().err
    assert status == 2 and "memory budget" in err and "--memory" in err and "Traceback" not in err
