"""Parser for StableHLO/MLIR text: modules, functions, ops in generic and pretty form.

`parse_module(text, filename)` returns a Module or raises ParseError with file:line:col. The
pretty syntax of each op lives in syntax/ (one place per op family for both parsing and printing);
this file holds what every op shares: types, attributes, locations, regions, SSA scoping and the
generic form `"dialect.op"(%a) <{props}> ({regions}) {attrs} : (T) -> R`.
"""
from __future__ import annotations

import re
from typing import Any, Callable, Optional

import numpy as np

from . import attributes as A
from .dense import DenseFormatError, parse_dense_literal
from .errors import ParseError, SourcePos
from .ir import Block, Function, Module, Operation, Region, Value
from .lexer import Lexer, unescape_string
from .opdefs import OPS
from .syntax.format import fill_defaults
from .locations import (
    CallSiteLoc,
    FileLineColLoc,
    FusedLoc,
    Location,
    NameLoc,
    OpaqueLoc,
    UnknownLoc,
)
from .types import (
    ComplexType,
    FloatType,
    FunctionType,
    IntegerType,
    QuantizedType,
    TensorType,
    TokenType,
    TupleType,
    Type,
    OpaqueType,
    builtin_element_type,
)

_SIMPLE_TENSOR = re.compile(r"tensor<((?:(?:\d+|\?)x)*)([A-Za-z][A-Za-z0-9]*)>")
_ELEMENT_NAME = re.compile(r"[A-Za-z][A-Za-z0-9]*")
_TENSOR_TEXT = r"tensor<[0-9?x]*[A-Za-z][A-Za-z0-9]*>"
_SIMPLE_SIGNATURE = re.compile(
    rf"\((?:{_TENSOR_TEXT}(?:, {_TENSOR_TEXT})*)?\) -> (?:{_TENSOR_TEXT}|\((?:{_TENSOR_TEXT}(?:, {_TENSOR_TEXT})*)?\))"
)
_LOC_ALIAS_USE = re.compile(r"loc\(#([A-Za-z_][A-Za-z0-9_$.\-]*)\)")
_ATTR_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_DIMS = re.compile(r"((?:(?:\d+|\?)x)*)")
_RESULT_NAME = re.compile(r"(%(?:[A-Za-z_$.\-][A-Za-z0-9_$.\-]*|\d+))(?::(\d+))?")
_ALIAS_NAME = re.compile(r"[#!][A-Za-z_][A-Za-z0-9_$.\-]*")
_FLOAT_LIT = re.compile(r"[-+]?(?:\d+\.\d*(?:[eE][-+]?\d+)?|\d+[eE][-+]?\d+|inf|nan)")

from .syntax import PRETTY_PARSERS  # noqa: E402  (registers every op's syntax)

# A pretty-form parser reads everything after the op name and returns a finished Operation.
PrettyParser = Callable[["Parser", str, list[str], SourcePos], Operation]


class LocRef(Location):
    """A `#locN` used before its definition; replaced once the whole file has been read."""

    __slots__ = ("alias",)

    def __init__(self, alias: str):
        self.alias = alias


