"""Element provenance of element-wise ops: result[i] is made from the elements at index i.

Every op whose definition is of the family "elementwise" is answered here, whatever its dialect
(elementwise.py, elementwise_math.py, CHLO's functions, conversion.py's convert and
reduce_precision, map...), and the other element-wise ops (hlo.copy, the quantize ops) register the
same function beside their evaluators. A rank-0 operand (select's pred, clamp's min and max) is shared by every
result element and is reported with the index (). select is data-dependent: its predicate picks
the one branch element that makes the result. The broadcasting rule here is numpy's (trailing
dimensions line up, size-1 dimensions read index 0), which for same-shape operands and scalars is
the identity; chlo.broadcast_* (chlo.py) add broadcast_dimensions on top of it.

A body (map's computation, reduce's) may not use every argument: `body_dependencies` says which
block arguments each returned value is computed from, so that an unused operand is not reported.
"""
from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np

from ..ir.core import Operation, Region
from ..ir.opdefs import lookup
from ..ir.phrases import Phrase, field_text
from .provenance import ProvenanceQuery, Source, explains, explains_family

SAME_INDEX = Phrase("element at the same index")
BROADCAST_ELEMENT = Phrase("broadcast element")
SHARED_SCALAR = Phrase("scalar operand shared by every element")
PREDICATE = Phrase("predicate")
CHOSEN_BRANCH = Phrase("chosen value")
IF_TRUE = Phrase("value taken where the predicate is true")
IF_FALSE = Phrase("value taken where the predicate is false")

ELEMENTWISE_RULE = Phrase("{op} works element by element: result{index} uses the element at index {index} of each operand")
SCALAR_SHARED = Phrase("{name} is a scalar (rank 0): every result element uses {name}()")
RESULT_COMBINES = Phrase("result{index} = {op}({inputs})")
RESULT_COMBINES_VALUE = Phrase("result{index} = {op}({inputs}) = {value}")
PREDICATE_PICKS = Phrase("{pred} = {value}, so result{index} takes {chosen}")
PREDICATE_DECIDES = Phrase("{pred} decides between {on_true} and {on_false}; run the program to see which one")
BY_DIMENSIONS = Phrase("{name} of shape {shape} maps its dimensions to result dimensions {dims} "
                       "(broadcast_dimensions), so it reads {element}")
TRAILING = Phrase("{name} of shape {shape} lines up with the last result dimensions {dims} "
                  "(numpy-style rank broadcasting), so it reads {element}")
STRETCHED = Phrase("dimension {dim} of {name} has size 1 and is stretched along result dimension {result_dim} "
                   "of size {size}: it always reads index 0")


# -- naming and reading operand elements -------------------------------------------------------


def operand_names(op: Operation) -> list[str]:
    """A name for each flat operand: its name in the op's definition (variadic groups numbered)."""
    definition = lookup(op.name)
    groups = list(definition.operands) if definition is not None else []
    fixed = sum(1 for _, arity in groups if arity == "")
    spare = len(op.operands) - fixed
    variadic = sum(1 for _, arity in groups if arity == "*")
    per_group = spare // variadic if definition is not None and definition.same_variadic_size and variadic else None
    names: list[str] = []
    for name, arity in groups:
        if arity == "":
            names.append(name)
        elif arity == "?":
            if spare > 0:
                names.append(name)
                spare -= 1
        else:
            count = spare if per_group is None else per_group
            names.extend(f"{name}[{k}]" for k in range(count))
            spare -= count
    if len(names) != len(op.operands):  # an op used with a form its definition does not describe
        names = [f"operand{k}" for k in range(len(op.operands))]
    return names


def value_at(q: ProvenanceQuery, operand: int, index: tuple) -> Optional[Any]:
    """The value of one operand element when the op has run, else None."""
    if q.operands is None:
        return None
    return np.asarray(q.operands[operand])[index]


def element_text(name: str, index: tuple, value: Optional[Any]) -> str:
    """`lhs(1, 2)`, with `=3` when the value is known."""
    return f"{name}{field_text(tuple(index))}" + ("" if value is None else f"={field_text(value)}")


def short_name(op: Operation) -> str:
    return op.name.split(".", 1)[-1]


