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

# Regions inside regions (a while's body holding an if holding a reduce ...) a program may nest,
# in any language; what reads and prints the IR walks regions with Python's own recursion, as deep
# as this. Calls to other functions are not regions: they chain to any depth.
MAX_REGION_NESTING = 100


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


def program_text(data: bytes, name: str) -> str:
    """A program file's bytes as text. A byte-order mark is dropped (Windows editors write one
    before UTF-8; Windows PowerShell's `>` writes UTF-16); other bytes that are not UTF-8 are a
    ParseError naming the first, and what the file may be instead."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            return data.decode("utf-16")
        except UnicodeDecodeError as e:
            raise ParseError(f"{name} is not UTF-16 text, although it starts like it (byte {e.start})") from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        hint = ""
        if data.startswith(b"ML\xefR"):
            hint = " (MLIR bytecode is not supported; print it as text with stablehlo-translate or jax)"
        elif name.endswith(".pb"):
            hint = " (an HLO proto? hlodbg reads HLO text: dump with XLA_FLAGS=--xla_dump_hlo_as_text)"
        raise ParseError(f"{name} is not UTF-8 text (byte {e.start}){hint}") from None


def first_words(text: str, count: int = 4096) -> str:
    """The start of a text without blank lines and `//` comments, for telling languages apart."""
    lines = []
    for line in text[:count].splitlines():
        stripped = line.strip()
        if stripped and not stripped.startswith("//"):
            lines.append(stripped)
    return "\n".join(lines)


__all__ = ["Frontend", "first_words", "no_module_error", "parse_one", "program_text"]
