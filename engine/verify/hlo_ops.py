"""Verifier checks: XLA HLO's own ops (ir/opset/hlo.py), which the StableHLO spec does not cover.

The rules are XLA's (xla/service/hlo_verifier.cc, docs/operation_semantics.md): a fusion calls its
computation like func.call; a conditional's branch i takes operand i+1 and every branch returns the
conditional's results; an async_start's tuple holds its operands and its computation's result.
"""
from __future__ import annotations

from ..ir.core import Operation
from ..ir.types import IntegerType, TensorType, TupleType
from .core import _block, _callee, _Context, _func_call, _is_scalar_of, _register, _returned
from .shape_inference import fail, fmt_types, types_compatible

# A fusion is a call of its fused computation: the same callee and signature rules.
_register("hlo.fusion")(_func_call)


@_register("hlo.conditional")
def _conditional(op: Operation, ctx: _Context) -> None:
    selector = op.operand_types[0]
    branches = len(op.regions)
    if _is_scalar_of(selector, IntegerType(1)):
        if branches != 2:
            fail(f"a pred selects between 2 branches, got {branches}", "branches")
    elif not (isinstance(selector, TensorType) and selector.shape == ()
              and isinstance(selector.element, IntegerType) and selector.element.width == 32
              and not selector.element.is_unsigned):
        fail(f"the selector must be tensor<i1> or tensor<i32>, got {selector}", "selector")
    if branches == 0:
        fail("needs at least one branch", "branches")
    if len(op.operands) - 1 != branches:
        fail(f"takes one operand per branch: {branches} branches but {len(op.operands) - 1} branch operands",
             "branches")
    for i in range(branches):
        region = op.regions[i]
        if len(region.blocks) != 1:
            fail(f"branch #{i} must have exactly one block, got {len(region.blocks)}", "regions")
        block = _block(op, i)
        args = [a.type for a in block.arguments]
        operand = op.operand_types[1 + i]
        if len(args) != 1 or not types_compatible(args[0], operand):
            fail(f"branch #{i} must take its operand ({operand}), takes {fmt_types(args)}", "branches")
        if block.terminator is None or block.terminator.name != "stablehlo.return":
            fail(f"branch #{i} must end in stablehlo.return", "terminator")
        returned = _returned(op, i)
        if len(returned) != len(op.results) or not all(
                types_compatible(g, w) for g, w in zip(returned, op.result_types)):
            fail(f"branch #{i} returns {fmt_types(returned)}, but the results are {fmt_types(op.result_types)}",
                 "branches")


@_register("hlo.async_start")
def _async_start(op: Operation, ctx: _Context) -> None:
    fn = _callee(op, ctx)
    name = fn.sym_name
    inputs, results = fn.function_type.inputs, fn.function_type.results
    if len(op.operands) != len(inputs) or not all(types_compatible(g, w) for g, w in zip(op.operand_types, inputs)):
        fail(f"passes {fmt_types(op.operand_types)} but @{name} takes {fmt_types(inputs)}", "signature")
    t = op.result_types[0]
    produced = results[0] if len(results) == 1 else TupleType(tuple(results))
    if not (isinstance(t, TupleType) and len(t.types) >= 2 and isinstance(t.types[0], TupleType)
            and types_compatible(t.types[0], TupleType(tuple(op.operand_types)))
            and types_compatible(t.types[1], produced)):
        fail(f"result must be tuple<tuple<operands...>, result, state...> with the operands "
             f"{fmt_types(op.operand_types)} and @{name}'s result {produced}, got {t}", "signature")


@_register("hlo.async_done")
def _async_done(op: Operation, ctx: _Context) -> None:
    t = op.operand_types[0]
    if not isinstance(t, TupleType):
        # XLA at head prints async collectives whose start returns the result itself
        # (`all-gather-done(f32[128,128] %all-gather-start)`): the done passes it on.
        if not types_compatible(op.result_types[0], t):
            fail(f"result must be the start's result {t}, got {op.result_types[0]}", "result")
        return
    if len(t.types) < 2:
        fail(f"operand must be an async_start's tuple or its result, got {t}", "operand")
    if not types_compatible(op.result_types[0], t.types[1]):
        fail(f"result must be the computation's result {t.types[1]}, got {op.result_types[0]}", "result")


@_register("hlo.copy_start")
def _copy_start(op: Operation, ctx: _Context) -> None:
    t, operand = op.result_types[0], op.operand_types[0]
    if not (isinstance(t, TupleType) and len(t.types) == 3 and types_compatible(t.types[0], operand)
            and types_compatible(t.types[1], operand)):
        fail(f"result must be tuple<{operand}, {operand}, tensor<ui32>> (destination, source, context), got {t}",
             "result")


@_register("hlo.copy_done")
def _copy_done(op: Operation, ctx: _Context) -> None:
    t = op.operand_types[0]
    if not isinstance(t, TupleType) or len(t.types) != 3 or not types_compatible(op.result_types[0], t.types[0]):
        fail(f"takes a copy_start's tuple and returns its destination, got {t} -> {op.result_types[0]}", "result")


@_register("hlo.shuffle")
def _shuffle(op: Operation, ctx: _Context) -> None:
    t = op.operand_types[0]
    dims, shifts = list(op.attributes["dimensions"]), list(op.attributes["shifts"])
    if len(dims) != len(shifts):
        fail(f"has {len(dims)} dimensions but {len(shifts)} shifts: one shift per shuffled dimension", "dimensions")
    rank = t.rank if isinstance(t, TensorType) else None
    if rank is not None and (len(set(dims)) != len(dims) or any(not 0 <= int(d) < rank for d in dims)):
        fail(f"dimensions {dims} must be distinct dimensions of the rank-{rank} operand", "dimensions")
    if not types_compatible(op.result_types[0], t):
        fail(f"result must have the operand's type {t}, got {op.result_types[0]}", "result")


@_register("hlo.rng_get_and_update_state")
def _rng_state(op: Operation, ctx: _Context) -> None:
    t = op.result_types[0]
    if not (isinstance(t, TensorType) and t.shape == (2,) and isinstance(t.element, IntegerType)
            and t.element.width == 64 and t.element.is_unsigned):
        fail(f"result must be tensor<2xui64> (XLA's u64[2]), got {t}", "result")
