"""What a device holds, for the panes: a value's layout and bytes (the inspector's physical view) and
the device's memory at the current op (the memory pane, the grid's cells).

The memory profile (engine/run/memory_profile.py) is static and computed once per run, in a
worker; after each move only the current op is looked up in it (`DeviceMemory.site`), so a step
costs an index lookup. Everything here runs in the session thread, like the rest of
SessionController.state().
"""
from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np

from hlodbg.engine.debug.stops import FrameInfo
from hlodbg.engine.ir.core import Operation, Value
from hlodbg.engine.ir.dtypes import bit_width
from hlodbg.engine.ir.errors import HlodbgError
from hlodbg.engine.ir.locations import describe
from hlodbg.engine.ir.types import TensorType
from hlodbg.engine.machine.layout import Layout, LayoutError
from hlodbg.engine.run.memory_profile import DeviceMemory, MemoryAnalysis
from hlodbg.layouts.labels import op_display as op_label

from .state import BufferView, MemoryView, StorageView

LIVE_BUFFERS_SHOWN = 12


def storage_of(backend: Any, ir_value: Any, value: Any) -> Optional[StorageView]:
    """How `backend`'s device holds `value`, the run-time value of `ir_value`: a TPU's assigned
    layout, or the CPU's row-major one. None for what has no buffer of its own: tokens, tuples,
    dynamic shapes, a reducer body's values run on whole arrays at once."""
    if not isinstance(ir_value, Value) or not isinstance(value, np.ndarray):
        return None
    type_ = ir_value.type
    if not isinstance(type_, TensorType) or not type_.is_static or tuple(type_.shape) != value.shape:
        return None
    shape, dtype = tuple(type_.shape), type_.element.numpy_dtype
    try:
        assigned = backend.layout_for(ir_value)
        if assigned is None:
            layout, source = _dense_layout(len(shape), np.dtype(dtype)), ""
        else:
            layout, source = assigned.layout, assigned.source
        logical, physical = backend.buffer_bytes(ir_value)
    except (HlodbgError, LayoutError, KeyError, RuntimeError):
        return None  # a value the backend never laid out (not an SSA value of the prepared module)
    return StorageView(backend.describe(), layout, source, shape, np.dtype(dtype), logical, physical)


def _dense_layout(rank: int, dtype: np.dtype) -> Layout:
    """The CPU's row-major layout; sub-byte types packed (E(4) for int4), as the CPU backend counts
    their bytes (Backend.buffer_bytes), so the cursor's byte and word agree with the size shown."""
    bits = bit_width(dtype) if dtype.kind != "b" else 8
    layout = Layout.row_major(rank)
    return Layout(layout.minor_to_major, element_size_in_bits=bits) if bits < dtype.itemsize * 8 else layout


def memory_analysis(target: Any) -> MemoryAnalysis:
    """The memory profile of the target's run on every device (slow for a big program: a worker
    computes it). The focused session's backend stands for the target: `for_device` gives each
    device its own instance, as the run does."""
    session = target.session
    return MemoryAnalysis(target.module, session.backend, entry=session.entry,
                          replicas=target.grid.num_replicas, partitions=target.grid.num_partitions)


def site_ops(stack: Sequence[FrameInfo]) -> list[Operation]:
    """The op running in each function on the way down the stack (entry first): what
    `DeviceMemory.site` takes. Region frames (loop bodies, branches) stay in their function, so
    their op stands in for the enclosing one; a call's frame starts the next function."""
    ops: list[Operation] = []
    for frame in stack:
        if frame.op is None:
            continue
        if ops and frame.kind != "function":
            ops[-1] = frame.op
        else:
            ops.append(frame.op)
    return ops


def device_site(device: DeviceMemory, ops: Sequence[Operation]):
    """The moment `ops[-1]` runs on `device`; a frame the profile does not know (a replay, a body
    run on whole arrays) counts as its outermost op that it does. No ops (the run has finished):
    the entry function's last op, its return."""
    ops = list(ops)
    while ops:
        try:
            return device.site(ops)
        except ValueError:
            ops.pop()
    entry = device.entry.liveness
    return device.site([entry.ops[-1]]) if entry.size else None


def bytes_in_use(device: DeviceMemory, ops: Sequence[Operation]) -> Optional[int]:
    site = device_site(device, ops)
    return site.bytes if site is not None else None


def memory_view(analysis: MemoryAnalysis, process: Any, device_label: str, ops: Sequence[Operation],
                finished: bool) -> MemoryView:
    """The focused device's memory at the op the stack is at (at the end: the entry's last op)."""
    device = analysis.device(process)
    site = device_site(device, ops)
    peak_site = device.peak_site()
    peak_op = peak_site.op
    peak_function = peak_site.function.sym_name
    peak_where = f"{op_label(peak_op)} in @{peak_function}{_location(peak_op)}"
    buffers: list[BufferView] = []
    in_use = logical = 0
    where = ""
    if site is not None:
        in_use = site.bytes
        live = site.buffers()
        logical = sum(b.logical_bytes for b in live)
        entry = device.entry.function.sym_name
        for b in live[:LIVE_BUFFERS_SHOWN]:
            name = b.name if not b.function or b.function == entry else f"@{b.function}:{b.name}"
            layout = f"{b.layout} {b.layout_source}" if b.layout else ""
            buffers.append(BufferView(name, b.type, layout, b.logical_bytes, b.physical_bytes))
        where = f"{'after' if finished else 'at'} {op_label(site.op)}{_location(site.op)}"
    capacity = device.backend.device_memory()
    entry = device.entry
    return MemoryView(device_label, analysis.target, in_use, logical, device.capacity_bytes, device.capacity_label,
                      device.peak_bytes, peak_where, buffers, where, capacity.short_name, capacity.on_accelerator,
                      entry.timeline, _entry_position(entry, ops))


def _entry_position(entry: Any, ops: Sequence[Operation]) -> Optional[int]:
    """Where in the entry function the run is: its outermost op's position (a call's, when the
    run is inside the callee); the last position once the run has finished."""
    size = len(entry.timeline)
    if not size:
        return None
    if not ops:
        return size - 1
    try:
        return entry.position_of(ops[0])
    except (KeyError, ValueError):
        return None


def _location(op: Operation) -> str:
    """` (model.py:88 (jit(f)/dot))`: where the producer made the op, else its line in the program."""
    text = describe(op.location) if op.location is not None else ""
    if not text and op.pos is not None:
        text = f"{op.pos.filename.rsplit('/', 1)[-1]}:{op.pos.line}"
    return f" ({text})" if text else ""


__all__ = ["bytes_in_use", "memory_analysis", "memory_view", "site_ops", "storage_of"]
