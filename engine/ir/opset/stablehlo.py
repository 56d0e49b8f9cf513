"""Every StableHLO op (docs/spec.md of openxla/stablehlo) and the legacy ops JAX still emits:
operands, attributes, regions, results, family and traits."""
from __future__ import annotations

from ..opdefs import NO_HLO, NO_TYPE_RULE, define

ACCURACY = "result_accuracy:accuracy=DEFAULT"

# -- element-wise ------------------------------------------------------------------------------

# The pretty formats (syntax/mlir/format.py) most element-wise ops share.
_UNARY = "$operand attr-dict : %same"
_BINARY = "$lhs, $rhs attr-dict : %same"


def _elementwise(name: str, operands: str, types: str, syntax: str, attrs: str = "", **facts) -> None:
    """An element-wise StableHLO op whose HLO opcode is its name spelled with dashes."""
    define(f"stablehlo.{name}", operands, attrs, types=types, syntax=syntax, hlo=name.replace("_", "-"), **facts)


# Unary ops. abs and negate change only the sign bit, real and imag pick parts: they move bits,
# like the integer-only ops; the others compute with float values (convert flushes on TPUs,
# tpu.md §4.4). abs, real and imag have rules of their own (a complex operand's result is real).
_elementwise("abs", "operand", "own", _UNARY, per_tensor_quantized=True)
_elementwise("ceil", "operand", "float_or_quantized", _UNARY, float_math=True, exact=True, per_tensor_quantized=True)
_elementwise("convert", "operand", "own", _UNARY, float_math=True, exact=True)
_elementwise("count_leading_zeros", "operand", "int", _UNARY)
_elementwise("floor", "operand", "float_or_quantized", _UNARY, float_math=True, exact=True, per_tensor_quantized=True)
_elementwise("imag", "operand", "own", _UNARY)
_elementwise("not", "operand", "bool_or_int", _UNARY)
_elementwise("negate", "operand", "int_float_complex_quantized", _UNARY, per_tensor_quantized=True)
_elementwise("popcnt", "operand", "int", _UNARY)
_elementwise("real", "operand", "own", _UNARY)
_elementwise("round_nearest_afz", "operand", "float_or_quantized", _UNARY, float_math=True, exact=True,
             per_tensor_quantized=True)
_elementwise("round_nearest_even", "operand", "float_or_quantized", _UNARY, float_math=True, exact=True,
             per_tensor_quantized=True)
_elementwise("sign", "operand", "signed_int_float_complex_quantized", _UNARY, float_math=True, exact=True,
             per_tensor_quantized=True)

# The transcendental functions: each may say how accurate it must be (result_accuracy).
for _name in (
    "cbrt", "cosine", "exponential", "exponential_minus_one", "log", "log_plus_one", "logistic",
    "rsqrt", "sine", "sqrt", "tan", "tanh",
):
    _elementwise(_name, "operand", "float_complex_quantized", _UNARY, ACCURACY, float_math=True, transcendental=True,
                 per_tensor_quantized=True)

_elementwise("is_finite", "x", "own", "%operands attr-dict : %functional", per_tensor_quantized=True)

# Binary ops (commutative ones may stand for a reduce body in the compact `applies` form).
_elementwise("add", "lhs rhs", "any", _BINARY, commutative=True, float_math=True, exact=True)
_elementwise("atan2", "lhs rhs", "float_complex_quantized", _BINARY, float_math=True, transcendental=True,
             per_tensor_quantized=True)
_elementwise("divide", "lhs rhs", "int_float_complex_quantized", _BINARY, float_math=True, exact=True,
             per_tensor_quantized=True)
_elementwise("maximum", "lhs rhs", "any", _BINARY, commutative=True, float_math=True, exact=True,
             per_tensor_quantized=True)
_elementwise("minimum", "lhs rhs", "any", _BINARY, commutative=True, float_math=True, exact=True,
             per_tensor_quantized=True)
_elementwise("multiply", "lhs rhs", "any", _BINARY, commutative=True, float_math=True, exact=True,
             per_tensor_quantized=True)
_elementwise("power", "lhs rhs", "int_float_complex_quantized", _BINARY, float_math=True, transcendental=True,
             per_tensor_quantized=True)
_elementwise("remainder", "lhs rhs", "int_float_complex_quantized", _BINARY, float_math=True, exact=True,
             per_tensor_quantized=True)
