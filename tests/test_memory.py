"""Liveness and the static memory profile (engine/run/liveness.py, run/memory_profile.py) and
`hlodbg memory`: hand-written programs whose live bytes at every op are worked out by hand."""
from __future__ import annotations

import json
from types import SimpleNamespace

import numpy as np
import pytest

import hlodbg
from hlodbg.cli import main
from hlodbg.engine.ir.core import Value
from hlodbg.engine.machine.backend import Backend
from hlodbg.engine.machine.process import ProcessId
from hlodbg.engine.run.interpreter import Interpreter, Listener
from hlodbg.engine.run.liveness import FunctionLiveness, liveness_of
from .helpers import PROGRAMS, SAMPLES, require_shared

CHAIN = """
func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.add %a, %b : tensor<4xf32>
  %1 = stablehlo.multiply %0, %0 : tensor<4xf32>
  %2 = stablehlo.subtract %1, %a : tensor<4xf32>
  return %2 : tensor<4xf32>
}
"""

DIAMOND = """
func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.add %a, %a : tensor<4xf32>
  %1 = stablehlo.negate %0 : tensor<4xf32>
  %2 = stablehlo.exponential %0 : tensor<4xf32>
  %3 = stablehlo.add %1, %2 : tensor<4xf32>
  %dead = stablehlo.abs %3 : tensor<4xf32>
  return %3 : tensor<4xf32>
}
"""

# %t is carried into the loop and dies there (the loop's state takes its buffer over); %w and %n are
# captured by the body and the condition and stay live until the while completes.
WHILE = """
func.func @main(%x: tensor<4xf32>, %w: tensor<4xf32>) -> tensor<4xf32> {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %n = stablehlo.constant dense<3> : tensor<i32>
  %t = stablehlo.add %x, %x : tensor<4xf32>
  %r:2 = stablehlo.while(%i = %c0, %v = %t) : tensor<i32>, tensor<4xf32>
    cond {
      %p = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %p : tensor<i1>
    } do {
      %one = stablehlo.constant dense<1> : tensor<i32>
      %i2 = stablehlo.add %i, %one : tensor<i32>
      %v2 = stablehlo.multiply %v, %w : tensor<4xf32>
      stablehlo.return %i2, %v2 : tensor<i32>, tensor<4xf32>
    }
  %s = stablehlo.negate %r#1 : tensor<4xf32>
  return %s : tensor<4xf32>
}
"""

# %c0 starts the outer loop's counter and the inner loop's in every outer iteration: the outer
# loop's state cannot take its buffer over. %w, %n and %one are captured across nesting levels.
NESTED = """
func.func @main(%x: tensor<4xf32>, %w: tensor<4xf32>) -> tensor<4xf32> {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %n = stablehlo.constant dense<2> : tensor<i32>
  %r:2 = stablehlo.while(%i = %c0, %v = %x) : tensor<i32>, tensor<4xf32>
    cond {
      %p = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %p : tensor<i1>
    } do {
      %one = stablehlo.constant dense<1> : tensor<i32>
      %u = stablehlo.add %v, %v : tensor<4xf32>
      %q:2 = stablehlo.while(%j = %c0, %acc = %v) : tensor<i32>, tensor<4xf32>
        cond {
          %pj = stablehlo.compare LT, %j, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
          stablehlo.return %pj : tensor<i1>
        } do {
          %j2 = stablehlo.add %j, %one : tensor<i32>
          %m = stablehlo.multiply %acc, %w : tensor<4xf32>
          %a2 = stablehlo.add %m, %u : tensor<4xf32>
          stablehlo.return %j2, %a2 : tensor<i32>, tensor<4xf32>
        }
      %i2 = stablehlo.add %i, %one : tensor<i32>
      stablehlo.return %i2, %q#1 : tensor<i32>, tensor<4xf32>
    }
  return %r#1 : tensor<4xf32>
}
"""

