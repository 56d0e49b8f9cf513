"""The layouts an XLA HLO module gives its values (`xla_shape` on instructions and parameters, the
module's entry_computation_layout) are the TPU backend's "given" layouts: sizes are XLA's padded
sizes (ShapeUtil::ArraySize, checked by hand below), S(1) buffers are VMEM and not counted against
HBM, an unmodelled layout piece is an error at its instruction, and the CPU shows but ignores them.

The IR here is what the HLO lowering makes (the contract: every op carries `xla_shape`, every
entry argument an `xla_shape` argument attribute, the module `hlo.header`), written in MLIR text."""
from __future__ import annotations

import json

import numpy as np
import pytest

import hlodbg
from hlodbg.cli import main
from hlodbg.engine.ir.errors import HlodbgError
from hlodbg.engine.machine.targets import backend_for
from hlodbg.engine.machine.tpu.assignment import LayoutAssignment
from hlodbg.engine.machine.tpu.generations import GENERATIONS

V5E = GENERATIONS["tpu-v5e"]

# Every instruction and parameter with a TPU layout, as in a TPU after-optimizations dump.
TILED = """
func.func @main(%a: tensor<3x5xf32> {xla_shape = "f32[3,5]{1,0:T(8,128)}"},
                %b: tensor<3x5xbf16> {xla_shape = "bf16[3,5]{1,0:T(8,128)(2,1)}"},
                %c: tensor<20x300xi8> {xla_shape = "s8[20,300]{1,0:T(8,128)(4,1)}"}) -> tensor<3x5xf32> {
  %0 = stablehlo.convert %b {xla_shape = "f32[3,5]{1,0:T(8,128)S(1)}"} : (tensor<3x5xbf16>) -> tensor<3x5xf32>
  %1 = stablehlo.add %a, %0 {xla_shape = "f32[3,5]{0,1:T(8,128)}"} : tensor<3x5xf32>
  %2 = stablehlo.compare GT, %c, %c {xla_shape = "pred[20,300]{1,0:T(8,128)(4,1)}"} : (tensor<20x300xi8>, tensor<20x300xi8>) -> tensor<20x300xi1>
  %3 = stablehlo.constant {xla_shape = "s4[8,256]{1,0:T(8,128)(8,1)E(4)}"} dense<1> : tensor<8x256xi4>
  %4 = stablehlo.constant {xla_shape = "f32[]{:T(128)}"} dense<1.0> : tensor<f32>
  %flag = stablehlo.constant {xla_shape = "u32[]{:S(2)}"} dense<0> : tensor<ui32>
  %5 = stablehlo.multiply %1, %1 : tensor<3x5xf32>
  return %5 : tensor<3x5xf32>
}
"""


def _values(module) -> dict:
    values = {v.name: v for v in module.entry.arguments}
    for op in module.entry.ops:
        values.update((r.name, r) for r in op.results)
    return values


