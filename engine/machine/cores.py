"""The machine's cores as hlodbg's own work uses them: how many this process may run on, and one
pool of threads (one fewer than the cores: the calling thread takes a share itself).

Fused elementwise steps (run/fusion.py) and large matrix products (blas.py) cut their work into
pieces that release the interpreter lock (numpy's loops, BLAS) and hand all but one to this pool.
A piece waits in a queue, never spinning, so a machine busy with other work slows it down no more
than running it on one core would.
"""
from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Optional

_POOL: Optional[ThreadPoolExecutor] = None
_LOCK = threading.Lock()


def workers() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def pool() -> ThreadPoolExecutor:
    """The shared pool (made on first use)."""
    global _POOL
    if _POOL is None:
        with _LOCK:
            if _POOL is None:
                _POOL = ThreadPoolExecutor(max_workers=max(1, workers() - 1), thread_name_prefix="hlodbg-work")
    return _POOL


__all__ = ["pool", "workers"]
