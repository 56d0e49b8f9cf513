"""A graph node's attributes, with the costly ones made on first read.

A 100k-op program has 150k nodes, and a scene shows a few dozen of them: spelling every op's
label, location and result names up front took most of the graph's build time. NodeData is a
plain dict whose "label", "location", "name" and "line" are computed from the node's op (or
block argument) when first read and then kept, so code reading node data (`data["label"]`,
`data.get("location")`, `dict(data)`, `{**data}`) sees an ordinary dict.
"""
from __future__ import annotations

from typing import Any, Callable, Optional

from hlodbg.engine.ir.core import Operation, Value
from hlodbg.engine.ir.locations import describe

from .labels import argument_label, op_label, result_names, short_type
from .xla_shapes import SHAPE_ATTRIBUTE, value_layout


def _line_of(item: Any) -> Optional[int]:
    return item.pos.line if item is not None and item.pos is not None else None


def _source(data: dict) -> Any:
    """The op the node draws, else its block argument."""
    op = dict.get(data, "op")
    return op if op is not None else dict.get(data, "value")


_LAZY: dict[str, Callable[[dict], Any]] = {
    "label": lambda d: op_label(s) if isinstance(s := _source(d), Operation) else argument_label(s),
    "location": lambda d: describe(_source(d).location),
    "name": lambda d: result_names(s) if isinstance(s := _source(d), Operation) else s.name,
    "line": lambda d: _line_of(_source(d)),
}


class NodeData(dict):
    """Node attributes; see the module docstring. Give it "op" (or "value" for a block argument)
    and leave out any of the lazy keys to have them made on first read."""

    __slots__ = ()

    def __missing__(self, key: str) -> Any:
        make = _LAZY.get(key)
        if make is None:
            raise KeyError(key)
        value = self[key] = make(self)
        return value

    def get(self, key: str, default: Any = None) -> Any:
        if dict.__contains__(self, key):
            return dict.__getitem__(self, key)
        return self[key] if key in _LAZY else default

    def __contains__(self, key: object) -> bool:
        return dict.__contains__(self, key) or key in _LAZY

    def _complete(self) -> None:
        for key in _LAZY:
            if not dict.__contains__(self, key):
                self[key]

    # Reading the whole dict (copies, `**data`, iteration) makes every lazy attribute first.
    def __iter__(self):
        self._complete()
        return dict.__iter__(self)

    def keys(self):
        self._complete()
        return dict.keys(self)

    def items(self):
        self._complete()
        return dict.items(self)

    def values(self):
        self._complete()
        return dict.values(self)

    def __len__(self) -> int:
        self._complete()
        return dict.__len__(self)

    def copy(self) -> "NodeData":
        self._complete()
        return NodeData(dict.items(self))

    def __repr__(self) -> str:
        self._complete()
        return dict.__repr__(self)


def edge_type_label(value: Value, texts: dict[int, str]) -> str:
    """`4x16xf32`, with XLA's layout when it is not the default one: `{0,1}`, `T(8,128)`.
    `texts` keeps each type's text by id (a program has a few types and 100,000s of edges):
    the caller keeps the types alive as long as it."""
    type_ = value.type
    text = texts.get(id(type_))
    if text is None:
        text = texts[id(type_)] = short_type(type_)
    producer = value.defining_op
    if producer is not None and SHAPE_ATTRIBUTE not in producer.attributes:
        return text  # no HLO shape given, so no layout to show
    layout = value_layout(value)
    return text + layout if layout else text


__all__ = ["NodeData", "edge_type_label"]
