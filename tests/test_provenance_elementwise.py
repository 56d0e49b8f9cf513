"""Element provenance of element-wise ops, select, bitcast_convert and chlo.broadcast_* (against the evaluator)."""
from __future__ import annotations

import numpy as np
import pytest

import hlodbg
from hlodbg.engine.ir.opdefs import OPS
from hlodbg.engine.ops import load_families
from hlodbg.engine.ops.provenance import has_provenance, provenance

from tests.provenance_harness import check_provenance, op_under_test

A = np.array([[1.5, -2.0, 3.0], [0.5, 4.0, -6.0]], dtype=np.float32)
B = np.array([[2.0, 1.0, -1.0], [3.0, -2.5, 2.0]], dtype=np.float32)


def one_op(args: str, result: str, body: str) -> str:
    return f"func.func @main({args}) -> {result} {{\n  %0 = {body}\n  return %0 : {result}\n}}\n"


def test_every_elementwise_op_has_provenance():
    load_families()
    assert [name for name, d in OPS.items() if d.category == "elementwise" and not has_provenance(name)] == []


@pytest.mark.parametrize("name", ["add", "multiply", "maximum", "atan2", "power"])
def test_binary(name):
    t = "tensor<2x3xf32>"
    check_provenance(one_op(f"%a: {t}, %b: {t}", t, f"stablehlo.{name} %a, %b : {t}"), A, B)


@pytest.mark.parametrize("body,result", [
    ("stablehlo.negate %a : tensor<2x3xf32>", "tensor<2x3xf32>"),
    ("stablehlo.convert %a : (tensor<2x3xf32>) -> tensor<2x3xf64>", "tensor<2x3xf64>"),
    ("stablehlo.reduce_precision %a, format = e5m10 : tensor<2x3xf32>", "tensor<2x3xf32>"),
    ("chlo.sinh %a : tensor<2x3xf32> -> tensor<2x3xf32>", "tensor<2x3xf32>"),
    ('"hlo.copy"(%a) : (tensor<2x3xf32>) -> tensor<2x3xf32>', "tensor<2x3xf32>"),
])
def test_unary(body, result):
    check_provenance(one_op("%a: tensor<2x3xf32>", result, body), A)


def test_compare():
    text = one_op("%a: tensor<2x3xf32>, %b: tensor<2x3xf32>", "tensor<2x3xi1>",
                  "stablehlo.compare GT, %a, %b : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>")
    check_provenance(text, A, B)


def test_clamp_with_scalar_bounds():
    text = one_op("%lo: tensor<f32>, %x: tensor<2x3xf32>, %hi: tensor<f32>", "tensor<2x3xf32>",
                  "stablehlo.clamp %lo, %x, %hi : (tensor<f32>, tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>")
    check_provenance(text, np.float32(-10), A, np.float32(10))
    op = op_under_test(hlodbg.load(text))
    answer = provenance(op, (0, 1), operands=[np.float32(-10), A, np.float32(10)])
    assert [(s.operand, s.index) for s in answer.sources] == [(0, ()), (1, (0, 1)), (2, ())]
    assert answer.lines()[1:] == ["min is a scalar (rank 0): every result element uses min()",
                                  "max is a scalar (rank 0): every result element uses max()",
                                  "result(0, 1) = clamp(min()=-10, operand(0, 1)=-2, max()=10)"]


@pytest.mark.parametrize("scalar", [True, False])
def test_select_reports_the_predicate_and_the_chosen_branch(scalar):
    p = "tensor<i1>" if scalar else "tensor<2x3xi1>"
    text = one_op(f"%p: {p}, %a: tensor<2x3xf32>, %b: tensor<2x3xf32>", "tensor<2x3xf32>",
                  f"stablehlo.select %p, %a, %b : ({p}, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>")
    pred = np.array(True) if scalar else np.array([[True, False, True], [False, False, True]])
    check_provenance(text, pred, A, B)
    op = op_under_test(hlodbg.load(text))
    answer = provenance(op, (1, 0), operands=[pred, A, B])
    chosen = 1 if scalar else 2
    assert [(s.operand, s.index) for s in answer.sources] == [(0, () if scalar else (1, 0)), (chosen, (1, 0))]


