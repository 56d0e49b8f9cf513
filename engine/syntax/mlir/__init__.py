"""Pretty syntax of every op hlodbg knows, registered with its OpDef (see opdefs.py).

PRETTY_PARSERS maps an op name as written (`stablehlo.add`, `call`, `return`) to the function that
reads the rest of the op.
"""
from __future__ import annotations

from ...ir.opdefs import OPS
from . import check_ops, chlo_ops, custom_ops, stablehlo_ops  # noqa: F401  (they register the ops)
from . import interpreter_ops  # noqa: F401
from .custom_ops import ALIASES


def _bind(syntax, canonical: str):
    def parse(p, name, names, pos):
        return syntax.parse(p, canonical, names, pos)

    return parse


PRETTY_PARSERS = {name: _bind(d.syntax, name) for name, d in OPS.items() if d.syntax is not None}
for _short, _full in ALIASES.items():
    PRETTY_PARSERS[_short] = PRETTY_PARSERS[_full]

__all__ = ["PRETTY_PARSERS"]
