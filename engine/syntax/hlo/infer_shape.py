"""The shape of an instruction written without one (`%s = add(%a, %b)`): XLA's parser infers the
shapes of the opcodes `CanInferShape` lists (openxla/xla xla/hlo/parser/hlo_parser.cc) from the
operands, the attributes and the called computations, and refuses the others (constant, parameter,
reshape, convert, iota, custom-call, fusion, the collectives, ... whose result the text must say).

`infer_result_type` does the same from the IR values of the operands, the op's IR attributes (the
opcode table's adapters already read them) and its regions or callee. The rules follow XLA's
ShapeInference (the element type of a reduce comes from its computation, a broadcast's inferred shape
prepends `dimensions` to the operand's, as InferBroadcastShape(operand, sizes) does). Opcodes XLA
infers that hlodbg does not (gather, convolution, fft, ...) and opcodes XLA cannot infer either get a
located error asking for the shape.
"""
from __future__ import annotations

from typing import Callable, Optional

import numpy as np

from ...ir.core import Region, Value
from ...ir.errors import ParseError, SourcePos
from ...ir.opset import ELEMENT_TYPES, NO_HLO, OpDef, when_defined
from ...ir.types import ComplexType, IntegerType, TensorType, TokenType, TupleType, Type
from .forms import precision_rank
from .ir_types import HLO_NAMES
from .tree import HloShape

# XLA infers these too, but from attributes hlodbg would have to model twice: their text keeps the shape.
_XLA_ONLY = ("batch-norm-grad batch-norm-inference batch-norm-training fft gather "
             "ragged-dot scaled-dot scan topk").split()


def _tensor(v: Value, what: str) -> TensorType:
    t = v.type
    if not isinstance(t, TensorType) or t.shape is None:
        raise ValueError(f"{what} must be a ranked array, got {t}")
    return t


def _same(values, attrs, regions, callee) -> Type:
    return values[0].type


def _predicate(values, attrs, regions, callee) -> Type:
    t = _tensor(values[0], "the operand")
    return TensorType(t.shape, IntegerType(1))


def _real(values, attrs, regions, callee) -> Type:
    t = _tensor(values[0], "the operand")
    return TensorType(t.shape, t.element.element if isinstance(t.element, ComplexType) else t.element)


def _complex(values, attrs, regions, callee) -> Type:
    t = _tensor(values[0], "the real part")
    return TensorType(t.shape, ComplexType(t.element))


def _operand(index: int):
    return lambda values, attrs, regions, callee: values[index].type


def _tuple(values, attrs, regions, callee) -> Type:
    return TupleType(tuple(v.type for v in values))


def _element(values, attrs, regions, callee) -> Type:
    t = values[0].type
    index = int(attrs["index"])
    if not isinstance(t, TupleType) or not 0 <= index < len(t.types):
        raise ValueError(f"index {index} is not an element of {t}")
    return t.types[index]


def _scalar(element: Type):
    return lambda values, attrs, regions, callee: TensorType((), element)


def _broadcast(values, attrs, regions, callee) -> Type:
    # InferBroadcastShape(operand, sizes): the sizes, then the operand's dimensions.
    t = _tensor(values[0], "the operand")
    return TensorType(tuple(int(d) for d in attrs.get("broadcast_dimensions", ())) + tuple(t.shape), t.element)


def _transpose(values, attrs, regions, callee) -> Type:
    t = _tensor(values[0], "the operand")
    return TensorType(tuple(t.shape[int(p)] for p in attrs["permutation"]), t.element)


def _concatenate(values, attrs, regions, callee) -> Type:
    dim = int(attrs["dimension"])
    shapes = [_tensor(v, "each operand").shape for v in values]
    total = sum(s[dim] for s in shapes)
    return TensorType(shapes[0][:dim] + (total,) + shapes[0][dim + 1:], values[0].type.element)


def _pad(values, attrs, regions, callee) -> Type:
    t = _tensor(values[0], "the operand")
    dims = tuple(lo + hi + d + max(d - 1, 0) * inner for d, lo, hi, inner in
                 zip(t.shape, attrs["edge_padding_low"], attrs["edge_padding_high"], attrs["interior_padding"]))
    return TensorType(dims, t.element)


