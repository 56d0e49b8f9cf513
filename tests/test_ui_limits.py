"""The debugger UI on inputs at the edges: a source line of millions of characters, a graph too big
to lay out in one piece."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import hlodbg
from hlodbg.ui.app import HlodbgApp
from hlodbg.ui.widgets import source_view
from hlodbg.ui.widgets.source_view import MAX_LINE_CHARS, SourceView

from .pilot import press, settle

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.usefixtures("private_hlodbg_dirs")
SIZE = (140, 44)


def long_line_program(elements: int) -> str:
    data = np.arange(elements, dtype=np.float32)
    t = f"tensor<{elements}xf32>"
    return (f'func.func @main(%x: {t}) -> {t} {{\n  %0 = stablehlo.constant dense<"0x{data.tobytes().hex().upper()}"> : {t}\n'
            f"  %1 = stablehlo.add %x, %0 : {t}\n  %2 = stablehlo.multiply %1, %0 : {t}\n  return %2 : {t}\n}}\n")


async def test_a_huge_source_line_is_clipped_highlighted_once_and_stepping_works(monkeypatch, tmp_path):
    highlighted: list[int] = []
    real_highlight = source_view.Syntax.highlight

    def counting_highlight(self, code, *args, **kwargs):
        highlighted.append(len(code))
        return real_highlight(self, code, *args, **kwargs)

    monkeypatch.setattr(source_view.Syntax, "highlight", counting_highlight)
    path = tmp_path / "long_line.mlir"
    path.write_text(long_line_program(250_000))  # a 2-million-character line
    app = HlodbgApp(hlodbg.load(path), memory="256M", persist=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        source = app.screen.query_one(SourceView)
        shown, full = source.line_text(2), path.read_text().split("\n")[1]
        assert shown == f"{full[:MAX_LINE_CHARS]} … (+{len(full) - MAX_LINE_CHARS:,} chars)"
        assert source.virtual_size.width < MAX_LINE_CHARS + 60
        assert highlighted and max(highlighted) < 10 * MAX_LINE_CHARS
        times_highlighted = len(highlighted)
        await press(app, pilot, "n", "n")
        assert app.screen.state.op.name == "stablehlo.multiply" and source.current_line == 4
        await press(app, pilot, "N")
        assert app.screen.state.op.name == "stablehlo.add" and source.current_line == 3
        assert len(highlighted) == times_highlighted  # stepping never highlights again


def layered_program(layers: int) -> str:
    """An MLP as JAX lowers it without locations: one weight argument and three ops per layer."""
    t, w = "tensor<2x4xf32>", "tensor<4x4xf32>"
    args = ", ".join([f"%x: {t}"] + [f"%w{i}: {w}" for i in range(layers)])
    lines = [f"func.func @main({args}) -> {t} {{", f"  %one = stablehlo.constant dense<1.0> : {t}"]
    previous = "%x"
    for i in range(layers):
        lines += [f"  %d{i} = stablehlo.dot_general {previous}, %w{i}, contracting_dims = [1] x [0] : ({t}, {w}) -> {t}",
                  f"  %a{i} = stablehlo.add %d{i}, %one : {t}", f"  %h{i} = stablehlo.tanh %a{i} : {t}"]
        previous = f"%h{i}"
    return "\n".join(lines + [f"  return {previous} : {t}", "}"]) + "\n"


def count_layouts(monkeypatch) -> list[int]:
    """The node counts of every view the scenes hand to compute_layout, as they come."""
    from hlodbg.layouts import layout

    laid_out: list[int] = []
    real_compute_layout = layout.compute_layout

    def counting_layout(view, *args, **kwargs):
        laid_out.append(view.node_count)
        return real_compute_layout(view, *args, **kwargs)

    monkeypatch.setattr("hlodbg.layouts.scene.compute_layout", counting_layout)
    return laid_out


async def test_a_function_of_thousands_of_layers_opens_folded_into_small_scenes(tmp_path, monkeypatch):
    from hlodbg.layouts.grouping import MAX_CLUSTER_ITEMS
    from hlodbg.layouts.scene import MAX_SCENE_NODES
    from hlodbg.ui.widgets.graph_canvas import GraphCanvas

    laid_out = count_layouts(monkeypatch)
    path = tmp_path / "mlp.mlir"
    # @main is 2,600 layers and 2,601 arguments: folded into chunks of layers (each argument
    # beside its layer), no scene of it is too big to lay out any more.
    path.write_text(layered_program(2600))
    app = HlodbgApp(hlodbg.load(path), memory="256M", persist=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        canvas = app.screen.query_one(GraphCanvas)
        assert canvas.shown_scene is not None and not canvas.laying_out
        assert canvas.current_node in canvas.shown_scene.boxes
        # The function's chunks, with the chunks and the layer around the current op opened.
        assert len(canvas.shown_scene.boxes) <= 3 * (MAX_CLUSTER_ITEMS + 1)
        assert f"more than {MAX_SCENE_NODES:,} can be laid out" not in (canvas.border_subtitle or "")
        await press(app, pilot, "n", "n", "n", "n")  # into the second layer
        assert app.screen.state.op.name == "stablehlo.dot_general" and canvas.current_node in canvas.shown_scene.boxes
        assert laid_out and max(laid_out) <= 3 * (MAX_CLUSTER_ITEMS + 1)  # nothing big was ever handed to Graphviz


async def test_a_function_too_big_to_lay_out_shows_a_smaller_view_and_says_why(tmp_path, monkeypatch):
    from hlodbg.ui.widgets.graph_canvas import FALLBACK_NODES, GraphCanvas

    laid_out = count_layouts(monkeypatch)
    # Folded with a bounded fan-out no scene of @main is big, and the layered layout takes any
    # size: Graphviz alone, with a limit below the folded @main's size, meets the same case.
    limit = 20
    monkeypatch.setattr("hlodbg.layouts.scene.MAX_SCENE_NODES", limit)
    monkeypatch.setenv("HLODBG_LAYOUT_ENGINE", "graphviz")
    path = tmp_path / "mlp.mlir"
    path.write_text(layered_program(2600))
    app = HlodbgApp(hlodbg.load(path), memory="256M", persist=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        canvas = app.screen.query_one(GraphCanvas)
        assert canvas.shown_scene is not None and not canvas.laying_out
        assert canvas.current_node in canvas.shown_scene.boxes
        size = canvas.builder.view("fn:main").node_count
        assert size > limit
        why = f"func @main has {size:,} nodes, more than {limit:,} can be laid out; showing "
        assert canvas.border_subtitle.startswith(why) and canvas.visible_text()[0].startswith(" " + why[:40])
        await press(app, pilot, "n", "n", "n", "n")  # into the second layer
        assert app.screen.state.op.name == "stablehlo.dot_general" and canvas.current_node in canvas.shown_scene.boxes
        assert laid_out and max(laid_out) <= FALLBACK_NODES  # nothing big was ever handed to Graphviz


async def test_a_graphviz_that_never_finishes_is_stopped_and_the_pane_says_so(tmp_path, monkeypatch):
    from hlodbg.ui.widgets.graph_canvas import GraphCanvas

    fake = tmp_path / "dot"
    fake.write_text('#!/bin/sh\n[ "$1" = -V ] && { echo "fake dot" >&2; exit 0; }\ncat > /dev/null\nexec sleep 600\n')
    fake.chmod(0o755)
    monkeypatch.setenv("HLODBG_DOT", str(fake))
    monkeypatch.setenv("HLODBG_LAYOUT_TIMEOUT", "0.3")
    monkeypatch.setenv("HLODBG_LAYOUT_ENGINE", "graphviz")  # "auto" would draw it with the layered layout
    app = HlodbgApp(hlodbg.load(ROOT / "tests" / "data" / "nan_in_loop.mlir"), memory="256M", persist=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        canvas = app.screen.query_one(GraphCanvas)
        assert not canvas.laying_out and canvas.shown_scene is None
        assert "Graphviz took longer than 0.3 s and was stopped" in "\n".join(canvas.visible_text())
        await press(app, pilot, "n")
        assert app.screen.state.op.name == "stablehlo.while" and not canvas.laying_out
