"""The answer `trace` gives (engine/debug/lineage.py): the path back from an element, op by op,
and what the element depends on, as plain text and as JSON; the CLI and the debugger present it."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

import numpy as np

from ..ir.dtypes import widen


@dataclass(frozen=True)
class Fanin:
    """The elements of one operand a step reads."""

    operand: int  # position among the op's operands
    name: str  # the operand's SSA name
    role: str  # what the elements do ("element at the same index", "lhs row element"...)
    count: int
    region: str  # `[3, :]`, or `within [0:2, 5]` when the elements do not fill their box
    nonfinite: int  # how many of them are NaN or Inf

    def describe(self) -> str:
        count = f" ({self.count:,} elements)" if self.count != 1 else ""
        bad = f", {self.nonfinite:,} non-finite" if self.nonfinite else ""
        region = self.region if self.region.startswith("[") or not self.region else " " + self.region
        return f"{self.name}{region}{count}: {self.role}{bad}"


@dataclass(frozen=True)
class TraceStep:
    """One op instance on the path: its element and what it reads."""

    event: Optional[int]  # the event to go to (None for an argument of the entry function)
    kind: str  # "op", "loop", "call", "argument", "constant", "peer", "opaque"
    value: str  # the SSA name of the value this step is about
    index: tuple[int, ...]
    element: str  # the element's value as text
    op: str  # the op's name ("" for an argument)
    line: Optional[int]  # line in the program text
    source: str  # the op's source location (`model.py:42 (jit(f)/dot_general)`), "" if none
    frame: str  # the frame it ran in (`@main`, `@main while.body #3`)
    note: str = ""  # what the step says beyond its reads (the loop iteration that changed it...)
    fanin: tuple[Fanin, ...] = ()
    origin: bool = False  # the first op that made a non-finite element from finite ones
    peer_reads: int = 0  # elements of a collective's operands on other devices (not traced further)
    changed_in: Optional[int] = None  # a loop's state: the last iteration (before it) whose body changed it
    finite: bool = True  # whether the element is neither NaN nor infinite

    def describe(self) -> str:
        where = f" line {self.line}" if self.line else ""
        source = f" ({self.source})" if self.source else ""
        at = element_index_text(self.index)
        event = f"[{self.event}] " if self.event is not None else ""
        what = f"{self.op} " if self.op else ""
        return f"{event}{self.value}{at} = {self.element}: {what}in {self.frame}{where}{source}"


@dataclass(frozen=True)
class Leaf:
    """Something the element depends on that is not made from other elements of the run."""

    kind: str  # "argument", "constant", "peer", "opaque"
    name: str  # `arg0 (x)`, `%c (stablehlo.constant line 4)`
    count: int  # elements of it read
    region: str
    event: Optional[int] = None
    note: str = ""

    def describe(self) -> str:
        count = f" ({self.count:,} elements)" if self.count != 1 else ""
        note = f": {self.note}" if self.note else ""
        region = f" at {self.region}" if self.region.startswith("[") else f" {self.region}" if self.region else ""
        return f"{self.kind} {self.name}{region}{count}{note}"


@dataclass
class Lineage:
    """The answer to "where did this element come from" (see the module docstring)."""

    value: str
    index: tuple[int, ...]
    element: str
    event: int
    steps: list[TraceStep]
    leaves: list[Leaf]
    origin: Optional[int] = None  # position in `steps` of the NaN/Inf origin
    complete: bool = True  # whether every leaf was found within the bounds
    notes: list[str] = field(default_factory=list)  # which bound stopped what
    elements_visited: int = 0

    @property
    def last_change(self) -> Optional[int]:
        """For a loop's result (or state): the last iteration whose body changed the element."""
        for step in self.steps:
            if step.kind != "loop":
                return None
            if step.changed_in is not None:
                return step.changed_in
        return None

    def text(self) -> str:
        at = element_index_text(self.index)
        out = [f"trace of {self.value}{at} = {self.element} (event {self.event})", ""]
        last = self.steps[-1] if self.steps else None
        if self.origin is not None:
            out += [f"origin: step {self.origin + 1}, the first op to make a non-finite element from finite ones", ""]
        elif last is not None and last.kind in ("argument", "constant") and not last.finite:
            out += [f"origin: no op made it non-finite: it comes in with {last.kind} {last.value}"
                    f"{element_index_text(last.index)} = {last.element}", ""]
        elif last is not None and not last.finite:
            why = "which hlodbg cannot trace further" if last.kind == "opaque" else "made on other devices"
            out += [f"origin: not found: the path stops at step {len(self.steps)} ({last.op}), {why}", ""]
        out.append("path:")
        for i, step in enumerate(self.steps):
            mark = "  <- origin" if step.origin else ""
            out.append(f"  {i + 1:>3}. {step.describe()}{mark}")
            if step.note:
                out.append(f"       {step.note}")
            for fanin in step.fanin:
                out.append(f"       reads {fanin.describe()}")
        out += ["", "depends on:" if self.complete else "depends on (as far as the bounds let the search go):"]
        out += [f"  {leaf.describe()}" for leaf in self.leaves] or ["  nothing but the ops above"]
        out += [f"note: {note}" for note in self.notes]
        return "\n".join(out) + "\n"

    def to_dict(self) -> dict:
        def step(s: TraceStep) -> dict:
            return {"event": s.event, "kind": s.kind, "value": s.value, "index": list(s.index), "element": s.element,
                    "op": s.op, "line": s.line, "source": s.source, "frame": s.frame, "note": s.note,
                    "origin": s.origin, "finite": s.finite, "changed_in": s.changed_in,
                    "reads": [dict(vars(f)) for f in s.fanin]}

        return {"value": self.value, "index": list(self.index), "element": self.element, "event": self.event,
                "origin": self.origin, "last_change": self.last_change, "complete": self.complete,
                "notes": list(self.notes),
                "elements_visited": self.elements_visited, "steps": [step(s) for s in self.steps],
                "leaves": [dict(vars(leaf)) for leaf in self.leaves]}


