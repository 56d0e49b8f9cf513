"""Collectives and communication: process groups, all_* ops, permutes, send/recv, in/outfeed.

Process groups are formed exactly as the spec's "Collective ops" section says, by functions that
take `(process, grid, attributes)` and return the list of groups of `ProcessId`s; they hold for
any grid size. Data moves through `grid.exchange(process, groups, value)`, which returns every
member's contribution in group order: on the 1x1 grid a group of one process gets its own value
back, and a group naming other processes is an error telling which grid the op needs.

Strategies (spec): `cross_replica` (replica groups x every partition), `cross_partition`
(partition groups x every replica), `cross_replica_and_partition` (each replica group with all
partitions), `flattened_ids` (ids `replica * num_partitions + partition`). all_gather,
all_reduce, collective_reduce and reduce_scatter choose among the first three and flattened_ids
by `channel_id > 0` and `use_global_device_ids`; all_to_all, collective_broadcast and
collective_permute by `channel_id > 0` alone. `replica_groups` is a dense 2-D array padded
with -1 (an empty array means one group of everything, as in XLA) or `#stablehlo.replica_group_mesh_axes`, whose groups
are the mesh devices that differ only along the named (sub-)axes.

Every process forms the same list of groups; the group functions take the process anyway so the
grid issue can ask any process's view with one signature.

On a machine with real devices (the XLA backend, `Backend.group_collective`) each collective's
evaluator is wrapped by `real_collective`: the group exchanges its operands and the machine runs
the op once for the whole group, every member taking its own results; the numpy code below then
serves the emulated grid, and ops the machine cannot run.
"""
from __future__ import annotations

import functools
import re
from collections import deque
from typing import Any, Callable, Optional, Sequence

import numpy as np

from ..ir.attributes import ChannelHandle, DenseElements, ReplicaGroupMeshAxes, SdyMesh, SymbolRef
from ..ir.dtypes import TOKEN, as_value
from ..ir.mesh_groups import mesh_axis_groups
from ..ir.opset import process_groups_of
from ..ir.types import TensorType
from ..machine.process import Grid, ProcessId
from .quantization import convert, quantize, quantized_element
from .reduction import combine, tree_reduce_last
from .registry import OpCall, op

Groups = list[list[ProcessId]]

# -- group formation (spec "Collective ops") ---------------------------------------------------


def cross_replica(grid: Grid, replica_groups: Sequence[Sequence[int]]) -> Groups:
    _check_ids(replica_groups, grid.num_replicas, "replica")
    return [[ProcessId(r, p) for r in group] for group in replica_groups for p in range(grid.num_partitions)]


def cross_partition(grid: Grid, partition_groups: Sequence[Sequence[int]]) -> Groups:
    _check_ids(partition_groups, grid.num_partitions, "partition")
    return [[ProcessId(r, p) for p in group] for group in partition_groups for r in range(grid.num_replicas)]


def cross_replica_and_partition(grid: Grid, replica_groups: Sequence[Sequence[int]]) -> Groups:
    _check_ids(replica_groups, grid.num_replicas, "replica")
    return [[ProcessId(r, p) for p in range(grid.num_partitions) for r in group] for group in replica_groups]


def flattened_ids(grid: Grid, id_groups: Sequence[Sequence[int]]) -> Groups:
    _check_ids(id_groups, grid.size, "flattened process")
    return [[grid.process_of(i) for i in group] for group in id_groups]


def _check_ids(groups: Sequence[Sequence[int]], limit: int, what: str) -> None:
    seen = set()
    for group in groups:
        for i in group:
            if not 0 <= i < limit:
                raise ValueError(
                    f"the groups name {what} id {i} but the grid has {limit} {what} id(s) (0..{limit - 1}); "
                    f"run on a grid with more processes")
            if i in seen:
                raise ValueError(f"{what} id {i} appears twice in the groups")
            seen.add(i)


STRATEGIES = {
    "cross_replica": cross_replica,
    "cross_partition": cross_partition,
    "cross_replica_and_partition": cross_replica_and_partition,
    "flattened_ids": flattened_ids,
}


def channel_id(attributes: dict) -> int:
    handle = attributes.get("channel_handle")
    return int(handle.handle) if isinstance(handle, ChannelHandle) else 0


