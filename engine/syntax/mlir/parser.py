"""Parser for StableHLO/MLIR text: modules, functions, ops in generic and pretty form.

`parse_module(text, filename)` returns a Module or raises ParseError with file:line:col. The
pretty syntax of each op lives beside this file (op_syntax.py: one place per op family for both
parsing and printing);
value_parser.py reads types, attributes and locations; this file holds what every op shares:
regions, SSA scoping and the generic form `"dialect.op"(%a) <{props}> ({regions}) {attrs} : (T) -> R`.
"""
from __future__ import annotations

import re
from typing import Any, Callable, Optional

import numpy as np

from ...ir.collector import build_long_lived
from ...ir.core import Block, Function, Module, Operation, Region, Value
from ...ir.errors import ParseError, SourcePos
from ...ir.locations import NameLoc
from ...ir.opset import CLOSED_DIALECTS, OPS
from ...ir.types import FunctionType, Type
from ..frontend import MAX_REGION_NESTING
from .format import fill_defaults
from .lexer import is_blank, unescape_string
from .op_syntax import PRETTY_PARSERS
from .op_templates import LineShape, OpTemplates
from .value_parser import LocRef, ValueParser, storage_dtype

_RESULT_NAME = re.compile(r"(%(?:[A-Za-z_$.\-][A-Za-z0-9_$.\-]*|\d+))(?::(\d+))?")
_ONE_RESULT = re.compile(r"(%(?:[A-Za-z_$.\-][A-Za-z0-9_$.\-]*|\d+))[ \t]*=[ \t]*")
# `#loc7 = loc("name")` and `#loc8 = loc("name"(#loc7))`: how JAX writes most location aliases.
_NAME_LOC_ALIAS = re.compile(r'#([A-Za-z_][A-Za-z0-9_$.\-]*) = loc\("([^"\\\n]*)"(?:\(#([A-Za-z_][A-Za-z0-9_$.\-]*)\))?\)')
_ALIAS_NAME = re.compile(r"[#!][A-Za-z_][A-Za-z0-9_$.\-]*")

# A pretty-form parser reads everything after the op name and returns a finished Operation.
PrettyParser = Callable[["Parser", str, list[str], SourcePos], Operation]


