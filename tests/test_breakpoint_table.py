"""Breakpoints as a session keeps them: which are saved with the program (the ones set in the
session) and which live only for one launch (--break-on), and how cheaply NaN/Inf breakpoints
watch a long run."""
from __future__ import annotations

import json
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import hlodbg
from hlodbg.engine.debug.breakpoints import surely_finite
from hlodbg.engine.debug.timeline import Timeline

DATA = Path(__file__).parent / "data"
NAN_PROGRAM = DATA / "nan_in_loop.mlir"
HUNDREDS = np.full(4, 100, np.float32)


@pytest.fixture(autouse=True)
def state_dir(tmp_path, monkeypatch):
    """Breakpoint files go to a per-test directory, never the user's."""
    monkeypatch.setenv("HLODBG_STATE_DIR", str(tmp_path / "state"))
    return tmp_path / "state"


# -- screening outputs for NaN/Inf breakpoints -------------------------------------------------------

@pytest.mark.parametrize("value", [
    np.ones(4, np.float32), np.float64(3.0) * np.ones((2, 3)), np.array(2.5, np.float32),
    np.arange(6, dtype=np.int32), np.array([True, False]), np.ones((3, 0), np.float32),
])
def test_finite_outputs_are_screened_out(value):
    assert surely_finite(value)


@pytest.mark.parametrize("value", [
    np.array([1.0, np.nan], np.float32), np.array([[np.inf, 1.0]]), np.array(-np.inf, np.float32),
    np.array([np.inf, -np.inf], np.float64),
    np.array([3e38, 3e38], np.float32),  # finite, but its square overflows: looked at closely
    np.ones(3, np.float16), np.ones(3, ml_dtypes.bfloat16), np.ones(2, np.complex64),  # no fast screen
    [np.ones(2, np.float32), np.ones(2, np.float32)], None,
])
def test_outputs_that_may_hold_nan_or_inf_are_looked_at_closely(value):
    with np.errstate(over="ignore"):  # as in a recorded run
        assert not surely_finite(value)


LONG_LOOP = """
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %r:2 = stablehlo.while(%i = %c0, %acc = %x) : tensor<i32>, tensor<4xf32>
    cond {
      %n = stablehlo.constant dense<300> : tensor<i32>
      %lt = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %lt : tensor<i1>
    } do {
      %one = stablehlo.constant dense<1> : tensor<i32>
      %next = stablehlo.add %i, %one : tensor<i32>
      %limit = stablehlo.constant dense<297.0> : tensor<4xf32>
      %f = stablehlo.convert %i : (tensor<i32>) -> tensor<f32>
      %fb = stablehlo.broadcast_in_dim %f, dims = [] : (tensor<f32>) -> tensor<4xf32>
      %d = stablehlo.subtract %limit, %fb : tensor<4xf32>
      %s = stablehlo.sqrt %d : tensor<4xf32>
      stablehlo.return %next, %s : tensor<i32>, tensor<4xf32>
    }
  return %r#1 : tensor<4xf32>
}"""


@pytest.fixture
def counted_tests(monkeypatch):
    """How many times a breakpoint's test was evaluated in full (names built, values looked up)."""
    calls = []
    full_test = Timeline._test

    def counting(self, view, bp, e, operands, at_end):
        held = full_test(self, view, bp, e, operands, at_end)
        calls.append(held)
        return held

    monkeypatch.setattr(Timeline, "_test", counting)
    return calls


def test_a_nan_breakpoint_looks_closely_only_at_outputs_that_may_hold_nan(counted_tests):
    # sqrt(297 - i) turns NaN on iteration 298; before it, about 2,400 outputs are all finite.
    session = hlodbg.load(LONG_LOOP).session([np.zeros(4, np.float32)], persist=False)
    session.break_at("nan")
    stop = session.continue_()
    hit = stop.hits[0]
    event = session.event(hit.event)
    assert event.op.name == "stablehlo.sqrt" and event.iterations == (298,) and hit.hit == 1
    # the hit itself (and its numbering, which needs no second scan of the run)
    assert len(counted_tests) <= 2 and counted_tests[-1]
    counted_tests.clear()
    # the next NaN (iteration 299) is hit number 2, again with no rescan of the run
    stop = session.continue_()
    assert stop.hits[0].hit == 2 and session.event(stop.hits[0].event).iterations == (299,)
    assert len(counted_tests) <= 4
    session.close()


def test_nan_hits_are_numbered_alike_whether_found_live_or_by_scanning_back(counted_tests):
    session = hlodbg.load(LONG_LOOP).session([np.zeros(4, np.float32)], persist=False)
    session.continue_()  # the whole run is recorded before the breakpoint exists
    session.goto(0)
    session.break_at("nan", ignore=1)
    stop = session.continue_()
    assert stop.hits[0].hit == 2 and session.event(stop.hits[0].event).iterations == (299,)
    session.close()


# -- breakpoints given at launch are not saved --------------------------------------------------------

