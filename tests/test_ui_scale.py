"""The debugger UI opens a generated 100k-op program (benchmarks/scale_programs.py): every pane
shows, the graph pane draws boxes of the folded @main, a step moves every pane, and a folded box
opens. No timing is asserted; the waits are bounded only so that a hang fails instead of stalling."""
from __future__ import annotations

import asyncio
import time

import numpy as np
import pytest

import hlodbg
from hlodbg.ui.app import HlodbgApp

from .pilot import settle
from .scale_helpers import write_layered_program

pytestmark = pytest.mark.usefixtures("private_hlodbg_dirs")
SIZE = (160, 48)
OPS = 100_000
PATIENCE = 900.0  # seconds: a loaded 2-core machine, not a figure to hold (benchmarks/ui.py --ops measures)


async def _until(condition, what: str) -> None:
    deadline = time.monotonic() + PATIENCE
    while not condition():
        assert time.monotonic() < deadline, f"still waiting for {what} after {PATIENCE:.0f} s"
        await asyncio.sleep(0.05)


async def test_a_100k_op_program_opens_with_every_pane_and_its_graph_and_steps(tmp_path):
    from hlodbg.ui.widgets.graph_canvas import GraphCanvas
    from hlodbg.ui.widgets.inspector import TensorInspector
    from hlodbg.ui.widgets.source_view import SourceView

    path = write_layered_program(tmp_path, OPS)
    arguments = np.load(path.with_suffix(".npz"))
    program = hlodbg.load(path)
    assert program.op_count > 90_000
    app = HlodbgApp(program, args=[arguments[f"arg{k}"] for k in range(len(arguments.files))], memory="1G", persist=False)
    async with app.run_test(size=SIZE) as pilot:
        await _until(lambda: getattr(app.screen, "state", None) is not None, "the first state")
        screen = app.screen
        canvas = screen.query_one(GraphCanvas)
        await _until(lambda: canvas.shown_scene is not None and canvas.shown_scene.boxes and not canvas.laying_out, "the graph")
        await settle(app, pilot)
        for pane in ("#graph", "#source", "#inspector", "#frames", "#breakpoints", "#status"):
            widget = screen.query_one(pane)
            assert widget.display and widget.size.width > 0 and widget.size.height > 0, pane
        scene = canvas.shown_scene
        assert 0 < len(scene.boxes) <= 200 and scene.root == "fn:main"  # folded: a small scene of a huge function
        assert canvas.current_node is not None and any(line.strip(" │╭╮╰╯─") for line in canvas.visible_text())
        source = screen.query_one(SourceView)
        first = screen.state.position
        assert source.current_line == screen.state.op.pos.line

        await pilot.press("n")
        await _until(lambda: screen.state.position != first, "a step")
        await settle(app, pilot)
        assert screen.state.position == first + 1 and source.current_line == screen.state.op.pos.line
        assert screen.query_one(TensorInspector).border_title

        folded = [box.node for box in canvas.shown_scene.boxes.values() if box.cluster is not None]
        assert folded
        cluster = canvas.shown_scene.boxes[folded[-1]].cluster
        canvas.select(folded[-1])
        assert canvas.open_selected()
        await _until(lambda: canvas.scene is not None and canvas.scene.root == cluster and not canvas.laying_out, "the opened cluster")
        assert canvas.shown_scene.boxes
