"""A program as a dataflow graph: networkx MultiDiGraph + nested clusters + call graph.

Two shapes come out of `build_graph`:
- the module view: every function drawn once as a cluster, a node per op (returns included) and
  per block argument, an edge per SSA use, a dashed "call" edge from each call op to its callee;
- the inline view (`inline_calls=True`): from one function, each call site becomes a cluster with
  its own copy of the callee, so data flows through calls as it does at run time.
Ops with regions (while, if, case, reduce, sort, scatter, sdy.manual_computation, ...) become an
"op" cluster holding the op's node and one "region" cluster per region. An op that owns its callee (a fusion and its
fused computation) is drawn the same way: an "op" cluster holding the op's node and a copy of the
callee. Groups from name stacks or repeated structure (grouping.py) nest inside blocks.

Derived graphs (`collapse`, `expand`, `focus`, `restrict`) share the full graph they came from,
so expanding what was collapsed is exact.

Node data: kind ("op", "return", "argument", "collapsed"), op, value, function, cluster, name,
mnemonic, category, label (lines), location, line, count (ops inside, for collapsed nodes).
Edge data: kind ("data" or "call"), operand, value, type, result; captured=True marks a value a
collapsed region used from outside; argument=True an operand of an op that owns its callee, drawn
into the callee's argument.
"""
from __future__ import annotations

from collections import defaultdict, deque
from dataclasses import dataclass, field, replace
from typing import Any, Iterable, Optional

import networkx as nx

from hlodbg.engine.ir.collector import build_long_lived
from hlodbg.engine.ir.errors import HlodbgError
from hlodbg.engine.ir.core import Block, Function, Module, Operation, Value, symbol_name
from hlodbg.engine.ir.locations import describe
from hlodbg.engine.ir.attributes import UnitAttr
from hlodbg.engine.ir.opset import callee_attribute, is_terminator, lookup, owns_callee

from .grouping import Group, group_block
from .labels import clip_group_label, op_title, result_names
from .node_data import NodeData, edge_type_label
from .palette import node_category

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