def test_map_reports_only_the_inputs_its_body_reads():
    text = """
func.func @main(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = "stablehlo.map"(%a, %b) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %1 = stablehlo.multiply %x, %x : tensor<f32>
    stablehlo.return %1 : tensor<f32>
  }) {dimensions = array<i64: 0, 1>} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
"""
    check_provenance(text, A, B)


@pytest.mark.parametrize("operand,result,values", [
    ("tensor<2xi32>", "tensor<2x4xi8>", np.array([0x01020304, -2], dtype=np.int32)),
    ("tensor<2x2xi16>", "tensor<2xi32>", np.array([[1, 2], [-3, 4]], dtype=np.int16)),
    ("tensor<3xf32>", "tensor<3xi32>", np.array([1.5, -2.0, 8.0], dtype=np.float32)),
])
def test_bitcast_convert_across_widths(operand, result, values):
    check_provenance(one_op(f"%x: {operand}", result, f"stablehlo.bitcast_convert %x : ({operand}) -> {result}"), values)


def test_bitcast_convert_to_a_narrower_type_names_the_bits():
    text = one_op("%x: tensor<2xi32>", "tensor<2x4xi8>", "stablehlo.bitcast_convert %x : (tensor<2xi32>) -> tensor<2x4xi8>")
    answer = provenance(op_under_test(hlodbg.load(text)), (1, 2))
    assert [(s.operand, s.index) for s in answer.sources] == [(0, (1,))]
    assert answer.lines() == ["operand(1) is 32 bits wide and splits into 4 results of 8 bits; "
                              "result(1, 2) is part 2: bits 16..23, least significant first"]


@pytest.mark.parametrize("lhs,rhs,attr", [
    ("2x3", "3", "{broadcast_dimensions = array<i64: 1>}"),
    ("2x3", "2", "{broadcast_dimensions = array<i64: 0>}"),
    ("2x3", "3", ""),
    ("2x1", "1x3", ""),
    ("", "2x3", ""),
])
def test_chlo_broadcast(lhs, rhs, attr):
    def t(s):
        return f"tensor<{s + 'x' if s else ''}f32>"

    def value(s, seed):
        shape = tuple(int(n) for n in s.split("x")) if s else ()
        return (np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape) + seed)

    text = one_op(f"%a: {t(lhs)}, %b: {t(rhs)}", "tensor<2x3xf32>",
                  f"chlo.broadcast_add %a, %b {attr} : ({t(lhs)}, {t(rhs)}) -> tensor<2x3xf32>")
    check_provenance(text, value(lhs, 1), value(rhs, 10))


def test_chlo_broadcast_explains_the_mapping():
    text = one_op("%a: tensor<2x3xf32>, %b: tensor<2xf32>", "tensor<2x3xf32>",
                  "chlo.broadcast_multiply %a, %b {broadcast_dimensions = array<i64: 0>} : "
                  "(tensor<2x3xf32>, tensor<2xf32>) -> tensor<2x3xf32>")
    op = op_under_test(hlodbg.load(text))
    answer = provenance(op, (1, 2))
    assert [(s.operand, s.index) for s in answer.sources] == [(0, (1, 2)), (1, (1,))]
    assert answer.lines()[1] == ("rhs of shape (2) maps its dimensions to result dimensions (0) "
                                 "(broadcast_dimensions), so it reads rhs(1)")
    stretched = one_op("%a: tensor<2x1xf32>, %b: tensor<3xf32>", "tensor<2x3xf32>",
                       "chlo.broadcast_add %a, %b : (tensor<2x1xf32>, tensor<3xf32>) -> tensor<2x3xf32>")
    lines = provenance(op_under_test(hlodbg.load(stretched)), (1, 2)).lines()
    assert "dimension 1 of lhs has size 1 and is stretched along result dimension 1 of size 3: it always reads index 0" in lines