class Parser(ValueParser):
    def __init__(self, text: str, filename: str = "<string>"):
        super().__init__(text, filename)
        self.scopes: list[dict[str, Value]] = []
        self.pretty: dict[str, PrettyParser] = PRETTY_PARSERS
        self.templates = OpTemplates(PRETTY_PARSERS)

    # =========================================================================================
    # SSA values
    # =========================================================================================

    def find_value(self, name: str) -> Optional[Value]:
        """The value `name` names here, or None."""
        for scope in reversed(self.scopes):
            value = scope.get(name)
            if value is not None:
                return value
            if scope.get("") is not None:  # an isolated-from-above boundary (function body)
                return None
        return None

    def lookup(self, name: str, offset: int) -> Value:
        value = self.find_value(name)
        if value is not None:
            return value
        if "#" not in name:
            base = name
        else:
            base = name.split("#")[0]
            for scope in reversed(self.scopes):
                if base + "#0" in scope or base in scope:
                    self.error(f"{base} has no result #{name.split('#')[1]}", offset)
        self.error(f"use of undefined SSA value {base}", offset)

    def operand(self) -> Value:
        self.skip_ws()
        offset = self.pos
        return self.lookup(self.value_use_name(), offset)

    def operand_list(self) -> list[Value]:
        """Zero or more comma separated `%v` uses."""
        values: list[Value] = []
        if not self.peek_value():
            return values
        values.append(self.operand())
        while self.peek(",") and self._next_is_value_after_comma():
            self.accept(",")
            values.append(self.operand())
        return values

    def _next_is_value_after_comma(self) -> bool:
        save = self.pos
        self.pos += 1
        is_value = self.peek_value()
        self.pos = save
        return is_value

    def define(self, value: Value, offset: int) -> None:
        self._check_fresh(value.name, offset)
        self.scopes[-1][value.name] = value

    def _check_fresh(self, name: str, offset: int) -> None:
        """MLIR forbids reusing a name that is visible here (up to the enclosing function)."""
        for scope in reversed(self.scopes):
            if name in scope:
                self.error(f"redefinition of SSA value {name}", offset)
            if "" in scope:
                break

    def define_results(self, op: Operation, groups: list[tuple[str, int]], offset: int) -> None:
        """Bind results to a result list: `%r` (one), `%r:2` (`%r#0`, `%r#1`), or `%a, %b`."""
        scope = self.scopes[-1]
        results = iter(op.results)
        for base, count in groups:
            self._check_fresh(base, offset)
            if count == 1:
                value = next(results)
                value.name = base
                scope[base] = value
                scope[base + "#0"] = value  # MLIR also accepts `%r#0` for a single result
                continue
            first = None
            for i in range(count):
                value = next(results)
                value.name = f"{base}#{i}"
                scope[value.name] = value
                first = first or value
            scope[base] = first

    # =========================================================================================
    # Operations
    # =========================================================================================

    def parse_operation(self, block: Block) -> Operation:
        self.skip_ws()
        start = self.pos
        groups: list[tuple[str, int]] = []
        one = _ONE_RESULT.match(self.text, start)
        if one is not None:  # the common `%name = `
            groups.append((one.group(1), 1))
            self.pos = one.end()
        elif self.text.startswith("%", start):
            while True:
                self.skip_ws()
                m = _RESULT_NAME.match(self.text, self.pos)
                if m is None:
                    self.expected("a result name such as %0")
                self.pos = m.end()
                count = int(m.group(2)) if m.group(2) else 1
                if count == 0:
                    self.error("a result group needs at least one result", m.start())
                groups.append((m.group(1), count))
                if not self.accept(","):
                    break
            self.expect("=", "after the result names")
        declared = sum(count for _, count in groups)
        self.skip_ws()
        op_pos = self.pos
        pos = self.at(start)
        if self.text.startswith('"', op_pos):
            name = self.string()
            op = self._with_defaults(self.parse_generic_body(name, pos))
        else:
            shape = self.templates.shape_at(self.text, op_pos)
            op = self._from_template(shape, pos) if shape is not None else None
            if op is None:
                op = self._with_defaults(self._parse_pretty(op_pos, groups, pos))
                if shape is not None:
                    self.templates.learn(shape, op, self.pos)
            else:
                self.pos = shape.end
        if declared != len(op.results):
            self.error(f"'{op.name}' has {len(op.results)} results but {declared} names were given", start)
        self.note_location(op, self.opt_location())
        self.define_results(op, groups, start)
        block.append(op)
        return op

    def _parse_pretty(self, op_pos: int, groups: list[tuple[str, int]], pos: SourcePos) -> Operation:
        name = self.bare_id("an operation name")
        parse = self.pretty.get(name)
        if parse is None:
            if "." not in name:
                self.error(f"unknown operation '{name}'", op_pos)
            dialect, _, mnemonic = name.partition(".")
            if dialect in CLOSED_DIALECTS and name not in OPS:
                self.error(f"{name}: unknown op: the {dialect} dialect has no op '{mnemonic}'", op_pos)
            self.error(
                f"'{name}' has no pretty syntax that hlodbg knows; write it in generic form "
                f'("{name}"(...) : (...) -> ...)',
                op_pos,
            )
        names = [base if count == 1 else f"{base}#{i}" for base, count in groups for i in range(count)]
        return parse(self, name, names, pos)

    def _from_template(self, shape: LineShape, pos: SourcePos) -> Optional[Operation]:
        """The op of a line whose shape was read before (op_templates.py), else None."""
        template = self.templates.get(shape)
        if template is None:
            return None
        operands = []
        for name in shape.names:
            value = self.find_value(name)
            if value is None:
                return None  # the full parse says which name is undefined
            operands.append(value)
        return template.build(shape, operands, pos)

    @staticmethod
    def _with_defaults(op: Operation) -> Operation:
        opdef = OPS.get(op.name)
        if opdef is not None:
            fill_defaults(opdef, op.attributes)
        return op

    def parse_generic_body(self, name: str, pos: SourcePos) -> Operation:
        self.expect("(", f"to start the operand list of \"{name}\"")
        operand_offsets = []
        operands: list[Value] = []
        if not self.accept(")"):
            while True:
                self.skip_ws()
                operand_offsets.append(self.pos)
                operands.append(self.operand())
                if not self.accept(","):
                    break
            self.expect(")", "to close the operand list")
        successors: list[str] = []
        if self.accept("["):
            successors.append(self.block_label())
            while self.accept(","):
                successors.append(self.block_label())
            self.expect("]")
        properties: dict[str, Any] = {}
        has_props = False
        if self.peek("<{"):
            self.accept("<")
            properties = self.parse_attr_dict()
            self.expect(">", "to close the properties <{...}>")
            has_props = True
        regions: list[Region] = []
        if self.peek("("):
            save = self.pos
            self.accept("(")
            if self.peek("{"):
                regions.append(self.parse_region())
                while self.accept(","):
                    regions.append(self.parse_region())
                self.expect(")", "to close the region list")
            else:
                self.pos = save
        attrs: dict[str, Any] = {}
        if self.peek("{"):
            attrs = self.parse_attr_dict()
        self.expect(":", f"and the function type of \"{name}\"")
        self.skip_ws()
        type_pos = self.pos
        ftype = self.parse_type("a function type (operands) -> results")
        if not isinstance(ftype, FunctionType):
            self.error("generic operations end with a function type such as (tensor<f32>) -> tensor<f32>", type_pos)
        if len(ftype.inputs) != len(operands):
            self.error(
                f"\"{name}\" has {len(operands)} operands but its type lists {len(ftype.inputs)}", type_pos
            )
        for value, declared, offset in zip(operands, ftype.inputs, operand_offsets):
            if value.type != declared:
                self.error(f"{value.name} has type {value.type}, but it is used here as {declared}", offset)
        merged = dict(properties)
        for key, value in attrs.items():
            if key in merged:
                self.error(f"attribute '{key}' given both as a property and an attribute", type_pos)
            merged[key] = value
        cls = Function if name == "func.func" else Operation
        op = cls(name, operands, list(ftype.results), merged, regions, pos=pos)
        op.successors = successors
        if has_props:
            op.property_names = tuple(properties)
        if name == "func.func":
            self._check_generic_function(op, type_pos)
        return op

    def _check_generic_function(self, op: Operation, offset: int) -> None:
        if not isinstance(op.attributes.get("function_type"), FunctionType):
            self.error("func.func needs a function_type attribute", offset)
        if not isinstance(op.attributes.get("sym_name"), str):
            self.error("func.func needs a sym_name attribute", offset)

    # =========================================================================================
    # Regions and blocks
    # =========================================================================================

    def parse_region(self, arguments: Optional[list[tuple[str, Type, int]]] = None, isolated: bool = False) -> Region:
        """`{ ops }` or `{ ^bb0(%a: T): ops ^bb1: ... }`; `arguments` pre-declares entry args."""
        start = self.pos
        self.expect("{", "to start a region")
        # An isolated region is a function's body: regions nest from there.
        nesting = 0 if isolated else self.scopes[-1].get(_NESTING, 0) + 1 if self.scopes else 1
        if nesting > MAX_REGION_NESTING:
            self.error(f"regions nest more than {MAX_REGION_NESTING} deep here; hlodbg reads programs whose "
                       "regions (loop bodies, branches, reducers) nest at most that deep (calls to other "
                       "functions may chain to any depth)", start)
        region = Region()
        scope: dict[str, Any] = {"": True} if isolated else {}
        scope[_NESTING] = nesting
        self.scopes.append(scope)
        try:
            if self.accept("}"):
                if arguments:
                    self._declare_arguments(region.add_block(Block()), arguments)
                return region
            first = True
            while True:
                self.skip_ws()
                if self.text.startswith("^", self.pos):
                    block = region.add_block(Block(self.block_label()))
                    if self.accept("("):
                        if arguments and first:
                            self.error("entry block arguments were already declared", self.pos)
                        if not self.accept(")"):
                            while True:
                                self.skip_ws()
                                offset = self.pos
                                name = self.value_def_name()
                                self.expect(":", "and the argument type")
                                t = self.parse_type()
                                arg = block.add_argument(name, t, self.at(offset))
                                self.note_location(arg, self.opt_location())
                                self.define(arg, offset)
                                if not self.accept(","):
                                    break
                            self.expect(")")
                    self.expect(":", "after the block label")
                elif first:
                    block = region.add_block(Block())
                else:
                    self.expected("an operation, a block label or '}'")
                if first and arguments:
                    self._declare_arguments(block, arguments)
                first = False
                while True:
                    self.skip_ws()
                    ch = self.text[self.pos:self.pos + 1]
                    if ch == "}" or ch == "^":
                        break
                    if ch == "":
                        self.error("unexpected end of input inside a region")
                    self.parse_operation(block)
                if self.accept("}"):
                    return region
        finally:
            self.scopes.pop()

    def _declare_arguments(self, block: Block, arguments) -> None:
        """Entry arguments declared outside the region: (name, type, offset[, location])."""
        for name, t, offset, *loc in arguments:
            arg = block.add_argument(name, t, self.at(offset))
            if loc:
                self.note_location(arg, loc[0])
            self.define(arg, offset)

    # =========================================================================================
    # Top level
    # =========================================================================================

    def parse_top_level(self) -> Module:
        module: Optional[Module] = None
        loose = Module()
        loose.source = self.source
        loose_block = Block()
        self.scopes.append({"": True})
        while True:
            self.skip_ws()
            if self.pos >= len(self.text):
                break
            text = self.text
            pos = self.pos
            if text.startswith("{-#", pos):
                self._file_metadata()
                continue
            if text.startswith("#", pos) or text.startswith("!", pos):
                self._alias_definition()
                continue
            if text.startswith("module", pos) and self.peek_keyword("module"):
                if module is not None or loose_block.operations:
                    self.error("only one module per input (split inputs with '// -----')")
                module = self._module()
                continue
            if text.startswith('"builtin.module"', pos):
                if module is not None or loose_block.operations:
                    self.error("only one module per input (split inputs with '// -----')")
                module = self._generic_module()
                continue
            if module is not None:
                self.expected("end of input after the module")
            self.parse_operation(loose_block)
        self.scopes.pop()
        if module is None:
            module = loose
            for op in loose_block.operations:
                op.parent = None
                module.operations.append(op)
        self.resolve_locations()
        self._resolve_resources()
        module.source = self.source
        module.resources = self.resources
        return module

    def _module(self) -> Module:
        start = self.pos
        self.expect_keyword("module")
        name = self.symbol() if self.peek("@") else None
        attrs = {}
        if self.accept_keyword("attributes"):
            attrs = self.parse_attr_dict()
        module = Module(name, attrs)
        module.pos = self.at(start)
        region = self.parse_region(isolated=True)
        block = region.blocks[0] if region.blocks else Block()
        if len(region.blocks) > 1:
            self.error("a module body has one block", start)
        for op in block.operations:
            op.parent = None
            module.operations.append(op)
        self.note_location(module, self.opt_location())
        return module

    def _generic_module(self) -> Module:
        start = self.pos
        self.string()
        op = self.parse_generic_body("builtin.module", self.at(start))
        attrs = dict(op.attributes)
        name = attrs.pop("sym_name", None)
        module = Module(str(name) if name is not None else None, attrs)
        module.pos = self.at(start)
        if op.regions and op.regions[0].blocks:
            for inner in op.regions[0].blocks[0].operations:
                inner.parent = None
                module.operations.append(inner)
        self.note_location(module, self.opt_location())
        return module

    def _alias_definition(self) -> None:
        start = self.pos
        named = _NAME_LOC_ALIAS.match(self.text, start)
        if named is not None:
            child = named.group(3)
            if child is not None:
                child = self.loc_aliases.get(child) or LocRef(child, named.start(3) - 1)
            self.loc_aliases[named.group(1)] = NameLoc(named.group(2), child)
            self.pos = named.end()
            return
        m = _ALIAS_NAME.match(self.text, start)
        if m is None:
            self.expected("an alias name such as #loc1 or #map")
        alias = m.group(0)
        self.pos = m.end()
        self.expect("=", f"in the definition of {alias}")
        if alias.startswith("!"):
            if alias in self.type_aliases:
                self.error(f"redefinition of type alias {alias}", start)
            self.type_aliases[alias] = self.parse_type()
            return
        name = alias[1:]
        if self.peek("loc("):
            self.accept("loc(")
            self.loc_aliases[name] = self.parse_location_body()
            self.expect(")")
            return
        if name in self.attr_aliases:
            self.error(f"redefinition of attribute alias {alias}", start)
        self.attr_aliases[name] = self.parse_attribute()

    def _file_metadata(self) -> None:
        """`{-# dialect_resources: { builtin: { name: "0x..." } } #-}`"""
        self.pos += 3
        while True:
            self.skip_ws()
            if self.accept("#-}"):
                return
            section = self.bare_id("dialect_resources or external_resources")
            self.expect(":")
            self.expect("{")
            while not self.accept("}"):
                dialect = self.bare_id("a dialect name")
                self.expect(":")
                self.expect("{")
                entries = self.resources.setdefault(dialect, {})
                while not self.accept("}"):
                    key = self.bare_id("a resource name")
                    self.expect(":")
                    self.skip_ws()
                    offset = self.pos
                    if self.peek_string():
                        entries[key] = (self.string(), offset)
                    else:
                        entries[key] = (self.parse_attribute(), offset)
                    self.accept(",")
                self.accept(",")
            if section not in ("dialect_resources", "external_resources"):
                self.error(f"unknown file metadata section '{section}'")
            self.accept(",")

    def _resolve_resources(self) -> None:
        blobs = self.resources.get("builtin", {})
        for attr, offset in self.dense_resources:
            entry = blobs.get(attr.resource)
            if entry is None:
                self.error(f"dense_resource<{attr.resource}> has no blob in the dialect_resources section", offset)
            blob, blob_offset = entry
            if not isinstance(blob, str) or not blob.startswith("0x"):
                self.error(f"resource {attr.resource} is not a hex blob", blob_offset)
            try:
                raw = bytes.fromhex(blob[2:])
            except ValueError:
                self.error(f"resource {attr.resource} has malformed hex digits", blob_offset)
            # The blob starts with a 4-byte alignment word.
            payload = raw[4:]
            dtype = storage_dtype(attr.type)
            expected = attr.type.num_elements * dtype.itemsize
            if len(payload) != expected:
                self.error(
                    f"resource {attr.resource} holds {len(payload)} bytes but {attr.type} needs {expected}",
                    blob_offset,
                )
            array = np.frombuffer(payload, dtype=dtype).reshape(attr.type.shape).copy()
            object.__setattr__(attr, "array", array)


