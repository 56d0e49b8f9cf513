"""The layouts an XLA HLO module gives its values.

A module read from HLO text keeps every instruction's full shape, layout included, as the op's
`xla_shape` attribute (`f32[8,128]{1,0:T(8,128)}`), every parameter's as the entry argument's
`xla_shape` argument attribute, and the module line's `entry_computation_layout` raw text in the
module attribute `hlo.header` (../wt/_briefs/hlo_contract.md). This module reads them back: which
layout, if any, the text gave a value, located at the op (or function) the text belongs to.

A tuple-shaped instruction `(f32[4]{0}, (s32[]{}, u32[]{}))` that became an op with one result
per array gives result i the i-th array; a tuple value itself has no layout (tuples take no buffer).
"""
from __future__ import annotations

import re
from typing import Any, Optional

from ..ir.core import Function, Module, Operation, Value
from ..ir.types import TensorType
from ..ir.xla_shape_text import tuple_shape_elements
from .layout import Layout, LayoutError
from .layout_text import TextReader, read_layout_fields, read_shape_head

XLA_SHAPE = "xla_shape"
HEADER = "hlo.header"
ENTRY_LAYOUT = "entry_computation_layout"
_COMMENT = re.compile(r"/\*.*?\*/", re.S)


def split_tuple(text: str) -> Optional[list[str]]:
    """The top-level elements of a tuple shape's text `(a, (b, c), d)`; None when `text` is not a
    tuple shape. XLA's `/*index=5*/` comments in long tuples are left out."""
    text = _COMMENT.sub("", text).strip()
    if not text.startswith("("):
        return None
    if not text.endswith(")"):
        raise LayoutError(f"shape {text!r}: a tuple shape ends with ')'")
    return tuple_shape_elements(text)


def shape_layout(text: str, value: Value) -> Optional[Layout]:
    """The layout of array shape `text` (`bf16[8,128]{1,0:T(8,128)(2,1)}`) for `value`, None when
    the text gives no layout; LayoutError when the text does not describe `value`'s type or has
    a piece hlodbg does not model."""
    reader = TextReader(text.strip(), what="shape")
    dtype, dims = read_shape_head(reader)
    type = value.type
    if tuple(type.shape) != tuple(dims) or type.element.numpy_dtype != dtype:
        raise LayoutError(f"shape {text} does not describe {value.name or 'the value'} of type {type}")
    if not reader.peek("{"):
        if reader.at != len(reader.text):
            raise reader.error("a layout '{...}' or the end of the shape")
        return None
    reader.what = "layout"
    layout = Layout(*read_layout_fields(reader))
    if reader.at != len(reader.text):
        raise reader.error("the end of the shape")
    return layout


def _leaves(text: str) -> list[str]:
    """The array shapes of a (possibly nested) tuple shape's text, in order."""
    elements = split_tuple(text)
    if elements is None:
        return [text]
    return [leaf for element in elements for leaf in _leaves(element)]


def _element(text: str, index: int, count: int) -> Optional[str]:
    """Result `index` of `count`'s part of an op's shape text: the whole text for one result,
    else the index-th array of the tuple shape when the op has one result per array (the
    lowering gives a tuple-shaped instruction's arrays as results); None otherwise."""
    if count == 1:
        return None if split_tuple(text) is not None else text
    leaves = _leaves(text)
    return leaves[index] if len(leaves) == count else None


def _located(error: LayoutError, what: str, pos: Any) -> LayoutError:
    return LayoutError(f"{what}: {error.message}", pos=pos)


def given_shape(value: Value) -> Optional[tuple[str, Any, str]]:
    """(shape text, position, what gave it) of the shape the HLO text gave `value`, or None: the
    `xla_shape` of its op (its part of a tuple shape), or the argument attribute of a function's
    parameter."""
    owner = value.owner
    if isinstance(owner, Operation):
        text = owner.attributes.get(XLA_SHAPE)
        if text is None:
            return None
        try:
            part = _element(str(text), value.index, len(owner.results))
        except LayoutError as error:  # a tuple shape's text that does not end
            raise _located(error, f"xla_shape of {_op_label(owner)}", owner.pos) from None
        return (part, owner.pos, f"xla_shape of {_op_label(owner)}") if part is not None else None
    function = _function_of_argument(value)
    if function is None:
        return None
    text = function.arg_attrs(value.index).get(XLA_SHAPE)
    if text is None or split_tuple(str(text)) is not None:
        return None
    what = f"xla_shape of parameter {value.name or value.index} of @{function.sym_name}"
    return str(text), getattr(value, "pos", None) or function.pos, what


def given_layout(value: Value) -> Optional[Layout]:
    """The layout the HLO text gave statically shaped tensor `value` (None when it gave none), or
    a LayoutError located at the instruction or parameter."""
    if not isinstance(value.type, TensorType) or not value.type.is_static:
        return None
    given = given_shape(value)
    if given is None:
        return None
    text, pos, what = given
    try:
        return shape_layout(text, value)
    except LayoutError as error:
        raise _located(error, what, pos) from None


def layout_text_of(value: Value) -> Optional[str]:
    """The layout text the HLO text gave `value` as written (`{1,0:T(8,128)}`), unread: what a
    machine that ignores layouts (the CPU) shows. None when there is none or it cannot be told."""
    try:
        given = given_shape(value)
    except LayoutError:
        return None
    if given is None:
        return None
    text = given[0]
    dims_end = text.find("]")
    layout = text[dims_end + 1:].strip() if dims_end >= 0 else ""
    return layout if layout.startswith("{") else None


def entry_layouts(module: Module, entry: Function) -> tuple[list[Optional[str]], list[Optional[str]]]:
    """(parameter shape texts, result shape texts) of the module's `entry_computation_layout`, or
    two empty lists when the module has none. A tuple result gives one text per returned value
    (the entry function returns a tuple root's elements)."""
    header = module.attributes.get(HEADER)
    text = header.get(ENTRY_LAYOUT) if isinstance(header, dict) else None
    if text is None:
        return [], []
    body = _COMMENT.sub("", str(text)).strip()
    if body.startswith("{") and body.endswith("}"):
        body = body[1:-1].strip()
    depth, arrow = 0, -1
    for i, ch in enumerate(body):
        depth += ch in "([{"
        depth -= ch in ")]}"
        if depth == 0 and body.startswith("->", i):
            arrow = i
            break
    parameters = split_tuple(body[:arrow]) if arrow > 0 else None
    if parameters is None:
        raise LayoutError(f"{ENTRY_LAYOUT} {text}: expected {{(parameter shapes)->result shape}}", pos=entry.pos)
    result = body[arrow + 2:].strip()
    results = split_tuple(result)
    returned = len(entry.body.terminator.operands) if entry.body.terminator is not None else 0
    if results is None or (returned == 1 and len(results) != 1):
        results = [result]
    return parameters, results


def _function_of_argument(value: Value) -> Optional[Function]:
    block = value.owner
    region = getattr(block, "parent", None)
    function = getattr(region, "parent", None)
    return function if isinstance(function, Function) and block is function.body else None


def _op_label(op: Operation) -> str:
    name = op.results[0].name if op.results and op.results[0].name else ""
    return f"{name} ({op.name})" if name else op.name


__all__ = ["ENTRY_LAYOUT", "HEADER", "XLA_SHAPE", "entry_layouts", "given_layout", "given_shape", "layout_text_of",
           "shape_layout",
           "split_tuple"]
