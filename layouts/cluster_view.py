"""The graph view of one scene, made from what the scene draws.

A scene shows one cluster with its child clusters folded (some drawn open). The general way to
get that view, `graph.restrict(cluster_nodes).collapse(*children)`, walks every node and edge of
the whole program for each scene: seconds at 100k ops, for a scene of a few dozen boxes.

ClusterViews indexes the graph once (linear in its size): every edge under the innermost cluster
holding both its ends, each cluster's count of ops and its first node's place. A scene's view then
costs what it draws: the nodes directly inside the open clusters, a box per folded child, and the
edges filed under the open clusters. The nodes, clusters and edges between drawn nodes are the
general view's, in its order, edges into and out of folded boxes bundled as it bundles them.

A view made here is for laying out: derive other views from the full graph, not from it.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Iterable, Optional

import networkx as nx

from hlodbg.engine.ir.collector import collector_paused

from .graph import DataflowGraph

Edge = tuple[str, str, object, dict]


class ClusterViews:
    """Scene views of one full graph (not itself a collapsed or restricted view)."""

    def __init__(self, graph: DataflowGraph):
        self.graph = graph
        self._indexed = False
        self._paths: dict[Optional[str], tuple[str, ...]] = {None: ()}  # cluster -> its chain, outermost first
        self._edges: dict[Optional[str], list[tuple[int, Edge]]] = {}  # innermost common cluster -> (place, edge)
        self._first: dict[str, int] = {}  # cluster -> place of its first node (nested ones included)
        self._ops: dict[str, int] = {}  # cluster -> ops inside (nested ones included)
        self._order: dict[str, int] = {}  # node -> its place in the graph

    def _index(self) -> None:
        if not self._indexed:
            with collector_paused():  # hundreds of thousands of tuples, all long-lived
                self._build_index()
            self._indexed = True

    def _build_index(self) -> None:
        graph, clusters = self.graph, self.graph.clusters
        for cid in clusters:
            self._path(cid)
        depth = {cid: len(path) for cid, path in self._paths.items()}
        parent = {cid: c.parent for cid, c in clusters.items()}
        # networkx's own dicts, read directly: its node and edge views cost more than the index.
        node_data = graph.graph._node
        cluster_of = {node: dict.__getitem__(data, "cluster") for node, data in node_data.items()}
        first, ops, order = self._first, self._ops, self._order
        for k, (node, data) in enumerate(node_data.items()):
            order[node] = k
            cid = cluster_of[node]
            if cid not in first:
                first[cid] = k
            if dict.__getitem__(data, "kind") in ("op", "return"):
                ops[cid] = ops.get(cid, 0) + 1
        for cid in sorted(clusters, key=depth.__getitem__, reverse=True):  # children before parents
            up = parent[cid]
            if up is not None:
                if cid in first:
                    first[up] = min(first.get(up, first[cid]), first[cid])
                ops[up] = ops.get(up, 0) + ops.get(cid, 0)

        def common(a: Optional[str], b: Optional[str]) -> Optional[str]:
            """The innermost cluster holding both (None: none)."""
            da, db = depth[a], depth[b]
            while da > db:
                a, da = parent[a], da - 1
            while db > da:
                b, db = parent[b], db - 1
            while a != b:
                a, b = parent[a], parent[b]
            return a

        edges = self._edges
        place = 0
        for u, heads in graph.graph._succ.items():  # in the order of graph.edges(keys=True, data=True)
            cu = cluster_of[u]
            for v, keyed in heads.items():
                cv = cluster_of[v]
                filed = edges.get(cu if cu == cv else common(cu, cv))
                if filed is None:
                    filed = edges[cu if cu == cv else common(cu, cv)] = []
                for key, data in keyed.items():
                    filed.append((place, (u, v, key, data)))
                    place += 1
        self._common_of = common

    def _path(self, cid: Optional[str]) -> tuple[str, ...]:
        path = self._paths.get(cid)
        if path is None:
            path = self._paths[cid] = (*self._path(self.graph.clusters[cid].parent), cid)
        return path

    def view(self, root: Optional[str], open_ids: Iterable[str]) -> DataflowGraph:
        """What `root` (None: every top cluster) directly holds, each child cluster folded into
        one box unless in `open_ids` (whose children fold unless open too, and so on)."""
        self._index()
        graph = self.graph
        clusters = graph.clusters
        open_ids = set(open_ids)
        shown: set[Optional[str]] = set()  # the open clusters (None: the program, when root is None)
        folded: list[str] = []
        stack = [root] if root is not None else [None]
        while stack:
            cid = stack.pop()
            shown.add(cid)
            for child in (clusters[cid].children if cid is not None else graph.top_clusters()):
                (stack.append if child in open_ids else folded.append)(child)
        view = DataflowGraph(nx.MultiDiGraph(), {}, graph.module, graph.root, graph.inline, graph, frozenset(folded))
        _add_clusters(view, graph, root, shown)
        data_of = graph.graph.nodes
        placed = [(self._order[n], n, None) for cid in shown if cid is not None for n in clusters[cid].nodes]
        placed += [(self._first[cid], f"collapsed:{cid}", cid) for cid in folded if cid in self._first]
        for _, node, cid in sorted(placed):
            if cid is None:
                view.graph.add_node(node, **data_of[node])
            else:
                view.graph.add_node(node, **graph._collapsed_data(node, self._ops.get(cid, 0)))
        self._add_edges(view, shown)
        for node, data in view.graph.nodes(data=True):
            cluster = data.get("cluster")
            if cluster in view.clusters:
                view.clusters[cluster].nodes.append(node)
        return view

    def _shown_as(self, node: str, common: Optional[str], shown: set) -> str:
        """The view's node drawing `node`: itself, or the outermost folded cluster holding it
        below `common` (an open cluster)."""
        path = self._paths[self.graph.graph.nodes[node]["cluster"]]
        below = path.index(common) + 1 if common is not None else 0
        for cid in path[below:]:
            if cid not in shown:
                return f"collapsed:{cid}"
        return node

    def _add_edges(self, view: DataflowGraph, shown: set) -> None:
        """The edges filed under the open clusters, in the graph's order, bundled as the general
        view bundles them (DataflowGraph._derive): an edge into or out of a folded box once per
        value, and between two folded boxes once per pair, counting the values it stands for."""
        edges = sorted(edge for cid in shown for edge in self._edges.get(cid, ()))
        nodes = self.graph.graph.nodes
        add_edge = view.graph.add_edge
        seen: set[tuple] = set()
        bundles: dict[tuple, tuple[tuple, set]] = {}
        for _, (u, v, key, data) in edges:
            common = self._common_of(nodes[u]["cluster"], nodes[v]["cluster"])
            mu, mv = self._shown_as(u, common, shown), self._shown_as(v, common, shown)
            if mu == mv:
                continue
            if (mu, mv) != (u, v):
                both_folded = mu != u and mv != v
                signature = (mu, mv, data["kind"]) if both_folded else (mu, mv, data["kind"], data.get("value"), data.get("result"))
                if signature in seen:
                    if both_folded:
                        bundles[signature][1].add(data.get("value"))
                    continue
                seen.add(signature)
                data = {**data, "captured": data.get("captured", False) or (mv != v and not data.get("argument"))}
                key = len(seen) + 10_000
                if both_folded:
                    bundles[signature] = ((mu, mv, key), {data.get("value")})
            add_edge(mu, mv, key=key, **data)
        for edge, names in bundles.values():
            if len(names) > 1:
                view.graph.edges[edge].update(values=len(names), type=f"{len(names)} values")


def _add_clusters(view: DataflowGraph, graph: DataflowGraph, root: Optional[str], shown: set) -> None:
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
        elif cid in shown:
            children = [c for c in cluster.children if c in shown]
        else:
            continue
        view.clusters[cid] = replace(cluster, nodes=[], children=children)


__all__ = ["ClusterViews"]
