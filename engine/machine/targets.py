"""Targets: the names users pick a machine by (`--target`, `target=`) and the backend each gives.

`cpu` (the default) is XLA on the CPU; `tpu-v4`, `tpu-v5e`, `tpu-v5p`, `tpu-v6e`, `tpu7x` and plain
`tpu` (= tpu-v5e) emulate one chip of that generation per device of the grid. `xla:cpu`, `xla:gpu`
and `xla:tpu` run the ops on real devices through JAX's XLA runtime (machine/xla/backend.py, the
optional `hlodbg[xla]` extra); they take none of the emulated machines' options.
"""
from __future__ import annotations

from typing import Union

from ..ir.errors import HlodbgError
from .backend import CPU, Backend
from .tpu.generations import ALIASES, GENERATIONS

DEFAULT_TARGET = "cpu"
# Real devices through XLA: `xla:<platform>` (runtime.PLATFORMS, spelled here to keep JAX unimported).
XLA_TARGETS = ("xla:cpu", "xla:gpu", "xla:tpu")


class TargetError(HlodbgError):
    """An unknown target name."""


def target_names() -> list[str]:
    return ["cpu", *GENERATIONS, *ALIASES, *XLA_TARGETS]


def is_xla_target(name: str) -> bool:
    """Whether the (canonical) target name runs on real devices through XLA."""
    return name in XLA_TARGETS


def canonical_target(name: str) -> str:
    key = name.strip().lower()
    key = ALIASES.get(key, key)
    if key == "cpu" or key in GENERATIONS or key in XLA_TARGETS:
        return key
    raise TargetError(f"unknown target {name!r}; choose one of: {', '.join(target_names())}")


def backend_for(target: Union[str, Backend, None] = None, **options) -> Backend:
    """The backend of a target name (a Backend is returned as it is; None is the CPU).

    `options` go to the TPU backend (tpu/backend.py: `layouts`, `allow_f64`, `excess_precision`);
    the CPU backend takes `excess_precision` only; the XLA targets take none, and without JAX they
    raise XlaUnavailable (an HlodbgError) with the command that installs it."""
    if isinstance(target, Backend):
        return target
    name = canonical_target(target or DEFAULT_TARGET)
    if name == "cpu":
        return CPU.configured(**options) if options else CPU
    if is_xla_target(name):
        if options:
            raise TargetError(f"{name} takes none of the emulated machines' options "
                              f"({', '.join(sorted(options))}): XLA decides its own layouts and numerics")
        from .xla.backend import XlaBackend

        return XlaBackend(name.partition(":")[2])
    from .tpu.backend import TpuBackend

    return TpuBackend(GENERATIONS[name], **options)


__all__ = ["DEFAULT_TARGET", "TargetError", "XLA_TARGETS", "backend_for", "canonical_target", "is_xla_target",
           "target_names"]
