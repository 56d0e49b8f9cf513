"""Graph node attributes made on first read (layouts/node_data.py): the same values as the
eager spelling, computed only when read, and whole-dict reads see every attribute."""
from __future__ import annotations

from pathlib import Path

from hlodbg.engine.ir.locations import describe
from hlodbg.layouts.graph import build_graph
from hlodbg.layouts.labels import argument_label, op_label, result_names
from hlodbg.layouts.node_data import NodeData
from hlodbg.program import load

SAMPLE = Path(__file__).resolve().parents[1] / "sample_programs" / "tiny_model.mlir"


def test_lazy_attributes_equal_the_eager_ones():
    graph = build_graph(load(SAMPLE).module)
    for node, data in graph.graph.nodes(data=True):
        assert isinstance(data, NodeData)
        op, value = data["op"], data["value"]
        if op is not None:
            assert data["label"] == op_label(op)
            assert data["name"] == result_names(op)
            assert data.get("location") == describe(op.location)
            assert data["line"] == (op.pos.line if op.pos else None)
        elif data["kind"] == "argument":
            assert data["label"] == argument_label(value)
            assert data["name"] == value.name


def test_attributes_are_made_only_when_read():
    op = load(SAMPLE).module.entry.ops[0]
    data = NodeData(kind="op", op=op, value=None)
    assert not dict.__contains__(data, "label")
    assert "label" in data and data.get("missing", 7) == 7
    data["label"]
    assert dict.__contains__(data, "label") and not dict.__contains__(data, "location")


def test_whole_dict_reads_see_every_attribute():
    op = load(SAMPLE).module.entry.ops[0]
    data = NodeData(kind="op", op=op, value=None)
    for copy in (dict(data), {**data}, data.copy()):
        assert {"label", "location", "name", "line"} <= set(copy)
        assert copy["label"] == op_label(op)
