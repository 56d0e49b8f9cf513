"""The dataflow graph: nodes, edges, clusters, groups, queries and derived views."""
from __future__ import annotations

from pathlib import Path

import pytest

from hlodbg.engine.ir.core import symbol_name
from hlodbg.layouts.graph import GraphError, build_graph, call_graph
from hlodbg.layouts.grouping import find_tandem_repeat, group_block
from hlodbg.layouts.labels import constant_text, key_attributes, op_label, short_type
from hlodbg.program import load

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "programs"
SAMPLE = ROOT / "sample_programs" / "tiny_model.mlir"
NAN_PROGRAM = ROOT / "tests" / "data" / "nan_in_loop.mlir"


def shared_programs():
    if not SHARED.is_dir():
        return []
    return sorted(SHARED.glob("*.mlir"))


def _uses(module) -> int:
    return sum(len(op.operands) for op in module.walk() if op.name != "func.func")


@pytest.mark.parametrize("path", shared_programs() or [pytest.param(None, marks=pytest.mark.skip(reason="../shared/programs absent"))], ids=lambda p: p.stem if p else "none")
def test_module_view_has_a_node_per_op_and_an_edge_per_use(path):
    module = load(path).module
    graph = build_graph(module)
    assert len(graph.op_nodes()) == module.op_count
    assert len(graph.data_edges()) == _uses(module)
    for name in module.functions:
        assert f"fn:{name}" in graph.clusters
    arguments = sum(1 for _, d in graph.graph.nodes(data=True) if d["kind"] == "argument")
    block_args = sum(len(b.arguments) for op in module.walk() for r in op.regions for b in r.blocks)
    assert arguments == block_args
    calls = sum(1 for op in module.walk() if op.name == "func.call")
    assert sum(1 for *_, d in graph.graph.edges(data=True) if d["kind"] == "call") == calls


def test_edges_carry_operand_value_and_type():
    module = load(NAN_PROGRAM).module
    graph = build_graph(module)
    node = graph.resolve("@update:%s")
    (source, _, data), = graph.graph.in_edges(node, data=True)
    assert graph.graph.nodes[source]["name"] == "%d"
    assert data == {"kind": "data", "operand": 0, "value": "%d", "type": "4xf32", "result": 0}


def test_regions_are_clusters_inside_an_op_cluster():
    graph = build_graph(load(NAN_PROGRAM).module)
    loop = graph.resolve("%r")
    op_cluster = graph.clusters[graph.cluster_of(loop)]
    assert op_cluster.kind == "op" and op_cluster.node == loop
    regions = [graph.clusters[c] for c in op_cluster.children]
    assert [(c.kind, c.label) for c in regions] == [("region", "cond"), ("region", "body")]
    # A value captured from outside a region still flows to its consumer inside.
    body_call = graph.resolve("%y")
    assert graph.cluster_path(body_call) == ["fn:main", op_cluster.id, regions[1].id]


def test_inline_view_copies_callees_per_call_site():
    module = load(SHARED / "gpt_tiny.mlir").module if (SHARED / "gpt_tiny.mlir").exists() else load(NAN_PROGRAM).module
    inline = build_graph(module, inline_calls=True)
    calls = [op for op in module.entry.ops if op.name == "func.call"]
    call_clusters = [c for c in inline.clusters.values() if c.kind == "call"]
    assert len(call_clusters) >= len(calls) > 0
    assert not any(d["mnemonic"] == "func.call" for _, d in inline.graph.nodes(data=True))
    # Data reaches the callee's arguments from the caller's operands and leaves from its return.
    cluster = call_clusters[0]
    arguments = [n for n in cluster.nodes if inline.graph.nodes[n]["kind"] == "argument"]
    assert arguments and all(inline.producers(n) for n in arguments)


def test_inline_expansion_runs_through_the_loop_body_call():
    inline = build_graph(load(NAN_PROGRAM).module, inline_calls=True)
    sqrt = next(n for n, d in inline.graph.nodes(data=True) if d["mnemonic"] == "stablehlo.sqrt")
    assert inline.cluster_path(sqrt)[:3] == ["fn:main", "op:main#1", "region:main#1.1"]
    assert inline.clusters[inline.cluster_path(sqrt)[3]].kind == "call"
    paths = inline.paths(inline.resolve("%x"), inline.resolve("%sum"))
    assert paths and paths[0][0] == inline.resolve("%x") and paths[0][-1] == inline.resolve("%sum")


