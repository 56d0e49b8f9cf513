"""Element-wise ops (elementwise.py, elementwise_math.py, conversion.py) against XLA on the CPU.

Most cases are single StableHLO ops in text form, compiled by XLA through jaxlib's CPU client and
run by hlodbg on the same inputs, so ops and element types JAX cannot spell (integer power, int4
popcnt, TOTALORDER compares, bitcasts between widths) are covered too. Inputs include the corner
cases (NaN, infinities, signed zeros, INT_MIN, -1, out-of-range shifts). XLA's CPU runtime flushes
subnormals to zero and hlodbg follows IEEE (the spec), so inputs avoid subnormals and subnormal
results compare equal to zero. A few cases lower JAX functions as well.
"""
from __future__ import annotations

import itertools
from types import SimpleNamespace

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hlodbg
from hlodbg.engine.run.interpreter import Interpreter
from hlodbg.engine.ops import load_families
from hlodbg.engine.machine.backend import CPU
from hlodbg.engine.ops.registry import EVALUATORS
from .helpers import (
    BF16,
    COMPLEX,
    F8E4M3,
    F8E5M2,
    FLOATS,
    I2,
    I4,
    INTS,
    NARROW_INTS,
    U2,
    U4,
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


# -- harness ------------------------------------------------------------------------------------


def assert_matches(got, want, ulps: int = 0, what: str = "") -> None:
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype} vs XLA {want.dtype}"
    assert got.shape == want.shape, f"{what}: shape {got.shape} vs XLA {want.shape}"
    if got.dtype.kind in "fcV" and got.dtype not in NARROW_INTS:
        g, w = _flushed(got), _flushed(want)
        diff = ulp_distance(g, w)
        # NaN payloads and signs are not compared; a NaN must meet a NaN.
        bad = np.argwhere(diff > ulps)
        assert bad.size == 0, f"{what}: {len(bad)} elements beyond {ulps} ULP, e.g. at {bad[0].tolist()}: " \
            f"{got[tuple(bad[0])]!r} vs XLA {want[tuple(bad[0])]!r}"
    else:
        mismatch = np.argwhere(got.astype(np.int64) != want.astype(np.int64))
        assert mismatch.size == 0, f"{what}: {len(mismatch)} elements differ, e.g. at {mismatch[0].tolist()}: " \
            f"{got[tuple(mismatch[0])]!r} vs XLA {want[tuple(mismatch[0])]!r}"


def check(args, ops, tolerances=None) -> None:
    """Run `ops` (see module()) in XLA and in hlodbg and compare result by result."""
    text = module(args, ops)
    want = run_xla(text, args)
    got = run_ours(text, args)
    for k, (g, w) in enumerate(zip(got, want)):
        assert_matches(g, w, (tolerances or {}).get(k, 0), f"{ops[k][0].split('(')[0]} {args[0].dtype}")


# -- inputs ---------------------------------------------------------------------------------------


def int_values(dtype, rng, n: int = 24) -> np.ndarray:
    lo, hi = (int(v) for v in (ml_dtypes.iinfo(dtype).min, ml_dtypes.iinfo(dtype).max))
    specials = sorted(v for v in {lo, lo + 1, -1 if lo < 0 else 0, 0, 1, 2, 3, hi - 1, hi} if lo <= v <= hi)
    random = rng.integers(lo, hi, size=n, endpoint=True, dtype=np.int64) if hi < 2**63 else \
        rng.integers(0, 2**63, size=n, dtype=np.uint64)
    return np.concatenate([np.array(specials, dtype=np.int64 if lo < 0 or hi < 2**63 else np.uint64).astype(dtype),
                           np.asarray(random).astype(dtype)])


def pairs(values: np.ndarray, rng, extra: int = 64) -> tuple[np.ndarray, np.ndarray]:
    """Every pair of the first 16 values plus random pairs of all of them."""
    head = values[:16]
    a, b = (np.array(v, dtype=values.dtype) for v in zip(*itertools.product(head, head)))
    i, j = rng.integers(0, len(values), size=(2, extra))
    return np.concatenate([a, values[i]]), np.concatenate([b, values[j]])


