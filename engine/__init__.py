"""hlodbg's engine, in layers (docs/architecture.md), each importing only those below it:

    ir/       modules, ops, types, attributes, errors, op definitions and traits
    syntax/   input languages: parse text into the IR and print it back (mlir/)
    verify/   the spec's constraints, shape inference
    machine/  processes and grid geometry, backends (value storage and numerics)
    ops/      op semantics by family, one evaluator per op
    run/      the interpreter, the grid scheduler, SPMD runs, self-checking programs
    debug/    recorded runs: trace, values, timeline, breakpoints, sessions, debug targets

Never imports textual or graphviz: the engine runs headless in scripts and CI. This package
re-exports the names most scripts need.
"""
from .ir.errors import ExecutionError, HlodbgError, ParseError, SourcePos, VerifyError
from .ir.core import Block, Function, Module, Operation, Region, Value, structural_key
from .syntax.mlir.parser import parse_chunks, parse_module, split_chunks
from .syntax.mlir.printer import print_module, print_op

__all__ = [
    "Block",
    "ExecutionError",
    "Function",
    "HlodbgError",
    "Module",
    "Operation",
    "ParseError",
    "Region",
    "SourcePos",
    "Value",
    "VerifyError",
    "parse_chunks",
    "parse_module",
    "print_module",
    "print_op",
    "split_chunks",
    "structural_key",
]
