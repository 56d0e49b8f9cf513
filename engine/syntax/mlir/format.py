"""Declarative pretty syntax: one format string per op gives both its parser and its printer.

Format notation (ours, modelled on how StableHLO documents its assembly):
  $name          an operand group or an attribute of the op (by the OpDef)
  %operands      every operand, comma separated
  %functional    `: (T, ...) -> R` style type directives (see TYPE_DIRECTIVES in type_directives.py)
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
from ...ir.core import Operation, Value
from ...ir.opset import OPS
from ...ir.types import mlir_float
from . import attribute_text as T
from .parse_state import ParseState
from .type_directives import TYPE_DIRECTIVES

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
    # False: a form hlodbg reads (as other tools write it) that stablehlo-opt does not print, so
    # neither does hlodbg; the op prints in generic form.
    printed: bool = True

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
    def __init__(self, text: str, space_before_empty_operands: bool = True):
        self.text = text
        self.tokens: list[Token] = []
        # MLIR's generated printers write the space before an operand list even when it is empty
        # (`stablehlo.after_all  : !stablehlo.token`, `stablehlo.return `), unless the format
        # holds the operands in an optional group (func.return's).
        self.space_before_empty_operands = space_before_empty_operands

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
                if token.space and self.space_before_empty_operands and (
                        kind == "operand" or (kind == "directive" and token.text == "operands")):
                    out.append(" ")
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
        return mlir_float(float(value))
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


# name -> (parse(state), print(op) -> str, attribute names it spells). Filled by custom_directives.
CUSTOM_DIRECTIVES: dict[str, tuple[Callable, Callable, tuple[str, ...]]] = {}
