"""Verifier checks: Data movement."""
from __future__ import annotations

from typing import Sequence

from ..ir.core import Operation
from ..ir.types import TensorType, TupleType, Type
from .core import (
    _check_reducer,
    _constant_array,
    _Context,
    _expect_shape,
    _int,
    _ints,
    _register,
    _same_elem,
    _same_shape,
    _same_type,
    _tensor,
)
from .quantized_types import is_per_axis
from .shape_inference import (
    Fail,
    check_range,
    check_scatter_shapes,
    check_unique,
    dim_eq,
    elem,
    element_compatible,
    fail,
    fmt_shape,
    implied_gather_operand,
    infer_concatenate,
    infer_gather,
    infer_pad,
    infer_slice,
    is_complex_e,
    is_float_e,
    is_int_e,
    is_quant_e,
    num_bits,
    product,
    rank_of,
    shape_of,
    shapes_compatible,
    types_compatible,
)


def _same_exact_elem(a: Type, b: Type, message: str, constraint: str) -> None:
    """element_type(a) = element_type(b), quantization parameters included."""
    if elem(a) != elem(b):
        fail(f"{message}: {a} vs {b}", constraint)


def _same_exact_type(a: Type, b: Type, message: str, constraint: str) -> None:
    if not shapes_compatible(shape_of(a), shape_of(b)) or elem(a) != elem(b):
        fail(f"{message}: {a} vs {b}", constraint)


def same_element_but_axis(x: Type, r: Type, constraint: str, scales_may_differ: bool = False) -> None:
    """The element types are equal, except that a per-axis quantized operand's quantization
    dimension may differ from the result's (reshape, transpose and their dynamic forms) and, for
    broadcast_in_dim and its dynamic form (`scales_may_differ`), its scales and zero points too."""
    if elem(x) == elem(r):
        return
    if is_per_axis(x) and is_quant_e(elem(r)):
        a, b = elem(x), elem(r)
        same = [(t.storage, t.expressed, t.effective_min, t.effective_max) for t in (a, b)]
        if not scales_may_differ:
            same = [key + (t.scales, t.zero_points) for key, t in zip(same, (a, b))]
        if same[0] == same[1]:
            return
    fail(f"operand and result must have the same element type: {x} vs {r}", constraint)


@_register("stablehlo.broadcast_in_dim")
def _broadcast_in_dim(op: Operation, ctx: _Context) -> None:
    x = _tensor(op.operand_types[0], "operand")
    r = _tensor(op.result_types[0], "result")
    same_element_but_axis(x, r, "C1", scales_may_differ=True)
    dims = _ints(op, "broadcast_dimensions")
    check_broadcast_dims(x, r, dims, ("C2", "C3", "C4", "C5", "C6"))
    static_or_single_bounded(r)


def check_broadcast_dims(x, r, dims, labels) -> None:
    """broadcast_in_dim's C2-C6 (dynamic_broadcast_in_dim shares them with the same numbers)."""
    xs, rs = x.shape, r.shape
    c2, c3, c4, c5, c6 = labels
    if xs is not None and len(dims) != len(xs):
        fail(f"broadcast_dimensions has {len(dims)} entries but the operand has rank {len(xs)}", c2)
    check_range(dims, None if rs is None else len(rs), "broadcast dimension", c3)
    check_unique(dims, "broadcast_dimensions", c4)
    if xs is None or rs is None:
        return
    for j, d in enumerate(dims):
        if xs[j] != 1 and not dim_eq(xs[j], rs[d]):
            fail(f"dim(operand, {j}) = {xs[j]} must be 1 or equal dim(result, {d}) = {rs[d]}", c5)
    if is_per_axis(r):
        qr = r.element
        if not is_per_axis(x) or qr.quantized_dimension != dims[x.element.quantized_dimension]:
            fail(f"the result's quantization dimension {qr.quantized_dimension} must be "
                 f"broadcast_dimensions[quantization_dimension(operand)]", c6)
        qx = x.element
        if xs[qx.quantized_dimension] == 1:
            pairs = set(zip(qr.scales, qr.zero_points))
            if pairs != {(qx.scales[0], qx.zero_points[0])}:
                fail("a broadcast quantization dimension of size 1 must repeat the operand's scale and "
                     "zero point in the result", c6)


