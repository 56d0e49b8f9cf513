"""Elementwise results written into a dead operand's buffer.

The plain run loop (engine/run/plan.py) sets `OpCall.reuse` to the operand positions whose values
die at the op and that nothing else references (a view of it — a broadcast, a reshape — would
change under its reader; the loop checks that by reference count, as only it knows what it holds).
An evaluator asks `dead_operand(call, operands)` for one of those operands' arrays, which it
gets when it is safe to overwrite: a writeable array that owns its data
(arguments and folded constants are read-only; views own nothing) with the result's dtype and the
operands' broadcast shape. The evaluator computes into it with the same numpy functions it uses
otherwise, so the result is bit-identical; it ignores the buffer when its computation cannot use it.
"""
from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np

from .registry import OpCall

# Smaller arrays are cheaper to allocate afresh than to check (numpy keeps a cache of small
# blocks); measured on a 2-core x86 machine, writing into a dead f32 operand breaks even between
# 64 KiB and 256 KiB. Small temporaries add little to a run's peak memory either.
REUSE_FROM_BYTES = 128 * 1024


def dead_operand(call: OpCall, operands: Sequence[Any]) -> Optional[np.ndarray]:
    """The array among `operands` (the evaluator's, in order) its result may be written into, or
    None. Stand-in calls (tests, tools calling an evaluator directly) may carry no `reuse`."""
    if not getattr(call, "reuse", None):
        return None
    return _dead_buffer(call, operands)


def _dead_buffer(call: OpCall, operands: Sequence[Any]) -> Optional[np.ndarray]:
    dtype = None
    for i in call.reuse:
        candidate = operands[i]
        # Owning its data is `base is None` for an ndarray (every view has a base).
        if (type(candidate) is not np.ndarray or candidate.nbytes < REUSE_FROM_BYTES or candidate.base is not None
                or not candidate.flags.writeable):
            continue
        if dtype is None:
            dtype = call.result_dtype
        if candidate.dtype == dtype and _result_shape(operands, candidate.shape) == candidate.shape:
            return candidate
    return None


def _result_shape(operands: Sequence[Any], shape: tuple) -> Optional[tuple]:
    """The operands' broadcast shape (`shape` when they all have it), None when they do not broadcast."""
    shapes = [o.shape if type(o) is np.ndarray else np.shape(o) for o in operands]
    if all(s == shape for s in shapes):
        return shape
    try:
        return np.broadcast_shapes(*shapes)
    except ValueError:
        return None
