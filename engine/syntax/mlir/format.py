"""Declarative pretty syntax: one format string per op gives both its parser and its printer.

Format notation (ours, modelled on how StableHLO documents its assembly):
  $name          an operand group or an attribute of the op (by the OpDef)
  %operands      every operand, comma separated
  %functional    `: (T, ...) -> R` style type directives (see TYPE_DIRECTIVES)
  %dot_dims ...  custom attribute syntaxes (see CUSTOM_DIRECTIVES in custom_directives.py)
  attr-dict      `{k = v}` of the attributes the format does not spell out
  {? ... ?}      an optional group, present when the first $attribute inside it is set
  anything else  a literal keyword or punctuation
A token written without a space before it (`$lhs,`) prints without one.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable, Optional

from ...ir import attributes as A
from ...ir.opset import OPS
from . import attribute_text as T
from ...ir.core import Operation, Value
from ...ir.types import ComplexType, FunctionType, TensorType, TupleType, Type, format_result_types

_TOKEN = re.compile(r"\s*(\{\?|\?\}|\$\w+|%\w+|attr-dict-with-keyword|attr-dict|->|[,=:()\[\]<>{}]|[A-Za-z_][\w.]*)")


@dataclass
class Token:
    kind: str  # literal | operand | attr | directive | attr_dict | optional
    text: str
    space: bool
    group: Optional[list["Token"]] = None


class Syntax:
    """Base: something that can parse an op's pretty form and print it back."""

    opdef: Any = None

    def bind(self, opdef) -> "Syntax":
        self.opdef = opdef
        return self

    def parse(self, p, name: str, names: list[str], pos) -> Operation:  # pragma: no cover - abstract
        raise NotImplementedError

    def print(self, pr, op: Operation) -> Optional[str]:  # pragma: no cover - abstract
        raise NotImplementedError


# The pretty form of each op that has one, by op name; every other op prints generically.
FORMATS: dict[str, Syntax] = {}


def mlir_syntax(name: str, syntax: Syntax) -> Syntax:
    """Give the op `name` (defined in ir/opset) this pretty MLIR form."""
    if name in FORMATS:
        raise ValueError(f"op {name} has two MLIR syntaxes")
    opdef = OPS.get(name)
    if opdef is None:
        raise ValueError(f"MLIR syntax for {name}, which no op definition names")
    FORMATS[name] = syntax.bind(opdef)
    return FORMATS[name]


