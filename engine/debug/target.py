"""What a debugger front end drives: one protocol for a run on one process or on a grid.

The UI and the CLI talk to a `DebugTarget` and never ask which kind they hold:

    processes, focus, session      the devices, the one in focus, and its Session (what panes show)
    sessions                       every device's Session, by process
    multi_device                   whether there are devices to show side by side
    move(name, *args)              step / step_in / step_out / back / back_in / back_out /
                                   continue_ / reverse_continue / run_to / goto / restart, on the
                                   focused device (the others follow in lock-step on a grid)
    set_focus(process), lockstep, toggle_lockstep()
    break_at(spec, condition, device=None), toggle_breakpoint(op), breakpoints, watches()
    values_of(op)                  each device's latest operands and results of an op
    waiting()                      per device: held at a collective its partners have not reached
    device_id / process_of / grid_shape / describe_focus / error / close()

`SingleTarget` wraps one lazy Session (an endless program can still be stepped: nothing runs
ahead of the cursor); `GridSession` (grid_session.py) records every process under the grid
scheduler. `open_target` (launch.py) builds either from a module and the user's arguments.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Optional, Protocol, Sequence

from ..ir.attributes import SdyMesh
from ..ir.core import Module, Operation
from ..ir.errors import HlodbgError
from ..machine.process import Grid, ProcessId
from ..run.grid import GridError
from .breakpoints import Breakpoint
from .session import Session
from .stops import Stop

MOVES = ("step", "step_in", "step_out", "back", "back_in", "back_out", "continue_", "reverse_continue",
         "run_to", "goto", "restart")


def move_words(name: str) -> str:
    """A move as people say it ("continue", "step in", "reverse continue"), for messages."""
    return name.rstrip("_").replace("_", " ")


class TargetError(GridError):
    """A request a target cannot meet: a device off the grid, lock-step on one process, ..."""


@dataclass
class DeviceValue:
    """One device's side of an op (a collective's, typically): what went in and what came out."""

    process: ProcessId
    device: int
    event: Optional[int]
    inputs: list
    outputs: list  # empty when the device has not run the op yet
    group: tuple = ()  # devices of its process group (collectives)
    sends_to: Optional[int] = None  # collective_permute: the device it sends to
    receives_from: Optional[int] = None


class DebugTarget(Protocol):
    module: Module
    grid: Grid
    processes: list[ProcessId]
    sessions: dict[ProcessId, Session]
    focus: ProcessId
    lockstep: bool
    error: Optional[HlodbgError]

    @property
    def session(self) -> Session: ...

    @property
    def multi_device(self) -> bool: ...

    def move(self, name: str, *args: Any) -> Stop: ...

    def set_focus(self, process: ProcessId) -> None: ...

    def toggle_lockstep(self) -> bool: ...

    def break_at(self, spec: str, condition: Optional[str] = None, device: Optional[ProcessId] = None,
                 saved: bool = True) -> list[Breakpoint]: ...

    def toggle_breakpoint(self, op: Operation) -> str: ...

    def values_of(self, op: Operation) -> list[DeviceValue]: ...

    def waiting(self) -> dict[ProcessId, bool]: ...

    def close(self) -> None: ...


class TargetBase:
    """What every target does the same way, given `module`, `grid`, `processes`, `sessions`,
    `focus` and `lockstep`."""

    module: Module
    grid: Grid
    processes: list[ProcessId]
    sessions: dict[ProcessId, Session]
    focus: ProcessId
    lockstep: bool
    error: Optional[HlodbgError] = None

    @property
    def session(self) -> Session:
        return self.sessions[self.focus]

    @property
    def multi_device(self) -> bool:
        return len(self.processes) > 1

    @property
    def breakpoints(self) -> list[Breakpoint]:
        """The focused device's breakpoints (a global one is listed once, as every device has it)."""
        return list(self.session.breakpoints.breakpoints)

    def watches(self) -> list[tuple[str, Any]]:
        return self.session.watches()

    def device_id(self, process: ProcessId) -> int:
        return self.grid.device_id(process)

    def process_of(self, device: int) -> ProcessId:
        if not 0 <= device < len(self.processes):
            raise TargetError(f"device {device} is not on the grid (0-{len(self.processes) - 1})")
        return self.grid.process_of(device)

    def set_focus(self, process: ProcessId) -> None:
        if process not in self.sessions:
            raise TargetError(f"device {process} is not on the {self.grid.num_replicas}x{self.grid.num_partitions} grid")
        self.focus = process

    def next_device(self) -> int:
        """The device after the focused one, round the grid."""
        if not self.multi_device:
            raise TargetError("one process: there is no other device")
        return (self.device_id(self.focus) + 1) % len(self.processes)

    def toggle_lockstep(self) -> bool:
        if not self.multi_device:
            raise TargetError("one process: nothing to keep in step")
        self.lockstep = not self.lockstep
        return self.lockstep

    def describe_focus(self) -> str:
        """For a status bar: which device is in focus and how the others move."""
        if not self.multi_device:
            return self.session.backend.describe()  # one device: the machine it is ("cpu", "tpu-v5e")
        process = self.focus
        mode = "lock-step" if self.lockstep else "alone"
        return (f"device {self.device_id(process)} of {len(self.processes)} "
                f"(replica {process.replica_id}, partition {process.partition_id}, {mode})")

    def break_at(self, spec: str, condition: Optional[str] = None, device: Optional[ProcessId] = None,
                 saved: bool = True) -> list[Breakpoint]:
        """A breakpoint on every device, or only on `device` (saved with the program unless
        `saved` is False)."""
        if device is not None and device not in self.sessions:
            raise TargetError(f"device {device} is not on the {self.grid.num_replicas}x{self.grid.num_partitions} grid")
        targets = [device] if device is not None else self.processes
        return [self.sessions[p].break_at(spec, condition, saved=saved) for p in targets]

    def toggle_breakpoint(self, op: Operation) -> str:
        """Clear the op's breakpoint on every device, or set one there; what happened, in words."""
        removed = []
        for session in self.sessions.values():
            table = session.breakpoints
            for bp in list(table.breakpoints):
                if bp.ops == frozenset({op}) and bp.kind == "op":
                    table.remove(bp.id)
                    removed.append(bp)
        if removed:
            return f"removed breakpoint #{removed[0].id} {removed[0].spec}"
        function = op.function.sym_name if op.function is not None else "main"
        spec = f"@{function}:{op.results[0].name}" if op.results else str(op.pos.line)
        bps = self.break_at(spec)
        return f"breakpoint {bps[0].describe()}" + (f" on all {len(bps)} devices" if len(bps) > 1 else "")

    def mesh(self) -> Optional[SdyMesh]:
        """The module's Shardy mesh (the first `sdy.mesh`), when it has one."""
        for op in self.module.operations:
            mesh = op.attributes.get("mesh") if op.name == "sdy.mesh" else None
            if isinstance(mesh, SdyMesh):
                return mesh
        return None

    def mesh_coordinates(self, device: int) -> tuple[tuple[str, int], ...]:
        """Where `device` sits on the mesh: ((axis name, index), ...), major axis first; () when the
        module has no mesh or the mesh does not cover the grid's devices."""
        mesh = self.mesh()
        if mesh is None:
            return ()
        sizes = [int(size) for _, size in mesh.axes]
        positions = list(mesh.device_ids) if mesh.device_ids else list(range(math.prod(sizes)))
        if device not in positions or len(positions) != self.grid.num_replicas * self.grid.num_partitions:
            return ()
        index = positions.index(device)
        coordinates = []
        for size in reversed(sizes):
            index, within = divmod(index, size)
            coordinates.append(within)
        return tuple(zip((name for name, _ in mesh.axes), reversed(coordinates)))

    def grid_shape(self) -> tuple[int, int]:
        """Rows x columns to draw the devices in: the Shardy mesh when there is one, else replicas
        x partitions (a single row of many devices folds into a square)."""
        replicas, partitions = self.grid.num_replicas, self.grid.num_partitions
        mesh = self.mesh()
        if mesh is not None:
            sizes = [int(size) for _, size in mesh.axes]
            if len(sizes) == 2 and sizes[0] * sizes[1] == replicas * partitions:
                return sizes[0], sizes[1]
        count = replicas * partitions
        if min(replicas, partitions) == 1 and count > 2:
            columns = math.ceil(math.sqrt(count))
            return math.ceil(count / columns), columns
        return replicas, partitions

    def close(self) -> None:
        for session in self.sessions.values():
            session.close()


