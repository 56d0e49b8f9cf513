"""The debugger: graph, source, tensor inspector, frames, breakpoints, command line, status.

Every move runs in the session thread (controller.py) inside an exclusive async worker, so the UI
keeps drawing; a long run shows its progress and Escape / Ctrl-C interrupts it. After a move one
SessionState snapshot goes to every pane that shows what changed (ui/panes.py: the panes are
registered in debugger_panes.py, each draws itself).
"""
from __future__ import annotations

import ast
import asyncio
import shlex
import time
from dataclasses import replace
from pathlib import Path
from typing import Optional

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import Input, RichLog

from hlodbg.engine.debug.target import move_words
from hlodbg.engine.ir.core import Operation
from hlodbg.engine.ir.errors import HlodbgError
from hlodbg.engine.ir.phrases import language_from_environment
from hlodbg.layouts.graph import DataflowGraph
from hlodbg.layouts.labels import op_display as op_label
from hlodbg.layouts.op_facts import fact_lines

from ..commands import CommandResult, CommandRunner, ExplainRequest, quits
from ..controller import SessionController
from ..keymap import BINDING_GROUPS, DEBUGGER_BINDINGS, key_label
from ..panes import PANES, PaneSpec, StatePane, needs_drawing
from ..session_files import SessionFiles
from ..state import MemoryState, SessionState, short_note
from ..widgets.graph_canvas import GraphCanvas
from ..widgets.grid_view import GridView
from ..widgets.inspector import TensorInspector
from ..widgets.memory_pane import MemoryPanel
from ..widgets.panels import CommandLine, StatusBar
from ..widgets.source_view import SourceView
from . import debugger_panes  # noqa: F401  (registers the debugger's panes)
from .help import HelpScreen
from .teaching_panes import TeachingPanes
from .trace import TraceScreen
from .workers import ReportsWorkerErrors, pane_work

PROGRESS_INTERVAL = 0.1
LAUNCH_ERROR_SECONDS = 600  # an error in the command line's options stays until read (a click closes it)
BREAKPOINT_FILE_SECONDS = 20
NARROW = 150  # narrower screens make room for the explain pane and the provenance view by hiding a pane


class SidePanel(VerticalScroll, can_focus=False):
    """Frames, breakpoints and watches. Takes no focus: a focused scroll container would take the
    arrow and page keys the debugger binds (panning the graph, scrolling a slice)."""


class ConsoleLog(RichLog, can_focus=False):
    """What commands and stops said; takes no focus for the same reason."""


