"""The graph view of one scene, made from the part of the graph the scene draws.

A scene shows one cluster with its child clusters folded (some drawn open). The general way to
get that view, `graph.restrict(cluster_nodes).collapse(*children)`, walks every node and edge of
the whole program for each scene: seconds at 100k ops, for a scene of a few dozen boxes.
ClusterViews makes the same view (the same nodes, edges, clusters, in the same order, so the
layouts do not change) from the cluster's own nodes and their edges, in time proportional to
what is inside the cluster.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Iterable, Optional

import networkx as nx

from .graph import DataflowGraph


class ClusterViews:
    """Scene views of one full graph (not itself a collapsed or restricted view)."""

    def __init__(self, graph: DataflowGraph):
        self.graph = graph
        self._order: Optional[dict[str, int]] = None  # node -> its place in the graph

    def _node_order(self) -> dict[str, int]:
        if self._order is None:
            self._order = {node: k for k, node in enumerate(self.graph.graph)}
        return self._order

    def view(self, root: Optional[str], open_ids: Iterable[str]) -> DataflowGraph:
        """What `root` (None: every top cluster) directly holds, each child cluster folded into
        one box unless in `open_ids` (whose children fold unless open too, and so on)."""
        graph = self.graph
        clusters = graph.clusters
        open_ids = set(open_ids)
        starts = [root] if root is not None else graph.top_clusters()
        shown: dict[str, Optional[str]] = {}  # cluster -> the folded box drawing it, None if open
        folded: list[str] = []
        nodes: list[str] = []
        stack = [(cid, None) for cid in reversed(starts)]
        while stack:
            cid, box = stack.pop()
            if box is None and cid != root and cid not in open_ids:
                box = f"collapsed:{cid}"
                folded.append(cid)
            shown[cid] = box
            cluster = clusters[cid]
            nodes.extend(cluster.nodes)
            stack.extend((child, box) for child in reversed(cluster.children))
        if root is None and not folded:
            return graph
        order = self._node_order()
        nodes.sort(key=order.__getitem__)
        kept = frozenset(nodes)
        view = DataflowGraph(nx.MultiDiGraph(), {}, graph.module, graph.root, graph.inline, graph, frozenset(folded),
                             kept if root is not None else None)
        _add_clusters(view, graph, root, shown)
        data_of = graph.graph.nodes
        mapping: dict[str, str] = {}
        for node in nodes:
            data = data_of[node]
            box = shown[data["cluster"]]
            if box is None:
                mapping[node] = node
                view.graph.add_node(node, **data)
            else:
                mapping[node] = box
                if box not in view.graph:
                    view.graph.add_node(box, **graph._collapsed_data(box))
        _add_edges(view, graph, nodes, mapping)
        for node, data in view.graph.nodes(data=True):
            cluster = data.get("cluster")
            if cluster in view.clusters:
                view.clusters[cluster].nodes.append(node)
        return view


def _add_clusters(view: DataflowGraph, graph: DataflowGraph, root: Optional[str], shown: dict) -> None:
    """The open clusters, in the graph's order, with the clusters around `root` (drawn as the
    general view draws them: frames holding only the way in)."""
    chain = set()
    if root is not None:
        parent = graph.clusters[root].parent
        while parent is not None:
            chain.add(parent)
            parent = graph.clusters[parent].parent
    for cid, cluster in graph.clusters.items():
        if cid in chain:
            children = [c for c in cluster.children if c in chain or c == root]
        elif cid in shown and shown[cid] is None:
            children = [c for c in cluster.children if shown[c] is None]
        else:
            continue
        view.clusters[cid] = replace(cluster, nodes=[], children=children)


def _add_edges(view: DataflowGraph, graph: DataflowGraph, nodes: list[str], mapping: dict[str, str]) -> None:
    """Every edge between the view's nodes; edges into or out of a folded box once per value."""
    seen: set[tuple] = set()
    add_edge = view.graph.add_edge
    for u in nodes:
        mu = mapping[u]
        for v, keyed in graph.graph._adj[u].items():
            mv = mapping.get(v)
            if mv is None or mu == mv:
                continue
            for key, data in keyed.items():
                if (mu, mv) == (u, v):
                    add_edge(mu, mv, key=key, **data)
                    continue
                signature = (mu, mv, data["kind"], data.get("value"), data.get("result"))
                if signature in seen:
                    continue
                seen.add(signature)
                captured = data.get("captured", False) or (mv != v and not data.get("argument"))
                add_edge(mu, mv, key=len(seen) + 10_000, **{**data, "captured": captured})


__all__ = ["ClusterViews"]