_elementwise("shift_left", "lhs rhs", "int", _BINARY)
_elementwise("shift_right_arithmetic", "lhs rhs", "int", _BINARY)
_elementwise("shift_right_logical", "lhs rhs", "int", _BINARY)
_elementwise("subtract", "lhs rhs", "int_float_complex_quantized", _BINARY, float_math=True, exact=True,
             per_tensor_quantized=True)
_elementwise("and", "lhs rhs", "bool_or_int", _BINARY, commutative=True)
_elementwise("or", "lhs rhs", "bool_or_int", _BINARY, commutative=True)
_elementwise("xor", "lhs rhs", "bool_or_int", _BINARY, commutative=True)

_elementwise("complex", "lhs rhs", "own", "%operands attr-dict : %complex")
_elementwise("compare", "lhs rhs", "own",
             "$comparison_direction, $lhs, $rhs{?, $compare_type?} attr-dict : %functional",
             "comparison_direction:enum.comparison_direction compare_type:enum.comparison_type?",
             float_math=True, exact=True, per_tensor_quantized=True)
_elementwise("select", "pred on_true on_false", "own", "%operands attr-dict : %select", per_tensor_quantized=True)
_elementwise("clamp", "min operand max", "own", "$min, $operand, $max attr-dict : %same", float_math=True, exact=True,
             per_tensor_quantized=True)
_elementwise("reduce_precision", "operand", "own", "$operand, format = %expmant attr-dict : %same",
             "exponent_bits:i32 mantissa_bits:i32", float_math=True, exact=True, per_tensor_quantized=True)
define("stablehlo.bitcast_convert", "operand", family="data_movement", hlo="bitcast-convert",
       syntax="%operands attr-dict : %functional")
define("stablehlo.map", "inputs*", "dimensions:i64s", regions="computation", expandable_body=True, hlo="map",
       per_tensor_quantized=True)

# -- quantization ------------------------------------------------------------------------------

define("stablehlo.uniform_quantize", "operand", family="quantization", hlo=NO_HLO, syntax="$operand attr-dict : %same")
define("stablehlo.uniform_dequantize", "operand", family="quantization", hlo=NO_HLO,
       syntax="$operand attr-dict : %same")

# -- constants and generators --------------------------------------------------------------------

define("stablehlo.iota", "", "iota_dimension:i64", family="constant", hlo="iota", per_tensor_quantized=True,
       syntax="dim = $iota_dimension attr-dict : %results")
define("stablehlo.dynamic_iota", "output_shape", "iota_dimension:i64", family="constant", hlo=NO_HLO,
       per_tensor_quantized=True, syntax="$output_shape, dim = $iota_dimension attr-dict : %functional")
define("stablehlo.rng", "a b shape", "rng_distribution:enum.rng_distribution", family="constant",
       effect="not_replayable", hlo="rng",
       syntax="$a, $b, $shape, distribution = $rng_distribution attr-dict : %functional")
define(
    "stablehlo.rng_bit_generator",
    "initial_state",
    "rng_algorithm:enum.rng_algorithm",
    results="2", result_names="output_state output",
    family="constant", effect="not_replayable",
    hlo="rng-bit-generator", syntax="$initial_state, algorithm = $rng_algorithm attr-dict : %functional",
)

# -- data movement -----------------------------------------------------------------------------

_MOVE = "data_movement"
define("stablehlo.broadcast_in_dim", "operand", "broadcast_dimensions:i64s", family=_MOVE, hlo="broadcast",
       syntax="$operand, dims = $broadcast_dimensions attr-dict : %functional")
define("stablehlo.broadcast", "operand", "broadcast_sizes:i64s", family=_MOVE, hlo=NO_HLO,
       syntax="$operand, sizes = $broadcast_sizes attr-dict : %functional")
define(
    "stablehlo.dynamic_broadcast_in_dim",
    "operand output_dimensions",
    "broadcast_dimensions:i64s known_expanding_dimensions:i64s? known_nonexpanding_dimensions:i64s?",
    family=_MOVE,
    hlo=NO_HLO, syntax="$operand, $output_dimensions, dims = $broadcast_dimensions attr-dict : %functional",
)
define("stablehlo.transpose", "operand", "permutation:i64s", family=_MOVE, hlo="transpose",
       syntax="$operand, dims = $permutation attr-dict : %functional")
define("stablehlo.reverse", "operand", "dimensions:i64s", family=_MOVE, hlo="reverse", per_tensor_quantized=True,
       syntax="$operand, dims = $dimensions attr-dict : %same")
