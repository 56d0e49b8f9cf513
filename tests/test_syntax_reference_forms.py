"""Pretty forms the StableHLO reference writes and hlodbg must read and print the same way:
dynamic_conv's (convolution's form with the padding as an operand) and reduce's compact
`applies` form, which exists only for commutative binary ops (StableHLO's parser rejects
`applies stablehlo.divide`, so hlodbg must neither accept nor print it)."""
from __future__ import annotations

import numpy as np
import pytest

from hlodbg.engine import ParseError, VerifyError, parse_module
from hlodbg.engine.syntax.mlir.printer import print_module
from hlodbg.engine.verify import verify

from .helpers import interpret

DYNAMIC_CONV = """func.func @main(%lhs: tensor<1x4x4x1xf32>, %rhs: tensor<3x3x1x1xf32>, %pad: tensor<2x2xi64>) -> tensor<1x2x2x1xf32> {
  %0 = stablehlo.dynamic_conv(%lhs, %rhs, %pad)
    dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f],
    window = {stride = [2, 2]}
    {batch_group_count = 1 : i64, feature_group_count = 1 : i64}
    : (tensor<1x4x4x1xf32>, tensor<3x3x1x1xf32>, tensor<2x2xi64>) -> tensor<1x2x2x1xf32>
  return %0 : tensor<1x2x2x1xf32>
}
"""


def test_dynamic_conv_reads_in_convolutions_pretty_form_and_prints_generic_as_stablehlo_opt():
    # StableHLO defines no pretty form for dynamic_conv: stablehlo-opt prints it generic.
    module = parse_module(DYNAMIC_CONV, "dc.mlir")
    verify(module)
    printed = print_module(module)
    assert '"stablehlo.dynamic_conv"(%lhs, %rhs, %pad) <{batch_group_count = 1 : i64, dimension_numbers = ' \
           "#stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>, " in printed
    assert "window_strides = array<i64: 2, 2>" in printed
    assert print_module(parse_module(printed)) == printed


def test_dynamic_conv_in_pretty_form_runs_with_its_padding_operand():
    lhs = np.arange(16, dtype=np.float32).reshape(1, 4, 4, 1)
    rhs = np.ones((3, 3, 1, 1), np.float32)
    pad = np.ones((2, 2), np.int64)  # one row/column of zeros on every side
    (result,) = interpret(DYNAMIC_CONV, lhs, rhs, pad)
    padded = np.pad(lhs[0, :, :, 0], 1)
    expected = np.array([[padded[i:i + 3, j:j + 3].sum() for j in (0, 2)] for i in (0, 2)], np.float32)
    np.testing.assert_array_equal(np.asarray(result)[0, :, :, 0], expected)


REDUCE = """func.func @main(%x: tensor<4xf32>, %i: tensor<f32>) -> tensor<f32> {{
  %0 = "stablehlo.reduce"(%x, %i) ({{
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = stablehlo.{op} %a, %b : tensor<f32>
      stablehlo.return %s : tensor<f32>
  }}) {{dimensions = array<i64: 0>}} : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}}
"""


@pytest.mark.parametrize("op", ["add", "multiply", "maximum", "minimum"])
def test_a_commutative_body_prints_in_the_compact_applies_form(op):
    printed = print_module(parse_module(REDUCE.format(op=op)))
    assert f"applies stablehlo.{op} across dimensions = [0]" in printed
    assert print_module(parse_module(printed)) == printed


@pytest.mark.parametrize("op", ["divide", "subtract", "power", "atan2"])
def test_a_non_commutative_body_prints_as_a_full_reducer_that_parses_back(op):
    printed = print_module(parse_module(REDUCE.format(op=op)))
    assert "applies" not in printed
    assert f"stablehlo.{op} %a, %b" in printed
    reparsed = parse_module(printed)
    verify(reparsed)
    assert print_module(reparsed) == printed


@pytest.mark.parametrize("inner", ["stablehlo.divide", "std.add", "stablehlo.reshape"])
def test_applies_names_a_commutative_stablehlo_op_or_the_parse_fails_at_it(inner):
    text = f"""func.func @main(%x: tensor<2x3xf32>, %i: tensor<f32>) -> tensor<2xf32> {{
  %0 = stablehlo.reduce(%x init: %i) applies {inner} across dimensions = [1] : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}}
"""
    with pytest.raises(ParseError) as info:
        parse_module(text, "r.mlir")
    assert (info.value.pos.line, info.value.pos.col) == (2, 46)
    assert "'applies' takes a commutative binary op of the stablehlo dialect" in str(info.value)
    assert f"got '{inner}'" in str(info.value)


def test_a_reduce_with_unpaired_operands_says_inputs_and_init_values_must_pair_up():
    text = """func.func @main(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>, %i: tensor<f32>) -> (tensor<2xf32>, tensor<2xf32>) {
  %0:2 = "stablehlo.reduce"(%a, %b, %i) ({
    ^bb0(%x: tensor<f32>, %y: tensor<f32>, %z: tensor<f32>, %w: tensor<f32>):
      stablehlo.return %x, %y : tensor<f32>, tensor<f32>
  }) {dimensions = array<i64: 1>} : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<f32>) -> (tensor<2xf32>, tensor<2xf32>)
  return %0#0, %0#1 : tensor<2xf32>, tensor<2xf32>
}
"""
    with pytest.raises(VerifyError, match=r"stablehlo.reduce: expects as many inputs as init_values, got 3 operands"):
        verify(parse_module(text))


def test_a_pad_in_dynamic_convs_window_is_rejected_not_silently_ignored():
    # dynamic_conv shares convolution's pretty form, whose window may say `pad = [...]`; dynamic_conv
    # takes its padding from the operand, so such a window would be dropped without a word.
    text = DYNAMIC_CONV.replace("window = {stride = [2, 2]}", "window = {stride = [2, 2], pad = [[1, 1], [1, 1]]}")
    with pytest.raises(VerifyError) as info:
        verify(parse_module(text))
    assert info.value.message.startswith("stablehlo.dynamic_conv: dynamic_conv takes its padding as the third operand")
    assert info.value.message.endswith("(I3)")