def _saved_specs(state_dir) -> list[str]:
    files = list(state_dir.rglob("*.json"))
    return [bp["spec"] for f in files for bp in json.loads(f.read_text())["breakpoints"]]


def test_launch_breakpoints_live_for_their_session_only(state_dir):
    for _ in range(3):  # three launches with --break-on nan
        session = hlodbg.load(NAN_PROGRAM).session([HUNDREDS])
        session.break_at("nan", saved=False)
        assert [bp.describe() for bp in session.breakpoints.breakpoints] == ["#1 nan"]
        session.close()
    assert _saved_specs(state_dir) == []
    later = hlodbg.load(NAN_PROGRAM).session([HUNDREDS])  # --break-on %999 then stops nowhere old
    assert later.breakpoints.breakpoints == []
    later.close()


def test_a_launch_breakpoint_the_user_already_saved_is_not_added_twice(state_dir):
    first = hlodbg.load(NAN_PROGRAM).session([HUNDREDS])
    first.break_at("nan")
    first.close()
    again = hlodbg.load(NAN_PROGRAM).session([HUNDREDS])
    assert again.break_at("nan", saved=False).id == 1
    again.break_at("func.call", saved=False)
    again.watch("%a.sum()")  # saving the table keeps only what the user set
    assert [bp.describe() for bp in again.breakpoints.breakpoints] == ["#1 nan", "#2 func.call"]
    again.close()
    assert _saved_specs(state_dir) == ["nan"]


def test_setting_a_launch_breakpoint_again_in_the_session_saves_it(state_dir):
    session = hlodbg.load(NAN_PROGRAM).session([HUNDREDS])
    session.break_at("nan", saved=False)
    assert session.break_at("nan").id == 1
    session.close()
    assert _saved_specs(state_dir) == ["nan"]


def test_a_file_holding_one_copy_per_launch_loads_each_breakpoint_once(state_dir):
    session = hlodbg.load(NAN_PROGRAM).session([HUNDREDS])
    session.break_at("nan")
    session.close()
    (path,) = state_dir.rglob("*.json")
    entry = {"spec": "nan", "condition": None, "ignore": 0, "enabled": True}
    path.write_text(json.dumps({"version": 1, "breakpoints": [entry] * 3, "watches": ["%a.sum()"] * 2}))
    again = hlodbg.load(NAN_PROGRAM).session([HUNDREDS])
    assert [bp.describe() for bp in again.breakpoints.breakpoints] == ["#1 nan"]
    assert again.breakpoints.watches == ["%a.sum()"]
    stop = again.continue_()
    assert [h.breakpoint.describe() for h in stop.hits] == ["#1 nan"]
    again.close()


def test_a_bad_saved_entry_is_reported_in_words_and_kept_in_the_file(state_dir):
    session = hlodbg.load(NAN_PROGRAM).session([HUNDREDS])
    session.break_at("nan")
    session.close()
    (path,) = state_dir.rglob("*.json")
    path.write_text(json.dumps({"version": 1, "breakpoints": [{"spec": "%gone"}, {"where": 3}], "watches": []}))
    again = hlodbg.load(NAN_PROGRAM).session([HUNDREDS])
    first, second = again.breakpoints.messages
    assert first == "saved breakpoint '%gone' no longer applies: no value %gone in any function (kept in the file as #1, unresolved)"
    assert second == f"kept an unreadable entry of {path} as it is: \"spec\" must be the place, such as \"%12\" or \"nan\", not null"
    again.break_at("inf")
    again.close()
    assert json.loads(path.read_text())["breakpoints"] == [
        {"spec": "%gone"}, {"where": 3}, {"spec": "inf", "condition": None, "ignore": 0, "enabled": True}]


async def test_the_debugger_launched_three_times_with_break_on_saves_nothing(state_dir):
    from hlodbg.ui.app import HlodbgApp

    from .pilot import settle

    for _ in range(3):
        app = HlodbgApp(hlodbg.load(NAN_PROGRAM), args=[HUNDREDS], memory="1G", break_on="nan")
        async with app.run_test(size=(140, 44)) as pilot:
            await settle(app, pilot)
            assert app.screen.state.stop_reason == "breakpoint"
            assert [bp.describe() for bp in app.controller.session.breakpoints.breakpoints] == ["#1 nan"]
    assert _saved_specs(state_dir) == []


async def test_a_bad_break_on_in_the_debugger_is_one_clean_console_line(state_dir):
    from hlodbg.ui.app import HlodbgApp

    from .pilot import settle

    app = HlodbgApp(hlodbg.load(NAN_PROGRAM), args=[HUNDREDS], memory="1G", break_on="abs(result")
    async with app.run_test(size=(140, 44)) as pilot:
        await settle(app, pilot)
        console = [str(line.text) for line in app.screen.query_one("#console").lines]
        (line,) = [text for text in console if "--break-on" in text]
        assert line.startswith("--break-on: breakpoint expression 'abs(result': invalid syntax")
        assert "error:" not in line
        assert app.controller.session.breakpoints.breakpoints == []
