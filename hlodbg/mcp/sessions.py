"""The programs an agent has open, each a debugging target (the session the debugger's window and
the DAP server use), and what each tool does with one: plain methods returning text, so they run
and are tested without the MCP SDK.

Every call runs on one thread (`Desk.call`): a Session's run lives in a greenlet bound to the
thread that first moves it (ui/controller.py and hlodbg/dap/server.py do the same). A move is
given a time limit: past it the run is interrupted where it is (a loop that never ends stops
there), and the next move goes on from that op.
"""
from __future__ import annotations

import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Callable, Optional, TypeVar

import numpy as np

from hlodbg.engine.ir.errors import HlodbgError, printable

from .folders import Folders
from .reports import LISTED_VALUES, op_place, program_summary, stop_text, summary_line, value_text

T = TypeVar("T")

STEPS = {"over": "step", "in": "step_in", "out": "step_out", "back": "back", "back_in": "back_in",
         "back_out": "back_out", "reverse": "reverse_continue"}
MAX_STEPS = 1000  # steps one call may take
DEFAULT_TIMEOUT = 60.0  # seconds a move may run before it is interrupted
DEFAULT_MAX_OPEN = 4  # programs open at once (each holds a recording of its run)


class ToolRefusal(HlodbgError):
    """A request the server will not follow as sent (an unknown handle, a bad option)."""


@dataclass
class Opened:
    """One program open for an agent: its target and what it was opened with (diff runs it again
    on the same arguments)."""

    handle: str
    program: Any
    target: Any
    options: dict
    printed_said: int = 0  # lines of the run's `interpreter.print` output already shown


