"""Programs exactly as JAX writes them today (lowered text and jax.export) parse, verify, and
their locations lead back to the Python lines that produced each op."""
from __future__ import annotations

import inspect

import pytest

import hlodbg
from hlodbg.engine.ir.locations import name_stack, user_frame

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")


def attention(x, w):
    scores = x @ w @ x.T  # the line the dot_general ops point at
    return jax.nn.softmax(scores, axis=-1).sum(axis=0)


ARGS = (jax.ShapeDtypeStruct((4, 8), jnp.float32), jax.ShapeDtypeStruct((8, 8), jnp.float32))
DOT_LINE = inspect.getsourcelines(attention)[1] + 1


def _check_locations(program):
    dots = [op for op in program.ops if op.name == "stablehlo.dot_general"]
    assert dots
    for dot in dots:
        frame = user_frame(dot.location)
        assert frame is not None and frame.filename.endswith("test_jax_programs.py")
        assert frame.line == DOT_LINE
        assert "dot_general" in (name_stack(dot.location) or "")


def test_lowered_text_with_debug_info():
    text = jax.jit(attention).lower(*ARGS).as_text(debug_info=True)
    program = hlodbg.load(text)
    _check_locations(program)
    assert program.entry.sym_name == "main"


def test_jax_export_module():
    exported = jax.export.export(jax.jit(attention))(*ARGS)
    program = hlodbg.load(exported.mlir_module())
    _check_locations(program)


def test_plain_lowered_text_without_locations():
    program = hlodbg.load(jax.jit(attention).lower(*ARGS).as_text())
    assert all(op.location is None or user_frame(op.location) is None for op in program.ops)
