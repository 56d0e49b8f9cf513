"""Verifier checks: Collectives and communication.

Constraint labels follow docs/spec.md at head. What no static check can decide is left to the run:
the `size(replica_groups)` constraints (C3 of all_gather, C2 of all_reduce, C4 of reduce_scatter,
C6 of all_to_all) and the upper bound of collective_permute C4 name num_replicas /
num_partitions, which only the run (the grid or interpreter.run_parallel) fixes. The static part
of them is checked: ids are non-negative and, per group list, form 0..N-1 (C4 of all_gather).
Checks on a type the spec's Inputs table fixes carry that input's label, e.g. `(I2)`; a result
type the spec fixes (a token, tensor<ui32>) is checked against that inferred type, `(inferred)`.
"""
from __future__ import annotations

from typing import Optional, Sequence

import numpy as np

from ..ir import attributes as A
from ..ir.core import Operation
from ..ir.types import IntegerType, TensorType, Type
from .core import (
    _check_reducer,
    _Context,
    _expect_shape,
    _int,
    _is_scalar_of,
    _register,
    _same_elem,
    _same_shape,
    _same_type,
    _tensor,
)
from .shape_inference import check_unique, element_compatible, fail, fmt_shape, is_promotable, is_token

# `#stablehlo.channel_handle<type = N>`: the ChannelType enum of the StableHLO dialect.
DEVICE_TO_DEVICE, DEVICE_TO_HOST, HOST_TO_DEVICE = 1, 2, 3
_CHANNEL_TYPE_NAMES = {0: "CHANNEL_TYPE_INVALID", 1: "DEVICE_TO_DEVICE", 2: "DEVICE_TO_HOST", 3: "HOST_TO_DEVICE"}


def _group_array(op: Operation) -> Optional[np.ndarray]:
    groups = op.attributes.get("replica_groups")
    if not isinstance(groups, A.DenseElements):
        return None
    return np.asarray(groups.array)


def group_size(op: Operation) -> Optional[int]:
    """Processes per group when the program alone fixes it. With a channel and no global device
    ids (cross_replica_and_partition) every group also spans the partitions, known at run time."""
    has_channel = int(getattr(op.attributes.get("channel_handle"), "handle", 0) or 0) > 0
    if has_channel and not isinstance(op.attributes.get("use_global_device_ids"), A.UnitAttr):
        return None
    array = _group_array(op)
    if array is None or array.ndim != 2 or array.shape[1] == 0:
        return None
    return int(array.shape[1])


def _check_groups(op: Operation, ctx: _Context, groups_input: str, unique_c: str, range_c: Optional[str],
                  channel_c: Optional[str], equal_sizes: bool = False) -> None:
    """`replica_groups` is a 2-dimensional tensor (the Inputs row `groups_input`),
    `is_unique(replica_groups)`, `0 <= replica_groups < size(replica_groups)` (without `range_c`
    the groups may leave processes out, as collective_broadcast's may, so the bound is the grid's,
    known at run time) and, where the op has it, `use_global_device_ids = true` needs
    `channel_id > 0`. Groups of unequal size are padded with -1 (HLO's convention), which is not
    an id; where every group has one size (`equal_sizes`: all_gather, all_to_all, reduce_scatter)
    there is no padding, and a -1 breaks the range constraint."""
    _check_mesh_symbol(op, ctx, groups_input)
    array = _group_array(op)
    if array is not None and array.ndim != 2:
        fail(f"replica_groups must be a 2-dimensional tensor, got {op.attributes['replica_groups'].type}",
             groups_input)
    if array is not None:
        if equal_sizes and range_c and (array == -1).any():
            fail("replica_groups hold -1, which pads groups of unequal size; this op's groups all have one "
                 "size and -1 is no process id", range_c)
        values = [int(v) for v in array.reshape(-1) if int(v) != -1]
        check_unique(values, "replica_groups values", unique_c)
        for v in values if range_c else ():
            if not 0 <= v < len(values):
                fail(f"replica_groups value {v} is out of range [0, {len(values)}): the {len(values)} ids of "
                     f"the groups must be 0..{len(values) - 1}", range_c)
    if channel_c and isinstance(op.attributes.get("use_global_device_ids"), A.UnitAttr):
        handle = op.attributes.get("channel_handle")
        if handle is None or handle.handle <= 0:
            fail("use_global_device_ids needs a channel_handle with a positive handle", channel_c)


