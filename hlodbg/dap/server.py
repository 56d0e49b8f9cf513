"""The Debug Adapter Protocol server: an editor's requests on one debugging target.

One reader thread takes messages off the wire; every request but `pause` goes, in order, to one
session thread, because a Session's run lives in a greenlet bound to the thread that first moves
it (ui/controller.py does the same for the UI). `pause` interrupts the move running there, as
Escape does in the UI. A request that cannot be met gets an error response saying why; an
unexpected failure is reported the same way (with its type, as a bug) and the server goes on.

Moves are the session's own controls, through the target (engine/debug/target.py):

    continue / next / stepIn / stepOut      continue_ / step / step_in / step_out
    stepBack / reverseContinue              back / reverse_continue
    restart                                 restart (breakpoints stay)

on the device the request's thread names (the others follow in lock-step on a grid).
"""
from __future__ import annotations

import os
import queue
import sys
import threading
import time
import traceback
from typing import Any, Callable, Optional

from hlodbg.engine.debug.stops import Stop, op_label
from hlodbg.engine.ir.errors import HlodbgError

from .disassembly import Disassembly
from .frames import Inspector, Named
from .launch import Launched, read_launch
from .marks import EXCEPTION_FILTERS, Marks
from .wire import BadMessage, Wire, WireError

CAPABILITIES = {
    "supportsConfigurationDoneRequest": True,
    "supportsFunctionBreakpoints": True,
    "supportsConditionalBreakpoints": True,
    "supportsHitConditionalBreakpoints": True,
    "supportsEvaluateForHovers": True,
    "exceptionBreakpointFilters": list(EXCEPTION_FILTERS),
    "supportsStepBack": True,
    "supportsRestartRequest": True,
    "supportsExceptionInfoRequest": True,
    "supportsTerminateRequest": True,
    "supportsBreakpointLocationsRequest": True,
    "supportsExceptionFilterOptions": True,
    "supportsDelayedStackTraceLoading": True,
    "supportsDisassembleRequest": True,
}

MOVES = {"continue": "continue_", "next": "step", "stepIn": "step_in", "stepOut": "step_out", "stepBack": "back",
         "reverseContinue": "reverse_continue"}
PROGRAM_REFERENCE = 1  # the sourceReference of the program's text when it has no file


class RequestError(HlodbgError):
    """A request this server cannot meet as sent (not launched yet, an unknown command, ...)."""