def broadcast_source(q: ProvenanceQuery, k: int, name: str, dims: Sequence[int],
                     by_attribute: bool = False) -> tuple[Source, list]:
    """Operand `k`'s element for the result index when its dimensions stand for result `dims`
    (size-1 dimensions read index 0), and the lines that say so when its shape is not the result's."""
    shape, result_shape = q.operand_shape(k), q.result_shape(q.result)
    index = tuple(0 if n == 1 else q.index[d] for n, d in zip(shape, dims))
    if shape == result_shape:
        return Source(k, index, SAME_INDEX), []
    if not shape:
        return Source(k, index, SHARED_SCALAR), [(SCALAR_SHARED, {"name": name})]
    lines = [(BY_DIMENSIONS if by_attribute else TRAILING,
              {"name": name, "shape": shape, "dims": tuple(dims), "element": element_text(name, index, None)})]
    lines += [(STRETCHED, {"dim": axis, "name": name, "result_dim": d, "size": result_shape[d]})
              for axis, (n, d) in enumerate(zip(shape, dims)) if n == 1 and result_shape[d] != 1]
    return Source(k, index, BROADCAST_ELEMENT), lines


def trailing_dims(rank: int, result_rank: int) -> tuple[int, ...]:
    """numpy's rule: an operand's dimensions stand for the last result dimensions."""
    return tuple(range(result_rank - rank, result_rank))


def combine_step(q: ProvenanceQuery, inputs: Sequence[tuple[str, tuple, Optional[Any]]], op_text: str) -> tuple:
    """The last step: result[i] = op(name(i)=v, ...) [= value]."""
    text = ", ".join(element_text(name, index, value) for name, index, value in inputs)
    result = None if q.results is None else np.asarray(q.results[q.result])[q.index]
    if result is None:
        return RESULT_COMBINES, {"index": q.index, "op": op_text, "inputs": text}
    return RESULT_COMBINES_VALUE, {"index": q.index, "op": op_text, "inputs": text, "value": result}


# -- the family --------------------------------------------------------------------------------


@explains_family("elementwise")
def elementwise_provenance(q: ProvenanceQuery, used: Optional[set[int]] = None):
    """result[i] = f(operand_0[i], operand_1[i], ...), rank-0 operands read at ()."""
    names = operand_names(q.op)
    sources, steps, inputs = [], [(ELEMENTWISE_RULE, {"op": q.op.name, "index": q.index})], []
    for k in range(len(q.op.operands)):
        if used is not None and k not in used:
            continue
        source, lines = broadcast_source(q, k, names[k], trailing_dims(len(q.operand_shape(k)), len(q.index)))
        steps += lines
        sources.append(source)
        inputs.append((names[k], source.index, value_at(q, k, source.index)))
    steps.append(combine_step(q, inputs, short_name(q.op)))
    return q.answer(sources, steps)


def select_provenance(q: ProvenanceQuery):
    """select(pred, on_true, on_false): the predicate and the one branch element it picks.

    Operands are read numpy-style: stablehlo.select's pred may be a scalar, and chlo.broadcast_select
    broadcasts all three by trailing dimensions.
    """
    names = operand_names(q.op)
    steps = [(ELEMENTWISE_RULE, {"op": q.op.name, "index": q.index})]
    at = []
    for k in range(3):
        source, lines = broadcast_source(q, k, names[k], trailing_dims(len(q.operand_shape(k)), len(q.index)))
        steps += lines
        at.append(source.index)
    pred = value_at(q, 0, at[0])
    pred_text = element_text(names[0], at[0], None)
    if pred is None:
        steps.append((PREDICATE_DECIDES, {"pred": pred_text, "on_true": element_text(names[1], at[1], None),
                                          "on_false": element_text(names[2], at[2], None)}))
        return q.answer([Source(0, at[0], PREDICATE), Source(1, at[1], IF_TRUE), Source(2, at[2], IF_FALSE)], steps)
    chosen = 1 if bool(pred) else 2
    steps.append((PREDICATE_PICKS, {"pred": pred_text, "value": bool(pred), "index": q.index,
                                    "chosen": element_text(names[chosen], at[chosen], value_at(q, chosen, at[chosen]))}))
    return q.answer([Source(0, at[0], PREDICATE), Source(chosen, at[chosen], CHOSEN_BRANCH)], steps)


explains("stablehlo.select")(select_provenance)


# -- bodies ------------------------------------------------------------------------------------


def body_dependencies(region: Region) -> list[set[int]]:
    """For each value the body returns, the positions of the block arguments it is computed from.

    Ops nested in the body (and their regions) count every value they read, so the answer may
    include an argument that a nested branch happens not to take, never omit one it needs.
    """
    block = region.block
    argument_position = {id(a): k for k, a in enumerate(block.arguments)}
    known: dict[int, set[int]] = {}

    def reads(value) -> set[int]:
        if id(value) in argument_position:
            return {argument_position[id(value)]}
        return known.get(id(value), set())

    for operation in block.operations[:-1]:
        used: set[int] = set()
        for inner in operation.walk():
            for operand in inner.operands:
                used |= reads(operand)
        for result in operation.results:
            known[id(result)] = used
    return [reads(v) for v in block.terminator.operands]

