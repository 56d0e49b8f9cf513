"""Contractions against XLA on the CPU: dot_general (layouts, dtypes, preferred result types, dot
algorithms), the legacy dot/einsum/unary_einsum and chlo.ragged_dot in its three modes.

JAX lowers dot_general itself; dot and einsum are hand-written StableHLO compiled by XLA directly
(`xla_run`); ragged_dot is lowered for TPU (the only platform JAX emits chlo.ragged_dot for) and
compared with JAX's CPU result.
"""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import hlodbg
from hlodbg.engine.ir.errors import ExecutionError
from hlodbg.engine.run.interpreter import Interpreter
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
lax = pytest.importorskip("jax.lax")

jax.config.update("jax_enable_x64", True)

# -- helpers (test_ops_convolution and test_ops_linalg use them too) ---------------------------


# -- dot_general --------------------------------------------------------------------------------

DTYPES = [np.float32, ml_dtypes.bfloat16, np.float16, np.float64, np.int8, np.int32, np.int64, np.uint8,
          np.bool_, np.complex64, np.complex128]

# (lhs shape, rhs shape, ((lhs contracting, rhs contracting), (lhs batch, rhs batch)))
LAYOUTS = [
    ((4, 3), (3, 6), (((1,), (0,)), ((), ()))),
    ((3, 4), (3, 6), (((0,), (0,)), ((), ()))),  # lhs transposed
    ((4, 3), (6, 3), (((1,), (1,)), ((), ()))),  # rhs transposed (q @ k^T)
    ((5,), (5,), (((0,), (0,)), ((), ()))),  # inner product
    ((2, 3, 4, 5), (2, 5, 4, 6), (((3, 2), (1, 2)), ((0,), (0,)))),  # two contracting dims
    ((3, 2, 5, 4), (4, 2, 7), (((3,), (0,)), ((1,), (1,)))),  # batch dim in the middle
    ((2, 3), (4, 5), (((), ()), ((), ()))),  # outer product
    ((2, 3, 4), (2, 4), (((2,), (1,)), ((0,), (0,)))),  # batched matrix-vector
    ((2, 0, 3), (2, 3, 4), (((2,), (1,)), ((0,), (0,)))),  # empty free dim
    ((2, 4, 0), (2, 0, 3), (((2,), (1,)), ((0,), (0,)))),  # empty contraction: zeros
    ((3, 40), (40, 2), (((1,), (0,)), ((), ()))),  # long enough for BLAS
]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("layout", range(len(LAYOUTS)))
def test_dot_general_layouts(dtype, layout):
    rng = np.random.default_rng(layout)
    lhs_shape, rhs_shape, dims = LAYOUTS[layout]
    lhs, rhs = sample(lhs_shape, dtype, rng), sample(rhs_shape, dtype, rng)
    check_against_jax(lambda a, b: lax.dot_general(a, b, dims), lhs, rhs)


@pytest.mark.parametrize(
    "operand, preferred",
    [
        (np.int8, np.int32), (np.int8, np.int8), (np.uint8, np.uint32), (np.int16, np.int64),
        (ml_dtypes.bfloat16, np.float32), (np.float16, np.float32), (np.float32, np.float64),
        (np.int32, np.float32),
    ],
    ids=lambda d: np.dtype(d).name,
)
def test_preferred_element_type(operand, preferred):
    rng = np.random.default_rng(1)
    if np.dtype(operand).kind in "iu":
        info = np.iinfo(operand)
        lhs = rng.integers(info.min, int(info.max) + 1, size=(4, 300)).astype(operand)
        rhs = rng.integers(info.min, int(info.max) + 1, size=(300, 5)).astype(operand)
    else:
        lhs, rhs = sample((4, 300), operand, rng), sample((300, 5), operand, rng)
    f = lambda a, b: lax.dot(a, b, preferred_element_type=preferred)  # noqa: E731
    check_against_jax(f, lhs, rhs, tol=tolerance(np.float32) * 10)


def test_integer_products_wrap():
    lhs = np.full((2, 3), 2**30, np.int32)
    rhs = np.full((3, 2), 7, np.int32)
    got = check_against_jax(lambda a, b: a @ b, lhs, rhs)
    assert got[0][0, 0] == np.int64(2**30 * 21).astype(np.int32)  # 21 * 2**30 mod 2**32