CALL = """
func.func @main(%a: tensor<8xf32>) -> tensor<8xf32> {
  %0 = func.call @f(%a) : (tensor<8xf32>) -> tensor<8xf32>
  %1 = func.call @f(%0) : (tensor<8xf32>) -> tensor<8xf32>
  return %1 : tensor<8xf32>
}
func.func private @f(%x: tensor<8xf32>) -> tensor<8xf32> {
  %0 = stablehlo.exponential %x : tensor<8xf32>
  %1 = stablehlo.add %0, %x : tensor<8xf32>
  %2 = stablehlo.multiply %1, %1 : tensor<8xf32>
  return %2 : tensor<8xf32>
}
"""

IF_CAPTURE = """
func.func @main(%p: tensor<i1>, %a: tensor<16xf32>) -> tensor<16xf32> {
  %big = stablehlo.add %a, %a : tensor<16xf32>
  %r = "stablehlo.if"(%p) ({
    %0 = stablehlo.multiply %big, %big : tensor<16xf32>
    stablehlo.return %0 : tensor<16xf32>
  }, {
    stablehlo.return %a : tensor<16xf32>
  }) : (tensor<i1>) -> tensor<16xf32>
  return %r : tensor<16xf32>
}
"""

TUPLE = """
func.func @main(%a: tensor<2xf32>, %b: tensor<3xf32>) -> tensor<3xf32> {
  %0 = stablehlo.negate %a : tensor<2xf32>
  %1 = stablehlo.negate %b : tensor<3xf32>
  %t = stablehlo.tuple %0, %1 : tuple<tensor<2xf32>, tensor<3xf32>>
  %2 = stablehlo.abs %b : tensor<3xf32>
  %e = stablehlo.get_tuple_element %t[1] : (tuple<tensor<2xf32>, tensor<3xf32>>) -> tensor<3xf32>
  %3 = stablehlo.add %e, %2 : tensor<3xf32>
  return %3 : tensor<3xf32>
}
"""

REDUCE = """
func.func @main(%a: tensor<4x8xf32>) -> tensor<4xf32> {
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %r = stablehlo.reduce(%a init: %z) across dimensions = [1] : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
    reducer(%x: tensor<f32>, %y: tensor<f32>) {
      %s = stablehlo.add %x, %y : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }
  return %r : tensor<4xf32>
}
"""

RETURNED_TWICE = """
func.func @main(%a: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %0 = stablehlo.negate %a : tensor<4xf32>
  return %0, %0, %a : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}
"""

# Each device's body sees its 4x4 tile of the 8x4 argument (mesh x=2 over dimension 0).
MANUAL = """
module @m attributes {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["x"=2]>
  func.func public @main(%arg0: tensor<8x4xf32>) -> tensor<8x4xf32> {
    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x"}, {}]>] out_shardings=[<@mesh, [{"x"}, {}]>] manual_axes={"x"} (%arg1: tensor<4x4xf32>) {
      %1 = stablehlo.multiply %arg1, %arg1 : tensor<4x4xf32>
      sdy.return %1 : tensor<4x4xf32>
    } : (tensor<8x4xf32>) -> tensor<8x4xf32>
    return %0 : tensor<8x4xf32>
  }
}
"""

# 4 GiB x 2^10: types only, nothing is allocated.
HUGE = """
func.func @main(%a: tensor<1048576x1048576xf32>) -> tensor<1048576x1048576xf32> {
  %0 = stablehlo.negate %a : tensor<1048576x1048576xf32>
  return %0 : tensor<1048576x1048576xf32>
}
"""

# 3 buffers of 8 GiB at the add: 24 GiB, beyond a tpu-v5e's 16 GiB of HBM.
OVER_HBM = """
func.func @main(%a: tensor<65536x32768xf32>, %b: tensor<65536x32768xf32>) -> tensor<65536x32768xf32> {
  %0 = stablehlo.add %a, %b : tensor<65536x32768xf32>
  return %0 : tensor<65536x32768xf32>
}
"""


