"""Running Graphviz: the system `dot` when it is on PATH, else the `graphviz-pure` executable.

`HLODBG_DOT` names an executable to use instead. The pip-installed `graphviz-pure` lives next to
the Python that runs hlodbg, which is not always on PATH (a venv used without activating it), so
that directory is searched too.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from functools import lru_cache
from pathlib import Path
from typing import Optional

from hlodbg.engine.ir.errors import HlodbgError

CANDIDATES = ("dot", "graphviz-pure")


class GraphvizError(HlodbgError):
    """Graphviz is missing or failed."""


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
    except OSError as e:
        raise GraphvizError(f"cannot run {executable}: {e.strerror or e}") from None
    return (done.stderr or done.stdout).strip()


def run_graphviz(dot_source: str, output_format: str, executable: Optional[str] = None, timeout: Optional[float] = None, extra: tuple[str, ...] = ()) -> bytes:
    """Lay out and render `dot_source`; the output bytes (json, svg, png, ...)."""
    executable = executable or find_graphviz()
    try:
        done = subprocess.run([executable, f"-T{output_format}", *extra], input=dot_source.encode("utf-8"), capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise GraphvizError(f"Graphviz took longer than {timeout:g} s", notes=("collapse calls or regions, or pick a function or a --focus neighbourhood",)) from None
    except OSError as e:
        raise GraphvizError(f"cannot run {executable}: {e.strerror or e}") from None
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip().splitlines()
        detail = message[-1] if message else f"exit status {done.returncode}"
        raise GraphvizError(f"Graphviz ({Path(executable).name}) failed: {detail}")
    return done.stdout


__all__ = ["GraphvizError", "find_graphviz", "graphviz_version", "run_graphviz"]
