"""TPU generations: the facts a device of each kind contributes to storage, memory and numerics.

Sources (../shared/docs/tpu.md §3): Google Cloud's TPU pages for HBM, cores and MXUs; jax's
`tpu_info.py` for VMEM, device kinds and the sublane tiling factor; the scaling book for MXU
width. HBM is what Google lists per chip; the runtime reserves some of it, how much is not public,
so a "fits" verdict is approximate near the limit (`hbm_is_approximate`).
"""
from __future__ import annotations

from dataclasses import dataclass

GiB = 1 << 30
MiB = 1 << 20


@dataclass(frozen=True)
class TpuGeneration:
    name: str  # the --target name
    device_kind: str  # as jax.devices()[0].device_kind reports it
    version: int  # 4, 5, 6, 7: decides the minimum sublane tiling (tpu.md §2.2)
    hbm_bytes: int
    vmem_bytes: int  # per TensorCore
    mxu_width: int  # the K width of one systolic pass: 128, or 256 on v6e and TPU7x
    # XLA uses 8*pack rows for 16-, 8- and 4-bit types by default from TPU7x on (tpu.md §2.1).
    large_second_minor: bool = False
    hbm_is_approximate: bool = True

    @property
    def sublane_factor(self) -> int:
        """Mosaic's `1 + (generation < 4)`: chips before v4 tile at least two rows per 32-bit pack."""
        return 2 if self.version < 4 else 1

    @property
    def hbm_label(self) -> str:
        size = self.hbm_bytes / GiB
        return f"{size:g} GiB HBM of {self.name}"


GENERATIONS: dict[str, TpuGeneration] = {
    g.name: g
    for g in (
        TpuGeneration("tpu-v4", "TPU v4", 4, hbm_bytes=32 * GiB, vmem_bytes=16 * MiB, mxu_width=128),
        TpuGeneration("tpu-v5e", "TPU v5 lite", 5, hbm_bytes=16 * GiB, vmem_bytes=128 * MiB, mxu_width=128),
        TpuGeneration("tpu-v5p", "TPU v5", 5, hbm_bytes=95 * GiB, vmem_bytes=64 * MiB, mxu_width=128),
        TpuGeneration("tpu-v6e", "TPU v6 lite", 6, hbm_bytes=32 * GiB, vmem_bytes=128 * MiB, mxu_width=256),
        TpuGeneration("tpu7x", "TPU7x", 7, hbm_bytes=192 * GiB, vmem_bytes=64 * MiB, mxu_width=256,
                      large_second_minor=True),
    )
}
# Plain `tpu` is the most common Cloud TPU today.
ALIASES = {"tpu": "tpu-v5e"}

__all__ = ["ALIASES", "GENERATIONS", "GiB", "MiB", "TpuGeneration"]
