"""Element provenance: which operand elements make one element of an op's result, and how.

A student points at `result[1, 0, 2]` of a gather and asks where it came from. The answer is a
`Provenance`: the operand elements that determine it (`Source`s, each with its role — "start
index", "offset", "init value", "update" — and, on a grid, the device whose operand it is) and the
index arithmetic that led there, as `Step`s with this op's own numbers ("clamp(5) → 3"). Sources
are listed in the order the op combines them (scatter's updates in the order they land).

Each op family answers in a pure function beside the evaluator it explains, registered with
`@explains("stablehlo.gather")` (or `@explains_family("elementwise")` for every op whose definition
is of that family); it receives a `ProvenanceQuery` and returns `query.answer(sources, steps)`.
Data-dependent families (gather's indices, scatter's, sort's keys, select_and_scatter's windows)
read the op's values through the query; shape-only families need none. The contract every
function keeps, and tests/provenance_harness.py checks against the evaluator: changing exactly the
reported data elements (indices held fixed) can change the result element, and changing any other
element cannot.

The inverse, `reach`, answers "which result elements does this operand element reach?". A family
may register a direct inverse with `@reaches(...)`; otherwise it is found by asking the forward
question of every result element, which is exact but bounded (`REACH_SEARCH_LIMIT`).
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Sequence, TypeVar

import numpy as np

from ..ir.core import Operation
from ..ir.errors import HlodbgError
from ..ir.opdefs import lookup
from ..ir.phrases import Phrase
from ..ir.types import TensorType
from ..machine.process import ProcessId

REACH_SEARCH_LIMIT = 1 << 16  # result elements the generic inverse may visit
REACH_WORK_LIMIT = 1 << 20  # operand elements it may list on the way (a convolution lists its whole window)


class ProvenanceError(HlodbgError):
    """A provenance question that cannot be answered (no such element, no values, no family)."""


class ValuesNeeded(ProvenanceError):
    """The answer depends on the op's values (gather's indices, a select's predicate), and the
    question came without them: explain says so in the student's language."""


@dataclass(frozen=True)
class Source:
    """One operand element that determines the result element."""

    operand: int  # position in op.operands (variadic groups counted flat)
    index: tuple[int, ...]
    role: Phrase  # what the element does here: Phrase("start index"), Phrase("init value")...
    device: Optional[ProcessId] = None  # collectives: the process whose operand this is


@dataclass(frozen=True)
class Step:
    """One line of index arithmetic with its numbers; `say(lang)` renders it."""

    phrase: Phrase
    fields: tuple[tuple[str, Any], ...] = ()

    def say(self, lang: str = "en") -> str:
        return self.phrase.say(lang, **dict(self.fields))


@dataclass(frozen=True)
class Provenance:
    op: Operation
    result: int  # which result of the op
    index: tuple[int, ...]
    sources: tuple[Source, ...]
    steps: tuple[Step, ...]
    device: Optional[ProcessId] = None  # the process whose result element this is (grids)

    def sources_of(self, operand: int, device: Optional[ProcessId] = None) -> list[Source]:
        return [s for s in self.sources if s.operand == operand and (device is None or s.device in (None, device))]

    def lines(self, lang: str = "en") -> list[str]:
        return [step.say(lang) for step in self.steps]


@dataclass(frozen=True)
class Reached:
    """A result element an operand element reaches."""

    result: int
    index: tuple[int, ...]
    device: Optional[ProcessId] = None