define("stablehlo.reshape", "operand", family=_MOVE, hlo="reshape", syntax="%operands attr-dict : %functional")
define("stablehlo.dynamic_reshape", "operand output_shape", family=_MOVE, hlo="dynamic-reshape",
       syntax="%operands attr-dict : %functional")
define("stablehlo.concatenate", "inputs*", "dimension:i64", family=_MOVE, hlo="concatenate", per_tensor_quantized=True,
       syntax="$inputs, dim = $dimension attr-dict : %functional")
define(
    "stablehlo.pad",
    "operand padding_value",
    "edge_padding_low:i64s edge_padding_high:i64s interior_padding:i64s",
    family=_MOVE,
    hlo="pad", per_tensor_quantized=True,
    syntax="$operand, $padding_value, low = $edge_padding_low, high = $edge_padding_high, "
           "interior = $interior_padding attr-dict : %functional",
)
define(
    "stablehlo.dynamic_pad",
    "operand padding_value edge_padding_low edge_padding_high interior_padding",
    family=_MOVE,
    hlo=NO_HLO, per_tensor_quantized=True, syntax="%operands attr-dict : %functional",
)
define("stablehlo.slice", "operand", "start_indices:i64s limit_indices:i64s strides:i64s", family=_MOVE,
       may_run_async=True, hlo="slice", per_tensor_quantized=True, syntax="$operand %slice attr-dict : %functional")
define("stablehlo.real_dynamic_slice", "operand start_indices limit_indices strides", family=_MOVE, hlo=NO_HLO,
       types=NO_TYPE_RULE, syntax="%operands attr-dict : %functional")
define("stablehlo.dynamic_slice", "operand start_indices*", "slice_sizes:i64s", family=_MOVE, may_run_async=True,
       hlo="dynamic-slice", per_tensor_quantized=True,
       syntax="$operand, $start_indices, sizes = $slice_sizes attr-dict : %functional")
define("stablehlo.dynamic_update_slice", "operand update start_indices*", family=_MOVE, may_run_async=True,
       hlo="dynamic-update-slice", per_tensor_quantized=True, syntax="%operands attr-dict : %functional")
define(
    "stablehlo.gather",
    "operand start_indices",
    "dimension_numbers:gather slice_sizes:i64s indices_are_sorted:bool=false",
    family=_MOVE,
    hlo="gather", per_tensor_quantized=True,
)
define(
    "stablehlo.dynamic_gather",
    "operand start_indices slice_sizes",
    "dimension_numbers:gather indices_are_sorted:bool=false",
    family=_MOVE,
    hlo=NO_HLO, per_tensor_quantized=True,
)
define("stablehlo.torch_index_select", "operand index", "dim:i64 batch_dims:i64", family=_MOVE, hlo=NO_HLO,
       types=NO_TYPE_RULE)
define(
    "stablehlo.scatter",
    "inputs* scatter_indices updates*",
    "scatter_dimension_numbers:scatter indices_are_sorted:bool=false unique_indices:bool=false",
    regions="update_computation",
    results="*",
    family=_MOVE,
    same_variadic_size=True, expandable_body=True,
    hlo="scatter", per_tensor_quantized=True,
)
define("stablehlo.get_tuple_element", "operand", "index:i32", family="structural", hlo="get-tuple-element",
       syntax="$operand[$index] attr-dict : %functional")
define("stablehlo.tuple", "val*", family="structural", hlo="tuple", syntax="$val attr-dict : %tuple")
define("stablehlo.get_dimension_size", "operand", "dimension:i64", family="structural", hlo="get-dimension-size",
       syntax="$operand, dim = $dimension attr-dict : %functional")
define("stablehlo.set_dimension_size", "operand size", "dimension:i64", family="structural", hlo=NO_HLO,
       syntax="$operand, $size, dim = $dimension attr-dict : %functional")

# -- reductions ----------------------------------------------------------------------------------

