"""Graphviz never runs unbounded: no layout of more than MAX_LAYOUT_NODES nodes is started, and
each run is killed past its time or memory limit with a clear message."""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from hlodbg.cli import main
from hlodbg.layouts import layout as layout_module
from hlodbg.layouts.export import graph_view
from hlodbg.layouts.graphviz import GraphvizError, LayoutLimitError, find_graphviz, layout_memory_limit, run_graphviz
from hlodbg.layouts.layout import MAX_LAYOUT_NODES, compute_layout
from hlodbg.layouts.scene import SceneBuilder
from hlodbg.program import load

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_programs" / "tiny_model.mlir"
linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="memory limits use Linux's prlimit")


pytestmark = pytest.mark.usefixtures("private_layout_cache")


def fake_dot(tmp_path: Path, monkeypatch, body: str, interpreter: str = "/bin/sh") -> Path:
    """An executable standing in for Graphviz: it answers `-V`, logs each layout run to `runs`,
    then does `body`."""
    runs = tmp_path / "runs"
    script = tmp_path / "fake-dot"
    if interpreter == "/bin/sh":
        prologue = f'[ "$1" = -V ] && {{ echo "fake dot" >&2; exit 0; }}\necho run >> {runs}'
    else:
        prologue = f"import sys\nif sys.argv[1:] == ['-V']: sys.exit(0)\nopen({str(runs)!r}, 'a').write('run\\n')"
    script.write_text(f"#!{interpreter}\n{prologue}\n{body}\n")
    script.chmod(0o755)
    monkeypatch.setenv("HLODBG_DOT", str(script))
    return runs


def run_count(runs: Path) -> int:
    return len(runs.read_text().splitlines()) if runs.exists() else 0


def gone(pid: int) -> bool:
    """Whether process `pid` has ended (waits a little: its reaping is asynchronous)."""
    for _ in range(100):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


def chain_program(ops: int) -> str:
    body = "\n".join(f"  %v{i + 1} = stablehlo.add %v{i}, %v{i} : tensor<f32>" for i in range(ops))
    return f"func.func @main(%v0: tensor<f32>) -> tensor<f32> {{\n{body}\n  return %v{ops} : tensor<f32>\n}}\n"


def test_a_graphviz_that_hangs_is_killed_with_what_it_started(tmp_path, monkeypatch):
    started = tmp_path / "started"
    fake_dot(tmp_path, monkeypatch, f"cat > /dev/null\nsleep 600 &\necho $! > {started}\nwait")
    with pytest.raises(LayoutLimitError, match=r"Graphviz took longer than 0.5 s and was stopped"):
        run_graphviz("digraph { a -> b }", "json", timeout=0.5)
    assert gone(int(started.read_text()))  # the wrapper's child too, not only the wrapper


def test_the_time_limit_can_be_shortened_from_the_environment(tmp_path, monkeypatch):
    fake_dot(tmp_path, monkeypatch, "cat > /dev/null\nexec sleep 600")
    monkeypatch.setenv("HLODBG_LAYOUT_TIMEOUT", "0.5")
    with pytest.raises(LayoutLimitError, match="longer than 0.5 s"):
        compute_layout(graph_view(load(SAMPLE).module), use_cache=False, engine="graphviz")


def test_auto_runs_no_graphviz(tmp_path, monkeypatch):
    """"auto" is the layered layout: a Graphviz that would never finish is not even started;
    asked for by name, it is, and stopped at its time limit."""
    runs = fake_dot(tmp_path, monkeypatch, "cat > /dev/null\nexec sleep 600")
    view = graph_view(load(SAMPLE).module)
    layout = compute_layout(view)
    assert layout.engine == "layered" and set(layout.nodes) == set(view.graph.nodes) and run_count(runs) == 0
    with pytest.raises(LayoutLimitError, match="longer than 0.5 s"):
        compute_layout(view, use_cache=False, engine="graphviz", timeout=0.5)
    monkeypatch.setenv("HLODBG_LAYOUT_ENGINE", "graphviz")
    with pytest.raises(LayoutLimitError, match="longer than 0.5 s"):
        compute_layout(view, use_cache=False, timeout=0.5)


