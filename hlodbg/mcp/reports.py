"""The MCP server's answers as text: a program's summary, where a move stopped, a value.

An agent reads these, so each says what it is in words and names what to ask next; values are
summarised (engine/debug/summary.py: shape, range, NaN/Inf counts) and printed whole only when
small, numpy's ellipsis standing for the middle of a bigger one.
"""
from __future__ import annotations

from collections import Counter
from typing import Any, Optional

import numpy as np

from hlodbg.engine.debug.op_values import operand_label, result_label
from hlodbg.engine.debug.stops import Stop, op_label
from hlodbg.engine.debug.summary import summarize
from hlodbg.engine.ir.dtypes import Token, widen
from hlodbg.engine.machine.xla.device_values import to_host

SHOWN_ELEMENTS = 256  # a value up to this many elements is printed whole; a bigger one by its ends
EDGE_ITEMS = 3  # elements shown at each end of a summarised axis
LISTED_FUNCTIONS = 20  # functions listed in a summary, the entry first
LISTED_KINDS = 25  # op kinds listed in a summary, most frequent first
LISTED_VALUES = 16  # operands or results listed for one op


def value_text(value: Any, name: str = "") -> str:
    """One value: its summary and its elements (all when small, the ends of each axis otherwise)."""
    head = f"{name} = " if name else ""
    if value is None:
        return f"{head}None"
    if isinstance(value, Token):
        return f"{head}token"
    if isinstance(value, (list, tuple)):
        parts = [value_text(v, f"{name}[{i}]" if name else f"[{i}]") for i, v in enumerate(value[:LISTED_VALUES])]
        more = [f"… and {len(value) - LISTED_VALUES} more parts"] if len(value) > LISTED_VALUES else []
        return "\n".join([f"{head}a tuple of {len(value)}", *parts, *more])
    host = to_host(value)
    if not isinstance(host, np.ndarray) and not isinstance(host, np.generic):
        return f"{head}{host}"
    array = np.asarray(host)
    summary = summarize(array).describe()
    if array.ndim == 0:
        return f"{head}{_scalar(array)}  ({summary})"
    if array.size == 0:
        return f"{head}{summary}"
    shown = np.array2string(widen(array), separator=", ", threshold=SHOWN_ELEMENTS, edgeitems=EDGE_ITEMS,
                            max_line_width=110)
    text = f"{head}{summary}\n{shown}"
    if array.size > SHOWN_ELEMENTS:
        text += (f"\n(… stands for elements not shown: read a slice to see them, e.g. "
                 f"{name or '%v'}[{', '.join(['0:8'] + [':'] * (array.ndim - 1))}])")
    return text


def summary_line(value: Any) -> str:
    """A value in one line: the summary, or the number itself."""
    if value is None:
        return "not computed yet"
    if isinstance(value, Token):
        return "token"
    if isinstance(value, (list, tuple)):
        return f"a tuple of {len(value)}"
    host = to_host(value)
    if not isinstance(host, (np.ndarray, np.generic)):
        return str(host)
    array = np.asarray(host)
    if array.ndim == 0:
        return f"{_scalar(array)} ({summarize(array).describe()})"
    return summarize(array).describe()


def _scalar(array: np.ndarray) -> str:
    value = widen(array)[()]
    return str(value.item() if isinstance(value, np.generic) else value)


def op_place(op) -> str:
    """`%s = stablehlo.sqrt (line 25) in @update`."""
    line = f" (line {op.pos.line})" if op.pos is not None else ""
    function = op.function.sym_name if op.function is not None else "?"
    return f"{op_label(op)}{line} in @{function}"


def op_values_lines(op, inputs, outputs) -> list[str]:
    """Each operand and result of one op instance, summarised."""
    lines = []
    for i, operand in enumerate(op.operands[:LISTED_VALUES]):
        lines.append(f"  {operand_label(i, operand)}: {summary_line(inputs[i] if i < len(inputs) else None)}")
    if len(op.operands) > LISTED_VALUES:
        lines.append(f"  … and {len(op.operands) - LISTED_VALUES} more operands")
    for k, result in enumerate(op.results[:LISTED_VALUES]):
        value = outputs[k] if outputs and k < len(outputs) else None
        lines.append(f"  result {k} {result_label(k, result)}: {summary_line(value)}")
    if len(op.results) > LISTED_VALUES:
        lines.append(f"  … and {len(op.results) - LISTED_VALUES} more results")
    return lines