class Format(Syntax):
    def __init__(self, text: str):
        self.text = text
        self.tokens: list[Token] = []

    def bind(self, opdef) -> "Format":
        self.opdef = opdef
        self.tokens = self._compile(self.text)
        return self

    def _compile(self, text: str) -> list[Token]:
        stack: list[list[Token]] = [[]]
        group_spaces: list[bool] = []  # whether each open `{?` had a space before it
        pos = 0
        operand_names = {n for n, _ in self.opdef.operands}
        while pos < len(text):
            m = _TOKEN.match(text, pos)
            if m is None:
                if text[pos:].strip() == "":
                    break
                raise ValueError(f"bad format for {self.opdef.name}: {text[pos:]!r}")
            word = m.group(1)
            # A format hugs the op name only when it opens with a bracket: `stablehlo.while(`.
            space = m.start(1) > pos or (pos == 0 and word not in ("(", "["))
            pos = m.end()
            if word == "{?":
                stack.append([])
                group_spaces.append(space)
                continue
            if word == "?}":
                group = stack.pop()
                opened_with_space = group_spaces.pop()
                stack[-1].append(Token("optional", "", opened_with_space or group[0].space, group))
                continue
            if word.startswith("$"):
                name = word[1:]
                kind = "operand" if name in operand_names else "attr"
                if kind == "attr" and name not in self.opdef.attrs:
                    raise ValueError(f"format of {self.opdef.name} names unknown ${name}")
                stack[-1].append(Token(kind, name, space))
            elif word.startswith("%"):
                directive = word[1:]
                if directive not in TYPE_DIRECTIVES and directive not in CUSTOM_DIRECTIVES and directive != "operands":
                    raise ValueError(f"format of {self.opdef.name} uses unknown %{directive}")
                stack[-1].append(Token("directive", directive, space))
            elif word.startswith("attr-dict"):
                stack[-1].append(Token("attr_dict", word, space))
            else:
                stack[-1].append(Token("literal", word, space))
        if len(stack) != 1:
            raise ValueError(f"unbalanced optional group in format of {self.opdef.name}")
        return stack[0]

    # -- parsing -----------------------------------------------------------------------------

    def parse(self, p, name: str, names: list[str], pos) -> Operation:
        state = ParseState(p, self.opdef)
        self._parse_tokens(state, self.tokens)
        return state.build(name, pos)

    def _parse_tokens(self, state: "ParseState", tokens: list[Token]) -> None:
        p = state.p
        for token in tokens:
            kind = token.kind
            if kind == "literal":
                _expect_literal(p, token.text, self.opdef.name)
            elif kind == "operand":
                state.parse_operand_group(token.text)
            elif kind == "attr":
                state.attrs[token.text] = parse_pretty_attr(p, self.opdef.attrs[token.text].kind, token.text)
            elif kind == "directive":
                if token.text == "operands":
                    state.parse_all_operands()
                elif token.text in TYPE_DIRECTIVES:
                    TYPE_DIRECTIVES[token.text][0](state)
                else:
                    CUSTOM_DIRECTIVES[token.text][0](state)
            elif kind == "attr_dict":
                state.parse_attr_dict(token.text == "attr-dict-with-keyword")
            elif kind == "optional":
                if _optional_present(p, token.group):
                    self._parse_tokens(state, token.group)

    # -- printing ----------------------------------------------------------------------------

    def print(self, pr, op: Operation) -> str:
        out: list[str] = []
        self._print_tokens(pr, op, self.tokens, out, set(self._spelled_attrs(self.tokens)))
        return "".join(out)

    def _spelled_attrs(self, tokens: list[Token]):
        for token in tokens:
            if token.kind == "attr":
                yield token.text
            elif token.kind == "directive" and token.text in CUSTOM_DIRECTIVES:
                yield from CUSTOM_DIRECTIVES[token.text][2]
            elif token.kind == "optional":
                yield from self._spelled_attrs(token.group)

    def _print_tokens(self, pr, op: Operation, tokens: list[Token], out: list[str], spelled: set[str]) -> None:
        for token in tokens:
            kind = token.kind
            if kind == "literal":
                text = token.text
            elif kind == "operand":
                text = pr.operands(self._group(op, token.text))
            elif kind == "attr":
                text = format_pretty_attr(op.attributes[token.text], self.opdef.attrs[token.text].kind)
            elif kind == "directive":
                if token.text == "operands":
                    text = pr.operands(op.operands)
                elif token.text in TYPE_DIRECTIVES:
                    text = TYPE_DIRECTIVES[token.text][1](op)
                else:
                    text = CUSTOM_DIRECTIVES[token.text][1](op)
            elif kind == "attr_dict":
                text = pr.attr_dict(op, spelled, keyword=token.text == "attr-dict-with-keyword")
            else:
                anchor = next((t.text for t in token.group if t.kind == "attr"), None)
                if anchor is None or not is_set(op, self.opdef, anchor):
                    continue
                inner: list[str] = []
                self._print_tokens(pr, op, token.group, inner, spelled)
                text = "".join(inner).lstrip()
            if text == "":
                continue
            out.append((" " + text) if token.space else text)

    def _group(self, op: Operation, name: str) -> list[Value]:
        groups = self.opdef.operand_groups(len(op.operands))
        start, end = groups[name]
        return op.operands[start:end]


def is_set(op: Operation, opdef, name: str) -> bool:
    """Whether an optional attribute is present with a value other than its default."""
    if name not in op.attributes:
        return False
    spec = opdef.attrs[name]
    if spec.default is not None:
        return A.attribute_key(op.attributes[name]) != A.attribute_key(default_value(spec.kind, spec.default))
    return True


def _optional_present(p, group: list[Token]) -> bool:
    first = group[0]
    if first.kind == "literal":
        return _peek_literal(p, first.text)
    if first.kind == "operand":
        return p.peek_value()
    if first.kind == "attr":
        return not p.peek(":") and not p.peek("{")
    return False


