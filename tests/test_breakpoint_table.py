"""Breakpoints as a session keeps them: which are saved with the program (the ones set in the
session) and which live only for one launch (--break-on), and how cheaply NaN/Inf breakpoints
watch a long run."""
from __future__ import annotations

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
