"""Element provenance of stablehlo.convolution, checked against the evaluator by perturbation."""
from __future__ import annotations

import numpy as np
import pytest

import hlodbg
from hlodbg.engine.ops.provenance import provenance

from tests.provenance_harness import check_provenance, op_under_test

LETTERS = "zyx"


def conv_program(lhs, rhs, *, strides=None, pad=None, lhs_dilate=None, rhs_dilate=None, reverse=None,
                 feature_groups=1, batch_groups=1) -> str:
    """`main` convolving an input [b, spatial..., f] with a kernel [spatial..., i, o] (result [b, spatial..., f])."""
    s = len(lhs) - 2
    strides = strides or [1] * s
    pad = pad or [[0, 0]] * s
    lhs_dilate = lhs_dilate or [1] * s
    rhs_dilate = rhs_dilate or [1] * s
    reverse = reverse or [False] * s
    out = []
    for d in range(s):
        dilated = (lhs[1 + d] - 1) * lhs_dilate[d] + 1 + pad[d][0] + pad[d][1]
        extent = (rhs[d] - 1) * rhs_dilate[d] + 1
        out.append((dilated - extent) // strides[d] + 1)
    result = [lhs[0] // batch_groups, *out, rhs[-1]]
    spatial = ", ".join(str(d) for d in range(s))
    ty = lambda shape: f"tensor<{'x'.join(map(str, shape))}xf32>"
    window = (f"stride = {strides}, pad = {pad}, lhs_dilate = {lhs_dilate}, rhs_dilate = {rhs_dilate}, "
              f"reverse = [{', '.join('true' if r else 'false' for r in reverse)}]")
    return f"""
func.func @main(%x: {ty(lhs)}, %w: {ty(rhs)}) -> {ty(result)} {{
  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, {spatial}, f]x[{spatial}, i, o]->[b, {spatial}, f], window = {{{window}}} {{batch_group_count = {batch_groups} : i64, feature_group_count = {feature_groups} : i64}} : ({ty(lhs)}, {ty(rhs)}) -> {ty(result)}
  return %0 : {ty(result)}
}}
"""


def values(shape, seed):
    # Non-zero, distinct: an input element paired with a zero weight would change nothing.
    rng = np.random.default_rng(seed)
    return (rng.permutation(int(np.prod(shape))) + 1).reshape(shape).astype(np.float32) * rng.choice([-1, 1], shape)


CASES = {
    "1d": dict(lhs=[1, 5, 1], rhs=[3, 1, 2]),
    "1d_strides_negative_padding": dict(lhs=[2, 7, 1], rhs=[2, 1, 1], strides=[2], pad=[[-1, 1]]),
    "1d_lhs_dilation_padding": dict(lhs=[1, 3, 2], rhs=[3, 2, 1], pad=[[2, 1]], lhs_dilate=[2]),
    "2d_rhs_dilation_reversal": dict(lhs=[1, 4, 4, 1], rhs=[2, 2, 1, 2], rhs_dilate=[2, 1], reverse=[True, False],
                                     pad=[[0, 0], [1, -1]]),
    "2d_feature_groups": dict(lhs=[1, 3, 3, 4], rhs=[2, 2, 2, 2], feature_groups=2),
    "2d_batch_groups": dict(lhs=[4, 3, 2, 2], rhs=[2, 1, 2, 2], batch_groups=2, strides=[1, 2], pad=[[0, 1], [0, 0]]),
    "3d": dict(lhs=[1, 3, 2, 3, 1], rhs=[2, 1, 2, 1, 1], pad=[[0, 0], [1, 0], [0, -1]], lhs_dilate=[1, 2, 1]),
}


@pytest.mark.parametrize("name", CASES)
def test_convolution_provenance_matches_the_evaluator(name):
    case = dict(CASES[name])
    lhs, rhs = case.pop("lhs"), case.pop("rhs")
    check_provenance(conv_program(lhs, rhs, **case), values(lhs, 1), values(rhs, 2))


def test_convolution_steps_show_the_window_arithmetic():
    text = conv_program([1, 5, 5, 1], [2, 2, 1, 1], strides=[2, 1], pad=[[1, 0], [0, 0]], reverse=[False, True])
    op = op_under_test(hlodbg.load(text))
    answer = provenance(op, (0, 1, 2, 0))
    lines = answer.lines()
    assert lines[0] == "result(0, 1, 2, 0): batch 0, output feature 0, window at output position (1, 2)"
    # Window (0, 0): y = 1·2 + 0·1 - 1 = 1; x = 2 + 0 = 2, paired with the flipped kernel x = 2-1-0 = 1.
    assert lines[1] == ("window position (0, 0): input[b=0, y=1·2+0·1-1=1, x=2·1+0·1+0=2, f] · "
                        "kernel[y=0, x=2-1-0=1, i, o=0] for each input feature")
    assert [(s.operand, s.index) for s in answer.sources[:2]] == [(0, (0, 1, 2, 0)), (1, (0, 1, 0, 0))]
    assert lines[-1] == "result(0, 1, 2, 0) = Σ of 4 products input · kernel"


def test_padding_and_dilation_holes_are_named():
    text = conv_program([1, 3, 1], [3, 1, 1], pad=[[1, 0]], lhs_dilate=[2])
    op = op_under_test(hlodbg.load(text))
    lines = provenance(op, (0, 0, 0)).lines()
    assert "window position (0): spatial dimension 0 lands on padding at 0·1+0·1-1=-1: no input element" in lines
    assert ("window position (2): spatial dimension 0 lands at 0·1+2·1-1=1, between input elements "
            "(lhs_dilation 2): no input element") in lines
    assert "window position (1): input[b=0, x=0·1+1·1-1=0/2=0, f] · kernel[x=1, i, o=0] for each input feature" in lines


NCHW = """
func.func @main(%x: tensor<2x4x3x3xf32>, %w: tensor<4x2x2x1xf32>) -> tensor<2x4x2x2xf32> {
  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 1, 0], window = {stride = [1, 2], pad = [[0, 0], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 2 : i64} : (tensor<2x4x3x3xf32>, tensor<4x2x2x1xf32>) -> tensor<2x4x2x2xf32>
  return %0 : tensor<2x4x2x2xf32>
}
"""


def test_dimension_numbers_in_any_order():
    check_provenance(NCHW, values((2, 4, 3, 3), 3), values((4, 2, 2, 1), 4))


NO_SPATIAL = """
func.func @main(%x: tensor<2x3xf32>, %w: tensor<3x2xf32>) -> tensor<2x2xf32> {
  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, f]x[i, o]->[b, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}
"""


def test_a_convolution_without_spatial_dimensions_is_a_matrix_product():
    check_provenance(NO_SPATIAL, values((2, 3), 5), values((3, 2), 6))
    op = op_under_test(hlodbg.load(NO_SPATIAL))
    assert provenance(op, (1, 0)).lines()[1] == "window position (): input[b=1, f] · kernel[i, o=0] for each input feature"
