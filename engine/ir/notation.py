"""The notation IR objects print themselves in, filled in by a syntax package.

Types, locations and attributes print as MLIR (`tensor<2xf32, #encoding>`, `loc(... <meta>)`);
spelling an attribute value is the syntax layer's business (engine/syntax/mlir/attribute_text.py),
and the IR must not import it, so the syntax layer registers its printer here when it is imported
(importing hlodbg.engine does). Until then an attribute prints as its Python repr.
"""
from __future__ import annotations

from typing import Any, Callable

_attribute_printer: Callable[[Any], str] = repr


def use_attribute_printer(printer: Callable[[Any], str]) -> None:
    global _attribute_printer
    _attribute_printer = printer


def attribute_text(attr: Any) -> str:
    """An attribute value as the registered notation spells it."""
    return _attribute_printer(attr)


__all__ = ["attribute_text", "use_attribute_printer"]
