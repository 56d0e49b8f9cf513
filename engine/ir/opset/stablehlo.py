"""Every StableHLO op (docs/spec.md of openxla/stablehlo) and the legacy ops JAX still emits:
operands, attributes, regions, results, category and traits."""
from __future__ import annotations

from ..opdefs import OPS, define

ACCURACY = "result_accuracy:accuracy=DEFAULT"

# -- element-wise ------------------------------------------------------------------------------

# abs and negate change only the sign bit, real and imag pick parts: they move bits, like the
# integer-only ops here; the others compute with float values (convert flushes on TPUs, tpu.md §4.4).
for _name in (
    "abs", "ceil", "convert", "count_leading_zeros", "floor", "imag", "not", "negate", "popcnt",
    "real", "round_nearest_afz", "round_nearest_even", "sign",
):
    define(f"stablehlo.{_name}", "operand",
           float_math=_name in ("ceil", "convert", "floor", "round_nearest_afz", "round_nearest_even", "sign"))

for _name in (
    "cbrt", "cosine", "exponential", "exponential_minus_one", "log", "log_plus_one", "logistic",
    "rsqrt", "sine", "sqrt", "tan", "tanh",
):
    define(f"stablehlo.{_name}", "operand", ACCURACY, float_math=True)

define("stablehlo.is_finite", "x")

for _name in (
    "add", "atan2", "divide", "maximum", "minimum", "multiply", "power", "remainder", "shift_left",
    "shift_right_arithmetic", "shift_right_logical", "subtract", "and", "or", "xor",
):
    define(f"stablehlo.{_name}", "lhs rhs", commutative=_name in ("add", "and", "maximum", "minimum", "multiply",
                                                                  "or", "xor"),
           float_math=_name in ("add", "atan2", "divide", "maximum", "minimum", "multiply", "power", "remainder",
                                "subtract"))

define("stablehlo.complex", "lhs rhs")
define(
    "stablehlo.compare",
    "lhs rhs",
    "comparison_direction:enum.comparison_direction compare_type:enum.comparison_type?",
    float_math=True,
)
define("stablehlo.select", "pred on_true on_false")
define("stablehlo.clamp", "min operand max", float_math=True)
define("stablehlo.reduce_precision", "operand", "exponent_bits:i32 mantissa_bits:i32", float_math=True)
define("stablehlo.bitcast_convert", "operand", category="data_movement")
define("stablehlo.map", "inputs*", "dimensions:i64s", regions="computation", expandable_body=True)

# -- quantization ------------------------------------------------------------------------------

define("stablehlo.uniform_quantize", "operand", category="quantization")
define("stablehlo.uniform_dequantize", "operand", category="quantization")

# -- constants and generators --------------------------------------------------------------------

define("stablehlo.iota", "", "iota_dimension:i64", category="constant")
define("stablehlo.dynamic_iota", "output_shape", "iota_dimension:i64", category="constant")
define("stablehlo.rng", "a b shape", "rng_distribution:enum.rng_distribution", category="constant", effect="not_replayable")
define(
    "stablehlo.rng_bit_generator",
    "initial_state",
    "rng_algorithm:enum.rng_algorithm",
    results="2", result_names="output_state output",
    category="constant", effect="not_replayable"
)

# -- data movement -----------------------------------------------------------------------------

_MOVE = "data_movement"
define("stablehlo.broadcast_in_dim", "operand", "broadcast_dimensions:i64s", category=_MOVE)
define("stablehlo.broadcast", "operand", "broadcast_sizes:i64s", category=_MOVE)
define(
    "stablehlo.dynamic_broadcast_in_dim",
    "operand output_dimensions",
    "broadcast_dimensions:i64s known_expanding_dimensions:i64s? known_nonexpanding_dimensions:i64s?",
    category=_MOVE,
)
define("stablehlo.transpose", "operand", "permutation:i64s", category=_MOVE)
define("stablehlo.reverse", "operand", "dimensions:i64s", category=_MOVE)
define("stablehlo.reshape", "operand", category=_MOVE)
define("stablehlo.dynamic_reshape", "operand output_shape", category=_MOVE)
define("stablehlo.concatenate", "inputs*", "dimension:i64", category=_MOVE)
define(
    "stablehlo.pad",
    "operand padding_value",
    "edge_padding_low:i64s edge_padding_high:i64s interior_padding:i64s",
    category=_MOVE,
)
define(
    "stablehlo.dynamic_pad",
    "operand padding_value edge_padding_low edge_padding_high interior_padding",
    category=_MOVE,
)
define("stablehlo.slice", "operand", "start_indices:i64s limit_indices:i64s strides:i64s", category=_MOVE, may_run_async=True)
define("stablehlo.real_dynamic_slice", "operand start_indices limit_indices strides", category=_MOVE)
define("stablehlo.dynamic_slice", "operand start_indices*", "slice_sizes:i64s", category=_MOVE, may_run_async=True)
define("stablehlo.dynamic_update_slice", "operand update start_indices*", category=_MOVE, may_run_async=True)
define(
    "stablehlo.gather",
    "operand start_indices",
    "dimension_numbers:gather slice_sizes:i64s indices_are_sorted:bool=false",
    category=_MOVE,
)
define(
    "stablehlo.dynamic_gather",
    "operand start_indices slice_sizes",
    "dimension_numbers:gather indices_are_sorted:bool=false",
    category=_MOVE,
)
define("stablehlo.torch_index_select", "operand index", "dim:i64 batch_dims:i64", category=_MOVE)
define(
    "stablehlo.scatter",
    "inputs* scatter_indices updates*",
    "scatter_dimension_numbers:scatter indices_are_sorted:bool=false unique_indices:bool=false",
    regions="update_computation",
    results="*",
    category=_MOVE,
    same_variadic_size=True, expandable_body=True
)
define("stablehlo.get_tuple_element", "operand", "index:i32", category="structural")
define("stablehlo.tuple", "val*", category="structural")
define("stablehlo.get_dimension_size", "operand", "dimension:i64", category="structural")
define("stablehlo.set_dimension_size", "operand size", "dimension:i64", category="structural")