def reduction_strategy(attributes: dict) -> str:
    """all_gather / all_reduce / reduce_scatter: the spec's three-way choice."""
    flag = attributes.get("use_global_device_ids")
    global_ids = flag is not None and flag is not False  # a unit attribute: present or absent
    if channel_id(attributes) <= 0:
        if global_ids:
            raise ValueError("use_global_device_ids needs a positive channel_id (C5)")
        return "cross_replica"
    return "flattened_ids" if global_ids else "cross_replica_and_partition"


def split_strategy(attributes: dict) -> str:
    """all_to_all / collective_broadcast / collective_permute: replicas unless a channel is given."""
    return "cross_partition" if channel_id(attributes) > 0 else "cross_replica"


def reduction_groups(process: ProcessId, grid: Grid, attributes: dict, module: Any = None) -> Groups:
    """Process groups of all_gather, all_reduce, collective_reduce and reduce_scatter."""
    strategy = reduction_strategy(attributes)
    return STRATEGIES[strategy](grid, replica_groups(attributes, grid, strategy, module))


def split_groups(process: ProcessId, grid: Grid, attributes: dict, module: Any = None) -> Groups:
    """Process groups of all_to_all and collective_broadcast."""
    strategy = split_strategy(attributes)
    return STRATEGIES[strategy](grid, replica_groups(attributes, grid, strategy, module))


def permute_groups(process: ProcessId, grid: Grid, attributes: dict) -> Groups:
    """collective_permute's groups: one [source, target] pair per pair and replica/partition."""
    pairs = _dense_rows(attributes.get("source_target_pairs"), "source_target_pairs")
    if any(len(pair) != 2 for pair in pairs):
        raise ValueError("source_target_pairs must have two columns (C1)")
    strategy = split_strategy(attributes)
    limit = grid.num_partitions if strategy == "cross_partition" else grid.num_replicas
    for column, role in ((0, "source"), (1, "target")):
        ids = [pair[column] for pair in pairs]
        if len(set(ids)) != len(ids):
            raise ValueError(f"a {role} appears twice in source_target_pairs (C2, C3)")
        for i in ids:
            if not 0 <= i < limit:
                kind = "partition" if strategy == "cross_partition" else "replica"
                raise ValueError(f"source_target_pairs name {kind} id {i} but the grid has {limit} {kind} id(s); "
                                 f"run on a grid with more processes")
    if strategy == "cross_partition":
        return [[ProcessId(r, s), ProcessId(r, t)] for s, t in pairs for r in range(grid.num_replicas)]
    return [[ProcessId(s, p), ProcessId(t, p)] for s, t in pairs for p in range(grid.num_partitions)]


# The group forms an op's `process_groups` trait names (ir/opdefs.py).
# Called as form(process, grid, attributes[, module]); "pairs" gives (source, target) pairs, not groups.
GROUP_FORMS: dict[str, Callable[..., Any]] = {"reduction": reduction_groups, "split": split_groups, "pairs": permute_groups}


def axis_groups(grid: Grid, strategy: str) -> Groups:
    """Every process sharing a partition (cross_replica) or a replica (cross_partition)."""
    if strategy == "cross_partition":
        return [[ProcessId(r, p) for p in range(grid.num_partitions)] for r in range(grid.num_replicas)]
    return [[ProcessId(r, p) for r in range(grid.num_replicas)] for p in range(grid.num_partitions)]


def replica_groups(attributes: dict, grid: Grid, strategy: str, module: Any = None) -> list[list[int]]:
    """`replica_groups` as lists of ids, -1 padding dropped; empty means one group of all ids."""
    groups = attributes.get("replica_groups")
    if isinstance(groups, ReplicaGroupMeshAxes):
        return mesh_axes_groups(groups, module)
    rows = _dense_rows(groups, "replica_groups") if groups is not None else []
    rows = [row for row in rows if row]
    if rows:
        return rows
    count = {"cross_partition": grid.num_partitions, "flattened_ids": grid.size}.get(strategy, grid.num_replicas)
    return [list(range(count))]


def _dense_rows(attr: Any, name: str) -> list[list[int]]:
    if not isinstance(attr, DenseElements):
        raise ValueError(f"{name} must be a dense 2-D array of ids, got {attr!r}")
    array = np.asarray(attr.array)
    if array.ndim == 1:
        array = array.reshape(1, -1) if array.size else array.reshape(0, 0)
    if array.ndim != 2:
        raise ValueError(f"{name} must be 2-D, got shape {array.shape}")
    return [[int(i) for i in row if int(i) >= 0] for row in array]


