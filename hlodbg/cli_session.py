"""`hlodbg run --probe DIR` and `hlodbg run --break-on nan|inf|EXPR`: runs through a session."""
from __future__ import annotations

import csv
import re
import sys
from pathlib import Path
from typing import Any

import numpy as np

from hlodbg.engine import ExecutionError
from hlodbg.engine.ir.dtypes import Token
from hlodbg.engine.debug.stops import op_label
from hlodbg.engine.debug.summary import summarize

EXIT_BREAK = 3


def open_session(program, entry: str, values: list, memory):
    """A session on one process with the command line's own breakpoints (not saved)."""
    from hlodbg.engine.run.arguments import ArgumentError

    try:
        target = program.debug(values, entry=entry, memory=memory, persist=False, replicas=1, partitions=1)
    except ArgumentError as e:
        raise ExecutionError(f"--memory: {e.message}") from None
    return target.session


def break_on(session, spec: str, program_name: str) -> int:
    """Run to the first op meeting `spec`; print where and why (exit 3), or 0 if none did."""
    from hlodbg.engine.debug.breakpoints import BreakpointError

    try:
        session.break_at(spec)
    except BreakpointError as e:
        raise e.about("--break-on") from None
    stop = session.continue_()
    if stop.reason == "error":
        raise session.error
    if stop.reason != "breakpoint":
        return 0
    hit = stop.hits[0]
    print(report(session, hit, spec, program_name))
    return EXIT_BREAK


def report(session, hit, spec: str, program_name: str) -> str:
    event = session.event(hit.event)
    op = event.op
    what = {"nan": "NaN", "inf": "Inf", "nonfinite": "NaN or Inf"}.get(spec.strip().lower())
    if what and hit.after:
        head = f"first {what} produced by event {event.id}: {op_label(op)}"
    else:
        head = f"stopped at breakpoint {spec!r} {'after' if hit.after else 'before'} event {event.id}: {op_label(op)}"
    lines = [head]
    if op.pos is not None:
        lines.append(f"  at {program_name}:{op.pos.line}:{op.pos.col}")
    if event.producer:
        lines.append(f"  producer: {event.producer}")
    frames = _frames(event)
    stack = " > ".join(f.describe(with_function=f.kind == "function") for f in frames)
    lines.append(f"  in: {stack}")
    if hit.after:
        for value, out in zip(op.results, event.outputs):
            lines.append(f"  result {value.name}: {_summary(out)}")
    lines.append("  operands:")
    if not op.operands:
        lines.append("    (none)")
    for value, data in zip(op.operands, event.inputs):
        s = _summary(data)
        lines.append(f"    {value.name}: {s}")
    return "\n".join(lines)


def _frames(event) -> list:
    frames = []
    frame = event.frame
    while frame is not None:
        frames.append(frame)
        frame = frame.parent
    return frames[::-1]


def _summary(value: Any) -> str:
    if isinstance(value, Token):
        return "token"
    s = summarize(value)
    state = "finite" if s.finite else "NOT finite"
    return f"{state}: {s.describe()}"


_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


def probe(session, directory: str) -> int:
    """Write every value the run produced as .npy files plus index.csv; returns their count."""
    stop = session.continue_()
    out = Path(directory)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise ExecutionError(f"--probe: cannot create {directory}: {e.strerror}") from None
    rows = []
    for event in session.events:
        if not event.done or not event.op.results:
            continue
        for value, data in zip(event.op.results, event.outputs):
            if isinstance(data, Token):
                continue
            for suffix, array in _arrays(data):
                name = _UNSAFE.sub("_", f"{event.id:06d}_{event.frame.function.sym_name}_{value.name.lstrip('%')}{suffix}")
                file = f"{name}.npy"
                np.save(out / file, np.asarray(array))
                rows.append({
                    "event": event.id, "function": event.frame.function.sym_name, "frame": event.frame.describe(),
                    "iterations": " ".join(map(str, event.iterations)), "op": event.op.name,
                    "value": value.name + suffix, "type": str(value.type), "shape": "x".join(map(str, np.shape(array))),
                    "dtype": str(np.asarray(array).dtype), "line": event.line or "", "producer": event.producer,
                    "file": file,
                })
    with open(out / "index.csv", "w", newline="") as handle:
        fields = ["event", "function", "frame", "iterations", "op", "value", "type", "shape", "dtype", "line", "producer", "file"]
        writer = csv.DictWriter(handle, fieldnames=fields)
        writer.writeheader()
        writer.writerows(rows)
    if stop.reason == "error":
        print(f"note: the run failed; {len(rows)} value(s) before the failure were written", file=sys.stderr)
        raise session.error
    return len(rows)


def _arrays(data: Any):
    if isinstance(data, tuple):
        for i, element in enumerate(data):
            for suffix, array in _arrays(element):
                yield f".{i}{suffix}", array
    elif not isinstance(data, Token):
        yield "", data
