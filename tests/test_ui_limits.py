"""The debugger UI on inputs at the edges: a source line of millions of characters, a graph too big
to lay out in one piece."""
from __future__ import annotations

import numpy as np
import pytest

import hlodbg
from hlodbg.ui.app import HlodbgApp
from hlodbg.ui.widgets import source_view
from hlodbg.ui.widgets.source_view import MAX_LINE_CHARS, SourceView

from .pilot import press, settle

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
