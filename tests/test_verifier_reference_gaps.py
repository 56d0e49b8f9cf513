"""Programs the StableHLO C++ verifier's own tests (ops_stablehlo.mlir, verify_*.mlir) reject and
hlodbg once accepted, where the spec agrees they are invalid.

Most are constraints that hold whatever the operands' ranks: an unranked operand (tensor<*x...>)
hides dimension sizes, not the dimension numbers an op is given."""
from __future__ import annotations

import pytest

from hlodbg.engine import VerifyError, parse_module
from hlodbg.engine.verify import verify

DOT_GENERAL = """func.func @main(%a: tensor<*xf32>, %b: tensor<*xf32>) -> tensor<*xf32> {{
  %0 = "stablehlo.dot_general"(%a, %b) {{dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [{lb}], rhs_batching_dimensions = [{rb}], lhs_contracting_dimensions = [{lc}], rhs_contracting_dimensions = [{rc}]>}} : (tensor<*xf32>, tensor<*xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}}
"""


@pytest.mark.parametrize("lb, rb, lc, rc, constraint", [
    ("0", "", "1", "1", "C1"),
    ("0", "0", "", "1", "C2"),
    ("0, 0", "0, 0", "1", "1", "C3"),
    ("0", "0", "0", "1", "C3"),
    ("0", "0", "1", "0", "C4"),
    ("-1", "0", "1", "1", "C5"),
    ("0", "0", "1", "-2", "C8"),
])
def test_dot_general_dimension_numbers_are_checked_on_unranked_operands(lb, rb, lc, rc, constraint):
    module = parse_module(DOT_GENERAL.format(lb=lb, rb=rb, lc=lc, rc=rc), "dg.mlir")
    with pytest.raises(VerifyError) as info:
        verify(module)
    assert info.value.message.startswith("stablehlo.dot_general: ")
    assert info.value.message.endswith(f"({constraint})")
    assert (info.value.line, info.value.pos.col) == (2, 3)


def test_valid_dimension_numbers_on_unranked_operands_verify():
    verify(parse_module(DOT_GENERAL.format(lb="0", rb="0", lc="1", rc="1")))


GATHER = """func.func @main(%x: {operand}, %i: {indices}) -> {result} {{
  %0 = "stablehlo.gather"(%x, %i) {{dimension_numbers = #stablehlo.gather<offset_dims = [{offset}], collapsed_slice_dims = [{collapsed}], start_index_map = [0, 1], index_vector_dim = 2>, slice_sizes = array<i64: {sizes}>}} : ({operand}, {indices}) -> {result}
  return %0 : {result}
}}
"""
UNRANKED = "tensor<*xi32>"


@pytest.mark.parametrize("operand, indices, result, offset, collapsed, sizes, constraint", [
    # An unranked operand has the rank C1 implies (3 here): six slice sizes cannot fit it.
    (UNRANKED, UNRANKED, UNRANKED, "2", "0, 1", "1, 1, 8, 1, 2, 3", "C20"),
    # A collapsed dimension's slice size is at most 1, whatever the operand's rank.
    (UNRANKED, UNRANKED, UNRANKED, "2", "0, 2", "1, 1, 8", "C9"),
    # A ranked operand bounds the slice sizes even when the indices are unranked.
    ("tensor<?x?x2xi32>", UNRANKED, UNRANKED, "2", "0, 1", "1, 1, 8", "C21"),
    ("tensor<?x?x2xi32>", UNRANKED, UNRANKED, "2", "0, 1", "1, 1, -1", "C21"),
    # Ranked indices and an unranked operand fix the result's rank (7 here, not 1).
    (UNRANKED, "tensor<?x?x?xi32>", "tensor<3xi32>", "0, 2, 3, 4, 5", "0, 1, 3", "1, 1, 8, 1, 7, 1, 6, 1", "C22"),
])
def test_gather_constraints_hold_with_unranked_operands(operand, indices, result, offset, collapsed, sizes,
                                                        constraint):
    text = GATHER.format(operand=operand, indices=indices, result=result, offset=offset, collapsed=collapsed,
                         sizes=sizes)
    with pytest.raises(VerifyError) as info:
        verify(parse_module(text))
    assert info.value.message.startswith("stablehlo.gather: ")
    assert info.value.message.endswith(f"({constraint})")


