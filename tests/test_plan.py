"""The prepared plan (engine/run/plan.py): made once per Program and backend, reused by later runs
(constants are evaluated once), never sharing what a run returns, and giving the plain loop the
same results, bit for bit, as the observed loop that runs the same steps."""
from __future__ import annotations

import numpy as np
import pytest

import hlodbg
from hlodbg.engine.ops import load_families
from hlodbg.engine.ops.registry import EVALUATORS
from hlodbg.engine.run.checking import entry_points
from hlodbg.engine.run.interpreter import Interpreter, Listener

from .helpers import CONFORMANCE, PROGRAMS, corpus_files

CONSTANTS = """func.func @main(%x: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %c = stablehlo.constant dense<2.0> : tensor<f32>
  %b = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<f32>) -> tensor<3xf32>
  %zero = stablehlo.constant dense<0> : tensor<i64>
  %n = stablehlo.constant dense<4> : tensor<i64>
  %r:2 = stablehlo.while(%i = %zero, %acc = %x) : tensor<i64>, tensor<3xf32>
    cond {
      %p = stablehlo.compare LT, %i, %n : (tensor<i64>, tensor<i64>) -> tensor<i1>
      stablehlo.return %p : tensor<i1>
    } do {
      %one = stablehlo.constant dense<1> : tensor<i64>
      %j = stablehlo.add %i, %one : tensor<i64>
      %b2 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<f32>) -> tensor<3xf32>
      %m = stablehlo.multiply %acc, %b2 : tensor<3xf32>
      stablehlo.return %j, %m : tensor<i64>, tensor<3xf32>
    }
  return %r#1, %b : tensor<3xf32>, tensor<3xf32>
}"""


def counting(monkeypatch, name: str) -> list:
    calls: list = []
    load_families()
    evaluate = EVALUATORS[name]

    def counted(call, *operands):
        calls.append(call.op)
        return evaluate(call, *operands)

    monkeypatch.setitem(EVALUATORS, name, counted)
    return calls


def test_a_second_run_reuses_the_plan_and_evaluates_no_constant_again(monkeypatch):
    constants = counting(monkeypatch, "stablehlo.constant")
    broadcasts = counting(monkeypatch, "stablehlo.broadcast_in_dim")
    program = hlodbg.load(CONSTANTS)
    x = np.array([1.0, 2.0, 3.0], np.float32)
    first = program.run(x)
    plan = program._interpreter(None).plan
    # The loop body's constant, and its broadcast of an outer constant, once: not per iteration.
    assert len(constants) == 4 and len(broadcasts) == 2
    second = program.run(x)
    assert program._interpreter(None).plan is plan
    assert len(constants) == 4 and len(broadcasts) == 2
    for a, b in zip(first, second):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(first[0], x * 16)


def test_a_returned_constant_is_the_callers_own_array():
    interpreter = Interpreter(hlodbg.load(CONSTANTS).module)
    x = np.ones(3, np.float32)
    first = interpreter.run("main", [x])[1]
    assert first.flags.writeable
    first[:] = -1.0  # the caller may write what it was given
    second = interpreter.run("main", [x])[1]
    np.testing.assert_array_equal(second, np.full(3, 2.0, np.float32))
    assert not np.shares_memory(first, second)


def test_a_returned_argument_is_a_copy_the_caller_may_write():
    interpreter = Interpreter(hlodbg.load("""func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  return %x : tensor<2xf32>
}""").module)
    x = np.array([1.0, 2.0], np.float32)
    (out,) = interpreter.run("main", [x])
    out[0] = 5.0
    assert x[0] == 1.0


def same_bits(a, b) -> bool:
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(same_bits(p, q) for p, q in zip(a, b))
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def both_loops(module, entry: str, args: list):
    plain = Interpreter(module)
    observed = Interpreter(module, listeners=[Listener()])
    assert plain.plain and not observed.plain
    return (plain.run(entry, args), plain.checks), (observed.run(entry, args), observed.checks)


SHARED_PROGRAMS = sorted(p.stem for p in PROGRAMS.glob("*.mlir") if (PROGRAMS / f"{p.stem}.inputs.npz").exists()) \
    if PROGRAMS.is_dir() else []


