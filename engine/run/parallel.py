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

from ..ir.core import Function, Module, Operation
from ..ir.errors import ExecutionError, HlodbgError
from ..machine.process import ProcessId
from ..ops.registry import OpCall, op
from ..verify.interpreter import OP_NAME, check_signatures, infeed_functions, program_grid
from ..verify.shape_inference import Fail
from .grid import MAX_DEVICES, GridScheduler, ScheduledGrid


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
    function, or operands/results that do not match the programs' signatures (the verifier's
    checks, engine/verify/interpreter.py), or a grid larger than hlodbg emulates.
    """
    functions = module.functions
    try:
        grid = program_grid(op, functions)
        check_signatures(op, grid)
        infeed = infeed_functions(op, functions)
    except Fail as f:
        raise ExecutionError(f"{OP_NAME}: {f.message} ({f.constraint})", op.pos, f.notes) from None
    num_replicas, num_partitions = len(grid), len(grid[0])
    if num_replicas * num_partitions > MAX_DEVICES:
        processes = num_replicas * num_partitions
        raise ExecutionError(f"{OP_NAME}: a {num_replicas}x{num_partitions} grid has {processes} processes; "
                             f"hlodbg emulates at most {MAX_DEVICES}", op.pos)
    placements = []
    next_input = next_result = 0
    for replica, row in enumerate(grid):
        for partition, function in enumerate(row):
            signature = function.function_type
            inputs = (next_input, next_input + len(signature.inputs))
            results = (next_result, next_result + len(signature.results))
            placements.append(Placement(ProcessId(replica, partition), function, inputs, results))
            next_input, next_result = inputs[1], results[1]
    return ParallelPlan(num_replicas, num_partitions, tuple(placements), infeed)


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