def profile(text: str, target=None, **grid):
    return hlodbg.load(text).memory(target, **grid)


def timeline(text: str, target=None) -> list[int]:
    return [int(b) for b in profile(text, target).devices[0].entry.timeline]


def by_name(function: FunctionLiveness, name: str) -> Value:
    (value,) = [v for v in function.values if v.name == name]
    return value


def names(values) -> set[str]:
    return {v.name for v in values}


# -- liveness and live bytes, worked out by hand (f32: 4 bytes an element) ----------------------------


def test_program_memory_keeps_the_profile_of_a_target():
    program = hlodbg.load(CHAIN)
    assert program.memory() is program.memory("cpu") is program.memory("CPU")
    assert program.memory(partitions=2) is not program.memory()
    assert program.memory(PaddingBackend()) is not program.memory(PaddingBackend())


def test_chain_frees_each_value_after_its_last_use():
    # positions: add, multiply, subtract, return; %a and %b (16 B each) stay for the whole program
    assert timeline(CHAIN) == [48, 64, 64, 48]
    live = liveness_of(hlodbg.load(CHAIN).module).function("main")
    ops = live.ops
    assert [names(live.last_uses(op)) for op in ops] == [{"%b"}, {"%0"}, {"%1", "%a"}, {"%2"}]
    device = profile(CHAIN).devices[0]
    assert device.peak_bytes == 64 and device.peak_site().op.name == "stablehlo.multiply"
    assert names(b.value for b in device.peak_site().buffers()) == {"%a", "%b", "%0", "%1"}
    assert (device.entry.argument_bytes, device.entry.output_bytes) == (32, 16)


def test_a_donated_argument_dies_at_its_last_use():
    donated = CHAIN.replace("%b: tensor<4xf32>)", "%b: tensor<4xf32> {tf.aliasing_output = 0 : i32})")
    assert timeline(donated) == [48, 48, 48, 32]
    assert timeline(donated.replace("tf.aliasing_output = 0 : i32", "jax.buffer_donor = true")) == [48, 48, 48, 32]


def test_diamond_keeps_the_shared_value_until_its_second_user_and_frees_dead_results_at_once():
    # %0 feeds %1 and %2; %dead is written and dropped at its own op
    assert timeline(DIAMOND) == [32, 48, 64, 64, 48, 32]
    live = liveness_of(hlodbg.load(DIAMOND).module).function("main")
    assert live.live_range(by_name(live, "%0")) == (0, 2)
    assert live.live_range(by_name(live, "%dead")) == (4, 4)
    assert names(live.last_uses(live.ops[4])) == {"%dead"}


def test_while_carries_its_state_in_place_and_keeps_captured_values_until_it_completes():
    # positions (an op's regions before the op): 0 %c0, 1 %n, 2 %t, 3 %p, 4 cond return, 5 %one,
    # 6 %i2, 7 %v2, 8 body return, 9 while, 10 %s, 11 return
    assert timeline(WHILE) == [36, 40, 56, 57, 57, 60, 64, 76, 76, 56, 64, 48]
    module = hlodbg.load(WHILE).module
    live = liveness_of(module).function("main")
    while_op = live.ops[9]
    assert while_op.name == "stablehlo.while" and live.first[9] == 3
    # captured values (%n by the condition, %w by the body) and the carried inits end at the while
    assert names(live.last_uses(while_op)) == {"%n", "%w", "%c0", "%t", "%r#0"}
    assert live.live_range(by_name(live, "%n")) == (1, 9)
    # a loop-carried body argument lives within one iteration of the body only
    body_v = while_op.regions[1].blocks[0].arguments[1]
    assert live.live_range(body_v) == (5, 7)
    # the carried %t hands its buffer to the while's result: not counted twice at the while
    memory = profile(WHILE).devices[0].entry
    assert int(memory.end[live.index[by_name(live, "%t")]]) == 8
    assert names(b.value for b in memory.buffers_at(9)) == {"%x", "%w", "%n", "%r#0", "%r#1"}
    assert memory.peak_position == 7


