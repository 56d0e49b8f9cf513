"""engine/machine/blas.py: large products banded over the cores give one BLAS call's values (its
bits on these shapes here; within an ulp wherever BLAS picks other kernels for a band) and the
same bits every time, BLAS's own thread count is left as it was, and products BLAS does not do
pass through."""
from __future__ import annotations

import time

import numpy as np
import pytest

from hlodbg.engine.machine import blas

threadpoolctl = pytest.importorskip("threadpoolctl")


@pytest.fixture
def two_cores(monkeypatch):
    """Band as on a machine of (at least) two cores, whatever this one has, from small products on."""
    monkeypatch.setattr(blas, "workers", lambda: 2)
    monkeypatch.setattr(blas, "busy", lambda: True)  # the robust path: bands on hlodbg's pool
    monkeypatch.setattr(blas, "PARALLEL_FROM_FLOPS", 1)
    if blas._thread_control() is None:
        pytest.skip("numpy's BLAS is not an OpenBLAS threadpoolctl can hold to one thread")


def one_call(lhs, rhs):
    with threadpoolctl.threadpool_limits(1, user_api="blas"):
        return np.matmul(lhs, rhs)


@pytest.mark.parametrize("lhs_shape, rhs_shape, split", [
    ((512, 768), (768, 256), "rows"),
    ((64, 256), (256, 1024), "columns"),          # a transformer's few tokens, many features
    ((3, 128, 96), (3, 96, 200), "entries"),
    ((1, 200, 64), (5, 64, 130), "entries"),      # a broadcast batch dim
    ((300, 17), (17, 65), "rows"),                # a band edge inside no tile, both products with tails
])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64])
def test_bands_give_one_calls_bits(two_cores, lhs_shape, rhs_shape, split, dtype):
    rng = np.random.default_rng(0)
    lhs = rng.standard_normal(lhs_shape).astype(dtype)
    rhs = rng.standard_normal(rhs_shape).astype(dtype)
    batch = np.broadcast_shapes(lhs_shape[:-2], rhs_shape[:-2])
    entries = int(np.prod(batch, dtype=np.int64))
    bands = blas._bands(entries, lhs_shape[-2], rhs_shape[-1], 2)
    assert len(bands) == 2
    which = "entries" if bands[0][1] == slice(None) and bands[0][2] == slice(None) else \
        "rows" if bands[0][2] == slice(None) else "columns"
    assert which == split
    got = blas.matmul(lhs, rhs)
    np.testing.assert_array_equal(got, blas.matmul(lhs, rhs))  # the same bands, the same bits
    single = dtype in (np.float32, np.complex64)
    np.testing.assert_allclose(got, one_call(lhs, rhs), rtol=1e-5 if single else 1e-13, atol=1e-4 if single else 1e-12)