# `#stablehlo.replica_group_mesh_axes`: groups of mesh devices varying only along named axes.

_MESH_AXIS = re.compile(r'mesh_axis<\s*name\s*=\s*"([^"]*)"\s*,\s*size\s*=\s*(\d+)')
_AXIS_REF = re.compile(r'name\s*=\s*"([^"]*)"(?:\s*,\s*sub_axis_info\s*=\s*\((\d+)\)(\d+))?')
_SDY_AXIS_REF = re.compile(r'axis_ref\s*"([^"]*)"(?:\s*:\s*\((\d+)\)(\d+))?')
_DEVICE_IDS = re.compile(r'device_ids\s*=\s*\[([^\]]*)\]')


def mesh_axes_groups(attr: ReplicaGroupMeshAxes, module: Any = None) -> list[list[int]]:
    """Device ids grouped by the mesh coordinates outside `attr.axes`, members in axes order
    (engine/ir/mesh_groups.py). The mesh is inline or an `sdy.mesh` of `module`."""
    mesh = getattr(attr, "mesh_name", None) or getattr(attr, "mesh", None)
    axes, device_ids = _mesh(mesh, module)
    return mesh_axis_groups(axes, device_ids, [_axis_ref(ref) for ref in attr.axes])


def _mesh(mesh: Any, module: Any) -> tuple[list[tuple[str, int]], list[int]]:
    if isinstance(mesh, SdyMesh):
        axes = list(mesh.axes)
        ids = list(mesh.device_ids)
    elif isinstance(mesh, SymbolRef):
        found = None
        for candidate in getattr(module, "operations", ()):
            if candidate.name == "sdy.mesh" and str(candidate.attributes.get("sym_name")) == mesh.name:
                found = candidate.attributes.get("mesh")
        if not isinstance(found, SdyMesh):
            raise ValueError(f"no sdy.mesh @{mesh.name} in the module")
        axes, ids = list(found.axes), list(found.device_ids)
    else:
        text = str(getattr(mesh, "text", mesh))
        axes = [(name, int(size)) for name, size in _MESH_AXIS.findall(text)]
        if not axes and "axes" not in text:
            raise ValueError(f"cannot read the mesh {text}")
        listed = _DEVICE_IDS.search(text)
        ids = [int(i) for i in listed.group(1).split(",") if i.strip()] if listed else []
    total = int(np.prod([size for _, size in axes], dtype=np.int64))
    return axes, ids or list(range(total))


def _axis_ref(ref: Any) -> tuple[str, int, Optional[int]]:
    text = str(getattr(ref, "text", ref))
    # `#stablehlo.axis_ref<name = "y", sub_axis_info = (1)2>` or Shardy's `#sdy<axis_ref"y":(1)2>`.
    match = _AXIS_REF.search(text) or _SDY_AXIS_REF.search(text)
    if match is None:
        raise ValueError(f"cannot read the axis reference {text}")
    name, pre, size = match.groups()
    return name, int(pre or 1), int(size) if size is not None else None


# -- data exchange -------------------------------------------------------------------------------


def _groups(call: OpCall, form, *args) -> Groups:
    try:
        return call.grid.groups_of((call.op, form.__name__), lambda: form(call.process, call.grid, call.attrs, *args))
    except ValueError as e:
        raise call.error(str(e)) from None


def _exchange(call: OpCall, groups: Groups, value: Any) -> list:
    try:
        return call.grid.exchange(call.process, groups, value, op=call.op)
    except ValueError as e:
        raise call.error(str(e)) from None


def _index_in(groups: Groups, process: ProcessId) -> tuple[Optional[list[ProcessId]], int]:
    for group in groups:
        if process in group:
            return group, group.index(process)
    return None, -1


def _zeros(t: TensorType) -> np.ndarray:
    """The fill of processes that receive nothing: 0, quantized for quantized types."""
    q = quantized_element(t)
    shape = tuple(t.shape)
    if q is not None:
        return np.broadcast_to(quantize(np.zeros((), q.expressed.numpy_dtype), q), shape).copy()
    return np.zeros(shape, t.numpy_dtype)


