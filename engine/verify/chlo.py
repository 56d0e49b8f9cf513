"""Verifier checks: CHLO (docs/generated/chlo.md).

chlo.md numbers no constraints: an op's rules are its traits, its operand table and, for
chlo.ragged_dot and chlo.top_k, its description. Each check is named by a label in parentheses
the way a spec constraint is:
  operand-type  an operand's element type is outside the op's operand table
  same-type     CompatibleOperandsAndResultType: operands and result of one type
  same-shape    SameOperandsAndResultShape
  same-element  the operands of a broadcasting op share their element type
  broadcast     CHLO_Broadcasting: the operand shapes broadcast (numpy-style, or placed by
                broadcast_dimensions)
  scan          chlo.scan: inputs, carries, body signature and outputs agree
  inferred      InferTypeOpInterface: the result type is the one the op infers
  k             top_k: the operand has rank >= 1 and k lies in [0, its last dimension]
  ragged        ragged_dot: exactly one lhs ragged dimension, in range
  group-sizes   ragged_dot: group_sizes is [g] or [b..., x..., g] for the mode
  group-dims    ragged_dot: one rhs group dimension in mode 1 (of size g), none otherwise
  dot           ragged_dot: the dot_general rules on its batching/contracting dimensions
"""
from __future__ import annotations

from typing import Optional, Sequence

from ..ir import attributes as A
from ..ir.core import Operation
from ..ir.opset.chlo import scan_groups
from ..ir.types import ComplexType, IntegerType, TensorType, Type
from .contractions import infer_dot_general
from .core import (
    _block,
    _Context,
    _expect_shape,
    _int,
    _register,
    _returned,
    _same_elem,
    _same_shape,
    _same_type,
    _tensor,
)
from .shape_inference import (
    Fail,
    check_unique,
    element_compatible,
    fail,
    fmt_shape,
    fmt_types,
    hlo_element_compatible,
    is_bool_e,
    is_complex_e,
    is_float_e,
    is_int_e,
    types_compatible,
)

_FLOAT_ONLY = ("digamma", "erf", "erf_inv", "erfc", "lgamma", "is_inf", "is_neg_inf", "is_pos_inf")
_FLOAT_OR_COMPLEX = ("acos", "acosh", "asin", "asinh", "atan", "atanh", "bessel_i1e", "conj", "cosh", "sinh", "tan",
                     "square")
_PREDICATES = ("is_inf", "is_neg_inf", "is_pos_inf")
_FLOAT_BINARY = ("next_after", "polygamma", "zeta")


def _element_kind(t: TensorType, allowed, what: str, kinds: str) -> None:
    if not allowed(t.element):
        fail(f"{what} must have {kinds} element type, got {t}", "operand-type")


def _is_float_or_complex(e: Type) -> bool:
    return is_float_e(e) or is_complex_e(e)


@_register(*(f"chlo.{n}" for n in _FLOAT_ONLY + _FLOAT_OR_COMPLEX), "chlo._asin_acos_kernel")
def _chlo_unary(op: Operation, ctx: _Context) -> None:
    name = op.name.split(".", 1)[1]
    x = _tensor(op.operand_types[0], "operand")
    r = _tensor(op.result_types[0], "result")
    if name == "_asin_acos_kernel":
        _element_kind(x, is_complex_e, "operand", "complex")
    elif name in _FLOAT_ONLY:
        _element_kind(x, is_float_e, "operand", "floating-point")
    else:
        _element_kind(x, _is_float_or_complex, "operand", "floating-point or complex")
    if name in _PREDICATES:
        _same_shape(x, r, "operand and result must have the same shape", "same-shape")
        if not is_bool_e(r.element):
            fail(f"result must have element type i1, got {r}", "inferred")
    elif not types_compatible(x, r):
        fail(f"operand and result must have the same type: {x} vs {r}", "same-type")


@_register(*(f"chlo.{n}" for n in _FLOAT_BINARY))
def _chlo_float_binary(op: Operation, ctx: _Context) -> None:
    a, b = (_tensor(t, f"operand #{i}") for i, t in enumerate(op.operand_types))
    r = _tensor(op.result_types[0], "result")
    _element_kind(a, is_float_e, "operands", "floating-point")
    if not (types_compatible(a, b) and types_compatible(a, r)):
        fail(f"operands and result must have the same type: {a}, {b} -> {r}", "same-type")


# -- broadcasting ops ---------------------------------------------------------------------------


def _broadcast_dims(a: Optional[int], b: Optional[int]) -> Optional[int]:
    if a == b or b == 1:
        return a
    if a == 1:
        return b
    if a is None or b is None:
        return a if b is None else b
    raise ValueError


