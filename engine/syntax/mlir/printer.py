"""IR -> StableHLO text. Pretty form by default (what JAX prints), generic form on request.

The output reads back to an equal IR (`parse(print(m))` has the same structural key as `m`), so
generic-form input can be shown in readable form. SSA names are kept from the source where they
are unique and made unique otherwise (they are how breakpoints and the debugger name values);
`renumber=True` names them as MLIR's printer does instead (mlir_names.py), so that the text is
stablehlo-opt's.
"""
from __future__ import annotations

import re
from typing import Optional

from ...ir import attributes as A
from ...ir.core import Block, Function, Module, Operation, Region, Value
from ...ir.opset import OPS
from ...ir.types import FunctionType
from . import attribute_text as T
from .format import Format, Syntax, is_set
from .op_syntax import FORMATS

_MULTI = re.compile(r"(%[^#]+)#(\d+)$")


def _sigiled(name: str) -> str:
    """A value name with MLIR's `%` (names from other languages, like HLO's `add.1`, have none)."""
    return name if name.startswith("%") or not name else "%" + name


class Printer:
    def __init__(self, generic: bool = False, debug_info: bool = False, indent: str = "  ",
                 renumber: bool = False):
        self.generic = generic
        self.debug_info = debug_info
        self.renumber = renumber
        self.unit = indent
        self.depth = 0
        self.names: dict[int, str] = {}
        self.used: set[str] = set()

    # -- names -------------------------------------------------------------------------------

    def name(self, value: Value) -> str:
        key = id(value)
        name = self.names.get(key)
        if name is None:
            name = self._unique(_sigiled(value.name) if value.name else "%0")
            self.names[key] = name
        return name

    def rename(self, value: Value, name: str) -> None:
        self.names[id(value)] = name

    def _unique(self, wanted: str) -> str:
        base = wanted
        if "#" in wanted:
            # A result printed apart from its group gets a name of its own.
            group, index = wanted.split("#", 1)
            base = f"{group}_{index}"
        candidate = self._fresh(base)
        self.used.add(candidate)
        return candidate

    def _fresh(self, base: str) -> str:
        if base not in self.used:
            return base
        if base[1:].isdigit():
            # Numeric names cannot take a suffix; take the next unused number.
            n = int(base[1:])
            while f"%{n}" in self.used:
                n += 1
            return f"%{n}"
        k = 1
        while f"{base}_{k}" in self.used:
            k += 1
        return f"{base}_{k}"

    def _result_prefix(self, op: Operation) -> str:
        results = op.results
        if not results:
            return ""
        named = [self.names.get(id(v)) for v in results]
        if len(results) > 1 and all(named):
            groups = [_MULTI.match(n) for n in named]
            if all(groups) and len({g.group(1) for g in groups}) == 1 \
                    and [int(g.group(2)) for g in groups] == list(range(len(results))):
                return f"{groups[0].group(1)}:{len(results)} = "  # one name for the group: `%0:2`
        if len(results) > 1 and not all(id(v) in self.names for v in results):  # named already: keep those
            groups = [_MULTI.match(_sigiled(v.name or "")) for v in results]
            bases = {g.group(1) for g in groups if g}
            if all(groups) and len(bases) == 1 and [int(g.group(2)) for g in groups] == list(range(len(results))):
                candidate = self._fresh(bases.pop())
                self.used.add(candidate)
                for i, v in enumerate(results):
                    self.names[id(v)] = f"{candidate}#{i}"
                return f"{candidate}:{len(results)} = "
        return ", ".join(self.name(v) for v in results) + " = "

    def operands(self, values) -> str:
        return ", ".join(self.name(v) for v in values)

    # -- layout ------------------------------------------------------------------------------

    def indent_text(self) -> str:
        return self.unit * self.depth

    def location_suffix(self, obj) -> str:
        loc = getattr(obj, "location", None)
        if self.debug_info and loc is not None:
            return f" {loc}"
        return ""

    # -- attributes --------------------------------------------------------------------------

    def attr_dict(self, op: Operation, spelled: set[str], keyword: bool = False) -> str:
        opdef = OPS.get(op.name)
        shown = {}
        for key, value in op.attributes.items():
            if key in spelled:
                continue
            if opdef is not None and key in opdef.attrs and opdef.attrs[key].default is not None:
                if not is_set(op, opdef, key):
                    continue
            shown[key] = value
        if not shown:
            return ""
        text = T.format_attr_dict(shown)
        return f"attributes {text}" if keyword else text

    # -- ops ---------------------------------------------------------------------------------

    def op(self, op: Operation) -> str:
        prefix = self._result_prefix(op)
        body = None
        syntax = FORMATS.get(op.name)
        if not self.generic and syntax is not None and syntax.printed and self._pretty_ok(op, syntax):
            body = self._pretty_body(op, syntax)
        if body is None:
            body = self._generic(op)
        return f"{self.indent_text()}{prefix}{body}{self.location_suffix(op)}"

    def _pretty_ok(self, op: Operation, syntax: Syntax) -> bool:
        opdef = syntax.opdef
        if isinstance(syntax, Format):
            # Declarative formats neither print regions nor unknown-arity operand lists.
            if op.regions or op.successors:
                return False
            if opdef.operand_groups(len(op.operands)) is None:
                return False
            return all(name in op.attributes for name, spec in opdef.attrs.items() if spec.required)
        return not op.successors

    def _pretty_body(self, op: Operation, syntax: Syntax) -> Optional[str]:
        try:
            text = syntax.print(self, op)
        except (KeyError, AttributeError, TypeError, ValueError, IndexError):
            return None
        if text is None:
            return None
        name = op.name
        if name == "func.return":
            name = "return"  # only ever directly in a function body, where func is the default dialect
        elif name == "func.call" and isinstance(op.parent_op, Function):
            name = "call"  # directly in a function body func is the default dialect, as for return
        return name + text

    def _generic(self, op: Operation) -> str:
        text = f'"{op.name}"({self.operands(op.operands)})'
        if op.successors:
            text += "[" + ", ".join(op.successors) + "]"
        props, attrs = self._split_properties(op)
        if props:
            text += f" <{T.format_attr_dict(props)}>"
        if op.regions:
            text += " (" + ", ".join(self.region(r, print_entry_args=True) for r in op.regions) + ")"
        if attrs:
            text += " " + T.format_attr_dict(attrs)
        text += " : " + str(FunctionType(tuple(op.operand_types), tuple(op.result_types)))
        return text

    def _split_properties(self, op: Operation):
        opdef = OPS.get(op.name)
        if opdef is not None:
            inherent = set(opdef.attrs)
        elif op.property_names is not None:
            inherent = set(op.property_names)
        else:
            inherent = set()
        props = {k: v for k, v in op.attributes.items() if k in inherent}
        attrs = {k: v for k, v in op.attributes.items() if k not in inherent}
        return props, attrs

    # -- regions -----------------------------------------------------------------------------

    def region(self, region: Region, print_entry_args: bool = True) -> str:
        if not region.blocks:
            return "{\n" + self.indent_text() + "}"
        lines = ["{"]
        self.depth += 1
        # Names defined inside a region go out of scope after it, as in MLIR's own printer.
        outer_used = set(self.used)
        for i, block in enumerate(region.blocks):
            show_label = i > 0 or (print_entry_args and block.arguments) or (block.label and i > 0)
            if not print_entry_args and i == 0:
                for arg in block.arguments:
                    self.name(arg)
            if show_label:
                lines.append(self._block_header(block, i))
            for op in block.operations:
                lines.append(self.op(op))
        self.depth -= 1
        self.used = outer_used
        lines.append(self.indent_text() + "}")
        return "\n".join(lines)

    def _block_header(self, block: Block, index: int) -> str:
        label = f"^bb{index}" if self.renumber else block.label or f"^bb{index}"
        args = ", ".join(f"{self.name(a)}: {a.type}{self.location_suffix(a)}" for a in block.arguments)
        head = f"{label}({args}):" if block.arguments else f"{label}:"
        return self.unit * (self.depth - 1) + head

    # -- module ------------------------------------------------------------------------------

    def module(self, module: Module) -> str:
        if self.renumber:
            from .mlir_names import mlir_value_names

            self.names.update(mlir_value_names(module))
        head = "module"
        if module.name:
            head += f" {A.SymbolRef(module.name)}"
        if module.attributes:
            head += " attributes " + T.format_attr_dict(module.attributes)
        lines = [head + " {"]
        self.depth += 1
        for op in module.operations:
            self.names_scope_reset(op)
            lines.append(self.op(op))
        self.depth -= 1
        lines.append("}" + self.location_suffix(module))
        text = "\n".join(lines)
        resources = _resource_trailer(module)
        return text + ("\n\n" + resources if resources else "") + "\n"

    def names_scope_reset(self, op: Operation) -> None:
        """Functions are isolated from above: their SSA names start afresh."""
        if isinstance(op, Function) or op.name == "func.func":
            self.used = set()


def _resource_trailer(module: Module) -> str:
    if not module.resources:
        return ""
    lines = ["{-#", "  dialect_resources: {"]
    for dialect, entries in module.resources.items():
        lines.append(f"    {dialect}: {{")
        items = []
        for key, (value, _) in entries.items():
            text = A.quote_string(value) if isinstance(value, str) else T.format_attribute(value)
            items.append(f"      {key}: {text}")
        lines.append(",\n".join(items))
        lines.append("    }")
    lines.append("  }")
    lines.append("#-}")
    return "\n".join(lines)


def print_module(module: Module, generic: bool = False, debug_info: bool = False, renumber: bool = False) -> str:
    return Printer(generic=generic, debug_info=debug_info, renumber=renumber).module(module)


def print_op(op: Operation, generic: bool = False) -> str:
    """One op as text (nested regions included), e.g. for the UI's op inspector."""
    return Printer(generic=generic).op(op)
