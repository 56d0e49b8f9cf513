"""Verifier checks: CHLO: the few shape rules that are plain."""
from __future__ import annotations

from ..ir.core import Operation
from ..ir.opset.chlo import scan_groups
from ..ir.types import TensorType
from .shape_inference import fail, fmt_types, is_bool_e, is_int_e, types_compatible
from .core import (
    _Context, _block, _expect_shape, _int, _register, _returned, _same_elem, _same_shape, _same_type, _tensor,
)


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


@_register("chlo.mulhi")
def _chlo_mulhi(op: Operation, ctx: _Context) -> None:
    lhs = _tensor(op.operand_types[0], "lhs")
    if not is_int_e(lhs.element):
        fail(f"operands must be integer tensors, got {lhs}")
    _same_type(op.operand_types[1], lhs, "lhs and rhs must have the same type", None)
    _same_type(op.result_types[0], lhs, "result must have the operands' type", None)


@_register("chlo.scan")
def _chlo_scan(op: Operation, ctx: _Context) -> None:
    try:
        inputs, inits = scan_groups(op)
    except ValueError as e:
        fail(str(e))
    xs = [_tensor(t, f"input #{i}") for i, t in enumerate(op.operand_types[:inputs])]
    carries = list(op.operand_types[inputs:])
    outputs = len(op.results) - inits
    if outputs < 0:
        fail(f"has {inits} inits but only {len(op.results)} results")
    d = _int(op, "dimension")
    length = None
    slice_types = []
    for i, x in enumerate(xs):
        if x.shape is None:
            slice_types.append(None)
            continue
        if not 0 <= d < len(x.shape):
            fail(f"dimension {d} is out of range for input #{i} {x}")
        if length is not None and x.shape[d] not in (None, length):
            fail(f"inputs must have the same size along dimension {d}: {length} vs {x.shape[d]} (input #{i})")
        length = x.shape[d] if length is None else length
        slice_types.append(x.with_shape(x.shape[:d] + x.shape[d + 1:]))
    args = [a.type for a in _block(op, 0).arguments]
    if len(args) != inputs + inits:
        fail(f"body must take {inputs + inits} arguments (a slice of each input, then each carry), takes {len(args)}")
    for i, (expected, got) in enumerate(zip(slice_types + carries, args)):
        if expected is not None and not types_compatible(expected, got):
            what = f"a slice of input #{i}" if i < inputs else f"carry #{i - inputs}"
            fail(f"body argument #{i} must be {expected} ({what}), got {got}")
    returned = _returned(op, 0)
    if len(returned) != outputs + inits:
        fail(f"body must return {outputs + inits} values ({outputs} outputs, then {inits} carries), "
             f"returns {fmt_types(returned)}")
    for j, (init, back, result) in enumerate(zip(carries, returned[outputs:], op.result_types[outputs:])):
        if not (types_compatible(init, back) and types_compatible(init, result)):
            fail(f"carry #{j} must keep its type: init {init}, body returns {back}, result {result}")
    for k, (piece, result) in enumerate(zip(returned[:outputs], op.result_types[:outputs])):
        if isinstance(piece, TensorType) and piece.shape is not None and length is not None:
            _expect_shape(result, piece.shape[:d] + (length,) + piece.shape[d:], None, f"output #{k}")
            _same_elem(piece, result, f"output #{k} must have the element type the body returns", None)
