"""What a recording's memory is made of, and what it may hold.

A session keeps values (ValueStore: a window of recent ones, checkpoints, what the user pins) and
the history of its run (the Trace: every event and frame record). Both count against its budget:
`--memory`, or by default a budget for values from the arguments' size and a budget for the
history from the machine's memory. This module holds those budgets, what an array costs to keep,
and the words of a "memory" stop.
"""
from __future__ import annotations

import sys
from typing import Any

import numpy as np

from ..machine.memory import physical_memory
from ..machine.xla.device_values import device_bytes, is_device_array

# A session's budget without `--memory`: what the entry's arguments hold (a training step's values
# live at its checkpoints — activations, gradients — are of that order, and its session then stays
# within 1.5x its arguments and results), never less than SMALLEST_DEFAULT_BUDGET (a small program
# keeps every value) nor more than a quarter of the machine's memory.
SMALLEST_DEFAULT_BUDGET = 256 << 20

# Compute time between two checkpoints of the live state, at first; it doubles whenever the
# checkpoints would hold more than half the budget. Going back to any event re-runs at most about
# this much of the program (ValueStore.checkpoint).
FIRST_CHECKPOINT_SECONDS = 0.2


# What the run's history (its trace: every event and frame record, values aside) may hold. Everything
# a session holds counts against an explicit `--memory`, except that the history may always take
# this much, so that a budget small enough to make values be dropped (`--memory 1K`) still records
# a program. Without `--memory` the history may take a quarter of the machine's memory (about 7M
# iterations of a small loop on 24 GiB). Past it the run stops ("memory") rather than grow.
SMALLEST_HISTORY_BUDGET = 64 << 20


def default_history_budget(devices: int = 1) -> int:
    """What one device's history may hold without `--memory`: its share of a quarter of the
    machine's memory, never under SMALLEST_HISTORY_BUDGET."""
    memory = physical_memory()
    return max(SMALLEST_HISTORY_BUDGET, (memory // 4 if memory else 4 << 30) // devices)


def default_budget(arguments_bytes: int = 0) -> int:
    """The budget for recorded values when the user gives none (see SMALLEST_DEFAULT_BUDGET)."""
    memory = physical_memory()
    most = memory // 4 if memory else 4 << 30
    return min(most, max(SMALLEST_DEFAULT_BUDGET, arguments_bytes))


def memory_owner(array: np.ndarray) -> Any:
    """What holds `array`'s memory: the array at the end of its base chain that owns its data, or
    the buffer under it (an mmap of a file, bytes) when no array does."""
    while isinstance(array, np.ndarray) and array.base is not None:
        array = array.base
    return array


def nbytes(out: Any, overhead: int = 0) -> int:
    """Memory a result holds on its own (views of other arrays hold none), plus `overhead` for
    each array that holds some."""
    if type(out) is np.ndarray:
        return out.nbytes + overhead if out.base is None else 0
    if isinstance(out, (list, tuple)):
        return sum(nbytes(o, overhead) for o in out)
    if isinstance(out, np.ndarray):
        return out.nbytes + overhead if out.base is None else 0
    return device_bytes(out) + overhead if is_device_array(out) else 0


def argument_bytes(args: list) -> int:
    """The bytes of a run's arguments (views and memory-mapped files included; tuples flattened)."""
    total = 0
    for arg in args:
        if isinstance(arg, (list, tuple)):
            total += argument_bytes(list(arg))
        elif isinstance(arg, np.ndarray):
            total += arg.nbytes
    return total


# What keeping an array costs beyond its elements: numpy's object, shape and strides. A loop over
# scalars keeps millions of 0-d arrays, a few bytes of data in about a hundred of memory each;
# the budget counts both, so that it bounds what the recording really holds.
ARRAY_OVERHEAD = sys.getsizeof(np.empty((), np.int8)) - 1


def memory_full_message(store: Any) -> str:
    """Why a run stopped with its history filling its ValueStore's budget, and the ways on."""
    trace = store.trace
    mib = 1 << 20
    return (f"the recording holds its memory budget: {len(trace):,} events of history "
            f"({trace.history_bytes() / mib:.0f} MiB) and {store.bytes / mib:.0f} MiB of values, of "
            f"{(store.history_budget + store.allowance) / mib:.0f} MiB; it stopped here rather than grow. "
            f"Going on lets it grow by {store.history_budget / 8 / mib:.0f} MiB at a time; "
            f"restart with a larger --memory to record further in one go")
