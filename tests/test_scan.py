"""`run --break-on nan|inf` without recording (engine/debug/scan.py): it stops at the op
instance a session stops at, numbers it the same way and reports it in the same words."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import hlodbg
from hlodbg.cli import main
from hlodbg.cli_session import report, scan_report
from hlodbg.engine.debug.scan import find_first_nonfinite

DATA = Path(__file__).parent / "data"
HUNDREDS = np.full(4, 100, np.float32)

REDUCE_THEN_LOG = """
func.func @main(%x: tensor<2x3xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %sum = stablehlo.reduce(%x init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %r:2 = stablehlo.while(%i = %c0, %acc = %sum) : tensor<i32>, tensor<2xf32>
    cond {
      %n = stablehlo.constant dense<4> : tensor<i32>
      %lt = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %lt : tensor<i1>
    } do {
      %one = stablehlo.constant dense<1> : tensor<i32>
      %next = stablehlo.add %i, %one : tensor<i32>
      %ten = stablehlo.constant dense<10.0> : tensor<2xf32>
      %less = stablehlo.subtract %acc, %ten : tensor<2xf32>
      %l = stablehlo.log %less : tensor<2xf32>
      %e = stablehlo.exponential %l : tensor<2xf32>
      stablehlo.return %next, %e : tensor<i32>, tensor<2xf32>
    }
  %big = stablehlo.constant dense<1.0e38> : tensor<2xf32>
  %inf = stablehlo.multiply %big, %big : tensor<2xf32>
  return %r#1, %inf : tensor<2xf32>, tensor<2xf32>
}"""

CASES = [
    pytest.param(DATA / "nan_in_loop.mlir", [HUNDREDS], "nan", id="nan in a call in a loop"),
    pytest.param(REDUCE_THEN_LOG, [np.full((2, 3), 10, np.float32)], "nan", id="nan after a reduce, in a loop"),
    pytest.param(REDUCE_THEN_LOG, [np.full((2, 3), 10, np.float32)], "inf", id="-inf from log"),
    pytest.param(REDUCE_THEN_LOG, [np.full((2, 3), 30, np.float32)], "nonfinite", id="nonfinite"),
]


@pytest.mark.parametrize("source,args,test", CASES)
def test_the_scan_stops_where_a_session_stops_and_says_it_alike(source, args, test):
    program = hlodbg.load(source)
    found = find_first_nonfinite(program.module, args, test)
    session = program.session(args, persist=False)
    session.break_at(test, saved=False)
    stop = session.continue_()
    assert stop.reason == "breakpoint" and found.hit is not None
    hit = stop.hits[0]
    assert found.hit.event == hit.event and found.hit.op is session.event(hit.event).op
    assert scan_report(found.hit, test, "prog.mlir") == report(session, hit, test, "prog.mlir")
    session.close()


def test_a_scan_that_meets_nothing_gives_the_programs_results():
    program = hlodbg.load(REDUCE_THEN_LOG)
    finite = [np.full((2, 3), 1e3, np.float32)]  # the loop stays positive; only the last op is Inf
    found = find_first_nonfinite(program.module, finite, "nan")
    assert found.hit is None
    expected = program.run(*finite)
    assert all(np.array_equal(a, b) for a, b in zip(found.results, expected))
    assert find_first_nonfinite(program.module, finite, "inf").hit.op.name == "stablehlo.multiply"


def test_run_break_on_nan_reports_through_the_scan(tmp_path, capsys):
    npy = tmp_path / "x.npy"
    np.save(npy, HUNDREDS)
    assert main(["run", str(DATA / "nan_in_loop.mlir"), "--arg", f"0={npy}", "--break-on", "nan"]) == 3
    out = capsys.readouterr().out
    assert out.startswith("first NaN produced by event") and "while.body #3 > @update" in out
    assert main(["run", str(DATA / "nan_in_loop.mlir"), "--break-on", "nan", "--memory", "lots"]) == 2
    assert "--memory: cannot read 'lots' as a size" in capsys.readouterr().err


# Screened plain runs (engine/run/screen.py) must meet every value a session's NaN breakpoint meets:
# a NaN an argument carries through a loop untouched (a control op's result), one made and hidden
# again by a select in a loop body hot enough to be compiled (block_code.py), one in a reducer's
# body, and a multi-result op's second result.
PASSED_THROUGH = """
func.func @main(%x: tensor<3xf32>) -> tensor<i32> {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %r:2 = stablehlo.while(%i = %c0, %keep = %x) : tensor<i32>, tensor<3xf32>
    cond {
      %n = stablehlo.constant dense<5> : tensor<i32>
      %lt = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %lt : tensor<i1>
    } do {
      %one = stablehlo.constant dense<1> : tensor<i32>
      %next = stablehlo.add %i, %one : tensor<i32>
      stablehlo.return %next, %keep : tensor<i32>, tensor<3xf32>
    }
  return %r#0 : tensor<i32>
}"""

HIDDEN_IN_A_HOT_LOOP = """
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %r:2 = stablehlo.while(%i = %c0, %acc = %x) : tensor<i32>, tensor<2xf32>
    cond {
      %n = stablehlo.constant dense<50> : tensor<i32>
      %lt = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %lt : tensor<i1>
    } do {
      %one = stablehlo.constant dense<1> : tensor<i32>
      %next = stablehlo.add %i, %one : tensor<i32>
      %step = stablehlo.constant dense<-0.5> : tensor<2xf32>
      %less = stablehlo.add %acc, %step : tensor<2xf32>
      %root = stablehlo.sqrt %less : tensor<2xf32>
      %ok = stablehlo.compare GE, %less, %step : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xi1>
      %safe = stablehlo.select %ok, %root, %acc : tensor<2xi1>, tensor<2xf32>
      %kept = stablehlo.add %safe, %less : tensor<2xf32>
      %zero = stablehlo.constant dense<0.0> : tensor<2xf32>
      %hidden = stablehlo.multiply %kept, %zero : tensor<2xf32>
      %back = stablehlo.add %less, %hidden : tensor<2xf32>
      stablehlo.return %next, %less : tensor<i32>, tensor<2xf32>
    }
  return %r#1 : tensor<2xf32>
}"""

SECOND_RESULT = """
func.func @main(%x: tensor<4xf32>) -> (tensor<f32>, tensor<i32>) {
  %init = stablehlo.constant dense<0.0> : tensor<f32>
  %zero = stablehlo.constant dense<0> : tensor<i32>
  %iota = stablehlo.iota dim = 0 : tensor<4xi32>
  %r:2 = stablehlo.reduce(%x init: %init), (%iota init: %zero) across dimensions = [0] : (tensor<4xf32>, tensor<4xi32>, tensor<f32>, tensor<i32>) -> (tensor<f32>, tensor<i32>)
    reducer(%a: tensor<f32>, %b: tensor<f32>) (%ai: tensor<i32>, %bi: tensor<i32>) {
      %s = stablehlo.log %b : tensor<f32>
      %t = stablehlo.add %a, %s : tensor<f32>
      %m = stablehlo.maximum %ai, %bi : tensor<i32>
      stablehlo.return %t, %m : tensor<f32>, tensor<i32>
    }
  return %r#0, %r#1 : tensor<f32>, tensor<i32>
}"""

SCREENED_CASES = [
    pytest.param(PASSED_THROUGH, [np.array([1, np.nan, 2], np.float32)], "nan", id="an argument's NaN through a loop"),
    pytest.param(HIDDEN_IN_A_HOT_LOOP, [np.array([20.0, 9.0], np.float32)], "nan", id="a NaN hidden again, iteration 20"),
    pytest.param(HIDDEN_IN_A_HOT_LOOP, [np.array([20.0, 9.0], np.float32)], "nonfinite", id="nonfinite in a hot loop"),
    pytest.param(SECOND_RESULT, [np.array([1, 2, -3, 4], np.float32)], "nan", id="in a reducer"),
]


@pytest.mark.parametrize("source,args,test", SCREENED_CASES)
def test_a_screened_run_meets_what_a_session_meets(source, args, test):
    program = hlodbg.load(source)
    found = find_first_nonfinite(program.module, args, test)
    session = program.session(args, persist=False)
    session.break_at(test, saved=False)
    stop = session.continue_()
    assert stop.reason == "breakpoint" and found.hit is not None, (stop, found)
    assert found.hit.event == stop.hits[0].event


def test_a_screened_run_that_meets_nothing_stays_plain(monkeypatch):
    """No NaN: one plain, screened run gives the results; no run is observed."""
    from hlodbg.engine.debug import scan

    observed = []
    monkeypatch.setattr(scan._FirstNonfinite, "after_op", lambda *a: observed.append(a))
    program = hlodbg.load(HIDDEN_IN_A_HOT_LOOP)
    found = find_first_nonfinite(program.module, [np.array([100.0, 90.0], np.float32)], "nan")
    assert found.hit is None and not observed
    np.testing.assert_array_equal(found.results[0], np.array([75.0, 65.0], np.float32))
