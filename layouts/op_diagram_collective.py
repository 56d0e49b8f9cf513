"""Collectives drawn as devices: one box per process with its operands and results, chunks coloured by source.

Each device has its own colour; its operand cells are shaded with it, and every result cell is
shaded with the colour of the device its value came from (asked of the op's provenance, element by
element, with the other devices' values as `peer_values`), so an all_gather shows the devices'
chunks side by side and an all_to_all shows them trading places. A result element combined from
several devices (all_reduce) is shaded neutrally. The element asked about is outlined on its
device, and its sources are painted on every device's operand with arrows across the boxes.

Every op whose definition is a collective (the `collective=True` trait) is drawn this way.
"""
from __future__ import annotations

from typing import Optional

from hlodbg.engine.ir.opdefs import lookup
from hlodbg.engine.ir.phrases import Phrase
from hlodbg.engine.machine.process import Grid, ProcessId
from hlodbg.engine.ops.collectives_provenance import GridValues
from hlodbg.engine.ops.provenance import ProvenanceError, has_provenance, provenance

from .op_diagram_base import Scene, is_tensor
from .op_diagram_canvas import PART_FRAMES, PARTS, STRUCTURE, Block, Column, Framed, Row

DEVICE = Phrase("device {device}: replica {replica}, partition {partition}")
FROM_DEVICE = Phrase("from device {device}")
FROM_SEVERAL = Phrase("combined from several devices")

MAX_ROW_WIDTH = 1100.0


def is_drawn_as_devices(op_name: str) -> bool:
    definition = lookup(op_name)
    return definition is not None and definition.is_collective


def collective(scene: Scene) -> Block:
    devices, peers = _grid_values(scene)
    order = sorted(devices, key=lambda p: (p.replica_id, p.partition_id))
    scene.home = scene.provenance.device if scene.provenance is not None and scene.provenance.device is not None else order[0]
    number = {p: peers.grid.device_id(p) for p in order}  # as the provenance's own steps number them
    for p in order:
        scene.add_legend(scene.say(FROM_DEVICE, device=number[p]), PARTS[number[p] % len(PARTS)])
    boxes = []
    for p in order:
        operands, results = devices[p]
        own = PARTS[number[p] % len(PARTS)]
        operand_panels = {i: scene.operand_panel(i, values=operands, device=p) for i, v in enumerate(scene.op.operands) if is_tensor(v)}
        for panel in operand_panels.values():
            panel.shade = lambda index, own=own: own
        result_panels = {}
        for r, v in enumerate(scene.op.results):
            if not is_tensor(v):
                continue
            panel = result_panels[r] = scene.result_panel(r, values=results, device=p)
            panel.shade = _source_shading(scene, p, r, devices, peers, number)
            if panel.shade is not None:
                for index in panel.visible_indices():  # asked now, so that the legend knows every shade
                    panel.shade(index)
        scene.device_panels[p] = (operand_panels, result_panels)
        body = Row([Column(list(operand_panels.values())), Column(list(result_panels.values()))], gap=50)
        boxes.append(Framed(body, scene.say(DEVICE, device=number[p], replica=p.replica_id, partition=p.partition_id),
                            PART_FRAMES[number[p] % len(PART_FRAMES)]))
    _connect_across(scene)
    return _rows_of(boxes)


def _grid_values(scene: Scene) -> tuple[dict, GridValues]:
    """Each device's (operands, results), and the same as the `peer_values` a provenance question on
    a grid takes. `devices` may be given as such a GridValues (it knows the grid and the module, for
    groups named by a mesh) or as a plain mapping, whose devices are then taken to be the whole grid."""
    devices = scene.devices
    if isinstance(devices, GridValues):
        return dict(devices.values), devices
    if not devices:
        process = scene.provenance.device if scene.provenance is not None and scene.provenance.device is not None else ProcessId()
        devices = {process: (scene.operands, scene.results)}
    grid = Grid(num_replicas=max(p.replica_id for p in devices) + 1, num_partitions=max(p.partition_id for p in devices) + 1)
    return dict(devices), GridValues(grid, dict(devices))


def _source_shading(scene: Scene, process: ProcessId, r: int, devices: dict, peers: GridValues, number: dict):
    """index -> the light colour of the device the result element's value came from (asked lazily, cached)."""
    if not has_provenance(scene.op.name):
        return None
    operands, results = devices[process]
    if operands is None or results is None:
        return None
    cache: dict = {}

    def shade(index) -> Optional[object]:
        if index not in cache:
            try:
                answer = provenance(scene.op, index, result=r, operands=operands, results=results, process=process,
                                    peer_values=peers)
            except ProvenanceError:
                cache[index] = None
                return None
            sources = {s.device if s.device is not None else process for s in answer.sources}
            if len(sources) == 1:
                (source,) = sources
                cache[index] = PARTS[number[source] % len(PARTS)] if source in number else None
            elif sources:
                scene.add_legend(scene.say(FROM_SEVERAL), STRUCTURE)
                cache[index] = STRUCTURE
            else:
                cache[index] = None
        return cache[index]

    return shade


def _connect_across(scene: Scene) -> None:
    """Arrows from the sources on every device to the asked-about element on its own device."""
    if scene.provenance is None or scene.home not in scene.device_panels:
        return
    target = scene.device_panels[scene.home][1].get(scene.provenance.result)
    if target is None or target.selected is None:
        return
    for p, (operand_panels, _) in scene.device_panels.items():
        for i, panel in operand_panels.items():
            scene.connect_sources(panel, i, target, device=p, under=p != scene.home)


def _rows_of(boxes: list) -> Block:
    """The device boxes in rows no wider than MAX_ROW_WIDTH."""
    rows, current, width = [], [], 0.0
    for box in boxes:
        w = box.size()[0]
        if current and width + w > MAX_ROW_WIDTH:
            rows.append(Row(current, gap=24))
            current, width = [], 0.0
        current.append(box)
        width += w + 24
    if current:
        rows.append(Row(current, gap=24))
    return Column(rows, gap=24)


__all__ = ["collective", "is_drawn_as_devices"]