def test_narrow_floats_round_once_after_f32_accumulation():
    # XLA CPU sums f16/bf16 products in f32 and rounds the total once.
    rng = np.random.default_rng(2)
    for dtype in (np.float16, ml_dtypes.bfloat16):
        lhs, rhs = sample((8, 2048), dtype, rng), sample((2048, 8), dtype, rng)
        got = check_against_jax(lambda a, b: a @ b, lhs, rhs)[0]
        exact = (lhs.astype(np.float64) @ rhs.astype(np.float64)).astype(dtype)
        # Within one ulp of the exact sum (a tie can round either way after the f32 sum);
        # summing in the narrow type would drift by many.
        ulps = np.abs(got.view(np.int16).astype(np.int32) - exact.view(np.int16).astype(np.int32))
        assert ulps.max() <= 1 and (ulps == 0).mean() > 0.95


def _gradient_text(extra_user: bool, precision: str = "DEFAULT, DEFAULT") -> str:
    """JAX's weight-gradient shape: dot_general(dy, x) over the tokens, then a transpose."""
    other = "\n  %2 = stablehlo.negate %0 : tensor<2x3x5xf32>" if extra_user else ""
    results = "%1, %2 : tensor<2x5x3xf32>, tensor<2x3x5xf32>" if extra_user else "%1 : tensor<2x5x3xf32>"
    types = "tensor<2x5x3xf32>, tensor<2x3x5xf32>" if extra_user else "tensor<2x5x3xf32>"
    return f"""func.func public @main(%dy: tensor<2x7x3xf32>, %x: tensor<2x7x5xf32>) -> ({types}) {{
  %0 = stablehlo.dot_general %dy, %x, batching_dims = [0] x [0], contracting_dims = [1] x [1], precision = [{precision}] : (tensor<2x7x3xf32>, tensor<2x7x5xf32>) -> tensor<2x3x5xf32>
  %1 = stablehlo.transpose %0, dims = [0, 2, 1] : (tensor<2x3x5xf32>) -> tensor<2x5x3xf32>{other}
  return {results}
}}"""


@pytest.mark.parametrize("extra_user, precision, contiguous", [
    (False, "DEFAULT, DEFAULT", True),   # only the transpose reads it: computed as x^T dy, laid out for it
    (True, "DEFAULT, DEFAULT", False),   # another user reads the product as written
    (False, "HIGHEST, DEFAULT", False),  # swapping the operands would swap their precisions
])
def test_dot_product_laid_out_for_its_transpose(extra_user, precision, contiguous):
    rng = np.random.default_rng(4)
    dy, x = sample((2, 7, 3), np.float32, rng), sample((2, 7, 5), np.float32, rng)
    results = interpret(_gradient_text(extra_user, precision), dy, x)
    assert results[0].flags.c_contiguous == contiguous
    want = np.einsum("btd,bte->bed", dy.astype(np.float64), x.astype(np.float64))
    np.testing.assert_allclose(results[0], want, rtol=1e-5)
    if extra_user:
        np.testing.assert_allclose(results[1], -np.swapaxes(want, 1, 2), rtol=1e-5)


@pytest.mark.parametrize("preset", ["F32_F32_F32", "BF16_BF16_F32", "BF16_BF16_F32_X3", "F16_F16_F16", "F64_F64_F64"])
def test_dot_algorithms(preset):
    rng = np.random.default_rng(3)
    lhs, rhs = sample((4, 64), np.float32, rng), sample((64, 5), np.float32, rng)
    f = lambda a, b: lax.dot(a, b, precision=getattr(lax.DotAlgorithmPreset, preset))  # noqa: E731
    text = jax.jit(f).lower(lhs, rhs).as_text()
    assert "algorithm" in text
    check_against_jax(f, lhs, rhs, tol=1e-2 if preset == "F16_F16_F16" else 2e-6)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_dot_general_random_dimension_numbers(data):
    rank_batch = data.draw(st.integers(0, 2))
    rank_contract = data.draw(st.integers(0, 2))
    lhs_free = data.draw(st.lists(st.integers(0, 4), max_size=2))
    rhs_free = data.draw(st.lists(st.integers(1, 4), max_size=2))
    batch = data.draw(st.lists(st.integers(1, 3), min_size=rank_batch, max_size=rank_batch))
    contract = data.draw(st.lists(st.integers(1, 5), min_size=rank_contract, max_size=rank_contract))
    lhs_dims = [("b", i) for i in range(rank_batch)] + [("c", i) for i in range(rank_contract)] + [("l", i) for i in range(len(lhs_free))]
    rhs_dims = [("b", i) for i in range(rank_batch)] + [("c", i) for i in range(rank_contract)] + [("r", i) for i in range(len(rhs_free))]
    lhs_dims = data.draw(st.permutations(lhs_dims))
    rhs_dims = data.draw(st.permutations(rhs_dims))
    sizes = {"b": batch, "c": contract, "l": lhs_free, "r": rhs_free}
    lhs_shape = tuple(sizes[k][i] for k, i in lhs_dims)
    rhs_shape = tuple(sizes[k][i] for k, i in rhs_dims)
    dims = (
        (tuple(lhs_dims.index(("c", i)) for i in range(rank_contract)), tuple(rhs_dims.index(("c", i)) for i in range(rank_contract))),
        (tuple(lhs_dims.index(("b", i)) for i in range(rank_batch)), tuple(rhs_dims.index(("b", i)) for i in range(rank_batch))),
    )
    dtype = data.draw(st.sampled_from([np.float32, np.int32]))
    rng = np.random.default_rng(0)
    check_against_jax(lambda a, b: lax.dot_general(a, b, dims), sample(lhs_shape, dtype, rng), sample(rhs_shape, dtype, rng))


