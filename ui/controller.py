"""The UI's side of a debugging target: every target call on one dedicated thread.

The UI drives a DebugTarget (engine/debug/target.py) and never asks whether it holds one process
or a grid. A Session's run lives in a greenlet bound to the thread that first moves it, so all
calls go through a single-thread executor; the UI awaits their futures and never blocks.
`interrupt()` and `progress()` are the only things called from the UI thread directly. What the
screen shows after a call comes back as a SessionState snapshot.
"""
from __future__ import annotations

import asyncio
import math
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace
from typing import Any, Callable, Optional

import numpy as np

from hlodbg.engine.debug.capture_replay import value_source
from hlodbg.engine.debug.op_values import OpValues
from hlodbg.engine.debug.op_values import operand_label as _operand_label
from hlodbg.engine.debug.summary import summarize
from hlodbg.engine.debug.target import DebugTarget
from hlodbg.engine.ir.core import Operation, Value
from hlodbg.engine.ir.dtypes import Token
from hlodbg.engine.ir.errors import HlodbgError
from hlodbg.engine.ir.locations import describe
from hlodbg.engine.ir.opset import is_collective
from hlodbg.engine.ir.types import TensorType
from hlodbg.engine.machine.memory import MemoryCapacity, format_bytes
from hlodbg.engine.machine.process import ProcessId
from hlodbg.engine.machine.xla.device_values import to_host
from hlodbg.engine.run.elided import filled_note
from hlodbg.layouts import overlay as overlays
from hlodbg.layouts.export import export_graph, graph_view
from hlodbg.layouts.graph import DataflowGraph, GraphError
from hlodbg.layouts.labels import op_display as op_label
from hlodbg.layouts.labels import op_title
from hlodbg.layouts.op_facts import device_shard

from .device_memory import bytes_in_use, memory_analysis, memory_view, site_ops, storage_of
from .state import (
    CaughtView,
    DevicesView,
    FrameView,
    GridCellView,
    MachineView,
    MarksView,
    MemoryState,
    RecordingView,
    SessionState,
    StepValues,
    StopView,
    ValueOrigin,
    ValueView,
    WhereView,
)
from .widgets.tensor_text import format_cells


class CommandError(HlodbgError):
    """A command or request the user got wrong: said in the console, never an internal error."""


MOVES = ("step", "step_in", "step_out", "continue_", "back", "back_in", "back_out", "reverse_continue")
JUST_COMPUTED = "just computed"  # what the inspector says of the values the last step made
CHANGED_LIMIT = 400  # ops highlighted as just computed after a long move
# Elements whose statistics one state computes before it is shown; the rest are summarised by the
# inspector when (and if) their value is looked at: a training step's return hands back hundreds
# of weight matrices, and summarising them all made one step back take 2 s.
EAGER_SUMMARY_ELEMENTS = 1 << 20


