"""Running a program on the emulated grid: `run_grid` (results per process) and `run_global` for
a global SPMD program (JAX's sharded jit / shard_map) on the emulated grid.

Every device runs the whole of the entry function on the same (full) arguments; the manual parts
(`sdy.manual_computation`, GSPMD's `@SPMDFullToShardShape`..`@SPMDShardToFullShape`) cut values
into tiles and reassemble them (engine/ops/spmd.py), so every device ends with the same full
results. `run_global` returns them once, after checking the devices agree.
"""
from __future__ import annotations

from collections import deque
from typing import Any, Optional, Sequence

import numpy as np

from ..ir.core import Module
from ..ir.dtypes import Token, widen
from ..ir.errors import ExecutionError
from ..machine.backend import CPU, Backend
from ..machine.process import ProcessId
from ..ops.spmd import SPMD_CUSTOM_CALLS
from .grid import ArgsLike, GridScheduler, ScheduledGrid, grid_shape
from .interpreter import Interpreter


def run_grid(module: Module, args: ArgsLike = (), entry: str = "main", num_replicas: Optional[int] = None,
             num_partitions: Optional[int] = None, infeed: Sequence[Any] = (), interpreter_factory=None,
             backend: Backend = CPU, listeners_for=None) -> dict[ProcessId, list]:
    """Run `entry` on every process of the grid; results per process.

    `args` is one argument list for every process, or {ProcessId: args} per process. The grid is
    the module's mhlo.num_replicas x mhlo.num_partitions unless given. Each device computes with
    its own instance of `backend` (Backend.for_device). `listeners_for(process)`: the listeners
    of that process's interpreter (a profile's timing listeners), none when not given."""
    replicas, partitions = grid_shape(module, num_replicas, num_partitions)
    grid = ScheduledGrid(replicas, partitions, infeed=deque(infeed))
    factory = interpreter_factory or (
        lambda process: Interpreter(module, backend=backend.for_device(process, grid), process=process, grid=grid,
                                    listeners=listeners_for(process) if listeners_for is not None else ()))
    tasks = {}
    for process in grid.processes():
        process_args = args[process] if isinstance(args, dict) else args
        interpreter = factory(process)
        tasks[process] = (lambda i=interpreter, a=process_args: i.run(entry, a))
    return GridScheduler(grid, tasks).run()



def is_global_program(module: Module) -> bool:
    """Whether `module` is a global program of a sharded JAX function, which every device runs whole:
    it has Shardy ops (a mesh, manual computations, sharding constraints; only a program not yet
    partitioned holds them, even one whose shardings are left to XLA's partitioner, a jit with
    sharded arguments) or GSPMD's SPMD custom calls."""
    for op in module.walk():
        if op.dialect == "sdy":
            return True
        if op.name == "stablehlo.custom_call" and str(op.attributes.get("call_target_name")) in SPMD_CUSTOM_CALLS:
            return True
    return False


def run_global(module: Module, args: ArgsLike = (), entry: str = "main", num_replicas: Optional[int] = None,
               num_partitions: Optional[int] = None, backend: Backend = CPU, listeners_for=None) -> list:
    """Run `entry` on every device of the grid with the same arguments; the devices' common results.

    The grid is the module's mhlo.num_replicas x mhlo.num_partitions unless given. Raises
    ExecutionError when the devices end with different results."""
    per_process = run_grid(module, args, entry, num_replicas, num_partitions, backend=backend, listeners_for=listeners_for)
    processes = sorted(per_process, key=lambda p: (p.replica_id, p.partition_id))
    first = per_process[processes[0]]
    differing: list[str] = []
    for device, process in enumerate(processes[1:], start=1):
        mismatch = _first_mismatch(first, per_process[process])
        if mismatch is not None:
            differing.append(f"device {device} {process}: {mismatch}")
    if differing:
        devices = ", ".join(line.split(" ", 2)[1] for line in differing)
        raise ExecutionError(
            f"the devices disagree on the results of @{entry}: device(s) {devices} differ from device 0",
            notes=(*differing, "a global program computes the same full results on every device; values that depend "
                               "on the device (partition_id, replica_id, collectives) outside a manual computation "
                               "make them differ"))
    return first


def _first_mismatch(expected: list, actual: list) -> Optional[str]:
    if len(expected) != len(actual):
        return f"{len(actual)} results instead of {len(expected)}"
    for i, (a, b) in enumerate(zip(expected, actual)):
        if not _same_value(a, b):
            return f"result {i} differs{_difference(a, b)}"
    return None


def _same_value(a: Any, b: Any) -> bool:
    if isinstance(a, tuple) or isinstance(b, tuple):
        return (isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b)
                and all(_same_value(x, y) for x, y in zip(a, b)))
    if isinstance(a, Token) or isinstance(b, Token):
        return isinstance(a, Token) and isinstance(b, Token)
    a, b = np.asarray(a), np.asarray(b)
    # Bit patterns: every device computes the same way, so even NaNs and signed zeros agree.
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


def _difference(a: Any, b: Any) -> str:
    if not isinstance(a, np.ndarray) or not isinstance(b, np.ndarray):
        return ""
    if a.shape != b.shape or a.dtype != b.dtype:
        return f" (it is {b.dtype}{list(b.shape)}, device 0 has {a.dtype}{list(a.shape)})"
    wide_a, wide_b = widen(a), widen(b)
    equal = wide_a == wide_b
    if wide_a.dtype.kind in "fc":
        equal |= np.isnan(wide_a) & np.isnan(wide_b)
    return f" ({int(np.count_nonzero(~equal))} of {a.size} elements)"


__all__ = ["is_global_program", "run_global", "run_grid"]
