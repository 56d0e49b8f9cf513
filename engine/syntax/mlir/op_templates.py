"""Repeated op forms: an op whose text, SSA names aside, has been read before is built again from
what the full parse of that text gave, without reading its attributes and types a second time.

Programs JAX exports repeat themselves: a 12-layer transformer spells
`stablehlo.broadcast_in_dim %x, dims = [0, 1] : (tensor<16xf32>) -> tensor<16x64xf32>` hundreds of
times with different value names. The parser reads one such line through the op's format; the
result (op name, the operand types it checked, result types, attributes with defaults filled in)
becomes the template of the line's *shape*, the text with every `%name` replaced by `%`. A later
line of the same shape needs only its operands looked up and their types compared.

The cache serves only what it can reproduce exactly, and anything else takes the full parse,
which also gives every error message:
- one-line ops without regions, strings or attribute dictionaries (no `"`, `{`, `//`), whose
  full parse ended at the end of the line (or at its `loc(...)`), with the next line starting a
  new op, so no format could have read on into it;
- whose `%names` appear in the text in operand order;
- whose attributes are immutable values (they are shared by the ops built from one template);
- and whose operands have, this time too, the types the template checked.
"""
from __future__ import annotations

import re
from typing import Any, Optional

from ...ir import attributes as A
from ...ir.core import Operation, Value
from ...ir.types import Type
from .lexer import VALUE_ID

_NAME_SPLIT = re.compile(f"({VALUE_ID.pattern})")

# What may follow an op's line when nothing on the line says the op has ended: the start of the
# next op, a block label, the end of the region, a comment, an alias definition, the end of text.
_NEXT_LINE = re.compile(r"[ \t\r\n]*(?:([%}^\"#]|//|$)|([A-Za-z_][A-Za-z0-9_$.\-]*))")
_UNSUITABLE = ('"', "{", "//")
_LONGEST_LINE = 4096  # longer op lines are rare, and each is parsed in full
_IMMUTABLE = (str, int, float, A.SymbolRef, A.StructAttr, A.UnitAttr, A.OpaqueAttr, Type)


class Template:
    __slots__ = ("name", "operand_types", "result_types", "attributes", "property_names")

    def __init__(self, op: Operation):
        self.name = op.name
        self.operand_types = tuple(v.type for v in op.operands)
        self.result_types = tuple(v.type for v in op.results)
        self.attributes = dict(op.attributes)
        self.property_names = op.property_names

    def build(self, operands: list[Value], pos) -> Optional[Operation]:
        """The op these operands make, or None when a type differs (the full parse reports it)."""
        for value, declared in zip(operands, self.operand_types):
            if value.type is not declared and value.type != declared:
                return None
        op = Operation(self.name, operands, self.result_types, dict(self.attributes), pos=pos)
        if self.property_names is not None:
            op.property_names = self.property_names
        return op


class LineShape:
    """An op's text from its name to the end of its line: the cache key and the names it uses."""

    __slots__ = ("key", "end", "names")

    def __init__(self, key: str, end: int, names: list[str]):
        self.key = key
        self.end = end
        self.names = names


class OpTemplates:
    def __init__(self, op_names) -> None:
        self.op_names = op_names  # words that start an op (short forms such as `return` included)
        self.templates: dict[str, Optional[Template]] = {}  # None: this shape is not cacheable

    def shape_at(self, text: str, op_pos: int) -> Optional[LineShape]:
        """The shape of the op starting at op_pos, if the cache may serve an op of that form."""
        eol = text.find("\n", op_pos, op_pos + _LONGEST_LINE)
        if eol < 0:
            if len(text) - op_pos > _LONGEST_LINE:
                return None  # a long line (a 100 MB hex constant) is not copied to look at it
            eol = len(text)
        line = text[op_pos:eol]
        cut = line.find(" loc(")
        if cut >= 0:
            line = line[:cut]
        elif not self._next_line_starts_op(text, eol):
            return None
        body = line.rstrip()
        for mark in _UNSUITABLE:
            if mark in body:
                return None
        parts = _NAME_SPLIT.split(body)  # text, name, text, name, ..., text
        return LineShape("%".join(parts[0::2]), op_pos + len(body), parts[1::2])

    def _next_line_starts_op(self, text: str, eol: int) -> bool:
        m = _NEXT_LINE.match(text, eol)
        if m is None:
            return False
        word = m.group(2)
        return word is None or "." in word or word in self.op_names

    def get(self, shape: LineShape) -> Optional[Template]:
        return self.templates.get(shape.key)

    def learn(self, shape: LineShape, op: Operation, end: int) -> None:
        """Remember what the full parse of a line of this shape gave (or that it cannot be reused)."""
        if shape.key in self.templates:
            return
        reusable = (
            end == shape.end
            and type(op) is Operation
            and not op.regions
            and not op.successors
            and [v.name for v in op.operands] == shape.names
            and all(_immutable(value) for value in op.attributes.values())
        )
        self.templates[shape.key] = Template(op) if reusable else None


def _immutable(value: Any) -> bool:
    if type(value) is A.DenseElements:
        return not value.array.flags.writeable
    if isinstance(value, tuple):
        return all(_immutable(v) for v in value)
    return isinstance(value, _IMMUTABLE)