# -- integer ops ------------------------------------------------------------------------------------

INT_BINARY = ["add", "subtract", "multiply", "divide", "remainder", "maximum", "minimum", "and", "or", "xor",
              "shift_left", "shift_right_arithmetic", "shift_right_logical", "power"]
INT_UNARY = ["abs", "negate", "not", "popcnt", "count_leading_zeros", "sign"]


@pytest.mark.parametrize("dtype", INTS + [I4, U4, I2, U2], ids=str)
def test_integer_ops(dtype):
    rng = np.random.default_rng(1)
    values = int_values(dtype, rng)
    a, b = pairs(values, rng)
    ops = [binary(f"stablehlo.{name}", a) for name in INT_BINARY if name != "power"]
    # XLA's integer power reads only the low 6 bits of the exponent (and its sign bit, even for
    # unsigned types); the spec's exact power is tested against Python below.
    exponents = np.where((b.astype(np.int64) >= 0) & (b.astype(np.int64) < 64), b, (b.astype(np.int64) % 7)).astype(dtype)
    text, out = binary("stablehlo.power", a)
    ops.append((text.replace("%a1", "%a2").replace("{T1}", "{T2}"), out))
    unaries = [u for u in INT_UNARY if not (dtype.kind == "u" or dtype in (U4, U2)) or u not in ("abs", "negate", "sign")]
    if dtype == I4:
        unaries.remove("popcnt")  # XLA counts the bits of int4's sign-extended byte; see test below
    ops += [unary(f"stablehlo.{u}", a) for u in unaries]
    check([a, b, exponents], ops)


@pytest.mark.parametrize("dtype", [np.dtype(np.int8), np.dtype(np.int32), np.dtype(np.uint8), np.dtype(np.int64), I4],
                         ids=str)
def test_integer_power_is_exact_modulo_the_width(dtype):
    base = np.array([3, 2, -1, -1, 1, 2, 0, 0, 5, 3], np.int64)
    exponent = np.array([64, 65, -3, -4, -7, -1, -1, 0, 200, 128], np.int64)
    if dtype.kind == "u":
        base, exponent = np.abs(base), np.abs(exponent)
    lo, hi = ml_dtypes.iinfo(dtype).min, ml_dtypes.iinfo(dtype).max
    width = 4 if dtype == I4 else dtype.itemsize * 8
    keep = (exponent >= lo) & (exponent <= hi)
    base, exponent = base[keep], exponent[keep]

    def expected(b, e):
        if e < 0:
            return 1 if b == 1 else ((-1) ** (e % 2) if b == -1 else 0)
        v = pow(int(b), int(e), 1 << width)
        return v - (1 << width) if lo < 0 and v > hi else v

    a0, a1 = base.astype(dtype), exponent.astype(dtype)
    got = run_ours(module([a0, a1], [binary("stablehlo.power", a0)]), [a0, a1])[0]
    assert got.astype(np.int64).tolist() == [expected(b, e) for b, e in zip(base, exponent)]


def test_int4_popcnt_counts_the_four_bits():
    # The spec counts the bits of the element; XLA's CPU backend counts 8 for int4 -1. We follow the spec.
    got = run_ours(module([np.array([-1, -2, 7, 0], I4)], [unary("stablehlo.popcnt", np.zeros(4, I4))]),
                   [np.array([-1, -2, 7, 0], I4)])[0]
    assert got.astype(int).tolist() == [4, 3, 3, 0]


def test_boolean_ops():
    a, b = (np.array(v, dtype=bool) for v in zip(*itertools.product([False, True], repeat=2)))
    ops = [binary(f"stablehlo.{n}", a) for n in ("add", "multiply", "maximum", "minimum", "and", "or", "xor")]
    ops.append(unary("stablehlo.not", a))
    check([a, b], ops)


# -- float ops --------------------------------------------------------------------------------------