class Desk:
    def __init__(self, folders: Folders, max_open: int = DEFAULT_MAX_OPEN):
        self.folders = folders
        self.max_open = max_open
        self.open: dict[str, Opened] = {}
        self._count = 0
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="hlodbg-mcp-session")

    def call(self, work: Callable[[], T]):
        """A future of `work()` run on the sessions' thread."""
        return self._worker.submit(work)

    def close_all(self) -> None:
        for handle in list(self.open):
            self.call(lambda h=handle: self.close(h)).result()
        self._worker.shutdown(wait=True)

    # -- opening and closing ------------------------------------------------------------------
    def load(self, program: str, args: Optional[str] = None, target: Optional[str] = None, entry: str = "main",
             seed: int = 0, replicas: Optional[int] = None, partitions: Optional[int] = None,
             memory: Optional[str] = None, fill_elided: Optional[str] = None) -> str:
        from hlodbg.dap.launch import read_launch

        if len(self.open) >= self.max_open:
            raise ToolRefusal(f"{len(self.open)} programs are open ({', '.join(self.open)}), as many as this server "
                              "keeps: close one first")
        attributes: dict[str, Any] = {"program": self.folders.readable(program, "program"), "entry": entry,
                                      "seed": seed}
        if args is not None:
            attributes["args"] = self.folders.readable(args, "args")
        for key, value in (("target", target), ("replicas", replicas), ("partitions", partitions),
                           ("memory", memory), ("fillElided", fill_elided)):
            if value is not None:
                attributes[key] = value
        launched = read_launch(attributes)
        self._count += 1
        handle = f"p{self._count}"
        options = dict(args=attributes.get("args"), target=target, entry=entry, seed=seed, replicas=replicas,
                       partitions=partitions)
        self.open[handle] = Opened(handle, launched.program, launched.target, options)
        return (program_summary(launched.program, launched.target, f"opened as {handle}", entry) +
                "\nthe cursor is at the first op; `run` goes to the first NaN (to='nan') or a breakpoint")

    def close(self, handle: str) -> str:
        opened = self.get(handle)
        del self.open[handle]
        opened.target.close()
        return f"closed {handle} ({opened.program.name}); open: {', '.join(self.open) or 'none'}"

    def get(self, handle: str) -> Opened:
        opened = self.open.get(handle)
        if opened is None:
            known = ", ".join(self.open) or "none: load a program first"
            raise ToolRefusal(f"no program open as {handle!r} (open: {known})")
        return opened

    def focused(self, handle: str, device: Optional[int]) -> Opened:
        """The program, with `device` (its number on the grid) in focus from now on when given:
        moves are made on it (the others follow in lock-step) and values read from it."""
        opened = self.get(handle)
        if device is not None:
            target = opened.target
            target.set_focus(target.process_of(device))
        return opened

    def summary(self, handle: str) -> str:
        opened = self.get(handle)
        session = opened.target.session
        text = program_summary(opened.program, opened.target, handle, opened.options["entry"])
        if session.finished and session.results is not None:
            text += "\nthe run's results:\n" + "\n".join(
                f"  result {k}: {summary_line(value)}" for k, value in enumerate(session.results[:LISTED_VALUES]))
        return text + "\ncursor:\n" + session.where()

    # -- moving -------------------------------------------------------------------------------
    def run(self, handle: str, to: Optional[str] = None, condition: Optional[str] = None,
            timeout: float = DEFAULT_TIMEOUT, device: Optional[int] = None) -> str:
        """Continue to `to` (a breakpoint for this move only: nan, inf, %12, a line, an op kind...),
        else to the next breakpoint or the end."""
        opened = self.focused(handle, device)
        target = opened.target
        added = target.break_at(to, condition, saved=False) if to else []
        try:
            stop = self._move(opened, "continue_", timeout)
        finally:
            for process, bp in zip(target.processes, added):  # break_at made one per device, in this order
                target.sessions[process].breakpoints.remove(bp.id)
        return self._stopped(opened, stop, timeout)

    def step(self, handle: str, how: str = "over", count: int = 1, timeout: float = DEFAULT_TIMEOUT,
             device: Optional[int] = None) -> str:
        opened = self.focused(handle, device)
        move = STEPS.get(how)
        if move is None:
            raise ToolRefusal(f"step how={how!r}: expected one of {', '.join(STEPS)}")
        if not 1 <= count <= MAX_STEPS:
            raise ToolRefusal(f"step count={count}: expected 1 to {MAX_STEPS}")
        deadline = time.monotonic() + timeout
        stop = None
        for _ in range(count):
            stop = self._move(opened, move, max(deadline - time.monotonic(), 0.001))
            if stop.reason not in ("step", "goto", "start"):
                break
        assert stop is not None
        return self._stopped(opened, stop, timeout)

    def breakpoint(self, handle: str, spec: Optional[str] = None, condition: Optional[str] = None,
                   clear: bool = False) -> str:
        """Add a breakpoint for the session (kept until cleared), or clear them all; the list."""
        opened = self.get(handle)
        target = opened.target
        if clear:
            for session in target.sessions.values():
                for bp in list(session.breakpoints.breakpoints):
                    session.breakpoints.remove(bp.id)
        if spec:
            target.break_at(spec, condition, saved=False)
        listed = [bp.describe() for bp in target.breakpoints]
        return "breakpoints: " + ("; ".join(listed) if listed else "none")

    def _move(self, opened: Opened, move: str, timeout: float):
        if not timeout > 0:
            raise ToolRefusal(f"timeout {timeout}: expected seconds above 0")
        target = opened.target
        finished = threading.Event()
        watchdog = threading.Thread(target=_interrupt_after, args=(target, timeout, finished), daemon=True,
                                    name="hlodbg-mcp-timeout")
        watchdog.start()
        try:
            return target.move(move)
        finally:
            finished.set()
            watchdog.join()

    def _stopped(self, opened: Opened, stop, timeout: float) -> str:
        printed = opened.target.session.printed
        new = printed[opened.printed_said:]
        opened.printed_said = len(printed)
        return stop_text(stop, opened.target, new, timeout)

    # -- looking ------------------------------------------------------------------------------
    def read(self, handle: str, expression: str, device: Optional[int] = None) -> str:
        """An hlodbg expression's value where the cursor is: %5, %x[0, :4], abs(%3).max(), iteration."""
        session = self.focused(handle, device).target.session
        text = _expression(expression)
        return value_text(session.evaluate(text), text)

    def save(self, handle: str, expression: str, path: str, overwrite: bool = False) -> str:
        """An expression's value written as a .npy file in the work folder (a file already there
        only with `overwrite`)."""
        from hlodbg.engine.machine.xla.device_values import to_host

        session = self.get(handle).target.session
        if not path.endswith(".npy"):
            raise ToolRefusal(f"save {printable(path)}: the file name must end in .npy")
        real = self.folders.writable(path, "path")
        if os.path.exists(real) and not overwrite:
            raise ToolRefusal(f"{printable(real)} exists: pass overwrite=true to replace it, or choose another name")
        value = to_host(session.evaluate(_expression(expression)))
        if not isinstance(value, (np.ndarray, np.generic)):
            raise ToolRefusal(f"{expression} is not an array (it is {type(value).__name__}): save one part of it")
        np.save(real, np.asarray(value), allow_pickle=False)
        return f"wrote {printable(real)} ({os.path.getsize(real):,} bytes)"

    def explain(self, handle: str, op: Optional[str] = None, at: Optional[str] = None, result: Optional[int] = None,
                lang: str = "en", device: Optional[int] = None) -> str:
        """What an op does with its values where the cursor is (its run about to start, else its
        latest), and with `at`, where that element of its result comes from."""
        import re

        from hlodbg.engine.debug.explain import explain_op
        from hlodbg.engine.ir.opdefs import is_collective
        from hlodbg.engine.ir.phrases import check_language
        from hlodbg.explaining import find_op, parse_at
        from hlodbg.layouts.labels import hlo_opcode

        opened = self.focused(handle, device)
        target = opened.target
        try:
            lang = check_language(lang)
        except ValueError as unknown:
            raise ToolRefusal(f"lang: {unknown}") from None
        if op is None:
            chosen = target.session.op
            if chosen is None:
                raise ToolRefusal("the run has finished, so no op is at the cursor: name one, e.g. op='%5'")
        else:
            path = str(opened.program.path) if opened.program.path else None
            chosen = find_op(target.module, op, opened.options["entry"], path)
        if result is None:
            numbered = re.search(r"#(\d+)$", (op or "").strip())
            result = int(numbered.group(1)) if numbered else 0
        element = parse_at(at, chosen, result) if at is not None else None
        mine = next((dv for dv in target.values_of(chosen) if dv.process == target.focus), None)
        operands = mine.inputs if mine is not None and mine.event is not None else None
        results = mine.outputs if mine is not None and mine.outputs else None
        peers = target.peer_values(chosen) if target.multi_device and is_collective(chosen.name) else None
        explanation = explain_op(chosen, lang=lang, operands=operands, results=results, at=element, result=result,
                                 process=target.focus, peer_values=peers, hlo_opcode=hlo_opcode(chosen))
        event = f"event {mine.event}" if mine is not None and mine.event is not None else "no run of it yet"
        return f"{op_place(chosen)}: values of {event}\n" + explanation.text(100)

    def trace(self, handle: str, value: str, at: Optional[str] = None, timeout: float = DEFAULT_TIMEOUT,
              device: Optional[int] = None) -> str:
        """Where an element came from, op by op (engine/debug/lineage.py); value 'nan' or 'inf':
        the first one the run makes from the cursor on (the cursor moves there)."""
        from hlodbg.cli_trace import _element
        from hlodbg.engine.debug.lineage import first_nonfinite, trace_element

        opened = self.focused(handle, device)
        target = opened.target
        text = value.strip()
        if text in ("nan", "inf"):
            if at is not None:
                raise ToolRefusal(f"trace {text} finds its own element: leave out `at`")
            # Without `device` every device looks: a NaN made on one device only is found there.
            everywhere = target if target.multi_device and device is None else None
            name, event, element = first_nonfinite(target.session, text,
                                                   lambda: self._move(opened, "continue_", timeout), target=everywhere)
        else:
            name, event, element = _expression(text), None, _element(at) if at is not None else None
        return trace_element(target.session, name, element, event).text()

    # -- reports over the whole program -------------------------------------------------------
    def memory(self, handle: str, target: Optional[str] = None, top: int = 10) -> str:
        """`hlodbg memory`'s report: each device's peak, the buffers live there, whether it fits."""
        from hlodbg.cli_memory import memory_text

        opened = self.get(handle)
        if top < 0:
            raise ToolRefusal(f"top={top}: expected 0 (all buffers) or more")
        options = opened.options
        analysis = opened.program.memory(target or options["target"], replicas=options["replicas"],
                                         partitions=options["partitions"], entry=options["entry"])
        return memory_text(opened.program.name, analysis, top)

    def diff(self, handle: str, against: str, rtol: Optional[float] = None, atol: Optional[float] = None) -> str:
        """`hlodbg diff`'s report: the program run on its target and on `against` in lockstep, the
        first op whose result differs beyond the tolerance."""
        from hlodbg.divergence_report import report_text
        from hlodbg.engine.debug.divergence import DivergeSpec, compare_runs
        from hlodbg.engine.machine.targets import DEFAULT_TARGET, backend_for
        from hlodbg.engine.run.grid import grid_shape
        from hlodbg.engine.run.interpreter import entry_function
        from hlodbg.execution import gather_arguments

        opened = self.get(handle)
        options = opened.options
        for name, given in (("rtol", rtol), ("atol", atol)):
            if given is not None and not given >= 0:
                raise ToolRefusal(f"{name} must be a number, 0 or more (got {given})")
        module = opened.program.module
        grid = grid_shape(module, options["replicas"], options["partitions"])
        values, _ = gather_arguments(entry_function(module, options["entry"]), options["args"], [], options["seed"],
                                     quiet=True, grid=grid)
        mine, theirs = backend_for(options["target"] or DEFAULT_TARGET), backend_for(against)
        rtol, atol = DivergeSpec(rtol=rtol, atol=atol).tolerances(mine, theirs)
        report = compare_runs(module, values, mine, theirs, entry=options["entry"], rtol=rtol, atol=atol, grid=grid)
        return report_text(report, opened.program.name)


def _expression(text: Any) -> str:
    if not isinstance(text, str) or not text.strip():
        raise ToolRefusal("expected an hlodbg expression, e.g. %5, %x[0, :4], abs(%3).max()")
    return text.strip()


def _interrupt_after(target, seconds: float, finished: threading.Event) -> None:
    """Interrupt every device's run once `seconds` pass, again and again until the move ends: an
    interrupt lands only once the move has armed its run (hlodbg/dap/server.py does the same)."""
    if finished.wait(seconds):
        return
    while not finished.is_set():
        for session in target.sessions.values():
            session.interrupt()
        finished.wait(0.02)


__all__ = ["DEFAULT_TIMEOUT", "Desk", "Opened", "STEPS", "ToolRefusal"]
