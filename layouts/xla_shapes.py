"""The layouts XLA chose, as the graph and the inspector show them.

A program read from XLA HLO text keeps each instruction's full shape as the op attribute
`xla_shape` (`f32[4,16]{0,1}`, `(f32[8]{0}, s32[])`, `bf16[8,128]{1,0:T(8,128)(2,1)}`) and each
entry parameter's as the argument attribute of the same name. Only a layout that is not the
default (`{rank-1,...,1,0}` with nothing after it) says something a reader did not already know,
so that is what edges are labelled with; the inspector shows the shape whatever its layout.
"""
from __future__ import annotations

from typing import Optional

from hlodbg.engine.ir.core import Block, Function, Value
from hlodbg.engine.ir.xla_shape_text import tuple_shape_elements
from hlodbg.engine.machine.layout import Layout, LayoutError, parse_shape

SHAPE_ATTRIBUTE = "xla_shape"


def tuple_elements(text: str) -> list[str]:
    """The top-level elements of a tuple shape text `(a, (b, c), d)`; `[text]` for an array."""
    text = text.strip()
    if not (text.startswith("(") and text.endswith(")")):
        return [text]
    return tuple_shape_elements(text)


def shape_text_of(value: Value) -> Optional[str]:
    """The HLO shape text given for `value`: its producer's (the k-th element of a producer of
    several results), or its function argument's; None when the program gave none."""
    producer = value.defining_op
    if producer is not None:
        text = producer.attributes.get(SHAPE_ATTRIBUTE)
        if text is None:
            return None
        if len(producer.results) == 1:
            return str(text)
        elements = tuple_elements(str(text))
        return elements[value.index] if len(elements) == len(producer.results) else None
    block = value.owner
    region = block.parent if isinstance(block, Block) else None
    function = region.parent if region is not None else None
    if isinstance(function, Function) and function.body is block:
        text = function.arg_attrs(value.index).get(SHAPE_ATTRIBUTE)
        return str(text) if text is not None else None
    return None


def layout_text(shape: str) -> Optional[str]:
    """The `{...}` layout written after an array shape's dims, None for tuples and bare shapes."""
    shape = shape.strip()
    close = shape.find("]")
    if shape.startswith("(") or close < 0 or not shape[close + 1:].startswith("{"):
        return None
    return shape[close + 1:]


def special_layout(shape: str) -> Optional[str]:
    """The layout of an array shape when it is not the default one (a transposed minor-to-major
    order, tiles, a memory space...), else None."""
    layout = layout_text(shape)
    if layout is None:
        return None
    try:
        _dtype, dims, parsed = parse_shape(shape)
    except LayoutError:
        return layout  # a layout hlodbg does not model is worth showing as written
    if parsed is None or len(dims) == 0 or parsed == Layout.row_major(len(dims)):
        return None
    return layout


def value_layout(value: Value) -> Optional[str]:
    """The non-default layout XLA gave `value`, or None."""
    shape = shape_text_of(value)
    return special_layout(shape) if shape is not None else None


__all__ = ["SHAPE_ATTRIBUTE", "layout_text", "shape_text_of", "special_layout", "tuple_elements", "value_layout"]