def _nothing_received(call: OpCall) -> Any:
    """The results of a process a rooted collective delivers nothing to: all zeros."""
    return call.results([_zeros(t) for t in call.result_types])


# -- collectives the machine runs itself ---------------------------------------------------------


def meeting_groups(call: OpCall) -> Groups:
    """The groups whose members meet at `call`'s collective, by its `process_groups` trait: the
    op's own groups, except that a permute's pairs meet along their whole axis (every process of
    it takes part, as in collective_permute below)."""
    form = process_groups_of(call.op.name)
    if form == "pairs":
        _groups(call, permute_groups)  # the pairs' checks
        return call.grid.groups_of((call.op, "axis_groups"), lambda: axis_groups(call.grid, split_strategy(call.attrs)))
    return _groups(call, GROUP_FORMS[form], call.interpreter.module)


def real_collective(evaluator: Callable) -> Callable:
    """Decorates a collective's evaluator: on a backend that runs collectives itself (XLA,
    `Backend.group_collective`) the group meets here and the machine computes every member's
    results at once (one execution over the group's devices); otherwise, and for an op the
    machine cannot run, the evaluator computes them from the exchanged contributions."""

    @functools.wraps(evaluator)
    def run(call: OpCall, *operands: Any) -> Any:
        if call.backend.runs_collectives:
            done = _on_machine(call, operands)
            if done is not None:
                return done
            # Left to the evaluator: the machine's values (device arrays) come to the host.
            operands = tuple(np.asarray(o) for o in operands)
        return evaluator(call, *operands)

    run.real_collective = True
    return run


def _on_machine(call: OpCall, operands: Sequence[Any]) -> Any:
    groups = meeting_groups(call)
    group, index = _index_in(groups, call.process)
    if group is None:
        return None  # in no group: the evaluator says what such a process gets
    execute = call.backend.group_collective(call.op, tuple(call.grid.device_id(p) for p in group))
    if execute is None:
        return None
    contributions = _exchange(call, groups, tuple(operands))
    # Every member receives the same contributions list: the first to get here runs the group.
    results = call.grid.shared(contributions, lambda: execute(contributions))
    return call.results(results[index])


# -- all_reduce / reduce_scatter / cross-replica-sum -------------------------------------------


def _reduce_contributions(call: OpCall, values: list[np.ndarray], body_type: TensorType) -> np.ndarray:
    """Combine the group's values (group order) with the computation region."""
    if len(values) == 1:
        return np.asarray(values[0])
    kind = call.body_kind(0)
    if kind is not None and quantized_element(body_type) is None:
        total = values[0]
        for v in values[1:]:
            total = combine(call, kind, total, v)
        return total
    stacked = np.stack(values, axis=-1)
    return tree_reduce_last(call, 0, [stacked])[0]


def _all_reduce(call: OpCall, operands: Sequence[np.ndarray], groups: Groups) -> list[np.ndarray]:
    contributions = _exchange(call, groups, tuple(operands))
    body_type = call.op.regions[0].blocks[0].arguments[0].type

    def reduce_all() -> list[np.ndarray]:
        results = []
        for i, operand_type in enumerate(call.operand_types[:len(operands)]):
            values = [convert(np.asarray(c[i]), operand_type, body_type) for c in contributions]
            results.append(_reduce_contributions(call, values, body_type))
        return results

    # Every member of the group computes the same reduction: do it once for the group.
    return list(call.grid.shared(contributions, reduce_all))


@op("stablehlo.all_reduce")
@real_collective
def all_reduce(call: OpCall, *operands: np.ndarray) -> Any:
    groups = _groups(call, reduction_groups, call.interpreter.module)
    return call.results(_all_reduce(call, operands, groups))


@op("stablehlo.reduce_scatter")
@real_collective
def reduce_scatter(call: OpCall, operand: np.ndarray) -> np.ndarray:
    groups = _groups(call, reduction_groups, call.interpreter.module)
    (reduced,) = _all_reduce(call, [operand], groups)
    group, index = _index_in(groups, call.process)
    dimension = int(call.attr("scatter_dimension"))
    if reduced.shape[dimension] % len(group):
        raise call.error(f"dimension {dimension} of size {reduced.shape[dimension]} does not split "
                         f"into {len(group)} parts (C1)")
    return np.split(reduced, len(group), axis=dimension)[index]