def _check_mesh_symbol(op: Operation, ctx: _Context, groups_input: str) -> None:
    """Groups named by mesh axes (the mesh-axes replica groups RFC) name a mesh the module defines."""
    groups = op.attributes.get("replica_groups")
    mesh = getattr(groups, "mesh", None) if isinstance(groups, A.ReplicaGroupMeshAxes) else None
    if not isinstance(mesh, A.SymbolRef):
        return
    if not any(str(top.attributes.get("sym_name", "")) == mesh.name for top in ctx.module.operations):
        fail(f"replica_groups name the mesh @{mesh.name}, which the module does not define", groups_input)


def _pairs(op: Operation, result_c: str) -> list[tuple[TensorType, TensorType]]:
    if len(op.operands) != len(op.results):
        fail(f"has {len(op.operands)} operands but {len(op.results)} results", result_c)
    return [(_tensor(a, f"operand #{i}"), _tensor(b, f"result #{i}"))
            for i, (a, b) in enumerate(zip(op.operand_types, op.result_types))]


def _check_dim(d: int, rank: int, name: str, constraint: str) -> None:
    if not 0 <= d < rank:
        fail(f"{name} {d} is out of range [0, {rank})", constraint)


def _computation(op: Operation, inputs: Sequence[TensorType], constraint: str) -> Optional[Type]:
    """The element type E of `computation : (tensor<E>, tensor<E>) -> tensor<E>`, which every
    operand's element type must be promotable to (one body serves all the operands)."""
    if not inputs:
        return None
    e = _check_reducer(op, 0, [inputs[0].element], [], constraint, "computation")[0]
    for i, x in enumerate(inputs[1:], 1):
        if not is_promotable(x.element, e):
            fail(f"computation accumulates {e}, which cannot hold the element type {x.element} of operand #{i}",
                 constraint)
    return e


@_register("stablehlo.all_gather")
def _all_gather(op: Operation, ctx: _Context) -> None:
    _check_groups(op, ctx, "I3", "C2", "C4", "C5", equal_sizes=True)
    d = _int(op, "all_gather_dim")
    size = group_size(op)
    for x, r in _pairs(op, "C6"):
        if x.shape is not None:
            _check_dim(d, len(x.shape), "all_gather_dim", "C1")
        _same_elem(x, r, "result must have the operand's element type", "C6")
        if x.shape is None:
            continue
        out = list(x.shape)
        out[d] = None if size is None or x.shape[d] is None else x.shape[d] * size
        if out[d] is None:
            _expect_multiple(r, "result", d, x.shape[d], "operand", "C6")
        _expect_shape(r, tuple(out), "C6")


def _expect_multiple(big: TensorType, big_name: str, d: int, unit: Optional[int], unit_name: str,
                     constraint: str) -> None:
    """When the group size is known only at run time, dim(`big`, d) must still be `unit` times
    some group size: 0 when `unit` is 0, else a multiple of it."""
    have = big.shape[d] if big.shape is not None and d < len(big.shape) else None
    if unit is None or have is None:
        return
    if (unit == 0 and have != 0) or (unit > 0 and have % unit):
        fail(f"dim({big_name}, {d}) = {have} must be dim({unit_name}, {d}) = {unit} times the process group "
             f"size ({big})", constraint)


@_register("stablehlo.all_reduce")
def _all_reduce(op: Operation, ctx: _Context) -> None:
    _check_groups(op, ctx, "I2", "C1", "C3", "C4")
    pairs = _pairs(op, "C6")
    e = _computation(op, [x for x, _ in pairs], "C5")
    for i, (x, r) in enumerate(pairs):
        _same_shape(x, r, f"result #{i} must have the shape of operand #{i}", "C6")
        if not element_compatible(r.element, e):
            fail(f"result #{i} has type {r} but the computation produces {e}", "C7")


