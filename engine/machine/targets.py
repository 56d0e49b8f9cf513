"""Targets: the names users pick a machine by (`--target`, `target=`) and the backend each gives.

`cpu` (the default) is XLA on the CPU; `tpu-v4`, `tpu-v5e`, `tpu-v5p`, `tpu-v6e`, `tpu7x` and plain
`tpu` (= tpu-v5e) emulate one chip of that generation per device of the grid.
"""
from __future__ import annotations

from typing import Union

from ..ir.errors import HlodbgError
from .backend import CPU, Backend
from .tpu.generations import ALIASES, GENERATIONS

DEFAULT_TARGET = "cpu"


class TargetError(HlodbgError):
    """An unknown target name."""


def target_names() -> list[str]:
    return ["cpu", *GENERATIONS, *ALIASES]


def canonical_target(name: str) -> str:
    key = name.strip().lower()
    key = ALIASES.get(key, key)
    if key == "cpu" or key in GENERATIONS:
        return key
    raise TargetError(f"unknown target {name!r}; choose one of: {', '.join(target_names())}")


def backend_for(target: Union[None, str, Backend] = None, **options) -> Backend:
    """The backend of a target name (a Backend is returned as it is; None is the CPU).

    `options` go to the TPU backend (tpu/backend.py: `layouts`, `allow_f64`, `excess_precision`);
    the CPU backend takes `excess_precision` only."""
    if isinstance(target, Backend):
        return target
    name = canonical_target(target or DEFAULT_TARGET)
    if name == "cpu":
        return CPU.configured(**options) if options else CPU
    from .tpu.backend import TpuBackend

    return TpuBackend(GENERATIONS[name], **options)


__all__ = ["DEFAULT_TARGET", "TargetError", "backend_for", "canonical_target", "target_names"]
