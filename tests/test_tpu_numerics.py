"""TPU numerics (engine/machine/tpu/numerics.py, op_numerics.py): bf16 MXU passes, subnormal
flushing, f64 refusal, dot algorithms, excess precision on both backends, numerics notes, and
every shared program on tpu-v5e against XLA's CPU results.

TpuBackend is built with physical_storage=False: these tests are about arithmetic, and the
layouts that physical storage needs are another module's.
"""
from __future__ import annotations

import math
import ml_dtypes
import numpy as np
import pytest

import hlodbg
from hlodbg.engine.ir.errors import ExecutionError, HlodbgError
from hlodbg.engine.machine.backend import CPU
from hlodbg.engine.machine.targets import backend_for
from hlodbg.engine.machine.tpu.backend import TpuBackend
from hlodbg.engine.machine.tpu.generations import GENERATIONS
from hlodbg.engine.run.interpreter import Interpreter

from .helpers import PROGRAMS, require_shared


def tpu(name: str = "tpu-v5e", **options) -> TpuBackend:
    return TpuBackend(GENERATIONS[name], physical_storage=False, **options)


def run(text: str, backend, *args) -> list:
    return Interpreter(hlodbg.load(text).module, backend=backend).run("main", list(args))


# -- a plain-numpy re-implementation of XLA's split (dot_algorithm_rewriter.cc) -------------------

U32 = np.uint32


def ref_flush(x: np.ndarray) -> np.ndarray:
    """Subnormals to signed zero, by magnitude."""
    return np.where(np.abs(x) < np.float32(2.0 ** -126), np.copysign(np.float32(0), x), x).astype(np.float32)


def ref_round_bf16(x: np.ndarray) -> np.ndarray:
    """Round to nearest even on the bit pattern; NaN stays NaN (quieted)."""
    bits = x.astype(np.float32).view(U32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) << 16
    out = (rounded & 0xFFFFFFFF).astype(U32).view(np.float32)
    return np.where(np.isnan(x), np.float32(np.nan), out)


def ref_truncate(x: np.ndarray) -> np.ndarray:
    return (x.astype(np.float32).view(U32) & U32(0xFFFF0000)).view(np.float32)


def ref_parts(x: np.ndarray, count: int) -> list:
    if count == 1:
        return [ref_flush(ref_round_bf16(x))]
    hi = ref_truncate(x)
    rest = ref_flush(x - hi)
    if count == 2:
        return [ref_flush(ref_round_bf16(hi)), ref_flush(ref_round_bf16(rest))]
    mid = ref_truncate(rest)
    low = ref_flush(rest - mid)
    return [ref_flush(ref_round_bf16(hi)), ref_flush(ref_round_bf16(mid)), ref_flush(ref_round_bf16(low))]


def ref_pass(a: np.ndarray, b: np.ndarray, width: int) -> np.ndarray:
    """One MXU pass: per K-chunk, the exact sum of the chunk's products rounded to f64 (math.fsum)
    and then to f32 (a zero sum of -0.0 products is -0.0; sums holding an infinity or a NaN as
    IEEE makes them in any order); chunk sums added in order in f32."""
    import math

    m, k = a.shape
    n = b.shape[1]
    total = None
    for start in range(0, k, width):
        chunk = np.empty((m, n), np.float32)
        for i in range(m):
            for j in range(n):
                products = [float(x) * float(y) for x, y in zip(a[i, start:start + width], b[start:start + width, j])]
                if all(p == 0 and math.copysign(1, p) < 0 for p in products):
                    chunk[i, j] = -0.0
                elif all(math.isfinite(p) for p in products):
                    chunk[i, j] = np.float32(math.fsum(products))
                else:
                    chunk[i, j] = np.float32(sum(products))  # inf, or NaN: the same in any order
        total = chunk if total is None else (total + chunk).astype(np.float32)
    return ref_flush(total)


def ref_nan_to_zero(x):
    return np.where(np.isnan(x), np.float32(0), x)


def ref_dot(a: np.ndarray, b: np.ndarray, passes: int, width: int = 128) -> np.ndarray:
    with np.errstate(all="ignore"):  # inf - inf and inf * 0 make NaNs on purpose
        return ref_passes(ref_flush(a), ref_flush(b), passes, width)


def ref_passes(a: np.ndarray, b: np.ndarray, passes: int, width: int) -> np.ndarray:
    if passes == 1:
        return ref_pass(ref_parts(a, 1)[0], ref_parts(b, 1)[0], width)
    if passes == 3:
        (ah, al), (bh, bl) = ref_parts(a, 2), ref_parts(b, 2)
        low = ref_flush(ref_pass(al, bh, width) + ref_pass(ah, bl, width))
        return ref_flush(ref_nan_to_zero(low) + ref_pass(ah, bh, width))
    (ah, am, al), (bh, bm, bl) = ref_parts(a, 3), ref_parts(b, 3)
    low = ref_pass(am, bm, width)
    for x, y in ((ah, bl), (al, bh), (ah, bm), (am, bh)):
        low = ref_flush(low + ref_pass(x, y, width))
    return ref_flush(ref_nan_to_zero(low) + ref_pass(ah, bh, width))


