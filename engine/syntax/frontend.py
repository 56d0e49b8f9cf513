"""What an input language provides: a frontend reads its text into the IR and prints the IR back.

The IR (engine/ir) is the same whatever language spelled a program; everything after parsing —
the verifier, the interpreter, the graph, the UI — sees only the IR. A frontend is one object:

    name         "mlir"
    suffixes     file name endings that mark the language (".mlir")
    recognizes   whether a text is in this language (from its first words, cheaply)
    parse_all    every module of a text (files may hold several, `// -----` separated)
    print        a module as text in this language

`syntax.frontend_for(text, name)` picks the one that recognizes the text.
"""
from __future__ import annotations

from typing import Protocol

from ..ir.core import Module
from ..ir.errors import ParseError


class Frontend(Protocol):
    name: str
    suffixes: tuple[str, ...]

    def recognizes(self, text: str) -> bool: ...

    def parse_all(self, text: str, filename: str = "<string>") -> list[Module]: ...

    def print(self, module: Module, generic: bool = False, debug_info: bool = False) -> str: ...


def parse_one(frontend: Frontend, text: str, filename: str = "<string>") -> Module:
    """The single module of a text; an error naming the count when there are none or several."""
    modules = frontend.parse_all(text, filename)
    if len(modules) != 1:
        what = "no module" if not modules else f"{len(modules)} modules separated by '// -----'"
        raise ParseError(f"{filename} holds {what}; expected one")
    return modules[0]


def no_module_error(filename: str) -> ParseError:
    """What every command says of a file with nothing to load (empty, blank or only comments)."""
    return ParseError(f"{filename} holds no module (the file is empty or only comments)")


def first_words(text: str, count: int = 4096) -> str:
    """The start of a text without blank lines and `//` comments, for telling languages apart."""
    lines = []
    for line in text[:count].splitlines():
        stripped = line.strip()
        if stripped and not stripped.startswith("//"):
            lines.append(stripped)
    return "\n".join(lines)


__all__ = ["Frontend", "first_words", "no_module_error", "parse_one"]
