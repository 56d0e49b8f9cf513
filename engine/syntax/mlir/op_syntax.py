"""The pretty MLIR form of every op that has one: the format an op's definition gives
(`OpDef.syntax`), or the Syntax class a dialect module here registers.

FORMATS (format.py) maps an op name to its Syntax, which both parses and prints the op;
PRETTY_PARSERS maps an op name as written (`stablehlo.add`, and the short `call`, `return`) to
the function that reads the rest of the op.
"""
from __future__ import annotations

from ...ir.opset import OpDef, when_defined
from . import check_ops, chlo_ops, custom_ops, stablehlo_ops  # noqa: F401  (each registers its syntaxes)
from .custom_ops import ALIASES
from .format import FORMATS, Format, Syntax, mlir_syntax


def _bind(syntax: Syntax, canonical: str):
    def parse(p, name, names, pos):
        return syntax.parse(p, canonical, names, pos)

    return parse


PRETTY_PARSERS = {name: _bind(syntax, name) for name, syntax in FORMATS.items()}


def _register_format(opdef: OpDef) -> None:
    """The pretty form an op's definition gives (for every op, defined now or later)."""
    if opdef.syntax:
        PRETTY_PARSERS[opdef.name] = _bind(mlir_syntax(opdef.name, Format(opdef.syntax)), opdef.name)


when_defined(_register_format)
for _short, _full in ALIASES.items():
    PRETTY_PARSERS[_short] = PRETTY_PARSERS[_full]

__all__ = ["FORMATS", "PRETTY_PARSERS"]
