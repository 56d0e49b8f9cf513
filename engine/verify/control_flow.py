"""Verifier checks: Control flow (while, if, case), optimization_barrier and composite.

A type the spec's Inputs table fixes is checked under that input's label, e.g. `(I1)` for the
`pred` of if.
"""
from __future__ import annotations

import re
from typing import Sequence

from ..ir.core import Operation
from ..ir.types import IntegerType, TensorType, Type
from .core import _block, _Context, _is_scalar_of, _register, _returned
from .shape_inference import fail, fmt_types, types_compatible


def _compare_types(got: Sequence[Type], want: Sequence[Type], what: str, constraint: str) -> None:
    if len(got) != len(want) or not all(types_compatible(g, w) for g, w in zip(got, want)):
        fail(f"{what} {fmt_types(got)}, expected {fmt_types(want)}", constraint)


@_register("stablehlo.while")
def _while(op: Operation, ctx: _Context) -> None:
    operands = op.operand_types
    cond_args = [a.type for a in _block(op, 0).arguments]
    _compare_types(cond_args, operands, "cond takes", "C1")
    cond = _returned(op, 0)
    if len(cond) != 1 or not _is_scalar_of(cond[0], IntegerType(1)):
        fail(f"cond must return tensor<i1>, returns {fmt_types(cond)}", "C1")
    body_args = [a.type for a in _block(op, 1).arguments]
    _compare_types(body_args, operands, "body takes", "C2")
    _compare_types(_returned(op, 1), operands, "body returns", "C2")
    _compare_types(op.result_types, operands, "results have types", "C3")


def _check_branches(op: Operation, first_c: str, same_c: str, result_c: str) -> None:
    for i in range(len(op.regions)):
        args = _block(op, i).arguments
        if args:
            fail(f"branch #{i} must take no arguments, takes {len(args)}", first_c)
    first = _returned(op, 0)
    for i in range(1, len(op.regions)):
        _compare_types(_returned(op, i), first, f"branch #{i} returns", same_c)
    _compare_types(op.result_types, first, "results have types", result_c)


@_register("stablehlo.if")
def _if(op: Operation, ctx: _Context) -> None:
    pred = op.operand_types[0]
    if not _is_scalar_of(pred, IntegerType(1)):
        fail(f"pred must be tensor<i1>, got {pred}", "I1")
    _check_branches(op, "C1", "C2", "C3")


@_register("stablehlo.case")
def _case(op: Operation, ctx: _Context) -> None:
    index = op.operand_types[0]
    if not isinstance(index, TensorType) or index.shape != () or not (
            isinstance(index.element, IntegerType) and index.element.width == 32 and not index.element.is_unsigned):
        fail(f"index must be a 0-dimensional 32-bit integer tensor, got {index}", "I1")
    if not op.regions:
        fail("needs at least one branch", "C1")
    _check_branches(op, "C2", "C3", "C4")


@_register("stablehlo.optimization_barrier")
def _optimization_barrier(op: Operation, ctx: _Context) -> None:
    # (C1) type(operand...) = type(result...): the count and each type.
    if len(op.operands) != len(op.results):
        fail(f"has {len(op.operands)} operands but {len(op.results)} results", "C1")
    _compare_types(op.result_types, op.operand_types, "results have types", "C1")


# is_namespaced_op_name: a dialect namespace, a dot, then the op's own name (which may hold more
# dots), as MLIR spells operation names.
_NAMESPACED_OP_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_$]*(\.[A-Za-z0-9_$]+)+")


@_register("stablehlo.composite")
def _composite(op: Operation, ctx: _Context) -> None:
    name = str(op.attributes["name"])
    if not _NAMESPACED_OP_NAME.fullmatch(name):
        fail(f"name \"{name}\" must be a namespaced op name such as \"my_namespace.my_op\"", "C1")
    version = int(op.attributes.get("version", 0))
    if not -2 ** 31 <= version < 2 ** 31:
        fail(f"version = {version} does not fit its type si32", "I5")
    ref = op.attributes["decomposition"]
    fn = ctx.functions.get(ref.name)
    if fn is None:
        fail(f"decomposition @{ref.name} is not defined in this module", "C2")
    ftype = fn.function_type
    _compare_types(op.operand_types, ftype.inputs, "inputs have types", "C3")
    _compare_types(op.result_types, ftype.results, "results have types", "C4")
