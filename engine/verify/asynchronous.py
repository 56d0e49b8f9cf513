"""Verifier checks: async_start and async_done (spec "async_start", "async_done") and the future type.

async_start's body is one op and a return; the op reads async_start's operands and its results
become the future's types, which async_done hands back. The body may read them as the spec's
example does (the enclosing values themselves) or, as StableHLO's own tests write it and its C++
verifier requires of an isolated region, through block arguments, one per operand and of its type
(C3 either way). C2's list of ops predates collective_reduce, which the C++ verifier also accepts:
it is a collective, and carries the `may_run_async` trait.
"""
from __future__ import annotations

from ..ir.core import Operation
from ..ir.opset import OPS, may_run_async
from ..ir.types import FutureType
from .core import _block, _Context, _register
from .shape_inference import fail, fmt_types


@_register("stablehlo.async_start")
def _async_start(op: Operation, ctx: _Context) -> None:
    region = op.regions[0]
    if len(region.blocks) != 1:
        fail(f"body must be a single block, has {len(region.blocks)}", "C1")
    block = _block(op, 0)
    ops = block.operations
    if block.arguments:
        if len(block.arguments) != len(op.operands):
            fail(f"body takes {len(block.arguments)} argument(s) but async_start has {len(op.operands)} operand(s)",
                 "C3")
        for i, (arg, operand) in enumerate(zip(block.arguments, op.operands)):
            if arg.type != operand.type:
                fail(f"body argument #{i} has type {arg.type} but operand #{i} is {operand.type}", "C3")
    if len(ops) != 2 or ops[-1].name != "stablehlo.return":
        fail(f"body must hold one operation and a stablehlo.return, holds {len(ops)} operation(s)", "C1")
    inner, terminator = ops
    if not may_run_async(inner.name):  # the ops the spec's C2 lists carry the trait
        allowed = ", ".join(sorted(name.split(".", 1)[1] for name, d in OPS.items() if d.may_run_async))
        fail(f"body runs {inner.name}; an asynchronous op is one of {allowed}", "C2")
    passed = list(block.arguments) if block.arguments else list(op.operands)
    if list(inner.operands) != passed:
        fail(f"the operands of async_start ({_names(passed)}) must be the operands of {inner.name} "
             f"({_names(inner.operands)})", "C3")
    if list(terminator.operands) != list(inner.results):
        fail(f"body must return the results of {inner.name} ({_names(inner.results)}), "
             f"returns {_names(terminator.operands)}", "C4")
    expected = FutureType(tuple(inner.result_types))
    if len(op.results) != 1 or op.result_types[0] != expected:
        fail(f"result must be {expected} (the future of {inner.name}'s results), got "
             f"{fmt_types(op.result_types)}", "C4")


@_register("stablehlo.async_done")
def _async_done(op: Operation, ctx: _Context) -> None:
    unwrapped = []
    for i, t in enumerate(op.operand_types):
        if not isinstance(t, FutureType):
            fail(f"operand #{i} must be a !stablehlo.future<...>, got {t}", "C1")
        unwrapped.extend(t.types)
    if list(op.result_types) != unwrapped:
        fail(f"results must be the future's types {fmt_types(unwrapped)}, got {fmt_types(op.result_types)}", "C1")


def _names(values) -> str:
    return ", ".join(v.name for v in values) or "none"
