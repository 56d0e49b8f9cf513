"""Panes by contract (docs/architecture.md, "Adding a pane"): a new pane is one widget and one
registration. The walkthrough is followed here in a temporary module: its pane is laid out, is
handed every state, draws itself from it, and is gone again once unregistered."""
from __future__ import annotations

import importlib.util
import sys
import textwrap
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

import hlodbg
from hlodbg.ui.app import HlodbgApp
from hlodbg.ui.panes import PANES, PaneError, PaneSpec, needs_drawing, register_pane, unregister_pane
from hlodbg.ui.state import MemoryState, SessionState, WhereView

from .pilot import press, settle

ROOT = Path(__file__).resolve().parents[1]
NAN_PROGRAM = ROOT / "tests" / "data" / "nan_in_loop.mlir"

pytestmark = pytest.mark.usefixtures("private_hlodbg_dirs")

# The two steps of the walkthrough, as a module of their own.
TOY_PANE = '''
from textual.widgets import Static

from hlodbg.ui.panes import PaneSpec, register_pane
from hlodbg.ui.state import SessionState


class OpCounter(Static):
    shows = ("where",)
    drawn = 0

    def show_state(self, state: SessionState) -> None:
        self.drawn += 1
        op = state.where.op.name if state.where.op is not None else "the end"
        self.update(f"at event {state.where.position}: {op}")


SPEC = register_pane(PaneSpec(OpCounter, "op-counter", "side", title="toy"))
'''


@pytest.fixture
def toy_pane(tmp_path):
    path = tmp_path / "toy_pane.py"
    path.write_text(textwrap.dedent(TOY_PANE))
    spec = importlib.util.spec_from_file_location("toy_pane", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["toy_pane"] = module
    spec.loader.exec_module(module)
    try:
        yield module
    finally:
        if module.SPEC in PANES:
            unregister_pane(module.SPEC)
        del sys.modules["toy_pane"]


def nan_app() -> HlodbgApp:
    return HlodbgApp(hlodbg.load(NAN_PROGRAM), args=[np.full(4, 100, np.float32)], memory="1G", persist=False)


async def test_a_pane_registered_in_a_module_of_its_own_shows_each_state(toy_pane):
    app = nan_app()
    async with app.run_test(size=(140, 44)) as pilot:
        await settle(app, pilot)
        pane = app.screen.query_one("#op-counter", toy_pane.OpCounter)
        assert pane.parent.id == "side" and pane.border_title == "toy"
        assert str(pane.render()) == "at event 0: stablehlo.constant" and pane.drawn == 1
        await press(app, pilot, "n")
        state = app.screen.state
        assert state.op.name == "stablehlo.while"
        assert str(pane.render()) == f"at event {state.position}: stablehlo.while" and pane.drawn == 2
        # A change to a view the pane does not show leaves it alone.
        app.screen._show_state(replace(state, memory=MemoryState(error="not counted here")))
        assert pane.drawn == 2
    unregister_pane(toy_pane.SPEC)
    app = nan_app()
    async with app.run_test(size=(140, 44)) as pilot:
        await settle(app, pilot)
        assert not app.screen.query("#op-counter")


def test_the_contract_is_checked_when_a_pane_registers():
    class Shows:
        shows = ("wherever",)

        def show_state(self, state):
            pass

    class Draws:
        shows = ("where",)

    with pytest.raises(PaneError, match="shows wherever, which SessionState does not have"):
        register_pane(PaneSpec(Shows, "shows-wherever", "side"))
    with pytest.raises(PaneError, match="has no show_state"):
        register_pane(PaneSpec(Draws, "draws-nothing", "side"))
    with pytest.raises(PaneError, match="area 'left' is not one of top, bottom, side, foot"):
        register_pane(PaneSpec(Draws, "leftish", "left"))
    with pytest.raises(PaneError, match="'frames' is registered already"):
        register_pane(PaneSpec(Draws, "frames", "side"))
    assert not {"shows-wherever", "draws-nothing", "leftish"} & {spec.id for spec in PANES}


def test_a_pane_draws_a_state_whose_views_it_shows_are_new():
    class Where:
        shows = ("where",)

    first = SessionState(WhereView(0, 0, False, None))
    assert needs_drawing(Where, first, None)
    assert not needs_drawing(Where, replace(first, memory=MemoryState(error="x")), first)
    assert needs_drawing(Where, replace(first, where=WhereView(0, 0, False, None)), first)