def awkward_matrix(rng, shape, transpose: bool = False) -> np.ndarray:
    """Normal values over a few scales with subnormals and zeros sprinkled in, an infinity in the
    first row and a NaN in the second (columns with `transpose`) only, so most outputs stay finite
    and the order of the finite sums is tested too."""
    rows, cols = shape[::-1] if transpose else shape
    x = (rng.standard_normal((rows, cols)) * np.exp2(rng.integers(-4, 4, (rows, cols)))).astype(np.float32)
    tiny = np.array([1e-40, -3e-39, 0.0, -0.0, 1e-45], np.float32)
    where = rng.random((rows, cols)) < 0.02
    x[where] = rng.choice(tiny, int(where.sum()))
    x[0, rng.integers(0, cols)] = -np.inf if transpose else np.inf  # inf x 0.0 in the low passes
    x[1, rng.integers(0, cols)] = np.nan
    return x.T.copy() if transpose else x


def assert_bits_equal(got: np.ndarray, want: np.ndarray) -> None:
    """Bit for bit, except that any NaN matches any NaN (payloads are not modelled)."""
    got, want = np.asarray(got, np.float32), np.asarray(want, np.float32)
    assert got.shape == want.shape
    nan = np.isnan(got)
    np.testing.assert_array_equal(nan, np.isnan(want))
    np.testing.assert_array_equal(got[~nan].view(U32), want[~nan].view(U32))


DOT = """
func.func @main(%a: tensor<{m}x{k}xf32>, %b: tensor<{k}x{n}xf32>) -> tensor<{m}x{n}xf32> {{
  %r = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0]{extra} : (tensor<{m}x{k}xf32>, tensor<{k}x{n}xf32>) -> tensor<{m}x{n}xf32>
  return %r : tensor<{m}x{n}xf32>
}}
"""


def algorithm(ops: int, components: int = 1, lhs: str = "bf16", acc: str = "f32") -> str:
    return (f", algorithm = <lhs_precision_type = {lhs}, rhs_precision_type = {lhs}, accumulation_type = {acc}, "
            f"lhs_component_count = {components}, rhs_component_count = {components}, "
            f"num_primitive_operations = {ops}, allow_imprecise_accumulation = false>")


SETTINGS = [
    (1, ""), (1, ", precision = [DEFAULT, DEFAULT]"), (3, ", precision = [HIGH, HIGH]"),
    (6, ", precision = [HIGHEST, HIGHEST]"), (1, algorithm(1)), (3, algorithm(3)), (6, algorithm(6)),
]


# K spans three 128-wide chunks; 35 outputs take the accumulate path of a pass, 400 the per-K one.
@pytest.mark.parametrize("m,k,n", [(5, 300, 7), (20, 300, 20)])
@pytest.mark.parametrize("passes,extra", SETTINGS)
def test_passes_equal_xlas_split_bit_for_bit(passes, extra, m, k, n):
    rng = np.random.default_rng(passes * 7 + len(extra) + m)
    a, b = awkward_matrix(rng, (m, k)), awkward_matrix(rng, (k, n), transpose=True)
    (got,) = run(DOT.format(m=m, k=k, n=n, extra=extra), tpu(), a, b)
    assert_bits_equal(got, ref_dot(a, b, passes))


def test_v6e_accumulates_in_256_wide_chunks():
    rng = np.random.default_rng(3)
    a = (rng.standard_normal((4, 300)) * 1e3).astype(np.float32)
    b = rng.standard_normal((300, 4)).astype(np.float32)
    program = DOT.format(m=4, k=300, n=4, extra="")
    (v6e,) = run(program, tpu("tpu-v6e"), a, b)
    (v5e,) = run(program, tpu("tpu-v5e"), a, b)
    assert_bits_equal(v6e, ref_dot(a, b, 1, width=256))
    assert_bits_equal(v5e, ref_dot(a, b, 1, width=128))
    assert not np.array_equal(v6e, v5e)  # the chunking is visible


@pytest.mark.parametrize("dtype", [np.float32, ml_dtypes.bfloat16])
@pytest.mark.parametrize("shape", [(), (0,), (7,), (3, 130)])
def test_flush_subnormals_zeroes_exactly_the_subnormals(dtype, shape):
    from hlodbg.engine.machine.tpu.numerics import flush_subnormals

    rng = np.random.default_rng(len(shape))
    special = np.array([1e-40, -1e-40, 1e-45, -0.0, 0.0, np.inf, -np.inf, np.nan, 2.0 ** -126, -3e-39],
                       np.float32)
    x = rng.choice(np.concatenate([special, rng.standard_normal(6).astype(np.float32)]), shape)
    x = x.astype(dtype)
    wide = x.astype(np.float32)
    tiny = np.float32(2.0 ** -126)
    want = np.where(np.abs(wide) < tiny, np.copysign(np.float32(0), wide), wide).astype(dtype)
    got = flush_subnormals(x)
    assert got.dtype == x.dtype and got.shape == x.shape
    np.testing.assert_array_equal(np.atleast_1d(got).view(np.uint8), np.atleast_1d(want).view(np.uint8))
    clean = flush_subnormals(want)
    assert clean is want  # nothing to flush: the array itself, not a copy


