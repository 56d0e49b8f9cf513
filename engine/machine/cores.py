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
import time
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


# Whether other work is taking the cores: the number of threads ready to run (Linux's
# /proc/loadavg, this one included) averaged over the last samples, taken at most this often.
SAMPLE_SECONDS = 0.05
SAMPLE_WEIGHT = 0.2  # of the newest sample in the average: about the last quarter second
# Busy from more than cores + BUSY_ABOVE threads ready on average, quiet again below cores -
# QUIET_BELOW (the gap keeps a run from switching back and forth on its own threads' count).
BUSY_ABOVE = 0.5
QUIET_BELOW = 0.25

_sampled_at = -1.0
_ready_average = 0.0
_busy = False


def busy() -> bool:
    """Whether more threads want to run than the machine has cores, on average over the last
    quarter second or so (False where the kernel does not say: not on Linux). Cheap enough to ask
    before every matrix product: it reads the kernel's count at most every SAMPLE_SECONDS."""
    global _sampled_at, _ready_average, _busy
    now = time.monotonic()
    if now - _sampled_at < SAMPLE_SECONDS:
        return _busy
    ready = _threads_ready()
    if ready is None:
        return False
    _ready_average = ready if _sampled_at < 0 else _ready_average + (ready - _ready_average) * SAMPLE_WEIGHT
    _sampled_at = now
    cores = workers()
    if _busy and _ready_average < cores - QUIET_BELOW:
        _busy = False
    elif not _busy and _ready_average > cores + BUSY_ABOVE:
        _busy = True
    return _busy


def _threads_ready() -> Optional[int]:
    """Threads running or ready to run on the machine now (this one included), or None."""
    try:
        with open("/proc/loadavg", encoding="ascii") as loadavg:
            return int(loadavg.read().split()[3].split("/")[0])
    except (OSError, ValueError, IndexError):
        return None


__all__ = ["busy", "pool", "workers"]