def _numpy_broadcast(shapes: Sequence[tuple]) -> tuple:
    rank = max(len(s) for s in shapes)
    out = [1] * rank
    for shape in shapes:
        padded = (1,) * (rank - len(shape)) + tuple(shape)
        try:
            out = [_broadcast_dims(x, y) for x, y in zip(out, padded)]
        except ValueError:
            fail(f"shapes {', '.join(fmt_shape(s) for s in shapes)} do not broadcast", "broadcast")
    return tuple(out)


def _broadcast_shape(x: tuple, y: tuple, dims: Optional[Sequence[int]]) -> tuple:
    """The result shape of a binary broadcasting op; with broadcast_dimensions the lower-rank
    operand's dimension i lines up with dimension dims[i] of the other. Operands of one rank
    broadcast numpy's way whatever broadcast_dimensions say, as the evaluator and StableHLO's
    legalization have it (its C++ inference infers no shape from dimensions that do not fit)."""
    if dims is None or len(x) == len(y):
        return _numpy_broadcast([x, y])
    large, small = (x, y) if len(x) > len(y) else (y, x)
    if len(dims) != len(small):
        fail(f"broadcast_dimensions {list(dims)} must have one entry per dimension of the lower-rank operand "
             f"{fmt_shape(small)}", "broadcast")
    check_unique(list(dims), "broadcast_dimensions", "broadcast")
    for d in dims:
        if not 0 <= d < len(large):
            fail(f"broadcast_dimensions entry {d} is out of range [0, {len(large)})", "broadcast")
    placed = _numpy_broadcast([small, tuple(large[d] for d in dims)])
    out = list(large)
    for i, d in enumerate(dims):
        out[d] = placed[i]
    return tuple(out)


_BOOL_OR_INT = ("and", "or", "xor")
# chlo.md's operand table of the shifts is any tensor (HLO_Tensor), floats included; the element
# type is the stablehlo shift's business once the op is legalized (and the run's, here).
_SHIFTS = ("shift_left", "shift_right_arithmetic", "shift_right_logical")


@_register(*(f"chlo.broadcast_{n}" for n in (
    "add", "atan2", "divide", "maximum", "minimum", "multiply", "next_after", "polygamma", "power",
    "remainder", "subtract", "zeta", "compare", "complex") + _BOOL_OR_INT + _SHIFTS))
def _chlo_broadcast_binary(op: Operation, ctx: _Context) -> None:
    name = op.name[len("chlo.broadcast_"):]
    lhs, rhs = (_tensor(t, w) for t, w in zip(op.operand_types, ("lhs", "rhs")))
    r = _tensor(op.result_types[0], "result")
    if name in _BOOL_OR_INT:
        _element_kind(lhs, lambda e: is_bool_e(e) or is_int_e(e), "lhs", "boolean or integer")
    elif name == "complex":
        _element_kind(lhs, is_float_e, "lhs", "floating-point")
    # CHLO_BroadcastBinaryElementwiseOp's element types agree as StableHLO's type inference has it:
    # quantized operands may differ in scales and zero points only (and so may the result).
    if not hlo_element_compatible(lhs.element, rhs.element):
        fail(f"lhs and rhs must have the same element type: {lhs} vs {rhs}", "same-element")
    if name == "compare":
        element = IntegerType(1)
    elif name == "complex":
        element = ComplexType(lhs.element)
    else:
        element = lhs.element
    if not hlo_element_compatible(r.element, element):
        fail(f"result element type must be {element}, got {r}", "inferred")
    if lhs.shape is not None and rhs.shape is not None:
        dims = op.attributes.get("broadcast_dimensions")
        _expect_shape(r, _broadcast_shape(lhs.shape, rhs.shape, None if dims is None else [int(d) for d in dims]),
                      "inferred")


@_register("chlo.broadcast_select")
def _chlo_broadcast_select(op: Operation, ctx: _Context) -> None:
    pred, on_true, on_false = (_tensor(t, w) for t, w in zip(op.operand_types, ("pred", "on_true", "on_false")))
    r = _tensor(op.result_types[0], "result")
    _element_kind(pred, is_bool_e, "pred", "i1")
    if not element_compatible(on_true.element, on_false.element):
        fail(f"on_true and on_false must have the same element type: {on_true} vs {on_false}", "same-element")
    if not element_compatible(r.element, on_true.element):
        fail(f"result element type must be {on_true.element}, got {r}", "inferred")
    shapes = [t.shape for t in (pred, on_true, on_false)]
    if all(s is not None for s in shapes):
        _expect_shape(r, _numpy_broadcast(shapes), "inferred")