@pytest.mark.skipif(not SHARED_PROGRAMS, reason="../shared/programs is not present")
@pytest.mark.parametrize("name", SHARED_PROGRAMS or ["<none>"])
def test_the_plain_loop_gives_the_observed_loops_bits_on_the_shared_programs(name):
    program = hlodbg.load(PROGRAMS / f"{name}.mlir")
    inputs = np.load(PROGRAMS / f"{name}.inputs.npz")
    args = [inputs[f"arg{i}"] for i in range(len(inputs.files))]
    try:
        (plain, _), (observed, _) = both_loops(program.module, "main", args)
    except hlodbg.HlodbgError as e:  # a program only a grid runs
        pytest.skip(f"{name} does not run on one device: {e}")
    assert same_bits(plain, observed)


# Every 50th conformance file: all op families, a fixed sample.
SAMPLE = [p for p in corpus_files() if CONFORMANCE in p.parents][::50]


@pytest.mark.skipif(not SAMPLE, reason="../shared/conformance is not present")
@pytest.mark.parametrize("path", SAMPLE or ["<none>"], ids=lambda p: getattr(p, "stem", str(p)))
def test_the_plain_loop_gives_the_observed_loops_bits_on_conformance_files(path):
    module = hlodbg.load(path).module
    for entry in entry_points(module):
        (plain, plain_checks), (observed, observed_checks) = both_loops(module, entry, [])
        assert same_bits(plain, observed)
        assert [c.passed for c in plain_checks] == [c.passed for c in observed_checks]


def test_a_failing_op_in_a_compiled_loop_body_is_named_at_its_place(monkeypatch):
    load_families()
    cosine = EVALUATORS["stablehlo.cosine"]
    calls = []

    def failing(call, x):
        calls.append(1)
        if len(calls) == 3:
            raise ZeroDivisionError("the third time")
        return cosine(call, x)

    monkeypatch.setitem(EVALUATORS, "stablehlo.cosine", failing)
    program = hlodbg.load("""func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %zero = stablehlo.constant dense<0> : tensor<i64>
  %one = stablehlo.constant dense<1> : tensor<i64>
  %n = stablehlo.constant dense<5> : tensor<i64>
  %r:2 = stablehlo.while(%i = %zero, %a = %x) : tensor<i64>, tensor<2xf32>
    cond {
      %p = stablehlo.compare LT, %i, %n : (tensor<i64>, tensor<i64>) -> tensor<i1>
      stablehlo.return %p : tensor<i1>
    } do {
      %s = stablehlo.sine %a : tensor<2xf32>
      %c = stablehlo.cosine %s : tensor<2xf32>
      %j = stablehlo.add %i, %one : tensor<i64>
      stablehlo.return %j, %c : tensor<i64>, tensor<2xf32>
    }
  return %r#1 : tensor<2xf32>
}""")
    with pytest.raises(hlodbg.HlodbgError) as failure:
        program.run(np.ones(2, np.float32))
    assert "stablehlo.cosine failed: the third time" in str(failure.value)
    assert failure.value.pos.line == 11


LOOP_OF = """func.func @main(%x: tensor<{shape}{t}>, %y: tensor<{shape}{t}>) -> tensor<{shape}{r}> {{
  %zero = stablehlo.constant dense<0> : tensor<i64>
  %one = stablehlo.constant dense<1> : tensor<i64>
  %n = stablehlo.constant dense<3> : tensor<i64>
  %out = stablehlo.{op} %x, %y{extra} : ({shape_t}, {shape_t}) -> tensor<{shape}{r}>
  %r:2 = stablehlo.while(%i = %zero, %a = %out) : tensor<i64>, tensor<{shape}{r}>
    cond {{
      %p = stablehlo.compare LT, %i, %n : (tensor<i64>, tensor<i64>) -> tensor<i1>
      stablehlo.return %p : tensor<i1>
    }} do {{
      %b = stablehlo.{op} %x, %y{extra} : ({shape_t}, {shape_t}) -> tensor<{shape}{r}>
      %j = stablehlo.add %i, %one : tensor<i64>
      stablehlo.return %j, %b : tensor<i64>, tensor<{shape}{r}>
    }}
  return %r#1 : tensor<{shape}{r}>
}}"""


