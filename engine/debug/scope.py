"""What a point of a recording sees, by SSA name: the values defined before an event in its frame
and the frames enclosing it (inner names hide outer ones), one value by name (looking out through
replayed views to the run they came from), and the names a breakpoint condition or an expression
is evaluated with (`event`, `hit`, `iteration`, `op`, `operands`, `results`).
"""
from __future__ import annotations

from typing import Any, Mapping, Optional

from .expressions import NotComputedHere
from .trace import ResultRef
from .views import View, as_list


def lookup_value(view: View, position: int, name: str, include_own: bool) -> Any:
    """The value of `%name` as the event at `position` of `view` sees it; a replayed view looks
    on into the view it was opened from."""
    name = name if name.startswith("%") else "%" + name
    first = view, position, include_own
    while True:
        ref = find_ref(view, position, name, include_own) or find_ref(view, position, name + "#0", include_own)
        if ref is not None:
            return view.store.value(ref)
        if view.parent is None:
            break
        position, view, include_own = view.base, view.parent, False
    refs = visible_refs(*first)
    raise NotComputedHere(f"{name} is not computed at this point (visible: {_some_names(refs)})")


def find_ref(view: View, position: int, name: str, include_own: bool) -> Optional[tuple]:
    """`visible_refs(view, position, include_own).get(name)`, looking at the places that define
    `name` only (a breakpoint condition asks for one value at every op it is tested at)."""
    trace = view.trace
    if position >= len(trace):
        return visible_refs(view, position, include_own).get(name)
    frame = trace.frames[position]
    limit = position
    while frame is not None:
        for kind, index in _names_of(trace, frame.block).get(name, ()):
            if kind is None:
                ref = trace.arg_ref(frame, index)
                if ref is not None:
                    return ref
                continue
            e = trace.event_of(frame, kind)
            if e is None or trace.ends[e] < 0 or e > limit or (e == limit and not include_own):
                continue
            return ResultRef(e, index)
        if frame.kind == "function" or frame.owner is None:
            break
        limit, include_own = frame.owner, False
        frame = trace.frames[frame.owner]
    return None


def _names_of(trace, block) -> dict[str, list]:
    """name -> the block's places defining it, in visible_refs' order: (None, k) for argument k,
    then (op, k) for result k of op."""
    index = trace.block_names.get(block)
    if index is None:
        index = trace.block_names[block] = {}
        for arg in block.arguments:
            index.setdefault(arg.name, []).append((None, arg.index))
        for op in block.operations:
            for v in op.results:
                index.setdefault(v.name, []).append((op, v.index))
    return index


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
                     hit: int = 0) -> Mapping[str, Any]:
    """The names an expression or breakpoint condition at `event` may use besides SSA values,
    each computed when the expression first asks for it (a condition tested at every op of a long
    run names one or two of them)."""
    return _NamesAt(view, event, include_results, operands, hit)


class _NamesAt(Mapping):
    __slots__ = ("_view", "_event", "_include_results", "_known")

    def __init__(self, view: View, event: int, include_results: bool, operands: Optional[list], hit: int):
        self._view = view
        self._event = event
        self._include_results = include_results
        self._known: dict[str, Any] = {"event": event, "hit": hit}
        if operands is not None:
            self._known["operands"] = list(operands)

    def _keys(self) -> tuple:
        if self._event >= len(self._view.trace):
            return _NAMES_BEYOND_THE_END
        return _NAMES_AT_RESULTS if self._include_results else _NAMES_AT_START

    def __getitem__(self, name: str) -> Any:
        known = self._known
        if name not in known:
            self._compute(name)
        return known[name]

    def _compute(self, name: str) -> None:
        view, event, known = self._view, self._event, self._known
        trace = view.trace
        if name not in self._keys():
            raise KeyError(name)
        if event >= len(trace):
            known.update(iteration=None, iterations=())
            return
        op = trace.ops[event]
        if name == "result" or name == "results":
            results = as_list(view.store.output(event), len(op.results)) if trace.ends[event] >= 0 else []
            known.update(results=results, result=results[0] if results else None)
        elif name == "iteration" or name == "iterations":
            iterations = trace.enclosing_iterations(event)
            known.update(iteration=iterations[-1] if iterations else None, iterations=iterations)
        elif name == "op":
            known["op"] = op.name
        else:
            known["operands"] = [view.store.value(trace.operand_ref(event, k)) for k in range(len(op.operands))]

    def __iter__(self):
        return iter(self._keys())

    def __len__(self) -> int:
        return len(self._keys())


_NAMES_BEYOND_THE_END = ("event", "hit", "iteration", "iterations")
_NAMES_AT_START = _NAMES_BEYOND_THE_END + ("op", "operands")
_NAMES_AT_RESULTS = _NAMES_AT_START + ("results", "result")


def ops_seeing(functions, names: tuple[str, ...]) -> frozenset:
    """The ops at whose end every one of `names` (SSA names without `%`; `x` also means `x#0`)
    is visible (lookup_value finds it) whenever the op runs: ops after a definition in its
    block, or nested in an op after it, within one function."""
    wanted = frozenset(names)
    if not wanted:
        return frozenset()
    found: list = []

    def defined(values) -> set:
        out = set()
        for v in values:
            bare = v.name[1:]
            if bare in wanted:
                out.add(bare)
            if bare.endswith("#0") and bare[:-2] in wanted:
                out.add(bare[:-2])
        return out

    pending = [(function.body, frozenset()) for function in functions if not function.is_declaration]
    while pending:
        block, seen = pending.pop()
        seen = seen | defined(block.arguments)
        for op in block.operations:
            for region in op.regions:
                pending.extend((inner, seen) for inner in region.blocks)
            if op.results:
                seen = seen | defined(op.results)
            if seen == wanted:
                found.append(op)
    return frozenset(found)


def _some_names(refs: dict) -> str:
    names = sorted(refs)
    return ", ".join(names[:12]) + (" ..." if len(names) > 12 else "") if names else "none"
