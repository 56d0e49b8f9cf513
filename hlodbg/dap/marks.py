"""The editor's breakpoints as hlodbg's: lines, op kinds (function breakpoints) and NaN/Inf
(exception filters), each set on every device through the target, and each stop's hits said back
in the editor's terms.

A DAP client sends the whole list for a source (or of function breakpoints, or of exception
filters) on every change, so each request replaces what the previous one of its kind set. A line
breakpoint is verified to the op on its line (or the next line holding one, said in its message);
a condition is an hlodbg expression (breakpoints.py), and a hit count becomes a condition on
`hit`, the number of times the breakpoint's op was met. The breakpoints live for the session: the
editor keeps them, so nothing is saved with the program.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Optional

from hlodbg.engine.debug.breakpoints import VALUE_TESTS, Breakpoint, BreakpointError
from hlodbg.engine.debug.stops import Stop, op_label
from hlodbg.engine.debug.target import DebugTarget
from hlodbg.engine.ir.errors import HlodbgError

# The exception filters the server offers (capabilities.exceptionBreakpointFilters): each is an
# hlodbg value breakpoint, stopping right after the op whose result first holds the value.
EXCEPTION_FILTERS = (
    {"filter": "nan", "label": "NaN", "description": "Stop after an op whose result holds a NaN (constants as written "
     "excepted)", "default": False, "supportsCondition": True,
     "conditionDescription": "an hlodbg expression, e.g. iteration > 3"},
    {"filter": "inf", "label": "Inf", "description": "Stop after an op whose result holds +Inf or -Inf",
     "default": False, "supportsCondition": True, "conditionDescription": "an hlodbg expression, e.g. iteration > 3"},
)
_FILTER_NAMES = {f["filter"]: f["label"] for f in EXCEPTION_FILTERS} | {"nonfinite": "NaN or Inf"}

_HIT_COUNT = re.compile(r"^\s*(==|>=|<=|>|<|%)?\s*(\d+)\s*$")


def hit_condition(text: str) -> str:
    """A DAP hit count as an hlodbg condition on `hit`: `5` and `>= 5` stop from the 5th hit on,
    `== 5` at the 5th only, `% 5` at every 5th, `> 5`, `< 5`, `<= 5` as written."""
    match = _HIT_COUNT.match(text)
    if match is None:
        raise BreakpointError(f"hit count {text!r}: expected a number N, or >= N, > N, == N, <= N, < N or % N")
    operator, number = match.group(1) or ">=", int(match.group(2))
    if operator == "%":
        if number == 0:
            raise BreakpointError(f"hit count {text!r}: % 0 divides by zero")
        return f"hit % {number} == 0"
    return f"hit {operator} {number}"


def combined_condition(condition: Optional[str], hits: Optional[str]) -> Optional[str]:
    """The breakpoint's condition and its hit count (both must hold), None when it has neither."""
    parts = [text.strip() for text in (condition, hit_condition(hits) if hits and hits.strip() else None)
             if text and text.strip()]
    if len(parts) == 2:
        return f"({parts[0]}) and ({parts[1]})"
    return parts[0] if parts else None


@dataclass
class Mark:
    """One breakpoint as the editor knows it: its DAP id, kind and the engine's breakpoint on
    each device."""

    id: int
    kind: str  # line | function | exception
    placed: list[tuple] = field(default_factory=list)  # (process, engine Breakpoint)
    label: str = ""  # for the stop's description: "line 12", "stablehlo.add", "NaN"


