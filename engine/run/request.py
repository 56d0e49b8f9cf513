"""A run request, and the one place that carries it out: `Runner.run(RunRequest(...))`.

A request says what to run (a module's entry), on what (arguments, one list for every device or
{ProcessId: list}), where (the backend every device computes with, the grid's shape) and who
listens (`listeners_for(process)`: a profile's timers). `hlodbg.Program.run` and `hlodbg run`
(one device or a grid, `--profile` or not) both hand their runs to a Runner, so the choice between
one interpreter, a grid of SPMD devices and a global (Shardy/GSPMD) program is made here only. The
debugger's runs are built in one place too, engine/debug/launch.py's `open_target`.

A Runner keeps the interpreter of a one-device run for the next request with the same backend: its
plan (decoded attributes, folded constants, compiled blocks) is made once.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from ..ir.core import Module
from ..machine.backend import CPU, Backend
from ..machine.process import ProcessId
from .interpreter import Interpreter
from .spmd import is_global_program, run_global, run_grid

ONE_DEVICE = ProcessId(0, 0)


@dataclass
class RunRequest:
    module: Module
    arguments: Any  # one argument list for every device, or {ProcessId: list}
    entry: str = "main"
    backend: Backend = CPU
    replicas: int = 1
    partitions: int = 1

    @property
    def devices(self) -> int:
        return self.replicas * self.partitions


@dataclass
class RunOutcome:
    """What a run gave: `results` for one device or a global program (the devices' common results),
    `per_device` {ProcessId: results} for a grid of SPMD devices, and what `interpreter.print` ops
    printed (one device's run)."""

    results: Optional[list]
    per_device: Optional[dict] = None
    printed: list[str] = field(default_factory=list)
    devices: int = 1
    global_program: bool = False


class Runner:
    """Carries out RunRequests (see the module doc)."""

    def __init__(self) -> None:
        self._interpreters: dict[int, tuple[Backend, Module, Interpreter]] = {}

    def interpreter(self, request: RunRequest) -> Interpreter:
        """The one-device interpreter for `request`'s module and backend, made once."""
        key = id(request.backend)
        held = self._interpreters.get(key)
        if held is None or held[0] is not request.backend or held[1] is not request.module:
            interpreter = Interpreter(request.module, backend=request.backend.for_device(ONE_DEVICE))
            held = self._interpreters[key] = (request.backend, request.module, interpreter)
        return held[2]

    def run(self, request: RunRequest, listeners_for: Optional[Callable[[ProcessId], list]] = None) -> RunOutcome:
        if request.devices == 1:
            interpreter = self.interpreter(request)
            interpreter.listeners = listeners_for(interpreter.process) if listeners_for is not None else []
            printed = len(interpreter.printed)
            try:
                results = interpreter.run(request.entry, request.arguments)
            finally:
                interpreter.listeners = []
            return RunOutcome(results, printed=interpreter.printed[printed:])
        if is_global_program(request.module):
            results = run_global(request.module, request.arguments, entry=request.entry, num_replicas=request.replicas,
                                 num_partitions=request.partitions, backend=request.backend, listeners_for=listeners_for)
            return RunOutcome(results, devices=request.devices, global_program=True)
        per_device = run_grid(request.module, request.arguments, entry=request.entry, num_replicas=request.replicas,
                              num_partitions=request.partitions, backend=request.backend, listeners_for=listeners_for)
        return RunOutcome(None, per_device, devices=request.devices)


__all__ = ["RunOutcome", "RunRequest", "Runner"]
