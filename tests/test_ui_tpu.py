"""The debugger on a TPU target: the inspector's physical view and element cursor, the memory pane,
the target in the status bar and the grid's cells, the padding overlay (terminal and SVG)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import hlodbg
from hlodbg.engine.machine.layout import Layout
from hlodbg.engine.machine.memory import format_bytes
from hlodbg.engine.machine.targets import backend_for
from hlodbg.layouts.export import export_graph, graph_view
from hlodbg.layouts.overlay import PADDING, padding_level, padding_overlay
from hlodbg.ui.app import HlodbgApp
from hlodbg.ui.widgets.graph_canvas import GraphCanvas
from hlodbg.ui.widgets.grid_view import GridView
from hlodbg.ui.widgets.inspector import TensorInspector
from hlodbg.ui.widgets.memory_pane import MemoryPanel

from .helpers import SHARED, require_shared
from .pilot import press, settle, type_command

pytestmark = pytest.mark.usefixtures("private_hlodbg_dirs")

SIZE = (160, 50)
RING = Path(__file__).parent / "data" / "grid_ring.mlir"
# bf16 values of a shape TPUs pad (32 columns of a 128-lane tile) and an f32[64,3] that pads badly.
BF16_PROGRAM = """
func.func @main(%x: tensor<16x32xf32>, %y: tensor<64x3xf32>) -> (tensor<16x32xf32>, tensor<64x3xf32>) {
  %h = stablehlo.convert %x : (tensor<16x32xf32>) -> tensor<16x32xbf16>
  %d = stablehlo.add %h, %h : tensor<16x32xbf16>
  %back = stablehlo.convert %d : (tensor<16x32xbf16>) -> tensor<16x32xf32>
  %z = stablehlo.multiply %y, %y : tensor<64x3xf32>
  return %back, %z : tensor<16x32xf32>, tensor<64x3xf32>
}
"""
X = np.arange(16 * 32, dtype=np.float32).reshape(16, 32) / 8
Y = np.ones((64, 3), np.float32)


def bf16_app(target: str = "tpu-v5e") -> HlodbgApp:
    program = hlodbg.load(BF16_PROGRAM)
    return HlodbgApp(program, args=[X, Y], persist=False, backend=backend_for(target))


def text(app, widget) -> str:
    return str(app.screen.query_one(widget).render())


async def to_the_bf16_value(app, pilot) -> TensorInspector:
    """Step until the inspector shows %h (bf16[16,32]) as just computed."""
    await settle(app, pilot)
    await press(app, pilot, "n")  # %h computed; next: %d
    inspector = app.screen.query_one(TensorInspector)
    assert inspector.selected.label == "%h" and "bf16" in inspector.selected.type_text
    return inspector


async def test_physical_view_of_a_bf16_value_and_the_element_cursor():
    app = bf16_app()
    async with app.run_test(size=SIZE) as pilot:
        inspector = await to_the_bf16_value(app, pilot)
        assert "physical" not in inspector.render_text()
        await press(app, pilot, "p")
        shown = inspector.render_text()
        # The default TPU layout of a 2-D bf16: (8,128) tiles, rows packed in pairs into 32-bit words.
        assert "bf16[16,32]{1,0:T(8,128)(2,1)}" in shown
        assert "default: inferred by hlodbg (approximate)" in shown
        # 16x32 padded to 16x128: 4 KiB for 1 KiB of values.
        assert "logical 1.0 KiB  physical 4.0 KiB  waste 4.00x" in shown
        assert "2×1 tiles of 8×128" in shown and "last tile column: 32 of 128 columns used" in shown
        assert [line.strip() for line in shown.splitlines() if line.strip() in ("0  █░", "1  █░")] == ["0  █░", "1  █░"]
        assert "█░ padding columns right" in shown
        assert "cursor    [0, 0]" in shown  # the physical view shows the cursor where it starts
        await press(app, pilot, "shift+down", "shift+down", "shift+down", "shift+right")
        shown = inspector.render_text()
        location = Layout.parse("{1,0:T(8,128)(2,1)}").locate((3, 1), (16, 32), np.dtype("bfloat16"))
        # By hand: in tile 0, the (2,1) sub-tiles are 2-element pairs of rows; [3,1] is the second
        # element of pair (1,1), number 1*128+1 = 129: slot 259, byte 518, word 129.
        assert (location.byte_offset, location.word_index) == (518, 129)
        cursor_line = next(line for line in shown.splitlines() if line.startswith("cursor"))
        assert cursor_line.startswith("cursor    [3, 1] = 12.125")
        assert f"tile (0,0) #{location.tile_number}, offset (3,1)" in cursor_line
        assert f"byte {location.byte_offset:,}" in cursor_line and f"word {location.word_index:,}" in cursor_line
        assert "(16-bit element)" in cursor_line
        word_line = next(line for line in shown.splitlines() if line.startswith("word"))
        assert location.word_mates == ((2, 1),)
        assert "2 elements share 32-bit word 129: [2, 1] = 8.125  [3, 1] = 12.125" in word_line
        assert "packed by (2,1)" in word_line
        await press(app, pilot, "shift+up", "shift+left", "shift+left")  # stops at the edge
        assert "cursor    [2, 0]" in inspector.render_text()
        await press(app, pilot, "p")
        assert "physical" not in inspector.render_text()


async def test_a_click_on_a_cell_puts_the_cursor_there():
    app = bf16_app()
    async with app.run_test(size=SIZE) as pilot:
        inspector = await to_the_bf16_value(app, pilot)
        await press(app, pilot, "p")
        table = inspector.query_one(".inspector-slice")
        lines = inspector.render_text().splitlines()
        lines = lines[next(i for i, line in enumerate(lines) if line.startswith("slice ")):]  # the table's own
        row_line = next(i for i, line in enumerate(lines) if line.startswith("3 "))
        x = lines[1].index(" 2 ") + 1  # the column labelled 2, right-aligned over its cells
        await pilot.click(table, offset=(x, row_line))
        await settle(app, pilot)
        assert "cursor    [3, 2]" in inspector.render_text()


async def test_the_memory_pane_shows_live_buffers_the_peak_and_the_hbm():
    app = bf16_app()
    async with app.run_test(size=SIZE) as pilot:
        await to_the_bf16_value(app, pilot)
        pane = app.screen.query_one(MemoryPanel)
        assert pane.display  # on by default on a TPU
        analysis = app.program.memory("tpu-v5e")
        device = analysis.devices[0]
        now = device.site([app.screen.state.op]).bytes
        shown = text(app, MemoryPanel)
        assert "device 0 · tpu-v5e" in shown
        assert f"{format_bytes(now)} of 16.0 GiB" in shown
        peak_op = device.peak_site().op
        assert f"peak {format_bytes(device.peak_bytes)} at {peak_op.results[0].name} = {peak_op.name}" in shown
        assert "%h tensor<16x32xbf16> 4.0 KiB 4.0x {1,0:T(8,128)(2,1)} default" in shown
        status = text(app, "#status")
        assert "tpu-v5e" in status and f"HBM {format_bytes(now)}" in status
        # The curve of bytes live along the entry, with ▲ under the op the run is at.
        assert "bytes live in program order" in shown
        cursor_line = next(line for line in shown.splitlines() if "▲" in line)
        before = cursor_line.index("▲")
        await press(app, pilot, "n")  # per step: the figures at the new op
        later = device.site([app.screen.state.op]).bytes
        shown = text(app, MemoryPanel)
        assert f"{format_bytes(later)} of 16.0 GiB" in shown
        assert next(line for line in shown.splitlines() if "▲" in line).index("▲") >= before
        await press(app, pilot, "m")
        assert not pane.display


async def test_on_the_cpu_values_are_dense_and_memory_is_the_machines():
    app = bf16_app("cpu")
    async with app.run_test(size=SIZE) as pilot:
        inspector = await to_the_bf16_value(app, pilot)
        await press(app, pilot, "p", "shift+right")
        shown = inspector.render_text()
        assert "bf16[16,32]{1,0}  cpu keeps values row-major, unpadded: dense 1.0 KiB" in shown
        assert "waste 1.00x" in shown and "tiles" not in shown
        cursor_line = next(line for line in shown.splitlines() if line.startswith("cursor"))
        assert "byte 2  word 0" in cursor_line  # element 1 of a dense bf16 row
        pane = app.screen.query_one(MemoryPanel)
        assert not pane.display  # off by default on the CPU
        await press(app, pilot, "m")
        shown = text(app, MemoryPanel)
        assert "· cpu" in shown and "peak" in shown and "%h tensor<16x32xbf16> 1.0 KiB" in shown
        assert "│ cpu · excess precision │" in text(app, "#status")  # XLA's rounding, the default


async def test_the_grid_cells_show_each_devices_hbm_in_use():
    app = HlodbgApp(hlodbg.load(RING), args=[np.array([1.0, 2.0], np.float32)], persist=False,
                    backend=backend_for("tpu-v5e"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await press(app, pilot, "n", "n")
        view = app.screen.query_one(GridView)
        analysis = app.program.memory("tpu-v5e")
        target = app.controller.target
        for process, session in target.sessions.items():
            device = target.device_id(process)
            expected = analysis.device(process).site([session.op]).bytes
            assert f"HBM {format_bytes(expected)}" in view.text_of(device)
        assert "tpu-v5e" in text(app, "#status")


async def test_overlay_padding_recolours_the_graph():
    app = bf16_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        canvas = app.screen.query_one(GraphCanvas)
        await type_command(app, pilot, "overlay padding")
        marks = canvas.overlay
        graph = app.controller.graph
        ops = {op.results[0].name: op for op in app.program.module.walk() if op.results and op.results[0].name}
        z_node = graph.nodes_of(ops["%z"])[0]
        # f32[64,3]: 3 columns padded to 128 lanes (43x), or in {0,1} 3 rows to 8 and 64 lanes to 128 (2.7x).
        backend = backend_for("tpu-v5e")
        backend.prepare(app.program.module)
        logical, physical = backend.buffer_bytes(ops["%z"].results[0])
        assert marks[z_node][1] == PADDING[padding_level(physical / logical)][1] and physical / logical > 2
        assert marks[z_node][2] == f"×{physical / logical:.1f}"
        await type_command(app, pilot, "overlay none")
        assert canvas.overlay == {}
        await type_command(app, pilot, "export padded.svg --overlay padding")
        svg = Path("padded.svg").read_text()  # the working directory is the test's own
        assert "padding waste on tpu-v5e" in svg and f"×{physical / logical:.1f}" in svg


def test_export_padding_overlay_colours_ops_by_waste(tmp_path):
    program = hlodbg.load(BF16_PROGRAM)
    backend = backend_for("tpu-v5e")
    view = graph_view(program.module)
    overlay = padding_overlay(view, backend)
    assert overlay.title == "padding waste on tpu-v5e (physical / logical bytes)"
    assert [entry.label for entry in overlay.legend][0] == "1x: no padding"
    out = tmp_path / "padding.svg"
    export_graph(view, str(out), overlay=overlay)
    svg = out.read_text()
    assert "padding waste on tpu-v5e" in svg and "≥ 16x" in svg
    z = next(op for op in program.module.walk() if op.results and op.results[0].name == "%z")
    logical, physical = backend.buffer_bytes(z.results[0])
    assert f"×{physical / logical:.1f}" in svg and PADDING[padding_level(physical / logical)][1] in svg
    cpu = padding_overlay(graph_view(program.module), backend_for("cpu"))
    assert set(cpu.fills.values()) == {PADDING[0][1]} and not cpu.badges  # the CPU never pads


def test_hlodbg_export_overlay_padding_on_a_shared_program(tmp_path, capsys):
    require_shared()
    from hlodbg.cli import main

    out = tmp_path / "gpt.svg"
    assert main(["export", str(SHARED / "programs" / "gpt_tiny.mlir"), "-o", str(out), "--overlay", "padding",
                 "--target", "tpu-v5e"]) == 0
    svg = out.read_text()
    assert "padding waste on tpu-v5e" in svg and "padding waste 128.00x on tpu-v5e" in svg


NARROW_TYPES = """
func.func @main(%q: tensor<5x7xi4>, %b: tensor<300xui8>, %s: tensor<f32>) -> tensor<f32> {
  return %s : tensor<f32>
}
"""


def test_physical_lines_of_packed_narrow_types_list_every_element_of_the_word():
    from hlodbg.ui.device_memory import storage_of
    from hlodbg.ui.widgets.physical_view import physical_lines

    program = hlodbg.load(NARROW_TYPES)
    backend = backend_for("tpu-v5e")
    backend.prepare(program.module)
    q, b, s = program.module.entry.body.arguments

    def lines(value, array, axes, cursor):
        storage = storage_of(backend, value, array)
        return [line.plain for line in physical_lines(storage, array, axes, cursor, 120)]

    s4 = q.type.element.numpy_dtype
    int4 = (np.arange(35).reshape(5, 7) % 8).astype(s4)
    shown = lines(q, int4, [0, 1], (4, 6))
    location = Layout.parse("{1,0:T(8,128)(8,1)E(4)}").locate((4, 6), (5, 7), s4)
    assert shown[0].startswith("physical  s4[5,7]{1,0:T(8,128)(8,1)E(4)}")
    # Eight 4-bit rows of a column share a word; rows 5-7 are padding, so five elements show.
    word = next(line for line in shown if line.startswith("word"))
    assert len(location.word_mates) == 4
    assert word.startswith(f"word      5 elements share 32-bit word {location.word_index}: [0, 6] = ")
    assert "consecutive along axis 0, packed by (8,1)" in word
    assert f"byte {location.byte_offset} bit {location.bit_offset}" in next(line for line in shown if line.startswith("cursor"))
    assert "last tile row: 5 of 8 rows used; last tile column: 7 of 128 columns used" in "\n".join(shown)
    assert "       0  ▀░" in shown and any(line.strip().startswith("▀░ padding rows and columns") for line in shown)

    bytes_ = lines(b, np.arange(300, dtype=np.uint8), [0], (299,))
    assert "tiles     (512) on axis 0: 1 tile of 512; last tile column: 300 of 512 columns used" in bytes_
    assert any("[43] = 43  [171] = 171  [299] = 43" in line and "128 apart along axis 0" in line for line in bytes_)

    scalar = lines(s, np.array(1.5, np.float32), [], ())
    assert "waste 128.00x" in scalar[1] and "tiles     a scalar fills a whole (128) tile" in scalar


def test_hlodbg_export_overlay_padding_needs_no_run(tmp_path, capsys):
    from hlodbg.cli import main

    source = tmp_path / "prog.mlir"
    source.write_text(BF16_PROGRAM)
    values = tmp_path / "in.npz"
    np.savez(values, arg0=X, arg1=Y)
    assert main(["export", str(source), "-o", str(tmp_path / "g.svg"), "--overlay", "padding", "--values", str(values),
                 "--target", "tpu-v5e"]) == 2
    assert "--overlay padding comes from the layouts, not from a run" in capsys.readouterr().err


def test_a_layout_given_by_option_is_named_so():
    from hlodbg.ui.device_memory import storage_of
    from hlodbg.ui.widgets.physical_view import physical_lines

    program = hlodbg.load(BF16_PROGRAM)
    backend = backend_for("tpu-v5e", layouts={"arg0": "0,1:T(8,128)"})
    backend.prepare(program.module)
    x = program.module.entry.body.arguments[0]
    storage = storage_of(backend, x, X)
    assert storage.source == "option" and str(storage.layout) == "{0,1:T(8,128)}"
    head = physical_lines(storage, X, [0, 1], (0, 0), 120)[0].plain
    assert head == "physical  f32[16,32]{0,1:T(8,128)}  given by --layout"


async def test_hlodbg_open_with_target_tpu_shows_a_shared_programs_bf16_value_physically():
    """The issue's pilot test: `hlodbg open mixed_bf16.mlir --target tpu-v5e`, step to a bf16 value,
    its physical view, the memory pane and the target in the status bar."""
    require_shared()
    from hlodbg.cli import _parser
    from hlodbg.ui_entry import build_app

    program = SHARED / "programs" / "mixed_bf16.mlir"
    app = build_app(_parser().parse_args(["open", str(program), "--target", "tpu-v5e", "--no-save",
                                          "--args", str(SHARED / "programs" / "mixed_bf16.inputs.npz")]))
    assert app.error is None
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await press(app, pilot, "n", "n", "n", "n")  # %0, %1, %2 (f32), %3: bf16[16,32]
        inspector = app.screen.query_one(TensorInspector)
        assert inspector.selected.label == "%3"
        await press(app, pilot, "p", "shift+down")
        shown = inspector.render_text()
        assert "bf16[16,32]{1,0:T(8,128)(2,1)}  default: inferred by hlodbg (approximate)" in shown
        value = inspector.selected.value
        mates = next(line for line in shown.splitlines() if line.startswith("word"))
        from hlodbg.ui.widgets.tensor_text import format_cells

        texts, _ = format_cells(value[0:2, 0:1])
        assert f"2 elements share 32-bit word 0: [0, 0] = {texts[0][0]}  [1, 0] = {texts[1][0]}" in mates
        memory = text(app, MemoryPanel)
        peak = hlodbg.load(program).memory("tpu-v5e").devices[0].peak_bytes
        assert f"peak {format_bytes(peak)} at %5 = stablehlo.multiply in @main (mixed_bf16.mlir:9)" in memory
        assert "of 16.0 GiB" in memory and "%3 tensor<16x32xbf16> 4.0 KiB 4.0x {1,0:T(8,128)(2,1)} default" in memory
        assert "│ tpu-v5e · excess precision │" in text(app, "#status")


# @g has no body: its memory cannot be counted, yet a run whose branch never calls it finishes.
CALLS_A_DECLARATION = """
func.func private @g(%n: tensor<i32>) -> tensor<i32>
func.func @main(%n: tensor<i32>) -> tensor<i32> {
  %zero = stablehlo.constant dense<0> : tensor<i32>
  %c = stablehlo.compare GT, %n, %zero : (tensor<i32>, tensor<i32>) -> tensor<i1>
  %r = "stablehlo.if"(%c) ({
    %x = func.call @g(%n) : (tensor<i32>) -> tensor<i32>
    stablehlo.return %x : tensor<i32>
  }, {
    stablehlo.return %n : tensor<i32>
  }) : (tensor<i1>) -> tensor<i32>
  return %r : tensor<i32>
}
"""


async def test_a_program_whose_memory_cannot_be_counted_says_why_and_still_runs():
    app = HlodbgApp(hlodbg.load(CALLS_A_DECLARATION), args=[np.array(0, np.int32)], persist=False,
                    backend=backend_for("tpu-v5e"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        shown = text(app, MemoryPanel)
        assert "cannot be counted" in shown and "@g is only declared" in shown
        await press(app, pilot, "c")
        assert app.screen.state.finished and not app.screen.state.error
        assert "HBM" not in text(app, "#status") and "tpu-v5e" in text(app, "#status")


def test_a_layout_the_shape_cannot_take_is_said_in_the_physical_view():
    from hlodbg.ui.state import StorageView
    from hlodbg.ui.widgets.physical_view import physical_lines

    # (3,1) inside (8,128) tiles would pad the 8 rows again: XLA's sizes assume it never does.
    storage = StorageView("tpu-v5e", Layout.parse("{1,0:T(8,128)(3,1)}"), "given", (8, 128), np.dtype(np.float32), 4096, 4096)
    shown = [line.plain for line in physical_lines(storage, np.zeros((8, 128), np.float32), [0, 1], (0, 0), 100)]
    assert len(shown) == 1 and shown[0].startswith("physical  f32[8,128]: ") and "tile (3,1) pads the shape" in shown[0]


def test_padding_overlay_marks_arguments_and_skips_reducer_bodies():
    from hlodbg.layouts.export import graph_view
    from hlodbg.layouts.overlay import padding_marks

    from .helpers import SAMPLES

    program = hlodbg.load(SAMPLES / "tpu_padding.mlir")
    backend = backend_for("tpu-v5e")
    marks = padding_marks(program.module, backend)
    points = program.entry.arguments[0]
    assert marks[points][2] == "×42.7"  # f32[65536,3]{1,0:T(8,128)}: 32 MiB for 768 KiB
    reduce_op = next(op for op in program.entry.ops if op.name == "stablehlo.reduce")
    assert not any(key in marks for key in reduce_op.regions[0].blocks[0].operations)
    view = graph_view(program.module)
    overlay = padding_overlay(view, backend)
    (node,) = [n for n, data in view.graph.nodes(data=True) if data.get("value") is points and data["kind"] == "argument"]
    assert overlay.badges[node] == "×42.7" and "padding waste 42.67x on tpu-v5e" in overlay.tooltips[node]


LOCAL_SHARDS = """
module @m attributes {mhlo.num_partitions = 2 : i32} {
  sdy.mesh @mesh = <["x"=2]>
  func.func @main(%big: tensor<8x4xf32>, %x: tensor<4x3xf32>) -> tensor<8x4xf32> {
    %0 = sdy.manual_computation(%big) in_shardings=[<@mesh, [{"x"}, {}]>] out_shardings=[<@mesh, [{"x"}, {}]>] manual_axes={"x"} (%shard: tensor<4x4xf32>) {
      %1 = stablehlo.add %shard, %shard : tensor<4x4xf32>
      sdy.return %1 : tensor<4x4xf32>
    } : (tensor<8x4xf32>) -> tensor<8x4xf32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %r:2 = stablehlo.while(%i = %c, %acc = %x) : tensor<i32>, tensor<4x3xf32>
      cond {
        %t = stablehlo.compare LT, %i, %c : (tensor<i32>, tensor<i32>) -> tensor<i1>
        stablehlo.return %t : tensor<i1>
      } do {
        stablehlo.return %i, %acc : tensor<i32>, tensor<4x3xf32>
      }
    return %0 : tensor<8x4xf32>
  }
}
"""


def test_padding_marks_the_local_shards_of_a_manual_computation_not_loop_state():
    # A manual_computation's body arguments are each device's own buffers (the memory analysis
    # counts them); a while's region arguments are its operands' buffers, drawn once already.
    from hlodbg.layouts.overlay import padding_marks

    program = hlodbg.load(LOCAL_SHARDS)
    marked = {value.name for value in padding_marks(program.module, backend_for("tpu-v5e"))
              if getattr(value, "is_block_argument", False)}
    assert marked == {"%big", "%x", "%shard"}


def test_the_tiles_line_names_the_axes_each_tile_dim_runs_along():
    # {0,1}: the tile's 8 rows run along axis 1 and its 128 lanes along axis 0; drawn with axis 0
    # down, a tile is 128 rows by 8 columns.
    from hlodbg.ui.device_memory import storage_of
    from hlodbg.ui.widgets.physical_view import physical_lines

    program = hlodbg.load("""
