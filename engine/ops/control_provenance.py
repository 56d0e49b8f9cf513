"""Element provenance of control flow and constants: if, case, hlo.conditional, optimization_barrier,
constant.

A branching op's result element comes from the branch that runs, so the predicate (or case
index) is always a source, with the role "branch selector". What the taken branch returns decides
the rest:

- a value the branch receives as its operand (hlo.conditional passes one operand to each branch):
  that operand's element at the same index is a source too;
- a constant: the element is that constant's, and nothing else is read;
- a value defined outside the op (if and case capture values implicitly): the element is that
  value's element at the same index — but it is not an operand of the op, and a Source names an
  operand, so the step names the value and the selector is the only source;
- a value the branch computes with its own ops: its elements are traced by stepping into the
  branch (the debugger shows the branch's frame); the selector is the only source reported.

The perturbation contract holds for the reported sources in every case: perturbing a selector
changes the element whenever the branches disagree there (tests choose branches that do), and
perturbing an operand only the other branches receive cannot change it.

Which branch runs depends on the selector's value, so these questions need the op to have run.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from ..ir.core import Block, Operation, Region, Value
from ..ir.phrases import Phrase
from .elementwise_provenance import SAME_INDEX
from .provenance import ProvenanceQuery, Source, explains

BRANCH_SELECTOR = Phrase("branch selector")
BRANCH_OPERAND = Phrase("operand the branch returns")

IF_TRUE_RUNS = Phrase("pred = true: the first branch (true_branch) runs")
IF_FALSE_RUNS = Phrase("pred = false: the second branch (false_branch) runs")
CASE_RUNS = Phrase("index = {value}: branch {branch} runs")
CASE_CLAMPED = Phrase("index = {value} is outside 0..{last}: the last branch, {branch}, runs")
RETURNS_OPERAND = Phrase("the branch returns its operand, operand {operand} of the op: result{index} = {name}{index}")
RETURNS_CONSTANT = Phrase("the branch returns a constant: result{index} = {value}")
RETURNS_CAPTURE = Phrase("the branch returns {name}, defined outside the op (not one of its operands): "
                         "result{index} = {name}{index}")
RETURNS_COMPUTED = Phrase("the branch computes result{index} with its own ops ({ops}): step into the branch to see "
                          "which elements they read")
BARRIER_PASSES = Phrase("optimization_barrier passes its operands on unchanged: result {result} is operand {result}, "
                        "result{index} = operand{index}")
CONSTANT_ELEMENT = Phrase("a constant reads no operand: result{index} = {value}")


# -- which branch runs --------------------------------------------------------------------------


def _taken_branch(q: ProvenanceQuery) -> tuple[int, tuple]:
    """(the branch that runs, the step that says why); the evaluators' rules (control.py, hlo.py)."""
    selector = q.operand_value(0)
    branches = len(q.op.regions)
    if selector.dtype == np.bool_:
        taken = bool(selector)
        return (0, (IF_TRUE_RUNS, {})) if taken else (1, (IF_FALSE_RUNS, {}))
    value = int(selector)
    if 0 <= value < branches:
        return value, (CASE_RUNS, {"value": value, "branch": value})
    return branches - 1, (CASE_CLAMPED, {"value": value, "last": branches - 1, "branch": branches - 1})


def _defined_in(value: Value, region: Region) -> bool:
    """Whether `value` is made inside `region` (by one of its ops or as one of its block arguments)."""
    owner = value.owner
    block: Optional[Block] = owner if isinstance(owner, Block) else (
        owner.parent if isinstance(owner, Operation) else None)
    while block is not None:
        inner = block.parent
        if inner is region:
            return True
        holder = inner.parent if inner is not None else None
        block = holder.parent if isinstance(holder, Operation) else None
    return False


def _what_the_branch_returns(q: ProvenanceQuery, branch: int, operand_of_branch: Optional[int]):
    """(sources beyond the selector, the step) for result element q.index of the taken branch."""
    region = q.op.regions[branch]
    returned = region.block.terminator.operands[q.result]
    if returned.is_block_argument and returned.owner is region.block and operand_of_branch is not None:
        name = f"%{q.op.operands[operand_of_branch].name.lstrip('%')}"
        return ([Source(operand_of_branch, q.index, BRANCH_OPERAND)],
                (RETURNS_OPERAND, {"operand": operand_of_branch, "index": q.index, "name": name}))
    producer = returned.defining_op
    constant = producer is not None and producer.name in ("stablehlo.constant", "chlo.constant")
    if constant and _defined_in(returned, region):
        value = np.asarray(producer.attr("value").array)
        return [], (RETURNS_CONSTANT, {"index": q.index, "value": value[q.index] if value.ndim else value})
    if not _defined_in(returned, region):
        return [], (RETURNS_CAPTURE, {"name": f"%{returned.name.lstrip('%')}", "index": q.index})
    ops = ", ".join(o.name for o in region.block.operations[:-1])
    return [], (RETURNS_COMPUTED, {"index": q.index, "ops": ops})


@explains("stablehlo.if", "stablehlo.case")
def branch_provenance(q: ProvenanceQuery):
    """The selector, and what the taken branch returns (its values are implicit captures)."""
    branch, why = _taken_branch(q)
    more, returned = _what_the_branch_returns(q, branch, None)
    return q.answer([Source(0, (), BRANCH_SELECTOR)] + more, [why, returned])


@explains("hlo.conditional")
def conditional_provenance(q: ProvenanceQuery):
    """HLO's conditional hands operand 1 + k to branch k as its parameter."""
    branch, why = _taken_branch(q)
    more, returned = _what_the_branch_returns(q, branch, 1 + branch)
    return q.answer([Source(0, (), BRANCH_SELECTOR)] + more, [why, returned])


# -- pass-through and constants -----------------------------------------------------------------


@explains("stablehlo.optimization_barrier")
def optimization_barrier_provenance(q: ProvenanceQuery):
    return q.answer([Source(q.result, q.index, SAME_INDEX)], [(BARRIER_PASSES, {"result": q.result, "index": q.index})])


@explains("stablehlo.constant", "chlo.constant")
def constant_provenance(q: ProvenanceQuery):
    value = np.asarray(q.attr("value").array)
    return q.answer([], [(CONSTANT_ELEMENT, {"index": q.index, "value": value[q.index] if value.ndim else value})])