class SessionController:
    def __init__(self, open_target: Callable[[], DebugTarget], graph: Optional[DataflowGraph] = None):
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="hlodbg-session")
        # The teaching panes' answers (provenance, explanations) are worked out here, one at a time:
        # an answer no longer wanted (the cursor moved on) is dropped before it starts.
        self._teaching = ThreadPoolExecutor(max_workers=1, thread_name_prefix="hlodbg-teaching")
        self.target: DebugTarget = self._executor.submit(open_target).result()
        self.graph = graph
        self.running = False
        self._index: dict[int, tuple[object, int, dict]] = {}  # id(trace) -> (trace, events indexed, op -> ids)
        self._places: dict[int, tuple[object, dict]] = {}  # id(block) -> (block, id(op) -> its place)
        self.memory = None  # the run's static memory profile, once compute_memory() has run
        self.memory_error = ""
        self._messages_said: dict[int, int] = {}  # id(breakpoint table) -> its messages said (loading and saving its file)
        self._eager_left = EAGER_SUMMARY_ELEMENTS  # of the elements the current state may summarise now
        self._total: Optional[int] = None  # the run's events, once a state has seen it finish

    @property
    def target_name(self) -> str:
        """The machine the devices run on: `cpu`, `tpu-v5e`."""
        return self.session.backend.describe()

    @property
    def device_memory(self) -> MemoryCapacity:
        """The memory of one device of the target (its size, its name in the status bar)."""
        return self.session.backend.device_memory()

    def compute_memory(self):
        """Work out the memory profile of the run on every device (static; a worker thread calls
        this, as a big program takes a while). Afterwards every state() carries the memory pane's
        figures at its op; the error, if the program's memory cannot be counted, is kept instead."""
        if self.memory is None and not self.memory_error:
            try:
                self.memory = memory_analysis(self.target)
            except (HlodbgError, ValueError) as e:
                self.memory_error = e.render() if isinstance(e, HlodbgError) else str(e)
        return self.memory

    @property
    def session(self):
        """The session the panes show: the focused device's."""
        return self.target.session

    # --- threading ---------------------------------------------------------------------------
    def submit(self, fn: Callable, *args) -> Future:
        return self._executor.submit(fn, *args)

    async def call(self, fn: Callable, *args) -> Any:
        return await asyncio.wrap_future(self.submit(fn, *args))

    async def work_out(self, fn: Callable, *args) -> Any:
        """`fn(*args)` in the teaching thread; cancelling the caller drops it if it has not started."""
        return await asyncio.wrap_future(self._teaching.submit(fn, *args))

    def interrupt(self) -> None:
        self.session.interrupt()

    def progress(self) -> int:
        """Events recorded so far (read from the UI thread while a move runs)."""
        return len(self.session.trace)

    def close(self) -> None:
        self.interrupt()  # a move still running parks at its next op, so the close below gets a turn
        try:
            self.submit(self.target.close).result(timeout=5)
        except Exception:  # noqa: BLE001 - closing is best effort: the process is leaving anyway
            pass
        self._executor.shutdown(wait=False, cancel_futures=True)
        self._teaching.shutdown(wait=False, cancel_futures=True)

    # --- moves (run in the session thread) ------------------------------------------------------
    def move(self, name: str, *args) -> SessionState:
        session = self.session
        before = session.position
        self.running = True
        try:
            stop = self.target.move(name, *args)
        finally:
            self.running = False
        session = self.session  # a breakpoint on another device moves the focus there
        return self.state(stop.reason if stop is not None else "", before, stop.message if stop is not None else "", stop)

    def state(self, reason: str = "", before: Optional[int] = None, message: str = "", stop=None) -> SessionState:
        session = self.session
        self._eager_left = EAGER_SUMMARY_ELEMENTS
        position = session.position
        op = session.op
        if session.finished:
            self._total = len(session.trace)
        frames = tuple(FrameView(info.function, replace(info, note="").frame_text(), op_label(info.op) if info.op is not None else "",
                                 info.line, info.producer, info.note) for info in session.stack)
        operands = []
        if op is not None and position < len(session.trace):
            for i, value in enumerate(session.operands()):
                operands.append(self._view(_operand_label(i, op.operands[i]), op.operands[i], value,
                                           origin=ValueOrigin(op, position, "operand", i)))
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
        figures = None
        if self.memory is not None:
            process = session.process
            label = f"device {self.target.device_id(process)}"
            if self.target.multi_device:
                label += f" (replica {process.replica_id}, partition {process.partition_id})"
            figures = memory_view(self.memory, process, label, site_ops(session.stack), session.finished)
        devices = None
        if self.target.multi_device:
            devices = self._devices(op)
            if self.target.error is not None:
                error = error or self.target.error.render()
        return SessionState(
            where=WhereView(position=position, recorded=len(session.trace), finished=session.finished, op=op, frames=frames,
                            changed=changed, total=self._total),
            values=StepValues(tuple(operands), tuple(results)),
            stop=StopView(reason, session.note or message, error, message),
            machine=MachineView(self.target.describe_focus(), self.target_name, session.backend.numerics_mode()),
            recording=RecordingView(session.recording_bytes, session.recording_budget),
            marks=MarksView((*self.target.breakpoints, *session.breakpoints.unresolved), tuple(self.target.watches())),
            memory=MemoryState(figures, self.memory_error),
            devices=devices,
            caught=self._caught(stop, op) if stop is not None and stop.reason == "breakpoint" else None)

    def take_messages(self) -> list[str]:
        """What the breakpoint file's reading and saving said since the last call (a save that
        failed, another session's changes kept, entries that no longer resolve)."""
        table = self.session.breakpoints  # on a grid, the focused device's
        said = self._messages_said.get(id(table), 0)
        self._messages_said[id(table)] = len(table.messages)
        return table.messages[said:]

    def _caught(self, stop, following_op: Optional[Operation]) -> Optional[CaughtView]:
        """The op whose results a breakpoint caught (the stop is just after it), with its line,
        its results and its operands, so the stop screen shows where the NaN came from."""
        session = self.session
        hit = next((h for h in stop.hits if h.after and h.breakpoint is not None), None)
        if hit is None or hit.event >= len(session.trace) or not session.trace.done(hit.event):
            return None
        event = session.event(hit.event)
        op = event.op
        where = f" at line {op.pos.line}" if op.pos is not None else ""
        following = f"; next: {op_label(following_op)}" if following_op is not None else ""
        operands = [f"  {_operand_label(i, operand)}  {_brief([value])}" + ("" if _finite(value) else "  (not finite)")
                    for i, (operand, value) in enumerate(zip(op.operands, event.inputs))]
        title = "\n".join([f"caught {op_label(op)}{where} (breakpoint {hit.breakpoint.describe()}){following}", *operands])
        values = self.event_values(hit.event, "caught") + [
            self._view(_operand_label(i, operand), operand, value, origin=ValueOrigin(op, hit.event, "operand", i))
            for i, (operand, value) in enumerate(zip(op.operands, event.inputs))]
        return CaughtView(op, title, tuple(values))

    # --- the devices ------------------------------------------------------------------------------
    def _devices(self, op: Optional[Operation]) -> DevicesView:
        """A cell per device of the grid, with its side of the op shown: a collective about to run
        (`op`), else the op that finished last."""
        grid = self.target
        shown = op if op is not None and is_collective(op.name) else None
        if shown is None:
            last = self._last_completed(self.session.position)
            shown = self.session.trace.ops[last] if last is not None else op
        values = {dv.process: dv for dv in grid.values_of(shown)} if shown is not None else {}
        waiting = grid.waiting()
        cells = []
        for process in grid.processes:
            session = grid.sessions[process]
            dv = values.get(process)
            device = grid.device_id(process)
            cells.append(GridCellView(
                device, process.replica_id, process.partition_id, process == grid.focus,
                session.position, op_title(session.op) if session.op is not None else "finished",
                _brief(dv.inputs) if dv is not None else "", _brief(dv.outputs) if dv is not None else "",
                dv.group if dv is not None else (), dv.sends_to if dv is not None else None, dv.receives_from if dv is not None else None,
                waiting[process], " ".join(f"{axis}={index}" for axis, index in grid.mesh_coordinates(device)),
                self._device_memory_text(process, session), device_shard(shown, device)))
        return DevicesView(tuple(cells), grid.grid_shape(), op_label(shown) if shown is not None else "", shown)

    def _device_memory_text(self, process: ProcessId, session) -> str:
        """`HBM 1.2 MiB` (`mem` on the CPU, Backend.device_memory's short name): what the device
        holds at its op, once profiled."""
        if self.memory is None:
            return ""
        used = bytes_in_use(self.memory.device(process), site_ops(session.stack))
        if used is None:
            return ""
        return f"{session.backend.device_memory().short_name} {format_bytes(used)}"

    def _last_completed(self, position: int) -> Optional[int]:
        """The op instance with results that finished last before `position`."""
        trace = self.session.trace
        e = position - 1
        while e >= 0 and not (trace.done(e) and trace.ops[e].results and trace.ends[e] < position):
            e -= 1
        return e if e >= 0 else None

    def toggle_lockstep(self) -> SessionState:
        lockstep = self.target.toggle_lockstep()
        return self.state("lock-step" if lockstep else "independent")

    def set_focus(self, process: ProcessId) -> SessionState:
        self.target.set_focus(process)
        return self.state("focus")

    def focus_next_device(self) -> int:
        """Focus the device after the focused one; its number."""
        device = self.target.next_device()
        self.target.set_focus(self.target.process_of(device))
        return device

    def device_values(self, device: int, op: Operation) -> tuple[str, list[ValueView]]:
        """One device's latest values of `op` (operands and results), for the inspector."""
        grid = self.target
        process = grid.process_of(device)
        dv = next(v for v in grid.values_of(op) if v.process == process)
        title = f"device {device} (replica {process.replica_id}, partition {process.partition_id}): {op_label(op)}"
        if dv.event is None:
            return title + ": not run yet", []
        source = value_source(grid.sessions[process], dv.event)
        title += f" ({source})" if source else ""
        backend = grid.sessions[process].backend
        views = [self._view(f"{r.name or f'result {k}'}@{device}", r, v, backend=backend,
                            origin=ValueOrigin(op, dv.event, "result", k, device)) for k, (r, v) in enumerate(zip(op.results, dv.outputs))]
        views += [self._view(f"{_operand_label(i, o)}@{device}", o, v, backend=backend,
                             origin=ValueOrigin(op, dv.event, "operand", i, device)) for i, (o, v) in enumerate(zip(op.operands, dv.inputs))]
        return title, views

    def results_before(self, position: int) -> list[ValueView]:
        """What the last step made, named as the frame at `position` sees it: the outputs of the
        nearest op before the current one in the current frame. A callee's values never show
        under the caller's names (after stepping over a call: the call's results), nor a sibling
        frame's (entering a loop body: nothing computed there yet). Past the end: the program's
        results."""
        session = self.session
        trace = session.trace
        if position >= len(trace):
            if session.finished and session.results is not None:
                return self._program_results(session.results)
            e = self._last_completed(position)
            return [] if e is None else self.event_values(e, JUST_COMPUTED)
        frame, op = trace.frames[position], trace.ops[position]
        earlier = op.parent.operations
        for k in range(self.place_in_block(op) - 1, -1, -1):
            before = earlier[k]
            if before.results:
                e = trace.event_of(frame, before)
                if e is not None and trace.done(e) and trace.ends[e] < position:
                    return self.event_values(e, JUST_COMPUTED)
        return []

    def place_in_block(self, op: Operation) -> int:
        """Where `op` is in its block, from an index made once per block: a step in a 100k-op
        function must not search it."""
        block = op.parent
        owner, places = self._places.get(id(block), (None, None))
        if owner is not block:
            places = {id(o): k for k, o in enumerate(block.operations)}
            self._places[id(block)] = (block, places)
        return places[id(op)]

    def _program_results(self, results: list) -> list[ValueView]:
        """The entry function's results, labelled by position and by the name it returned."""
        records = self.session.trace.frame_records
        function = records[0].function if records else None
        returned = function.body.terminator if function is not None else None
        types = function.function_type.results if function is not None else ()
        views = []
        for k, value in enumerate(results):
            name = returned.operands[k].name if returned is not None and k < len(returned.operands) else ""
            label = f"result {k}" + (f" ({name})" if name else "")
            returned_value = returned.operands[k] if returned is not None and k < len(returned.operands) else None
            views.append(self._view(label, returned_value if returned_value is not None else types[k] if k < len(types) else "",
                                    value, where="the program's result"))
        return views

    def event_values(self, e: int, why: str = "") -> list[ValueView]:
        session = self.session
        event = session.event(e)
        op = event.op
        previous = self._previous_iteration(event)
        source = value_source(session, e)  # replaying a capture: "captured" or "computed"
        if source and why == JUST_COMPUTED:
            why = "just now"  # not "captured (just computed)"
        views = []
        for k, value in enumerate(event.outputs):
            where = (f"event {e}" + (f", iteration {event.iteration}" if event.iteration is not None else "")
                     + (f", {source}" if source else "") + (f" ({why})" if why else ""))
            name = (op.results[k].name if k < len(op.results) else "") or f"result {k}"  # body ops printed short have no names
            prior = previous[k] if previous is not None and k < len(previous) else None
            summary = session.summary(e, k) if self._summarise_now(value) else None
            views.append(self._view(name, op.results[k], value, summary, prior, where,
                                    origin=ValueOrigin(op, e, "result", k)))
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

    # --- what the provenance view and the explain pane read -------------------------------------------
    def values_at(self, origin: ValueOrigin) -> OpValues:
        """The values of the op instance a shown value belongs to (the focused device's, or the
        grid device's the inspector shows)."""
        target = self.target
        session = self.session if origin.device is None else target.sessions[target.process_of(origin.device)]
        stale = CommandError("the value shown is from an earlier run of the session; step to see it again")
        try:
            event = session.event(origin.event)
        except HlodbgError:
            raise stale from None
        if event.op is not origin.op:
            raise stale
        return self._op_values(origin.op, event, session.process)

    def values_of_op(self, op: Operation) -> OpValues:
        """`op` as the focused device has it now: its run about to start (operands only), else its
        latest finished run, else no values (the explanation then says what it can from types)."""
        session = self.session
        position = session.position
        if position < len(session.trace) and session.trace.ops[position] is op:
            e = position
        else:
            e = self._latest_before(op, position)
        return self._op_values(op, session.event(e) if e is not None else None, session.process)

    def _op_values(self, op: Operation, event, process: ProcessId) -> OpValues:
        operands = results = peer_values = None
        if event is not None:
            operands, results = event.inputs, (event.outputs or None)
        target = self.target
        names = {}
        if target.multi_device and is_collective(op.name):  # the other devices' side of the collective
            peer_values = target.peer_values(op)
            names = {p: target.device_id(p) for p in target.processes}
        return OpValues(op, operands, results, process, peer_values, device_names=names)

    # --- breakpoints, search, export ----------------------------------------------------------------
    def toggle_breakpoint(self, op: Operation) -> str:
        """Set or clear the breakpoint on `op` (on every device of a grid); what happened."""
        return self.target.toggle_breakpoint(op)

    def find_ops(self, text: str) -> list[Operation]:
        """Ops matching a search: %name / @fn:%name, a line number, file:line, or name/kind text."""
        if text.startswith(("%", "@")):
            if self.graph is None:
                return []
            try:
                node = self.graph.resolve(text)
            except GraphError:
                return []
            op = self.graph.graph.nodes[node].get("op")
            return [op] if op is not None else []
        if text.isdigit():
            return self.ops_on_line(int(text))
        needle = text.lower()
        ops = [op for op in self.target.module.walk() if op.name != "func.func"]
        return [op for op in ops if needle in op.name.lower() or needle in describe(op.location).lower()]

    def ops_on_line(self, line: int) -> list[Operation]:
        return [op for op in self.target.module.walk() if op.pos is not None and op.pos.line == line and op.name != "func.func"]

    def export(self, path: str, overlay: Optional[str], collapse: str, title: str) -> str:
        """The graph as a file, coloured by this run (`overlay`: nan, range or none)."""
        view = graph_view(self.target.module, collapse=collapse)
        chosen = None
        if overlay == "nan":
            chosen = overlays.nan_overlay(view, self.session.op_statistics())
        elif overlay == "range":
            chosen = overlays.range_overlay(view, self.session.op_statistics())
        elif overlay == "padding":
            chosen = overlays.padding_overlay(view, self._static_backend())
        elif overlay is not None:
            raise CommandError(f"--overlay must be nan, range or padding, not '{overlay}'")
        try:
            report = export_graph(view, path, overlay=chosen, title=f"{title} at op {self.session.position}")
        except OSError as e:
            raise CommandError(f"cannot write {path}: {e.strerror or e}") from None
        return f"wrote {report.path}: {report.nodes} nodes, {report.edges} edges ({report.seconds:.2f} s)"

    def _static_backend(self):
        """A backend instance of the target's kind for static questions (layouts), prepared apart
        from the one the focused device is running with."""
        backend = self.session.backend.for_device(self.session.process)
        backend.prepare(self.target.module)
        return backend

    def padding_marks(self) -> dict:
        """node of the graph -> (level, fill, badge) of the padding overlay (`:overlay padding`)."""
        marks = overlays.padding_marks(self.target.module, self._static_backend())
        if self.graph is None:
            return {}
        return {node: (level, fill, badge) for op, (level, fill, badge, _) in marks.items()
                for node in self.graph.nodes_of(op)}

    def notes(self) -> str:
        """The full notes of the frames on the stack (`:note`): why a body's values hold whole arrays."""
        return "\n".join(f"{replace(info, note='').frame_text()}: {info.note}" for info in self.session.stack if info.note)

    def _summarise_now(self, value: Any) -> bool:
        """Whether the state being made may summarise `value` before it is shown (the first
        EAGER_SUMMARY_ELEMENTS elements' worth; the inspector summarises the rest when shown)."""
        count = _elements(value)
        if count > self._eager_left:
            return False
        self._eager_left -= count
        return True

    def _view(self, label: str, ir_value: Any, value: Any, summary=None, previous=None, where: str = "",
              backend=None, origin: Optional[ValueOrigin] = None) -> ValueView:
        """A value for the inspector; `ir_value` is its SSA Value (or only its type, for a value
        the program text does not name), whose layout on the device (`backend`, by default the
        focused one's) the physical view shows."""
        if summary is None and value is not None and not isinstance(value, Token) and self._summarise_now(value):
            summary = summarize(value)  # a big device array's summary is computed on its device
        # The inspector shows the elements: a device array (xla:* targets) comes to the host here.
        value, previous = to_host(value), to_host(previous)
        type_ = ir_value.type if isinstance(ir_value, Value) else ir_value
        filled = filled_note(ir_value.defining_op) if isinstance(ir_value, Value) and ir_value.defining_op else None
        if filled:  # values --fill-elided made up: said wherever the value is shown
            where = f"{filled}  {where}" if where else filled
        storage = storage_of(backend or self.session.backend, ir_value, value)
        return ValueView(label, _type_text(type_, value), value, summary, previous, where, storage, origin)


