"""The reduce evaluator, and its fast path for a single-input reduce with a recognised body
(JAX's sums, means, maxima): the same numpy calls `reduce_with_body` makes on that path, in the
same order on the same arrays, so the same bits, without re-deciding the schedule on every run.

Which path applies depends on the input's shape and dtype, the init value and the backend only;
it is decided once per op and kept in the call's memo (`reduce_with_body` decides it anew each
time, which costs more than the arithmetic on the small arrays of a transformer layer). Shapes
the fast path does not cover (the tree schedule, empty or no reduced axes, narrow types, general
bodies) return None and take the general path.
"""
from __future__ import annotations

from math import prod
from typing import Any, Optional

import numpy as np

from ..ir.dtypes import compute_dtype
from .reduction import _order_free, _reduced_zero_fix, _signed_zero_fix, reduce_with_body, ufunc_for, xla_tree_reduce
from .registry import OpCall, op

F32 = np.dtype(np.float32)
F64 = np.dtype(np.float64)


@op("stablehlo.reduce")
def reduce(call: OpCall, *operands: np.ndarray) -> Any:
    count = len(operands) // 2
    inputs, inits = operands[:count], operands[count:]
    shape = inputs[0].shape
    for x in inputs[1:]:
        if x.shape != shape:
            raise call.error(f"inputs have different shapes: {shape} vs {x.shape}")
    if count == 1:
        result = reduce_single_fast(call, inputs[0], inits[0])
        if result is not None:
            return result
    axes = tuple(call.attr("dimensions", ()))
    for a in axes:
        if not 0 <= a < len(shape):
            raise call.error(f"dimension {a} is out of range for an input of rank {len(shape)}")
    results = reduce_with_body(call, 0, inputs, inits, axes)
    return call.results([np.array(r) for r in results])


def reduce_single_fast(call: OpCall, x: Any, init: Any) -> Optional[np.ndarray]:
    """reduce(x, init) on the fast path, or None when the general path must run."""
    interpreter = call.interpreter
    if interpreter is not None and interpreter.expand_bodies:
        return None
    if type(x) is not np.ndarray or type(init) is not np.ndarray:
        return None
    key = (x.shape, x.dtype, init.dtype, init.tobytes())
    memo = call.memo
    held = memo.get("fast_reduce")
    if held is None or held[0] != key:
        held = memo["fast_reduce"] = (key, _plan(call, x, init))
    plan = held[1]
    if plan is None:
        return None
    path, kind, fn, order, axes, signed_zeros = plan
    moved = x if order is None else np.transpose(x, order)
    if path == "order_free":  # ufunc_reduce
        partial = fn.reduce(x, axis=axes, dtype=x.dtype)
        if signed_zeros:
            partial = _reduced_zero_fix(kind, x, partial, axes)
        result = fn(init, partial)
        if signed_zeros and init == 0:
            # Only a zero init can meet a zero partial result; any other leaves the result as is.
            result = _signed_zero_fix(kind, np.broadcast_to(init, np.shape(partial)), partial, result)
    elif path == "vectorised":  # XLA's vector loop, numpy's pairwise order standing in for it
        result = fn(fn.reduce(moved, axis=axes, dtype=x.dtype), init)
    else:  # XLA's tree schedule, planned once per shape by xla_tree_reduce itself
        return np.array(xla_tree_reduce(call, 0, kind, moved, init, len(axes)))
    # A ufunc's fresh result is the caller's own already; a 0-d one comes back as a numpy scalar.
    return result if type(result) is np.ndarray else np.array(result)


def _plan(call: OpCall, x: np.ndarray, init: np.ndarray) -> Optional[tuple]:
    """(path, kind, ufunc, transpose order, reduced axes, signed-zero fix) for this input, or None.

    The choice mirrors reduce_with_body and xla_tree_reduce exactly: order-free kinds take
    `ufunc_reduce`'s calls, f32/f64 reductions of vectorized_reduction_size elements or more the
    vectorised reduction, the others XLA's tree schedule on the input with reduced axes last.
    """
    if init.shape != () or init.dtype != x.dtype:
        return None
    rank = x.ndim
    axes = tuple(sorted({int(a) + rank if int(a) < 0 else int(a) for a in call.attr("dimensions", ())}))
    if not axes or any(not 0 <= a < rank for a in axes) or prod(x.shape[a] for a in axes) == 0:
        return None
    kind = call.body_kind(0)
    if kind is None:
        return None
    try:
        fn = ufunc_for(kind, x.dtype)
    except ValueError:
        return None  # the general path reports the body that does not fit the type
    if _order_free(kind, x.dtype, init):
        if compute_dtype(x.dtype) != x.dtype:
            return None
        return "order_free", kind, fn, None, axes, kind in ("maximum", "minimum") and x.dtype.kind == "f"
    keep = [d for d in range(rank) if d not in axes]
    order = tuple(keep) + axes
    order = None if order == tuple(range(rank)) else order
    if x.dtype in (F32, F64) and x.size >= call.backend.vectorized_reduction_size:
        return "vectorised", kind, fn, order, tuple(range(len(keep), rank)), False
    return "tree", kind, fn, order, axes, False