def element_index_text(index: tuple) -> str:
    """`[3, 7]`, or nothing for the one element of a scalar."""
    return f"[{', '.join(map(str, index))}]" if index else ""


def value_text(value: Any) -> str:
    wide = widen(np.asarray(value))
    if wide.dtype.kind == "b":
        return "true" if bool(wide) else "false"
    if wide.dtype.kind == "f":
        return f"{float(wide):.6g}"
    return str(wide.item()) if wide.ndim == 0 else str(wide)


def nonfinite_count(array: Any, indices: list) -> int:
    wide = widen(np.asarray(array))
    if wide.dtype.kind not in "fc" or not indices:
        return 0
    if not wide.shape:
        return 0 if np.isfinite(wide) else len(indices)
    picked = wide[tuple(np.array(indices).T)]
    return int((~np.isfinite(picked)).sum())


def region_text(indices: list, shape: tuple) -> str:
    """`[3, 7]`, `[3, :]` (a whole row), `[0:4, 2]`, or `within [0:4, 0:9]` when the elements do
    not fill their bounding box."""
    if not shape:
        return ""
    box = np.array(indices)
    low, high = box.min(axis=0), box.max(axis=0)
    parts = []
    for lo, hi, n in zip(low.tolist(), high.tolist(), shape):
        parts.append(str(lo) if lo == hi else ":" if lo == 0 and hi == n - 1 else f"{lo}:{hi + 1}")
    filled = int(np.prod(high - low + 1)) == len(indices)
    return f"[{', '.join(parts)}]" if filled else f"within [{', '.join(parts)}]"


def clipped(line: str, width: int = 160) -> str:
    return line if len(line) <= width else line[:width - 1] + "…"


__all__ = ["Fanin", "Leaf", "Lineage", "TraceStep", "clipped", "element_index_text", "nonfinite_count", "region_text",
           "value_text"]