EXACT_BINARY = ["add", "subtract", "multiply", "divide", "remainder", "maximum", "minimum"]
EXACT_UNARY = ["abs", "negate", "sign", "floor", "ceil", "round_nearest_afz", "round_nearest_even", "sqrt"]
# ULPs allowed per op for f32 / f64: XLA's CPU approximations are not correctly rounded.
TRANSCENDENTAL = {"exponential": 2, "log": 2, "sine": 2, "cosine": 2, "tan": 3, "tanh": 5, "rsqrt": 2, "cbrt": 3,
                  "exponential_minus_one": 4, "log_plus_one": 3, "logistic": 3}
# XLA's f64 log1p applies Cephes' rational approximation on |x| < sqrt(2) - 1, beyond its
# (-0.29, 0.41) domain: up to ~125 ULP off near x = -0.41. hlodbg returns the accurate value.
F64_LOG1P_ULPS = 128


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_float_binary_ops(dtype):
    rng = np.random.default_rng(2)
    a, b = pairs(float_values(dtype, rng), rng)
    ops = [binary(f"stablehlo.{n}", a) for n in EXACT_BINARY]
    ops += [binary("stablehlo.power", a), binary("stablehlo.atan2", a)]
    close = 1 if dtype.itemsize < 4 else 3
    check([a, b], ops, {len(EXACT_BINARY): close, len(EXACT_BINARY) + 1: close})


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_float_unary_ops(dtype):
    rng = np.random.default_rng(3)
    x = float_values(dtype, rng)
    ops = [unary(f"stablehlo.{n}", x) for n in EXACT_UNARY]
    ops.append(unary("stablehlo.is_finite", x, np.bool_))
    tolerances = {}
    for name, ulps in TRANSCENDENTAL.items():
        tolerances[len(ops)] = 1 if dtype.itemsize < 4 else ulps
        if name == "log_plus_one" and dtype == np.float64:
            tolerances[len(ops)] = F64_LOG1P_ULPS
        ops.append(unary(f"stablehlo.{name}", x))
    check([x], ops, tolerances)


def test_round_and_sign_corners():
    x = np.array([0.5, -0.5, 1.5, 2.5, -2.5, 0.49999997, -0.3, -0.0, np.nan, -np.nan, np.inf], np.float32)
    afz, even, sign = run_ours(module([x], [unary(f"stablehlo.{n}", x) for n in
                                             ("round_nearest_afz", "round_nearest_even", "sign")]), [x])
    assert afz.tolist()[:7] == [1.0, -1.0, 2.0, 3.0, -3.0, 0.0, -0.0] and np.signbit(afz[6])
    assert even.tolist()[:7] == [0.0, -0.0, 2.0, 2.0, -2.0, 0.0, -0.0]
    assert np.signbit(sign[7]) and sign[7] == 0 and np.isnan(sign[8]) and np.signbit(sign[9]) and sign[10] == 1


def test_float16_expm1_and_logistic_round_every_step():
    # XLA evaluates these expansions in f16 arithmetic; one rounding at the end would differ.
    x = (np.random.default_rng(4).standard_normal(2000) * 3).astype(np.float16)
    check([x], [unary("stablehlo.exponential_minus_one", x), unary("stablehlo.logistic", x)])


@pytest.mark.parametrize("dtype", COMPLEX, ids=str)
def test_complex_ops(dtype):
    rng = np.random.default_rng(5)
    a = complex_values(dtype, rng)
    b = complex_values(dtype, np.random.default_rng(6))
    real = np.float32 if dtype == np.complex64 else np.float64
    ops = [binary(f"stablehlo.{n}", a) for n in ("add", "subtract", "multiply", "divide")]
    ops += [unary("stablehlo.negate", a), unary("stablehlo.abs", a, real), unary("stablehlo.real", a, real),
            unary("stablehlo.imag", a, real), unary("stablehlo.sign", a)]
    ops += [unary(f"stablehlo.{n}", a) for n in ("exponential", "log", "sqrt", "rsqrt", "sine", "cosine", "tanh",
                                                 "exponential_minus_one", "log_plus_one")]
    # XLA's complex formulas (polar forms, log of a hypot) lose a few digits where components
    # nearly cancel, and hlodbg's are more accurate: compare relative to the magnitude instead
    # of in ULPs (XLA's complex128 log is 39 ULP off at 0.4058-0.6626j).
    text = module([a, b], ops)
    for k, (got, want) in enumerate(zip(run_ours(text, [a, b]), run_xla(text, [a, b]))):
        assert got.dtype == want.dtype
        scale = np.maximum(np.abs(want), 1.0)
        eps = np.finfo(real).eps
        same = (got == want) | (np.isnan(got) & np.isnan(want))
        assert np.all(same | (np.abs(got - want) <= 64 * eps * scale)), ops[k][0]


