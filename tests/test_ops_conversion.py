"""reduce_precision at the edges the spec names: overflow to a signed infinity (also after the
mantissa rounds up), underflow to a signed zero, NaNs, one exponent bit and no mantissa bits,
for f64, f32, f16 and bf16 — exactly as XLA on the CPU gives them (and the spec's example).
test_ops_elementwise.py compares random values of every float type with XLA bit for bit."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from .helpers import module, run_ours, run_xla, unary, quiet_numpy as _quiet_numpy  # noqa: F401

jax = pytest.importorskip("jax")

TYPES = [np.float64, np.float32, np.float16, ml_dtypes.bfloat16]
FORMATS = [(1, 0), (1, 1), (2, 0), (2, 1), (3, 2), (5, 0), (5, 10), (8, 0), (8, 7), (8, 23), (11, 52), (4, 30)]


def reduce_text(x: np.ndarray, formats) -> str:
    return module([x], [unary("stablehlo.reduce_precision", x, attrs=f"{{exponent_bits = {e} : i32, mantissa_bits = {m} : i32}}")
                        for e, m in formats])


def edge_values(dtype) -> np.ndarray:
    info = ml_dtypes.finfo(dtype)
    wide = [0.0, -0.0, 1.0, -1.0, 1.5, 1.75, 1.9999, 2.0, 3.0, 3.5, 0.75, 0.5, 0.25, 65504.0, 65519.0, 65520.0,
            -65520.0, 65536.0, 1e5, float(info.max), -float(info.max), float(info.smallest_normal),
            float(info.smallest_subnormal), -float(info.smallest_subnormal), np.inf, -np.inf, np.nan, -np.nan,
            6.1e-5, 6.0e-5, 3e38, 3.4e38, 1e-38, 1e-39]
    x = np.array(wide, np.float64).astype(dtype)
    # NaNs with payloads (and a signalling one): any NaN stays a NaN, never an infinity.
    storage = f"u{np.dtype(dtype).itemsize}"
    one = np.array(1, storage)
    quiet_with_payload = np.array([np.nan], dtype).view(storage) | one
    negative = np.array([-np.nan], dtype).view(storage) | one
    signalling = np.array([np.inf], dtype).view(storage) | one
    return np.concatenate([x, np.concatenate([quiet_with_payload, negative, signalling]).view(dtype)])


@pytest.mark.parametrize("dtype", TYPES, ids=lambda t: np.dtype(t).name)
def test_reduce_precision_edges_match_xla(dtype):
    x = edge_values(dtype)
    text = reduce_text(x, FORMATS)
    for (e, m), got, want in zip(FORMATS, run_ours(text, [x]), run_xla(text, [x])):
        g, w = got.astype(np.float64), want.astype(np.float64)
        same = ((g == w) & (np.signbit(g) == np.signbit(w))) | (np.isnan(g) & np.isnan(w))
        bad = np.flatnonzero(~same)
        assert bad.size == 0, f"e{e}m{m}: {x[bad[:4]]} -> {got[bad[:4]]} vs XLA {want[bad[:4]]}"
        assert np.array_equal(np.isnan(g), np.isnan(x.astype(np.float64))), f"e{e}m{m}: a NaN appeared or vanished"


def test_spec_example():
    # The spec's example (f64 to e5m10): +Inf, NaN, +denormal, 0.0, 65519.0, 65520.0 become
    # +Inf, NaN, 0.0, 0.0, 65504.0, +Inf — 65520 rounds up past the largest finite e5m10 value.
    x = np.array([np.inf, np.nan, 5e-324, 0.0, 65519.0, 65520.0, -65520.0, 1e300], np.float64)
    (got,) = run_ours(reduce_text(x, [(5, 10)]), [x])
    assert got[[0, 2, 3, 4, 5, 6, 7]].tolist() == [np.inf, 0.0, 0.0, 65504.0, np.inf, -np.inf, np.inf]
    assert np.isnan(got[1])


NARROW = {ml_dtypes.float8_e4m3fn: "f8E4M3FN", ml_dtypes.float8_e5m2: "f8E5M2", ml_dtypes.float8_e4m3: "f8E4M3",
          ml_dtypes.float8_e3m4: "f8E3M4", ml_dtypes.float8_e4m3fnuz: "f8E4M3FNUZ", ml_dtypes.float8_e5m2fnuz: "f8E5M2FNUZ",
          ml_dtypes.float8_e4m3b11fnuz: "f8E4M3B11FNUZ", ml_dtypes.float8_e8m0fnu: "f8E8M0FNU",
          ml_dtypes.float4_e2m1fn: "f4E2M1FN"}
NARROW_FORMATS = [(1, 0), (2, 1), (3, 2), (4, 3), (5, 2), (5, 0), (8, 0), (8, 7), (4, 7), (3, 7)]


@pytest.mark.parametrize("dtype", NARROW, ids=lambda t: np.dtype(t).name)
def test_reduce_precision_of_every_narrow_float_matches_xla(dtype):
    # Every encoding of the type, through formats narrower, equal and wider than its own: XLA
    # reduces these types in f16 (f32 for f8E8M0FNU), so e.g. their subnormals flush to zero
    # under their own format, and overflow becomes what an infinity converts to in the type.
    x = np.arange(1 << ml_dtypes.finfo(dtype).bits, dtype=np.uint8).view(dtype)
    t = f"tensor<{x.size}x{NARROW[dtype]}>"
    lines = [f"  %r{k} = stablehlo.reduce_precision %x, format = e{e}m{m} : {t}" for k, (e, m) in enumerate(NARROW_FORMATS)]
    names = ", ".join(f"%r{k}" for k in range(len(NARROW_FORMATS)))
    types = ", ".join([t] * len(NARROW_FORMATS))
    text = f"func.func public @main(%x: {t}) -> ({types}) {{\n" + "\n".join(lines) + f"\n  return {names} : {types}\n}}"
    for (e, m), got, want in zip(NARROW_FORMATS, run_ours(text, [x]), run_xla(text, [x])):
        g, w = got.astype(np.float64), want.astype(np.float64)
        same = ((g == w) & (np.signbit(g) == np.signbit(w))) | (np.isnan(g) & np.isnan(w))
        bad = np.flatnonzero(~same)
        assert bad.size == 0, f"e{e}m{m}: {x[bad[:4]]} -> {got[bad[:4]]} vs XLA {want[bad[:4]]}"
