"""`interpreter.run_parallel`: the StableHLO reference interpreter's way of testing collectives.

`programs` is a 2-D array of function symbols, [replica][partition]: the op runs one process per
entry on a grid of that shape, each process running its own function (they may differ). The
ragged inputs and results of all processes are flattened in process order (replica-major, as a
reshape would): the first inputs go to process (0, 0), the next to (0, 1), ... and the results
come back the same way, so the check ops after the op can compare them.

Semantics follow the reference's InterpreterOps.cpp, with two deliberate choices:
- `infeed = [@f, ...]` names functions that each return one tensor; the processes share one
  infeed queue holding those tensors in order. The reference runs a function when an infeed op
  pops it; here each runs once, on process (0, 0), before the grid starts (the same values for
  the pure constant functions these queues are made of).
- What the processes outfeed goes to the outfeed queue of the run that executes the op
  (`interpreter.grid.outfeed`), so a caller can look at it.
Checks run by the processes are recorded on the calling interpreter, failures naming the process.
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Any, Sequence

from ..ir.attributes import SymbolRef
from ..ir.errors import ExecutionError, HlodbgError
from .grid import MAX_DEVICES, GridScheduler, ScheduledGrid
from ..ir.core import Function, Module, Operation
from ..machine.process import ProcessId
from ..verify.shape_inference import types_compatible
from ..ir.types import TensorType
from ..ops.registry import OpCall, op

OP_NAME = "interpreter.run_parallel"


@dataclass(frozen=True)
class Placement:
    """One process of the grid: the function it runs and its share of the flattened operands/results."""

    process: ProcessId
    function: Function
    inputs: tuple[int, int]  # [start, stop) into the op's operands
    results: tuple[int, int]  # [start, stop) into the op's results

    def describe(self) -> str:
        return f"@{self.function.sym_name} on {self.process}"


@dataclass(frozen=True)
class ParallelPlan:
    num_replicas: int
    num_partitions: int
    placements: tuple[Placement, ...]  # in process order
    infeed: tuple[Function, ...]


def plan_run_parallel(op: Operation, module: Module) -> ParallelPlan:
    """Check an `interpreter.run_parallel` op against the module and lay out its processes.

    Raises ExecutionError, located at the op, for a malformed `programs` or `infeed`, an unknown
    function, or operands/results that do not match the programs' signatures.
    """
    functions = module.functions
    rows = _program_rows(op)
    num_replicas, num_partitions = len(rows), len(rows[0])
    if num_replicas * num_partitions > MAX_DEVICES:
        raise _error(op, f"a {num_replicas}x{num_partitions} grid has {num_replicas * num_partitions} processes; "
                         f"hlodbg emulates at most {MAX_DEVICES}")
    placements = []
    next_input = next_result = 0
    for replica, row in enumerate(rows):
        for partition, symbol in enumerate(row):
            function = _function(op, functions, symbol, f"programs[{replica}][{partition}]")
            signature = function.function_type
            inputs = (next_input, next_input + len(signature.inputs))
            results = (next_result, next_result + len(signature.results))
            placements.append(Placement(ProcessId(replica, partition), function, inputs, results))
            next_input, next_result = inputs[1], results[1]
    _check_counts(op, placements, next_input, next_result)
    _check_types(op, placements)
    return ParallelPlan(num_replicas, num_partitions, tuple(placements), _infeed_functions(op, functions))


# -- checking the op -----------------------------------------------------------------------------


def _error(op: Operation, message: str, notes: Sequence[str] = ()) -> ExecutionError:
    return ExecutionError(f"{OP_NAME}: {message}", op.pos, tuple(notes))


def _program_rows(op: Operation) -> list[list[Any]]:
    programs = op.attributes.get("programs")
    shape_hint = "a 2-D array of function symbols, one row per replica: programs = [[@f, @g], [@f, @g]]"
    if programs is None:
        raise _error(op, f"needs a `programs` attribute, {shape_hint}")
    if not isinstance(programs, (tuple, list)) or not programs or not all(isinstance(r, (tuple, list)) for r in programs):
        raise _error(op, f"`programs` must be {shape_hint}")
    if not programs[0]:
        raise _error(op, "`programs` cannot be empty: it needs at least one replica with one partition")
    width = len(programs[0])
    for replica, row in enumerate(programs):
        if len(row) != width:
            raise _error(op, f"every row of `programs` must have {width} partition(s) like row 0, "
                             f"but row {replica} has {len(row)}")
    return [list(row) for row in programs]


def _function(op: Operation, functions: dict[str, Function], symbol: Any, where: str) -> Function:
    if not isinstance(symbol, SymbolRef) or symbol.nested:
        raise _error(op, f"{where} must be a function symbol such as @f, not {symbol}")
    function = functions.get(symbol.name)
    if function is None:
        known = ", ".join("@" + n for n in functions) or "none"
        raise _error(op, f"{where} names function @{symbol.name}, which is not in the module (functions: {known})")
    if function.is_declaration:
        raise _error(op, f"{where} names @{symbol.name}, which is only declared and has no body to run")
    return function


def _layout_note(placements: Sequence[Placement], what: str, verb: str) -> str:
    """`inputs are flattened in process order: @f on (replica 0, partition 0) takes 2, ...`."""
    def count(p: Placement) -> int:
        start, stop = p.inputs if what == "inputs" else p.results
        return stop - start

    shown = [f"{p.describe()} {verb} {count(p)}" for p in placements[:8]]
    more = f", ... ({len(placements) - 8} more)" if len(placements) > 8 else ""
    return f"{what} are flattened in process order: " + ", ".join(shown) + more


def _check_counts(op: Operation, placements: list[Placement], num_inputs: int, num_results: int) -> None:
    if len(op.operands) != num_inputs:
        raise _error(op, f"{len(op.operands)} input(s) given, but the programs take {num_inputs} in all",
                     (_layout_note(placements, "inputs", "takes"),))
    if len(op.results) != num_results:
        raise _error(op, f"{len(op.results)} result(s) declared, but the programs return {num_results} in all",
                     (_layout_note(placements, "results", "returns"),))


def _check_types(op: Operation, placements: list[Placement]) -> None:
    for placement in placements:
        signature = placement.function.function_type
        start = placement.inputs[0]
        for i, want in enumerate(signature.inputs):
            got = op.operands[start + i].type
            if not types_compatible(got, want):
                raise _error(op, f"input #{start + i} has type {got}, but it is argument #{i} of "
                                 f"{placement.describe()}, which takes {want}")
        start = placement.results[0]
        for i, produced in enumerate(signature.results):
            declared = op.results[start + i].type
            if not types_compatible(produced, declared):
                raise _error(op, f"result #{start + i} is declared {declared}, but it is result #{i} of "
                                 f"{placement.describe()}, which returns {produced}")


def _infeed_functions(op: Operation, functions: dict[str, Function]) -> tuple[Function, ...]:
    infeed = op.attributes.get("infeed")
    if infeed is None:
        return ()
    if not isinstance(infeed, (tuple, list)):
        raise _error(op, f"`infeed` must be a list of function symbols such as [@queue0, @queue1], not {infeed}")
    if not infeed:
        raise _error(op, "`infeed` is optional but cannot be empty: leave it out or name at least one function")
    out = []
    for i, symbol in enumerate(infeed):
        function = _function(op, functions, symbol, f"infeed[{i}]")
        signature = function.function_type
        if signature.inputs:
            raise _error(op, f"infeed function @{function.sym_name} must take no arguments, "
                             f"but takes {len(signature.inputs)}")
        if len(signature.results) != 1 or not isinstance(signature.results[0], TensorType):
            returned = ", ".join(str(t) for t in signature.results) or "nothing"
            raise _error(op, f"infeed function @{function.sym_name} must return one tensor, but returns {returned}")
        out.append(function)
    return tuple(out)


# -- running -------------------------------------------------------------------------------------


@op(OP_NAME)
def run_parallel(call: OpCall, *inputs: Any) -> Any:
    host = call.interpreter
    plan = call.cached("plan", lambda: plan_run_parallel(call.op, host.module))
    grid = ScheduledGrid(plan.num_replicas, plan.num_partitions, infeed=deque(_infeed_values(call, plan)))
    processes = {p.process: host.for_process(p.process, grid) for p in plan.placements}
    tasks = {p.process: _task(processes[p.process], p.function, inputs[p.inputs[0]:p.inputs[1]])
             for p in plan.placements}
    try:
        results = GridScheduler(grid, tasks).run()
    except HlodbgError as e:
        raise _noted(e, call, plan) from None
    finally:
        _collect_checks(host, processes)
        host.grid.outfeed.extend(grid.outfeed)
    flattened = [value for p in plan.placements for value in results[p.process]]
    return call.results(flattened)


def _task(interpreter, function: Function, args: Sequence[Any]):
    return lambda: interpreter.run(function.sym_name, list(args))


def _infeed_values(call: OpCall, plan: ParallelPlan) -> list[Any]:
    if not plan.infeed:
        return []
    host = call.interpreter
    runner = host.for_process(ProcessId(0, 0), None)
    try:
        return [runner.run(function.sym_name, [])[0] for function in plan.infeed]
    except HlodbgError as e:
        raise _noted(e, call, plan) from None
    finally:
        host.checks.extend(runner.checks)


def _collect_checks(host, processes: dict[ProcessId, Any]) -> None:
    """Each process's checks, in process order; a failure says which process saw it."""
    several = len(processes) > 1
    for process in sorted(processes, key=lambda p: (p.replica_id, p.partition_id)):  # process order
        for outcome in processes[process].checks:
            if several and not outcome.passed:
                outcome.message = f"{outcome.message} (on process {process})"
            host.checks.append(outcome)


def _noted(error: HlodbgError, call: OpCall, plan: ParallelPlan) -> HlodbgError:
    where = f" at {call.op.pos}" if call.op.pos is not None else ""
    notes = [f"in the {plan.num_replicas}x{plan.num_partitions} grid of {OP_NAME}{where}"]
    if error.message.startswith("stablehlo.infeed:"):
        notes.append(f"the processes share the infeed queue that {OP_NAME}'s `infeed = [@f, ...]` attribute fills: "
                     f"{len(plan.infeed)} value(s), one per function")
    added = tuple(n for n in notes if n not in error.notes)
    if added:
        error.notes = (*error.notes, *added)
        error.args = (error.render(),)
    return error


__all__ = ["ParallelPlan", "Placement", "plan_run_parallel", "run_parallel"]
