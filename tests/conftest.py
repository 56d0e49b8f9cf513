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


def require_shared() -> None:
    if not SHARED.is_dir():
        pytest.skip("../shared is not present")
