"""Element provenance of the collectives on a grid: which device, and which element of its operand.

A collective's result element on one device is made of operand elements of other devices: every
member's same element combined by the body (all_reduce, collective_reduce, reduce_scatter's
part), one member's element moved (all_gather, all_to_all, collective_permute,
collective_broadcast), or nothing at all (a device no pair sends to, or that is not a rooted
collective's root: zeros). Each `Source` names its `device`.

The groups are formed by the very functions the evaluators use (collectives.py, picked by the
op's `process_groups` trait), on the grid the values come from. That grid is carried by the
`peer_values` of the question: pass `GridValues(grid, {process: (operands, results)})`. With no
peer values and no process the question is about the 1x1 grid, whose groups hold one device.

The inverse (`reach`) follows an operand element of one device (`device`, default the query's
process) to the result elements of every device it reaches, by asking the forward question of
every result element of every device (exact; bounded by REACH_SEARCH_LIMIT).
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any, Optional, Sequence

import numpy as np

from ..ir.opdefs import process_groups_of
from ..ir.phrases import Phrase
from ..machine.process import Grid, ProcessId
from .collectives import GROUP_FORMS, Groups
from .provenance import REACH_SEARCH_LIMIT, ProvenanceError, ProvenanceQuery, Reached, Source, explains, reaches

COLLECTIVES = ("stablehlo.all_reduce", "stablehlo.collective_reduce", "stablehlo.reduce_scatter",
               "stablehlo.all_gather", "stablehlo.all_to_all", "stablehlo.collective_permute",
               "stablehlo.collective_broadcast")

CONTRIBUTION = Phrase("contribution")
GATHERED = Phrase("gathered element")
RECEIVED = Phrase("received element")
ROOT_INDEX = Phrase("root index")
IN_GROUP = Phrase("device {device} {process} is member {member} of the process group of devices {group}")
IN_NO_GROUP = Phrase("device {device} {process} is in no process group: its result is zeros")
REDUCED = Phrase("result{index} = the body combining operand{operand} of devices {devices}, in group order")
NOT_ROOT = Phrase("collective_reduce delivers only to the group's first device; device {device} is member {member}: "
                  "its result is zeros")
NOT_DYNAMIC_ROOT = Phrase("root[{operand}] = {root}: collective_reduce delivers result {operand} only to member {root} "
                          "of the group; device {device} is member {member}: its result is zeros")
SCATTERED = Phrase("scatter_dimension {dimension}: member {member} keeps part {member} of size {size}, so result "
                   "index {position} reads position {member}·{size}+{position} = {source} of the reduced operand")
GATHERED_FROM = Phrase("all_gather_dim {dimension}: position {position} = {member}·{size}+{offset}: member {member}, "
                       "device {device} {process}, operand{source}")
EXCHANGED = Phrase("concat_dimension {concat}: position {position} = {sender}·{size}+{offset} comes from member "
                   "{sender}, device {device} {process}, which sent its part {member} along split_dimension {split}: "
                   "operand{source}")
PERMUTED = Phrase("source_target_pairs send device {source_device} {source} to device {device} {process}: result{index} "
                  "is operand{index} of device {source_device}")
NO_SENDER = Phrase("no pair of source_target_pairs sends to device {device} {process}: its result is zeros")
BROADCAST_FIRST = Phrase("operand {operand} comes from the group's first member: device {source_device} {source}, "
                         "operand{index}")
BROADCAST_ROOT = Phrase("root[{operand}] = {root}: operand {operand} comes from member {root} of the group: device "
                        "{source_device} {source}, operand{index}")


@dataclass
class GridValues:
    """The `peer_values` of a question on a grid: the op's (operands, results) on each device.

    `module` resolves a `replica_group_mesh_axes` that names an `sdy.mesh` of the module."""

    grid: Grid
    values: dict[ProcessId, tuple[Sequence[Any], Sequence[Any]]] = field(default_factory=dict)
    module: Any = None

    def __call__(self, process: ProcessId) -> tuple[Sequence[Any], Sequence[Any]]:
        if process not in self.values:
            raise ProvenanceError(f"no values of device {self.grid.device_id(process)} {process}: the grid is "
                                  f"{self.grid.num_replicas}x{self.grid.num_partitions}")
        return self.values[process]


def _grid(q: ProvenanceQuery) -> tuple[Grid, ProcessId, Any]:
    grid = getattr(q.peer_values, "grid", None)
    if grid is not None:
        if q.process is None:
            raise q.error("which device's result element? pass process=ProcessId(replica, partition)")
        return grid, q.process, getattr(q.peer_values, "module", None)
    if q.process not in (None, ProcessId(0, 0)):
        raise q.error(f"the question is about device {q.process}, but the grid is not given: pass "
                      "peer_values=GridValues(grid, {process: (operands, results)})")
    return Grid(1, 1), ProcessId(0, 0), None


def _group(q: ProvenanceQuery) -> tuple[Grid, ProcessId, Optional[list[ProcessId]], int, list]:
    """(grid, process, the process's group or None, its place in it, the first steps)."""
    grid, process, module = _grid(q)
    form = GROUP_FORMS[process_groups_of(q.op.name)]
    try:
        groups: Groups = form(process, grid, q.op.attributes, module)
    except ValueError as e:
        raise q.error(str(e)) from None
    device = grid.device_id(process)
    for group in groups:
        if process in group:
            ids = [grid.device_id(p) for p in group]
            return grid, process, group, group.index(process), [
                (IN_GROUP, {"device": device, "process": process, "member": group.index(process), "group": ids})]
    return grid, process, None, -1, [(IN_NO_GROUP, {"device": device, "process": process})]


# -- combined: all_reduce, collective_reduce, reduce_scatter ------------------------------------


def _reduced(q, group, grid, operand, index, steps) -> Any:
    sources = [Source(operand, tuple(index), CONTRIBUTION, member) for member in group]
    steps.append((REDUCED, {"index": q.index, "operand": list(index), "devices": [grid.device_id(m) for m in group]}))
    return q.answer(sources, steps)


@explains("stablehlo.all_reduce", "stablehlo.collective_reduce")
def all_reduce_provenance(q: ProvenanceQuery):
    """Every member's same element of the same operand, combined by the body in group order."""
    grid, process, group, member, steps = _group(q)
    if group is None:
        return q.answer([], steps)
    if q.op.name == "stablehlo.collective_reduce":
        if q.attr("has_dynamic_root") is not None:
            # The last operand names each result's root within the group.
            root = int(q.operand_value(len(q.op.operands) - 1).reshape(-1)[q.result])
            if member != root:
                steps.append((NOT_DYNAMIC_ROOT, {"operand": q.result, "root": root,
                                                 "device": grid.device_id(process), "member": member}))
                return q.answer([], steps)
        elif member != 0:
            steps.append((NOT_ROOT, {"device": grid.device_id(process), "member": member}))
            return q.answer([], steps)
    return _reduced(q, group, grid, q.result, q.index, steps)


@explains("stablehlo.reduce_scatter")
def reduce_scatter_provenance(q: ProvenanceQuery):
    """Member k keeps part k of the reduction along scatter_dimension."""
    grid, process, group, member, steps = _group(q)
    dimension = int(q.attr("scatter_dimension"))
    size = q.result_shape(0)[dimension]
    source = list(q.index)
    source[dimension] = member * size + q.index[dimension]
    steps.append((SCATTERED, {"dimension": dimension, "member": member, "size": size, "position": q.index[dimension],
                              "source": source[dimension]}))
    return _reduced(q, group, grid, 0, source, steps)


# -- moved: all_gather, all_to_all, collective_permute, collective_broadcast -----------------------


@explains("stablehlo.all_gather")
def all_gather_provenance(q: ProvenanceQuery):
    """The members' operands concatenated in group order along all_gather_dim."""
    grid, process, group, _, steps = _group(q)
    dimension = int(q.attr("all_gather_dim"))
    size = q.operand_shape(q.result)[dimension]
    sender, offset = divmod(q.index[dimension], size)
    source = list(q.index)
    source[dimension] = offset
    steps.append((GATHERED_FROM, {"dimension": dimension, "position": q.index[dimension], "member": sender, "size": size,
                                  "offset": offset, "device": grid.device_id(group[sender]), "process": group[sender],
                                  "source": source}))
    return q.answer([Source(q.result, tuple(source), GATHERED, group[sender])], steps)


@explains("stablehlo.all_to_all")
def all_to_all_provenance(q: ProvenanceQuery):
    """Each member splits its operand in split_count parts along split_dimension and sends part k to
    member k, which concatenates what it receives in group order along concat_dimension."""
    grid, process, group, member, steps = _group(q)
    split, concat = int(q.attr("split_dimension")), int(q.attr("concat_dimension"))
    count = int(q.attr("split_count"))
    operand_shape = q.operand_shape(q.result)
    part = operand_shape[split] // count
    size = part if concat == split else operand_shape[concat]  # a part's extent along concat_dimension
    sender, offset = divmod(q.index[concat], size)
    source = list(q.index)
    source[concat] = offset
    source[split] += member * part
    steps.append((EXCHANGED, {"concat": concat, "position": q.index[concat], "sender": sender, "size": size,
                              "offset": offset, "device": grid.device_id(group[sender]), "process": group[sender],
                              "member": member, "split": split, "source": source}))
    return q.answer([Source(q.result, tuple(source), RECEIVED, group[sender])], steps)


@explains("stablehlo.collective_permute")
def collective_permute_provenance(q: ProvenanceQuery):
    """The same element of the operand of the device whose pair targets this one; none: zeros."""
    grid, process, module = _grid(q)
    try:
        pairs = GROUP_FORMS[process_groups_of(q.op.name)](process, grid, q.op.attributes)
    except ValueError as e:
        raise q.error(str(e)) from None
    device = grid.device_id(process)
    source = next((pair[0] for pair in pairs if pair[1] == process), None)
    if source is None:
        return q.answer([], [(NO_SENDER, {"device": device, "process": process})])
    step = (PERMUTED, {"source_device": grid.device_id(source), "source": source, "device": device, "process": process,
                       "index": q.index})
    return q.answer([Source(0, q.index, RECEIVED, source)], [step])


@explains("stablehlo.collective_broadcast")
def collective_broadcast_provenance(q: ProvenanceQuery):
    """The same element of the root's operand: the group's first member, or the one root[k] names."""
    grid, process, group, _, steps = _group(q)
    if group is None:
        return q.answer([], steps)
    sources, root, phrase = [], 0, BROADCAST_FIRST
    if q.attr("has_dynamic_root") is not None:
        last = len(q.op.operands) - 1
        root = int(q.operand_value(last).reshape(-1)[q.result])
        if not 0 <= root < len(group):
            raise q.error(f"root[{q.result}] = {root} is not an index into a process group of {len(group)} devices")
        at = tuple(int(i) for i in np.unravel_index(q.result, q.operand_shape(last))) if q.operand_shape(last) else ()
        sources.append(Source(last, at, ROOT_INDEX, process))
        phrase = BROADCAST_ROOT
    steps.append((phrase, {"operand": q.result, "root": root, "source_device": grid.device_id(group[root]),
                           "source": group[root], "index": q.index}))
    return q.answer([Source(q.result, q.index, RECEIVED, group[root]), *sources], steps)


# -- the inverse, across the grid -----------------------------------------------------------------


@reaches(*COLLECTIVES)
def collective_reach(q: ProvenanceQuery, operand: int, index: tuple, device: Optional[ProcessId]) -> list[Reached]:
    """Every result element, on every device, that operand `operand`[index] of `device` helps make."""
    from .provenance import explainer_for

    grid, process, _ = _grid(q)
    owner = device if device is not None else process
    explainer = explainer_for(q.op.name)
    shapes = [tuple(int(d) for d in r.type.shape) for r in q.op.results]
    total = grid.size * sum(int(np.prod(s, dtype=np.int64)) for s in shapes)
    if total > REACH_SEARCH_LIMIT:
        raise q.error(f"finding every result element operand #{operand}{list(index)} reaches means looking at "
                      f"{total:,} result elements of {grid.size} devices (more than {REACH_SEARCH_LIMIT:,}); "
                      "ask about one result element instead")
    reached = []
    for target in (grid.processes() if grid.size > 1 else [process]):
        operands, results = (q.operands, q.results) if target == process or q.peer_values is None else q.peer_values(target)
        ask = ProvenanceQuery(q.op, 0, (), operands, results, target, q.peer_values, q.memo)
        for r, shape in enumerate(shapes):
            for at in itertools.product(*(range(n) for n in shape)):
                ask.result, ask.index = r, at
                if any(s.operand == operand and s.index == index and (s.device or target) == owner
                       for s in explainer(ask).sources):
                    reached.append(Reached(r, at, target))
    return reached