@pytest.mark.filterwarnings("error::RuntimeWarning")
@pytest.mark.parametrize("value", [0.0, -0.0, -1e-40])
def test_flushing_a_scalar_zero_is_silent(value):
    # A zero's magnitude minus one wraps around; on a 0-d array's numpy scalar that once printed
    # "RuntimeWarning: overflow encountered in scalar subtract" in the middle of `hlodbg diff`.
    from hlodbg.engine.machine.tpu.numerics import flush_subnormals

    got = flush_subnormals(np.array(value, np.float32))
    assert got.shape == () and got == 0 and np.signbit(got) == np.signbit(np.float32(value))


def test_a_short_last_chunk_keeps_the_sign_of_a_zero_sum():
    # 16x16 outputs (the per-K path) and K = 130: the last chunk holds two products. Every product
    # is -0.0, so every chunk sum and the total are -0.0 (nothing may add a +0.0 to them).
    a = np.full((16, 130), -0.0, np.float32)
    b = np.ones((130, 16), np.float32)
    (got,) = run(DOT.format(m=16, k=130, n=16, extra=""), tpu(), a, b)
    assert_bits_equal(got, ref_dot(a, b, 1))
    assert (got.view(U32) == 0x80000000).all()


BATCHED_DOT = """
func.func @main(%a: tensor<3x20x300xf32>, %b: tensor<3x300x9xf32>) -> tensor<3x20x9xf32> {
  %r = stablehlo.dot_general %a, %b, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<3x20x300xf32>, tensor<3x300x9xf32>) -> tensor<3x20x9xf32>
  return %r : tensor<3x20x9xf32>
}
"""


def test_batched_passes_sum_each_batch_like_one_matrix():
    rng = np.random.default_rng(11)
    a = np.stack([awkward_matrix(rng, (20, 300)) for _ in range(3)])
    b = np.stack([awkward_matrix(rng, (300, 9), transpose=True) for _ in range(3)])
    (got,) = run(BATCHED_DOT, tpu(), a, b)
    for i in range(3):
        assert_bits_equal(got[i], ref_dot(a[i], b[i], 1))


def test_default_precision_rounds_operands_to_bf16_on_tpu_only():
    k = 256
    a = np.full((1, k), 1 + 2.0 ** -10, np.float32)
    b = np.ones((k, 1), np.float32)
    program = DOT.format(m=1, k=k, n=1, extra=", precision = [DEFAULT, DEFAULT]")
    (on_tpu,) = run(program, tpu(), a, b)
    (on_cpu,) = run(program, CPU, a, b)
    assert on_tpu[0, 0] == np.float32(k)  # 1 + 2^-10 rounds to 1.0 in bf16
    assert on_cpu[0, 0] == np.float32(k * (1 + 2.0 ** -10))
    (highest,) = run(DOT.format(m=1, k=k, n=1, extra=", precision = [HIGHEST, HIGHEST]"), tpu(), a, b)
    assert highest[0, 0] == on_cpu[0, 0]


def test_bf16_operands_take_one_exact_pass_and_integer_dots_stay_exact():
    program = """
func.func @main(%a: tensor<2x3xbf16>, %b: tensor<3x2xbf16>, %i: tensor<2x3xi8>, %j: tensor<3x2xi8>) -> (tensor<2x2xf32>, tensor<2x2xi32>) {
  %r = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0], precision = [HIGHEST, HIGHEST] : (tensor<2x3xbf16>, tensor<3x2xbf16>) -> tensor<2x2xf32>
  %s = stablehlo.dot_general %i, %j, contracting_dims = [1] x [0] : (tensor<2x3xi8>, tensor<3x2xi8>) -> tensor<2x2xi32>
  return %r, %s : tensor<2x2xf32>, tensor<2x2xi32>
}"""
    import ml_dtypes

    rng = np.random.default_rng(5)
    a = rng.standard_normal((2, 3)).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal((3, 2)).astype(ml_dtypes.bfloat16)
    i = rng.integers(-128, 128, (2, 3)).astype(np.int8)
    j = rng.integers(-128, 128, (3, 2)).astype(np.int8)
    got, ints = run(program, tpu(), a, b, i, j)
    assert_bits_equal(got, ref_pass(a.astype(np.float32), b.astype(np.float32), 128))
    np.testing.assert_array_equal(ints, i.astype(np.int32) @ j.astype(np.int32))


