"""The debugger's teaching panes: the provenance view, which follows the inspector's element cursor
(where a result element comes from, which result elements an operand element reaches), and the
explain pane (`i`, `:explain [%op] [--at i,j]`) about the op in view or under the cursor, in the
language `:lang` chose. The values are read in the session thread; the answers are worked out in
the controller's teaching thread, so neither the session nor the drawing waits for a big op.
"""
from __future__ import annotations

from typing import Optional

from hlodbg.engine.ir.core import Operation
from hlodbg.engine.ir.errors import HlodbgError
from hlodbg.layouts.labels import op_display as op_label

from ..commands import ExplainRequest
from ..state import ExplanationState, ProvenanceState, ValueOrigin
from ..teaching import explanation_state, provenance_state
from ..widgets.explain_pane import ExplainPane
from ..widgets.graph_canvas import GraphCanvas
from ..widgets.inspector import TensorInspector
from ..widgets.provenance_view import ProvenanceView
from ..widgets.source_view import SourceView
from .workers import pane_work


class TeachingPanes:
    """What MainScreen does for the two panes (a mixin: it reads the screen's controller, language,
    selected op and `_explain_open` / `_explain_request`)."""

    selected_op: Optional[Operation]  # MainScreen's, declared for the type checker
    _explain_open: bool

    def on_tensor_inspector_cursor_moved(self, message: TensorInspector.CursorMoved) -> None:
        """The cursor is on another element: where it comes from (a result's) or what it reaches
        (an operand's) in the provenance view, and the explain pane about its op."""
        self._pointed_again()
        self._refresh_explanation()

    def _pointed_again(self) -> None:
        """Trace the element under the cursor when it belongs to an op instance; else hide the view."""
        view, index = self.query_one(TensorInspector).pointed
        origin = view.origin if view is not None else None
        self.set_class(origin is not None and index is not None, "-tracing")
        if origin is not None and index is not None:
            self.trace_element(origin, index)

    @pane_work(group="provenance", exclusive=True)
    async def trace_element(self, origin: ValueOrigin, index: tuple) -> None:
        pane = self.query_one(ProvenanceView)
        pane.show(None, self.lang)
        try:
            values = await self.controller.call(self.controller.values_at, origin)
        except HlodbgError as e:
            pane.show(ProvenanceState(origin.op.name, error=e.message), self.lang)
            return
        lang = self.lang
        try:
            state = await self.controller.work_out(provenance_state, values, origin.kind, origin.position, index, lang)
        except Exception as e:  # noqa: BLE001 - a bug in a family's answer must not take the session down: said in the pane
            state = ProvenanceState(origin.op.name, error=f"internal error: {type(e).__name__}: {e}")
        pane.show(state, lang)

    def action_answer_lesson(self) -> None:
        """Put the keyboard in the lesson panel's answer box (hlodbg lesson NAME)."""
        from ..widgets.lesson_panel import LessonPanel

        panels = self.query(LessonPanel)
        if not panels:
            self.notify("no lesson is open: hlodbg lesson NAME opens one", severity="warning")
            return
        panels.first().focus_answer()

    def action_toggle_explain(self) -> None:
        self._explain_open = not self._explain_open
        self.set_class(self._explain_open, "-explaining")
        self._refresh_explanation()

    def _explain_subject(self) -> tuple:
        """(op, origin of the values, element, result): what :explain asked for, else the op of the
        element under the cursor, else the op in view."""
        request = self._explain_request
        view, index = self.query_one(TensorInspector).pointed
        if view is not None and view.origin is not None and index is not None:
            origin = view.origin
            if request is None or request.op is origin.op:
                at = index if origin.kind == "result" else None
                return origin.op, origin, at, origin.position if origin.kind == "result" else 0
        if request is not None:
            return request.op, None, request.at, 0
        return self.selected_op, None, None, 0

    def _refresh_explanation(self) -> None:
        if not self._explain_open:
            return
        op, origin, at, result = self._explain_subject()
        pane = self.query_one(ExplainPane)
        if op is None or pane.explained == (op, origin, at, result, self.lang):
            return
        pane.explained = (op, origin, at, result, self.lang)
        self.explain(op, origin, at, result)

    @pane_work(group="explain", exclusive=True)
    async def explain(self, op: Operation, origin: Optional[ValueOrigin], at: Optional[tuple], result: int) -> None:
        pane = self.query_one(ExplainPane)
        pane.show(None, self.lang)
        try:
            values = await self.controller.call(*((self.controller.values_at, origin) if origin is not None else (self.controller.values_of_op, op)))
        except HlodbgError as e:
            pane.show(ExplanationState(op.name, error=e.message), self.lang)
            return
        lang = self.lang
        try:
            state = await self.controller.work_out(explanation_state, values, at, result, lang)
        except Exception as e:  # noqa: BLE001 - as above: the pane says it, the session goes on
            state = ExplanationState(op.name, error=f"internal error: {type(e).__name__}: {e}")
        pane.show(state, lang)

    async def _open_explanation(self, request: ExplainRequest) -> None:
        """`:explain [%op] [--at i,j]`: the op selected, the cursor on the element, the pane open."""
        op = request.op or self.selected_op
        if op is None:
            self.log_line("explain: no op in view; name one (:explain %12)", error=True)
            return
        if request.op is not None:
            self.selected_op = op
            self.query_one(GraphCanvas).select(op)
            if op.pos is not None:
                self.query_one(SourceView).select_line(op.pos.line)
            await self._inspect(op)
        self._explain_request = ExplainRequest(op, request.at)
        if request.at is not None and not self.query_one(TensorInspector).place_cursor(op, request.at):
            self.log_line(f"explain: {op_label(op)} has no result element {list(request.at)} to point at here"
                          " (not run yet, or not in its result's shape)", dim=True)
        if not self._explain_open:
            self.action_toggle_explain()
        else:
            self._refresh_explanation()


__all__ = ["TeachingPanes"]
