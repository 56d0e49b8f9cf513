"""CHLO ops (docs/generated/chlo.md): JAX emits these for erf, lgamma, top_k, ... ."""
from __future__ import annotations

from .custom_ops import ConstantSyntax
from .format import Format, mlir_syntax

for _name in (
    "acos", "acosh", "asin", "asinh", "atan", "atanh", "bessel_i1e", "conj", "cosh", "sinh", "tan",
    "digamma", "erf", "erf_inv", "erfc", "lgamma", "is_inf", "is_neg_inf", "is_pos_inf", "square",
    "_asin_acos_kernel",
):
    mlir_syntax(f"chlo.{_name}", Format("$operand attr-dict : %operands_arrow"))

mlir_syntax("chlo.next_after", Format("$x, $y attr-dict : %operands_arrow"))
mlir_syntax("chlo.polygamma", Format("$n, $x attr-dict : %operands_arrow"))
mlir_syntax("chlo.zeta", Format("$x, $q attr-dict : %operands_arrow"))

for _name in (
    "add", "atan2", "divide", "maximum", "minimum", "multiply", "next_after", "polygamma", "power",
    "remainder", "shift_left", "shift_right_arithmetic", "shift_right_logical", "subtract", "zeta",
    "and", "or", "xor", "complex",
):
    mlir_syntax(f"chlo.broadcast_{_name}", Format("$lhs, $rhs attr-dict : %functional"))

mlir_syntax("chlo.broadcast_compare", Format("$lhs, $rhs attr-dict : %functional"))
mlir_syntax("chlo.broadcast_select", Format("$pred, $on_true, $on_false attr-dict : %functional"))
mlir_syntax("chlo.constant", ConstantSyntax())
mlir_syntax("chlo.top_k", Format("($operand, k = $k) attr-dict : %operands_arrow"))
