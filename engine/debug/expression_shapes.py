"""What an expression's syntax tree says before it is ever evaluated (expressions.py asks when it
compiles one): whether every evaluation reads every SSA value it names, and whether it is a plain
comparison of one value with a number. A breakpoint condition is tested at every op of a long run,
so both decide how little work a test can be (Timeline.reach, Expression._quick_truth)."""
from __future__ import annotations

import ast
import operator
from typing import Optional

# Constructs that may leave part of an expression unevaluated.
_SHORT_CIRCUITS = (ast.BoolOp, ast.IfExp)

_COMPARISONS = {ast.Gt: operator.gt, ast.GtE: operator.ge, ast.Lt: operator.lt, ast.LtE: operator.le,
                ast.Eq: operator.eq, ast.NotEq: operator.ne}


def reads_every_value(tree: ast.Expression) -> bool:
    """True when nothing short-circuits (no `and`/`or`, `x if c else y` or chained comparison
    such as `1 < %a < 3`): every evaluation then fetches every value it names."""
    return not any(isinstance(node, _SHORT_CIRCUITS) or (isinstance(node, ast.Compare) and len(node.ops) > 1)
                   for node in ast.walk(tree))


def quick_comparison(tree: ast.Expression, value_call: str, functions: frozenset) -> Optional[tuple]:
    """For `X op number` or `number op X`, X an SSA reference (the compiled `value_call('name')`)
    or a plain name other than one of `functions`: (kind "value" or "name", the name, the
    comparison, the number, whether X is on the left); else None."""
    body = tree.body
    if not isinstance(body, ast.Compare) or len(body.ops) != 1 or type(body.ops[0]) not in _COMPARISONS:
        return None
    compare = _COMPARISONS[type(body.ops[0])]
    left, right = body.left, body.comparators[0]
    for subject, other, name_first in ((left, right, True), (right, left, False)):
        number = _number(other)
        if number is None:
            continue
        if isinstance(subject, ast.Name) and subject.id not in functions and subject.id != value_call:
            return "name", subject.id, compare, number, name_first
        if (isinstance(subject, ast.Call) and isinstance(subject.func, ast.Name) and subject.func.id == value_call
                and len(subject.args) == 1 and isinstance(subject.args[0], ast.Constant)):
            return "value", subject.args[0].value, compare, number, name_first
    return None


def _number(node: ast.AST) -> Optional[float]:
    """The number a literal (with an optional sign) stands for; None for anything else."""
    sign = 1
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        sign = -1 if isinstance(node.op, ast.USub) else 1
        node = node.operand
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return sign * node.value
    return None
