"""Op semantics, one module per family; each registers its evaluators with `registry.op`."""
from __future__ import annotations

import importlib
import pkgutil

_loaded = False


def load_families() -> None:
    """Import every family module once, so every evaluator is registered."""
    global _loaded
    if _loaded:
        return
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if not info.name.startswith("_") and info.name != "registry":
            importlib.import_module(f"{__name__}.{info.name}")
    _loaded = True
