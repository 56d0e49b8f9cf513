"""Reductions with a reducer body: reduce and map, plus the reducer machinery other families share.

A reducer body is applied on whole arrays, never once per element. The spec leaves the order of
combination (and how often the init value takes part) implementation-defined; reduce follows
XLA CPU's schedule wherever that is affordable, so results match it bit for bit:

- results that do not depend on the order (integer arithmetic, logic, max/min) come from numpy
  ufunc reductions combined once with the init value;
- a single-input reduce is XLA's TreeReductionRewriter schedule (`xla_tree_reduce`): blocks of
  32 along each long reduced axis folded in order, then the blocks, rounding narrow floats after
  every step. A recognised single-op body folds with ufunc `accumulate`, any other body with one
  region call per block position (vectorised over all blocks);
- f32/f64 sums and products of 4096+ elements, which XLA vectorises in a shape-dependent order,
  use numpy's pairwise reduction (within about 1e-7 relative of XLA);
- a variadic general body (argmax's (value, index) selection) is reduced as an ordered pairwise
  tree in log2(n) region calls: neighbours combine left-with-right, the init value last. XLA
  folds these in order one element at a time; for selection reducers the answer is the same.

`combine(call, kind, a, b)` and `reduce_with_body(call, region, arrays, inits, axes)` are the
public entry points for other families (all_reduce, reduce_scatter, windows, scatter), with
`fold_last` and `tree_reduce_last` for reductions along one axis. The reduce evaluator itself is
in reduction_fast.py, beside the fast path it tries first.
"""
from __future__ import annotations

import itertools
from typing import Any, Optional, Sequence

import numpy as np

from ..ir.dtypes import element_dtype, is_float_dtype, is_narrow_float, is_narrow_int, narrow, widen
from ..ir.phrases import Phrase, field_text
from .elementwise import complex64_multiply
from .elementwise_provenance import body_dependencies, elementwise_provenance, operand_names
from .provenance import ProvenanceQuery, Reached, Source, explains, reaches
from .registry import OpCall, op

# A general body costs one region call per sequential step; past this many steps in one fold,
# reductions switch to the ordered pairwise tree (log2(n) calls, a different rounding order).
SEQUENTIAL_BODY_LIMIT = 1024

# numpy ufunc for each recognised reducer op; booleans use the logical forms (i1 add is `or`).
UFUNCS = {
    "add": np.add,
    "multiply": np.multiply,
    "maximum": np.maximum,
    "minimum": np.minimum,
    "and": np.bitwise_and,
    "or": np.bitwise_or,
    "xor": np.bitwise_xor,
}
BOOL_UFUNCS = {
    "add": np.logical_or,
    "multiply": np.logical_and,
    "maximum": np.logical_or,
    "minimum": np.logical_and,
    "and": np.logical_and,
    "or": np.logical_or,
    "xor": np.logical_xor,
}


def ufunc_for(kind: str, dtype: np.dtype) -> np.ufunc:
    """The numpy ufunc applying reducer op `kind` to values of `dtype` (in its compute dtype)."""
    if dtype == np.bool_:
        return BOOL_UFUNCS[kind]
    if kind in ("and", "or", "xor") and (dtype.kind in "fc" or is_float_dtype(dtype)):
        raise ValueError(f"`{kind}` is not defined on floating-point values")
    return UFUNCS[kind]


