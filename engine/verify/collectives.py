"""Verifier checks: Collectives and communication."""
from __future__ import annotations

from typing import Optional

import numpy as np
from ..ir import attributes as A
from ..ir.core import Operation
from .shape_inference import check_unique, element_compatible, fail, fmt_shape, is_token
from ..ir.types import IntegerType, TensorType
from .core import (
    _Context,
    _block,
    _check_reducer,
    _expect_shape,
    _int,
    _is_scalar_of,
    _register,
    _same_elem,
    _same_shape,
    _same_type,
    _tensor,
)


def _group_size(op: Operation) -> Optional[int]:
    """Processes per group when the program alone fixes it. With a channel and no global device
    ids (cross_replica_and_partition) every group also spans the partitions, known at run time."""
    handle = op.attributes.get("channel_handle")
    if int(getattr(handle, "handle", 0) or 0) > 0 and not isinstance(op.attributes.get("use_global_device_ids"), A.UnitAttr):
        return None
    groups = op.attributes.get("replica_groups")
    if not isinstance(groups, A.DenseElements):
        return None
    array = np.asarray(groups.array)
    if array.ndim != 2 or array.shape[1] == 0:
        return None
    return int(array.shape[1])


def _check_groups(op: Operation, unique_c: str, channel_c: Optional[str]) -> None:
    groups = op.attributes.get("replica_groups")
    if isinstance(groups, A.DenseElements):
        values = [int(v) for v in np.asarray(groups.array).reshape(-1) if int(v) >= 0]
        check_unique(values, "replica_groups values", unique_c)
    if channel_c and isinstance(op.attributes.get("use_global_device_ids"), A.UnitAttr):
        handle = op.attributes.get("channel_handle")
        if handle is None or handle.handle <= 0:
            fail("use_global_device_ids needs a channel_handle with a positive handle", channel_c)


def _pairs(op: Operation, result_c: str) -> list[tuple[TensorType, TensorType]]:
    if len(op.operands) != len(op.results):
        fail(f"has {len(op.operands)} operands but {len(op.results)} results", result_c)
    return [(_tensor(a, f"operand #{i}"), _tensor(b, f"result #{i}"))
            for i, (a, b) in enumerate(zip(op.operand_types, op.result_types))]


@_register("stablehlo.all_gather")
def _all_gather(op: Operation, ctx: _Context) -> None:
    _check_groups(op, "C2", "C5")
    d = _int(op, "all_gather_dim")
    size = _group_size(op)
    for x, r in _pairs(op, "C6"):
        _same_elem(x, r, "result must have the operand's element type", "C6")
        if x.shape is None:
            continue
        if not 0 <= d < len(x.shape):
            fail(f"all_gather_dim {d} is out of range [0, {len(x.shape)})", "C1")
        out = list(x.shape)
        out[d] = None if size is None or x.shape[d] is None else x.shape[d] * size
        _expect_shape(r, tuple(out), "C6")


@_register("stablehlo.all_reduce")
def _all_reduce(op: Operation, ctx: _Context) -> None:
    _check_groups(op, "C1", "C4")
    pairs = _pairs(op, "C6")
    block = _block(op, 0)
    if len(block.arguments) != 2:
        fail(f"computation must take 2 arguments, takes {len(block.arguments)}", "C5")
    if pairs and all(x.element == pairs[0][0].element for x, _ in pairs):
        e = _check_reducer(op, 0, [pairs[0][0].element], [], "C5", "computation")[0]
        for i, (x, r) in enumerate(pairs):
            _same_shape(x, r, f"result #{i} must have the shape of operand #{i}", "C6")
            if not element_compatible(r.element, e):
                fail(f"result #{i} has type {r} but the computation produces {e}", "C6")
    else:
        for i, (x, r) in enumerate(pairs):
            _same_shape(x, r, f"result #{i} must have the shape of operand #{i}", "C6")


