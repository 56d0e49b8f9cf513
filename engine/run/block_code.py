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

from sys import getrefcount
from typing import Any, Callable, Optional

from ..ir.errors import HlodbgError
from .plan import SOLE_HOLDER, FastBlock, failure, frozen
from .screen import surely_finite

# Blocks longer than this stay with the loop: compiling source costs more than it saves there.
MOST_STEPS = 2000


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
    names: dict[str, Any] = {"HlodbgError": HlodbgError, "failure": failure, "frozen": frozen,
                             "reusing_call": reusing_call, "check_arguments": check_arguments, "STEPS": fast.steps,
                             "FINITE": surely_finite, "SCREEN": screen}
    lines = ["def run(slots, args, iteration=None):",
             f"    if len(args) != {len(fast.arguments)}:",
             "        check_arguments(args)"]
    for i, slot in enumerate(fast.arguments):
        lines.append(f"    slots[{slot}] = args[{i}]")
    lines += ["    k = 0", "    try:"]
    for k, step in enumerate(fast.steps):
        names[f"S{k}"], names[f"E{k}"], names[f"C{k}"] = step, step.evaluator, step.call
        operands = ", ".join(f"slots[{i}]" for i in step.operand_slots)
        body = [f"k = {k}"]
        # A result goes straight to its slot (no local keeps it): the slot is then its only holder,
        # as the reuse check expects.
        if step.foldable:
            call = f"frozen(E{k}(C{k}, {operands}))"
        elif step.reuse:
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
        lines += ["        " + line for line in body]
    lines += ["        pass",
              "    except HlodbgError:",
              "        raise",
              "    except Exception as e:  # every failure becomes a located message",
              "        raise failure(STEPS[k], e) from e",
              f"    returned = [{', '.join(f'slots[{i}]' for i in fast.returned)}]"]
    lines += [f"    slots[{slot}] = None" for slot in fast.free]
    lines.append("    return returned")
    code = compile("\n".join(lines), f"<plain run of a block of {len(fast.steps)} steps>", "exec")
    exec(code, names)  # noqa: S102 - source written above from slot numbers only
    return names["run"]


__all__ = ["MOST_STEPS", "block_function", "reusing_call"]
