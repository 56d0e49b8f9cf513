"""Element provenance of chlo.ragged_dot (contraction.py), in its three modes (docs/generated/chlo.md).

Groups are consecutive runs along the lhs ragged dimension, their sizes read from group_sizes
(per batch/prefix row when group_sizes has more than one dimension), clipped as the evaluator
clips them (`_group_bounds`):

- ragged non-contracting dimension: the lhs row r multiplies by rhs group g for each group whose
  run holds r (none: the element is 0);
- ragged contracting dimension: result[g, ...] sums only over the contracting positions in
  group g's run;
- ragged batch dimension: every batch row is in a group, so it is a dot_general.

The lhs and rhs elements are paired per contracted index as in dot_general. The group sizes that
place the runs are sources too (the ones up to the element's group, or all of them when no group
holds it), with the role "group size"; like gather's indices, they are held fixed when the
answer is checked by perturbation.
"""
from __future__ import annotations

import itertools

import numpy as np

from ..ir.attributes import ragged_dot_dimension_numbers
from ..ir.phrases import Phrase
from .contraction import _free_dims, _group_bounds, _place, sum_of_products
from .provenance import ProvenanceQuery, Source, explains

GROUP_SIZE = Phrase("group size")

RAGGED_ROW = Phrase("lhs dimension {dim} is ragged: the groups hold rows {runs}; row {row} is in group {groups}, "
                    "so it multiplies by rhs group {groups} (rhs dimension {group_dim})")
RAGGED_NO_GROUP = Phrase("lhs dimension {dim} is ragged: the groups hold rows {runs}; row {row} is in no group, "
                         "so result{index} = 0")
RAGGED_CONTRACTING = Phrase("contracting dimension {dim} is ragged: result{index} is group {group}, which sums only "
                            "over positions {runs} of it")
RAGGED_BATCH = Phrase("batch dimension {dim} is ragged: every batch row is in some group, so result{index} is "
                      "an ordinary dot_general element")


def _runs(bounds: np.ndarray) -> str:
    return "  ".join(f"{g}: {s}..{e - 1}" if e > s else f"{g}: -" for g, (s, e) in enumerate(bounds))


@explains("chlo.ragged_dot")
def ragged_dot_provenance(q: ProvenanceQuery):
    n = ragged_dot_dimension_numbers(q.attr("ragged_dot_dimension_numbers"))
    lb, rb = n["lhs_batching_dimensions"], n["rhs_batching_dimensions"]
    lc, rc = n["lhs_contracting_dimensions"], n["rhs_contracting_dimensions"]
    if len(n["lhs_ragged_dimensions"]) != 1:
        raise q.error("ragged_dot needs exactly one lhs ragged dimension")
    (ragged,) = n["lhs_ragged_dimensions"]
    lhs_shape, rhs_shape = q.operand_shape(0), q.operand_shape(1)
    lhs_free = _free_dims(len(lhs_shape), lb, lc)
    group_dims = n["rhs_group_dimensions"] if ragged not in lb and ragged not in lc else ()
    rhs_free = [d for d in _free_dims(len(rhs_shape), rb, rc) if d not in group_dims]
    index = q.index
    if ragged in lc:  # the result leads with the group
        group, index = index[0], index[1:]
    b, i, j = index[:len(lb)], index[len(lb):len(lb) + len(lhs_free)], index[len(lb) + len(lhs_free):]
    contracted = list(itertools.product(*(range(lhs_shape[d]) for d in lc)))
    sizes = q.operand_value(2).astype(np.int64)
    steps: list = []
    size_sources: list[Source] = []
    pairs: list[tuple[tuple, int]] = []  # (contracted index, rhs group) of each term

    def size_elements(prefix_values: tuple, upto: int) -> None:
        row = prefix_values if sizes.ndim > 1 else ()
        for k in range(upto + 1):
            source = Source(2, tuple(row) + (k,), GROUP_SIZE)
            if source not in size_sources:
                size_sources.append(source)

    if ragged in lb:
        pairs = [(ks, -1) for ks in contracted]
        steps.append((RAGGED_BATCH, {"dim": ragged, "index": q.index}))
    elif ragged in lc:
        position = list(lc).index(ragged)
        pre = lc[:position]
        prefix_shape = tuple(lhs_shape[d] for d in (*lb, *pre))
        bounds = _group_bounds(q, sizes, prefix_shape, lhs_shape[ragged])
        shown = None
        for ks in contracted:
            prefix = tuple(b) + tuple(ks[:position])
            start, end = bounds[int(np.ravel_multi_index(prefix, prefix_shape)) if prefix_shape else 0, group]
            size_elements(prefix, group)
            shown = shown if shown is not None else (start, end)
            if start <= ks[position] < end:
                pairs.append((ks, -1))
        run = f"{shown[0]}..{shown[1] - 1}" if shown and shown[1] > shown[0] else "-"
        steps.append((RAGGED_CONTRACTING, {"dim": ragged, "index": q.index, "group": group, "runs": run}))
    else:
        (group_dim,) = group_dims
        before = lhs_free[:lhs_free.index(ragged)]
        row = i[lhs_free.index(ragged)]
        prefix_shape = tuple(lhs_shape[d] for d in (*lb, *before))
        prefix = tuple(b) + tuple(i[:len(before)])
        bounds = _group_bounds(q, sizes, prefix_shape, lhs_shape[ragged])
        row_bounds = bounds[int(np.ravel_multi_index(prefix, prefix_shape)) if prefix_shape else 0]
        groups = [g for g, (s, e) in enumerate(row_bounds) if s <= row < e]
        size_elements(prefix, max(groups) if groups else len(row_bounds) - 1)
        if not groups:
            steps.append((RAGGED_NO_GROUP, {"dim": ragged, "runs": _runs(row_bounds), "row": row, "index": q.index}))
        else:
            steps.append((RAGGED_ROW, {"dim": ragged, "runs": _runs(row_bounds), "row": row, "group_dim": group_dim,
                                       "groups": groups[0] if len(groups) == 1 else tuple(groups)}))
        pairs = [(ks, g) for g in groups for ks in contracted]

    names = ["k"] if len(lc) == 1 else [f"k{m}" for m in range(len(lc))]
    k = names[0] if len(names) == 1 else "(" + ", ".join(names) + ")"
    terms = [(ks, _place(len(lhs_shape), (lb, b), (lhs_free, i), (lc, ks)),
              _place(len(rhs_shape), (rb, b), (rc, ks), (rhs_free, j), (group_dims, (g,) if g >= 0 else ())))
             for ks, g in pairs]
    sources, term_steps = sum_of_products(q, k, terms)
    steps += term_steps
    return q.answer(sources + size_sources, steps)