def test_transposed_operands_are_read_in_place(two_cores):
    # A weight gradient's x^T: the lhs a transposed view, as dot_general's canonical form makes it.
    rng = np.random.default_rng(1)
    x = rng.standard_normal((256, 384)).astype(np.float32)
    dy = rng.standard_normal((256, 640)).astype(np.float32)
    lhs = x.T[None]
    np.testing.assert_allclose(blas.matmul(lhs, dy[None]), one_call(lhs, dy[None]), rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(blas.matmul(dy.T[None], x[None]), one_call(dy.T[None], x[None]), rtol=1e-5, atol=1e-4)


def wait_until_given_back() -> None:
    """An earlier test's hold on BLAS's threads given back (a quarter second after its products)."""
    deadline = time.monotonic() + 30
    while blas._held_from is not None and time.monotonic() < deadline:
        time.sleep(0.05)


def test_blas_threads_are_given_back_once_products_stop(two_cores):
    get, set_threads = blas._thread_control()
    wait_until_given_back()
    before = get()
    try:
        set_threads(2)
        blas.matmul(np.ones((128, 128), np.float32), np.ones((128, 128), np.float32))  # banded (two_cores)
        blas.matmul(np.ones((128, 128), np.float32), np.ones((128, 128), np.float32))
        deadline = time.monotonic() + 30  # a generous bound for a busy machine; it takes a quarter second
        while get() != 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert get() == 2
        assert blas._held_from is None
    finally:
        set_threads(before)


def test_integer_and_small_products_are_numpys(monkeypatch):
    a = np.arange(12, dtype=np.int32).reshape(3, 4)
    np.testing.assert_array_equal(blas.matmul(a, a.T), a @ a.T)
    small = np.ones((2, 3), np.float32)
    np.testing.assert_array_equal(blas.matmul(small, small.T), small @ small.T)


def test_a_failing_band_raises_in_the_caller(two_cores):
    with pytest.raises(ValueError):
        blas.matmul(np.ones((256, 64), np.float32), np.ones((65, 256), np.float32))


def test_a_band_no_pool_thread_takes_up_is_done_by_the_caller(two_cores, monkeypatch):
    # A machine whose other cores are busy: the pool never starts a band in time.
    from concurrent.futures import Future

    class BusyPool:
        submitted = 0

        def submit(self, fn, *args):
            BusyPool.submitted += 1
            return Future()  # pending until cancelled

    monkeypatch.setattr(blas, "pool", lambda: BusyPool())
    rng = np.random.default_rng(2)
    lhs, rhs = rng.standard_normal((256, 200)).astype(np.float32), rng.standard_normal((200, 128)).astype(np.float32)
    np.testing.assert_allclose(blas.matmul(lhs, rhs), one_call(lhs, rhs), rtol=1e-5, atol=1e-4)
    assert BusyPool.submitted == 1


def test_on_a_quiet_machine_blas_keeps_its_own_threads(monkeypatch):
    if blas._thread_control() is None:
        pytest.skip("numpy's BLAS is not an OpenBLAS threadpoolctl can hold to one thread")
    monkeypatch.setattr(blas, "workers", lambda: 2)
    monkeypatch.setattr(blas, "busy", lambda: False)
    get, set_threads = blas._thread_control()
    wait_until_given_back()
    before = get()
    try:
        set_threads(2)
        seen = []
        monkeypatch.setattr(blas.np, "matmul", lambda a, b, **kw: seen.append(get()) or np.dot(a, b))
        blas.matmul(np.ones((128, 128), np.float32), np.ones((128, 128), np.float32))
        assert seen == [2] and get() == 2
    finally:
        set_threads(before)


def test_busy_is_decided_with_a_gap(monkeypatch):
    """More threads ready than cores + 0.5 on average is busy; it stays busy until fewer than
    cores - 0.25 (its own threads alone do not flip it back and forth)."""
    from hlodbg.engine.machine import cores

    readings = iter([1, 1, 4, 4, 4, 4, 4, 4, 4, 4, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1])
    monkeypatch.setattr(cores, "_threads_ready", lambda: next(readings))
    monkeypatch.setattr(cores, "workers", lambda: 2)
    monkeypatch.setattr(cores, "_sampled_at", -1.0)
    monkeypatch.setattr(cores, "_busy", False)
    clock = iter(range(1000))
    monkeypatch.setattr(cores.time, "monotonic", lambda: float(next(clock)))
    seen = [cores.busy() for _ in range(26)]
    assert seen[:2] == [False, False] and True in seen[2:10]
    turned = seen.index(True)
    assert all(seen[turned:16])  # 2 threads ready on 2 cores: still busy
    assert seen[-1] is False


def test_vectors_are_numpys():
    v = np.arange(3, dtype=np.float32)
    m = np.ones((3, 2), np.float32)
    np.testing.assert_array_equal(blas.matmul(v, m), v @ m)
    np.testing.assert_array_equal(blas.matmul(m.T, v), m.T @ v)
