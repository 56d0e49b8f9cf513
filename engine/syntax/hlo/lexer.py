"""Cursor over XLA HLO text: whitespace and comments, names, numbers, strings, and the extents of
values the parser keeps as text (attribute values, layouts, constant literals).

Like the MLIR lexer, it reads straight from the string with compiled regexes rather than a token
list: HLO's few context-sensitive spots (a `{` after dims is a layout only when an int or `:`
follows; a name followed by `(` is a nested instruction) are easier to decide by looking ahead in
the text. A cursor covers one `// -----` chunk (`start`..`end`) of the whole file, so every
position it reports is a true offset into the file.
"""
from __future__ import annotations

import re
from typing import NoReturn, Optional

from ...ir.errors import ParseError, SourcePos, SourceText

# Whitespace, `// ...` line comments and `/* ... */` block comments (`/*index=5*/` in long lists).
_SKIP = re.compile(r"(?:[ \t\r\n]+|//[^\r\n]*|/\*(?:[^*]|\*(?!/))*\*/)*")
_SKIP_START = frozenset(" \t\r\n/")
_SPACES = re.compile(r"[ \t\r\n]*")
_BLANKS_IN_LINE = re.compile(r"[ \t]*")
# hlo_lexer.cc: identifiers may hold `.` and `-` (`get-tuple-element.8`); `%` is dropped.
_NAME = re.compile(r"%?([A-Za-z_][A-Za-z0-9_.\-]*)")
_INT = re.compile(r"-?\d+")
# Strings may span lines (origin_recovery_table holds a whole module in one).
_STRING = re.compile(r"\"[^\"\\]*(?:\\.[^\"\\]*)*\"", re.S)
_SINGLE_STRING = re.compile(r"'[^'\\\n]*(?:\\.[^'\\\n]*)*'")
_STRING_ESCAPE = re.compile(r"\\(?:([0-7]{1,3})|x([0-9A-Fa-f]{1,2})|(.))", re.S)
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "f": "\f", "v": "\v",
            '"': '"', "'": "'", "\\": "\\", "?": "?"}
# A bare run inside an attribute value: anything but spaces, separators, brackets and quotes
# (`b01f_01io->b01f`, `1_2x0_1`, `3x3`, `%add`, `<=`, `T`, `kLoop`, `1e-05`, `L.0@2:4`).
_BARE = re.compile(r"[^\s,{}()\[\]\"']+")
# Inside a bracketed group: characters that need no look (not brackets, quotes or comments).
_PLAIN_IN_GROUP = re.compile(r"[^{}()\[\]\"'/]*")
_MESH_DEVICE_IDS = re.compile(r",[ \t]*device_ids=\(")
_CLOSER = {"{": "}", "(": ")", "[": "]"}

# XLA's primitive type names (hlo_text.md §4); reserved words, so never instruction names.
ELEMENT_TYPES = frozenset("""
    pred s1 s2 s4 s8 s16 s32 s64 u1 u2 u4 u8 u16 u32 u64 f16 bf16 f32 f64 c64 c128
    f4e2m1fn f8e3m4 f8e4m3 f8e4m3fn f8e4m3b11fnuz f8e4m3fnuz f8e5m2 f8e5m2fnuz f8e8m0fnu
    token opaque
""".split())


def unescape(body: str) -> str:
    """The value of a quoted string's body, with C escapes (absl::CUnescape) resolved."""
    if "\\" not in body:
        return body

    def replace(m: re.Match) -> str:
        if m.group(1):
            return chr(int(m.group(1), 8))
        if m.group(2):
            return chr(int(m.group(2), 16))
        return _ESCAPES.get(m.group(3), m.group(3))
    return _STRING_ESCAPE.sub(replace, body)


