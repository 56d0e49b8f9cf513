"""`hlodbg memory --svg/--png` (layouts/memory_svg.py): the picture checked by its structure, parsed
with xml.etree, never by pixels."""
from __future__ import annotations

import shutil
import xml.etree.ElementTree as ET
from types import SimpleNamespace

import numpy as np
import pytest

import hlodbg
from hlodbg.cli import main
from hlodbg.engine.machine.backend import Backend
from hlodbg.engine.run.memory_profile import ARGUMENTS, OUTPUTS, TEMPORARIES
from hlodbg.layouts.memory_svg import memory_svg
from .helpers import PROGRAMS, SAMPLES, require_shared

SVG = "{http://www.w3.org/2000/svg}"

# %big is the largest buffer at the peak (%2), made on a line of the user's Python (model.py:42).
PROGRAM = """
func.func @main(%a: tensor<64x32xf32>, %b: tensor<16xf32>) -> tensor<64x32xf32> {
  %0 = stablehlo.add %a, %a : tensor<64x32xf32> loc("model.py":40:3)
  %big = stablehlo.broadcast_in_dim %0, dims = [1, 2] : (tensor<64x32xf32>) -> tensor<4x64x32xf32> loc("model.py":42:7)
  %1 = stablehlo.broadcast_in_dim %b, dims = [0] : (tensor<16xf32>) -> tensor<16x3xf32>
  %2 = stablehlo.slice %big [0:1, 0:64, 0:32] : (tensor<4x64x32xf32>) -> tensor<1x64x32xf32> loc("model.py":43:5)
  %3 = stablehlo.reshape %2 : (tensor<1x64x32xf32>) -> tensor<64x32xf32>
  %4 = stablehlo.multiply %3, %0 : tensor<64x32xf32>
  return %4 : tensor<64x32xf32>
}
"""


def parse(svg: str) -> ET.Element:
    return ET.fromstring(svg.encode("utf-8"))


def title_of(element: ET.Element) -> str:
    title = element.find(f"{SVG}title")
    return "" if title is None else (title.text or "")


def panels(root: ET.Element) -> list[ET.Element]:
    return [g for g in root.iter(f"{SVG}g") if g.get("class") == "panel"]


def with_class(root: ET.Element, tag: str, name: str) -> list[ET.Element]:
    return [e for e in root.iter(f"{SVG}{tag}") if name in (e.get("class") or "").split()]


def drawing(text: str = PROGRAM, target=None, top: int = 10, **grid) -> ET.Element:
    program = hlodbg.load(text)
    return parse(memory_svg(program.memory(target, **grid), program.name, top))


def test_the_peak_marker_names_the_peak_op_and_its_source_line():
    program = hlodbg.load(PROGRAM)
    analysis = program.memory()
    site = analysis.devices[0].peak_site()
    root = parse(memory_svg(analysis, program.name))
    [peak] = with_class(root, "g", "peak")
    assert peak.get("data-op") == site.op.results[0].name
    title = title_of(peak)
    assert f"at %2 = stablehlo.slice (model.py:43, <string>:{site.op.pos.line})" in title


def test_every_rect_and_path_has_a_title():
    root = drawing(target="tpu-v5e")
    defs = {id(e) for d in root.iter(f"{SVG}defs") for e in d.iter()}
    shapes = [e for tag in ("rect", "path", "circle") for e in root.iter(f"{SVG}{tag}") if id(e) not in defs]
    assert shapes
    assert [e.attrib for e in shapes if not title_of(e)] == []


def test_bars_are_the_buffers_at_the_peak_largest_first_with_their_source():
    program = hlodbg.load(PROGRAM)
    analysis = program.memory()
    buffers = analysis.devices[0].peak_site().buffers()
    root = parse(memory_svg(analysis, program.name, top=0))
    bars = with_class(root, "g", "bar")
    assert [b.get("data-name") for b in bars] == [b.name for b in buffers]
    sizes = [int(b.get("data-bytes")) for b in bars]
    assert sizes == sorted(sizes, reverse=True) and sizes[0] == 4 * 64 * 32 * 4
    big = bars[0]
    assert big.get("data-name") == "%big"
    assert "tensor<4x64x32xf32>" in title_of(big) and "model.py:42" in title_of(big)
    assert "temporaries" in big.get("class") and "arguments" in bars[1].get("class")


def test_top_limits_the_bars_and_says_how_many_are_left_out():
    root = drawing(top=2)
    assert len(with_class(root, "g", "bar")) == 2
    [bars] = with_class(root, "g", "bars")
    count = int(bars.get("data-count"))
    assert count > 2 and f"the largest 2 of {count}" in title_of(bars)