def test_the_specs_component_counts_name_the_same_presets():
    # The spec's bf16_6x example counts 3 components per operand where JAX writes 1 (the verifier,
    # like StableHLO's, only knows 1, so these come from the API, not from a verified program).
    from hlodbg.engine.ir.attributes import DotAlgorithm
    from hlodbg.engine.ir.types import FloatType
    from hlodbg.engine.machine.tpu.op_numerics import UnsupportedOnTpu, mxu_passes

    bf16, f32 = FloatType("bf16"), FloatType("f32")

    def preset(ops, components):
        return DotAlgorithm(bf16, bf16, f32, components, components, ops, False)

    assert [mxu_passes((), preset(ops, 1)) for ops in (1, 3, 6)] == [1, 3, 6]
    assert mxu_passes((), preset(3, 2)) == 3 and mxu_passes((), preset(6, 3)) == 6
    for refused, name in ((preset(9, 1), "BF16_BF16_F32_X9"), (preset(3, 3), "BF16_BF16_F32_X3 with component counts 3 and 3"),
                          (preset(1, 2), "BF16_BF16_F32 with component counts 2 and 2"),
                          (DotAlgorithm(FloatType("tf32"), FloatType("tf32"), f32, 1, 1, 1, False), "TF32_TF32_F32")):
        with pytest.raises(UnsupportedOnTpu, match="not supported on TPU") as error:
            mxu_passes((), refused)
        assert f"dot algorithm {name} is not supported on TPU" in str(error.value)  # not a Python repr
    assert mxu_passes(("DEFAULT", "HIGHEST")) == 6  # the higher of the operands' precisions


@pytest.mark.parametrize("extra", [
    algorithm(1, lhs="f32"), algorithm(1, acc="bf16"), algorithm(1, lhs="tf32"), algorithm(3, lhs="tf32"),
])
def test_other_dot_algorithms_are_refused_at_the_op(extra):
    program = DOT.format(m=2, k=2, n=2, extra=extra)
    ones = np.ones((2, 2), np.float32)
    with pytest.raises(ExecutionError, match="not supported on TPU") as error:
        run(program, tpu(), ones, ones)
    assert "stablehlo.dot_general" in str(error.value) and error.value.pos is not None
    run(program, CPU, ones, ones)  # the CPU runs them


# -- subnormals ----------------------------------------------------------------------------------------

PRODUCT = """
func.func @main(%a: tensor<f32>, %b: tensor<f32>) -> tensor<f32> {
  %r = stablehlo.multiply %a, %b : tensor<f32>
  return %r : tensor<f32>
}
"""


def test_a_subnormal_product_is_zero_on_tpu_and_kept_on_cpu():
    a, b = np.float32(1e-30), np.float32(1e-10)
    (on_tpu,) = run(PRODUCT, tpu(), a, b)
    (on_cpu,) = run(PRODUCT, CPU, a, b)
    assert on_tpu == 0 and not np.signbit(on_tpu)
    assert on_cpu == np.float32(1e-30) * np.float32(1e-10) and 0 < on_cpu < np.float32(2.0 ** -126)
    (negative,) = run(PRODUCT, tpu(), -a, b)
    assert negative == 0 and np.signbit(negative)  # flushed to a zero of the result's sign


def test_f16_subnormals_are_kept_bf16_ones_flushed():
    """f16 is computed in f32, where an f16 subnormal is a normal number; bf16 shares f32's range."""
    program = """
func.func @main(%h: tensor<2xf16>, %b: tensor<2xbf16>) -> (tensor<2xf16>, tensor<2xbf16>) {
  %0 = stablehlo.add %h, %h : tensor<2xf16>
  %1 = stablehlo.add %b, %b : tensor<2xbf16>
  return %0, %1 : tensor<2xf16>, tensor<2xbf16>
}
"""
    half = np.array([2.0 ** -20, -(2.0 ** -18)], np.float16)  # f16 subnormals
    brain = np.array([2.0 ** -130, 1.0], ml_dtypes.bfloat16)  # a bf16 subnormal, a normal
    h, b = run(program, tpu(), half, brain)
    np.testing.assert_array_equal(h, half + half)
    assert b.astype(np.float32).tolist() == [0.0, 2.0]


def test_subnormal_inputs_count_as_zero_but_data_movement_keeps_their_bits():
    program = """
func.func @main(%a: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xi1>, tensor<2xf32>) {
  %one = stablehlo.constant dense<1.0> : tensor<2xf32>
  %zero = stablehlo.constant dense<0.0> : tensor<2xf32>
  %d = stablehlo.divide %one, %a : tensor<2xf32>
  %c = stablehlo.compare EQ, %a, %zero : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xi1>
  %r = stablehlo.reverse %a, dims = [0] : tensor<2xf32>
  return %d, %c, %r : tensor<2xf32>, tensor<2xi1>, tensor<2xf32>
}"""
    a = np.array([1e-40, -2e-39], np.float32)
    divided, equal, reversed_ = run(program, tpu(), a)
    np.testing.assert_array_equal(divided, [np.inf, -np.inf])
    np.testing.assert_array_equal(equal, [True, True])
    np.testing.assert_array_equal(reversed_.view(U32), a[::-1].view(U32))
    _, equal_cpu, _ = run(program, CPU, a)
    np.testing.assert_array_equal(equal_cpu, [False, False])


