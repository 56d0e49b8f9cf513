"""From the instrumented run's extra results to captured value instances.

Each extra result (transform.Output) holds every instance of one value: its leading dimensions
are the steps' (a loop's rows, a manual computation's mesh coordinates). Walking the steps gives
each instance's context, the same text `capture_format.frame_context` gives for the interpreter's
frames: a call's site, a loop's site and `[i]` for rows 0..n-1 (n from the loop's counter; rows
past the capacity were not kept), a branch's site when the captured predicate/index says it ran,
a manual computation's site with one instance per mesh position.

Only the pieces of the results this host holds are read (`Runtime.local_shards`), each brought
to the host once; on many hosts every host yields its own devices' per-device values, and the
host holding device 0 the global ones.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Optional, Sequence

import numpy as np

from ..capture_format import context_step, join_context, site
from .transform import Output, Step


@dataclass(frozen=True)
class Where:
    """An instance's place: its context, its index into the leading dimensions, and the mesh
    coordinates fixed by the manual computations it is inside ((axis, coordinate), ...)."""

    context: str = ""
    index: tuple[int, ...] = ()
    coordinates: tuple[tuple[str, int], ...] = ()

    def enter(self, step_text: str, index: tuple[int, ...] = (), coordinates: tuple = ()) -> "Where":
        return Where(join_context(self.context, step_text), self.index + index, self.coordinates + coordinates)


@dataclass(frozen=True)
class Instance:
    output: Output
    context: str
    device: int
    array: np.ndarray


class Pieces:
    """One extra result as this host holds it: (grid device, global index, device array) per
    piece, each brought to the host on first read."""

    def __init__(self, pieces: Sequence[tuple[int, tuple, Any]], to_host: Callable[[Any], np.ndarray]):
        self.pieces = list(pieces)
        self.to_host = to_host
        self.host: dict[int, np.ndarray] = {}

    def read(self, index: tuple[int, ...], device: Optional[int]) -> Optional[np.ndarray]:
        """The sub-array at the leading `index`, from `device`'s piece when it has it, else any."""
        order = sorted(range(len(self.pieces)), key=lambda k: self.pieces[k][0] != device)
        for k in order:
            _, slices, _ = self.pieces[k]
            local = []
            for position, part in zip(index, slices):
                start, stop, _ = part.indices(1 << 62)
                if not start <= position < stop:
                    break
                local.append(position - start)
            else:
                if k not in self.host:
                    self.host[k] = np.asarray(self.to_host(self.pieces[k][2]))
                array = self.host[k]
                if array.ndim < len(index):
                    return None
                return array[tuple(local)]
        return None


class Decoder:
    """Turns the extra results into instances. `global_devices`: the devices a value outside
    every manual computation is written for (device 0 of a sharded program, written by the host
    holding it; each device of a replicated program); `local`: the grid devices of this host."""

    def __init__(self, outputs: Sequence[Output], pieces: Sequence[Pieces], global_devices: Sequence[int],
                 local: set[int]):
        self.outputs = list(outputs)
        self.pieces = list(pieces)
        self.global_devices = list(global_devices)
        self.local = local
        self.controls: dict[tuple, int] = {}
        self.beyond: dict[tuple[str, str], tuple[int, int]] = {}  # loops that ran past their capacity

    def instances(self) -> Iterator[Instance]:
        paired = list(zip(self.outputs, self.pieces))
        controls = sorted((p for p in paired if p[0].kind != "value"), key=lambda p: len(p[0].steps))
        for output, pieces in controls:
            for where, devices in self._places(output):
                array = pieces.read(where.index, devices[0] if devices else None)
                if array is not None:
                    self.controls[(output.kind, site(output.op), where.context, where.coordinates)] = _control(output, array)
        for output, pieces in paired:
            if output.kind != "value":
                continue
            for where, devices in self._places(output):
                for device in devices:
                    if device not in self.local:
                        continue
                    array = pieces.read(where.index, device)
                    if array is not None:
                        yield Instance(output, where.context, device, array)

    def left_out(self) -> list[str]:
        return [f"iterations {capacity}..{count - 1} of the loop {loop}{f' in {context}' if context else ''} "
                f"(it ran {count}; raise --loop-capacity to keep them)"
                for (context, loop), (count, capacity) in sorted(self.beyond.items())]

    # -- walking the steps ---------------------------------------------------------------------
    def _places(self, output: Output) -> Iterator[tuple[Where, list[int]]]:
        for where in self._walk(output.steps, Where()):
            yield where, self._devices(where)

    def _devices(self, where: Where) -> list[int]:
        if not where.coordinates:
            return self.global_devices
        mesh = self._mesh
        chosen = np.ones(mesh.size, bool)
        for axis, coordinate in where.coordinates:
            coordinates, _ = mesh.axis_coordinates(axis, None)
            chosen &= coordinates == coordinate
        return [int(mesh.device_ids[p]) for p in np.flatnonzero(chosen)]

    def _walk(self, steps: tuple[Step, ...], where: Where) -> Iterator[Where]:
        if not steps:
            yield where
            return
        step, rest = steps[0], steps[1:]
        text = site(step.op)
        if step.kind == "call":
            yield from self._walk(rest, where.enter(text))
        elif step.kind == "loop":
            count = self.controls.get(("count", text, where.context, where.coordinates))
            if count is None:
                return
            if count > step.capacity:
                self.beyond[(where.context, text)] = (count, step.capacity)
            for i in range(min(count, step.capacity)):
                yield from self._walk(rest, where.enter(context_step(step.op, i), (i,)))
        elif step.kind == "last":
            count = self.controls.get(("count", text, where.context, where.coordinates))
            if count is not None:
                yield from self._walk(rest, where.enter(context_step(step.op, count)))
        elif step.kind == "branch":
            if self.controls.get(("taken", text, where.context, where.coordinates)) == step.branch:
                yield from self._walk(rest, where.enter(text))
        elif step.kind == "manual":
            self._mesh = step.mesh
            names = [axis for axis, _ in step.axes]
            for coordinates in itertools.product(*(range(size) for _, size in step.axes)):
                inner = where.enter(text, coordinates, tuple(zip(names, coordinates)))
                if any(device in self.local for device in self._devices(inner)):
                    yield from self._walk(rest, inner)
        else:
            raise ValueError(f"unknown capture step {step.kind!r}")


def _control(output: Output, array: np.ndarray) -> int:
    """A loop's iteration count, or the region an if/case ran (an index out of range runs the
    last branch, as the spec says)."""
    value = int(np.asarray(array))
    if output.kind == "taken":
        if output.op.name == "stablehlo.if":
            return 0 if value else 1
        branches = len(output.op.regions)
        return value if 0 <= value < branches else branches - 1
    return value