def test_every_instruction_and_parameter_gets_the_layout_the_module_gives():
    module = hlodbg.load(TILED).module
    layouts = LayoutAssignment(module, V5E)
    values = _values(module)
    expected = {
        "%a": ("{1,0:T(8,128)}", 4096),  # (3,5) padded to one 8x128 f32 tile
        "%b": ("{1,0:T(8,128)(2,1)}", 2048),  # one 8x128 tile of 2-byte elements
        "%c": ("{1,0:T(8,128)(4,1)}", 24 * 384),  # (20,300) -> (24,384) bytes
        "%0": ("{1,0:T(8,128)S(1)}", 4096),
        "%1": ("{0,1:T(8,128)}", 4096),  # physical (5,3): one tile too
        "%2": ("{1,0:T(8,128)(4,1)}", 24 * 384),  # pred: one byte each
        "%3": ("{1,0:T(8,128)(8,1)E(4)}", 8 * 256 // 2),  # two s4 per byte
        "%4": ("{:T(128)}", 512),  # a scalar takes a whole 128-element tile
        "%flag": ("{:S(2)}", 4),  # but copy-start's sync flags in SMEM are untiled
    }
    backend = backend_for("tpu-v5e")
    backend.prepare(module)
    for name, (layout, size) in expected.items():
        assigned = layouts.layout_for(values[name])
        assert (str(assigned.layout), assigned.source, assigned.origin) == (layout, "given", "given by the HLO module")
        assert backend.buffer_bytes(values[name])[1] == size, name
    assert layouts.layout_for(values["%5"]).source == "default"  # no xla_shape: the default rule's
    assert backend.memory_space(values["%0"]) == 1 and backend.memory_space(values["%1"]) == 0


def test_a_run_on_the_given_layouts_gives_the_cpus_results():
    program = hlodbg.load(TILED)
    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, 5)).astype(np.float32)
    b = rng.standard_normal((3, 5)).astype(program.module.entry.arguments[1].type.element.numpy_dtype)
    c = rng.integers(-100, 100, (20, 300)).astype(np.int8)
    (tpu,) = program.run(a, b, c, target="tpu-v5e")
    (cpu,) = program.run(a, b, c)
    np.testing.assert_array_equal(tpu, cpu)


# The module of ../shared/docs/tpu.md §5.1 (a TPU v5e dump): XLA's memory_analysis() reported
# argument_size_in_bytes=6656 = 4096 + 2048 + 512 for these parameter layouts.
ENTRY_LAYOUT = """
module @jit_f attributes {hlo.header = {entry_computation_layout = "{(f32[16,8]{0,1:T(8,128)}, f32[8,4]{0,1:T(4,128)}, f32[4]{0:T(128)})->f32[16,4]{0,1:T(4,128)}}", is_scheduled = "true"}} {
  func.func @main(%x: tensor<16x8xf32>, %w: tensor<8x4xf32>, %bias: tensor<4xf32>) -> tensor<16x4xf32> {
    %0 = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<16x8xf32>, tensor<8x4xf32>) -> tensor<16x4xf32>
    %1 = stablehlo.broadcast_in_dim %bias, dims = [1] : (tensor<4xf32>) -> tensor<16x4xf32>
    %2 = stablehlo.add %0, %1 : tensor<16x4xf32>
    return %2 : tensor<16x4xf32>
  }
}
"""


@pytest.mark.parametrize("comment", ["", "/*index=2*/"])
def test_entry_computation_layout_gives_the_parameters_and_the_result_their_layouts(comment):
    program = hlodbg.load(ENTRY_LAYOUT.replace(" f32[4]{0:T(128)})", f" {comment}f32[4]{{0:T(128)}})"))
    analysis = program.memory("tpu-v5e")
    device = analysis.devices[0]
    assert device.entry.argument_bytes == 6656  # what XLA's memory_analysis() reported on a v5e
    layouts = LayoutAssignment(program.module, V5E)
    result = program.module.entry.body.terminator.operands[0]
    assert str(layouts.layout_for(result).layout) == "{0,1:T(4,128)}"
    assert layouts.layout_for(result).origin == "given by the HLO module"
    assert device.entry.output_bytes == 4 * 128 * 4  # (4,16) physical -> one 4x128 tile


def test_a_parameter_layout_the_entry_layout_contradicts_keeps_the_parameters_own():
    text = ENTRY_LAYOUT.replace("%x: tensor<16x8xf32>", '%x: tensor<16x8xf32> {xla_shape = "f32[16,8]{1,0:T(8,128)}"}')
    module = hlodbg.load(text).module
    layouts = LayoutAssignment(module, V5E)
    assert str(layouts.layout_for(module.entry.arguments[0]).layout) == "{1,0:T(8,128)}"
    assert str(layouts.layout_for(module.entry.arguments[1]).layout) == "{0,1:T(4,128)}"


def test_an_entry_layout_with_the_wrong_number_of_parameters_is_a_located_error():
    text = ENTRY_LAYOUT.replace(", f32[4]{0:T(128)})", ")")
    with pytest.raises(HlodbgError, match="entry_computation_layout gives 2 parameter shape\\(s\\), @main has 3") as info:
        LayoutAssignment(hlodbg.load(text).module, V5E)
    assert info.value.line == 3


