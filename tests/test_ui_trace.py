"""`:trace %v[i,j]` in the debugger: the path listed as steps, Enter on one moves the cursor there."""
from __future__ import annotations

import numpy as np
import pytest
from textual.widgets import OptionList

import hlodbg
from hlodbg.ui.app import HlodbgApp
from hlodbg.ui.screens.trace import TraceScreen

from .pilot import console_text, press, settle, type_command
from .test_lineage import NAN_CHAIN

SIZE = (140, 44)

pytestmark = pytest.mark.usefixtures("private_hlodbg_dirs")


def app_on(text: str, *args) -> HlodbgApp:
    return HlodbgApp(hlodbg.load(text), args=[np.asarray(a) for a in args], memory="256M", persist=False)


async def test_trace_lists_the_path_and_enter_on_a_step_goes_to_its_event():
    app = app_on(NAN_CHAIN, np.array([1, 2, 3, 4], np.float32))
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await press(app, pilot, "c")
        await type_command(app, pilot, "trace %d[2]")
        screen = app.screen
        assert isinstance(screen, TraceScreen)
        assert [s.value for s in screen.lineage.steps] == ["%d", "%c", "%b"]
        steps = screen.query_one(OptionList)
        assert steps.option_count == 3
        await press(app, pilot, "down", "down", "enter")  # the third step: the divide, the origin
        assert not isinstance(app.screen, TraceScreen)
        main = app.screen
        assert main.state.position == 1 and main.state.op.name == "stablehlo.divide"
        assert "trace of %d[2]: 3 step(s); origin: step 3" in console_text(main)
        await type_command(app, pilot, "trace")  # the list again, at the step gone to: walk on from there
        assert isinstance(app.screen, TraceScreen) and app.screen.query_one(OptionList).highlighted == 2
        await press(app, pilot, "up", "enter")
        assert main.state.position == 3 and main.state.op.name == "stablehlo.multiply"


async def test_trace_nan_runs_to_the_first_nan_and_escape_closes_the_list():
    app = app_on(NAN_CHAIN, np.array([1, 2, 3, 4], np.float32))
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await type_command(app, pilot, "trace nan")
        assert isinstance(app.screen, TraceScreen)
        assert app.screen.lineage.value == "%b" and app.screen.lineage.origin == 0
        await press(app, pilot, "escape")
        assert not isinstance(app.screen, TraceScreen)


async def test_trace_bad_input_says_so_in_the_console():
    app = app_on(NAN_CHAIN, np.array([1, 2, 3, 4], np.float32))
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await press(app, pilot, "c")
        await type_command(app, pilot, "trace %d[7]")
        await type_command(app, pilot, "trace d")
        await type_command(app, pilot, "trace")
        text = console_text(app.screen)
        assert "trace: [7] is not an element of %d (shape [4])" in text
        assert "alone, it shows the last trace (of this device's run) again" in text
        assert "trace takes a value and an element" in text
        assert not isinstance(app.screen, TraceScreen)


async def test_trace_inside_a_replayed_body_asks_to_leave_it_first():
    from .test_lineage import DOT

    app = app_on(DOT, np.ones((2, 3), np.float32), np.ones((3, 4), np.float32))
    async with app.run_test(size=SIZE) as pilot:
        await settle(app, pilot)
        await type_command(app, pilot, "goto 2")
        await press(app, pilot, "s")  # into the reduce's body, replayed as a region
        assert app.screen.controller.session.in_replay
        await type_command(app, pilot, "trace %d[0,0]")
        assert "trace follows the run itself: leave the replayed body first" in console_text(app.screen)
        assert not isinstance(app.screen, TraceScreen)
