"""Matrix products through BLAS on every core, whether or not the machine is busy.

numpy's OpenBLAS spreads a product over threads of its own that wait for each other by spinning.
On a quiet machine that is the fastest there is (its threads take up a product at once: a
64x256x1024 product in 186 us on 2 cores, where handing half of it to another thread of ours
took 252 us). On a machine whose cores are busy with anything else (a CI runner, a training job,
a second hlodbg) the spinning is ruinous: measured on 2 cores beside one other busy process, a
12-layer D=256 transformer ran in 200 ms with OpenBLAS's two threads and 30 ms with one, and a
GPT-2-shaped training step in 20 s (13.6 s median of three) against 2 s.

So while the machine is quiet (cores.busy(): no more threads ready to run than cores) products
are np.matmul's with BLAS's own threads. While it is busy, products run with BLAS held to one
thread (given back a quarter of a second after the last product, or at once when the machine
turns quiet), and a large one is cut into one band per core, each computed by its own
single-threaded BLAS call, all but one on hlodbg's pool (cores.py), which queues work instead of
spinning; a band no pool thread has started by the time this thread is done with its own, it
computes itself, so a product takes at worst about as long as on one core. Bands are whole batch
entries when there are enough of them, else rows when the product has at least as many rows as
columns, else columns (a transformer's 64-token products have few rows and many columns); BLAS
reads a band of another array's columns through its leading dimension, without a copy. Smaller
products run on one thread: handing a band over costs more than it saves there.

Which bits: BLAS computes each output element from its row and column alone, adding the K
products in the same blocked order whatever the M and N around it, so bands cut at the kernels'
tile edges (BAND_ALIGN) give the bits of one call over the whole product on the models' shapes.
BLAS may still take another kernel for a band's size than for the whole (its small-matrix paths,
a tail's kernel), which can move the last bit of some elements, as OpenBLAS's own thread count
can; OpenBLAS's own threads and the bands may differ so too.

Where numpy's BLAS is not an OpenBLAS with threads of its own (an Accelerate or MKL build, an
OpenMP one) or threadpoolctl cannot reach it, products are np.matmul's as they are.
"""
from __future__ import annotations

import threading
import time
from typing import Callable, Optional

import numpy as np

from .cores import busy, pool, workers

# Products of fewer flops run in one call: a band's hand-off costs tens of microseconds, and BLAS
# does 64M flops in about half a millisecond on one core.
PARALLEL_FROM_FLOPS = 1 << 26
# A band holds at least this many rows or columns: narrower ones go through BLAS's small-matrix
# kernels and gain little.
MIN_BAND = 64
# Bands start at multiples of this many rows or columns. BLAS tiles a product into blocks of its
# kernel's width (2 to 32 rows, 2 to 48 columns in OpenBLAS's kernels, all dividing 96) and the
# block at a product's edge takes another kernel, which may add a row's products in another order:
# a band cut inside a tile would make its last rows such an edge (measured: f64 300x17x65 cut at
# row 150 changed 4 elements in the last bit).
BAND_ALIGN = 96

# OpenBLAS runs a product of at most this many multiply-adds (M*N*K) on the calling thread alone
# (its GEMM_MULTITHREAD_THRESHOLD of 4 x 65536): such products need no holding to one thread.
BLAS_THREADS_FROM = 4 * 65536

# BLAS's own thread count is given back this long after the last product: a run's products come
# back to back, and switching OpenBLAS's threads on wakes them to spin for their next job, which
# takes the core a band on hlodbg's pool needs (measured: a 64x256x1024 product banded over 2 cores
# in 209 us; switching BLAS's threads back after each product, 337 us).
RESTORE_AFTER_SECONDS = 0.25

_lock = threading.Lock()
_control: Optional[tuple[Callable[[], int], Callable[[int], None]]] = None
_looked = False
_in_flight = 0  # products in flight
_held_from: Optional[int] = None  # BLAS's own count while held to one thread (None: not held)
_last_done = 0.0
_restorer: Optional[threading.Thread] = None


def _thread_control() -> Optional[tuple[Callable[[], int], Callable[[int], None]]]:
    """(get, set) of the thread count of numpy's OpenBLAS as C functions (a product calls them, so
    they must cost nothing), or None where there is none to control."""
    global _control, _looked
    if not _looked:
        with _lock:
            if not _looked:
                _control = _openblas_functions()
                _looked = True
    return _control


def _openblas_functions() -> Optional[tuple[Callable[[], int], Callable[[int], None]]]:
    try:
        from threadpoolctl import ThreadpoolController

        controllers = ThreadpoolController().select(internal_api="openblas").lib_controllers
    except Exception:  # noqa: BLE001 - no threadpoolctl, or one that cannot read this BLAS
        return None
    for controller in controllers:
        if getattr(controller, "threading_layer", None) == "openmp":
            continue  # per-thread limits: BLAS's threads are OpenMP's, not spinning pthreads of its own
        for prefix in ("scipy_", ""):
            for suffix in ("64_", ""):
                get = getattr(controller.dynlib, f"{prefix}openblas_get_num_threads{suffix}", None)
                set_ = getattr(controller.dynlib, f"{prefix}openblas_set_num_threads{suffix}", None)
                if get is not None and set_ is not None:
                    return get, set_
    return None


