"""Elementwise results written into a dead operand's buffer.

The plain run loop (engine/run/plan.py) sets `OpCall.reuse` to the operand positions whose values
die at the op and that nothing else references (a view of it — a broadcast, a reshape — would
change under its reader; the loop checks that by reference count, as only it knows what it holds).
An evaluator asks `dead_operand(call, operands)` for one of those operands' arrays, which it
gets when it is safe to overwrite: a writeable, C-contiguous array that owns its data
(arguments and folded constants are read-only; views own nothing) with the result's dtype and the
operands' broadcast shape. The evaluator computes into it with the same numpy functions it uses
otherwise, so the result is bit-identical; it ignores the buffer when its computation cannot use it.
"""
from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np

from .registry import OpCall


def dead_operand(call: OpCall, operands: Sequence[Any]) -> Optional[np.ndarray]:
    """The array among `operands` (the evaluator's, in order) its result may be written into, or
    None. Stand-in calls (tests, tools calling an evaluator directly) may carry no `reuse`."""
    if not getattr(call, "reuse", None):
        return None
    return _dead_buffer(call, operands)


def _dead_buffer(call: OpCall, operands: Sequence[Any]) -> Optional[np.ndarray]:
    dtype = call.result_dtype
    shape = None
    for i in call.reuse:
        if i >= len(operands):
            continue
        candidate = operands[i]
        if type(candidate) is not np.ndarray or candidate.dtype != dtype:
            continue
        flags = candidate.flags
        if not (flags.writeable and flags.owndata and flags.c_contiguous):
            continue
        if shape is None:
            shape = _broadcast_shape(operands)
        if candidate.shape == shape:
            return candidate
    return None


def _broadcast_shape(operands: Sequence[Any]) -> Optional[tuple]:
    shapes = [np.shape(o) for o in operands]
    first = shapes[0]
    if all(s == first for s in shapes):
        return first
    try:
        return np.broadcast_shapes(*shapes)
    except ValueError:
        return None