class SingleTarget(TargetBase):
    """One process, recorded lazily as the cursor moves."""

    def __init__(self, session: Session):
        self.module = session.module
        self.grid = session.grid if session.grid is not None else Grid(1, 1)
        self.focus = session.process
        self.processes = [session.process]
        self.sessions = {session.process: session}
        self.lockstep = True
        self.error = None

    def move(self, name: str, *args: Any) -> Stop:
        if name not in MOVES:
            raise TargetError(f"unknown move '{name}' ({', '.join(MOVES)})")
        return getattr(self.session, name)(*args)

    def values_of(self, op: Operation) -> list[DeviceValue]:
        session = self.session
        event = latest_run(session, op)
        inputs, outputs = [], []
        if event is not None:
            view = session.event(event)
            inputs, outputs = view.inputs, view.outputs
        return [DeviceValue(self.focus, self.device_id(self.focus), event, inputs, outputs)]

    def waiting(self) -> dict[ProcessId, bool]:
        return {self.focus: False}


def latest_run(session: Session, op: Operation, events: Optional[Sequence[int]] = None) -> Optional[int]:
    """The op's run about to happen at the cursor, else its last finished run before it.
    `events` (the op's events in order) saves a scan of the trace when the caller has them."""
    trace = session.trace
    position = session.position
    if position < len(trace) and trace.ops[position] is op:
        return position
    candidates = events if events is not None else [e for e in range(min(position, len(trace))) if trace.ops[e] is op]
    for e in reversed(candidates):
        if e < position and trace.done(e):
            return e
    return None


__all__ = ["DebugTarget", "DeviceValue", "MOVES", "SingleTarget", "TargetBase", "TargetError", "latest_run"]
