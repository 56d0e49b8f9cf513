"""One program run twice, handed over op by op: the machinery divergence.py compares with.

A `Side` is one run — on one process, or on every device of an emulated grid (run/grid.py's
scheduler, one greenlet per device) — inside a greenlet of its own. Every device's interpreter
has a listener (`_Device`) that, when an op instance outside reducer bodies finishes, hands a
`Step` (device, op, frames, event number, operands, outputs) to the coordinator and waits until
it is resumed: `Side.resume()` returns the next Step, or how the run ended. The grid scheduler
runs devices in a fixed order, so two runs of the same ops hand their Steps over in the same
order. Nothing is kept between Steps but event counters: memory is what the run holds anyway.

Event numbers are per device, as a debugging session of that device numbers them (one event per
op and one per block terminator, in the order they start: the numbering of scan.py).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any, Optional, Sequence, Union

import greenlet

from ..ir.core import Module, Operation
from ..ir.errors import HlodbgError
from ..machine.backend import Backend
from ..machine.process import ProcessId
from ..run.grid import GridScheduler, ScheduledGrid
from ..run.interpreter import Frame, Interpreter, Listener, describe_frame

ONE_PROCESS = ProcessId(0, 0)


@dataclass(frozen=True)
class FrameStep:
    """One frame of an op instance's stack, kept without the frame's values."""

    function: str
    kind: str
    iteration: Optional[int]
    owner: Optional[Operation]  # the while/if/call that opened it

    def describe(self, first: bool) -> str:
        text = describe_frame(self.function, self.kind, self.iteration, with_function=first or self.kind == "function")
        if self.owner is not None and self.kind != "function" and self.owner.pos is not None:
            text += f" (the {self.owner.name.split('.')[-1]} at line {self.owner.pos.line})"
        return text


def describe_frames(frames: Sequence[FrameStep]) -> str:
    """`@main > while.body #3 (the while at line 7)`."""
    return " > ".join(step.describe(i == 0) for i, step in enumerate(frames))


@dataclass
class Step:
    """A finished op instance, as one side hands it over."""

    process: ProcessId
    op: Operation
    frames: tuple[FrameStep, ...]
    event: int  # on its device
    instance: int  # 1 for the op's first run on its device
    operands: list
    outputs: list

    @property
    def path(self) -> tuple:
        """What must match for two Steps to be the same op instance."""
        return (self.process, *((f.function, f.kind, f.iteration) for f in self.frames))


class Stopped(BaseException):
    """Unwinds a run the coordinator no longer needs: not an Exception, so no evaluator turns it
    into an op failure."""


_STOP = object()


class Side:
    """One target's run, parked after every compared op instance until the coordinator resumes it.

    `shape` (replicas, partitions): (1, 1) runs one process; a larger grid runs every device
    with `args` (one list for all, or {ProcessId: list}). It ends as ("done", results: a list,
    or {ProcessId: list} on a grid), ("error", HlodbgError) or ("stopped", None)."""

    def __init__(self, name: str, module: Module, backend: Backend, entry: str,
                 args: Union[Sequence[Any], dict], shape: tuple[int, int] = (1, 1)):
        self.name = name
        self.module = module
        self.backend = backend
        self.entry = entry
        self.args = args
        self.shape = shape
        self.home: Optional[greenlet.greenlet] = None  # the coordinator
        self.waiting: Optional[greenlet.greenlet] = None  # where the run parked
        self.run = greenlet.greenlet(self._main)
        self.printed: list[str] = []  # what interpreter.print ops printed, on every device

    def resume(self) -> Any:
        """Let the run go to its next compared op instance: a Step, or how the run ended."""
        self.home = greenlet.getcurrent()
        self.run.parent = self.home
        parked, self.waiting = self.waiting, None
        return (parked or self.run).switch()

    def stop(self) -> None:
        """Unwind a parked run."""
        if self.waiting is not None:
            self.home = greenlet.getcurrent()
            self.run.parent = self.home
            parked, self.waiting = self.waiting, None
            parked.switch(_STOP)

    def _main(self) -> Any:
        try:
            if self.shape == (1, 1):
                return ("done", self._interpreter(ONE_PROCESS, None).run(self.entry, self._args(ONE_PROCESS)))
            grid = ScheduledGrid(*self.shape)
            tasks = {}
            for process in grid.processes():
                interpreter = self._interpreter(process, grid)
                tasks[process] = partial(interpreter.run, self.entry, self._args(process))
            return ("done", GridScheduler(grid, tasks).run())
        except Stopped:
            return ("stopped", None)
        except HlodbgError as e:
            return ("error", e)

    def _args(self, process: ProcessId) -> Any:
        return self.args[process] if isinstance(self.args, dict) else self.args

    def _interpreter(self, process: ProcessId, grid: Optional[ScheduledGrid]) -> Interpreter:
        device = _Device(self, process)
        backend = self.backend if grid is None else self.backend.for_device(process, grid)
        interpreter = Interpreter(self.module, backend=backend, process=process, grid=grid, listeners=[device])
        interpreter.printed = self.printed
        return interpreter


class _Device(Listener):
    """One device of a Side: the hand-over of each compared op instance, with the interpreter's
    event number. Ops in a reducer body are not handed over: how often and on what a backend
    applies a body is its own affair; the owning op is compared."""

    def __init__(self, side: Side, process: ProcessId):
        self.side = side
        self.process = process
        self.instances: dict[Operation, int] = {}

    def after_op(self, event: int, frame: Frame, op: Operation, operands: list, results: list) -> None:
        instances = self.instances
        instances[op] = instances.get(op, 0) + 1
        if not results or _in_body(frame):
            return
        side = self.side
        side.waiting = greenlet.getcurrent()
        reply = side.home.switch(Step(self.process, op, _frames(frame), event, instances[op], list(operands), list(results)))
        if reply is _STOP:
            raise Stopped()


def _in_body(frame: Optional[Frame]) -> bool:
    while frame is not None:
        if frame.kind == "body":
            return True
        frame = frame.parent
    return False


def _frames(frame: Optional[Frame]) -> tuple[FrameStep, ...]:
    steps = []
    while frame is not None:
        steps.append(FrameStep(frame.function.sym_name, frame.kind, frame.iteration, frame.owner))
        frame = frame.parent
    return tuple(reversed(steps))


__all__ = ["FrameStep", "ONE_PROCESS", "Side", "Step", "Stopped", "describe_frames"]
