"""Element provenance of the data-movement ops (engine/ops/shape_provenance.py), against the evaluator."""
from __future__ import annotations

import numpy as np
import pytest

import hlodbg
from hlodbg.engine.ops.provenance import provenance, reach

from tests.provenance_harness import check_provenance, op_under_test

X = np.arange(1, 13, dtype=np.float32).reshape(3, 4)


def one_op(args: str, result: str, body: str) -> str:
    return f"func.func @main({args}) -> {result} {{\n  %0 = {body}\n  return %0 : {result}\n}}\n"


def lines(text: str, at, *args) -> list[str]:
    op = op_under_test(hlodbg.load(text))
    return provenance(op, at, operands=[np.asarray(a) for a in args]).lines()


RESHAPE = one_op("%x: tensor<3x4xf32>", "tensor<2x6xf32>", "stablehlo.reshape %x : (tensor<3x4xf32>) -> tensor<2x6xf32>")


def test_reshape():
    check_provenance(RESHAPE, X)
    check_provenance(one_op("%x: tensor<2x6xf32>", "tensor<12xf32>",
                            "stablehlo.reshape %x : (tensor<2x6xf32>) -> tensor<12xf32>"), X.reshape(2, 6))


def test_reshape_shows_the_row_major_position():
    assert lines(RESHAPE, (1, 2), X) == [
        "result(1, 2) is at row-major position 1·6 + 2 = 8 of the result shape (2, 6)",
        "position 8 of the operand shape (3, 4) is operand(2, 0)",
    ]


@pytest.mark.parametrize("operand,dims,result", [
    ("3x1", "[1, 2]", "2x3x4"), ("4", "[1]", "3x4"), ("3x4", "[1, 0]", "4x3"), ("", "[]", "2x2")])
def test_broadcast_in_dim(operand, dims, result):
    shape = tuple(int(n) for n in operand.split("x")) if operand else ()
    t = f"tensor<{operand + 'x' if operand else ''}f32>"
    text = one_op(f"%x: {t}", f"tensor<{result}xf32>",
                  f"stablehlo.broadcast_in_dim %x, dims = {dims} : ({t}) -> tensor<{result}xf32>")
    check_provenance(text, np.arange(1, 1 + int(np.prod(shape)), dtype=np.float32).reshape(shape))


def test_broadcast_and_dynamic_broadcast_in_dim():
    check_provenance(one_op("%x: tensor<3xf32>", "tensor<2x3xf32>",
                            '"stablehlo.broadcast"(%x) {broadcast_sizes = array<i64: 2>} : (tensor<3xf32>) -> tensor<2x3xf32>'),
                     X[0, :3])
    text = one_op("%x: tensor<3x1xf32>, %s: tensor<3xi64>", "tensor<2x3x4xf32>",
                  "stablehlo.dynamic_broadcast_in_dim %x, %s, dims = [1, 2] : (tensor<3x1xf32>, tensor<3xi64>) -> tensor<2x3x4xf32>")
    check_provenance(text, X[:, :1], np.array([2, 3, 4]), held=[1])


def test_broadcast_explains_stretched_and_new_dimensions():
    text = one_op("%x: tensor<3x1xf32>", "tensor<2x3x4xf32>",
                  "stablehlo.broadcast_in_dim %x, dims = [1, 2] : (tensor<3x1xf32>) -> tensor<2x3x4xf32>")
    assert lines(text, (1, 2, 3), X[:, :1]) == [
        "operand dimension 0 is result dimension 1: index 2",
        "operand dimension 1 has size 1 and is stretched along result dimension 2: index 0",
        "result dimension 0 is new: every index along it reads the same operand element",
        "result(1, 2, 3) = operand(2, 0)",
    ]


@pytest.mark.parametrize("dims", ["[0]", "[1]", "[0, 1]"])
def test_reverse(dims):
    check_provenance(one_op("%x: tensor<3x4xf32>", "tensor<3x4xf32>",
                            f"stablehlo.reverse %x, dims = {dims} : tensor<3x4xf32>"), X)


