"""Random key sequences never break the debugger: no failed worker, no internal error, and the
session still answers afterwards."""
from __future__ import annotations

import random
from pathlib import Path

import pytest

import hlodbg
from hlodbg.ui.app import HlodbgApp
from hlodbg.ui.screens.main import MainScreen

from .pilot import press, settle

ROOT = Path(__file__).resolve().parents[1]
KEYS = list("nsfcNSFCtbrgveadxyzouwDT.+-HJKL[]hjkl") + ["pagedown", "pageup", "greater_than_sign", "less_than_sign",
                                                         "enter", "backspace", "escape", "question_mark", "escape"]
pytestmark = pytest.mark.usefixtures("private_hlodbg_dirs")


@pytest.mark.parametrize("path,seed", [(ROOT / "sample_programs" / "tiny_model.mlir", 0), (ROOT / "tests" / "data" / "grid_ring.mlir", 1)],
                         ids=["tiny_model", "grid_ring"])
async def test_random_keys(path, seed):
    rng = random.Random(seed)
    app = HlodbgApp(hlodbg.load(path), memory="256M", persist=False)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot)
        for i in range(80):
            await pilot.press(rng.choice(KEYS))
            if i % 5 == 4:
                await settle(app, pilot)
        await settle(app, pilot)
        while not isinstance(app.screen, MainScreen):
            await press(app, pilot, "escape")
        await press(app, pilot, "escape")  # out of the command line if `g` or `/` left it focused
        screen = app.screen
        assert not [w for w in app.workers if w.error]
        console = [str(line.text) for line in screen.query_one("#console").lines]
        assert not [line for line in console if "internal error" in line]
        await press(app, pilot, "r", "n")
        assert screen.state.position >= 1 and screen.state.stop_reason == "step"
