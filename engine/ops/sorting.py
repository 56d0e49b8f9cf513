"""Sorting: stablehlo.sort and chlo.top_k.

stablehlo.sort takes a comparator region. Comparators JAX emits are recognised and turned into
numpy keys for a stable `argsort`/`lexsort` (the region never runs):

- a term is `compare LT|GT, f(lhs_k), f(rhs_k)` where f is the same computation applied to the
  lhs and the rhs argument of operand k (identity, JAX's float canonicalisation `x == 0 ? 0 : x`
  then `x != x ? NaN : x`, real/imag of complex numbers, ...); f is evaluated once on the whole
  operand with the ops' own evaluators;
- several keys chain lexicographically as `LT(a) or (EQ(a) and <rest>)`, which is how
  `lax.sort(..., num_keys>1)` and complex sorting lower.

TOTALORDER keys become integers ordered -NaN < -Inf < ... < -0.0 < +0.0 < ... < Inf < +NaN;
FLOAT keys (without NaN; -0.0 and +0.0 tie) likewise, SIGNED/UNSIGNED integers as they are, GT
terms by complementing the integer key. Any other comparator (or FLOAT keys holding NaN, which
are not a strict weak order) runs through a vectorised bottom-up merge sort: each merge finds
every element's place in the partner run by a binary search in which one region call compares
all elements at once, so a sort costs O(log^2 n) region calls.

Stability: the result is always the stable order. XLA uses an unstable sort when is_stable is
false, so elements the comparator finds equal (-0.0 and +0.0 under JAX's comparator) may come
out in another order there.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional, Sequence, Union

import numpy as np

from ..ir.attributes import attribute_key
from ..ir.core import Operation, Region, Value
from ..ir.dtypes import element_dtype, is_narrow_float, is_narrow_int, widen
from ..ir.phrases import Phrase
from .provenance import Source, explains
from .reduction import run_body
from .registry import EVALUATORS, OpCall, op

BOOL = np.dtype(np.bool_)


# -- comparator analysis ----------------------------------------------------------------------


@dataclass(frozen=True)
class _Key:
    """A value computed from one comparator argument (operand `operand`, lhs or rhs) and constants."""

    operand: int
    side: int  # 0: lhs (argument 2k), 1: rhs (argument 2k+1)
    form: tuple  # the computation, equal for the mirrored lhs and rhs values
    value: Value


@dataclass(frozen=True)
class _Const:
    form: tuple


@dataclass(frozen=True)
class _Compare:
    """`lhs_key <direction> rhs_key` for mirrored keys, oriented lhs-first."""

    direction: str
    compare_type: str
    key: _Key  # the lhs side


@dataclass(frozen=True)
class _Logic:
    name: str  # "and" | "or"
    a: Any
    b: Any


_Fact = Union[_Key, _Const, _Compare, _Logic]
_SWAPPED = {"LT": "GT", "GT": "LT", "LE": "GE", "GE": "LE", "EQ": "EQ", "NE": "NE"}


@dataclass(frozen=True)
class Term:
    """One lexicographic sort key: operand, the lhs value computing it, compare type and order."""

    operand: int
    value: Value
    compare_type: str
    descending: bool


def analyse_comparator(region: Region) -> Optional[list[Term]]:
    """The lexicographic keys a comparator sorts by, or None when it is not of a recognised form."""
    block = region.blocks[0]
    args = block.arguments
    if len(args) % 2 or not block.operations:
        return None
    facts: dict[Value, _Fact] = {}
    for i, arg in enumerate(args):
        facts[arg] = _Key(i // 2, i % 2, ("arg", i // 2, str(arg.type)), arg)
    for body_op in block.operations[:-1]:
        fact = _fact_of(body_op, facts)
        if fact is None:
            return None
        facts[body_op.results[0]] = fact
    terminator = block.operations[-1]
    if len(terminator.operands) != 1 or terminator.operands[0] not in facts:
        return None
    chain = _chain(facts[terminator.operands[0]])
    if chain is None:
        return None
    return [Term(c.key.operand, c.key.value, c.compare_type, c.direction == "GT") for c in chain]


def _fact_of(body_op: Operation, facts: dict) -> Optional[_Fact]:
    if body_op.regions or len(body_op.results) != 1:
        return None
    ins = [facts.get(v) for v in body_op.operands]
    if any(f is None for f in ins):
        return None  # a value from outside the comparator
    attrs = tuple(sorted((name, attribute_key(value)) for name, value in body_op.attributes.items()))
    result = body_op.results[0]
    keys = [f for f in ins if isinstance(f, _Key)]
    logic = [f for f in ins if isinstance(f, (_Compare, _Logic))]
    forms = tuple(f.form for f in ins if isinstance(f, (_Key, _Const)))
    form = (body_op.name, attrs, str(result.type), forms)
    if logic:
        if keys or len(ins) != 2 or body_op.name not in ("stablehlo.and", "stablehlo.or") or len(logic) != 2:
            return None
        return _Logic(body_op.name.rsplit(".", 1)[1], logic[0], logic[1])
    if not keys:
        if not body_op.operands and body_op.name not in ("stablehlo.constant", "chlo.constant"):
            return None  # iota and friends: not worth recognising
        return _Const(form)
    sources = {(k.operand, k.side) for k in keys}
    if len(sources) == 1:
        operand, side = sources.pop()
        return _Key(operand, side, form, result)
    if body_op.name != "stablehlo.compare" or len(keys) != 2:
        return None
    lhs, rhs = keys
    if lhs.operand != rhs.operand or lhs.form != rhs.form or lhs.side == rhs.side:
        return None
    direction = str(body_op.attributes.get("comparison_direction"))
    compare_type = body_op.attributes.get("compare_type")
    compare_type = str(compare_type) if compare_type is not None else _default_compare_type(lhs.value)
    if lhs.side == 1:
        direction = _SWAPPED[direction]
        lhs = rhs
    return _Compare(direction, compare_type, lhs)


def _default_compare_type(value: Value) -> str:
    dtype = element_dtype(value.type)
    if dtype.kind == "i":
        return "SIGNED"
    if dtype.kind in "ub":
        return "UNSIGNED"
    return "FLOAT"


def _chain(fact: Any) -> Optional[list[_Compare]]:
    """`LT(a)` or `LT(a) | (EQ(a) & rest)` (either operand order) as a list of strict terms."""
    if isinstance(fact, _Compare):
        return [fact] if fact.direction in ("LT", "GT") else None
    if not isinstance(fact, _Logic) or fact.name != "or":
        return None
    for first, rest in ((fact.a, fact.b), (fact.b, fact.a)):
        if not (isinstance(first, _Compare) and first.direction in ("LT", "GT")):
            continue
        if not (isinstance(rest, _Logic) and rest.name == "and"):
            continue
        for equal, tail in ((rest.a, rest.b), (rest.b, rest.a)):
            if (isinstance(equal, _Compare) and equal.direction == "EQ" and equal.compare_type == first.compare_type
                    and equal.key.operand == first.key.operand and equal.key.form == first.key.form):
                remainder = _chain(tail)
                if remainder is not None:
                    return [first, *remainder]
    return None


def evaluate_value(call: OpCall, value: Value, bindings: dict) -> np.ndarray:
    """Compute `value` of the comparator from block-argument `bindings` with the ops' evaluators."""
    env = dict(bindings)
    needed: list[Operation] = []
    seen: set[int] = set()

    def visit(v: Value) -> None:
        if v in env:
            return
        producer = v.defining_op
        if producer is None:
            raise ValueError(f"{v.name} is not computed inside the comparator")
        if id(producer) in seen:
            return
        seen.add(id(producer))
        for operand in producer.operands:
            visit(operand)
        needed.append(producer)

    visit(value)
    calls = call.cached("key_calls", dict)
    for body_op in needed:
        sub = calls.get(id(body_op))
        if sub is None:
            sub = calls[id(body_op)] = OpCall(body_op, call.interpreter)
        evaluator = EVALUATORS.get(body_op.name)
        if evaluator is None:
            raise call.error(f"cannot evaluate {body_op.name} in the comparator: no evaluator for this op")
        env[body_op.results[0]] = evaluator(sub, *[env[v] for v in body_op.operands])
    return np.asarray(env[value])