def program_summary(program, target, label: str, entry_name: str) -> str:
    """What a program holds: its functions, op kinds, the entry's arguments and results, and the
    session's grid and target."""
    from hlodbg.engine.run.interpreter import entry_function

    records = target.session.trace.frame_records
    entry = entry_function(program.module, entry_name)
    lines = [f"{label}: {program.name}, {program.op_count} ops in {len(program.functions)} functions; "
             f"target {target.session.backend.describe()}; grid {target.grid.num_replicas}x{target.grid.num_partitions} "
             f"(replicas x partitions)"]
    functions = sorted(program.functions.values(), key=lambda f: f is not entry)  # the entry first
    lines.append(f"functions ({len(functions)}):")
    for function in functions[:LISTED_FUNCTIONS]:
        kind = "" if function.visibility in ("", "public") else f" ({function.visibility})"
        lines.append(f"  @{function.sym_name}{kind}: {len(function.arguments)} arguments, "
                     f"{len(function.function_type.results)} results, {len(function.ops)} ops")
    if len(functions) > LISTED_FUNCTIONS:
        lines.append(f"  … and {len(functions) - LISTED_FUNCTIONS} more functions")
    kinds = Counter(op.name for op in program.ops)
    lines.append(f"op kinds ({len(kinds)}, most frequent first):")
    for name, count in kinds.most_common(LISTED_KINDS):
        lines.append(f"  {name}: {count}")
    if len(kinds) > LISTED_KINDS:
        lines.append(f"  … and {len(kinds) - LISTED_KINDS} more kinds")
    if entry is not None:
        lines.append(f"entry @{entry.sym_name}: arguments")
        values = records[0].args if records else None
        for i, argument in enumerate(entry.arguments[:LISTED_VALUES]):
            value = values[i] if values is not None and i < len(values) else None
            lines.append(f"  arg{i} {argument.name}: {argument.type} = "
                         f"{summary_line(value) if value is not None else 'not read yet'}")
        if len(entry.arguments) > LISTED_VALUES:
            lines.append(f"  … and {len(entry.arguments) - LISTED_VALUES} more arguments")
        results = entry.function_type.results
        lines.append(f"entry results: {', '.join(str(t) for t in results[:LISTED_VALUES]) or 'none'}"
                     + (f", … ({len(results)} in all)" if len(results) > LISTED_VALUES else ""))
    return "\n".join(lines)


def stop_text(stop: Stop, target, printed: list[str], timeout: Optional[float]) -> str:
    """Where a move stopped and why, the op that made a value a breakpoint looked at, the op the
    cursor is at with its operands, and the stack."""
    session = target.session
    trace = session.trace
    lines = [f"stopped: {_reason(stop, timeout)}"]
    if target.multi_device:
        lines.append(f"on {target.describe_focus()} (`device` picks another)")
    for hit in stop.hits:
        if hit.after and hit.breakpoint is not None and 0 <= hit.event < len(trace):
            op = trace.ops[hit.event]
            lines.append(f"made by event {hit.event}: {op_place(op)}")
            view = session.event(hit.event)
            lines += op_values_lines(op, view.inputs, view.outputs)
    if printed:
        lines.append("the program printed:")
        lines += [f"  {line.rstrip()}" for line in printed[-LISTED_VALUES:]]
    op = session.op
    if op is not None:
        lines.append(f"next op (event {session.position}): {op_place(op)}")
        view = session.event()
        lines += op_values_lines(op, view.inputs, [])
    elif session.finished:
        results = session.results or []
        lines.append("finished" if session.error is None else f"failed: {session.error.message}")
        lines += [f"  result {k}: {summary_line(v)}" for k, v in enumerate(results[:LISTED_VALUES])]
    lines.append("stack (outermost first):")
    lines += [f"  {line}" for line in session.where().splitlines()]
    return "\n".join(lines)


def _reason(stop: Stop, timeout: Optional[float]) -> str:
    if stop.reason == "breakpoint":
        return "; ".join(hit.describe() for hit in stop.hits) or "at a breakpoint"
    if stop.reason == "end":
        return "the run finished (step back or run backwards to look at it)"
    if stop.reason == "error":
        return f"the run failed: {stop.message}"
    if stop.reason == "interrupted":
        after = f" after {timeout:g} s" if timeout else ""
        return f"interrupted{after} (the run goes on from here with the next run or step)"
    if stop.reason == "start":
        return "at the first op"
    return stop.message or stop.reason


__all__ = ["op_place", "op_values_lines", "program_summary", "stop_text", "summary_line", "value_text"]
