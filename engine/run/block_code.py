"""A hot block of a plain run as one Python function: the plain loop with the loop taken out.

The plain loop (Interpreter._run_fast) reads, for every step, its slots, flags and evaluator from
the Step and loops over them; for a block that runs again and again (a loop's condition and
body, a function called many times) that bookkeeping is most of the cost when the arrays are
small. `block_function(fast)` writes the same work out once as straight-line source — for each
step: its evaluator called on its operand slots, its results stored, the slots that die there
cleared — and compiles it. It runs the very same Step objects (evaluators, OpCalls, kept
constants), so its results are the plain loop's bit for bit; a step that may reuse an operand
goes through `Step`'s reuse check (`reusing_call`), a failing step is named as the loop names it.
"""
from __future__ import annotations

from math import prod
from sys import getrefcount
from typing import Any, Callable, Optional

import numpy as np

from ..ir.errors import HlodbgError
from ..ops.registry import EVALUATORS
from .plan import SOLE_HOLDER, FastBlock, failure, frozen
from .screen import surely_finite

# Blocks longer than this stay with the loop: compiling source costs more than it saves there.
MOST_STEPS = 2000
# Steps with results up to this many elements call their evaluator's direct form (there the
# evaluator's checks cost more than the arithmetic), and skip the check for a dying operand to
# write into (a result this small is cheaper allocated anew).
DIRECT_MOST_ELEMENTS = 4096
REUSE_MOST_ELEMENTS = 4096


def reusing_call(step: Any, operands: list) -> Any:
    """`step`'s evaluator on `operands`, offered the dying operands no one else holds."""
    call = step.call
    # Held by its slot and `operands` only: nothing else can see it written.
    call.reuse = tuple(i for i in step.reuse if getrefcount(operands[i]) <= SOLE_HOLDER)
    try:
        return step.evaluator(call, *operands)
    finally:
        call.reuse = ()


def block_function(fast: FastBlock, check_arguments: Callable[[list], None],
                   screen: Optional[Callable[[Any, Any], None]] = None) -> Callable[[list, list], list]:
    """`run(slots, args, iteration=None) -> returned`, doing what the plain loop does on `fast`
    (with `screen`, a screened run's: each computed step's screened values that surely_finite
    does not clear go to `screen(step, value)`, as Interpreter._run_fast does)."""
    names = _names(list(fast.steps), screen)
    names["check_arguments"] = check_arguments
    lines = ["def run(slots, args, iteration=None):",
             f"    if len(args) != {len(fast.arguments)}:",
             "        check_arguments(args)"]
    lines += [f"    slots[{slot}] = args[{i}]" for i, slot in enumerate(fast.arguments)]
    lines += ["    k = 0", "    try:"]
    lines += ["        " + line for line in _step_lines(fast.steps, 0, names, screen)]
    lines += ["        pass", *_failure_lines("    "),
              f"    returned = [{', '.join(f'slots[{i}]' for i in fast.returned)}]"]
    lines += [f"    slots[{slot}] = None" for slot in fast.free]
    lines.append("    return returned")
    return _compiled(lines, names, f"<plain run of a block of {len(fast.steps)} steps>")