@_register("stablehlo.reduce_scatter")
def _reduce_scatter(op: Operation, ctx: _Context) -> None:
    _check_groups(op, "C3", "C6")
    x = _tensor(op.operand_types[0], "operand")
    r = _tensor(op.result_types[0], "result")
    e = _check_reducer(op, 0, [x.element], [], "C7", "computation")[0]
    if not element_compatible(r.element, e):
        fail(f"result has type {r} but the computation produces {e}", "C8")
    if x.shape is None:
        return
    d = _int(op, "scatter_dimension")
    if not 0 <= d < len(x.shape):
        fail(f"scatter_dimension {d} is out of range [0, {len(x.shape)})", "C2")
    size = _group_size(op)
    out = list(x.shape)
    if size is not None and x.shape[d] is not None:
        if x.shape[d] % size:
            fail(f"dim(operand, {d}) = {x.shape[d]} is not divisible by the group size {size}", "C1")
        out[d] = x.shape[d] // size
    else:
        out[d] = None
    _expect_shape(r, tuple(out), "C8")


@_register("stablehlo.all_to_all")
def _all_to_all(op: Operation, ctx: _Context) -> None:
    _check_groups(op, "C5", None)
    split, concat, count = (_int(op, n) for n in ("split_dimension", "concat_dimension", "split_count"))
    if count <= 0:
        fail(f"split_count = {count} must be positive", "C4")
    for x, r in _pairs(op, "C8"):
        _same_elem(x, r, "result must have the operand's element type", "C8")
        if x.shape is None:
            continue
        rank = len(x.shape)
        if not 0 <= split < rank:
            fail(f"split_dimension {split} is out of range [0, {rank})", "C1")
        if not 0 <= concat < rank:
            fail(f"concat_dimension {concat} is out of range [0, {rank})", "C3")
        if x.shape[split] is not None and x.shape[split] % count:
            fail(f"dim(operand, {split}) = {x.shape[split]} is not divisible by split_count {count}", "C2")
        out = list(x.shape)
        out[split] = None if out[split] is None else out[split] // count
        out[concat] = None if out[concat] is None else out[concat] * count
        _expect_shape(r, tuple(out), "C8")


@_register("stablehlo.collective_permute")
def _collective_permute(op: Operation, ctx: _Context) -> None:
    pairs = np.asarray(op.attributes["source_target_pairs"].array)
    if pairs.size and (pairs.ndim != 2 or pairs.shape[1] != 2):
        fail(f"source_target_pairs must have shape Nx2, got {fmt_shape(tuple(pairs.shape))}", "C1")
    if pairs.size:
        check_unique([int(v) for v in pairs[:, 0]], "sources in source_target_pairs", "C2")
        check_unique([int(v) for v in pairs[:, 1]], "targets in source_target_pairs", "C3")
    _same_type(op.operand_types[0], op.result_types[0], "result must have the operand's type", "C5")


@_register("stablehlo.after_all")
def _after_all(op: Operation, ctx: _Context) -> None:
    for i, t in enumerate(op.operand_types):
        if not is_token(t):
            fail(f"input #{i} must be a token, got {t}")
    if not is_token(op.result_types[0]):
        fail(f"result must be a token, got {op.result_types[0]}")


@_register("stablehlo.create_token")
def _create_token(op: Operation, ctx: _Context) -> None:
    if not is_token(op.result_types[0]):
        fail(f"result must be a token, got {op.result_types[0]}")


@_register("stablehlo.infeed", "stablehlo.recv")
def _infeed(op: Operation, ctx: _Context) -> None:
    if not is_token(op.operand_types[0]):
        fail(f"token must be a token, got {op.operand_types[0]}")
    if not op.results:
        fail("needs at least one result", "C2" if op.mnemonic == "recv" else "C1")
    if not is_token(op.result_types[-1]):
        fail(f"the last result must be a token, got {op.result_types[-1]}", "C3" if op.mnemonic == "recv" else "C2")


@_register("stablehlo.send", "stablehlo.outfeed")
def _send(op: Operation, ctx: _Context) -> None:
    if not is_token(op.operand_types[-1]):
        fail(f"the last operand must be a token, got {op.operand_types[-1]}")
    if not is_token(op.result_types[0]):
        fail(f"result must be a token, got {op.result_types[0]}")


@_register("stablehlo.replica_id", "stablehlo.partition_id")
def _process_id(op: Operation, ctx: _Context) -> None:
    r = op.result_types[0]
    if not _is_scalar_of(r, IntegerType(32, "unsigned")):
        fail(f"result must be tensor<ui32>, got {r}")