def combine(call: Optional[OpCall], kind: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """`kind(a, b)` elementwise with StableHLO semantics, in the dtype of `a`.

    Narrow floats are computed in f32 and rounded once, narrow integers wrap; float maximum and
    minimum propagate NaN and order -0.0 below +0.0 (IEEE 754 maximum/minimum), as XLA does.
    complex64 products are rounded as XLA CPU computes them, with fused multiply-adds.
    `call` is accepted for symmetry with the region-running path and may be None.
    """
    a = np.asarray(a)
    b = np.asarray(b)
    dtype = a.dtype
    fn = ufunc_for(kind, dtype)
    wa, wb = widen(a), widen(b)
    if kind == "multiply" and dtype == np.complex64:
        return complex64_multiply(wa, wb)
    result = fn(wa, wb)
    if kind in ("maximum", "minimum") and wa.dtype.kind == "f":
        result = _signed_zero_fix(kind, wa, wb, result)
    return narrow(result, dtype)


def _signed_zero_fix(kind: str, a: np.ndarray, b: np.ndarray, result: np.ndarray) -> np.ndarray:
    # numpy returns either zero when comparing -0.0 with +0.0; IEEE maximum picks +0.0, minimum -0.0.
    both_zero = (a == 0) & (b == 0)
    if not np.any(both_zero):
        return result
    negative = np.signbit(a) & np.signbit(b) if kind == "maximum" else np.signbit(a) | np.signbit(b)
    zero = np.where(negative, -0.0, 0.0).astype(result.dtype)
    return np.where(both_zero, zero, result)


def ufunc_reduce(kind: str, array: np.ndarray, init: np.ndarray, axes: Sequence[int]) -> np.ndarray:
    """`init` combined once with the reduction of `array` over `axes` by the recognised op `kind`."""
    dtype = array.dtype
    axes = tuple(axes)
    keep_shape = tuple(d for i, d in enumerate(array.shape) if i not in axes)
    init_w = widen(np.asarray(init, dtype=dtype))
    if any(array.shape[a] == 0 for a in axes):
        return narrow(np.broadcast_to(init_w, keep_shape).copy(), dtype)
    fn = ufunc_for(kind, dtype)
    wide = widen(array)
    if axes:
        # An explicit dtype keeps numpy from promoting small integers (wrap-around is per type).
        partial = fn.reduce(wide, axis=axes, dtype=wide.dtype)
        if kind in ("maximum", "minimum") and wide.dtype.kind == "f":
            partial = _reduced_zero_fix(kind, wide, partial, axes)
    else:
        partial = wide
    result = fn(init_w, partial)
    if kind in ("maximum", "minimum") and wide.dtype.kind == "f":
        result = _signed_zero_fix(kind, np.broadcast_to(init_w, np.shape(partial)), partial, result)
    return narrow(np.asarray(result), dtype)


def _reduced_zero_fix(kind: str, wide: np.ndarray, partial: np.ndarray, axes: tuple) -> np.ndarray:
    # A zero maximum is +0.0 if any +0.0 took part (-0.0 only when every zero was -0.0); the
    # reverse for minimum. numpy may have returned whichever zero it met first.
    zero = np.asarray(partial == 0)
    if not zero.any():
        return partial
    if kind == "maximum":
        positive = np.logical_or.reduce((wide == 0) & ~np.signbit(wide), axis=axes)
        fixed = np.where(positive, 0.0, -0.0)
    else:
        negative = np.logical_or.reduce((wide == 0) & np.signbit(wide), axis=axes)
        fixed = np.where(negative, -0.0, 0.0)
    return np.where(zero, fixed.astype(partial.dtype), partial)


def run_body(call: OpCall, region_index: int, args: Sequence[Any], shape: tuple[int, ...],
             dtypes: Sequence[np.dtype]) -> list[np.ndarray]:
    """Run a region on whole arrays; results are broadcast to `shape` (a body may return a constant)."""
    outs = call.run_region(region_index, *args)
    if len(outs) != len(dtypes):
        raise call.error(f"region {region_index} returned {len(outs)} value(s), expected {len(dtypes)}")
    results = []
    for out, dtype in zip(outs, dtypes):
        out = np.asarray(out)
        if out.dtype != dtype:
            out = out.astype(dtype)
        if out.shape != shape:
            out = np.broadcast_to(out, shape)
        results.append(out)
    return results


def tree_reduce_last(call: OpCall, region_index: int, arrays: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Reduce the (non-empty) last axis of `arrays` with a general body, in log2(n) region calls.

    Neighbours are combined left-with-right, so each partial result covers a contiguous run in
    order; an odd element out is carried to the next level unchanged.
    """
    values = list(arrays)
    dtypes = [v.dtype for v in values]
    n = values[0].shape[-1]
    while n > 1:
        half = n // 2
        left = [v[..., 0:2 * half:2] for v in values]
        right = [v[..., 1:2 * half:2] for v in values]
        merged = run_body(call, region_index, [*left, *right], left[0].shape, dtypes)
        if n % 2:
            merged = [np.concatenate([m, v[..., -1:]], axis=-1) for m, v in zip(merged, values)]
        values = merged
        n = values[0].shape[-1]
    return [v[..., 0] for v in values]


def reduce_with_body(call: OpCall, region_index: int, arrays: Sequence[np.ndarray],
                     inits: Sequence[np.ndarray], axes: Sequence[int]) -> list[np.ndarray]:
    """Reduce same-shaped `arrays` over `axes` with region `region_index` of `call`'s op.

    The body takes (acc0.., x0..) and returns (acc0..); `inits` are 0-d. The schedule is XLA
    CPU's (see `xla_tree_reduce`) wherever it is affordable, so float results match it bit for
    bit; results that do not depend on the order (integer arithmetic, max/min, logic) come
    straight from numpy ufunc reductions.
    """
    arrays = [np.asarray(a) for a in arrays]
    inits = [np.asarray(i).astype(a.dtype, copy=False) for i, a in zip(inits, arrays)]
    rank = arrays[0].ndim
    axes = tuple(sorted({int(a) + rank if int(a) < 0 else int(a) for a in axes}))
    kind = call.body_kind(region_index)
    keep = [d for d in range(rank) if d not in axes]
    keep_shape = tuple(arrays[0].shape[d] for d in keep)
    count = int(np.prod([arrays[0].shape[d] for d in axes], dtype=np.int64))
    if count == 0:
        return [np.broadcast_to(i, keep_shape).copy() for i in inits]
    if kind is not None and all(_order_free(kind, a.dtype, i) for a, i in zip(arrays, inits)):
        return [ufunc_reduce(kind, a, i, axes) for a, i in zip(arrays, inits)]
    moved = [np.transpose(a, keep + list(axes)) for a in arrays]
    if len(arrays) == 1:
        return [xla_tree_reduce(call, region_index, kind, moved[0], inits[0], len(axes))]
    flat = [m.reshape(keep_shape + (count,)) for m in moved]
    if kind is not None:
        # XLA leaves variadic reductions whole: one sequential fold over the reduced elements.
        return [fold_last(call, region_index, kind, f, i) for f, i in zip(flat, inits)]
    # A variadic general body (argmax's (value, index) selection, ...) would take one region
    # call per element in XLA's sequential order; the ordered pairwise tree gives the same
    # answer for the selection reducers JAX emits, in log2(n) calls.
    reduced = tree_reduce_last(call, region_index, flat)
    return run_body(call, region_index, [*inits, *reduced], keep_shape, [i.dtype for i in inits])


def _order_free(kind: str, dtype: np.dtype, init: np.ndarray) -> bool:
    """Whether every schedule gives the same result (up to which NaN comes out).

    Integer arithmetic wraps and is associative and commutative, logic and max/min are too; the
    schedule also decides how often init takes part, which only cannot matter when
    kind(init, init) == init (0 for add and xor, 0 or 1 for multiply, anything for max/min).
    """
    if not (dtype.kind in "iub" or is_narrow_int(dtype) or kind in ("maximum", "minimum")):
        return False
    return combine(None, kind, init, init).tobytes() == np.asarray(init).tobytes()


def _identity(kind: Optional[str], dtype: np.dtype) -> Optional[np.ndarray]:
    """An exact identity of add (-0.0 for floats: x + -0.0 == x even for x = -0.0) or multiply,
    or None when there is none to pad with (a general body, or a type without that value)."""
    if kind == "add":
        if dtype.kind == "c":
            value = complex(-0.0, -0.0)
        else:
            value = -0.0 if dtype.kind == "f" or is_float_dtype(dtype) else 0
    elif kind == "multiply":
        value = 1
    else:
        return None
    identity = np.asarray(value).astype(dtype)
    return identity if identity.astype(np.complex128) == value else None


def xla_tree_reduce(call: OpCall, region_index: int, kind: Optional[str], x: np.ndarray, init: np.ndarray,
                    reduced: int) -> np.ndarray:
    """Reduce the last `reduced` axes of `x` in XLA CPU's order.

    XLA's TreeReductionRewriter turns a reduce over any dimension longer than the backend's
    tree_window (w) into a reduce_window with windows and strides of min(n, w) and "same" padding (split
    low/high; padding positions take no part), then reduces that, until every reduced dimension
    fits; the final reduce folds the remaining elements from init in row-major order. Each
    window is folded from init in row-major order too, rounding after every step.

    f32 and f64 sums and products of vectorized_reduction_size elements or more are not rewritten: XLA
    emits them as vectorised loops (partial sums in vector lanes, combined at the end, the init
    value taken once). That order depends on the shape and target, so here numpy's pairwise
    reduction stands in for it (within about 1e-7 relative) and the init value comes last.
    """
    batch = x.shape[:x.ndim - reduced]
    sizes = list(x.shape[x.ndim - reduced:])
    if kind is not None and x.dtype in (np.float32, np.float64) and x.size >= call.backend.vectorized_reduction_size:
        fn = ufunc_for(kind, x.dtype)
        partial = fn.reduce(x, axis=tuple(range(len(batch), x.ndim)), dtype=x.dtype)
        return np.asarray(fn(partial, init), dtype=x.dtype)
    # The schedule depends only on the shape: plan it once per op and shape, reuse it every run.
    key = ("tree", x.shape, x.dtype, reduced)
    plan = call.memo.get(key) if call is not None else None
    if plan is None:
        plan = _tree_plan(kind, x.dtype, batch, sizes, reduced, call.backend.tree_window)
        if call is not None:
            call.memo[key] = plan
    stages, remaining = plan
    for padded_shape, fill_identity, inner, tiled_shape, order, blocks_shape, valid in stages:
        if padded_shape is not None:
            padded = np.full(padded_shape, fill_identity if fill_identity is not None else init, dtype=x.dtype)
            padded[inner] = x
            x = padded
        blocks = np.transpose(x.reshape(tiled_shape), order).reshape(blocks_shape)
        x = fold_last(call, region_index, kind, blocks, init, valid)
    flat = x.reshape(batch + (remaining,))
    if kind is None and remaining > SEQUENTIAL_BODY_LIMIT:
        (reduced_value,) = tree_reduce_last(call, region_index, [flat])
        (result,) = run_body(call, region_index, [init, reduced_value], batch, [init.dtype])
        return result
    return fold_last(call, region_index, kind, flat, init)


def _tree_plan(kind: Optional[str], dtype: np.dtype, batch: tuple, sizes: list, reduced: int, window: int):
    """The stages of XLA's tree rewrite for one shape: how to pad, tile and fold each level."""
    stages = []
    while any(n > window for n in sizes):
        windows = [min(n, window) for n in sizes]
        outs = [-(-n // w) for n, w in zip(sizes, windows)]
        steps = int(np.prod(windows))
        if kind is None and steps > SEQUENTIAL_BODY_LIMIT:
            break
        pads = [((o * w - n) // 2, o * w - n - (o * w - n) // 2) for n, w, o in zip(sizes, windows, outs)]
        identity = _identity(kind, dtype)
        padded_shape = inner = None
        if any(lo or hi for lo, hi in pads):
            padded_shape = batch + tuple(o * w for o, w in zip(outs, windows))
            inner = (Ellipsis,) + tuple(slice(lo, lo + n) for (lo, _), n in zip(pads, sizes))
        tiled_shape = batch + tuple(v for o, w in zip(outs, windows) for v in (o, w))
        b = len(batch)
        order = list(range(b)) + [b + 2 * j for j in range(reduced)] + [b + 2 * j + 1 for j in range(reduced)]
        blocks_shape = batch + tuple(outs) + (steps,)
        valid = None
        if identity is None and padded_shape is not None:
            valid = _window_validity(sizes, windows, outs, pads)
        stages.append((padded_shape, identity, inner, tiled_shape, order, blocks_shape, valid))
        sizes = outs
    return stages, int(np.prod(sizes, dtype=np.int64))


def _window_validity(sizes, windows, outs, pads) -> np.ndarray:
    """mask[out..., position]: whether that window position holds an element (not padding)."""
    masks = []
    for n, w, o, (lo, _) in zip(sizes, windows, outs, pads):
        index = np.arange(o)[:, None] * w + np.arange(w)[None, :] - lo
        masks.append((index >= 0) & (index < n))  # (out_j, w_j)
    mask = np.ones((), dtype=bool)
    r = len(masks)
    for j, m in enumerate(masks):
        shape = [1] * (2 * r)
        shape[j] = m.shape[0]
        shape[r + j] = m.shape[1]
        mask = mask & m.reshape(shape)
    return mask.reshape(tuple(outs) + (-1,))


def fold_last(call: OpCall, region_index: int, kind: Optional[str], values: np.ndarray, init: np.ndarray,
              valid: Optional[np.ndarray] = None) -> np.ndarray:
    """Fold the last axis of `values` from `init` in order: body(...body(body(init, v0), v1)..., vn-1).

    A recognised op uses a ufunc accumulate, which is sequential and (on the narrow float types'
    own loops) rounds after every step as XLA does. `valid` masks out positions to skip.
    """
    batch = values.shape[:-1]
    # numpy's complex64 product rounds differently from XLA's (see complex64_multiply).
    if kind is not None and valid is None and not (kind == "multiply" and values.dtype == np.complex64):
        dtype = values.dtype
        # init followed by the values, filled in place (cheaper than broadcast_to + concatenate).
        seeded = np.empty(batch + (values.shape[-1] + 1,), np.result_type(dtype, np.asarray(init).dtype))
        seeded[..., 0] = init
        seeded[..., 1:] = values
        fn = ufunc_for(kind, dtype)
        if is_narrow_float(dtype):
            return np.array(fn.accumulate(seeded, axis=-1)[..., -1])
        wide = widen(seeded)
        return narrow(np.array(fn.accumulate(wide, axis=-1, dtype=wide.dtype)[..., -1]), dtype)
    acc = np.broadcast_to(init, batch)
    for i in range(values.shape[-1]):
        if kind is not None:
            new = combine(call, kind, acc, values[..., i])
        else:
            (new,) = run_body(call, region_index, [acc, values[..., i]], batch, [init.dtype])
        acc = new if valid is None else np.where(valid[..., i], new, acc)
    return np.array(acc)


@op("stablehlo.map")
def map_(call: OpCall, *operands: np.ndarray) -> Any:
    # `dimensions` must list every axis in order (spec C3), so the body applies elementwise to
    # whole arrays in one region call.
    shape = operands[0].shape if operands else tuple(call.result_shape)
    dimensions = tuple(call.attr("dimensions", tuple(range(len(shape)))))
    if dimensions != tuple(range(len(shape))):
        raise call.error(f"dimensions must be [0, ..., {len(shape) - 1}], got {list(dimensions)}")
    dtypes = [element_dtype(t) for t in call.result_types]
    results = run_body(call, 0, operands, tuple(shape), dtypes)
    return call.results([np.array(r) for r in results])


# -- element provenance of reduce and map ---------------------------------------------------------

REDUCED_ELEMENT = Phrase("reduced element")
INIT_VALUE = Phrase("init value")
REDUCE_RULE = Phrase("result{result} folds {count} element(s) of {inputs} along dimensions {dims}, "
                     "starting from {inits}, with the body ({body})")
REDUCED_SET = Phrase("the reduced set: {inputs} at {elements}")
REDUCED_SET_MORE = Phrase("the reduced set: {inputs} at {elements} … ({count} in all)")
ANY_ORDER = Phrase("the order in which the body combines them is left to the implementation: every element of the set counts")
REDUCE_VALUE = Phrase("result{result} = {value}")
REDUCED_SHOWN = 16


def reduced_inputs(op, result: int) -> list[int]:
    """The inputs result `result` of a (variadic) reduce is computed from.

    The body's returned value r reads some of its arguments (accumulators 0..N-1, elements N..2N-1);
    an accumulator carries what its own result was computed from, so follow those to a fixed point.
    """
    count = len(op.operands) // 2
    reads = [{a % count for a in used} for used in body_dependencies(op.regions[0])]
    found, todo = set(), [result]
    while todo:
        for j in reads[todo.pop()] - found:
            found.add(j)
            todo.append(j)
    return sorted(found)


def _reduce_layout(q: ProvenanceQuery):
    count = len(q.op.operands) // 2
    dims = sorted(int(d) for d in q.attr("dimensions", ()))
    shape = q.operand_shape(0)
    kept = [d for d in range(len(shape)) if d not in dims]
    return count, dims, shape, kept


@explains("stablehlo.reduce")
def reduce_provenance(q: ProvenanceQuery):
    """Every element along the reduced dimensions (of each input the result reads) and the init values.

    The body need not be commutative or associative: the spec leaves the order open, so every
    element of the set determines the result.
    """
    count, dims, shape, kept = _reduce_layout(q)
    names = operand_names(q.op)
    inputs = reduced_inputs(q.op, q.result)
    elements = []
    for at in itertools.product(*(range(shape[d]) for d in dims)):
        index = [0] * len(shape)
        for d, v in zip(kept, q.index):
            index[d] = v
        for d, v in zip(dims, at):
            index[d] = v
        elements.append(tuple(index))
    sources = [Source(count + j, (), INIT_VALUE) for j in inputs]
    sources += [Source(j, element, REDUCED_ELEMENT) for element in elements for j in inputs]
    body = ", ".join(o.name for o in q.op.regions[0].block.operations[:-1]) or "-"
    input_text = ", ".join(names[j] for j in inputs) or "-"
    steps = [(REDUCE_RULE, {"result": q.index, "count": len(elements), "inputs": input_text, "dims": dims,
                            "inits": ", ".join(names[count + j] for j in inputs) or "-", "body": body})]
    shown = "  ".join(field_text(e) for e in elements[:REDUCED_SHOWN])
    if len(elements) > REDUCED_SHOWN:
        steps.append((REDUCED_SET_MORE, {"inputs": input_text, "elements": shown, "count": len(elements)}))
    else:
        steps.append((REDUCED_SET, {"inputs": input_text, "elements": shown}))
    steps.append((ANY_ORDER, {}))
    if q.results is not None:
        steps.append((REDUCE_VALUE, {"result": q.index, "value": q.result_value(q.result)[q.index]}))
    return q.answer(sources, steps)


@reaches("stablehlo.reduce")
def reduce_reach(q: ProvenanceQuery, operand: int, index: tuple, device) -> list[Reached]:
    """An input element reaches the result element of its kept indices; an init value, all of them."""
    count, _, _, kept = _reduce_layout(q)
    reached = []
    for r in range(count):
        if operand % count not in reduced_inputs(q.op, r):
            continue
        if operand < count:
            reached.append(Reached(r, tuple(index[d] for d in kept), q.process))
        else:
            reached += [Reached(r, at, q.process) for at in itertools.product(*(range(n) for n in q.result_shape(r)))]
    return reached


@explains("stablehlo.map")
def map_provenance(q: ProvenanceQuery):
    """map applies its body element by element: the inputs its body's result reads, at the same index."""
    return elementwise_provenance(q, used=body_dependencies(q.op.regions[0])[q.result])
