"""Fixtures every test module may use; shared helper functions live in tests/helpers.py."""
from __future__ import annotations

import os

import pytest

# Eight CPU devices for the XLA backend's grid tests (real collectives between host devices). XLA
# reads the flag once, when JAX first starts its CPU client, so it is set before any test imports
# JAX; single-device tests still run on device 0.
HOST_DEVICES = 8
if "xla_force_host_platform_device_count" not in os.environ.get("XLA_FLAGS", ""):
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + f" --xla_force_host_platform_device_count={HOST_DEVICES}").strip()

from hlodbg.layouts.layout import clear_memory_cache


@pytest.fixture
def private_hlodbg_dirs(tmp_path, monkeypatch):
    """Layout cache, saved breakpoints, keys.toml and files the UI exports (`e` writes to the
    working directory) in tmp_path, not in the user's home or the repository."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HLODBG_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("HLODBG_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("HLODBG_CONFIG_DIR", str(tmp_path / "config"))


@pytest.fixture
def private_layout_cache(tmp_path, monkeypatch):
    """Layouts cached in tmp_path, and none left over in memory from another test (before or after)."""
    monkeypatch.setenv("HLODBG_CACHE_DIR", str(tmp_path / "cache"))
    clear_memory_cache()
    yield
    clear_memory_cache()


@pytest.fixture(scope="session")
def hlo_corpus_dir(tmp_path_factory):
    """The HLO differential corpus (tests/hlo_corpus.py), generated once per session by JAX in a
    subprocess with 8 host devices."""
    import importlib.util

    from . import hlo_corpus

    if importlib.util.find_spec("jax") is None:
        pytest.skip("jax is not installed (it generates the HLO corpus and is the oracle)")
    directory = tmp_path_factory.mktemp("hlo_corpus")
    try:
        hlo_corpus.generate(directory)
    except RuntimeError as error:
        pytest.fail(str(error))
    return directory
