"""Small panes: the call stack, breakpoints and watches, the status bar and the command line."""
from __future__ import annotations

from rich.text import Text
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widgets import Input, Static

from hlodbg.engine.machine.memory import format_bytes
from hlodbg.engine.machine.targets import registered_target

from ..state import FrameView, SessionState, short_note


class PaneScroll(VerticalScroll, can_focus=False):
    """A pane's scrolling body that never takes the keyboard (the app owns the keys)."""


class FramesPanel(Static, can_focus=False):
    """Frames from the entry function to the current one, loop iterations included."""

    DEFAULT_CSS = "FramesPanel { height: auto; }"

    _frames: list[FrameView] = []
    shows = ("where",)

    def show_state(self, state: SessionState) -> None:
        self.show_frames(state.frames)

    def on_resize(self) -> None:
        self.show_frames(self._frames)

    def show_frames(self, frames: list[FrameView]) -> None:
        self._frames = frames
        text = Text()
        if not frames:
            text.append("(no frames: the run has not started or has finished)", style="dim")
        for depth, frame in enumerate(frames):
            current = depth == len(frames) - 1
            text.append("▶ " if current else "  ", style="bold")
            text.append(frame.description, style="bold" if current else "")
            if frame.op_text:
                text.append(f"  {frame.op_text}", style="dim" if not current else "")
            if frame.line is not None:
                text.append(f"  :{frame.line}", style="cyan")
            if frame.producer:
                text.append(f"  {frame.producer}", style="dim italic")
            if frame.note:
                # one line, whatever the pane's width: the whole note is one `:note` away
                room = max(8, (self.size.width or 80) - len("    ⓘ  (:note)"))
                text.append(f"\n    ⓘ {short_note(frame.note, limit=room)} (:note)", style="dim")
            if depth < len(frames) - 1:
                text.append("\n")
        self.update(text)


class BreakpointsPanel(Static, can_focus=False):
    DEFAULT_CSS = "BreakpointsPanel { height: auto; }"
    shows = ("marks",)

    def show_state(self, state: SessionState) -> None:
        self.show_breakpoints(list(state.marks.breakpoints), [(text, _short(value)) for text, value in state.marks.watches])

    def show_breakpoints(self, breakpoints: list, watches: list[tuple[str, str]]) -> None:
        text = Text()
        if not breakpoints:
            text.append("no breakpoints (b, or :break SPEC)\n", style="dim")
        for bp in breakpoints:
            text.append("● " if bp.enabled else "○ ", style="red" if bp.enabled else "dim")
            text.append(bp.describe() + "\n")
            if bp.note:
                text.append(f"    {bp.note}\n", style="dim")
        text.append("watches\n", style="bold")
        if not watches:
            text.append("none (:watch EXPR)", style="dim")
        for index, (expression, value) in enumerate(watches):
            text.append(f"{index}: {expression} = ", style="")
            text.append(value + "\n", style="cyan")
        self.update(text)


class StatusBar(Static, can_focus=False):
    DEFAULT_CSS = """
    StatusBar { height: 1; background: $panel; color: $text; padding: 0 1; }
    """

    shows = ("where", "machine", "memory", "recording", "stop")

    def show_running(self, running: str) -> None:
        """What a move still running has done so far, instead of the state."""
        self.update(Text(running, style="bold yellow"))

    def show_state(self, state: SessionState) -> None:
        text = Text()
        total, machine, figures = state.where.total, state.machine, state.memory.figures
        of = f"/{total:,}" if total is not None else ""
        text.append(f"op {state.position:,}{of}", style="bold")
        if state.frames:
            text.append(f" │ {state.frames[-1].description}")
        text.append(f" │ {machine.device}")
        if machine.target and machine.target != machine.device:  # one device is named by its target already
            text.append(f" │ {machine.target}")
        registered = registered_target(machine.target) if machine.target else None
        self.tooltip = f"{registered.name}: {registered.help}" if registered is not None else machine.target or None
        if machine.numerics:
            text.append(f" · {machine.numerics}")
        if figures is not None and figures.on_accelerator:
            text.append(f" │ {figures.kind} {format_bytes(figures.in_use)}")
        recording = state.recording  # the recording budget, not the device's memory
        text.append(f" │ recorded {_size(recording.used)} of {_size(recording.budget)}")
        if state.stop_reason:
            text.append(f" │ {state.stop_reason}", style="bold")
        if state.finished:
            text.append(" │ finished" if not state.error else " │ failed", style="green" if not state.error else "bold red")
        self.update(text)


def _short(value) -> str:
    """A watch's value in one line."""
    from ..commands import format_value

    return format_value(value, limit=120).replace("\n", " ")


def _size(n: int) -> str:
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if n < 1024 or unit == "TB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"


class CommandLine(Input):
    """`:` focuses it; Enter runs the command, Escape gives the keys back to the debugger."""

    BINDINGS = [Binding("escape", "leave", "Leave the command line", id="command_line.leave", show=False), Binding("up", "history(-1)", "Previous command", id="command_line.history_back", show=False), Binding("down", "history(1)", "Next command", id="command_line.history_forward", show=False)]

    class Submitted(Message):
        def __init__(self, command: str) -> None:
            super().__init__()
            self.command = command

    def __init__(self, **kwargs):
        super().__init__(placeholder=": command (help)   / search", select_on_focus=False, **kwargs)
        self.history: list[str] = []
        self._history_index = 0

    async def action_submit(self) -> None:
        command = self.value.strip()
        self.value = ""
        if command:
            self.history.append(command)
        self._history_index = len(self.history)
        self.post_message(self.Submitted(command))

    def action_leave(self) -> None:
        self.value = ""
        self.screen.set_focus(None)

    def action_history(self, step: int) -> None:
        if not self.history:
            return
        self._history_index = max(0, min(len(self.history), self._history_index + step))
        self.value = self.history[self._history_index] if self._history_index < len(self.history) else ""
        self.cursor_position = len(self.value)


__all__ = ["FramesPanel", "BreakpointsPanel", "StatusBar", "CommandLine"]
