"""Contractions: dot_general, dot, einsum, unary_einsum and chlo.ragged_dot.

Every multiply-accumulate goes through `call.backend.matmul` on the canonical batched form
`[B, M, K] x [B, K, N]`, so a device that models other matmul numerics (a TPU's bf16 passes)
changes all of them at once. The canonical form is built with transposes and reshapes that numpy
turns into views whenever the memory layout allows, so the common layouts cost no copy.
"""
from __future__ import annotations

import itertools
import re
from math import prod
from typing import Optional, Sequence

import numpy as np

from ..ir.attributes import ragged_dot_dimension_numbers
from ..ir.dtypes import compute_dtype, narrow
from ..ir.phrases import Phrase
from .provenance import ProvenanceQuery, Reached, Source, explains, reaches
from .registry import OpCall, op

Dims = Sequence[int]


# -- the canonical contraction ----------------------------------------------------------------


def matmul_numerics(call: OpCall) -> dict:
    """The keyword arguments of `backend.matmul` an op's attributes decide: its precision_config,
    its dot algorithm (the whole attribute, so a device can pick its passes) and that
    algorithm's accumulation dtype."""

    def compute() -> dict:
        precision = tuple(str(p) for p in (call.attr("precision_config") or ()))
        algorithm = call.attr("algorithm")
        accumulation = getattr(algorithm, "accumulation_type", None)
        return {
            "precision": precision,
            "accumulation_dtype": accumulation.numpy_dtype if accumulation is not None else None,
            "algorithm": algorithm,
        }

    return call.cached("numerics", compute)


def contract(
    call: OpCall,
    lhs: np.ndarray,
    rhs: np.ndarray,
    lhs_batch: Dims,
    rhs_batch: Dims,
    lhs_contract: Dims,
    rhs_contract: Dims,
    result_dtype: Optional[np.dtype] = None,
) -> np.ndarray:
    """The dot_general of `lhs` and `rhs`: batch dims, then lhs free dims, then rhs free dims."""
    lhs_free = _free_dims(lhs.ndim, lhs_batch, lhs_contract)
    rhs_free = _free_dims(rhs.ndim, rhs_batch, rhs_contract)
    for l, r in zip((*lhs_batch, *lhs_contract), (*rhs_batch, *rhs_contract)):
        if lhs.shape[l] != rhs.shape[r]:
            raise call.error(
                f"lhs dimension {l} (size {lhs.shape[l]}) does not match rhs dimension {r} (size {rhs.shape[r]})"
            )
    left = _batched_matrix(lhs, lhs_batch, lhs_free, lhs_contract)
    right = _batched_matrix(rhs, rhs_batch, rhs_contract, rhs_free)
    dtype = call.result_dtype if result_dtype is None else result_dtype
    if call.cached("transposed_product", lambda: _users_want_transposed(call, len(lhs_batch), len(lhs_free), len(rhs_free))):
        # (A·B)ᵀ = Bᵀ·Aᵀ: the same products and sums, written so that its users' transpose is a
        # contiguous view (see _users_want_transposed).
        product = call.backend.matmul(right.swapaxes(-1, -2), left.swapaxes(-1, -2), dtype,
                                      **matmul_numerics(call)).swapaxes(-1, -2)
    else:
        product = call.backend.matmul(left, right, dtype, **matmul_numerics(call))
    shape = (
        *(lhs.shape[d] for d in lhs_batch),
        *(lhs.shape[d] for d in lhs_free),
        *(rhs.shape[d] for d in rhs_free),
    )
    return product.reshape(shape)