class Parser(Lexer):
    def __init__(self, text: str, filename: str = "<string>"):
        super().__init__(text, filename)
        self.attr_aliases: dict[str, Any] = {}
        self.type_aliases: dict[str, Type] = {}
        self.loc_aliases: dict[str, Location] = {}
        self.located: list[Any] = []  # objects whose location may be an unresolved LocRef
        self.scopes: list[dict[str, Value]] = []
        self.type_cache: dict[str, Type] = {}
        self.resources: dict[str, dict[str, Any]] = {}
        self.dense_resources: list[tuple[A.DenseElements, int]] = []
        self.pretty: dict[str, PrettyParser] = PRETTY_PARSERS

    # =========================================================================================
    # Types
    # =========================================================================================

    def parse_type(self, what: str = "a type") -> Type:
        self.skip_ws()
        text = self.text
        pos = self.pos
        if text.startswith("tensor<", pos):
            m = _SIMPLE_TENSOR.match(text, pos)
            if m is not None:
                key = m.group(0)
                cached = self.type_cache.get(key)
                if cached is None:
                    element = builtin_element_type(m.group(2))
                    if element is not None:
                        dims = m.group(1)
                        shape = tuple(None if d == "?" else int(d) for d in dims.split("x")[:-1]) if dims else ()
                        cached = TensorType(shape, element)
                        self.type_cache[key] = cached
                if cached is not None:
                    self.pos = m.end()
                    return cached
            self.pos = pos + 7
            return self._tensor_body()
        ch = text[pos:pos + 1]
        if ch == "(":
            return self.parse_function_type()
        if ch == "!":
            return self._bang_type()
        m = _ELEMENT_NAME.match(text, pos)
        if m is None:
            self.expected(what)
        word = m.group(0)
        if word == "tuple" and text.startswith("tuple<", pos):
            self.pos = pos + 6
            types: list[Type] = []
            if not self.accept(">"):
                types.append(self.parse_type())
                while self.accept(","):
                    types.append(self.parse_type())
                self.expect(">", "to close tuple<...>")
            return TupleType(tuple(types))
        if word == "complex" and text.startswith("complex<", pos):
            self.pos = pos + 8
            element = self.parse_type("a float type inside complex<...>")
            if not isinstance(element, FloatType):
                self.error(f"complex element type must be a float type, not {element}", pos)
            self.expect(">", "to close complex<...>")
            return ComplexType(element)
        element = builtin_element_type(word)
        if element is None:
            self.expected(what)
        self.pos = m.end()
        return element

    def _tensor_body(self) -> TensorType:
        start = self.pos - 7
        self.skip_ws()
        if self.accept("*"):
            self.expect("x", "after '*' in an unranked tensor type")
            shape = None
        else:
            m = _DIMS.match(self.text, self.pos)
            dims = m.group(1)
            self.pos = m.end()
            shape = tuple(None if d == "?" else int(d) for d in dims.split("x")[:-1]) if dims else ()
        element = self.parse_type("an element type")
        if isinstance(element, (TensorType, FunctionType, TupleType)):
            self.error(f"{element} cannot be a tensor element type", start)
        encoding = None
        if self.accept(","):
            encoding = self.parse_attribute()
        self.expect(">", "to close tensor<...>")
        return TensorType(shape, element, encoding)

    def _bang_type(self) -> Type:
        start = self.pos
        if self.text.startswith("!stablehlo.token", start):
            self.pos = start + len("!stablehlo.token")
            return TokenType()
        if self.text.startswith("!quant.uniform<", start):
            self.pos = start + len("!quant.uniform<")
            return self._quant_uniform(start)
        m = _ALIAS_NAME.match(self.text, start)
        if m is None:
            self.expected("a type")
        name = m.group(0)
        self.pos = m.end()
        if name in self.type_aliases and not self.text.startswith("<", self.pos):
            return self.type_aliases[name]
        if "." not in name:
            self.error(f"undefined type alias {name}", start)
        if self.accept("<"):
            self.balanced("<", ">")
        return OpaqueType(self.text[start:self.pos])

    def _quant_uniform(self, start: int) -> QuantizedType:
        storage = self.parse_type("a storage integer type")
        if not isinstance(storage, IntegerType):
            self.error("quantized storage type must be an integer type", start)
        storage_min = storage_max = None
        if self.accept("<"):
            storage_min = self.integer("storage minimum")
            self.expect(":")
            storage_max = self.integer("storage maximum")
            self.expect(">")
        self.expect(":", "before the expressed type")
        expressed = self.parse_type("an expressed float type")
        if not isinstance(expressed, FloatType):
            self.error("quantized expressed type must be a float type", start)
        axis = None
        if self.accept(":"):
            axis = self.integer("quantized dimension")
        self.expect(",")
        scales: list[float] = []
        zero_points: list[int] = []
        if axis is not None:
            self.expect("{", "to start per-axis scales")
            while True:
                scale, zp = self._scale_zero_point()
                scales.append(scale)
                zero_points.append(zp)
                if not self.accept(","):
                    break
            self.expect("}")
        else:
            scale, zp = self._scale_zero_point()
            scales.append(scale)
            zero_points.append(zp)
        self.expect(">", "to close !quant.uniform<...>")
        return QuantizedType(storage, expressed, tuple(scales), tuple(zero_points), axis, storage_min, storage_max)

    def _scale_zero_point(self) -> tuple[float, int]:
        scale = float(self.number("a scale"))
        zp = 0
        if self.accept(":"):
            zp = self.integer("a zero point")
        return scale, zp

    def parse_function_type(self) -> FunctionType:
        # Signatures repeat throughout a program: look simple ones up by their exact text.
        m = _SIMPLE_SIGNATURE.match(self.text, self.pos)
        if m is not None:
            key = m.group(0)
            cached = self.type_cache.get(key)
            if cached is None:
                inputs = self.parse_type_list_parens()
                self.expect("->", "in function type")
                cached = FunctionType(tuple(inputs), tuple(self.parse_result_types()))
                if self.pos == m.end():
                    self.type_cache[key] = cached
                return cached
            self.pos = m.end()
            return cached
        inputs = self.parse_type_list_parens()
        self.expect("->", "in function type")
        results = self.parse_result_types()
        return FunctionType(tuple(inputs), tuple(results))

    def parse_type_list_parens(self) -> list[Type]:
        self.expect("(")
        types: list[Type] = []
        if not self.accept(")"):
            types.append(self.parse_type())
            while self.accept(","):
                types.append(self.parse_type())
            self.expect(")", "to close the type list")
        return types

    def parse_result_types(self) -> list[Type]:
        """`T` or `(T, ...)` after an arrow; `(T) -> R` alone is one function type."""
        self.skip_ws()
        if self.peek("("):
            save = self.pos
            types = self.parse_type_list_parens()
            if self.peek("->"):
                self.pos = save
                return [self.parse_type()]
            return types
        return [self.parse_type()]

    def parse_type_list(self) -> list[Type]:
        types = [self.parse_type()]
        while self.accept(","):
            types.append(self.parse_type())
        return types

    # =========================================================================================
    # Attributes
    # =========================================================================================

    def parse_attribute(self, what: str = "an attribute value") -> Any:
        self.skip_ws()
        text = self.text
        pos = self.pos
        ch = text[pos:pos + 1]
        if ch == '"':
            return self.string()
        if ch == "[":
            self.pos += 1
            items = []
            if not self.accept("]"):
                items.append(self.parse_attribute())
                while self.accept(","):
                    items.append(self.parse_attribute())
                self.expect("]", "to close the array attribute")
            return A.ArrayAttr(items)
        if ch == "{":
            return self.parse_attr_dict()
        if ch == "@":
            return self._symbol_ref()
        if ch == "#":
            return self._hash_attribute()
        if ch in "-+0123456789":
            return self._number_attribute()
        if ch == "(" or ch == "!":
            return self.parse_type()
        m = _ATTR_WORD.match(text, pos)
        if m is None:
            self.expected(what)
        word = m.group(0)
        if word == "true" or word == "false":
            self.pos = m.end()
            return word == "true"
        if word == "unit":
            self.pos = m.end()
            return A.UNIT
        if word == "dense" and text.startswith("dense<", pos):
            return self._dense()
        if word == "dense_resource" and text.startswith("dense_resource<", pos):
            return self._dense_resource()
        if word == "array" and text.startswith("array<", pos):
            return self._dense_array()
        if word in ("inf", "nan"):
            return self._number_attribute()
        if word in ("affine_map", "affine_set", "sparse", "strided", "distinct"):
            self.pos = m.end()
            self.expect("<")
            self.balanced("<", ">")
            return A.OpaqueAttr(text[pos:self.pos])
        return self.parse_type(what)

    def _number_attribute(self) -> Any:
        start = self.pos
        m = _FLOAT_LIT.match(self.text, self.pos)
        literal = m.group(0) if m else self.number("a number")
        if m:
            self.pos = m.end()
        is_float = m is not None
        if self.accept(":"):
            t = self.parse_type("the type of the number")
        else:
            t = A.F64 if is_float else A.I64
        if isinstance(t, FloatType):
            if literal.lower().lstrip("-+").startswith("0x"):
                bits = int(literal, 16)
                dtype = t.numpy_dtype
                uint = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[dtype.itemsize]
                return A.FloatAttr(float(np.array([bits], dtype=uint).view(dtype)[0]), t)
            return A.FloatAttr(float(literal), t)
        if isinstance(t, IntegerType) or type(t).__name__ == "IndexType":
            if is_float:
                self.error(f"'{literal}' is not an integer of type {t}", start)
            value = int(literal, 0)
            if isinstance(t, IntegerType) and t.width == 1:
                return value != 0
            return A.IntegerAttr(value, t)
        self.error(f"a number cannot have type {t}", start)

    def _symbol_ref(self) -> A.SymbolRef:
        name = self.symbol()
        nested = []
        while self.text.startswith("::@", self.pos):
            self.pos += 2
            nested.append(self.symbol())
        return A.SymbolRef(name, tuple(nested))

    def _dense(self) -> A.DenseElements:
        start = self.pos
        self.pos += len("dense<")
        body_start = self.pos
        body = self.balanced("<", ">")
        self.expect(":", "and the type of the dense literal")
        type_pos = self.pos
        t = self.parse_type("a tensor type for the dense literal")
        if not isinstance(t, TensorType):
            self.error(f"dense literal needs a tensor type, not {t}", type_pos)
        try:
            array = parse_dense_literal(body, t)
        except DenseFormatError as e:
            self.error(str(e), body_start + e.offset)
        except (ValueError, OverflowError, TypeError) as e:
            self.error(f"bad dense literal: {e}", start)
        return A.DenseElements(t, array)

    def _dense_resource(self) -> A.DenseElements:
        start = self.pos
        self.pos += len("dense_resource<")
        name = self.bare_id("a resource name")
        self.expect(">")
        self.expect(":")
        t = self.parse_type("a tensor type")
        if not isinstance(t, TensorType) or not t.is_static:
            self.error("dense_resource needs a static tensor type", start)
        attr = A.DenseElements(t, np.zeros(t.shape, dtype=_storage_dtype(t)), resource=name)
        self.dense_resources.append((attr, start))
        return attr

    def _dense_array(self) -> A.DenseArray:
        start = self.pos
        self.pos += len("array<")
        element_text = self.bare_id("an element type for array<...>")
        element = builtin_element_type(element_text)
        if element is None or not isinstance(element, (IntegerType, FloatType)):
            self.error(f"array<...> element type must be an integer or float type, not '{element_text}'", start)
        values: list[Any] = []
        if self.accept(":"):
            while True:
                self.skip_ws()
                if isinstance(element, IntegerType) and element.width == 1:
                    word = self.bare_id("true or false")
                    if word not in ("true", "false"):
                        self.error("expected true or false")
                    values.append(word == "true")
                elif isinstance(element, IntegerType):
                    values.append(self.integer())
                else:
                    values.append(float(self.number()))
                if not self.accept(","):
                    break
        self.expect(">", "to close array<...>")
        return A.DenseArray(values, element_text)

    def parse_attr_dict(self) -> dict:
        self.expect("{")
        attrs: dict[str, Any] = {}
        if self.accept("}"):
            return attrs
        while True:
            self.skip_ws()
            key_pos = self.pos
            key = self.string() if self.peek_string() else self.bare_id("an attribute name")
            if key in attrs:
                self.error(f"duplicate attribute '{key}'", key_pos)
            if self.accept("="):
                attrs[key] = self.parse_attribute()
            else:
                attrs[key] = A.UNIT
            if not self.accept(","):
                break
        self.expect("}", "to close the attribute dictionary")
        return attrs

    def _hash_attribute(self) -> Any:
        start = self.pos
        m = _ALIAS_NAME.match(self.text, start)
        if m is None:
            self.expected("an attribute")
        name = m.group(0)[1:]
        self.pos = m.end()
        if "." not in name and not self.text.startswith("<", self.pos):
            if name not in self.attr_aliases:
                self.error(f"undefined attribute alias #{name}", start)
            return self.attr_aliases[name]
        if not self.text.startswith("<", self.pos):
            # `#dialect.name` without parameters: keep verbatim.
            return A.OpaqueAttr(self.text[start:self.pos])
        self.pos += 1
        from .syntax.dialect_attrs import parse_dialect_attribute

        return parse_dialect_attribute(self, name, start)

    # =========================================================================================
    # Locations
    # =========================================================================================

    def opt_location(self) -> Optional[Location]:
        self.skip_ws()
        if not self.text.startswith("loc(", self.pos):
            return None
        m = _LOC_ALIAS_USE.match(self.text, self.pos)
        if m is not None:
            self.pos = m.end()
            alias = m.group(1)
            return self.loc_aliases.get(alias) or LocRef(alias)
        self.pos += 4
        loc = self.parse_location_body()
        self.expect(")", "to close loc(...)")
        return loc

    def parse_location_body(self) -> Location:
        self.skip_ws()
        text = self.text
        pos = self.pos
        if text.startswith("#", pos):
            m = _ALIAS_NAME.match(text, pos)
            self.pos = m.end()
            alias = m.group(0)[1:]
            return self.loc_aliases.get(alias) or LocRef(alias)
        if self.accept_keyword("unknown"):
            return UnknownLoc()
        if self.accept_keyword("callsite"):
            self.expect("(")
            callee = self.parse_location_body()
            self.expect_keyword("at", "in callsite(... at ...)")
            caller = self.parse_location_body()
            self.expect(")")
            return CallSiteLoc(callee, caller)
        if self.accept_keyword("fused"):
            metadata = None
            if self.accept("<"):
                metadata = self.parse_attribute()
                self.expect(">")
            self.expect("[")
            locs = []
            if not self.accept("]"):
                locs.append(self.parse_location_body())
                while self.accept(","):
                    locs.append(self.parse_location_body())
                self.expect("]")
            return FusedLoc(tuple(locs), metadata)
        if self.peek_string():
            name = self.string()
            if self.accept(":"):
                line = self.integer("a line number")
                self.expect(":")
                col = self.integer("a column number")
                end_line = end_col = None
                if self.accept_keyword("to"):
                    if self.accept(":"):
                        end_col = self.integer()
                    else:
                        end_line = self.integer()
                        self.expect(":")
                        end_col = self.integer()
                return FileLineColLoc(name, line, col, end_line, end_col)
            child = None
            if self.accept("("):
                child = self.parse_location_body()
                self.expect(")")
            return NameLoc(name, child)
        # Another dialect's location attribute: keep verbatim up to the closing parenthesis.
        raw = self.balanced("(", ")")
        self.pos -= 1
        return OpaqueLoc(raw)

    def note_location(self, obj: Any, loc: Optional[Location]) -> None:
        if loc is None:
            return
        obj.location = loc
        if _has_ref(loc):
            self.located.append(obj)

    def resolve_locations(self) -> None:
        self._resolved: dict[str, Location] = {}
        for obj in self.located:
            obj.location = self._resolve(obj.location, ())

    def _resolve(self, loc: Location, seen: tuple[str, ...]) -> Location:
        if isinstance(loc, LocRef):
            alias = loc.alias
            done = self._resolved.get(alias)
            if done is not None:
                return done
            if alias in seen:
                raise ParseError(f"location alias #{alias} refers to itself")
            target = self.loc_aliases.get(alias)
            if target is None:
                raise ParseError(f"undefined location alias #{alias}")
            done = self._resolve(target, seen + (alias,))
            self._resolved[alias] = done
            return done
        if isinstance(loc, NameLoc) and loc.child is not None:
            return NameLoc(loc.name, self._resolve(loc.child, seen))
        if isinstance(loc, CallSiteLoc):
            return CallSiteLoc(self._resolve(loc.callee, seen), self._resolve(loc.caller, seen))
        if isinstance(loc, FusedLoc):
            return FusedLoc(tuple(self._resolve(l, seen) for l in loc.locations), loc.metadata)
        return loc

    # =========================================================================================
    # SSA values
    # =========================================================================================

    def lookup(self, name: str, offset: int) -> Value:
        for scope in reversed(self.scopes):
            value = scope.get(name)
            if value is not None:
                return value
            if scope.get("") is not None:  # an isolated-from-above boundary (function body)
                break
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
        if self.text.startswith("%", start):
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
        names = [base if count == 1 else f"{base}#{i}" for base, count in groups for i in range(count)]
        self.skip_ws()
        op_pos = self.pos
        pos = self.at(start)
        if self.text.startswith('"', op_pos):
            name = self.string()
            op = self.parse_generic_body(name, pos)
        else:
            name = self.bare_id("an operation name")
            parse = self.pretty.get(name)
            if parse is None:
                if "." not in name:
                    self.error(f"unknown operation '{name}'", op_pos)
                self.error(
                    f"'{name}' has no pretty syntax that hlodbg knows; write it in generic form "
                    f'("{name}"(...) : (...) -> ...)',
                    op_pos,
                )
            op = parse(self, name, names, pos)
        if declared != len(op.results):
            self.error(f"'{op.name}' has {len(op.results)} results but {declared} names were given", start)
        opdef = OPS.get(op.name)
        if opdef is not None:
            fill_defaults(opdef, op.attributes)
        self.note_location(op, self.opt_location())
        self.define_results(op, groups, start)
        block.append(op)
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
        self.expect("{", "to start a region")
        region = Region()
        scope: dict[str, Any] = {"": True} if isolated else {}
        self.scopes.append(scope)
        try:
            if self.accept("}"):
                if arguments:
                    block = region.add_block(Block())
                    for name, t, offset in arguments:
                        self.define(block.add_argument(name, t, self.at(offset)), offset)
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
                    for name, t, offset in arguments:
                        self.define(block.add_argument(name, t, self.at(offset)), offset)
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
            dtype = _storage_dtype(attr.type)
            expected = attr.type.num_elements * dtype.itemsize
            if len(payload) != expected:
                self.error(
                    f"resource {attr.resource} holds {len(payload)} bytes but {attr.type} needs {expected}",
                    blob_offset,
                )
            array = np.frombuffer(payload, dtype=dtype).reshape(attr.type.shape).copy()
            object.__setattr__(attr, "array", array)