@op("stablehlo.cross-replica-sum")
@real_collective
def cross_replica_sum(call: OpCall, operand: np.ndarray) -> np.ndarray:
    # The legacy all_reduce with an add body over replica groups (no channel).
    try:
        groups = call.cached(f"groups{call.process}", lambda: cross_replica(
            call.grid, replica_groups(call.attrs, call.grid, "cross_replica")))
    except ValueError as e:
        raise call.error(str(e)) from None
    contributions = _exchange(call, groups, operand)
    total = np.asarray(contributions[0])
    for value in contributions[1:]:
        total = combine(call, "add", total, value)
    return total


# -- all_gather / all_to_all ---------------------------------------------------------------------


@op("stablehlo.all_gather")
@real_collective
def all_gather(call: OpCall, *operands: np.ndarray) -> Any:
    groups = _groups(call, reduction_groups, call.interpreter.module)
    contributions = _exchange(call, groups, tuple(operands))
    dimension = int(call.attr("all_gather_dim"))
    results = [np.concatenate([np.asarray(c[i]) for c in contributions], axis=dimension)
               for i in range(len(operands))]
    for operand, result, result_type in zip(operands, results, call.result_types):
        if result.shape != tuple(result_type.shape):  # C6: the type promises another group size
            wanted = result_type.shape[dimension] // max(np.shape(operand)[dimension], 1)
            raise call.error(f"gathering {len(contributions)} process(es) along dimension {dimension} gives "
                             f"{list(result.shape)}, but the result type is {result_type}: its groups need "
                             f"{wanted} processes; run on a grid with more processes")
    return call.results(results)


@op("stablehlo.all_to_all")
@real_collective
def all_to_all(call: OpCall, *operands: np.ndarray) -> Any:
    groups = _groups(call, split_groups, call.interpreter.module)
    split_dimension = int(call.attr("split_dimension"))
    concat_dimension = int(call.attr("concat_dimension"))
    split_count = int(call.attr("split_count"))
    group, index = _index_in(groups, call.process)
    if group is not None and len(group) != split_count:
        raise call.error(f"split_count is {split_count} but the process group has {len(group)} processes (C8)")
    parts = []
    for x in operands:
        if x.shape[split_dimension] % split_count:
            raise call.error(f"dimension {split_dimension} of size {x.shape[split_dimension]} does not split "
                             f"into {split_count} parts (C2)")
        parts.append(np.split(x, split_count, axis=split_dimension))
    contributions = _exchange(call, groups, tuple(parts))
    results = [np.concatenate([sender[i][index] for sender in contributions], axis=concat_dimension)
               for i in range(len(operands))]
    return call.results(results)


# -- collective_broadcast / collective_permute ----------------------------------------------------


@op("stablehlo.collective_broadcast")
@real_collective
def collective_broadcast(call: OpCall, *operands: np.ndarray) -> Any:
    groups = _groups(call, split_groups, call.interpreter.module)
    group, _ = _index_in(groups, call.process)
    if group is None:
        return _nothing_received(call)
    dynamic = call.attr("has_dynamic_root") is not None
    data = operands[:-1] if dynamic else operands
    contributions = _exchange(call, groups, tuple(data))
    # The source of operand k: its group's first process, or the one `root[k]` names (C5).
    roots = [int(i) for i in np.asarray(operands[-1]).reshape(-1)] if dynamic else [0] * len(data)
    for k, root in enumerate(roots):
        if not 0 <= root < len(group):
            raise call.error(f"root[{k}] = {root} is not an index into the process group "
                             f"[{', '.join(map(str, group))}] of {len(group)} processes (C5)")
    return call.results([np.asarray(contributions[root][k]) for k, root in enumerate(roots)])


# -- collective_reduce ----------------------------------------------------------------------------


@op("stablehlo.collective_reduce")
@real_collective
def collective_reduce(call: OpCall, *operands: np.ndarray) -> Any:
    # all_reduce's groups and reduction, each result delivered to its root only: the group's first
    # process, or with `has_dynamic_root` the member the last operand names for that result; the
    # other members, and processes in no group, get zeros (stablehlo/tests/interpret).
    groups = _groups(call, reduction_groups, call.interpreter.module)
    group, index = _index_in(groups, call.process)
    if group is None:
        return _nothing_received(call)
    dynamic = call.attr("has_dynamic_root") is not None
    data = operands[:-1] if dynamic else operands
    reduced = _all_reduce(call, data, groups)
    roots = [int(r) for r in np.asarray(operands[-1]).reshape(-1)] if dynamic else [0] * len(data)
    for k, root in enumerate(roots):
        if not 0 <= root < len(group):
            raise call.error(f"root[{k}] = {root} is not an index into the process group "
                             f"[{', '.join(map(str, group))}] of {len(group)} processes (C3)")
    return call.results([value if roots[k] == index else _zeros(call.result_types[k])
                         for k, value in enumerate(reduced)])