@pytest.mark.parametrize("operand, indices, result", [
    (UNRANKED, "tensor<1x5x2xi32>", "tensor<1x5x8xi32>"),
    ("tensor<2x4x9xi32>", UNRANKED, "tensor<1x5x8xi32>"),
    (UNRANKED, UNRANKED, UNRANKED),
])
def test_valid_gathers_with_unranked_operands_verify(operand, indices, result):
    verify(parse_module(GATHER.format(operand=operand, indices=indices, result=result, offset="2", collapsed="0, 1",
                                      sizes="1, 1, 8")))


DYNAMIC_GATHER = """func.func @main(%x: {operand}, %i: {indices}, %s: {sizes}) -> {result} {{
  %0 = "stablehlo.dynamic_gather"(%x, %i, %s) {{dimension_numbers = #stablehlo.gather<offset_dims = [{offset}], collapsed_slice_dims = [0, 1], start_index_map = [{start}], index_vector_dim = {ivd}>}} : ({operand}, {indices}, {sizes}) -> {result}
  return %0 : {result}
}}
"""


@pytest.mark.parametrize("operand, indices, sizes, result, offset, start, ivd, constraint", [
    (UNRANKED, "tensor<?x?x?xi32>", UNRANKED, UNRANKED, "2", "0, 1", 4, "C2"),
    ("tensor<?x?x?xi32>", UNRANKED, UNRANKED, UNRANKED, "1, 2", "0, 1", 2, "C1"),
    (UNRANKED, "tensor<?x?x2xi32>", UNRANKED, UNRANKED, "2", "0", 2, "C3"),
    (UNRANKED, UNRANKED, "tensor<?x?xi32>", UNRANKED, "2", "0, 1", 2, "I3"),
    ("tensor<?x?x?xi32>", UNRANKED, "tensor<2xi32>", UNRANKED, "2", "0, 1", 2, "C11"),
    (UNRANKED, "tensor<?x?x?xi32>", "tensor<?xi32>", "tensor<?xi32>", "2", "0, 1", 2, "C13"),
])
def test_dynamic_gather_constraints_hold_with_unranked_operands(operand, indices, sizes, result, offset, start, ivd,
                                                                constraint):
    text = DYNAMIC_GATHER.format(operand=operand, indices=indices, sizes=sizes, result=result, offset=offset,
                                 start=start, ivd=ivd)
    with pytest.raises(VerifyError) as info:
        verify(parse_module(text))
    assert info.value.message.startswith("stablehlo.dynamic_gather: ")
    assert info.value.message.endswith(f"({constraint})")


def test_a_dynamic_gather_of_unranked_operands_verifies():
    verify(parse_module(DYNAMIC_GATHER.format(operand=UNRANKED, indices=UNRANKED, sizes=UNRANKED, result=UNRANKED,
                                              offset="2", start="0, 1", ivd=2)))


SELECT_AND_SCATTER = """func.func @main(%x: tensor<4x6xf32>, %s: tensor<2x3xf32>, %i: tensor<f32>) -> tensor<4x6xf32> {{
  %0 = "stablehlo.select_and_scatter"(%x, %s, %i) ({{
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %c = stablehlo.compare GE, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %c : tensor<i1>
  }}, {{
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %c = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %c : tensor<f32>
  }}) {{{attrs}}} : (tensor<4x6xf32>, tensor<2x3xf32>, tensor<f32>) -> tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}}
"""


def test_select_and_scatter_without_window_dimensions_is_rejected():
    # The dialect may leave the attribute out, but the spec gives it no default (I4): the window
    # is then empty and C4 (one entry per operand dimension) fails, as in the C++ verifier.
    with pytest.raises(VerifyError) as info:
        verify(parse_module(SELECT_AND_SCATTER.format(attrs="window_strides = array<i64: 2, 2>")))
    assert info.value.message.startswith("stablehlo.select_and_scatter: window_dimensions has 0 entries")
    assert info.value.message.endswith("(C4)")
    verify(parse_module(SELECT_AND_SCATTER.format(
        attrs="window_dimensions = array<i64: 2, 2>, window_strides = array<i64: 2, 2>")))
