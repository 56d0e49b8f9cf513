"""SVG snapshots of the debugger at a fixed terminal size (pytest-textual-snapshot).

After an intended change of looks, regenerate with:
    .venv/bin/python -m pytest tests/test_ui_snapshots.py --snapshot-update
and look at the SVGs under tests/__snapshots__/ before committing them.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import hlodbg
from hlodbg.engine.ir.errors import ParseError
from hlodbg.samples import default_sample_path
from hlodbg.ui.app import HlodbgApp

DATA = Path(__file__).resolve().parent / "data"
SIZE = (120, 36)


pytestmark = pytest.mark.usefixtures("private_hlodbg_dirs")


async def settled(pilot) -> None:
    for _ in range(3):
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()


def sample_app() -> HlodbgApp:
    program = hlodbg.load(default_sample_path())
    rng = np.random.default_rng(0)
    args = [rng.standard_normal(t.shape).astype(np.float32) for t in program.entry.function_type.inputs]
    return HlodbgApp(program, args=args, memory="1G", persist=False)


def test_main_screen(snap_compare):
    async def steps(pilot):
        await settled(pilot)
        for key in ("n", "s", "s", "s", "s"):
            await pilot.press(key)
            await settled(pilot)

    assert snap_compare(sample_app(), terminal_size=SIZE, run_before=steps)


def test_inspector_on_a_3d_tensor(snap_compare):
    program = hlodbg.load(DATA / "cube.mlir")
    app = HlodbgApp(program, args=[np.float32(0.5)], memory="1G", persist=False)

    async def to_the_cube(pilot):
        await settled(pilot)
        for key in ("n", "n", "n", "n", "n", "right_square_bracket"):
            await pilot.press(key)
            await settled(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=to_the_cube)


def test_help_screen(snap_compare):
    async def open_help(pilot):
        await settled(pilot)
        await pilot.press("question_mark")
        await settled(pilot)

    assert snap_compare(sample_app(), terminal_size=SIZE, run_before=open_help)


def test_error_screen(snap_compare):
    with pytest.raises(ParseError) as caught:
        hlodbg.load("func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n  %0 = stablehlo.add %a, %zz : tensor<2xf32>\n  return %0 : tensor<2xf32>\n}\n")
    assert snap_compare(HlodbgApp(error=caught.value), terminal_size=SIZE)


def test_provenance_view(snap_compare):
    program = hlodbg.load(DATA / "teaching.mlir")
    operand = np.arange(12, dtype=np.float32).reshape(3, 4)
    app = HlodbgApp(program, args=[operand, np.array([[2], [5]], np.int32), np.eye(2, dtype=np.float32)], memory="1G", persist=False)

    async def point_at_an_element(pilot):
        await settled(pilot)
        for key in ("n", "shift+down", "shift+down", "shift+right"):
            await pilot.press(key)
            await settled(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=point_at_an_element)