@pytest.mark.parametrize("op,types", [
    ("add", "f32 f16 bf16 i8 ui32 i1 complex<f32>"), ("subtract", "f64 i16 ui8"), ("multiply", "f32 i64 complex<f32> i1"),
    ("and", "i1 i32"), ("or", "ui16 i1"), ("xor", "i8 i1"), ("compare", "f32 i32 ui8 f16"),
])
@pytest.mark.parametrize("shape", ["", "3x"])
def test_small_steps_called_directly_in_compiled_loops_give_the_evaluators_bits(op, types, shape):
    """A loop body's small elementwise steps call their evaluator's direct form (block_code.py);
    whatever the element type (native or widened, complex, i1) the result is the observed
    loop's, which calls the evaluator itself."""
    rng = np.random.default_rng(5)
    for t in types.split():
        r = "i1" if op == "compare" else t
        text = LOOP_OF.format(op=op, t=t, r=r, shape=shape, shape_t=f"tensor<{shape}{t}>", extra="")
        text = text.replace("stablehlo.compare %x, %y", "stablehlo.compare GT, %x, %y")
        module = hlodbg.load(text).module
        args = _values(module, rng, 2)
        (plain, _), (observed, _) = both_loops(module, "main", args)
        assert same_bits(plain, observed), (op, t)


def test_native_steps_have_a_direct_form_and_others_none():
    from hlodbg.engine.run.block_code import _direct_form

    def direct(t: str, op: str = "add") -> bool:
        text = LOOP_OF.format(op=op, t=t, r=t, shape="3x", shape_t=f"tensor<3x{t}>", extra="")
        interpreter = Interpreter(hlodbg.load(text).module)
        interpreter.run("main", _values(interpreter.module, np.random.default_rng(0), 2))
        body = interpreter.plan.fast_block(interpreter.module.entry.ops[4].regions[1].blocks[0])
        return _direct_form(body.steps[0]) is not None

    assert direct("f32") and direct("i32") and direct("i1", "xor")
    assert not direct("bf16") and not direct("complex<f32>", "multiply")  # computed widened, or their own way


def _values(module, rng, count: int) -> list:
    from hlodbg.engine.run.arguments import build_arguments

    return build_arguments(module.entry.function_type.inputs[:count], {}, int(rng.integers(1 << 30)))[0]


def test_a_direct_step_is_not_taken_around_a_backends_wrapping():
    """On a TPU the evaluators are wrapped (subnormals flushed): a compiled loop's steps run the
    wrapped evaluator, never the bare arithmetic of a direct form."""
    from hlodbg.engine.machine.targets import backend_for

    text = LOOP_OF.format(op="add", t="f32", r="f32", shape="", shape_t="tensor<f32>", extra="")
    tiny = np.float32(2.0 ** -127)  # subnormal: a TPU reads it as zero
    (result,) = Interpreter(hlodbg.load(text).module, backend=backend_for("tpu-v5e")).run("main", [tiny, tiny])
    assert result == 0 and Interpreter(hlodbg.load(text).module).run("main", [tiny, tiny])[0] == 2 * tiny


EDGES = {
    "f32": [0.0, -0.0, 1.5, -2.25, 3.4e38, -3.4e38, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 1.0000001],
    "f64": [0.0, -0.0, 1.5, -1e308, 1.7e308, np.inf, np.nan, 5e-324, -7.25],
    "i8": [0, 1, -1, 127, -128, 100], "i64": [0, -1, 2**63 - 1, -2**63, 12345],
    "ui8": [0, 1, 255, 128], "ui32": [0, 1, 2**32 - 1, 2**31], "i1": [False, True],
}
SCALAR_OPS = ["add", "subtract", "multiply", "and", "or", "xor", "compare EQ", "compare NE", "compare LT",
              "compare LE", "compare GT", "compare GE"]