_NESTING = " nesting"  # a scope's key (no value name has a space) for how deep its region nests

SPLIT_MARKER = re.compile(r"^// -----\s*$", re.MULTILINE)


def parse_module(text: str, filename: str = "<string>") -> Module:
    """Parse one module. Raises ParseError (with file:line:col) for malformed input."""
    parser = Parser(text, filename)
    try:
        return build_long_lived(parser.parse_top_level)
    except RecursionError:
        raise ParseError("input nests too deeply", parser.here()) from None


def _split_markers(text: str):
    """SPLIT_MARKER's matches, found with str.find: a regex anchored at every line start would
    visit each character of a 100 MB hex literal."""
    pos = text.find(_MARKER_TEXT)
    while pos >= 0:
        m = SPLIT_MARKER.match(text, pos) if pos == 0 or text[pos - 1] == "\n" else None
        if m is not None:
            yield m
        pos = text.find(_MARKER_TEXT, m.end() if m is not None else pos + 1)


_MARKER_TEXT = "// -----"


def split_chunks(text: str) -> list[tuple[int, str]]:
    """`// -----` separated inputs as (lines before the chunk, chunk text) pairs."""
    chunks = []
    last = 0
    for m in _split_markers(text):
        chunks.append((text.count("\n", 0, last), text[last:m.start()]))
        last = m.end()
    chunks.append((text.count("\n", 0, last), text[last:]))
    return chunks


def parse_chunks(text: str, filename: str = "<string>") -> list[Module]:
    """Parse every `// -----` chunk; each keeps line numbers of the whole file in its errors."""
    modules = []
    for line_offset, chunk in split_chunks(text):
        if is_blank(chunk):
            continue
        padded = "\n" * line_offset + chunk
        modules.append(parse_module(padded, filename))
    return modules


__all__ = ["Parser", "parse_module", "parse_chunks", "split_chunks", "unescape_string"]