@pytest.mark.parametrize("layout, named", [
    ("{1,0:T(8,128)SC(0:1,2)}", "split config SC"),
    ("{1,0:T(8,128)M(8)}", "dynamic-shape metadata M"),
    ("{1,0:D(D,C)}", "dim-level types D"),
])
def test_a_layout_piece_hlodbg_does_not_model_is_an_error_at_its_instruction(layout, named):
    text = TILED.replace('"f32[3,5]{0,1:T(8,128)}"', f'"f32[3,5]{layout}"')
    module = hlodbg.load(text).module
    with pytest.raises(HlodbgError) as info:
        LayoutAssignment(module, V5E)
    assert named in info.value.message and "%1 (stablehlo.add)" in info.value.message
    assert info.value.line == 6  # the instruction's line


def test_a_shape_that_does_not_describe_its_value_is_an_error_at_its_instruction():
    text = TILED.replace('"f32[3,5]{0,1:T(8,128)}"', '"f32[5,3]{0,1:T(8,128)}"')
    with pytest.raises(HlodbgError, match="shape f32\\[5,3\\]\\{0,1:T\\(8,128\\)\\} does not describe %1") as info:
        LayoutAssignment(hlodbg.load(text).module, V5E)
    assert info.value.line == 6


def test_the_layout_option_still_wins_over_the_modules():
    module = hlodbg.load(TILED).module
    layouts = LayoutAssignment(module, V5E, {"arg0": "{0,1:T(8,128)}"})
    assigned = layouts.layout_for(module.entry.arguments[0])
    assert (str(assigned.layout), assigned.source) == ("{0,1:T(8,128)}", "option")


# At %1 the S(1) result %0 (VMEM) is live beside %a and %1: 8 KiB HBM plus 4 KiB of VMEM.
VMEM = """
func.func @main(%a: tensor<3x5xf32> {xla_shape = "f32[3,5]{1,0:T(8,128)}"}) -> tensor<3x5xf32> {
  %0 = stablehlo.negate %a {xla_shape = "f32[3,5]{1,0:T(8,128)S(1)}"} : tensor<3x5xf32>
  %1 = stablehlo.add %a, %0 {xla_shape = "f32[3,5]{1,0:T(8,128)}"} : tensor<3x5xf32>
  return %1 : tensor<3x5xf32>
}
"""


def test_a_buffer_in_vmem_does_not_count_against_hbm(tmp_path, capsys):
    path = tmp_path / "vmem.mlir"
    path.write_text(VMEM)
    assert main(["memory", str(path), "--target", "tpu-v5e", "--top", "0"]) == 0
    text = capsys.readouterr().out
    assert "peak 8.0 KiB (logical 120 B, padding 99%) at %1 = stablehlo.add" in text
    assert "also live at the peak, not counted against 16 GiB HBM of tpu-v5e: VMEM S(1) 4.0 KiB (of 128.0 MiB)" in text
    assert "{1,0:T(8,128)S(1)} (given by the HLO module, in VMEM S(1))" in text
    assert main(["memory", str(path), "--target", "tpu-v5e", "--json"]) == 0
    device = json.loads(capsys.readouterr().out)["devices"][0]
    assert device["peak_bytes"] == 8192 and device["other_memory_bytes"] == {"1": 4096}
    assert {b["name"]: b["memory_space"] for b in device["buffers"]} == {"%a": 0, "%0": 1, "%1": 0}


def test_the_cpu_shows_the_modules_layouts_but_counts_logical_bytes(tmp_path, capsys):
    path = tmp_path / "vmem.mlir"
    path.write_text(VMEM)
    assert main(["memory", str(path), "--top", "0"]) == 0
    text = capsys.readouterr().out
    assert "{1,0:T(8,128)S(1)} (the module's, unused on cpu)" in text
    assert "peak 180 B (logical 180 B) at %1" in text
    assert "note: the layouts shown are the module's; cpu keeps every array row-major and unpadded" in text


