"""Shared test helpers: where the shared corpus lives (tests skip cleanly without it)."""
from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
PROGRAMS = SHARED / "programs"
CONFORMANCE = SHARED / "conformance" / "stablehlo_testdata"
SAMPLES = REPO / "sample_programs"


def corpus_files() -> list[Path]:
    """Every .mlir of the shared corpus (empty when ../shared is absent)."""
    files: list[Path] = []
    if CONFORMANCE.is_dir():
        files += sorted(CONFORMANCE.rglob("*.mlir"))
    if PROGRAMS.is_dir():
        files += sorted(PROGRAMS.glob("*.mlir"))
    return files


@pytest.fixture
def private_hlodbg_dirs(tmp_path, monkeypatch):
    """Layout cache, saved breakpoints, keys.toml and files the UI exports (`e` writes to the
    working directory) in tmp_path, not in the user's home or the repository."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HLODBG_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("HLODBG_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("HLODBG_CONFIG_DIR", str(tmp_path / "config"))


def require_shared() -> None:
    if not SHARED.is_dir():
        pytest.skip("../shared is not present")


def sample_array(shape, dtype, rng, limit: int = 20):
    """Random test data of any dtype: integers in [-limit, limit], normal floats, complex, bool."""
    import numpy as np

    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(max(info.min, -limit), min(info.max, limit) + 1, size=shape).astype(dtype)
    if dtype.kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    return rng.standard_normal(shape).astype(np.float32).astype(dtype)
