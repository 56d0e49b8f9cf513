"""Verifier checks: `interpreter.run_parallel` of the reference interpreter's dialect.

Its verifier (InterpreterOps.cpp) numbers no constraints, so each check is named by a label in
parentheses like a spec constraint: `programs` (a non-empty 2-D array of function symbols, one
row per replica, all rows as long), `inputs` / `results` (the op's operands and results are the
programs' arguments and results flattened in process order: count and types), `infeed` (optional,
but then non-empty, each a function taking nothing and returning one tensor). engine/run/parallel.py
runs the op with the same checks.
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

from ..ir.attributes import SymbolRef
from ..ir.core import Function, Operation, function_list
from ..ir.types import TensorType
from .core import _Context, _register
from .shape_inference import fail, types_compatible

OP_NAME = "interpreter.run_parallel"
_PROGRAMS_HINT = "a 2-D array of function symbols, one row per replica: programs = [[@f, @g], [@f, @g]]"


def program_grid(op: Operation, functions: Mapping[str, Function]) -> list[list[Function]]:
    """The function of each process, [replica][partition]."""
    programs = op.attributes.get("programs")
    if programs is None:
        fail(f"needs a `programs` attribute, {_PROGRAMS_HINT}", "programs")
    rows_are_lists = isinstance(programs, (tuple, list)) and all(isinstance(r, (tuple, list)) for r in programs)
    if not rows_are_lists or not programs:
        fail(f"`programs` must be {_PROGRAMS_HINT}", "programs")
    if not programs[0]:
        fail("`programs` cannot be empty: it needs at least one replica with one partition", "programs")
    width = len(programs[0])
    for replica, row in enumerate(programs):
        if len(row) != width:
            fail(f"every row of `programs` must have {width} partition(s) like row 0, but row {replica} has {len(row)}",
                 "programs")
    return [[_function(functions, symbol, f"programs[{r}][{p}]", "programs") for p, symbol in enumerate(row)]
            for r, row in enumerate(programs)]


def _function(functions: Mapping[str, Function], symbol: Any, where: str, label: str) -> Function:
    if not isinstance(symbol, SymbolRef) or symbol.nested:
        fail(f"{where} must be a function symbol such as @f, not {symbol}", label)
    function = functions.get(symbol.name)
    if function is None:
        fail(f"{where} names function @{symbol.name}, which is not in the module "
             f"(functions: {function_list(functions, symbol.name)})", label)
    if function.is_declaration:
        fail(f"{where} names @{symbol.name}, which is only declared and has no body to run", label)
    return function


def _processes(grid: Sequence[Sequence[Function]]) -> list[tuple[str, Function]]:
    return [(f"@{fn.sym_name} on (replica {r}, partition {p})", fn)
            for r, row in enumerate(grid) for p, fn in enumerate(row)]


def _layout_note(grid: Sequence[Sequence[Function]], what: str, verb: str) -> str:
    """`inputs are flattened in process order: @f on (replica 0, partition 0) takes 2, ...`."""
    processes = _processes(grid)
    counts = [len(fn.function_type.inputs if what == "inputs" else fn.function_type.results) for _, fn in processes]
    shown = [f"{name} {verb} {n}" for (name, _), n in zip(processes[:8], counts)]
    more = f", ... ({len(processes) - 8} more)" if len(processes) > 8 else ""
    return f"{what} are flattened in process order: " + ", ".join(shown) + more


def check_signatures(op: Operation, grid: Sequence[Sequence[Function]]) -> None:
    """The op's operands and results against the programs' arguments and results, flattened in
    process order (replica-major)."""
    processes = _processes(grid)
    num_inputs = sum(len(fn.function_type.inputs) for _, fn in processes)
    num_results = sum(len(fn.function_type.results) for _, fn in processes)
    if len(op.operands) != num_inputs:
        fail(f"{len(op.operands)} input(s) given, but the programs take {num_inputs} in all", "inputs",
             (_layout_note(grid, "inputs", "takes"),))
    if len(op.results) != num_results:
        fail(f"{len(op.results)} result(s) declared, but the programs return {num_results} in all", "results",
             (_layout_note(grid, "results", "returns"),))
    next_input = next_result = 0
    for name, fn in processes:
        for i, want in enumerate(fn.function_type.inputs):
            got = op.operands[next_input + i].type
            if not types_compatible(got, want):
                fail(f"input #{next_input + i} has type {got}, but it is argument #{i} of {name}, which takes {want}",
                     "inputs")
        for i, produced in enumerate(fn.function_type.results):
            declared = op.results[next_result + i].type
            if not types_compatible(produced, declared):
                fail(f"result #{next_result + i} is declared {declared}, but it is result #{i} of {name}, "
                     f"which returns {produced}", "results")
        next_input += len(fn.function_type.inputs)
        next_result += len(fn.function_type.results)


def infeed_functions(op: Operation, functions: Mapping[str, Function]) -> tuple[Function, ...]:
    """The functions of the optional `infeed`, each producing one tensor of the shared queue."""
    infeed = op.attributes.get("infeed")
    if infeed is None:
        return ()
    if not isinstance(infeed, (tuple, list)):
        fail(f"`infeed` must be a list of function symbols such as [@queue0, @queue1], not {infeed}", "infeed")
    if not infeed:
        fail("`infeed` is optional but cannot be empty: leave it out or name at least one function", "infeed")
    out = []
    for i, symbol in enumerate(infeed):
        function = _function(functions, symbol, f"infeed[{i}]", "infeed")
        signature = function.function_type
        if signature.inputs:
            fail(f"infeed function @{function.sym_name} must take no arguments, but takes {len(signature.inputs)}",
                 "infeed")
        if len(signature.results) != 1 or not isinstance(signature.results[0], TensorType):
            returned = ", ".join(str(t) for t in signature.results) or "nothing"
            fail(f"infeed function @{function.sym_name} must return one tensor, but returns {returned}", "infeed")
        out.append(function)
    return tuple(out)


@_register(OP_NAME)
def _run_parallel(op: Operation, ctx: _Context) -> None:
    grid = program_grid(op, ctx.functions)
    check_signatures(op, grid)
    infeed_functions(op, ctx.functions)
