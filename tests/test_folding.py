"""Everything folded until asked: groups by name stack, repeats and chunks at any program size,
bounded fan-out, arguments beside their first use, export's folded views and a focus that stays
in its function."""
from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import numpy as np
import pytest

from hlodbg.cli import main
from hlodbg.layouts import repeats
from hlodbg.layouts.chunking import chunk_count, cut_points
from hlodbg.layouts.export import graph_view
from hlodbg.layouts.graph import build_graph
from hlodbg.layouts.grouping import MAX_CLUSTER_ITEMS
from hlodbg.layouts.repeats import find_tandem_repeat
from hlodbg.program import load

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.usefixtures("private_layout_cache")


def _scale_programs():
    spec = importlib.util.spec_from_file_location("scale_programs", ROOT / "benchmarks" / "scale_programs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SCALE = _scale_programs()


def _program(ops: int, locations: bool):
    return load(SCALE.layered_program(ops, locations=locations)).module


def _fan_out(graph) -> dict[str, int]:
    return {cid: len(c.nodes) + len(c.children) for cid, c in graph.clusters.items()}


def _first_user(graph, node: str) -> str:
    """The consumer of a node that comes first in program order."""
    return min(graph.consumers(node), key=lambda n: graph.graph.nodes[n]["line"])


def _flat_program(ops: int, seed: int = 1) -> str:
    """One long chain of unary ops picked at random: no names, no repeated layers."""
    rng = np.random.default_rng(seed)
    mnemonics = ["tanh", "negate", "exponential", "sine", "cosine", "abs", "sqrt", "floor"]
    lines, x = [], "%arg0"
    for i in range(ops):
        lines.append(f"  %v{i} = stablehlo.{mnemonics[rng.integers(len(mnemonics))]} {x} : tensor<4xf32>")
        x = f"%v{i}"
    return "func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {\n" + "\n".join(lines) + f"\n  return {x} : tensor<4xf32>\n}}\n"


# --- repeat detection ---------------------------------------------------------------------
def test_tandem_repeats_are_found_among_few_candidate_periods(monkeypatch):
    checked = []
    original = repeats.repeat_at_period
    monkeypatch.setattr(repeats, "repeat_at_period", lambda seq, period: checked.append(period) or original(seq, period))
    layer = list(range(10, 27))  # 17 ops a layer, as a generated layer
    signatures = [1, 2, 3] + layer * 5_882 + [4, 5]  # 100,000 ops
    assert find_tandem_repeat(signatures) == (3, 17, 5_882)
    # Each candidate is one linear pass: a handful of them, not one per possible period.
    assert 1 <= len(checked) <= repeats.CANDIDATE_PERIODS


def test_tandem_repeats_with_repeated_ops_inside_a_unit_and_none_in_noise():
    unit = [1, 2, 1, 3, 1, 2, 4]  # op 1 three times a unit, op 2 twice
    assert find_tandem_repeat([9] + unit * 12 + [8]) == (1, 7, 12)
    rng = np.random.default_rng(0)
    noise = rng.integers(0, 1_000_000, 50_000)
    assert find_tandem_repeat(noise) is None


# --- chunking -----------------------------------------------------------------------------
def test_chunks_are_full_and_cut_where_few_values_cross():
    # The chunks a user opens to read ops are full; the levels above share them out evenly,
    # so a 100k-op program folded is not two boxes.
    assert chunk_count(5_880, 60) == 10  # 10 chunks of about 10 chunks of 60
    assert chunk_count(588, 60) == 10 and chunk_count(3_601, 60) == 8  # 8 chunks of about 8 chunks of 60
    assert chunk_count(600, 60) == 10
    assert chunk_count(129, 60) == 3
    assert chunk_count(100_000, 60) == 41  # 41 x 41 chunks of about 60
    costs = [5] * 200
    costs[52] = 0  # one cheap place near the first even cut (50)
    cuts = cut_points([1] * 200, costs, 60)  # 4 chunks of about 50
    assert cuts == [52, 100, 150]
    assert cut_points([1] * 60, [0] * 60, 60) == []


@pytest.mark.parametrize("ops,locations", [(1_000, True), (1_000, False), (10_000, True), (10_000, False)])
def test_generated_programs_fold_into_repeats_within_the_fan_out_bound(ops, locations):
    graph = build_graph(_program(ops, locations))
    layers = SCALE.layers_for(ops)
    fan_out = _fan_out(graph)
    assert max(fan_out.values()) <= MAX_CLUSTER_ITEMS
    repeated = [c for c in graph.clusters.values() if c.fold == "repeat"]
    if locations:  # layer_0 .. layer_N hold the same ops: name-stack repeats
        assert sorted(c.label for c in repeated) == sorted(f"layer_{i} ({i + 1} of {layers})" for i in range(layers))
    else:
        assert sorted(c.label for c in repeated) == sorted(f"repeat {i + 1} of {layers}" for i in range(layers))
    # Every layer holds one layer's ops: its dot_general and both reduces.
    for cluster in repeated:
        ops_inside = [graph.graph.nodes[n]["mnemonic"] for n in graph.cluster_nodes(cluster.id)]
        assert ops_inside.count("stablehlo.dot_general") == 1 and ops_inside.count("stablehlo.reduce") == 2
    main_cluster = graph.clusters["fn:main"]
    assert len(main_cluster.nodes) + len(main_cluster.children) <= MAX_CLUSTER_ITEMS
    chunks = [c for c in graph.clusters.values() if c.fold == "chunk"]
    assert bool(chunks) == (layers > MAX_CLUSTER_ITEMS)
    for chunk in chunks:  # chunks of layers name their first and last layer
        assert re.fullmatch(r"layer_\d+ … layer_\d+" if locations else r"repeats [\d,]+–[\d,]+ of [\d,]+", chunk.label), chunk.label


@pytest.mark.parametrize("locations", [True, False])
def test_arguments_sit_beside_their_first_use(locations):
    graph = build_graph(_program(10_000, locations))
    arguments = [n for n, d in graph.graph.nodes(data=True) if d["kind"] == "argument" and d["function"] == "main" and "." not in n]
    assert len(arguments) == 1 + 2 * SCALE.weight_count(10_000)
    for node in arguments:
        assert graph.cluster_of(node) == graph.cluster_of(_first_user(graph, node)), node
    assert not any(graph.graph.nodes[n]["kind"] == "argument" for n in graph.clusters["fn:main"].nodes)


def test_a_flat_function_is_chunked_in_program_order_at_every_level():
    graph = build_graph(load(_flat_program(5_000)).module)
    fan_out = _fan_out(graph)
    assert max(fan_out.values()) <= MAX_CLUSTER_ITEMS
    main_cluster = graph.clusters["fn:main"]
    top = [graph.clusters[c] for c in main_cluster.children]
    assert 2 <= len(top) <= MAX_CLUSTER_ITEMS and all(c.fold == "chunk" for c in top)
    # Chunks of chunks, in program order, named by their first and last values: "%v0 … %v…",
    # then on where the last one stopped.
    numbers = [tuple(int(x) for x in re.fullmatch(r"%v(\d+) … %v(\d+)", c.label).groups()) for c in top]
    assert numbers[0][0] == 0 and numbers[-1][1] == 4_999
    assert all(later[0] == earlier[1] + 1 for earlier, later in zip(numbers, numbers[1:]))
    assert any(graph.clusters[c].fold == "chunk" for c in top[0].children)


def test_a_constant_no_name_places_goes_to_its_first_use():
    lines = ['%k = stablehlo.constant dense<2.0> : tensor<4xf32> loc("jit(f)/constant"("m.py":1:1))']
    x = "%arg0"
    for layer in range(2):
        for i, mnemonic in enumerate(("multiply", "add", "multiply")):
            name = f"%l{layer}_{i}"
            lines.append(f'{name} = stablehlo.{mnemonic} {x}, %k : tensor<4xf32> loc("jit(f)/layer_{layer}/{mnemonic}"("m.py":{2 + i}:1))')
            x = name
    text = "func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {\n" + "\n".join(lines) + f"\nreturn {x} : tensor<4xf32>\n}}\n"
    graph = build_graph(load(text).module)
    constant = graph.resolve("%k")
    assert graph.clusters[graph.cluster_of(constant)].label == "layer_0 (1 of 2)"
    assert graph.cluster_of(constant) == graph.cluster_of(graph.resolve("%l0_0"))


# --- export -------------------------------------------------------------------------------
def test_collapse_groups_draws_each_function_as_its_top_groups(tmp_path):
    path = tmp_path / "p.mlir"
    path.write_text(SCALE.layered_program(1_000))
    layers = SCALE.layers_for(1_000)
    out = tmp_path / "g.dot"
    assert main(["export", str(path), "--collapse", "groups", "-o", str(out)]) == 0
    dot = out.read_text()
    assert dot.count("peripheries=2") == layers  # a folded box per layer
    assert "layer_0 (1 of" in dot and f"layer_{layers - 1} ({layers} of {layers})" in dot
    view = graph_view(load(path).module, collapse="groups")
    kinds = sorted(d["kind"] for _, d in view.graph.nodes(data=True))
    assert kinds == ["collapsed"] * layers + ["return"]
    # Between two layers: the residual value and nothing else.
    first, second = (f"collapsed:{c}" for c in view.base.clusters["fn:main"].children[:2])
    assert view.graph.number_of_edges(first, second) == 1


def test_collapse_groups_of_a_big_program_stays_one_small_scene(tmp_path):
    module = _program(10_000, False)
    view = graph_view(module, collapse="groups")
    assert view.node_count <= MAX_CLUSTER_ITEMS + 1
    assert all(d["kind"] in ("collapsed", "return") for _, d in view.graph.nodes(data=True))
    # The weights read again 256 layers later: one edge per pair of boxes, counting its values.
    bundled = [d for *_, d in view.graph.edges(data=True) if d.get("values")]
    assert bundled and all(d["type"] == f"{d['values']} values" for d in bundled)
    assert view.graph.number_of_edges() < 4 * view.node_count


def test_collapse_repeats_folds_each_layer_and_leaves_the_rest_open(tmp_path):
    path = tmp_path / "n.mlir"
    path.write_text(SCALE.layered_program(1_000, locations=False))
    layers = SCALE.layers_for(1_000)
    out = tmp_path / "g.json"
    assert main(["export", str(path), "--collapse", "repeats", "-o", str(out)]) == 0
    graph = json.loads(out.read_text())
    folded = [n for n in graph["nodes"] if n["kind"] == "collapsed"]
    assert sorted(n["label"][0] for n in folded) == sorted(f"repeat {i + 1} of {layers}" for i in range(layers))
    assert all(n["count"] == 18 + 2 * 2 for n in folded)  # a layer's ops and its two reduces' bodies
    assert [n["kind"] for n in graph["nodes"] if n["kind"] != "collapsed"] == ["return"]


def test_collapse_help_names_the_folded_modes(capsys):
    with pytest.raises(SystemExit):
        main(["export", "--help"])
    help_text = capsys.readouterr().out
    assert "repeats" in help_text and "groups" in help_text


CALLS = """
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = stablehlo.tanh %x : tensor<4xf32>
  %b = func.call @f(%a) : (tensor<4xf32>) -> tensor<4xf32>
  %c = stablehlo.negate %b : tensor<4xf32>
  %d = func.call @f(%c) : (tensor<4xf32>) -> tensor<4xf32>
  return %d : tensor<4xf32>
}
func.func private @f(%y: tensor<4xf32>) -> tensor<4xf32> {
  %p = stablehlo.exponential %y : tensor<4xf32>
  %q = stablehlo.sqrt %p : tensor<4xf32>
  return %q : tensor<4xf32>
}
"""


def test_focus_stays_inside_the_function_it_names():
    module = load(CALLS).module
    view = graph_view(module, focus="@f:%p", radius=5)
    assert {d["function"] for _, d in view.graph.nodes(data=True)} == {"f"}
    assert sorted(d["name"] for _, d in view.graph.nodes(data=True)) == ["", "%p", "%q", "%y"]
    # From the caller's side, a call op's neighbourhood stays in @main.
    view = graph_view(module, focus="@main:%b", radius=5)
    assert {d["function"] for _, d in view.graph.nodes(data=True)} == {"main"}


def test_focus_in_the_inline_view_stays_in_its_call_instance():
    module = load(CALLS).module
    full = graph_view(module, collapse="none")
    second = next(cid for cid, c in full.clusters.items() if c.kind == "call" and "main#3" in cid)
    inside = next(n for n in full.cluster_nodes(second) if full.graph.nodes[n]["name"] == "%p")
    view = full.focus(inside, 5)
    assert set(view.graph.nodes) == set(full.cluster_nodes(second))


def test_repeat_units_start_where_few_values_cross():
    # The op before the first layer is a subtract, as each layer's last op: the run of repeated
    # signatures starts one op early, but the layers start where only their input crosses.
    lines = ["%x0 = stablehlo.subtract %arg0, %arg0 : tensor<4xf32>"]
    for i in range(4):
        lines += [f"%a{i} = stablehlo.multiply %x{i}, %x{i} : tensor<4xf32>",
                  f"%b{i} = stablehlo.add %a{i}, %x{i} : tensor<4xf32>",
                  f"%x{i + 1} = stablehlo.subtract %b{i}, %a{i} : tensor<4xf32>"]
    text = "func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {\n" + "\n".join(lines) + "\nreturn %x4 : tensor<4xf32>\n}\n"
    graph = build_graph(load(text).module)
    units = [c for c in graph.clusters.values() if c.fold == "repeat"]
    assert [[graph.graph.nodes[n]["name"] for n in c.nodes] for c in units] == [[f"%a{i}", f"%b{i}", f"%x{i + 1}"] for i in range(4)]
    assert graph.cluster_of(graph.resolve("%x0")) == "fn:main"


def test_json_export_says_what_kind_of_group_each_cluster_is(tmp_path):
    path = tmp_path / "n.mlir"
    path.write_text(SCALE.layered_program(100, locations=False))
    out = tmp_path / "g.json"
    assert main(["export", str(path), "-o", str(out)]) == 0
    clusters = json.loads(out.read_text())["clusters"]
    folds = [c.get("fold") for c in clusters if c["kind"] == "group"]
    assert folds == ["repeat"] * SCALE.layers_for(100)
    assert all("fold" not in c for c in clusters if c["kind"] != "group")


def test_a_clipped_group_label_keeps_its_repeat_count():
    from hlodbg.layouts.labels import MAX_LABEL_CHARS, clip_group_label

    long = "transpose(jvp(layer_11))/jvp(layer_11)/attention/scores (1 of 12)"
    clipped = clip_group_label(long)
    assert len(clipped) <= MAX_LABEL_CHARS and clipped.endswith("… (1 of 12)") and clipped.startswith("transpose(jvp(")
    assert clip_group_label("layer_3 (4 of 12)") == "layer_3 (4 of 12)"
    assert clip_group_label("x" * 80) == "x" * (MAX_LABEL_CHARS - 1) + "…"


def test_a_chunk_inside_a_layer_is_named_by_the_values_on_its_boxes():
    """Two identical 80-op layers without names: each "repeat i of 2" is cut into chunks, and a
    chunk reads "%first … %last" after the values its boxes show, not the ops' positions in the
    function ("ops 10–39" inside "repeat 1 of 2" matched nothing on screen)."""
    mnemonics = np.random.default_rng(3).choice(["tanh", "negate", "sine", "abs", "floor", "cosine", "exponential", "sqrt", "log", "ceil"], 80)
    lines, x = [], "%arg0"
    for layer in range(2):
        for i in range(80):
            name = f"%l{layer}_{i}"
            lines.append(f"  {name} = stablehlo.{mnemonics[i]} {x} : tensor<4xf32>")
            x = name
    text = "func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {\n" + "\n".join(lines) + f"\n  return {x} : tensor<4xf32>\n}}\n"
    graph = build_graph(load(text).module)

    def inside(cid: str) -> list[str]:
        cluster = graph.clusters[cid]
        return list(cluster.nodes) + [n for child in cluster.children for n in inside(child)]

    repeats = [c for c in graph.clusters.values() if c.fold == "repeat"]
    assert [c.label for c in repeats] == ["repeat 1 of 2", "repeat 2 of 2"]
    for layer, repeat in enumerate(repeats):
        chunks = [graph.clusters[c] for c in repeat.children]
        assert len(chunks) >= 2 and all(c.fold == "chunk" for c in chunks)
        for chunk in chunks:
            first, last = re.fullmatch(r"(%l\d+_\d+) … (%l\d+_\d+)", chunk.label).groups()
            shown = {graph.graph.nodes[n]["label"][0].split(" = ")[0] for n in inside(chunk.id)}
            assert {first, last} <= shown and first.startswith(f"%l{layer}_"), (chunk.label, sorted(shown))


@pytest.mark.parametrize("collapse", ["groups", "repeats"])
def test_focus_on_an_op_inside_a_folded_group_draws_that_op(collapse):
    """`--focus %N --collapse groups` drew the neighbourhood of the folded layer box around %N
    (%N itself nowhere); the groups around the focused op now stay open, the others folded."""
    module = _program(1_000, locations=True)
    base = build_graph(module)
    inner = next(n for n, d in base.graph.nodes(data=True) if d["kind"] == "op" and d["function"] == "main"
                 and base.clusters[base.cluster_of(n)].fold is not None and "layer_3" in base.clusters[base.cluster_of(n)].label)
    name = base.graph.nodes[inner]["name"]
    view = graph_view(module, collapse=collapse, focus=name, radius=1)
    assert inner in view.graph.nodes and view.cluster_of(inner) == base.cluster_of(inner)  # inside its open layer
