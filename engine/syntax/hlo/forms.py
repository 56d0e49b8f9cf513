"""Where an HLO instruction's operands or results are shaped differently from its IR op's: the
operand forms the opcode table names (`operands=`) and the pack rule for tuple-shaped results.

Ops added here only to bridge the two forms carry `hlo.implicit` (the printer skips them, the
graph may hide them); the `stablehlo.tuple` that packs several results into the instruction's
tuple value carries the instruction's name and `hlo.packs_results`.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

import ml_dtypes
import numpy as np

from ...ir.attributes import UNIT, DenseArray, DenseElements, IntegerAttr
from ...ir.core import Block, Operation, Value
from ...ir.errors import ParseError, SourcePos
from ...ir.types import ComplexType, FloatType, IntegerType, TensorType, TupleType, Type
from .ir_types import ssa_name, tuple_leaves

if TYPE_CHECKING:
    from .opcodes import Opcode

# `lowering` below is lower.InstructionLowering (inst, block): the instruction being lowered.
InstructionLowering = Any


def implicit(lowering: InstructionLowering, name: str, operands: list[Value], result: Type, attrs: dict,
             suffix: str) -> Value:
    op = Operation(name, operands, [result], {**attrs, "hlo.implicit": UNIT}, pos=lowering.inst.pos,
                   result_names=[ssa_name(lowering.inst.name, suffix)])
    lowering.block.append(op)
    return op.results[0]


def implicit_get_tuple_element(block: Block, value: Value, index: int, pos: Optional[SourcePos]) -> Value:
    """`stablehlo.get_tuple_element` marked `hlo.implicit` (the printer skips it)."""
    op = Operation("stablehlo.get_tuple_element", [value], [value.type.types[index]],
                   {"index": IntegerAttr(index, IntegerType(32)), "hlo.implicit": UNIT}, pos=pos,
                   result_names=[f"{value.name}#{index}"])
    block.append(op)
    return op.results[0]


def zeros_constant(lowering: InstructionLowering, t: TensorType, suffix: str) -> Value:
    array = np.zeros(t.shape, dtype=t.numpy_dtype)
    return implicit(lowering, "stablehlo.constant", [], t, {"value": DenseElements(t, array)}, suffix)


def lower_operands(lowering: InstructionLowering, entry: "Opcode", operands: list[Value], attributes: dict) -> list[Value]:
    form = entry.operands
    inst = lowering.inst
    if form == "plain":
        return operands
    if form == "index_scalars":
        return _index_scalars(lowering, operands, 1 if inst.opcode == "dynamic-slice" else 2)
    if form == "size_vector":  # dynamic-reshape(x, size0, size1, ...): StableHLO takes one shape vector
        rows = [implicit(lowering, "stablehlo.reshape", [v], TensorType((1,), v.type.element), {}, f"size{i}")
                for i, v in enumerate(operands[1:])]
        if not rows:
            return operands
        shape_type = TensorType((len(rows),), rows[0].type.element)
        shape = implicit(lowering, "stablehlo.concatenate", rows, shape_type,
                         {"dimension": IntegerAttr(0, IntegerType(64))}, "shape")
        return [operands[0], shape]
    if form == "rng_shape":
        dims = np.asarray(lowering.inst.shape.dims, dtype=np.int64)
        t = TensorType((len(dims),), IntegerType(64))
        shape = implicit(lowering, "stablehlo.constant", [], t, {"value": DenseElements(t, dims)}, "shape")
        # XLA's tests also write rng(min, max, shape): its parser takes the third operand and its
        # rng expander reads operands 0 and 1 only (the declared shape rules), as StableHLO's does.
        return operands[:2] + [shape]
    if form == "common_element":
        return _common_element(lowering, operands)
    if form == "outfeed":
        if operands and isinstance(operands[0].type, TupleType):
            data = operands[0]
            return [implicit_get_tuple_element(lowering.block, data, i, inst.pos)
                    for i in range(len(data.type.types))] + operands[1:]
        return operands
    if form == "all_to_all":  # the array form; the tuple form is tuple_all_to_all
        return operands
    if form == "topk":
        if attributes.get("largest", True):
            return operands
        # chlo.top_k takes the largest; the smallest of x are the largest of its order reversal
        # (see smallest_first), so the values come back reversed again after the op.
        return [order_reversal(lowering, operands[0], "reversed")]
    if form == "scan":
        raise ParseError(f"scan '{inst.name}': the HEAD-only scan opcode has no lowering in hlodbg; "
                         f"print the module with an XLA that expands it (JAX does)", inst.opcode_pos)
    raise ValueError(f"unknown operand form {form!r}")


def _common_element(lowering: InstructionLowering, operands: list[Value]) -> list[Value]:
    """dot and convolution operands of two element types (XLA takes bf16 x s8, f16 x f32, pred x
    f32...) converted to the more precise one, as XLA's HLO importer does (StableHLO's contractions
    take one element type); the result keeps its declared type."""
    elements = [v.type.element for v in operands if isinstance(v.type, TensorType)]
    if len(elements) != len(operands) or len(set(elements)) < 2:
        return operands
    common = max(elements, key=precision_rank)
    return [v if v.type.element == common else
            implicit(lowering, "stablehlo.convert", [v], TensorType(v.type.shape, common), {}, f"as{i}")
            for i, v in enumerate(operands)]


def precision_rank(element: Type) -> tuple:
    """XLA's HigherPrecisionType order: complex over real; among floats more exponent range, then
    more significand; then the wider type; signed integers over unsigned."""
    component = element.element if isinstance(element, ComplexType) else element
    if isinstance(component, FloatType):
        info = ml_dtypes.finfo(component.numpy_dtype)
        return (isinstance(element, ComplexType), int(info.maxexp), int(info.nmant), component.bit_width, False)
    width = getattr(component, "width", 0)
    signed = isinstance(component, IntegerType) and component.signedness != "unsigned" and width > 1
    return (False, -1, -1, width, signed)


def tuple_all_to_all(lowering: InstructionLowering, entry: "Opcode", operands: list[Value], attributes: dict,
                     result_type: Type, loc) -> Value:
    """The tuple form of all-to-all (N operands of one shape S, N processes per group; operand j
    goes to the group's j-th process, result j came from it) as StableHLO's all_to_all on the
    operands stacked into [N, *S], split and concatenated along that new dimension, then unstacked.
    The bridging reshapes, concatenate and slices are implicit; the all_to_all is marked
    `hlo.tuple_form` and the instruction's value is the packed tuple of the N pieces."""
    inst = lowering.inst
    shapes = {v.type for v in operands}
    if len(shapes) != 1 or not isinstance(operands[0].type, TensorType):
        raise ParseError(f"all-to-all '{inst.name}': the tuple form needs operands of one array shape, "
                         f"got {', '.join(str(v.type) for v in operands)}", inst.pos)
    piece = operands[0].type
    count = len(operands)
    if int(attributes["split_count"]) != count:
        raise ParseError(f"all-to-all '{inst.name}': the tuple form has {count} operands but its groups have "
                         f"{int(attributes['split_count'])} processes", inst.pos)
    row = TensorType((1, *piece.shape), piece.element)
    rows = [implicit(lowering, "stablehlo.reshape", [v], row, {}, f"row{i}") for i, v in enumerate(operands)]
    stacked_type = TensorType((count, *piece.shape), piece.element)
    stacked = implicit(lowering, "stablehlo.concatenate", rows, stacked_type,
                       {"dimension": IntegerAttr(0, IntegerType(64))}, "stacked")
    op = Operation("stablehlo.all_to_all", [stacked], [stacked_type], {**attributes, "hlo.tuple_form": UNIT},
                   location=loc, pos=inst.pos, result_names=[ssa_name(inst.name, "exchanged")])
    lowering.block.append(op)
    rank = len(piece.shape)
    pieces = []
    for j in range(count):
        sliced = implicit(lowering, "stablehlo.slice", [op.results[0]], row,
                          {"start_indices": DenseArray((j,) + (0,) * rank),
                           "limit_indices": DenseArray((j + 1, *piece.shape)),
                           "strides": DenseArray((1,) * (rank + 1))}, f"from{j}")
        pieces.append(implicit(lowering, "stablehlo.reshape", [sliced], piece, {}, f"{j}"))
    tuple_op = Operation("stablehlo.tuple", pieces, [result_type], {"hlo.packs_results": UNIT}, location=loc,
                         pos=inst.pos, result_names=[ssa_name(inst.name)])
    lowering.block.append(tuple_op)
    return tuple_op.results[0]


def order_reversal(lowering: InstructionLowering, value: Value, suffix: str) -> Value:
    """An implicit op reversing the order of `value`'s elements, its own inverse: negate for
    floats, bitwise not for integers (which, unlike negation, cannot overflow)."""
    t = value.type
    name = "stablehlo.negate" if isinstance(t, TensorType) and not isinstance(t.element, IntegerType) else "stablehlo.not"
    return implicit(lowering, name, [value], t, {}, suffix)


def smallest_first(lowering: InstructionLowering, op: Operation) -> list[Value]:
    """The results of a top_k that ran on an order-reversed operand (largest=false): the values
    reversed back, the indices as they are."""
    return [order_reversal(lowering, op.results[0], "values"), *op.results[1:]]


def _index_scalars(lowering: InstructionLowering, operands: list[Value], lead: int) -> list[Value]:
    """Legacy dynamic-(update-)slice: one rank-1 index vector instead of one scalar per dimension;
    split it into scalars (slice + reshape) since StableHLO takes scalars."""
    indices = operands[lead:]
    if len(indices) != 1 or not isinstance(indices[0].type, TensorType) or indices[0].type.rank != 1:
        return operands
    vector = indices[0]
    element = vector.type.element
    scalars = []
    for i in range(vector.type.shape[0] or 0):
        piece = implicit(lowering, "stablehlo.slice", [vector], TensorType((1,), element),
                         {"start_indices": DenseArray((i,)), "limit_indices": DenseArray((i + 1,)),
                          "strides": DenseArray((1,))}, f"index{i}")
        scalars.append(implicit(lowering, "stablehlo.reshape", [piece], TensorType((), element), {}, f"scalar{i}"))
    return operands[:lead] + scalars


def packed_result_types(entry: "Opcode", result_type: TupleType, operand_count: int) -> list[Type]:
    """The IR op's result types when the instruction's tuple shape packs them."""
    if entry.results == "async_pack":
        return list(result_type.types[operand_count:2 * operand_count])
    return tuple_leaves(result_type)


def pack_values(lowering: InstructionLowering, entry: "Opcode", op: Operation, result_type: TupleType,
                operands: list[Value], results: Optional[list[Value]] = None) -> Value:
    """Rebuild the instruction's tuple value from the op's results: a `stablehlo.tuple` named
    after the instruction marked `hlo.packs_results` (nested tuples inside it are implicit)."""
    inst = lowering.inst
    if entry.results == "async_pack":
        n = len(inst.operands)
        rest = [zeros_constant(lowering, t, f"context{i}") for i, t in enumerate(result_type.types[2 * n:])]
        elements = operands[:n] + list(op.results) + rest
    else:
        leaves = iter(results if results is not None else op.results)

        def build(t: Type, depth: int) -> Value:
            if not isinstance(t, TupleType):
                return next(leaves)
            parts = [build(e, depth + 1) for e in t.types]
            if depth == 0:
                return parts  # type: ignore[return-value]
            return implicit(lowering, "stablehlo.tuple", parts, t, {}, f"tuple{depth}")

        elements = build(result_type, 0)
    attrs = {"hlo.packs_results": UNIT}
    if entry.marker:
        attrs["hlo.opcode"] = entry.marker
    tuple_op = Operation("stablehlo.tuple", list(elements), [result_type], attrs, pos=inst.pos,
                         result_names=[ssa_name(inst.name)])
    tuple_op.location = op.location
    lowering.block.append(tuple_op)
    return tuple_op.results[0]


__all__ = ["implicit", "implicit_get_tuple_element", "lower_operands", "precision_rank", "smallest_first", "pack_values", "packed_result_types", "tuple_all_to_all"]
