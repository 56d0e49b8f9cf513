"""XLA HLO's own ops: the opcodes StableHLO has no op for (dialect `hlo`).

An HLO module read by the HLO frontend uses StableHLO's ops wherever the semantics are the same;
these are the rest (openxla/xla docs/operation_semantics.md and hlo/evaluator/hlo_evaluator.cc):
calls the compiler made (fusion, async wrappers), layout and scheduling markers (copy, bitcast,
domain, add_dependency) and a few arithmetic and state ops. Tuples are values here (TupleType), so
ops like copy_start and async_start produce one tuple.
"""
from __future__ import annotations

from ..opdefs import NO_TYPE_RULE, define

# fusion: the compiler's fused computation, run like a call (the debugger steps into its frame);
# `kind` (kLoop, kInput, kOutput, kCustom) is shown, never changes what it computes.
define("hlo.fusion", "operands*", "callee:symbol kind:str?", results="*", family="structural",
       effect="impure", aliasing_regions=True, callee_attr="callee", owns_callee=True, results_from="returned",
       hlo="fusion")

# conditional: operand 0 selects the branch (pred: true -> region 0, false -> region 1; s32 index:
# out of range -> the last region); operand 1+i is the one argument of region i. Not
# aliasing_regions: a region's argument k is not the op's operand k (the debugger keeps it).
define("hlo.conditional", "selector branch_operands*", regions="branches*", results="*",
       family="control_flow", results_from="returned", hlo="conditional")

# The one op whose indexing is physical: the operand's bytes in its layout, re-read in the result's.
define("hlo.bitcast", "operand", family="data_movement", hlo="bitcast", types=NO_TYPE_RULE)
define("hlo.copy", "operand", family="data_movement", hlo="copy", types=NO_TYPE_RULE)
# copy_start -> (destination, source, u32 context); copy_done -> the destination.
define("hlo.copy_start", "operand", "cross_program_prefetch_index:i64?", family="data_movement", hlo="copy-start")
define("hlo.copy_done", "operand", family="data_movement", hlo="copy-done")

# async_start runs `callee` on its operands and returns ((operands...), result, state...);
# async_update passes the tuple on; async_done takes element 1, the callee's result.
# `execution_thread` names the thread XLA runs the callee on (display only).
define("hlo.async_start", "operands*", "callee:symbol execution_thread:str?", family="structural",
       effect="impure", aliasing_regions=True, callee_attr="callee", owns_callee=True, hlo="async-start")
define("hlo.async_update", "operand", family="structural", hlo="async-update", types=NO_TYPE_RULE)
define("hlo.async_done", "operand", family="structural", hlo="async-done")

# Markers: a sharding domain boundary and a scheduling dependency on a token; both pass values on.
define("hlo.domain", "operand", "domain:any?", family="structural", hlo="domain", types=NO_TYPE_RULE)
define("hlo.add_dependency", "operand token", family="structural", hlo="add-dependency", types=NO_TYPE_RULE)

# stochastic_convert(x, random_bits): rounds x to the narrower float type up or down, by comparing
# the random bits with the bits x loses.
define("hlo.stochastic_convert", "operand random", family="elementwise", float_math=True, exact=True,
       hlo="stochastic-convert", types=NO_TYPE_RULE)
# set_dimension_size(x, size): marks dimension `dimension` of x as holding `size` elements.
define("hlo.set_dimension_size", "operand size", "dimension:i64", family="data_movement", hlo="set-dimension-size",
       types=NO_TYPE_RULE)
# The RNG state of a module: returns the counter (u64[2]) and advances it by `delta`.
define("hlo.rng_get_and_update_state", "", "delta:i64", family="constant", effect="not_replayable",
       hlo="rng-get-and-update-state")
define("hlo.mulhi", "lhs rhs", family="elementwise", commutative=True, hlo="mulhi", types=NO_TYPE_RULE)
# shuffle (XLA HEAD), mode "rotate": each of `dimensions` rotated left by its entry of `shifts`
# (result[i] = operand[(i + shift) mod size]; xla/hlo/transforms/expanders/shuffle_expander.cc).
define("hlo.shuffle", "operand", "dimensions:i64s mode:str shifts:i64s", family="data_movement", hlo="shuffle")

# ragged_all_to_all(input, output, input_offsets, send_sizes, output_offsets, recv_sizes): each
# process sends the rows input[input_offsets[j] : +send_sizes[j]] to process j of its group, which
# writes them into its `output` at output_offsets[j] (offsets in the receiver's buffer).
define(
    "hlo.ragged_all_to_all",
    "input output input_offsets send_sizes output_offsets recv_sizes",
    "replica_groups:groups channel_handle:channel?",
    family="collective", effect="not_replayable", collective=True, process_groups="split",
    hlo="ragged-all-to-all", types=NO_TYPE_RULE,
)

# send/recv: point-to-point transfers on a channel (the grid's channels, as stablehlo.send/recv).
# send -> (data, u32 context, token) and send_done -> token; recv -> (data, u32 context, token)
# and recv_done -> (data, token). The transfer happens at send and recv; the -done ops pass it on.
# The channel may be left out where the frontend attribute _xla_send_recv_source_target_pairs names
# the peers (collective_ops_test.cc; engine/ops/hlo.py).
_CHANNEL = "channel_handle:channel? is_host_transfer:bool=false"
define("hlo.send", "operand token", _CHANNEL, family="collective", effect="not_replayable", hlo="send",
       types=NO_TYPE_RULE)
define("hlo.send_done", "operand", family="collective", effect="impure", hlo="send-done", types=NO_TYPE_RULE)
define("hlo.recv", "token", _CHANNEL, family="collective", effect="not_replayable", hlo="recv", types=NO_TYPE_RULE)
define("hlo.recv_done", "operand", family="collective", effect="impure", hlo="recv-done", types=NO_TYPE_RULE)