class _Builder:
    def __init__(self, module: Module, inline: bool, grouping: bool):
        self.module = module
        self.inline = inline
        self.grouping = grouping
        self.graph = nx.MultiDiGraph()
        self.graph.node_attr_dict_factory = NodeData  # labels and locations made when first read
        self.clusters: dict[str, Cluster] = {}
        self._op_traits: dict[str, tuple[bool, Optional[str], bool, str]] = {}
        self._function_facts: dict[int, tuple[str, dict[int, int]]] = {}  # functions live as long as the build
        self._type_texts: dict[int, str] = {}  # id(type) -> its edge label text (types live as long as the build)
        self.group_count = 0
        self.packed: dict[int, list[tuple[str, int]]] = {}  # a folded tuple's value -> its elements' sources
        # DataflowGraph.nodes_of's index, kept as nodes are made (a pass over 150k nodes saved)
        self.nodes_of_op: dict[int, list[str]] = defaultdict(list)

    def _traits(self, name: str) -> tuple[bool, Optional[str], bool, str]:
        """(is a terminator, its callee's attribute, owns its callee, palette category) of op
        `name`, looked up once per name rather than per op."""
        traits = self._op_traits.get(name)
        if traits is None:
            traits = self._op_traits[name] = (is_terminator(name), callee_attribute(name), owns_callee(name), node_category(name))
        return traits

    def _facts(self, function: Function) -> tuple[str, dict[int, int]]:
        """(name, id(op) -> its place among the function's ops, nested ones included), made once
        per function rather than per op."""
        facts = self._function_facts.get(id(function))
        if facts is None:
            facts = self._function_facts[id(function)] = (function.sym_name, {id(op): k for k, op in enumerate(function.ops)})
        return facts

    def add_cluster(self, cid: str, kind: str, label: str, parent: Optional[str], function: str, node=None, op=None) -> str:
        self.clusters[cid] = Cluster(cid, kind, label, parent, function, node=node, op=op)
        if parent is not None:
            self.clusters[parent].children.append(cid)
        return cid

    # Nodes and edges go straight into the MultiDiGraph's own dicts, as its add_node/add_edge
    # would put them (a 100k-op graph spent a third of its build in those two calls' checks).
    def add_node(self, nid: str, data: NodeData) -> None:
        """Node `nid` in cluster `data["cluster"]`."""
        graph = self.graph
        if len(graph._node) >= MAX_NODES:
            raise GraphError(f"the graph would have more than {MAX_NODES:,} nodes; collapse calls or pick a function")
        if nid in graph._succ:  # made by an edge to it (an owning op's node comes after its operands)
            graph._node[nid].update(data)
        else:
            graph._succ[nid], graph._pred[nid] = {}, {}
            graph._node[nid] = data
        self.clusters[data["cluster"]].nodes.append(nid)

    def add_op_node(self, nid: str, cluster: str, kind: str, op: Operation, function: str, category: str) -> None:
        self.add_node(nid, NodeData(cluster=cluster, kind=kind, op=op, value=None, function=function, mnemonic=op.name, category=category, count=1))
        self.nodes_of_op[id(op)].append(nid)

    def add_argument_node(self, nid: str, cluster: str, value: Value, function: str, **lazy) -> None:
        """A block argument's node; `lazy` gives lazy attributes (NodeData) a value of their own."""
        self.add_node(nid, NodeData(cluster=cluster, kind="argument", op=None, value=value, function=function, mnemonic="argument",
                                    category="argument", **lazy, count=0))
        self.nodes_of_op[id(value)].append(nid)

    def add_edge(self, source: tuple[str, int], target: str, operand: int, value: Value, **extra) -> None:
        graph, tail = self.graph, source[0]
        data = {"kind": "data", "operand": operand, "value": value.name, "type": edge_type_label(value, self._type_texts), "result": source[1], **extra}
        if target not in graph._pred:
            graph.add_edge(tail, target, key=operand, **data)
            return
        keyed = graph._succ[tail].get(target)
        if keyed is None:
            keyed = graph._succ[tail][target] = graph._pred[target][tail] = {}
        keyed[operand] = data

    def function(self, function: Function, prefix: str, cluster: str, inputs: Optional[list[tuple[str, int]]], stack: tuple[str, ...]) -> Optional[str]:
        """Add a function instance; `inputs` feed its arguments (inline calls). Returns its return node."""
        env: dict[int, tuple[str, int]] = {}
        name = function.sym_name
        for j, arg in enumerate(function.arguments):
            nid = f"{prefix}{name}#arg{j}"
            self.add_argument_node(nid, cluster, arg, name)
            env[id(arg)] = (nid, 0)
            if inputs is not None:
                self.add_edge(inputs[j], nid, j, arg)
        return self.block(function.body, function, prefix, cluster, env, stack)

    def block(self, block: Block, function: Function, prefix: str, cluster: str, env: dict, stack: tuple[str, ...]) -> Optional[str]:
        ops = block.operations
        marked = [_marked_for_folding(op) for op in ops]
        body = ops[:-1] if ops and self._traits(ops[-1].name)[0] else ops
        placement: dict[int, str] = {}
        if self.grouping:
            drawn = [k for k in range(len(body)) if not marked[k]]  # groups hold boxes
            homes: dict[int, str] = {}  # block argument -> its group
            for group in group_block([body[k] for k in drawn], block.arguments):
                self._place_group(group, cluster, function.sym_name, placement, drawn, homes)
            self._move_arguments(block, cluster, env, homes)
        returned = None
        for k, op in enumerate(ops):
            if marked[k] and self._fold(op, env):
                continue
            node = self.op(op, function, prefix, placement.get(k, cluster), env, stack)
            if self._traits(op.name)[0]:
                returned = node
        return returned

    def _place_group(self, group: Group, parent: str, function: str, placement: dict[int, str], indices: list[int], homes: dict[int, str]) -> None:
        self.group_count += 1
        cid = self.add_cluster(f"group:{self.group_count}", "group", group.label, parent, function)
        self.clusters[cid].fold = group.fold
        for member in group.members:
            placement[indices[member]] = cid
        for j in group.arguments:
            homes[j] = cid
        for child in group.children:
            self._place_group(child, cid, function, placement, indices, homes)

    def _move_arguments(self, block: Block, cluster: str, env: dict, homes: dict[int, str]) -> None:
        """Block arguments (drawn in `cluster` before the block's groups existed) into the group
        of their first use."""
        moved = set()
        for j, home in homes.items():
            source = env.get(id(block.arguments[j]))
            if source is None or self.graph.nodes[source[0]]["cluster"] != cluster:
                continue
            self.graph.nodes[source[0]]["cluster"] = home
            self.clusters[home].nodes.append(source[0])
            moved.add(source[0])
        if moved:
            self.clusters[cluster].nodes = [n for n in self.clusters[cluster].nodes if n not in moved]

    def _fold(self, op: Operation, env: dict) -> bool:
        """Draw `op` as part of the node its operands come from (PACKS_RESULTS and IMPLICIT
        ops, `_marked_for_folding`); False when it needs a node of its own."""
        sources = [env.get(id(v)) for v in op.operands]
        if not sources or any(source is None for source in sources) or len({node for node, _ in sources}) != 1:
            return False
        if isinstance(op.attr(PACKS_RESULTS), UnitAttr) and len(op.results) == 1:
            value = sources[0]
            self.packed[id(op.results[0])] = sources
        elif isinstance(op.attr(IMPLICIT), UnitAttr) and len(op.results) == 1 and len(op.operands) == 1:
            packed = self.packed.get(id(op.operands[0]))
            index = op.attr("index")
            value = packed[int(index)] if packed is not None and index is not None and int(index) < len(packed) else sources[0]
        else:
            return False
        env[id(op.results[0])] = value
        self.graph.nodes[value[0]].setdefault("folded", []).append(op)
        self.nodes_of_op[id(op)].append(value[0])
        return True

    def _callee(self, op: Operation) -> Optional[Function]:
        attribute = self._traits(op.name)[1]
        callee = self.module.functions.get(symbol_name(op.attr(attribute))) if attribute is not None else None
        return callee if callee is not None and not callee.is_declaration else None

    def op(self, op: Operation, function: Function, prefix: str, cluster: str, env: dict, stack: tuple[str, ...]) -> str:
        fname, places = self._facts(function)
        nid = f"{prefix}{fname}#{places[id(op)]}"
        terminator, attribute, owns, category = self._traits(op.name)
        callee = self._callee(op) if attribute is not None else None
        if callee is not None and callee.sym_name not in stack:
            if owns:
                return self._owning_call(op, callee, nid, function, cluster, env, stack)
            if self.inline:
                call_cluster = self.add_cluster(f"call:{nid}", "call", f"{op_title(op)} {op.attr('callee')}", cluster, fname, op=op)
                inputs = [env[id(v)] for v in op.operands]
                returned = self.function(callee, nid + "/", call_cluster, inputs, (*stack, callee.sym_name))
                for k, result in enumerate(op.results):
                    env[id(result)] = (returned, k)
                return returned
        home = cluster
        if op.regions and any(r.blocks for r in op.regions):
            home = self.add_cluster(f"op:{nid}", "op", op_title(op), cluster, fname, node=nid, op=op)
        self.add_op_node(nid, home, "return" if terminator else "op", op, fname, category)
        add_edge = self.add_edge
        for i, operand in enumerate(op.operands):
            source = env.get(id(operand))
            if source is not None:
                add_edge(source, nid, i, operand)
        for k, result in enumerate(op.results):
            env[id(result)] = (nid, k)
        names = _region_names(op) if op.regions else []
        for r, region in enumerate(op.regions):
            if not region.blocks:
                continue
            region_cluster = self.add_cluster(f"region:{nid}.{r}", "region", names[r], home, fname, op=op)
            for b, block in enumerate(region.blocks):
                for j, arg in enumerate(block.arguments):
                    aid = f"{nid}.{r}.{b}.arg{j}"
                    self.add_argument_node(aid, region_cluster, arg, fname, location="")
                    env[id(arg)] = (aid, 0)
                self.block(block, function, prefix, region_cluster, env, stack)
        return nid

    def _owning_call(self, op: Operation, callee: Function, nid: str, function: Function, cluster: str, env: dict, stack: tuple[str, ...]) -> str:
        """A fusion-like op: one cluster holding its own copy of the callee and the op's node, data
        flowing as it runs: operands into the callee's arguments, the callee's results into the
        op's node, which hands them on (folded, the cluster reads as the op with the count of ops
        inside and the op's own edges)."""
        fname = function.sym_name
        home = self.add_cluster(f"op:{nid}", "op", op_title(op), cluster, fname, node=nid, op=op)
        prefix = nid + "/"
        returned = self.function(callee, prefix, home, None, (*stack, callee.sym_name))
        for i, operand in enumerate(op.operands):
            source = env.get(id(operand))
            argument = f"{prefix}{callee.sym_name}#arg{i}"
            if source is not None:  # an operand, not a value captured from outside
                self.add_edge(source, argument if argument in self.graph else nid, i, operand, argument=True)
        self.add_op_node(nid, home, "op", op, fname, self._traits(op.name)[3])
        if returned is not None:  # the callee's return is the op's node itself: its ROOT feeds it
            for source, _, data in list(self.graph.in_edges(returned, data=True)):
                self.graph.add_edge(source, nid, key=data["operand"], **data)
            returned_op = self.graph.nodes[returned]["op"]
            self.graph.nodes[nid]["folded"] = [returned_op]
            drawn_by = self.nodes_of_op[id(returned_op)]
            drawn_by[drawn_by.index(returned)] = nid
            self.clusters[home].nodes.remove(returned)
            self.graph.remove_node(returned)
        for k, result in enumerate(op.results):
            env[id(result)] = (nid, k)
        return nid


