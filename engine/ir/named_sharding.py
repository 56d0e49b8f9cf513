"""Named-mesh shardings (XLA's newest HloSharding text, openxla/xla xla/hlo/ir/named_sharding.cc):
`{mesh['x'=2,'y'=2], [{'y'}, {}], replicated={..}, unreduced={..}, manual={'x'}}`,
`{mesh[...], replicated|unreduced|manual}` and `{maximal_mesh[device_id=0]}`, placed as the
device-list sharding they stand for.

The mesh lays its devices out row-major over its axes (or in its `device_ids=(...)` order); each
tensor dimension is split over the axes its `{...}` lists (first listed = most major), sub-axes
`'x':(pre)size` included. The tile assignment puts the devices with the dimensions' axes first, then
subgroup dimensions: the manual axes, the unreduced ones, and every axis left over (replicated,
whether `replicated={..}` names it or not) — as `{devices=[..] last_tile_dims={manual, ...}}`.
The syntax frontend has already checked the text (located errors there); the errors here are
ValueErrors, which sharding.py reports as its ShardingSyntaxError.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Optional

import numpy as np

from .mesh_groups import AxisSelection, mesh_factors

_SUBGROUPS = ("manual", "unreduced", "replicated")


@dataclass(frozen=True)
class Placement:
    """What a named sharding places: sharding.py's HloSharding fields (`kind` "tiled" with the
    tile assignment and its subgroup kinds, "maximal" with the device, or replicated/manual/unreduced)."""

    kind: str
    tile_assignment: Optional[np.ndarray] = None
    last_tile_dims: tuple[str, ...] = ()
    device: Optional[int] = None


def _expect(tokens: list[str], i: int, want: str) -> int:
    if i >= len(tokens) or tokens[i] != want:
        found = tokens[i] if i < len(tokens) else "end of text"
        raise ValueError(f"expected '{want}' in the named sharding, found '{found}'")
    return i + 1


def _name(token: str) -> str:
    return token[1:-1] if token[:1] in ("'", '"') else token


def _ints_until(tokens: list[str], i: int, end: str) -> tuple[list[int], int]:
    values = []
    while tokens[i] != end:
        if tokens[i] != ",":
            values.append(int(tokens[i]))
        i += 1
    return values, i + 1


def _mesh(tokens: list[str], i: int) -> tuple[list[tuple[str, int]], list[int], int]:
    """`mesh[x=2,'y'=4]` and an optional `, device_ids=(...)`: (axes, device ids, next index)."""
    i = _expect(tokens, _expect(tokens, i, "mesh"), "[")
    axes: list[tuple[str, int]] = []
    while tokens[i] != "]":
        name = _name(tokens[i])
        i = _expect(tokens, i + 1, "=")
        axes.append((name, int(tokens[i])))
        i += 1
        if tokens[i] == ",":
            i += 1
    i += 1
    total = math.prod(size for _, size in axes)
    ids = list(range(total))
    if tokens[i] == "," and tokens[i + 1] == "device_ids":
        i = _expect(tokens, _expect(tokens, i + 2, "="), "(")
        if tokens[i] == "[":  # an iota: `[reshape]` (or `[dims]<=[reshape]`) and maybe `T(perm)`
            reshape, i = _ints_until(tokens, i + 1, "]")
            if tokens[i] == "<=":
                reshape, i = _ints_until(tokens, _expect(tokens, i + 1, "["), "]")
            devices = np.arange(math.prod(reshape)).reshape(reshape)
            if tokens[i] == "T(":
                perm, i = _ints_until(tokens, i + 1, ")")
                devices = devices.transpose(perm)
            ids = devices.ravel().tolist()
            i = _expect(tokens, i, ")")
        else:
            ids, i = _ints_until(tokens, i, ")")
        if sorted(ids) != list(range(total)):
            raise ValueError(f"device_ids {ids} are not the mesh's {total} devices")
    return axes, ids, i


def _axis_ref(tokens: list[str], i: int, axes: list[tuple[str, int]]) -> tuple[AxisSelection, int]:
    """`'x'`, `x`, an axis index, or the sub-axis `'x':(pre)size`."""
    token = tokens[i]
    name = axes[int(token)][0] if re.fullmatch(r"\d+", token) else _name(token)
    if tokens[i + 1] != ":":
        return (name, 1, None), i + 1
    i = _expect(tokens, i + 2, "(")
    pre = int(tokens[i])
    i = _expect(tokens, i + 1, ")")
    return (name, pre, int(tokens[i])), i + 1


def _axis_set(tokens: list[str], i: int, axes) -> tuple[list[AxisSelection], int]:
    """`{'x', 'y':(1)2, ?}` (a `?` marks the dimension open to more axes: it places nothing)."""
    i = _expect(tokens, i, "{")
    refs: list[AxisSelection] = []
    while tokens[i] != "}":
        if tokens[i] in (",", "?"):
            i += 1
            continue
        ref, i = _axis_ref(tokens, i, axes)
        refs.append(ref)
    return refs, i + 1


def named_sharding(tokens: list[str], i: int) -> tuple[Placement, int]:
    """The sharding whose first word (after its `{`) is at tokens[i]; returns it and the index
    past its closing `}`."""
    if tokens[i] == "maximal_mesh":
        i = _expect(tokens, _expect(tokens, i + 1, "["), "device_id")
        i = _expect(tokens, i, "=")
        device = int(tokens[i])
        i = _expect(tokens, i + 1, "]")
        return Placement("maximal", device=device), _expect(tokens, i, "}")
    axes, ids, i = _mesh(tokens, i)
    i = _expect(tokens, i, ",")
    if tokens[i] in _SUBGROUPS and tokens[i + 1] == "}":
        return Placement(tokens[i]), i + 2
    i = _expect(tokens, i, "[")
    dims: list[list[AxisSelection]] = []
    while tokens[i] != "]":
        if tokens[i] == ",":
            i += 1
            continue
        refs, i = _axis_set(tokens, i, axes)
        dims.append(refs)
    i += 1
    groups: dict[str, list[AxisSelection]] = {kind: [] for kind in _SUBGROUPS}
    while tokens[i] == ",":
        kind = tokens[i + 1]
        if kind not in groups:
            raise ValueError(f"unexpected '{kind}' in a named sharding")
        refs, i = _axis_set(tokens, _expect(tokens, i + 2, "="), axes)
        groups[kind] = refs
    i = _expect(tokens, i, "}")
    assignment, kinds = _tile_assignment(axes, ids, dims, groups)
    return Placement("tiled", assignment, kinds), i


def _tile_assignment(axes, ids, dims, groups) -> tuple[np.ndarray, tuple[str, ...]]:
    named = [ref for refs in dims for ref in refs] + groups["manual"] + groups["unreduced"]
    try:
        devices, factors, picks = mesh_factors(axes, ids, named)
    except ValueError as e:
        raise ValueError(str(e)) from None
    picks_of = iter(picks)
    order: list[int] = []
    shape: list[int] = []

    def take(count: int) -> list[int]:
        taken = [k for _ in range(count) for k in next(picks_of)]
        if set(taken) & set(order):
            raise ValueError(f"the sharding uses mesh axis '{factors[taken[0]][0]}' twice")
        order.extend(taken)
        return taken

    for refs in dims:
        shape.append(math.prod(factors[k][2] // factors[k][1] for k in take(len(refs))))
    kinds: list[str] = []
    for kind in ("manual", "unreduced"):
        if groups[kind]:
            shape.append(math.prod(factors[k][2] // factors[k][1] for k in take(len(groups[kind]))))
            kinds.append(kind)
    rest = [k for k in range(len(factors)) if k not in order]
    if rest:  # the replicated axes, named or not
        order.extend(rest)
        shape.append(math.prod(factors[k][2] // factors[k][1] for k in rest))
        kinds.append("replicated")
    if factors:
        devices = devices.transpose(order)
    return devices.reshape(shape), tuple(kinds)


__all__ = ["Placement", "named_sharding"]