def test_nested_loops_keep_captured_values_and_copy_an_init_their_body_reads():
    # 0 %c0, 1 %n, 2-3 outer cond, 4 %one, 5 %u, 6-7 inner cond, 8 %j2, 9 %m, 10 %a2, 11 inner
    # return, 12 inner while, 13 %i2, 14 outer return, 15 outer while, 16 return
    assert timeline(NESTED) == [36, 40, 41, 41, 44, 60, 61, 61, 64, 80, 96, 80, 80, 64, 60, 60, 48]
    live = liveness_of(hlodbg.load(NESTED).module).function("main")
    assert live.live_range(by_name(live, "%one")) == (4, 13)  # read by the inner body: until the inner while's
    # end, then by %i2
    assert live.live_range(by_name(live, "%w")) == (0, 15)
    memory = profile(NESTED).devices[0].entry
    assert int(memory.end[live.index[by_name(live, "%c0")]]) == 15  # still live beside the loop's state


def test_a_call_adds_the_callees_own_peak_at_its_call():
    # @f: its argument is the caller's operand (0 B); exp, add, multiply give 32, 64, 64, then 32 returned
    device = profile(CALL).devices[0]
    callee = device.function("f")
    assert [int(b) for b in callee.timeline] == [32, 64, 64, 32] and callee.peak_bytes == 64
    # the caller: its live values, plus the callee's peak beyond the 32 B it hands back
    assert [int(b) for b in device.entry.timeline] == [32 + 32 + 32, 32 + 32 + 32 + 32, 64]
    site = device.peak_site()
    assert device.peak_bytes == 128 and site.function.sym_name == "f" and site.op.name == "stablehlo.add"
    buffers = site.buffers()
    assert sorted((b.function, b.name) for b in buffers) == [("f", "%0"), ("f", "%1"), ("main", "%0"), ("main", "%a")]
    assert sum(b.physical_bytes for b in buffers) == device.peak_bytes == site.bytes
    # any moment of the run, as the debugger's frames give it: the second call, then an op inside @f
    first_call, second_call = device.entry.liveness.ops[:2]
    exp = callee.liveness.ops[0]
    inside = device.site([second_call, exp])
    assert inside.bytes == 32 + 32 + 32 and names(b.value for b in inside.buffers()) == {"%a", "%0"}
    assert device.site([first_call]).bytes == 96
    with pytest.raises(ValueError, match="calls no function"):
        device.site([device.entry.liveness.ops[2], exp])


def test_a_value_captured_by_a_branch_lives_until_the_if_completes():
    # %p is an i1 (1 byte); positions: %big, %0 (true branch), its return, the false branch's return, if, return
    assert timeline(IF_CAPTURE) == [129, 193, 193, 129, 193, 129]
    live = liveness_of(hlodbg.load(IF_CAPTURE).module).function("main")
    assert live.live_range(by_name(live, "%big")) == (0, 4)


def test_a_tuple_takes_no_bytes_and_keeps_its_elements_alive():
    # %0 (8 B) and %1 (12 B) are only read by the tuple, but live until the tuple's last use (the
    # get); %e is %1's buffer read back (no copy, as in XLA), so %1 lives on until the add reads %e
    assert timeline(TUPLE) == [28, 40, 40, 52, 52, 56, 32]
    live = liveness_of(hlodbg.load(TUPLE).module).function("main")
    assert names(live.last_uses(live.ops[4])) == {"%t", "%0"}
    assert "%1" in names(live.last_uses(live.ops[5]))


def test_a_combiner_body_holds_no_buffers():
    # the reducer's scalars are registers: 128 B operand, 4 B init, 16 B result
    assert timeline(REDUCE) == [132, 132, 132, 148, 144]