@dataclass
class ProvenanceQuery:
    """The question asked of a family: which result element, of which op, with which values.

    `operands`/`results` are the values of one execution of the op (None when the program has not
    run; shape-only families do not need them). On a grid, `process` is the device asked about and
    `peer_values(process)` returns (operands, results) of the same op instance on another device.
    """

    op: Operation
    result: int
    index: tuple[int, ...]
    operands: Optional[Sequence[Any]] = None
    results: Optional[Sequence[Any]] = None
    process: Optional[ProcessId] = None
    peer_values: Optional[Callable[[ProcessId], tuple[Sequence[Any], Sequence[Any]]]] = None
    memo: dict = field(default_factory=dict)  # families keep derived forms here across a search

    # -- what a family reads -----------------------------------------------------------------
    def attr(self, name: str, default: Any = None) -> Any:
        return self.op.attributes.get(name, default)

    def operand_shape(self, i: int) -> tuple[int, ...]:
        return _shape_of(self.op, self.op.operands[i].type, f"operand #{i}")

    def result_shape(self, i: int = 0) -> tuple[int, ...]:
        return _shape_of(self.op, self.op.results[i].type, f"result #{i}")

    def operand_value(self, i: int) -> np.ndarray:
        """The value operand `i` had; an error saying how to get it when the op has not run."""
        if self.operands is None:
            raise ValuesNeeded(
                f"{self.op.name}: which elements make this result depends on the values of its operands; "
                "run the program to this op first (or pass --args)", self.op.pos)
        return np.asarray(self.operands[i])

    def result_value(self, i: int = 0) -> np.ndarray:
        if self.results is None:
            raise ValuesNeeded(f"{self.op.name}: needs the op's result; run the program to this op first", self.op.pos)
        return np.asarray(self.results[i])

    def error(self, message: str) -> ProvenanceError:
        return ProvenanceError(f"{self.op.name}: {message}", self.op.pos)

    # -- what a family returns ---------------------------------------------------------------
    def answer(self, sources: Sequence[Source], steps: Sequence[Step | tuple]) -> Provenance:
        """The Provenance of this query; a step may be given as (phrase, {field: value})."""
        made = tuple(s if isinstance(s, Step) else Step(s[0], tuple(s[1].items())) for s in steps)
        return Provenance(self.op, self.result, self.index, tuple(sources), made, self.process)


Explainer = Callable[[ProvenanceQuery], Provenance]
Inverse = Callable[[ProvenanceQuery, int, tuple, Optional[ProcessId]], list[Reached]]

EXPLAINERS: dict[str, Explainer] = {}
FAMILY_EXPLAINERS: dict[str, Explainer] = {}
INVERSES: dict[str, Inverse] = {}
# A registered explainer keeps its own signature (elementwise_provenance's `used`, for its callers).
_Registered = TypeVar("_Registered", bound=Explainer)


def explains(*names: str) -> Callable[[Explainer], Explainer]:
    """Register the provenance function of each op name (one per op)."""

    def register(fn: Explainer) -> Explainer:
        for name in names:
            if name in EXPLAINERS:
                raise ValueError(f"provenance for {name} registered twice")
            EXPLAINERS[name] = fn
        return fn

    return register


def explains_family(family: str) -> Callable[[_Registered], _Registered]:
    """Register the provenance of every op whose definition is of `family` (OpDef.family), whatever
    its dialect, and has no function of its own."""

    def register(fn: _Registered) -> _Registered:
        if family in FAMILY_EXPLAINERS:
            raise ValueError(f"provenance for family {family} registered twice")
        FAMILY_EXPLAINERS[family] = fn
        return fn

    return register


def reaches(*names: str) -> Callable[[Inverse], Inverse]:
    """Register a direct inverse: (query, operand, operand index, device) -> reached result elements."""

    def register(fn: Inverse) -> Inverse:
        for name in names:
            INVERSES[name] = fn
        return fn

    return register


def explainer_for(op_name: str) -> Optional[Explainer]:
    _load_families()
    fn = EXPLAINERS.get(op_name)
    if fn is None:
        definition = lookup(op_name)
        if definition is not None:
            fn = FAMILY_EXPLAINERS.get(definition.family)
    return fn


def has_provenance(op_name: str) -> bool:
    return explainer_for(op_name) is not None


# -- the questions -----------------------------------------------------------------------------


def provenance(op: Operation, index: Sequence[int], *, result: int = 0, operands: Optional[Sequence[Any]] = None,
               results: Optional[Sequence[Any]] = None, process: Optional[ProcessId] = None,
               peer_values=None) -> Provenance:
    """Which operand elements make `result[index]` of `op` (see the module docstring)."""
    query = _query(op, index, result, operands, results, process, peer_values)
    return _explainer(op)(query)