@_register("stablehlo.broadcast")
def _broadcast(op: Operation, ctx: _Context) -> None:
    x = _tensor(op.operand_types[0], "operand")
    r = _tensor(op.result_types[0], "result")
    _same_elem(x, r, "operand and result must have the same element type", None)
    if x.shape is not None:
        _expect_shape(r, tuple(_ints(op, "broadcast_sizes")) + x.shape, None)


@_register("stablehlo.transpose")
def _transpose(op: Operation, ctx: _Context) -> None:
    x = _tensor(op.operand_types[0], "operand")
    r = _tensor(op.result_types[0], "result")
    same_element_but_axis(x, r, "C1")
    perm = _ints(op, "permutation")
    if x.shape is None:
        return
    if sorted(perm) != list(range(len(x.shape))):
        fail(f"permutation {perm} is not a permutation of [0, ..., {len(x.shape) - 1}]", "C2")
    _expect_shape(r, tuple(x.shape[p] for p in perm), "C3")
    if is_per_axis(r) and (not is_per_axis(x)
                           or x.element.quantized_dimension != perm[r.element.quantized_dimension]):
        fail(f"quantization_dimension(operand) must be permutation[quantization_dimension(result)] = "
             f"{perm[r.element.quantized_dimension]}: {x} vs {r}", "C4")


@_register("stablehlo.reshape")
def _reshape(op: Operation, ctx: _Context) -> None:
    x = _tensor(op.operand_types[0], "operand")
    r = _tensor(op.result_types[0], "result")
    check_reshape(x, r, ("C1", "C2", "C3"))
    static_or_single_bounded(r)


def static_or_single_bounded(r: TensorType) -> None:
    """broadcast_in_dim's and reshape's result is static, or dynamic in one dimension only, which
    has a bound (the op definitions' HLO_StaticShapeTensorPerAxisQuantizedTensorOrBoundedTensor; the
    dynamic forms of the ops are for the rest)."""
    if r.shape is None:
        fail(f"result must be a ranked tensor, got {r}", "O1")
    dynamic = [d for d, size in enumerate(r.shape) if size is None]
    if not dynamic:
        return
    bounds = getattr(r.encoding, "bounds", None) or ()
    bounded = [d for d, bound in enumerate(bounds) if bound is not None]
    if len(dynamic) != 1 or bounded != dynamic:
        fail(f"result must be statically shaped or have one dynamic dimension with a bound, got {r}", "O1")


def check_reshape(x, r, labels) -> None:
    """reshape's C1-C3 (dynamic_reshape shares them)."""
    c1, c2, c3 = labels
    same_element_but_axis(x, r, c1)
    if x.shape is None or r.shape is None:
        return
    a, b = product(x.shape), product(r.shape)
    if a is not None and b is not None and a != b:
        fail(f"operand {x} has {a} elements but result {r} has {b}", c2)
    if is_per_axis(x) and is_per_axis(r):
        qx, qr = x.element.quantized_dimension, r.element.quantized_dimension

        def parts(s, q):
            return product(s[:q]), s[q], product(s[q + 1:])

        if any(u is not None and v is not None and u != v
               for u, v in zip(parts(x.shape, qx), parts(r.shape, qr))):
            fail(f"a per-axis quantized reshape must keep the quantization dimension and the element "
                 f"counts before and after it: {x} vs {r}", c3)


