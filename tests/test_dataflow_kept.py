"""A view that only keeps some nodes (`focus`, `restrict` with nothing folded) is made from what it
keeps (DataflowGraph._derive_kept), and must be exactly the view the walk of the whole graph
makes (`_derive_whole`): the same nodes, edges and clusters, in the same order, since the layout
and its cache key follow that order."""
from __future__ import annotations

from pathlib import Path

import pytest

import hlodbg
from hlodbg.layouts.export import graph_view
from hlodbg.samples import default_sample_path
from tests.scale_helpers import write_layered_program

DATA = Path(__file__).resolve().parent / "data"
SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "programs"


def _programs(tmp_path) -> list:
    paths = [default_sample_path(), DATA / "transformer_block_optimized.hlo", DATA / "nan_in_loop.mlir",
             write_layered_program(tmp_path, 800)]
    if (SHARED / "gpt_tiny.mlir").is_file():
        paths.append(SHARED / "gpt_tiny.mlir")
    return [hlodbg.load(path) for path in paths]


def _contents(view) -> tuple:
    nodes = [(n, dict(d)) for n, d in view.graph.nodes(data=True)]
    edges = [(u, v, k, dict(d)) for u, v, k, d in view.graph.edges(keys=True, data=True)]
    return nodes, edges, list(view.clusters.items())


@pytest.mark.parametrize("collapse", ["calls", "none"])
def test_a_kept_view_is_the_whole_walks_view(tmp_path, collapse):
    compared = 0
    for program in _programs(tmp_path):
        full = graph_view(program.module, collapse=collapse).base
        nodes = list(full.graph.nodes)
        for node in nodes[:: max(1, len(nodes) // 25)]:
            for radius in (0, 1, 3):
                kept = frozenset(full.neighbourhood(node, radius, limit=60, inside=True))
                fast = full.focus(node, radius, 60)
                assert fast.kept == kept and not fast.collapsed
                assert _contents(fast) == _contents(full._derive_whole(frozenset(), kept)), (program.name, node)
                compared += 1
    assert compared > 100


def test_restricting_a_folded_view_still_walks_the_whole_graph(tmp_path):
    program = hlodbg.load(write_layered_program(tmp_path, 800))
    folded = graph_view(program.module, collapse="groups")
    assert folded.collapsed
    box = next(n for n, d in folded.graph.nodes(data=True) if d["kind"] == "collapsed")
    around = folded.focus(box, 1)
    assert box in around.graph and around.node_count > 1
    assert _contents(around) == _contents(folded.base._derive_whole(folded.collapsed, around.kept))
