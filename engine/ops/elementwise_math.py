"""Element-wise transcendental functions, rounding and classification of floats.

Functions are evaluated in the precision the backend's `precise` gives (machine/backend.py): f32
in f32 with numpy's vectorised kernels (within a few ULP, as XLA's own f32 approximations are),
f16 and bf16 widened to f32 and rounded once to their type (XLA computes them in f32), f64 in f64,
and complex64 in complex128 (numpy's accurate complex kernels), rounded once to complex64.
Where XLA expands an op into several rounded steps (logistic, exponential_minus_one) the steps
are reproduced with the same roundings, because the expansion's error is part of the result.
"""
from __future__ import annotations

from typing import Callable, Optional

import numpy as np

from ..ir.dtypes import narrow, widen
from ..machine.backend import Backend
from .registry import OpCall, op
from .reuse import dead_operand


def _unary(call: OpCall, operand: np.ndarray, real_fn: Callable, complex_fn: Optional[Callable] = None) -> np.ndarray:
    x = call.backend.precise(np.asarray(operand))
    fn = complex_fn if (complex_fn is not None and x.dtype.kind == "c") else real_fn
    out = dead_operand(call, (operand,))
    if out is not None and x is operand and isinstance(fn, np.ufunc) and x.dtype == out.dtype:
        # Evaluated in the operand's own type and rounded to itself: the ufunc can write its
        # result over the dead operand (see reuse.py), the same bits as a fresh array.
        return fn(x, out=out)
    return call.backend.rounded(fn(x), call.result_dtype)


@op("stablehlo.exponential")
def exponential(call: OpCall, operand: np.ndarray) -> np.ndarray:
    return _unary(call, operand, np.exp, _complex_exp)


def _complex_exp(z: np.ndarray) -> np.ndarray:
    """e^(x+iy) = e^x (cos y + i sin y), evaluated the way XLA on the CPU expands it.

    The spec names the complex exponential without fixing its corner cases, so they follow XLA
    (jnp.exp): numpy (like C99 Annex G and the reference interpreter's std::exp) answers
    exp(+inf + i inf) = inf + i NaN and exp(-inf + i inf) = 0 + 0i, XLA answers NaN + i NaN for
    both, because it multiplies e^x by cos(inf) = NaN like any other value. The rest of XLA's
    expansion, and why:
    - y == 0 gives an imaginary part of exactly +0, so e^x = inf or NaN does not turn
      inf * sin(0) = inf * 0 into NaN: exp(inf + 0i) = inf + 0i, exp(NaN + 0i) = NaN + 0i;
    - where e^x overflows, each part is (e^(x/2) * cos y) * e^(x/2), which stays finite while the
      product is representable: exp(710 + 1i) in complex128 has a finite real part (1.2e308).
    Evaluated in complex128 (complex64 values are rounded once at the end), where overflow of
    e^x and of the parts happens exactly where XLA's f32 arithmetic overflows after rounding.
    """
    x, y = z.real, z.imag
    scale = np.exp(x)
    overflow = scale == np.inf
    half = np.exp(x * 0.5)
    cos, sin = np.cos(y), np.sin(y)
    result = np.empty(z.shape, z.dtype)
    result.real = np.where(overflow, half * cos * half, scale * cos)
    result.imag = np.where(y == 0, 0.0, np.where(overflow, half * sin * half, scale * sin))
    return result


@op("stablehlo.log")
def log(call: OpCall, operand: np.ndarray) -> np.ndarray:
    return _unary(call, operand, np.log)


@op("stablehlo.sine")
def sine(call: OpCall, operand: np.ndarray) -> np.ndarray:
    return _unary(call, operand, np.sin)


@op("stablehlo.cosine")
def cosine(call: OpCall, operand: np.ndarray) -> np.ndarray:
    return _unary(call, operand, np.cos)


@op("stablehlo.tan")
def tan(call: OpCall, operand: np.ndarray) -> np.ndarray:
    return _unary(call, operand, np.tan)


@op("stablehlo.tanh")
def tanh(call: OpCall, operand: np.ndarray) -> np.ndarray:
    return _unary(call, operand, np.tanh)


@op("stablehlo.sqrt")
def sqrt(call: OpCall, operand: np.ndarray) -> np.ndarray:
    return _unary(call, operand, np.sqrt)


@op("stablehlo.rsqrt")
def rsqrt(call: OpCall, operand: np.ndarray) -> np.ndarray:
    return _unary(call, operand, lambda x: 1.0 / np.sqrt(x))


@op("stablehlo.cbrt")
def cbrt(call: OpCall, operand: np.ndarray) -> np.ndarray:
    # The principal complex cube root; np.cbrt is the real one (negative for negative x).
    return _unary(call, operand, np.cbrt, lambda z: np.power(z, 1.0 / 3.0))


@op("stablehlo.log_plus_one")
def log_plus_one(call: OpCall, operand: np.ndarray) -> np.ndarray:
    return _unary(call, operand, np.log1p, _complex_log1p)


