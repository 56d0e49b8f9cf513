"""Complex exponential and chlo.square at infinities, NaNs and near the overflow threshold,
compared exactly (NaN meets NaN, infinities and signs of zeros count) with XLA on the CPU.

Inputs avoid subnormal parts: XLA's CPU runtime flushes them, hlodbg keeps them (IEEE, spec).
"""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from .helpers import module, run_ours, run_xla, ulp_distance, unary, quiet_numpy as _quiet_numpy  # noqa: F401

jax = pytest.importorskip("jax")

PARTS = [0.0, -0.0, 1.0, -1.0, 0.5, 2.0, 4.0, 88.0, 89.0, 700.0, 710.0, -800.0, 1e10, 1e19, 2e19, 1e38, 3e38,
         1e154, 1e155, 2e155, 1e308, np.inf, -np.inf, np.nan]


def corners(dtype) -> np.ndarray:
    """Every pair of PARTS as (real, imag), in `dtype` (parts past f32's range become inf)."""
    return np.array([complex(a, b) for a, b in itertools.product(PARTS, PARTS)], dtype)


def assert_same_as_xla(got: np.ndarray, want: np.ndarray, z: np.ndarray, ulps: int) -> None:
    for part in ("real", "imag"):
        g, w = getattr(got, part), getattr(want, part)
        nan_g, nan_w = np.isnan(g), np.isnan(w)
        close = (ulp_distance(g, w) <= ulps) & (np.isfinite(g) == np.isfinite(w))
        zero_sign = (g != 0) | (np.signbit(g) == np.signbit(w))
        ok = np.where(nan_w | nan_g, nan_g & nan_w, close & zero_sign)
        bad = np.flatnonzero(~ok)
        assert bad.size == 0, f"{part} parts differ at {bad.size} inputs, e.g. {z[bad[0]]!r}: {got[bad[0]]!r} vs XLA {want[bad[0]]!r}"


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128], ids=lambda t: np.dtype(t).name)
def test_exponential_of_complex_corners_matches_xla(dtype):
    z = corners(dtype)
    text = module([z], [unary("stablehlo.exponential", z)])
    # Finite results may differ by XLA's approximation error of exp/cos/sin (a few ULP).
    assert_same_as_xla(run_ours(text, [z])[0], run_xla(text, [z])[0], z, ulps=4)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128], ids=lambda t: np.dtype(t).name)
def test_square_of_complex_corners_matches_xla(dtype):
    z = corners(dtype)
    text = module([z], [unary("chlo.square", z)])
    assert_same_as_xla(run_ours(text, [z])[0], run_xla(text, [z])[0], z, ulps=0)


def test_named_corners():
    # The cases the spec leaves to the implementation, spelled out (XLA's answers).
    inf, nan = np.inf, np.nan
    z = np.array([complex(inf, inf), complex(-inf, inf), complex(inf, 0.0), complex(nan, 0.0), complex(inf, 2.0),
                  complex(710.0, 1.0)], np.complex128)
    got = run_ours(module([z], [unary("stablehlo.exponential", z)]), [z])[0]
    assert np.isnan(got[0].real) and np.isnan(got[0].imag)  # numpy / C99: inf + NaN i
    assert np.isnan(got[1].real) and np.isnan(got[1].imag)  # numpy / C99: 0 + 0i
    assert got[2] == complex(inf, 0.0) and not np.signbit(got[2].imag)
    assert np.isnan(got[3].real) and got[3].imag == 0.0
    assert got[4].real == -inf and got[4].imag == inf
    assert np.isfinite(got[5].real) and got[5].imag == inf  # e^710 overflows, e^710 cos 1 does not
    s = np.array([complex(1e308, 1e308), complex(1e308, -1e308), complex(inf, inf), complex(1e155, 2e155)],
                 np.complex128)
    squared = run_ours(module([s], [unary("chlo.square", s)]), [s])[0]
    assert squared[0] == complex(0.0, inf) and squared[1] == complex(0.0, -inf)
    assert np.isnan(squared[2].real) and squared[2].imag == inf
    assert squared[3] == complex(-inf, inf)


def test_complex_constants_keep_infinite_parts():
    # (x, inf) once parsed as (NaN, inf): reals + 1j * imags multiplies 0 by inf.
    text = """
func.func @main() -> (tensor<3xcomplex<f64>>, tensor<2xcomplex<f32>>) {
  %0 = stablehlo.constant dense<[(0xFFF0000000000000, 0x7FF0000000000000), (1.0, 0xFFF0000000000000), (-0.0, 2.0)]> : tensor<3xcomplex<f64>>
  %1 = stablehlo.constant dense<(0.0, 0x7F800000)> : tensor<2xcomplex<f32>>
  func.return %0, %1 : tensor<3xcomplex<f64>>, tensor<2xcomplex<f32>>
}
"""
    parsed, splat = run_ours(text, [])
    assert parsed[0].real == -np.inf and parsed[0].imag == np.inf
    assert parsed[1].real == 1.0 and parsed[1].imag == -np.inf
    assert parsed[2].real == 0.0 and np.signbit(parsed[2].real)
    assert splat.tolist() == [complex(0.0, np.inf)] * 2