def _peek_literal(p, text: str) -> bool:
    if text[0].isalpha():
        return p.peek_keyword(text)
    return p.peek(text)


def _expect_literal(p, text: str, opname: str) -> None:
    p.skip_ws()
    if p.text.startswith(text, p.pos):
        end = p.pos + len(text)
        # A keyword must not run on into a longer word (`dims` is not `dimsx`).
        if not text[0].isalpha() or not _continues_word(p.text, end):
            p.pos = end
            return
    p.expected(f"'{text}' in {opname}")


def _continues_word(text: str, pos: int) -> bool:
    return pos < len(text) and (text[pos].isalnum() or text[pos] in "_$.")


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


def fill_defaults(opdef, attrs: dict) -> None:
    for key, spec in opdef.attrs.items():
        if key not in attrs and spec.default is not None:
            attrs[key] = default_value(spec.kind, spec.default)


# ---------------------------------------------------------------------------------------------
# Attribute kinds in pretty position: `dims = [1, 0]`, `dim = 0`, `LT`, `"config"`, `@sym`.
# ---------------------------------------------------------------------------------------------

_INT_TYPES = {"i64": A.I64, "i32": None}


def _int_type(kind: str):
    from ...ir.types import IntegerType

    return IntegerType(int(kind[1:]))


def parse_pretty_attr(p, kind: str, name: str) -> Any:
    if kind in ("i64", "i32"):
        return A.IntegerAttr(p.integer(f"an integer for {name}"), _int_type(kind))
    if kind == "i64s":
        return A.DenseArray(parse_int_list(p), "i64")
    if kind == "bools":
        return A.DenseArray(parse_bool_list(p), "i1")
    if kind == "bool":
        word = p.bare_id("true or false")
        if word not in ("true", "false"):
            p.error(f"expected true or false for {name}", p.pos - len(word))
        return word == "true"
    if kind == "str":
        return p.string(f"a string for {name}")
    if kind == "f64":
        # `tolerance = 1.0e-3` or `1.0e-3 : f64`; a trailing `: tensor<...>` belongs to the op.
        value = float(p.number(f"a number for {name}"))
        save = p.pos
        if p.accept(":") and not (p.accept_keyword("f64") or p.accept_keyword("f32")):
            p.pos = save
        return A.FloatAttr(value)
    if kind == "symbol":
        return A.SymbolRef(p.symbol())
    if kind.startswith("enum."):
        from .dialect_attrs import ENUMS

        enum_kind = kind[5:]
        p.skip_ws()
        offset = p.pos
        word = p.bare_id(f"a {enum_kind} value")
        allowed = ENUMS.get(enum_kind)
        if allowed is not None and word not in allowed:
            p.error(f"'{word}' is not a {enum_kind}; expected one of {', '.join(allowed)}", offset)
        return A.EnumAttr(word, enum_kind)
    return p.parse_attribute()


def format_pretty_attr(value: Any, kind: str) -> str:
    if kind in ("i64", "i32"):
        return str(int(value))
    if kind in ("i64s", "bools"):
        return format_int_list(value)
    if kind == "bool":
        return "true" if value else "false"
    if kind.startswith("enum."):
        return str(value)
    if kind == "f64":
        return repr(float(value))
    return T.format_attribute(value)


def parse_int_list(p) -> list[int]:
    return p.delimited("[", p.integer, "]")


def parse_bool_list(p) -> list[bool]:
    p.expect("[")
    values: list[bool] = []
    if not p.accept("]"):
        while True:
            p.skip_ws()
            offset = p.pos
            word = p.bare_id("true or false")
            if word in ("true", "false"):
                values.append(word == "true")
            elif word in ("0", "1"):
                values.append(word == "1")
            else:
                p.error("expected true or false", offset)
            if not p.accept(","):
                break
        p.expect("]")
    return values


def format_int_list(values) -> str:
    if isinstance(values, A.DenseArray) and values.element == "i1":
        return "[" + ", ".join("true" if v else "false" for v in values) + "]"
    return "[" + ", ".join(str(int(v)) for v in values) + "]"


