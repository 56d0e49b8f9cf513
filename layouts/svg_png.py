"""An SVG drawing as a PNG, by librsvg's `rsvg-convert` (the converter the graph export's notes and
tests name): for drawings hlodbg writes itself, which Graphviz cannot render.

`HLODBG_RSVG` names an executable to use instead. Each run has the time and memory limits of a
Graphviz run (graphviz.py), and is killed past either.
"""
from __future__ import annotations

import math
import os
import re
import shutil
import subprocess
from typing import Optional

from .graphviz import GraphvizError, _kill, _limit_memory, layout_memory_limit, layout_timeout

CONVERTER = "rsvg-convert"
PNG_ZOOM = 2.0  # pixels per SVG unit: sharp on a high-density screen, small enough for a README
CONVERT_SECONDS = 60.0
# A big drawing is converted at a lower zoom, so that its PNG has at most this many pixels: a
# 331-node graph (2,000 x 11,000 pt) at zoom 2 took rsvg-convert 11 s for a 160-megapixel image.
MAX_PNG_PIXELS = 16_000_000
PIXELS_PER_POINT = 96 / 72  # rsvg-convert's 96 dpi, for documents sized in pt
_VIEW_BOX = re.compile(r'viewBox="[-\d.]+ [-\d.]+ ([\d.]+) ([\d.]+)"')


def fitting_zoom(svg: str, zoom: float = PNG_ZOOM) -> float:
    """`zoom`, or less for a drawing that would pass MAX_PNG_PIXELS at it (its size from the
    root element's viewBox)."""
    found = _VIEW_BOX.search(svg, 0, 2000)
    if found is None:
        return zoom
    area = float(found.group(1)) * float(found.group(2)) * PIXELS_PER_POINT ** 2
    return min(zoom, math.sqrt(MAX_PNG_PIXELS / area)) if area > 0 else zoom


class SvgToPngError(GraphvizError):
    """No converter, or it failed (a GraphvizError: the CLI reports both alike)."""


def find_converter() -> str:
    """The executable that turns SVG into PNG, or an SvgToPngError saying how to get one."""
    override = os.environ.get("HLODBG_RSVG")
    if override:
        found = shutil.which(override)
        if found is None:
            raise SvgToPngError(f"HLODBG_RSVG={override} is not an executable")
        return found
    found = shutil.which(CONVERTER)
    if found is None:
        raise SvgToPngError(f"a PNG is made from the SVG by {CONVERTER} (librsvg), which was not found",
                            notes=("install it (e.g. `apt install librsvg2-bin`, `brew install librsvg`), "
                                   "or write the SVG (--svg OUT.svg), which any browser shows with its tooltips",))
    return found


def svg_converter_available() -> bool:
    """Whether an SVG can be turned into a PNG here: rsvg-convert is on the PATH, or HLODBG_RSVG
    names a converter (one that is missing is then an error, not a reason to draw otherwise)."""
    return bool(os.environ.get("HLODBG_RSVG")) or shutil.which(CONVERTER) is not None


def svg_to_png(svg: str, zoom: float = PNG_ZOOM, executable: Optional[str] = None, timeout: Optional[float] = None) -> bytes:
    """The PNG of an SVG document, `zoom` pixels per SVG unit."""
    executable = executable or find_converter()
    seconds = layout_timeout(CONVERT_SECONDS if timeout is None else timeout)
    try:
        process = subprocess.Popen([executable, "--zoom", f"{zoom:g}", "--format", "png"], stdin=subprocess.PIPE,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    except OSError as e:
        raise SvgToPngError(f"cannot run {executable}: {e.strerror or e}") from None
    _limit_memory(process.pid, layout_memory_limit())
    try:
        out, err = process.communicate(svg.encode("utf-8"), timeout=seconds)
    except subprocess.TimeoutExpired:
        _kill(process)
        raise SvgToPngError(f"{os.path.basename(executable)} took longer than {seconds:g} s and was stopped") from None
    finally:
        if process.returncode is None:  # interrupted (Ctrl-C): leave nothing running
            _kill(process)
    if process.returncode != 0 or not out.startswith(b"\x89PNG"):
        message = err.decode("utf-8", "replace").strip().splitlines()
        detail = message[-1] if message else f"exit status {process.returncode}"
        raise SvgToPngError(f"{os.path.basename(executable)} could not convert the SVG: {detail}")
    return out


__all__ = ["MAX_PNG_PIXELS", "PIXELS_PER_POINT", "PNG_ZOOM", "SvgToPngError", "find_converter", "fitting_zoom", "svg_converter_available",
           "svg_to_png"]
