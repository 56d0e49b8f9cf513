"""CHLO element-wise ops (engine/ops/chlo.py) against XLA on the CPU, and the broadcasting ops.

XLA legalizes CHLO to StableHLO decompositions (Lanczos series for lgamma and digamma,
Euler-Maclaurin for zeta, exp(x + log(1/2)) for cosh/sinh); hlodbg evaluates the functions with
scipy/numpy in f64 instead. The two agree to a few ULP except where XLA's series lose accuracy
(near the zeros of lgamma and digamma, cosh/sinh of large arguments, the erfc tail), where the
comparison allows XLA's absolute error; the special points (poles, infinities, NaN) must match
exactly. XLA only implements numpy-style broadcasting for the chlo.broadcast_* ops, so the
`broadcast_dimensions` forms are checked against numpy.
"""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from .helpers import (
    COMPLEX,
    FLOATS,
    flushed as _flushed,
    binary,
    complex_values,
    float_values,
    module,
    run_ours,
    run_xla,
    tensor,
    ulp_distance,
    unary,
    quiet_numpy as _quiet_numpy,
)


jax = pytest.importorskip("jax")

TRIG = ["acos", "acosh", "asin", "asinh", "atan", "atanh", "cosh", "sinh", "tan"]
SPECIAL = ["erf", "erfc", "erf_inv", "bessel_i1e", "lgamma", "digamma"]
SIMPLE = ["square", "conj"]
# ULPs allowed for f32/f64 results, and an absolute error for XLA's series near zeros.
ULPS = {"cosh": 32, "sinh": 32, "erfc": 32, "bessel_i1e": 8, "erf_inv": 8, "lgamma": 4, "digamma": 4}
ABSOLUTE = {"lgamma": 2e-6, "digamma": 2e-6}


