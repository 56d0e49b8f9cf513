"""Keep freed tensor memory in the process for reuse (glibc only).

Every op returns a fresh numpy array. With glibc's defaults, arrays above 128 KiB are mmap'ed and
unmapped again when freed, so each op of a large program pays page faults on brand-new memory;
on a 6-layer transformer that is more than half of the run time. Raising the mmap and trim
thresholds lets malloc hand the same pages back to the next op, as XLA reuses its buffers. The
cost is that the process keeps its high-water mark of memory until it exits.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import sys

_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
_MMAP_THRESHOLD = 1 << 30  # arrays up to 1 GiB come from the heap
_tuned = False


def keep_freed_memory() -> bool:
    """Tune malloc once per process; returns whether it took effect (False off glibc)."""
    global _tuned
    if _tuned:
        return True
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    ok = mallopt(_M_MMAP_THRESHOLD, _MMAP_THRESHOLD) == 1 and mallopt(_M_TRIM_THRESHOLD, (1 << 31) - 1) == 1
    _tuned = ok
    return ok
