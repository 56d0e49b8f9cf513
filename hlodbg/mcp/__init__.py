"""`hlodbg mcp`: a Model Context Protocol server, so agents (Claude Desktop, Claude Code, any MCP
client) debug StableHLO and HLO programs with the debugger's own session: load a program, run
to the first NaN or a breakpoint, read values and slices, explain an op at an element, trace an
element back through the run, step both ways, and the memory and diff reports.

    folders.py   where the server may read (--root) and write (--workdir); answers cut to a size
    sessions.py  the open programs (handles) and what each tool does, on one session thread
    reports.py   the answers' text: a program's summary, a stop, a value
    server.py    the tools, over the MCP SDK (the optional `mcp` extra)

Nothing an agent sends is run as code but hlodbg's own expressions (engine/debug/expressions.py).
"""
from __future__ import annotations

import sys
from typing import Optional, Sequence

from hlodbg.engine.ir.errors import HlodbgError

from .folders import DEFAULT_LIMIT, Folders
from .sessions import DEFAULT_MAX_OPEN, Desk

MIN_LIMIT = 300  # characters of an answer: what was cut and how to read on must still fit
MISSING_SDK = ("hlodbg mcp needs the Model Context Protocol SDK, which is not installed: "
               "pip install 'hlodbg[mcp]' (or pip install 'mcp>=2.3')")


def serve_stdio(workdir: Optional[str] = None, roots: Sequence[str] = (), limit: int = DEFAULT_LIMIT,
                max_open: int = DEFAULT_MAX_OPEN) -> int:
    """Serve one agent on stdin/stdout until it goes away."""
    if limit < MIN_LIMIT:
        raise HlodbgError(f"--max-output {limit}: expected {MIN_LIMIT} characters or more (room for a note)")
    if max_open < 1:
        raise HlodbgError(f"--max-open {max_open}: expected 1 or more")
    try:
        from .server import build_server
    except ImportError as missing:
        if missing.name is not None and missing.name.split(".")[0] in ("mcp", "mcp_types", "pydantic"):
            raise HlodbgError(MISSING_SDK) from None
        raise
    folders = Folders.make(workdir, roots)
    desk = Desk(folders, max_open)
    # stderr is the host's log: where the files an agent saves are (a temporary folder is kept).
    print(f"hlodbg mcp: reading under {', '.join(folders.roots)}; writing in {folders.workdir}", file=sys.stderr,
          flush=True)
    server = build_server(desk, limit)
    try:
        server.run("stdio")
    finally:
        desk.close_all()
    return 0


__all__ = ["MISSING_SDK", "serve_stdio"]
