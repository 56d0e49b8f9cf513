"""The pretty MLIR syntax of the StableHLO ops whose form is not their own: an op's own pretty
format is a fact of its definition (ir/opset/stablehlo.py, `syntax=`), which op_syntax.py
registers; the other ops print and parse in the generic form only."""
from __future__ import annotations

from . import custom_directives  # noqa: F401  (registers the %directives the formats use)
from .format import Format, mlir_syntax

# dynamic_conv's pretty form is convolution's; its padding is the third operand, not a window key.
# StableHLO defines no pretty form for it (stablehlo-opt prints it generic): read, not printed.
_DYNAMIC_CONV = Format(
    "(%operands) dim_numbers = %conv_dims, window = {%window} attr-dict : %functional")
_DYNAMIC_CONV.printed = False
mlir_syntax("stablehlo.dynamic_conv", _DYNAMIC_CONV)