def test_complex_power_zero_base_and_polar_rounding():
    a = np.array([0j, 0j, 0j, 0j, 1 + 1j, 2 + 0j, 1e-30 + 0j], np.complex64)
    b = np.array([0j, 1 + 0j, -1 + 0j, 1j, 2 + 0j, 0.5 + 0j, 2 + 0j], np.complex64)
    text = module([a, b], [binary("stablehlo.power", a)])
    got, want = run_ours(text, [a, b])[0], run_xla(text, [a, b])[0]
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    finite = ~np.isnan(want)
    # (1+1j)**2 keeps the -8.7e-8 real part of XLA's f32 polar form.
    np.testing.assert_allclose(got[finite], want[finite], rtol=2e-7, atol=1e-12)


# -- comparison and selection --------------------------------------------------------------------

DIRECTIONS = ["EQ", "NE", "GE", "GT", "LE", "LT"]


def _compare(a, direction, compare_type=None):
    kind = f", compare_type = #stablehlo<comparison_type {compare_type}>" if compare_type else ""
    return binary("stablehlo.compare", a, np.bool_,
                  f"{{comparison_direction = #stablehlo<comparison_direction {direction}>{kind}}}")


@pytest.mark.parametrize("dtype", FLOATS + [np.dtype(np.int8), np.dtype(np.uint32), np.dtype(np.int64), I4, U4],
                         ids=str)
def test_compare(dtype):
    rng = np.random.default_rng(7)
    values = float_values(dtype, rng) if dtype in FLOATS else int_values(dtype, rng)
    a, b = pairs(values, rng)
    # The spec ties SIGNED/UNSIGNED to the element type's signedness.
    types = ["FLOAT", "TOTALORDER"] if dtype in FLOATS else ["UNSIGNED" if dtype in (U4, U2) or dtype.kind == "u" else "SIGNED"]
    ops = [_compare(a, d) for d in DIRECTIONS] + [_compare(a, d, t) for d in DIRECTIONS for t in types]
    check([a, b], ops)


def test_total_order_sorts_nan_and_zero_signs():
    x = np.array([np.nan, -np.inf, -1.0, -0.0, 0.0, 1.0, np.inf, -np.nan], np.float32)
    a, b = (np.array(v, np.float32) for v in zip(*itertools.product(x, x)))
    check([a, b], [_compare(a, d, "TOTALORDER") for d in DIRECTIONS])


def test_complex_compare_and_extrema():
    n = np.nan
    a = np.array([1 + 2j, 1 + 3j, 1 + 0j, 2 + 0j, complex(n, 0), 1 + 0j, 1 + 0j, complex(1, n)], np.complex64)
    b = np.array([1 + 3j, 1 + 2j, 2 + 0j, 1 + 0j, 1 + 0j, complex(n, 0), complex(1, n), 1 + 0j], np.complex64)
    check([a, b], [_compare(a, d) for d in ("EQ", "NE", "GT", "LT")])
    # The spec orders complex numbers lexicographically; XLA decides GE and LE (and maximum and
    # minimum) on the real parts alone, so those are checked against the spec.
    ge, le = run_ours(module([a, b], [_compare(a, "GE"), _compare(a, "LE")]), [a, b])
    assert ge.tolist() == [False, True, False, True, False, False, False, False]
    assert le.tolist() == [True, False, True, False, False, False, False, False]
    got_max, got_min = run_ours(module([a, b], [binary("stablehlo.maximum", a), binary("stablehlo.minimum", a)]), [a, b])
    assert got_max[:4].tolist() == [1 + 3j, 1 + 3j, 2 + 0j, 2 + 0j]
    assert got_min[:4].tolist() == [1 + 2j, 1 + 2j, 1 + 0j, 1 + 0j]