def test_function_choice_and_errors():
    module = load(NAN_PROGRAM).module
    assert set(c.function for c in build_graph(module, function="update").clusters.values()) == {"update"}
    assert {c.function for c in build_graph(module, function="main").clusters.values()} == {"main", "update"}
    with pytest.raises(GraphError, match=r"no function @nope \(functions: @main, @update\)"):
        build_graph(module, function="nope")
    graph = build_graph(module)
    with pytest.raises(GraphError, match="no op or argument named %zz"):
        graph.resolve("%zz")
    with pytest.raises(GraphError, match="not a value name"):
        graph.resolve("sqrt")


def test_queries_producers_consumers_neighbourhood_paths():
    graph = build_graph(load(NAN_PROGRAM).module)
    d, s = graph.resolve("@update:%d"), graph.resolve("@update:%s")
    assert graph.consumers(d) == [s]
    assert set(graph.producers(d)) == {graph.resolve("@update:%a"), graph.resolve("@update:%b")}
    assert graph.neighbourhood(s, 0) == {s}
    ret = graph.consumers(s)[0]
    assert graph.graph.nodes[ret]["mnemonic"] == "func.return"
    assert graph.neighbourhood(s, 1) == {s, d, ret}
    assert graph.paths(s, d) == []
    assert graph.paths(d, s) == [[d, s]]


def test_collapse_and_expand_are_exact_inverses():
    graph = build_graph(load(NAN_PROGRAM).module)
    loop_cluster = graph.cluster_of(graph.resolve("%r"))
    folded = graph.collapse(loop_cluster)
    loop = folded.resolve("%r")
    assert folded.graph.nodes[loop]["collapsed"] == loop_cluster
    assert "ops inside" in folded.graph.nodes[loop]["label"][-1]
    assert not any(c.startswith("region:main#1.") for c in folded.clusters)
    # The loop's body used %x from outside only through its operands: edges in stay on the op.
    assert set(folded.producers(loop)) == {folded.resolve("%c0"), folded.resolve("%x")}
    back = folded.expand(loop_cluster)
    assert back.graph.number_of_nodes() == graph.graph.number_of_nodes()
    assert sorted(back.graph.edges(keys=True)) == sorted(graph.graph.edges(keys=True))
    with pytest.raises(GraphError, match="no cluster"):
        graph.collapse("fn:nowhere")


def test_collapsed_function_becomes_one_box_with_its_edges():
    graph = build_graph(load(NAN_PROGRAM).module, inline_calls=True)
    call = next(c for c in graph.clusters.values() if c.kind == "call")
    folded = graph.collapse(call.id)
    box = f"collapsed:{call.id}"
    data = folded.graph.nodes[box]
    assert data["kind"] == "collapsed" and data["count"] == 5
    assert data["label"][0].startswith("%y = func.call")
    assert len(folded.producers(box)) == 2 and len(folded.consumers(box)) == 1


def test_focus_keeps_the_neighbourhood_and_its_clusters():
    graph = build_graph(load(NAN_PROGRAM).module)
    sqrt = graph.resolve("@update:%s")
    focused = graph.focus(sqrt, 1)
    assert set(focused.graph.nodes) == graph.neighbourhood(sqrt, 1)
    assert list(focused.clusters) == ["fn:update"]


