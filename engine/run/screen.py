"""Screening a plain run's values for NaN and Inf, at the plain loop's speed.

`hlodbg run --break-on nan|inf|nonfinite` wants the first op instance whose result holds a NaN or
an Inf. Telling every op to a listener (the observed loop) costs a Python call or two per op, which
on a loop of scalar ops is several times the op itself. A screened run instead stays plain (the
loop and its compiled blocks, unfused so that every op's value exists) and, after each step whose
results can hold a NaN (`screened_results`: float, complex and tuple results), asks
`surely_finite` — one dot product — and only when that fails calls the interpreter's `screen`
hook. The hook decides; to report a hit it raises, and the caller finds the op instance, its event
number and frames by running again observed (engine/debug/scan.py): runs are deterministic, so the
second run meets the same value at the same op instance.
"""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from ..ir.core import Operation
from ..ir.types import TupleType, is_complex, is_float
from ..machine.xla.device_values import looked_at_on_device, nonfinite_counts, to_host

_BLAS_FLOATS = "fd"  # float32, float64: dot products of these are fast and exact enough to screen


def surely_finite(output: Any) -> bool:
    """True when an op's raw output (one array) certainly holds no NaN or Inf. It runs once per
    op while a value breakpoint watches the run, so it is a screen, not a count: False only
    means "look closer" (several results, narrow floats, a dropped value, overflow).

    For float32/float64 it uses x·x: a NaN makes it NaN and an Inf makes it +Inf (squares are
    never negative, so no Inf - Inf), while finite elements give a finite sum unless it
    overflows, which only sends the op to the exact check."""
    if type(output) is not np.ndarray:
        if looked_at_on_device(output):
            return not any(nonfinite_counts(output))
        output = to_host(output)  # an XLA CPU device's array
        if type(output) is not np.ndarray:
            return False
    if output.dtype.char in _BLAS_FLOATS:
        if not output.ndim:
            return math.isfinite(output)  # a scalar (loops of them): no product needed
        flat = output if output.ndim == 1 else output.ravel()
        return math.isfinite(flat.dot(flat))
    return output.dtype.kind in "biu"


def screened_results(op: Operation) -> tuple[int, ...]:
    """The positions of `op`'s results that can hold a NaN or an Inf (by their types)."""
    return tuple(i for i, value in enumerate(op.results)
                 if is_float(value.type) or is_complex(value.type) or isinstance(value.type, TupleType))


def screen_step(hook: Callable[[Any, Any], None], step: Any, out: Any) -> None:
    """Hand `hook` each of `step`'s screened values (`out`: its evaluator's output) that
    surely_finite does not clear."""
    if step.single:
        if not surely_finite(out):
            hook(step, out)
        return
    for j in step.screened:
        if not surely_finite(out[j]):
            hook(step, out[j])


__all__ = ["screen_step", "screened_results", "surely_finite"]
