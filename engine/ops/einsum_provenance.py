"""Element provenance of einsum and unary_einsum (contraction.py), read from the einsum_config labels.

A result index gives a value to every output label; the labels the output lacks are summed over.
Each assignment of the summed labels is one term: the operand elements at the labels' values (a
label repeated within one operand — `ii` — reads its diagonal). The result element is the sum of
the terms (binary: lhs · rhs), so every element some term reads is a source.
"""
from __future__ import annotations

import itertools

from ..ir.phrases import Phrase
from .contraction import (
    DOT_MORE_TERMS,
    DOT_TERM,
    DOT_TERM_NUMBERS,
    DOT_TERMS_SHOWN,
    DOT_TOTAL,
    LHS_FACTOR,
    RHS_FACTOR,
    _ellipsis_rank,
    _expand_ellipsis,
)
from .provenance import ProvenanceQuery, Source, explains

SUMMED_ELEMENT = Phrase("summed element")

EINSUM_LABELS = Phrase("einsum_config {config}: result{index} sets {fixed}; the sum runs over {summed}")
EINSUM_TERM = Phrase("{k} = {value}: operand{element}")
EINSUM_TERM_NUMBER = Phrase("{k} = {value}: operand{element} = {number}")


def _labels(q: ProvenanceQuery) -> tuple[list[list[str]], list[str], str]:
    """(each operand's labels, the output's labels, the config), `...` expanded as contraction.py does."""
    config = str(q.attr("einsum_config", "")).replace(" ", "")
    if "->" not in config:
        raise q.error(f"einsum_config '{config}' has no '->'")
    inputs, output = config.split("->", 1)
    terms = inputs.split(",")
    ranks = tuple(len(q.operand_shape(i)) for i in range(len(q.op.operands)))
    if len(terms) != len(ranks):
        raise q.error(f"einsum_config '{config}' names {len(terms)} operand(s), the op has {len(ranks)}")
    # _expand_ellipsis reports a bad term through `.error(message)`, which the query has too.
    labels = [_expand_ellipsis(q, term, rank) for term, rank in zip(terms, ranks)]
    return labels, _expand_ellipsis(q, output, _ellipsis_rank(terms, ranks, output)), config


@explains("stablehlo.einsum", "stablehlo.unary_einsum")
def einsum_provenance(q: ProvenanceQuery):
    labels, out, config = _labels(q)
    sizes = {}
    for operand, names in enumerate(labels):
        sizes.update(zip(names, q.operand_shape(operand)))
    fixed = dict(zip(out, q.index))
    summed = list(dict.fromkeys(label for names in labels for label in names if label not in fixed))
    k = summed[0] if len(summed) == 1 else "(" + ", ".join(summed) + ")"
    steps = [(EINSUM_LABELS, {"config": config, "index": q.index,
                              "fixed": ", ".join(f"{label}={v}" for label, v in fixed.items()) or "-",
                              "summed": ", ".join(f"{label}=0..{sizes[label] - 1}" for label in summed) or "-"})]
    binary = len(labels) == 2
    roles = (LHS_FACTOR, RHS_FACTOR) if binary else (SUMMED_ELEMENT,)
    seen: dict[tuple, Source] = {}
    terms = list(itertools.product(*(range(sizes[label]) for label in summed)))
    for t, values in enumerate(terms):
        where = {**fixed, **dict(zip(summed, values))}
        elements = [tuple(where[label] for label in names) for names in labels]
        for operand, element in enumerate(elements):
            seen.setdefault((operand, element), Source(operand, element, roles[operand]))
        if t >= DOT_TERMS_SHOWN:
            continue
        fields = {"k": k, "value": values[0] if len(values) == 1 else values}
        if binary:
            fields.update(lhs=elements[0], rhs=elements[1])
            if q.operands is None:
                steps.append((DOT_TERM, fields))
            else:
                steps.append((DOT_TERM_NUMBERS, {**fields, "a": q.operand_value(0)[elements[0]],
                                                 "b": q.operand_value(1)[elements[1]]}))
        elif q.operands is None:
            steps.append((EINSUM_TERM, {**fields, "element": elements[0]}))
        else:
            steps.append((EINSUM_TERM_NUMBER, {**fields, "element": elements[0],
                                               "number": q.operand_value(0)[elements[0]]}))
    if len(terms) > DOT_TERMS_SHOWN:
        steps.append((DOT_MORE_TERMS, {"count": len(terms) - DOT_TERMS_SHOWN}))
    if q.results is not None:
        steps.append((DOT_TOTAL, {"result": q.index, "value": q.result_value(0)[q.index]}))
    return q.answer(list(seen.values()), steps)
