"""The debugger's workers never take the app down: an engine call that fails on input it cannot
handle (a program past what a walk can take, say) is said where the user looks, and the session
goes on. Textual's default is to exit the app with a traceback on a worker's first error."""
from __future__ import annotations

from functools import partial

from textual import work
from textual.worker import Worker, WorkerState

# @pane_work(...) is @work(...) whose error ends up in on_worker_state_changed, not in an exit.
pane_work = partial(work, exit_on_error=False)


def internal_error_text(error: BaseException, what: str) -> str:
    """One line for the console: what failed and how, as a bug in hlodbg (the user's own mistakes
    are HlodbgErrors, said where they happen)."""
    return f"internal error in {what}: {type(error).__name__}: {error} (a bug in hlodbg; the session goes on)"


class ReportsWorkerErrors:
    """A screen mixin: the error of any of its workers is written to its console (`log_line`) and
    passed to `worker_failed` for a pane to show it too."""

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        worker = event.worker
        if event.state is not WorkerState.ERROR or worker.node is not self or worker.error is None:
            return
        what = worker.name or worker.group
        self.log_line(internal_error_text(worker.error, what), error=True)
        self.worker_failed(worker.group, worker.error)

    def worker_failed(self, group: str, error: BaseException) -> None:
        """A pane's own word on its failed update (the console has said it already)."""


__all__ = ["ReportsWorkerErrors", "internal_error_text", "pane_work"]
