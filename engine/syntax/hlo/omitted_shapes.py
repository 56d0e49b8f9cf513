"""Shapes XLA's parser infers when the text omits them (../shared/docs/hlo_text.md §3: "Shape may
be omitted for ops whose shape can be inferred"), as in hand-written modules and XLA's own tests:
`ROOT r = add(f32[10] parameter(0), multiply(a, b))`.

Only opcodes whose result follows from the operands' shapes alone (and get-tuple-element's index)
are inferred here; any other opcode still needs its shape written, and the parser says so. An
inferred shape has no layout, like a written one without braces.
"""
from __future__ import annotations

from typing import Optional

from .tree import HloShape

# Result = the first operand's shape (element-wise ops, and ops that pass a value through).
_LIKE_FIRST_OPERAND = frozenset("""
    abs negate sign sqrt rsqrt cbrt exponential exponential-minus-one log log-plus-one logistic
    tanh tan sine cosine erf floor ceil round-nearest-afz round-nearest-even not popcnt
    count-leading-zeros copy reduce-precision opt-barrier add-dependency
    add subtract multiply divide remainder power atan2 maximum minimum and or xor
    shift-left shift-right-arithmetic shift-right-logical
""".split())
# Result = the second operand's shape: select(pred, on_true, on_false), clamp(min, x, max).
_LIKE_SECOND_OPERAND = frozenset({"select", "clamp"})
# Result = the operand's dims with a boolean element.
_PREDICATES = frozenset({"compare", "is-finite"})
# Complex in, the component type out (real in: the same type).
_COMPONENT_OF_COMPLEX = {"real", "imag", "abs"}
_COMPONENT = {"c64": "f32", "c128": "f64"}
_COMPLEX_OF = {"f32": "c64", "f64": "c128"}


def infer_shape(opcode: str, operands: list[HloShape], index: Optional[int] = None) -> Optional[HloShape]:
    """The shape XLA infers for `opcode` applied to `operands`, or None when it needs writing.
    `index` is get-tuple-element's `index=` attribute."""
    if opcode == "tuple":
        return HloShape(None, elements=tuple(_bare(s) for s in operands))
    if not operands:
        return None
    first = operands[0]
    if opcode == "get-tuple-element":
        if not first.is_tuple or index is None or not 0 <= index < len(first.elements):
            return None
        return _bare(first.elements[index])
    if first.is_tuple and opcode not in ("opt-barrier", "copy", "add-dependency"):
        return None
    if opcode in _COMPONENT_OF_COMPLEX and first.element in _COMPONENT:
        return _array(first, _COMPONENT[first.element])
    if opcode in _LIKE_FIRST_OPERAND or opcode in _COMPONENT_OF_COMPLEX:
        return _bare(first)
    if opcode in _LIKE_SECOND_OPERAND and len(operands) > 1:
        return _bare(operands[1])
    if opcode in _PREDICATES:
        return _array(first, "pred")
    if opcode == "complex" and first.element in _COMPLEX_OF:
        return _array(first, _COMPLEX_OF[first.element])
    return None


def _array(like: HloShape, element: str) -> HloShape:
    return HloShape(element, like.dims, like.bounded)


def _bare(shape: HloShape) -> HloShape:
    """The shape without its layout (XLA's inferred shapes take the default layout)."""
    if shape.is_tuple:
        return HloShape(None, elements=tuple(_bare(e) for e in shape.elements))
    return HloShape(shape.element, shape.dims, shape.bounded)
