"""Data movement ops against JAX/XLA on CPU: broadcast, reshape, transpose, slices, concatenate,
pad, reverse, iota, plus the legacy and dynamic-shape forms (hand-written or from jax.export)."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import hlodbg
from hlodbg.engine.run.interpreter import Interpreter
from .helpers import assert_same, check_against_jax, interpret, run_mlir, sample

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
lax = pytest.importorskip("jax.lax")

DTYPES = [np.float32, ml_dtypes.bfloat16, np.float16, np.int8, np.int32, np.uint8, np.uint32, np.bool_, np.complex64]


# -- helpers shared with test_ops_gather_scatter ---------------------------------------------


# -- broadcasts, reshapes, permutations ------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
def test_broadcast_reshape_transpose_reverse(dtype):
    rng = np.random.default_rng(0)
    x = sample((3, 1, 4), dtype, rng)
    check_against_jax(lambda x: jnp.broadcast_to(x, (2, 3, 5, 4)), x)
    check_against_jax(lambda x: lax.broadcast_in_dim(x[:, 0, :], (3, 2, 4), (0, 2)), x)
    check_against_jax(lambda x: lax.broadcast_in_dim(x[0, 0, 0], (2, 3), ()), x)
    check_against_jax(lambda x: (x.reshape(4, 3), x.reshape(-1), x.reshape(12, 1, 1)), x)
    check_against_jax(lambda x: (jnp.transpose(x, (2, 0, 1)), jnp.transpose(x, (1, 2, 0))), x)
    check_against_jax(lambda x: (lax.rev(x, (0, 2)), lax.rev(x, (1,)), lax.rev(x, ())), x)


@pytest.mark.parametrize("shape", [(), (0,), (2, 0, 3), (1,), (5,)])
def test_degenerate_shapes(shape):
    x = sample(shape, np.float32, np.random.default_rng(1))
    size = int(np.prod(shape, dtype=np.int64))
    check_against_jax(lambda x: (x.reshape(size), jnp.broadcast_to(x, (2,) + shape), x.T), x)


def test_broadcast_in_dim_unordered_dims_and_legacy_broadcast():
    # JAX only emits increasing broadcast_dimensions; the op allows any order (a transpose).
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    got = run_mlir("""
func.func @main(%x: tensor<2x3xf32>) -> (tensor<3x4x2xf32>, tensor<5x2x3xf32>, tensor<3x2x2xf32>) {
  %0 = stablehlo.broadcast_in_dim %x, dims = [2, 0] : (tensor<2x3xf32>) -> tensor<3x4x2xf32>
  %1 = stablehlo.broadcast %x, sizes = [5] : (tensor<2x3xf32>) -> tensor<5x2x3xf32>
  %s = stablehlo.slice %x [0:1, 0:3] : (tensor<2x3xf32>) -> tensor<1x3xf32>
  %2 = stablehlo.broadcast_in_dim %s, dims = [1, 0] : (tensor<1x3xf32>) -> tensor<3x2x2xf32>
  return %0, %1, %2 : tensor<3x4x2xf32>, tensor<5x2x3xf32>, tensor<3x2x2xf32>
}""", x)
    assert_same(got[0], np.broadcast_to(x.T[:, None, :], (3, 4, 2)))
    assert_same(got[1], np.broadcast_to(x, (5, 2, 3)))
    assert_same(got[2], np.broadcast_to(x[0][:, None, None], (3, 2, 2)))


# -- slices ------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float32, ml_dtypes.bfloat16, np.int16, np.bool_])
def test_static_slices_and_concatenate(dtype):
    rng = np.random.default_rng(2)
    x = sample((5, 6, 3), dtype, rng)
    check_against_jax(lambda x: (lax.slice(x, (1, 0, 1), (5, 6, 3), (2, 3, 1)), lax.slice(x, (2, 2, 0), (2, 6, 3))), x)
    check_against_jax(lambda x: (jnp.concatenate([x, x[:2], x[:0]], 0), jnp.concatenate([x[:, :1], x], 1),
                                 jnp.concatenate([x, x, x], 2)), x)


@pytest.mark.parametrize("start", [(0, 0), (2, 3), (4, 1), (9, 9), (-1, 2), (-100, -3), (2, 100)])
def test_dynamic_slice_and_update_clamp(start):
    rng = np.random.default_rng(3)
    x = sample((6, 5), np.float32, rng)
    update = sample((3, 2), np.float32, rng)
    i, j = (np.int32(s) for s in start)
    check_against_jax(lambda x, i, j: lax.dynamic_slice(x, (i, j), (3, 2)), x, i, j)
    check_against_jax(lambda x, u, i, j: lax.dynamic_update_slice(x, u, (i, j)), x, update, i, j)
    check_against_jax(lambda x, i: lax.dynamic_slice_in_dim(x, i, 6, axis=0), x, i)


def test_dynamic_slice_clamps_raw_starts():
    # Without JAX's negative-index normalisation: the op itself clamps into [0, dim - size].
    x = np.arange(20, dtype=np.int32).reshape(4, 5)
    u = np.full((2, 2), -1, dtype=np.int32)
    got = run_mlir("""
