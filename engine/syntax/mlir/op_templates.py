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
- one-line ops without strings, attribute dictionaries or regions in braces (no `"`, `{`, `//`),
  whose full parse ended at the end of the line (or at its `loc(...)`), with the next line
  starting a new op, so no format could have read on into it; a region the line itself spells
  (reduce's `applies stablehlo.add`) is copied, its positions moved to the new line;
- whose `%names` appear in the text in operand order;
- whose attributes are immutable values (they are shared by the ops built from one template);
- and whose operands have, this time too, the types the template checked.
"""
from __future__ import annotations

import re
from typing import Any, Optional

from ...ir import attributes as A
from ...ir.core import Block, Operation, Region, Value
from ...ir.errors import SourcePos
from ...ir.types import Type
from .lexer import VALUE_ID

_NAME_SPLIT = re.compile(f"({VALUE_ID.pattern})")

# What may follow an op's line when nothing on the line says the op has ended: the start of the
# next op, a block label, the end of the region, a comment, an alias definition, the end of text.
_NEXT_LINE = re.compile(r"[ \t\r\n]*(?:([%}^\"#]|//|$)|([A-Za-z_][A-Za-z0-9_$.\-]*))")
_UNSUITABLE = ('"', "{", "//")
_LONGEST_LINE = 4096  # longer op lines are rare, and each is parsed in full
_IMMUTABLE = (str, int, float, A.SymbolRef, A.StructAttr, A.UnitAttr, A.OpaqueAttr, Type)


class LineShape:
    """An op's text from its name to the end of its line: the cache key and the names it uses."""

    __slots__ = ("key", "start", "end", "texts", "names")

    def __init__(self, start: int, end: int, texts: list[str], names: list[str]):
        self.key = "%".join(texts)
        self.start = start
        self.end = end
        self.texts = texts  # the text around the names: texts[0] names[0] texts[1] ... texts[-1]
        self.names = names

    def offset_in(self, other: "LineShape", offset: int) -> int:
        """Where the character at `offset` of this line is in `other`, a line of the same shape
        (a position inside a name maps to the start of the other line's name)."""
        rel = offset - self.start
        moved = other.start
        for text, name, other_name in zip(self.texts, self.names, other.names):
            if rel < len(text):
                return moved + rel
            rel -= len(text)
            moved += len(text)
            if rel < len(name):
                return moved
            rel -= len(name)
            moved += len(other_name)
        return moved + rel


class Template:
    __slots__ = ("shape", "name", "operand_types", "result_types", "attributes", "property_names", "regions")

    def __init__(self, shape: LineShape, op: Operation):
        self.shape = shape
        self.name = op.name
        self.operand_types = tuple(v.type for v in op.operands)
        self.result_types = tuple(v.type for v in op.results)
        self.attributes = dict(op.attributes)
        self.property_names = op.property_names
        self.regions = op.regions  # one-line regions only (reduce's `applies stablehlo.add`)

    def build(self, shape: LineShape, operands: list[Value], pos) -> Optional[Operation]:
        """The op these operands make, or None when a type differs (the full parse reports it)."""
        for value, declared in zip(operands, self.operand_types):
            if value.type is not declared and value.type != declared:
                return None
        regions = [self._copy_region(region, shape, pos) for region in self.regions] if self.regions else None
        op = Operation(self.name, operands, self.result_types, dict(self.attributes), regions, pos=pos)
        if self.property_names is not None:
            op.property_names = self.property_names
        return op

    def _copy_region(self, region: Region, shape: LineShape, pos) -> Region:
        """The template's region anew, its positions moved to the same place in this line."""

        def moved(old):
            return None if old is None else SourcePos(pos.source, self.shape.offset_in(shape, old.offset))

        copy = Region()
        for block in region.blocks:
            values: dict[int, Value] = {}
            new_block = copy.add_block(Block(block.label))
            for arg in block.arguments:
                values[id(arg)] = new_block.add_argument(arg.name, arg.type, moved(arg.pos))
            for op in block.operations:
                new_op = Operation(op.name, [values[id(v)] for v in op.operands], [v.type for v in op.results],
                                   dict(op.attributes), pos=moved(op.pos))
                for old, new in zip(op.results, new_op.results):
                    new.name = old.name
                    values[id(old)] = new
                new_block.append(new_op)
        return copy


def _copyable_region(region: Region) -> bool:
    """Whether a region is what Template._copy_region reproduces: plain ops over the region's
    own values, without locations, nested regions or mutable attributes."""
    for block in region.blocks:
        inside = {id(arg) for arg in block.arguments if arg.location is None}
        if len(inside) != len(block.arguments):
            return False
        for op in block.operations:
            if (type(op) is not Operation or op.regions or op.successors or op.location is not None
                    or op.property_names is not None or any(id(v) not in inside for v in op.operands)
                    or not all(_immutable(value) for value in op.attributes.values())):
                return False
            inside.update(id(v) for v in op.results)
    return True


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
        return LineShape(op_pos, op_pos + len(body), parts[0::2], parts[1::2])

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
            and all(_copyable_region(region) for region in op.regions)
            and not op.successors
            and [v.name for v in op.operands] == shape.names
            and all(_immutable(value) for value in op.attributes.values())
        )
        self.templates[shape.key] = Template(shape, op) if reusable else None


def _immutable(value: Any) -> bool:
    if type(value) is A.DenseElements:
        # A dense_resource's array is filled in once the file's resources have been read.
        return value.resource is None and not value.array.flags.writeable
    if isinstance(value, tuple):
        return all(_immutable(v) for v in value)
    return isinstance(value, _IMMUTABLE)