# -- ordering keys ----------------------------------------------------------------------------


def total_order_key(values: np.ndarray) -> np.ndarray:
    """Signed integers ordered as IEEE totalOrder: -NaN < -Inf < ... < -0.0 < +0.0 < ... < +NaN."""
    values = np.asarray(values)
    if is_narrow_float(values.dtype) or values.dtype == np.float16:
        values = values.astype(np.float32)  # order-preserving, NaN signs kept
    bits_type = np.int64 if values.dtype.itemsize == 8 else np.int32
    bits = np.array(values, order="C").view(bits_type)
    return np.where(bits < 0, bits ^ np.iinfo(bits_type).max, bits)


def order_key(values: np.ndarray, compare_type: str) -> Optional[np.ndarray]:
    """An integer array whose ascending order is the comparator's LT order, or None if none exists."""
    values = np.asarray(values)
    dtype = values.dtype
    if dtype == BOOL:
        return values.astype(np.uint8)
    if is_narrow_int(dtype):
        values = widen(values)
    elif is_narrow_float(dtype) or dtype == np.float16:
        values = values.astype(np.float32)  # order-preserving, signs of zeros and NaNs kept
    dtype = values.dtype
    if dtype.kind in "iu":
        if compare_type == "UNSIGNED" and dtype.kind == "i":
            return values.view(np.dtype(f"u{dtype.itemsize}"))
        if compare_type == "SIGNED" and dtype.kind == "u":
            return values.view(np.dtype(f"i{dtype.itemsize}"))
        return values
    if dtype.kind != "f":
        return None
    if compare_type == "FLOAT":
        if np.isnan(values).any():
            return None  # NaN is unordered: not a strict weak order, leave it to the comparator
        values = np.where(values == 0, np.zeros((), dtype), values)  # -0.0 ties with +0.0
    elif compare_type != "TOTALORDER":
        return None
    return total_order_key(values)