def _marked_for_folding(op: Operation) -> bool:
    attributes = op.attributes
    return bool(attributes) and (isinstance(attributes.get(PACKS_RESULTS), UnitAttr) or isinstance(attributes.get(IMPLICIT), UnitAttr))


def _owned_functions(module: Module) -> set[str]:
    """Functions only ever called by ops that own their callee: drawn inside those ops."""
    owned, shared = set(), set()
    for function in module.functions.values():
        for op in function.ops:
            attribute = callee_attribute(op.name)
            if attribute is None or op.attr(attribute) is None:
                continue
            (owned if owns_callee(op.name) else shared).add(symbol_name(op.attr(attribute)))
    return owned - shared


def _region_names(op: Operation) -> list[str]:
    opdef = lookup(op.name)
    names = [n.rstrip("*") for n in opdef.regions] if opdef is not None else []
    if names and opdef.regions[-1].endswith("*"):
        names = names[:-1] + [f"{names[-1].rstrip('es').rstrip('s') or 'region'} {i}" for i in range(len(op.regions) - len(names) + 1)]
    names += [f"region {i}" for i in range(len(names), len(op.regions))]
    return [n.replace("_", " ") for n in names]


def build_graph(module: Module, function: Optional[str] = None, inline_calls: bool = False, grouping: bool = True) -> DataflowGraph:
    """The dataflow graph of a module (every function), or of `function` and what it calls.

    With `inline_calls`, only `function` (default: the entry) is drawn and every call site holds
    its own copy of the callee. Built without the cycle collector tracing it as it grows (a
    100k-op graph is millions of objects), and frozen when large, as a parsed module is."""
    return build_long_lived(lambda: _build_graph(module, function, inline_calls, grouping))


