"""`hlodbg dap`: a Debug Adapter Protocol server, so editors (VS Code, neovim's nvim-dap, ...) debug
StableHLO and HLO programs with the session the debugger's window uses: breakpoints on the
program's lines, op kinds and NaN/Inf, stepping both ways, the devices of a grid as threads, and
every value as a variable.

    wire.py     the protocol's framing (Content-Length headers, JSON bodies)
    server.py   requests and events: one Adapter per connection, its session on one thread
    launch.py   a launch request read as `hlodbg open`'s options
    marks.py    line, function (op kind) and exception (NaN/Inf) breakpoints
    frames.py   threads, stack frames, scopes and variables
    disassembly.py  the disassembly view: every op as hlodbg reads it (an HLO file's ops as StableHLO)

`serve_stdio()` talks over stdin/stdout (what editors start); `serve_port(port)` listens on a TCP
port and serves each connection with an adapter of its own.
"""
from __future__ import annotations

import os
import socket
import sys
import threading
from typing import Callable, Optional

from .server import Adapter
from .wire import Wire


def serve_stdio() -> int:
    """Serve one editor on stdin/stdout. Whatever else would write to stdout (a warning printed by
    a library, by C code) goes to stderr instead: stdout carries only the protocol."""
    protocol_out = os.fdopen(os.dup(sys.stdout.fileno()), "wb", buffering=0)
    sys.stdout.flush()
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    sys.stdout = sys.stderr
    protocol_in = os.fdopen(os.dup(sys.stdin.fileno()), "rb")
    Adapter(Wire(protocol_in, protocol_out)).serve()
    return 0


def serve_port(port: int, host: str = "127.0.0.1", ready: Optional[Callable[[int], None]] = None,
               once: bool = False) -> int:
    """Listen on `host`:`port` (0: a free port) and serve every connection with its own adapter;
    `ready(port)` is told the port once the server listens. With `once`, stop after the first."""
    with socket.create_server((host, port)) as server:
        chosen = server.getsockname()[1]
        if ready is not None:
            ready(chosen)
        while True:
            connection, _ = server.accept()
            worker = threading.Thread(target=_serve_connection, args=(connection,), name=f"hlodbg-dap-{chosen}",
                                      daemon=True)
            worker.start()
            if once:
                worker.join()
                return 0


def _serve_connection(connection: socket.socket) -> None:
    with connection:
        reader = connection.makefile("rb")
        writer = connection.makefile("wb", buffering=0)
        Adapter(Wire(reader, writer)).serve()


__all__ = ["serve_port", "serve_stdio"]
