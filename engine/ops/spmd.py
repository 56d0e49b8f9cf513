"""SPMD programs on the grid: Shardy's manual computations and GSPMD's shard/full custom calls.

A program JAX partitions (`jax.jit` of `shard_map`) is global: every device runs the whole of
@main, ops outside the manual parts compute full arrays (redundantly, the same on every device),
and the manual parts work on this device's tile and meet the other devices at collectives.
Entering a manual part slices the full value down to this device's tile; leaving it, the devices
exchange their tiles and each one reassembles the full value. Partial manual parts (shard_map
over some of the mesh axes) and nested ones work too: along the free axes values stay whole.

The tiling comes from `sdy.manual_computation`'s in/out shardings over an `sdy.mesh` (Shardy), or
from the `mhlo.sharding` strings of `custom_call @Sharding`, `@SPMDFullToShardShape` and
`@SPMDShardToFullShape` (GSPMD). Device ids are flattened: `replica * num_partitions + partition`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional, Sequence

import numpy as np

from ..ir.attributes import SdyDimSharding, SdyMesh, SdySharding, SdyShardingPerValue, SymbolRef
from ..ir.sharding import (
    SPMD_CONVERSIONS,
    HloSharding,
    ShardingSyntaxError,
    device_tile,
    manual_peers,
    pad_tile,
    parse_hlo_sharding,
    tile_bounds,
    tile_holder,
    tile_shape,
)
from .checks import CUSTOM_CALL_TARGETS
from .registry import OpCall, op


def grid_hint(devices: int) -> str:
    return f"run on a grid of {devices} devices: hlodbg run --partitions {devices}, or the module's mhlo.num_partitions"


def _exchange(call: OpCall, devices: Sequence[int], value: Any) -> dict[int, Any]:
    """The contribution of each of `devices` (this one among them), by device id."""
    group = [call.grid.process_of(device) for device in devices]
    try:
        values = call.grid.exchange(call.process, [group], value, op=call.op)
    except ValueError as e:
        raise call.error(str(e)) from None
    return dict(zip(devices, values))


def _tile_of(value: Any, index: tuple[slice, ...]) -> Any:
    """This device's tile of a full value, cut where the value is: a device array's (the XLA
    backend's) stays on its device, a numpy array's is a view."""
    return value[index] if hasattr(value, "shape") else np.asarray(value)[index]


def _check_grid_size(call: OpCall, devices: int, what: str) -> None:
    if call.grid.size != devices:
        raise call.error(f"{what} spans {devices} devices but this run's grid has {call.grid.size}; "
                         f"{grid_hint(devices)}")


# -- meshes ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Mesh:
    """An `sdy.mesh`: named axes and the device id at each mesh position (row-major)."""

    name: str
    axes: tuple[tuple[str, int], ...]
    device_ids: tuple[int, ...]

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(size for _, size in self.axes)

    @property
    def size(self) -> int:
        return len(self.device_ids)

    def axis_coordinates(self, name: str, sub: Optional[tuple[int, int]]) -> tuple[np.ndarray, int]:
        """Every mesh position's coordinate along axis `name` (or its sub-axis), and that axis's size.

        A sub-axis `(pre)size` of an axis of size n = pre * size * post takes coordinate
        `(c // post) % size`."""
        names = [n for n, _ in self.axes]
        if name not in names:
            raise ValueError(f'mesh {self.name} has no axis "{name}" (axes: {", ".join(names) or "none"})')
        full = self.axes[names.index(name)][1]
        coordinates = np.indices(self.shape, dtype=np.int64).reshape(len(self.axes), -1)[names.index(name)]
        if sub is None:
            return coordinates, full
        pre, size = sub
        if pre * size == 0 or full % (pre * size):
            raise ValueError(f'sub-axis "{name}":({pre}){size} does not divide axis "{name}" of size {full}')
        return (coordinates // (full // (pre * size))) % size, size

    def dim_tiles(self, dim: SdyDimSharding) -> tuple[np.ndarray, int]:
        """Every mesh position's tile index along a dimension split over `dim.axes` (major first)."""
        index = np.zeros(self.size, np.int64)
        count = 1
        for ref in dim.axes:
            coordinate, size = self.axis_coordinates(ref.name, ref.sub)
            index = index * size + coordinate
            count *= size
        return index, count


def resolve_mesh(mesh: Any, module: Any) -> Mesh:
    """The mesh a sharding names: an inline `<[...]>` or an `sdy.mesh @name` of `module`."""
    if isinstance(mesh, SymbolRef):
        name = f"@{mesh.name}"
        found = next((candidate.attributes.get("mesh") for candidate in getattr(module, "operations", ())
                      if candidate.name == "sdy.mesh" and str(candidate.attributes.get("sym_name")) == mesh.name), None)
        if not isinstance(found, SdyMesh):
            raise ValueError(f"no sdy.mesh {name} in the module")
        mesh = found
    elif isinstance(mesh, SdyMesh):
        name = str(mesh)
    else:
        raise ValueError(f"cannot read the mesh {mesh}")
    total = int(np.prod(mesh.shape, dtype=np.int64))
    ids = tuple(mesh.device_ids) or tuple(range(total))
    if len(ids) != total:
        raise ValueError(f"mesh {name} lists {len(ids)} device ids for {total} positions")
    return Mesh(name, tuple(mesh.axes), ids)


# -- sdy.manual_computation ------------------------------------------------------------------------
#
# Only the manual axes cut values: along the other (free) axes a body value stays whole and every
# device of a free axis computes it alike, as in the global program. A manual computation nested
# in another keeps the enclosing one's axes fixed: its tiles are gathered among the devices that
# share this device's coordinates along them.


@dataclass(frozen=True)
class ResultTiling:
    """How a body result's tiles make up the value: tile counts and who holds each tile."""

    tiles: tuple[int, ...]
    holders: tuple[tuple[tuple[int, ...], int], ...]  # (tile index, device id), one per tile


@dataclass(frozen=True)
class ManualPlan:
    operand_slices: tuple[tuple[slice, ...], ...]
    results: tuple[ResultTiling, ...]
    peers: tuple[int, ...] = ()  # device ids that exchange tiles with this one, in order


def _shardings(call: OpCall, name: str, count: int, what: str) -> tuple[SdySharding, ...]:
    attr = call.attr(name)
    shardings = attr.shardings if isinstance(attr, SdyShardingPerValue) else ()
    if len(shardings) != count:
        raise call.error(f"{name} lists {len(shardings)} sharding(s) for {count} {what}(s)")
    for sharding in shardings:
        if sharding.unreduced:
            axes = ", ".join(map(str, sharding.unreduced))
            raise call.error(f"unreduced axes ({axes}) in {name} are not supported: hlodbg holds every global "
                             f"value reduced")
    return shardings


def _enclosing_manual_axes(call: OpCall) -> tuple[str, ...]:
    """The manual axes of the manual computations this one runs inside (through calls too)."""
    axes: list[str] = []
    frame = call.interpreter.frame
    while frame is not None:
        owner = frame.owner
        if frame.kind == "manual" and owner is not None and owner.name == "sdy.manual_computation":
            axes.extend(getattr(owner.attributes.get("manual_axes"), "axes", ()))
        frame = frame.parent
    return tuple(axes)


def _plan_manual(call: OpCall, enclosing: tuple[str, ...]) -> ManualPlan:
    operand_shardings = _shardings(call, "in_shardings", len(call.operand_types), "operand")
    result_shardings = _shardings(call, "out_shardings", len(call.result_types), "result")
    module = call.interpreter.module
    try:
        meshes = {resolve_mesh(s.mesh, module) for s in (*operand_shardings, *result_shardings)}
    except ValueError as e:
        raise call.error(str(e)) from None
    if not meshes:
        return ManualPlan((), (), ())
    if len(meshes) > 1:
        raise call.error(f"the shardings name different meshes ({', '.join(sorted(m.name for m in meshes))})")
    (mesh,) = meshes
    _check_grid_size(call, mesh.size, f"mesh {mesh.name}")
    manual = tuple(getattr(call.attr("manual_axes"), "axes", ()))
    names = [name for name, _ in mesh.axes]
    for name in manual:
        if name not in names:
            raise call.error(f'manual_axes names "{name}", which mesh {mesh.name} does not have '
                             f'(axes: {", ".join(names)})')
        if name in enclosing:
            raise call.error(f'axis "{name}" is already manual in an enclosing manual computation')
    device = call.grid.device_id(call.process)
    if device not in mesh.device_ids:
        raise call.error(f"device {device} is not in mesh {mesh.name}")
    position = mesh.device_ids.index(device)
    try:
        slices = tuple(_operand_slices(call, mesh, manual, position, i, s) for i, s in enumerate(operand_shardings))
        peers = _peers(mesh, enclosing, position)
        results = tuple(_result_tiling(mesh, manual, peers, s, len(t.shape))
                        for s, t in zip(result_shardings, call.result_types))
    except ValueError as e:
        raise call.error(str(e)) from None
    return ManualPlan(slices, results, tuple(sorted(mesh.device_ids[int(p)] for p in peers)))


def _manual_dim(dim: SdyDimSharding, manual: tuple[str, ...]) -> SdyDimSharding:
    return SdyDimSharding(tuple(ref for ref in dim.axes if ref.name in manual))


def _operand_slices(call: OpCall, mesh: Mesh, manual: tuple[str, ...], position: int, index: int,
                    sharding: SdySharding) -> tuple[slice, ...]:
    shape = call.operand_types[index].shape
    if len(sharding.dims) != len(shape):
        raise ValueError(f"in_shardings[{index}] has {len(sharding.dims)} dimension(s) for an operand of "
                         f"rank {len(shape)}")
    slices = []
    for dim, (size, dim_sharding) in enumerate(zip(shape, sharding.dims)):
        cut = _manual_dim(dim_sharding, manual)
        tiles, count = mesh.dim_tiles(cut)
        if size % count:
            raise ValueError(f"operand {index} dimension {dim} of size {size} does not split evenly over mesh "
                             f"axes {', '.join(map(str, cut.axes))} ({count} tiles); shard_map needs every "
                             f"sharded dimension divisible")
        step = size // count
        start = int(tiles[position]) * step
        slices.append(slice(start, start + step))
    local = tuple(s.stop - s.start for s in slices)
    body_type = call.op.regions[0].blocks[0].arguments[index].type
    if tuple(body_type.shape) != local:
        raise ValueError(f"operand {index}'s tile has shape {'x'.join(map(str, local))} but the body takes {body_type}")
    return tuple(slices)


def _peers(mesh: Mesh, enclosing: tuple[str, ...], position: int) -> np.ndarray:
    """The mesh positions sharing this position's coordinates along the enclosing manual axes."""
    same = np.ones(mesh.size, bool)
    for name in enclosing:
        coordinates, _ = mesh.axis_coordinates(name, None)
        same &= coordinates == coordinates[position]
    return np.flatnonzero(same)


def _result_tiling(mesh: Mesh, manual: tuple[str, ...], peers: np.ndarray, sharding: SdySharding,
                   rank: int) -> ResultTiling:
    if len(sharding.dims) != rank:
        raise ValueError(f"an out sharding has {len(sharding.dims)} dimension(s) for a result of rank {rank}")
    per_dim = [mesh.dim_tiles(_manual_dim(dim, manual)) for dim in sharding.dims]
    tiles = tuple(count for _, count in per_dim)
    flat = (np.ravel_multi_index(tuple(index[peers] for index, _ in per_dim), tiles) if per_dim
            else np.zeros(len(peers), np.int64))
    # The first peer (row-major) holding a tile has coordinate 0 along every free axis: its tile
    # stands for those of the devices that computed it alike.
    present, first = np.unique(flat, return_index=True)
    if len(present) != int(np.prod(tiles, dtype=np.int64)):
        raise ValueError("an out sharding splits dimensions over the same mesh axis twice")
    holders = tuple((tuple(int(i) for i in np.unravel_index(tile, tiles)), mesh.device_ids[int(peers[p])])
                    for tile, p in zip(present, first))
    return ResultTiling(tiles, holders)


def _assemble(call: OpCall, index: int, tiling: ResultTiling, contributions: dict[int, tuple]) -> np.ndarray:
    full = tuple(call.result_types[index].shape)
    step = tuple(size // count for size, count in zip(full, tiling.tiles))
    out: Optional[np.ndarray] = None
    for tile, device in tiling.holders:
        piece = np.asarray(contributions[device][index])
        if piece.shape != step:
            raise call.error(f"result {index} of the body has shape {'x'.join(map(str, piece.shape))} on device "
                             f"{device}, but out_shardings[{index}] needs tiles of {'x'.join(map(str, step))} "
                             f"for {call.result_types[index]}")
        if out is None:
            out = np.empty(full, piece.dtype)
        out[tuple(slice(t * s, (t + 1) * s) for t, s in zip(tile, step))] = piece
    return out


@op("sdy.manual_computation")
def manual_computation(call: OpCall, *operands: np.ndarray) -> Any:
    enclosing = _enclosing_manual_axes(call)
    plan = call.cached(f"manual_plan{enclosing}", lambda: _plan_manual(call, enclosing))
    local = [_tile_of(x, s) for x, s in zip(operands, plan.operand_slices)]
    results = call.run_region(0, *local, kind="manual")
    if not plan.results:
        return call.results(results)
    contributions = _exchange(call, plan.peers, tuple(results))
    return call.results([_assemble(call, i, t, contributions) for i, t in enumerate(plan.results)])


@op("sdy.sharding_constraint", "sdy.reshard")
def sharding_annotation(call: OpCall, operand: np.ndarray) -> np.ndarray:
    # A global value is whole on every device: how it would be laid out changes nothing here.
    return operand


# -- GSPMD custom calls ----------------------------------------------------------------------------
#
# A sharding's `manual` subgroup dims say which manual part a device is in (an enclosing shard_map
# over some axes); its tiles are then cut and gathered within that part only. Along `replicated`
# subgroup dims the devices computed alike: the first one's tile stands for all.

SUBGROUP_KINDS = ("manual", "replicated")


def _parse_sharding(call: OpCall, text: Any, where: str) -> HloSharding:
    if not isinstance(text, str):
        raise call.error(f"{where} has no mhlo.sharding string")
    try:
        sharding = parse_hlo_sharding(text)
    except ShardingSyntaxError as e:
        raise call.error(f"{where}'s mhlo.sharding {text!r}: {e}") from None
    if sharding.kind == "tuple" and len(sharding.elements) == 1:
        sharding = sharding.elements[0]
    if sharding.kind == "tuple":
        raise call.error(f"{where} has a tuple sharding {text!r} for one value")
    unsupported = [kind for kind in sharding.last_tile_dims if kind not in SUBGROUP_KINDS]
    if unsupported:
        raise call.error(f"{where}'s mhlo.sharding {text!r} has {', '.join(unsupported)} subgroups; hlodbg runs "
                         f"{' and '.join(SUBGROUP_KINDS)} ones")
    return sharding


def _operand_sharding(call: OpCall) -> HloSharding:
    """The tiling of the full operand: its producing @Sharding op's, else this op's own tiled one."""
    producer = call.op.operands[0].defining_op
    if (producer is not None and producer.name == "stablehlo.custom_call"
            and str(producer.attributes.get("call_target_name")) == "Sharding"):
        return _parse_sharding(call, producer.attributes.get("mhlo.sharding"), "the operand's @Sharding")
    own = _parse_sharding(call, call.attr("mhlo.sharding"), "the op")
    # The own sharding describes the full value only when it has no manual part (else it is the tile's).
    if own.kind != "tiled" or "manual" in own.last_tile_dims:
        raise call.error("cannot tell how the full operand is tiled: it does not come from a custom_call @Sharding "
                         "and the op's own mhlo.sharding is not a tiling of the full value")
    return own


def _tiles_of(call: OpCall, sharding: HloSharding, shape: tuple[int, ...], what: str) -> tuple[int, ...]:
    tiles = sharding.tiled_dims
    if len(tiles) != len(shape):
        raise call.error(f"the {what} sharding tiles {len(tiles)} dimension(s) of a value of rank {len(shape)}")
    _check_grid_size(call, int(sharding.tile_assignment.size), f"the {what} sharding")
    return tiles


def _check_tile_type(call: OpCall, expected: tuple[int, ...], actual: tuple[int, ...], what: str) -> None:
    if tuple(expected) != tuple(actual):
        raise call.error(f"{what} has shape {'x'.join(map(str, actual)) or 'scalar'} but the sharding's tiles are "
                         f"{'x'.join(map(str, expected)) or 'scalar'}")


def _full_to_shard_slices(call: OpCall) -> Optional[tuple[tuple[slice, ...], tuple[int, ...]]]:
    """This device's slice of the full operand and the (padded) tile shape; None: the whole value."""
    sharding = _operand_sharding(call)
    full = tuple(call.operand_types[0].shape)
    result = tuple(call.result_type.shape)
    if sharding.kind == "manual":
        raise call.error("the operand is already manual (sharding {manual}): there is no full value to cut")
    if sharding.kind != "tiled":  # replicated or maximal: every tile is the whole value
        _check_tile_type(call, full, result, "the result")
        return None
    tiles = _tiles_of(call, sharding, full, "operand")
    try:
        tile = device_tile(sharding, call.grid.device_id(call.process))
    except ValueError as e:
        raise call.error(str(e)) from None
    shape = tile_shape(full, tiles)
    _check_tile_type(call, shape, result, "the result")
    bounds = [tile_bounds(size, count, i) for size, count, i in zip(full, tiles, tile)]
    return tuple(slice(start, stop) for start, stop in bounds), shape


def full_to_shard(call: OpCall, operand: np.ndarray) -> np.ndarray:
    plan = call.cached("full_to_shard", lambda: _full_to_shard_slices(call))
    if plan is None:
        return operand
    slices, shape = plan
    return pad_tile(_tile_of(operand, slices), shape)


@dataclass(frozen=True)
class FullPlan:
    """How @SPMDShardToFullShape gathers: from which devices, and which device's tile goes where."""

    peers: tuple[int, ...]
    placements: tuple[tuple[int, tuple[slice, ...], tuple[slice, ...]], ...]  # device, into full, from tile
    tile: tuple[int, ...]


def _plan_shard_to_full(call: OpCall) -> FullPlan:
    sharding = _parse_sharding(call, call.attr("mhlo.sharding"), "the op")
    full = tuple(call.result_type.shape)
    whole = tuple(slice(None) for _ in full)
    if sharding.kind == "manual":
        raise call.error("the result sharding is {manual}: it does not say how to assemble the full value")
    if sharding.kind == "maximal":
        if not 0 <= sharding.device < call.grid.size:
            raise call.error(f"the sharding names device {sharding.device}; {grid_hint(sharding.device + 1)}")
        return FullPlan(tuple(range(call.grid.size)), ((sharding.device, whole, whole),), full)
    if sharding.kind != "tiled":  # replicated: every device has the whole value; the first one's counts
        return FullPlan(tuple(range(call.grid.size)), ((0, whole, whole),), full)
    tiles = _tiles_of(call, sharding, full, "result")
    device = call.grid.device_id(call.process)
    try:
        peers = manual_peers(sharding, device)
        placements = []
        for tile in np.ndindex(*tiles):
            bounds = [tile_bounds(size, count, i) for size, count, i in zip(full, tiles, tile)]
            # Short tiles at the end carry padding; it is cut off.
            placements.append((tile_holder(sharding, tile, device), tuple(slice(a, b) for a, b in bounds),
                               tuple(slice(0, b - a) for a, b in bounds)))
    except ValueError as e:
        raise call.error(str(e)) from None
    return FullPlan(peers, tuple(placements), tile_shape(full, tiles))


def shard_to_full(call: OpCall, operand: np.ndarray) -> np.ndarray:
    plan = call.cached("shard_to_full", lambda: _plan_shard_to_full(call))
    contributions = _exchange(call, plan.peers, operand)
    out: Optional[np.ndarray] = None
    for device, into, cut in plan.placements:
        piece = np.asarray(contributions[device])
        _check_tile_type(call, plan.tile, piece.shape, f"the operand on device {device}")
        if out is None:
            out = np.empty(call.result_type.shape, piece.dtype)
        out[into] = piece[cut]
    return out


def result_sharding_marker(call: OpCall, operand: np.ndarray) -> np.ndarray:
    # Shardy's round-trip form in HLO marks a function result's sharding with this custom call
    # (xla.sdy.FuncResultSharding); a global value is whole on every device, so it passes through.
    return operand


# custom_call dispatches on its target through checks.CUSTOM_CALL_TARGETS (where @Sharding, the
# identity, already is): the SPMD conversions join it from here.
CUSTOM_CALL_TARGETS.update({
    "SPMDFullToShardShape": full_to_shard,
    "SPMDShardToFullShape": shard_to_full,
    "xla.sdy.FuncResultSharding": result_sharding_marker,
})

SPMD_CUSTOM_CALLS = SPMD_CONVERSIONS