@pytest.mark.parametrize("spec,result", [("[0:3:2, 1:4:2]", "2x2"), ("[1:3, 0:4:3]", "2x2"), ("[0:3, 1:2]", "3x1")])
def test_slice(spec, result):
    check_provenance(one_op("%x: tensor<3x4xf32>", f"tensor<{result}xf32>",
                            f"stablehlo.slice %x {spec} : (tensor<3x4xf32>) -> tensor<{result}xf32>"), X)


def test_slice_steps_show_start_plus_index_times_stride():
    text = one_op("%x: tensor<3x4xf32>", "tensor<2x2xf32>", "stablehlo.slice %x [0:3:2, 1:4:2] : (tensor<3x4xf32>) -> tensor<2x2xf32>")
    assert lines(text, (1, 1), X) == ["dimension 0: start 0 + 1·2 = 2", "dimension 1: start 1 + 1·2 = 3",
                                      "result(1, 1) = operand(2, 3)"]


@pytest.mark.parametrize("low,high,interior,result", [
    ("[1, -1]", "[0, 1]", "[1, 0]", "6x4"), ("[0, 0]", "[0, 0]", "[0, 2]", "3x10"),
    ("[-1, 2]", "[-1, -2]", "[0, 0]", "1x4"), ("[2, 0]", "[1, 0]", "[0, 0]", "6x4")])
def test_pad(low, high, interior, result):
    text = one_op("%x: tensor<3x4xf32>, %v: tensor<f32>", f"tensor<{result}xf32>",
                  f"stablehlo.pad %x, %v, low = {low}, high = {high}, interior = {interior} : "
                  f"(tensor<3x4xf32>, tensor<f32>) -> tensor<{result}xf32>")
    check_provenance(text, X, np.float32(-5))


def test_pad_names_the_padding_value_and_interior_gaps():
    text = one_op("%x: tensor<3x4xf32>, %v: tensor<f32>", "tensor<6x4xf32>",
                  "stablehlo.pad %x, %v, low = [1, -1], high = [0, 1], interior = [1, 0] : "
                  "(tensor<3x4xf32>, tensor<f32>) -> tensor<6x4xf32>")
    op = op_under_test(hlodbg.load(text))
    answer = provenance(op, (2, 0))
    assert [(s.operand, s.index, s.role.en) for s in answer.sources] == [(1, (), "padding value")]
    assert answer.lines() == ["dimension 0: 2 - low 1 = 1 falls between operand elements (interior padding 1)",
                              "result(2, 0) is the padding value"]
    assert answer.lines("ja")[-1] != answer.lines()[-1]


def test_dynamic_pad():
    text = one_op("%x: tensor<3x4xf32>, %v: tensor<f32>, %l: tensor<2xi64>, %h: tensor<2xi64>, %i: tensor<2xi64>",
                  "tensor<6x4xf32>",
                  "stablehlo.dynamic_pad %x, %v, %l, %h, %i : (tensor<3x4xf32>, tensor<f32>, tensor<2xi64>, "
                  "tensor<2xi64>, tensor<2xi64>) -> tensor<6x4xf32>")
    check_provenance(text, X, np.float32(-5), np.array([1, -1]), np.array([0, 1]), np.array([1, 0]), held=[2, 3, 4])


@pytest.mark.parametrize("dim", [0, 1])
def test_concatenate(dim):
    shapes = [(3, 4), (3, 4), (3, 4)]
    shapes = [(1, 4), (2, 4), (3, 4)] if dim == 0 else [(3, 1), (3, 2), (3, 4)]
    types = [f"tensor<{a}x{b}xf32>" for a, b in shapes]
    result = f"tensor<{6 if dim == 0 else 3}x{4 if dim == 0 else 7}xf32>"
    text = one_op(", ".join(f"%a{k}: {t}" for k, t in enumerate(types)), result,
                  f"stablehlo.concatenate %a0, %a1, %a2, dim = {dim} : ({', '.join(types)}) -> {result}")
    check_provenance(text, *(X[:a, :b] + 100 * k for k, (a, b) in enumerate(shapes)))


