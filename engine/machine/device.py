"""Devices own value storage and the numerics of contractions.

Evaluators never multiply matrices themselves: dot_general, convolution and friends bring their
operands into a canonical batched-matmul form and call `device.matmul`. The CPU device is exact
numpy (accumulating in f32 for narrow floats, in the operands' width for integers, as XLA CPU
does); a TPU device can override `matmul` (bf16 passes, precision config) and `store`/`load`
(tiled physical layouts) without touching any evaluator.
"""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from ..ir.dtypes import compute_dtype, narrow
from ..ir.types import Type

# Complex contractions at most this long are summed in order, one rounded product at a time.
_SEQUENTIAL_COMPLEX_K = 8


class Device:
    """Base device: values are stored as given and contractions are exact."""

    name = "device"
    # True when store/load are the identity, so the interpreter may skip calling them.
    transparent_storage = True

    def store(self, value: Any, type: Type) -> Any:
        """The representation kept for a value of `type` (identity on the CPU).

        A device that overrides store/load must set `transparent_storage = False`.
        """
        return value

    def load(self, stored: Any, type: Type) -> Any:
        """The logical numpy array of a stored value."""
        return stored

    def matmul(
        self,
        lhs: np.ndarray,
        rhs: np.ndarray,
        result_dtype: np.dtype,
        precision: tuple = (),
        accumulation_dtype: Optional[np.dtype] = None,
    ) -> np.ndarray:
        """`[B, M, K] x [B, K, N] -> [B, M, N]` rounded once to `result_dtype`.

        Integer products wrap in the result width; narrow floats accumulate in f32, and float
        results narrower than their operands at the operands' width. `accumulation_dtype` (a
        dot algorithm's) only ever widens the accumulator on the CPU.
        """
        acc = _accumulation_dtype(lhs.dtype, rhs.dtype, result_dtype)
        if accumulation_dtype is not None and acc.kind == "f":
            # XLA CPU ignores a dot algorithm's narrower accumulator (F16_F16_F16 still sums in
            # f32); only a wider one (F64_F64_F64) changes the arithmetic.
            requested = compute_dtype(np.dtype(accumulation_dtype))
            if requested.kind == "f" and requested.itemsize > acc.itemsize:
                acc = requested
        if lhs.dtype != acc:
            lhs = lhs.astype(acc)
        if rhs.dtype != acc:
            rhs = rhs.astype(acc)
        if acc.kind == "c" and lhs.shape[-1] <= _SEQUENTIAL_COMPLEX_K:
            # Short complex dots as XLA CPU evaluates them: each complex product rounded, then
            # added in K order (jax.jit reproduces the conformance suite's complex dot_general
            # files bit for bit this way; BLAS's kernels land several ulps away when the sum
            # cancels). Real dots need no such loop: BLAS and XLA both chain fused multiply-adds
            # in K order. For such K the loop costs about what BLAS does.
            total = np.zeros((*lhs.shape[:-1], rhs.shape[-1]), acc)
            for k in range(lhs.shape[-1]):
                total += lhs[..., :, k, None] * rhs[..., None, k, :]
            return narrow(total, result_dtype)
        # Integer products wrap in the accumulator and again when narrowed, as XLA's do.
        return narrow(np.matmul(lhs, rhs), result_dtype)


def _accumulation_dtype(lhs: np.dtype, rhs: np.dtype, result: np.dtype) -> np.dtype:
    if result.kind == "c" or lhs.kind == "c" or rhs.kind == "c":
        return np.result_type(np.complex64, result) if result.kind == "c" else np.dtype(np.complex128)
    if result.kind == "b":
        return np.dtype(np.int32)
    wide = compute_dtype(result)
    if wide.kind in "iu":
        return np.dtype(np.int64) if wide.itemsize <= 8 and wide.kind == "i" else np.dtype(np.uint64)
    # A float result narrower than its operands (f64 x f64 -> f32) is still computed at the
    # operands' width and rounded once.
    for operand in (lhs, rhs):
        operand = compute_dtype(operand)
        if operand.kind == "f" and operand.itemsize > wide.itemsize:
            wide = operand
    return wide


class CpuDevice(Device):
    """XLA-on-CPU numerics with plain numpy storage."""

    name = "cpu"


CPU = CpuDevice()
