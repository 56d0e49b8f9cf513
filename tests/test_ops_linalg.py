"""fft, cholesky, triangular_solve and the batch_norm ops against XLA on the CPU.

FFTs come from jnp.fft (lowered to stablehlo.fft); the rest are hand-written StableHLO compiled by
XLA directly, because JAX lowers them to LAPACK custom calls or never emits them.
"""
from __future__ import annotations

import itertools

import ml_dtypes
import numpy as np
import pytest
from .helpers import (
    assert_close,
    check_close_to_jax as check_against_jax,
    interpret,
    contraction_sample as sample,
    tensor_type,
    tolerance,
    xla_run,
)


jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")

jax.config.update("jax_enable_x64", True)  # 64-bit types stay 64-bit in the comparisons


def _against_xla(text: str, *args, tol: float) -> list:
    got = interpret(text, *args)
    want = xla_run(text, *args)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert_close(g, w, tol)
        np.testing.assert_array_equal(np.isnan(g.astype(np.complex128)), np.isnan(w.astype(np.complex128)))
    return got


# -- fft ----------------------------------------------------------------------------------------

FFTS = [
    ("fft", lambda x: jnp.fft.fft(x), (3, 16), True),
    ("ifft", lambda x: jnp.fft.ifft(x), (3, 15), True),
    ("fft2", lambda x: jnp.fft.fft2(x), (2, 6, 10), True),
    ("ifft3", lambda x: jnp.fft.ifftn(x, axes=(-3, -2, -1)), (2, 6, 5, 7), True),
    ("rfft", lambda x: jnp.fft.rfft(x), (3, 17), False),
    ("rfft2", lambda x: jnp.fft.rfft2(x), (3, 8, 9), False),
    ("rfft3", lambda x: jnp.fft.rfftn(x, axes=(-3, -2, -1)), (2, 4, 6, 9), False),
    ("irfft-even", lambda x: jnp.fft.irfft(x, n=16), (3, 9), True),
    ("irfft-odd", lambda x: jnp.fft.irfft(x, n=17), (3, 9), True),
    ("irfft2", lambda x: jnp.fft.irfft2(x, s=(6, 10)), (2, 6, 6), True),
    ("irfft3", lambda x: jnp.fft.irfftn(x, s=(4, 6, 9), axes=(-3, -2, -1)), (2, 4, 6, 5), True),
    ("empty", lambda x: jnp.fft.rfft(x), (0, 8), False),
]


@pytest.mark.parametrize("name, f, shape, complex_input", FFTS, ids=[c[0] for c in FFTS])
@pytest.mark.parametrize("precision", ["single", "double"])
def test_fft(name, f, shape, complex_input, precision):
    rng = np.random.default_rng(0)
    dtype = {(True, "single"): np.complex64, (True, "double"): np.complex128,
             (False, "single"): np.float32, (False, "double"): np.float64}[complex_input, precision]
    x = sample(shape, dtype, rng)
    text = jax.jit(f).lower(x).as_text()
    assert "stablehlo.fft" in text
    # pocketfft in the same axis order as XLA's DUCC: single precision matches bit for bit.
    check_against_jax(f, x, tol=0.0 if precision == "single" else 1e-12)


# -- cholesky -----------------------------------------------------------------------------------


def _cholesky_text(shape, dtype, lower: bool) -> str:
    t = tensor_type(shape, dtype)
    return f"""func.func public @main(%a: {t}) -> {t} {{
  %0 = stablehlo.cholesky %a, lower = {str(lower).lower()} : {t}
  return %0 : {t}
}}"""


def _positive_definite(shape, dtype, rng) -> np.ndarray:
    n = shape[-1]
    m = sample(shape, np.complex128 if np.dtype(dtype).kind == "c" else np.float64, rng)
    return (m @ np.conj(np.swapaxes(m, -1, -2)) + n * np.eye(n)).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.float16], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape", [(3, 3), (2, 5, 5), (2, 3, 4, 4), (1, 1), (0, 3, 3), (40, 40)])