def _inputs(dtype, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = float_values(dtype, rng)
    # XLA flushes the subnormal intermediates of its decompositions (asin of the smallest
    # normal becomes 0), so keep to values whose intermediates stay normal.
    x = x[np.abs(x.astype(np.float64)) != float(np.finfo(np.float32).tiny)]
    x = x[~np.isin(x.astype(np.float64), [float(np.finfo(np.float64).tiny), 6.103515625e-05])]
    unit = rng.uniform(-1, 1, 40)
    poles = np.array([-1.0, -2.0, -3.5, 0.25, 1.0, 2.0, 1.4616321, 0.999, -0.999])
    return np.concatenate([x, unit.astype(x.dtype), poles.astype(np.float32).astype(dtype)])


def _assert_close(got, want, name, dtype):
    got, want = _flushed(np.asarray(got)), _flushed(np.asarray(want))
    assert got.dtype == want.dtype and got.shape == want.shape
    g, w = got.astype(np.float64), want.astype(np.float64)
    assert np.array_equal(np.isnan(g), np.isnan(w)), f"{name} {dtype}: NaN positions differ"
    finite = np.isfinite(w)
    assert np.array_equal(g[~finite & ~np.isnan(w)], w[~finite & ~np.isnan(w)]), f"{name} {dtype}: infinities differ"
    ulps = 1 if dtype.itemsize < 4 else ULPS.get(name, 3)
    # Narrow types inherit the absolute error of XLA's f32 series (bf16 lgamma(1) is 4.8e-7).
    ok = (ulp_distance(got, want) <= ulps) | (np.abs(g - w) <= ABSOLUTE.get(name, 0.0))
    bad = np.nonzero(~ok)[0]
    assert bad.size == 0, f"{name} {dtype}: {bad.size} beyond {ulps} ULP, e.g. {got[bad[0]]!r} vs XLA {want[bad[0]]!r}"


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_unary_chlo_ops(dtype):
    x = _inputs(dtype, 1)
    names = TRIG + SPECIAL + SIMPLE
    text = module([x], [unary(f"chlo.{n}", x) for n in names] + [unary(f"chlo.{n}", x, np.bool_)
                                                                for n in ("is_inf", "is_pos_inf", "is_neg_inf")])
    got, want = run_ours(text, [x]), run_xla(text, [x])
    for name, g, w in zip(names, got, want):
        _assert_close(g, w, name, dtype)
    for g, w in zip(got[len(names):], want[len(names):]):
        assert np.array_equal(g, w)


@pytest.mark.parametrize("dtype", COMPLEX, ids=str)
def test_complex_chlo_ops(dtype):
    a = complex_values(dtype, np.random.default_rng(2))
    names = TRIG + SIMPLE
    text = module([a], [unary(f"chlo.{n}", a) for n in names])
    eps = np.finfo(np.float32 if dtype == np.complex64 else np.float64).eps
    for name, got, want in zip(names, run_ours(text, [a]), run_xla(text, [a])):
        scale = np.maximum(np.abs(want), 1.0)
        assert np.all((got == want) | (np.abs(got - want) <= 32 * eps * scale)), name


def test_special_points_follow_xla():
    x = np.array([0.0, -0.0, -1.0, -2.0, np.inf, -np.inf, np.nan, 1.0, 2.0], np.float64)
    names = ["lgamma", "digamma", "erf_inv", "bessel_i1e"]
    text = module([x], [unary(f"chlo.{n}", x) for n in names])
    for name, got, want in zip(names, run_ours(text, [x]), run_xla(text, [x])):
        same = (got == want) | (np.isnan(got) & np.isnan(want))
        assert np.all(same[:7]), name  # poles, infinities, NaN and signed zeros exactly
        assert np.array_equal(np.signbit(got[:2]), np.signbit(want[:2])) or name in ("lgamma", "digamma"), name


ZETA_X = [1.0, 1.0, 2.0, 0.5, 1.0, 1.0, 2.0, 2.0, 1.5, 3.0, np.inf, 2.0, 3.0, 3.0, 2.5, 4.0, 2.0, 3.0, 5.5, 2.0]
ZETA_Q = [1.0, 0.0, -1.0, 1.0, -1.5, 2.0, 0.0, -0.0, -2.0, -2.5, 1.0, np.inf, -2.0, 0.0, -0.5, 3.0, 0.5, 7.25, 1.5, -np.inf]


@pytest.mark.parametrize("dtype", [np.dtype(np.float32), np.dtype(np.float64)], ids=str)
def test_zeta_and_polygamma(dtype):
    x, q = np.array(ZETA_X, dtype), np.array(ZETA_Q, dtype)
    n = np.array([0, 1, 2, 1.5, -1, 3, 1, 1, 0, 2, 1, 1, 4, 0, 2, 1, 3, 0, 1, 2], dtype)
    p = np.array([1, 1, 0.5, 1, 1, -1.5, 0, -1, 0, -2, np.inf, -np.inf, 2.5, -3.5, 7, 0.1, 1e-3, 9.5, 40, -0.5], dtype)
    zt = '"chlo.zeta"(%a0, %a1) : ({T0}, {T1}) -> {T0}'
    pg = '"chlo.polygamma"(%a2, %a3) : ({T2}, {T3}) -> {T2}'
    t = tensor(x.shape, dtype)
    text = module([x, q, n, p], [(zt, t), (pg, t)])
    rtol = 1e-5 if dtype == np.float32 else 1e-12
    for got, want in zip(run_ours(text, [x, q, n, p]), run_xla(text, [x, q, n, p])):
        assert np.array_equal(np.isnan(got), np.isnan(want)), (got, want)
        assert np.array_equal(got[np.isinf(want)], want[np.isinf(want)])
        finite = np.isfinite(want)
        np.testing.assert_allclose(got[finite], want[finite], rtol=rtol, atol=1e-30)


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_next_after(dtype):
    top = float(ml_dtypes.finfo(dtype).max)
    values = np.array([0.0, -0.0, 1.0, -1.0, 2.5, np.inf, -np.inf, np.nan, top, -top, 1e-3], np.float64)
    a, b = (np.array(v, np.float64).astype(dtype) for v in zip(*[(x, y) for x in values for y in values]))
    text = module([a, b], [binary("chlo.next_after", a)])
    got, want = run_ours(text, [a, b])[0], run_xla(text, [a, b])[0]
    bits = f"u{np.dtype(dtype).itemsize}"
    nan = np.isnan(want.astype(np.float64))
    assert np.array_equal(np.isnan(got.astype(np.float64)), nan)
    # Subnormal results are exact here too: next_after is bit arithmetic, which XLA does not flush.
    assert np.array_equal(got.view(bits)[~nan], want.view(bits)[~nan])


def test_chlo_is_inf_and_constant_like():
    x = np.array([np.inf, -np.inf, 0.0, np.nan, 1.0], np.float32)
    out_f = tensor(x.shape, np.float32)
    ops = [(f'"chlo.constant_like"(%a0) {{value = 2.5 : f32}} : ({{T0}}) -> {out_f}', out_f),
           (f'"chlo.constant_like"(%a0) {{value = 7 : i32}} : ({{T0}}) -> {tensor(x.shape, np.int32)}',
            tensor(x.shape, np.int32))]
    got = run_ours(module([x], ops), [x])
    assert got[0].tolist() == [2.5] * 5 and got[0].dtype == np.float32
    assert got[1].tolist() == [7] * 5 and got[1].dtype == np.int32


# -- broadcasting binary ops --------------------------------------------------------------------

BROADCAST_BINARY = ["add", "subtract", "multiply", "divide", "remainder", "power", "maximum", "minimum", "atan2",
                    "next_after"]
BROADCAST_INT = ["and", "or", "xor", "shift_left", "shift_right_arithmetic", "shift_right_logical", "add", "divide"]


def _bcast(name, lhs, rhs, out_dtype=None, attrs=""):
    shape = np.broadcast_shapes(lhs.shape, rhs.shape)
    out = tensor(shape, out_dtype if out_dtype is not None else lhs.dtype)
    return f'"chlo.broadcast_{name}"(%a0, %a1) {attrs} : ({{T0}}, {{T1}}) -> {out}', out


@pytest.mark.parametrize("shapes", [((3,), (2, 3)), ((2, 1), (1, 4)), ((), (2, 3)), ((2, 3), (2, 3))], ids=str)
def test_numpy_style_broadcasting(shapes):
    rng = np.random.default_rng(3)
    lhs = (rng.standard_normal(shapes[0]) * 3).astype(np.float32)
    rhs = (rng.standard_normal(shapes[1]) * 3).astype(np.float32)
    ops = [_bcast(n, lhs, rhs) for n in BROADCAST_BINARY]
    ops.append(_bcast("compare", lhs, rhs, np.bool_, "{comparison_direction = #chlo<comparison_direction LT>}"))
    ops.append(_bcast("complex", lhs, rhs, np.complex64))
    ops += [_bcast(n, lhs, rhs) for n in ("zeta", "polygamma")]
    text = module([lhs, rhs], ops)
    names = BROADCAST_BINARY + ["compare", "complex", "zeta", "polygamma"]
    for name, got, want in zip(names, run_ours(text, [np.abs(lhs) + 1, rhs]), run_xla(text, [np.abs(lhs) + 1, rhs])):
        assert got.shape == want.shape and got.dtype == want.dtype, name
        same = (got == want) | (np.isnan(got) & np.isnan(want))
        close = np.abs(got.astype(np.complex128) - want) <= 1e-5 * np.maximum(np.abs(want), 1)
        assert np.all(same | close), name

    a = rng.integers(-50, 50, shapes[0]).astype(np.int32)
    b = rng.integers(0, 40, shapes[1]).astype(np.int32)
    text = module([a, b], [_bcast(n, a, b) for n in BROADCAST_INT])
    for name, got, want in zip(BROADCAST_INT, run_ours(text, [a, b]), run_xla(text, [a, b])):
        assert np.array_equal(got, want), name


def test_broadcast_dimensions_place_the_lower_rank_operand():
    lhs = np.array([1.0, 2.0], np.float32)  # dimension 0 of the result
    rhs = np.arange(6, dtype=np.float32).reshape(2, 3)
    cube = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    mat = np.array([[10.0, 20.0, 30.0, 40.0], [1.0, 2.0, 3.0, 4.0]], np.float32)  # dims (0, 2) of the cube
    t23, t234 = tensor((2, 3), np.float32), tensor((2, 3, 4), np.float32)
    ops = [
        (f'"chlo.broadcast_multiply"(%a0, %a1) {{broadcast_dimensions = array<i64: 0>}} : ({{T0}}, {{T1}}) -> {t23}', t23),
        (f'"chlo.broadcast_subtract"(%a1, %a0) {{broadcast_dimensions = array<i64: 0>}} : ({{T1}}, {{T0}}) -> {t23}', t23),
        (f'"chlo.broadcast_add"(%a3, %a2) {{broadcast_dimensions = array<i64: 0, 2>}} : ({{T3}}, {{T2}}) -> {t234}', t234),
        (f'"chlo.broadcast_add"(%a4, %a2) {{broadcast_dimensions = array<i64: 2, 0>}} : ({{T4}}, {{T2}}) -> {t234}', t234),
    ]
    got = run_ours(module([lhs, rhs, cube, mat, mat.T.copy()], ops), [lhs, rhs, cube, mat, mat.T.copy()])
    np.testing.assert_array_equal(got[0], lhs[:, None] * rhs)
    np.testing.assert_array_equal(got[1], rhs - lhs[:, None])
    np.testing.assert_array_equal(got[2], cube + mat[:, None, :])
    np.testing.assert_array_equal(got[3], cube + mat[:, None, :])


def test_broadcast_select():
    pred = np.array([True, False, True])
    on_true = np.arange(6, dtype=np.int32).reshape(2, 3)
    on_false = np.array(-1, np.int32)
    out = tensor((2, 3), np.int32)
    text = module([pred, on_true, on_false],
                  [(f'"chlo.broadcast_select"(%a0, %a1, %a2) : ({{T0}}, {{T1}}, {{T2}}) -> {out}', out)])
    assert np.array_equal(run_ours(text, [pred, on_true, on_false])[0], run_xla(text, [pred, on_true, on_false])[0])


def test_asin_acos_kernel_identities():
    z = complex_values(np.complex128, np.random.default_rng(4)) * np.array([1, 1e-3, 1e3, 1])[np.arange(47) % 4]
    out = tensor(z.shape, np.complex128)
    w = run_ours(module([z], [(f'"chlo._asin_acos_kernel"(%a0) : ({{T0}}) -> {out}', out)]), [z])[0]
    asin = np.arctan2(z.real, w.real) + 1j * np.where(np.signbit(z.imag), -1, 1) * w.imag
    acos = np.arctan2(w.real, z.real) - 1j * np.where(np.signbit(z.imag), -1, 1) * w.imag
    np.testing.assert_allclose(asin, np.arcsin(z), rtol=1e-13, atol=1e-300)
    np.testing.assert_allclose(acos, np.arccos(z), rtol=1e-13, atol=1e-300)


def test_jax_special_functions_lowered():
    jnp = pytest.importorskip("jax.numpy")
    x = np.random.default_rng(5).uniform(0.1, 6, (4, 5)).astype(np.float32)

    def f(x):
        return (jax.lax.lgamma(x), jax.lax.digamma(x + 3), jax.scipy.special.erf(x - 3), jax.lax.erf_inv(x / 7),
                jnp.arcsinh(x), jnp.cosh(x), jax.lax.bessel_i1e(x), jax.lax.nextafter(x, jnp.zeros_like(x)))

    got = run_ours(jax.jit(f).lower(x).as_text(), [x])
    want = [np.asarray(w) for w in jax.jit(f)(x)]
    for k, (g, w) in enumerate(zip(got, want)):
        np.testing.assert_allclose(g, w, rtol=4e-6, atol=2e-6, err_msg=f"result {k}")