class Cursor:
    """A position in one chunk of an HLO file, with the primitive reads of HLO syntax."""

    __slots__ = ("source", "text", "pos", "end")

    def __init__(self, source: SourceText, start: int = 0, end: Optional[int] = None):
        self.source = source
        self.text = source.text
        self.pos = start
        self.end = len(self.text) if end is None else end

    # -- positions and errors ---------------------------------------------------------------------

    def at(self, offset: Optional[int] = None) -> SourcePos:
        return SourcePos(self.source, self.pos if offset is None else offset)

    def fail(self, message: str, offset: Optional[int] = None) -> NoReturn:
        raise ParseError(message, self.at(offset))

    def describe(self) -> str:
        """The token at the cursor, quoted, for 'expected X, found Y' messages."""
        if self.pos >= self.end:
            return "end of input"
        if self.text[self.pos] in "\r\n":
            return "end of line"
        m = _NAME.match(self.text, self.pos, self.end) or _INT.match(self.text, self.pos, self.end)
        token = m.group(0) if m else self.text[self.pos]
        if len(token) > 30:
            token = token[:27] + "..."
        return f"'{token}'"

    def expected(self, what: str) -> NoReturn:
        self.fail(f"expected {what}, found {self.describe()}")

    # -- skipping and peeking ---------------------------------------------------------------------

    def skip(self) -> None:
        pos = self.pos
        text = self.text
        if pos < self.end and text[pos] not in _SKIP_START:
            return  # the common case: already at a token
        pos = _SPACES.match(text, pos, self.end).end()
        if text.startswith("/", pos):  # comments: the slower full pattern
            pos = _SKIP.match(text, pos, self.end).end()
        self.pos = pos
        if self.text.startswith("/*", self.pos) and self.pos < self.end:
            self.fail("unterminated '/*' comment")

    def at_end(self) -> bool:
        self.skip()
        return self.pos >= self.end

    def peek(self, n: int = 1) -> str:
        """The next `n` characters after whitespace and comments ('' at the end)."""
        self.skip()
        return self.text[self.pos:min(self.pos + n, self.end)]

    def accept(self, literal: str) -> bool:
        self.skip()
        if self.text.startswith(literal, self.pos) and self.pos + len(literal) <= self.end:
            self.pos += len(literal)
            return True
        return False

    def expect(self, literal: str, what: Optional[str] = None) -> int:
        """Consume `literal` and return where it was; else a located 'expected' error."""
        self.skip()
        start = self.pos
        if not self.accept(literal):
            self.expected(what or f"'{literal}'")
        return start

    # -- tokens -----------------------------------------------------------------------------------

    def peek_name(self) -> Optional[str]:
        """The name at the cursor (without `%`), not consumed."""
        self.skip()
        m = _NAME.match(self.text, self.pos, self.end)
        return m.group(1) if m else None

    def accept_keyword(self, word: str) -> bool:
        """Consume `word` when it stands as a whole identifier at the cursor."""
        self.skip()
        m = _NAME.match(self.text, self.pos, self.end)
        if m and m.group(0) == word:
            self.pos = m.end()
            return True
        return False

    def name(self, what: str = "a name") -> tuple[str, int]:
        """An identifier, optionally `%`-prefixed: (name without `%`, its offset)."""
        self.skip()
        m = _NAME.match(self.text, self.pos, self.end)
        if not m:
            self.expected(what)
        start = self.pos
        self.pos = m.end()
        return m.group(1), start

    def integer(self, what: str = "an integer") -> int:
        self.skip()
        m = _INT.match(self.text, self.pos, self.end)
        if not m or (m.end() < self.end and self.text[m.end()] in ".eE_x"):
            self.expected(what)
        self.pos = m.end()
        return int(m.group(0))

    def string(self, what: str = "a quoted string") -> str:
        """A `"..."` string's unescaped value."""
        self.skip()
        m = _STRING.match(self.text, self.pos, self.end)
        if not m:
            if self.text.startswith('"', self.pos) and self.pos < self.end:
                self.fail("unterminated string (no closing '\"')")
            self.expected(what)
        self.pos = m.end()
        return unescape(m.group(0)[1:-1])

    # -- extents kept as text ---------------------------------------------------------------------

    def group_end(self, start: int) -> int:
        """Offset just past the bracket group opening at `start`, whose nested brackets must
        match; quoted strings (which may hold brackets) and comments are passed over whole.
        Runs of plain characters are skipped by one regex step, so a multi-megabyte constant
        costs one step per bracket, not per character."""
        text, end = self.text, self.end
        stack = [_CLOSER[text[start]]]
        i = start + 1
        plain = _PLAIN_IN_GROUP.match
        while True:
            i = plain(text, i, end).end()
            if i >= end:
                self.fail(f"'{text[start]}' is never closed (expected '{stack[-1]}')", start)
            ch = text[i]
            if ch in _CLOSER:
                stack.append(_CLOSER[ch])
                i += 1
            elif ch in "}])":
                if ch != stack[-1]:
                    self.fail(f"expected '{stack[-1]}' to close the group, found '{ch}'", i)
                stack.pop()
                i += 1
                if not stack:
                    return i
            elif ch == '"':
                m = _STRING.match(text, i, end)
                if not m:
                    self.fail("unterminated string (no closing '\"')", i)
                i = m.end()
            elif ch == "'":
                # Mesh axis names `'x'`; a lone apostrophe (in free text) is just a character.
                m = _SINGLE_STRING.match(text, i, end)
                i = m.end() if m else i + 1
            else:  # '/': a comment, or a plain slash (`jit(f)/dot` sits inside strings anyway)
                m = _SKIP.match(text, i, end)
                if text.startswith("/*", i) and m.end() == i:
                    self.fail("unterminated '/*' comment", i)
                i = max(m.end(), i + 1)

    def value_extent(self, what: str) -> tuple[int, int]:
        """The extent of an attribute value kept as text: adjacent pieces (brace/bracket/paren
        groups, quoted strings, bare runs) up to the next top-level `,`, closing bracket or space.
        After spaces, a `{` group still belongs to the value: mesh axes print as
        `mesh['x'=2,'y'=4] {'x'}`, and a literal as `s32[2] {1, 2}`."""
        # The value follows its `=` on the same line (else `x=` would take the next line's
        # first word as its value).
        self.pos = _BLANKS_IN_LINE.match(self.text, self.pos, self.end).end()
        text, end = self.text, self.end
        # ... except a quoted string, which no instruction starts with: XLA's tests break a long
        # line as `custom_call_target=\n  "name"`, and XLA's lexer skips the line break.
        next_line = _SPACES.match(text, self.pos, end).end()
        if text.startswith('"', next_line) and "\n" in text[self.pos:next_line]:
            self.pos = next_line
        start = i = self.pos
        while i < end:
            ch = text[i]
            if ch in _CLOSER:
                i = self.group_end(i)
            elif ch == '"':
                m = _STRING.match(text, i, end)
                if not m:
                    self.fail("unterminated string (no closing '\"')", i)
                i = m.end()
            elif ch == "'":
                m = _SINGLE_STRING.match(text, i, end)
                if not m:
                    self.fail("unterminated string (a \"'\" must close it on the same line)", i)
                i = m.end()
            elif ch == "," and text.startswith("mesh", start) and _MESH_DEVICE_IDS.match(
                    text, i, end):
                # A mesh with explicit devices: `mesh[x=2,y=2], device_ids=(1,0,3,2) {x}`.
                i = _MESH_DEVICE_IDS.match(text, i, end).end() - 1
            else:
                m = _BARE.match(text, i, end)
                if not m or text.startswith("//", i) or text.startswith("/*", i):
                    gap = _SPACES.match(text, i, end).end()
                    if i > start and gap > i and text.startswith("{", gap) and gap < end:
                        i = gap
                        continue
                    break
                i = m.end()
        if i == start:
            self.expected(what)
        self.pos = i
        return start, i