def test_operands_are_flushed_unless_provably_free_of_subnormals():
    from hlodbg.engine.machine.tpu.op_numerics import flushed_operands

    program = """
func.func @main(%a: tensor<2xf32>, %i: tensor<2xi32>) -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) {
  %tiny = stablehlo.constant dense<1.0e-40> : tensor<f32>
  %one = stablehlo.constant dense<1.0> : tensor<f32>
  %s = stablehlo.add %a, %a : tensor<2xf32>
  %t = stablehlo.reverse %s, dims = [0] : tensor<2xf32>
  %u = stablehlo.add %t, %t : tensor<2xf32>
  %bits = stablehlo.bitcast_convert %i : (tensor<2xi32>) -> tensor<2xf32>
  %v = stablehlo.add %bits, %bits : tensor<2xf32>
  %w = stablehlo.broadcast_in_dim %tiny, dims = [] : (tensor<f32>) -> tensor<2xf32>
  %x = stablehlo.add %w, %w : tensor<2xf32>
  %o = stablehlo.broadcast_in_dim %one, dims = [] : (tensor<f32>) -> tensor<2xf32>
  %y = stablehlo.add %o, %t : tensor<2xf32>
  return %u, %v, %x, %y : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
}"""
    module = hlodbg.load(program).module
    adds = [op for op in module.walk() if op.name == "stablehlo.add"]
    # %a (an argument), then a data-movement result of a flushed one, a bitcast of integers,
    # a broadcast subnormal literal, a broadcast normal literal next to a flushed value.
    assert [flushed_operands(op) for op in adds] == [
        (True, True), (False, False), (True, True), (True, True), (False, False)]
    a = np.array([1e-40, 1.0], np.float32)
    i = np.array([1, 0x00400000], np.int32)  # two subnormal f32 bit patterns
    u, v, x, y = run(program, tpu(), a, i)
    assert u.tolist() == [4.0, 0.0] and v.tolist() == [0.0, 0.0] and x.tolist() == [0.0, 0.0]
    assert y.tolist() == [3.0, 1.0]


def test_a_reduction_applied_as_a_ufunc_flushes_like_its_body():
    program = """
func.func @main(%a: tensor<4xf32>) -> tensor<f32> {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %r = stablehlo.reduce(%a init: %zero) applies stablehlo.add across dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
  return %r : tensor<f32>
}"""
    a = np.array([1e-40, 2e-40, 3e-40, 1e-39], np.float32)
    (on_tpu,) = run(program, tpu(), a)
    (on_cpu,) = run(program, CPU, a)
    assert on_tpu == 0
    assert on_cpu > 0
    interpreter = Interpreter(hlodbg.load(program).module, backend=tpu())
    interpreter.expand_bodies = True  # the body's own add runs: the same answer
    assert interpreter.run("main", [a])[0] == 0


def test_conversions_flush_subnormals():
    program = """
func.func @main(%a: tensor<2xf32>) -> tensor<2xbf16> {
  %r = stablehlo.convert %a : (tensor<2xf32>) -> tensor<2xbf16>
  return %r : tensor<2xbf16>
}"""
    a = np.array([1e-39, -1e-39], np.float32)
    (on_tpu,) = run(program, tpu(), a)
    (on_cpu,) = run(program, CPU, a)
    np.testing.assert_array_equal(on_tpu.astype(np.float32), [0, 0])
    assert np.signbit(on_tpu.astype(np.float32)[1])
    assert (on_cpu.astype(np.float32) != 0).all()


# -- 64-bit types -------------------------------------------------------------------------------------

F64_PROGRAM = """
func.func @main(%a: tensor<2xf32>) -> tensor<2xf64> {
  %w = stablehlo.convert %a : (tensor<2xf32>) -> tensor<2xf64>
  %r = stablehlo.add %w, %w : tensor<2xf64>
  return %r : tensor<2xf64>
}
"""


def test_f64_is_refused_on_tpu_at_the_first_op_that_needs_it():
    a = np.array([1.0, 2.0], np.float32)
    with pytest.raises(ExecutionError) as error:
        run(F64_PROGRAM, tpu(), a)
    message = str(error.value)
    assert "stablehlo.convert: f64 is not supported on tpu-v5e: TPUs have no 64-bit floating point" in message
    assert "--allow-f64" in message
    assert error.value.pos is not None and error.value.pos.line == 3
    assert isinstance(error.value, HlodbgError)  # the CLI's exit status 2


def test_allow_f64_runs_in_f64_and_says_so():
    backend = tpu(allow_f64=True)
    (result,) = run(F64_PROGRAM, backend, np.array([1.0, 2.0], np.float32))
    np.testing.assert_array_equal(result, [2.0, 4.0])
    assert result.dtype == np.float64
    add = [op for op in hlodbg.load(F64_PROGRAM).module.walk() if op.name == "stablehlo.add"][0]
    assert any("--allow-f64" in note for note in backend.numerics_notes(add))