def _users_want_transposed(call: OpCall, batch: int, lhs_free: int, rhs_free: int) -> bool:
    """Whether the product should be laid out transposed: rhs free dims before lhs free dims.

    The result's own layout is free to choose (numpy arrays carry their strides), and XLA's layout
    assignment makes the same choice. JAX's backward pass writes a weight's gradient as a
    dot_general followed by a transpose (`dW = transpose(dot(dy, x))`), and the optimizer then reads
    it elementwise beside the weight; computed in the usual layout, that transpose is a strided view
    that every later elementwise op walks across the cache lines (a 768x3072 SGD update took 23 ms
    instead of 3). So when every user of the result is a transpose that swaps the two groups of free
    dims, the product is computed as Bᵀ·Aᵀ, whose transpose is contiguous. Only where swapping the
    operands changes nothing else: both operands get the same precision and dot algorithm types
    (a device's passes may treat lhs and rhs differently otherwise).
    """
    if not lhs_free or not rhs_free:
        return False
    precision = [str(p) for p in (call.attr("precision_config") or ())]
    if len(set(precision)) > 1:
        return False
    algorithm = call.attr("algorithm")
    if algorithm is not None and (algorithm.lhs_precision_type != algorithm.rhs_precision_type
                                  or algorithm.lhs_component_count != algorithm.rhs_component_count):
        return False
    rank = batch + lhs_free + rhs_free
    swapped = (*range(batch), *range(batch + lhs_free, rank), *range(batch, batch + lhs_free))
    uses = call.op.results[0].uses if len(call.op.results) == 1 else ()
    return bool(uses) and all(user.name == "stablehlo.transpose"
                              and tuple(int(p) for p in user.attributes.get("permutation", ())) == swapped
                              for user, _ in uses)


def _free_dims(rank: int, batch: Dims, contracting: Dims) -> list[int]:
    taken = set(batch) | set(contracting)
    return [d for d in range(rank) if d not in taken]


def _batched_matrix(x: np.ndarray, batch: Dims, rows: Dims, cols: Dims) -> np.ndarray:
    """`x` as `[prod(batch), prod(rows), prod(cols)]`; a view when the layout permits one."""
    order = (*batch, *rows, *cols)
    shape = (prod(x.shape[d] for d in batch), prod(x.shape[d] for d in rows), prod(x.shape[d] for d in cols))
    if order != tuple(range(x.ndim)):
        x = x.transpose(order)
    return x.reshape(shape)


# -- dot_general and dot ------------------------------------------------------------------------


