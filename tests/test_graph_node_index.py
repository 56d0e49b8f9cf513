"""The op -> nodes index (DataflowGraph.nodes_of) is kept by the builder as it makes nodes; it
must be the index a pass over the finished graph makes: every node drawing an op (its own,
the node it is folded into, a fusion-like op's node for its callee's root), in graph order."""
from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pytest

from hlodbg.layouts.graph import DataflowGraph, build_graph
from hlodbg.program import load

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "programs"
PROGRAMS = [ROOT / "sample_programs" / "tiny_model.mlir", ROOT / "tests" / "data" / "nan_in_loop.mlir",
            *sorted((ROOT / "tests" / "data" / "hlo_printer").glob("*.hlo")), *sorted(SHARED.glob("*.mlir"))]


def _index_from_graph(graph: DataflowGraph) -> dict[int, list[str]]:
    index: dict[int, list[str]] = defaultdict(list)
    for node, data in graph.graph.nodes(data=True):
        for folded in data.get("folded", ()):
            index[id(folded)].append(node)
        if data.get("op") is not None:
            index[id(data["op"])].append(node)
        elif data.get("kind") == "argument" and data.get("value") is not None:
            index[id(data["value"])].append(node)
    return dict(index)


@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: p.name)
@pytest.mark.parametrize("inline", [False, True], ids=["module", "inline"])
def test_the_builders_node_index_is_the_graphs(path, inline):
    program = load(path)
    graph = build_graph(program.module, inline_calls=inline)
    kept = {key: nodes for key, nodes in graph._nodes_of_op.items() if nodes}
    assert kept and kept == _index_from_graph(graph)
