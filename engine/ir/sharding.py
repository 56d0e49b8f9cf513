"""HloSharding strings (`mhlo.sharding = "{devices=[2,1,2]<=[4] last_tile_dim_replicate}"`).

The attribute stays the string it was written as (so it prints back unchanged);
`parse_hlo_sharding` decodes it into which device holds which tile.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from .named_sharding import named_sharding

# Custom-call targets that mark how a global program is partitioned (GSPMD's and Shardy's HLO
# spelling): they are not computations of their own, so only a run of the whole grid gives them a
# meaning (engine/ops/spmd.py cuts and gathers tiles there), never a single-op kernel.
# GSPMD's conversions between a global value and each device's tile (engine/ops/spmd.py runs them;
# engine/run/spmd.py finds the manual regions they bound).
SPMD_CONVERSIONS = frozenset({"SPMDFullToShardShape", "SPMDShardToFullShape"})
PARTITIONER_CUSTOM_CALLS = SPMD_CONVERSIONS | {"Sharding", "xla.sdy.FuncResultSharding"}


@dataclass(frozen=True)
class HloSharding:
    """One sharding. `tile_assignment[i, j, ...]` is the device holding tile (i, j, ...)."""

    kind: str  # "replicated" | "maximal" | "manual" | "unknown" | "unreduced" | "tiled" | "tuple"
    tile_assignment: Optional[np.ndarray] = field(default=None, compare=False)
    device: Optional[int] = None  # for maximal
    last_tile_dims: tuple[str, ...] = ()  # subgroup kinds of the trailing tile dims
    elements: tuple["HloSharding", ...] = ()  # for tuple shardings

    @property
    def tiled_dims(self) -> tuple[int, ...]:
        """Tile counts along the tensor's own dimensions (trailing subgroup dims removed)."""
        if self.tile_assignment is None:
            return ()
        dims = self.tile_assignment.shape
        return tuple(dims[: len(dims) - len(self.last_tile_dims)])


class ShardingSyntaxError(ValueError):
    pass


_TOKEN = re.compile(r"\s*(\{|\}|\[|\]|<=|,|=|T\(|\(|\)|\?|:|'[^']*'|\"[^\"]*\"|[A-Za-z_][A-Za-z0-9_]*|-?\d+)")


def _strip_metadata(text: str) -> str:
    """Drop `metadata={op_name=...}` parts: they carry no placement."""
    out = []
    i = 0
    while True:
        j = text.find("metadata={", i)
        if j < 0:
            out.append(text[i:])
            return "".join(out)
        out.append(text[i:j])
        depth = 0
        k = j + len("metadata=")
        while k < len(text):
            depth += {"{": 1, "}": -1}.get(text[k], 0)
            k += 1
            if depth == 0:
                break
        i = k


_NAMED_MESH = re.compile(r"\s*\{\s*(\{\s*)*(maximal_)?mesh\s*\[")


def is_named_sharding(text: str) -> bool:
    """Whether the sharding names a mesh (`{mesh['x'=2], [{'x'}]}`, `{maximal_mesh[device_id=0]}`),
    XLA's newest form, which parse_hlo_sharding places through named_sharding.py."""
    return _NAMED_MESH.match(text) is not None


def _tokens(text: str) -> list[str]:
    text = _strip_metadata(text)
    tokens = []
    pos = 0
    while text[pos:].strip():
        m = _TOKEN.match(text, pos)
        if m is None:
            raise ShardingSyntaxError(f"unexpected '{text[pos:pos + 10].strip()}' in sharding")
        tokens.append(m.group(1))
        pos = m.end()
    # `shard_as N` / `shard_like N` ask the partitioner to shard values alike; they place nothing.
    # A dropped `, metadata={...}` leaves its comma before a `}`.
    kept = []
    i = 0
    while i < len(tokens):
        if tokens[i] in ("shard_as", "shard_like"):
            i += 2
            continue
        if tokens[i] == "," and i + 1 < len(tokens) and tokens[i + 1] == "}":
            i += 1
            continue
        kept.append(tokens[i])
        i += 1
    return kept


def parse_hlo_sharding(text: str) -> HloSharding:
    tokens = _tokens(text)
    try:
        sharding, rest = _sharding(tokens, 0)
    except IndexError:
        raise ShardingSyntaxError(f"sharding {text!r} ends too early") from None
    if rest != len(tokens):
        raise ShardingSyntaxError(f"unexpected '{tokens[rest]}' after the sharding")
    return sharding


def _expect(tokens: list[str], i: int, want: str) -> int:
    if i >= len(tokens) or tokens[i] != want:
        found = tokens[i] if i < len(tokens) else "end of text"
        raise ShardingSyntaxError(f"expected '{want}' in sharding, found '{found}'")
    return i + 1


def _int_list(tokens: list[str], i: int) -> tuple[list[int], int]:
    i = _expect(tokens, i, "[")
    values = []
    while tokens[i] != "]":
        values.append(int(tokens[i]))
        i += 1
        if tokens[i] == ",":
            i += 1
    return values, i + 1