@linux_only
def test_a_graphviz_that_eats_memory_stops_at_its_limit(tmp_path, monkeypatch):
    # Reads its input as dot does, then asks for 1 GiB more than it may have.
    fake_dot(tmp_path, monkeypatch, "sys.stdin.buffer.read()\nhoard = bytearray(1 << 30)\nprint('{}')", sys.executable)
    monkeypatch.setenv("HLODBG_LAYOUT_MEMORY", "256M")
    with pytest.raises(LayoutLimitError, match=r"stopped at its memory limit of 256.0 MiB"):
        run_graphviz("digraph { a -> b }", "json")


def test_the_memory_limit_is_never_above_2_gib(monkeypatch):
    monkeypatch.delenv("HLODBG_LAYOUT_MEMORY", raising=False)
    assert (1 << 30) <= layout_memory_limit() <= 2 << 30
    monkeypatch.setenv("HLODBG_LAYOUT_MEMORY", "16G")
    assert layout_memory_limit() == 2 << 30
    monkeypatch.setenv("HLODBG_LAYOUT_MEMORY", "300M")
    assert layout_memory_limit() == 300 << 20


def wide_chain(layers: int, width: int) -> str:
    edges = (f"n{i}_{w} -> n{i + 1}_{(w * 7 + 1) % width};" for i in range(layers) for w in range(width))
    return "digraph g {\n" + "\n".join(edges) + "\n}\n"


@linux_only
def test_the_real_graphviz_is_stopped_at_a_lowered_memory_limit(monkeypatch):
    """The Graphviz hlodbg runs, not a stand-in: within 128 MiB it lays out a small graph, and a
    15,000-node one that needs more is stopped with a clear LayoutLimitError."""
    try:
        find_graphviz()
    except GraphvizError:
        pytest.skip("no Graphviz here")
    monkeypatch.setenv("HLODBG_LAYOUT_MEMORY", "128M")
    monkeypatch.setenv("HLODBG_LAYOUT_TIMEOUT", "300")
    assert run_graphviz("digraph { a -> b }", "json").startswith(b"{")
    with pytest.raises(LayoutLimitError, match=r"stopped at its memory limit of 128.0 MiB") as stopped:
        run_graphviz(wide_chain(1500, 10), "json")
    assert any("--focus" in note for note in stopped.value.notes)


def test_no_layout_of_more_nodes_than_the_cap_is_started(tmp_path, monkeypatch):
    runs = fake_dot(tmp_path, monkeypatch, "cat > /dev/null\necho '{}'")
    view = graph_view(load(SAMPLE).module)
    monkeypatch.setattr(layout_module, "MAX_LAYOUT_NODES", view.node_count - 1)
    with pytest.raises(LayoutLimitError, match=rf"the graph has {view.node_count} nodes, more than the {view.node_count - 1} one layout may have"):
        compute_layout(view, use_cache=False, engine="graphviz")
    assert run_count(runs) == 0


def test_export_of_a_graph_above_the_cap_is_a_clear_message_and_runs_no_graphviz(tmp_path, monkeypatch, capsys):
    runs = fake_dot(tmp_path, monkeypatch, "cat > /dev/null\necho '{}'")
    path = tmp_path / "chain.mlir"
    path.write_text(chain_program(MAX_LAYOUT_NODES + 10))
    for name in ("chain.svg", "chain.png", "chain.json"):  # the layered layout would take it; Graphviz may not
        assert main(["export", str(path), "-o", str(tmp_path / name), "--engine", "graphviz"]) == 2
        err = capsys.readouterr().err
        assert f"more than the {MAX_LAYOUT_NODES:,} one layout may have" in err and "--focus" in err and "Traceback" not in err
        assert run_count(runs) == 0 and not (tmp_path / name).exists()
    # A neighbourhood of it exports.
    assert main(["export", str(path), "-o", str(tmp_path / "part.dot"), "--focus", "%v100", "--radius", "3"]) == 0