def _descending(key: np.ndarray) -> np.ndarray:
    # Bitwise complement reverses the order of signed and unsigned integers without overflow.
    return np.invert(key)


# -- stablehlo.sort ---------------------------------------------------------------------------


@op("stablehlo.sort")
def sort(call: OpCall, *operands: np.ndarray) -> Any:
    shape = operands[0].shape
    for x in operands[1:]:
        if x.shape != shape:
            raise call.error(f"operands have different shapes: {shape} vs {x.shape}")
    rank = len(shape)
    dimension = int(call.attr("dimension", -1))
    if not -rank <= dimension < rank:
        raise call.error(f"dimension {dimension} is out of range for operands of rank {rank}")
    dimension %= rank
    moved = [np.moveaxis(x, dimension, -1) for x in operands]
    n = shape[dimension]
    if n <= 1 or moved[0].size == 0:
        return call.results([np.array(x) for x in operands])
    perm = fast_permutation(call, operands, dimension)
    if perm is None:
        perm = merge_permutation(call, moved)
    results = [np.moveaxis(np.take_along_axis(m, perm, axis=-1), -1, dimension) for m in moved]
    return call.results([np.array(r) for r in results])


def fast_permutation(call: OpCall, operands: Sequence[np.ndarray], dimension: int) -> Optional[np.ndarray]:
    """The stable sorting permutation along the last axis from a recognised comparator, else None."""
    if call.interpreter.expand_bodies:
        return None
    terms = call.cached("sort_terms", lambda: analyse_comparator(call.regions[0]))
    if terms is None:
        return None
    keys = []
    for term in terms:
        arg = call.regions[0].blocks[0].arguments[2 * term.operand]
        try:
            values = evaluate_value(call, term.value, {arg: operands[term.operand]})
        except Exception:  # noqa: BLE001 - a key that cannot be computed apart falls back to the region
            return None
        if values.shape != operands[term.operand].shape:
            values = np.broadcast_to(values, operands[term.operand].shape)
        key = order_key(values, term.compare_type)
        if key is None:
            return None
        keys.append(np.moveaxis(_descending(key) if term.descending else key, dimension, -1))
    if len(keys) == 1:
        return np.argsort(keys[0], axis=-1, kind="stable")
    # lexsort sorts by its last key first and is stable.
    return np.lexsort(keys[::-1], axis=-1)


