"""The issue-19 features as a user meets them from the command line: programs lowered elsewhere (no
JAX lowering in the process), run and captured on `xla:cpu`, bad options and paths. Commands that
could crash the interpreter run in a subprocess with a time limit, so a crash fails one test."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from hlodbg.cli import main

# A Cholesky factorisation as JAX lowers jnp.linalg.cholesky on the CPU: a LAPACK custom call.
CHOLESKY = """
func.func @main(%a: tensor<3x3xf32>) -> (tensor<3x3xf32>, tensor<i32>) {
  %0:2 = stablehlo.custom_call @lapack_spotrf_ffi(%a) {mhlo.backend_config = {uplo = 76 : ui8}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>], result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<> : tensor<0xindex>]} : (tensor<3x3xf32>) -> (tensor<3x3xf32>, tensor<i32>)
  return %0#0, %0#1 : tensor<3x3xf32>, tensor<i32>
}
"""
SPD = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]], np.float32)


@pytest.fixture
def jax():
    return pytest.importorskip("jax")


def hlodbg_process(*args: str, timeout: float = 240) -> subprocess.CompletedProcess:
    """`hlodbg ARGS` in a fresh process (its own JAX, 8 CPU devices)."""
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=8", JAX_PLATFORMS="cpu")
    return subprocess.run([sys.executable, "-m", "hlodbg", *args], capture_output=True, text=True,
                          timeout=timeout, env=env)


def _cholesky_files(tmp_path: Path) -> tuple[Path, Path]:
    program = tmp_path / "cholesky.mlir"
    program.write_text(CHOLESKY)
    inputs = tmp_path / "in.npz"
    np.savez(inputs, SPD)
    return program, inputs


def test_lapack_call_runs_on_xla_cpu_in_a_process_that_never_lowered_one(jax, tmp_path):
    program, inputs = _cholesky_files(tmp_path)
    out = tmp_path / "out.npz"
    done = hlodbg_process("run", str(program), "--args", str(inputs), "--target", "xla:cpu", "--out", str(out))
    assert done.returncode == 0, done.stderr[-2000:]
    factor = np.tril(np.load(out)["result0"])  # potrf leaves the upper triangle as it was
    np.testing.assert_allclose(factor, np.linalg.cholesky(SPD), rtol=2e-5)


def test_lapack_call_is_captured_in_a_process_that_never_lowered_one(jax, tmp_path):
    program, inputs = _cholesky_files(tmp_path)
    done = hlodbg_process("capture", str(program), "--args", str(inputs), "--target", "xla:cpu",
                          "-o", str(tmp_path / "run.hlocap"))
    assert done.returncode == 0, done.stderr[-2000:]
    assert (tmp_path / "run.hlocap" / "index.csv").exists()