# -- dot, einsum, unary_einsum ------------------------------------------------------------------


@pytest.mark.parametrize("lhs_shape, rhs_shape", [((4,), (4,)), ((3, 4), (4,)), ((4,), (4, 5)), ((3, 4), (4, 5))])
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.complex64, ml_dtypes.bfloat16], ids=lambda d: np.dtype(d).name)
def test_legacy_dot(lhs_shape, rhs_shape, dtype):
    rng = np.random.default_rng(4)
    lhs, rhs = sample(lhs_shape, dtype, rng), sample(rhs_shape, dtype, rng)
    out = tuple(lhs_shape[:-1]) + tuple(rhs_shape[1:])
    tl, tr, to = tensor_type(lhs_shape, dtype), tensor_type(rhs_shape, dtype), tensor_type(out, dtype)
    text = f"""func.func public @main(%a: {tl}, %b: {tr}) -> {to} {{
  %0 = stablehlo.dot %a, %b, precision = [DEFAULT, HIGHEST] : ({tl}, {tr}) -> {to}
  return %0 : {to}
}}"""
    assert_close(interpret(text, lhs, rhs)[0], xla_run(text, lhs, rhs)[0], tolerance(dtype))


EINSUMS = [
    ("ab,bc->ac", (3, 4), (4, 5), (3, 5)),
    ("bij,bjk->bki", (2, 3, 4), (2, 4, 5), (2, 5, 3)),
    ("ij,ij->i", (3, 4), (3, 4), (3,)),
    ("ii,i->i", (3, 3), (3,), (3,)),
    ("abc,cd->", (2, 3, 4), (4, 5), ()),
    ("abc,cd->da", (2, 3, 4), (4, 5), (5, 2)),
    ("...ij,...jk->...ik", (2, 3, 4), (2, 4, 5), (2, 3, 5)),
    ("ab,cd->abcd", (2, 3), (4, 5), (2, 3, 4, 5)),
]


@pytest.mark.parametrize("config, lhs_shape, rhs_shape, out", EINSUMS, ids=[e[0] for e in EINSUMS])
@pytest.mark.parametrize("dtype", [np.float32, np.int32], ids=lambda d: np.dtype(d).name)
def test_einsum(config, lhs_shape, rhs_shape, out, dtype):
    rng = np.random.default_rng(5)
    lhs, rhs = sample(lhs_shape, dtype, rng), sample(rhs_shape, dtype, rng)
    tl, tr, to = tensor_type(lhs_shape, dtype), tensor_type(rhs_shape, dtype), tensor_type(out, dtype)
    text = f"""func.func public @main(%a: {tl}, %b: {tr}) -> {to} {{
  %0 = stablehlo.einsum %a, %b, config = "{config}" : ({tl}, {tr}) -> {to}
  return %0 : {to}
}}"""
    assert_close(interpret(text, lhs, rhs)[0], xla_run(text, lhs, rhs)[0], tolerance(dtype))


@pytest.mark.parametrize(
    "config, shape, out",
    [("ab->ba", (2, 3), (3, 2)), ("ii->i", (3, 3), (3,)), ("abc->b", (2, 3, 4), (3,)), ("ij->", (3, 4), ()),
     ("a...->...a", (2, 3, 4), (3, 4, 2))],
)
@pytest.mark.parametrize("dtype", [np.float32, np.int8, ml_dtypes.bfloat16], ids=lambda d: np.dtype(d).name)
def test_unary_einsum(config, shape, out, dtype):
    # XLA no longer translates unary_einsum; numpy's einsum (wide, then rounded once) is the oracle.
    rng = np.random.default_rng(6)
    x = sample(shape, dtype, rng)
    if np.dtype(dtype) == np.int8:
        x = np.full(shape, 100, np.int8)  # sums overflow and must wrap
    ti, to = tensor_type(shape, dtype), tensor_type(out, dtype)
    text = f"""func.func public @main(%a: {ti}) -> {to} {{
  %0 = stablehlo.unary_einsum %a, config = "{config}" : ({ti}) -> {to}
  return %0 : {to}
}}"""
    wide = np.int64 if np.dtype(dtype).kind == "i" else np.float64
    want = np.einsum(config, x.astype(wide)).astype(dtype)
    assert_close(interpret(text, x)[0], np.asarray(want), tolerance(dtype))