def merge_permutation(call: OpCall, moved: Sequence[np.ndarray]) -> np.ndarray:
    """Stable bottom-up merge sort along the last axis, asking the comparator region.

    At the merge of runs of width w, each element of a left run moves forward by the number of
    partner-run elements strictly less than it (comparator(partner, self)), each element of a
    right run by the number of left-run elements not greater than it (not comparator(self,
    partner)); both counts come from one simultaneous binary search, w.bit_length() region calls
    on whole arrays.
    """
    n = moved[0].shape[-1]
    shape = moved[0].shape
    perm = np.broadcast_to(np.arange(n, dtype=np.int64), shape).copy()
    positions = np.arange(n, dtype=np.int64)
    width = 1
    while width < n:
        pair_start = (positions // (2 * width)) * (2 * width)
        offset = positions - pair_start
        is_left = offset < width
        local = np.where(is_left, offset, offset - width)
        partner_start = np.where(is_left, pair_start + width, pair_start)
        partner_len = np.where(is_left, np.clip(n - pair_start - width, 0, width), width)
        current = [np.take_along_axis(m, perm, axis=-1) for m in moved]
        lo = np.zeros(shape, dtype=np.int64)
        hi = np.broadcast_to(partner_len, shape).copy()
        for _ in range(width.bit_length()):
            active = lo < hi
            if not active.any():
                break
            mid = (lo + hi) >> 1
            index = np.minimum(partner_start + mid, n - 1)
            args = []
            for values in current:
                partner = np.take_along_axis(values, index, axis=-1)
                args += [np.where(is_left, partner, values), np.where(is_left, values, partner)]
            (less,) = run_body(call, 0, args, shape, [BOOL])
            advance = np.where(is_left, less, ~less)
            lo = np.where(active & advance, mid + 1, lo)
            hi = np.where(active & ~advance, mid, hi)
        destination = pair_start + local + lo
        merged = np.empty_like(perm)
        np.put_along_axis(merged, destination, perm, axis=-1)
        perm = merged
        width *= 2
    return perm


# -- chlo.top_k -------------------------------------------------------------------------------


@op("chlo.top_k")
def top_k(call: OpCall, operand: np.ndarray) -> list[np.ndarray]:
    return top_k_of(call, operand, int(call.attr("k")))


def top_k_of(call: OpCall, operand: np.ndarray, k: int, largest: bool = True) -> list[np.ndarray]:
    """The k largest (or smallest) elements along the last axis, in that order, with their indices.

    As XLA: floats in descending totalOrder (+NaN first, then +Inf ... +0.0, -0.0 ... -Inf,
    -NaN last; the reverse for the smallest) and ties in ascending index order.
    """
    if operand.ndim == 0:
        raise call.error("operand must have at least one dimension")
    n = operand.shape[-1]
    if not 0 <= k <= n:
        raise call.error(f"k = {k} is out of range for a last dimension of size {n}")
    dtype = operand.dtype
    if dtype == BOOL:
        key = operand.astype(np.uint8)
    elif dtype.kind in "iu":
        key = operand
    elif dtype.kind == "f" or is_narrow_float(dtype):
        key = total_order_key(operand)
    else:
        key = widen(operand)
        if key.dtype.kind not in "iu":
            raise call.error(f"unsupported element type {dtype}")
    perm = np.argsort(_descending(key) if largest else key, axis=-1, kind="stable")[..., :k]
    values = np.take_along_axis(operand, perm, axis=-1)
    index_dtype = element_dtype(call.result_types[1])
    return [np.array(values), perm.astype(index_dtype)]


# -- element provenance -----------------------------------------------------------------------
#
# A sorted element is an element of the same row of the operand, moved: result[k][.., j, ..] =
# operand[k][.., perm[j], ..]. With the permutation held fixed the moved element alone determines
# it, and it is reported as the "moved element". The permutation itself is the comparator's
# verdict on the keys of the row — every key element of the row takes part, since where one
# element lands depends on how many of the others sort before it — so those are reported too, as
# "compared" elements: changing one may move other elements into this position, or may not (a
# larger maximum stays the maximum). That is the honest statement for sort: an element not
# reported never changes the result element; a moved element always does while the keys hold.
# The permutation is read back from the values (each result element matched with the operand
# element of the row holding the same bits in every operand, equal tuples in order): it needs
# the op's values, and for an unstable sort of equal tuples any matching is as good as the other.

MOVED_ELEMENT = Phrase("moved element")
COMPARED_ELEMENT = Phrase("compared element")
SORT_MOVED = Phrase("result{index} is operand{operand} moved from position {source} to position {target} "
                    "along dimension {dimension}")
SORT_KEYS = Phrase("its place is decided by the comparator on the keys of its row: operand(s) {keys}, "
                   "positions 0..{last} along dimension {dimension}")
TOP_K_MOVED = Phrase("result{index} is the element at position {source} of its row, number {rank} from the largest")
TOP_K_INDEX = Phrase("result{index} = {source}: the position of the element number {rank} from the largest in its row")
TOP_K_KEYS = Phrase("the order compares every element of the row: positions 0..{last} of the last dimension")


def _row_permutation(q, dimension: int) -> np.ndarray:
    """perm[j]: the position along `dimension` of the operand element result[.., j, ..] came from."""
    row = tuple(i for d, i in enumerate(q.index) if d != dimension)
    memo = q.memo.setdefault("sort_rows", {})
    if row not in memo:
        count = len(q.op.operands)
        lines = []
        for values in ([q.operand_value(k) for k in range(count)], [q.result_value(k) for k in range(count)]):
            moved = [np.moveaxis(np.asarray(v), dimension, -1)[row] for v in values]
            lines.append([tuple(m[j].tobytes() for m in moved) for j in range(moved[0].shape[-1])])
        positions: dict = {}
        for j, element in enumerate(lines[0]):
            positions.setdefault(element, []).append(j)
        perm = []
        for element in lines[1]:
            if not positions.get(element):
                raise q.error(f"the result row at {list(row)} holds an element no operand position has: "
                              "the values given are not this op's")
            perm.append(positions[element].pop(0))
        memo[row] = np.array(perm)
    return memo[row]


def comparator_operands(op: Operation) -> list[int]:
    """The operands whose elements the comparator reads: the recognised keys, else every argument it uses."""
    terms = analyse_comparator(op.regions[0])
    if terms is not None:
        return sorted({t.operand for t in terms})
    used = {v for body_op in op.regions[0].blocks[0].operations for inner in body_op.walk() for v in inner.operands}
    arguments = op.regions[0].blocks[0].arguments
    return sorted({i // 2 for i, arg in enumerate(arguments) if arg in used})


def _compared_sources(q, keys: Sequence[int], dimension: int, size: int) -> list:
    sources = []
    for k in keys:
        for position in range(size):
            at = list(q.index)
            at[dimension] = position
            sources.append(Source(k, tuple(at), COMPARED_ELEMENT))
    return sources


@explains("stablehlo.sort")
def sort_provenance(q):
    rank = len(q.result_shape(q.result))
    dimension = int(q.attr("dimension", -1)) % rank
    perm = _row_permutation(q, dimension)
    source = list(q.index)
    source[dimension] = int(perm[q.index[dimension]])
    keys = q.memo.get("keys") or q.memo.setdefault("keys", comparator_operands(q.op))
    size = q.result_shape(q.result)[dimension]
    moved = Source(q.result, tuple(source), MOVED_ELEMENT)
    compared = [s for s in _compared_sources(q, keys, dimension, size) if s != Source(q.result, tuple(source), COMPARED_ELEMENT)]
    steps = [(SORT_MOVED, {"index": q.index, "operand": source, "source": source[dimension],
                           "target": q.index[dimension], "dimension": dimension}),
             (SORT_KEYS, {"keys": keys, "last": size - 1, "dimension": dimension})]
    return q.answer([moved, *compared], steps)


@explains("chlo.top_k")
def top_k_provenance(q):
    dimension = len(q.operand_shape(0)) - 1
    j = q.index[-1]
    indices = q.result_value(1)
    position = int(np.asarray(indices)[q.index])
    source = (*q.index[:-1], position)
    rank = j + 1
    row = _compared_sources(q, [0], dimension, q.operand_shape(0)[-1])
    if q.result == 0:
        sources = [Source(0, source, MOVED_ELEMENT), *(s for s in row if s.index != source)]
        steps = [(TOP_K_MOVED, {"index": q.index, "source": position, "rank": rank})]
    else:
        sources = row
        steps = [(TOP_K_INDEX, {"index": q.index, "source": position, "rank": rank})]
    steps.append((TOP_K_KEYS, {"last": q.operand_shape(0)[-1] - 1}))
    return q.answer(sources, steps)
