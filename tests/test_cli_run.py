"""`hlodbg run` and `hlodbg check`: arguments in, results out, checks reported with locations."""
from __future__ import annotations

import json
from pathlib import Path
import subprocess
import sys

import ml_dtypes
import numpy as np
import pytest

import hlodbg
from hlodbg.cli import main
from .helpers import CONFORMANCE, PROGRAMS, SAMPLES


PROGRAM = """
func.func @main(%a: tensor<3xf32>, %b: tensor<3xbf16>) -> (tensor<3xf32>, tensor<3xbf16>) {
  %0 = stablehlo.add %a, %a : tensor<3xf32>
  %1 = stablehlo.negate %b : tensor<3xbf16>
  return %0, %1 : tensor<3xf32>, tensor<3xbf16>
}
func.func @twice(%x: tensor<2xi32>) -> tensor<2xi32> {
  %0 = stablehlo.add %x, %x : tensor<2xi32>
  return %0 : tensor<2xi32>
}
"""

CHECKS = """
module {
  func.func @main() {
    %a = stablehlo.constant dense<[1, 2]> : tensor<2xi32>
    %b = stablehlo.add %a, %a : tensor<2xi32>
    "check.expect_eq_const"(%b) {value = dense<[2, 4]> : tensor<2xi32>} : (tensor<2xi32>) -> ()
    return
  }
}

// -----

module {
  func.func @main() {
    %a = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>
    %b = stablehlo.multiply %a, %a : tensor<2xf32>
    "check.expect_almost_eq_const"(%b) {value = dense<[1.0, 5.0]> : tensor<2xf32>} : (tensor<2xf32>) -> ()
    return
  }
}
"""


@pytest.fixture
def program(tmp_path):
    path = tmp_path / "prog.mlir"
    path.write_text(PROGRAM)
    return path


def test_run_with_npz_and_npy_arguments_saves_results(program, tmp_path, capsys):
    args = tmp_path / "in.npz"
    np.savez(args, arg0=np.array([1, 2, 3], np.float32), arg1=np.array([1, -2, 0.5], ml_dtypes.bfloat16))
    out = tmp_path / "out.npz"
    assert main(["run", str(program), "--args", str(args), "--out", str(out)]) == 0
    results = np.load(out)
    np.testing.assert_array_equal(results["result0"], [2, 4, 6])
    # A bf16 result is stored as f32 (exactly), which numpy reads as numbers without ml_dtypes.
    assert results["result1"].dtype == np.float32
    np.testing.assert_array_equal(results["result1"], [-1, 2, -0.5])
    npy = tmp_path / "x.npy"
    np.save(npy, np.array([5, 6], np.int32))
    assert main(["run", str(program), "--entry", "twice", "--arg", f"0={npy}"]) == 0
    text = capsys.readouterr().out
    assert "result0: tensor<2xi32>" in text and "[10, 12]" in text


def test_run_random_arguments_are_reproducible_and_reported(program, capsys):
    assert main(["run", str(program), "--json", "--seed", "7"]) == 0
    first = json.loads(capsys.readouterr().out)
    assert main(["run", str(program), "--json", "--seed", "7"]) == 0
    again = json.loads(capsys.readouterr().out)
    assert first == again and first["random_arguments"] == [0, 1]
    result = first["results"][0]
    assert result["type"] == "tensor<3xf32>" and result["shape"] == [3] and len(result["values"]) == 3
    assert main(["run", str(program)]) == 0
    assert "random argument(s) 0, 1 (seed 0)" in capsys.readouterr().err


