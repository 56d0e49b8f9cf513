"""sort and chlo.top_k against JAX/XLA on CPU; the general (merge sort) comparator path against
the recognised-comparator (argsort) path and against numpy."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import hlodbg
from hlodbg.engine.run.interpreter import Interpreter
from hlodbg.engine.ops import sorting
from .helpers import check_ulps as check, count_calls, run_mlir, sample


jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
lax = pytest.importorskip("jax.lax")

BF16 = ml_dtypes.bfloat16
DTYPES = [np.float32, BF16, np.float16, np.float64, np.int8, np.int64, np.uint8, np.uint64, np.bool_]


def special_floats(dtype) -> np.ndarray:
    values = np.array([1, np.nan, 3, -np.nan, np.inf, -0.0, 0.0, -np.inf, 3, np.nan, -0.0, 0.5, 0.0, -2], np.float32)
    return values.astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_sorts_match_xla(dtype):
    x = sample((6, 50), dtype, np.random.default_rng(0))
    check(lambda x: (jnp.sort(x, 1), jnp.sort(x, 0), jnp.argsort(x, 1), jnp.argsort(x, 0, descending=True),
                     jnp.sort(x, 1, descending=True)), x)
    check(lambda x: lax.top_k(x, 7), x)


@pytest.mark.parametrize("dtype", [np.float32, BF16, np.float16, np.float64])
def test_nan_and_signed_zero_order(dtype):
    # JAX's comparator maps -0.0 to 0.0 and every NaN to +NaN, then compares in total order;
    # top_k orders by total order itself: +NaN > +Inf > ... > +0.0 > -0.0 > ... > -NaN.
    x = np.stack([special_floats(dtype), special_floats(dtype)[::-1]])
    check(lambda x: (jnp.sort(x, 1), jnp.argsort(x, 1), jnp.argsort(x, 1, descending=True), lax.top_k(x, 14),
                     lax.top_k(x, 3)), x)


def test_multi_operand_and_complex_sorts():
    rng = np.random.default_rng(1)
    x = sample((7, 30), np.float32, rng)
    x[0, :5] = np.nan
    x[1, :4] = [-0.0, 0.0, -0.0, 0.0]
    x[2] = np.round(x[2])
    i = rng.integers(0, 4, (7, 30)).astype(np.int32)
    check(lambda x, i: (lax.sort((i, x), num_keys=2), lax.sort((x, i), num_keys=1),
                        lax.sort((i, x, -i), 1, num_keys=3)), x, i)
    c = sample((40,), np.complex64, rng)
    c[:5] = c[5:10].real
    check(lambda c: (jnp.sort(c), jnp.argsort(c)), c)


def test_top_k_ties_take_the_lower_index():
    x = np.array([[3, 1, 3, 2, 1, 3], [0, 0, 0, 0, 0, 0]], np.int32)
    check(lambda x: lax.top_k(x, 4), x)
    check(lambda x: lax.top_k(x, 6), x.astype(np.bool_))
    check(lambda x: lax.top_k(x, 0), x.astype(np.float32))


# -- comparators hlodbg does not recognise -----------------------------------------------------


def custom_sort_program(n: int, batch: int = 1) -> str:
    """Sort (key, payload) by `key_lhs - key_rhs < 0`: arithmetic across both sides, not a key."""
    shape = f"{batch}x{n}"
    return f"""
func.func @main(%x: tensor<{shape}xf32>, %i: tensor<{shape}xi32>) -> (tensor<{shape}xf32>, tensor<{shape}xi32>) {{
  %0:2 = "stablehlo.sort"(%x, %i) <{{dimension = 1 : i64, is_stable = true}}> ({{
  ^bb0(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<i32>, %d: tensor<i32>):
    %z = stablehlo.constant dense<0.0> : tensor<f32>
    %diff = stablehlo.subtract %a, %b : tensor<f32>
    %lt = stablehlo.compare LT, %diff, %z, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  }}) : (tensor<{shape}xf32>, tensor<{shape}xi32>) -> (tensor<{shape}xf32>, tensor<{shape}xi32>)
  return %0#0, %0#1 : tensor<{shape}xf32>, tensor<{shape}xi32>
}}"""


@pytest.mark.parametrize("f, count", [
    (lambda x, i: jnp.sort(x), 1),
    (lambda x, i: jnp.argsort(x, descending=True), 1),
    (lambda x, i: lax.sort((i, x), num_keys=2), 2),
    (lambda x, i: jnp.sort(x.astype(np.complex64)), 2),
])
def test_jax_comparators_are_recognised(f, count):
    x, i = np.zeros(4, np.float32), np.zeros(4, np.int32)
    program = hlodbg.load(jax.jit(f).lower(x, i).as_text())
    sort_op = next(op for op in program.ops if op.name == "stablehlo.sort")
    terms = sorting.analyse_comparator(sort_op.regions[0])
    assert terms is not None and len(terms) == count


def test_unrecognised_comparator_is_not_analysed():
    program = hlodbg.load(custom_sort_program(4))
    sort_op = next(op for op in program.ops if op.name == "stablehlo.sort")
    assert sorting.analyse_comparator(sort_op.regions[0]) is None


@pytest.mark.parametrize("n", [1, 2, 3, 7, 16, 33, 100])
def test_merge_sort_is_a_stable_sort(n):
    rng = np.random.default_rng(n)
    x = rng.integers(0, 5, (3, n)).astype(np.float32)
    i = np.broadcast_to(np.arange(n, dtype=np.int32), (3, n)).copy()
    keys, payload = run_mlir(custom_sort_program(n, 3), x, i)
    order = np.argsort(x, axis=1, kind="stable")
    np.testing.assert_array_equal(keys, np.take_along_axis(x, order, 1))
    np.testing.assert_array_equal(payload, order)


def test_merge_sort_agrees_with_the_argsort_path(monkeypatch):
    # Force JAX's own comparators through the general path: both must give XLA's answer.
    rng = np.random.default_rng(2)
    x = sample((5, 37), np.float32, rng)
    x[0, :6] = [np.nan, -0.0, 0.0, -np.nan, np.inf, -np.inf]
    x[1] = np.round(x[1])
    i = rng.integers(0, 3, (5, 37)).astype(np.int32)

    def f(x, i):
        return jnp.sort(x, 1), jnp.argsort(x, 0), lax.sort((i, x), 1, num_keys=2), jnp.argsort(i, 1, descending=True)

    check(f, x, i)
    monkeypatch.setattr(sorting, "fast_permutation", lambda call, operands, dimension: None)
    check(f, x, i)


def test_sort_of_100k_elements_with_a_custom_comparator(monkeypatch):
    n = 100_000
    x = np.random.default_rng(3).integers(0, 1000, (1, n)).astype(np.float32)
    i = np.arange(n, dtype=np.int32).reshape(1, n)
    program = hlodbg.load(custom_sort_program(n))
    calls = count_calls(monkeypatch, sorting, "run_body")
    keys, payload = Interpreter(program.module).run("main", [x, i])
    assert 0 < len(calls) <= n.bit_length() ** 2  # a merge sort asking the region once per search step: O(log^2 n)
    order = np.argsort(x[0], kind="stable")
    np.testing.assert_array_equal(payload[0], order)
    np.testing.assert_array_equal(keys[0], x[0][order])