@pytest.mark.parametrize("dtype", [np.dtype(np.float32), BF16, np.dtype(np.int16), np.dtype(np.uint8)], ids=str)
def test_select_and_clamp(dtype):
    rng = np.random.default_rng(8)
    values = float_values(dtype, rng) if dtype.kind != "i" and dtype.kind != "u" else int_values(dtype, rng)
    values = np.resize(values, 64)
    x, lo, hi = values[:32], values[16:48], values[32:]
    pred = rng.integers(0, 2, size=32).astype(bool)
    t = tensor(x.shape, dtype)
    ops = [(f'"stablehlo.select"(%a3, %a0, %a1) : ({tensor((32,), np.bool_)}, {t}, {t}) -> {t}', t),
           (f'"stablehlo.clamp"(%a1, %a0, %a2) : ({t}, {t}, {t}) -> {t}', t),
           (f'"stablehlo.clamp"(%a4, %a0, %a5) : ({tensor((), dtype)}, {t}, {tensor((), dtype)}) -> {t}', t)]
    check([x, lo, hi, pred, np.asarray(values[2]), np.asarray(values[6])], ops)


def test_scalar_predicate_select():
    x, y = np.arange(4, dtype=np.int32), -np.arange(4, dtype=np.int32)
    t = tensor((4,), np.int32)
    for p in (True, False):
        check([np.asarray(p), x, y], [(f'"stablehlo.select"(%a0, %a1, %a2) : (tensor<i1>, {t}, {t}) -> {t}', t)])


def test_complex_from_parts_keeps_infinities_and_signed_zeros():
    re = np.array([np.inf, -0.0, 1.0, np.nan], np.float32)
    im = np.array([0.0, -0.0, np.inf, 2.0], np.float32)
    out = tensor((4,), np.complex64)
    got = run_ours(module([re, im], [(f'"stablehlo.complex"(%a0, %a1) : ({{T0}}, {{T1}}) -> {out}', out)]), [re, im])[0]
    assert np.array_equal(got.real, re, equal_nan=True) and np.array_equal(got.imag, im)
    assert np.signbit(got.real[1]) and np.signbit(got.imag[1])


# -- conversions ------------------------------------------------------------------------------------

CONVERT_TYPES = FLOATS + INTS + [I4, U4, np.dtype(np.bool_), F8E4M3, F8E5M2] + COMPLEX


def _convert_inputs(dtype, rng):
    if dtype == np.bool_:
        return np.array([True, False] * 16)
    if dtype.kind == "c":
        return complex_values(dtype, rng, 30) * 40
    if dtype.kind in "iu" or dtype in NARROW_INTS:
        return int_values(dtype, rng)
    x = float_values(dtype, rng)
    if dtype in FLOATS:  # out-of-range and saturating values for float -> int
        extra = np.array([3e9, -3e9, 2.0**31, -(2.0**31), 2.0**63, 2.0**64, 255.5, 256.0, -128.7, 1e20, 0.7])
        x = np.concatenate([x, extra.astype(np.float32 if dtype != np.float64 else np.float64).astype(dtype)])
    return x


@pytest.mark.parametrize("source", CONVERT_TYPES, ids=str)
def test_convert(source):
    rng = np.random.default_rng(9)
    x = _convert_inputs(source, rng)
    targets = [t for t in CONVERT_TYPES if t != source and not (source.kind == "c" and t in (F8E4M3, F8E5M2))]
    check([x], [unary("stablehlo.convert", x, t) for t in targets])


