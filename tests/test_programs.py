"""The shared JAX-exported programs reproduce XLA's outputs by default (ints exact, f32 1e-5, bf16 1e-2)."""
from __future__ import annotations

import numpy as np
import pytest

import hlodbg
from .helpers import PROGRAMS


def program_names() -> list[str]:
    if not PROGRAMS.is_dir():
        return []
    return sorted(p.stem for p in PROGRAMS.glob("*.mlir") if (PROGRAMS / f"{p.stem}.expected.npz").exists())


NAMES = program_names()  # sharded_mlp_4x2 runs on the 4x2 grid its module asks for


def assert_matches(actual, expected, label):
    actual = np.asarray(actual)
    assert actual.shape == expected.shape, f"{label}: shape {actual.shape} vs {expected.shape}"
    if expected.dtype.kind in "iub":
        np.testing.assert_array_equal(actual.astype(expected.dtype), expected, err_msg=label)
        return
    # bf16 results get bf16's tolerance; an f32 result computed from bf16 values gets f32's: the
    # default numerics are XLA's (excess precision), so the rounding XLA skips is skipped here too.
    rtol = 1e-2 if "bfloat16" in str(actual.dtype) else 1e-5
    np.testing.assert_allclose(actual.astype(np.float64), expected.astype(np.float64), rtol=rtol, atol=rtol * 1e-1, err_msg=label)


@pytest.mark.skipif(not NAMES, reason="../shared/programs is not present")
@pytest.mark.parametrize("name", NAMES or ["<none>"])
def test_program_reproduces_xla(name):
    program = hlodbg.load(PROGRAMS / f"{name}.mlir")
    inputs = np.load(PROGRAMS / f"{name}.inputs.npz")
    expected = np.load(PROGRAMS / f"{name}.expected.npz")
    args = [inputs[f"arg{i}"] for i in range(len(inputs.files))]
    results = program.run(*args)
    assert len(results) == len(expected.files)
    for i, result in enumerate(results):
        assert_matches(result, expected[f"result{i}"], f"{name} result{i}")


@pytest.mark.skipif(not NAMES, reason="../shared/programs is not present")
@pytest.mark.parametrize("name", NAMES or ["<none>"])
def test_hlodbg_run_reproduces_xla_by_default(name, tmp_path, capsys):
    """What a user types: `hlodbg run P.mlir --args P.inputs.npz --out x.npz`, no numerics option."""
    from hlodbg.cli import main

    out = tmp_path / "x.npz"
    assert main(["run", str(PROGRAMS / f"{name}.mlir"), "--args", str(PROGRAMS / f"{name}.inputs.npz"),
                 "--out", str(out)]) == 0
    got = np.load(out)
    expected = np.load(PROGRAMS / f"{name}.expected.npz")
    assert sorted(got.files) == sorted(expected.files)
    for key in expected.files:
        assert_matches(got[key], expected[key], f"{name} {key}")


@pytest.mark.skipif("gpt_tiny" not in NAMES, reason="../shared/programs is not present")
def test_a_program_keeps_its_prepared_interpreter_between_runs():
    program = hlodbg.load(PROGRAMS / "gpt_tiny.mlir")
    inputs = np.load(PROGRAMS / "gpt_tiny.inputs.npz")
    args = [inputs[f"arg{i}"] for i in range(len(inputs.files))]
    first = program.run(*args)
    prepared = program._interpreter(None)
    second = program.run(*args)
    assert program._interpreter(None) is prepared
    for a, b in zip(first, second):
        np.testing.assert_array_equal(a, b)


def test_a_program_on_several_devices_returns_each_devices_results():
    program = hlodbg.load("""
module attributes {mhlo.num_replicas = 2 : i32} {
  func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
    %s = "stablehlo.all_reduce"(%x) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %t = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %t : tensor<f32>
    }) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<2xf32>) -> tensor<2xf32>
    return %s : tensor<2xf32>
  }
}""")
    results = program.run(np.array([1.0, 2.0], np.float32))
    assert sorted((p.replica_id, p.partition_id) for p in results) == [(0, 0), (1, 0)]
    for values in results.values():
        np.testing.assert_array_equal(values[0], [2.0, 4.0])