@pytest.mark.parametrize("lower", [True, False])
def test_cholesky(dtype, shape, lower):
    rng = np.random.default_rng(1)
    a = _positive_definite(shape, dtype, rng)
    # Only the named triangle is read: fill the other with garbage.
    keep = np.tril(np.ones(shape[-2:], bool)) if lower else np.triu(np.ones(shape[-2:], bool))
    a = np.where(keep, a, sample(shape, dtype, rng) * 100).astype(dtype)
    tol = 1e-2 if dtype == np.float16 else (1e-10 if dtype == np.float64 else 1e-5)
    _against_xla(_cholesky_text(shape, dtype, lower), a, tol=tol)


@pytest.mark.parametrize("dtype", [np.float32, np.complex64], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("lower", [True, False])
def test_cholesky_not_positive_definite(dtype, lower):
    # A negative (or NaN) pivot turns its whole matrix into NaNs; a zero pivot only spreads 0/0
    # down its column; the other matrices of the batch are unaffected.
    rng = np.random.default_rng(2)
    a = sample((6, 4, 4), dtype, rng)
    a[0] = np.eye(4)
    a[1] = np.ones((4, 4))  # singular: zero pivot
    a[2, 0, 0] = 0
    a[3] = _positive_definite((4, 4), dtype, rng)
    a[4] = -a[3]
    a[5, 1, 1] = np.nan
    _against_xla(_cholesky_text(a.shape, dtype, lower), a, tol=1e-5)


# -- triangular_solve ---------------------------------------------------------------------------


def _triangular_text(a_shape, b_shape, dtype, left, lower, unit, transpose) -> str:
    ta, tb = tensor_type(a_shape, dtype), tensor_type(b_shape, dtype)
    return f"""func.func public @main(%a: {ta}, %b: {tb}) -> {tb} {{
  %0 = "stablehlo.triangular_solve"(%a, %b) {{left_side = {str(left).lower()}, lower = {str(lower).lower()}, unit_diagonal = {str(unit).lower()}, transpose_a = #stablehlo<transpose {transpose}>}} : ({ta}, {tb}) -> {tb}
  return %0 : {tb}
}}"""


@pytest.mark.parametrize("dtype", [np.float32, np.complex64, np.float64, np.float16], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("batch, m, n", [((), 4, 3), ((2,), 5, 1), ((2, 3), 3, 4), ((), 1, 1), ((), 12, 7)])
def test_triangular_solve(dtype, batch, m, n):
    # Every attribute combination in one module: one XLA compilation per dtype and shape.
    rng = np.random.default_rng(3)
    a = sample((*batch, m, m), dtype, rng) + (4 * np.eye(m)).astype(dtype)
    # Unit-diagonal solves ignore the dominant diagonal: give them small off-diagonal entries.
    a_unit = (a * 0.1).astype(dtype)
    b_left, b_right = sample((*batch, m, n), dtype, rng), sample((*batch, n, m), dtype, rng)
    ta, tl, tr = tensor_type(a.shape, dtype), tensor_type(b_left.shape, dtype), tensor_type(b_right.shape, dtype)
    lines, results = [], []
    for i, (left, lower, unit, transpose) in enumerate(itertools.product(
        [True, False], [True, False], [True, False], ["NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"]
    )):
        tb = tl if left else tr
        lines.append(
            f'  %r{i} = "stablehlo.triangular_solve"({"%u" if unit else "%a"}, {"%l" if left else "%r"}) '
            f"{{left_side = {str(left).lower()}, lower = {str(lower).lower()}, unit_diagonal = {str(unit).lower()}, "
            f"transpose_a = #stablehlo<transpose {transpose}>}} : ({ta}, {tb}) -> {tb}"
        )
        results.append((f"%r{i}", tb))
    text = (
        f"func.func public @main(%a: {ta}, %u: {ta}, %l: {tl}, %r: {tr}) -> ({', '.join(t for _, t in results)}) {{\n"
        + "\n".join(lines)
        + f"\n  return {', '.join(v for v, _ in results)} : {', '.join(t for _, t in results)}\n}}"
    )
    tol = 1e-2 if dtype == np.float16 else (1e-12 if dtype == np.float64 else 1e-5)
    _against_xla(text, a, a_unit, b_left, b_right, tol=tol)


def test_triangular_solve_singular():
    # A zero on the diagonal divides by zero: infinities and NaNs, never an error.
    a = np.array([[1, 0, 0], [2, 0, 0], [3, 4, 5]], np.float32)
    b = np.ones((3, 2), np.float32)
    text = _triangular_text(a.shape, b.shape, np.float32, True, True, False, "NO_TRANSPOSE")
    got = interpret(text, a, b)[0]
    assert np.isfinite(got[0]).all() and not np.isfinite(got[1:]).any()


# -- batch_norm ---------------------------------------------------------------------------------

BATCH_NORM_SHAPES = [((4, 3, 5), 1), ((2, 3), 0), ((2, 4, 6, 3), 3), ((7,), 0)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, ml_dtypes.bfloat16], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape, feature", BATCH_NORM_SHAPES)
def test_batch_norm(dtype, shape, feature):
    rng = np.random.default_rng(4)
    f = shape[feature]
    x = (sample(shape, np.float32, rng) * 2 + 0.5).astype(dtype)
    scale, offset, mean = (sample((f,), dtype, rng) for _ in range(3))
    variance = (rng.random(f) + 0.5).astype(dtype)
    grad = sample(shape, dtype, rng)
    tx, tf = tensor_type(shape, dtype), tensor_type((f,), dtype)
    attrs = f"{{epsilon = 1.0e-3 : f32, feature_index = {feature} : i64}}"
    tol = 2e-2 if np.dtype(dtype).itemsize == 2 else tolerance(dtype) * 50
    inference = f"""func.func public @main(%x: {tx}, %s: {tf}, %o: {tf}, %m: {tf}, %v: {tf}) -> {tx} {{
  %0 = "stablehlo.batch_norm_inference"(%x, %s, %o, %m, %v) {attrs} : ({tx}, {tf}, {tf}, {tf}, {tf}) -> {tx}
  return %0 : {tx}
}}"""
    _against_xla(inference, x, scale, offset, mean, variance, tol=tol)
    training = f"""func.func public @main(%x: {tx}, %s: {tf}, %o: {tf}) -> ({tx}, {tf}, {tf}) {{
  %0:3 = "stablehlo.batch_norm_training"(%x, %s, %o) {attrs} : ({tx}, {tf}, {tf}) -> ({tx}, {tf}, {tf})
  return %0#0, %0#1, %0#2 : {tx}, {tf}, {tf}
}}"""
    _against_xla(training, x, scale, offset, tol=tol)
    gradient = f"""func.func public @main(%x: {tx}, %s: {tf}, %m: {tf}, %v: {tf}, %g: {tx}) -> ({tx}, {tf}, {tf}) {{
  %0:3 = "stablehlo.batch_norm_grad"(%x, %s, %m, %v, %g) {attrs} : ({tx}, {tf}, {tf}, {tf}, {tx}) -> ({tx}, {tf}, {tf})
  return %0#0, %0#1, %0#2 : {tx}, {tf}, {tf}
}}"""
    _against_xla(gradient, x, scale, mean, variance, grad, tol=tol * 5)


def test_batch_norm_training_uses_the_centred_variance():
    # The spec's variance is the mean of squared deviations; XLA's E[x^2] - E[x]^2 cancels
    # catastrophically (even going negative) when the mean dwarfs the spread.
    rng = np.random.default_rng(5)
    x = (rng.standard_normal((64, 2)) * 0.01 + 1000).astype(np.float32)
    ones, zeros = np.ones(2, np.float32), np.zeros(2, np.float32)
    text = """func.func public @main(%x: tensor<64x2xf32>, %s: tensor<2xf32>, %o: tensor<2xf32>) -> tensor<2xf32> {
  %0:3 = "stablehlo.batch_norm_training"(%x, %s, %o) {epsilon = 0.0 : f32, feature_index = 1 : i64} : (tensor<64x2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<64x2xf32>, tensor<2xf32>, tensor<2xf32>)
  return %0#2 : tensor<2xf32>
}"""
    got = interpret(text, x, ones, zeros)[0]
    np.testing.assert_allclose(got, x.astype(np.float64).var(axis=0), rtol=1e-3)