def test_chlo_broadcast_select():
    text = one_op("%p: tensor<3xi1>, %a: tensor<2x3xf32>, %b: tensor<f32>", "tensor<2x3xf32>",
                  "chlo.broadcast_select %p, %a, %b : (tensor<3xi1>, tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>")
    check_provenance(text, np.array([True, False, True]), A, np.float32(7))


def test_chlo_broadcast_compare_and_select_steps():
    text = one_op("%a: tensor<2x3xf32>, %b: tensor<3xf32>", "tensor<2x3xi1>",
                  "chlo.broadcast_compare %a, %b {broadcast_dimensions = array<i64: 1>, "
                  "comparison_direction = #chlo<comparison_direction LT>} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>")
    check_provenance(text, A, B[0])
    select = one_op("%p: tensor<i1>, %a: tensor<2x3xf32>, %b: tensor<2x3xf32>", "tensor<2x3xf32>",
                    "stablehlo.select %p, %a, %b : (tensor<i1>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>")
    answer = provenance(op_under_test(hlodbg.load(select)), (1, 2), operands=[np.array(False), A, B])
    assert answer.lines()[1:] == ["pred is a scalar (rank 0): every result element uses pred()",
                                  "pred() = False, so result(1, 2) takes on_false(1, 2)=2"]


def test_constant_like_has_no_sources():
    text = one_op("%a: tensor<2x3xf32>", "tensor<2x3xf32>",
                  '"chlo.constant_like"(%a) {value = 2.5 : f32} : (tensor<2x3xf32>) -> tensor<2x3xf32>')
    check_provenance(text, A)
    answer = provenance(op_under_test(hlodbg.load(text)), (0, 0))
    assert answer.sources == () and answer.lines() == ["every element is the constant 2.5: the operand gives only the shape"]


@pytest.mark.parametrize("body,result", [
    ("stablehlo.uniform_quantize %a : (tensor<2x3xf32>) -> tensor<2x3x!quant.uniform<i8:f32, 0.5:3>>",
     "tensor<2x3x!quant.uniform<i8:f32, 0.5:3>>"),
    ("chlo.next_after %a, %a : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xf32>", "tensor<2x3xf32>"),
])
def test_more_element_wise_ops(body, result):
    check_provenance(one_op("%a: tensor<2x3xf32>", result, body), A)


@pytest.mark.filterwarnings("ignore:overflow encountered in cast:RuntimeWarning")
def test_is_finite():
    # A huge element makes the harness's perturbation step overflow to ±inf, which is_finite notices.
    text = one_op("%a: tensor<2x3xf32>", "tensor<2x3xi1>", "stablehlo.is_finite %a : (tensor<2x3xf32>) -> tensor<2x3xi1>")
    check_provenance(text, np.array([[3e38, 1, 2], [-5, -4, 6]], dtype=np.float32))


def test_dequantize_per_axis():
    t = "tensor<2x3x!quant.uniform<i8:f32:1, {0.5:1, 0.25:-2, 2.0:0}>>"
    text = one_op(f"%q: {t}", "tensor<2x3xf32>", f"stablehlo.uniform_dequantize %q : ({t}) -> tensor<2x3xf32>")
    check_provenance(text, np.array([[1, -3, 5], [7, 0, -9]], dtype=np.int8))


def test_select_before_the_program_runs_names_both_candidates():
    text = one_op("%p: tensor<2x3xi1>, %a: tensor<2x3xf32>, %b: tensor<2x3xf32>", "tensor<2x3xf32>",
                  "stablehlo.select %p, %a, %b : (tensor<2x3xi1>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>")
    answer = provenance(op_under_test(hlodbg.load(text)), (0, 1))
    assert [(s.operand, s.role.en) for s in answer.sources] == [
        (0, "predicate"), (1, "value taken where the predicate is true"), (2, "value taken where the predicate is false")]
    assert answer.lines("ja")[-1] == ("pred(0, 1) が on_true(0, 1) と on_false(0, 1) のどちらを取るかを決めます。"
                                      "どちらになるかはプログラムを実行すると分かります")
