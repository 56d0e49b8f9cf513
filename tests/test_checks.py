"""The check dialect's own semantics: ULP distances of check.expect_close, and probes
(interpreter.probe / check.expect_serialized_eq) in the probe directory hlodbg check provides."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import hlodbg
from hlodbg.engine.ops.checks import ULP_MAX, expect_close_failure, ulp_difference
from hlodbg.engine.run.checking import check_path
from hlodbg.engine.run.interpreter import Interpreter
from tests.helpers import quiet_numpy  # noqa: F401  (autouse fixture)

FLOATS = [np.float64, np.float32, np.float16, ml_dtypes.bfloat16, ml_dtypes.float8_e5m2, ml_dtypes.float8_e4m3fn,
          ml_dtypes.float8_e4m3fnuz, ml_dtypes.float8_e5m2fnuz, ml_dtypes.float8_e4m3b11fnuz, ml_dtypes.float8_e3m4,
          ml_dtypes.float8_e4m3, ml_dtypes.float6_e2m3fn, ml_dtypes.float6_e3m2fn, ml_dtypes.float4_e2m1fn]
WITH_INFINITY = [np.float64, np.float32, np.float16, ml_dtypes.bfloat16, ml_dtypes.float8_e5m2, ml_dtypes.float8_e3m4,
                 ml_dtypes.float8_e4m3]
WITH_NEGATIVE_ZERO = [t for t in FLOATS if "fnuz" not in np.dtype(t).name]


def distance(dtype, a, b) -> int:
    return int(ulp_difference(np.array([a], dtype), np.array([b], dtype))[0])


def step_up(dtype, value, steps: int = 1):
    """The float `steps` representable values above the positive `value`, built from bits."""
    storage = np.dtype(f"u{np.dtype(dtype).itemsize}")
    bits = int(np.array([value], dtype).view(storage)[0]) + steps
    return np.array([bits], storage).view(dtype)[0]


# -- ULP distance ------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda t: np.dtype(t).name)
def test_zero_and_the_smallest_subnormal_are_one_ulp_apart(dtype):
    tiny = ml_dtypes.finfo(dtype).smallest_subnormal
    assert distance(dtype, 0.0, tiny) == 1
    assert distance(dtype, tiny, 0.0) == 1
    assert distance(dtype, 0.0, -tiny) == 1
    assert distance(dtype, tiny, -tiny) == 2


@pytest.mark.parametrize("dtype", WITH_NEGATIVE_ZERO, ids=lambda t: np.dtype(t).name)
def test_signed_zeros_are_equal_and_negative_zero_is_one_ulp_from_the_smallest_subnormal(dtype):
    tiny = ml_dtypes.finfo(dtype).smallest_subnormal
    assert distance(dtype, 0.0, -0.0) == 0
    assert distance(dtype, -0.0, tiny) == 1


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda t: np.dtype(t).name)
def test_subnormal_normal_boundary_counts_every_representable_value(dtype):
    info = ml_dtypes.finfo(dtype)
    largest_subnormal = step_up(dtype, info.smallest_normal, -1)
    assert distance(dtype, largest_subnormal, info.smallest_normal) == 1
    assert distance(dtype, info.smallest_subnormal, info.smallest_normal) == (1 << info.nmant) - 1
    assert distance(dtype, info.smallest_normal, step_up(dtype, info.smallest_normal, 3)) == 3
    assert distance(dtype, 1.0, step_up(dtype, 1.0, 2)) == 2
    assert distance(dtype, -1.0, 1.0) == 2 * int(np.array([1.0], dtype).view(f"u{np.dtype(dtype).itemsize}")[0])


@pytest.mark.parametrize("dtype", WITH_INFINITY, ids=lambda t: np.dtype(t).name)
def test_non_finite_pairs(dtype):
    big = ml_dtypes.finfo(dtype).max
    assert distance(dtype, np.inf, np.inf) == 0
    assert distance(dtype, -np.inf, -np.inf) == 0
    assert distance(dtype, np.nan, np.nan) == 0
    assert distance(dtype, np.nan, -np.nan) == 0
    assert distance(dtype, np.inf, -np.inf) == ULP_MAX
    assert distance(dtype, big, np.inf) == ULP_MAX  # not 1, though inf follows max in bits
    assert distance(dtype, np.inf, big) == ULP_MAX
    assert distance(dtype, 0.0, np.nan) == ULP_MAX
    assert distance(dtype, np.inf, np.nan) == ULP_MAX


def test_unsigned_e8m0_counts_powers_of_two():
    e8m0 = ml_dtypes.float8_e8m0fnu  # no sign bit, no zero: every value is a power of two
    assert distance(e8m0, 1.0, 2.0) == 1
    assert distance(e8m0, 0.25, 4.0) == 4
    assert distance(e8m0, 1.0, np.nan) == ULP_MAX


def test_nan_payloads_and_signalling_nans_meet_at_zero():
    quiet = np.array([np.nan], np.float32)
    other = (quiet.view(np.uint32) | np.uint32(0x1234)).view(np.float32)
    signalling = np.array([0x7F800001], np.uint32).view(np.float32)
    assert int(ulp_difference(quiet, other)[0]) == 0
    assert int(ulp_difference(quiet, signalling)[0]) == 0


def test_complex_takes_the_larger_distance_of_its_parts():
    a = np.array([complex(1.0, 0.0)], np.complex64)
    b = np.array([complex(step_up(np.float32, 1.0, 2), ml_dtypes.finfo(np.float32).smallest_subnormal)], np.complex64)
    assert int(ulp_difference(a, b)[0]) == 2
    c = np.array([complex(np.inf, 0.0)], np.complex64)
    assert int(ulp_difference(a, c)[0]) == ULP_MAX


def test_expect_close_failure_names_the_farthest_distance():
    a = np.array([1.0, 2.0], np.float32)
    assert expect_close_failure(a, a, 0, 0) is None
    message = expect_close_failure(a, np.array([1.0, np.inf], np.float32), 0, 3)
    assert "non-finite" in message and "at [1]" in message
    assert "2 ULP" in expect_close_failure(a, np.array([1.0, step_up(np.float32, 2.0, 2)], np.float32), 0, 1)
    # min_ulp_difference also bounds from below: equal values fail a check that wants them apart.
    assert expect_close_failure(a, a, 1, 1) is not None


EXPECT_CLOSE = """
func.func @main() {
  %zero = stablehlo.constant dense<[0.0, -0.0, 1.17549435E-38, 0x7F800000, 0x7FC00000]> : tensor<5xf32>
  %near = stablehlo.constant dense<[1.40129846E-45, 1.40129846E-45, 1.17549421E-38, 0x7F800000, 0xFFC00001]> : tensor<5xf32>
  check.expect_close %zero, %near, max_ulp_difference = 1, min_ulp_difference = 0 : tensor<5xf32>, tensor<5xf32>
  %big = stablehlo.constant dense<3.40282347E+38> : tensor<f32>
  %inf = stablehlo.constant dense<0x7F800000> : tensor<f32>
  check.expect_close %big, %inf, max_ulp_difference = 1000, min_ulp_difference = 0 : tensor<f32>, tensor<f32>
  func.return
}
"""


def test_expect_close_in_a_program():
    outcomes = Interpreter(hlodbg.load(EXPECT_CLOSE, check=False).module)
    outcomes.run("main", [])
    assert [c.passed for c in outcomes.checks] == [True, False]


# -- probes -----------------------------------------------------------------------------------

PROBES = """
func.func @scalars() {
  %0 = stablehlo.constant dense<[1.5, -2.0]> : tensor<2xbf16>
  %1 = interpreter.probe %0, probe_id = "narrow/bf16, with a comma" : tensor<2xbf16>
  check.expect_serialized_eq %1, probe_id = "narrow/bf16, with a comma" : tensor<2xbf16>
  %2 = stablehlo.constant dense<[1, -2, 7]> : tensor<3xi4>
  %3 = interpreter.probe %2, probe_id = "i4" : tensor<3xi4>
  check.expect_serialized_eq %3, probe_id = "i4" : tensor<3xi4>
  func.return
}

