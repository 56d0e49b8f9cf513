"""The pretty MLIR syntax of the StableHLO ops whose form is not their own: an op's own pretty
format is a fact of its definition (ir/opset/stablehlo.py, `syntax=`), which op_syntax.py
registers; the other ops print and parse in the generic form only."""
from __future__ import annotations

from . import custom_directives  # noqa: F401  (registers the %directives the formats use)
from .format import Format, mlir_syntax

_BINARY = "$lhs, $rhs attr-dict : %same"

# -- element-wise ------------------------------------------------------------------------------

for _name in (
    "abs", "ceil", "convert", "count_leading_zeros", "floor", "imag", "not", "negate", "popcnt",
    "real", "round_nearest_afz", "round_nearest_even", "sign",
):
    mlir_syntax(f"stablehlo.{_name}", Format("$operand attr-dict : %same"))

for _name in (
    "cbrt", "cosine", "exponential", "exponential_minus_one", "log", "log_plus_one", "logistic",
    "rsqrt", "sine", "sqrt", "tan", "tanh",
):
    mlir_syntax(f"stablehlo.{_name}", Format("$operand attr-dict : %same"))

mlir_syntax("stablehlo.is_finite", Format("%operands attr-dict : %functional"))

for _name in (
    "add", "atan2", "divide", "maximum", "minimum", "multiply", "power", "remainder", "shift_left",
    "shift_right_arithmetic", "shift_right_logical", "subtract", "and", "or", "xor",
):
    mlir_syntax(f"stablehlo.{_name}", Format(_BINARY))

mlir_syntax("stablehlo.complex", Format("%operands attr-dict : %complex"))
mlir_syntax(
    "stablehlo.compare",
    Format("$comparison_direction, $lhs, $rhs{?, $compare_type?} attr-dict : %functional"),
)
mlir_syntax("stablehlo.select", Format("%operands attr-dict : %select"))
mlir_syntax("stablehlo.clamp", Format("$min, $operand, $max attr-dict : %same"))
mlir_syntax("stablehlo.reduce_precision", Format("$operand, format = %expmant attr-dict : %same"))
mlir_syntax("stablehlo.bitcast_convert", Format("%operands attr-dict : %functional"))

# -- quantization ------------------------------------------------------------------------------

mlir_syntax("stablehlo.uniform_quantize", Format("$operand attr-dict : %same"))
mlir_syntax("stablehlo.uniform_dequantize", Format("$operand attr-dict : %same"))

# -- constants and generators --------------------------------------------------------------------

mlir_syntax("stablehlo.iota", Format("dim = $iota_dimension attr-dict : %results"))
mlir_syntax("stablehlo.dynamic_iota", Format("$output_shape, dim = $iota_dimension attr-dict : %functional"))
mlir_syntax(
    "stablehlo.rng",
    Format("$a, $b, $shape, distribution = $rng_distribution attr-dict : %functional"),
)
mlir_syntax(
    "stablehlo.rng_bit_generator",
    Format("$initial_state, algorithm = $rng_algorithm attr-dict : %functional"),
)

# -- data movement -----------------------------------------------------------------------------

mlir_syntax(
    "stablehlo.broadcast_in_dim",
    Format("$operand, dims = $broadcast_dimensions attr-dict : %functional"),
)
mlir_syntax("stablehlo.broadcast", Format("$operand, sizes = $broadcast_sizes attr-dict : %functional"))
mlir_syntax(
    "stablehlo.dynamic_broadcast_in_dim",
    Format("$operand, $output_dimensions, dims = $broadcast_dimensions attr-dict : %functional"),
)
mlir_syntax("stablehlo.transpose", Format("$operand, dims = $permutation attr-dict : %functional"))
mlir_syntax("stablehlo.reverse", Format("$operand, dims = $dimensions attr-dict : %same"))
mlir_syntax("stablehlo.reshape", Format("%operands attr-dict : %functional"))
mlir_syntax("stablehlo.dynamic_reshape", Format("%operands attr-dict : %functional"))
mlir_syntax("stablehlo.concatenate", Format("$inputs, dim = $dimension attr-dict : %functional"))
mlir_syntax(
    "stablehlo.pad",
    Format(
        "$operand, $padding_value, low = $edge_padding_low, high = $edge_padding_high, "
        "interior = $interior_padding attr-dict : %functional"
    ),
)
mlir_syntax("stablehlo.dynamic_pad", Format("%operands attr-dict : %functional"))
mlir_syntax("stablehlo.slice", Format("$operand %slice attr-dict : %functional"))
mlir_syntax("stablehlo.real_dynamic_slice", Format("%operands attr-dict : %functional"))
mlir_syntax(
    "stablehlo.dynamic_slice",
    Format("$operand, $start_indices, sizes = $slice_sizes attr-dict : %functional"),
)
mlir_syntax("stablehlo.dynamic_update_slice", Format("%operands attr-dict : %functional"))
mlir_syntax("stablehlo.get_tuple_element", Format("$operand[$index] attr-dict : %functional"))
mlir_syntax("stablehlo.tuple", Format("$val attr-dict : %tuple"))
mlir_syntax("stablehlo.get_dimension_size", Format("$operand, dim = $dimension attr-dict : %functional"))
mlir_syntax(
    "stablehlo.set_dimension_size",
    Format("$operand, $size, dim = $dimension attr-dict : %functional"),
)

# -- reductions ----------------------------------------------------------------------------------

# -- contractions ----------------------------------------------------------------------------------

mlir_syntax("stablehlo.dot", Format("$lhs, $rhs%precision attr-dict : %functional"))
mlir_syntax("stablehlo.dot_general", Format("$lhs, $rhs, %dot_dims%precision attr-dict : %functional"))
# dynamic_conv's pretty form is convolution's; its padding is the third operand, not a window key.
# StableHLO defines no pretty form for it (stablehlo-opt prints it generic): read, not printed.
_DYNAMIC_CONV = Format(
    "(%operands) dim_numbers = %conv_dims, window = {%window} attr-dict : %functional")
_DYNAMIC_CONV.printed = False
mlir_syntax("stablehlo.dynamic_conv", _DYNAMIC_CONV)