class Adapter:
    def __init__(self, wire: Wire):
        self.wire = wire
        self._seq = 0
        self._seq_lock = threading.Lock()
        self._jobs: queue.Queue = queue.Queue()
        self.launched: Optional[Launched] = None
        self.marks: Optional[Marks] = None
        self.disassembly: Optional[Disassembly] = None
        self.inspector = Inspector(self._program_source, lambda: self.launched.cwd if self.launched else None,
                                   lambda op: self.disassembly.address(op) if self.disassembly else None)
        self.running = False
        self._last_exception = ("", "", "")  # (id, description, the op) of the last exception stop
        self._ended = False
        self._pending = 0  # requests handed to the session thread and not yet answered
        self._pause_wanted = False  # a pause came while a move was running or waiting its turn
        self._pending_lock = threading.Lock()
        self._printed_said = 0  # lines of the run's `interpreter.print` output sent as output events

    # -- the loop -------------------------------------------------------------------------------
    def serve(self) -> None:
        """Answer requests until the client disconnects or the stream ends."""
        worker = threading.Thread(target=self._work, name="hlodbg-dap-session", daemon=True)
        worker.start()
        try:
            while not self._ended:
                try:
                    message = self.wire.receive()
                except BadMessage as e:
                    self._event("output", {"category": "important", "output": f"hlodbg dap: {e.message}\n"})
                    continue
                except WireError as e:
                    print(f"hlodbg dap: {e.message}; closing the connection", file=sys.stderr)
                    break
                if message is None:
                    break
                if message.get("type") != "request":
                    continue  # responses to reverse requests and events: this server sends neither
                if message.get("command") == "pause":
                    self._answer(message, self._pause)
                    continue
                if message.get("command") in ("disconnect", "terminate"):
                    self._interrupt()  # a move still running stops at its next op
                with self._pending_lock:
                    self._pending += 1
                self._jobs.put(message)
                if message.get("command") == "disconnect":
                    break
        finally:
            self._interrupt()  # the editor went away: a move still running stops at its next op
            self._jobs.put(None)
            worker.join()

    def _work(self) -> None:
        while True:
            message = self._jobs.get()
            if message is None:
                break
            command = message.get("command")
            handler = getattr(self, f"on_{command}", None) if isinstance(command, str) else None
            if handler is None:
                self._respond(message, False, message=f"hlodbg dap does not support the request {command!r}")
            else:
                self._answer(message, handler)
            with self._pending_lock:
                self._pending -= 1
                if not self._pending:
                    self._pause_wanted = False
        if self.launched is not None:
            self.launched.target.close()

    def _answer(self, request: dict, handler: Callable[[dict], Any]) -> None:
        arguments = request.get("arguments") or {}
        then = None
        try:
            if not isinstance(arguments, dict):
                raise RequestError(f"{request.get('command')}: its arguments must be an object")
            body = handler(arguments)
            if isinstance(body, tuple):
                body, then = body
            self._respond(request, True, body)
        except HlodbgError as e:
            # With a place in a file (a program that does not parse): file:line:col, the line and a caret.
            self._respond(request, False, message=e.render() if e.pos is not None else e.message)
        except Exception as e:  # noqa: BLE001 - a bug in hlodbg must not end the editor's session
            traceback.print_exc(file=sys.stderr)
            self._respond(request, False, message=f"internal error: {type(e).__name__}: {e} (a bug in hlodbg; "
                                                 "the traceback is on the server's stderr)")
        if then is not None:
            try:
                then()
            except HlodbgError as e:
                self._report_failure(e.message)
            except Exception as e:  # noqa: BLE001 - likewise: said to the editor, the server goes on
                traceback.print_exc(file=sys.stderr)
                self._report_failure(f"internal error: {type(e).__name__}: {e} (a bug in hlodbg)")

    def _send(self, message: dict) -> None:
        with self._seq_lock:
            self._seq += 1
            message["seq"] = self._seq
            self.wire.send(message)

    def _respond(self, request: dict, success: bool, body: Any = None, message: str = "") -> None:
        response = {"type": "response", "request_seq": request.get("seq", 0), "success": success,
                    "command": request.get("command", "")}
        if success:
            if body is not None:
                response["body"] = body
        else:
            response["message"] = message
            response["body"] = {"error": {"id": 1, "format": message.replace("{", "{{").replace("}", "}}"),
                                          "showUser": True}}
        self._send(response)

    def _event(self, name: str, body: Optional[dict] = None) -> None:
        event = {"type": "event", "event": name}
        if body is not None:
            event["body"] = body
        self._send(event)

    # -- lifecycle ------------------------------------------------------------------------------
    def on_initialize(self, arguments: dict) -> dict:
        return CAPABILITIES

    def on_launch(self, arguments: dict):
        if self.launched is not None:
            raise RequestError("launch: this session has launched its program already")
        launched = read_launch(arguments)
        marks = Marks(launched.target, str(launched.program.path) if launched.program.path else None)
        if launched.break_on:
            try:
                marks.set_launch(launched.break_on)
            except HlodbgError:
                launched.target.close()
                raise
        self.launched, self.marks = launched, marks
        self.disassembly = Disassembly(launched.target.module)
        return {}, lambda: self._event("initialized")

    def on_attach(self, arguments: dict):
        raise RequestError("hlodbg dap launches the program it debugs: use a 'launch' configuration")

    def on_configurationDone(self, arguments: dict):
        launched = self._launched()
        if launched.stop_on_entry:
            return {}, lambda: self._stopped("entry", "at the first op", [])
        return {}, lambda: self._move("continue_")

    def on_disconnect(self, arguments: dict):
        self._ended = True
        return {}

    def on_terminate(self, arguments: dict):
        return {}, self._terminated

    def _terminated(self) -> None:
        self._event("terminated")

    def on_restart(self, arguments: dict):
        launched = self._launched()
        return {}, lambda: self._move("restart", target=launched.target)

    # -- breakpoints ----------------------------------------------------------------------------
    def on_setBreakpoints(self, arguments: dict) -> dict:
        source = arguments.get("source") or {}
        wanted = arguments.get("breakpoints")
        if wanted is None:
            wanted = [{"line": line} for line in arguments.get("lines") or []]
        if not isinstance(source, dict) or not isinstance(wanted, list) or not isinstance(source.get("path", ""), str):
            raise RequestError("setBreakpoints: expected a source object (with its path) and a list of breakpoints")
        marks = self._marks()
        # A verified breakpoint names the source as the client sent it (the same file by another path,
        # through a link, is still the client's document).
        return {"breakpoints": marks.set_lines(source, [w if isinstance(w, dict) else {} for w in wanted], source)}

    def on_setFunctionBreakpoints(self, arguments: dict) -> dict:
        wanted = arguments.get("breakpoints") or []
        if not isinstance(wanted, list):
            raise RequestError("setFunctionBreakpoints: expected a list of breakpoints")
        return {"breakpoints": self._marks().set_functions([w if isinstance(w, dict) else {} for w in wanted])}

    def on_setExceptionBreakpoints(self, arguments: dict) -> dict:
        filters = arguments.get("filters") or []
        options = arguments.get("filterOptions") or []
        if not isinstance(filters, list) or not isinstance(options, list):
            raise RequestError("setExceptionBreakpoints: expected lists of filters")
        return {"breakpoints": self._marks().set_exceptions(filters, options)}

    def on_breakpointLocations(self, arguments: dict) -> dict:
        line = arguments.get("line")
        if not isinstance(line, int):
            raise RequestError("breakpointLocations: expected a line")
        end = arguments.get("endLine") if isinstance(arguments.get("endLine"), int) else line
        return {"breakpoints": [{"line": n} for n in self._marks().lines_with_ops(line, end)]}

    # -- moves ----------------------------------------------------------------------------------
    def on_continue(self, arguments: dict):
        return self._move_request("continue", arguments, {"allThreadsContinued": True})

    def on_next(self, arguments: dict):
        return self._move_request("next", arguments)

    def on_stepIn(self, arguments: dict):
        return self._move_request("stepIn", arguments)

    def on_stepOut(self, arguments: dict):
        return self._move_request("stepOut", arguments)

    def on_stepBack(self, arguments: dict):
        return self._move_request("stepBack", arguments)

    def on_reverseContinue(self, arguments: dict):
        return self._move_request("reverseContinue", arguments)

    def _move_request(self, command: str, arguments: dict, body: Optional[dict] = None):
        target = self._launched().target
        if "threadId" in arguments:
            target.set_focus(self._process(arguments["threadId"]))
        return (body or {}), lambda: self._move(MOVES[command])

    def _move(self, move: str, target=None) -> None:
        target = target or self._launched().target
        self.inspector.reset()
        self._last_exception = ("", "", "")
        self.running = True
        try:
            stop = target.move(move)
        finally:
            self.running = False
            self._pause_wanted = False
        self._report(stop)

    def _pause(self, arguments: dict) -> dict:
        self._interrupt()
        return {}

    def _interrupt(self) -> None:
        """Stop the move running or waiting its turn in the session thread (nothing when idle)."""
        with self._pending_lock:
            if not self._pending or self._pause_wanted:
                return
            self._pause_wanted = True
        threading.Thread(target=self._keep_interrupting, name="hlodbg-dap-pause", daemon=True).start()

    def _keep_interrupting(self) -> None:
        # An interrupt lands only once the move has armed its run (one before is overwritten when
        # the move starts), so it is repeated until the paused move has stopped.
        while self._pause_wanted:
            launched = self.launched
            if launched is not None and self.running:
                launched.target.session.interrupt()
            time.sleep(0.02)

    def _report(self, stop: Stop) -> None:
        """The stopped (or terminated) event for where a move ended."""
        session = self._launched().target.session
        for line in session.printed[self._printed_said:]:
            self._event("output", {"category": "stdout", "output": line if line.endswith("\n") else line + "\n"})
        self._printed_said = len(session.printed)
        if stop.reason == "breakpoint":
            reason, description, ids = self._marks().stop_reason(stop)
            if reason == "exception":
                self._last_exception = (self._exception_id(stop), description, self._hit_op(stop))
            self._stopped(reason, description, ids, text=description)
        elif stop.reason == "error":
            op = self._launched().target.session.op
            self._last_exception = ("error", stop.message, op_label(op) if op is not None else "")
            self._stopped("exception", f"the run failed: {stop.message}", [], text=stop.message)
        elif stop.reason == "end":
            self._finished()
        elif stop.reason == "interrupted":
            self._stopped("pause", "paused", [])
        elif stop.reason == "memory":
            self._stopped("pause", stop.message, [], text=stop.message)
        else:
            where = "at the first op" if stop.reason == "start" else ""
            self._stopped("goto" if stop.reason == "goto" else "step", where or stop.message, [])

    def _finished(self) -> None:
        launched = self._launched()
        session = launched.target.session
        results = session.results or []
        lines = [f"result {k}: {self.inspector.describe(Named(f'result {k}', value))[0]}" for k, value in enumerate(results)]
        self.inspector.reset()
        self._event("output", {"category": "console", "output": "finished\n" + "".join(f"  {line}\n" for line in lines)})
        if launched.stop_at_end:
            self._stopped("end", "finished: step back or reverse continue to look at the run", [])
        else:
            self._event("exited", {"exitCode": 0})
            self._event("terminated")

    def _hit_op(self, stop: Stop) -> str:
        """The op a value breakpoint's hit found (it stops just after that op ran)."""
        trace = self._launched().target.session.trace
        for hit in stop.hits:
            if hit.breakpoint is not None and 0 <= hit.event < len(trace):
                return op_label(trace.ops[hit.event])
        return ""

    def _exception_id(self, stop: Stop) -> str:
        for hit in stop.hits:
            if hit.breakpoint is not None and hit.breakpoint.kind == "value":
                return hit.breakpoint.spec.lower()
        return "breakpoint"

    def _stopped(self, reason: str, description: str, ids: list, text: str = "") -> None:
        target = self._launched().target
        body = {"reason": reason, "threadId": target.device_id(target.focus) + 1, "allThreadsStopped": True,
                "preserveFocusHint": False}
        if description:
            body["description"] = description
        if text:
            body["text"] = text
        if ids:
            body["hitBreakpointIds"] = ids
        self._event("stopped", body)

    def _report_failure(self, message: str) -> None:
        self._event("output", {"category": "stderr", "output": f"{message}\n"})
        if self.launched is not None:
            self._stopped("pause", message, [], text=message)

    # -- looking --------------------------------------------------------------------------------
    def on_threads(self, arguments: dict) -> dict:
        if self.launched is None:
            return {"threads": []}
        target = self.launched.target
        threads = []
        for process in target.processes:
            device = target.device_id(process)
            name = f"device {device}"
            if target.multi_device:
                name += f" (replica {process.replica_id}, partition {process.partition_id})"
            else:
                name += f" ({target.session.backend.describe()})"
            threads.append({"id": device + 1, "name": name})
        return {"threads": threads}

    def on_stackTrace(self, arguments: dict) -> dict:
        process = self._process(arguments.get("threadId"))
        session = self._launched().target.sessions[process]
        frames = self.inspector.stack_frames(session, process)
        start = arguments.get("startFrame") or 0
        levels = arguments.get("levels") or 0
        if not isinstance(start, int) or not isinstance(levels, int) or start < 0 or levels < 0:
            raise RequestError("stackTrace: startFrame and levels are numbers from 0")
        shown = frames[start:start + levels] if levels else frames[start:]
        return {"stackFrames": shown, "totalFrames": len(frames)}

    def on_scopes(self, arguments: dict) -> dict:
        ref = self.inspector.frame(arguments.get("frameId"))
        return {"scopes": self.inspector.scopes(self._launched().target.sessions[ref.process], ref)}

    def on_variables(self, arguments: dict) -> dict:
        start, count = arguments.get("start") or 0, arguments.get("count") or 0
        if not isinstance(start, int) or not isinstance(count, int) or start < 0 or count < 0:
            raise RequestError("variables: start and count are numbers from 0")
        return {"variables": self.inspector.variables_of(arguments.get("variablesReference"), start, count)}

    def on_evaluate(self, arguments: dict) -> dict:
        expression = arguments.get("expression")
        if not isinstance(expression, str) or not expression.strip():
            raise RequestError("evaluate: give an hlodbg expression, e.g. %5, abs(%3).max() or %x[0, :4]")
        target = self._launched().target
        session = target.session
        if arguments.get("frameId") is not None:
            session = target.sessions[self.inspector.frame(arguments["frameId"]).process]
        value = session.evaluate(expression.strip())
        text, reference, indexed = self.inspector.describe(Named(expression.strip(), value, evaluate_name=expression.strip()))
        body = {"result": text, "variablesReference": reference}
        if indexed is not None:
            body["indexedVariables"] = indexed
        return body

    def on_exceptionInfo(self, arguments: dict) -> dict:
        exception, description, op = self._last_exception
        if not exception:
            raise RequestError("exceptionInfo: the program is not stopped at a NaN, an Inf or an error")
        details = {"message": description}
        if op:
            details["typeName"] = op
        return {"exceptionId": exception, "description": description, "breakMode": "always", "details": details}

    def on_disassemble(self, arguments: dict) -> dict:
        self._launched()
        assert self.disassembly is not None
        return {"instructions": self.disassembly.instructions(
            arguments.get("memoryReference"), arguments.get("offset", 0), arguments.get("instructionOffset", 0),
            arguments.get("instructionCount"), self._program_source(None))}

    def on_source(self, arguments: dict) -> dict:
        launched = self._launched()
        source = arguments.get("source") or {}
        if not isinstance(source, dict) or not isinstance(source.get("path", ""), (str, type(None))):
            raise RequestError("source: expected a source object with a path or a sourceReference")
        reference = source.get("sourceReference") or arguments.get("sourceReference")
        path = source.get("path")
        program_path = str(launched.program.path) if launched.program.path else None
        if reference == PROGRAM_REFERENCE or (path and program_path and os.path.realpath(path) == os.path.realpath(program_path)):
            return {"content": launched.program.source, "mimeType": "text/plain"}
        raise RequestError(f"source: no source {reference or path!r} in this session (only the program's text)")

    # -- helpers --------------------------------------------------------------------------------
    def _launched(self) -> Launched:
        if self.launched is None:
            raise RequestError("the program has not been launched yet (send 'launch' first)")
        return self.launched

    def _marks(self) -> Marks:
        self._launched()
        assert self.marks is not None
        return self.marks

    def _process(self, thread: Any):
        target = self._launched().target
        if thread is None:
            return target.focus
        if not isinstance(thread, int) or not 1 <= thread <= len(target.processes):
            raise RequestError(f"no thread {thread!r}: threads are the devices, 1 to {len(target.processes)}")
        return target.process_of(thread - 1)

    def _program_source(self, op) -> Optional[dict]:
        launched = self.launched
        if launched is None:
            return None
        program = launched.program
        if program.path is not None:
            path = os.path.abspath(str(program.path))
            return {"name": os.path.basename(path), "path": path}
        return {"name": program.name, "sourceReference": PROGRAM_REFERENCE}


__all__ = ["Adapter", "CAPABILITIES", "RequestError"]