_RED = "reduction"
define(
    "stablehlo.reduce_window",
    "inputs* init_values*",
    "window_dimensions:i64s window_strides:i64s? base_dilations:i64s? window_dilations:i64s? padding:elements?",
    regions="body",
    results="*",
    family=_RED,
    same_variadic_size=True, expandable_body=True,
    hlo="reduce-window", per_tensor_quantized=True,
)
define(
    "stablehlo.select_and_scatter",
    "operand source init_value",
    "window_dimensions:i64s? window_strides:i64s? padding:elements?",
    regions="select scatter",
    family=_RED, expandable_body=True,
    hlo="select-and-scatter", per_tensor_quantized=True,
)
define(
    "stablehlo.sort",
    "inputs*",
    "dimension:i64=-1 is_stable:bool=false",
    regions="comparator",
    results="*",
    family=_RED, expandable_body=True,
    hlo="sort", per_tensor_quantized=True,
)
define(
    "stablehlo.batch_norm_grad",
    "operand scale mean variance grad_output",
    "epsilon:f32 feature_index:i64",
    results="3", result_names="grad_operand grad_scale grad_offset",
    family=_RED, float_math=True,
    hlo="batch-norm-grad", per_tensor_quantized=True,
)
define(
    "stablehlo.batch_norm_inference",
    "operand scale offset mean variance",
    "epsilon:f32 feature_index:i64",
    family=_RED, float_math=True,
    hlo="batch-norm-inference", per_tensor_quantized=True,
)
define(
    "stablehlo.batch_norm_training",
    "operand scale offset",
    "epsilon:f32 feature_index:i64",
    results="3", result_names="output batch_mean batch_var",
    family=_RED, float_math=True,
    hlo="batch-norm-training", per_tensor_quantized=True,
)

# -- contractions ----------------------------------------------------------------------------------

_DOT = "contraction"
define("stablehlo.dot", "lhs rhs", "precision_config:precision?", family=_DOT, float_math=True, hlo=NO_HLO,
       syntax="$lhs, $rhs%precision attr-dict : %functional")
define(
    "stablehlo.dot_general",
    "lhs rhs",
    "dot_dimension_numbers:dot precision_config:precision? algorithm:algorithm?",
    family=_DOT, float_math=True,
    hlo="dot", syntax="$lhs, $rhs, %dot_dims%precision attr-dict : %functional",
)
_CONV_ATTRS = (
    "window_strides:i64s? lhs_dilation:i64s? rhs_dilation:i64s? window_reversal:bools? "
    "dimension_numbers:conv feature_group_count:i64 batch_group_count:i64 precision_config:precision?"
)
define("stablehlo.convolution", "lhs rhs", "padding:elements? " + _CONV_ATTRS, family=_DOT, float_math=True,
       hlo="convolution", syntax="(%operands) dim_numbers = %conv_dims, window = {%window} attr-dict : %functional")
define("stablehlo.dynamic_conv", "lhs rhs padding", _CONV_ATTRS, family=_DOT, float_math=True, hlo=NO_HLO)
define("stablehlo.einsum", "lhs rhs", "einsum_config:str", family=_DOT, float_math=True, hlo=NO_HLO,
       types=NO_TYPE_RULE, syntax="$lhs, $rhs, config = $einsum_config attr-dict : %functional")
define("stablehlo.unary_einsum", "operand", "einsum_config:str", family=_DOT, float_math=True, hlo=NO_HLO,
       types=NO_TYPE_RULE, syntax="$operand, config = $einsum_config attr-dict : %functional")
define("stablehlo.fft", "operand", "fft_type:enum.fft_type fft_length:i64s", family=_DOT, float_math=True, hlo="fft",
       syntax="$operand, type = $fft_type, length = $fft_length attr-dict : %functional")
define("stablehlo.cholesky", "a", "lower:bool=false", family=_DOT, float_math=True, hlo="cholesky",
       per_tensor_quantized=True, syntax="$a{?, lower = $lower?} attr-dict : %same")
define(
    "stablehlo.triangular_solve",
    "a b",
    "left_side:bool lower:bool unit_diagonal:bool transpose_a:enum.transpose",
    family=_DOT, float_math=True,
    hlo="triangular-solve", per_tensor_quantized=True,
)

# -- control flow -----------------------------------------------------------------------------------

define("stablehlo.if", "pred", regions="true_branch false_branch", results="*", family="control_flow",
       aliasing_regions=True,
       results_from="returned", hlo=NO_HLO)
define("stablehlo.case", "index", regions="branches*", results="*", family="control_flow", aliasing_regions=True,
       results_from="returned", hlo=NO_HLO)
define("stablehlo.return", "results*", results="0", family="structural", terminator=True, hlo=NO_HLO,
       syntax="$results attr-dict %operand_types")

# -- collectives and communication ------------------------------------------------------------------

_COLL = "collective"
_GROUPS = "replica_groups:groups channel_handle:channel? use_global_device_ids:unit?"
define("stablehlo.all_gather", "operands*", "all_gather_dim:i64 " + _GROUPS, results="*", family=_COLL,
       effect="not_replayable", may_run_async=True, collective=True, process_groups="reduction", hlo="all-gather",
       per_tensor_quantized=True)