@_register("stablehlo.concatenate")
def _concatenate(op: Operation, ctx: _Context) -> None:
    if not op.operands:
        fail("needs at least one input", "C3")
    inputs = [_tensor(t, f"input #{i}") for i, t in enumerate(op.operand_types)]
    r = _tensor(op.result_types[0], "result")
    for i, t in enumerate(inputs):
        _same_exact_elem(inputs[0], t, f"input #{i} must have the element type of input #0", "C1")
    _same_exact_elem(inputs[0], r, "result must have the inputs' element type", "C5")
    # C4 holds whatever is unranked: a negative dimension is wrong for every rank, and one ranked
    # input fixes the rank of all (C2).
    d = _int(op, "dimension")
    ranks = [len(t.shape) for t in inputs if t.shape is not None]
    check_range([d], ranks[0] if ranks else None, "dimension", "C4")
    if len(ranks) < len(inputs):
        return
    _expect_shape(r, infer_concatenate([t.shape for t in inputs], d), "C6")


def _pad_operand_and_result(op: Operation) -> tuple[TensorType, TensorType]:
    """The checks pad and dynamic_pad share (same numbering): a scalar padding_value, and one
    element type for operand, padding_value and result. Returns (operand, result)."""
    x = _tensor(op.operand_types[0], "operand")
    value = _tensor(op.operand_types[1], "padding_value")
    r = _tensor(op.result_types[0], "result")
    if rank_of(value) not in (None, 0):
        fail(f"padding_value must be a 0-dimensional tensor, got {value}", "I2")
    _same_exact_elem(x, value, "operand and padding_value must have the same element type", "C1")
    _same_exact_elem(x, r, "operand and result must have the same element type", "C1")
    return x, r


@_register("stablehlo.pad")
def _pad(op: Operation, ctx: _Context) -> None:
    x, r = _pad_operand_and_result(op)
    low, high, interior = (_ints(op, n) for n in ("edge_padding_low", "edge_padding_high", "interior_padding"))
    if x.shape is None:
        return
    for name, values in (("edge_padding_low", low), ("edge_padding_high", high), ("interior_padding", interior)):
        if len(values) != len(x.shape):
            fail(f"{name} has {len(values)} entries but the operand has rank {len(x.shape)}", "C2")
    for i, v in enumerate(interior):
        if v < 0:
            fail(f"interior_padding[{i}] = {v} must be non-negative", "C3")
    _expect_shape(r, infer_pad(x.shape, low, high, interior), "C4")


@_register("stablehlo.slice")
def _slice(op: Operation, ctx: _Context) -> None:
    x = _tensor(op.operand_types[0], "operand")
    r = _tensor(op.result_types[0], "result")
    _same_exact_elem(x, r, "operand and result must have the same element type", "C1")
    start, limit, strides = (_ints(op, n) for n in ("start_indices", "limit_indices", "strides"))
    if x.shape is None:
        return
    for name, values in (("start_indices", start), ("limit_indices", limit), ("strides", strides)):
        if len(values) != len(x.shape):
            fail(f"{name} has {len(values)} entries but the operand has rank {len(x.shape)}", "C2")
    _expect_shape(r, infer_slice(x.shape, start, limit, strides), "C5")


def _check_start_indices(types: Sequence[Type], constraint: str, input_label: str) -> None:
    for i, t in enumerate(types):
        t = _tensor(t, f"start index #{i}")
        if rank_of(t) not in (None, 0) or not is_int_e(t.element):
            fail(f"start index #{i} must be a 0-dimensional integer tensor, got {t}", input_label)
        if t != types[0]:
            fail(f"start indices must all have the same type: {types[0]} vs {t}", constraint)


@_register("stablehlo.dynamic_slice")
def _dynamic_slice(op: Operation, ctx: _Context) -> None:
    x = _tensor(op.operand_types[0], "operand")
    r = _tensor(op.result_types[0], "result")
    _same_exact_elem(x, r, "operand and result must have the same element type", "C1")
    indices = op.operand_types[1:]
    _check_start_indices(indices, "C3", "I2")
    sizes = _ints(op, "slice_sizes")
    if x.shape is not None:
        if len(indices) != len(x.shape) or len(sizes) != len(x.shape):
            fail(f"needs one start index and one slice size per operand dimension ({len(x.shape)}), got "
                 f"{len(indices)} start indices and {len(sizes)} slice sizes", "C2")
        for k, (s, d) in enumerate(zip(sizes, x.shape)):
            if s < 0 or (d is not None and s > d):
                fail(f"slice_sizes[{k}] = {s} is out of range [0, {d}]", "C4")
    _expect_shape(r, tuple(sizes), "C5")