# -- constants, top_k, ragged_dot ---------------------------------------------------------------


@_register("chlo.constant")
def _chlo_constant(op: Operation, ctx: _Context) -> None:
    value = op.attributes["value"]
    if not types_compatible(value.type, op.result_types[0]):
        fail(f"result type {op.result_types[0]} must be the value's type {value.type}", "inferred")


@_register("chlo.constant_like")
def _chlo_constant_like(op: Operation, ctx: _Context) -> None:
    x = _tensor(op.operand_types[0], "operand")
    r = _tensor(op.result_types[0], "result")
    value = op.attributes["value"]
    value_type = getattr(value, "type", None)
    element = value_type.element if isinstance(value_type, TensorType) else value_type
    if element is not None and not element_compatible(r.element, element):
        fail(f"result element type must be the value's type {element}, got {r}", "inferred")
    _same_shape(x, r, "result must have the operand's shape", "inferred")


@_register("chlo.top_k")
def _chlo_top_k(op: Operation, ctx: _Context) -> None:
    x = _tensor(op.operand_types[0], "operand")
    values = _tensor(op.result_types[0], "values")
    indices = _tensor(op.result_types[1], "indices")
    if x.shape is not None:
        if not x.shape:
            fail(f"operand must have rank at least 1, got {x}", "k")
        k = _int(op, "k")
        if k < 0 or (x.shape[-1] is not None and k > x.shape[-1]):
            fail(f"k = {k} must be in [0, {x.shape[-1]}], the operand's last dimension", "k")
    if not element_compatible(values.element, x.element):
        fail(f"values must have the operand's element type {x.element}, got {values}", "inferred")
    if indices.element != IntegerType(32):
        fail(f"indices must have element type i32, got {indices}", "inferred")
    if x.shape is not None:
        _expect_shape(values, x.shape[:-1] + (k,), "inferred", "values")
        _expect_shape(indices, x.shape[:-1] + (k,), "inferred", "indices")


@_register("chlo.ragged_dot")
def _chlo_ragged_dot(op: Operation, ctx: _Context) -> None:
    """The three modes of chlo.md, by what the lhs ragged dimension is: mode 1 non-contracting
    ([b,m,k] x [g,b,k,n] -> [b,m,n]), mode 2 contracting ([b,m,k] x [b,k,n] -> [g,b,m,n]),
    mode 3 batch ([b,m,k] x [b,k,n] -> [b,m,n]); group_sizes is [b..., x..., g] or just [g]."""
    lhs, rhs, sizes = (_tensor(t, w) for t, w in zip(op.operand_types, ("lhs", "rhs", "group_sizes")))
    r = _tensor(op.result_types[0], "result")
    if lhs.shape is None or rhs.shape is None or sizes.shape is None:
        return
    n = A.ragged_dot_dimension_numbers(op.attributes["ragged_dot_dimension_numbers"])
    lb, rb = n["lhs_batching_dimensions"], n["rhs_batching_dimensions"]
    lc, rc = n["lhs_contracting_dimensions"], n["rhs_contracting_dimensions"]
    groups = n["rhs_group_dimensions"]
    try:
        infer_dot_general(lhs.shape, rhs.shape, lb, rb, lc, rc)
    except Fail as f:
        fail(f"{f.message} (dot_general {f.constraint})", "dot")
    if len(n["lhs_ragged_dimensions"]) != 1:
        fail(f"needs exactly one lhs ragged dimension, got {list(n['lhs_ragged_dimensions'])}", "ragged")
    (ragged,) = n["lhs_ragged_dimensions"]
    if not 0 <= ragged < len(lhs.shape):
        fail(f"lhs ragged dimension {ragged} is out of range [0, {len(lhs.shape)})", "ragged")
    if ragged in lb:
        prefix = list(lb[:lb.index(ragged)])
    elif ragged in lc:
        prefix = list(lb) + list(lc[:lc.index(ragged)])
    else:
        prefix = list(lb) + [d for d in range(ragged) if d not in lb and d not in lc]
    if not sizes.shape:
        fail(f"group_sizes must have rank >= 1, got {sizes}", "group-sizes")
    expected = tuple(lhs.shape[d] for d in prefix) + (sizes.shape[-1],)
    if len(sizes.shape) != 1 and not (len(sizes.shape) == len(expected)
                                      and all(a is None or b is None or a == b for a, b in zip(sizes.shape, expected))):
        fail(f"group_sizes has shape {fmt_shape(sizes.shape)}; expected {fmt_shape(expected)} "
             f"or {fmt_shape(expected[-1:])}", "group-sizes")
    num_groups = sizes.shape[-1]
    for d in groups:
        if not 0 <= d < len(rhs.shape):
            fail(f"rhs group dimension {d} is out of range [0, {len(rhs.shape)})", "group-dims")
        if d in rb or d in rc:
            fail(f"rhs group dimension {d} is also a batching or contracting dimension", "group-dims")
    if ragged in lb or ragged in lc:
        if groups:
            fail("the rhs has no group dimension when the ragged dimension is batching or contracting", "group-dims")
    else:
        if len(groups) != 1:
            fail("with a non-contracting ragged dimension the rhs needs exactly one group dimension", "group-dims")
        if None not in (num_groups, rhs.shape[groups[0]]) and rhs.shape[groups[0]] != num_groups:
            fail(f"rhs group dimension {groups[0]} has size {rhs.shape[groups[0]]}, but group_sizes has "
                 f"{num_groups} groups", "group-dims")
    shape = [num_groups] if ragged in lc else []
    shape += [lhs.shape[d] for d in lb]
    shape += [lhs.shape[d] for d in range(len(lhs.shape)) if d not in lb and d not in lc]
    shape += [rhs.shape[d] for d in range(len(rhs.shape)) if d not in rb and d not in rc and d not in groups]
    _expect_shape(r, tuple(shape), "inferred")


