"""The debugger's own panes, registered in the order the screen lays them out (ui/panes.py)."""
from __future__ import annotations

from hlodbg.layouts.graph import build_graph

from ..panes import PaneSpec, register_pane
from ..widgets.explain_pane import ExplainPane
from ..widgets.graph_canvas import GraphCanvas
from ..widgets.grid_view import GridView
from ..widgets.inspector import TensorInspector
from ..widgets.memory_pane import MemoryPanel
from ..widgets.panels import BreakpointsPanel, FramesPanel, StatusBar
from ..widgets.provenance_view import ProvenanceView
from ..widgets.source_view import SourceView


def _graph(screen, id: str) -> GraphCanvas:
    # Without a graph the pane builds it on its layout thread once the first state is drawn
    # (MainScreen._apply): a big program's panes come up at once, its graph a moment later.
    return GraphCanvas(screen.graph, build=lambda: build_graph(screen.program.module), build_on_mount=False, id=id)


def _source(screen, id: str) -> SourceView:
    return SourceView(screen.program.source, language=_language(screen.program), id=id)


def _language(program) -> str:
    """The language the program was written in (its frontend's name), for the source pane."""
    frontend = getattr(program, "frontend", None)
    return getattr(frontend, "name", "mlir")


GRAPH = register_pane(PaneSpec(GraphCanvas, "graph", "top", title="graph", make=_graph))
SOURCE = register_pane(PaneSpec(SourceView, "source", "top", make=_source))  # titled by the program's name
EXPLAIN = register_pane(PaneSpec(ExplainPane, "explain", "top", title="explain"))
INSPECTOR = register_pane(PaneSpec(TensorInspector, "inspector", "bottom", title="values"))
PROVENANCE = register_pane(PaneSpec(ProvenanceView, "provenance", "bottom", title="provenance"))
DEVICES = register_pane(PaneSpec(GridView, "grid", "bottom", present=lambda screen: screen.controller.target.multi_device))
MEMORY = register_pane(PaneSpec(MemoryPanel, "memory", "side"))
FRAMES = register_pane(PaneSpec(FramesPanel, "frames", "side"))
BREAKPOINTS = register_pane(PaneSpec(BreakpointsPanel, "breakpoints", "side"))
STATUS = register_pane(PaneSpec(StatusBar, "status", "foot"))

__all__ = ["BREAKPOINTS", "DEVICES", "EXPLAIN", "FRAMES", "GRAPH", "INSPECTOR", "MEMORY", "PROVENANCE", "SOURCE", "STATUS"]
