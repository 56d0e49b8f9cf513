"""Cursor over .mlir text: whitespace/comment skipping and the primitive tokens of MLIR syntax.

The parser reads straight from the string with compiled regexes (no token list), because MLIR's
grammar is context sensitive (`2x3xf32` inside a tensor type, `[0:2]` slice ranges, ...).
"""
from __future__ import annotations

import re
from functools import lru_cache
from typing import NoReturn, Optional

from ...ir.errors import ParseError, SourcePos, SourceText

_WS = re.compile(r"(?:[ \t\r\n]+|//[^\n]*)*")
_WS_START = frozenset(" \t\r\n/")
_BARE_ID = re.compile(r"[A-Za-z_][A-Za-z0-9_$.\-]*")
_KEYWORD = re.compile(r"[A-Za-z_][A-Za-z0-9_$.]*")
VALUE_ID = re.compile(r"%(?:[A-Za-z_$.\-][A-Za-z0-9_$.\-]*|\d+)(?:#\d+)?")
_VALUE_DEF = re.compile(r"%(?:[A-Za-z_$.\-][A-Za-z0-9_$.\-]*|\d+)")
_BLOCK_ID = re.compile(r"\^[A-Za-z0-9_$.\-]+")
_SYMBOL = re.compile(r"@(?:[A-Za-z_][A-Za-z0-9_$.]*|\"(?:[^\"\\\n]|\\.)*\")")
_INT = re.compile(r"[-+]?(?:0x[0-9A-Fa-f]+|\d+)")
_NUMBER = re.compile(r"[-+]?(?:0x[0-9A-Fa-f]+|\d+(?:\.\d*)?(?:[eE][-+]?\d+)?)")
# Unrolled (runs of plain characters, then one escape) rather than one alternation per character:
# the regex engine then scans a 100 MB hex literal in one pass and without a growing stack.
_STRING = re.compile(r"\"[^\"\\\n]*(?:\\.[^\"\\\n]*)*\"")
_STRING_ESCAPE = re.compile(r"\\(?:([0-9A-Fa-f]{2})|(.))")
_ESCAPES = {"n": "\n", "t": "\t", '"': '"', "\\": "\\"}


@lru_cache(maxsize=None)
def _plain_run(open_ch: str, close_ch: str):
    """Matches the characters `balanced` passes over without a look (not brackets, quotes, '-')."""
    return re.compile(f"[^{re.escape(open_ch + close_ch)}\"\\-]*").match


def _describe_token(text: str, pos: int) -> str:
    if pos >= len(text):
        return "end of input"
    m = _BARE_ID.match(text, pos) or VALUE_ID.match(text, pos) or _NUMBER.match(text, pos)
    token = m.group(0) if m else text[pos]
    if len(token) > 30:
        token = token[:27] + "..."
    return f"'{token}'"


def is_blank(text: str) -> bool:
    """Whether `text` holds only whitespace and `//` comments."""
    return _WS.match(text).end() == len(text)


def unescape_string(body: str) -> str:
    if "\\" not in body:
        return body

    def replace(m: re.Match) -> str:
        if m.group(1):
            return chr(int(m.group(1), 16))
        ch = m.group(2)
        return _ESCAPES.get(ch, ch)

    return _STRING_ESCAPE.sub(replace, body)


