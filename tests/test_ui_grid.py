"""The debugger on a grid: the grid view follows a collective step by step, per device."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import hlodbg
from hlodbg.engine.machine.process import ProcessId
from hlodbg.ui.app import HlodbgApp
from hlodbg.ui.widgets.grid_view import GridView
from hlodbg.ui.widgets.inspector import TensorInspector

from .pilot import press, settle

RING = Path(__file__).parent / "data" / "grid_ring.mlir"
X = np.array([1.0, 2.0], np.float32)
pytestmark = pytest.mark.usefixtures("private_hlodbg_dirs")


def lines_of(view: GridView, device: int) -> dict[str, str]:
    out = {}
    for line in view.text_of(device).splitlines():
        head, _, rest = line.partition(" ")
        out[head] = rest
    return out


async def test_grid_view_steps_through_a_collective_device_by_device():
    app = HlodbgApp(hlodbg.load(RING), args=[X], memory="256M", persist=False)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        screen = app.screen
        view = screen.query_one(GridView)
        assert len(view.cells) == 4 and view.cells[0].focused
        await press(app, pilot, "n", "n", "n", "n")  # to the all_reduce
        assert screen.state.op.name == "stablehlo.all_reduce"
        assert view.border_title == "devices · %sum = stablehlo.all_reduce"
        for device in range(4):
            cell = lines_of(view, device)
            mine = X + device
            partner = X + (device ^ 1)
            assert cell["group"] == ("0,1" if device < 2 else "2,3")
            assert cell["in"].strip() == f"2xf32 [{mine[0]:g} {mine[1]:g}]"  # small values: each device's own
            total = mine + partner
            assert cell["out"] == f"2xf32 [{total[0]:g} {total[1]:g}]"
            assert "%sum = all_reduce" in view.text_of(device)  # all in lock-step
        await press(app, pilot, "n")  # the ring
        assert view.border_title == "devices · %ring = stablehlo.collective_permute"
        for device in range(4):
            text = view.text_of(device)
            assert f"→ d{(device + 1) % 4}" in text and f"← d{(device - 1) % 4}" in text
            came = X + (device - 1) % 4
            assert lines_of(view, device)["out"] == f"2xf32 [{came[0]:g} {came[1]:g}]"  # what it received
        # A cell click opens that device's full value in the inspector.
        await pilot.click(GridView, offset=view.offset_of(2))
        await settle(app, pilot)
        text = screen.query_one(TensorInspector).render_text()
        assert text.startswith("device 2 (replica 2, partition 0): %ring = stablehlo.collective_permute")
        assert "0: 2 3" in text  # device 1's x + 1 arrived at device 2
        # w: the focused device moves alone; the others wait at the permute for it.
        await press(app, pilot, "w", "n")
        assert screen.state.op.name == "stablehlo.all_gather"
        # Device 0 waits at the all_gather for the others; 1 and 3 wait at the ring for device 0,
        # their partner there; device 2's partners (1 and 3) are both at the ring with it.
        assert ["waits for its group" in view.text_of(d) for d in range(4)] == [True, True, False, True]
        assert [c.op_text for c in view.cells] == ["%all = all_gather"] + ["%ring = collective_permute"] * 3
        assert "alone" in str(screen.query_one("#status").render())
        await press(app, pilot, "w", "N")
        assert all("waits" not in view.text_of(d) for d in range(4))
        # D focuses the next device; the status bar and the cells say so.
        await press(app, pilot, "D")
        assert app.controller.target.focus == ProcessId(1, 0) and view.cells[1].focused
        assert "device 1 of 4" in str(screen.query_one("#status").render())


async def test_breakpoint_on_one_device_focuses_it():
    app = HlodbgApp(hlodbg.load(RING), args=[X], memory="256M", persist=False)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        screen = app.screen
        await pilot.press("colon")
        for ch in "break %all on 3,0":
            await pilot.press(ch if ch != " " else "space")
        await pilot.press("enter")
        await settle(app, pilot)
        await press(app, pilot, "c")
        grid = app.controller.target
        assert screen.state.stop_reason == "breakpoint" and grid.focus == ProcessId(3, 0)
        assert screen.state.op.name == "stablehlo.all_gather"
        assert all(s.op is screen.state.op for s in grid.sessions.values())


@pytest.mark.parametrize("size", [(200, 55), (100, 30)])
async def test_an_eight_device_mesh_fits_the_pane_and_names_mesh_coordinates(size):
    from rich.cells import cell_len

    from .helpers import SHARED, require_shared

    require_shared()
    program = hlodbg.load(SHARED / "programs" / "sharded_mlp_4x2.mlir")
    app = HlodbgApp(program, memory="256M", persist=False, break_on="all_gather")
    async with app.run_test(size=size) as pilot:
        await settle(app, pilot)
        view = app.screen.query_one(GridView)
        assert app.screen.state.op.name == "stablehlo.all_gather" and len(view.cells) == 8
        assert "x=1 y=0" in view.text_of(2) and "x=3 y=1" in view.text_of(7)
        lines = view.rendered_text().splitlines()
        widest = max(cell_len(line) for line in lines)
        if size[0] == 200:  # the 2 columns of the 4x2 mesh fit side by side: no line is cut or wrapped
            assert widest <= view.scrollable_content_region.width and view.max_scroll_x == 0
        if len(lines) > view.scrollable_content_region.height:
            assert view.max_scroll_y > 0  # the last rows (d6, d7) are a scroll away, never cut off
        view.scroll_end(animate=False)
        await pilot.pause()
        await pilot.click(GridView, offset=view.offset_of(7))
        await settle(app, pilot)
        assert app.screen.query_one(TensorInspector).render_text().startswith("device 7")