def _sharding(tokens: list[str], i: int) -> tuple[HloSharding, int]:
    i = _expect(tokens, i, "{")
    if tokens[i] == "}":  # the sharding of an empty tuple
        return HloSharding("tuple"), i + 1
    if tokens[i] == "{":
        elements = []
        while tokens[i] == "{":
            element, i = _sharding(tokens, i)
            elements.append(element)
            if tokens[i] == ",":
                i += 1
        return HloSharding("tuple", elements=tuple(elements)), _expect(tokens, i, "}")
    word = tokens[i]
    if word in ("mesh", "maximal_mesh"):
        try:
            placed, i = named_sharding(tokens, i)
        except ValueError as e:
            raise ShardingSyntaxError(str(e)) from None
        return HloSharding(placed.kind, placed.tile_assignment, placed.device, placed.last_tile_dims), i
    if word in ("replicated", "manual", "unknown", "unreduced"):
        return HloSharding(word), _expect(tokens, i + 1, "}")
    if word == "maximal":
        i = _expect(tokens, i + 1, "device")
        i = _expect(tokens, i, "=")
        return HloSharding("maximal", device=int(tokens[i])), _expect(tokens, i + 1, "}")
    if word != "devices":
        raise ShardingSyntaxError(f"unknown sharding '{word}'")
    i = _expect(tokens, i + 1, "=")
    dims, i = _int_list(tokens, i)
    count = int(np.prod(dims))
    if tokens[i] == "<=":
        reshape, i = _int_list(tokens, i + 1)
        devices = np.arange(int(np.prod(reshape))).reshape(reshape)
        if i < len(tokens) and tokens[i] == "T(":
            i += 1
            perm = []
            while tokens[i] != ")":
                perm.append(int(tokens[i]))
                i += 1
                if tokens[i] == ",":
                    i += 1
            devices = devices.transpose(perm)
            i += 1
    else:
        listed = []
        while i < len(tokens) and re.fullmatch(r"-?\d+", tokens[i]):
            listed.append(int(tokens[i]))
            i += 1
            if tokens[i] == ",":
                i += 1
        devices = np.array(listed)
    if devices.size != count:
        raise ShardingSyntaxError(f"tile assignment {dims} needs {count} devices, got {devices.size}")
    assignment = devices.reshape(dims)
    last: tuple[str, ...] = ()
    while tokens[i] != "}":
        if tokens[i] == "last_tile_dim_replicate":
            last = ("replicated",)
            i += 1
        elif tokens[i] == "last_tile_dims":
            i = _expect(tokens, i + 1, "=")
            i = _expect(tokens, i, "{")
            kinds = []
            while tokens[i] != "}":
                kinds.append(tokens[i])
                i += 1
                if tokens[i] == ",":
                    i += 1
            last = tuple(kinds)
            i += 1
        else:
            raise ShardingSyntaxError(f"unexpected '{tokens[i]}' in tiled sharding")
    return HloSharding("tiled", assignment, last_tile_dims=last), i + 1


def tile_bounds(size: int, tiles: int, index: int) -> tuple[int, int]:
    """The slice of a dimension of `size` split `tiles` ways that tile `index` covers."""
    step = -(-size // tiles)
    start = min(index * step, size)
    return start, min(start + step, size)


def device_position(sharding: HloSharding, device: int) -> tuple[int, ...]:
    """Where `device` is in a tiled sharding's tile assignment (subgroup dims included).

    Raises ValueError when the tile assignment does not list the device."""
    found = np.argwhere(sharding.tile_assignment == device)
    if not len(found):
        raise ValueError(f"device {device} holds no tile of the sharding (it lists devices "
                         f"{', '.join(map(str, sharding.tile_assignment.ravel().tolist()))})")
    return tuple(int(i) for i in found[0])


def device_tile(sharding: HloSharding, device: int) -> tuple[int, ...]:
    """The tile (along the tensor's own dims) that `device` holds in a tiled sharding."""
    return device_position(sharding, device)[: len(sharding.tiled_dims)]


def _subgroup_index(sharding: HloSharding, device: int, others: object) -> tuple:
    """Index into the subgroup dims: `device`'s own along manual ones, `others` along the rest."""
    position = device_position(sharding, device)[len(sharding.tiled_dims):]
    return tuple(p if kind == "manual" else others for kind, p in zip(sharding.last_tile_dims, position))


def manual_peers(sharding: HloSharding, device: int) -> tuple[int, ...]:
    """The devices of `device`'s manual subgroup (every device when there are no manual dims)."""
    index = (slice(None),) * len(sharding.tiled_dims) + _subgroup_index(sharding, device, slice(None))
    return tuple(sorted(int(d) for d in np.asarray(sharding.tile_assignment[index]).ravel()))


def tile_holder(sharding: HloSharding, tile: tuple[int, ...], device: int) -> int:
    """The first device of `device`'s manual subgroup holding `tile` (index 0 along replicated dims)."""
    return int(sharding.tile_assignment[tuple(tile) + _subgroup_index(sharding, device, 0)])


def tile_shape(shape: tuple[int, ...], tiles: tuple[int, ...]) -> tuple[int, ...]:
    """The shape every tile has: each dim split `tiles` ways, rounded up (short tiles are padded)."""
    return tuple(-(-size // count) for size, count in zip(shape, tiles))


def pad_tile(piece: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """A tile cut from a global value, padded with zeros to the common tile `shape` (with uneven
    tiling the last tiles are short, and XLA pads them)."""
    if tuple(piece.shape) == tuple(shape):
        return piece
    padded = np.zeros(shape, piece.dtype)
    padded[tuple(slice(0, n) for n in piece.shape)] = piece
    return padded