class Lexer:
    """Position in the source plus the token-level reading operations."""

    def __init__(self, text: str, filename: str = "<string>"):
        self.source = SourceText(text, filename)
        self.text = text
        self.pos = 0

    # -- positions and errors ------------------------------------------------------------------

    def here(self) -> SourcePos:
        return SourcePos(self.source, self.pos)

    def at(self, offset: int) -> SourcePos:
        return SourcePos(self.source, offset)

    def error(self, message: str, offset: Optional[int] = None) -> NoReturn:
        raise ParseError(message, SourcePos(self.source, self.pos if offset is None else offset))

    def expected(self, what: str) -> NoReturn:
        self.skip_ws()
        self.error(f"expected {what}, found {_describe_token(self.text, self.pos)}")

    # -- whitespace ----------------------------------------------------------------------------

    def skip_ws(self) -> None:
        pos = self.pos
        text = self.text
        # Most calls land on a token already; skip the regex then.
        if pos < len(text) and text[pos] not in _WS_START:
            return
        self.pos = _WS.match(text, pos).end()

    def at_end(self) -> bool:
        self.skip_ws()
        return self.pos >= len(self.text)

    # -- punctuation and keywords --------------------------------------------------------------

    # The hot token readers inline the whitespace skip: it runs a few hundred thousand times per file.

    def peek(self, literal: str) -> bool:
        pos = self.pos
        text = self.text
        if pos < len(text) and text[pos] in _WS_START:
            pos = self.pos = _WS.match(text, pos).end()
        return text.startswith(literal, pos)

    def accept(self, literal: str) -> bool:
        pos = self.pos
        text = self.text
        if pos < len(text) and text[pos] in _WS_START:
            pos = self.pos = _WS.match(text, pos).end()
        if text.startswith(literal, pos):
            self.pos = pos + len(literal)
            return True
        return False

    def expect(self, literal: str, context: str = "") -> None:
        pos = self.pos
        text = self.text
        if pos < len(text) and text[pos] in _WS_START:
            pos = self.pos = _WS.match(text, pos).end()
        if text.startswith(literal, pos):
            self.pos = pos + len(literal)
            return
        where = f" {context}" if context else ""
        self.expected(f"'{literal}'{where}")

    def peek_keyword(self, word: str) -> bool:
        self.skip_ws()
        m = _KEYWORD.match(self.text, self.pos)
        return m is not None and m.group(0) == word

    def accept_keyword(self, word: str) -> bool:
        self.skip_ws()
        m = _KEYWORD.match(self.text, self.pos)
        if m is not None and m.group(0) == word:
            self.pos = m.end()
            return True
        return False

    def expect_keyword(self, word: str, context: str = "") -> None:
        if not self.accept_keyword(word):
            where = f" {context}" if context else ""
            self.expected(f"'{word}'{where}")

    def keyword(self, what: str = "a keyword") -> str:
        self.skip_ws()
        m = _KEYWORD.match(self.text, self.pos)
        if m is None:
            self.expected(what)
        self.pos = m.end()
        return m.group(0)

    def bare_id(self, what: str = "an identifier") -> str:
        self.skip_ws()
        m = _BARE_ID.match(self.text, self.pos)
        if m is None:
            self.expected(what)
        self.pos = m.end()
        return m.group(0)

    def opt_bare_id(self) -> Optional[str]:
        self.skip_ws()
        m = _BARE_ID.match(self.text, self.pos)
        if m is None:
            return None
        self.pos = m.end()
        return m.group(0)

    def delimited(self, open_: str, item, close: str, what: str = "the list") -> list:
        """`open item, item, ... close` (possibly empty): the one comma-list reader."""
        self.expect(open_)
        if self.accept(close):
            return []
        items = [item()]
        while self.accept(","):
            items.append(item())
        self.expect(close, f"to close {what}")
        return items

    # -- literals ------------------------------------------------------------------------------

    def string(self, what: str = "a string") -> str:
        self.skip_ws()
        m = _STRING.match(self.text, self.pos)
        if m is None:
            if self.text.startswith('"', self.pos):
                self.error("unterminated string")
            self.expected(what)
        self.pos = m.end()
        return unescape_string(m.group(0)[1:-1])

    def peek_string(self) -> bool:
        self.skip_ws()
        return self.text.startswith('"', self.pos)

    def integer(self, what: str = "an integer") -> int:
        self.skip_ws()
        m = _INT.match(self.text, self.pos)
        if m is None:
            self.expected(what)
        # An integer followed by '.' or an exponent is a float, not what was asked for.
        end = m.end()
        if end < len(self.text) and self.text[end] in ".eE" and not m.group(0).lower().startswith(("0x", "-0x")):
            if self.text[end] == "." or re.match(r"[eE][-+]?\d", self.text[end:end + 3]):
                self.expected(what)
        self.pos = end
        text = m.group(0)
        return int(text, 16) if "0x" in text.lower() else int(text, 10)

    def opt_integer(self) -> Optional[int]:
        self.skip_ws()
        m = _INT.match(self.text, self.pos)
        if m is None:
            return None
        return self.integer()

    def number(self, what: str = "a number") -> str:
        """The text of an integer or float literal (parsed later against its type)."""
        self.skip_ws()
        m = _NUMBER.match(self.text, self.pos)
        if m is None:
            self.expected(what)
        self.pos = m.end()
        return m.group(0)

    def peek_number(self) -> bool:
        self.skip_ws()
        return _NUMBER.match(self.text, self.pos) is not None

    # -- SSA and symbol names ------------------------------------------------------------------

    def value_use_name(self) -> str:
        pos = self.pos
        text = self.text
        if pos < len(text) and text[pos] in _WS_START:
            pos = self.pos = _WS.match(text, pos).end()
        m = VALUE_ID.match(text, pos)
        if m is None:
            self.expected("an SSA value such as %0")
        self.pos = m.end()
        return m.group(0)

    def peek_value(self) -> bool:
        pos = self.pos
        text = self.text
        if pos < len(text) and text[pos] in _WS_START:
            pos = self.pos = _WS.match(text, pos).end()
        return text.startswith("%", pos)

    def value_def_name(self) -> str:
        self.skip_ws()
        m = _VALUE_DEF.match(self.text, self.pos)
        if m is None:
            self.expected("an SSA value name such as %0")
        self.pos = m.end()
        return m.group(0)

    def block_label(self) -> str:
        self.skip_ws()
        m = _BLOCK_ID.match(self.text, self.pos)
        if m is None:
            self.expected("a block label such as ^bb0")
        self.pos = m.end()
        return m.group(0)

    def symbol(self, what: str = "a symbol such as @main") -> str:
        self.skip_ws()
        m = _SYMBOL.match(self.text, self.pos)
        if m is None:
            self.expected(what)
        self.pos = m.end()
        name = m.group(0)[1:]
        return unescape_string(name[1:-1]) if name.startswith('"') else name

    def balanced(self, open_ch: str = "<", close_ch: str = ">") -> str:
        """Raw text up to the bracket matching the one just consumed (strings and `->` skipped)."""
        text = self.text
        depth = 1
        start = self.pos
        i = start
        n = len(text)
        skip_plain = _plain_run(open_ch, close_ch)
        while i < n:
            i = skip_plain(text, i).end()
            if i >= n:
                break
            ch = text[i]
            if ch == '"':
                end = text.find('"', i + 1)  # a string without escapes: found by memchr, not the regex
                if end > 0 and text.find("\\", i, end) < 0 and text.find("\n", i, end) < 0:
                    i = end + 1
                    continue
                m = _STRING.match(text, i)
                if m is None:
                    self.error("unterminated string", i)
                i = m.end()
                continue
            if ch == "-" and i + 1 < n and text[i + 1] == ">":
                i += 2
                continue
            if ch == open_ch:
                depth += 1
            elif ch == close_ch:
                depth -= 1
                if depth == 0:
                    self.pos = i + 1
                    return text[start:i]
            i += 1
        self.error(f"unbalanced '{open_ch}': no matching '{close_ch}'", start - 1)