def test_a_value_returned_twice_is_one_buffer_until_the_return():
    assert timeline(RETURNED_TWICE) == [32, 32]
    live = liveness_of(hlodbg.load(RETURNED_TWICE).module).function("main")
    assert names(live.last_uses(live.ops[-1])) == {"%0", "%a"}


def _lifted_index(op, block):
    while op.parent is not block:
        op = op.parent_op
    return block.operations.index(op)


def _check_never_frees_a_value_still_needed(module) -> int:
    """Every value of a block is dropped exactly once, at or after every use of it (uses inside
    regions count at their owner), and never inside a region that is not its own."""
    checked = 0
    for function in module.functions.values():
        if function.is_declaration:
            continue
        live = liveness_of(module).function(function)
        dropped: dict[Value, int] = {}
        for op in live.ops:
            block = op.parent
            for value in live.last_uses(op):
                assert value not in dropped, f"{value} dropped twice"
                owner_block = value.owner if value.is_block_argument else value.owner.parent
                assert owner_block is block, f"{value} dropped outside its block at {op}"
                dropped[value] = block.operations.index(op)
        for value in live.values:
            block = value.owner if value.is_block_argument else value.owner.parent
            uses = [_lifted_index(user, block) for user, _ in value.uses]
            if not uses:
                assert value not in dropped or value.defining_op is not None
                continue
            assert dropped[value] >= max(uses), f"{value} dropped at {dropped[value]} but used at {max(uses)}"
            checked += 1
    return checked


@pytest.mark.parametrize("text", [CHAIN, DIAMOND, WHILE, NESTED, CALL, IF_CAPTURE, TUPLE, REDUCE, RETURNED_TWICE, MANUAL])
def test_last_uses_never_free_a_value_still_needed(text):
    assert _check_never_frees_a_value_still_needed(hlodbg.load(text).module) > 0


def test_last_uses_on_the_shared_programs():
    require_shared()
    for path in sorted(PROGRAMS.glob("*.mlir")):
        assert _check_never_frees_a_value_still_needed(hlodbg.load(path).module) > 0, path


class FreeingListener(Listener):
    """Counts the values an observed run lets go right after `op` (their last use; the loop drops
    them once its listener has heard of the op): a value let go too early makes the next op that
    reads it fail."""

    def __init__(self, module):
        self.liveness = liveness_of(module)
        self.dropped = 0

    def after_op(self, event, frame, op, operands, results):
        self.dropped += sum(value in frame.env for value in self.liveness.function(frame.function).last_uses(op))


def _run_freeing(module, args) -> tuple[list, list, int]:
    plain = Interpreter(module).run("main", args)
    listener = FreeingListener(module)
    freeing = Interpreter(module, listeners=[listener]).run("main", args)
    return plain, freeing, listener.dropped


@pytest.mark.parametrize("text, args", [
    (WHILE, [np.arange(4, dtype=np.float32), np.full(4, 2, np.float32)]),
    (NESTED, [np.arange(4, dtype=np.float32), np.full(4, 2, np.float32)]),
    (CALL, [np.linspace(0, 1, 8, dtype=np.float32)]),
    (IF_CAPTURE, [np.array(True), np.arange(16, dtype=np.float32)]),
    (TUPLE, [np.ones(2, np.float32), np.arange(3, dtype=np.float32)]),
])
def test_a_run_that_drops_values_at_their_last_use_computes_the_same(text, args):
    plain, freeing, dropped = _run_freeing(hlodbg.load(text).module, args)
    assert dropped > 0
    for a, b in zip(plain, freeing, strict=True):
        np.testing.assert_array_equal(a, b)


def test_the_shared_programs_run_the_same_dropping_values_at_their_last_use():
    require_shared()
    for path in sorted(PROGRAMS.glob("*.mlir")):
        module = hlodbg.load(path).module
        if module.num_partitions * module.num_replicas > 1:
            continue
        inputs = np.load(path.with_suffix("").with_suffix(".inputs.npz"))
        args = [inputs[f"arg{i}"] for i in range(len(inputs.files))]
        plain, freeing, dropped = _run_freeing(module, args)
        assert dropped > 0, path
        for a, b in zip(plain, freeing, strict=True):
            np.testing.assert_array_equal(a, b)