def test_an_op_with_one_result_per_array_of_a_tuple_shape_gives_each_its_own():
    from hlodbg.engine.machine.xla_shapes import given_layout

    module = hlodbg.load("""
func.func @main(%a: tensor<8xf32>, %b: tensor<8xi32>) -> tensor<8xf32> {
  %0:3 = "stablehlo.optimization_barrier"(%a, %b, %a) {xla_shape = "(f32[8]{0:T(256)}, (s32[8]{0:T(512)}, f32[8]{0}))"}
    : (tensor<8xf32>, tensor<8xi32>, tensor<8xf32>) -> (tensor<8xf32>, tensor<8xi32>, tensor<8xf32>)
  return %0#0 : tensor<8xf32>
}
""").module
    barrier = module.entry.body.operations[0]
    assert [str(given_layout(r)) for r in barrier.results] == ["{0:T(256)}", "{0:T(512)}", "{0}"]


def test_a_layout_without_tiles_from_the_module_is_tiled_by_default_and_says_so():
    module = hlodbg.load(TILED.replace('"f32[3,5]{0,1:T(8,128)}"', '"f32[3,5]{0,1}"')).module
    assigned = LayoutAssignment(module, V5E).layout_for(_values(module)["%1"])
    assert (str(assigned.layout), assigned.origin) == ("{0,1:T(8,128)}", "given by the HLO module, tiled by default")


# -- hand-written post-optimization TPU modules, read by the HLO frontend ----------------------------

# ../shared/docs/tpu.md §5.1 as HLO text: the entry layout, a prefetch of %x into VMEM (S(1))
# with copy-start/copy-done and its u32[]{:S(2)} flag.
PREFETCH = """HloModule jit_f, is_scheduled=true, entry_computation_layout={(f32[16,8]{0,1:T(8,128)}, f32[8,4]{0,1:T(4,128)}, f32[4]{0:T(128)})->f32[16,4]{0,1:T(4,128)}}

ENTRY %main.10 (Arg_0.1: f32[16,8], Arg_1.2: f32[8,4], Arg_2.3: f32[4]) -> f32[16,4] {
  %Arg_0.1 = f32[16,8]{0,1:T(8,128)} parameter(0)
  %Arg_1.2 = f32[8,4]{0,1:T(4,128)} parameter(1)
  %Arg_2.3 = f32[4]{0:T(128)} parameter(2)
  %copy-start = (f32[16,8]{0,1:T(8,128)S(1)}, f32[16,8]{0,1:T(8,128)}, u32[]{:S(2)}) copy-start(%Arg_0.1), cross_program_prefetch_index=0
  %copy-done = f32[16,8]{0,1:T(8,128)S(1)} copy-done(%copy-start)
  %dot = f32[16,4]{0,1:T(4,128)} dot(%copy-done, %Arg_1.2), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %broadcast = f32[16,4]{0,1:T(4,128)} broadcast(%Arg_2.3), dimensions={1}
  ROOT %add = f32[16,4]{0,1:T(4,128)} add(%dot, %broadcast)
}
"""

# bf16, s8 and pred tiles with their packing sub-tiles, a scalar, an elided constant, a tuple root.
TILES = """HloModule tiles, entry_computation_layout={(bf16[3,5]{1,0:T(8,128)(2,1)}, s8[20,300]{1,0:T(8,128)(4,1)})->(pred[20,300]{1,0:T(8,128)(4,1)}, f32[3,5]{1,0:T(8,128)})}

ENTRY %main (p0: bf16[3,5], p1: s8[20,300]) -> (pred[20,300], f32[3,5]) {
  %p0 = bf16[3,5]{1,0:T(8,128)(2,1)} parameter(0)
  %p1 = s8[20,300]{1,0:T(8,128)(4,1)} parameter(1)
  %c = pred[20,300]{1,0:T(8,128)(4,1)} compare(%p1, %p1), direction=GT
  %f = f32[3,5]{1,0:T(8,128)} convert(%p0)
  %k = s32[]{:T(128)} constant(7)
  %big = f32[64]{0:T(128)} constant({...})
  ROOT %t = (pred[20,300]{1,0:T(8,128)(4,1)}, f32[3,5]{1,0:T(8,128)}) tuple(%c, %f)
}
"""