def loop_function(condition: FastBlock, body: FastBlock,
                  screen: Optional[Callable[[Any, Any], None]] = None) -> Callable[[list, list], list]:
    """`run(slots, values) -> values`: a while loop whose condition and body are `condition` and
    `body` (blocks of the same frame), run as block_function runs each, in one function: an
    iteration then costs its steps and no call of a block's own. The values go into the
    condition's arguments, then, while it returns true, into the body's, whose results are the
    next values."""
    names = _names([*condition.steps, *body.steps], screen)
    lines = ["def run(slots, values):", "    k = 0", "    try:", "        while True:"]
    # The carried values go round as numpy scalars where they are 0-d (_step_lines), and the
    # values from outside the loop its scalar steps read are taken as scalars once, before it;
    # the loop's results leave it as arrays.
    # A screened run looks at every value as an array: its loops keep arrays.
    scalars: Optional[set[int]] = {*condition.arguments, *body.arguments} if screen is None else None
    hoisted = _hoisted([*condition.steps, *body.steps], scalars) if scalars is not None else {}
    for slot, local in hoisted.items():
        lines.insert(-1, f"        {local} = slots[{slot}]")
        lines.insert(-1, f"        if {local}.__class__ is NDARRAY and not {local}.ndim:")
        lines.insert(-1, f"            {local} = {local}[()]")
    if scalars is not None:
        lines.insert(-1, "        values = [v[()] if v.__class__ is NDARRAY and not v.ndim else v for v in values]")
    inner = [f"slots[{slot}] = values[{i}]" for i, slot in enumerate(condition.arguments)]
    inner += _step_lines(condition.steps, 0, names, screen, scalars, hoisted)
    inner += [f"go = slots[{condition.returned[0]}]", *(f"slots[{slot}] = None" for slot in condition.free),
              "if not go:", "    return [ARRAY(v) for v in values]" if scalars is not None else "    return values"]
    inner += [f"slots[{slot}] = values[{i}]" for i, slot in enumerate(body.arguments)]
    inner += _step_lines(body.steps, len(condition.steps), names, screen, scalars, hoisted)
    inner += [f"values = [{', '.join(f'slots[{i}]' for i in body.returned)}]",
              *(f"slots[{slot}] = None" for slot in body.free)]
    lines += ["            " + line for line in inner]
    lines += _failure_lines("    ")
    return _compiled(lines, names, f"<plain run of a loop of {len(condition.steps)} + {len(body.steps)} steps>")


def _array(value: Any) -> Any:
    """A numpy scalar as a 0-d array; anything else (arrays, tuples, a device's values) as it is."""
    return np.asarray(value) if isinstance(value, np.generic) else value


def _hoisted(steps: list, arguments: set[int]) -> dict[int, str]:
    """{slot: local name} of the values from outside a loop (neither its blocks' arguments nor
    made by its steps) that its scalar steps read."""
    made = {slot for step in steps for slot in step.result_slots}
    outside = {slot for step in steps if _scalar_form(step) is not None for slot in step.operand_slots}
    return {slot: f"outer{slot}" for slot in sorted(outside - made - arguments)}


def _names(steps: list, screen: Optional[Callable]) -> dict[str, Any]:
    return {"HlodbgError": HlodbgError, "failure": failure, "frozen": frozen, "reusing_call": reusing_call,
            "STEPS": steps, "FINITE": surely_finite, "SCREEN": screen, "NDARRAY": np.ndarray, "ASARRAY": np.asarray,
            "ARRAY": _array}


def _failure_lines(indent: str) -> list[str]:
    return [f"{indent}except HlodbgError:",
            f"{indent}    raise",
            f"{indent}except Exception as e:  # every failure becomes a located message",
            f"{indent}    raise failure(STEPS[k], e) from e"]


def _compiled(lines: list[str], names: dict[str, Any], filename: str) -> Callable:
    code = compile("\n".join(lines), filename, "exec")
    exec(code, names)  # noqa: S102 - source written from slot numbers only
    return names["run"]