def test_einsum_rejects_bad_config():
    text = """func.func public @main(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<2x4xf32> {
  %0 = stablehlo.einsum %a, %b, config = "ab,bc->az" : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}"""
    with pytest.raises(ExecutionError, match="appear in no operand"):
        interpret(text, np.zeros((2, 3), np.float32), np.zeros((3, 4), np.float32))


# -- chlo.ragged_dot ----------------------------------------------------------------------------

RD = lax.RaggedDotDimensionNumbers

RAGGED = [
    # mode 1, [m,k] x [g,k,n]: the plain grouped matmul, with empty and negative groups
    (((1,), (1,)), ((), ()), [0], [0], (10, 4), (3, 4, 5), [3, 2, 4]),
    (((1,), (1,)), ((), ()), [0], [0], (10, 4), (3, 4, 5), [0, 10, 0]),
    (((1,), (1,)), ((), ()), [0], [0], (10, 4), (3, 4, 5), [2, -1, 3]),
    # mode 1 with a batch dimension and per-batch group sizes
    (((2,), (2,)), ((0,), (1,)), [1], [0], (2, 11, 5), (3, 2, 5, 7), [[3, 4, 4], [1, 2, 3]]),
    (((2,), (2,)), ((0,), (1,)), [1], [0], (2, 11, 5), (3, 2, 5, 7), [3, 4, 4]),
    # mode 1 with free dims before and after the ragged one
    (((3,), (1,)), ((), ()), [1], [0], (2, 9, 3, 5), (4, 5, 6), [[2, 3, 1, 3], [1, 1, 1, 1]]),
    # mode 2, ragged contracting: [m,k] x [k,n] -> [g,m,n]
    (((1,), (0,)), ((), ()), [1], [], (6, 10), (10, 7), [3, 3, 2]),
    (((2,), (1,)), ((0,), (0,)), [2], [], (2, 6, 10), (2, 10, 7), [[3, 3, 2], [1, 5, 4]]),
    # mode 3, ragged batch
    (((2,), (1,)), ((0,), (0,)), [0], [], (2, 6, 10), (2, 10, 7), [1, 1]),
]


@pytest.mark.parametrize("case", range(len(RAGGED)))
@pytest.mark.parametrize("dtype", [np.float32, np.int32], ids=lambda d: np.dtype(d).name)
def test_ragged_dot(case, dtype):
    contracting, batch, ragged, group, lhs_shape, rhs_shape, sizes = RAGGED[case]
    numbers = RD(dot_dimension_numbers=(contracting, batch), lhs_ragged_dimensions=ragged, rhs_group_dimensions=group)
    rng = np.random.default_rng(case)
    lhs, rhs = sample(lhs_shape, dtype, rng), sample(rhs_shape, dtype, rng)
    sizes = np.asarray(sizes, np.int32)
    _check_ragged(lambda a, b, g: lax.ragged_dot_general(a, b, g, numbers), lhs, rhs, sizes)


def test_ragged_dot_preferred_type():
    rng = np.random.default_rng(7)
    lhs, rhs = sample((10, 4), ml_dtypes.bfloat16, rng), sample((3, 4, 5), ml_dtypes.bfloat16, rng)
    sizes = np.array([3, 2, 4], np.int32)
    _check_ragged(lambda a, b, g: lax.ragged_dot(a, b, g, preferred_element_type=jnp.float32), lhs, rhs, sizes)
    _check_ragged(lambda a, b, g: lax.ragged_dot(a, b, g), lhs, rhs, sizes)


def _check_ragged(f, *args):
    with _config("jax_ragged_dot_use_ragged_dot_instruction", True):
        text = jax.jit(f).trace(*args).lower(lowering_platforms=("tpu",)).as_text()
    assert "chlo.ragged_dot" in text
    want = np.asarray(jax.jit(f)(*args))
    assert_close(interpret(text, *args)[0], want, tolerance(want.dtype))


class _config:
    """Set a JAX config flag for the duration of a `with` block."""

    def __init__(self, name, value):
        self.name, self.value = name, value

    def __enter__(self):
        self.old = jax.config.values[self.name]
        jax.config.update(self.name, self.value)

    def __exit__(self, *exc):
        jax.config.update(self.name, self.old)
