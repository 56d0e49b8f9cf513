"""`interpreter.probe` and `check.expect_serialized_eq`: values kept in a probe directory.

The layout is the reference interpreter's (stablehlo-translate --interpret --probe-output-dir):
every probe writes `probe<N>.npy` (N counts the probes written to that directory, so no probe_id
ever becomes part of a file name: "probe/0" is a fine id) and appends `probe_id,type,path` to
`index.csv`. `check.expect_serialized_eq %v, probe_id = "x", iter = K` reads back the K-th value
(from 0) probe "x" recorded — a probe inside a loop records once per iteration — checks that it
was recorded with the type of %v and compares it element by element with %v.

Without a probe directory (a plain `hlodbg run` or the debugger) a probe only passes its operand
on; `hlodbg check` gives every module a fresh directory of its own.
"""
from __future__ import annotations

import csv
import os
from typing import Optional

import numpy as np

from ..ir.dtypes import element_dtype
from .checks import expect_eq_failure, record_check
from .registry import OpCall, op

INDEX = "index.csv"


@op("interpreter.probe")
def probe(call: OpCall, operand: np.ndarray) -> np.ndarray:
    directory = call.interpreter.probe_dir
    if directory is not None:
        write_probe(call, directory, str(call.attr("probe_id")), np.asarray(operand))
    return operand


def write_probe(call: OpCall, directory: str, probe_id: str, value: np.ndarray) -> None:
    counts = call.interpreter.probe_counts  # shared with the processes of interpreter.run_parallel
    number = counts.get(directory, 0)
    counts[directory] = number + 1
    path = os.path.join(directory, f"probe{number}.npy")
    try:
        os.makedirs(directory, exist_ok=True)
        # Narrow types (bf16, f8, i4, ...) are saved as their bytes; the reader views them again.
        np.save(path, value)
        with open(os.path.join(directory, INDEX), "a", newline="") as index:
            csv.writer(index).writerow([probe_id, str(call.operand_types[0]), path])
    except OSError as e:
        raise call.error(f"cannot write probe {probe_id!r} to {directory}: {e.strerror or e}") from None


@op("check.expect_serialized_eq")
def expect_serialized_eq(call: OpCall, expected: np.ndarray) -> list:
    probe_id = str(call.attr("probe_id"))
    iteration = int(call.attr("iteration", 0))
    record_check(call, "expect_serialized_eq", _serialized_failure(call, probe_id, iteration, np.asarray(expected)))
    return []


def _serialized_failure(call: OpCall, probe_id: str, iteration: int, expected: np.ndarray) -> Optional[str]:
    directory = call.interpreter.probe_dir
    if directory is None:
        return f"no probe directory to read probe {probe_id!r} from (hlodbg check gives each module one)"
    records = probe_records(directory, probe_id)
    if iteration >= len(records):
        times = "never" if not records else f"only {len(records)} time(s)"
        return f"probe {probe_id!r} iteration {iteration} was not recorded (the probe ran {times})"
    recorded_type, path = records[iteration]
    expected_type = str(call.operand_types[0])
    if recorded_type != expected_type:
        return f"probe {probe_id!r} recorded a {recorded_type}, expected a {expected_type}"
    try:
        stored = np.load(path, allow_pickle=False)
    except (OSError, ValueError) as e:
        return f"cannot read probe {probe_id!r} iteration {iteration} from {path}: {e}"
    dtype = element_dtype(call.operand_types[0])
    if stored.dtype != dtype and stored.dtype.itemsize == dtype.itemsize and stored.dtype.kind == "V":
        stored = stored.view(dtype)
    return expect_eq_failure(stored, expected)


def probe_records(directory: str, probe_id: str) -> list[tuple[str, str]]:
    """(type, path) of every value probe `probe_id` wrote to `directory`, in order."""
    try:
        with open(os.path.join(directory, INDEX), newline="") as index:
            rows = list(csv.reader(index))
    except OSError:
        return []
    return [(row[1], row[2]) for row in rows if len(row) == 3 and row[0] == probe_id]
