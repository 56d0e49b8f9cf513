"""The one place a debugging target is built: `open_target(module, args, ...)`.

`hlodbg.Program.debug` calls it for the Python API, the CLI (`--break-on`, `--probe`, export
overlays) and the UI alike, so every front end reads arguments, memory budgets and devices the
same way (run/arguments.py) and gets the same kind of target for the same program.
"""
from __future__ import annotations

from typing import Optional, Union

from ..ir.core import Module
from ..machine.backend import CPU, Backend
from ..machine.process import ProcessId
from ..run.arguments import ArgumentNames, device_arguments, given_arguments, parameter_shardings, parse_size
from ..run.grid import grid_shape
from ..run.interpreter import entry_function
from .breakpoints import BreakpointTable, Resolver, state_path
from .grid_session import GridSession
from .session import Session
from .target import DebugTarget, SingleTarget, TargetError

ArgsLike = Union[None, list, tuple, dict]


def open_target(module: Module, args: ArgsLike = None, *, entry: str = "main", seed: int = 0,
                memory: Union[int, str, None] = None, persist: bool = False, path: Optional[str] = None,
                source: str = "", replicas: Optional[int] = None, partitions: Optional[int] = None,
                focus: Optional[ProcessId] = None, backend: Backend = CPU) -> DebugTarget:
    """A target on one run of `entry`.

    `args`: a sequence of arrays, or {position: array}; on a grid, keys ProcessId (or (replica,
    partition)) give a device its own arguments (a sequence or {position: array}; the others
    come from the plain ones); missing ones are reproducible random values from `seed`. `memory`: the budget for recorded values, in bytes or as text ("2G");
    default a quarter of RAM (split among the devices of a grid). The grid is the module's
    mhlo.num_replicas x mhlo.num_partitions unless given: one process gives a lazy SingleTarget,
    several a GridSession with `focus` (default device 0). Every device computes with `backend`
    (numerics and storage, machine/backend.py). With `persist`, a single process's
    breakpoints and watches are kept in a per-program file (breakpoints.state_path(path, source)).
    """
    function = entry_function(module, entry)
    replicas, partitions = grid_shape(module, replicas, partitions)
    values, _ = device_arguments(function.function_type.inputs, given_arguments(args, names=ArgumentNames(function)),
                                 replicas, partitions, seed, shardings=parameter_shardings(function))
    budget = parse_size(memory) if isinstance(memory, str) else memory
    if replicas * partitions == 1:
        if focus not in (None, ProcessId(0, 0)):
            raise TargetError(f"device {focus} is not on the 1x1 grid")
        table = BreakpointTable(Resolver(module, entry, path), state_path(path, source) if persist else None)
        return SingleTarget(Session(module, values, entry=entry, memory=budget, breakpoints=table, path=path,
                                     backend=backend.for_device(ProcessId(0, 0))))
    return GridSession(module, values, entry=entry, num_replicas=replicas, num_partitions=partitions, memory=budget,
                       path=path, focus=focus if focus is not None else ProcessId(0, 0), backend=backend)


__all__ = ["open_target"]
