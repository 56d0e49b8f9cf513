"""Reading the values inside ops: types, attributes and locations (the Parser's base class).

Split from parser.py, which reads ops, regions and modules on top of these.
"""
from __future__ import annotations

import re
from typing import Any, Optional

import numpy as np

from ...ir import attributes as A
from ...ir.locations import CallSiteLoc, FileLineColLoc, FusedLoc, Location, NameLoc, OpaqueLoc, UnknownLoc
from ...ir.types import (
    ComplexType,
    FloatType,
    FunctionType,
    FutureType,
    IntegerType,
    OpaqueType,
    QuantizedType,
    TensorType,
    TokenType,
    TupleType,
    Type,
    builtin_element_type,
)
from .dense import DenseFormatError, parse_dense_literal, parse_hex_digits, splat_array
from .lexer import Lexer
from .quant_type import check_bounds, parse_quant_uniform

_SIMPLE_TENSOR = re.compile(r"tensor<((?:(?:\d+|\?)x)*)([A-Za-z][A-Za-z0-9]*)>")
_ELEMENT_NAME = re.compile(r"[A-Za-z][A-Za-z0-9]*")
# Atomic groups keep these from backtracking (a long signature that fails to match must fail fast).
_TENSOR_TEXT = r"tensor<(?>(?:\d+|\?)x)*[A-Za-z][A-Za-z0-9]*>"
_SIMPLE_SIGNATURE = re.compile(
    rf"\((?>{_TENSOR_TEXT}(?:, {_TENSOR_TEXT})*)?\) -> (?>{_TENSOR_TEXT}|\((?>{_TENSOR_TEXT}(?:, {_TENSOR_TEXT})*)?\))"
)
_LOC_ALIAS_USE = re.compile(r"loc\(#([A-Za-z_][A-Za-z0-9_$.\-]*)\)")
_ATTR_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_DIMS = re.compile(r"((?:(?:\d+|\?)x)*)")
_RESULT_NAME = re.compile(r"(%(?:[A-Za-z_$.\-][A-Za-z0-9_$.\-]*|\d+))(?::(\d+))?")
_ALIAS_NAME = re.compile(r"[#!][A-Za-z_][A-Za-z0-9_$.\-]*")
_FLOAT_LIT = re.compile(r"[-+]?(?:\d+\.\d*(?:[eE][-+]?\d+)?|\d+[eE][-+]?\d+|inf|nan)")


class LocRef(Location):
    """A `#locN` used before its definition; replaced once the whole file has been read."""

    __slots__ = ("alias", "offset")

    def __init__(self, alias: str, offset: int):
        self.alias = alias
        self.offset = offset  # where the alias is used: an undefined one is reported there


