"""Generated programs of any size for tests (benchmarks/scale_programs.py, imported by path)."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np

SCALE_PROGRAMS = Path(__file__).resolve().parents[1] / "benchmarks" / "scale_programs.py"


def scale_programs():
    spec = importlib.util.spec_from_file_location("hlodbg_scale_programs", SCALE_PROGRAMS)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def write_layered_program(directory: Path, ops: int, locations: bool = True) -> Path:
    """A JAX-shaped program of about `ops` ops in `directory`, its arguments beside it
    (`<name>.npz`); returns the program's path."""
    generator = scale_programs()
    path = directory / f"{'p' if locations else 'n'}{ops}.mlir"
    path.write_text(generator.layered_program(ops, locations=locations))
    np.savez(path.with_suffix(".npz"), **generator.inputs(ops))
    return path