def _memory_json(tmp_path, capsys, text: str, *options: str) -> dict:
    path = tmp_path / "module.hlo"
    path.write_text(text)
    assert main(["memory", str(path), "--json", "--top", "0", *options]) == 0
    return json.loads(capsys.readouterr().out)["devices"][0]


def test_a_tpu_dump_reports_xlas_padded_argument_size_and_keeps_the_prefetch_in_vmem(tmp_path, capsys):
    device = _memory_json(tmp_path, capsys, PREFETCH, "--target", "tpu-v5e")
    assert device["argument_bytes"] == 6656  # 4096 + 2048 + 512, XLA's memory_analysis() on a v5e
    assert device["output_bytes"] == 2048  # f32[16,4]{0,1:T(4,128)}: (4,16) -> one 4x128 tile
    assert device["peak_bytes"] == 6656 + 3 * 2048 and device["peak_op"] == "%add"  # dot, broadcast, add
    program = hlodbg.load(PREFETCH)
    entry = program.memory("tpu-v5e").devices[0].entry
    dot = next(op for op in program.module.entry.ops if op.results and op.results[0].name == "%dot")
    position = entry.position_of(dot)
    # At the dot: the parameters and the dot's result in HBM; the prefetched copy of %Arg_0.1 in VMEM.
    assert entry.bytes_at(position) == 6656 + 2048 and entry.other_bytes_at(position) == {1: 4096}
    copy = next(b for b in entry.buffers_at(position) if b.name == "%copy-done")
    assert (copy.memory_space, copy.physical_bytes, copy.layout) == (1, 4096, "{0,1:T(8,128)S(1)}")


def test_bf16_s8_and_pred_tiles_and_scalars_take_their_padded_sizes(tmp_path, capsys):
    device = _memory_json(tmp_path, capsys, TILES, "--target", "tpu-v5e")
    bf16, s8_pred, f32, scalar = 2048, 24 * 384, 4096, 512  # by hand, as ShapeUtil::ArraySize
    assert device["argument_bytes"] == bf16 + s8_pred
    assert device["output_bytes"] == s8_pred + f32
    program = hlodbg.load(TILES)
    entry = program.memory("tpu-v5e").devices[0].entry
    k = next(op for op in program.module.entry.ops if op.results and op.results[0].name == "%k")
    position = entry.position_of(k)
    assert entry.bytes_at(position) == bf16 + 2 * s8_pred + f32 + scalar  # at %k: all made so far, and %k
    sizes = {b.name: (b.layout, b.physical_bytes) for b in entry.buffers_at(position)}
    assert sizes["%k"] == ("{:T(128)}", scalar) and sizes["%c"] == ("{1,0:T(8,128)(4,1)}", s8_pred)


def test_on_the_cpu_a_tpu_dump_counts_logical_bytes_and_shows_the_layouts(tmp_path, capsys):
    device = _memory_json(tmp_path, capsys, TILES)
    assert device["argument_bytes"] == 15 * 2 + 20 * 300
    shown = {b["name"]: (b["layout"], b["layout_source"]) for b in device["buffers"]}
    assert shown["%p0"] == ("{1,0:T(8,128)(2,1)}", "module") and shown["%c"] == ("{1,0:T(8,128)(4,1)}", "module")


def test_a_tpu_dump_runs_on_its_layouts_as_on_the_cpu():
    program = hlodbg.load(TILES, fill_elided="zeros")
    rng = np.random.default_rng(1)
    p0 = rng.standard_normal((3, 5)).astype(program.module.entry.arguments[0].type.element.numpy_dtype)
    p1 = rng.integers(-128, 128, (20, 300)).astype(np.int8)
    for got, want in zip(program.run(p0, p1, target="tpu-v5e"), program.run(p0, p1)):
        np.testing.assert_array_equal(got, want)


