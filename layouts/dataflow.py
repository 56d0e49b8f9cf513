"""The dataflow graph's model: DataflowGraph (a networkx MultiDiGraph, nested clusters, the module
it draws) and the views derived from it (`collapse`, `expand`, `focus`, `restrict`), which share
the full graph they came from so that expanding what was collapsed is exact. layouts/graph.py
builds it from a program (`build_graph`) and is where its node and edge data are described.
"""
from __future__ import annotations

from collections import defaultdict, deque
from dataclasses import dataclass, field, replace
from typing import Any, Iterable, Optional

import networkx as nx

from hlodbg.engine.ir.core import Module, Operation, symbol_name
from hlodbg.engine.ir.errors import HlodbgError
from hlodbg.engine.ir.locations import describe
from hlodbg.engine.ir.opset import owns_callee

from .labels import clip_group_label, result_names

# Ops a program read from XLA HLO text carries only to keep HLO's tuples as values: the tuple an
# op of several results packs them into, and the element reads that return the entry's results.
# The graph draws neither; their values come straight from the op that made them, as in the HLO.
PACKS_RESULTS = "hlo.packs_results"
IMPLICIT = "hlo.implicit"

MAX_NODES = 200_000


class GraphError(HlodbgError):
    """A graph request that cannot be met (unknown op or function, a graph too large to draw)."""


@dataclass
class Cluster:
    id: str
    kind: str  # "function", "call", "op", "region" or "group"
    label: str
    parent: Optional[str]
    function: str
    nodes: list[str] = field(default_factory=list)  # nodes directly inside
    children: list[str] = field(default_factory=list)
    node: Optional[str] = None  # the op's own node, for "op" and "call" clusters
    op: Optional[Operation] = None
    fold: Optional[str] = None  # for groups: "names", "repeat" or "chunk" (grouping.py)


