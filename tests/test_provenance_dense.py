"""Element provenance of dot_general, dot, reduce (variadic too) and map, against the evaluator."""
from __future__ import annotations

import numpy as np
import pytest

import hlodbg
from hlodbg.engine.ops.provenance import provenance, reach

from tests.provenance_harness import check_provenance, op_under_test


def values(*shape, seed=1):
    # Nonzero everywhere, so that every factor of a product matters.
    return (np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape) % 5 + seed).astype(np.float32)


DOT_BATCHED = """
func.func @main(%a: tensor<2x2x3xf32>, %b: tensor<2x3x2xf32>) -> tensor<2x2x2xf32> {
  %0 = stablehlo.dot_general %a, %b, batching_dims = [0] x [0], contracting_dims = [2] x [1]
       : (tensor<2x2x3xf32>, tensor<2x3x2xf32>) -> tensor<2x2x2xf32>
  return %0 : tensor<2x2x2xf32>
}
"""


def test_dot_general_with_batch_dims():
    check_provenance(DOT_BATCHED, values(2, 2, 3), values(2, 3, 2, seed=2))


def test_dot_general_with_two_contracting_dims_and_free_dims_on_both_sides():
    text = """
func.func @main(%a: tensor<2x3x2xf32>, %b: tensor<3x2x2xf32>) -> tensor<2x2xf32> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1, 2] x [0, 1]
       : (tensor<2x3x2xf32>, tensor<3x2x2xf32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}
"""
    check_provenance(text, values(2, 3, 2), values(3, 2, 2, seed=3))


@pytest.mark.parametrize("lhs,rhs,result", [("2x3", "3x2", "2x2"), ("3", "3x2", "2"), ("3", "3", "")])
def test_dot(lhs, rhs, result):
    def t(s):
        return f"tensor<{s + 'x' if s else ''}f32>"

    text = (f"func.func @main(%a: {t(lhs)}, %b: {t(rhs)}) -> {t(result)} {{\n"
            f"  %0 = stablehlo.dot %a, %b : ({t(lhs)}, {t(rhs)}) -> {t(result)}\n  return %0 : {t(result)}\n}}\n")
    shape = lambda s: [int(n) for n in s.split("x")]
    check_provenance(text, values(*shape(lhs)), values(*shape(rhs), seed=2))


def test_dot_general_without_contracting_dims_is_an_outer_product():
    text = """
func.func @main(%a: tensor<2xf32>, %b: tensor<3xf32>) -> tensor<2x3xf32> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [] x [] : (tensor<2xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
"""
    check_provenance(text, values(2), values(3, seed=2))


def test_dot_general_steps_list_each_row_times_column_pair_with_numbers():
    a, b = values(2, 2, 3), values(2, 3, 2, seed=2)
    op = op_under_test(hlodbg.load(DOT_BATCHED))
    result = np.einsum("bik,bkj->bij", a, b)
    answer = provenance(op, (1, 0, 1), operands=[a, b], results=[result])
    assert answer.lines() == [
        "batching dimensions lhs (0) × rhs (0), contracting dimensions lhs (2) × rhs (1): result(1, 0, 1) is batch (1), "
        "lhs row (0), rhs column (1)",
        "result(1, 0, 1) = Σ over k of lhs(1, 0, k) · rhs(1, k, 1), k running over 0..2",
        f"k = 0: lhs(1, 0, 0) · rhs(1, 0, 1) = {a[1, 0, 0]:g} · {b[1, 0, 1]:g}",
        f"k = 1: lhs(1, 0, 1) · rhs(1, 1, 1) = {a[1, 0, 1]:g} · {b[1, 1, 1]:g}",
        f"k = 2: lhs(1, 0, 2) · rhs(1, 2, 1) = {a[1, 0, 2]:g} · {b[1, 2, 1]:g}",
        f"result(1, 0, 1) = {result[1, 0, 1]:g}",
    ]
    assert [(s.operand, s.index) for s in answer.sources][:2] == [(0, (1, 0, 0)), (1, (1, 0, 1))]
    assert sorted(r.index for r in reach(op, 0, (1, 0, 2))) == [(1, 0, 0), (1, 0, 1)]


def reduce_program(shape: str, result: str, dims: str, body: str = "stablehlo.add") -> str:
    return f"""
func.func @main(%x: tensor<{shape}xf32>, %init: tensor<f32>) -> tensor<{result}f32> {{
  %0 = stablehlo.reduce(%x init: %init) applies {body} across dimensions = {dims}
       : (tensor<{shape}xf32>, tensor<f32>) -> tensor<{result}f32>
  return %0 : tensor<{result}f32>
}}
"""


@pytest.mark.parametrize("dims,result", [("[1]", "2x2x"), ("[0, 2]", "3x"), ("[0, 1, 2]", ""), ("[]", "2x3x2x")])
def test_reduce(dims, result):
    check_provenance(reduce_program("2x3x2", result, dims), values(2, 3, 2), np.float32(0.5))


def test_reduce_with_a_body_that_is_not_commutative_still_counts_every_element():
    text = """
func.func @main(%x: tensor<2x3xf32>, %init: tensor<f32>) -> tensor<2xf32> {
  %0 = stablehlo.reduce(%x init: %init) across dimensions = [1] : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>
   reducer(%a: tensor<f32>, %b: tensor<f32>) {
    %1 = stablehlo.subtract %a, %b : tensor<f32>
    stablehlo.return %1 : tensor<f32>
  }
  return %0 : tensor<2xf32>
}
"""
    check_provenance(text, values(2, 3), np.float32(0.5))
    answer = provenance(op_under_test(hlodbg.load(text)), (1,))
    assert [(s.operand, s.index) for s in answer.sources] == [(1, ()), (0, (1, 0)), (0, (1, 1)), (0, (1, 2))]
    assert answer.lines()[:2] == [
        "result(1) folds 3 element(s) of inputs[0] along dimensions (1), starting from init_values[0], "
        "with the body (stablehlo.subtract)",
        "the reduced set: inputs[0] at (1, 0)  (1, 1)  (1, 2)",
    ]


VARIADIC = """
func.func @main(%x: tensor<2x3xf32>, %y: tensor<2x3xf32>, %i: tensor<f32>, %j: tensor<f32>) -> (tensor<2xf32>, tensor<2xf32>) {
  %0:2 = stablehlo.reduce(%x init: %i), (%y init: %j) across dimensions = [1]
       : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<f32>, tensor<f32>) -> (tensor<2xf32>, tensor<2xf32>)
   reducer(%a0: tensor<f32>, %b0: tensor<f32>) (%a1: tensor<f32>, %b1: tensor<f32>) {
    %1 = stablehlo.add %a0, %b0 : tensor<f32>
    %2 = stablehlo.multiply %a1, %b1 : tensor<f32>
    %3 = stablehlo.add %2, %1 : tensor<f32>
    stablehlo.return %1, %3 : tensor<f32>, tensor<f32>
  }
  return %0#0, %0#1 : tensor<2xf32>, tensor<2xf32>
}
"""


def test_variadic_reduce_reports_the_inputs_each_result_is_computed_from():
    x, y = values(2, 3), values(2, 3, seed=2)
    check_provenance(VARIADIC, x, y, np.float32(0.5), np.float32(1.5))
    op = op_under_test(hlodbg.load(VARIADIC))
    first = provenance(op, (0,), result=0)
    assert {s.operand for s in first.sources} == {0, 2}  # the sum of x never reads y
    second = provenance(op, (0,), result=1)
    assert {s.operand for s in second.sources} == {0, 1, 2, 3}
