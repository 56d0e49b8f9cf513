"""hlodbg's engine: IR, parser, printer, verifier (and later the interpreter).

Never imports textual or graphviz: the engine runs headless in scripts and CI.
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
