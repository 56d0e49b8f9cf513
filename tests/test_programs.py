"""The shared JAX-exported programs reproduce XLA's outputs (ints exact, f32 1e-5, bf16 1e-2)."""
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


def assert_matches(actual, expected, label, computed_in_bf16=False):
    actual = np.asarray(actual)
    assert actual.shape == expected.shape, f"{label}: shape {actual.shape} vs {expected.shape}"
    if expected.dtype.kind in "iub":
        np.testing.assert_array_equal(actual.astype(expected.dtype), expected, err_msg=label)
        return
    # Values computed in bf16 get bf16's tolerance even when returned as f32: XLA may skip the
    # rounding of a bf16 op whose only use converts it back to f32 ("excess precision").
    rtol = 1e-2 if computed_in_bf16 or "bfloat16" in str(actual.dtype) else 1e-5
    np.testing.assert_allclose(actual.astype(np.float64), expected.astype(np.float64), rtol=rtol, atol=rtol * 1e-1, err_msg=label)


@pytest.mark.skipif(not NAMES, reason="../shared/programs is not present")
@pytest.mark.parametrize("name", NAMES or ["<none>"])
def test_program_reproduces_xla(name):
    program = hlodbg.load(PROGRAMS / f"{name}.mlir")
    inputs = np.load(PROGRAMS / f"{name}.inputs.npz")
    expected = np.load(PROGRAMS / f"{name}.expected.npz")
    args = [inputs[f"arg{i}"] for i in range(len(inputs.files))]
    results = program.run(*args)
    computed_in_bf16 = "bf16" in program.source
    assert len(results) == len(expected.files)
    for i, result in enumerate(results):
        assert_matches(result, expected[f"result{i}"], f"{name} result{i}", computed_in_bf16)


@pytest.mark.skipif("gpt_tiny" not in NAMES, reason="../shared/programs is not present")
def test_a_program_keeps_its_prepared_interpreter_between_runs():
    program = hlodbg.load(PROGRAMS / "gpt_tiny.mlir")
    inputs = np.load(PROGRAMS / "gpt_tiny.inputs.npz")
    args = [inputs[f"arg{i}"] for i in range(len(inputs.files))]
    first = program.run(*args)
    prepared = program._interpreters[None][2]
    second = program.run(*args)
    assert program._interpreters[None][2] is prepared
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