def test_an_unmodelled_layout_in_hlo_text_is_an_error_at_the_instruction(tmp_path, capsys):
    path = tmp_path / "split.hlo"
    path.write_text(TILES.replace("%f = f32[3,5]{1,0:T(8,128)}", "%f = f32[3,5]{1,0:T(8,128)SC(0:1,2)}"))
    assert main(["memory", str(path), "--target", "tpu-v5e"]) == 2
    err = capsys.readouterr().err
    assert f"{path}:7:3: error: xla_shape of %f (stablehlo.convert)" in err and "split config SC(...)" in err


# A kOutput fusion reading the prefetched (VMEM) copy, as in ../shared/docs/tpu.md §5.1.
FUSION = """HloModule jit_f, is_scheduled=true, entry_computation_layout={(f32[16,8]{0,1:T(8,128)}, f32[8,4]{0,1:T(4,128)})->f32[16,4]{0,1:T(4,128)}}

%fused_computation.1 (param_0.1: f32[16,8], param_1.2: f32[8,4]) -> f32[16,4] {
  %param_0.1 = f32[16,8]{0,1:T(8,128)S(1)} parameter(0)
  %param_1.2 = f32[8,4]{0,1:T(4,128)} parameter(1)
  %convolution.3 = f32[16,4]{0,1:T(4,128)} convolution(%param_0.1, %param_1.2), dim_labels=bf_io->bf
  %constant.2 = f32[]{:T(128)} constant(0)
  %broadcast.1 = f32[16,4]{0,1:T(4,128)} broadcast(%constant.2), dimensions={}
  ROOT %maximum.1 = f32[16,4]{0,1:T(4,128)} maximum(%convolution.3, %broadcast.1)
}

ENTRY %main.10 (Arg_0.1: f32[16,8], Arg_1.2: f32[8,4]) -> f32[16,4] {
  %Arg_0.1 = f32[16,8]{0,1:T(8,128)} parameter(0)
  %Arg_1.2 = f32[8,4]{0,1:T(4,128)} parameter(1)
  %copy-start = (f32[16,8]{0,1:T(8,128)S(1)}, f32[16,8]{0,1:T(8,128)}, u32[]{:S(2)}) copy-start(%Arg_0.1), cross_program_prefetch_index=0
  %copy-done = f32[16,8]{0,1:T(8,128)S(1)} copy-done(%copy-start)
  ROOT %fusion = f32[16,4]{0,1:T(4,128)} fusion(%copy-done, %Arg_1.2), kind=kOutput, calls=%fused_computation.1, backend_config={"used_scoped_memory_configs":[{"memory_space":"1","offset":"0","size":"4096"}]}
}
"""


def test_a_fused_computations_parameters_and_instructions_get_their_layouts(tmp_path, capsys):
    module = hlodbg.load(FUSION).module
    layouts = LayoutAssignment(module, V5E)
    fused = module.function("fused_computation.1")
    assert str(layouts.layout_for(fused.arguments[0]).layout) == "{0,1:T(8,128)S(1)}"
    scalar = next(op for op in fused.ops if op.results and op.results[0].name == "%constant.2")
    assert str(layouts.layout_for(scalar.results[0]).layout) == "{:T(128)}"
    path = tmp_path / "fusion.hlo"
    path.write_text(FUSION)
    assert main(["memory", str(path), "--target", "tpu-v5e"]) == 0
    text = capsys.readouterr().out
    # The peak is inside the fusion: both parameters and three 4x128 results in HBM, the copy in VMEM.
    assert "peak 12.0 KiB" in text and "in @fused_computation.1" in text
    assert "not counted against 16 GiB HBM of tpu-v5e: VMEM S(1) 4.0 KiB" in text