@_register("chlo.mulhi")
def _chlo_mulhi(op: Operation, ctx: _Context) -> None:
    lhs = _tensor(op.operand_types[0], "lhs")
    if not is_int_e(lhs.element):
        fail(f"operands must be integer tensors, got {lhs}", "operand-type")
    _same_type(op.operand_types[1], lhs, "lhs and rhs must have the same type", "same-type")
    _same_type(op.result_types[0], lhs, "result must have the operands' type", "same-type")


@_register("chlo.scan")
def _chlo_scan(op: Operation, ctx: _Context) -> None:
    try:
        inputs, inits = scan_groups(op)
    except ValueError as e:
        fail(str(e), "scan")
    xs = [_tensor(t, f"input #{i}") for i, t in enumerate(op.operand_types[:inputs])]
    carries = list(op.operand_types[inputs:])
    outputs = len(op.results) - inits
    if outputs < 0:
        fail(f"has {inits} inits but only {len(op.results)} results", "scan")
    d = _int(op, "dimension")
    given = op.attributes.get("scan_dim_size")
    given = None if given is None else int(given)
    if given is not None and given < 0:
        fail(f"scan_dim_size {given} must be non-negative", "scan")
    length = given
    slice_types = []
    for i, x in enumerate(xs):
        if x.shape is None:
            slice_types.append(None)
            continue
        if not 0 <= d < len(x.shape):
            fail(f"dimension {d} is out of range for input #{i} {x}", "scan")
        if given is not None and x.shape[d] not in (None, given):
            fail(f"scan_dim_size is {given} but input #{i} {x} has {x.shape[d]} along dimension {d}", "scan")
        if length is not None and x.shape[d] not in (None, length):
            fail(f"inputs must have the same size along dimension {d}: {length} vs {x.shape[d]} (input #{i})", "scan")
        length = x.shape[d] if length is None else length
        slice_types.append(x.with_shape(x.shape[:d] + x.shape[d + 1:]))
    args = [a.type for a in _block(op, 0).arguments]
    if len(args) != inputs + inits:
        fail(f"body must take {inputs + inits} arguments (a slice of each input, then each carry), takes {len(args)}", "scan")
    for i, (expected, got) in enumerate(zip(slice_types + carries, args)):
        if expected is not None and not types_compatible(expected, got):
            what = f"a slice of input #{i}" if i < inputs else f"carry #{i - inputs}"
            fail(f"body argument #{i} must be {expected} ({what}), got {got}", "scan")
    returned = _returned(op, 0)
    if len(returned) != outputs + inits:
        fail(f"body must return {outputs + inits} values ({outputs} outputs, then {inits} carries), "
             f"returns {fmt_types(returned)}", "scan")
    for j, (init, back, result) in enumerate(zip(carries, returned[outputs:], op.result_types[outputs:])):
        if not (types_compatible(init, back) and types_compatible(init, result)):
            fail(f"carry #{j} must keep its type: init {init}, body returns {back}, result {result}", "scan")
    for k, (piece, result) in enumerate(zip(returned[:outputs], op.result_types[:outputs])):
        if isinstance(piece, TensorType) and piece.shape is not None and length is not None:
            _expect_shape(result, piece.shape[:d] + (length,) + piece.shape[d:], "scan", f"output #{k}")
            _same_elem(piece, result, f"output #{k} must have the element type the body returns", "scan")
