"""Linear algebra and normalisation: cholesky, triangular_solve, fft and the batch_norm ops.

Narrow floats are computed in f32 and rounded once, like every other family. The factorisation
and the substitutions loop over the rows of one matrix (vectorised over every batch matrix and
right-hand side), which is the order XLA's CPU expanders use, so non-positive-definite and
singular inputs give the same NaN/inf patterns.
"""
from __future__ import annotations

import numpy as np

from ..ir.dtypes import narrow, widen
from .registry import OpCall, op

# -- cholesky -----------------------------------------------------------------------------------


@op("stablehlo.cholesky")
def cholesky(call: OpCall, a: np.ndarray) -> np.ndarray:
    """`a = l @ l^H` (lower) or `a = u^H @ u` (upper); only that triangle of `a` is read.

    XLA CPU's expander takes the square root of each pivot; a NaN pivot (a negative or NaN
    value: the matrix is not positive definite) turns that whole matrix into NaNs, while a zero
    pivot only spreads 0/0 and x/0 through its column, as here.
    """
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise call.error(f"operand must be a batch of square matrices, got shape {a.shape}")
    lower = bool(call.attr("lower", False))
    x = widen(a)
    if not lower:
        # u = l^H of the matrix whose lower triangle is a's upper triangle, conjugated.
        x = np.conj(np.swapaxes(x, -1, -2))
    n = x.shape[-1]
    batch = x.shape[:-2]
    l = np.zeros_like(x)
    failed = np.zeros(batch, bool)
    for j in range(n):
        # Column j of a - l l^H, from row j down (l's column j and later are still zero).
        column = x[..., j:, j] - np.einsum("...ik,...k->...i", l[..., j:, :j], np.conj(l[..., j, :j]))
        pivot = column[..., 0]
        if x.dtype.kind == "c":
            root = np.sqrt(pivot.real)
            failed |= np.isnan(root)
            l[..., j:, j] = column / root[..., None].astype(x.dtype)
        else:
            root = np.sqrt(pivot)
            failed |= np.isnan(root)
            l[..., j:, j] = column / root[..., None]
    l[failed] = np.nan
    if not lower:
        l = np.conj(np.swapaxes(l, -1, -2))
    return narrow(l, call.result_dtype)


# -- triangular_solve ---------------------------------------------------------------------------