def test_64_bit_integers_run_with_a_note():
    program = """
func.func @main(%a: tensor<2xi64>) -> tensor<2xi64> {
  %r = stablehlo.add %a, %a : tensor<2xi64>
  return %r : tensor<2xi64>
}"""
    backend = tpu()
    (result,) = run(program, backend, np.array([2 ** 40, -3], np.int64))
    np.testing.assert_array_equal(result, [2 ** 41, -6])
    add = [op for op in hlodbg.load(program).module.walk() if op.name == "stablehlo.add"][0]
    assert any("64-bit integers" in note for note in backend.numerics_notes(add))


# -- notes ---------------------------------------------------------------------------------------------


def ops_of(text: str) -> dict:
    return {op.name: op for op in hlodbg.load(text).module.walk()}


def test_numerics_notes_say_why_a_result_differs():
    program = """
func.func @main(%a: tensor<2x2xf32>, %b: tensor<2x2xbf16>) -> (tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xbf16>, tensor<2x2xf32>) {
  %d = stablehlo.dot_general %a, %a, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %e = stablehlo.exponential %a : tensor<2x2xf32>
  %m = stablehlo.multiply %b, %b : tensor<2x2xbf16>
  %t = stablehlo.transpose %a, dims = [1, 0] : (tensor<2x2xf32>) -> tensor<2x2xf32>
  return %d, %e, %m, %t : tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xbf16>, tensor<2x2xf32>
}"""
    ops = ops_of(program)
    backend = tpu()
    dot_notes = backend.numerics_notes(ops["stablehlo.dot_general"])
    assert any("at DEFAULT precision: operands rounded to bf16 on TPU (1 MXU pass)" in n for n in dot_notes)
    assert any("subnormal inputs/results flushed to zero" in n for n in dot_notes)
    assert any("approximate" in n for n in backend.numerics_notes(ops["stablehlo.exponential"]))
    assert any("rounded after the op" in n for n in backend.numerics_notes(ops["stablehlo.multiply"]))
    assert backend.numerics_notes(ops["stablehlo.transpose"]) == []
    assert all(CPU.numerics_notes(op) == [] for op in ops.values())


def test_a_chlo_square_is_exact_and_its_functions_are_not():
    """The polynomial note comes from the op's definition (transcendental), not from its dialect
    and operand count: a square is one IEEE multiplication, the same on a TPU as on the CPU."""
    ops = ops_of("""
func.func @main(%a: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %s = chlo.square %a : tensor<4xf32> -> tensor<4xf32>
  %e = chlo.erf %a : tensor<4xf32> -> tensor<4xf32>
  return %s, %e : tensor<4xf32>, tensor<4xf32>
}""")
    backend = tpu()
    assert backend.numerics_notes(ops["chlo.square"]) == ["subnormal inputs/results flushed to zero"]
    assert "erf: numpy in f32 here, the TPU's own polynomial differs (approximate, a few ULP)" in (
        backend.numerics_notes(ops["chlo.erf"]))


# -- excess precision ------------------------------------------------------------------------------------

EXCESS = """
func.func @main(%x: tensor<64xf32>) -> (tensor<64xf32>, tensor<64xbf16>, tensor<64xf32>) {
  %b = stablehlo.convert %x : (tensor<64xf32>) -> tensor<64xbf16>
  %three = stablehlo.constant dense<3.0> : tensor<64xbf16>
  %m = stablehlo.multiply %b, %three : tensor<64xbf16>
  %wide = stablehlo.convert %m : (tensor<64xbf16>) -> tensor<64xf32>
  %a = stablehlo.add %m, %three : tensor<64xbf16>
  %back = stablehlo.convert %b : (tensor<64xbf16>) -> tensor<64xf32>
  return %wide, %a, %back : tensor<64xf32>, tensor<64xbf16>, tensor<64xf32>
}
"""


def xla_excess(x: np.ndarray) -> list:
    jax = pytest.importorskip("jax")
    jnp = jax.numpy

    def f(x):
        b = x.astype(jnp.bfloat16)
        m = b * jnp.bfloat16(3)
        return m.astype(jnp.float32), m + jnp.bfloat16(3), b.astype(jnp.float32)

    return [np.asarray(r) for r in jax.jit(f)(x)]


PER_OP_ROUNDING = backend_for("cpu", excess_precision=False)


@pytest.mark.parametrize("backend", [CPU, tpu()], ids=["cpu", "tpu"])
def test_excess_precision_matches_xla_on_the_cpu(backend):
    """The default of the emulated targets is XLA's excess precision."""
    x = np.random.default_rng(1).standard_normal(64).astype(np.float32)
    expected = xla_excess(x)
    got = run(EXCESS, backend, x)
    for g, e in zip(got, expected):
        np.testing.assert_array_equal(np.asarray(g).astype(np.float32), e.astype(np.float32))
    rounded = run(EXCESS, PER_OP_ROUNDING, x)  # the spec's semantics: the multiply is rounded to bf16
    assert not np.array_equal(rounded[0], expected[0])
    np.testing.assert_array_equal(rounded[1].astype(np.float32), expected[1].astype(np.float32))


