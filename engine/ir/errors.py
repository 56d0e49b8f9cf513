"""User-facing errors: every message names the file, line and column and shows the source line."""
from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from typing import Optional

# Control characters but tab and newline: C0 (ESC, CR, BEL, ...), DEL and C1. Printed raw, a file
# name or a line of input quoted in a message could drive the user's terminal (colours, the
# window title, cursor moves, a line overwritten by a carriage return).
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


# The widest line a message prints: what it quotes from the input (the type of a 5,000-deep
# constant, an attribute's text) is clipped in the middle, so no line runs to kilobytes; wide
# enough for the long file paths messages name.
MESSAGE_WIDTH = 1000


def clipped(text: str, width: int = MESSAGE_WIDTH) -> str:
    """Each line of `text` at most `width` characters: a longer one keeps its start and its end
    (where messages say what was expected) around `...`."""
    if len(text) <= width:
        return text
    head, tail = width * 2 // 3, width - width * 2 // 3 - 3
    return "\n".join(line if len(line) <= width else f"{line[:head]}...{line[-tail:]}" for line in text.split("\n"))


def printable(text: str) -> str:
    """`text` with its control characters written as escapes (ESC as `\\x1b`): what every message
    quoting a file name or input text prints."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


class SourceText:
    """The text of one .mlir input with fast offset -> (line, column) lookup (both 1-based)."""

    __slots__ = ("text", "name", "_line_starts")

    def __init__(self, text: str, name: str = "<string>"):
        self.text = text
        self.name = name
        self._line_starts: Optional[list[int]] = None

    def line_col(self, offset: int) -> tuple[int, int]:
        if self._line_starts is None:
            starts = [0]
            find = self.text.find
            i = find("\n")
            while i >= 0:
                starts.append(i + 1)
                i = find("\n", i + 1)
            self._line_starts = starts
        line = bisect.bisect_right(self._line_starts, offset) - 1
        return line + 1, offset - self._line_starts[line] + 1

    def line_text(self, line: int) -> str:
        self.line_col(0)
        starts = self._line_starts
        if not 1 <= line <= len(starts):
            return ""
        end = starts[line] - 1 if line < len(starts) else len(self.text)
        return self.text[starts[line - 1]:end]


@dataclass(frozen=True)
class SourcePos:
    """A position in a .mlir file: where an op, value or error is."""

    source: SourceText
    offset: int

    @property
    def line(self) -> int:
        return self.source.line_col(self.offset)[0]

    @property
    def col(self) -> int:
        return self.source.line_col(self.offset)[1]

    @property
    def filename(self) -> str:
        return self.source.name

    def __str__(self) -> str:
        line, col = self.source.line_col(self.offset)
        return f"{self.source.name}:{line}:{col}"

    def __repr__(self) -> str:
        return f"SourcePos({self})"


class HlodbgError(Exception):
    """Base of the errors hlodbg reports to users about their programs."""

    def __init__(self, message: str, pos: Optional[SourcePos] = None, notes: tuple[str, ...] = ()):
        self.message = message
        self.pos = pos
        self.notes = tuple(notes)
        super().__init__(self.render())

    kind = "error"

    @property
    def filename(self) -> Optional[str]:
        return self.pos.filename if self.pos else None

    @property
    def line(self) -> Optional[int]:
        return self.pos.line if self.pos else None

    @property
    def col(self) -> Optional[int]:
        return self.pos.col if self.pos else None

    def render(self) -> str:
        """`file:line:col: error: message`, the source line and a caret under the column."""
        message = printable(clipped(self.message))
        notes = [printable(f"note: {clipped(n)}") for n in self.notes]
        if self.pos is None:
            return "\n".join([f"error: {message}", *notes])
        line, col = self.pos.source.line_col(self.pos.offset)
        text = self.pos.source.line_text(line)
        if text.endswith("\r"):  # a CRLF line ending, not part of the line
            text = text[:-1]
        # Very long lines (hex constants) are clipped around the caret so the message stays readable.
        start = 0
        if len(text) > 160:
            start = max(0, col - 80)
            text = ("..." if start else "") + text[start:start + 160] + "..."
            col = col - start + (3 if start else 0)
        text = text.expandtabs(1)  # a tab takes one column, as the caret counts
        caret = " " * len(printable(text[:col - 1])) + "^"
        return "\n".join([f"{printable(str(self.pos))}: error: {message}", printable(text), caret, *notes])


class ParseError(HlodbgError):
    """The text is not a well-formed StableHLO/MLIR module."""


class VerifyError(HlodbgError):
    """The module parsed but breaks a constraint of the StableHLO spec."""


class ExecutionError(HlodbgError):
    """A program could not be executed (an op we cannot run, a failed check, bad inputs)."""