def test_convert_from_f64_rounds_as_xla_does():
    # XLA rounds f64 -> bf16 twice (through f32: 1 + 2^-8 + 2^-30 -> 1.0) but f64 -> f16 and the
    # f8 types once (1 + 2^-11 + 2^-40 -> f16's 1.001): each value sits just past a halfway point
    # that the f32 step erases.
    x = np.array([1 + 2**-8 + 2**-30, 1 + 2**-11 + 2**-40, 1 + 2**-4 + 2**-30, 1 + 2**-3 + 2**-30, 2.0**24 + 1],
                 np.float64)
    check([x], [unary("stablehlo.convert", x, BF16), unary("stablehlo.convert", x, np.float16),
                unary("stablehlo.convert", x, ml_dtypes.float8_e4m3fn),
                unary("stablehlo.convert", x, ml_dtypes.float8_e5m2)])


BITCASTS = [
    ((2, 3), np.float32, (2, 3), np.int32), ((2, 3), np.float32, (2, 3, 4), np.uint8),
    ((2, 3, 2), np.int32, (2, 3), np.float64), ((4,), BF16, (4,), np.int16), ((3, 2), np.int8, (3,), np.float16),
    ((3,), np.float64, (3, 4), BF16), ((5,), np.uint8, (5, 2), I4), ((5, 2), U4, (5,), np.int8),
    ((5,), np.int8, (5,), F8E4M3), ((2, 2), F8E5M2, (2,), np.float16), ((6,), np.int16, (6, 2), np.uint8),
    ((4,), np.uint64, (4, 2), np.float32),
    # Rank 1 <-> rank 0: the whole last dimension is one element of the wider type.
    ((2,), np.int32, (), np.int64), ((), np.int64, (2,), np.int32), ((4,), np.int8, (), np.float32),
    ((), np.float64, (8,), np.uint8), ((2,), BF16, (), np.float32), ((2,), I4, (), np.int8),
    ((), np.uint8, (2,), U4), ((2, 1, 4), np.uint16, (2, 1), np.float64),
]


@pytest.mark.parametrize("case", BITCASTS, ids=lambda c: f"{np.dtype(c[1])}->{np.dtype(c[3])}")
def test_bitcast_convert(case):
    shape, source, out_shape, target = case
    rng = np.random.default_rng(10)
    raw = rng.integers(0, 256, size=int(np.prod(shape)) * np.dtype(source).itemsize, dtype=np.uint8)
    if np.dtype(source) in NARROW_INTS:
        x = rng.integers(0, 16, size=shape).astype(np.int64).astype(source)
    else:
        x = raw.view(source).reshape(shape)
        if np.dtype(source).kind in "fc" or source in (BF16, F8E4M3, F8E5M2):
            x = np.where(np.isnan(x.astype(np.complex128 if np.dtype(source).kind == "c" else np.float64)),
                         np.zeros((), source), x).astype(source)
    out = tensor(out_shape, target)
    ops = [(f'"stablehlo.bitcast_convert"(%a0) : ({{T0}}) -> {out}', out)]
    text = module([x], ops)
    got, want = run_ours(text, [x])[0], run_xla(text, [x])[0]
    assert got.shape == want.shape and got.dtype == want.dtype
    # Bit-exact: compare the raw bytes (NaN payloads included).
    assert np.ascontiguousarray(got).tobytes() == np.ascontiguousarray(want).tobytes()


def test_bitcast_convert_between_complex_widths():
    # XLA rejects complex bitcasts; the spec allows them (complex to complex): little-endian bytes.
    x = np.array([1 + 2j, -3.5 + 0.25j, np.inf - 1j], np.complex128)
    out = tensor((3, 2), np.complex64)
    split = run_ours(module([x], [(f'"stablehlo.bitcast_convert"(%a0) : ({{T0}}) -> {out}', out)]), [x])[0]
    assert split.shape == (3, 2) and split.tobytes() == x.tobytes()
    back = tensor((3,), np.complex128)
    joined = run_ours(module([split], [(f'"stablehlo.bitcast_convert"(%a0) : ({{T0}}) -> {back}', back)]), [split])[0]
    assert joined.tobytes() == x.tobytes()


