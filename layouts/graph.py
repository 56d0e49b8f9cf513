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

Derived graphs (`collapse`, `expand`, `focus`, `restrict`; layouts/dataflow.py, with DataflowGraph) share the full graph they came from,
so expanding what was collapsed is exact.

Node data: kind ("op", "return", "argument", "collapsed"), op, value, function, cluster, name,
mnemonic, category, label (lines), location, line, count (ops inside, for collapsed nodes).
Edge data: kind ("data" or "call"), operand, value, type, result; captured=True marks a value a
collapsed region used from outside; argument=True an operand of an op that owns its callee, drawn
into the callee's argument.
"""
from __future__ import annotations

from collections import defaultdict
from typing import Optional

import networkx as nx

from hlodbg.engine.ir.attributes import UnitAttr
from hlodbg.engine.ir.collector import build_long_lived
from hlodbg.engine.ir.core import Block, Function, Module, Operation, Value, symbol_name
from hlodbg.engine.ir.opset import callee_attribute, is_terminator, lookup, owns_callee

from .dataflow import IMPLICIT, MAX_NODES, PACKS_RESULTS, Cluster, DataflowGraph, GraphError, call_graph
from .grouping import Group, group_block
from .labels import op_title
from .node_data import NodeData, edge_type_label
from .palette import node_category


class _Builder:
    def __init__(self, module: Module, inline: bool, grouping: bool):
        self.module = module
        self.functions = module.functions  # once: Module.function builds the table on every call
        self.expanding: set[str] = set()  # the functions being drawn, caller to callee (no recursion)
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

    # The walk over functions, blocks and ops is a set of generators run by `walk` with a stack of
    # its own: each yields the walk it needs done (a region's block, a callee inlined into a call)
    # and is sent back what that walk returned. A chain of calls is as deep as the program makes
    # it, and `--collapse none` draws every level inside its caller.
    def walk(self, function: Function, prefix: str, cluster: str) -> Optional[str]:
        """Add `function` (and, inline, everything it calls); returns its return node."""
        pending = [self.function(function, prefix, cluster, None)]
        sent = None
        while pending:
            try:
                needed = pending[-1].send(sent)
            except StopIteration as done:
                pending.pop()
                sent = done.value
                continue
            pending.append(needed)
            sent = None
        return sent

    def function(self, function: Function, prefix: str, cluster: str, inputs: Optional[list[tuple[str, int]]]):
        """Add a function instance; `inputs` feed its arguments (inline calls). Returns its return node."""
        env: dict[int, tuple[str, int]] = {}
        name = function.sym_name
        for j, arg in enumerate(function.arguments):
            nid = f"{prefix}{name}#arg{j}"
            self.add_argument_node(nid, cluster, arg, name)
            env[id(arg)] = (nid, 0)
            if inputs is not None:
                self.add_edge(inputs[j], nid, j, arg)
        self.expanding.add(name)
        try:
            return (yield self.block(function.body, function, prefix, cluster, env))
        finally:
            self.expanding.discard(name)

    def block(self, block: Block, function: Function, prefix: str, cluster: str, env: dict):
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
        traits = self._traits
        for k, op in enumerate(ops):
            if marked[k] and self._fold(op, env):
                continue
            terminator, attribute = traits(op.name)[:2]
            if op.regions or attribute is not None:
                node = yield self.op(op, function, prefix, placement.get(k, cluster), env)
            else:
                node = self.plain_op(op, function, prefix, placement.get(k, cluster), env)
            if terminator:
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
        callee = self.functions.get(symbol_name(op.attr(attribute))) if attribute is not None else None
        return callee if callee is not None and not callee.is_declaration else None

    def _node_id(self, op: Operation, function: Function, prefix: str) -> str:
        fname, places = self._facts(function)
        return f"{prefix}{fname}#{places[id(op)]}"

    def plain_op(self, op: Operation, function: Function, prefix: str, cluster: str, env: dict) -> str:
        """An op with no regions and no callee: its node and its edges."""
        nid = self._node_id(op, function, prefix)
        terminator, _, _, category = self._traits(op.name)
        self._box(op, nid, cluster, function.sym_name, "return" if terminator else "op", category, env)
        return nid

    def _box(self, op: Operation, nid: str, cluster: str, fname: str, kind: str, category: str, env: dict) -> None:
        self.add_op_node(nid, cluster, kind, op, fname, category)
        add_edge = self.add_edge
        for i, operand in enumerate(op.operands):
            source = env.get(id(operand))
            if source is not None:
                add_edge(source, nid, i, operand)
        for k, result in enumerate(op.results):
            env[id(result)] = (nid, k)

    def op(self, op: Operation, function: Function, prefix: str, cluster: str, env: dict):
        fname = function.sym_name
        nid = self._node_id(op, function, prefix)
        terminator, attribute, owns, category = self._traits(op.name)
        callee = self._callee(op) if attribute is not None else None
        if callee is not None and callee.sym_name not in self.expanding:
            if owns:
                return (yield self._owning_call(op, callee, nid, function, cluster, env))
            if self.inline:
                call_cluster = self.add_cluster(f"call:{nid}", "call", f"{op_title(op)} {op.attr('callee')}", cluster, fname, op=op)
                inputs = [env[id(v)] for v in op.operands]
                returned = yield self.function(callee, nid + "/", call_cluster, inputs)
                for k, result in enumerate(op.results):
                    env[id(result)] = (returned, k)
                return returned
        home = cluster
        if op.regions and any(r.blocks for r in op.regions):
            home = self.add_cluster(f"op:{nid}", "op", op_title(op), cluster, fname, node=nid, op=op)
        self._box(op, nid, home, fname, "return" if terminator else "op", category, env)
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
                yield self.block(block, function, prefix, region_cluster, env)
        return nid

    def _owning_call(self, op: Operation, callee: Function, nid: str, function: Function, cluster: str, env: dict):
        """A fusion-like op: one cluster holding its own copy of the callee and the op's node, data
        flowing as it runs: operands into the callee's arguments, the callee's results into the
        op's node, which hands them on (folded, the cluster reads as the op with the count of ops
        inside and the op's own edges)."""
        fname = function.sym_name
        home = self.add_cluster(f"op:{nid}", "op", op_title(op), cluster, fname, node=nid, op=op)
        prefix = nid + "/"
        returned = yield self.function(callee, prefix, home, None)
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
        builder.walk(fn, "", cluster)
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
