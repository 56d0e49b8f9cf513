"""hlodbg's engine, in layers (docs/architecture.md), each importing only those below it:

    ir/       modules, ops, types, attributes, errors, op definitions and traits
    syntax/   input languages: parse text into the IR and print it back (mlir/)
    verify/   the spec's constraints, shape inference
    machine/  processes and grid geometry, backends (value storage and numerics)
    ops/      op semantics by family, one evaluator per op
    run/      the interpreter, the grid scheduler, SPMD runs, self-checking programs
    debug/    recorded runs: trace, values, timeline, breakpoints, sessions, debug targets

Never imports textual or graphviz: the engine runs headless in scripts and CI. This package
re-exports the names most scripts need, each imported on first use (`hlodbg.engine.ParseError`
loads only the errors): importing the engine, or any one part of it, costs no parser, numpy or
ml_dtypes it does not use (`hlodbg --version` stays instant).
"""
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .ir.core import Block, Function, Module, Operation, Region, Value, structural_key
    from .ir.errors import ExecutionError, HlodbgError, ParseError, SourcePos, VerifyError
    from .syntax.mlir.parser import parse_chunks, parse_module, split_chunks
    from .syntax.mlir.printer import print_module, print_op

# Each re-exported name -> the module defining it.
_HOMES = {
    **dict.fromkeys(("ExecutionError", "HlodbgError", "ParseError", "SourcePos", "VerifyError"), ".ir.errors"),
    **dict.fromkeys(("Block", "Function", "Module", "Operation", "Region", "Value", "structural_key"), ".ir.core"),
    **dict.fromkeys(("parse_chunks", "parse_module", "split_chunks"), ".syntax.mlir.parser"),
    **dict.fromkeys(("print_module", "print_op"), ".syntax.mlir.printer"),
}

__all__ = sorted(_HOMES)


def __getattr__(name: str):
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(home, __name__), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_HOMES})
