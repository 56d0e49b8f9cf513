"""The UI's side of a debugging session: every Session call on one dedicated thread.

A Session's run lives in a greenlet bound to the thread that first moves it, so all calls go
through a single-thread executor; the UI awaits their futures and never blocks. `interrupt()`
and `progress()` are the only things called from the UI thread directly.
"""
from __future__ import annotations

import asyncio
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Callable, Optional

from hlodbg.engine.dtypes import Token
from hlodbg.engine.ir import Operation
from hlodbg.engine.session_views import op_label
from hlodbg.engine.summary import summarize

from .state import DebugState, FrameView, ValueView

MOVES = ("step", "step_in", "step_out", "continue_", "back", "back_in", "back_out", "reverse_continue")
CHANGED_LIMIT = 400  # ops highlighted as just computed after a long move


class SessionController:
    def __init__(self, make_session: Callable[[], Any]):
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="hlodbg-session")
        self.session = self._executor.submit(make_session).result()
        self.running = False
        self._index: dict[int, tuple[object, int, dict]] = {}  # id(trace) -> (trace, events indexed, op -> ids)

    # --- threading ---------------------------------------------------------------------------
    def submit(self, fn: Callable, *args) -> Future:
        return self._executor.submit(fn, *args)

    async def call(self, fn: Callable, *args) -> Any:
        return await asyncio.wrap_future(self.submit(fn, *args))

    def interrupt(self) -> None:
        self.session.interrupt()

    def progress(self) -> int:
        """Events recorded so far (read from the UI thread while a move runs)."""
        return len(self.session.trace)

    def close(self) -> None:
        try:
            self.submit(self.session.close).result(timeout=5)
        except Exception:  # closing is best effort: the process is leaving anyway
            pass
        self._executor.shutdown(wait=False, cancel_futures=True)

    # --- moves (run in the session thread) ------------------------------------------------------
    def move(self, name: str, *args) -> DebugState:
        session = self.session
        before = session.position
        self.running = True
        try:
            stop = getattr(session, name)(*args)
        finally:
            self.running = False
        return self.state(stop.reason if stop is not None else "", before, stop.message if stop is not None else "", stop)

    def state(self, reason: str = "", before: Optional[int] = None, message: str = "", stop=None) -> DebugState:
        session = self.session
        position = session.position
        op = session.op
        frames = [FrameView(info.function, _frame_text(info), op_label(info.op) if info.op is not None else "", info.line, info.producer) for info in session.stack]
        operands = []
        if op is not None and position < len(session.trace):
            for i, value in enumerate(session.operands()):
                operands.append(self._view(f"operand {i}: {op.operands[i].name}", str(op.operands[i].type), value))
        results = self.results_before(position)
        changed = frozenset()
        if before is not None and position > before:
            ops = session.trace.ops
            changed = frozenset(ops[max(before, position - CHANGED_LIMIT):position])
        error = ""
        if session.error is not None:
            error = session.error.render() if hasattr(session.error, "render") else str(session.error)
        if stop is not None and stop.hits:
            message = "; ".join(h.describe() for h in stop.hits) + (f" ({message})" if message else "")
        return DebugState(position, len(session.trace), session.finished, op, frames, operands, results, changed, session.note or message, error, session.memory_used, session.memory_budget, reason)

    def results_before(self, position: int) -> list[ValueView]:
        """The outputs of the op that finished last before `position` (what the last step made)."""
        session = self.session
        trace = session.trace
        e = position - 1
        while e >= 0 and not (trace.done(e) and trace.ops[e].results and trace.ends[e] < position):
            e -= 1
        if e < 0:
            return []
        return self.event_values(e, "just computed")

    def event_values(self, e: int, why: str = "") -> list[ValueView]:
        session = self.session
        event = session.event(e)
        op = event.op
        previous = self._previous_iteration(event)
        views = []
        for k, value in enumerate(event.outputs):
            where = f"event {e}" + (f", iteration {event.iteration}" if event.iteration is not None else "") + (f" ({why})" if why else "")
            name = op.results[k].name if k < len(op.results) else f"result {k}"
            prior = previous[k] if previous is not None and k < len(previous) else None
            views.append(self._view(name, str(op.results[k].type), value, session.summary(e, k), prior, where))
        return views

    def events_of(self, op: Operation) -> list[int]:
        """Event ids of `op` in the current view's trace, kept up to date incrementally (a step in
        a long loop must not rescan the whole trace)."""
        trace = self.session.trace
        owner, done, table = self._index.get(id(trace), (None, 0, {}))
        if owner is not trace:  # a restart or another replay made a new trace
            done, table = 0, {}
            if len(self._index) > 4:
                self._index.clear()
        ops = trace.ops
        for e in range(done, len(ops)):
            table.setdefault(ops[e], []).append(e)
        self._index[id(trace)] = (trace, len(ops), table)
        return table.get(op, [])

    def _latest_before(self, op: Operation, position: int) -> Optional[int]:
        trace = self.session.trace
        for e in reversed(self.events_of(op)):
            if e < position and trace.done(e):
                return e
        return None

    def inspect_op(self, op: Operation) -> tuple[str, list[ValueView]]:
        """The latest value `op` produced up to the current position (or why there is none)."""
        e = self._latest_before(op, self.session.position)
        if e is None:
            return f"{op_label(op)}: not run yet", []
        return f"{op_label(op)}", self.event_values(e)

    def _previous_iteration(self, event) -> Optional[list]:
        if event.iteration is None:
            return None
        e = self._latest_before(event.op, event.id)
        return self.session.event(e).outputs if e is not None else None

    @staticmethod
    def _view(label: str, type_text: str, value: Any, summary=None, previous=None, where: str = "") -> ValueView:
        if summary is None and value is not None and not isinstance(value, Token):
            summary = summarize(value)
        return ValueView(label, type_text, value, summary, previous, where)


def _frame_text(info) -> str:
    if info.kind == "function":
        text = f"@{info.function}"
    else:
        text = f"@{info.function} {info.kind}" + (f" #{info.iteration}" if info.iteration is not None else "")
    return text + (f" ({info.note})" if info.note else "")


__all__ = ["SessionController", "MOVES"]