# -- reductions ----------------------------------------------------------------------------------

_RED = "reduction"
define(
    "stablehlo.reduce_window",
    "inputs* init_values*",
    "window_dimensions:i64s window_strides:i64s? base_dilations:i64s? window_dilations:i64s? padding:elements?",
    regions="body",
    results="*",
    category=_RED,
    same_variadic_size=True, expandable_body=True
)
define(
    "stablehlo.select_and_scatter",
    "operand source init_value",
    "window_dimensions:i64s? window_strides:i64s? padding:elements?",
    regions="select scatter",
    category=_RED, expandable_body=True
)
define(
    "stablehlo.sort",
    "inputs*",
    "dimension:i64=-1 is_stable:bool=false",
    regions="comparator",
    results="*",
    category=_RED, expandable_body=True
)
define(
    "stablehlo.batch_norm_grad",
    "operand scale mean variance grad_output",
    "epsilon:f32 feature_index:i64",
    results="3", result_names="grad_operand grad_scale grad_offset",
    category=_RED, float_math=True,
)
define(
    "stablehlo.batch_norm_inference",
    "operand scale offset mean variance",
    "epsilon:f32 feature_index:i64",
    category=_RED, float_math=True,
)
define(
    "stablehlo.batch_norm_training",
    "operand scale offset",
    "epsilon:f32 feature_index:i64",
    results="3", result_names="output batch_mean batch_var",
    category=_RED, float_math=True,
)

# -- contractions ----------------------------------------------------------------------------------

_DOT = "contraction"
define("stablehlo.dot", "lhs rhs", "precision_config:precision?", category=_DOT, float_math=True)
define(
    "stablehlo.dot_general",
    "lhs rhs",
    "dot_dimension_numbers:dot precision_config:precision? algorithm:algorithm?",
    category=_DOT, float_math=True,
)
_CONV_ATTRS = (
    "window_strides:i64s? lhs_dilation:i64s? rhs_dilation:i64s? window_reversal:bools? "
    "dimension_numbers:conv feature_group_count:i64 batch_group_count:i64 precision_config:precision?"
)
define("stablehlo.convolution", "lhs rhs", "padding:elements? " + _CONV_ATTRS, category=_DOT, float_math=True)
define("stablehlo.dynamic_conv", "lhs rhs padding", _CONV_ATTRS, category=_DOT, float_math=True)
define("stablehlo.einsum", "lhs rhs", "einsum_config:str", category=_DOT, float_math=True)
define("stablehlo.unary_einsum", "operand", "einsum_config:str", category=_DOT, float_math=True)
define("stablehlo.fft", "operand", "fft_type:enum.fft_type fft_length:i64s", category=_DOT, float_math=True)
define("stablehlo.cholesky", "a", "lower:bool=false", category=_DOT, float_math=True)
define(
    "stablehlo.triangular_solve",
    "a b",
    "left_side:bool lower:bool unit_diagonal:bool transpose_a:enum.transpose",
    category=_DOT, float_math=True,
)

# -- control flow -----------------------------------------------------------------------------------

define("stablehlo.if", "pred", regions="true_branch false_branch", results="*", category="control_flow", aliasing_regions=True,
       results_from="returned")
define("stablehlo.case", "index", regions="branches*", results="*", category="control_flow", aliasing_regions=True,
       results_from="returned")
define("stablehlo.return", "results*", results="0", category="structural", terminator=True)

# -- collectives and communication ------------------------------------------------------------------