def _complex_log1p(z: np.ndarray) -> np.ndarray:
    # log|1+z| = log1p(x(2+x) + y^2)/2 keeps the digits of small z that 1+z would drop.
    x, y = z.real, z.imag
    result = np.empty(z.shape, z.dtype)
    result.real = 0.5 * np.log1p(x * (2.0 + x) + y * y)
    result.imag = np.arctan2(y, 1.0 + x)
    big = np.abs(z) > 0.5  # no cancellation there, and the direct form handles huge |z|
    return np.where(big, np.log(1.0 + z), result)


@op("stablehlo.exponential_minus_one")
def exponential_minus_one(call: OpCall, operand: np.ndarray) -> np.ndarray:
    dtype = call.result_dtype
    x = np.asarray(operand)
    if x.dtype.kind == "c":
        return call.backend.rounded(_complex_expm1(call.backend.precise(x)), dtype)
    return call.backend.rounded(expm1_steps(call.backend, x.astype(call.backend.stage_dtype(dtype))), dtype)


def expm1_steps(backend: Backend, x: np.ndarray) -> np.ndarray:
    """XLA's expm1: exp(x) - 1 for |x| > 0.5, else tanh(x/2) * (exp(x) + 1), each step rounded.

    In f16 (whose steps XLA rounds to f16) this differs from the correctly rounded expm1 in
    about one case in six; in f32 and f64 it is within a few ULP of it.
    """
    dtype = x.dtype
    one = np.ones((), dtype)
    half_x = x * np.asarray(0.5, dtype)
    exp_x = backend.staged(np.exp, x)
    small = backend.staged(np.tanh, half_x) * (exp_x + one)
    result = np.where(np.abs(x) > np.asarray(0.5, dtype), exp_x - one, small)
    # x/2 underflows only for the smallest subnormals, where expm1(x) is x.
    return np.where(half_x == 0, x, result)


def _complex_expm1(z: np.ndarray) -> np.ndarray:
    # expm1(x+iy) = expm1(x) cos y - 2 sin^2(y/2) + i exp(x) sin y, accurate for small z.
    x, y = z.real, z.imag
    result = np.empty(z.shape, z.dtype)
    half_sin = np.sin(0.5 * y)
    result.real = np.expm1(x) * np.cos(y) - 2.0 * half_sin * half_sin
    result.imag = np.exp(x) * np.sin(y)
    return result


@op("stablehlo.logistic")
def logistic(call: OpCall, operand: np.ndarray) -> np.ndarray:
    dtype = call.result_dtype
    x = np.asarray(operand)
    if x.dtype.kind == "c":
        z = call.backend.precise(x)
        return call.backend.rounded(1.0 / (1.0 + np.exp(-z)), dtype)
    # XLA expands logistic to 1 / (1 + exp(-x)), rounding each step (in f16, each to f16).
    # For very negative x exp(-x) overflows to inf and the result is 0, as in XLA.
    x = x.astype(call.backend.stage_dtype(dtype))
    one = np.ones((), x.dtype)
    return call.backend.rounded(one / (one + call.backend.staged(np.exp, -x)), dtype)


@op("stablehlo.atan2")
def atan2(call: OpCall, lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    y, x = call.backend.precise(np.asarray(lhs)), call.backend.precise(np.asarray(rhs))
    if y.dtype.kind == "c":
        # atan2 of complex numbers: -i log((x + iy) / sqrt(x^2 + y^2)).
        return call.backend.rounded(-1j * np.log((x + 1j * y) / np.sqrt(x * x + y * y)), call.result_dtype)
    return call.backend.rounded(np.arctan2(y, x), call.result_dtype)


# -- rounding and classification ----------------------------------------------------------------


@op("stablehlo.floor")
def floor(call: OpCall, operand: np.ndarray) -> np.ndarray:
    return narrow(np.floor(widen(operand)), call.result_dtype)


@op("stablehlo.ceil")
def ceil(call: OpCall, operand: np.ndarray) -> np.ndarray:
    return narrow(np.ceil(widen(operand)), call.result_dtype)


@op("stablehlo.round_nearest_even")
def round_nearest_even(call: OpCall, operand: np.ndarray) -> np.ndarray:
    return narrow(np.rint(widen(operand)), call.result_dtype)


@op("stablehlo.round_nearest_afz")
def round_nearest_afz(call: OpCall, operand: np.ndarray) -> np.ndarray:
    x = widen(operand)
    # trunc(x) and x - trunc(x) are exact, so ties are detected without the rounding error of
    # floor(x + 0.5) (which sends 0.49999997 to 1). The sign of zero is kept: -0.3 -> -0.0.
    whole = np.trunc(x)
    away = np.abs(x - whole) >= np.asarray(0.5, x.dtype)
    return narrow(np.where(away, whole + np.copysign(np.ones((), x.dtype), x), whole), call.result_dtype)


@op("stablehlo.is_finite")
def is_finite(call: OpCall, operand: np.ndarray) -> np.ndarray:
    return np.asarray(np.isfinite(widen(operand)))