class _OneBlasThread:
    """BLAS held to one thread from the first product on; its own count given back once no
    product has run for RESTORE_AFTER_SECONDS (by a thread that waits for that, then ends)."""

    def __enter__(self) -> None:
        global _in_flight, _held_from
        get, set_ = _control
        with _lock:
            if _held_from is None:
                _held_from = get()
                if _held_from != 1:
                    set_(1)
            _in_flight += 1

    def __exit__(self, *exc) -> None:
        global _in_flight, _last_done, _restorer
        with _lock:
            _in_flight -= 1
            _last_done = time.monotonic()
            if _held_from != 1 and _restorer is None:
                _restorer = threading.Thread(target=_restore_when_idle, name="hlodbg-blas-threads", daemon=True)
                _restorer.start()


def _restore_when_idle() -> None:
    global _held_from, _restorer
    while True:
        with _lock:
            idle = time.monotonic() - _last_done
            if _in_flight == 0 and idle >= RESTORE_AFTER_SECONDS:
                if _held_from is not None and _held_from != 1:
                    _control[1](_held_from)
                _held_from = None
                _restorer = None
                return
        time.sleep(max(RESTORE_AFTER_SECONDS - idle, 0.01))


def _give_back_now() -> None:
    """BLAS's own thread count back at once (the machine turned quiet while it was held)."""
    global _held_from
    if _held_from is None:
        return
    with _lock:
        if _held_from is not None and _in_flight == 0:
            if _held_from != 1:
                _control[1](_held_from)
            _held_from = None


_ONE_THREAD = _OneBlasThread()


def matmul(lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """`np.matmul(lhs, rhs)` of `[B, M, K] x [B, K, N]` (batch dims broadcast as np.matmul does),
    over every core for a large float product (see the module docstring)."""
    if lhs.ndim < 2 or rhs.ndim < 2 or lhs.dtype.kind not in "fc":
        return np.matmul(lhs, rhs)  # integer products do not go through BLAS
    rows, depth, columns = lhs.shape[-2], lhs.shape[-1], rhs.shape[-1]
    if rows * depth * columns <= BLAS_THREADS_FROM or _thread_control() is None:
        return np.matmul(lhs, rhs)  # one BLAS thread anyway
    cores = workers()
    if cores < 2 or not busy():
        _give_back_now()
        return np.matmul(lhs, rhs)  # a quiet machine: BLAS's own threads are the fastest there
    batch = np.broadcast_shapes(lhs.shape[:-2], rhs.shape[:-2])
    entries = int(np.prod(batch, dtype=np.int64))
    with _ONE_THREAD:
        if 2 * entries * rows * depth * columns < PARALLEL_FROM_FLOPS:
            return np.matmul(lhs, rhs)
        bands = _bands(entries, rows, columns, cores)
        if len(bands) < 2:
            return np.matmul(lhs, rhs)
        left = np.broadcast_to(lhs, batch + lhs.shape[-2:]).reshape(entries, rows, depth)
        right = np.broadcast_to(rhs, batch + rhs.shape[-2:]).reshape(entries, depth, columns)
        out = np.empty((entries, rows, columns), np.result_type(lhs, rhs))

        def band(where: tuple[slice, slice, slice]) -> None:
            entry, row, column = where
            np.matmul(left[entry, row], right[entry, :, column], out=out[entry, row, column])

        waiting = [(pool().submit(band, where), where) for where in bands[1:]]
        try:
            band(bands[0])  # this thread takes a band itself
        finally:
            for job, where in waiting:
                if job.cancel():  # no core took it up yet (a busy machine): this thread does it
                    band(where)
                else:
                    job.result()
        return out.reshape(batch + (rows, columns))


def _bands(entries: int, rows: int, columns: int, cores: int) -> list[tuple[slice, slice, slice]]:
    """(batch entries, rows, columns) of each band: whole entries when there are at least as many
    as cores, else each entry's rows or columns (the longer side) cut at multiples of BAND_ALIGN
    into bands of at least MIN_BAND."""
    everything = slice(None)
    if entries >= cores:
        return [(slice(a, b), everything, everything) for a, b in _cuts(entries, cores, 1)]
    per_entry = max(1, cores // entries)
    if rows >= columns:
        return [(slice(e, e + 1), slice(a, b), everything) for e in range(entries) for a, b in _cuts(rows, per_entry, MIN_BAND, BAND_ALIGN)]
    return [(slice(e, e + 1), everything, slice(a, b)) for e in range(entries) for a, b in _cuts(columns, per_entry, MIN_BAND, BAND_ALIGN)]


def _cuts(total: int, parts: int, least: int, align: int = 1) -> list[tuple[int, int]]:
    """[start, stop) of at most `parts` near-equal runs of `total`, each at least `least` long and
    starting at a multiple of `align` (one run when `total` is shorter)."""
    parts = max(1, min(parts, total // max(least, align, 1)))
    edges = sorted({min(total, (total * i // parts + align // 2) // align * align) for i in range(1, parts)} | {0, total})
    return [(a, b) for a, b in zip(edges, edges[1:]) if b > a]


__all__ = ["BAND_ALIGN", "MIN_BAND", "PARALLEL_FROM_FLOPS", "matmul"]
