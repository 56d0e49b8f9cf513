"""How much memory the machine has, and what a tensor needs: an op whose result can never fit is
refused with a message naming it before numpy tries (and, with Linux's overcommit, before the
kernel's out-of-memory killer ends the whole process instead)."""
from __future__ import annotations

import os
from functools import cache
from typing import Optional


@cache
def physical_memory() -> Optional[int]:
    """The machine's memory in bytes; None where the system does not say."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def format_bytes(count: float) -> str:
    """`78.1 GiB`, `512.0 MiB`, `12 B`, `4.0 EiB`."""
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"):
        if count < 1024 or unit == "EiB":
            return f"{count:.0f} {unit}" if unit == "B" else f"{count:.1f} {unit}"
        count /= 1024
    raise AssertionError("unreachable")


__all__ = ["format_bytes", "physical_memory"]
