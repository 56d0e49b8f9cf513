"""Shapes XLA's parser infers when the text omits them (../shared/docs/hlo_text.md §3: "Shape may
be omitted for ops whose shape can be inferred"), as in hand-written modules and XLA's own tests:
`ROOT r = add(f32[10] parameter(0), multiply(a, b))`.

Inferred: element-wise ops, compare, select, clamp, complex, tuple, get-tuple-element (its index),
dot (its dimension numbers), while (its operand), call, fusion, conditional and map (the called
computation's root); any other opcode still needs its shape written, and the parser says so. An
inferred shape has no layout, like a written one without braces.
"""
from __future__ import annotations

from typing import Optional

from .attr_values import decode
from .tree import HloAttr, HloComputation, HloShape

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


# Ops whose result is the root of the computation they call: (attribute naming it).
_CALLED_ROOT = {"call": "to_apply", "fusion": "calls", "conditional": None}
_DOT_DIMS = ("lhs_batch_dims", "lhs_contracting_dims", "rhs_batch_dims", "rhs_contracting_dims")


def infer_shape(opcode: str, operands: list[HloShape], attrs: Optional[dict[str, HloAttr]] = None,
                computations: Optional[dict[str, HloComputation]] = None) -> Optional[HloShape]:
    """The shape XLA infers for `opcode` applied to `operands` (with its attributes and the
    computations parsed so far), or None when it needs writing."""
    attrs = attrs or {}
    if opcode in _CALLED_ROOT or opcode == "map":
        root = _called_root(opcode, attrs, computations or {})
        if root is None:
            return None
        if opcode == "map":  # the mapped computation's element over the operands' dims
            return _array(operands[0], root.element) if operands and not root.is_tuple else None
        return _bare(root)
    if opcode == "dot" and len(operands) == 2:
        return _dot(operands[0], operands[1], attrs)
    index = None
    if "index" in attrs and attrs["index"].text.strip().isdigit():
        index = int(attrs["index"].text)
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
    if opcode in _LIKE_FIRST_OPERAND or opcode in _COMPONENT_OF_COMPLEX or opcode == "while":
        return _bare(first)
    if opcode in _LIKE_SECOND_OPERAND and len(operands) > 1:
        return _bare(operands[1])
    if opcode in _PREDICATES:
        return _array(first, "pred")
    if opcode == "complex" and first.element in _COMPLEX_OF:
        return _array(first, _COMPLEX_OF[first.element])
    return None


def _called_root(opcode: str, attrs: dict[str, HloAttr], computations: dict[str, HloComputation]):
    """The root shape of the computation the op calls (a conditional's first branch)."""
    if opcode == "conditional":
        if "branch_computations" in attrs:
            names = decode(attrs["branch_computations"], "computation_list")
            name = names[0] if names else None
        else:
            name = decode(attrs["true_computation"], "computation") if "true_computation" in attrs else None
    else:
        attr = attrs.get(_CALLED_ROOT.get(opcode) or "to_apply")
        name = decode(attr, "computation") if attr is not None else None
    computation = computations.get(str(name)) if name is not None else None
    return computation.root.shape if computation is not None else None


def _dot(lhs: HloShape, rhs: HloShape, attrs: dict[str, HloAttr]) -> Optional[HloShape]:
    """Batch dims, then the lhs's free dims, then the rhs's (XLA's dot shape inference)."""
    if lhs.is_tuple or rhs.is_tuple:
        return None
    lb, lc, rb, rc = (list(decode(attrs[n], "int_list")) if n in attrs else [] for n in _DOT_DIMS)
    dims = [lhs.dims[d] for d in lb]
    dims += [d for i, d in enumerate(lhs.dims) if i not in lb and i not in lc]
    dims += [d for i, d in enumerate(rhs.dims) if i not in rb and i not in rc]
    return HloShape(lhs.element, tuple(dims), (False,) * len(dims))


def _array(like: HloShape, element: str) -> HloShape:
    return HloShape(element, like.dims, like.bounded)


def _bare(shape: HloShape) -> HloShape:
    """The shape without its layout (XLA's inferred shapes take the default layout)."""
    if shape.is_tuple:
        return HloShape(None, elements=tuple(_bare(e) for e in shape.elements))
    return HloShape(shape.element, shape.dims, shape.bounded)
