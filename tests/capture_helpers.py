"""Captures for tests, made without a device: `write_capture` runs a program in hlodbg's own
interpreter (on one process or on its emulated grid), collects every op instance's results named
as a capture names them (capture_format.frame_context, site) and writes them with CaptureWriter —
`alter` changing chosen values on the way (a NaN at one loop iteration, a value perturbed on one
device) to stand in for what a real device did differently.

What it leaves out is what a capture of a compiled run leaves out: values inside reducer bodies
(frames of kind "body"), tokens and tuples. On a grid, values inside a manual computation get a
row per device; the others are global values, written once at device 0.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Optional, Sequence

import numpy as np

from hlodbg.engine.ir.core import Module
from hlodbg.engine.run.capture_format import CaptureWriter, frame_context, site
from hlodbg.engine.run.interpreter import Interpreter, Listener

# (context, site, result, device, array) -> the array to write (the same one, or an altered copy)
Alter = Callable[[str, str, int, int, np.ndarray], np.ndarray]


class _Collector(Listener):
    def __init__(self, writer: CaptureWriter, device: int, alter: Optional[Alter], grid: bool):
        self.writer = writer
        self.device = device
        self.alter = alter
        self.grid = grid

    def after_op(self, event, frame, op, operands, results) -> None:
        kinds = []
        f = frame
        while f is not None:
            kinds.append(f.kind)
            f = f.parent
        if "body" in kinds:  # a reducer body's op: fused by XLA, never captured
            return
        per_device = "manual" in kinds
        if self.grid and not per_device and self.device != 0:
            return  # a global value: device 0 holds the whole array
        context = frame_context(frame)
        where = site(op)
        for k, value in enumerate(results):
            if not isinstance(value, np.ndarray):
                continue  # tokens and tuples
            array = np.asarray(value)
            if self.alter is not None:
                array = self.alter(context, where, k, self.device, array)
            self.writer.add(op, k, context, self.device, array)


def write_capture(module: Module, program_text: str, args: Sequence[Any], directory: Path,
                  alter: Optional[Alter] = None, entry: str = "main", grid: tuple[int, int] = (1, 1),
                  kind: str = "cpu") -> Path:
    """Run `module` on `args` (on `grid` when it has several devices) and write the capture of
    that run to `directory`; returns it."""
    writer = CaptureWriter(directory)
    replicas, partitions = grid
    count = replicas * partitions
    if count == 1:
        Interpreter(module, listeners=[_Collector(writer, 0, alter, False)]).run(entry, args)
    else:
        _run_grid_with(module, args, entry, replicas, partitions, writer, alter)
    manifest = {
        "program": str(getattr(module.source, "name", "program.mlir")), "entry": entry, "target": f"xla:{kind}",
        "platform": kind, "jax_version": "none (written by hlodbg's interpreter for tests)",
        "devices": [{"id": d, "kind": kind, "host": 0} for d in range(count)], "grid": [replicas, partitions],
        "hosts": 1, "values": "all", "loop_capacity": None, "left_out": [],
        "global_values": "device 0 holds the global array",
    }
    writer.finish(manifest, program_text, [np.asarray(a) for a in args])
    return directory


def _run_grid_with(module, args, entry, replicas, partitions, writer, alter) -> None:
    from collections import deque

    from hlodbg.engine.run.grid import GridScheduler, ScheduledGrid

    grid = ScheduledGrid(replicas, partitions, infeed=deque())
    tasks = {}
    for process in grid.processes():
        device = process.replica_id * partitions + process.partition_id
        interpreter = Interpreter(module, process=process, grid=grid, listeners=[_Collector(writer, device, alter, True)])
        tasks[process] = (lambda i=interpreter: i.run(entry, args))
    GridScheduler(grid, tasks).run()


__all__ = ["Alter", "write_capture"]
