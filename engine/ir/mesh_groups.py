"""Process groups named by mesh axes: the devices of a mesh that differ only along some axes.

Both spellings of the idea meet here: StableHLO's `#stablehlo.replica_group_mesh_axes` over an
`sdy.mesh` (engine/ops/collectives.py) and XLA HLO text's `mesh['x'=2,'y'=4] {'x'}` replica
groups (engine/syntax/hlo/attr_groups.py), so they expand identically.
"""
from __future__ import annotations

import math
from typing import Optional, Sequence

import numpy as np

# (axis name, pre-size, size) — `size` None selects the whole axis; else the sub-axis `(pre)size`.
AxisSelection = tuple[str, int, Optional[int]]


def mesh_axis_groups(axes: Sequence[tuple[str, int]], device_ids: Sequence[int],
                     selected: Sequence[AxisSelection]) -> list[list[int]]:
    """Groups of `device_ids` (row-major over `axes`) that differ only along `selected`, members
    ordered by `selected` (first listed = most major).

    The selected factors (mesh_factors) move last in listed order, the rest keep mesh order, and
    the flattened array is cut into groups of the selection's size. Raises ValueError naming what
    is inconsistent.
    """
    devices, factors, picks = mesh_factors(axes, device_ids, selected)
    chosen = [k for pick in picks for k in pick]
    if len(set(chosen)) != len(chosen):
        name = next(factors[k][0] for k in chosen if chosen.count(k) > 1)
        raise ValueError(f"axis '{name}' is selected twice")
    rest = [k for k in range(len(factors)) if k not in chosen]
    if factors:
        devices = devices.transpose(rest + chosen)
    group_size = math.prod(factors[k][2] // factors[k][1] for k in chosen)
    return devices.reshape(-1, group_size).tolist()


def mesh_factors(axes: Sequence[tuple[str, int]], device_ids: Sequence[int], selected: Sequence[AxisSelection]):
    """The mesh's devices as an array with one dimension per factor: each axis of size n is cut at
    every sub-axis boundary the selections use (Shardy's sub-axis `(pre)size` is the middle factor
    of n = pre * size * post, major to minor: `pre` is the size of the factors before it). Returns (devices, factors as (axis, cut before, cut
    after) major to minor, and for each selection the indices of the factors it covers)."""
    sizes = dict(axes)
    cuts: dict[str, set[int]] = {name: {1, size} for name, size in axes}
    for name, pre, size in selected:
        if name not in sizes:
            raise ValueError(f"the mesh has no axis '{name}' (axes: {', '.join(n for n, _ in axes)})")
        if size is not None:
            if pre <= 0 or size <= 0 or sizes[name] % (pre * size):
                raise ValueError(f"sub-axis ({pre}){size} does not divide axis '{name}' of size {sizes[name]}")
            cuts[name] |= {pre, pre * size}
    factors: list[tuple[str, int, int]] = []  # (axis, cut before, cut after), major to minor
    for name, _ in axes:
        points = sorted(cuts[name])
        for low, high in zip(points, points[1:]):
            if high % low:
                raise ValueError(f"the sub-axes of '{name}' overlap without nesting")
            factors.append((name, low, high))
    picks: list[list[int]] = []
    for name, pre, size in selected:
        low, high = (1, sizes[name]) if size is None else (pre, pre * size)
        picks.append([k for k, (axis, a, b) in enumerate(factors) if axis == name and low <= a and b <= high])
    total = math.prod(sizes.values())
    if len(device_ids) != total:
        raise ValueError(f"the mesh lists {len(device_ids)} devices for {total} positions")
    devices = np.asarray(device_ids, dtype=np.int64).reshape([b // a for _, a, b in factors] or [1])
    return devices, factors, picks