@op("stablehlo.collective_permute")
@real_collective
def collective_permute(call: OpCall, operand: np.ndarray) -> np.ndarray:
    pairs = _groups(call, permute_groups)
    source = next((pair[0] for pair in pairs if pair[1] == call.process), None)
    # Every process of the communicating axis takes part, so the source's value is among them.
    members = call.grid.groups_of((call.op, "axis_groups"), lambda: axis_groups(call.grid, split_strategy(call.attrs)))
    contributions = _exchange(call, members, operand)
    if source is None:
        return _zeros(call.result_type)
    group, _ = _index_in(members, call.process)
    return np.asarray(contributions[group.index(source)])


# -- replica_id / partition_id --------------------------------------------------------------------


@op("stablehlo.replica_id")
def replica_id(call: OpCall) -> np.ndarray:
    return np.array(call.process.replica_id, dtype=call.result_dtype)


@op("stablehlo.partition_id")
def partition_id(call: OpCall) -> np.ndarray:
    return np.array(call.process.partition_id, dtype=call.result_dtype)


# -- send / recv / infeed / outfeed ----------------------------------------------------------------


def _channel(call: OpCall) -> int:
    handle = call.attr("channel_handle")
    if not isinstance(handle, ChannelHandle):
        raise call.error("has no channel_handle")
    return int(handle.handle)


@op("stablehlo.send")
def send(call: OpCall, *operands: Any) -> Any:
    *inputs, _token = operands
    call.grid.channels[_channel(call)].append(tuple(inputs))
    return TOKEN


@op("stablehlo.recv")
def recv(call: OpCall, _token: Any) -> Any:
    values = receive(call)
    return call.results([*_payload(call, values, f"channel {_channel(call)}"), TOKEN])


def receive(call: OpCall, channel: Any = None) -> Any:
    """What the oldest send on the op's channel (or on `channel`, a key of the grid's channels)
    sent (a tuple of its inputs)."""
    channel = _channel(call) if channel is None else channel
    call.grid.wait_for_channel(call.process, channel, call.op)  # on a scheduled grid: until a send
    queue = call.grid.channels.get(channel)
    if not queue:
        source = "the host" if call.attr("is_host_transfer") else "another process"
        raise call.error(
            f"nothing was sent on channel {channel}: waiting for {source} would never end (deadlock) "
            f"on a grid of {call.grid.size} process(es); a send on channel {channel} must run first")
    return queue.popleft()


@op("stablehlo.infeed")
def infeed(call: OpCall, _token: Any) -> Any:
    queue = call.grid.infeed
    if not queue:
        raise call.error("infeed queue is empty; pass infeed values with Grid(infeed=[...]) "
                         "(one entry per infeed run: a value, or a tuple of values, one per payload result)")
    values = queue.popleft() if isinstance(queue, deque) else queue.pop(0)  # a plain list works too
    return call.results([*_payload(call, values, "the infeed"), TOKEN])


@op("stablehlo.outfeed")
def outfeed(call: OpCall, *operands: Any) -> Any:
    *inputs, _token = operands
    call.grid.outfeed.append(tuple(inputs))
    return TOKEN


def _payload(call: OpCall, values: Any, source: str) -> list:
    """The received values checked against (and coerced to) the payload result types."""
    types = call.result_types[:-1]
    # A tuple holds one value per payload result; anything else (a list too) is a single value.
    if not isinstance(values, tuple):
        values = (values,)
    if len(values) != len(types):
        raise call.error(f"{source} delivered {len(values)} value(s), the op expects {len(types)}")
    out = []
    for i, (value, t) in enumerate(zip(values, types)):
        try:
            out.append(as_value(value, t))
        except ValueError as e:
            raise call.error(f"value {i} from {source}: {e}") from None
    return out