class Marks:
    def __init__(self, target: DebugTarget, program_path: Optional[str]):
        self.target = target
        self.program_path = os.path.realpath(program_path) if program_path else None
        self._next_id = 1
        self._lines: dict[str, list[Mark]] = {}
        self._functions: list[Mark] = []
        self._exceptions: list[Mark] = []
        self._launch: Optional[Mark] = None
        self._by_engine: dict[tuple, Mark] = {}

    # -- requests -----------------------------------------------------------------------------
    def set_lines(self, source: dict, wanted: list[dict], source_out: dict) -> list[dict]:
        """setBreakpoints: the source's breakpoints replaced by `wanted` (SourceBreakpoints)."""
        path = source.get("path") or ""
        key = os.path.realpath(path) if path else f"ref:{source.get('sourceReference', 0)}"
        self._drop(self._lines.pop(key, []))
        ours = self._is_program(source)
        marks, answers = [], []
        for item in wanted:
            line = item.get("line")
            if not isinstance(line, int) or line < 1:
                answers.append({"verified": False, "message": f"a breakpoint's line must be a number from 1, not {line!r}"})
                continue
            if not ours:
                answers.append({"verified": False, "line": line, "message": f"{path or 'this source'} is not the program "
                                f"being debugged ({self.program_path or 'the launched program'})"})
                continue
            if item.get("logMessage"):
                answers.append({"verified": False, "line": line,
                                "message": "log points are not supported: use a watch or a conditional breakpoint"})
                continue
            mark, answer = self._place("line", f"line {line}", item.get("condition"), item.get("hitCondition"),
                                       f"line {line}")
            if mark is None:
                answer["line"] = line
            else:
                marks.append(mark)
                answer.update(self._where(mark, source_out))
            answers.append(answer)
        self._lines[key] = marks
        return answers

    def set_functions(self, wanted: list[dict]) -> list[dict]:
        """setFunctionBreakpoints: an op kind (`stablehlo.add`, `dot_general`, an HLO opcode such
        as `fusion`), or any hlodbg breakpoint spec (`%12`, `@relu:%1`, `model.py:42`)."""
        self._drop(self._functions)
        self._functions = []
        answers = []
        for item in wanted:
            name = item.get("name")
            if not isinstance(name, str) or not name.strip():
                answers.append({"verified": False, "message": "a function breakpoint names an op kind, e.g. stablehlo.add"})
                continue
            mark, answer = self._place("function", name.strip(), item.get("condition"), item.get("hitCondition"),
                                       name.strip())
            if mark is not None:
                self._functions.append(mark)
            answers.append(answer)
        return answers

    def set_launch(self, spec: str) -> None:
        """The launch's `breakOn`: a breakpoint of the session's own, which the editor's lists of
        function breakpoints leave alone."""
        value_test = spec.strip().lower() in VALUE_TESTS  # `nan`, `inf`: stops as the exception filters do
        mark, answer = self._place("exception" if value_test else "function", spec, None, None,
                                   _FILTER_NAMES.get(spec.strip().lower(), spec.strip()))
        if mark is None:
            raise BreakpointError(f"breakOn: {answer['message']}")
        self._launch = mark

    def set_exceptions(self, filters: list, options: list) -> list[dict]:
        """setExceptionBreakpoints: the NaN / Inf filters, each with an optional condition."""
        self._drop(self._exceptions)
        self._exceptions = []
        wanted = [(name, None) for name in filters] + [(o.get("filterId"), o.get("condition")) for o in options
                                                        if isinstance(o, dict)]
        answers = []
        for name, condition in wanted:
            if not isinstance(name, str) or name not in _FILTER_NAMES:
                known = ", ".join(_FILTER_NAMES)
                answers.append({"verified": False, "message": f"no exception filter {name!r} (filters: {known})"})
                continue
            mark, answer = self._place("exception", name, condition, None, _FILTER_NAMES[name])
            if mark is not None:
                self._exceptions.append(mark)
            answers.append(answer)
        return answers

    def lines_with_ops(self, first: int, last: int) -> list[int]:
        """breakpointLocations: the lines from `first` to `last` holding an op."""
        lines = {op.pos.line for f in self.target.module.functions.values() for op in f.ops if op.pos is not None}
        return sorted(n for n in lines if first <= n <= last)

    # -- stops --------------------------------------------------------------------------------
    def stop_reason(self, stop: Stop) -> tuple[str, str, list[int]]:
        """(DAP reason, description, hit breakpoint ids) of a stop at breakpoints."""
        process = self.target.focus
        reason, ids, said = "breakpoint", [], []
        for hit in stop.hits:
            if hit.breakpoint is None:
                continue
            mark = self._by_engine.get((process, hit.breakpoint.id))
            if hit.failure:
                said.append(hit.describe())
            if mark is None:
                continue
            ids.append(mark.id)
            if mark.kind == "exception":
                reason = "exception"
                said.append(f"{mark.label} made by {op_label(self._hit_op(hit.event))} (event {hit.event})")
            elif not hit.failure:
                if mark.kind == "function" and reason != "exception":
                    reason = "function breakpoint"
                said.append(f"{mark.label} (hit {hit.hit}), {'after' if hit.after else 'before'} event {hit.event}")
        return reason, "; ".join(said), ids

    def _hit_op(self, event: int):
        return self.target.session.trace.ops[event]

    # -- machinery ----------------------------------------------------------------------------
    def _is_program(self, source: dict) -> bool:
        path = source.get("path")
        if path and self.program_path:
            return os.path.realpath(path) == self.program_path
        return bool(source.get("sourceReference")) and self.program_path is None

    def _place(self, kind: str, spec: str, condition: Optional[str], hits: Optional[str],
               label: str) -> tuple[Optional[Mark], dict]:
        for what, text in (("condition", condition), ("hit count", hits)):
            if text is not None and not isinstance(text, str):
                return None, {"verified": False, "message": f"a breakpoint's {what} is text, not {text!r}"}
        try:
            placed = self.target.break_at(spec, combined_condition(condition, hits), saved=False)
        except HlodbgError as e:
            return None, {"verified": False, "message": e.message}
        mark = Mark(self._next_id, kind, list(zip(self.target.processes, placed)), label)
        self._next_id += 1
        for process, bp in mark.placed:
            self._by_engine[(process, bp.id)] = mark
        first = mark.placed[0][1]
        return mark, {"id": mark.id, "verified": True, "message": _describe_place(first)}

    def _where(self, mark: Mark, source_out: dict) -> dict:
        ops = mark.placed[0][1].ops
        lines = sorted(op.pos.line for op in ops if op.pos is not None)
        if not lines:
            return {}
        first = min(ops, key=lambda op: (op.pos.line, op.pos.col) if op.pos is not None else (0, 0))
        return {"line": lines[0], "column": first.pos.col if first.pos is not None else 1, "source": source_out}

    def _drop(self, marks: list[Mark]) -> None:
        for mark in marks:
            for process, bp in mark.placed:
                self._by_engine.pop((process, bp.id), None)
                table = self.target.sessions[process].breakpoints
                if any(b is bp for b in table.breakpoints):
                    table.remove(bp.id)


def _describe_place(bp: Breakpoint) -> str:
    """What the breakpoint stops at, for the editor's hover: `before %3 = stablehlo.add`."""
    when = "after" if bp.after else "before"
    if bp.kind == "value":
        text = f"{when} the first op whose result holds {bp.spec}"
    else:
        ops = sorted(bp.ops, key=lambda op: (op.pos.line, op.pos.col) if op.pos is not None else (0, 0))
        shown = ", ".join(op_label(op) for op in ops[:3]) + (f" and {len(ops) - 3} more" if len(ops) > 3 else "")
        text = f"{when} {shown}"
    if bp.condition:
        text += f" if {bp.condition}"
    if bp.note:
        text += f" ({bp.note})"
    return text


__all__ = ["EXCEPTION_FILTERS", "Mark", "Marks", "combined_condition", "hit_condition"]
