"""Verifier rules no one-program-per-constraint table shows: the dot algorithms known to some
hardware, and the spec's promotability relation the reduction and collective checks share."""
from __future__ import annotations

import pytest

from hlodbg.engine import VerifyError, parse_module
from hlodbg.engine.verify import verify


# -- what the numbered programs cannot show ---------------------------------------------------------

_DOT_ALGORITHM = """
func.func @main(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<2x4xf32> {{
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0],
    algorithm = <lhs_precision_type = {lhs}, rhs_precision_type = {rhs}, accumulation_type = {acc},
                 lhs_component_count = {lc}, rhs_component_count = {rc}, num_primitive_operations = {n},
                 allow_imprecise_accumulation = {imprecise}>
    : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}}
"""

_KNOWN = [("f16", "f16", "f32", 1, 1, 1, "false"), ("bf16", "bf16", "f32", 1, 1, 6, "false"),
          ("tf32", "tf32", "f32", 1, 1, 3, "false"), ("f64", "f64", "f64", 1, 1, 1, "false"),
          ("f8E4M3FN", "f8E5M2", "f32", 1, 1, 1, "true")]
_UNKNOWN = [("f16", "bf16", "f32", 1, 1, 1, "false"), ("bf16", "bf16", "f32", 1, 1, 2, "false"),
            ("f32", "f32", "f32", 3, 3, 6, "false"), ("f32", "f32", "f32", 1, 1, 1, "true"),
            ("f8E4M3FN", "f8E4M3FN", "f16", 1, 1, 1, "false")]


def _algorithm_program(lhs, rhs, acc, lc, rc, n, imprecise):
    return parse_module(_DOT_ALGORITHM.format(lhs=lhs, rhs=rhs, acc=acc, lc=lc, rc=rc, n=n, imprecise=imprecise),
                        "algorithm.mlir")


@pytest.mark.parametrize("fields", _KNOWN, ids=lambda f: "-".join(map(str, f)))
def test_known_dot_algorithms_verify(fields):
    verify(_algorithm_program(*fields))


@pytest.mark.parametrize("fields", _UNKNOWN, ids=lambda f: "-".join(map(str, f)))
def test_dot_algorithms_no_hardware_supports_are_rejected(fields):
    # The spec: "StableHLO verification will provide best effort verification, preventing
    # algorithms that are not known to be supported on *any* hardware" (no numbered constraint).
    with pytest.raises(VerifyError) as info:
        verify(_algorithm_program(*fields))
    assert info.value.message.startswith("stablehlo.dot_general: algorithm <")
    assert "is not known to be supported on any hardware" in info.value.message
    assert info.value.line == 3


def _promotable(src: str, dst: str) -> bool:
    from hlodbg.engine.syntax.mlir.parser import Parser
    from hlodbg.engine.verify.shape_inference import is_promotable

    def element(text):
        return Parser(f"tensor<{text}>", "t.mlir").parse_type().element

    return is_promotable(element(src), element(dst))


@pytest.mark.parametrize("src,dst,expected", [
    ("i8", "i32", True), ("ui8", "i32", True), ("i32", "ui32", True), ("i32", "i16", False),
    ("i1", "i1", True), ("i1", "i8", False), ("i8", "i1", False),
    ("f32", "f64", True), ("f8E4M3FN", "bf16", True), ("f16", "bf16", True), ("f64", "f32", False),
    ("complex<f32>", "complex<f64>", True), ("complex<f64>", "complex<f32>", False),
    ("f32", "complex<f32>", False), ("i32", "f32", False),
    ("!quant.uniform<i8:f32, 0.5>", "!quant.uniform<i32:f32, 0.25:1>", True),
    ("!quant.uniform<i16:f32, 0.5>", "!quant.uniform<i8:f32, 0.5>", False),
    ("!quant.uniform<i8:f32, 0.5>", "!quant.uniform<i32:f16, 0.5>", False),
    ("!quant.uniform<i8:f32, 0.5>", "f32", False),
])
def test_is_promotable_follows_the_spec(src, dst, expected):
    # The spec's Notation section: same kind (boolean, integer, float, complex, or quantized with
    # the same expressed type) and a destination at least as wide (storage width for quantized).
    assert _promotable(src, dst) is expected