def _storage_dtype(t: TensorType) -> np.dtype:
    element = t.element
    if isinstance(element, QuantizedType):
        return element.storage.numpy_dtype
    return element.numpy_dtype


def _has_ref(loc: Location) -> bool:
    if isinstance(loc, LocRef):
        return True
    if isinstance(loc, NameLoc):
        return loc.child is not None and _has_ref(loc.child)
    if isinstance(loc, CallSiteLoc):
        return _has_ref(loc.callee) or _has_ref(loc.caller)
    if isinstance(loc, FusedLoc):
        return any(_has_ref(l) for l in loc.locations)
    return False


SPLIT_MARKER = re.compile(r"^// -----\s*$", re.MULTILINE)


def parse_module(text: str, filename: str = "<string>") -> Module:
    """Parse one module. Raises ParseError (with file:line:col) for malformed input."""
    parser = Parser(text, filename)
    try:
        return parser.parse_top_level()
    except RecursionError:
        raise ParseError("input nests too deeply", parser.here()) from None


def split_chunks(text: str) -> list[tuple[int, str]]:
    """`// -----` separated inputs as (lines before the chunk, chunk text) pairs."""
    chunks = []
    last = 0
    for m in SPLIT_MARKER.finditer(text):
        chunks.append((text.count("\n", 0, last), text[last:m.start()]))
        last = m.end()
    chunks.append((text.count("\n", 0, last), text[last:]))
    return chunks


def parse_chunks(text: str, filename: str = "<string>") -> list[Module]:
    """Parse every `// -----` chunk; each keeps line numbers of the whole file in its errors."""
    modules = []
    for line_offset, chunk in split_chunks(text):
        if not chunk.strip() or all(
            l.strip() == "" or l.strip().startswith("//") for l in chunk.splitlines()
        ):
            continue
        padded = "\n" * line_offset + chunk
        modules.append(parse_module(padded, filename))
    return modules


__all__ = ["Parser", "parse_module", "parse_chunks", "split_chunks", "unescape_string"]