def test_padding_is_hatched_on_a_tpu_target_and_absent_on_the_cpu():
    tpu = drawing(target="tpu-v5e", top=0)
    padding = with_class(tpu, "rect", "padding")
    assert padding and all(p.get("fill").startswith("url(#padding-") for p in padding)
    # the chart hatches the padding of each kind above its data: %a's and %b's among the arguments
    [arguments] = [p for p in with_class(tpu, "path", "padding") if "arguments" in p.get("class")]
    assert title_of(arguments).startswith("padding of the arguments: ")
    # %b: 64 bytes of data in a whole (8, 128) tile of f32: its bar is mostly padding.
    [b] = [g for g in with_class(tpu, "g", "bar") if g.get("data-name") == "%b"]
    assert b.find(f"{SVG}rect[@class='padding']") is not None and "padding" in title_of(b) and "T(" in title_of(b)
    cpu = drawing(target="cpu", top=0)
    assert with_class(cpu, "rect", "padding") == [] and with_class(cpu, "path", "padding") == []
    assert "padding" not in ET.tostring(cpu.find(f"{SVG}g[@class='legend']"), encoding="unicode")


def test_the_stacked_areas_add_up_to_the_timeline():
    program = hlodbg.load(PROGRAM)
    entry = program.memory().devices[0].entry
    kinds = entry.kind_timelines()
    assert np.array_equal(kinds[ARGUMENTS] + kinds[TEMPORARIES] + kinds[OUTPUTS], entry.timeline)
    assert kinds[ARGUMENTS].tolist() == [64 * 32 * 4 + 16 * 4] * len(entry.timeline)
    # %4 is made by the op before the return and returned: an output from there on.
    assert kinds[OUTPUTS].tolist() == [0] * (len(entry.timeline) - 2) + [64 * 32 * 4] * 2
    root = parse(memory_svg(program.memory(), program.name))
    areas = {a.get("class").split()[1]: a for a in with_class(root, "path", "area")}
    assert set(areas) == {ARGUMENTS, TEMPORARIES, OUTPUTS}
    assert all(title_of(a).startswith(kind) for kind, a in areas.items())


def test_a_long_program_is_drawn_in_buckets_whose_fullest_op_is_named():
    body = "\n".join(f"  %{i + 1} = stablehlo.add %{i}, %{i} : tensor<8xf32>" for i in range(2000))
    text = f"func.func @main(%arg: tensor<8xf32>) -> tensor<8xf32> {{\n  %0 = stablehlo.negate %arg : tensor<8xf32>\n{body}\n  return %2000 : tensor<8xf32>\n}}"
    root = drawing(text)
    strips = [r for g in with_class(root, "g", "hover") for r in g.iter(f"{SVG}rect")]
    assert 100 <= len(strips) <= 400
    assert all("stablehlo." in title_of(r) and " live (" in title_of(r) for r in strips)


def test_the_capacity_is_a_line_titled_with_the_share_the_peak_takes():
    root = drawing(target="tpu-v5e")
    [capacity] = with_class(root, "g", "capacity")
    assert "HBM of tpu-v5e" in title_of(capacity) and "%" in title_of(capacity)
    assert capacity.find(f"{SVG}path") is not None


