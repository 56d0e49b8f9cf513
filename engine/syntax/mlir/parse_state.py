"""What a format (format.py) gathers while it parses one op's pretty form: the operands by group,
the attributes, the result types and regions, and where each operand stood in the text, so that a
type that does not match its operand is reported at that operand.
"""
from __future__ import annotations

from typing import Any, Optional

from ...ir.core import Operation, Value
from ...ir.types import Type


class ParseState:
    """Operands, attributes and types gathered while a format is being parsed."""

    def __init__(self, p, opdef):
        self.p = p
        self.opdef = opdef
        self.groups: dict[str, list[Value]] = {}
        self.operand_offsets: list[int] = []  # text offsets of the operands, in parse order
        self.all_operands: Optional[list[Value]] = None
        self.attrs: dict[str, Any] = {}
        self.result_types: Optional[list[Type]] = None
        self.regions: list = []
        self.type_pos = 0

    def _operand(self) -> Value:
        p = self.p
        p.skip_ws()
        offset = p.pos
        value = p.operand()
        self.operand_offsets.append(offset)
        return value

    def parse_operand_group(self, name: str) -> None:
        arity = dict(self.opdef.operands)[name]
        p = self.p
        if arity == "":
            self.groups[name] = [self._operand()]
            return
        values: list[Value] = []
        if p.peek_value():
            values.append(self._operand())
            while arity == "*" and p.peek(",") and p._next_is_value_after_comma():
                p.accept(",")
                values.append(self._operand())
        self.groups[name] = values

    def parse_all_operands(self) -> None:
        p = self.p
        values: list[Value] = []
        if p.peek_value():
            values.append(self._operand())
            while p.peek(",") and p._next_is_value_after_comma():
                p.accept(",")
                values.append(self._operand())
        self.all_operands = values

    @property
    def operands(self) -> list[Value]:
        if self.all_operands is None:
            # Formats read operand groups in definition order, so this is final once asked for.
            out: list[Value] = []
            for name, _ in self.opdef.operands:
                out.extend(self.groups.get(name, ()))
            self.all_operands = out
        return self.all_operands

    def parse_attr_dict(self, keyword: bool) -> None:
        p = self.p
        if keyword:
            if not p.accept_keyword("attributes"):
                return
        elif not p.peek("{"):
            return
        p.skip_ws()
        offset = p.pos
        extra = p.parse_attr_dict()
        for key, value in extra.items():
            if key in self.attrs:
                p.error(f"attribute '{key}' is already given by the syntax of {self.opdef.name}", offset)
            self.attrs[key] = value

    def check_operand_types(self, declared: list[Type]) -> None:
        operands = self.operands
        p = self.p
        if len(declared) != len(operands):
            p.error(f"{self.opdef.name} has {len(operands)} operands but its type lists {len(declared)}", self.type_pos)
        for index, (value, t) in enumerate(zip(operands, declared)):
            if value.type != t:
                offsets = self.operand_offsets
                p.error(
                    f"{value.name} has type {value.type}, but {self.opdef.name} declares {t} for it",
                    offsets[index] if index < len(offsets) else self.type_pos,
                )

    def build(self, name: str, pos) -> Operation:
        if self.result_types is None:
            self.result_types = []
        return Operation(name, self.operands, self.result_types, self.attrs, self.regions, pos=pos)