def test_name_stacks_group_ops_into_layers():
    lines = []
    x = "%arg0"
    for layer in range(2):
        for i, scope in enumerate(("attn", "attn", "mlp", "mlp")):
            name = f"%l{layer}_{i}"
            lines.append(f'{name} = stablehlo.tanh {x} : tensor<4xf32> loc("jit(f)/layer_{layer}/{scope}/tanh"("model.py":{10 + i}:3))')
            x = name
    lines.append(f'%out = stablehlo.negate {x} : tensor<4xf32> loc("jit(f)/neg"("model.py":20:3))')
    text = "func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {\n" + "\n".join(lines) + "\nreturn %out : tensor<4xf32>\n}\n"
    graph = build_graph(load(text).module)
    group_list = [c for c in graph.clusters.values() if c.kind == "group"]
    # The two layers hold the same ops: name-stack siblings alike up to their numbers are repeats.
    assert sorted(c.label for c in group_list) == ["attn", "attn", "layer_0 (1 of 2)", "layer_1 (2 of 2)", "mlp", "mlp"]
    groups = {c.label: c for c in group_list}
    layer0 = groups["layer_0 (1 of 2)"]
    assert layer0.fold == "repeat" and groups["attn"].fold == "names"
    children = [graph.clusters[c] for c in layer0.children]
    assert [c.label for c in children] == ["attn", "mlp"]
    # %arg0 is drawn next to its first use, inside layer_0/attn.
    assert [graph.graph.nodes[n]["name"] for n in children[0].nodes] == ["%arg0", "%l0_0", "%l0_1"]
    # The op outside every layer stays directly in the function.
    assert graph.cluster_of(graph.resolve("%out")) == "fn:main"


def test_repeated_structure_groups_a_model_without_locations():
    layer = """
    %{a} = stablehlo.multiply %{x}, %{x} : tensor<4xf32>
    %{b} = stablehlo.add %{a}, %{x} : tensor<4xf32>
    %{c} = stablehlo.tanh %{b} : tensor<4xf32>
    %{d} = stablehlo.negate %{c} : tensor<4xf32>"""
    body, x = [], "arg0"
    for i in range(3):
        names = {k: f"{k}{i}" for k in "abcd"}
        body.append(layer.format(x=x, **names))
        x = names["d"]
    text = "func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {" + "".join(body) + f"\n  return %{x} : tensor<4xf32>\n}}\n"
    graph = build_graph(load(text).module)
    groups = [c for c in graph.clusters.values() if c.kind == "group"]
    assert [g.label for g in groups] == ["repeat 1 of 3", "repeat 2 of 3", "repeat 3 of 3"]
    assert all(g.fold == "repeat" for g in groups)
    assert [[graph.graph.nodes[n]["name"] for n in g.nodes] for g in groups] == [
        ["%arg0", "%a0", "%b0", "%c0", "%d0"],  # the argument sits with its first use
        ["%a1", "%b1", "%c1", "%d1"],
        ["%a2", "%b2", "%c2", "%d2"],
    ]


def test_tandem_repeat_finder():
    assert find_tandem_repeat([1, 2, 3] * 4) == (0, 3, 4)
    assert find_tandem_repeat([9, 1, 2, 3, 4, 1, 2, 3, 4, 8]) == (1, 4, 2)
    assert find_tandem_repeat([1, 2, 3, 4, 5, 6]) is None


def test_call_graph_counts_call_sites():
    module = load(NAN_PROGRAM).module
    calls = call_graph(module)
    assert calls["main"]["update"]["count"] == 1
    assert symbol_name(next(op for op in module.walk() if op.name == "func.call").attr("callee")) == "update"


def test_labels_show_key_attributes_and_small_constants():
    text = """func.func @main(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<4x2xf32> {
      %c = stablehlo.constant dense<[1.5, 2.0]> : tensor<2xf32>
      %z = stablehlo.constant dense<0.0> : tensor<16x16xf32>
      %big = stablehlo.constant dense<[1, 2, 3, 4, 5, 6, 7, 8, 9]> : tensor<9xi32>
      %d = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
      %t = stablehlo.transpose %d, dims = [1, 0] : (tensor<2x4xf32>) -> tensor<4x2xf32>
      return %t : tensor<4x2xf32>
    }"""
    ops = {op.results[0].name: op for op in load(text).module.walk() if op.results and op.name != "func.func"}
    assert op_label(ops["%c"]) == ["%c = constant", "[1.5, 2]"]
    assert key_attributes(ops["%z"]) == ["splat 0"]
    assert key_attributes(ops["%big"]) == []
    assert op_label(ops["%d"]) == ["%d = dot_general", "contract=[1]x[0]"]
    assert op_label(ops["%t"]) == ["%t = transpose", "perm=[1,0]"]
    assert short_type(ops["%t"].results[0].type) == "4x2xf32"
    assert constant_text(ops["%c"].attr("value")) == "[1.5, 2]"