class DataflowGraph:
    def __init__(self, graph: nx.MultiDiGraph, clusters: dict[str, Cluster], module: Module, root: Optional[str], inline: bool, base: "Optional[DataflowGraph]" = None, collapsed: frozenset = frozenset(), kept: Optional[frozenset] = None):
        self.graph = graph
        self.clusters = clusters
        self.module = module
        self.root = root
        self.inline = inline
        self.base = base or self
        self.collapsed = collapsed
        self.kept = kept
        self._nodes_of_op: Optional[dict[int, list[str]]] = None
        self._boxes: dict[str, Optional[str]] = {}  # cluster -> its outermost collapsed cluster
        self._order: Optional[dict[str, int]] = None  # node -> its place in the graph, for _derive_kept

    # --- what is in it ---------------------------------------------------------------------
    @property
    def node_count(self) -> int:
        return self.graph.number_of_nodes()

    def op_nodes(self) -> list[str]:
        return [n for n, d in self.graph.nodes(data=True) if d["kind"] in ("op", "return")]

    def data_edges(self) -> list[tuple[str, str, dict]]:
        return [(u, v, d) for u, v, d in self.graph.edges(data=True) if d["kind"] == "data"]

    def nodes_of(self, op: Any) -> list[str]:
        """Every node drawing `op`, or block argument `op` (a Value): one in the module view, one
        per call instance inline."""
        if self._nodes_of_op is None:
            index: dict[int, list[str]] = defaultdict(list)
            for node, data in self.graph.nodes(data=True):
                for folded in data.get("folded", ()):
                    index[id(folded)].append(node)
                if data.get("op") is not None:
                    index[id(data["op"])].append(node)
                elif data.get("kind") == "argument" and data.get("value") is not None:
                    index[id(data["value"])].append(node)
            self._nodes_of_op = index
        return list(self._nodes_of_op.get(id(op), ()))

    def resolve(self, spec: str) -> str:
        """A node from a node id, `%12`, `@fn:%12` or `@fn:%arg0` (the first in program order)."""
        if spec in self.graph:
            return spec
        function, _, name = spec.rpartition(":")
        function = function.lstrip("@")
        if not name.startswith("%"):
            raise GraphError(f"'{spec}' is not a value name (expected %N or @function:%N)")
        order = [function] if function else [self.root or (self.module.entry.sym_name if self.module.entry else "")]
        order += [f for f in self.module.functions if f not in order and not function]
        for fname in order:
            for node, data in self.graph.nodes(data=True):
                if data["function"] != fname:
                    continue
                names = _names_of(data)
                if name in names:
                    return node
        where = f" in @{function}" if function else ""
        raise GraphError(f"no op or argument named {name}{where} in this graph")

    def instance_of(self, node: str) -> Optional[str]:
        """The cluster of the function instance drawing `node`: its function's cluster, in the
        inline view the call's cluster holding that copy of the callee, inside a fusion-like op
        the op's cluster (the op's own node belongs to the function around it)."""
        clusters = self.base.clusters
        cluster = self.graph.nodes[node].get("cluster")
        while cluster is not None:
            found = clusters[cluster]
            if found.kind in ("function", "call"):
                return cluster
            if found.kind == "op" and found.node != node and found.op is not None and owns_callee(found.op.name):
                return cluster
            cluster = found.parent
        return None

    def cluster_of(self, node: str) -> Optional[str]:
        return self.graph.nodes[node].get("cluster")

    def cluster_path(self, node: str) -> list[str]:
        """Enclosing clusters of a node, outermost first."""
        path = []
        cluster = self.cluster_of(node)
        while cluster is not None:
            path.append(cluster)
            cluster = self.clusters[cluster].parent
        return path[::-1]

    def cluster_nodes(self, cluster_id: str) -> list[str]:
        """Every node inside a cluster, nested ones included."""
        out: list[str] = []
        stack = [cluster_id]
        while stack:
            cluster = self.clusters[stack.pop()]
            out.extend(cluster.nodes)
            stack.extend(cluster.children)
        return out

    def top_clusters(self) -> list[str]:
        return [cid for cid, c in self.clusters.items() if c.parent is None]

    # --- queries ------------------------------------------------------------------------------
    def producers(self, node: str) -> list[str]:
        return _unique(u for u, _, d in self.graph.in_edges(node, data=True) if d["kind"] == "data")

    def consumers(self, node: str) -> list[str]:
        return _unique(v for _, v, d in self.graph.out_edges(node, data=True) if d["kind"] == "data")

    def neighbourhood(self, node: str, radius: int, limit: Optional[int] = None, inside: bool = False) -> set[str]:
        """Nodes at most `radius` edges away, either direction; with `limit`, only the `limit`
        nearest (breadth first), so that a constant feeding 4,000 layers stays a small view;
        `inside`: only nodes of the same function instance as `node` (no hop through a call)."""
        seen = {node: 0}
        queue = deque([node])
        home = self.instance_of(node) if inside else None
        while queue:
            current = queue.popleft()
            if seen[current] == radius:
                continue
            for nxt in (*self.graph.predecessors(current), *self.graph.successors(current)):
                if nxt not in seen and (home is None or self.instance_of(nxt) == home):
                    if limit is not None and len(seen) >= limit:
                        return set(seen)
                    seen[nxt] = seen[current] + 1
                    queue.append(nxt)
        return set(seen)

    def paths(self, source: str, target: str, limit: int = 100) -> list[list[str]]:
        """Up to `limit` simple dataflow paths from source to target, shortest first."""
        simple = nx.DiGraph((u, v) for u, v, d in self.graph.edges(data=True) if d["kind"] == "data")
        if source not in simple or target not in simple or not nx.has_path(simple, source, target):
            return []
        out = []
        for path in nx.shortest_simple_paths(simple, source, target):
            out.append(path)
            if len(out) == limit:
                break
        return out

    # --- derived views ----------------------------------------------------------------------
    def collapse(self, *cluster_ids: str) -> "DataflowGraph":
        """This view with each cluster drawn as one node."""
        for cid in cluster_ids:
            if cid not in self.clusters:
                raise GraphError(f"no cluster '{cid}' in this graph")
        return self.base._derive(self.collapsed | set(cluster_ids), self.kept)

    def expand(self, *cluster_ids: str) -> "DataflowGraph":
        return self.base._derive(self.collapsed - set(cluster_ids), self.kept)

    def collapse_kind(self, *kinds: str) -> "DataflowGraph":
        return self.collapse(*(cid for cid, c in self.clusters.items() if c.kind in kinds))

    def restrict(self, nodes: Iterable[str]) -> "DataflowGraph":
        """Only these nodes (of this view) and the clusters around them."""
        wanted = set(nodes)
        if not self.collapsed:  # every node draws itself: the nodes kept are the ones asked for
            return self.base._derive(self.collapsed, frozenset(n for n in wanted if n in self.base.graph))
        keep = set()
        for base_node in self.base.graph.nodes:
            if self.shown_as(base_node) in wanted:
                keep.add(base_node)
        return self.base._derive(self.collapsed, frozenset(keep))

    def focus(self, node: str, radius: int, limit: Optional[int] = None) -> "DataflowGraph":
        """The neighbourhood of `node` inside its own function instance."""
        return self.restrict(self.neighbourhood(node, radius, limit, inside=True))

    def shown_as(self, base_node: str) -> str:
        """The node of this view that draws a node of the full graph."""
        if not self.collapsed:
            return base_node
        outer = self._folded_box(self.base.graph.nodes[base_node].get("cluster"))
        return base_node if outer is None else _collapsed_node_id(self.base.clusters[outer])

    def _folded_box(self, cluster: Optional[str]) -> Optional[str]:
        """The outermost collapsed cluster around `cluster` (itself included), found once per cluster."""
        if cluster is None:
            return None
        if cluster not in self._boxes:
            outer = self._folded_box(self.base.clusters[cluster].parent)
            self._boxes[cluster] = outer if outer is not None else (cluster if cluster in self.collapsed else None)
        return self._boxes[cluster]

    def _derive(self, collapsed: Iterable[str], kept: Optional[frozenset]) -> "DataflowGraph":
        collapsed = frozenset(c for c in collapsed if c in self.clusters)
        if not collapsed and kept is None:
            return self
        if not collapsed:
            return self._derive_kept(kept)
        return self._derive_whole(collapsed, kept)

    def _derive_kept(self, kept: frozenset) -> "DataflowGraph":
        """`_derive` of a view that keeps some nodes and folds nothing, made from what it keeps: the
        view `_derive_whole` makes, in its order (nodes, edges, clusters and their children), at
        the cost of the nodes kept and their edges rather than of the whole graph (the 40 ops
        around the current one, in a graph of 150,000 nodes: milliseconds, not a second)."""
        view = DataflowGraph(nx.MultiDiGraph(), {}, self.module, self.root, self.inline, self, frozenset(), kept)
        if self._order is None:
            self._order = {node: place for place, node in enumerate(self.graph.nodes)}
        nodes = sorted((n for n in kept if n in self._order), key=self._order.__getitem__)
        around: set[str] = set()
        for node in nodes:
            cid = self.graph.nodes[node].get("cluster")
            while cid is not None and cid not in around:
                around.add(cid)
                cid = self.clusters[cid].parent
        for cid, cluster in self.clusters.items():
            if cid in around:
                view.clusters[cid] = replace(cluster, nodes=[], children=[c for c in cluster.children if c in around])
        for node in nodes:
            view.graph.add_node(node, **self.graph.nodes[node])
        successors = self.graph.adj
        for u in nodes:
            for v, keyed in successors[u].items():
                if v != u and v in kept:
                    for key, data in keyed.items():
                        view.graph.add_edge(u, v, key=key, **data)
        for node, data in view.graph.nodes(data=True):
            cluster = data.get("cluster")
            if cluster in view.clusters:
                view.clusters[cluster].nodes.append(node)
        return view

    def _derive_whole(self, collapsed: frozenset, kept: Optional[frozenset]) -> "DataflowGraph":
        """`_derive` by a walk of every node and edge of the full graph: what folding needs."""
        view = DataflowGraph(nx.MultiDiGraph(), {}, self.module, self.root, self.inline, self, collapsed, kept)
        hidden = set()  # clusters inside a collapsed one
        for cid in collapsed:
            stack = list(self.clusters[cid].children)
            while stack:
                child = stack.pop()
                hidden.add(child)
                stack.extend(self.clusters[child].children)
        outermost = collapsed - hidden
        for cid, cluster in self.clusters.items():
            if cid in hidden or cid in outermost:
                continue
            view.clusters[cid] = replace(cluster, nodes=[], children=[c for c in cluster.children if c not in hidden and c not in outermost])
        mapping = {node: view.shown_as(node) for node in self.graph.nodes}
        for node, data in self.graph.nodes(data=True):
            if kept is not None and node not in kept:
                continue
            target = mapping[node]
            if target == node:
                view.graph.add_node(node, **data)
            elif target not in view.graph:
                view.graph.add_node(target, **self._collapsed_data(target))
        # Edges into or out of a folded box: one per value, and one per pair of folded boxes
        # (a layer's 500 weights first used in one chunk and read again in 20 others would be
        # 10,000 parallel edges), which counts the values it stands for.
        seen_edges: set = set()
        bundles: dict[tuple, dict] = {}  # signature -> the edge drawn and the values it stands for
        for u, v, key, data in self.graph.edges(keys=True, data=True):
            mu, mv = mapping[u], mapping[v]
            if mu == mv or mu not in view.graph or mv not in view.graph:
                continue
            if (mu, mv) != (u, v):
                both_folded = mu != u and mv != v
                signature = (mu, mv, data["kind"]) if both_folded else (mu, mv, data["kind"], data.get("value"), data.get("result"))
                if signature in seen_edges:
                    if both_folded:
                        bundles[signature]["names"].add(data.get("value"))
                    continue
                seen_edges.add(signature)
                data = {**data, "captured": data.get("captured", False) or (mv != v and mv not in self.graph and not data.get("argument"))}
                key = len(seen_edges) + 10_000
                if both_folded:
                    bundles[signature] = {"edge": (mu, mv, key), "names": {data.get("value")}}
            view.graph.add_edge(mu, mv, key=key, **data)
        for bundle in bundles.values():
            if len(bundle["names"]) > 1:
                view.graph.edges[bundle["edge"]].update(values=len(bundle["names"]), type=f"{len(bundle['names'])} values")
        for node, data in view.graph.nodes(data=True):
            cluster = data.get("cluster")
            if cluster in view.clusters:
                view.clusters[cluster].nodes.append(node)
        if kept is not None:
            view._prune_empty_clusters()
        return view

    def _collapsed_data(self, node_id: str, count: Optional[int] = None) -> dict:
        """The node standing for a folded cluster; `count` (ops inside) when the caller knows it."""
        cluster = self.clusters[node_id.split(":", 1)[1]]
        if count is None:
            count = sum(1 for n in self.cluster_nodes(cluster.id) if self.graph.nodes[n]["kind"] in ("op", "return"))
        if cluster.kind == "op" and cluster.node is not None:
            data = dict(self.graph.nodes[cluster.node])
            data.update(cluster=cluster.parent, count=count, collapsed=cluster.id)
            data["label"] = [*data["label"], f"▸ {count - 1:,} ops inside"]
            return data
        label = [clip_group_label(cluster.label), f"▸ {count:,} ops"]
        return {"kind": "collapsed", "op": cluster.op, "value": None, "function": cluster.function, "cluster": cluster.parent, "name": result_names(cluster.op) if cluster.op else "", "mnemonic": cluster.op.name if cluster.op else cluster.kind, "category": "collapsed", "label": label, "location": describe(cluster.op.location) if cluster.op else "", "line": _line(cluster.op) if cluster.op else None, "count": count, "collapsed": cluster.id}

    def _prune_empty_clusters(self) -> None:
        changed = True
        while changed:
            changed = False
            for cid in list(self.clusters):
                cluster = self.clusters[cid]
                if not cluster.nodes and not cluster.children:
                    del self.clusters[cid]
                    if cluster.parent in self.clusters:
                        self.clusters[cluster.parent].children.remove(cid)
                    changed = True

    def call_graph(self) -> nx.DiGraph:
        return call_graph(self.module)


def _collapsed_node_id(cluster: Cluster) -> str:
    return f"collapsed:{cluster.id}"


def _names_of(data: dict) -> list[str]:
    if data.get("value") is not None:
        return [data["value"].name]
    op = data.get("op")
    if op is None:
        return []
    names = [v.name for v in op.results]
    return names + list({n.split("#")[0] for n in names})


def _unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))


def _line(op: Optional[Operation]) -> Optional[int]:
    return op.pos.line if op is not None and op.pos is not None else None


def call_graph(module: Module) -> nx.DiGraph:
    """Functions as nodes, an edge caller -> callee with the number of call sites as `count`."""
    graph = nx.DiGraph()
    for name, function in module.functions.items():
        graph.add_node(name, ops=len(function.ops))
        for op in function.ops:
            if op.name == "func.call":
                callee = symbol_name(op.attr("callee"))
                if graph.has_edge(name, callee):
                    graph[name][callee]["count"] += 1
                else:
                    graph.add_edge(name, callee, count=1)
    return graph


__all__ = ["Cluster", "DataflowGraph", "GraphError", "MAX_NODES", "PACKS_RESULTS", "IMPLICIT", "call_graph"]
