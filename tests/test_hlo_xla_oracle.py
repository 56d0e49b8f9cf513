"""HLO modules run by hlodbg and by XLA:CPU on the same random inputs: the HLO twins of the
StableHLO conformance tests. Each module (tests/hlo_oracle_elementwise.py and
hlo_oracle_structured.py) is our own, written to exercise an opcode's corner
cases (integer division by zero and overflow, shifts past the bit width, convolution dim_labels and
window attributes, clamped dynamic and gather indices, out-of-range conditional indices, negative
and interior padding, bit-width-changing bitcast-convert, ...). XLA's own parser reads the same
text (../shared/docs/hlo_text.md §10), so a module XLA refuses is a defect of this file.

Integers and booleans must agree exactly; floats within tests/hlo_oracle.tolerance.
Skipped without JAX.
"""
from __future__ import annotations

import zlib

import numpy as np
import pytest

import hlodbg
from hlodbg.engine.syntax.hlo.parser import parse_hlo_modules

from .hlo_oracle import difference, leaves, parameter_inputs, run_xla
from .hlo_oracle_elementwise import ELEMENTWISE, INPUTS
from .hlo_oracle_structured import STRUCTURED

pytest.importorskip("jax")

MODULES = {**ELEMENTWISE, **STRUCTURED}


@pytest.mark.parametrize("name", sorted(MODULES))
def test_module_is_read_by_xla(name):
    """Each module is valid HLO: XLA's parser and compiler accept it (checks this file itself)."""
    tree, inputs = _prepared(name)
    assert run_xla(MODULES[name], inputs)


@pytest.mark.parametrize("name", sorted(MODULES))
def test_hlodbg_reproduces_xla(name):
    tree, inputs = _prepared(name)
    expected = run_xla(MODULES[name], inputs)
    with np.errstate(all="ignore"):
        results = leaves(hlodbg.load(MODULES[name]).run(*inputs))
    assert len(results) == len(expected), f"{len(results)} results, XLA gives {len(expected)}"
    problems = [f"result {i}: {d}" for i, (got, want) in enumerate(zip(results, expected))
                if (d := difference(got, want))]
    assert not problems, f"{name}: " + "; ".join(problems)


def _prepared(name: str):
    text = MODULES[name]
    (tree,) = parse_hlo_modules(text, f"{name}.hlo")
    return tree, INPUTS.get(name) or parameter_inputs(tree, zlib.crc32(name.encode()))