func.func @main(%t: tensor<16x8xf32> {mhlo.layout_mode = "{0,1}"}, %r: tensor<16x8xf32> {mhlo.layout_mode = "{1,0}"}) -> tensor<16x8xf32> {
  return %t : tensor<16x8xf32>
}""")
    backend = backend_for("tpu-v5e")
    backend.prepare(program.module)
    array = np.zeros((16, 8), np.float32)

    def tiles_line(value):
        lines = [line.plain for line in physical_lines(storage_of(backend, value, array), array, [0, 1], (0, 0), 120)]
        return next(line for line in lines if line.startswith("tiles"))

    transposed, row_major = program.module.entry.arguments
    assert tiles_line(transposed).startswith("tiles     (8,128) on axes 1×0: 1×1 tiles of 128×8;")
    assert tiles_line(row_major).startswith("tiles     (8,128) on axes 0×1: 2×1 tiles of 8×128")


def test_cpu_physical_view_of_int4_is_packed_as_its_size_says():
    # The CPU counts an s4[5,7] as 18 bytes (packed); the cursor's byte must be in that buffer.
    from hlodbg.ui.device_memory import storage_of
    from hlodbg.ui.widgets.physical_view import physical_lines

    program = hlodbg.load(NARROW_TYPES)
    backend = backend_for("cpu")
    q = program.module.entry.body.arguments[0]
    int4 = (np.arange(35).reshape(5, 7) % 8).astype(q.type.element.numpy_dtype)
    shown = [line.plain for line in physical_lines(storage_of(backend, q, int4), int4, [0, 1], (4, 6), 120)]
    assert "dense 18 B" in shown[0]
    assert "cursor    [4, 6] = 2  byte 17 bit 0  word 4  (4-bit element)" in shown


def test_open_with_a_layout_option_naming_no_argument_exits_2(tmp_path, capsys, monkeypatch):
    # Checked before the app starts: without a terminal it is printed, with one it is the error
    # screen; either way the exit status is 2.
    from hlodbg.cli import main

    monkeypatch.setenv("HLODBG_STATE_DIR", str(tmp_path / "state"))
    prog = tmp_path / "p.mlir"
    prog.write_text(NARROW_TYPES)
    assert main(["open", str(prog), "--target", "tpu", "--layout", "arg9=1,0"]) == 2
    assert "--layout arg9=1,0: @main has 3 arguments (arg0..arg2)" in capsys.readouterr().err


async def test_a_run_that_cannot_start_leaves_the_error_for_the_exit_status():
    from hlodbg.ui.screens.error import ErrorScreen

    app = HlodbgApp(hlodbg.load(NARROW_TYPES), entry="nosuch", persist=False)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, ErrorScreen) and "nosuch" in app.screen.message
        assert app.error is not None
        await pilot.press("q")


async def test_the_status_bar_says_which_rounding_is_in_force():
    program = hlodbg.load(BF16_PROGRAM)
    app = HlodbgApp(program, args=[X, Y], persist=False, backend=backend_for("cpu", excess_precision=False))
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        assert "│ cpu · per-op rounding │" in text(app, "#status")
