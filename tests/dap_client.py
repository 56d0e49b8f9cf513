"""A tiny Debug Adapter Protocol client for the tests: talks to an in-process Adapter over pipes,
or to `hlodbg dap` over a process's stdio or a socket.

Every wait has a generous bound so that a server that never answers fails the test instead of
hanging it (the bound is no speed requirement).
"""
from __future__ import annotations

import json
import os
import queue
import threading
from typing import Any, BinaryIO, Optional

from hlodbg.dap.server import Adapter
from hlodbg.dap.wire import Wire

WAIT_SECONDS = 300


class DapClient:
    def __init__(self, reader: BinaryIO, writer: BinaryIO):
        self._writer = writer
        self._seq = 0
        self._inbox: queue.Queue = queue.Queue()
        self.events: list[dict] = []  # every event received so far, in order
        self._responses: dict[int, dict] = {}
        self._ended: Optional[dict] = None  # the end of the server's stream, once seen
        self._wire = Wire(reader, writer)
        threading.Thread(target=self._read, daemon=True).start()

    @classmethod
    def in_process(cls) -> "DapClient":
        """A client on a fresh Adapter running in a thread of this process."""
        to_server_r, to_server_w = os.pipe()
        to_client_r, to_client_w = os.pipe()
        server_in, server_out = os.fdopen(to_server_r, "rb"), os.fdopen(to_client_w, "wb")
        client = cls(os.fdopen(to_client_r, "rb"), os.fdopen(to_server_w, "wb"))

        def serve() -> None:
            try:
                Adapter(Wire(server_in, server_out)).serve()
            finally:
                server_out.close()  # as a process's stdout closes when it exits: the client sees the end
                server_in.close()

        client.server = threading.Thread(target=serve, daemon=True)
        client.server.start()
        return client

    def _read(self) -> None:
        while True:
            try:
                message = self._wire.receive()
            except Exception as e:  # noqa: BLE001 - the test sees it as a message
                self._inbox.put({"type": "broken", "error": str(e)})
                return
            self._inbox.put(message if message is not None else {"type": "closed"})
            if message is None:
                return

    def send_raw(self, data: bytes) -> None:
        self._writer.write(data)
        self._writer.flush()

    def send(self, command: str, arguments: Optional[dict] = None) -> int:
        self._seq += 1
        message: dict[str, Any] = {"seq": self._seq, "type": "request", "command": command}
        if arguments is not None:
            message["arguments"] = arguments
        body = json.dumps(message).encode()
        self.send_raw(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        return self._seq

    def response(self, seq: int) -> dict:
        while seq not in self._responses:
            self._take()
        return self._responses.pop(seq)

    def request(self, command: str, **arguments) -> dict:
        """The response's body; AssertionError with the server's message when it failed."""
        response = self.response(self.send(command, arguments))
        assert response["success"], f"{command} failed: {response.get('message')}"
        return response.get("body", {})

    def failure(self, command: str, arguments: Any = None) -> str:
        """The message of a request that must fail."""
        response = self.response(self.send(command, arguments))
        assert not response["success"], f"{command} should have failed: {response}"
        assert response["body"]["error"]["format"]
        return response["message"]

    def event(self, name: str, after: int = 0) -> dict:
        """The first event `name` received after the first `after` events."""
        while True:
            for event in self.events[after:]:
                if event["event"] == name:
                    return event
            self._take()

    def stop(self, move: str, **arguments) -> dict:
        """Send a move and wait for the stopped (or terminated) event that ends it."""
        seen = len(self.events)
        self.request(move, **arguments)
        while True:
            for event in self.events[seen:]:
                if event["event"] in ("stopped", "terminated"):
                    return event
            self._take()

    def _take(self) -> None:
        if self._ended is not None:
            raise AssertionError(f"the server's stream ended: {self._ended}")
        try:
            message = self._inbox.get(timeout=WAIT_SECONDS)
        except queue.Empty:
            raise AssertionError(f"no message from the server in {WAIT_SECONDS} s") from None
        if message["type"] in ("closed", "broken"):
            self._ended = message
            raise AssertionError(f"the server's stream ended: {message}")
        if message["type"] == "event":
            self.events.append(message)
        elif message["type"] == "response":
            self._responses[message["request_seq"]] = message

    def launch(self, stop_on_entry: bool = False, breakpoints: Optional[dict] = None, **launch) -> dict:
        """initialize, launch, the breakpoints ({path: [SourceBreakpoint]}, 'function': [...],
        'exception': [filters]), configurationDone; the first stopped event."""
        capabilities = self.request("initialize", adapterID="hlodbg", linesStartAt1=True, columnsStartAt1=True)
        assert capabilities["supportsStepBack"]
        seen = len(self.events)
        self.request("launch", stopOnEntry=stop_on_entry, **launch)
        self.event("initialized", seen)
        self.answers = {}
        for key, wanted in (breakpoints or {}).items():
            if key == "function":
                self.answers[key] = self.request("setFunctionBreakpoints", breakpoints=wanted)["breakpoints"]
            elif key == "exception":
                self.answers[key] = self.request("setExceptionBreakpoints", filters=wanted)["breakpoints"]
            else:
                self.answers[key] = self.request("setBreakpoints", source={"path": key}, breakpoints=wanted)["breakpoints"]
        return self.stop("configurationDone")

    def top(self, thread: int = 1) -> dict:
        return self.request("stackTrace", threadId=thread)["stackFrames"][0]

    def scope(self, frame: int, prefix: str) -> list[dict]:
        for scope in self.request("scopes", frameId=frame)["scopes"]:
            if scope["name"].startswith(prefix):
                return self.request("variables", variablesReference=scope["variablesReference"])["variables"]
        raise AssertionError(f"no scope {prefix!r}")

    def close(self) -> None:
        if self._ended is not None:
            return
        try:
            self.request("disconnect")
        except AssertionError:
            pass
        self._ended = {"type": "closed", "by": "the client's disconnect"}
