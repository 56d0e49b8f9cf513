"""Scene views made from the cluster's own part of the graph (layouts/cluster_view.py) are the
views restricting and collapsing the whole graph gives: same nodes, clusters and edges, in the same
order, but one edge per pair of boxes into or out of a folded box."""
from __future__ import annotations

from pathlib import Path

import pytest

from hlodbg.layouts.graph import build_graph
from hlodbg.layouts.scene import SceneBuilder
from hlodbg.program import load

ROOT = Path(__file__).resolve().parents[1]
PROGRAMS = sorted((ROOT / "sample_programs").glob("*.mlir")) + sorted((ROOT / "tests" / "data").glob("*.mlir"))


def _shape(view):
    """Nodes, clusters and edges between drawn nodes exactly; edges into or out of a folded box
    as the pairs of boxes they join, with whether any of a pair's edges carries a captured value."""
    nodes = [(n, dict(d)) for n, d in view.graph.nodes(data=True)]
    clusters = [(cid, c.kind, c.label, c.parent, list(c.nodes), list(c.children)) for cid, c in view.clusters.items()]
    direct, boxed = [], {}
    for u, v, key, data in view.graph.edges(keys=True, data=True):
        if (view.graph.nodes[u]["kind"] == "collapsed" or "collapsed" in view.graph.nodes[u]
                or view.graph.nodes[v]["kind"] == "collapsed" or "collapsed" in view.graph.nodes[v]):
            pair = (u, v, data["kind"])
            boxed[pair] = boxed.get(pair, False) or bool(data.get("captured"))
        else:
            direct.append((u, v, key, data))
    return nodes, clusters, direct, boxed, view.collapsed


def _views(graph):
    """Every cluster's view with nothing open, with each child opened, and the program's."""
    yield None, set()
    yield None, {c for c in graph.top_clusters()}
    for cid, cluster in graph.clusters.items():
        yield cid, set()
        for child in cluster.children[:3]:
            yield cid, {child}
            yield cid, {child, *graph.clusters[child].children[:1]}


@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: p.stem)
def test_cluster_views_equal_the_restricted_and_collapsed_views(path):
    graph = build_graph(load(path).module)
    builder = SceneBuilder(graph)
    assert builder._cluster_views is not None
    for root, open_ids in _views(graph):
        general = builder._derived_view(builder.cluster_id(root), open_ids)
        assert _shape(builder.view(root, open_ids)) == _shape(general), (root, open_ids)


def test_a_generated_layered_program_with_name_stacks(tmp_path):
    from tests.scale_helpers import write_layered_program

    graph = build_graph(load(write_layered_program(tmp_path, 400)).module)
    builder = SceneBuilder(graph)
    assert any(c.kind == "group" for c in graph.clusters.values())
    for root, open_ids in _views(graph):
        general = builder._derived_view(builder.cluster_id(root), open_ids)
        assert _shape(builder.view(root, open_ids)) == _shape(general), (root, open_ids)


def test_parallel_edges_into_a_folded_box_are_drawn_once(tmp_path):
    from tests.scale_helpers import write_layered_program

    graph = build_graph(load(write_layered_program(tmp_path, 5000)).module)  # weights reused by later layers
    builder = SceneBuilder(graph)
    root = builder.cluster_id(None)
    view, general = builder.view(root), builder._derived_view(root, set())
    pairs = [(u, v, d["kind"]) for u, v, d in view.graph.edges(data=True)]
    assert len(pairs) == len(set(pairs)) and len(pairs) < general.graph.number_of_edges()


def test_a_derived_graph_uses_the_general_views():
    graph = build_graph(load(PROGRAMS[0]).module)
    derived = graph.collapse(next(iter(graph.clusters)))
    assert SceneBuilder(derived)._cluster_views is None
