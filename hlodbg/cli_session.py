"""`hlodbg run --probe DIR` and `hlodbg run --break-on nan|inf|EXPR`: runs through a session."""
from __future__ import annotations

import csv
import re
import sys
from pathlib import Path
from typing import Any, Optional

import numpy as np

from hlodbg.engine import ExecutionError
from hlodbg.engine.debug.capture_replay import source_in, value_source
from hlodbg.engine.debug.summary import summarize
from hlodbg.engine.ir.dtypes import Token
from hlodbg.layouts.labels import op_display as op_label

EXIT_BREAK = 3


def open_session(program, entry: str, values: list, memory, backend=None):
    """A session on one process with the command line's own breakpoints (not saved)."""
    check_memory(memory)
    return program.debug(values, entry=entry, memory=memory, persist=False, replicas=1, partitions=1,
                         backend=backend).session


def check_memory(memory) -> None:
    """A --memory that is not a size is refused, whether or not the run records anything."""
    from hlodbg.engine.run.arguments import ArgumentError, parse_size

    if memory is None:
        return
    try:
        parse_size(memory)
    except ArgumentError as e:
        raise ExecutionError(f"--memory: {e.message}") from None


def scan_break_on(program, entry: str, values: list, spec: str, program_name: str, memory=None, backend=None):
    """`--break-on nan|inf|nonfinite` without recording: (exit status, results, printed lines);
    the first hit is reported as a session would report it (exit 3)."""
    from hlodbg.engine.debug.scan import find_first_nonfinite

    check_memory(memory)
    from hlodbg.engine.machine.targets import backend_for

    backend = backend_for(backend)
    found = find_first_nonfinite(program.module, values, spec.strip().lower(), entry=entry, backend=backend)
    if found.hit is not None:
        print(scan_report(found.hit, spec, program_name, source_in(backend, found.hit.frames, found.hit.op)))
        return EXIT_BREAK, None, found.printed
    return 0, found.results, found.printed


def continue_within_memory(session):
    """`session.continue_()`, an error when the recording fills its memory first (a batch run does
    not go on past the budget the way the debugger lets a user do a step at a time)."""
    stop = session.continue_()
    if stop.reason == "memory":
        raise ExecutionError(f"stopped at event {stop.position:,}: {stop.message}")
    return stop


def break_on(session, spec: str, program_name: str) -> int:
    """Run to the first op meeting `spec`; print where and why (exit 3), or 0 if none did."""
    from hlodbg.engine.debug.breakpoints import BreakpointError

    try:
        session.break_at(spec)
    except BreakpointError as e:
        raise e.about("--break-on") from None
    stop = continue_within_memory(session)
    if stop.reason == "error":
        raise session.error
    if stop.reason != "breakpoint":
        return 0
    hit = stop.hits[0]
    check_evaluated(session, hit, spec, program_name)
    print(report(session, hit, spec, program_name))
    return EXIT_BREAK


def check_evaluated(session, hit, spec: str, program_name: str) -> None:
    """A stop where the breakpoint's test or condition failed to evaluate is no hit: it is said
    as an error (exit status 2, the spec cannot work as given), with the op it failed at."""
    if not hit.failure:
        return
    from hlodbg.engine.debug.breakpoints import BreakpointError

    op = session.event(hit.event).op
    where = f" ({program_name}:{op.pos.line}:{op.pos.col})" if op.pos is not None else ""
    when = "after" if hit.after else "before"
    raise BreakpointError(f"--break-on {spec!r} stopped the run {when} event {hit.event}, {op_label(op)}{where}: "
                          f"{hit.failure}")


def report(session, hit, spec: str, program_name: str) -> str:
    event = session.event(hit.event)
    stack = " > ".join(f.describe(with_function=f.kind == "function") for f in event.frame.chain())
    return _report(event.op, event.id, stack, event.producer, event.inputs, event.outputs if hit.after else None,
                   spec, program_name, value_source(session, event.id))


def scan_report(hit, spec: str, program_name: str, source: Optional[str] = None) -> str:
    """The report for a first NaN/Inf found by a plain run (engine/debug/scan.py)."""
    return _report(hit.op, hit.event, hit.describe_frames(), hit.producer, hit.operands, hit.outputs, spec, program_name,
                   source)


def _report(op, event_id: int, stack: str, producer: str, operands: list, outputs, spec: str, program_name: str,
            source: Optional[str] = None) -> str:
    """Where a run stopped and why: the op, its places, its frames, its results (when it
    stopped after the op; `source`: captured or computed, replaying a capture) and its
    operands' statistics."""
    what = {"nan": "NaN", "inf": "Inf", "nonfinite": "NaN or Inf"}.get(spec.strip().lower())
    after = outputs is not None
    if what and after:
        head = f"first {what} produced by event {event_id}: {op_label(op)}"
    else:
        head = f"stopped at breakpoint {spec!r} {'after' if after else 'before'} event {event_id}: {op_label(op)}"
    lines = [head]
    if op.pos is not None:
        lines.append(f"  at {program_name}:{op.pos.line}:{op.pos.col}")
    if producer:
        lines.append(f"  producer: {producer}")
    lines.append(f"  in: {stack}")
    if after:
        for value, out in zip(op.results, outputs):
            lines.append(f"  result {value.name}{f' ({source})' if source else ''}: {_summary(out)}")
    lines.append("  operands:")
    if not op.operands:
        lines.append("    (none)")
    for value, data in zip(op.operands, operands):
        lines.append(f"    {value.name}: {_summary(data)}")
    return "\n".join(lines)


def _summary(value: Any) -> str:
    if isinstance(value, Token):
        return "token"
    s = summarize(value)
    state = "finite" if s.finite else "NOT finite"
    return f"{state}: {s.describe()}"


_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


def check_probe_directory(directory: str) -> None:
    """--probe writes into a new or empty directory only: an earlier probe's index.csv and values
    (or anything else there) are never overwritten or mixed with this run's."""
    out = Path(directory)
    if out.exists() and not out.is_dir():
        raise ExecutionError(f"--probe {directory}: it is a file, not a directory; name a new directory")
    if out.is_dir():
        held = sorted(p.name for p in out.iterdir())[:4]
        if held:
            raise ExecutionError(f"--probe {directory} already holds files ({', '.join(held)}"
                                 f"{', ...' if len(held) == 4 else ''}); remove them or probe into another directory")


def probe(session, directory: str) -> int:
    """Write every value the run produced as .npy files plus index.csv into a new or empty
    `directory`; returns their count."""
    check_probe_directory(directory)
    stop = continue_within_memory(session)
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