# -- a backend that pads: physical bytes and layouts come from the backend ------------------------


class PaddingBackend(Backend):
    """Every tensor takes whole 512-byte tiles, in a layout named after its rank; `hbm` bytes per device."""

    name = "padded"

    def __init__(self, hbm: int = 1 << 20):
        self.generation = SimpleNamespace(hbm_bytes=hbm, hbm_label=f"{hbm} B HBM of padded", name="padded")
        self.prepared = None

    def for_device(self, process):
        return PaddingBackend(self.generation.hbm_bytes)

    def prepare(self, module):
        self.prepared = module

    def buffer_bytes(self, ir_value):
        logical, _ = super().buffer_bytes(ir_value)
        return logical, -(-logical // 512) * 512

    def layout_for(self, ir_value):
        assert self.prepared is not None, "layout_for before prepare"
        rank = len(ir_value.type.shape)
        return SimpleNamespace(layout="{" + ",".join(map(str, range(rank - 1, -1, -1))) + ":T(128)}",
                               source="given" if ir_value.is_block_argument else "default")


def test_physical_bytes_and_layouts_come_from_the_backend():
    device = profile(CHAIN, PaddingBackend()).devices[0]
    assert [int(b) for b in device.entry.timeline] == [3 * 512, 4 * 512, 4 * 512, 3 * 512]
    assert [int(b) for b in device.entry.logical_timeline] == [48, 64, 64, 48]
    buffers = device.peak_site().buffers()
    a = next(b for b in buffers if b.name == "%a")
    assert (a.logical_bytes, a.physical_bytes, a.waste) == (16, 512, 32.0)
    assert (a.layout, a.layout_source) == ("{0:T(128)}", "given")
    assert next(b for b in buffers if b.name == "%1").layout_source == "default"


def test_over_the_devices_memory_names_the_op_and_by_how_much():
    from hlodbg.cli_memory import memory_text, verdict

    analysis = profile(CHAIN, PaddingBackend(hbm=1536))
    device = analysis.devices[0]
    assert device.fits is False and analysis.fits is False
    assert verdict(device) == ("does not fit in 1536 B HBM of padded: needs 2.0 KiB: over by 512 B at "
                               "%1 (<string>:4)")
    fitting = profile(CHAIN, PaddingBackend(hbm=4096)).devices[0]
    assert verdict(fitting) == "fits in 4096 B HBM of padded (peak 2.0 KiB, 50.0%)"
    text = memory_text("chain", analysis)
    assert "peak 2.0 KiB (logical 64 B, padding 97%) at %1 = stablehlo.multiply (<string>:4)" in text
    assert "%a     tensor<4xf32>  {0:T(128)} (given)       16 B     512 B  32.0x" in text


def test_every_device_gets_its_profile_and_identical_ones_print_once():
    from hlodbg.cli_memory import memory_text

    analysis = profile(CHAIN, PaddingBackend(), replicas=2, partitions=2)
    assert [d.device for d in analysis.devices] == [0, 1, 2, 3]
    assert len({id(d.backend) for d in analysis.devices}) == 4  # one backend instance per device
    assert [len(g) for g in analysis.groups()] == [4]
    assert analysis.device(ProcessId(1, 0)) is analysis.device(2) is analysis.devices[2]
    with pytest.raises(ValueError, match="no device 4"):
        analysis.device(4)
    assert "devices 0-3: peak 2.0 KiB" in memory_text("chain", analysis)


def test_inside_a_manual_computation_each_device_holds_its_tile():
    analysis = profile(MANUAL)
    assert analysis.global_program and len(analysis.devices) == 2
    memory = analysis.devices[0].entry
    live = memory.liveness
    multiply = next(i for i, op in enumerate(live.ops) if op.name == "stablehlo.multiply")
    sizes = {b.name: b.physical_bytes for b in memory.buffers_at(multiply)}
    # the whole 8x4 argument (as hlodbg runs it), the 4x4 tile the body takes, the 4x4 product
    assert sizes == {"%arg0": 128, "%arg1": 64, "%1": 64}


# -- hlodbg memory -------------------------------------------------------------------------------


def test_cli_text(tmp_path, capsys):
    path = tmp_path / "call.mlir"
    path.write_text(CALL)
    assert main(["memory", str(path), "--top", "2"]) == 0
    out = capsys.readouterr().out
    assert "call.mlir @main on cpu, 1 device (1x1)" in out
    assert "device 0 (replica 0, partition 0): peak 128 B (logical 128 B) at %1 = stablehlo.add in @f (call.mlir:9)" in out
    assert "largest 2 buffers at the peak:" in out
    assert "fits in " in out and "memory of this machine (peak 128 B, 0.0%)" in out


def test_cli_json(tmp_path, capsys):
    path = tmp_path / "while.mlir"
    path.write_text(WHILE)
    assert main(["memory", str(path), "--json", "--top", "0", "--partitions", "2"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["grid"] == [1, 2] and report["target"] == "cpu" and report["totals"]["devices"] == 2
    device = report["devices"][1]
    assert (device["device"], device["replica"], device["partition"]) == (1, 0, 1)
    assert device["peak_bytes"] == 76 and device["peak_op"] == "%v2" and device["peak_location"] == "while.mlir:13"
    assert device["fits"] is True and device["argument_bytes"] == 32 and device["output_bytes"] == 16
    assert {b["name"] for b in device["buffers"]} == {"%x", "%w", "%n", "%c0", "%t", "%i2", "%v2"}
    assert set(device["buffers"][0]) == {"name", "function", "type", "layout", "layout_source", "memory_space",
                                         "logical_bytes", "physical_bytes"}
    assert report["totals"] == {"devices": 2, "peak_bytes": 76, "sum_peak_bytes": 152, "fits": True}


def test_cli_over_the_machines_memory_exits_4(tmp_path, capsys):
    path = tmp_path / "huge.mlir"
    path.write_text(HUGE)
    assert main(["memory", str(path)]) == 4
    out = capsys.readouterr().out
    assert "needs 8.0 TiB: over by " in out and " at %0 (huge.mlir:3)" in out


def test_cli_bad_input_exits_2(tmp_path, capsys):
    path = tmp_path / "chain.mlir"
    path.write_text(CHAIN)
    assert main(["memory", str(path), "--entry", "nope"]) == 2
    assert "no function @nope" in capsys.readouterr().err
    assert main(["memory", str(tmp_path / "missing.mlir")]) == 2
    assert "no such file" in capsys.readouterr().err
    broken = tmp_path / "broken.mlir"
    broken.write_text(CHAIN.replace("%1, %a", "%1, %nope"))
    assert main(["memory", str(broken)]) == 2
    assert "broken.mlir:5:31: error: use of undefined SSA value %nope" in capsys.readouterr().err
    assert main(["memory", str(path), "--target", "gpu"]) == 2
    assert "unknown target 'gpu'" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_:
        main(["memory", str(path), "--top", "-1"])
    assert exit_.value.code == 2


# -- the TPU (needs the layout assignment) and XLA's own figures ----------------------------------


def _tpu_layouts():
    pytest.importorskip("hlodbg.engine.machine.layout")
    pytest.importorskip("hlodbg.engine.machine.tpu.assignment")


def test_over_16_gib_of_hbm_on_tpu_v5e(tmp_path, capsys):
    _tpu_layouts()
    path = tmp_path / "over.mlir"
    path.write_text(OVER_HBM)
    assert main(["memory", str(path), "--target", "tpu-v5e"]) == 4
    out = capsys.readouterr().out
    assert "does not fit in 16 GiB HBM of tpu-v5e: needs 24.0 GiB: over by 8.0 GiB at %0 (over.mlir:3)" in out


def test_gpt_tiny_on_tpu_v5e_prints_layouts_and_a_peak(capsys):
    require_shared()
    _tpu_layouts()
    assert main(["memory", str(PROGRAMS / "gpt_tiny.mlir"), "--target", "tpu-v5e", "--json"]) == 0
    device = json.loads(capsys.readouterr().out)["devices"][0]
    assert device["peak_bytes"] > 0 and device["fits"] is True and device["hbm_bytes"] == 16 << 30
    assert all(b["layout"] and b["layout_source"] in ("given", "option", "default") for b in device["buffers"])
    assert any(b["physical_bytes"] > b["logical_bytes"] for b in device["buffers"])


def test_arguments_and_outputs_match_xlas_memory_analysis_and_the_peak_bounds_xlas():
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp

    def f(x, w, b):
        h = jnp.tanh(x @ w + b)
        return jnp.sum(h * h, axis=0)

    args = (np.ones((64, 32), np.float32), np.ones((32, 48), np.float32), np.ones((48,), np.float32))
    lowered = jax.jit(f).lower(*args)
    stats = lowered.compile().memory_analysis()
    device = hlodbg.load(lowered.as_text()).memory().devices[0]
    assert device.entry.argument_bytes == stats.argument_size_in_bytes
    assert device.entry.output_bytes == stats.output_size_in_bytes
    # XLA fuses the element-wise work; op by op, every intermediate has a buffer: never below XLA's
    xla_peak = stats.argument_size_in_bytes + stats.output_size_in_bytes + stats.temp_size_in_bytes
    assert device.peak_bytes >= xla_peak


MESH_OF_TWO = """
module @m attributes {mhlo.num_partitions = 2 : i32} {
  sdy.mesh @mesh = <["x"=2]>
  func.func @main(%big: tensor<8x4xf32>) -> tensor<8x4xf32> {
    %0 = sdy.manual_computation(%big) in_shardings=[<@mesh, [{"x"}, {}]>] out_shardings=[<@mesh, [{"x"}, {}]>] manual_axes={"x"} (%shard: tensor<4x4xf32>) {
      sdy.return %shard : tensor<4x4xf32>
    } : (tensor<8x4xf32>) -> tensor<8x4xf32>
    return %0 : tensor<8x4xf32>
  }
}
"""


def test_a_grid_that_is_not_the_manual_computations_mesh_is_refused_as_a_run_refuses_it(tmp_path, capsys):
    # The body's types are the tiles of a 2-device mesh: on 3 devices they would be wrong figures.
    prog = tmp_path / "mesh.mlir"
    prog.write_text(MESH_OF_TWO)
    assert main(["memory", str(prog), "--target", "tpu-v5e", "--partitions", "3"]) == 2
    err = capsys.readouterr().err
    assert "mesh @mesh spans 2 devices but this grid has 3" in err and ":5:5:" in err
    assert main(["memory", str(prog), "--target", "tpu-v5e"]) == 0


def test_json_says_how_many_dynamic_values_are_not_counted(tmp_path, capsys):
    # The text notes them; the JSON carries the same, so a script knows the peak leaves them out.
    prog = tmp_path / "dyn.mlir"
    prog.write_text("""
func.func @main(%a: tensor<?x4xf32>, %b: tensor<2x4xf32>) -> tensor<?x4xf32> {
  %0 = stablehlo.add %a, %a : tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}""")
    assert main(["memory", str(prog), "--target", "tpu-v5e"]) == 0
    assert "2 value(s) of dynamic shape are not counted" in capsys.readouterr().out
    assert main(["memory", str(prog), "--target", "tpu-v5e", "--json"]) == 0
    device = json.loads(capsys.readouterr().out)["devices"][0]
    assert device["uncounted_dynamic_values"] == 2 and device["peak_bytes"] == 1024  # %b: f32[2,4]{1,0:T(2,128)}
