"""HLO shapes as IR types and back: `f32[2,3]{1,0}` is `tensor<2x3xf32>`, `(f32[], s32[])` a
TupleType, `token[]` the token type, `pred` is `i1`, `s8`/`u8` are `i8`/`ui8`, `c64` is
`complex<f32>`. Bounded dims `<=N` become `?` with the bound in `#stablehlo.type_extensions`, as
StableHLO spells bounded dynamism. Layouts are not part of the IR type; the lowering keeps the
shape's full text in `xla_shape`.
"""
from __future__ import annotations

from typing import Optional

from ...ir.attributes import TypeExtensions
from ...ir.errors import ParseError, SourcePos
from ...ir.types import ComplexType, FloatType, IntegerType, TensorType, TokenType, TupleType, Type
from .tree import HloShape

_FLOATS = {
    "f16": "f16", "bf16": "bf16", "f32": "f32", "f64": "f64",
    "f4e2m1fn": "f4E2M1FN", "f8e3m4": "f8E3M4", "f8e4m3": "f8E4M3", "f8e4m3fn": "f8E4M3FN",
    "f8e4m3b11fnuz": "f8E4M3B11FNUZ", "f8e4m3fnuz": "f8E4M3FNUZ", "f8e5m2": "f8E5M2",
    "f8e5m2fnuz": "f8E5M2FNUZ", "f8e8m0fnu": "f8E8M0FNU",
}
_INT_WIDTHS = (1, 2, 4, 8, 16, 32, 64)

# One table both ways: XLA's element type name -> IR element type.
ELEMENT_TYPES: dict[str, Type] = {
    "pred": IntegerType(1),
    **{f"s{w}": IntegerType(w) for w in _INT_WIDTHS if w > 1},
    **{f"u{w}": IntegerType(w, "unsigned") for w in _INT_WIDTHS if w > 1},
    **{hlo: FloatType(mlir) for hlo, mlir in _FLOATS.items()},
    "c64": ComplexType(FloatType("f32")),
    "c128": ComplexType(FloatType("f64")),
}
HLO_NAMES: dict[Type, str] = {t: name for name, t in ELEMENT_TYPES.items()}


def ir_type(shape: HloShape, pos: Optional[SourcePos] = None) -> Type:
    """The IR type of an HLO shape; a located ParseError for element types the IR cannot hold."""
    if shape.elements is not None:
        return TupleType(tuple(ir_type(e, pos) for e in shape.elements))
    if shape.element == "token":
        return TokenType()
    element = ELEMENT_TYPES.get(shape.element or "")
    if element is None:
        known = ", ".join(["token", *ELEMENT_TYPES])
        raise ParseError(f"element type '{shape.element}' has no IR counterpart (expected one of: {known})",
                         shape.pos or pos)
    bounded = shape.bounded or (False,) * len(shape.dims)
    if any(bounded):
        bounds = tuple(d if b else None for d, b in zip(shape.dims, bounded))
        dims = tuple(None if b else d for d, b in zip(shape.dims, bounded))
        return TensorType(dims, element, TypeExtensions(bounds=bounds))
    return TensorType(tuple(shape.dims), element)


def hlo_shape_text(t: Type) -> str:
    """The HLO spelling of an IR type, without layout (`f32[2,3]`, `(s32[], token[])`)."""
    if isinstance(t, TupleType):
        return "(" + ", ".join(hlo_shape_text(e) for e in t.types) + ")"
    if isinstance(t, TokenType):
        return "token[]"
    if isinstance(t, TensorType) and t.shape is not None and t.element in HLO_NAMES:
        bounds = t.encoding.bounds if isinstance(t.encoding, TypeExtensions) else (None,) * len(t.shape)
        dims = []
        for d, bound in zip(t.shape, bounds):
            dims.append(f"<={bound}" if bound is not None else ("?" if d is None else str(d)))
        return f"{HLO_NAMES[t.element]}[{','.join(dims)}]"
    raise ValueError(f"type {t} has no HLO spelling")


def ssa_name(name: str, part: object = None) -> str:
    """The IR name of an HLO value: `%name` as the MLIR frontend names values (the debugger,
    expressions and printers read names so), and `%name#part` for a part of it (a packed op's
    result i, a bridging op's value), MLIR's spelling of result i, which no HLO name can clash
    with (HLO names have no `#`)."""
    return f"%{name}" if part is None else f"%{name}#{part}"


def tuple_leaves(t: Type) -> list[Type]:
    """A tuple type's non-tuple elements, depth first (a non-tuple is its own single leaf)."""
    if isinstance(t, TupleType):
        return [leaf for e in t.types for leaf in tuple_leaves(e)]
    return [t]


__all__ = ["ELEMENT_TYPES", "HLO_NAMES", "hlo_shape_text", "ir_type", "ssa_name", "tuple_leaves"]
