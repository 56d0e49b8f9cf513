"""What a point of a recording sees, by SSA name: the values defined before an event in its frame
and the frames enclosing it (inner names hide outer ones), one value by name (looking out through
replayed views to the run they came from), and the names a breakpoint condition or an expression
is evaluated with (`event`, `hit`, `iteration`, `op`, `operands`, `results`).
"""
from __future__ import annotations

from typing import Any, Optional

from .expressions import ExpressionError
from .trace import ResultRef
from .views import View, as_list


def lookup_value(view: View, position: int, name: str, include_own: bool) -> Any:
    """The value of `%name` as the event at `position` of `view` sees it; a replayed view looks
    on into the view it was opened from."""
    name = name if name.startswith("%") else "%" + name
    while True:
        refs = visible_refs(view, position, include_own)
        ref = refs.get(name) or refs.get(name + "#0")
        if ref is not None:
            return view.store.value(ref)
        if view.parent is None:
            break
        position, view, include_own = view.base, view.parent, False
    raise ExpressionError(f"{name} is not computed at this point (visible: {_some_names(refs)})")


def visible_refs(view: View, position: int, include_own: bool) -> dict[str, tuple]:
    """name -> ref of every value defined before `position` in its frame and the frames
    enclosing it (the event at `position` itself too when `include_own`)."""
    trace = view.trace
    if position >= len(trace):
        frame = trace.frame_records[0] if trace.frame_records else None
        if frame is None:
            return {}
        terminator = frame.last
        position, include_own = (terminator, True) if terminator >= 0 else (len(trace), False)
    frame = trace.frames[position] if position < len(trace) else None
    out: dict[str, tuple] = {}
    limit = position
    while frame is not None:
        block = frame.block
        for arg in block.arguments:
            ref = trace.arg_ref(frame, arg.index)
            if ref is not None:
                out.setdefault(arg.name, ref)
        for op in block.operations:
            e = trace.event_of(frame, op)
            if e is None or trace.ends[e] < 0 or e > limit or (e == limit and not include_own):
                continue
            for v in op.results:
                out.setdefault(v.name, ResultRef(e, v.index))
        if frame.kind == "function" or frame.owner is None:
            break
        limit, include_own = frame.owner, False
        frame = trace.frames[frame.owner]
    return out


def expression_names(view: View, event: int, include_results: bool, operands: Optional[list] = None,
                     hit: int = 0) -> dict[str, Any]:
    """The names an expression or breakpoint condition at `event` may use besides SSA values."""
    trace = view.trace
    names: dict[str, Any] = {"event": event, "hit": hit, "iteration": None, "iterations": ()}
    if event >= len(trace):
        return names
    op = trace.ops[event]
    iterations = trace.enclosing_iterations(event)
    names.update(op=op.name, iteration=iterations[-1] if iterations else None, iterations=iterations)
    if operands is None:
        operands = [view.store.value(trace.operand_ref(event, k)) for k in range(len(op.operands))]
    names["operands"] = list(operands)
    if include_results:
        results = as_list(view.store.output(event), len(op.results)) if trace.done(event) else []
        names["results"] = results
        names["result"] = results[0] if results else None
    return names


def _some_names(refs: dict) -> str:
    names = sorted(refs)
    return ", ".join(names[:12]) + (" ..." if len(names) > 12 else "") if names else "none"
