"""A cursor over one HLO attribute value's text, for the decoders in attr_values.py and its siblings.

Every attribute value reaches the decoders as its exact text and the SourcePos where it starts
(tree.HloAttr). The reader walks that text the way XLA's lexer would (whitespace and `/* */` or
`//` comments between tokens, C-escaped strings, brace-balanced blobs) and raises ParseError at
the offending character, naming what was expected there.
"""
from __future__ import annotations

import builtins
import re
from typing import Callable, Iterator, NoReturn, Optional, TypeVar

from ...ir.errors import ParseError, SourcePos

T = TypeVar("T")

_SKIP = re.compile(r"(?:\s+|/\*.*?\*/|//[^\r\n]*)*", re.S)
_INT = re.compile(r"-?\d+")
# XLA's decimal token: digits with a fraction and/or an exponent (hlo_text.md §2), or an integer.
_FLOAT = re.compile(r"-?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][+-]?\d+)?")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]*")
_TOKEN = re.compile(r"[A-Za-z0-9_.\-]+|\S")
_SIMPLE_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "f": "\f", "v": "\v",
                   "\\": "\\", "'": "'", '"': '"', "?": "?"}


class AttrReader:
    """Position `i` inside `text`; `base` is where the text starts in its file."""

    def __init__(self, text: str, base: SourcePos, what: str):
        self.text = text
        self.base = base
        self.what = what  # the attribute, for messages: "window", "replica_groups", ...
        self.i = 0

    # -- positions and errors ------------------------------------------------------------------

    def pos(self, i: Optional[int] = None) -> SourcePos:
        return SourcePos(self.base.source, self.base.offset + (self.i if i is None else i))

    def error(self, message: str, i: Optional[int] = None) -> NoReturn:
        raise ParseError(message, self.pos(i))

    def describe(self) -> str:
        """The token at the cursor, quoted, or 'the end of the value'."""
        self.skip()
        if self.i >= len(self.text):
            return f"the end of the {self.what} value"
        token = _TOKEN.match(self.text, self.i).group(0)
        return f"'{token[:27] + '...' if len(token) > 30 else token}'"

    def expected(self, what: str) -> NoReturn:
        self.skip()
        self.error(f"expected {what} in {self.what}, found {self.describe()}")

    # -- reading -------------------------------------------------------------------------------

    def skip(self) -> None:
        self.i = _SKIP.match(self.text, self.i).end()

    def mark(self) -> int:
        """The index of the next token (whitespace and comments skipped), for error positions."""
        self.skip()
        return self.i

    def peek(self, length: int = 1) -> str:
        self.skip()
        return self.text[self.i:self.i + length]

    def at_end(self) -> bool:
        self.skip()
        return self.i >= len(self.text)

    def accept(self, literal: str) -> bool:
        if self.peek(len(literal)) == literal:
            self.i += len(literal)
            return True
        return False

    def expect(self, literal: str, what: Optional[str] = None) -> None:
        if not self.accept(literal):
            self.expected(what or f"'{literal}'")

    def end(self) -> None:
        """The value must stop here."""
        if not self.at_end():
            self.error(f"unexpected {self.describe()} after the {self.what} value")

    def match(self, pattern: re.Pattern) -> Optional[str]:
        self.skip()
        m = pattern.match(self.text, self.i)
        if m is None:
            return None
        self.i = m.end()
        return m.group(0)

    def int(self, what: str = "an integer") -> int:
        start = self.i
        token = self.match(_INT)
        if token is None or self._glued():
            self.i = start
            self.expected(what)
        return int(token)

    def float(self, what: str = "a number") -> float:
        self.skip()
        start = self.i
        for word, value in (("-inf", float("-inf")), ("inf", float("inf")), ("-nan", float("nan")),
                            ("nan", float("nan"))):
            if self.text.startswith(word, self.i):
                self.i += len(word)
                if not self._glued():
                    return value
                self.i = start
        token = self.match(_FLOAT)
        if token is None or self._glued():
            self.i = start
            self.expected(what)
        return float(token)

    def number(self, what: str = "a number") -> builtins.int | builtins.float:  # `int` here is the method
        """An integer when written as one (`2`), else a float (`0.5`, `1e-3`, `inf`)."""
        start = self.mark()
        value = self.float(what)
        return int(value) if _INT.fullmatch(self.text, start, self.i) else value

    def word(self, what: str = "a name") -> str:
        token = self.match(_WORD)
        if token is None:
            self.expected(what)
        return token

    def name(self, what: str = "a name") -> str:
        """`%name` or `name` (XLA drops the `%`)."""
        self.accept("%")
        return self.word(what)

    def attribute_name(self, what: str = "a sub-attribute name") -> str:
        """`name=`: XLA's attribute-name token (no space before `=`)."""
        start = self.i
        name = self.word(what)
        if not self.text.startswith("=", self.i):
            self.i = start
            self.expected(f"{what} followed by '='")
        self.i += 1
        return name

    def unique_attribute_name(self, seen, what: str, duplicate: str) -> str:
        """`name=` for a name not in `seen` (a record names each field once); `duplicate` is the
        error's text, with `{name}` standing for the name, located at the name."""
        at = self.mark()
        name = self.attribute_name(what)
        if name in seen:
            self.error(duplicate.format(name=name), at)
        return name

    def fields(self, end: str) -> Iterator[None]:
        """One turn per field of a `{a=.. b=..}` record (fields separated by spaces or commas, as
        XLA's sub-attribute parser takes them), after the `{`, until its `}`; `end` says what the
        `}` ends when the text stops first."""
        while not self.accept("}"):
            if self.at_end():
                self.expected(f"'}}' to end {end}")
            self.accept(",")
            yield

    def string(self, what: str = "a quoted string") -> str:
        """A `"..."` or `'...'` string with C escapes, unescaped."""
        self.skip()
        quote = self.text[self.i:self.i + 1]
        if quote not in ('"', "'"):
            self.expected(what)
        start = self.i
        out = bytearray()
        i = self.i + 1
        text = self.text
        while True:
            if i >= len(text):
                self.error(f"unterminated string in {self.what}", start)
            ch = text[i]
            if ch == quote:
                break
            if ch != "\\":
                out += ch.encode()
                i += 1
                continue
            i = self._escape(i, out)
        self.i = i + 1
        try:
            return out.decode("utf-8")
        except UnicodeDecodeError:
            self.error(f"the string in {self.what} is not UTF-8 once its escapes are read", start)

    def _escape(self, i: builtins.int, out: bytearray) -> builtins.int:
        """Decode the escape at text[i] == '\\' into `out`; returns the index after it."""
        text = self.text
        ch = text[i + 1:i + 2]
        if ch in _SIMPLE_ESCAPES:
            out += _SIMPLE_ESCAPES[ch].encode()
            return i + 2
        octal = re.match(r"[0-7]{1,3}", text[i + 1:i + 4])
        if octal:
            value = int(octal.group(0), 8)
            if value > 255:
                self.error("octal escape above \\377 in a string", i)
            out.append(value)
            return i + 1 + len(octal.group(0))
        if ch == "x":
            digits = re.match(r"[0-9A-Fa-f]+", text[i + 2:])
            if digits is None or int(digits.group(0), 16) > 255:
                self.error("expected one byte of hex digits after \\x in a string", i)
            out.append(int(digits.group(0), 16))
            return i + 2 + len(digits.group(0))
        if ch in ("u", "U"):
            count = 4 if ch == "u" else 8
            digits = text[i + 2:i + 2 + count]
            if not re.fullmatch(r"[0-9A-Fa-f]{%d}" % count, digits) or int(digits, 16) > 0x10FFFF:
                self.error(f"expected {count} hex digits of a code point after \\{ch} in a string", i)
            out += chr(int(digits, 16)).encode("utf-8", "surrogatepass")
            return i + 2 + count
        self.error(f"unknown escape '\\{ch}' in a string", i)

    def balanced(self, what: str = "'{'") -> str:
        """A brace-balanced `{...}` blob (quotes respected), returned whole with its braces."""
        self.skip()
        start = self.i
        if not self.text.startswith("{", start):
            self.expected(what)
        depth = 0
        i = start
        text = self.text
        while i < len(text):
            ch = text[i]
            if ch in ('"', "'"):
                self.i = i
                self.string()
                i = self.i
                continue
            if ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
                if depth == 0:
                    self.i = i + 1
                    return text[start:self.i]
            i += 1
        self.error(f"unbalanced '{{' in {self.what}: no matching '}}'", start)

    def list(self, open_: str, close: str, item, separator: str = ","):
        """`open item (sep item)* close`, or an empty `open close`; `item()` reads one element."""
        self.expect(open_)
        items = []
        if self.accept(close):
            return items
        while True:
            items.append(item())
            if self.accept(close):
                return items
            if not self.accept(separator):
                self.expected(f"'{separator}' or '{close}'")

    def int_list(self, open_: str = "{", close: str = "}", separator: str = ",") -> tuple[builtins.int, ...]:
        return tuple(self.list(open_, close, self.int, separator))

    def _glued(self) -> bool:
        """Whether a number just read runs into letters (`3x3`, `12abc`): then it was not one."""
        return self.i < len(self.text) and (self.text[self.i].isalnum() or self.text[self.i] in "_.")


def read_whole(text: str, base: SourcePos, what: str, read: Callable[[AttrReader], T]) -> T:
    """Read the entire value with `read`; anything left over is an error."""
    r = AttrReader(text, base, what)
    value = read(r)
    r.end()
    return value