def _build_graph(module: Module, function: Optional[str], inline_calls: bool, grouping: bool) -> DataflowGraph:
    functions = module.functions
    root = None
    if function:
        try:  # `main` also names the entry function (an HLO module's `main.3`)
            root = module.function(function.lstrip("@")).sym_name
        except KeyError as missing:
            raise GraphError(missing.args[0]) from None
    builder = _Builder(module, inline_calls, grouping)
    if inline_calls:
        entry = functions[root] if root else module.entry
        if entry is None:
            raise GraphError("the module has no functions")
        root = entry.sym_name
        chosen = [entry]
    elif root is not None:
        reachable = nx.descendants(call_graph(module), root) | {root}
        chosen = [f for name, f in functions.items() if name in reachable]
    else:
        chosen = list(functions.values())
    owned = _owned_functions(module)
    for fn in chosen:
        if fn.is_declaration or (fn.sym_name in owned and fn.sym_name != root and fn is not module.entry):
            continue
        cluster = builder.add_cluster(f"fn:{fn.sym_name}", "function", f"func @{fn.sym_name}", None, fn.sym_name, op=fn)
        builder.function(fn, "", cluster, None, (fn.sym_name,))
    if not inline_calls:
        _add_call_edges(builder)
    graph = DataflowGraph(builder.graph, builder.clusters, module, root, inline_calls)
    graph._nodes_of_op = builder.nodes_of_op
    graph._prune_empty_clusters()  # a group whose ops were all folded into other boxes
    return graph


def _add_call_edges(builder: _Builder) -> None:
    calls = [(n, d["op"]) for n, d in builder.graph.nodes(data=True) if d["mnemonic"] == "func.call"]
    for node, op in calls:
        target = builder.clusters.get(f"fn:{symbol_name(op.attr('callee'))}")
        if target is not None and target.nodes:
            builder.graph.add_edge(node, target.nodes[0], key="call", kind="call", operand=-1, value="", type="", result=-1)


__all__ = ["Cluster", "DataflowGraph", "GraphError", "build_graph", "call_graph"]
