"""Fused elementwise work (engine/run/fusion.py): fused and op-by-op runs give the same bytes, groups
never hide a value something else reads, and the debugger still sees every op's own value."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import hlodbg
from hlodbg.engine.ir.dtypes import as_value
from hlodbg.engine.ops import reuse
from hlodbg.engine.run import fusion
from hlodbg.engine.run.interpreter import Interpreter, Listener

from .helpers import PROGRAMS

FLOATS = {"f32": np.float32, "f64": np.float64, "f16": np.float16, "bf16": "bfloat16"}
UNARY = ("abs", "negate", "exponential", "log", "sqrt", "tanh", "sine", "floor", "logistic", "sign")
BINARY = ("add", "subtract", "multiply", "divide", "maximum", "minimum", "power", "remainder", "atan2")


@pytest.fixture
def small_blocks(monkeypatch):
    """Thresholds low enough that small arrays are fused, cut into many blocks and threaded."""
    monkeypatch.setattr(fusion, "BLOCK_BYTES", 96)
    monkeypatch.setattr(fusion, "FUSE_FROM_ELEMENTS", 1)
    monkeypatch.setattr(fusion, "THREADS_FROM_ELEMENTS", 700)
    monkeypatch.setattr(fusion, "_workers", lambda: 3)  # threads whatever the machine has
    monkeypatch.setattr(reuse, "REUSE_FROM_BYTES", 0)  # members write into dying intermediates


def run_both(module, args, entry="main"):
    """(op-by-op results, fused results, the fused steps of the fused run's plan)."""
    unfused = unfused_run(module, args, entry)
    interpreter = Interpreter(module)
    fused = interpreter.run(entry, args)
    return unfused, fused, fused_steps(interpreter)


def unfused_run(module, args, entry="main"):
    original = fusion.fuse
    fusion.fuse = lambda steps, plan: list(steps)  # the plan's hook finds no fusion
    try:
        return Interpreter(module).run(entry, args)
    finally:
        fusion.fuse = original


def fused_steps(interpreter):
    return [step for fast in interpreter.plan._fast.values() for step in fast.steps
            if isinstance(step, fusion.FusedStep)]


def assert_same_bytes(unfused, fused):
    assert len(unfused) == len(fused)
    for want, got in zip(unfused, fused):
        want, got = np.asarray(want), np.asarray(got)
        assert (got.dtype, got.shape) == (want.dtype, want.shape)
        assert got.tobytes() == want.tobytes()


# -- generated chains and trees ----------------------------------------------------------------


def tensor(shape, dtype):
    return f"tensor<{'x'.join(map(str, shape))}{'x' if shape else ''}{dtype}>"


def generated_program(rng, shape, dtype, count):
    """A random tree of elementwise ops over two arguments, with values read twice, values read by
    a non-elementwise op (reverse) in the middle, a clamp by 0-d bounds, a select, and some
    intermediates returned."""
    t = tensor(shape, dtype)
    scalar = tensor((), dtype)
    pred = tensor(shape, "i1")
    lines = []
    values = ["%x", "%y"]
    for i in range(count):
        name = f"%v{i}"
        kind = rng.integers(10)
        pick = lambda: values[rng.integers(len(values))] if rng.random() < 0.5 else values[-1]  # noqa: E731
        if kind < 4:
            lines.append(f"{name} = stablehlo.{UNARY[rng.integers(len(UNARY))]} {pick()} : {t}")
        elif kind < 8:
            lines.append(f"{name} = stablehlo.{BINARY[rng.integers(len(BINARY))]} {pick()}, {pick()} : {t}")
        elif kind == 8:
            if shape:
                lines.append(f"{name} = stablehlo.reverse {pick()}, dims = [0] : {t}")
            else:
                lines.append(f"{name} = stablehlo.clamp %lo, {pick()}, %hi : ({scalar}, {t}, {scalar}) -> {t}")
        else:
            lines.append(f"%p{i} = stablehlo.compare GT, {pick()}, {pick()} : ({t}, {t}) -> {pred}")
            lines.append(f"{name} = stablehlo.select %p{i}, {pick()}, {pick()} : {pred}, {t}")
            if rng.random() < 0.5:
                values.append(name)
                name = f"%c{i}"
                lines.append(f"{name} = stablehlo.clamp %lo, {values[-1]}, %hi : ({scalar}, {t}, {scalar}) -> {t}")
        values.append(name)
    returned = [values[-1]] + [v for v in values[2:-1] if rng.random() < 0.15]
    body = "\n    ".join(lines)
    types = ", ".join([t] * len(returned))
    return (f"func.func @main(%x: {t}, %y: {t}, %lo: {scalar}, %hi: {scalar}) -> ({types}) {{\n    {body}\n"
            f"    return {', '.join(returned)} : {types}\n}}")


def special_floats(rng, shape, dtype):
    """Normal values with NaNs of both signs and several payloads, infinities, zeros of both signs
    and subnormals."""
    x = (rng.standard_normal(shape) * 3).astype(np.float64)
    flat = x.reshape(-1)
    picks = rng.random(flat.shape)
    flat[picks < 0.05] = np.inf
    flat[(picks >= 0.05) & (picks < 0.1)] = -np.inf
    flat[(picks >= 0.1) & (picks < 0.15)] = -0.0
    flat[(picks >= 0.15) & (picks < 0.18)] = 1e-41
    out = np.asarray(flat.reshape(shape)).astype(dtype)
    nan = picks >= 0.8
    if nan.any():
        width = out.dtype.itemsize * 8
        bits = out.reshape(-1).view(f"u{out.dtype.itemsize}")
        quiet = {16: 0x7E00 if out.dtype == np.float16 else 0x7FC0, 32: 0x7FC00000, 64: 0x7FF8000000000000}[width]
        payloads = rng.integers(0, 64, size=int(nan.sum())).astype(bits.dtype)
        signs = (rng.random(payloads.shape) < 0.5).astype(bits.dtype) << np.asarray(width - 1, bits.dtype)
        bits[nan] = np.asarray(quiet, bits.dtype) | payloads | signs
    return out


CASES = [(seed, shape, dtype) for seed, (shape, dtype) in enumerate([
    ((), "f32"), ((7,), "f32"), ((33, 40), "f16"), ((12, 170), "bf16"), ((1500,), "f64"), ((4, 5, 60), "f32"),
    ((1031,), "bf16"), ((3, 1, 410), "f64"), ((960,), "f16"), ((2, 3000), "f32"),
])]


@pytest.mark.parametrize("seed,shape,dtype", CASES)
def test_generated_trees_fused_and_op_by_op_give_the_same_bytes(small_blocks, seed, shape, dtype):
    rng = np.random.default_rng(seed)
    for count in (3, 12, 30):
        text = generated_program(rng, shape, dtype, count)
        module = hlodbg.load(text).module
        np_dtype = np.dtype(FLOATS[dtype]) if dtype != "bf16" else __import__("ml_dtypes").bfloat16
        args = [special_floats(rng, shape, np_dtype), special_floats(rng, shape, np_dtype),
                np.asarray(-2.5, np_dtype), np.asarray(4.0, np_dtype)]
        unfused, fused, groups = run_both(module, args)
        assert_same_bytes(unfused, fused)
        if shape and count >= 12:
            assert groups, f"nothing fused in\n{text}"


def test_a_chain_over_millions_of_elements_is_blocked_and_threaded_with_the_real_thresholds():
    shape = (2100, 1000)  # 2.1M elements: above the thresholds, cut into many blocks
    assert np.prod(shape) >= max(fusion.FUSE_FROM_ELEMENTS, fusion.THREADS_FROM_ELEMENTS)
    rng = np.random.default_rng(7)
    text = generated_program(rng, shape, "f32", 10)
    module = hlodbg.load(text).module
    args = [special_floats(rng, shape, np.float32), special_floats(rng, shape, np.float32),
            np.asarray(-1, np.float32), np.asarray(2, np.float32)]
    unfused, fused, groups = run_both(module, args)
    assert groups and len(fusion._blocks(int(np.prod(shape)), 1, groups[0].call.block)) > 1
    assert_same_bytes(unfused, fused)


BROADCAST_CASES = [(40 + seed, shape, dtype) for seed, (shape, dtype) in enumerate([
    ((700, 7), "f32"), ((40, 64), "f64"), ((1000, 3), "bf16"), ((600, 5, 8), "f16"), ((513, 2), "f32"),
])]


@pytest.mark.parametrize("seed,shape,dtype", BROADCAST_CASES)
def test_broadcast_operands_are_cut_by_rows_with_the_same_bytes(small_blocks, seed, shape, dtype):
    rng = np.random.default_rng(seed)
    np_dtype = np.dtype(FLOATS[dtype]) if dtype != "bf16" else __import__("ml_dtypes").bfloat16
    for count in (6, 20):
        text = generated_program(rng, shape, dtype, count)
        module = hlodbg.load(text).module
        row = special_floats(rng, (1,) + shape[1:], np_dtype)
        column = special_floats(rng, shape[:1] + (1,) * (len(shape) - 1), np_dtype)
        x, y = np.broadcast_to(row, shape), np.broadcast_to(column, shape)  # views, as broadcasts may be
        args = [x, y, np.asarray(-2.5, np_dtype), np.asarray(4.0, np_dtype)]
        assert fusion._cut(shape, args, 64) is not None and not fusion._cut(shape, args, 64)[0]
        unfused, fused, groups = run_both(module, args)
        assert_same_bytes(unfused, fused)


def test_operands_that_are_views_run_the_group_unblocked_with_the_same_bytes(small_blocks):
    module = hlodbg.load("""
    func.func @main(%x: tensor<40x30xf32>, %y: tensor<40x30xf32>) -> tensor<40x30xf32> {
      %a = stablehlo.multiply %x, %y : tensor<40x30xf32>
      %b = stablehlo.tanh %a : tensor<40x30xf32>
      %c = stablehlo.add %b, %x : tensor<40x30xf32>
      return %c : tensor<40x30xf32>
    }""").module
    rng = np.random.default_rng(3)
    x = special_floats(rng, (30, 40), np.float32).T  # a transposed view: not C-contiguous
    y = special_floats(rng, (40, 30), np.float32)
    assert not x.flags.c_contiguous
    unfused, fused, groups = run_both(module, [x, y])
    assert groups
    assert_same_bytes(unfused, fused)


# -- grouping ----------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(6))
def test_groups_never_hide_a_value_read_elsewhere_and_keep_program_order_valid(small_blocks, seed):
    rng = np.random.default_rng(100 + seed)
    text = generated_program(rng, (16,), "f32", 40)
    module = hlodbg.load(text).module
    function = module.function("main")
    block = function.body
    fused = Interpreter(module).plan.fast_steps(block)
    defined = set(block.arguments)
    for step in fused:
        assert all(v in defined for v in step.operands), "a step runs before a value it reads"
        defined.update(step.results)
        if not isinstance(step, fusion.FusedStep):
            continue
        members = {member.op for member in step.members}
        for member in step.members:
            result = member.op.results[0]
            read_outside = any(user not in members for user, _ in result.uses)
            assert read_outside == (result in step.results), f"{result} read elsewhere but kept inside"
            assert all(fusion.is_fusible(m) for m in step.members)
    terminator = block.operations[-1]
    assert all(v in defined for v in terminator.operands)


def test_only_elementwise_ops_of_one_shape_join_and_constants_stay_folded(small_blocks):
    module = hlodbg.load("""
    func.func @main(%x: tensor<8xf32>, %s: tensor<f32>) -> tensor<8xf32> {
      %c = stablehlo.constant dense<2.0> : tensor<8xf32>
      %c2 = stablehlo.multiply %c, %c : tensor<8xf32>
      %a = stablehlo.add %x, %c2 : tensor<8xf32>
      %b = stablehlo.broadcast_in_dim %s, dims = [] : (tensor<f32>) -> tensor<8xf32>
      %m = stablehlo.multiply %a, %b : tensor<8xf32>
      %e = stablehlo.exponential %m : tensor<8xf32>
      %t = stablehlo.add %s, %s : tensor<f32>
      %r = stablehlo.multiply %e, %e : tensor<8xf32>
      return %r : tensor<8xf32>
    }""").module
    args = [np.arange(8, dtype=np.float32), np.asarray(0.5, np.float32)]
    unfused, fused, groups = run_both(module, args)
    assert_same_bytes(unfused, fused)
    [group] = groups
    assert [m.op.name.split(".")[1] for m in group.members] == ["add", "multiply", "exponential", "multiply"]
    assert [v.name for v in group.operands] == ["%x", "%c2", "%b"]


def test_chlo_functions_fuse_as_their_family_says(small_blocks):
    # Their family is element-wise whatever their dialect (their colour is CHLO's): they join a group.
    module = hlodbg.load("""
    func.func @main(%x: tensor<700xf32>, %y: tensor<700xf32>) -> tensor<700xf32> {
      %a = chlo.erf %x : tensor<700xf32> -> tensor<700xf32>
      %b = chlo.square %a : tensor<700xf32> -> tensor<700xf32>
      %c = stablehlo.add %b, %y : tensor<700xf32>
      %d = chlo.broadcast_atan2 %c, %y : (tensor<700xf32>, tensor<700xf32>) -> tensor<700xf32>
      %e = chlo.lgamma %d : tensor<700xf32> -> tensor<700xf32>
      return %e : tensor<700xf32>
    }""").module
    rng = np.random.default_rng(7)
    args = [rng.normal(size=700).astype(np.float32), rng.normal(size=700).astype(np.float32)]
    unfused, fused, groups = run_both(module, args)
    assert_same_bytes(unfused, fused)
    [group] = groups
    assert [m.op.name for m in group.members] == ["chlo.erf", "chlo.square", "stablehlo.add", "chlo.broadcast_atan2",
                                                 "chlo.lgamma"]


def test_a_member_read_by_a_later_op_before_the_group_ends_splits_the_group(small_blocks):
    # %a feeds the reverse, whose value feeds %c: %a and %c cannot run as one step.
    module = hlodbg.load("""
    func.func @main(%x: tensor<8xf32>) -> tensor<8xf32> {
      %a = stablehlo.exponential %x : tensor<8xf32>
      %b = stablehlo.add %a, %a : tensor<8xf32>
      %r = stablehlo.reverse %a, dims = [0] : tensor<8xf32>
      %c = stablehlo.multiply %b, %r : tensor<8xf32>
      %d = stablehlo.negate %c : tensor<8xf32>
      return %d : tensor<8xf32>
    }""").module
    unfused, fused, groups = run_both(module, [np.linspace(-1, 1, 8, dtype=np.float32)])
    assert_same_bytes(unfused, fused)
    memberships = [[m.op.results[0].name for m in g.members] for g in groups]
    assert ["%a", "%b"] in memberships and ["%c", "%d"] in memberships


def test_a_value_a_fused_step_reads_after_its_last_reader_op_by_op_is_kept_until_then(small_blocks):
    # Op by op, the reverse %w is the last to read %v (a plain run clears %v there, and may let
    # the reverse write into it); the group {%a, %b} runs where %b was, after it, and reads %v.
    module = hlodbg.load("""
    func.func @main(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
      %v = stablehlo.reverse %x, dims = [0] : tensor<8xf32>
      %a = stablehlo.exponential %v : tensor<8xf32>
      %w = stablehlo.reverse %v, dims = [0] : tensor<8xf32>
      %b = stablehlo.add %a, %v : tensor<8xf32>
      return %b, %w : tensor<8xf32>, tensor<8xf32>
    }""").module
    unfused, fused, groups = run_both(module, [np.linspace(-1, 1, 8, dtype=np.float32)])
    assert_same_bytes(unfused, fused)
    [group] = groups
    assert [v.name for v in group.operands] == ["%v"]


def test_an_error_in_a_fused_member_names_that_member(small_blocks):
    module = hlodbg.load("""
    func.func @main(%x: tensor<8xf32>, %r: tensor<8xi32>) -> tensor<8xi32> {
      %a = stablehlo.add %x, %x : tensor<8xf32>
      %b = "hlo.stochastic_convert"(%a, %r) : (tensor<8xf32>, tensor<8xi32>) -> tensor<8xi32>
      %c = stablehlo.add %b, %b : tensor<8xi32>
      return %c : tensor<8xi32>
    }""", check=False).module
    interpreter = Interpreter(module)
    with pytest.raises(hlodbg.HlodbgError, match="stochastic_convert: the random bits must be unsigned") as caught:
        interpreter.run("main", [np.arange(8, dtype=np.float32), np.arange(8, dtype=np.int32)])
    assert caught.value.pos.line == 4
    assert fused_steps(interpreter)


# -- the shared programs and the debugger ---------------------------------------------------------


def shared_programs():
    if not PROGRAMS.is_dir():
        return []
    return sorted(p.stem for p in PROGRAMS.glob("*.mlir") if (PROGRAMS / f"{p.stem}.inputs.npz").exists())


@pytest.mark.skipif(not shared_programs(), reason="../shared/programs is not present")
@pytest.mark.parametrize("name", shared_programs() or ["<none>"])
def test_shared_programs_fused_and_op_by_op_give_the_same_bytes(small_blocks, name):
    program = hlodbg.load(PROGRAMS / f"{name}.mlir")
    inputs = np.load(PROGRAMS / f"{name}.inputs.npz")
    args = [inputs[f"arg{i}"] for i in range(len(inputs.files))]
    function = program.module.function("main")
    values = [as_value(a, t) for a, t in zip(args, function.function_type.inputs)]
    devices = [program.module.attributes.get(f"mhlo.num_{what}") for what in ("partitions", "replicas")]
    if any(int(getattr(count, "value", count or 1)) > 1 for count in devices):
        pytest.skip("runs on a grid of devices (test_programs covers it)")
    unfused, fused, _ = run_both(program.module, values)
    assert_same_bytes(unfused, fused)


class Seen(Listener):
    def __init__(self):
        self.ops = []

    def after_op(self, event, frame, op, operands, results):
        self.ops.append((op.results[0].name if op.results else op.name, np.asarray(results[0]).tobytes()))


def test_listeners_and_the_debugger_see_every_fused_ops_own_value(small_blocks):
    text = """
    func.func @main(%x: tensor<64xf32>) -> tensor<64xf32> {
      %a = stablehlo.exponential %x : tensor<64xf32>
      %b = stablehlo.add %a, %x : tensor<64xf32>
      %c = stablehlo.tanh %b : tensor<64xf32>
      %d = stablehlo.multiply %c, %a : tensor<64xf32>
      return %d : tensor<64xf32>
    }"""
    program = hlodbg.load(text)
    x = np.linspace(-3, 3, 64, dtype=np.float32)
    _, _, groups = run_both(program.module, [x])
    assert groups and len(groups[0].members) == 4  # a plain run fuses all four
    seen = Seen()
    Interpreter(program.module, listeners=[seen]).run("main", [x])
    a = np.exp(x)
    assert [name for name, _ in seen.ops] == ["%a", "%b", "%c", "%d"]
    assert seen.ops[0][1] == a.tobytes()
    session = program.session([x])
    try:
        shown = {}
        while session.op is not None:
            session.step()
            shown.update({name: np.asarray(v).tobytes() for name, v in session.values().items()})
        assert {"%a", "%b", "%c", "%d"} <= set(shown)
        assert shown["%a"] == a.tobytes()
        assert shown["%b"] == (a + x).tobytes()
    finally:
        session.close()


EXCESS_CHAIN = """func.func @main(%a: tensor<3000xbf16>, %b: tensor<3000xbf16>) -> (tensor<3000xf32>, tensor<3000xbf16>) {
  %0 = stablehlo.multiply %a, %b : tensor<3000xbf16>
  %1 = stablehlo.convert %0 : (tensor<3000xbf16>) -> tensor<3000xf32>
  %2 = stablehlo.add %0, %a : tensor<3000xbf16>
  return %1, %2 : tensor<3000xf32>, tensor<3000xbf16>
}
"""


BF16 = np.dtype(ml_dtypes.bfloat16)


def test_excess_precision_holds_fused_in_threaded_blocks_and_on_the_plain_loop(small_blocks):
    # The convert takes the multiply's f32 value (XLA's excess precision) however the run is cut:
    # op by op, fused in blocks on three threads, and observed by a listener.
    module = hlodbg.load(EXCESS_CHAIN).module
    rng = np.random.default_rng(3)
    a, b = (rng.standard_normal(3000).astype(np.float32).astype(BF16) for _ in range(2))
    want = a.astype(np.float32) * b.astype(np.float32)
    assert (want.astype("bfloat16").astype(np.float32) != want).any()  # rounding would show
    interpreter = Interpreter(module)
    assert interpreter.plain
    unfused, fused, steps = unfused_run(module, [a, b]), interpreter.run("main", [a, b]), fused_steps(interpreter)
    observed = Interpreter(module, listeners=[Listener()]).run("main", [a, b])
    assert steps
    for results in (unfused, fused, observed):
        assert np.asarray(results[0]).tobytes() == want.tobytes()
    assert_same_bytes(unfused, fused)
    assert_same_bytes(unfused, observed)