def test_bitcast_convert_sub_byte_order_is_little_endian():
    x = np.array([0x21, 0xF0], np.uint8)
    out = tensor((2, 2), U4)
    got = run_ours(module([x], [(f'"stablehlo.bitcast_convert"(%a0) : ({{T0}}) -> {out}', out)]), [x])[0]
    assert got.astype(int).tolist() == [[1, 2], [0, 15]]
    # i1 is one bit wide in the spec (XLA stores it in a byte and gets these wrong).
    bits_type = tensor((2, 8), np.bool_)
    bits = run_ours(module([x], [(f'"stablehlo.bitcast_convert"(%a0) : ({{T0}}) -> {bits_type}', bits_type)]), [x])[0]
    assert bits.astype(int).tolist() == [[1, 0, 0, 0, 0, 1, 0, 0], [0, 0, 0, 0, 1, 1, 1, 1]]
    back = tensor((2,), np.uint8)
    joined = run_ours(module([bits], [(f'"stablehlo.bitcast_convert"(%a0) : ({{T0}}) -> {back}', back)]), [bits])[0]
    assert joined.tolist() == [0x21, 0xF0]
    # A scalar splits into a rank-1 result and joins back into a scalar.
    scalar = np.array(0x21, np.uint8)
    bits = run_ours(module([scalar], [(f'"stablehlo.bitcast_convert"(%a0) : ({{T0}}) -> {tensor((8,), np.bool_)}',
                                       tensor((8,), np.bool_))]), [scalar])[0]
    assert bits.shape == (8,) and bits.astype(int).tolist() == [1, 0, 0, 0, 0, 1, 0, 0]
    joined = run_ours(module([bits], [(f'"stablehlo.bitcast_convert"(%a0) : ({{T0}}) -> {tensor((), np.uint8)}',
                                       tensor((), np.uint8))]), [bits])[0]
    assert joined.shape == () and int(joined) == 0x21


REDUCE_PRECISION = [(5, 10), (8, 7), (2, 0), (5, 0), (1, 1), (4, 3), (8, 23), (11, 52), (3, 20), (6, 1)]


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_reduce_precision(dtype):
    rng = np.random.default_rng(11)
    x = float_values(dtype, rng, 200)
    snan = {4: [0x7F800001, 0xFFC00001], 8: [0x7FF0000000000001], 2: [0x7C01 if dtype == np.float16 else 0x7F81]}
    x = np.concatenate([x, np.array(snan[dtype.itemsize], dtype=f"u{dtype.itemsize}").view(dtype)])
    ops = [unary("stablehlo.reduce_precision", x, attrs=f"{{exponent_bits = {e} : i32, mantissa_bits = {m} : i32}}")
           for e, m in REDUCE_PRECISION]
    text = module([x], ops)
    for (e, m), got, want in zip(REDUCE_PRECISION, run_ours(text, [x]), run_xla(text, [x])):
        # Bit for bit, NaN payloads included (reduce_precision passes NaNs through unchanged),
        # except that XLA computes bf16 in f32 and its conversion back makes NaNs canonical.
        bits = f"u{dtype.itemsize}"
        differ = got.view(bits) != want.view(bits)
        if dtype == BF16:
            nan = np.isnan(got.astype(np.float32)) & np.isnan(want.astype(np.float32))
            differ &= ~(nan & (np.signbit(got.astype(np.float32)) == np.signbit(want.astype(np.float32))))
        mismatch = np.nonzero(differ)[0]
        assert mismatch.size == 0, f"e{e}m{m}: {x[mismatch[:3]]} -> {got[mismatch[:3]]} vs XLA {want[mismatch[:3]]}"


# -- through JAX ------------------------------------------------------------------------------------


def test_jax_lowered_elementwise_program():
    jnp = pytest.importorskip("jax.numpy")

    def f(x, y, n):
        z = jnp.where(x > y, jnp.exp(x) - jnp.log1p(jnp.abs(y)), jnp.tanh(x * y))
        return z, jax.nn.sigmoid(z), (n >> 2) ^ (n * 7), jnp.clip(n, -3, 5), jnp.round(x), x.astype(jnp.int8)

    rng = np.random.default_rng(12)
    x = (rng.standard_normal((4, 5)) * 10).astype(np.float32)
    y = rng.standard_normal((4, 5)).astype(np.float32)
    n = rng.integers(-100, 100, (4, 5)).astype(np.int32)
    lowered = jax.jit(f).lower(x, y, n)
    got = run_ours(lowered.as_text(), [x, y, n])
    want = [np.asarray(w) for w in jax.jit(f)(x, y, n)]
    for k, (g, w) in enumerate(zip(got, want)):
        assert_matches(g, w, 4, f"result {k}")