def test_a_scene_graphviz_gave_up_on_is_not_laid_out_again(tmp_path, monkeypatch):
    runs = fake_dot(tmp_path, monkeypatch, "cat > /dev/null\nexec sleep 600")
    monkeypatch.setenv("HLODBG_LAYOUT_ENGINE", "graphviz")  # "auto" would draw it with the layered layout
    builder = SceneBuilder(graph_view(load(SAMPLE).module), timeout=0.5)
    for _ in range(2):
        with pytest.raises(LayoutLimitError, match="longer than 0.5 s"):
            builder.scene("fn:main")
    assert run_count(runs) == 1


def test_a_png_is_the_layered_svg_converted_and_graphviz_draws_its_own_on_request(tmp_path, monkeypatch, capsys):
    """A PNG shows the same drawing as the SVG (the layered layout's, converted by rsvg-convert),
    so a hung Graphviz is never started for it; `--engine graphviz` draws Graphviz's PNG, within
    the time limit."""
    import shutil

    if shutil.which("rsvg-convert") is None:
        pytest.skip("rsvg-convert is not installed")
    runs = fake_dot(tmp_path, monkeypatch, "cat > /dev/null\nexec sleep 600")
    assert main(["export", str(SAMPLE), "-o", str(tmp_path / "g.png")]) == 0
    assert (tmp_path / "g.png").read_bytes().startswith(b"\x89PNG") and run_count(runs) == 0
    capsys.readouterr()
    monkeypatch.setenv("HLODBG_LAYOUT_TIMEOUT", "0.5")
    assert main(["export", str(SAMPLE), "-o", str(tmp_path / "gv.png"), "--engine", "graphviz"]) == 2
    err = capsys.readouterr().err
    assert "longer than 0.5 s" in err and "Traceback" not in err
    assert run_count(runs) == 1 and not (tmp_path / "gv.png").exists()


def test_without_rsvg_convert_a_png_is_still_made_by_graphviz_and_says_so(tmp_path, monkeypatch, capsys):
    """A fresh machine has Graphviz (a dependency) but maybe not librsvg: the PNG is then
    Graphviz's drawing, with a note saying so, rather than no PNG at all."""
    import shutil

    from hlodbg.layouts import svg_png

    real_which = shutil.which
    monkeypatch.setattr(svg_png.shutil, "which",
                        lambda name, *a, **k: None if name == svg_png.CONVERTER else real_which(name, *a, **k))
    monkeypatch.delenv("HLODBG_RSVG", raising=False)
    assert main(["export", str(SAMPLE), "-o", str(tmp_path / "g.png")]) == 0
    assert (tmp_path / "g.png").read_bytes().startswith(b"\x89PNG")
    err = capsys.readouterr().err
    assert "drawn by Graphviz" in err and "rsvg-convert" in err


def test_a_big_drawing_becomes_a_png_of_bounded_size():
    """A PNG export of a tall graph (gpt_tiny: 2,000 x 11,000 pt) is converted at a lower zoom
    rather than as a 160-megapixel image; small drawings keep the sharp default."""
    from hlodbg.layouts.svg_png import MAX_PNG_PIXELS, PIXELS_PER_POINT, PNG_ZOOM, fitting_zoom

    tall = '<?xml version="1.0"?>\n<svg width="2000pt" height="11000pt" viewBox="0 0 2000 11000">'
    zoom = fitting_zoom(tall)
    assert zoom < PNG_ZOOM
    assert (2000 * zoom * PIXELS_PER_POINT) * (11000 * zoom * PIXELS_PER_POINT) == pytest.approx(MAX_PNG_PIXELS)
    assert fitting_zoom('<svg width="300pt" height="200pt" viewBox="0 0 300 200">') == PNG_ZOOM