@_register("stablehlo.dynamic_update_slice")
def _dynamic_update_slice(op: Operation, ctx: _Context) -> None:
    x = _tensor(op.operand_types[0], "operand")
    update = _tensor(op.operand_types[1], "update")
    r = _tensor(op.result_types[0], "result")
    _same_exact_type(x, r, "operand and result must have the same type", "C1")
    _same_exact_elem(x, update, "update and operand must have the same element type", "C2")
    indices = op.operand_types[2:]
    if x.shape is None or update.shape is None:
        return
    if len(update.shape) != len(x.shape):
        fail(f"update has rank {len(update.shape)} but the operand has rank {len(x.shape)}", "C3")
    if len(indices) != len(x.shape):
        fail(f"needs {len(x.shape)} start indices, got {len(indices)}", "C4")
    _check_start_indices(indices, "C5", "I3")
    for k, (u, d) in enumerate(zip(update.shape, x.shape)):
        if u is not None and d is not None and u > d:
            fail(f"dim(update, {k}) = {u} exceeds dim(operand, {k}) = {d}", "C6")


@_register("stablehlo.iota")
def _iota(op: Operation, ctx: _Context) -> None:
    r = _tensor(op.result_types[0], "output")
    e = r.element
    if not (is_int_e(e) or is_float_e(e) or is_complex_e(e) or is_quant_e(e)):
        fail(f"output must have integer, floating-point or complex element type, got {r}", "O1")
    d = _int(op, "iota_dimension")
    if r.shape is not None and not 0 <= d < len(r.shape):
        fail(f"iota_dimension {d} is out of range [0, {len(r.shape)})", "C1")


@_register("stablehlo.reverse")
def _reverse(op: Operation, ctx: _Context) -> None:
    x = _tensor(op.operand_types[0], "operand")
    r = _tensor(op.result_types[0], "result")
    _same_exact_type(x, r, "operand and result must have the same type", "C1")
    dims = _ints(op, "dimensions")
    check_unique(dims, "dimensions", "C2")
    check_range(dims, rank_of(r), "dimension", "C3")


@_register("stablehlo.gather")
def _gather(op: Operation, ctx: _Context) -> None:
    x = _tensor(op.operand_types[0], "operand")
    idx = _tensor(op.operand_types[1], "start_indices")
    r = _tensor(op.result_types[0], "result")
    if not is_int_e(idx.element):
        fail(f"start_indices must have integer element type, got {idx}", "I2")
    _same_exact_elem(x, r, "operand and result must have the same element type", "C23")
    # Unranked operands still have the rank C1 implies and slice_sizes, dimension numbers and the
    # result's rank to check against it.
    dn = op.attributes["dimension_numbers"]
    operand = x.shape if x.shape is not None else implied_gather_operand(dn)
    _expect_shape(r, infer_gather(operand, idx.shape, dn, _ints(op, "slice_sizes")), "C22")


# gather's constraint numbers as dynamic_gather numbers them (it has no batching dimensions).
_DYNAMIC_GATHER_LABELS = {"C7": "C6", "C8": "C7", "C9": "C8", "C18": "C9", "C19": "C10", "C20": "C11",
                          "C21": "C12", "C22": "C13", "C23": "C14"}


