"""Scene views made from the cluster's own part of the graph (layouts/cluster_view.py) are the
views restricting and collapsing the whole graph gives: same nodes, edges and clusters, in the
same order."""
from __future__ import annotations

from pathlib import Path

import pytest

from hlodbg.layouts.graph import build_graph
from hlodbg.layouts.scene import SceneBuilder
from hlodbg.program import load

ROOT = Path(__file__).resolve().parents[1]
PROGRAMS = sorted((ROOT / "sample_programs").glob("*.mlir")) + sorted((ROOT / "tests" / "data").glob("*.mlir"))


def _shape(view):
    nodes = [(n, dict(d)) for n, d in view.graph.nodes(data=True)]
    edges = list(view.graph.edges(keys=True, data=True))
    clusters = [(cid, c.kind, c.label, c.parent, list(c.nodes), list(c.children)) for cid, c in view.clusters.items()]
    return nodes, edges, clusters, view.collapsed


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


def test_bundled_edges_between_folded_boxes_match_too(tmp_path):
    from itertools import islice

    from tests.scale_helpers import write_layered_program

    graph = build_graph(load(write_layered_program(tmp_path, 5000)).module)  # weights read again by later layers
    builder = SceneBuilder(graph)
    bundled = 0
    for root, open_ids in islice(_views(graph), 25):
        view = builder.view(root, open_ids)
        assert _shape(view) == _shape(builder._derived_view(builder.cluster_id(root), open_ids)), (root, open_ids)
        bundled += sum(1 for _, _, d in view.graph.edges(data=True) if d.get("values", 0) > 1)
    assert bundled


def test_a_derived_graph_uses_the_general_views():
    graph = build_graph(load(PROGRAMS[0]).module)
    derived = graph.collapse(next(iter(graph.clusters)))
    assert SceneBuilder(derived)._cluster_views is None
