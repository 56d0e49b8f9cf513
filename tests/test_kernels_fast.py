"""The evaluators' fast paths give exactly the general paths' bits (issue 22, part K):

- elementwise results written into a dead operand's buffer (`OpCall.reuse`, engine/ops/reuse.py),
  and never into an argument, a folded constant, a view, an array a view still reads, or anything
  when reuse is ();
- broadcast_in_dim's directly built views (read-only, the same elements as np.broadcast_to);
- reduce's planned fast path for single-input recognised bodies (engine/ops/reduction_fast.py).
Inputs cover every float type (bf16 and f16 included), NaN, infinities, negative zero, odd shapes
and non-contiguous operands.
"""
from __future__ import annotations

import itertools
from types import SimpleNamespace

import ml_dtypes
import numpy as np
import pytest

import hlodbg
from hlodbg.engine.ops import reuse
from hlodbg.engine.ops.registry import EVALUATORS
from hlodbg.engine.ops.reduction import reduce_with_body
from hlodbg.engine.ops.reduction_fast import reduce_single_fast
from hlodbg.engine.ops.shape import _broadcast_in_dim
from hlodbg.engine.run.block_code import reusing_call
from hlodbg.engine.run.interpreter import Interpreter

BF16 = np.dtype(ml_dtypes.bfloat16)
FLOATS = [np.dtype(np.float16), BF16, np.dtype(np.float32), np.dtype(np.float64)]
TYPE_NAMES = {np.dtype(np.float16): "f16", BF16: "bf16", np.dtype(np.float32): "f32", np.dtype(np.float64): "f64",
              np.dtype(np.int32): "i32", np.dtype(np.uint8): "ui8", np.dtype(np.bool_): "i1"}


def tensor(shape, dtype) -> str:
    return "tensor<" + "".join(f"{d}x" for d in shape) + TYPE_NAMES[np.dtype(dtype)] + ">"


def first_call(text: str):
    """The prepared OpCall and evaluator of the first op of @main in `text`."""
    program = hlodbg.load(text)
    interpreter = Interpreter(program.module)
    op = interpreter.entry_function("main").body.operations[0]
    step = interpreter.step_for(op)
    return step.call, EVALUATORS[op.name]


