"""The sample programs shipped inside the package (sample_programs/)."""
from __future__ import annotations

from importlib import resources
from pathlib import Path

DEFAULT_SAMPLE = "tiny_model.mlir"


def sample_path(name: str) -> Path:
    return Path(str(resources.files("hlodbg.sample_programs").joinpath(name)))


def default_sample_path() -> Path:
    """The program `hlodbg` opens when given none: a small model with calls, a loop, reductions."""
    return sample_path(DEFAULT_SAMPLE)


def sample_names() -> list[str]:
    folder = resources.files("hlodbg.sample_programs")
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".mlir"))


def lessons_folder() -> Path:
    """The lessons shipped with hlodbg: one annotated program per op family, each with a sidecar
    NAME.toml (inputs, questions, answers, hints); see hlodbg.engine.debug.lessons."""
    return sample_path("lessons")