DYNAMIC_SLICE = one_op("%x: tensor<3x4xf32>, %i: tensor<i64>, %j: tensor<i64>", "tensor<2x2xf32>",
                       "stablehlo.dynamic_slice %x, %i, %j, sizes = [2, 2] : "
                       "(tensor<3x4xf32>, tensor<i64>, tensor<i64>) -> tensor<2x2xf32>")


@pytest.mark.parametrize("i,j", [(0, 1), (5, -3), (1, 2)])
def test_dynamic_slice_clamps_its_starts(i, j):
    check_provenance(DYNAMIC_SLICE, X, np.int64(i), np.int64(j), held=[1, 2])


def test_dynamic_slice_shows_the_clamping_with_numbers():
    op = op_under_test(hlodbg.load(DYNAMIC_SLICE))
    answer = provenance(op, (1, 0), operands=[X, np.int64(5), np.int64(-3)])
    assert answer.lines() == ["start of dimension 0: clamp(5, 0, 3-2) → 1", "start of dimension 1: clamp(-3, 0, 4-2) → 0",
                              "operand index = start (1, 0) + result index (1, 0) = (2, 0)"]
    assert [(s.operand, s.index, s.role.en) for s in answer.sources] == [
        (1, (), "start index"), (2, (), "start index"), (0, (2, 0), "copied element")]
    # a start index reaches every result element
    assert len(reach(op, 1, (), operands=[X, np.int64(5), np.int64(-3)])) == 4


@pytest.mark.parametrize("i,j", [(1, 1), (7, -2)])
def test_dynamic_update_slice(i, j):
    text = one_op("%x: tensor<3x4xf32>, %u: tensor<2x2xf32>, %i: tensor<i64>, %j: tensor<i64>", "tensor<3x4xf32>",
                  "stablehlo.dynamic_update_slice %x, %u, %i, %j : "
                  "(tensor<3x4xf32>, tensor<2x2xf32>, tensor<i64>, tensor<i64>) -> tensor<3x4xf32>")
    check_provenance(text, X, -X[:2, :2], np.int64(i), np.int64(j), held=[2, 3])


def test_real_dynamic_slice():
    text = one_op("%x: tensor<3x4xf32>, %s: tensor<2xi64>, %l: tensor<2xi64>, %t: tensor<2xi64>", "tensor<2x2xf32>",
                  "stablehlo.real_dynamic_slice %x, %s, %l, %t : (tensor<3x4xf32>, tensor<2xi64>, tensor<2xi64>, "
                  "tensor<2xi64>) -> tensor<2x2xf32>")
    check_provenance(text, X, np.array([1, 0]), np.array([3, 4]), np.array([1, 3]), held=[1, 2, 3])


def test_dynamic_reshape():
    text = one_op("%x: tensor<3x4xf32>, %s: tensor<2xi64>", "tensor<6x2xf32>",
                  "stablehlo.dynamic_reshape %x, %s : (tensor<3x4xf32>, tensor<2xi64>) -> tensor<6x2xf32>")
    check_provenance(text, X, np.array([6, 2]), held=[1])


def test_iota_has_no_sources_and_says_its_value():
    text = one_op("", "tensor<2x3xi32>", "stablehlo.iota dim = 1 : tensor<2x3xi32>")
    check_provenance(text)
    op = op_under_test(hlodbg.load(text))
    answer = provenance(op, (1, 2))
    assert answer.sources == () and answer.lines() == ["iota counts along dimension 1: result(1, 2) = index 2"]
    dynamic = one_op("%s: tensor<2xi64>", "tensor<2x3xi32>",
                     "stablehlo.dynamic_iota %s, dim = 0 : (tensor<2xi64>) -> tensor<2x3xi32>")
    check_provenance(dynamic, np.array([2, 3]), held=[0])