@_register("stablehlo.dynamic_gather")
def _dynamic_gather(op: Operation, ctx: _Context) -> None:
    """gather with slice_sizes given as a value: the result type is inferred with the slice sizes
    unknown, so its rank, batch dimensions and element type are checked."""
    x = _tensor(op.operand_types[0], "operand")
    idx = _tensor(op.operand_types[1], "start_indices")
    sizes = _tensor(op.operand_types[2], "slice_sizes")
    r = _tensor(op.result_types[0], "result")
    if not is_int_e(idx.element):
        fail(f"start_indices must have integer element type, got {idx}", "I2")
    _same_exact_elem(x, r, "operand and result must have the element type", "C14")
    if sizes.shape is not None and len(sizes.shape) != 1:
        fail(f"slice_sizes must be a 1-dimensional tensor, got {sizes}", "I3")
    dn = op.attributes["dimension_numbers"]
    operand = x.shape if x.shape is not None else implied_gather_operand(dn)
    if sizes.shape is not None and not dim_eq(sizes.shape[0], len(operand)):
        fail(f"slice_sizes has {sizes.shape[0]} entries but the operand has rank {len(operand)}", "C11")
    # slice_sizes given by a constant are checked as gather's attribute is.
    given = _constant_array(op.operands[2])
    known = [int(v) for v in given.reshape(-1)] if given is not None and given.size == len(operand) else None
    try:
        _expect_shape(r, infer_gather(operand, idx.shape, dn, known or [None] * len(operand)), "C22")
    except Fail as f:
        raise Fail(f.message, _DYNAMIC_GATHER_LABELS.get(f.constraint, f.constraint)) from None


@_register("stablehlo.dynamic_pad")
def _dynamic_pad(op: Operation, ctx: _Context) -> None:
    x, r = _pad_operand_and_result(op)
    rank = rank_of(x)
    for i, name in enumerate(("edge_padding_low", "edge_padding_high", "interior_padding")):
        t = _tensor(op.operand_types[2 + i], name)
        if rank is not None and t.shape is not None and len(t.shape) == 1 and not dim_eq(t.shape[0], rank):
            fail(f"{name} has {t.shape[0]} entries but the operand has rank {rank}", "C2")
    if rank is not None and rank_of(r) is not None and rank_of(r) != rank:
        fail(f"result {r} must have the operand's rank {rank}", "C4")
    # Paddings given by constants decide C3 and C4 statically, as pad's attributes do.
    low, high, interior = (_constant_array(v) for v in op.operands[2:5])
    if interior is not None and (interior < 0).any():
        fail(f"interior_padding must be non-negative, got {interior.reshape(-1).tolist()}", "C3")
    if rank is None or x.shape is None or any(a is None or a.size != rank for a in (low, high, interior)):
        return
    expected = tuple(None if d is None else int(lo) + max(d - 1, 0) * int(i) + d + int(hi)
                     for d, lo, hi, i in zip(x.shape, low.reshape(-1), high.reshape(-1), interior.reshape(-1)))
    _expect_shape(r, expected, "C4")


@_register("stablehlo.scatter")
def _scatter(op: Operation, ctx: _Context) -> None:
    n = (len(op.operands) - 1) // 2
    if n < 1:
        fail("needs at least one input and one update", "C5")
    inputs = [_tensor(t, f"input #{i}") for i, t in enumerate(op.operand_types[:n])]
    idx = _tensor(op.operand_types[n], "scatter_indices")
    updates = [_tensor(t, f"update #{i}") for i, t in enumerate(op.operand_types[n + 1:])]
    if not is_int_e(idx.element):
        fail(f"scatter_indices must have integer element type, got {idx}", "I2")
    if len(op.results) != n:
        fail(f"has {n} inputs but {len(op.results)} results", "C24")
    for i in range(n):
        _same_shape(inputs[0], inputs[i], f"input #{i} must have the shape of input #0", "C1")
        _same_shape(updates[0], updates[i], f"update #{i} must have the shape of update #0", "C3")
        _same_elem(inputs[i], updates[i], f"update #{i} must have the element type of input #{i}", "C6")
    elems = _check_reducer(op, 0, [t.element for t in inputs], [], "C23", "update_computation")
    for i, (t, res) in enumerate(zip(inputs, op.result_types)):
        _same_shape(t, res, f"result #{i} must have the shape of input #{i}", "C24")
        if not element_compatible(elem(res), elems[i]):
            fail(f"result #{i} has type {res} but update_computation produces {elems[i]}", "C25")
    if inputs[0].shape is None or idx.shape is None or updates[0].shape is None:
        return
    check_scatter_shapes(inputs[0].shape, idx.shape, updates[0].shape, op.attributes["scatter_dimension_numbers"])


