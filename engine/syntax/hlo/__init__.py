"""The XLA HLO text frontend (../shared/docs/hlo_text.md): what `--xla_dump_to` writes and
`jax.jit(f).lower(x).as_text(dialect="hlo")` / `.compile().as_text()` print.

parser.py reads the text into tree.py's parse tree (attr_values.py and literals.py decode attribute
values and constants); lower.py turns the tree into the IR by the opcode table in opcodes.py;
printer.py prints the IR back as HLO text, to_stablehlo.py rewrites it into StableHLO only.
"""
from __future__ import annotations

import re

from ...ir.core import Module
from ...ir.errors import ParseError
from ..frontend import first_words

# How HLO text opens: the module header, or (header-less) a computation `[ENTRY] [%]name [(...) -> shape] {`
# whose first line inside is an instruction `[ROOT] [%]name = `.
_HEADER = re.compile(r"HloModule\s+[%\w.\-]")
_COMPUTATION = re.compile(r"(ENTRY\s+)?%?[A-Za-z_][\w.\-]*\s*(\(.*\)\s*->\s*.*)?\{\s*\n\s*(ROOT\s+)?%?[A-Za-z_][\w.\-]*\s*=")


# Files `--xla_dump_to` writes beside a module's `.txt` that are reports about it, not modules.
_DUMP_REPORTS = {
    "-buffer-assignment.txt": "buffer-assignment",
    "-buffer-assignment-values.txt": "buffer-assignment values",
    "-live-range.txt": "live-range",
    "-memory-usage-report.txt": "memory-usage",
}


def dump_report_error(filename: str):
    """A ParseError for an XLA dump report opened as a module (None for any other file)."""
    for suffix, kind in _DUMP_REPORTS.items():
        if filename.endswith(suffix):
            module = filename[: -len(suffix)] + ".txt"
            return ParseError(f"{filename} is XLA's {kind} report written beside a module dump, not an HLO "
                              f"module; open the module itself: {module}")
    return None


class HloFrontend:
    name = "hlo"
    suffixes = (".hlo", ".txt")

    def recognizes(self, text: str) -> bool:
        words = first_words(text)
        return bool(_HEADER.match(words) or _COMPUTATION.match(words))

    def parse_all(self, text: str, filename: str = "<string>") -> list[Module]:
        from .lower import lower_module
        from .parser import parse_hlo_modules

        report = dump_report_error(filename)
        if report is not None:
            raise report
        return [lower_module(tree) for tree in parse_hlo_modules(text, filename)]

    def print(self, module: Module, generic: bool = False, debug_info: bool = False) -> str:
        """The module as XLA prints HLO text (`generic` and `debug_info` are MLIR's notions: HLO
        text always carries its metadata, and has one form)."""
        from .printer import print_module

        return print_module(module)


HLO = HloFrontend()

__all__ = ["HLO", "HloFrontend"]
