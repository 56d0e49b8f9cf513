"""Running a module on an emulated grid of R x P processes that meet at collectives.

Each process is an Interpreter running in its own greenlet; a deterministic cooperative scheduler
(no threads) runs one process at a time until it finishes or parks at a rendezvous — a collective
waiting for its group, or a recv waiting for a send. When every process is parked or done, the
scheduler completes each group whose members all arrived at the same collective, in process order,
and resumes them. A group whose members arrived at different collectives, or a state where no
process can move, stops the run with an error naming the devices, the ops and their locations.
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Sequence, Union

from greenlet import GreenletExit, greenlet

from ..ir.core import Module, Operation
from ..ir.errors import ExecutionError, HlodbgError
from ..machine.process import Grid, ProcessId

MAX_DEVICES = 4096


class GridError(ExecutionError):
    """A grid run that cannot go on: mismatched collectives, a deadlock, an error on a device."""


@dataclass
class Rendezvous:
    """What a parked process waits for."""

    process: ProcessId
    op: Optional[Operation]
    kind: str  # "collective" or "recv"
    group: tuple[ProcessId, ...] = ()
    value: Any = None
    channel: int = 0
    parked: Optional[greenlet] = None  # the greenlet to resume (a debugging session nests one)


def describe_op(op: Optional[Operation]) -> str:
    if op is None:
        return "a collective"
    names = ", ".join(v.name for v in op.results)
    text = f"{names} = {op.name}" if names else op.name
    if op.pos is not None:
        text += f" ({op.pos.filename}:{op.pos.line}:{op.pos.col})"
    return text


class ScheduledGrid(Grid):
    """A Grid whose exchanges park the calling process until its group has met."""

    def __init__(self, num_replicas: int = 1, num_partitions: int = 1, **kwargs):
        super().__init__(num_replicas, num_partitions, **kwargs)
        self.scheduler: Optional["GridScheduler"] = None

    def exchange(self, process: ProcessId, groups: list[list[ProcessId]], value: Any, op: Optional[Operation] = None) -> list[Any]:
        group = next((g for g in groups if process in g), None)
        if group is None:
            raise ValueError(f"process {process} is in no process group")
        if len(group) == 1:
            return [value]
        if self.scheduler is None:
            return super().exchange(process, groups, value)
        return self.scheduler.park(Rendezvous(process, op, "collective", tuple(group), value))

    def wait_for_channel(self, process: ProcessId, channel: int, op: Optional[Operation] = None) -> bool:
        if self.channels.get(channel):
            return True
        if self.scheduler is None:
            return False
        self.scheduler.park(Rendezvous(process, op, "recv", channel=channel))
        return True


@dataclass
class GridScheduler:
    """Runs one task per process, interleaving them at rendezvous points."""

    grid: ScheduledGrid
    tasks: dict[ProcessId, Callable[[], Any]]
    collectives: int = 0  # rendezvous completed (for figures and tests)
    results: dict[ProcessId, Any] = field(default_factory=dict)
    _greenlets: dict[ProcessId, greenlet] = field(default_factory=dict)
    _home: Optional[greenlet] = None

    def park(self, rendezvous: Rendezvous) -> Any:
        """Called in a process's greenlet: wait for the rendezvous, return what it delivers."""
        rendezvous.parked = greenlet.getcurrent()
        return self._home.switch(rendezvous)

    def run(self) -> dict[ProcessId, Any]:
        self.grid.scheduler = self
        self._home = greenlet.getcurrent()
        order = sorted(self.tasks, key=self.grid.device_id)
        self._greenlets = {p: greenlet(self.tasks[p], parent=self._home) for p in order}
        resume: dict[ProcessId, Any] = {}
        runnable = deque(order)
        waiting: dict[ProcessId, Rendezvous] = {}
        try:
            while runnable or waiting:
                while runnable:
                    process = runnable.popleft()
                    task = self._greenlets[process]
                    try:
                        if process in resume:
                            value, parked = resume.pop(process)
                            out = parked.switch(value)
                        else:
                            out = task.switch()
                    except HlodbgError as e:
                        raise _on_device(e, self.grid, process) from None
                    if task.dead:
                        self.results[process] = out
                    else:
                        waiting[process] = out
                if waiting:
                    released = self._meet(waiting)
                    if not released:
                        raise self._deadlock(waiting)
                    for process, value in released:
                        resume[process] = (value, waiting.pop(process).parked)
                        runnable.append(process)
        finally:
            self.grid.scheduler = None
            for task in self._greenlets.values():
                if not task.dead:
                    try:
                        task.throw(GreenletExit)
                    except GreenletExit:
                        pass
        return self.results

    def _meet(self, waiting: dict[ProcessId, Rendezvous]) -> list[tuple[ProcessId, Any]]:
        released: list[tuple[ProcessId, Any]] = []
        seen: set[tuple] = set()
        for process in sorted(waiting, key=self.grid.device_id):
            wait = waiting[process]
            if wait.kind == "recv":
                if self.grid.channels.get(wait.channel):
                    released.append((process, True))
                continue
            if wait.group in seen or not all(member in waiting and waiting[member].kind == "collective" and waiting[member].group == wait.group for member in wait.group):
                continue
            seen.add(wait.group)
            members = [waiting[m] for m in wait.group]
            self._check_same_collective(members)
            contributions = [m.value for m in members]
            released.extend((m.process, contributions) for m in members)
            self.collectives += 1
        return released

    def _check_same_collective(self, members: list[Rendezvous]) -> None:
        first = members[0]
        for other in members[1:]:
            if _same_collective(first.op, other.op):
                continue
            raise GridError(
                f"devices {self.grid.device_id(first.process)} and {self.grid.device_id(other.process)} meet at different "
                f"collectives: device {self.grid.device_id(first.process)} {first.process} at {describe_op(first.op)}, "
                f"device {self.grid.device_id(other.process)} {other.process} at {describe_op(other.op)}",
                other.op.pos if other.op is not None else None,
                notes=("every process of a group must run the same collective (same op, same channel id) in the same order",))

    def _deadlock(self, waiting: dict[ProcessId, Rendezvous]) -> GridError:
        lines = []
        for process in sorted(self.tasks, key=self.grid.device_id):
            device = self.grid.device_id(process)
            if process in self.results:
                lines.append(f"device {device} {process}: finished")
            elif process in waiting:
                wait = waiting[process]
                if wait.kind == "recv":
                    lines.append(f"device {device} {process}: waits at {describe_op(wait.op)} for a send on channel {wait.channel}")
                else:
                    others = ", ".join(str(self.grid.device_id(m)) for m in wait.group)
                    lines.append(f"device {device} {process}: waits at {describe_op(wait.op)} for devices {others}")
        first = next(iter(sorted(waiting, key=self.grid.device_id)))
        return GridError(f"the grid run can never go on: {len(waiting)} of {len(self.tasks)} process(es) wait for partners that will not come",
                         waiting[first].op.pos if waiting[first].op is not None else None, notes=tuple(lines))


