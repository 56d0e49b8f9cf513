"""hlodbg: a visual graph inspector and step-through debugger for StableHLO programs.

    import hlodbg
    program = hlodbg.load("model.mlir")       # parsed and verified
    program.entry.ops                          # the ops of @main, nested ones included

`load` raises only `hlodbg.ParseError` or `hlodbg.VerifyError` for bad input; both carry the
file, line and column (`.filename`, `.line`, `.col`) and render like a compiler diagnostic.
"""
from __future__ import annotations

import importlib
import importlib.util
import sys
from typing import TYPE_CHECKING

__version__ = "0.1.0"

if TYPE_CHECKING:
    from hlodbg.engine.debug.lineage import Lineage, LineageError, first_nonfinite, trace_element
    from hlodbg.engine.ir.errors import HlodbgError, ParseError, VerifyError
    from hlodbg.program import Program, load, load_all

# The public API, imported on first use: `import hlodbg` (and so every `hlodbg` command, before
# it knows what it will do) costs no parser, numpy or ml_dtypes.
_HOMES = {
    **dict.fromkeys(("HlodbgError", "ParseError", "VerifyError"), "hlodbg.engine.ir.errors"),
    **dict.fromkeys(("Program", "load", "load_all"), "hlodbg.program"),
    # Where an element of a session's run came from (`hlodbg trace`, `:trace`).
    **dict.fromkeys(("Lineage", "LineageError", "first_nonfinite", "trace_element"), "hlodbg.engine.debug.lineage"),
}

__all__ = ["HlodbgError", "Lineage", "LineageError", "ParseError", "Program", "VerifyError", "__version__",
           "first_nonfinite", "load", "load_all", "trace_element"]


def __getattr__(name: str):
    home = _HOMES.get(name)
    if home is None:
        # `hlodbg.engine.ExecutionError` after a bare `import hlodbg`, as when the engine loaded eagerly.
        if not name.startswith("_") and importlib.util.find_spec(f"{__name__}.{name}") is not None:
            return importlib.import_module(f"{__name__}.{name}")
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_HOMES})


def load_ipython_extension(ipython) -> None:
    """`%load_ext hlodbg`: programs, debugging sessions, explanations and memory profiles display
    themselves as pictures in this IPython shell (hlodbg.notebook)."""
    from hlodbg.notebook import register

    register(ipython)


# Imported in a running IPython shell (a Jupyter kernel), hlodbg registers its displays at once.
# Elsewhere IPython is not imported, and this costs a dictionary lookup.
if "IPython" in sys.modules:
    from hlodbg.notebook import register_in_running_shell

    register_in_running_shell()
