"""Running Graphviz: the system `dot` when it is on PATH, else the `graphviz-pure` executable.

`HLODBG_DOT` names an executable to use instead. The pip-installed `graphviz-pure` lives next to
the Python that runs hlodbg, which is not always on PATH (a venv used without activating it), so
that directory is searched too.

Every run has a time limit and a memory limit, and the process (with anything it started) is
killed past either: a graph Graphviz cannot lay out must not hang the debugger or take the
machine's memory. Defaults: LAYOUT_TIMEOUT seconds (callers may pass less) and a quarter of the
machine's memory (at most 2 GiB); `HLODBG_LAYOUT_TIMEOUT` (seconds) and `HLODBG_LAYOUT_MEMORY` (`1G`, `512M`)
lower them (the memory limit never goes above 2 GiB: past that size the layered layout is the
answer, not more memory for Graphviz).
"""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from functools import lru_cache
from pathlib import Path
from typing import Optional

from hlodbg.engine.ir.errors import HlodbgError
from hlodbg.engine.machine.memory import format_bytes, physical_memory
from hlodbg.engine.run.arguments import parse_size

CANDIDATES = ("dot", "graphviz-pure")


LAYOUT_TIMEOUT = 300.0  # seconds; the debugger passes less (a scene must come quickly or not at all)
SMALLEST_MEMORY_LIMIT = 1 << 30
LARGEST_MEMORY_LIMIT = 2 << 30
GIVE_UP_NOTE = "pick a function (--function), fold its groups (--collapse groups) or draw a neighbourhood (--focus %N --radius K)"


class GraphvizError(HlodbgError):
    """Graphviz is missing or failed."""


class LayoutLimitError(GraphvizError):
    """A layout refused (too many nodes) or stopped (too slow, too much memory): the graph is
    too big to lay out whole, and a smaller view of it may well work."""


def layout_timeout(requested: Optional[float] = None) -> float:
    """Seconds one Graphviz run may take: the caller's or the default, shortened by
    HLODBG_LAYOUT_TIMEOUT."""
    seconds = LAYOUT_TIMEOUT if requested is None else requested
    text = os.environ.get("HLODBG_LAYOUT_TIMEOUT")
    try:
        return min(seconds, float(text)) if text else seconds
    except ValueError:
        raise GraphvizError(f"HLODBG_LAYOUT_TIMEOUT={text} is not a number of seconds") from None


def layout_memory_limit() -> int:
    """Bytes of memory one Graphviz run may use: a quarter of the machine's memory, between 1
    and 2 GiB (dot lays out 5,000 nodes in far less), or less when HLODBG_LAYOUT_MEMORY says so."""
    memory = physical_memory()
    limit = min(max(SMALLEST_MEMORY_LIMIT, memory // 4), LARGEST_MEMORY_LIMIT) if memory else LARGEST_MEMORY_LIMIT
    text = os.environ.get("HLODBG_LAYOUT_MEMORY")
    if text:
        try:
            return min(parse_size(text), LARGEST_MEMORY_LIMIT)
        except HlodbgError as e:
            raise GraphvizError(f"HLODBG_LAYOUT_MEMORY: {e.message}") from None
    return limit


def find_graphviz(path: Optional[str] = None) -> str:
    """The executable to run, or a GraphvizError saying how to get one."""
    override = os.environ.get("HLODBG_DOT")
    if override:
        found = shutil.which(override)
        if found is None:
            raise GraphvizError(f"HLODBG_DOT={override} is not an executable")
        return found
    search = os.environ.get("PATH", "") if path is None else path
    for name in CANDIDATES:
        found = shutil.which(name, path=search)
        if found:
            return found
    beside_python = Path(sys.executable).parent / "graphviz-pure"
    if beside_python.is_file() and os.access(beside_python, os.X_OK):
        return str(beside_python)
    raise GraphvizError(
        "Graphviz is needed to lay out graphs, and neither `dot` nor `graphviz-pure` was found",
        notes=("install one: `pip install graphviz-pure` (no system libraries needed) or your system's graphviz package (e.g. `apt install graphviz`)",),
    )


@lru_cache(maxsize=8)
def graphviz_version(executable: str) -> str:
    """`dot -V` output: part of the layout cache key, since another Graphviz lays out differently."""
    try:
        done = subprocess.run([executable, "-V"], capture_output=True, text=True, timeout=30)
    except subprocess.TimeoutExpired:
        raise GraphvizError(f"{executable} -V gave no answer in 30 s; is it Graphviz?") from None
    except OSError as e:
        raise GraphvizError(f"cannot run {executable}: {e.strerror or e}") from None
    return (done.stderr or done.stdout).strip()


def run_graphviz(dot_source: str, output_format: str, executable: Optional[str] = None, timeout: Optional[float] = None, extra: tuple[str, ...] = ()) -> bytes:
    """Lay out and render `dot_source`; the output bytes (json, svg, png, ...). Raises
    LayoutLimitError when the run passes its time or memory limit (it is killed then)."""
    executable = executable or find_graphviz()
    seconds, memory = layout_timeout(timeout), layout_memory_limit()
    try:
        # Its own session, so that a timeout kills whatever it started too (a wrapper script's child).
        process = subprocess.Popen([executable, f"-T{output_format}", *extra], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    except OSError as e:
        raise GraphvizError(f"cannot run {executable}: {e.strerror or e}") from None
    # Set from here rather than in a preexec_fn (unsafe in the debugger's threads): Graphviz reads
    # all of its input before it lays anything out, and it has none yet.
    limited = _limit_memory(process.pid, memory)
    try:
        out, err = process.communicate(dot_source.encode("utf-8"), timeout=seconds)
    except subprocess.TimeoutExpired:
        _kill(process)
        raise LayoutLimitError(f"Graphviz took longer than {seconds:g} s and was stopped", notes=(GIVE_UP_NOTE,)) from None
    finally:
        if process.returncode is None:  # interrupted (Ctrl-C): leave nothing running
            _kill(process)
    if process.returncode != 0:
        message = err.decode("utf-8", "replace").strip().splitlines()
        # Past RLIMIT_AS dot gets no memory: it reports it, or aborts (graphviz-pure: a Rust panic).
        if limited and (process.returncode < 0 or any("memory" in line.lower() or "panicked" in line for line in message)):
            raise LayoutLimitError(f"Graphviz ({Path(executable).name}) stopped at its memory limit of {format_bytes(memory)}", notes=(GIVE_UP_NOTE,))
        detail = message[-1] if message else f"exit status {process.returncode}"
        raise GraphvizError(f"Graphviz ({Path(executable).name}) failed: {detail}")
    return out


def _limit_memory(pid: int, limit: int) -> bool:
    """Cap the address space of process `pid` (Linux); whether a limit is in force."""
    import resource

    if not hasattr(resource, "prlimit"):
        return False  # elsewhere only the time limit applies
    try:
        _, hard = resource.prlimit(pid, resource.RLIMIT_AS)
        if hard != resource.RLIM_INFINITY:
            limit = min(limit, hard)
        resource.prlimit(pid, resource.RLIMIT_AS, (limit, limit))
        return True
    except (OSError, ValueError):
        return False  # it exited already, or the system refuses: the time limit still applies


def _kill(process: subprocess.Popen) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        process.kill()
    process.communicate()


__all__ = ["GraphvizError", "LAYOUT_TIMEOUT", "LayoutLimitError", "find_graphviz", "graphviz_version", "layout_memory_limit", "layout_timeout", "run_graphviz"]