@_register("stablehlo.reduce_scatter")
def _reduce_scatter(op: Operation, ctx: _Context) -> None:
    _check_groups(op, ctx, "I3", "C3", "C5", "C6", equal_sizes=True)
    x = _tensor(op.operand_types[0], "operand")
    r = _tensor(op.result_types[0], "result")
    d = _int(op, "scatter_dimension")
    if x.shape is not None:
        _check_dim(d, len(x.shape), "scatter_dimension", "C2")
    e = _computation(op, [x], "C7")
    if x.shape is not None:
        size = group_size(op)
        out = list(x.shape)
        if size is not None and x.shape[d] is not None:
            if x.shape[d] % size:
                fail(f"dim(operand, {d}) = {x.shape[d]} is not divisible by the group size {size}", "C1")
            out[d] = x.shape[d] // size
        else:
            out[d] = None
            if r.shape is not None and d < len(r.shape):
                _expect_multiple(x, "operand", d, r.shape[d], "result", "C8")
        _expect_shape(r, tuple(out), "C8")
    if not element_compatible(r.element, e):
        fail(f"result has type {r} but the computation produces {e}", "C9")


@_register("stablehlo.all_to_all")
def _all_to_all(op: Operation, ctx: _Context) -> None:
    _check_groups(op, ctx, "I5", "C5", "C7", None, equal_sizes=True)
    split, concat, count = (_int(op, n) for n in ("split_dimension", "concat_dimension", "split_count"))
    if count <= 0:
        fail(f"split_count = {count} must be positive", "C4")
    groups = _group_array(op)
    # Empty groups are no exception at head (all_to_all_c8): there is nothing to split among.
    if groups is not None and groups.ndim == 2 and groups.shape[1] != count:
        fail(f"replica groups have {groups.shape[1]} processes each, but split_count is {count}", "C8")
    # The results' types follow from the operands' (the op infers them): C9 compares them.
    for x, r in _pairs(op, "C9"):
        if x.shape is None:
            _same_elem(x, r, "result must have the operand's element type", "C9")
            continue
        rank = len(x.shape)
        _check_dim(split, rank, "split_dimension", "C1")
        _check_dim(concat, rank, "concat_dimension", "C3")
        if x.shape[split] is not None and x.shape[split] % count:
            fail(f"dim(operand, {split}) = {x.shape[split]} is not divisible by split_count {count}", "C2")
        _same_elem(x, r, "result must have the operand's element type", "C9")
        out = list(x.shape)
        out[split] = None if out[split] is None else out[split] // count
        out[concat] = None if out[concat] is None else out[concat] * count
        _expect_shape(r, tuple(out), "C9")


@_register("stablehlo.collective_permute")
def _collective_permute(op: Operation, ctx: _Context) -> None:
    pairs = np.asarray(op.attributes["source_target_pairs"].array)
    if pairs.ndim != 2 or pairs.shape[1] != 2:
        fail(f"source_target_pairs must have shape Nx2, got {fmt_shape(tuple(pairs.shape))}", "C1")
    check_unique([int(v) for v in pairs[:, 0]], "sources in source_target_pairs", "C2")
    check_unique([int(v) for v in pairs[:, 1]], "targets in source_target_pairs", "C3")
    negative = [int(v) for v in pairs.reshape(-1) if int(v) < 0]
    if negative:
        fail(f"source_target_pairs holds the negative process id {negative[0]}", "C4")
    _same_type(op.operand_types[0], op.result_types[0], "result must have the operand's type", "C5")


def _expect_token(t: Type, what: str, label: str) -> None:
    if not is_token(t):
        fail(f"{what} must be !stablehlo.token, got {t}", label)


