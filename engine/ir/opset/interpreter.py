"""`interpreter.run_parallel` of StableHLO's interpreter dialect (InterpreterOps.td).

The reference defines no pretty form for it: its tests spell it generically,
`%r:2 = "interpreter.run_parallel"(%a, %b) {programs = [[@f], [@g]]} : (...) -> (...)`, with an
optional `infeed = [@queue0, ...]`. `programs` holds one function per process, [replica][partition];
engine/run/parallel.py checks and runs it. (`interpreter.print` and `interpreter.probe` live with
the check dialect in check.py.)
"""
from __future__ import annotations

from ..opdefs import NO_HLO, define

define(
    "interpreter.run_parallel",
    "inputs*",
    "programs:symbols infeed:symbols?",
    results="*",
    family="collective",
    summary="runs a grid of processes, one function each, and returns their results in process order", effect="impure",
    hlo=NO_HLO,
)