_COLL = "collective"
_GROUPS = "replica_groups:groups channel_handle:channel? use_global_device_ids:unit?"
define("stablehlo.all_gather", "operands*", "all_gather_dim:i64 " + _GROUPS, results="*", category=_COLL, effect="not_replayable", may_run_async=True, collective=True, process_groups="reduction")
define("stablehlo.all_reduce", "operands*", _GROUPS, regions="computation", results="*", category=_COLL, effect="not_replayable", may_run_async=True, collective=True, process_groups="reduction", expandable_body=True)
define(
    "stablehlo.reduce_scatter",
    "operand",
    "scatter_dimension:i64 " + _GROUPS,
    regions="computation",
    category=_COLL, effect="not_replayable", may_run_async=True, collective=True, process_groups="reduction", expandable_body=True
)
define(
    "stablehlo.all_to_all",
    "operands*",
    "split_dimension:i64 concat_dimension:i64 split_count:i64 replica_groups:groups channel_handle:channel?",
    results="*",
    category=_COLL, effect="not_replayable", may_run_async=True, collective=True, process_groups="split"
)
# With `has_dynamic_root` the last operand holds, per broadcast operand, the source's index in its
# process group; without it the source is each group's first process.
define(
    "stablehlo.collective_broadcast",
    "operands*",
    "replica_groups:groups channel_handle:channel? has_dynamic_root:unit?",
    results="*",
    category=_COLL, effect="not_replayable", may_run_async=True, collective=True, process_groups="split"
)
# With `has_dynamic_root` the last operand holds, per reduced operand, its root's index in the
# process group; without it the root is each group's first process.
define(
    "stablehlo.collective_reduce",
    "operands*",
    _GROUPS + " has_dynamic_root:unit?",
    regions="computation",
    results="*",
    category=_COLL, effect="not_replayable", may_run_async=True, collective=True, process_groups="reduction",
    expandable_body=True
)
define(
    "stablehlo.collective_permute",
    "operand",
    "source_target_pairs:elements channel_handle:channel?",
    category=_COLL, effect="not_replayable", may_run_async=True, collective=True, process_groups="pairs"
)
define("stablehlo.cross-replica-sum", "operand", "replica_groups:elements", category=_COLL, effect="not_replayable", collective=True, process_groups="reduction")
define("stablehlo.replica_id", "", category=_COLL, effect="impure")
define("stablehlo.partition_id", "", category=_COLL, effect="impure")
define(
    "stablehlo.send",
    "inputs* token",
    "channel_handle:channel is_host_transfer:bool=false source_target_pairs:elements?",
    category=_COLL, effect="not_replayable"
)
define(
    "stablehlo.recv",
    "token",
    "channel_handle:channel is_host_transfer:bool=false source_target_pairs:elements?",
    results="*",
    category=_COLL, effect="not_replayable"
)
define("stablehlo.infeed", "token", "infeed_config:str='' layout:any?", results="*", category=_COLL, effect="not_replayable")
define("stablehlo.outfeed", "inputs* token", "outfeed_config:str=''", category=_COLL, effect="not_replayable")
define("stablehlo.after_all", "inputs*", category="structural", effect="impure")
define("stablehlo.create_token", "", category="structural", effect="impure")

# -- escape hatches ----------------------------------------------------------------------------------

define(
    "stablehlo.custom_call",
    "inputs*",
    "call_target_name:str has_side_effect:bool=false backend_config:any? api_version:any? "
    "called_computations:symbols=[] operand_layouts:any? result_layouts:any? output_operand_aliases:aliases=[] "
    "result_tilings:any?",
    results="*",
    category="custom_call", effect="not_replayable"
)
define(
    "stablehlo.composite",
    "inputs*",
    "name:str composite_attributes:dict={} decomposition:symbol version:i32=0",
    regions="composite_regions*",
    results="*",
    category="structural", effect="impure", aliasing_regions=True, callee_attr="decomposition",
    results_from="returned"
)

# -- quantization: ops whose Inputs/Outputs tables allow per-tensor quantized tensors only --------
# (reduce and optimization_barrier, defined in structural.py, say so there)

for _name in (
    "abs", "atan2", "batch_norm_grad", "batch_norm_inference", "batch_norm_training", "cbrt", "ceil",
    "cholesky", "clamp", "collective_broadcast", "collective_permute", "compare", "concatenate",
    "cosine", "divide", "dynamic_gather", "dynamic_iota", "dynamic_pad", "dynamic_slice",
    "dynamic_update_slice", "exponential", "exponential_minus_one", "floor", "gather", "iota",
    "is_finite", "log", "log_plus_one", "logistic", "map", "maximum", "minimum", "multiply",
    "negate", "pad", "power", "reduce_precision", "reduce_scatter",
    "reduce_window", "remainder", "reverse", "round_nearest_afz", "round_nearest_even", "rsqrt",
    "scatter", "select", "select_and_scatter", "sign", "sine", "slice", "sort", "sqrt", "subtract",
    "tan", "tanh", "triangular_solve", "all_gather", "all_reduce", "all_to_all",
):
    OPS[f"stablehlo.{_name}"].per_tensor_quantized = True