def _same_collective(a: Optional[Operation], b: Optional[Operation]) -> bool:
    if a is b:
        return True
    if a is None or b is None or a.name != b.name:
        return False
    if a.function is b.function:
        return False  # one program: the group must meet at the very same op
    # Processes running different programs (run_parallel) meet at ops of the same kind and channel.
    return _channel(a) == _channel(b) and [str(v.type) for v in a.results] == [str(v.type) for v in b.results]


def _channel(op: Operation) -> int:
    handle = op.attributes.get("channel_handle")
    return int(getattr(handle, "handle", 0) or 0)


def _on_device(error: HlodbgError, grid: Grid, process: ProcessId) -> HlodbgError:
    note = f"on device {grid.device_id(process)} {process} of a {grid.num_replicas}x{grid.num_partitions} grid"
    if note not in error.notes:
        error.notes = (*error.notes, note)
        error.args = (error.render(),)
    return error


ArgsLike = Union[Sequence[Any], dict]


def grid_shape(module: Module, num_replicas: Optional[int] = None, num_partitions: Optional[int] = None) -> tuple[int, int]:
    replicas = int(num_replicas if num_replicas is not None else module.num_replicas)
    partitions = int(num_partitions if num_partitions is not None else module.num_partitions)
    if replicas < 1 or partitions < 1:
        raise GridError(f"a grid needs at least one replica and one partition, not {replicas}x{partitions}")
    if replicas * partitions > MAX_DEVICES:
        raise GridError(f"a {replicas}x{partitions} grid has {replicas * partitions} devices; hlodbg emulates at most {MAX_DEVICES}")
    return replicas, partitions


__all__ = ["GridError", "GridScheduler", "Rendezvous", "ScheduledGrid", "grid_shape", "describe_op"]