def test_ops_in_vectorised_region_bodies():
    # A reduce whose body uses select/compare/maximum runs on whole arrays at once.
    jnp = pytest.importorskip("jax.numpy")
    x = np.random.default_rng(13).standard_normal((6, 7)).astype(np.float32)
    f = lambda x: jax.lax.reduce(x, np.float32(-np.inf), lambda a, b: jnp.where(a > b, a, jnp.maximum(a, b) + 0), (1,))
    got = run_ours(jax.jit(f).lower(x).as_text(), [x])[0]
    assert_matches(got, np.asarray(jax.jit(f)(x)), 0, "reduce")


# -- shapes ---------------------------------------------------------------------------------------

SHAPE_OPS = ["add", "multiply", "maximum", "remainder", "atan2", "power", "xor"]


@settings(max_examples=15, deadline=None)
@given(shape=st.lists(st.integers(0, 4), min_size=0, max_size=3).map(tuple),
       dtype=st.sampled_from([np.dtype(np.float32), BF16, np.dtype(np.int16), np.dtype(np.uint8)]),
       seed=st.integers(0, 2**16))
def test_any_shape_matches_xla(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    size = int(np.prod(shape, dtype=np.int64))
    pool = float_values(dtype, rng) if dtype.kind not in "iu" else int_values(dtype, rng)
    a, b = (np.resize(rng.permutation(pool), size).reshape(shape) for _ in range(2))
    names = [n for n in SHAPE_OPS if (n == "xor") == (dtype.kind in "iu") or n in ("add", "multiply", "maximum")]
    if dtype.kind in "iu":
        b = np.where(b.astype(np.int64) % 64 == b.astype(np.int64), b, 3).astype(dtype)
    with np.errstate(all="ignore"):
        check([a, b], [binary(f"stablehlo.{n}", a) for n in names] + [unary("stablehlo.negate", a)],
              {k: 3 for k in range(len(names) + 1)})


class _Call(SimpleNamespace):
    """The parts of an OpCall an element-wise evaluator reads."""

    backend = CPU

    def attr(self, name, default=None):
        return self.attrs.get(name, default)


@pytest.mark.parametrize("name", ["add", "subtract", "multiply", "divide", "remainder", "power", "maximum", "minimum",
                                  "and", "or", "xor", "shift_left", "shift_right_arithmetic", "shift_right_logical",
                                  "atan2", "compare", "select", "clamp"])
def test_scalars_mix_with_arrays_as_in_vectorised_bodies(name):
    # Region bodies run on whole batches, so a 0-d constant meets an N-d operand.
    load_families()
    evaluator = EVALUATORS[f"stablehlo.{name}"]
    dtype = np.dtype(np.float32) if name == "atan2" else np.dtype(np.int32)
    out = np.dtype(np.bool_) if name == "compare" else dtype
    call = _Call(result_dtype=out, attrs={"comparison_direction": "LT"})
    array = np.arange(-3, 9, dtype=dtype).reshape(3, 4)
    scalar = np.asarray(2, dtype)
    if name == "select":
        cases = [(np.asarray(True), array, scalar), (array > 0, scalar, array)]
    elif name == "clamp":
        cases = [(scalar, array, np.asarray(5, dtype)), (np.zeros_like(array), scalar, array)]
    else:
        cases = [(scalar, array), (array, scalar)]
    for operands in cases:
        got = evaluator(call, *operands)
        want = evaluator(call, *np.broadcast_arrays(*operands))
        assert isinstance(got, np.ndarray) and got.dtype == out and got.shape == (3, 4)
        np.testing.assert_array_equal(got, want)