@op("stablehlo.triangular_solve")
def triangular_solve(call: OpCall, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Solve `op(a) x = b` (left_side) or `x op(a) = b`, reading only a's `lower`/upper triangle."""
    left = bool(call.attr("left_side"))
    lower = bool(call.attr("lower"))
    unit = bool(call.attr("unit_diagonal"))
    transpose = str(call.attr("transpose_a", "NO_TRANSPOSE"))
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise call.error(f"a must be a batch of square matrices, got shape {a.shape}")
    m = a.shape[-1]
    if b.ndim != a.ndim or b.shape[:-2] != a.shape[:-2] or b.shape[-2 if left else -1] != m:
        raise call.error(f"b of shape {b.shape} does not fit a of shape {a.shape} (left_side = {left})")
    t = widen(a)
    t = np.tril(t) if lower else np.triu(t)
    if unit:
        t = t.copy()
        idx = np.arange(m)
        t[..., idx, idx] = 1
    # Bring every case to `M x = rhs` with M triangular: op(a) is a's transpose, adjoint or a;
    # `x op(a) = b` is `op(a)^T x^T = b^T`.
    if transpose in ("TRANSPOSE", "ADJOINT"):
        t = np.swapaxes(t, -1, -2)
        if transpose == "ADJOINT":
            t = np.conj(t)
        lower = not lower
    rhs = widen(b)
    if not left:
        t = np.swapaxes(t, -1, -2)
        lower = not lower
        rhs = np.swapaxes(rhs, -1, -2)
    dtype = np.result_type(t.dtype, rhs.dtype)
    x = np.zeros(rhs.shape, dtype)
    rows = range(m) if lower else range(m - 1, -1, -1)
    for i in rows:
        # Rows already solved: below i for an upper matrix, above i for a lower one.
        done = slice(0, i) if lower else slice(i + 1, m)
        known = np.matmul(t[..., i:i + 1, done], x[..., done, :])[..., 0, :]
        x[..., i, :] = (rhs[..., i, :] - known) / t[..., i, i][..., None]
    if not left:
        x = np.swapaxes(x, -1, -2)
    return narrow(x, call.result_dtype)


# -- fft ----------------------------------------------------------------------------------------


@op("stablehlo.fft")
def fft(call: OpCall, operand: np.ndarray) -> np.ndarray:
    kind = str(call.attr("fft_type"))
    lengths = tuple(int(n) for n in call.attr("fft_length"))
    rank = len(lengths)
    if not 1 <= rank <= 3 or rank > operand.ndim:
        raise call.error(f"fft_length {list(lengths)} does not fit an operand of rank {operand.ndim}")
    axes = tuple(range(operand.ndim - rank, operand.ndim))
    dtype = call.result_dtype
    # scipy's pocketfft computes complex64/float32 transforms in single precision with the
    # same kernels as XLA's DUCC (bit-identical on the conformance files; numpy's differ).
    x = widen(operand)
    if x.size == 0 or 0 in lengths:
        return np.zeros(call.result_shape, dtype)
    import scipy.fft  # imported on first use, as scipy's other modules (chlo.py)

    if kind in ("FFT", "IFFT"):
        # DUCC transforms the last axis first; the order changes the rounding, not the math.
        transform = scipy.fft.fftn if kind == "FFT" else scipy.fft.ifftn
        result = transform(x, s=lengths[::-1], axes=axes[::-1])
    elif kind == "RFFT":
        if x.shape[-rank:] != lengths:
            raise call.error(f"RFFT operand dimensions {x.shape[-rank:]} must equal fft_length {list(lengths)}")
        result = scipy.fft.rfftn(x, s=lengths, axes=axes)
    elif kind == "IRFFT":
        result = scipy.fft.irfftn(x, s=lengths, axes=axes)
    else:
        raise call.error(f"unknown fft_type {kind}")
    return narrow(result, dtype)


# -- batch_norm ---------------------------------------------------------------------------------


def _feature_view(call: OpCall, operand: np.ndarray, *per_feature: np.ndarray):
    """Axes to reduce over, and each per-feature vector shaped to broadcast against operand."""
    index = int(call.attr("feature_index"))
    if not 0 <= index < operand.ndim:
        raise call.error(f"feature_index {index} is out of range for rank {operand.ndim}")
    shape = [1] * operand.ndim
    shape[index] = operand.shape[index]
    axes = tuple(d for d in range(operand.ndim) if d != index)
    views = []
    for v in per_feature:
        if v.shape != (operand.shape[index],):
            raise call.error(f"per-feature operand of shape {v.shape} must have shape ({operand.shape[index]},)")
        views.append(widen(v).reshape(shape))
    return axes, views


def _epsilon(call: OpCall, dtype: np.dtype):
    return np.asarray(float(call.attr("epsilon")), dtype=np.float32).astype(dtype)


@op("stablehlo.batch_norm_inference")
def batch_norm_inference(call: OpCall, operand, scale, offset, mean, variance) -> np.ndarray:
    x = widen(operand)
    _, (scale, offset, mean, variance) = _feature_view(call, x, scale, offset, mean, variance)
    stddev = np.sqrt(variance + _epsilon(call, x.dtype))
    return narrow(scale * ((x - mean) / stddev) + offset, call.result_types[0].numpy_dtype)


@op("stablehlo.batch_norm_training")
def batch_norm_training(call: OpCall, operand, scale, offset) -> list[np.ndarray]:
    x = widen(operand)
    axes, (scale, offset) = _feature_view(call, x, scale, offset)
    count = x.size // max(x.shape[int(call.attr("feature_index"))], 1)
    # The spec's formulas: the mean, then the biased variance of the centred operand.
    mean = np.sum(x, axis=axes, keepdims=True) / np.asarray(count, x.dtype)
    centred = x - mean
    variance = np.sum(centred * centred, axis=axes, keepdims=True) / np.asarray(count, x.dtype)
    stddev = np.sqrt(variance + _epsilon(call, x.dtype))
    output = scale * (centred / stddev) + offset
    types = [t.numpy_dtype for t in call.result_types]
    return [narrow(output, types[0]), narrow(mean.reshape(-1), types[1]), narrow(variance.reshape(-1), types[2])]


@op("stablehlo.batch_norm_grad")
def batch_norm_grad(call: OpCall, operand, scale, mean, variance, grad_output) -> list[np.ndarray]:
    """The spec's formulas (those of XLA's batchnorm expander)."""
    x = widen(operand)
    dy = widen(grad_output)
    axes, (scale, mean, variance) = _feature_view(call, x, scale, mean, variance)
    index = int(call.attr("feature_index"))
    count = np.asarray(x.size // max(x.shape[index], 1), x.dtype)
    epsilon = _epsilon(call, x.dtype)
    centred = x - mean
    stddev = np.sqrt(variance + epsilon)
    normalized = centred / stddev
    i1 = dy * count
    i2 = np.sum(dy, axis=axes, keepdims=True)
    i3 = np.sum(dy * centred, axis=axes, keepdims=True)
    i5 = i3 * centred / (variance + epsilon)
    grad_operand = (scale / stddev / count) * (i1 - i2 - i5)
    grad_scale = np.sum(dy * normalized, axis=axes)
    grad_offset = np.sum(dy, axis=axes)
    types = [t.numpy_dtype for t in call.result_types]
    return [narrow(grad_operand, types[0]), narrow(grad_scale, types[1]), narrow(grad_offset, types[2])]
