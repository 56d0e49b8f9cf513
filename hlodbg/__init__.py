"""hlodbg: a visual graph inspector and step-through debugger for StableHLO programs.

    import hlodbg
    program = hlodbg.load("model.mlir")       # parsed and verified
    program.entry.ops                          # the ops of @main, nested ones included

`load` raises only `hlodbg.ParseError` or `hlodbg.VerifyError` for bad input; both carry the
file, line and column (`.filename`, `.line`, `.col`) and render like a compiler diagnostic.
"""
__version__ = "0.1.0"

from hlodbg.engine import HlodbgError, ParseError, VerifyError  # noqa: E402
from hlodbg.program import Program, load, load_all  # noqa: E402

__all__ = ["HlodbgError", "ParseError", "Program", "VerifyError", "__version__", "load", "load_all"]
