"""Constraints that hold whatever the operands' ranks: an unranked operand (tensor<*x...>) hides
dimension sizes, not the dimension numbers an op is given. The StableHLO C++ verifier rejects
each of these programs too (its ops_stablehlo.mlir tests them with tensor<*xf32>)."""
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
