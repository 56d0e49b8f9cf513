"""Ops outside the op sets proper: constants, control flow with custom syntax, func, and Shardy's
(sdy) mesh, manual computation and sharding ops."""
from __future__ import annotations

from ..opdefs import define

define("stablehlo.constant", "", "value:elements", category="constant", result_names="c", float_result_names="cst")


define("stablehlo.while", "operand*", regions="cond body", results="*", category="control_flow", aliasing_regions=True,
       entry_argument_names="iterArg", results_from="carried")


define(
    "stablehlo.reduce",
    "inputs* init_values*",
    "dimensions:i64s",
    regions="body",
    results="*",
    category="reduction",
    same_variadic_size=True, expandable_body=True, per_tensor_quantized=True
)


define("stablehlo.optimization_barrier", "operand*", results="*", category="structural", per_tensor_quantized=True)
# async_start runs its body (one collective or slice op) and returns a future of the op's results;
# the rendezvous, if any, is the collective inside, so async_start itself is not a collective.
define("stablehlo.async_start", "operands*", regions="body", category="collective")
define("stablehlo.async_done", "futures*", results="*", category="collective")


define(
    "func.func",
    "",
    "sym_name:str function_type:type sym_visibility:str? arg_attrs:any? res_attrs:any?",
    regions="body",
    results="0",
    category="structural",
)


define("func.call", "operands*", "callee:symbol", results="*", category="structural", effect="impure", aliasing_regions=True, callee_attr="callee",
       results_from="returned")
define("func.return", "operands*", results="0", category="structural", terminator=True)


define("sdy.mesh", "", "sym_name:str mesh:any", results="0", category="structural", effect="not_replayable")


define(
    "sdy.manual_computation",
    "tensors*",
    "in_shardings:any out_shardings:any manual_axes:any",
    regions="body",
    results="*",
    category="collective", effect="not_replayable", grid_layout=True
)
# MLIR's own tensor constant and cast, which StableHLO's tests (not JAX) write among StableHLO
# ops: `arith.constant dense<...> : T` and `tensor.cast %x : T to U` between compatible types.
define("arith.constant", "", "value:elements", category="constant", result_names="cst")  # tensors only: MLIR names those %cst
define("tensor.cast", "source", category="data_movement", result_names="cast")
# MLIR dialects JAX and XLA still print in some programs: their block terminators.
define("mhlo.return", "results*", results="0", category="structural", terminator=True)
define("sdy.return", "results*", results="0", category="structural", terminator=True, effect="not_replayable")


define("sdy.sharding_constraint", "input", "sharding:any", category="collective", effect="not_replayable", grid_layout=True)
define("sdy.reshard", "input", "sharding:any", category="collective", effect="not_replayable", grid_layout=True)