def default_value(kind: str, text: str) -> Any:
    if kind == "bool":
        return text == "true"
    if kind in ("i64", "i32"):
        return A.IntegerAttr(int(text), _int_type(kind))
    if kind == "str":
        return "" if text == "''" else text
    if kind == "dict":
        return {}
    if kind in ("symbols", "aliases"):
        return A.ArrayAttr(())
    if kind.startswith("enum."):
        return A.EnumAttr(text, kind[5:])
    if kind == "accuracy":
        return A.ResultAccuracy(mode=A.EnumAttr("DEFAULT", ".result_accuracy_mode"))
    raise ValueError(f"no default for attribute kind {kind}")


# ---------------------------------------------------------------------------------------------
# Type directives: how the trailing `: ...` gives the result types.
# ---------------------------------------------------------------------------------------------


def _start_types(state: ParseState) -> None:
    state.p.skip_ws()
    state.type_pos = state.p.pos


def _parse_functional(state: ParseState) -> None:
    _start_types(state)
    p = state.p
    t = p.parse_type("a function type (operand types) -> result types")
    if not isinstance(t, FunctionType):
        p.error(f"{state.opdef.name} ends with a function type such as (tensor<f32>) -> tensor<f32>", state.type_pos)
    state.check_operand_types(list(t.inputs))
    state.result_types = list(t.results)


def _print_functional(op: Operation) -> str:
    return str(FunctionType(tuple(op.operand_types), tuple(op.result_types)))


def _took_functional(state: ParseState, t: Type) -> bool:
    """Every short type form may also be written as a full function type; take it if it is one."""
    if not isinstance(t, FunctionType):
        return False
    state.check_operand_types(list(t.inputs))
    state.result_types = list(t.results)
    return True


def _parse_same(state: ParseState) -> None:
    """SameOperandsAndResultType: `: T` when every operand and the result are T, else functional."""
    _start_types(state)
    p = state.p
    t = p.parse_type()
    if _took_functional(state, t):
        return
    state.check_operand_types([t] * len(state.operands))
    state.result_types = [t]


def _print_same(op: Operation) -> str:
    types = op.operand_types + op.result_types
    if types and all(t == types[0] for t in types):
        return f"{types[0]}"
    return _print_functional(op)


def _parse_select(state: ParseState) -> None:
    """`: P, T` (predicate type, then the type of both branches and the result) or functional."""
    _start_types(state)
    p = state.p
    first = p.parse_type()
    if _took_functional(state, first):
        return
    p.expect(",", "and the type of the selected values")
    second = p.parse_type()
    state.check_operand_types([first, second, second])
    state.result_types = [second]


def _print_select(op: Operation) -> str:
    pred, on_true, on_false = op.operand_types
    result = op.result_types[0]
    if on_true == on_false == result:
        return f"{pred}, {result}"
    return _print_functional(op)


def _real_of(t: Type) -> Optional[Type]:
    if isinstance(t, TensorType) and isinstance(t.element, ComplexType):
        return TensorType(t.shape, t.element.element, t.encoding)
    return None


def _parse_complex(state: ParseState) -> None:
    _start_types(state)
    t = state.p.parse_type()
    if _took_functional(state, t):
        return
    real = _real_of(t)
    if real is None:
        state.p.error(f"stablehlo.complex produces a complex tensor, not {t}", state.type_pos)
    state.check_operand_types([real, real])
    state.result_types = [t]


def _print_complex(op: Operation) -> str:
    real = _real_of(op.result_types[0])
    if real is not None and all(t == real for t in op.operand_types):
        return f"{op.result_types[0]}"
    return _print_functional(op)


def _parse_tuple(state: ParseState) -> None:
    _start_types(state)
    t = state.p.parse_type("a tuple type")
    if _took_functional(state, t):
        return
    if not isinstance(t, TupleType):
        state.p.error(f"stablehlo.tuple produces a tuple type, not {t}", state.type_pos)
    state.check_operand_types(list(t.types))
    state.result_types = [t]


def _print_tuple(op: Operation) -> str:
    return f"{op.result_types[0]}"