class TileBackend(Backend):
    """Device d pads every buffer to whole tiles of 256 * (d % 2 + 1) bytes: two distinct pictures."""

    name = "tiles"

    def __init__(self, tile: int = 256):
        self.tile = tile
        self.generation = SimpleNamespace(hbm_bytes=1 << 20, hbm_label="1 MiB HBM of tiles", name="tiles")

    def for_device(self, process):
        return TileBackend(256 * (process.partition_id % 2 + 1))

    def buffer_bytes(self, ir_value):
        logical, _ = super().buffer_bytes(ir_value)
        return logical, -(-logical // self.tile) * self.tile


def test_a_grid_draws_one_panel_per_distinct_device_and_says_which_share_it():
    program = hlodbg.load(PROGRAM)
    analysis = program.memory(TileBackend(), partitions=4)
    root = parse(memory_svg(analysis, program.name))
    found = panels(root)
    assert [p.get("data-devices") for p in found] == ["0,2", "1,3"]
    assert "devices 0, 2 (the same picture for each)" in title_of(found[0])
    same = hlodbg.load(PROGRAM).memory(None, partitions=4)
    [one] = panels(parse(memory_svg(same, "p")))
    assert one.get("data-devices") == "0,1,2,3" and "devices 0-3" in title_of(one)


def test_a_shared_sharded_program_draws_its_devices(tmp_path):
    require_shared()
    program = hlodbg.load(PROGRAMS / "sharded_mlp_4x2.mlir")
    analysis = program.memory("tpu-v5e")
    found = panels(parse(memory_svg(analysis, program.name)))
    assert sorted(int(d) for p in found for d in p.get("data-devices").split(",")) == list(range(len(analysis.devices)))


# -- the command ----------------------------------------------------------------------------------


def write(tmp_path, text: str = PROGRAM):
    path = tmp_path / "p.mlir"
    path.write_text(text)
    return path


def test_cli_writes_the_svg_and_still_prints_the_text(tmp_path, capsys):
    out = tmp_path / "m.svg"
    assert main(["memory", str(write(tmp_path)), "--target", "tpu-v5e", "--svg", str(out)]) == 0
    captured = capsys.readouterr()
    assert "peak" in captured.out and f"wrote {out}: 1 panel for 1 device" in captured.err
    assert len(panels(parse(out.read_text()))) == 1


@pytest.mark.parametrize("option, name, expected", [
    ("--svg", "m.png", "--svg {path}: expected a file name ending in .svg (for a .png file use --png)"),
    ("--png", "m.svg", "--png {path}: expected a file name ending in .png (for a .svg file use --svg)"),
    ("--svg", "missing/m.svg", "--svg {path}: no directory {parent} to write it in"),
    ("--svg", "", "--svg {path} is a directory"),
    ("--svg", "-", "--svg -: expected a file name ending in .svg"),
])
def test_cli_bad_picture_paths_are_refused_before_any_work(tmp_path, capsys, option, name, expected):
    path = tmp_path / name if name not in ("", "-") else (tmp_path if name == "" else "-")
    program = tmp_path / "absent.mlir"  # never read: the path is checked first
    assert main(["memory", str(program), option, str(path)]) == 2
    err = capsys.readouterr().err
    assert expected.format(path=path, parent=tmp_path / "missing") in err and "Traceback" not in err


def test_cli_png_without_a_converter_says_how_to_get_one(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.delenv("HLODBG_RSVG", raising=False)
    assert main(["memory", str(write(tmp_path)), "--png", str(tmp_path / "m.png")]) == 2
    err = capsys.readouterr().err
    assert "rsvg-convert" in err and "--svg OUT.svg" in err and "Traceback" not in err
    assert not (tmp_path / "m.png").exists()


def test_cli_a_picture_that_cannot_be_written_is_a_clear_error(tmp_path, capsys, monkeypatch):
    import errno
    from pathlib import Path

    def full(self, data):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(Path, "write_bytes", full)
    assert main(["memory", str(write(tmp_path)), "--svg", str(tmp_path / "m.svg")]) == 2
    err = capsys.readouterr().err
    assert f"cannot write {tmp_path / 'm.svg'}: No space left on device" in err and "Traceback" not in err


@pytest.mark.skipif(shutil.which("rsvg-convert") is None, reason="rsvg-convert (librsvg) is not installed")
def test_cli_png_is_made_from_the_svg(tmp_path, capsys):
    out = tmp_path / "m.png"
    assert main(["memory", str(write(tmp_path)), "--target", "tpu-v5e", "--png", str(out), "--json"]) == 0
    assert out.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    assert '"peak_bytes"' in capsys.readouterr().out


def test_cli_picture_of_the_sample_model(tmp_path):
    out = tmp_path / "tiny.svg"
    assert main(["memory", str(SAMPLES / "tiny_model.mlir"), "--svg", str(out), "--top", "0"]) in (0, 4)
    root = parse(out.read_text())
    assert len(panels(root)) == 1 and with_class(root, "g", "peak")


def test_axis_ticks_are_round_and_in_one_unit():
    from hlodbg.layouts.memory_svg import _byte_ticks, _position_ticks

    assert [label for _, label in _byte_ticks(1106 * 1024)] == ["0 KiB", "250 KiB", "500 KiB", "750 KiB", "1000 KiB"]
    assert [label for _, label in _byte_ticks(3.5 * 2**30)] == ["0 GiB", "1 GiB", "2 GiB", "3 GiB"]
    assert [value for value, _ in _byte_ticks(747 * 2**20)] == [i * 200 * 2**20 for i in range(4)]
    assert _position_ticks(1) == [0, 1] and _position_ticks(631) == [0, 200, 400, 600]


# %0 lives in VMEM (S(1)): drawn among the buffers at the peak, but said to be outside the peak.
VMEM = """
func.func @main(%a: tensor<3x5xf32> {xla_shape = "f32[3,5]{1,0:T(8,128)}"}) -> tensor<3x5xf32> {
  %0 = stablehlo.negate %a {xla_shape = "f32[3,5]{1,0:T(8,128)S(1)}"} : tensor<3x5xf32>
  %1 = stablehlo.add %a, %0 {xla_shape = "f32[3,5]{1,0:T(8,128)}"} : tensor<3x5xf32>
  return %1 : tensor<3x5xf32>
}
"""


def test_a_buffer_outside_the_main_memory_is_labelled_so():
    root = drawing(VMEM, target="tpu-v5e", top=0)
    bars = {g.get("data-name"): g for g in with_class(root, "g", "bar")}
    assert "in VMEM S(1), not counted in the peak" in title_of(bars["%0"])
    assert "in VMEM S(1)" in "".join(bars["%0"].itertext()) and "VMEM" not in "".join(bars["%a"].itertext())