@_register("stablehlo.after_all")
def _after_all(op: Operation, ctx: _Context) -> None:
    for i, t in enumerate(op.operand_types):
        _expect_token(t, f"input #{i}", "I1")
    _expect_token(op.result_types[0], "result", "inferred")


@_register("stablehlo.create_token")
def _create_token(op: Operation, ctx: _Context) -> None:
    _expect_token(op.result_types[0], "result", "inferred")


def _check_channel_type(op: Operation, host_type: int, constraint: str) -> None:
    """`channel_type` is `host_type` if `is_host_transfer`, else DEVICE_TO_DEVICE."""
    handle = op.attributes.get("channel_handle")
    host = bool(op.attributes.get("is_host_transfer", False))
    want = host_type if host else DEVICE_TO_DEVICE
    got = int(getattr(handle, "type", 0))
    if got != want:
        fail(f"channel_handle type = {got} ({_CHANNEL_TYPE_NAMES.get(got, 'unknown')}) must be {want} "
             f"({_CHANNEL_TYPE_NAMES[want]}) when is_host_transfer = {'true' if host else 'false'}", constraint)


def _check_payload_then_token(op: Operation, nonempty_c: str, tensors_c: str, token_c: str) -> None:
    """`results` are payload tensors first and one token last."""
    _expect_token(op.operand_types[0], "token", "I1")
    if not op.results:
        fail("needs at least one result (the token)", nonempty_c)
    for i, t in enumerate(op.result_types[:-1]):
        if not isinstance(t, TensorType):
            fail(f"result #{i} must be a tensor (only the last result is the token), got {t}", tensors_c)
    _expect_token(op.result_types[-1], "the last result", token_c)


@_register("stablehlo.infeed")
def _infeed(op: Operation, ctx: _Context) -> None:
    _check_payload_then_token(op, "C1", "C2", "C3")
    _check_infeed_layout(op)


def _check_infeed_layout(op: Operation) -> None:
    """The optional `layout` the op definition carries (the spec does not name it): one list of
    integers (a minor-to-major order) per result before the token, as StableHLO's verifier has it."""
    layout = op.attributes.get("layout")
    if layout is None:
        return
    if not isinstance(layout, A.ArrayAttr):
        fail(f"layout must be an array of one layout per result, got {layout}", "layout")
    if len(layout) != len(op.results) - 1:
        fail(f"layout has {len(layout)} entries but there are {len(op.results) - 1} results before the token",
             "layout")
    for i, entry in enumerate(layout):
        if not isinstance(entry, A.ArrayAttr):
            fail(f"layout entry #{i} must be an array of integers, got {entry}", "layout")
        for leaf in entry:
            if not isinstance(leaf, A.IntegerAttr):
                fail(f"layout entry #{i} must hold integers, got {leaf}", "layout")


@_register("stablehlo.recv")
def _recv(op: Operation, ctx: _Context) -> None:
    _check_channel_type(op, HOST_TO_DEVICE, "C1")
    _check_payload_then_token(op, "C2", "C3", "C4")


def _check_inputs_then_token(op: Operation) -> None:
    for i, t in enumerate(op.operand_types[:-1]):
        if not isinstance(t, TensorType):
            fail(f"input #{i} must be a tensor, got {t}", "I1")
    _expect_token(op.operand_types[-1], "the last operand", "I2")
    _expect_token(op.result_types[0], "result", "inferred")


@_register("stablehlo.send")
def _send(op: Operation, ctx: _Context) -> None:
    _check_channel_type(op, DEVICE_TO_HOST, "C1")
    _check_inputs_then_token(op)


@_register("stablehlo.outfeed")
def _outfeed(op: Operation, ctx: _Context) -> None:
    _check_inputs_then_token(op)


@_register("stablehlo.replica_id", "stablehlo.partition_id")
def _process_id(op: Operation, ctx: _Context) -> None:
    r = op.result_types[0]
    if not _is_scalar_of(r, IntegerType(32, "unsigned")) or r.shape != ():
        fail(f"result must be tensor<ui32>, got {r}", "inferred")