def _parse_variadic_same(state: ParseState) -> None:
    """after_all: `: !stablehlo.token` — the one type of the inputs and the result."""
    _start_types(state)
    t = state.p.parse_type()
    if _took_functional(state, t):
        return
    state.check_operand_types([t] * len(state.operands))
    state.result_types = [t]


def _print_variadic_same(op: Operation) -> str:
    return f"{op.result_types[0]}"


def _parse_pairwise(state: ParseState) -> None:
    """optimization_barrier: `: T1, T2` — each result has its operand's type."""
    _start_types(state)
    types = state.p.parse_type_list()
    state.check_operand_types(types)
    state.result_types = types


def _print_pairwise(op: Operation) -> str:
    return ", ".join(map(str, op.operand_types))


def _parse_results(state: ParseState) -> None:
    """`: T` or `: T1, T2` — the result types only (ops without operands)."""
    _start_types(state)
    state.result_types = state.p.parse_type_list()


def _print_results(op: Operation) -> str:
    return ", ".join(map(str, op.result_types))


def _parse_operands_arrow(state: ParseState) -> None:
    """`: T1, T2 -> R` or `: T -> (R1, R2)` (chlo style: operand types, arrow, result types)."""
    _start_types(state)
    p = state.p
    operand_types = p.parse_type_list()
    if len(operand_types) == 1 and isinstance(operand_types[0], FunctionType) and not p.peek("->"):
        ftype = operand_types[0]
        state.check_operand_types(list(ftype.inputs))
        state.result_types = list(ftype.results)
        return
    p.expect("->", "and the result types")
    results = p.parse_result_types()
    state.check_operand_types(operand_types)
    state.result_types = results


def _print_operands_arrow(op: Operation) -> str:
    return ", ".join(map(str, op.operand_types)) + " -> " + format_result_types(op.result_types)


def _parse_operand_types(state: ParseState) -> None:
    """return: `: T1, T2` after the operands, absent when there are none."""
    p = state.p
    if not state.operands:
        state.result_types = []
        return
    p.expect(":", "and the operand types")
    _start_types(state)
    state.check_operand_types(p.parse_type_list())
    state.result_types = []


def _print_operand_types(op: Operation) -> str:
    if not op.operands:
        return ""
    return ": " + ", ".join(map(str, op.operand_types))


def _parse_operands_same(state: ParseState) -> None:
    """`: T` — the one type of every operand; the op has no results (check.expect_eq)."""
    _start_types(state)
    t = state.p.parse_type()
    state.check_operand_types([t] * len(state.operands))
    state.result_types = []


def _print_operands_same(op: Operation) -> str:
    return f"{op.operand_types[0]}"


def _parse_operand_list(state: ParseState) -> None:
    """`: T1, T2` — each operand's type; the op has no results (check.expect_close)."""
    _start_types(state)
    state.check_operand_types(state.p.parse_type_list())
    state.result_types = []


def _parse_no_results(state: ParseState) -> None:
    """Nothing to read: operand types are known from the values, and there are no results."""
    state.result_types = []


TYPE_DIRECTIVES: dict[str, tuple[Callable, Callable]] = {
    "functional": (_parse_functional, _print_functional),
    "same": (_parse_same, _print_same),
    "select": (_parse_select, _print_select),
    "complex": (_parse_complex, _print_complex),
    "tuple": (_parse_tuple, _print_tuple),
    "variadic_same": (_parse_variadic_same, _print_variadic_same),
    "pairwise": (_parse_pairwise, _print_pairwise),
    "results": (_parse_results, _print_results),
    "operands_arrow": (_parse_operands_arrow, _print_operands_arrow),
    "operand_types": (_parse_operand_types, _print_operand_types),
    "operands_same": (_parse_operands_same, _print_operands_same),
    "operand_list": (_parse_operand_list, _print_pairwise),
    "no_results": (_parse_no_results, lambda op: ""),
}

# name -> (parse(state), print(op) -> str, attribute names it spells). Filled by custom_directives.
CUSTOM_DIRECTIVES: dict[str, tuple[Callable, Callable, tuple[str, ...]]] = {}