@pytest.mark.parametrize(
    "extra,message",
    [
        (["--entry", "nope"], "no function @nope"),
        (["--arg", "zero=x.npy"], "--arg expects N=FILE.npy"),
        (["--arg", "5=missing.npy"], "no such file: missing.npy"),
        (["--args", "missing.npz"], "no such file: missing.npz"),
    ],
)
def test_run_bad_input_is_a_message_with_status_2(program, extra, message, capsys):
    assert main(["run", str(program), *extra]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_run_wrong_shape_argument(program, tmp_path, capsys):
    npy = tmp_path / "bad.npy"
    np.save(npy, np.zeros(4, np.float32))
    assert main(["run", str(program), "--arg", f"0={npy}"]) == 2
    assert "argument 0: expected tensor<3xf32> but got shape 4" in capsys.readouterr().err


def test_run_the_embedded_sample(capsys):
    assert main(["run", str(SAMPLES / "tiny_model.mlir")]) == 0
    assert "result0:" in capsys.readouterr().out


def test_check_reports_failures_with_locations_and_exit_status(tmp_path):
    path = tmp_path / "checks.mlir"
    path.write_text(CHECKS)
    done = subprocess.run([sys.executable, "-m", "hlodbg", "check", str(path)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    lines = done.stdout.strip().splitlines()
    assert lines[-1] == "1 passed, 1 failed"
    assert f"{path}#1: FAILED" in done.stdout
    assert f"{path}:17:5: error: check.expect_almost_eq failed" in done.stdout
    assert "at [1]: 4.0 (actual) vs 5.0 (expected)" in done.stdout


def test_check_passing_file_exits_0(tmp_path, capsys):
    path = tmp_path / "ok.mlir"
    path.write_text(CHECKS.split("// -----")[0])
    assert main(["check", "-v", str(path)]) == 0
    out = capsys.readouterr().out
    assert "ok (1 checks)" in out and out.strip().endswith("1 passed, 0 failed")


def test_check_unloadable_file_is_a_failure(tmp_path, capsys):
    path = tmp_path / "bad.mlir"
    path.write_text("func.func @main( {")
    assert main(["check", str(path)]) == 1
    out = capsys.readouterr().out
    assert "bad.mlir:1:" in out and "0 passed, 1 failed" in out


@pytest.mark.skipif(not CONFORMANCE.is_dir(), reason="../shared/conformance is not present")
def test_check_many_conformance_files(capsys):
    files = sorted(str(p) for p in CONFORMANCE.glob("add_*.mlir"))[:5]
    assert main(["check", *files]) == 0
    assert capsys.readouterr().out.strip() == f"{len(files)} passed, 0 failed"


@pytest.mark.skipif(not PROGRAMS.is_dir(), reason="../shared/programs is not present")
def test_run_shared_program_matches_expected(tmp_path):
    out = tmp_path / "out.npz"
    assert main(["run", str(PROGRAMS / "mlp.mlir"), "--args", str(PROGRAMS / "mlp.inputs.npz"), "--out", str(out)]) == 0
    expected = np.load(PROGRAMS / "mlp.expected.npz")
    np.testing.assert_allclose(np.load(out)["result0"], expected["result0"], rtol=1e-5)


# -- --break-on, --probe, --memory ------------------------------------------------------------------

NAN_PROGRAM = Path(__file__).parent / "data" / "nan_in_loop.mlir"


def _hlodbg(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "hlodbg", *argv], capture_output=True, text=True, timeout=120)


def _hundreds(tmp_path) -> str:
    path = tmp_path / "x.npy"
    np.save(path, np.full(4, 100, np.float32))
    return str(path)


def test_break_on_nan_reports_the_first_nan_op_and_its_iteration(tmp_path):
    result = _hlodbg("run", str(NAN_PROGRAM), "--arg", f"0={_hundreds(tmp_path)}", "--break-on", "nan")
    assert result.returncode == 3, result.stderr
    out = result.stdout
    assert "first NaN produced by" in out and "%s = stablehlo.sqrt" in out
    assert f"{NAN_PROGRAM}:25:" in out or "nan_in_loop.mlir:25:" in out
    assert "while.body #3 > @update" in out
    assert "%d: finite" in out and "NOT finite" in out


def test_break_on_an_expression_and_no_hit(tmp_path):
    result = _hlodbg("run", str(NAN_PROGRAM), "--arg", f"0={_hundreds(tmp_path)}", "--break-on", "abs(result).max() > 50")
    assert result.returncode == 3 and "stablehlo.subtract" in result.stdout
    big = tmp_path / "big.npy"
    np.save(big, np.full(4, 1e12, np.float32))
    result = _hlodbg("run", str(NAN_PROGRAM), "--arg", f"0={big}", "--break-on", "nan")
    assert result.returncode == 0 and "result0" in result.stdout


def test_break_on_a_bad_spec_is_a_clear_error(tmp_path):
    result = _hlodbg("run", str(NAN_PROGRAM), "--break-on", "%nope")
    assert result.returncode == 2 and "--break-on" in result.stderr and "Traceback" not in result.stderr


def test_probe_writes_every_value_and_an_index(tmp_path):
    out = tmp_path / "probe"
    result = _hlodbg("run", str(NAN_PROGRAM), "--arg", f"0={_hundreds(tmp_path)}", "--probe", str(out), "--memory", "1K")
    assert result.returncode == 0, result.stderr
    import csv

    rows = list(csv.DictReader(open(out / "index.csv")))
    sqrt = [r for r in rows if r["op"] == "stablehlo.sqrt"]
    assert [r["iterations"] for r in sqrt] == ["0", "1", "2", "3", "4"]
    assert np.load(out / sqrt[1]["file"]).tolist() == [3.0] * 4
    assert all((out / r["file"]).exists() for r in rows)


def test_memory_must_be_a_size(tmp_path):
    result = _hlodbg("run", str(NAN_PROGRAM), "--probe", str(tmp_path / "p"), "--memory", "lots")
    assert result.returncode == 2 and "--memory" in result.stderr


def test_a_bad_break_on_expression_is_one_clean_message_with_a_caret(tmp_path):
    result = _hlodbg("run", str(NAN_PROGRAM), "--arg", f"0={_hundreds(tmp_path)}", "--break-on", "abs(result")
    assert result.returncode == 2
    lines = [line for line in result.stderr.splitlines() if not line.startswith("note:")]
    assert lines[0].startswith("error: --break-on: breakpoint expression 'abs(result': invalid syntax")
    assert lines[0].count("error") == 1 and "Traceback" not in result.stderr
    assert lines[1:] == ["  abs(result", "     ^"]  # under the unclosed '('


def test_a_bad_condition_or_watch_message_says_error_once():
    from hlodbg.engine.debug.breakpoints import BreakpointError

    session = hlodbg.load(NAN_PROGRAM).session(persist=False)
    for attempt in (lambda: session.break_at("nan", "result >"), lambda: session.watch("%a +")):
        with pytest.raises(BreakpointError) as caught:
            attempt()
        assert "error" not in caught.value.message and caught.value.render().count("error:") == 1
    session.close()


def test_memory_must_be_a_size_even_for_a_plain_run():
    result = _hlodbg("run", str(NAN_PROGRAM), "--memory", "lots")
    assert result.returncode == 2 and "--memory: cannot read 'lots' as a size" in result.stderr


def test_the_debugger_names_a_bad_memory_option_on_its_error_screen():
    from hlodbg.cli import _parser
    from hlodbg.ui_entry import build_app

    app = build_app(_parser().parse_args(["open", str(NAN_PROGRAM), "--memory", "lots"]))
    assert app.error is not None and app.error.render().startswith("error: --memory: cannot read 'lots'")


@pytest.mark.parametrize("command", ["run", "open"])
def test_break_on_given_twice_is_refused_not_half_ignored(command):
    result = _hlodbg(command, str(NAN_PROGRAM), "--break-on", "nan", "--break-on", "inf")
    assert result.returncode == 2 and "--break-on is given more than once" in result.stderr
    assert "Traceback" not in result.stderr


def test_break_on_a_condition_that_fails_to_evaluate_says_so_and_stops(tmp_path, capsys):
    program = tmp_path / "short.mlir"
    program.write_text("""func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.add %x, %x : tensor<4xf32>
  %1 = stablehlo.multiply %0, %x : tensor<4xf32>
  return %1 : tensor<4xf32>
}
""")
    assert main(["run", str(program), "--break-on", "%1 if result[100] > 0"]) == 2
    err = capsys.readouterr().err
    assert err.count("error:") == 1 and "result0" not in err
    assert "--break-on '%1 if result[100] > 0' stopped the run after event 1, %1 = stablehlo.multiply" in err
    assert f"{program}:3:3" in err and "its condition could not be evaluated" in err and "index 100" in err
    assert main(["run", str(program), "--break-on", "%1 if %0.max() > 1e30"]) == 0  # holds nowhere: no error
