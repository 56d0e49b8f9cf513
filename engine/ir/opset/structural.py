"""Ops outside the op sets proper: constants, control flow with custom syntax, func, and Shardy's
(sdy) mesh, manual computation and sharding ops."""
from __future__ import annotations

from ..opdefs import NO_HLO, NO_TYPE_RULE, define

define("stablehlo.constant", "", "value:elements", family="constant", result_names="c", float_result_names="cst",
       hlo="constant")


define("stablehlo.while", "operand*", regions="cond body", results="*", family="control_flow", aliasing_regions=True,
       entry_argument_names="iterArg", results_from="carried", hlo="while")


define(
    "stablehlo.reduce",
    "inputs* init_values*",
    "dimensions:i64s",
    regions="body",
    results="*",
    family="reduction",
    same_variadic_size=True, expandable_body=True, per_tensor_quantized=True,
    hlo="reduce",
)


define("stablehlo.optimization_barrier", "operand*", results="*", family="structural", per_tensor_quantized=True,
       hlo="opt-barrier")
# async_start runs its body (one collective or slice op) and returns a future of the op's results;
# the rendezvous, if any, is the collective inside, so async_start itself is not a collective.
define("stablehlo.async_start", "operands*", regions="body", family="collective", hlo=NO_HLO)
define("stablehlo.async_done", "futures*", results="*", family="collective", hlo=NO_HLO)


define(
    "func.func",
    "",
    "sym_name:str function_type:type sym_visibility:str? arg_attrs:any? res_attrs:any?",
    regions="body",
    results="0",
    family="structural",
    hlo=NO_HLO, types=NO_TYPE_RULE,
)


define("func.call", "operands*", "callee:symbol", results="*", family="structural", effect="impure",
       aliasing_regions=True, callee_attr="callee",
       results_from="returned", hlo="call")
define("func.return", "operands*", results="0", family="structural", terminator=True, hlo=NO_HLO)


define("sdy.mesh", "", "sym_name:str mesh:any", results="0", family="structural", effect="not_replayable", hlo=NO_HLO,
       types=NO_TYPE_RULE)


define(
    "sdy.manual_computation",
    "tensors*",
    "in_shardings:any out_shardings:any manual_axes:any",
    regions="body",
    results="*",
    family="collective", effect="not_replayable", grid_layout=True,
    hlo=NO_HLO, types=NO_TYPE_RULE,
)
# MLIR's own tensor constant and cast, which StableHLO's tests (not JAX) write among StableHLO
# ops: `arith.constant dense<...> : T` and `tensor.cast %x : T to U` between compatible types.
define("arith.constant", "", "value:elements", family="constant", result_names="cst",
       hlo=NO_HLO)  # tensors only: MLIR names those %cst
define("tensor.cast", "source", family="data_movement", result_names="cast", hlo=NO_HLO)
# MLIR dialects JAX and XLA still print in some programs: their block terminators.
define("mhlo.return", "results*", results="0", family="structural", terminator=True, hlo=NO_HLO, types=NO_TYPE_RULE)
define("sdy.return", "results*", results="0", family="structural", terminator=True, effect="not_replayable",
       hlo=NO_HLO, types=NO_TYPE_RULE)


define("sdy.sharding_constraint", "input", "sharding:any", family="collective", effect="not_replayable",
       grid_layout=True, hlo=NO_HLO, types=NO_TYPE_RULE)
define("sdy.reshard", "input", "sharding:any", family="collective", effect="not_replayable", grid_layout=True,
       hlo=NO_HLO, types=NO_TYPE_RULE)
