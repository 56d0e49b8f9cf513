"""The grid an HLO module's collectives name when its header gives no replica_count or
num_partitions: XLA's test runner sets the count a test's module needs (collective_ops_test.cc
leaves it out of the text), and hlodbg takes it from the groups the same way."""
from __future__ import annotations

import re

from ...ir.errors import ParseError
from ...ir.opset import process_groups_of
from . import attr_values
from .opcodes import TABLE
from .tree import HloInstruction, HloModuleText


def grid_named(tree: HloModuleText) -> tuple[int, int]:
    """(replicas, partitions): the fewest that hold every process id the collectives' replica_groups
    and source_target_pairs name, and the group size an all-gather's or reduce-scatter's types imply
    when its groups are left empty (1 when nothing names any). Ids are replica ids without a
    channel_id, and a reduction's with one but without use_global_device_ids. Partition ids (a split
    op's with a channel_id) and flattened ids (use_global_device_ids) count only in a module
    without shardings: JAX's SPMD programs take their grid from the header or the Shardy meshes."""
    sharded = ("frontend_attributes" in tree.attrs and "sdy" in tree.attrs["frontend_attributes"].text) or any(
        "sharding" in inst.attrs for comp in tree.computations for inst in comp.instructions)
    replica_ids, partition_ids, flattened_ids = [0], [0], [0]
    stages = "num_partitions" in tree.attrs and attr_values.decode(tree.attrs["num_partitions"], "int") > 1
    for comp in tree.computations:
        shapes = {inst.name: inst.shape for inst in comp.instructions}
        for inst in comp.instructions:
            entry = TABLE.get(inst.opcode)
            form = process_groups_of(entry.op) if entry is not None and entry.op else None
            if not form:
                peers = _peer_ids(inst)
                (partition_ids if stages else replica_ids).extend(peers)
                continue
            named = _ids_named(inst) or [size - 1 for size in _group_size_implied(inst, shapes)]
            if "channel_id" not in inst.attrs or (form == "reduction" and "use_global_device_ids" not in inst.attrs):
                replica_ids += named
            elif not sharded:
                (flattened_ids if form == "reduction" else partition_ids).extend(named)
    partitions = max(partition_ids) + 1
    return max(max(replica_ids) + 1, -(-(max(flattened_ids) + 1) // partitions)), partitions


def _group_size_implied(inst: HloInstruction, shapes: dict) -> list[int]:
    """The one group's size an all-gather or reduce-scatter with empty replica groups has, read
    off its operand's and result's sizes along `dimensions`, or a tuple-form all-to-all's, its
    operand count ([] when they say nothing)."""
    if inst.opcode == "all-to-all" and "dimensions" not in inst.attrs and not _ids_named(inst):
        return [len(inst.operands)] if len(inst.operands) > 1 else []  # the tuple form: one operand each
    scale = {"all-gather": 1, "all-gather-start": 1, "reduce-scatter": -1}.get(inst.opcode)
    attr = inst.attrs.get("dimensions")
    if scale is None or attr is None or not inst.operands or _ids_named(inst):
        return []
    operand = inst.operands[0].shape or shapes.get(inst.operands[0].name)
    result = inst.shape
    while result is not None and result.is_tuple and result.elements:  # -start: (operand, result)
        result = result.elements[-1]
    try:
        (dim,) = attr_values.decode(attr, "int_list")
        a, b = int(operand.dims[dim]), int(result.dims[dim])
    except (AttributeError, IndexError, TypeError, ValueError, ParseError):
        return []
    small, large = (a, b) if scale == 1 else (b, a)
    return [large // small] if small and large % small == 0 and large > small else []


def _peer_ids(inst: HloInstruction) -> list[int]:
    """The ids a pipelined send/recv names in its frontend attribute
    _xla_send_recv_source_target_pairs (engine/ops/hlo.py runs them): partitions in a module of
    several (pipeline stages), replicas otherwise."""
    attr = inst.attrs.get("frontend_attributes")
    if inst.opcode not in ("send", "recv") or attr is None:
        return []
    pairs = re.search(r"_xla_send_recv_source_target_pairs\s*=\s*\"?(\{[-\d\s,{}]*\})", attr.text)
    return [int(i) for i in re.findall(r"-?\d+", pairs.group(1))] if pairs else []


def _ids_named(inst: HloInstruction) -> list[int]:
    for name in ("replica_groups", "source_target_pairs"):
        attr = inst.attrs.get(name)
        if attr is not None:
            try:
                return [int(i) for row in attr_values.decode(attr, name) for i in row]
            except (ParseError, TypeError, ValueError):
                return []  # the lowering reports a bad list where it reads it
    return []


__all__ = ["grid_named"]