def test_excess_precision_is_on_by_default_and_per_op_rounding_a_configured_copy():
    assert CPU.excess_precision and tpu().excess_precision
    assert PER_OP_ROUNDING is not CPU and not PER_OP_ROUNDING.excess_precision and not tpu(excess_precision=False).excess_precision
    assert (CPU.numerics_mode(), PER_OP_ROUNDING.numerics_mode()) == ("excess precision", "per-op rounding")
    assert backend_for("cpu") is CPU
    with pytest.raises(TypeError, match="allow_f64"):
        CPU.configured(allow_f64=True)
    convert = [op for op in hlodbg.load(EXCESS).module.walk() if op.name == "stablehlo.convert"]
    notes = [CPU.numerics_notes(op) for op in convert]
    assert notes[0] == [] and notes[2] == [] and "excess precision" in notes[1][0]
    assert [PER_OP_ROUNDING.numerics_notes(op) for op in convert] == [[], [], []]


def test_hlodbg_run_says_which_rounding_is_in_force(tmp_path, capsys):
    import json

    from hlodbg.cli import main

    program = tmp_path / "excess.mlir"
    program.write_text(EXCESS)
    for options, mode, said in (([], "excess precision", "excess precision, as XLA: 1 conversion(s)"),
                                (["--per-op-rounding"], "per-op rounding", "per-op rounding (--per-op-rounding)"),
                                (["--target", "tpu", "--per-op-rounding"], "per-op rounding", "per-op rounding")):
        assert main(["run", str(program), "--json", *options]) == 0
        out, err = capsys.readouterr()
        assert json.loads(out)["numerics"] == mode
        assert f"note: {said}" in err and "(first at line 6)" in err  # %wide, the EXCESS text's 6th line
    plain = tmp_path / "plain.mlir"  # no conversion the rounding decides: nothing to say
    plain.write_text("func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {\n  return %x : tensor<2xf32>\n}\n")
    assert main(["run", str(plain)]) == 0
    assert "rounding" not in capsys.readouterr().err


# -- the shared programs on tpu-v5e ---------------------------------------------------------------------

# Programs whose results differ from XLA's CPU results by design on a TPU: their f32 dot_general /
# convolution run at DEFAULT precision, one bf16 pass (operands rounded to 8 significant bits), so
# results move by up to a few bf16 steps of the largest value. Measured (max |error| / max
# |expected|, tpu-v5e): mlp 2.3e-3, gpt_tiny 4.8e-3, cnn 1.8e-3, rnn_scan 2.6e-3 and 3.0e-3,
# sharded_mlp_4x2 9.0e-4. Bound: 1e-2 of the largest expected magnitude.
BF16_PASS = {"mlp", "gpt_tiny", "cnn", "rnn_scan", "sharded_mlp_4x2"}
BF16_PASS_TOLERANCE = 1e-2
# mixed_bf16's result0 is a dot of bf16 operands: exact products, only the order of the f32 sums
# differs (1e-5); its result1, a bf16 multiply converted to f32, is XLA's bit for bit (excess precision).
PROGRAMS_TOLERANCE = 1e-5


def shared_programs() -> list[str]:
    if not PROGRAMS.is_dir():
        return []
    return sorted(p.stem for p in PROGRAMS.glob("*.mlir") if (PROGRAMS / f"{p.stem}.expected.npz").exists())


def run_on_tpu(module, args: list, backend) -> list:
    from hlodbg.engine.run.grid import GridScheduler, ScheduledGrid
    from hlodbg.engine.run.spmd import grid_shape

    replicas, partitions = grid_shape(module, None, None)
    if replicas * partitions == 1:
        return Interpreter(module, backend=backend).run("main", args)
    grid = ScheduledGrid(replicas, partitions)
    tasks = {}
    for process in grid.processes():
        interpreter = Interpreter(module, backend=backend.for_device(process), process=process, grid=grid)
        tasks[process] = lambda i=interpreter: i.run("main", args)
    per_device = GridScheduler(grid, tasks).run()
    results = list(per_device.values())
    for other in results[1:]:  # a global program: every device computes the same full results
        for a, b in zip(results[0], other):
            np.testing.assert_array_equal(a, b)
    return results[0]


