"""The dataflow graph as a scrollable canvas: the op about to run, breakpoints and fresh values.

GraphCanvas shows one terminal Scene at a time (layouts/scene.py): a cluster with some clusters
inside drawn open, or the neighbourhood of a node (focus mode). Scenes come from Graphviz, which
can take a few hundred milliseconds, so one background thread lays them out while the UI keeps
what it shows; the latest request wins. Which scene answers a request (and the smaller view shown
when one is too big to lay out) is layouts/scene_views.py's to decide. Painting is cheap (numpy over the visible window), done
once per scroll position and sliced per line (graph_paint.py).

Zoom levels derive from the laid-out scene, never from a new layout: "compact" keeps one line
per box and squeezes empty rows and columns; "dots" draws one cell per node for an overview.

A big program's graph takes seconds to build: given `build` instead of a graph, the widget builds
it on the layout thread before the first scene, the pane saying so while the other panes work.

The widget takes no keys (the app owns them and calls the navigation methods) and posts
`GraphCanvas.NodeSelected` when the user picks a box with the mouse or the arrow methods.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field, replace
from typing import Callable, Optional, Union

from rich.style import Style
from textual import events, on
from textual.geometry import Offset, Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from hlodbg.engine.ir.core import Operation
from hlodbg.engine.ir.errors import HlodbgError
from hlodbg.layouts.graph import DataflowGraph
from hlodbg.layouts.scene import COLLAPSED_PREFIX, Scene
from hlodbg.layouts.scene_views import FALLBACK_NODES, SceneRequest, SceneResult, SceneViews, View
from hlodbg.layouts.zoom import ZOOM_LEVELS

from ..state import SessionState
from .graph_paint import Highlights, category_style, message_rows, scene_rows


# --- the widget -------------------------------------------------------------------------------------
class _GraphReady(Message, bubble=False):
    """From the layout thread: the graph it built (None: it could not, `error` says why)."""

    def __init__(self, graph: Optional[DataflowGraph], views: Optional[SceneViews], error: Optional[str] = None):
        super().__init__()
        self.graph = graph
        self.views = views
        self.error = error


class _SceneReady(Message, bubble=False):
    """From the layout thread to the widget: a request and what came of it."""

    def __init__(self, request: SceneRequest, result: SceneResult):
        super().__init__()
        self.request = request
        self.result = result


@dataclass
class _Strips:
    key: tuple
    rows: list[Strip] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)


class GraphCanvas(ScrollView, can_focus=False):
    """The program's dataflow graph; see the module docstring."""

    COMPONENT_CLASSES = {"graph-canvas--edge", "graph-canvas--edge-selected", "graph-canvas--cluster", "graph-canvas--current", "graph-canvas--selected", "graph-canvas--breakpoint", "graph-canvas--changed", "graph-canvas--message"}

    DEFAULT_CSS = """
    GraphCanvas {
        background: $surface;
        color: $foreground;
        border: round $primary 50%;
        border-title-color: $text;
        border-subtitle-color: $text-muted;
        scrollbar-size: 1 1;
    }
    GraphCanvas > .graph-canvas--edge { color: $text-muted; }
    GraphCanvas > .graph-canvas--edge-selected { color: $accent; text-style: bold; }
    GraphCanvas > .graph-canvas--cluster { color: $text-disabled; }
    GraphCanvas > .graph-canvas--current { text-style: bold reverse; }
    GraphCanvas > .graph-canvas--selected { background: $accent 35%; text-style: underline; }
    GraphCanvas > .graph-canvas--breakpoint { color: $error; text-style: bold; }
    GraphCanvas > .graph-canvas--changed { color: $warning; text-style: bold; }
    GraphCanvas > .graph-canvas--message { color: $text-muted; text-style: italic; }
    """

    class NodeSelected(Message):
        """The user picked a box (mouse click or `select_neighbour`). `op` is None for a block
        argument or a folded function."""

        def __init__(self, graph_canvas: "GraphCanvas", node: str, op: Optional[Operation]):
            super().__init__()
            self.graph_canvas = graph_canvas
            self.node = node
            self.op = op

        @property
        def control(self) -> "GraphCanvas":
            return self.graph_canvas

    class GraphBuilt(Message):
        """The graph the widget built on its layout thread (given `build`) is ready."""

        def __init__(self, graph_canvas: "GraphCanvas", graph: DataflowGraph):
            super().__init__()
            self.graph_canvas = graph_canvas
            self.graph = graph

        @property
        def control(self) -> "GraphCanvas":
            return self.graph_canvas

    def __init__(self, graph: Optional[DataflowGraph] = None, *, build: Optional[Callable[[], DataflowGraph]] = None,
                 build_on_mount: bool = True, name: Optional[str] = None, id: Optional[str] = None, classes: Optional[str] = None,
                 disabled: bool = False):
        super().__init__(name=name, id=id, classes=classes, disabled=disabled)
        self._build = build  # makes the graph on the layout thread when none is given
        # Without it, the graph is built once start_building() is called (the debugger calls it
        # once its other panes are drawn: the build's seconds of Python would slow them down).
        self._build_on_mount = build_on_mount
        self._started = False
        self.graph: Optional[DataflowGraph] = None
        self.views: Optional[SceneViews] = None
        self.builder = None
        if graph is not None:
            self._set_graph(graph, SceneViews(graph))
        self._current_op: Optional[Operation] = None  # what the debugger said, kept until the graph is built
        self._breakpoint_ops: tuple = ()
        self._changed_ops: tuple = ()
        self.follow = True
        self.scene: Optional[Scene] = None  # as laid out
        self.shown_scene: Optional[Scene] = None  # at the current zoom
        self._view = View()  # what is shown
        self._target_view = View()  # what the latest request asked for
        self._before_focus: Optional[View] = None
        self._current: Optional[str] = None
        self._selected: Optional[str] = None
        self._breakpoints: set[str] = set()
        self._changed: set[str] = set()
        self._overlay: dict[str, tuple] = {}  # node -> (level, fill, badge): `:overlay padding`
        self._error: Optional[str] = None
        self._note: Optional[str] = None  # why the scene shown is not the one asked for (too big)
        self._pending: Optional[SceneRequest] = None
        self._pending_lock = threading.Lock()
        self._worker_running = False
        self._highlight_version = 0
        self._strips: Optional[_Strips] = None
        self._styles: dict = {}

    # --- state ----------------------------------------------------------------------------------
    @property
    def zoom(self) -> int:
        return self._target_view.zoom

    @property
    def focus_mode(self) -> bool:
        return self._target_view.focus is not None

    @property
    def laying_out(self) -> bool:
        return self._worker_running

    @property
    def current_node(self) -> Optional[str]:
        return self._current

    @property
    def selected_node(self) -> Optional[str]:
        return self._selected

    @property
    def selected_op(self) -> Optional[Operation]:
        return self.op_of(self._selected) if self._selected else None

    def _set_graph(self, graph: DataflowGraph, views: SceneViews) -> None:
        self.graph, self.views, self.builder = graph, views, views.builder  # only the layout thread lays out

    def _nodes_of(self, op) -> list[str]:
        return self.graph.nodes_of(op) if self.graph is not None and op is not None else []

    def op_of(self, node: str) -> Optional[Operation]:
        """The op a node draws: its own, or for a folded box the op whose regions it folds."""
        if self.graph is None:
            return None
        if node in self.graph.graph:
            return self.graph.graph.nodes[node].get("op")
        cluster = self.graph.clusters.get(node[len(COLLAPSED_PREFIX):]) if node.startswith(COLLAPSED_PREFIX) else None
        return cluster.op if cluster is not None and isinstance(cluster.op, Operation) else None

    # --- what the debugger tells it ---------------------------------------------------------------
    shows = ("where", "caught", "marks")

    def show_state(self, state: SessionState) -> None:
        """The op in view, the ops the last move ran and the ops with a breakpoint."""
        self.show_current(state.shown_op)
        self.set_changed(set(state.where.changed))
        self.set_breakpoints({op for bp in state.marks.breakpoints if bp.enabled for op in bp.ops})

    def show_current(self, op: Optional[Operation]) -> None:
        """Mark the op about to run; with follow on, bring it into view, its loops opened."""
        self._current_op = op
        nodes = self._nodes_of(op)
        self._current = nodes[0] if nodes else None
        self._touch()
        if self._current is not None and self.follow:
            self._bring_into_view(self._current, centre=True)

    def on_resize(self, event: events.Resize) -> None:
        """Keep the current op in view when the pane changes size: a scroll made while the screen
        was still settling (a taller pane showed all of the scene) would otherwise leave it off."""
        scene = self.shown_scene
        if self.follow and self._current is not None and scene is not None:
            target = self._box_for(self._current, scene)
            if target is not None and self.offset_of(target) is None:
                self.call_after_refresh(self._scroll_into_view, target, False)

    def set_breakpoints(self, ops) -> None:
        self._breakpoint_ops = tuple(ops)
        self._breakpoints = {node for op in self._breakpoint_ops for node in self._nodes_of(op)}
        self._touch()

    def set_changed(self, ops) -> None:
        self._changed_ops = tuple(ops)
        self._changed = {node for op in self._changed_ops for node in self._nodes_of(op)}
        self._touch()

    def set_overlay(self, marks: dict) -> None:
        """Colour nodes: node -> (level, fill colour, badge); a folded box takes its worst node's.
        Empty: no overlay."""
        self._overlay = dict(marks)
        self._touch()

    @property
    def overlay(self) -> dict:
        return self._overlay

    def select(self, node_or_op: Union[str, Operation, None]) -> Optional[str]:
        """Select a node (or an op's first node) and scroll it into view; returns the node.
        Posts no NodeSelected: the caller already knows."""
        if isinstance(node_or_op, Operation):
            nodes = self._nodes_of(node_or_op)
            node = nodes[0] if nodes else None
        else:
            node = node_or_op if node_or_op is None or (self.views is not None and self.views.is_node(node_or_op)) else None
        self._selected = node
        self._touch()
        if node is not None:
            self._bring_into_view(node, centre=False)
        return node

    # --- navigation (the app binds keys to these) ---------------------------------------------------
    def pan(self, dx: int, dy: int) -> None:
        self.scroll_to(x=self.scroll_x + dx, y=self.scroll_y + dy, animate=False, immediate=True)

    def zoom_in(self) -> None:
        self._set_zoom(self.zoom - 1)

    def zoom_out(self) -> None:
        self._set_zoom(self.zoom + 1)

    def toggle_follow(self) -> bool:
        self.follow = not self.follow
        self._update_title()
        if self.follow and self._current is not None:
            self._bring_into_view(self._current, centre=True)
        return self.follow

    def toggle_focus(self, radius: int = 2) -> bool:
        """Show only the neighbourhood of the selected (or current) node; again to go back.
        Returns whether focus mode is on."""
        if self.focus_mode:
            view, self._before_focus = self._before_focus or View(), None
            anchor = self._anchor_node()
            self._request(SceneRequest(replace(view, zoom=self.zoom), centre=anchor, reveal=anchor))
            return False
        anchor = self._selected or self._current
        if anchor is None:
            self._error = "select a node to focus on"
            self._update_title()
            return False
        self._before_focus = self._target_view
        self._request(SceneRequest(View(focus=anchor, radius=radius, zoom=self.zoom), centre=anchor))
        return True

    def open_selected(self) -> bool:
        """Drill into the selected folded box: show that cluster's contents."""
        box = self.shown_scene.boxes.get(self._selected) if self.shown_scene and self._selected else None
        if box is None or box.cluster is None:
            return False
        inner = self.graph.clusters[box.cluster].node
        self._request(SceneRequest(View(root=box.cluster, zoom=self.zoom), centre=inner, select=inner))
        return True

    def go_up(self) -> bool:
        """One level out: leave focus mode, fold the innermost open cluster around the
        selection, or show the parent cluster's scene with this one as a box."""
        if self.focus_mode:
            return not self.toggle_focus()
        view = replace(self._view, zoom=self.zoom)
        if view.expanded:
            anchor = self._selected or self._current
            around = [c for c in self.graph.cluster_path(anchor)] if anchor in self.graph.graph else []
            inner = [c for c in around if c in view.expanded] or sorted(view.expanded, key=lambda c: len(self.views.cluster_chain(c)))
            cid = inner[-1]
            folded = view.expanded - {cid} - {c for c in view.expanded if cid in self.views.cluster_chain(c)[:-1]}
            box = COLLAPSED_PREFIX + cid
            self._request(SceneRequest(replace(view, expanded=frozenset(folded)), centre=box, select=box))
            return True
        if view.root is None or (self.graph.clusters[view.root].parent is None and len(self.graph.top_clusters()) == 1):
            return False
        parent = self.graph.clusters[view.root].parent
        box = COLLAPSED_PREFIX + view.root
        self._request(SceneRequest(View(root=parent, zoom=view.zoom), centre=box, select=box))
        return True

    def select_neighbour(self, direction: str) -> Optional[str]:
        """Select the nearest box that way ("up", "down", "left", "right") and post NodeSelected."""
        scene = self.shown_scene
        if scene is None or not scene.boxes:
            return None
        anchor = self._selected if self._selected in scene.boxes else self._box_for(self._current, scene)
        if anchor is None:
            target = min(scene.boxes.values(), key=lambda b: (b.y, b.x)).node
        else:
            target = scene.neighbours_in_direction(anchor, direction)
        if target is None:
            return None
        self._selected = target
        self._touch()
        self._scroll_into_view(target, centre=False)
        self.post_message(self.NodeSelected(self, target, self.op_of(target)))
        return target

    # --- for tests and the app ----------------------------------------------------------------------
    def visible_text(self) -> list[str]:
        """The visible window as plain text lines, markers included."""
        return list(self._window().lines)

    def offset_of(self, node: str) -> Optional[Offset]:
        """The centre cell of a node's box in widget coordinates, None when off screen (for clicks)."""
        scene = self.shown_scene
        box = scene.boxes.get(node) if scene else None
        if box is None:
            return None
        gutter = self.styles.gutter
        x = box.x + box.width // 2 - round(self.scroll_x) + gutter.left
        y = box.y + box.height // 2 - round(self.scroll_y) + gutter.top
        region = self.scrollable_content_region
        inside = gutter.left <= x < gutter.left + region.width and gutter.top <= y < gutter.top + region.height
        return Offset(x, y) if inside else None

    # --- scene requests (UI thread) -----------------------------------------------------------------
    def on_mount(self) -> None:
        if self.graph is not None or self._build_on_mount:
            self.start_building()

    def start_building(self) -> None:
        """Build the graph (when none was given) and lay out its first scene, on the layout thread;
        called again, it does nothing."""
        if self._started:
            return
        self._started = True
        self._request(_entry_request(self.graph) if self.graph is not None else SceneRequest(View()))

    def _bring_into_view(self, node: str, centre: bool) -> None:
        """Scroll to a node; when the scene has no box of its own for it (or a layout is on its
        way), ask the layout thread for a view that has one."""
        if self.graph is None:
            return  # the first scene, once the graph is built, shows the current op
        scene = self.shown_scene
        if scene is not None and node in scene.boxes and not self._worker_running:
            self._scroll_into_view(node, centre)
            return
        self._request(SceneRequest(self._target_view, centre=node, reveal=node))

    def _set_zoom(self, level: int) -> None:
        level = min(max(level, 0), len(ZOOM_LEVELS) - 1)
        if level == self.zoom:
            return
        anchor = self._anchor_node()
        keep = None
        if anchor is None and self.shown_scene is not None and self.shown_scene.width and self.shown_scene.height:
            region = self.scrollable_content_region
            keep = ((self.scroll_x + region.width / 2) / self.shown_scene.width, (self.scroll_y + region.height / 2) / self.shown_scene.height)
        self._request(SceneRequest(replace(self._target_view, zoom=level), centre=anchor, keep_centre=keep))

    def _anchor_node(self) -> Optional[str]:
        scene = self.shown_scene
        if scene is None:
            return None
        if self._selected in scene.boxes:
            return self._selected
        return self._box_for(self._current, scene)

    def _request(self, request: SceneRequest) -> None:
        """Lay out a scene on the layout thread; the newest request replaces any waiting one."""
        if self.graph is None and (self._error is not None or self._worker_running):
            return  # the graph could not be built, or its first scene is on its way
        self._target_view = request.view
        with self._pending_lock:
            self._pending = request
            start = not self._worker_running
            self._worker_running = True
        self._update_title()
        if self.shown_scene is None:
            self.refresh()
        if start:
            self.run_worker(self._layout_thread, thread=True, group="graph-layout", name="graph layout")

    # --- the layout thread -------------------------------------------------------------------------
    def _layout_thread(self) -> None:
        """Lay out requests until none is waiting. Results go back as messages, which never
        block this thread (a blocking hand-over could hang an app that is closing)."""
        while True:
            with self._pending_lock:
                request, self._pending = self._pending, None
                if request is None:
                    self._worker_running = False
                    return
            if self.views is None:
                request = self._build_graph()
                if request is None:
                    return
            current = self._current or next(iter(self._nodes_of(self._current_op)), None)
            result = self.views.lay_out(request, current)
            with self._pending_lock:
                last = self._pending is None
                if last:
                    self._worker_running = False
            try:
                self.post_message(_SceneReady(request, result))
            except RuntimeError:  # the app's loop is closed
                return
            if last:
                return

    def _build_graph(self) -> Optional[SceneRequest]:
        """(Layout thread) Build the graph and hand it to the UI thread; the first scene to lay
        out (the entry function, at the current op), or None when the graph cannot be built."""
        try:
            graph = self._build()
            views = SceneViews(graph)
        except HlodbgError as e:
            with self._pending_lock:
                self._worker_running = False
            self._post(_GraphReady(None, None, e.message))
            return None
        nodes = graph.nodes_of(self._current_op)  # builds the op -> nodes index here, off the UI thread
        request = _entry_request(graph)
        if nodes:
            request = replace(request, centre=nodes[0], reveal=nodes[0])
        # The view asked for is the entry's before the graph is seen: the UI thread asks for
        # nothing while there is no graph, and a step that does once there is asks for this view.
        self._target_view = request.view
        self._set_graph(graph, views)
        self._post(_GraphReady(graph, views))
        return request

    def _post(self, message: Message) -> None:
        try:
            self.post_message(message)
        except RuntimeError:  # the app's loop is closed
            pass

    # --- back on the UI thread ----------------------------------------------------------------------
    @on(_GraphReady)
    def _graph_ready(self, message: _GraphReady) -> None:
        """The graph is built: the debugger's marks find their boxes (the first scene is on its way)."""
        message.stop()
        if message.graph is None:
            self._error = f"cannot draw the graph: {message.error}"
            self._update_title()
            self.refresh()
            return
        self._set_graph(message.graph, message.views)
        self.post_message(self.GraphBuilt(self, message.graph))
        nodes = self._nodes_of(self._current_op)
        self._current = nodes[0] if nodes else None
        self._breakpoints = {node for op in self._breakpoint_ops for node in self._nodes_of(op)}
        self._changed = {node for op in self._changed_ops for node in self._nodes_of(op)}
        self._touch()

    @on(_SceneReady)
    def _apply(self, message: _SceneReady) -> None:
        message.stop()
        request, result = message.request, message.result
        if self._pending is not None:  # a newer request is on its way; skip the flash
            self._update_title()
            return
        self._error = result.error
        if result.shown is not None:
            self._note = result.note
        if result.shown is None:
            self._target_view = self._view
            self._update_title()
            self.refresh()
            return
        if result.view.focus is None and request.view.focus is not None:
            self._before_focus = None  # the neighbourhood could not be drawn
        self._view, self.scene, self.shown_scene = result.view, result.scene, result.shown
        self._target_view = result.view
        if request.select is not None:
            self._selected = request.select
        self.virtual_size = Size(result.shown.width, result.shown.height)
        self._touch()
        target = self._box_for(request.centre, result.shown)
        if target is not None:
            self._scroll_into_view(target, centre=True)
        elif request.keep_centre is not None:
            region = self.scrollable_content_region
            fx, fy = request.keep_centre
            self.scroll_to(x=fx * result.shown.width - region.width / 2, y=fy * result.shown.height - region.height / 2, animate=False, force=True, immediate=True)
        else:
            self.scroll_to(x=0, y=0, animate=False, immediate=True)

    def _box_for(self, node: Optional[str], scene: Scene) -> Optional[str]:
        """The box of `scene` that draws `node`: its own, or the folded cluster holding it."""
        if node is None:
            return None
        if node in scene.boxes:
            return node
        if self.graph is None or node not in self.graph.graph:
            return None
        for cid in self.graph.cluster_path(node):
            if COLLAPSED_PREFIX + cid in scene.boxes:
                return COLLAPSED_PREFIX + cid
        return None

    def _scroll_into_view(self, node: str, centre: bool) -> None:
        scene = self.shown_scene
        if scene is None or node not in scene.boxes:
            return
        x, y, width, height = scene.bounds_of(node)
        region = self.scrollable_content_region
        if not region.width or not region.height:
            self.call_after_refresh(self._scroll_into_view, node, centre)
            return
        if centre:
            # force: the first scene bigger than the pane has no scrollbars yet (they come with
            # the next layout), and without it the scroll would be dropped, the op out of view;
            # immediate: Textual would otherwise defer it past the next refresh
            self.scroll_to(x=x + width / 2 - region.width / 2, y=y + height / 2 - region.height / 2, animate=False, force=True, immediate=True)
            return
        left, top = self.scroll_x, self.scroll_y
        if x < left or width > region.width:
            left = x - 2
        elif x + width > left + region.width:
            left = x + width - region.width + 2
        if y < top or height > region.height:
            top = y - 1
        elif y + height > top + region.height:
            top = y + height - region.height + 1
        self.scroll_to(x=left, y=top, animate=False, force=True, immediate=True)

    def _touch(self) -> None:
        self._highlight_version += 1
        self._update_title()
        self.refresh()

    # --- title ---------------------------------------------------------------------------------------
    def location(self) -> str:
        """Where the view is, e.g. `@main > while %0:4 > body`."""
        view = self._view
        if view.focus is not None:
            return self.views.view_title(view)
        if self.shown_scene is None:
            return ""
        chain = self.views.cluster_chain(view.root)
        anchor = self._selected or self._current
        if anchor is not None and anchor in self.graph.graph:
            chain += [c for c in self.graph.cluster_path(anchor) if c in view.expanded and c not in chain]
        return " > ".join(self.views.cluster_title(c) for c in chain) or "program"

    def _update_title(self) -> None:
        state = f"zoom {self._view.zoom + 1}/{len(ZOOM_LEVELS)}, follow {'on' if self.follow else 'off'}"
        where = self.location()
        self.border_title = f"{where}  ({state})" if where else f"({state})"
        self.border_subtitle = "laying out…" if self._worker_running else (self._error or self._note or "")

    # --- painting ------------------------------------------------------------------------------------
    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._styles = {}
        self._strips = None

    def render_line(self, y: int) -> Strip:
        window = self._window()
        return window.rows[y] if 0 <= y < len(window.rows) else Strip.blank(self.scrollable_content_region.width, self.rich_style)

    def _message(self) -> Optional[str]:
        if self.shown_scene is None:
            if self._error:
                return self._error
            return "building the graph…" if self.graph is None else "laying out…" if self._worker_running else ""
        if not self.shown_scene.boxes:
            return "nothing to draw: the program has no functions with a body"
        return None

    def _window(self) -> _Strips:
        region = self.scrollable_content_region
        width, height = region.width, region.height
        x0, y0 = round(self.scroll_x), round(self.scroll_y)
        key = (id(self.shown_scene), x0, y0, width, height, self._highlight_version, self._error, self._note, self._worker_running)
        if self._strips is not None and self._strips.key == key:
            return self._strips
        message = self._message()
        if message is not None:
            rows, lines = message_rows(message, width, height, self.rich_style + self._style("graph-canvas--message"))
        else:
            scene = self.shown_scene
            rows, lines = scene_rows(scene, x0, y0, width, height, self._highlights(scene), self._note, self._style,
                                     self.rich_style, self._category_style)
        self._strips = _Strips(key, rows, lines)
        return self._strips

    def _highlights(self, scene: Scene) -> Highlights:
        """What to mark, as the boxes of `scene` that draw it (a folded box for what it holds)."""
        fills: dict[str, tuple] = {}
        for node, mark in self._overlay.items():
            box = self._box_for(node, scene)
            if box is not None and (box not in fills or mark[0] > fills[box][0]):
                fills[box] = mark
        return Highlights(current=self._box_for(self._current, scene),
                          selected=self._selected if self._selected in scene.boxes else None,
                          changed=self._boxes_for(self._changed, scene), breakpoints=self._boxes_for(self._breakpoints, scene),
                          fills=fills)

    def _boxes_for(self, nodes: set[str], scene: Scene) -> set[str]:
        return {box for box in (self._box_for(node, scene) for node in nodes) if box is not None}

    def _style(self, component: str) -> Style:
        """A component's own style, its colours resolved against the widget's background."""
        if component not in self._styles:
            full = self.get_component_rich_style(component)
            partial = self.get_component_rich_style(component, partial=True)
            colours = Style(color=full.color if partial.color else None, bgcolor=full.bgcolor if partial.bgcolor else None)
            self._styles[component] = colours + partial.without_color
        return self._styles[component]

    def _category_style(self, category: str) -> Style:
        key = ("category", category)
        if key not in self._styles:
            self._styles[key] = category_style(category)
        return self._styles[key]

    # --- mouse -----------------------------------------------------------------------------------------
    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        scene = self.shown_scene
        if offset is None or scene is None:
            return
        node = scene.box_at(offset.x + round(self.scroll_x), offset.y + round(self.scroll_y))
        if node is None:
            return
        event.stop()
        if node == self._selected and scene.boxes[node].cluster is not None:
            self.open_selected()
            return
        self._selected = node
        self._touch()
        self.post_message(self.NodeSelected(self, node, self.op_of(node)))


def _entry_request(graph: DataflowGraph) -> SceneRequest:
    """The first scene: the entry function (the program's when there is none)."""
    entry = graph.module.entry
    root = f"fn:{entry.sym_name}" if entry is not None and f"fn:{entry.sym_name}" in graph.clusters else None
    return SceneRequest(View(root=root))


__all__ = ["GraphCanvas", "FALLBACK_NODES"]  # FALLBACK_NODES lives in layouts/scene_views.py