@op("stablehlo.dot_general")
def dot_general(call: OpCall, lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    dims = call.attr("dot_dimension_numbers")
    return contract(
        call,
        lhs,
        rhs,
        dims.lhs_batching_dimensions,
        dims.rhs_batching_dimensions,
        dims.lhs_contracting_dimensions,
        dims.rhs_contracting_dimensions,
    )


@op("stablehlo.dot")
def dot(call: OpCall, lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    # vector.vector, matrix.vector, vector.matrix, matrix.matrix: lhs's last dim against rhs's first.
    if lhs.ndim not in (1, 2) or rhs.ndim not in (1, 2):
        raise call.error(f"operands must be vectors or matrices, got ranks {lhs.ndim} and {rhs.ndim}")
    return contract(call, lhs, rhs, (), (), (lhs.ndim - 1,), (0,))


# -- element provenance of dot_general and dot ---------------------------------------------------

LHS_FACTOR = Phrase("lhs factor")
RHS_FACTOR = Phrase("rhs factor")
DOT_LAYOUT = Phrase("batching dimensions lhs {lhs_batch} × rhs {rhs_batch}, contracting dimensions lhs {lhs_contract} × "
                    "rhs {rhs_contract}: result{result} is batch {b}, lhs row {i}, rhs column {j}")
DOT_SUM = Phrase("result{result} = Σ over {k} of lhs{lhs} · rhs{rhs}, {k} running over {ranges}")
DOT_TERM = Phrase("{k} = {value}: lhs{lhs} · rhs{rhs}")
DOT_TERM_NUMBERS = Phrase("{k} = {value}: lhs{lhs} · rhs{rhs} = {a} · {b}")
DOT_MORE_TERMS = Phrase("… and {count} more terms")
DOT_TOTAL = Phrase("result{result} = {value}")
DOT_TERMS_SHOWN = 16  # a long contraction lists its first terms; the sources name them all


def _dot_dims(q) -> tuple[Dims, Dims, Dims, Dims]:
    """(lhs batch, rhs batch, lhs contracting, rhs contracting) of dot_general, or dot's fixed ones."""
    if q.op.name == "stablehlo.dot":
        return (), (), (len(q.operand_shape(0)) - 1,), (0,)
    dims = q.attr("dot_dimension_numbers")
    return (tuple(dims.lhs_batching_dimensions), tuple(dims.rhs_batching_dimensions),
            tuple(dims.lhs_contracting_dimensions), tuple(dims.rhs_contracting_dimensions))


def _dot_parts(q, index: Sequence[int]):
    """Split a result index into (batch, lhs free, rhs free) parts, with the operands' free dims."""
    lhs_batch, rhs_batch, lhs_contract, rhs_contract = _dot_dims(q)
    lhs_free = _free_dims(len(q.operand_shape(0)), lhs_batch, lhs_contract)
    rhs_free = _free_dims(len(q.operand_shape(1)), rhs_batch, rhs_contract)
    nb, nl = len(lhs_batch), len(lhs_free)
    return (tuple(index[:nb]), tuple(index[nb:nb + nl]), tuple(index[nb + nl:]), lhs_free, rhs_free)


def _place(rank: int, *groups: tuple[Sequence[int], Sequence]) -> tuple:
    """An operand index assembled from (dims, values) groups."""
    at: list = [0] * rank
    for dims, values in groups:
        for d, v in zip(dims, values):
            at[d] = v
    return tuple(at)


@explains("stablehlo.dot_general", "stablehlo.dot")
def dot_provenance(q: ProvenanceQuery):
    """result[b, i, j] = Σ_k lhs[b, i, k] · rhs[b, k, j]: one lhs and one rhs element per contracted index."""
    lhs_batch, rhs_batch, lhs_contract, rhs_contract = _dot_dims(q)
    b, i, j, lhs_free, rhs_free = _dot_parts(q, q.index)
    lhs_rank, rhs_rank = len(q.operand_shape(0)), len(q.operand_shape(1))
    names = ["k"] if len(lhs_contract) == 1 else [f"k{n}" for n in range(len(lhs_contract))]
    k = names[0] if len(names) == 1 else "(" + ", ".join(names) + ")"
    sizes = [q.operand_shape(0)[d] for d in lhs_contract]
    ranges = ", ".join(f"0..{n - 1}" for n in sizes) or "()"
    steps = [(DOT_LAYOUT, {"lhs_batch": lhs_batch, "rhs_batch": rhs_batch, "lhs_contract": lhs_contract,
                           "rhs_contract": rhs_contract, "result": q.index, "b": b, "i": i, "j": j}),
             (DOT_SUM, {"result": q.index, "k": k, "ranges": ranges,
                        "lhs": _place(lhs_rank, (lhs_batch, b), (lhs_free, i), (lhs_contract, names)),
                        "rhs": _place(rhs_rank, (rhs_batch, b), (rhs_contract, names), (rhs_free, j))})]
    terms = [(ks, _place(lhs_rank, (lhs_batch, b), (lhs_free, i), (lhs_contract, ks)),
              _place(rhs_rank, (rhs_batch, b), (rhs_contract, ks), (rhs_free, j)))
             for ks in itertools.product(*(range(n) for n in sizes))]
    sources, term_steps = sum_of_products(q, k, terms)
    return q.answer(sources, steps + term_steps)


def sum_of_products(q: ProvenanceQuery, k: str, terms: Sequence[tuple]) -> tuple[list[Source], list]:
    """The sources and steps of result = Σ lhs · rhs over `terms`, each (contracted index, lhs index,
    rhs index): every pair is a source; the first DOT_TERMS_SHOWN get a line (with the factors'
    values once the op has run), then the count of the rest and the total."""
    sources, steps = [], []
    for t, (ks, lhs, rhs) in enumerate(terms):
        sources += [Source(0, lhs, LHS_FACTOR), Source(1, rhs, RHS_FACTOR)]
        if t < DOT_TERMS_SHOWN:
            fields = {"k": k, "value": ks[0] if len(ks) == 1 else ks, "lhs": lhs, "rhs": rhs}
            if q.operands is None:
                steps.append((DOT_TERM, fields))
            else:
                steps.append((DOT_TERM_NUMBERS, {**fields, "a": q.operand_value(0)[lhs], "b": q.operand_value(1)[rhs]}))
    if len(terms) > DOT_TERMS_SHOWN:
        steps.append((DOT_MORE_TERMS, {"count": len(terms) - DOT_TERMS_SHOWN}))
    if q.results is not None:
        steps.append((DOT_TOTAL, {"result": q.index, "value": q.result_value(0)[q.index]}))
    return sources, steps


@reaches("stablehlo.dot_general", "stablehlo.dot")
def dot_reach(q: ProvenanceQuery, operand: int, index: tuple, device) -> list[Reached]:
    """An lhs element reaches every rhs column of its batch and row (an rhs element, every lhs row)."""
    lhs_batch, rhs_batch, _, _ = _dot_dims(q)
    _, _, _, lhs_free, rhs_free = _dot_parts(q, q.result_shape(0))
    batch = tuple(index[d] for d in (lhs_batch if operand == 0 else rhs_batch))
    fixed = tuple(index[d] for d in (lhs_free if operand == 0 else rhs_free))
    other = [range(q.operand_shape(1 - operand)[d]) for d in (rhs_free if operand == 0 else lhs_free)]
    reached = []
    for free in itertools.product(*other):
        at = batch + (fixed + free if operand == 0 else free + fixed)
        reached.append(Reached(0, at, q.process))
    return reached


# -- einsum -------------------------------------------------------------------------------------


@op("stablehlo.einsum")
def einsum(call: OpCall, lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    inputs, output = _einsum_config(call, 2)
    lhs, lhs_labels = _distinct_labels(lhs, _expand_ellipsis(call, inputs[0], lhs.ndim))
    rhs, rhs_labels = _distinct_labels(rhs, _expand_ellipsis(call, inputs[1], rhs.ndim))
    out_labels = _expand_ellipsis(call, output, _ellipsis_rank(inputs, (lhs.ndim, rhs.ndim), output))
    if len(set(out_labels)) != len(out_labels):
        raise call.error(f"einsum output labels repeat in '{call.attr('einsum_config')}'")
    missing = set(out_labels) - set(lhs_labels) - set(rhs_labels)
    if missing:
        raise call.error(f"einsum output labels {sorted(missing)} appear in no operand")
    # A label that only one operand has and the output lacks is summed out before the product.
    lhs, lhs_labels = _sum_out(lhs, lhs_labels, set(rhs_labels) | set(out_labels))
    rhs, rhs_labels = _sum_out(rhs, rhs_labels, set(lhs_labels) | set(out_labels))
    shared = [l for l in lhs_labels if l in rhs_labels]
    batch = [l for l in shared if l in out_labels]
    contracting = [l for l in shared if l not in out_labels]
    product = contract(
        call,
        lhs,
        rhs,
        [lhs_labels.index(l) for l in batch],
        [rhs_labels.index(l) for l in batch],
        [lhs_labels.index(l) for l in contracting],
        [rhs_labels.index(l) for l in contracting],
    )
    produced = batch + [l for l in lhs_labels if l not in shared] + [l for l in rhs_labels if l not in shared]
    return product.transpose([produced.index(l) for l in out_labels])


@op("stablehlo.unary_einsum")
def unary_einsum(call: OpCall, operand: np.ndarray) -> np.ndarray:
    # Only diagonals, sums and transposes: numpy's einsum on one operand, in a wide accumulator.
    inputs, output = _einsum_config(call, 1)
    spec = f"{inputs[0]}->{output}"
    dtype = call.result_dtype
    wide = _sum_dtype(operand.dtype)
    try:
        result = np.einsum(spec, operand.astype(wide, copy=False))
    except ValueError as e:
        raise call.error(f"invalid einsum_config '{call.attr('einsum_config')}': {e}") from None
    return narrow(np.asarray(result), dtype)


def _einsum_config(call: OpCall, operands: int) -> tuple[list[str], str]:
    def parse() -> tuple[list[str], str]:
        config = str(call.attr("einsum_config", "")).replace(" ", "")
        if "->" not in config:
            raise call.error(f"einsum_config '{config}' has no '->'")
        inputs, output = config.split("->", 1)
        parts = inputs.split(",")
        if len(parts) != operands:
            raise call.error(f"einsum_config '{config}' names {len(parts)} operand(s), the op has {operands}")
        for part in (*parts, output):
            if not re.fullmatch(r"[A-Za-z]*(\.\.\.)?[A-Za-z]*", part):
                raise call.error(f"einsum_config '{config}': bad term '{part}'")
        return parts, output

    return call.cached("einsum_config", parse)


def _ellipsis_rank(inputs: list[str], ranks: tuple[int, ...], output: str) -> int:
    """The rank the output term has once its `...` is expanded."""
    if "..." not in output:
        return len(output)
    broadcast = max((r - len(t.replace("...", "")) for t, r in zip(inputs, ranks) if "..." in t), default=0)
    return len(output) - 3 + broadcast


def _expand_ellipsis(call: OpCall, term: str, rank: int) -> list[str]:
    """Labels of `term`, with `...` as digits "0", "1", ... aligned from the right."""
    if "..." not in term:
        if len(term) != rank:
            raise call.error(f"einsum term '{term}' has {len(term)} labels for rank {rank}")
        return list(term)
    head, tail = term.split("...")
    count = rank - len(head) - len(tail)
    if count < 0:
        raise call.error(f"einsum term '{term}' has too many labels for rank {rank}")
    return [*head, *(str(9 - i) for i in reversed(range(count))), *tail]


def _distinct_labels(x: np.ndarray, labels: list[str]) -> tuple[np.ndarray, list[str]]:
    """Take diagonals until every label names one dimension (`ii->i`)."""
    labels = list(labels)
    while len(set(labels)) != len(labels):
        for i, label in enumerate(labels):
            j = labels.index(label, i + 1) if labels.count(label) > 1 else -1
            if j >= 0:
                x = np.diagonal(x, axis1=i, axis2=j)  # moves the diagonal to the end
                labels = [l for k, l in enumerate(labels) if k not in (i, j)] + [label]
                break
    return x, labels


def _sum_out(x: np.ndarray, labels: list[str], keep: set[str]) -> tuple[np.ndarray, list[str]]:
    axes = tuple(i for i, l in enumerate(labels) if l not in keep)
    if not axes:
        return x, labels
    summed = np.sum(x.astype(_sum_dtype(x.dtype), copy=False), axis=axes)
    return narrow(summed, x.dtype) if x.dtype.kind in "iub" else summed, [l for l in labels if l in keep]


def _sum_dtype(dtype: np.dtype) -> np.dtype:
    if dtype.kind == "b":
        return np.dtype(np.int64)
    if dtype.kind in "iu" or dtype.itemsize < 4 or dtype.kind == "V":
        wide = compute_dtype(dtype)
        return np.dtype(np.uint64) if wide.kind == "u" else (np.dtype(np.int64) if wide.kind == "i" else wide)
    return dtype


# -- chlo.ragged_dot ----------------------------------------------------------------------------

def _ragged_dimension_numbers(call: OpCall) -> dict[str, tuple[int, ...]]:
    def decode() -> dict[str, tuple[int, ...]]:
        numbers = ragged_dot_dimension_numbers(call.attr("ragged_dot_dimension_numbers"))
        if len(numbers["lhs_ragged_dimensions"]) != 1:
            raise call.error("ragged_dot needs exactly one lhs ragged dimension")
        return numbers

    return call.cached("ragged_dims", decode)


@op("chlo.ragged_dot")
def ragged_dot(call: OpCall, lhs: np.ndarray, rhs: np.ndarray, group_sizes: np.ndarray) -> np.ndarray:
    """The three modes of docs/generated/chlo.md, by where the lhs ragged dimension is.

    Groups are consecutive runs along the ragged dimension (group i covers
    [sum(sizes[:i]), sum(sizes[:i+1]))); positions no group covers contribute nothing.
    """
    n = _ragged_dimension_numbers(call)
    lb, rb = n["lhs_batching_dimensions"], n["rhs_batching_dimensions"]
    lc, rc = n["lhs_contracting_dimensions"], n["rhs_contracting_dimensions"]
    (ragged,) = n["lhs_ragged_dimensions"]
    if ragged in lb:
        # Mode 3, ragged batch: every batch row belongs to some group, so it is a dot_general.
        return contract(call, lhs, rhs, lb, rb, lc, rc)
    if ragged in lc:
        return _ragged_contracting(call, lhs, rhs, group_sizes, lb, rb, lc, rc, ragged)
    return _ragged_noncontracting(call, lhs, rhs, group_sizes, n, ragged)


def _group_bounds(call: OpCall, group_sizes: np.ndarray, prefix_shape: tuple[int, ...], extent: int) -> np.ndarray:
    """`[prod(prefix), G, 2]` start/end of each group, clipped to `[0, extent]`."""
    sizes = group_sizes.astype(np.int64)
    if sizes.ndim == 0:
        raise call.error("group_sizes must have rank >= 1")
    if sizes.ndim > 1 and sizes.shape[:-1] != prefix_shape:
        raise call.error(f"group_sizes has shape {sizes.shape}; expected {(*prefix_shape, sizes.shape[-1])}")
    sizes = np.broadcast_to(sizes, (*prefix_shape, sizes.shape[-1])).reshape(-1, sizes.shape[-1])
    ends = np.cumsum(sizes, axis=-1)
    starts = ends - sizes
    # A negative size makes an empty group and moves the next one back over earlier rows, which
    # then belong to two groups and get both products (as the masked reference lowering does).
    starts = np.clip(starts, 0, extent)
    ends = np.clip(np.maximum(ends, starts), 0, extent)
    return np.stack([starts, ends], axis=-1)


def _ragged_noncontracting(call: OpCall, lhs, rhs, group_sizes, n, ragged: int) -> np.ndarray:
    """Mode 1: `[b,m,k] x [g,b,k,n] -> [b,m,n]`; the rows of group i use rhs[i]."""
    lb, rb = n["lhs_batching_dimensions"], n["rhs_batching_dimensions"]
    lc, rc = n["lhs_contracting_dimensions"], n["rhs_contracting_dimensions"]
    if len(n["rhs_group_dimensions"]) != 1:
        raise call.error("ragged_dot with a ragged non-contracting dimension needs one rhs group dimension")
    (group,) = n["rhs_group_dimensions"]
    lhs_free = _free_dims(lhs.ndim, lb, lc)
    before = lhs_free[: lhs_free.index(ragged)]
    after = lhs_free[lhs_free.index(ragged) + 1:]
    rhs_free = [d for d in _free_dims(rhs.ndim, rb, rc) if d != group]
    # lhs as [B, Pre, R, Post, K] and rhs as [G, B, K, N].
    B, P, R = prod(lhs.shape[d] for d in lb), prod(lhs.shape[d] for d in before), lhs.shape[ragged]
    Q, K = prod(lhs.shape[d] for d in after), prod(lhs.shape[d] for d in lc)
    G, N = rhs.shape[group], prod(rhs.shape[d] for d in rhs_free)
    left = lhs.transpose((*lb, *before, ragged, *after, *lc)).reshape(B, P, R, Q, K)
    right = rhs.transpose((group, *rb, *rc, *rhs_free)).reshape(G, B, K, N)
    prefix = tuple(lhs.shape[d] for d in (*lb, *before))
    bounds = _group_bounds(call, group_sizes, prefix, R)
    if bounds.shape[1] != G:
        raise call.error(f"group_sizes has {bounds.shape[1]} groups; rhs group dimension has {G}")
    numerics = matmul_numerics(call)
    dtype = call.result_dtype
    out = np.zeros((B, P, R, Q, N), dtype)
    shape = (
        *(lhs.shape[d] for d in lb),
        *(lhs.shape[d] for d in lhs_free),
        *(rhs.shape[d] for d in rhs_free),
    )
    if out.size == 0 or G == 0:
        return out.reshape(shape)
    bounds = bounds.reshape(B, P, G, 2)
    if (bounds == bounds[:1, :1]).all():
        # The usual case (group_sizes of shape [G]): each group is one row slice for every prefix.
        for g, (start, end) in enumerate(bounds[0, 0]):
            if end > start:
                rows = left[:, :, start:end].reshape(B, -1, K)
                block = call.backend.matmul(rows, right[g], dtype, **numerics)
                out[:, :, start:end] += block.reshape(B, P, end - start, Q, N)
    else:
        for b in range(B):
            for p in range(P):
                for g, (start, end) in enumerate(bounds[b, p]):
                    if end > start:
                        rows = left[b:b + 1, p, start:end].reshape(1, -1, K)
                        block = call.backend.matmul(rows, right[g, b:b + 1], dtype, **numerics)
                        out[b, p, start:end] += block.reshape(end - start, Q, N)
    # [B, Pre, R, Post, N] is already batch, lhs free (in order), rhs free.
    return out.reshape(shape)


def _ragged_contracting(call: OpCall, lhs, rhs, group_sizes, lb, rb, lc, rc, ragged: int) -> np.ndarray:
    """Mode 2: `[b,m,k] x [b,k,n] -> [g,b,m,n]`; group i contracts only its own run of k."""
    position = list(lc).index(ragged)
    rhs_ragged = rc[position]
    pre_l, post_l = lc[:position], lc[position + 1:]
    pre_r, post_r = rc[:position], rc[position + 1:]
    lhs_free = _free_dims(lhs.ndim, lb, lc)
    rhs_free = _free_dims(rhs.ndim, rb, rc)
    B = prod(lhs.shape[d] for d in lb)
    P = prod(lhs.shape[d] for d in pre_l)
    R = lhs.shape[ragged]
    Q = prod(lhs.shape[d] for d in post_l)
    M = prod(lhs.shape[d] for d in lhs_free)
    N = prod(rhs.shape[d] for d in rhs_free)
    # lhs as [B, M, Pre, R, Post] and rhs as [B, Pre, R, Post, N].
    left = lhs.transpose((*lb, *lhs_free, *pre_l, ragged, *post_l)).reshape(B, M, P, R, Q)
    right = rhs.transpose((*rb, *pre_r, rhs_ragged, *post_r, *rhs_free)).reshape(B, P, R, Q, N)
    prefix = tuple(lhs.shape[d] for d in (*lb, *pre_l))
    bounds = _group_bounds(call, group_sizes, prefix, R)
    G = bounds.shape[1]
    numerics = matmul_numerics(call)
    dtype = call.result_dtype
    out = np.zeros((G, B, M, N), dtype)
    shape = (
        G,
        *(lhs.shape[d] for d in lb),
        *(lhs.shape[d] for d in lhs_free),
        *(rhs.shape[d] for d in rhs_free),
    )
    if out.size == 0 or P == 0:
        return out.reshape(shape)
    bounds = bounds.reshape(B, P, G, 2)
    uniform = bool((bounds == bounds[:1, :1]).all())
    positions = np.arange(R)
    for g in range(G):
        if uniform:
            start, end = bounds[0, 0, g]
            if end <= start:
                continue
            rows = left[:, :, :, start:end].reshape(B, M, -1)
            cols = right[:, :, start:end].reshape(B, -1, N)
        else:
            # The run differs per batch/prefix row: zero the lhs outside it, contract all of k.
            inside = (positions >= bounds[:, :, g, :1]) & (positions < bounds[:, :, g, 1:])  # [B, P, R]
            rows = np.where(inside[:, None, :, :, None], left, np.zeros((), left.dtype)).reshape(B, M, -1)
            cols = right.reshape(B, -1, N)
        out[g] = call.backend.matmul(rows, cols, dtype, **numerics)
    return out.reshape(shape)