@pytest.mark.parametrize("t", list(EDGES))
def test_scalar_forms_give_the_direct_forms_bits(t):
    """A compiled loop keeps 0-d values as numpy scalars between steps with a scalar form
    (registry.py, block_code.py): on every pair of edge values (overflow, NaN, infinities, signed
    zeros, subnormals) the operator on scalars gives the bits and dtype the ufunc gives on 0-d
    arrays."""
    from hlodbg.engine.run.block_code import _direct_form, _scalar_form

    dtype = hlodbg.load(LOOP_OF.format(op="add", t=t, r=t, shape="", shape_t=f"tensor<{t}>", extra="")).module \
        .entry.function_type.inputs[0].numpy_dtype
    values = [np.asarray(v).astype(dtype) for v in EDGES[t]]
    checked = 0
    for spec in SCALAR_OPS:
        op, *direction = spec.split()
        if (op in ("and", "or", "xor") and dtype.kind == "f") or (op == "subtract" and dtype.kind == "b"):
            continue  # not the ops' element types (the verifier refuses them)
        r = "i1" if op == "compare" else t
        text = LOOP_OF.format(op=op, t=t, r=r, shape="", shape_t=f"tensor<{t}>", extra="")
        if direction:
            text = text.replace("stablehlo.compare %x, %y", f"stablehlo.compare {direction[0]}, %x, %y")
        interpreter = Interpreter(hlodbg.load(text).module)
        interpreter.run("main", [values[0], values[0]])
        step = interpreter.plan.fast_block(interpreter.module.entry.ops[4].regions[1].blocks[0]).steps[0]
        scalar, direct = _scalar_form(step), _direct_form(step)
        assert (scalar is None) == (direct is None), spec
        if scalar is None:
            continue
        with np.errstate(all="ignore"):
            for a in values:
                for b in values:
                    want = np.asarray(direct(a, b))
                    got = scalar(a[()], b[()])
                    assert isinstance(got, np.generic) and got.dtype == want.dtype, (spec, a, b)
                    assert same_bits(np.asarray(got), want), (spec, a, b, got, want)
                    checked += 1
    assert checked


def test_a_compiled_loop_carries_scalars_and_returns_arrays():
    """0-d values going round a loop as numpy scalars (block_code.loop_function) wrap, overflow
    and reach NaN as the observed loop's arrays do, and leave the loop as arrays."""
    text = """func.func @main(%x: tensor<i8>, %f: tensor<f32>) -> (tensor<i8>, tensor<f32>, tensor<i1>) {
  %zero = stablehlo.constant dense<0> : tensor<i64>
  %one = stablehlo.constant dense<1> : tensor<i64>
  %n = stablehlo.constant dense<300> : tensor<i64>
  %seven = stablehlo.constant dense<7> : tensor<i8>
  %big = stablehlo.constant dense<3.0e38> : tensor<f32>
  %r:4 = stablehlo.while(%i = %zero, %a = %x, %g = %f, %p = %x) : tensor<i64>, tensor<i8>, tensor<f32>, tensor<i8>
    cond {
      %c = stablehlo.compare LT, %i, %n : (tensor<i64>, tensor<i64>) -> tensor<i1>
      stablehlo.return %c : tensor<i1>
    } do {
      %j = stablehlo.add %i, %one : tensor<i64>
      %b = stablehlo.multiply %a, %seven : tensor<i8>
      %h = stablehlo.multiply %g, %big : tensor<f32>
      %k = stablehlo.subtract %h, %h : tensor<f32>
      %q = stablehlo.xor %b, %p : tensor<i8>
      stablehlo.return %j, %q, %k, %b : tensor<i64>, tensor<i8>, tensor<f32>, tensor<i8>
    }
  %e = stablehlo.compare EQ, %r#2, %r#2 : (tensor<f32>, tensor<f32>) -> tensor<i1>
  return %r#1, %r#2, %e : tensor<i8>, tensor<f32>, tensor<i1>
}"""
    module = hlodbg.load(text).module
    args = [np.asarray(np.int8(3)), np.asarray(np.float32(10.0))]  # 10 * 3e38 overflows: inf - inf is NaN
    (plain, _), (observed, _) = both_loops(module, "main", args)
    assert all(type(value) is np.ndarray for value in plain)
    assert same_bits(plain, observed)
    assert np.isnan(plain[1]) and not plain[2]
