"""The MLIR frontend: StableHLO, CHLO, func, Shardy and the test dialects in MLIR's textual form
(what `jax.jit(f).lower(x).as_text()` and stablehlo-translate print).

lexer.py and value_parser.py read tokens, types, attributes and locations; parser.py reads
modules, regions and the generic op form; each op's pretty form is a Syntax in op_syntax.py's
dialect modules; printer.py and attribute_text.py print the IR back.
"""
from __future__ import annotations

import re

from ...ir.core import Module
from ..frontend import first_words
from .parser import parse_chunks
from .printer import print_module

# How an MLIR module opens: `module`, a top-level op, an attribute/type alias, a generic op.
_OPENING = re.compile(r'(module\b|func\.func\b|sdy\.mesh\b|[#!][\w.$-]+\s*=|"[\w.$-]+"\s*\(|\{-#)')


class MlirFrontend:
    name = "mlir"
    suffixes = (".mlir",)

    def recognizes(self, text: str) -> bool:
        return bool(_OPENING.match(first_words(text)))

    def parse_all(self, text: str, filename: str = "<string>") -> list[Module]:
        return parse_chunks(text, filename)

    def print(self, module: Module, generic: bool = False, debug_info: bool = False) -> str:
        return print_module(module, generic=generic, debug_info=debug_info)


MLIR = MlirFrontend()

__all__ = ["MLIR", "MlirFrontend"]
