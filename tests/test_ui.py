"""The Textual app opens a program, lists its ops and shows the selected op with its source line."""
from __future__ import annotations

import hlodbg
from hlodbg.samples import default_sample_path
from hlodbg.ui.app import ProgramApp, SourcePane


async def test_selecting_an_op_shows_details_and_source_line():
    program = hlodbg.load(default_sample_path())
    app = ProgramApp(program)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press("down", "down", "down")  # root -> @main -> constant -> while
        await pilot.pause()
        tree = app.query_one("#ops")
        op = tree.cursor_node.data
        assert op.name == "stablehlo.while"
        assert app.selected_op is op
        screen = app.export_screenshot()
        assert "tiny_model.py:34:8" in screen and "jit(model)/while" in screen
        source = app.query_one(SourcePane)
        assert source.scroll_y == max(0, op.pos.line - 6)
        await pilot.press("q")
    assert app.return_code in (0, None)


def test_embedded_sample_is_packaged():
    assert default_sample_path().is_file()
    program = hlodbg.load(default_sample_path())
    assert set(program.functions) == {"main", "closed_call"}
    assert any(op.name == "stablehlo.while" for op in program.ops)
    assert any(op.name == "stablehlo.reduce" for op in program.ops)