def reach(op: Operation, operand: int, index: Sequence[int], *, operands: Optional[Sequence[Any]] = None,
          results: Optional[Sequence[Any]] = None, process: Optional[ProcessId] = None,
          peer_values=None, device: Optional[ProcessId] = None) -> list[Reached]:
    """Every result element that operand `operand`'s element `index` (on `device`) helps make."""
    if not 0 <= operand < len(op.operands):
        raise ProvenanceError(f"{op.name} has {len(op.operands)} operand(s); there is no operand #{operand}", op.pos)
    index = _checked_index(op, _shape_of(op, op.operands[operand].type, f"operand #{operand}"), index, f"operand #{operand}")
    query = ProvenanceQuery(op, 0, (), operands, results, process, peer_values)
    _load_families()
    inverse = INVERSES.get(op.name)
    if inverse is not None:
        return inverse(query, operand, index, device)
    explainer = _explainer(op)
    total = sum(int(np.prod(_shape_of(op, r.type, "result"), dtype=np.int64)) for r in op.results if isinstance(r.type, TensorType))
    if total > REACH_SEARCH_LIMIT:
        raise ProvenanceError(
            f"{op.name}: finding every result element operand #{operand}{list(index)} reaches means looking at "
            f"{total:,} result elements (more than {REACH_SEARCH_LIMIT:,}); ask about one result element instead", op.pos)
    _check_reach_work(op, explainer, query, total, operand, index)
    reached = []
    for r, value in enumerate(op.results):
        if not isinstance(value.type, TensorType):
            continue
        for at in itertools.product(*(range(n) for n in _shape_of(op, value.type, "result"))):
            query.result, query.index = r, at
            answer = explainer(query)
            if any(s.operand == operand and s.index == index and (device is None or s.device in (None, device))
                   for s in answer.sources):
                reached.append(Reached(r, at, process))
    return reached


def _check_reach_work(op, explainer, query, total: int, operand: int, index: tuple) -> None:
    """Refuse a generic inverse whose forward answers are big: `total` result elements of a
    convolution with a 3x3x64 window list over a thousand operand elements each. The middle
    element's answer stands for every one (an edge one may miss some of its window to padding)."""
    for r, value in enumerate(op.results):
        shape = _shape_of(op, value.type, "result") if isinstance(value.type, TensorType) else ()
        if not isinstance(value.type, TensorType) or 0 in shape:
            continue
        query.result, query.index = r, tuple(n // 2 for n in shape)
        work = total * max(1, len(explainer(query).sources))
        if work > REACH_WORK_LIMIT:
            raise ProvenanceError(
                f"{op.name}: finding every result element operand #{operand}{list(index)} reaches means looking at "
                f"{total:,} result elements of {work // total:,} operand elements each ({work:,} in all, more than "
                f"{REACH_WORK_LIMIT:,}); ask about one result element instead", op.pos)
        return


# -- plumbing ----------------------------------------------------------------------------------


def _query(op, index, result, operands, results, process, peer_values) -> ProvenanceQuery:
    if not 0 <= result < len(op.results):
        raise ProvenanceError(f"{op.name} has {len(op.results)} result(s); there is no result #{result}", op.pos)
    shape = _shape_of(op, op.results[result].type, f"result #{result}")
    return ProvenanceQuery(op, result, _checked_index(op, shape, index, "result"), operands, results, process, peer_values)


def _explainer(op: Operation) -> Explainer:
    fn = explainer_for(op.name)
    if fn is None:
        raise ProvenanceError(f"{op.name}: hlodbg cannot trace its result elements back to its operands "
                              "(its explanation and shape are still available)", op.pos)
    return fn


def _shape_of(op: Operation, type_: Any, what: str) -> tuple[int, ...]:
    if not isinstance(type_, TensorType) or type_.shape is None or any(d is None or d < 0 for d in type_.shape):
        raise ProvenanceError(f"{op.name}: {what} has type {type_}, not a tensor of static shape", op.pos)
    return tuple(int(d) for d in type_.shape)


def _checked_index(op: Operation, shape: tuple[int, ...], index: Sequence[int], what: str) -> tuple[int, ...]:
    index = tuple(int(i) for i in index)
    if len(index) != len(shape) or any(not 0 <= i < n for i, n in zip(index, shape)):
        raise ProvenanceError(f"{op.name}: {list(index)} is not an element of the {what} (shape {list(shape)})", op.pos)
    return index


def _load_families() -> None:
    """Import every family module so that its @explains registrations exist."""
    from . import load_families

    load_families()