define("stablehlo.all_reduce", "operands*", _GROUPS, regions="computation", results="*", family=_COLL,
       effect="not_replayable", may_run_async=True, collective=True, process_groups="reduction", expandable_body=True,
       hlo="all-reduce", per_tensor_quantized=True)
define(
    "stablehlo.reduce_scatter",
    "operand",
    "scatter_dimension:i64 " + _GROUPS,
    regions="computation",
    family=_COLL, effect="not_replayable", may_run_async=True, collective=True, process_groups="reduction", expandable_body=True,
    hlo="reduce-scatter", per_tensor_quantized=True,
)
define(
    "stablehlo.all_to_all",
    "operands*",
    "split_dimension:i64 concat_dimension:i64 split_count:i64 replica_groups:groups channel_handle:channel?",
    results="*",
    family=_COLL, effect="not_replayable", may_run_async=True, collective=True, process_groups="split",
    hlo="all-to-all", per_tensor_quantized=True,
)
# With `has_dynamic_root` the last operand holds, per broadcast operand, the source's index in its
# process group; without it the source is each group's first process.
define(
    "stablehlo.collective_broadcast",
    "operands*",
    "replica_groups:groups channel_handle:channel? has_dynamic_root:unit?",
    results="*",
    family=_COLL, effect="not_replayable", may_run_async=True, collective=True, process_groups="split",
    hlo="collective-broadcast", per_tensor_quantized=True,
)
# With `has_dynamic_root` the last operand holds, per reduced operand, its root's index in the
# process group; without it the root is each group's first process.
define(
    "stablehlo.collective_reduce",
    "operands*",
    _GROUPS + " has_dynamic_root:unit?",
    regions="computation",
    results="*",
    family=_COLL, effect="not_replayable", may_run_async=True, collective=True, process_groups="reduction",
    expandable_body=True,
    hlo="collective-reduce",
)
define(
    "stablehlo.collective_permute",
    "operand",
    "source_target_pairs:elements channel_handle:channel?",
    family=_COLL, effect="not_replayable", may_run_async=True, collective=True, process_groups="pairs",
    hlo="collective-permute", per_tensor_quantized=True,
)
define("stablehlo.cross-replica-sum", "operand", "replica_groups:elements", family=_COLL, effect="not_replayable",
       collective=True, process_groups="reduction", hlo=NO_HLO, types=NO_TYPE_RULE)
define("stablehlo.replica_id", "", family=_COLL, effect="impure", hlo="replica-id", syntax="attr-dict : %results")
define("stablehlo.partition_id", "", family=_COLL, effect="impure", hlo="partition-id", syntax="attr-dict : %results")
define(
    "stablehlo.send",
    "inputs* token",
    "channel_handle:channel is_host_transfer:bool=false source_target_pairs:elements?",
    family=_COLL, effect="not_replayable",
    hlo=NO_HLO,
)
define(
    "stablehlo.recv",
    "token",
    "channel_handle:channel is_host_transfer:bool=false source_target_pairs:elements?",
    results="*",
    family=_COLL, effect="not_replayable",
    hlo=NO_HLO,
)
define("stablehlo.infeed", "token", "infeed_config:str='' layout:any?", results="*", family=_COLL,
       effect="not_replayable", hlo="infeed")
define("stablehlo.outfeed", "inputs* token", "outfeed_config:str=''", family=_COLL, effect="not_replayable",
       hlo="outfeed")
define("stablehlo.after_all", "inputs*", family="structural", effect="impure", hlo="after-all",
       syntax="$inputs attr-dict : %variadic_same")
define("stablehlo.create_token", "", family="structural", effect="impure", hlo=NO_HLO, syntax="attr-dict : %results")

# -- escape hatches ----------------------------------------------------------------------------------

define(
    "stablehlo.custom_call",
    "inputs*",
    "call_target_name:str has_side_effect:bool=false backend_config:any? api_version:any? "
    "called_computations:symbols=[] operand_layouts:any? result_layouts:any? output_operand_aliases:aliases=[] "
    "result_tilings:any?",
    results="*",
    family="custom_call", effect="not_replayable",
    hlo="custom-call", syntax="%call_target($inputs) attr-dict : %functional",
)
define(
    "stablehlo.composite",
    "inputs*",
    "name:str composite_attributes:dict={} decomposition:symbol version:i32=0",
    regions="composite_regions*",
    results="*",
    family="structural", effect="impure", aliasing_regions=True, callee_attr="decomposition",
    results_from="returned",
    hlo=NO_HLO, syntax="$name $inputs attr-dict : %functional",
)