// -----

func.func @loop() {
  %zero = stablehlo.constant dense<0> : tensor<i32>
  %one = stablehlo.constant dense<1> : tensor<i32>
  %three = stablehlo.constant dense<3> : tensor<i32>
  %init = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %i, %x = stablehlo.while(%arg0 = %zero, %arg1 = %init) : tensor<i32>, tensor<2xf32>
  cond {
    %c = stablehlo.compare LT, %arg0, %three : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  } do {
    %doubled = stablehlo.add %arg1, %arg1 : tensor<2xf32>
    %seen = interpreter.probe %doubled, probe_id = "doubled" : tensor<2xf32>
    %next = stablehlo.add %arg0, %one : tensor<i32>
    stablehlo.return %next, %seen : tensor<i32>, tensor<2xf32>
  }
  %first = stablehlo.constant dense<[2.0, 4.0]> : tensor<2xf32>
  %third = stablehlo.constant dense<[8.0, 16.0]> : tensor<2xf32>
  check.expect_serialized_eq %first, probe_id = "doubled" : tensor<2xf32>
  check.expect_serialized_eq %first, probe_id = "doubled", iter = 0 : tensor<2xf32>
  check.expect_serialized_eq %third, probe_id = "doubled", iter = 2 : tensor<2xf32>
  func.return
}
"""

PROBE_FAILURES = """
func.func @main() {
  %0 = stablehlo.constant dense<[1, 2]> : tensor<2xi32>
  %1 = interpreter.probe %0, probe_id = "p" : tensor<2xi32>
  %wrong = stablehlo.constant dense<[1, 3]> : tensor<2xi32>
  check.expect_serialized_eq %wrong, probe_id = "p" : tensor<2xi32>
  check.expect_serialized_eq %0, probe_id = "p", iter = 1 : tensor<2xi32>
  check.expect_serialized_eq %0, probe_id = "never" : tensor<2xi32>
  %other = stablehlo.constant dense<[1, 2]> : tensor<2xi64>
  check.expect_serialized_eq %other, probe_id = "p" : tensor<2xi64>
  func.return
}
"""


def test_check_gives_each_module_its_own_probe_directory(tmp_path):
    path = tmp_path / "probes.mlir"
    path.write_text(PROBES)
    outcomes = check_path(str(path))
    assert [o.passed for o in outcomes] == [True, True], [o.failures or o.error for o in outcomes]
    assert [len(o.checks) for o in outcomes] == [2, 3]


def test_probe_directories_are_temporary_unless_kept(tmp_path, monkeypatch):
    import tempfile

    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    path = tmp_path / "probes.mlir"
    path.write_text(PROBES)
    check_path(str(path))
    assert list(scratch.iterdir()) == []
    kept = tmp_path / "kept"
    assert all(o.passed for o in check_path(str(path), str(kept)))
    loop = kept / "probes.mlir.1"
    rows = (loop / "index.csv").read_text().splitlines()
    assert [row.split(",")[:2] for row in rows] == [["doubled", "tensor<2xf32>"]] * 3
    assert np.load(loop / "probe2.npy").tolist() == [8.0, 16.0]
    # Checking again starts from an empty directory: the old probes do not answer.
    assert all(o.passed for o in check_path(str(path), str(kept)))
    assert len((loop / "index.csv").read_text().splitlines()) == 3


def test_serialized_checks_fail_with_reasons(tmp_path):
    path = tmp_path / "failures.mlir"
    path.write_text(PROBE_FAILURES)
    (outcome,) = check_path(str(path))
    messages = [c.message for c in outcome.checks]
    assert [c.passed for c in outcome.checks] == [False, False, False, False]
    assert "[1]: 3 (actual) vs 2 (expected)" in messages[0] or "2 (actual) vs 3 (expected)" in messages[0]
    assert "iteration 1 was not recorded (the probe ran only 1 time(s))" in messages[1]
    assert "'never' iteration 0 was not recorded (the probe ran never)" in messages[2]
    assert "recorded a tensor<2xi32>, expected a tensor<2xi64>" in messages[3]


def test_probe_without_a_directory_passes_its_value_on():
    program = hlodbg.load(PROBE_FAILURES.replace("check.expect_serialized_eq", "// "), check=False)
    interpreter = Interpreter(program.module)
    assert interpreter.run("main", []) == []


def test_cli_check_runs_probe_programs(tmp_path):
    from tests.helpers import REPO  # noqa: F401
    import subprocess
    import sys

    path = tmp_path / "probes.mlir"
    path.write_text(PROBES)
    done = subprocess.run([sys.executable, "-m", "hlodbg", "check", "--probe", str(tmp_path / "out"), str(path)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 passed, 0 failed" in done.stdout
    assert (tmp_path / "out" / "probes.mlir.0" / "probe1.npy").exists()