@_register("stablehlo.get_tuple_element")
def _get_tuple_element(op: Operation, ctx: _Context) -> None:
    t = op.operand_types[0]
    if not isinstance(t, TupleType):
        fail(f"operand must be a tuple, got {t}", "I1")
    index = _int(op, "index")
    if not 0 <= index < len(t.types):
        fail(f"index {index} is out of range [0, {len(t.types)})", "C1")
    _same_type(t.types[index], op.result_types[0], f"result must have the type of tuple element {index}", "C2")


@_register("stablehlo.tuple")
def _tuple(op: Operation, ctx: _Context) -> None:
    r = op.result_types[0]
    want = TupleType(tuple(op.operand_types))
    if not isinstance(r, TupleType) or not types_compatible(r, want):
        fail(f"result type must be {want}, got {r}", "C1")


@_register("stablehlo.bitcast_convert")
def _bitcast_convert(op: Operation, ctx: _Context) -> None:
    x = _tensor(op.operand_types[0], "operand")
    r = _tensor(op.result_types[0], "result")
    if is_complex_e(x.element) != is_complex_e(r.element):
        fail(f"cannot bitcast between complex and non-complex types: {x} to {r}", "C2")
    a, b = num_bits(x.element), num_bits(r.element)
    if a is None or b is None or x.shape is None or r.shape is None:
        return
    xs, rs = x.shape, r.shape
    if a == b:
        _expect_shape(r, xs, "C1")
    elif b < a:
        if len(rs) != len(xs) + 1 or rs[-1] not in (None, a // b) or a % b:
            fail(f"bitcasting {x.element} to the narrower {r.element} needs result shape "
                 f"{fmt_shape(xs + (a // b,))}, got {r}", "C1")
        _expect_shape(r, xs + (a // b,), "C1")
    else:
        if len(xs) != len(rs) + 1 or xs[-1] not in (None, b // a) or b % a:
            fail(f"bitcasting {x.element} to the wider {r.element} needs an operand whose last dimension "
                 f"is {b // a}, got {x}", "C1")
        _expect_shape(r, xs[:-1], "C1")


@_register("arith.constant")
def _arith_constant(op: Operation, ctx: _Context) -> None:
    """MLIR's arith.constant: the result has the value's type."""
    value = op.attributes["value"]
    if value.type != op.result_types[0]:
        fail(f"value has type {value.type} but the result is {op.result_types[0]}", "inferred")


@_register("tensor.cast")
def _tensor_cast(op: Operation, ctx: _Context) -> None:
    """MLIR's tensor.cast: between tensor types of one element type whose shapes agree where both
    are known (static, dynamic or bounded: a cast only says more or less about the shape)."""
    x = _tensor(op.operand_types[0], "source")
    r = _tensor(op.result_types[0], "dest")
    if x.element != r.element or not shapes_compatible(x.shape, r.shape):
        fail(f"cannot cast {x} to {r}: the element types must be equal and the shapes compatible", "inferred")


@_register("stablehlo.constant")
def _constant(op: Operation, ctx: _Context) -> None:
    value = op.attributes["value"]
    r = _tensor(op.result_types[0], "output")
    vt = value.type
    if not shapes_compatible(vt.shape, r.shape):
        fail(f"value has type {vt} but the output is {r}", "C1")
    ve, re = vt.element, r.element
    if ve != re and not (is_quant_e(re) and (is_quant_e(ve) or ve == re.storage)):
        fail(f"value has type {vt} but the output is {r}", "C1")