class MainScreen(ReportsWorkerErrors, TeachingPanes, Screen):
    BINDINGS = DEBUGGER_BINDINGS
    AUTO_FOCUS = ""  # the debugger's keys work with nothing focused; `:` focuses the command line

    def __init__(self, program, graph: Optional[DataflowGraph], controller: SessionController, break_on: Optional[str] = None,
                 explain: bool = False, files: Optional[SessionFiles] = None, **kwargs):
        super().__init__(**kwargs)
        self.program = program
        self.graph = graph
        self.controller = controller
        self.files = files or SessionFiles()
        self.runner = CommandRunner(controller, program.name, self.files)
        self.break_on = break_on
        self.state: Optional[SessionState] = None  # the state the panes show
        self.selected_op: Optional[Operation] = None
        self._pane_specs: list[PaneSpec] = []  # the registered panes this screen has (compose)
        self._state_panes: list[StatePane] = []  # those of them that show part of the state, once mounted
        self.busy = ""
        self._started = 0.0
        self._note = ""  # the frame note last said in the console
        self.lang = language_from_environment()  # of the explain pane and the provenance view (:lang)
        self._explain_open = explain
        self._explain_request: Optional[ExplainRequest] = None  # what :explain asked for, until the next move

    # --- layout --------------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        self._pane_specs = [spec for spec in PANES if spec.wanted(self)]  # the registry as this screen is made
        with Horizontal(id="top"):
            yield from self._build_panes("top")
        with Horizontal(id="bottom"):
            yield from self._build_panes("bottom")
            with SidePanel(id="side"):
                yield from self._build_panes("side")
        yield ConsoleLog(id="console", wrap=True, markup=False, max_lines=500)
        yield CommandLine(id="command")
        yield from self._build_panes("foot")

    def _build_panes(self, area: str) -> ComposeResult:
        for spec in self._pane_specs:
            if spec.area == area:
                yield spec.build(self)

    def on_mount(self) -> None:
        for spec in self._pane_specs:
            pane = self.query_one(f"#{spec.id}")
            if spec.title is not None:
                pane.border_title = spec.title
            if spec.shows:
                self._state_panes.append(pane)
        self.query_one("#source").border_title = self.program.name
        self.set_class(self._explain_open, "-explaining")
        self.query_one(MemoryPanel).display = False
        if self.controller.device_memory.on_accelerator:  # an accelerator's memory is what its users come to see
            self.action_toggle_memory()
        self._side_title()
        ops, functions = self.program.op_count, len(self.program.functions)
        self.log_line(f"{self.program.name}: {ops} op{'s' * (ops != 1)} in {functions} function{'s' * (functions != 1)}. "
                      "n/s/f step, c continue, ? help, : commands, q quit")
        self.start()

    @pane_work(exclusive=True, group="session")
    async def start(self) -> None:
        if self.break_on:
            # The run to the breakpoint may be long: the graph is built meanwhile, not after it.
            self.query_one(GraphCanvas).start_building()
            result = await self.controller.call(self.runner.launch_break, self.break_on)
            self.show_result(result)
            if not result.error:
                await self._run_move("continue_")
                return
            # The console holds two lines and the run's own messages would push this out at once:
            # the error stays on screen as a notification, and the run waits at its start.
            self.notify(f"{result.output}\n\nThe run waits at its start: set a breakpoint with :break SPEC, then c.",
                        title=f"--break-on {self.break_on}", severity="error", timeout=LAUNCH_ERROR_SECONDS, markup=False)
            await self._apply(await self.controller.call(self.controller.state))
        else:
            await self._apply(await self.controller.call(self.controller.state))

    # --- moves ---------------------------------------------------------------------------------
    def action_move(self, name: str) -> None:
        if self.busy:
            self.notify("still running: Escape interrupts it", severity="warning")
            return
        self.move(name)

    @pane_work(exclusive=True, group="session")
    async def move(self, name: str, *args) -> None:
        await self._run_move(name, *args)

    async def _run_move(self, name: str, *args) -> None:
        self.busy = move_words(name)
        self._started = time.perf_counter()
        timer = self.set_interval(PROGRESS_INTERVAL, self._show_progress)
        try:
            state = await self.controller.call(self.controller.move, name, *args)
        except HlodbgError as e:  # e.g. an event that does not exist: the session is unchanged
            self.log_line(f"{move_words(name)}: {e.message}", error=True)
            return
        except Exception as e:  # noqa: BLE001 - a bug in a move must not take the session down
            self.log_line(f"internal error during {move_words(name)}: {type(e).__name__}: {e}", error=True)
            return
        finally:
            timer.stop()
            self.busy = ""
        await self._apply(state)

    def _show_progress(self) -> None:
        if not self.busy:
            return
        done = self.controller.progress()
        of = f" of {self.total:,}" if self.total else ""
        trace = self.controller.session.trace
        current = op_label(trace.ops[-1]) if len(trace) else ""
        elapsed = time.perf_counter() - self._started
        self.query_one(StatusBar).show_running(f"running {move_words(self.busy)}: {done:,}{of} ops recorded, {elapsed:.1f} s · {current} · Escape interrupts")

    @property
    def total(self) -> Optional[int]:
        """The run's events, once a state has seen it finish."""
        return self.state.where.total if self.state is not None else None

    def _show_state(self, state: SessionState) -> None:
        """`state` becomes the one shown: each pane draws it if a view it shows changed."""
        drawn, self.state = self.state, state
        for pane in self._state_panes:
            if needs_drawing(pane, state, drawn):
                pane.show_state(state)

    async def _apply(self, state: SessionState) -> None:
        """A move's state: the panes, and what the console says of the stop."""
        self._show_state(state)
        shown = state.shown_op  # at a value breakpoint: the op that made the value
        if state.stop_reason == "breakpoint":
            self.log_line(f"{state.stop_reason}: {state.note}" if state.note else state.stop_reason)
        elif state.note and state.note != self._note:  # said once, in one line, on entering the frame
            self.log_line(f"{short_note(state.note)} (:note for the details)")
        self._note = state.note
        if state.stop_reason == "interrupted":
            self.log_line("interrupted; the session is intact")
        if state.stop_reason == "memory":
            self.log_line(f"stopped: {state.stop.message}", error=True)
        if state.error:
            self.log_line(state.error, error=True)
        self._say_breakpoint_file()
        self.selected_op = shown if shown is not None else self.selected_op
        self._explain_request = None
        self._refresh_explanation()
        self.call_after_refresh(self.query_one(GraphCanvas).start_building)  # only the first call builds

    def _say_breakpoint_file(self) -> None:
        """Problems reading or saving the saved breakpoints, as they happen: a notice and a console line."""
        messages = self.controller.take_messages()
        if messages:
            self.notify("\n".join(messages), title="saved breakpoints", severity="warning", timeout=BREAKPOINT_FILE_SECONDS,
                        markup=False)
            for message in messages:
                self.log_line(message, error=True)

    def on_grid_view_device_selected(self, message: GridView.DeviceSelected) -> None:
        self.inspect_device(message.device)

    @pane_work(group="inspect", exclusive=True)
    async def inspect_device(self, device: int) -> None:
        """The op the devices pane shows, as this device has it."""
        shown = self.state.devices.op if self.state is not None and self.state.devices is not None else None
        if shown is None:
            return
        title, values = await self.controller.call(self.controller.device_values, device, shown)
        self.query_one(TensorInspector).show_values(title, values)
        self.log_line(title, dim=True)

    def action_next_device(self) -> None:
        self.focus_next_device()

    def action_toggle_lockstep(self) -> None:
        self.lockstep()

    @pane_work(exclusive=True, group="session")
    async def lockstep(self) -> None:
        try:
            state = await self.controller.call(self.controller.toggle_lockstep)
        except HlodbgError as e:
            self.notify(e.message, severity="warning")
            return
        self.log_line("other devices follow the focused one (lock-step)" if state.stop_reason == "lock-step" else "other devices wait where they are; the focused one moves alone")
        await self._apply(state)

    @pane_work(exclusive=True, group="session")
    async def focus_next_device(self) -> None:
        try:
            device = await self.controller.call(self.controller.focus_next_device)
        except HlodbgError as e:
            self.notify(e.message, severity="warning")
            return
        await self._apply(await self.controller.call(self.controller.state))
        self.log_line(f"focus on device {device}")

    def action_interrupt(self) -> None:
        if self.busy:
            self.controller.interrupt()
            self.log_line(f"interrupting {move_words(self.busy)}…")

    # --- selection -----------------------------------------------------------------------------
    def on_graph_canvas_graph_built(self, message: GraphCanvas.GraphBuilt) -> None:
        self.graph = self.controller.graph = message.graph

    def on_graph_canvas_node_selected(self, message) -> None:
        if message.op is not None:
            self.select_op(message.op, from_graph=True)

    def on_source_view_line_clicked(self, message: SourceView.LineClicked) -> None:
        ops = self.controller.ops_on_line(message.line)
        if ops:
            self.select_op(ops[0])

    def select_op(self, op: Operation, from_graph: bool = False) -> None:
        self.selected_op = op
        self._explain_request = None
        if not from_graph:
            self.query_one(GraphCanvas).select(op)
        if op.pos is not None:
            self.query_one(SourceView).select_line(op.pos.line)
        self.inspect(op)

    @pane_work(group="inspect", exclusive=True)
    async def inspect(self, op: Operation) -> None:
        await self._inspect(op)
        self._refresh_explanation()

    async def _inspect(self, op: Operation) -> None:
        title, values = await self.controller.call(self.controller.inspect_op, op)
        self.query_one(TensorInspector).show_values(title, values, fact_lines(op))

    def action_run_to_selected(self) -> None:
        if self.selected_op is None:
            self.notify("select an op first (click it, or / to search)", severity="warning")
            return
        self.action_move_args("run_to", self.selected_op)

    def action_move_args(self, name: str, *args) -> None:
        if self.busy:
            self.notify("still running: Escape interrupts it", severity="warning")
            return
        self.move(name, *args)

    def action_toggle_breakpoint(self) -> None:
        op = self.selected_op or (self.state.op if self.state else None)
        if op is None:
            self.notify("no op selected", severity="warning")
            return
        self.toggle_breakpoint(op)

    @pane_work(group="breakpoints")
    async def toggle_breakpoint(self, op: Operation) -> None:
        try:
            self.log_line(await self.controller.call(self.controller.toggle_breakpoint, op))
        except HlodbgError as e:
            self.log_line(f"break: {e.message}", error=True)
        await self._apply(await self.controller.call(self.controller.state))

    # --- command line ----------------------------------------------------------------------------
    def action_command(self, prefill: str) -> None:
        command = self.query_one(CommandLine)
        command.value = prefill
        command.cursor_position = len(prefill)
        self.set_focus(command)  # at once: focus() would wait behind keys already queued

    def on_key(self, event: events.Key) -> None:
        """Keys typed right after ':', 'g' or '/' (fast typing, a paste) reach the screen before
        that key's binding has run (bindings run once a key has passed the screen), so they
        would run as bindings ('b' sets a breakpoint, 'c' continues the run). Here the key that
        opens the command line (or the lesson's answer box, `A`) opens it at once, and what follows
        it is typed into it (`A` then `q`: q is typed, not taken as quit); Enter reaches the box's
        own binding by itself."""
        if isinstance(self.focused, Input):
            if event.is_printable and event.character:
                self.focused.insert_text_at_cursor(event.character)
                event.stop()
                event.prevent_default()
            return
        action = self._bound_action(event.key)
        if action.startswith("command("):
            self.action_command(ast.literal_eval(action[len("command("):-1]))
        elif action == "answer_lesson":
            self.action_answer_lesson()
        else:
            return
        event.stop()
        event.prevent_default()

    def _bound_action(self, key: str) -> str:
        """The action `key` is bound to (after keys.toml) on this screen, or ""."""
        for _, bindings in self._binding_chain:
            for binding in bindings.key_to_bindings.get(key, []):
                return binding.action
        return ""

    async def on_command_line_submitted(self, message: CommandLine.Submitted) -> None:
        self.set_focus(None)
        if not message.command:
            return
        self.log_line(f": {echo_of(message.command)}", dim=True)
        if quits(message.command):  # like the q key: at once, a running move or not
            self.app.exit()
            return
        if self.busy:
            self.notify("still running: Escape interrupts it", severity="warning")
            return
        self.run_command(message.command)

    @pane_work(exclusive=True, group="session")
    async def run_command(self, command: str) -> None:
        if command.split(" ", 1)[0] in ("show", "g"):
            self.show_value(command.split(" ", 1)[1].strip() if " " in command else "")
            return
        self.busy = command
        try:
            result: CommandResult = await self.controller.call(self.runner.run, command)
        finally:
            self.busy = ""
        self.show_result(result)
        if result.quit:
            self.app.exit()
            return
        if result.deliver:
            self.app.deliver_binary(result.deliver)
        if result.overlay is not None:
            self.query_one(GraphCanvas).set_overlay(result.overlay)
        if result.state is not None or result.breakpoints_changed:
            await self._apply(await self.controller.call(self.controller.state))
        if result.language:
            self.lang = result.language
            self._pointed_again()
            self._refresh_explanation()
        if result.explain is not None:
            await self._open_explanation(result.explain)
        elif result.select is not None:
            self.select_op(result.select)
        if result.trace is not None:
            self.app.push_screen(TraceScreen(result.trace, self.runner.last_trace_step), self._walk_trace)

    def _walk_trace(self, step: Optional[int]) -> None:
        """A step chosen in :trace's list: the cursor goes to its event (`:trace` alone shows the
        list again there, to walk on)."""
        if step is not None:
            self.runner.last_trace_step = step
            self.run_command(f"goto {self.runner.last_trace.steps[step].event}")

    def show_result(self, result: CommandResult) -> None:
        if result.output:
            self.log_line(result.output, error=result.error)

    def show_value(self, typed: str) -> None:
        name = value_name(typed)
        ops = self.controller.find_ops(name) if len(name.rsplit("%", 1)[-1]) > 0 else []
        if not ops:
            self.log_line(f"show: no op makes '{name}' (give %name or @function:%name)", error=True)
            return
        self.log_line(f"{name} is made by {op_label(ops[0])}")
        self.select_op(ops[0])

    # --- graph and inspector keys ----------------------------------------------------------------
    def action_pan(self, dx: int, dy: int) -> None:
        self.query_one(GraphCanvas).pan(dx, dy)

    def action_select_neighbour(self, direction: str) -> None:
        canvas = self.query_one(GraphCanvas)
        canvas.select_neighbour(direction)
        if canvas.selected_op is not None:
            self.select_op(canvas.selected_op, from_graph=True)

    def action_zoom(self, step: int) -> None:
        canvas = self.query_one(GraphCanvas)
        canvas.zoom_in() if step > 0 else canvas.zoom_out()

    def action_toggle_follow(self) -> None:
        self.query_one(GraphCanvas).toggle_follow()

    def action_toggle_focus(self) -> None:
        self.query_one(GraphCanvas).toggle_focus()

    def action_open_selected(self) -> None:
        self.query_one(GraphCanvas).open_selected()

    def action_go_up(self) -> None:
        self.query_one(GraphCanvas).go_up()

    def action_inspector(self, method: str) -> None:
        getattr(self.query_one(TensorInspector), method)()

    def action_scroll_slice(self, rows: int, cols: int) -> None:
        self.query_one(TensorInspector).scroll_slice(rows, cols)

    def action_move_cursor(self, rows: int, cols: int) -> None:
        self.query_one(TensorInspector).move_cursor(rows, cols)

    # --- the memory pane ----------------------------------------------------------------------------
    def action_toggle_memory(self) -> None:
        pane = self.query_one(MemoryPanel)
        pane.display = not pane.display
        self._side_title()
        if pane.display:
            self._show_memory()
            if self.controller.memory is None and not self.controller.memory_error:
                self.compute_memory()

    def _side_title(self) -> None:
        shown = self.query_one(MemoryPanel).display
        self.query_one("#side").border_title = ("memory · " if shown else "") + "frames · breakpoints · watches"

    def _show_memory(self) -> None:
        """The memory pane as `m` shows it: the state shown's figures (before the first state, why
        there are none yet)."""
        pane = self.query_one(MemoryPanel)
        if self.state is not None:
            pane.show_state(self.state)
        elif pane.display:
            pane.show_memory(None, MemoryState(error=self.controller.memory_error).waiting)

    def _memory_failed(self) -> None:
        """The profile cannot be counted: said in the pane, in place of the figures."""
        if self.state is None:
            self._show_memory()
        else:
            self._show_state(replace(self.state, memory=MemoryState(error=self.controller.memory_error)))

    def worker_failed(self, group: str, error: BaseException) -> None:
        if group == "memory":  # the profile is worked out once: its failure stays said in the pane
            self.controller.memory_error = f"{type(error).__name__}: {error} (a bug in hlodbg)"
            self._memory_failed()

    @pane_work(group="memory", exclusive=True)
    async def compute_memory(self) -> None:
        """The run's memory profile, once, off the UI and session threads; then every pane that
        shows memory (this one, the grid's cells, the status bar) gets its figures."""
        await asyncio.to_thread(self.controller.compute_memory)
        if self.controller.memory_error:
            self._memory_failed()
            return
        if self.state is None:
            self._show_memory()
            return
        # Only the memory figures of the state shown: a full redraw would drop what the last move
        # said (its stop, the values a breakpoint caught), so only the panes showing memory redraw.
        fresh = await self.controller.call(self.controller.state)
        state = self.state
        devices = state.devices
        if devices is not None and fresh.devices is not None:
            by_device = {cell.device: cell.memory for cell in fresh.devices.cells}
            devices = replace(devices, cells=tuple(replace(cell, memory=by_device.get(cell.device, cell.memory))
                                                   for cell in devices.cells))
        self._show_state(replace(state, memory=fresh.memory, devices=devices))

    # --- other ------------------------------------------------------------------------------------
    def action_help(self) -> None:
        keys: dict[str, list[str]] = {}  # binding id -> its live keys (a keys.toml may remap them)
        for key, active in self.app.active_bindings.items():
            if active.binding.id:
                keys.setdefault(active.binding.id, []).append(key_label(key))
        groups = [(title, [(", ".join(keys[b.id]), b.description, b.id) for b in bindings if b.id in keys])
                  for title, bindings in BINDING_GROUPS]
        self.app.push_screen(HelpScreen(groups))

    def on_resize(self, event: events.Resize) -> None:
        self.set_class(event.size.width < NARROW, "-narrow")

    def action_toggle_theme(self) -> None:
        self.app.theme = "textual-light" if self.app.current_theme.dark else "textual-dark"
        self.query_one(SourceView).refresh()

    def action_export_svg(self) -> None:
        name = f"{Path(self.program.name).stem}.svg"
        path = name if self.files.served else str(Path.cwd() / name)
        self.run_command(f"export {shlex.quote(path)} --overlay nan")

    def log_line(self, text: str, error: bool = False, dim: bool = False) -> None:
        style = "bold red" if error else "dim" if dim else ""
        self.query_one("#console", RichLog).write(Text(text, style=style))


def echo_of(command: str) -> str:
    """The command as the console repeats it: a value to show by the name it means (`g` pre-fills
    "show %", so typing "%58" gives "show %%58", which is shown as "show %58")."""
    word, _, rest = command.partition(" ")
    if word in ("show", "g") and rest.strip():
        return f"{word} {value_name(rest)}"
    return command


def value_name(typed: str) -> str:
    """`%58` as the user means it: `g` pre-fills "show %", so "58", "%58", "%%58", "@fn:58" and
    "%@fn:%58" all name the same value."""
    text = typed.strip().lstrip("%")
    if text.startswith("@") and ":" not in text:
        return text  # a function
    function, colon, name = text.rpartition(":") if text.startswith("@") else ("", "", text)
    return f"{function}{colon}%{name.lstrip('%')}"


__all__ = ["MainScreen", "value_name"]