def _elements(value: Any) -> int:
    if isinstance(value, tuple):
        return sum(_elements(element) for element in value)
    return int(getattr(value, "size", 1))


def _type_text(type_: Any, value: Any) -> str:
    """The declared type, and when the value holds many elements of it at once (a reducer body
    run on whole arrays: `tensor<f32>` holding 1,024 pairs) how many."""
    text = str(type_)
    shape = getattr(type_, "shape", None)
    if not isinstance(type_, TensorType) or shape is None or None in shape or not isinstance(value, np.ndarray):
        return text
    declared = math.prod(shape)
    if value.shape == tuple(shape) or declared == 0 or value.size % declared or value.size == declared:
        return text
    return f"{text} × {value.size // declared:,} pairs at once"


def _finite(value: Any) -> bool:
    return isinstance(value, Token) or summarize(value).finite


SMALL_VALUE = 16  # elements up to which a device's cell shows the value itself, not a summary


def _brief(values: list) -> str:
    """A device's side of an op in a few words: small values as they are (what each device sends
    and receives at a collective), larger ones as a summary."""
    if not values:
        return ""
    parts = []
    for value in values:
        if isinstance(value, Token):
            parts.append("token")
            continue
        summary = summarize(value)
        if isinstance(value, np.ndarray) and value.size <= SMALL_VALUE and summary.kind != "tuple":
            texts, _ = format_cells(value.reshape(-1))
            parts.append(f"{summary.type_text} [{' '.join(texts)}]")
        else:
            parts.append(summary.describe())
    return "; ".join(parts)


__all__ = ["CommandError", "SessionController", "MOVES"]