def _step_lines(steps: list, first: int, names: dict[str, Any], screen: Optional[Callable],
                scalars: Optional[set[int]] = None, hoisted: Optional[dict[int, str]] = None) -> list[str]:
    """The source of `steps` (numbered from `first`, their objects put into `names`): each step's
    evaluator on its operand slots, its results stored, its dead slots cleared.

    With `scalars` (the slots that may hold a numpy scalar, updated as steps are written), a 0-d
    step with a scalar form (registry.py) keeps its result a numpy scalar, and any other step
    reading a slot that may hold one gets it as a 0-d array (ARRAY, _array): numpy's scalars do
    arithmetic several times cheaper than ufuncs on 0-d arrays, with the same bits. `hoisted`
    names the locals holding, as scalars, the values from outside a loop its scalar steps read."""
    lines = []
    for k, step in enumerate(steps, first):
        names[f"S{k}"], names[f"E{k}"], names[f"C{k}"] = step, step.evaluator, step.call
        scalar = _scalar_form(step) if scalars is not None else None
        if scalar is not None:
            names[f"G{k}"] = scalar
            left, right = ((hoisted or {}).get(i, f"slots[{i}]") for i in step.operand_slots)
            result = step.result_slots[0]
            wrapped = ", ".join(f"ARRAY(slots[{i}])" if i in scalars else f"slots[{i}]" for i in step.operand_slots)
            lines += [f"k = {k}",
                      f"if {left}.dtype is {right}.dtype:",
                      f"    slots[{result}] = G{k}({left}, {right})",
                      "else:",
                      f"    slots[{result}] = E{k}(C{k}, {wrapped})",
                      *(f"slots[{slot}] = None" for slot in step.free)]
            scalars.add(result)
            continue
        operands = ", ".join(f"ARRAY(slots[{i}])" if scalars and i in scalars else f"slots[{i}]" for i in step.operand_slots)
        if scalars:
            scalars.difference_update(step.result_slots)
        body = [f"k = {k}"]
        # A result goes straight to its slot (no local keeps it): the slot is then its only holder,
        # as the reuse check expects.
        if step.foldable:
            call = f"frozen(E{k}(C{k}, {operands}))"
        elif step.reuse and not _small(step, REUSE_MOST_ELEMENTS):  # cheaper made anew than checked
            call = f"reusing_call(S{k}, [{operands}])"
        else:
            call = f"E{k}(C{k}, {operands})"
        # A screened value is looked at where it is computed (a folded one once, when it is made).
        screened = step.screened if screen is not None else ()
        if step.single:
            looks = [f"if not FINITE(slots[{step.result_slots[0]}]):", f"    SCREEN(S{k}, slots[{step.result_slots[0]}])"]
        else:
            looks = [line for j in screened for line in (f"if not FINITE(out[{j}]):", f"    SCREEN(S{k}, out[{j}])")]
        looks = looks if screened else []
        if step.foldable:
            target = f"slots[{step.result_slots[0]}]" if step.single else "out"
            body += [f"{target} = S{k}.folded", f"if {target} is None:", f"    {target} = S{k}.folded = {call}"]
            body += ["    " + line for line in looks]
        elif step.single and (direct := _direct_form(step)) is not None:
            # The evaluator's own arithmetic, called straight (registry.py: direct_form), when the
            # operands have one dtype as the evaluator's fast path asks; else the evaluator.
            names[f"F{k}"] = direct
            left, right = ((hoisted or {}).get(i, f"slots[{i}]") for i in step.operand_slots)
            result = f"slots[{step.result_slots[0]}]"
            body += [f"if {left}.dtype is {right}.dtype:",
                     f"    {result} = F{k}({left}, {right})",
                     f"    if {result}.__class__ is not NDARRAY:",
                     f"        {result} = ASARRAY({result})",
                     "else:",
                     f"    {result} = {call}"]
            body += looks
        elif step.single:
            body.append(f"slots[{step.result_slots[0]}] = {call}")
            body += looks
        else:
            body.append(f"out = {call}")
            body += looks
        if not step.single:
            body += [f"slots[{slot}] = out[{j}]" for j, slot in enumerate(step.result_slots)]
            body.append("out = None")
        body += [f"slots[{slot}] = None" for slot in step.free]
        lines += body
    return lines


def _small(step: Any, most: int) -> bool:
    """Whether every result of `step` has a static shape of at most `most` elements."""
    for result in step.op.results:
        shape = getattr(result.type, "shape", None)
        if shape is None or any(not isinstance(d, int) or d < 0 for d in shape) or prod(shape) > most:
            return False
    return True


def _scalar_form(step: Any) -> Optional[Callable]:
    """The scalar form of a two-operand step with a 0-d result whose evaluator is the registered
    one, or None."""
    if (not step.single or step.foldable or len(step.operand_slots) != 2 or step.evaluator is not EVALUATORS.get(step.op.name)
            or getattr(step.op.results[0].type, "shape", None) != ()):
        return None
    scalar = getattr(step.evaluator, "scalar_form", None)
    return scalar(step.call) if scalar is not None else None


def _direct_form(step: Any) -> Optional[Callable]:
    """The direct form of a two-operand step with a small static result whose evaluator is the
    registered one (a backend's wrapping changes what it computes), or None."""
    if len(step.operand_slots) != 2 or step.evaluator is not EVALUATORS.get(step.op.name) or not _small(step, DIRECT_MOST_ELEMENTS):
        return None
    direct = getattr(step.evaluator, "direct_form", None)
    return direct(step.call) if direct is not None else None


__all__ = ["DIRECT_MOST_ELEMENTS", "MOST_STEPS", "REUSE_MOST_ELEMENTS", "block_function", "loop_function", "reusing_call"]