def values(shape, dtype, rng) -> np.ndarray:
    """Random values of `dtype` with NaN, infinities and both zeros mixed in."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    if dtype.kind in "iu":
        return rng.integers(0 if dtype.kind == "u" else -50, 50, size=shape).astype(dtype)
    x = rng.standard_normal(shape) * 3
    flat = x.reshape(-1)
    specials = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0]
    for i, v in zip(rng.choice(flat.size, size=min(flat.size, len(specials)), replace=False), specials):
        flat[i] = v
    return x.astype(np.float32 if dtype != np.float64 else np.float64).astype(dtype)


def same_bits(got, want) -> None:
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape, want.dtype, want.shape)
    assert np.ascontiguousarray(got).tobytes() == np.ascontiguousarray(want).tobytes()


def run_like_the_loop(evaluator, call, env: dict, names):
    """The plain loop's call (engine/run/block_code.py `reusing_call`): operands come from the
    frame (`env`), and the positions in `call.reuse` no other reference holds are offered."""
    offered, call.reuse = call.reuse, ()
    step = SimpleNamespace(call=call, evaluator=evaluator, reuse=offered)
    try:
        return reusing_call(step, [env[n] for n in names])
    finally:
        call.reuse = offered


# -- elementwise into dead operands -----------------------------------------------------------


@pytest.fixture(autouse=True)
def reuse_every_size(monkeypatch):
    """Small test arrays take the reuse path too (by default only arrays worth it do)."""
    monkeypatch.setattr(reuse, "REUSE_FROM_BYTES", 0)


BINARY = ["add", "subtract", "multiply", "divide", "and", "or", "xor"]
UNARY = ["negate", "exponential", "log", "sine", "cosine", "tan", "tanh", "sqrt"]


def _binary_dtypes(name):
    if name in ("and", "or", "xor"):
        return [np.dtype(np.int32), np.dtype(np.uint8), np.dtype(np.bool_)]
    return FLOATS + [np.dtype(np.int32)] + ([np.dtype(np.bool_)] if name in ("add", "multiply") else [])


@pytest.mark.parametrize("name", BINARY)
def test_binary_into_a_dead_operand_gives_the_same_bits(name):
    rng = np.random.default_rng(1)
    for dtype, (lhs_shape, rhs_shape) in itertools.product(_binary_dtypes(name), [((3, 5, 7), (3, 5, 7)), ((5, 7), (7,)), ((4,), ())]):
        t_l, t_r, t_o = tensor(lhs_shape, dtype), tensor(rhs_shape, dtype), tensor(lhs_shape, dtype)
        if rhs_shape != lhs_shape:  # the shapes a vectorised region body sees: stated as same-shaped here
            t_r = t_l
        call, evaluator = first_call(f"func.func @main(%a: {t_l}, %b: {t_r}) -> {t_o} {{\n"
                                     f"  %0 = stablehlo.{name} %a, %b : {t_o}\n  return %0 : {t_o}\n}}")
        lhs, rhs = values(lhs_shape, dtype, rng), values(rhs_shape, dtype, rng)
        want = evaluator(call, lhs.copy(), rhs.copy())
        call.reuse = (0, 1)
        env = {"a": lhs.copy(), "b": rhs.copy()}
        got = run_like_the_loop(evaluator, call, env, "ab")
        same_bits(got, want)
        if dtype in (np.float32, np.float64) or (dtype.kind in "iu" and dtype.itemsize >= 4 and name != "divide"):
            assert got is env["a"], f"{name} {dtype}: the dead lhs buffer was not reused"


@pytest.mark.parametrize("name", UNARY)
def test_unary_into_a_dead_operand_gives_the_same_bits(name):
    rng = np.random.default_rng(2)
    for dtype, shape in itertools.product(FLOATS, [(3, 5, 7), (1,), ()]):
        t = tensor(shape, dtype)
        call, evaluator = first_call(f"func.func @main(%a: {t}) -> {t} {{\n"
                                     f"  %0 = stablehlo.{name} %a : {t}\n  return %0 : {t}\n}}")
        x = values(shape, dtype, rng)
        with np.errstate(all="ignore"):
            want = evaluator(call, x.copy())
            call.reuse = (0,)
            env = {"a": x.copy()}
            got = run_like_the_loop(evaluator, call, env, "a")
        same_bits(got, want)
        if dtype in (np.float32, np.float64) and shape:
            assert got is env["a"]


def test_select_into_either_dead_branch_gives_the_same_bits():
    rng = np.random.default_rng(3)
    for dtype in FLOATS + [np.dtype(np.int32)]:
        t, p = tensor((6, 5), dtype), tensor((6, 5), np.bool_)
        call, evaluator = first_call(f"func.func @main(%p: {p}, %a: {t}, %b: {t}) -> {t} {{\n"
                                     f"  %0 = stablehlo.select %p, %a, %b : {p}, {t}\n  return %0 : {t}\n}}")
        pred, a, b = values((6, 5), np.bool_, rng), values((6, 5), dtype, rng), values((6, 5), dtype, rng)
        want = evaluator(call, pred, a.copy(), b.copy())
        for reuse in [(1,), (2,), (1, 2)]:
            call.reuse = reuse
            env = {"p": pred, "a": a.copy(), "b": b.copy()}
            got = run_like_the_loop(evaluator, call, env, "pab")
            same_bits(got, want)
            assert got is env["pab"[reuse[0]]]


def _add_call(shape=(4, 6), dtype=np.float32):
    t = tensor(shape, dtype)
    return first_call(f"func.func @main(%a: {t}, %b: {t}) -> {t} {{\n  %0 = stablehlo.add %a, %b : {t}\n  return %0 : {t}\n}}")


def test_reuse_never_writes_a_read_only_operand_a_view_or_an_array_a_view_reads():
    call, add = _add_call()
    call.reuse = (0,)

    def written(env: dict) -> bool:
        """Whether add wrote into env["a"]; env holds the only references the test keeps."""
        before = env["a"].tobytes()
        got = run_like_the_loop(add, call, env, "ab")
        same_bits(got, np.add(np.frombuffer(before, np.float32).reshape(4, 6), env["b"]))
        if got is env["a"]:
            return True
        assert env["a"].tobytes() == before
        return False

    ones = lambda: np.ones((4, 6), np.float32)  # noqa: E731
    # The control: a fresh array nothing else holds is taken.
    assert written({"a": np.arange(24, dtype=np.float32).reshape(4, 6).copy(), "b": ones()})
    read_only = np.arange(24, dtype=np.float32).reshape(4, 6).copy()
    read_only.flags.writeable = False
    env = {"a": read_only, "b": ones()}
    del read_only
    assert not written(env)
    # A view (its owner alive only through it) owns nothing.
    assert not written({"a": np.arange(48, dtype=np.float32)[:24].reshape(4, 6), "b": ones()})
    # An owned array with a live view elsewhere in the frame (a broadcast, a transpose).
    held = np.arange(24, dtype=np.float32).reshape(4, 6).copy()
    env = {"a": held, "b": ones(), "reader": held.T}
    del held
    assert not written(env)


def test_reuse_is_off_when_the_call_gives_no_positions_or_shapes_differ():
    call, add = _add_call()
    env = {"a": np.ones((4, 6), np.float32), "b": np.ones((4, 6), np.float32)}
    assert call.reuse == ()
    got = run_like_the_loop(add, call, env, "ab")
    assert got is not env["a"] and got is not env["b"]
    # A dead operand of another dtype is not taken (the result is f32).
    call, add = _add_call()
    call.reuse = (0, 1)
    env = {"a": np.ones((4, 6), np.float32), "b": np.ones((4, 6), np.float64)}
    got = add(call, *[env[n] for n in "ab"])
    assert got is not env["b"]


def test_runs_with_reuse_everywhere_keep_arguments_and_constants_intact():
    t = tensor((5, 3), np.float32)
    text = (f"func.func @main(%a: {t}, %b: {t}) -> {t} {{\n"
            f"  %c = stablehlo.constant dense<2.5> : {t}\n"
            f"  %0 = stablehlo.add %a, %c : {t}\n"
            f"  %1 = stablehlo.multiply %0, %b : {t}\n"
            f"  %2 = stablehlo.subtract %1, %c : {t}\n"
            f"  %3 = stablehlo.exponential %2 : {t}\n"
            f"  return %3 : {t}\n}}")
    program = hlodbg.load(text)
    rng = np.random.default_rng(5)
    a, b = values((5, 3), np.float32, rng), values((5, 3), np.float32, rng)
    a0, b0 = a.copy(), b.copy()
    want = Interpreter(program.module).run("main", [a, b])[0]
    interpreter = Interpreter(program.module)
    for op in interpreter.entry_function("main").body.operations[:-1]:
        # Every operand offered to the plain loop: arguments and the constant must stay intact.
        interpreter.step_for(op).reuse = tuple(range(len(op.operands)))
    for _ in range(3):  # the folded constant is shared by every run: it must survive them all
        same_bits(interpreter.run("main", [a, b])[0], want)
    same_bits(a, a0)
    same_bits(b, b0)


# -- broadcast views ----------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", FLOATS + [np.dtype(np.int32), np.dtype(np.bool_)])
def test_broadcast_views_match_broadcast_to_and_are_read_only(dtype):
    rng = np.random.default_rng(6)
    cases = [((5,), (3, 5, 7), [1]), ((7, 5), (5, 2, 7), [2, 0]), ((1, 7), (4, 7), [0, 1]), ((), (3, 2), []),
             ((3, 1, 4), (3, 6, 4), [0, 1, 2])]
    for operand_shape, shape, dims in cases:
        t_in, t_out = tensor(operand_shape, dtype), tensor(shape, dtype)
        call, evaluator = first_call(
            f"func.func @main(%a: {t_in}) -> {t_out} {{\n"
            f"  %0 = stablehlo.broadcast_in_dim %a, dims = {dims} : ({t_in}) -> {t_out}\n  return %0 : {t_out}\n}}")
        x = values(operand_shape, dtype, rng)
        strided = np.asarray(np.ascontiguousarray(np.stack([x, x], axis=-1))[..., 0]) if x.ndim else x
        read_only = np.array(x, copy=True)
        read_only.flags.writeable = False  # an argument, a folded constant
        for operand in (x, strided, read_only):
            got = evaluator(call, operand)
            same_bits(got, _broadcast_in_dim(call, operand, dims, shape))
            assert not got.flags.writeable
            assert np.shares_memory(got, operand) or operand.size <= 1


# -- reduce's fast path ---------------------------------------------------------------------------

REDUCE_CASES = [((3, 5, 7), [1]), ((3, 5, 7), [0, 2]), ((70, 70), [0]), ((64, 256), [1]), ((4100,), [0]),
                ((16, 64), [1]), ((4, 16, 16), [2]), ((33,), [0])]


def _reduce_call(shape, dims, dtype, kind):
    t_in, t_out = tensor(shape, dtype), tensor([n for d, n in enumerate(shape) if d not in dims], dtype)
    t0 = tensor((), dtype)
    return first_call(
        f"func.func @main(%x: {t_in}, %i: {t0}) -> {t_out} {{\n"
        f"  %0 = stablehlo.reduce(%x init: %i) applies stablehlo.{kind} across dimensions = {dims} : ({t_in}, {t0}) -> {t_out}\n"
        f"  return %0 : {t_out}\n}}")[0]


@pytest.mark.parametrize("kind", ["add", "maximum", "minimum", "multiply"])
@pytest.mark.parametrize("dtype", FLOATS + [np.dtype(np.int32)])
def test_reduce_fast_path_gives_the_general_paths_bits(kind, dtype):
    rng = np.random.default_rng(7)
    inits = {"add": [0.0, -0.0, 1.5], "multiply": [1.0, -0.0], "maximum": [-np.inf, 0.0, -0.0, np.nan],
             "minimum": [np.inf, 0.0, -0.0]}[kind]
    taken = 0
    for (shape, dims), init_value in itertools.product(REDUCE_CASES, inits):
        call = _reduce_call(shape, dims, dtype, kind)
        with np.errstate(all="ignore"):
            init = np.asarray(init_value).astype(dtype)
            for x in (values(shape, dtype, rng), np.asarray(values(shape[::-1], dtype, rng)).T):
                if kind == "multiply" and dtype.kind == "f":
                    x = (np.abs(x) ** (1.0 / 64) * np.sign(x)).astype(dtype)  # keep products finite
                general = np.array(reduce_with_body(call, 0, [x], [init], dims)[0])
                fast = reduce_single_fast(call, x, init)
                if fast is not None:
                    taken += 1
                    same_bits(fast, general)
                    assert fast.flags.writeable and fast.base is None or fast.flags.owndata
    if dtype in (np.float32, np.float64, np.int32):
        assert taken, "the fast path never applied"


def test_reduce_fast_path_steps_aside_when_the_debugger_expands_bodies():
    call = _reduce_call((4, 8), [1], np.dtype(np.float32), "add")
    x, init = np.ones((4, 8), np.float32), np.zeros((), np.float32)
    assert reduce_single_fast(call, x, init) is not None
    call.interpreter.expand_bodies = True
    assert reduce_single_fast(call, x, init) is None


def test_only_arrays_worth_it_are_reused_by_default(monkeypatch):
    monkeypatch.undo()
    small = 1024  # f32 elements: a 4 KiB array is cheaper to allocate than to check
    big = reuse.REUSE_FROM_BYTES // 4
    for size, taken in ((small, False), (big, True)):
        call, add = _add_call((size,))
        call.reuse = (0,)
        env = {"a": np.ones(size, np.float32), "b": np.ones(size, np.float32)}
        got = run_like_the_loop(add, call, env, "ab")
        assert (got is env["a"]) is taken
        same_bits(got, np.full(size, 2, np.float32))