def _dot(values, attrs, regions, callee) -> Type:
    lhs, rhs = _tensor(values[0], "lhs"), _tensor(values[1], "rhs")
    dn = attrs["dot_dimension_numbers"]
    lb, rb = dn.lhs_batching_dimensions, dn.rhs_batching_dimensions
    lc, rc = dn.lhs_contracting_dimensions, dn.rhs_contracting_dimensions
    if lhs.element != rhs.element:
        raise ValueError(f"lhs and rhs have element types {lhs.element} and {rhs.element}; write the result's")
    dims = ([lhs.shape[d] for d in lb] + [d for i, d in enumerate(lhs.shape) if i not in lb and i not in lc]
            + [d for i, d in enumerate(rhs.shape) if i not in rb and i not in rc])
    return TensorType(tuple(dims), lhs.element)


def _returned(region: Region) -> list[Type]:
    return [v.type for v in region.block.terminator.operands]


def _reduce(values, attrs, regions, callee) -> Type:
    inputs = values[:len(values) // 2]
    dims = {int(d) for d in attrs["dimensions"]}
    shape = tuple(d for i, d in enumerate(_tensor(inputs[0], "the input").shape) if i not in dims)
    return _one_or_tuple([TensorType(shape, t.element) for t in _returned(regions[0])])


def _reduce_window(values, attrs, regions, callee) -> Type:
    # Each window gives one element: (padded size - dilated window) / stride + 1 per dimension.
    inputs = values[:len(values) // 2]
    shape = _tensor(inputs[0], "the input").shape
    rank = len(shape)
    sizes = list(attrs["window_dimensions"])
    strides = list(attrs.get("window_strides") or (1,) * rank)
    base = list(attrs.get("base_dilations") or (1,) * rank)
    window = list(attrs.get("window_dilations") or (1,) * rank)
    padding = attrs.get("padding")
    pads = ([(int(lo), int(hi)) for lo, hi in np.asarray(padding.array).reshape(-1, 2)] if padding is not None
            else [(0, 0)] * rank)
    dims = [_window_count(d, size, stride, b, w, lo, hi)
            for d, size, stride, b, w, (lo, hi) in zip(shape, sizes, strides, base, window, pads)]
    return _one_or_tuple([TensorType(tuple(dims), t.element) for t in _returned(regions[0])])


def _window_count(size: int, window: int, stride: int, base_dilation: int, window_dilation: int,
                  low: int, high: int) -> int:
    """How many windows fit a dimension: (padded size - dilated window) / stride + 1."""
    padded = (size - 1) * int(base_dilation) + 1 + low + high if size else low + high
    dilated = (int(window) - 1) * int(window_dilation) + 1
    return max(0, (padded - dilated) // int(stride) + 1) if padded >= dilated else 0


def _convolution(values, attrs, regions, callee) -> Type:
    """XLA's InferConvolveShape: batch / batch_group_count, the kernel's output features, and a
    window count per spatial dimension; the element type is the operands' more precise one."""
    lhs, rhs = _tensor(values[0], "lhs"), _tensor(values[1], "rhs")
    dn = attrs["dimension_numbers"]
    spatial = len(dn.input_spatial_dimensions)
    strides = list(attrs.get("window_strides") or (1,) * spatial)
    lhs_dil = list(attrs.get("lhs_dilation") or (1,) * spatial)
    rhs_dil = list(attrs.get("rhs_dilation") or (1,) * spatial)
    padding = attrs.get("padding")
    pads = ([(int(lo), int(hi)) for lo, hi in np.asarray(padding.array).reshape(-1, 2)] if padding is not None
            else [(0, 0)] * spatial)
    dims = [0] * len(lhs.shape)
    dims[dn.output_batch_dimension] = lhs.shape[dn.input_batch_dimension] // int(attrs.get("batch_group_count", 1))
    dims[dn.output_feature_dimension] = rhs.shape[dn.kernel_output_feature_dimension]
    for s in range(spatial):
        dims[dn.output_spatial_dimensions[s]] = _window_count(
            lhs.shape[dn.input_spatial_dimensions[s]], rhs.shape[dn.kernel_spatial_dimensions[s]], strides[s],
            lhs_dil[s], rhs_dil[s], *pads[s])
    return TensorType(tuple(dims), max((lhs.element, rhs.element), key=precision_rank))


def _map(values, attrs, regions, callee) -> Type:
    (returned,) = _returned(regions[0])
    return TensorType(_tensor(values[0], "the operand").shape, returned.element)


def _operands(values, attrs, regions, callee) -> Type:
    return _one_or_tuple([v.type for v in values])


def _scatter(values, attrs, regions, callee) -> Type:
    return _one_or_tuple([v.type for v in values[:(len(values) - 1) // 2]])


def _first_region(values, attrs, regions, callee) -> Type:
    return _returned(regions[0])[0]


def _callee(values, attrs, regions, callee) -> Type:
    if callee is None:
        raise ValueError("the called computation is not lowered yet")
    return callee


def _one_or_tuple(types: list[Type]) -> Type:
    return types[0] if len(types) == 1 else TupleType(tuple(types))


Rule = Callable[..., Type]
RULES: dict[str, Rule] = {
    # (The element-wise ops with a shared type rule are added from their definitions below.)
    **{name: _same for name in (
        "abs erf acos acosh asin asinh atan atanh cosh sinh copy domain add-dependency opt-barrier reverse cholesky "
        "set-dimension-size select-and-scatter while").split()},
    "real": _real, "imag": _real, "complex": _complex, "is-finite": _predicate, "compare": _predicate,
    "select": _operand(1), "clamp": _operand(1), "triangular-solve": _operand(1),
    "tuple": _tuple, "get-tuple-element": _element,
    "replica-id": _scalar(IntegerType(32, "unsigned")), "partition-id": _scalar(IntegerType(32, "unsigned")),
    "get-dimension-size": _scalar(IntegerType(32)),
    "after-all": lambda values, attrs, regions, callee: TokenType(),
    "broadcast": _broadcast, "transpose": _transpose, "concatenate": _concatenate, "pad": _pad, "dot": _dot,
    "convolution": _convolution,
    "reduce": _reduce, "reduce-window": _reduce_window, "map": _map, "sort": _operands, "scatter": _scatter,
    "conditional": _first_region, "call": _callee,
}


def _same_type_rule(opdef: OpDef) -> None:
    """An element-wise op under a shared type rule (OpDef.types) has its operands' type."""
    if opdef.types in ELEMENT_TYPES and opdef.hlo not in (None, NO_HLO):
        RULES.setdefault(opdef.hlo, _same)


when_defined(_same_type_rule)


def infer_result_type(opcode: str, name: str, operands: list[Value], attrs: dict, regions: list[Region],
                      callee: Optional[Type], pos: SourcePos) -> Type:
    """The result type of an instruction written without a shape, or a located error saying why
    the text must give it."""
    rule = RULES.get(opcode)
    if rule is None:
        why = ("hlodbg does not infer it (XLA does); write the shape before the opcode" if opcode in _XLA_ONLY
               else "XLA cannot infer it either: write the shape before the opcode")
        raise ParseError(f"{opcode} '{name}' has no shape, and {why}", pos)
    if not operands and opcode not in ("after-all", "replica-id", "partition-id", "tuple", "call"):
        raise ParseError(f"{opcode} '{name}' has no shape and no operands to infer it from", pos)
    try:
        return rule(operands, attrs, regions, callee)
    except (ValueError, KeyError, IndexError, TypeError, AttributeError) as e:
        detail = e.args[0] if isinstance(e, ValueError) and e.args else f"missing or bad {e}"
        raise ParseError(f"{opcode} '{name}' has no shape and hlodbg cannot infer it: {detail}", pos) from None


def shape_of_type(t: Type, pos: SourcePos) -> HloShape:
    """The HloShape of an inferred IR type (no layout: XLA gives inferred shapes the default one)."""
    if isinstance(t, TupleType):
        return HloShape(None, elements=tuple(shape_of_type(e, pos) for e in t.types), pos=pos)
    if isinstance(t, TokenType):
        return HloShape("token", pos=pos)
    return HloShape(HLO_NAMES[t.element], tuple(t.shape), (False,) * len(t.shape), pos=pos)


__all__ = ["RULES", "infer_result_type", "shape_of_type"]
