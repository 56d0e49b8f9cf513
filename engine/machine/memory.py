"""How much memory the machine has, and what a tensor needs: an op whose result can never fit is
refused with a message naming it before numpy tries (and, with Linux's overcommit, before the
kernel's out-of-memory killer ends the whole process instead)."""
from __future__ import annotations

import os
from dataclasses import dataclass
from functools import cache
from typing import Optional


@cache
def physical_memory() -> Optional[int]:
    """The machine's memory in bytes; None where the system does not say."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


@dataclass(frozen=True)
class MemoryCapacity:
    """The main memory of one device of a target (Backend.device_memory): what a run's peak is
    checked against and how reports name it."""

    bytes: Optional[int]  # None where the system does not say
    label: str  # "16 GiB HBM of tpu-v5e", "31.2 GiB memory of this machine"
    short_name: str = "mem"  # "HBM": how the status bar names the bytes in use
    # An accelerator's own memory, not this machine's: the debugger opens its memory pane at once.
    on_accelerator: bool = False


def host_memory() -> MemoryCapacity:
    """This machine's memory: the device memory of the CPU target."""
    memory = physical_memory()
    label = f"{format_bytes(memory)} memory of this machine" if memory is not None else "this machine's memory"
    return MemoryCapacity(memory, label)


def format_bytes(count: float) -> str:
    """`78.1 GiB`, `512.0 MiB`, `12 B`, `4.0 EiB`."""
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"):
        if count < 1024 or unit == "EiB":
            return f"{count:.0f} {unit}" if unit == "B" else f"{count:.1f} {unit}"
        count /= 1024
    raise AssertionError("unreachable")


__all__ = ["MemoryCapacity", "format_bytes", "host_memory", "physical_memory"]