func.func @main(%x: tensor<4x5xi32>, %u: tensor<2x2xi32>, %a: tensor<i64>, %b: tensor<ui32>) -> (tensor<2x3xi32>, tensor<4x5xi32>) {
  %0 = stablehlo.dynamic_slice %x, %a, %a, sizes = [2, 3] : (tensor<4x5xi32>, tensor<i64>, tensor<i64>) -> tensor<2x3xi32>
  %b2 = stablehlo.convert %b : (tensor<ui32>) -> tensor<i64>
  %1 = stablehlo.dynamic_update_slice %x, %u, %a, %b2 : (tensor<4x5xi32>, tensor<2x2xi32>, tensor<i64>, tensor<i64>) -> tensor<4x5xi32>
  return %0, %1 : tensor<2x3xi32>, tensor<4x5xi32>
}""", x, u, np.int64(-7), np.uint32(4_000_000_000))
    assert_same(got[0], x[0:2, 0:3])
    expected = x.copy()
    expected[0:2, 3:5] = -1
    assert_same(got[1], expected)


def test_real_dynamic_slice():
    x = np.arange(30, dtype=np.float32).reshape(5, 6)
    got = run_mlir("""
func.func @main(%x: tensor<5x6xf32>, %s: tensor<2xi64>, %l: tensor<2xi64>, %t: tensor<2xi64>) -> tensor<?x?xf32> {
  %0 = stablehlo.real_dynamic_slice %x, %s, %l, %t : (tensor<5x6xf32>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}""", x, np.array([1, 0]), np.array([5, 5]), np.array([2, 2]))
    assert_same(got[0], x[1:5:2, 0:5:2])


# -- pad ---------------------------------------------------------------------------------------

PADDINGS = [
    [(1, 2, 0), (0, 0, 1)],
    [(-1, 2, 1), (2, -3, 0)],
    [(-2, -1, 2), (0, 0, 3)],
    [(-3, -4, 3), (-1, 1, 0)],
    [(0, 0, 0), (-5, 0, 0)],
]


@pytest.mark.parametrize("config", PADDINGS)
@pytest.mark.parametrize("dtype", [np.float32, ml_dtypes.bfloat16, np.int8, np.bool_])
def test_pad(config, dtype):
    rng = np.random.default_rng(4)
    x = sample((4, 5), dtype, rng)
    value = sample((), dtype, rng)
    check_against_jax(lambda x, v: lax.pad(x, v, config), x, value)


@st.composite
def pad_cases(draw):
    shape = draw(st.lists(st.integers(0, 4), min_size=1, max_size=3))
    config = []
    for n in shape:
        interior = draw(st.integers(0, 2))
        spread = n + max(n - 1, 0) * interior
        low = draw(st.integers(-spread, 3))
        high = draw(st.integers(-(spread + low) if spread + low > 0 else 0, 3))
        config.append((low, high, interior))
    return tuple(shape), config


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pad_cases(), st.integers(0, 2**31 - 1))
def test_pad_random_shapes(case, seed):
    shape, config = case
    x = sample(shape, np.float32, np.random.default_rng(seed))
    check_against_jax(lambda x: lax.pad(x, np.float32(-1), config), x)


def test_pad_empty_operand():
    x = np.zeros((0, 3), np.float32)
    check_against_jax(lambda x: lax.pad(x, np.float32(7), [(2, 1, 4), (1, -1, 2)]), x)


def test_dynamic_pad():
    x = np.arange(6, dtype=np.int32).reshape(2, 3)
    got = run_mlir("""
func.func @main(%x: tensor<2x3xi32>, %v: tensor<i32>, %lo: tensor<2xi64>, %hi: tensor<2xi64>, %in: tensor<2xi64>) -> tensor<?x?xi32> {
  %0 = stablehlo.dynamic_pad %x, %v, %lo, %hi, %in : (tensor<2x3xi32>, tensor<i32>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<?x?xi32>
  return %0 : tensor<?x?xi32>
}""", x, np.int32(-1), np.array([1, -1]), np.array([0, 2]), np.array([1, 1]))
    expected = np.array(lax.pad(x, np.int32(-1), [(1, 0, 1), (-1, 2, 1)]))
    assert_same(got[0], expected)


# -- iota and shape queries ---------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float32, ml_dtypes.bfloat16, np.float16, np.int8, np.int32, np.uint16])
def test_iota(dtype):
    check_against_jax(lambda: (lax.iota(dtype, 300 if np.dtype(dtype).itemsize > 1 else 100),
                               lax.broadcasted_iota(dtype, (3, 4, 5), 1), lax.broadcasted_iota(dtype, (3, 4), 0)))


def test_dynamic_iota_reshape_broadcast_and_dimension_size():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    got = run_mlir("""
func.func @main(%x: tensor<?x4xf32>) -> (tensor<?xi32>, tensor<?x?xf32>, tensor<2x?x4xf32>, tensor<i32>) {
  %n = stablehlo.get_dimension_size %x, dim = 0 : (tensor<?x4xf32>) -> tensor<i32>
  %n1 = stablehlo.reshape %n : (tensor<i32>) -> tensor<1xi32>
  %0 = stablehlo.dynamic_iota %n1, dim = 0 : (tensor<1xi32>) -> tensor<?xi32>
  %shape = stablehlo.constant dense<[6, 2]> : tensor<2xi32>
  %1 = stablehlo.dynamic_reshape %x, %shape : (tensor<?x4xf32>, tensor<2xi32>) -> tensor<?x?xf32>
  %c2 = stablehlo.constant dense<[2]> : tensor<1xi32>
  %c4 = stablehlo.constant dense<[4]> : tensor<1xi32>
  %out = stablehlo.concatenate %c2, %n1, %c4, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
  %2 = stablehlo.dynamic_broadcast_in_dim %x, %out, dims = [1, 2] : (tensor<?x4xf32>, tensor<3xi32>) -> tensor<2x?x4xf32>
  return %0, %1, %2, %n : tensor<?xi32>, tensor<?x?xf32>, tensor<2x?x4xf32>, tensor<i32>
}""", x)
    assert_same(got[0], np.arange(3, dtype=np.int32))
    assert_same(got[1], x.reshape(6, 2))
    assert_same(got[2], np.broadcast_to(x, (2, 3, 4)))
    assert_same(got[3], np.int32(3))


def test_jax_export_with_symbolic_shapes():
    # Shape polymorphism makes JAX emit the dynamic_* forms and get_dimension_size.
    from jax import export

    (b,) = export.symbolic_shape("b")

    def f(x):
        y = jnp.broadcast_to(x[:, None], (x.shape[0], 3)) + jnp.arange(x.shape[0], dtype=jnp.float32)[:, None]
        return y.reshape(-1), jnp.concatenate([x, x]).reshape(2, -1), x[1:] * 2

    exported = export.export(jax.jit(f))(jax.ShapeDtypeStruct((b,), jnp.float32))
    text = exported.mlir_module()
    assert "dynamic_broadcast_in_dim" in text and "dynamic_iota" in text
    # The shape_assertion custom calls (no results) are not ops of this family; leave them out.
    text = "\n".join(line for line in text.splitlines() if "@shape_assertion" not in line)
    x = np.arange(5, dtype=np.float32)
    got = interpret(text, x)
    for g, w in zip(got, jax.jit(f)(x)):
        assert_same(g, np.asarray(w))


def test_bad_runtime_shape_is_reported():
    from hlodbg.engine.ir.errors import ExecutionError

    with pytest.raises(ExecutionError, match="cannot reshape"):
        run_mlir("""
func.func @main(%x: tensor<6xf32>, %s: tensor<2xi32>) -> tensor<?x?xf32> {
  %0 = stablehlo.dynamic_reshape %x, %s : (tensor<6xf32>, tensor<2xi32>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}""", np.zeros(6, np.float32), np.array([4, 2], np.int32))
