"""Which scene the graph pane draws for a request, and what it draws when that scene cannot be.

A View names a scene: a cluster with some clusters inside drawn open, or the neighbourhood of a
node (focus). SceneViews lays a requested view out with its SceneBuilder, at the view's zoom.
When the request must show a node (`reveal`) and the view has no box of its own for it, or when
the view is too big to lay out (too many nodes, or Graphviz past its time or memory limit), it
tries the next view that can be drawn: the node's function with its clusters open, its own
cluster, its neighbourhood, and for a view too big, a smaller one of at most FALLBACK_NODES nodes.
The result says why another view than the one asked for is shown.

It also names clusters, nodes and views in the user's words, for the pane's title and notes.
Nothing here touches the terminal: ui/widgets/graph_canvas.py runs `lay_out` on its layout
thread and paints the result.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Optional

from hlodbg.engine.ir.errors import HlodbgError

from .graph import DataflowGraph
from .graphviz import LayoutLimitError
from .scene import COLLAPSED_PREFIX, Scene, SceneBuilder
from .zoom import zoomed_scene

# A view too big to lay out is replaced by a smaller one: its op's cluster or neighbourhood, of at
# most this many nodes, which Graphviz lays out in about a second.
FALLBACK_NODES = 100


@dataclass(frozen=True)
class View:
    """Which scene to show: a cluster with some clusters open, or a neighbourhood (focus)."""

    root: Optional[str] = None
    expanded: frozenset = frozenset()
    focus: Optional[str] = None  # the node a neighbourhood is centred on
    radius: int = 2
    limit: Optional[int] = None  # a neighbourhood of at most this many nodes (the nearest)
    zoom: int = 0


@dataclass
class SceneRequest:
    """A view to lay out, and what to do once it is shown."""

    view: View
    centre: Optional[str] = None  # node to centre once shown
    select: Optional[str] = None  # node to select once shown
    reveal: Optional[str] = None  # node that must get its own box (else another view is chosen)
    keep_centre: Optional[tuple[float, float]] = None  # fraction of the scene to keep at the centre


@dataclass
class SceneResult:
    """What came of a request: the view shown, its scene as laid out and at the view's zoom, or
    the error that kept any view from being drawn."""

    view: View
    scene: Optional[Scene] = None
    shown: Optional[Scene] = None
    error: Optional[str] = None
    note: Optional[str] = None  # why another view than the one asked for is shown


class SceneViews:
    """Views of one dataflow graph laid out as scenes; see the module docstring. Not thread-safe:
    one thread (the graph pane's layout thread) lays out at a time."""

    def __init__(self, graph: DataflowGraph):
        self.graph = graph
        self.builder = SceneBuilder(graph)
        self._zoomed: dict[tuple[int, int], Scene] = {}  # (id(scene), level) -> zoomed

    def is_node(self, node: str) -> bool:
        return node in self.graph.graph or (node.startswith(COLLAPSED_PREFIX) and node[len(COLLAPSED_PREFIX):] in self.graph.clusters)

    def cluster_chain(self, cluster_id: Optional[str]) -> list[str]:
        """A cluster and its ancestors, outermost first."""
        chain = []
        while cluster_id is not None:
            chain.append(cluster_id)
            cluster_id = self.graph.clusters[cluster_id].parent
        return chain[::-1]

    def view_showing(self, node: str, zoom: int) -> View:
        """The cluster scene that draws `node` as its own box: its function with every
        cluster on the way to it open."""
        if node in self.graph.graph:
            path = self.graph.cluster_path(node)
        else:
            path = self.cluster_chain(self.graph.clusters[node[len(COLLAPSED_PREFIX):]].parent)
        if not path:
            return View(zoom=zoom)
        return View(root=path[0], expanded=frozenset(path[1:]), zoom=zoom)

    def cluster_title(self, cluster_id: str) -> str:
        cluster = self.graph.clusters[cluster_id]
        if cluster.kind == "function":
            return "@" + cluster.function
        if cluster.kind == "op" and " = " in cluster.label:
            names, mnemonic = cluster.label.split(" = ", 1)
            return f"{mnemonic} {names}"
        return cluster.label

    def node_title(self, node: str) -> str:
        if node in self.graph.graph:
            label = self.graph.graph.nodes[node]["label"]
            return label[0] if label else node
        return self.cluster_title(node[len(COLLAPSED_PREFIX):]) if self.is_node(node) else node

    def view_title(self, view: View) -> str:
        if view.focus is not None:
            nearest = f" (the nearest {view.limit})" if view.limit is not None else ""
            return f"{view.radius} hops around {self.node_title(view.focus)}{nearest}"
        return self.cluster_title(view.root) if view.root is not None else "the program"

    def lay_out(self, request: SceneRequest, current: Optional[str] = None) -> SceneResult:
        """The requested scene; with `reveal`, the first of: the requested view, the node's
        function with its enclosing clusters open, its own cluster, its neighbourhood, that
        draws the node as a box and is small enough to lay out. `current` is the node of the op
        about to run, which a view too big to lay out falls back to."""
        views = [request.view]
        node, zoom = request.reveal, request.view.zoom
        if node is not None:
            if request.view.focus is not None:
                views.append(replace(request.view, focus=node))
            else:
                views.append(self.view_showing(node, zoom))
            if node in self.graph.graph:
                views += [View(root=self.graph.cluster_of(node), zoom=zoom), View(focus=node, zoom=zoom)]
        error = None
        views = list(dict.fromkeys(views))
        for view in views:
            try:
                scene = self.builder.neighbourhood(view.focus, view.radius, view.limit) if view.focus is not None else self.builder.scene(view.root, view.expanded)
            except HlodbgError as problem:
                error = error or problem.message
                if isinstance(problem, LayoutLimitError):
                    views += [v for v in self.smaller_views(view, node, current) if v not in views]
                continue
            if node is not None and node not in scene.boxes:
                continue
            key = (id(scene), zoom)
            if key not in self._zoomed:
                self._zoomed[key] = zoomed_scene(scene, zoom)
            note = f"{error}; showing {self.view_title(view)} instead" if error and view != request.view else None
            return SceneResult(view, scene, self._zoomed[key], note=note)
        return SceneResult(request.view, error=error or f"cannot draw {node}")

    def smaller_views(self, view: View, node: Optional[str], current: Optional[str]) -> list[View]:
        """What to draw when `view` is too big to lay out (too many nodes, or Graphviz past its
        time or memory limit): the cluster of the op shown (`node`, else `current`, else the view's
        first op), folded as usual, if it is small; else that op's neighbourhood, at most
        FALLBACK_NODES of it."""
        anchor = node or current
        if anchor is None and view.focus is None and view.root is not None:
            anchor = next((n for n in self.graph.cluster_nodes(view.root) if self.graph.graph.nodes[n].get("op") is not None), None)
        anchor = anchor or view.focus
        if anchor is None or anchor not in self.graph.graph:
            return []
        smaller = [View(focus=anchor, radius=view.radius if view.focus else 2, limit=FALLBACK_NODES, zoom=view.zoom)]
        own = View(root=self.graph.cluster_of(anchor), zoom=view.zoom)
        try:
            if self.builder.view(own.root).node_count <= FALLBACK_NODES:
                smaller.insert(0, own)
        except HlodbgError:
            pass
        return smaller