@pytest.mark.parametrize("name", shared_programs() or ["<none>"])
def test_shared_program_runs_on_tpu_v5e_within_tolerance_of_xla(name):
    require_shared()
    if name == "<none>":
        pytest.skip("../shared/programs is not present")
    program = hlodbg.load(PROGRAMS / f"{name}.mlir")
    inputs = np.load(PROGRAMS / f"{name}.inputs.npz")
    expected = np.load(PROGRAMS / f"{name}.expected.npz")
    args = [inputs[f"arg{i}"] for i in range(len(inputs.files))]
    backend = tpu()
    results = run_on_tpu(program.module, args, backend)
    rounded_by_design = name in BF16_PASS
    if rounded_by_design:  # the list above cannot go stale: the program really has such a dot
        assert any("rounded to bf16 on TPU (1 MXU pass)" in note
                   for op in program.module.walk() for note in backend.numerics_notes(op))
    assert len(results) == len(expected.files)
    for i, result in enumerate(results):
        want = expected[f"result{i}"]
        got = np.asarray(result)
        assert got.shape == want.shape
        if want.dtype.kind in "iub":
            np.testing.assert_array_equal(got.astype(want.dtype), want, err_msg=f"{name} result{i}")
            continue
        got64, want64 = got.astype(np.float64), want.astype(np.float64)
        scale = max(float(np.abs(want64).max(initial=0.0)), 1e-30)
        if rounded_by_design:
            bound = BF16_PASS_TOLERANCE * scale
        else:
            bound = PROGRAMS_TOLERANCE * scale
        assert (np.abs(got64 - want64) <= bound).all(), f"{name} result{i}: max error {np.abs(got64 - want64).max()}"


def test_mixed_bf16_matches_xla_exactly_by_default():
    require_shared()
    inputs = np.load(PROGRAMS / "mixed_bf16.inputs.npz")
    expected = np.load(PROGRAMS / "mixed_bf16.expected.npz")
    module = hlodbg.load(PROGRAMS / "mixed_bf16.mlir").module
    args = [inputs["arg0"], inputs["arg1"]]
    for backend in (CPU, tpu()):
        result1 = Interpreter(module, backend=backend).run("main", args)[1]
        np.testing.assert_array_equal(result1, expected["result1"])
    rounded = Interpreter(module, backend=PER_OP_ROUNDING).run("main", args)[1]
    off = rounded != expected["result1"]
    assert off.sum() == 350  # the spec's rounding: one bf16 step off in 350 of 512 elements
    step = np.abs(expected["result1"][off]) * 2.0 ** -7
    assert (np.abs(rounded[off] - expected["result1"][off]) <= step).all()


def test_a_chunk_sum_is_exact_whatever_order_blas_adds_in():
    """1 + 2^-60 - 1 is 0 in f64 added in order, 2^-60 exactly: a chunk's sum is the exact one
    (rounded to f32), the same in every place of the three products and under a batch dim."""
    from hlodbg.engine.machine.tpu.numerics import chunk_sum

    tiny = np.float32(2.0 ** -30)
    for order in ([0, 1, 2], [1, 0, 2], [0, 2, 1]):
        a = np.array([[1, tiny, -1]], np.float32)[:, order]
        b = np.array([[1], [tiny], [1]], np.float32)[order, :]
        assert chunk_sum(a, b)[0, 0] == np.float32(2.0 ** -60)
        assert chunk_sum(np.stack([a, -a]), np.stack([b, b]))[1, 0, 0] == np.float32(-(2.0 ** -60))
    zeros = chunk_sum(np.full((2, 3), -0.0, np.float32), np.ones((3, 2), np.float32))
    assert (zeros.view(U32) == 0x80000000).all()
    # Unflushed (a pass asked not to flush): a subnormal's bits count too.
    subnormal = np.float32(2.0 ** -130)
    a = np.array([[2.0 ** 100, subnormal, -(2.0 ** 100)]], np.float32)
    assert chunk_sum(a, np.ones((3, 1), np.float32))[0, 0] == subnormal


@pytest.mark.parametrize("seed", range(6))
def test_a_chunk_sum_is_the_rounded_exact_sum_when_values_span_many_binades(seed):
    """Rows and columns spanning up to 120 binades, with sums that cancel to near ties: every
    output is its exact sum (math.fsum) rounded to f32, whichever outputs the error bound sends
    to be summed again."""
    from hlodbg.engine.machine.tpu.numerics import bf16_rounded, chunk_sum

    rng = np.random.default_rng(seed)
    m, k, n = 9, 64, 11
    a = bf16_rounded((rng.standard_normal((2, m, k)) * 2.0 ** rng.integers(-60, 60, (2, m, k))).astype(np.float32))
    b = bf16_rounded((rng.standard_normal((2, k, n)) * 2.0 ** rng.integers(-60, 60, (2, k, n))).astype(np.float32))
    # Cancellation: the second half of each row repeats the first half's products negated, but
    # for one term nudged by a bf16 step, so the exact sums are tiny remainders.
    a[:, :, k // 2:] = -a[:, :, :k // 2]
    b[:, k // 2:, :] = b[:, :k // 2, :]
    b[:, k - 1, :] = bf16_rounded((b[:, k - 1, :] * np.float32(1 + 2.0 ** -7)).astype(np.float32))
    got = chunk_sum(a, b)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    want = np.array([[[math.fsum(a64[g, i, :] * b64[g, :, j]) for j in range(n)] for i in range(m)] for g in range(2)])
    assert_bits_equal(got, want.astype(np.float32))
