"""What a stopped program looks like to the editor: threads, stack frames, scopes and variables.

threads      the devices of the grid (thread id = device number + 1)
stack        the session's frames, innermost first: calls, loop iterations, branches and bodies,
             each at its op's place in the program; where an op's `loc` names the JAX source line
             it came from, that line follows as a frame of its own
scopes       a frame's op: its operands and (once it has run) its results; the innermost frame
             also the values the last op computed and every value visible there; past the end the
             program's results
variables    each value summarised in one line (`8x4xf32 min -1 max 3 mean 0.2 · 2 NaN`),
             expandable along its first dimension down to single elements

Every reference handed out (frame ids, variable references) lives until the program moves on,
as the protocol says; `References.reset()` forgets them at each move.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Callable, Optional

import numpy as np

from hlodbg.engine.debug.op_values import operand_label, result_label
from hlodbg.engine.debug.session import Session
from hlodbg.engine.debug.stops import FrameInfo, op_label
from hlodbg.engine.debug.summary import summarize
from hlodbg.engine.debug.views import EventView
from hlodbg.engine.ir.dtypes import Token, widen
from hlodbg.engine.ir.errors import HlodbgError
from hlodbg.engine.ir.locations import name_stack, user_frame
from hlodbg.engine.machine.process import ProcessId
from hlodbg.engine.machine.xla.device_values import to_host

SHOWN_ELEMENTS = 16  # a value of up to this many elements shows them in its one line


class StaleReference(HlodbgError):
    """A frame or variable reference from before the program last moved."""


class References:
    """Numbers for the things a stop hands out, valid until the next move."""

    def __init__(self) -> None:
        self._items: list[Any] = []

    def reset(self) -> None:
        self._items = []

    def add(self, item: Any) -> int:
        self._items.append(item)
        return len(self._items)

    def get(self, number: Any, what: str) -> Any:
        if not isinstance(number, int) or not 1 <= number <= len(self._items):
            raise StaleReference(f"no {what} {number!r} at this stop (references last until the program moves)")
        return self._items[number - 1]


@dataclass(frozen=True)
class FrameRef:
    process: ProcessId
    level: int  # index in session.stack (0 = the entry function)


@dataclass
class Named:
    """A value under a name, as a variable or an evaluate result shows it."""

    name: str
    value: Any
    type_text: str = ""
    evaluate_name: str = ""


@dataclass
class Listing:
    """The children of a reference: named values, or computed on demand (a large scope)."""

    make: Callable[[], list[Named]]


class Inspector:
    def __init__(self, source_for: Callable[[Any], Optional[dict]], folder: Callable[[], Optional[str]],
                 address_of: Callable[[Any], Optional[str]]):
        self.frames = References()
        self._address_of = address_of  # an op's place in the disassembly view (disassembly.py)
        self.variables = References()
        self._source_for = source_for  # op position -> the DAP Source of the program text
        self._folder = folder  # where a `loc`'s relative file name is looked for

    def reset(self) -> None:
        self.frames.reset()
        self.variables.reset()

    # -- stack ----------------------------------------------------------------------------------
    def stack_frames(self, session: Session, process: ProcessId) -> list[dict]:
        out = []
        stack = session.stack
        for level in range(len(stack) - 1, -1, -1):
            info = stack[level]
            number = self.frames.add(FrameRef(process, level))
            frame = {"id": number, "name": _frame_name(info, session, level == len(stack) - 1), "line": 0, "column": 0}
            op = info.op
            if op is not None and op.pos is not None:
                source = self._source_for(op)
                if source is not None:
                    frame.update(source=source, line=op.pos.line, column=op.pos.col)
            address = self._address_of(op) if op is not None else None
            if address is not None:
                frame["instructionPointerReference"] = address
            out.append(frame)
            written = user_frame(op.location) if op is not None else None
            if written is not None:
                producer = name_stack(op.location)
                out.append({"id": self.frames.add(FrameRef(process, level)),
                            "name": f"{written.short()}" + (f" ({producer})" if producer else ""),
                            "source": _file_source(written.filename, self._folder()), "line": written.line,
                            "column": max(written.col, 1), "presentationHint": "subtle"})
        return out

    def frame(self, number: Any) -> FrameRef:
        return self.frames.get(number, "stack frame")

    # -- scopes ---------------------------------------------------------------------------------
    def scopes(self, session: Session, ref: FrameRef) -> list[dict]:
        stack = session.stack
        if ref.level >= len(stack):
            raise StaleReference("that stack frame is gone: the program moved")
        info = stack[ref.level]
        innermost = ref.level == len(stack) - 1
        out = []
        if info.op is not None and info.event is not None and info.view is not None:
            event = EventView(info.view, info.event)
            op, e = info.op, info.event
            operands = lambda: [Named(operand_label(i, v), value, str(v.type), v.name)  # noqa: E731
                                for i, (v, value) in enumerate(zip(op.operands, event.inputs))]
            out.append(self._scope(f"Operands of {op_label(op)}", operands, len(op.operands), "arguments"))
            if op.results and info.view.trace.done(e):
                results = lambda: [Named(result_label(k, v), value, str(v.type), v.name)  # noqa: E731
                                   for k, (v, value) in enumerate(zip(op.results, event.outputs))]
                out.append(self._scope(f"Results of {op_label(op)}", results, len(op.results), "returnValue"))
        if innermost:
            last = _last_computed(session)
            if last is not None and last != info.event:
                before = session.event(last)
                results = lambda: [Named(result_label(k, v), value, str(v.type), v.name)  # noqa: E731
                                   for k, (v, value) in enumerate(zip(before.op.results, before.outputs))]
                out.append(self._scope(f"Just computed: {op_label(before.op)}", results, len(before.op.results), "locals"))
            if session.finished and session.results is not None:
                returned = lambda: [Named(f"result {k}", value) for k, value in enumerate(session.results)]  # noqa: E731
                out.append(self._scope("Program results", returned, len(session.results), "returnValue"))
            visible = lambda: [Named(name, value, evaluate_name=name)  # noqa: E731
                               for name, value in sorted(session.values().items(), key=lambda item: _natural(item[0]))]
            out.append(self._scope("Values in scope", visible, None, "locals", expensive=True))
        return out

    def _scope(self, name: str, make: Callable[[], list[Named]], count: Optional[int], hint: str,
               expensive: bool = False) -> dict:
        scope = {"name": name, "variablesReference": self.variables.add(Listing(make)), "expensive": expensive,
                 "presentationHint": hint}
        if count is not None:
            scope["namedVariables"] = count
        return scope

    # -- variables ------------------------------------------------------------------------------
    def variables_of(self, number: Any, start: int = 0, count: int = 0) -> list[dict]:
        item = self.variables.get(number, "variables reference")
        if isinstance(item, Listing):
            named = item.make()
            named = named[start:start + count] if count else named[start:]
            return [self.variable(n) for n in named]
        parent: Named = item
        value = parent.value
        if isinstance(value, (list, tuple)):
            children = [Named(f"[{k}]", element, evaluate_name=f"{parent.evaluate_name}[{k}]" if parent.evaluate_name else "")
                        for k, element in enumerate(value)]
            children = children[start:start + count] if count else children[start:]
            return [self.variable(n) for n in children]
        array = _host_array(value)
        length = array.shape[0]
        end = length if not count else min(length, start + count)
        out = []
        for i in range(max(start, 0), end):
            name = f"{parent.evaluate_name}[{i}]" if parent.evaluate_name and _indexable(parent.evaluate_name) else ""
            out.append(self.variable(Named(f"[{i}]", array[i], evaluate_name=name)))
        return out

    def variable(self, named: Named) -> dict:
        text, reference, indexed = self.describe(named)
        out = {"name": named.name, "value": text, "variablesReference": reference}
        if named.type_text:
            out["type"] = named.type_text
        if named.evaluate_name:
            out["evaluateName"] = named.evaluate_name
        if indexed is not None:
            out["indexedVariables"] = indexed
        return out

    def describe(self, named: Named) -> tuple[str, int, Optional[int]]:
        """(one line, variables reference or 0, number of indexed children or None)."""
        value = named.value
        if value is None:
            return "None", 0, None  # `iteration` outside a loop
        if isinstance(value, Token):
            return "token", 0, None
        if isinstance(value, (list, tuple)):
            if len(value) <= SHOWN_ELEMENTS and all(_is_scalar(v) for v in value):  # a shape, an index
                return "(" + ", ".join(_scalar_text(v) for v in value) + ("," if len(value) == 1 else "") + ")", 0, None
            return f"tuple of {len(value)}", self.variables.add(named), None
        if isinstance(value, (bool, int, float, complex, str, np.generic)) and not isinstance(value, np.ndarray):
            return _scalar_text(value), 0, None
        array = _host_array(value)
        if array is None:
            return str(value), 0, None
        if array.ndim == 0:
            return _scalar_text(array[()]), 0, None
        line = summarize(value).describe()
        if 0 < array.size <= SHOWN_ELEMENTS:
            line = f"{np.array2string(widen(array), separator=', ', threshold=SHOWN_ELEMENTS)}  ({line})"
        if array.size == 0:
            return line, 0, None
        return line, self.variables.add(named), array.shape[0]


def _frame_name(info: FrameInfo, session: Session, innermost: bool) -> str:
    where = info.frame_text()
    if info.op is None:
        return f"{where}: finished" if session.finished else where
    return f"{where}: {op_label(info.op)}"


def _file_source(filename: str, folder: Optional[str]) -> dict:
    """The Source of a JAX source file a `loc` names: relative names are read from `folder` (the
    launch's cwd, else the program's folder); a file not on this machine is shown de-emphasised."""
    path = filename
    if not os.path.isabs(path) and folder:
        path = os.path.join(folder, path)
    source = {"name": os.path.basename(filename) or filename, "path": path}
    if not os.path.isfile(path):
        source.update(presentationHint="deemphasize", origin="not found on this machine")
    return source


def _last_computed(session: Session) -> Optional[int]:
    """The event that finished last before the cursor and made a value, None when none has."""
    trace = session.trace
    position = min(session.position, len(trace))
    for e in range(position - 1, max(position - 4096, 0) - 1, -1):
        if trace.done(e) and trace.ends[e] < position and trace.ops[e].results:
            return e
    return None


def _host_array(value: Any) -> Optional[np.ndarray]:
    value = to_host(value)
    return value if isinstance(value, np.ndarray) else None


def _is_scalar(value: Any) -> bool:
    return isinstance(value, (bool, int, float, complex, np.generic))


def _scalar_text(value: Any) -> str:
    if isinstance(value, np.ndarray):
        value = value[()]
    if isinstance(value, np.generic) and value.dtype.kind == "V":  # bf16, f8, int4: shown as their compute type
        value = widen(np.asarray(value))[()]
    if isinstance(value, np.generic):
        value = value.item()
    return repr(value) if isinstance(value, str) else str(value)


def _indexable(name: str) -> bool:
    """Whether `name[i]` is an expression meaning its i-th slice (a %value or a slice of one)."""
    return name.startswith("%")


def _natural(name: str) -> tuple:
    """%2 before %10: names ordered by their numbers where they have them."""
    head = name.lstrip("%")
    return (0, int(head), name) if head.isdigit() else (1, 0, name)


__all__ = ["FrameRef", "Inspector", "Named", "References", "StaleReference"]
