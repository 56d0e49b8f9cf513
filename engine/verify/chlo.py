"""Verifier checks: CHLO: the few shape rules that are plain."""
from __future__ import annotations

from ..ir.core import Operation
from .shape_inference import fail, is_bool_e, is_int_e
from .core import _Context, _expect_shape, _int, _register, _same_elem, _same_shape, _tensor


_CHLO_PREDICATES = {"chlo.is_inf", "chlo.is_neg_inf", "chlo.is_pos_inf"}
_CHLO_UNARY = [
    "acos", "acosh", "asin", "asinh", "atan", "atanh", "bessel_i1e", "conj", "cosh", "sinh", "tan",
    "digamma", "erf", "erf_inv", "erfc", "lgamma", "is_inf", "is_neg_inf", "is_pos_inf", "square",
]


@_register(*(f"chlo.{n}" for n in _CHLO_UNARY))
def _chlo_unary(op: Operation, ctx: _Context) -> None:
    x = _tensor(op.operand_types[0], "operand")
    r = _tensor(op.result_types[0], "result")
    _same_shape(x, r, "operand and result must have the same shape", None)
    if op.name in _CHLO_PREDICATES:
        if not is_bool_e(r.element):
            fail(f"result must have element type i1, got {r}")
    else:
        _same_elem(x, r, "operand and result must have the same element type", None)


@_register("chlo.top_k")
def _chlo_top_k(op: Operation, ctx: _Context) -> None:
    x = _tensor(op.operand_types[0], "operand")
    values = _tensor(op.result_types[0], "values")
    indices = _tensor(op.result_types[1], "indices")
    _same_elem(x, values, "values must have the operand's element type", None)
    if not is_int_e(indices.element):
        fail(f"indices must have integer element type, got {indices}")
    if x.shape is None:
        return
    if not x.shape:
        fail(f"operand must have rank at least 1, got {x}")
    k = _int(op, "k")
    if k < 0 or (x.shape[-1] is not None and k > x.shape[-1]):
        fail(f"k = {k} must be in [0, {x.shape[-1]}]")
    _expect_shape(values, x.shape[:-1] + (k,), None, "values")
    _expect_shape(indices, x.shape[:-1] + (k,), None, "indices")