class ValueParser(Lexer):
    """Types, attributes and locations, with the alias tables and caches they share."""

    def __init__(self, text: str, filename: str = "<string>"):
        super().__init__(text, filename)
        self.attr_aliases: dict[str, Any] = {}
        self.type_aliases: dict[str, Type] = {}
        self.loc_aliases: dict[str, Location] = {}
        self.located: list[Any] = []  # objects whose location may be an unresolved LocRef
        self.type_cache: dict[str, Type] = {}
        self.resources: dict[str, dict[str, Any]] = {}
        self.dense_resources: list[tuple[A.DenseElements, int]] = []

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
            self.skip_ws()
            encoding_at = self.pos
            encoding = self.parse_attribute()
            if isinstance(encoding, A.TypeExtensions):
                check_bounds(self, shape, encoding.bounds, encoding_at)
        self.expect(">", "to close tensor<...>")
        return TensorType(shape, element, encoding)

    def _bang_type(self) -> Type:
        start = self.pos
        if self.text.startswith("!stablehlo.token", start):
            self.pos = start + len("!stablehlo.token")
            return TokenType()
        if self.text.startswith("!stablehlo.future<", start):
            self.pos = start + len("!stablehlo.future<")
            return self._future(start)
        if self.text.startswith("!quant.uniform<", start):
            self.pos = start + len("!quant.uniform<")
            return parse_quant_uniform(self, start)
        m = _ALIAS_NAME.match(self.text, start)
        if m is None:
            self.expected("a type")
        name = m.group(0)
        self.pos = m.end()
        if name in self.type_aliases and not self.text.startswith("<", self.pos):
            return self.type_aliases[name]
        if "." not in name:
            self.error(f"undefined type alias {name}", start)
        if name.startswith("!stablehlo."):
            self.error(f"unknown stablehlo type {name}: StableHLO's types are !stablehlo.token and "
                       "!stablehlo.future<...>", start)
        if self.accept("<"):
            self.balanced("<", ">")
        return OpaqueType(self.text[start:self.pos])

    def _future(self, start: int) -> FutureType:
        types: list[Type] = [self.parse_type("a tensor type inside !stablehlo.future<...>")]
        while self.accept(","):
            types.append(self.parse_type("a tensor type inside !stablehlo.future<...>"))
        for t in types:
            if not isinstance(t, TensorType):
                self.error(f"a future holds tensors, not {t}", start)
        self.expect(">", "to close !stablehlo.future<...>")
        return FutureType(tuple(types))

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
        return self.delimited("(", self.parse_type, ")", "the type list")

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
            # MLIR reads `007` as decimal 7 (Python's base 0 refuses leading zeros).
            hexadecimal = literal.lower().lstrip("-+").startswith("0x")
            value = int(literal, 16 if hexadecimal else 10)
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
        hex_span = self._hex_digits()
        body = self.balanced("<", ">") if hex_span is None else None
        self.expect(":", "and the type of the dense literal")
        type_pos = self.pos
        t = self.parse_type("a tensor type for the dense literal")
        if not isinstance(t, TensorType):
            self.error(f"dense literal needs a tensor type, not {t}", type_pos)
        if isinstance(t.element, OpaqueType):
            # Elements of a dialect hlodbg does not model (`dense<"a"> : tensor<!tf_type.string>`):
            # kept verbatim, as the attribute of an op hlodbg passes through unread.
            return A.OpaqueAttr(self.text[start:self.pos])
        try:
            array = parse_dense_literal(body, t) if hex_span is None else parse_hex_digits(self.text, *hex_span, t)
        except DenseFormatError as e:
            self.error(str(e), body_start + e.offset)
        except (ValueError, OverflowError, TypeError) as e:
            self.error(f"bad dense literal: {e}", start)
        return A.DenseElements(t, array)

    def _hex_digits(self) -> Optional[tuple[int, int]]:
        """Where the digits of a `"0x..."` literal that closes the `dense<` are (consumed), else
        None: decoded straight from the source, a 100 MB literal's text is never copied."""
        text, pos = self.text, self.pos
        if not text.startswith('"0x', pos):
            return None
        end = text.find('"', pos + 3)
        if end < 0 or text.find("\\", pos, end) >= 0 or text.find("\n", pos, end) >= 0:
            return None
        close = end + 1
        while close < len(text) and text[close] in " \t\r\n":
            close += 1
        if not text.startswith(">", close):
            return None
        self.pos = close + 1
        return pos + 3, end

    def _dense_resource(self) -> A.DenseElements:
        start = self.pos
        self.pos += len("dense_resource<")
        name = self.bare_id("a resource name")
        self.expect(">")
        self.expect(":")
        t = self.parse_type("a tensor type")
        if not isinstance(t, TensorType) or not t.is_static:
            self.error("dense_resource needs a static tensor type", start)
        if name == A.ElidedElements.RESOURCE:  # MLIR's spelling of a blob left out of the text
            return A.ElidedElements(t, self.at(start))
        # A placeholder until the resource's blob is read: a zero splat.
        attr = A.DenseElements(t, splat_array(0, t.shape, storage_dtype(t)), resource=name)
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
        from .dialect_attrs import parse_dialect_attribute

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
            return self.loc_aliases.get(alias) or LocRef(alias, m.start(1) - 1)
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
            if m is None:
                self.expected("a location alias such as #loc1")
            self.pos = m.end()
            alias = m.group(0)[1:]
            return self.loc_aliases.get(alias) or LocRef(alias, pos)
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
                self.error(f"location alias #{alias} refers to itself", loc.offset)
            target = self.loc_aliases.get(alias)
            if target is None:
                self.error(f"undefined location alias #{alias} (no '#{alias} = loc(...)' line defines it)", loc.offset)
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


def storage_dtype(t: TensorType) -> np.dtype:
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
