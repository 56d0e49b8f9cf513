"""What the user sees of a program that came from XLA HLO text: fusions as clusters you can open,
HLO's bookkeeping tuples folded, layouts on edges, the compiler's facts in the inspector, per-device
shards on the devices pane, HLO highlighting in the source pane.

The first tests carry the HLO facts in MLIR text (the IR is the same whatever language spelled it),
so they pin the views down independently of the HLO frontend; the last ones open real HLO from the
JAX corpus.
"""
from __future__ import annotations

import shlex

import numpy as np
import pytest
from pygments import lex
from pygments.token import Comment, Keyword, Name

import hlodbg
from hlodbg.cli import main as cli_main
from hlodbg.engine.ir.attributes import UnitAttr
from hlodbg.engine.ir.errors import SourcePos
from hlodbg.engine.ir.locations import describe, name_stack
from hlodbg.layouts.export import graph_view
from hlodbg.layouts.graph import build_graph
from hlodbg.layouts.labels import node_tooltip
from hlodbg.layouts.op_facts import compiler_facts, device_shard, fact_lines
from hlodbg.layouts.xla_shapes import special_layout, tuple_elements
from hlodbg.ui.app import HlodbgApp
from hlodbg.ui.lexer import HloLexer, StableHLOLexer, lexer_for
from hlodbg.ui.widgets.graph_canvas import GraphCanvas
from hlodbg.ui.widgets.grid_view import GridView
from hlodbg.ui.widgets.inspector import TensorInspector
from hlodbg.ui.widgets.source_view import SourceView

from .pilot import press, settle

# A post-optimization module as the HLO frontend lowers it: a fusion calling its private fused
# computation, an op of two results packed into a tuple for HLO, and the entry's tuple root
# returned through implicit element reads.
FUSED = """
module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func private @fused_computation(%param_0: tensor<4x8xf32>, %param_1: tensor<8x16xf32>) -> tensor<4x16xf32> {
    %dot.1 = stablehlo.dot_general %param_0, %param_1, contracting_dims = [1] x [0] : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
    %tanh.1 = stablehlo.tanh %dot.1 {xla_shape = "f32[4,16]{0,1}"} : tensor<4x16xf32>
    return %tanh.1 : tensor<4x16xf32>
  }
  func.func public @main(%x: tensor<4x8xf32>, %y: tensor<8x16xf32>) -> (tensor<4x16xf32>, tensor<16xf32>, tensor<16xf32>) {
    %fusion.1 = "hlo.fusion"(%x, %y) {callee = @fused_computation, kind = "kLoop", xla_shape = "f32[4,16]{0,1}", hlo.metadata = "{op_name=\\"jit(f)/tanh\\"}", hlo.backend_config = "{\\"outer_dimension_partitions\\":[]}", hlo.extra = {statistics = "{visualization_type=1}"}} : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32> loc(#tanh)
    %zero = stablehlo.constant dense<0.0> : tensor<f32>
    %r:2 = stablehlo.reduce(%fusion.1 init: %zero), (%fusion.1 init: %zero) across dimensions = [0] {xla_shape = "(f32[16]{0}, f32[16]{0})"} : (tensor<4x16xf32>, tensor<4x16xf32>, tensor<f32>, tensor<f32>) -> (tensor<16xf32>, tensor<16xf32>)
      reducer(%a: tensor<f32>, %b: tensor<f32>) (%c: tensor<f32>, %d: tensor<f32>) {
        %sum = stablehlo.add %a, %b : tensor<f32>
        %most = stablehlo.maximum %c, %d : tensor<f32>
        stablehlo.return %sum, %most : tensor<f32>, tensor<f32>
      }
    %reduce.2 = stablehlo.tuple %r#0, %r#1 {hlo.packs_results} : tuple<tensor<16xf32>, tensor<16xf32>>
    %sums = stablehlo.get_tuple_element %reduce.2[0] : (tuple<tensor<16xf32>, tensor<16xf32>>) -> tensor<16xf32>
    %root = stablehlo.tuple %fusion.1, %sums, %r#1 : tuple<tensor<4x16xf32>, tensor<16xf32>, tensor<16xf32>>
    %g0 = stablehlo.get_tuple_element %root[0] {hlo.implicit} : (tuple<tensor<4x16xf32>, tensor<16xf32>, tensor<16xf32>>) -> tensor<4x16xf32>
    %g1 = stablehlo.get_tuple_element %root[1] {hlo.implicit} : (tuple<tensor<4x16xf32>, tensor<16xf32>, tensor<16xf32>>) -> tensor<16xf32>
    %g2 = stablehlo.get_tuple_element %root[2] {hlo.implicit} : (tuple<tensor<4x16xf32>, tensor<16xf32>, tensor<16xf32>>) -> tensor<16xf32>
    return %g0, %g1, %g2 : tensor<4x16xf32>, tensor<16xf32>, tensor<16xf32>
  }
}
#file = loc("/work/model.py":8:6)
#tanh = loc("jit(f)/tanh"(#file))
"""

SHARDED = """
module @jit_g attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%x: tensor<8x6xf32>) -> tensor<8x6xf32> {
    %abs.1 = stablehlo.abs %x {mhlo.sharding = "{devices=[2,2]<=[4]}"} : tensor<8x6xf32>
    %sum.1 = "stablehlo.all_reduce"(%abs.1) ({
      ^bb0(%a: tensor<f32>, %b: tensor<f32>):
        %s = stablehlo.add %a, %b : tensor<f32>
        stablehlo.return %s : tensor<f32>
    }) {replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>, channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, use_global_device_ids, mhlo.sharding = "{devices=[1,2,2]<=[4] last_tile_dim_replicate}"} : (tensor<8x6xf32>) -> tensor<8x6xf32>
    return %sum.1 : tensor<8x6xf32>
  }
}
"""

pytestmark = pytest.mark.usefixtures("private_hlodbg_dirs")


def _ops(module, function="main"):
    return {op.results[0].name if op.results else op.name: op for op in module.functions[function].ops}


# --- the graph ------------------------------------------------------------------------------------
def test_a_fusion_is_a_cluster_holding_its_fused_computation():
    module = hlodbg.load(FUSED).module
    graph = build_graph(module)
    assert [c.label for c in graph.clusters.values() if c.kind == "function"] == ["func @main"]  # not drawn apart
    fusion = _ops(module)["%fusion.1"]
    (node,) = graph.nodes_of(fusion)
    cluster = graph.clusters[graph.cluster_of(node)]
    assert cluster.kind == "op" and cluster.label == "%fusion.1 = fusion kLoop"
    assert graph.graph.nodes[node]["label"] == ["%fusion.1 = fusion kLoop", "@fused_computation"]
    inner = module.functions["fused_computation"].ops
    for op in inner:
        (inside,) = graph.nodes_of(op)
        assert graph.cluster_path(inside)[-1] == cluster.id
    # Data flows as it runs: operands into the fused parameters, the ROOT into the fusion's node
    # (the fused computation's return is that node), the fusion's result on to its users.
    dot, tanh, ret = inner
    assert graph.nodes_of(ret) == [node]
    params = graph.producers(graph.nodes_of(dot)[0])
    assert [graph.graph.nodes[graph.producers(p)[0]]["name"] for p in params] == ["%x", "%y"]
    assert graph.producers(node) == graph.nodes_of(tanh)
    # Folded, the fusion reads as one box with the count of ops inside; its edges stay.
    folded = graph.collapse(cluster.id)
    box = folded.shown_as(node)
    assert folded.graph.nodes[box]["label"] == ["%fusion.1 = fusion kLoop", "@fused_computation", "▸ 2 ops inside"]
    assert {folded.graph.nodes[u]["name"] for u in folded.producers(box)} == {"%x", "%y"}
    assert not any(d.get("captured") for _, _, d in folded.graph.in_edges(box, data=True))  # operands, drawn solid
    assert folded.nodes_of(inner[0]) == [] and folded.nodes_of(fusion) == [box]


def test_a_function_called_by_func_call_is_still_drawn_apart():
    text = FUSED.replace('"hlo.fusion"(%x, %y) {callee = @fused_computation, kind = "kLoop",', "func.call @fused_computation(%x, %y) {")
    text = text.replace(": (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32> loc(#tanh)", ": (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32> loc(#tanh)", 1)
    graph = build_graph(hlodbg.load(text).module)
    assert sorted(c.label for c in graph.clusters.values() if c.kind == "function") == ["func @fused_computation", "func @main"]


def test_hlo_packing_tuples_and_implicit_result_reads_are_folded_into_their_producer():
    module = hlodbg.load(FUSED).module
    graph = build_graph(module)
    ops = _ops(module)
    (reduce_node,) = graph.nodes_of(ops["%r#0"])
    assert graph.nodes_of(ops["%reduce.2"]) == [reduce_node]  # the packing tuple is drawn by its op
    (root_node,) = graph.nodes_of(ops["%root"])
    for name in ("%g0", "%g1", "%g2"):
        assert graph.nodes_of(ops[name]) == [root_node]
    mnemonics = sorted(d["mnemonic"] for _, d in graph.graph.nodes(data=True) if d["function"] == "main" and d["kind"] == "op")
    assert mnemonics.count("stablehlo.tuple") == 1 and mnemonics.count("stablehlo.get_tuple_element") == 1
    # The element read of the packed tuple takes its value from the reduce's first result.
    (gte_node,) = graph.nodes_of(ops["%sums"])
    (edge,) = [d for u, v, d in graph.graph.in_edges(gte_node, data=True)]
    assert edge["result"] == 0 and edge["value"] == "%reduce.2"
    # The entry's return reads the root tuple directly.
    (ret,) = [n for n, d in graph.graph.nodes(data=True) if d["kind"] == "return" and d["function"] == "main" and graph.cluster_of(n) == "fn:main"]
    assert graph.producers(ret) == [root_node]


def test_edges_carry_layouts_that_are_not_the_default():
    module = hlodbg.load(FUSED).module
    graph = build_graph(module)
    types = {(graph.graph.nodes[u]["name"], d["value"]): d["type"] for u, v, d in graph.data_edges()}
    assert types[("%fusion.1", "%fusion.1")] == "4x16xf32{0,1}"
    assert types[("%tanh.1", "%tanh.1")] == "4x16xf32{0,1}"
    assert types[("%dot.1", "%dot.1")] == "4x16xf32"  # no xla_shape: nothing to say
    assert types[("%r:2", "%reduce.2")] == "(16xf32, 16xf32)"


def test_layout_texts():
    assert tuple_elements("(f32[8]{0}, (s32[], f32[2,2]{0,1}), pred[])") == ["f32[8]{0}", "(s32[], f32[2,2]{0,1})", "pred[]"]
    assert tuple_elements("f32[8]{0}") == ["f32[8]{0}"] and tuple_elements("()") == []
    assert special_layout("f32[4,16]{1,0}") is None and special_layout("f32[]") is None and special_layout("f32[4]") is None
    assert special_layout("f32[4,16]{0,1}") == "{0,1}"
    assert special_layout("f32[8,128]{1,0:T(8,128)}") == "{1,0:T(8,128)}"
    assert special_layout("f32[8]{0:S(1)}") == "{0:S(1)}"


def test_export_folds_fusions_of_a_big_graph(monkeypatch):
    from hlodbg.layouts import export

    module = hlodbg.load(FUSED).module
    fusion = _ops(module)["%fusion.1"]
    assert graph_view(module).nodes_of(fusion)[0] == "main#0"  # small: drawn open
    monkeypatch.setattr(export, "OPEN_OWNED_CALLS_MAX_NODES", 5)
    view = graph_view(module)
    assert view.nodes_of(fusion) == ["collapsed:op:main#0"]
    assert graph_view(module, collapse="none").nodes_of(fusion) == ["main#0"]


def test_tooltips_give_the_whole_shape_and_metadata():
    module = hlodbg.load(FUSED).module
    graph = build_graph(module)
    (node,) = graph.nodes_of(_ops(module)["%fusion.1"])
    lines = node_tooltip(graph, node)
    assert 'xla_shape = "f32[4,16]{0,1}"' in lines
    assert any(line.startswith("from model.py:8") for line in lines)


# --- the compiler's facts ---------------------------------------------------------------------------
def test_compiler_facts_of_a_fusion():
    fusion = _ops(hlodbg.load(FUSED).module)["%fusion.1"]
    assert compiler_facts(fusion) == [
        ("fusion", "kLoop → @fused_computation"),
        ("shape", "f32[4,16]{0,1}  (layout {0,1})"),
        ("source", "model.py:8"),
        ("backend", '{"outer_dimension_partitions":[]}'),
        ("statistics", "{visualization_type=1}"),
    ]


def test_an_op_without_compiler_facts_has_none():
    ops = _ops(hlodbg.load(FUSED).module)
    assert fact_lines(ops["%zero"]) == [] and fact_lines(None) == []


def test_device_shards_from_the_sharding():
    ops = _ops(hlodbg.load(SHARDED).module)
    assert [device_shard(ops["%abs.1"], d) for d in range(4)] == ["[0:4, 0:3]", "[0:4, 3:6]", "[4:8, 0:3]", "[4:8, 3:6]"]
    assert [device_shard(ops["%sum.1"], d) for d in range(4)] == ["[0:8, 0:3]", "[0:8, 0:3]", "[0:8, 3:6]", "[0:8, 3:6]"]
    assert device_shard(ops["%s"], 0) == ""


# --- the source pane ------------------------------------------------------------------------------------
def test_hlo_highlighting():
    line = ('  ROOT %fusion.2 = f32[8,128]{1,0:T(8,128)} fusion(%p.1, p.2), kind=kLoop, calls=%fused.1, '
            'metadata={op_name="jit(f)/add" source_line=3}, backend_config={"a":{"b":1}}, sharding={replicated}')
    tokens = [(token, text) for token, text in lex(line, HloLexer()) if text.strip()]
    kinds = dict((text, token) for token, text in tokens)
    assert kinds["ROOT"] in Keyword and kinds["%fusion.2"] is Name.Variable
    assert kinds["f32[8,128]"] is Keyword.Type and kinds["{1,0:T(8,128)}"] is Name.Tag
    assert kinds["fusion"] is Name.Builtin and kinds["kind"] is Name.Attribute and kinds["sharding"] is Name.Attribute
    dimmed = "".join(text for token, text in tokens if token in Comment)
    assert dimmed == 'metadata={op_name="jit(f)/add" source_line=3}backend_config={"a":{"b":1}}'
    assert isinstance(lexer_for("hlo"), HloLexer) and isinstance(lexer_for("mlir"), StableHLOLexer)


# --- the debugger ---------------------------------------------------------------------------------------
async def test_the_inspector_shows_a_fusions_facts_and_steps_into_it():
    program = hlodbg.load(FUSED)
    args = [np.ones((4, 8), np.float32), np.ones((8, 16), np.float32)]
    app = HlodbgApp(program, args=args, persist=False)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(app, pilot)
        screen = app.screen
        assert screen.state.op.name == "hlo.fusion"
        text = screen.query_one(TensorInspector).render_text()
        assert "next: %fusion.1 = fusion" in text  # the HLO opcode, as the graph names it
        for line in ("fusion: kLoop → @fused_computation", "shape: f32[4,16]{0,1}  (layout {0,1})", "source: model.py:8", "statistics: {visualization_type=1}"):
            assert line in text
        await press(app, pilot, "s")  # into the fused computation
        assert screen.state.op.name == "stablehlo.dot_general"
        assert screen.state.frames[-1].function == "fused_computation"
        canvas = screen.query_one(GraphCanvas)
        assert canvas.current_node == "main#0/fused_computation#0"  # drawn in the fusion's cluster
        assert "%dot.1 = dot_general" in "\n".join(canvas.visible_text())


async def test_the_devices_pane_shows_each_devices_shard():
    program = hlodbg.load(SHARDED)
    app = HlodbgApp(program, args=[np.arange(48, dtype=np.float32).reshape(8, 6)], memory="256M", persist=False)
    async with app.run_test(size=(180, 50)) as pilot:
        await settle(app, pilot)
        view = app.screen.query_one(GridView)
        assert len(view.cells) == 4  # mhlo.num_partitions picks the grid
        await press(app, pilot, "n")
        assert app.screen.state.op.name == "stablehlo.all_reduce"
        assert "shard [0:8, 3:6]" in view.text_of(2)


# --- programs read from XLA HLO text ------------------------------------------------------------------
# A post-optimization module as XLA prints it (written for this test): a fusion with a transposed
# layout, a reduce through a cloned region, a stack-frame table naming the source line.
SMALL_HLO = """HloModule jit_f, is_scheduled=true, entry_computation_layout={(f32[4,8]{1,0}, f32[8,16]{1,0})->(f32[4,16]{0,1}, f32[])}

FileNames
1 "/work/model.py"

FunctionNames
1 "f"

FileLocations
1 {file_name_id=1 function_name_id=1 line=8 end_line=8 column=6 end_column=28}

StackFrames
1 {file_location_id=1 parent_frame_id=1}

%fused_computation (param_0: f32[4,8], param_1: f32[8,16]) -> f32[4,16] {
  %param_0 = f32[4,8]{1,0} parameter(0)
  %param_1 = f32[8,16]{1,0} parameter(1)
  %dot.1 = f32[4,16]{1,0} dot(%param_0, %param_1), lhs_contracting_dims={1}, rhs_contracting_dims={0}, metadata={op_name="jit(f)/layer/dot_general" stack_frame_id=1}
  ROOT %tanh.1 = f32[4,16]{0,1} tanh(%dot.1), metadata={op_name="jit(f)/layer/tanh" stack_frame_id=1}
}

%region_0 (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %add.0 = f32[] add(%a, %b)
}

ENTRY %main.3 (x.1: f32[4,8], y.1: f32[8,16]) -> (f32[4,16], f32[]) {
  %x.1 = f32[4,8]{1,0} parameter(0), metadata={op_name="x"}
  %y.1 = f32[8,16]{1,0} parameter(1), metadata={op_name="y"}
  %tanh_fusion = f32[4,16]{0,1} fusion(%x.1, %y.1), kind=kLoop, calls=%fused_computation, metadata={op_name="jit(f)/layer/tanh" stack_frame_id=1}, backend_config={"outer_dimension_partitions":[]}
  %zero = f32[] constant(0)
  %bias = f32[4,16]{1,0} broadcast(%zero), dimensions={}
  %sum.1 = f32[] reduce(%tanh_fusion, %zero), dimensions={0,1}, to_apply=%region_0, metadata={op_name="jit(f)/reduce_sum" stack_frame_id=1}
  ROOT %tuple.1 = (f32[4,16]{0,1}, f32[]) tuple(%tanh_fusion, %sum.1)
}
"""


@pytest.fixture
def small_hlo(tmp_path):
    path = tmp_path / "small.hlo"
    path.write_text(SMALL_HLO)
    return path


def test_an_hlo_module_draws_as_the_hlo_reads(small_hlo):
    program = hlodbg.load(small_hlo)
    graph = build_graph(program.module)
    titles = {d["label"][0] for _, d in graph.graph.nodes(data=True) if d["kind"] == "op"}
    # HLO's opcodes where the IR's op differs (broadcast, dot), the fusion kind, the instruction names.
    assert {"%tanh_fusion = fusion kLoop", "%dot.1 = dot", "%bias = broadcast", "%sum.1 = reduce", "%tuple.1 = tuple"} <= titles
    assert [c.label for c in graph.clusters.values() if c.kind == "function"] == ["func @main.3"]
    # The entry's tuple root is returned as it is (its element reads folded into it); the fused
    # ROOT's transposed layout is on its edge into the fusion's node.
    types = {(graph.graph.nodes[u]["name"], graph.graph.nodes[v]["name"]): d["type"] for u, v, d in graph.data_edges()}
    assert types[("%tanh.1", "%tanh_fusion")] == "4x16xf32{0,1}" and types[("%tanh_fusion", "%sum.1")] == "4x16xf32{0,1}"
    assert types[("%dot.1", "%tanh.1")] == "4x16xf32"
    assert sum(1 for _, d in graph.graph.nodes(data=True) if d["mnemonic"] == "stablehlo.get_tuple_element") == 0


@pytest.mark.parametrize("fmt", ["svg", "png", "dot", "json"])
def test_export_of_an_hlo_module(small_hlo, tmp_path, fmt):
    out = tmp_path / f"g.{fmt}"
    assert cli_main(["export", str(small_hlo), "-o", str(out)]) == 0
    data = out.read_bytes()
    assert data
    if fmt in ("svg", "dot", "json"):
        text = data.decode("utf-8")
        assert "%tanh_fusion = fusion kLoop" in text and "4x16xf32{0,1}" in text


async def test_opening_hlo_text_in_the_debugger(small_hlo):
    program = hlodbg.load(small_hlo)
    args = [np.ones((4, 8), np.float32), np.ones((8, 16), np.float32)]
    app = HlodbgApp(program, args=args, persist=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        screen = app.screen
        source = screen.query_one(SourceView)
        assert source.language == "hlo" and isinstance(source._syntax[True].lexer, HloLexer)
        assert source.current_line == 31 and source.line_text(31).lstrip().startswith("%tanh_fusion =")
        text = screen.query_one(TensorInspector).render_text()
        for line in ("fusion: kLoop → @fused_computation", "shape: f32[4,16]{0,1}  (layout {0,1})", "source: model.py:8"):
            assert line in text
        assert source.border_subtitle == "model.py:8 (jit(f)/layer/tanh)"
        await press(app, pilot, "s")  # into the fusion: its first instruction, highlighted in the text
        assert screen.state.op.name == "stablehlo.dot_general" and source.current_line == 18
        canvas = screen.query_one(GraphCanvas)
        assert "%dot.1 = dot" in "\n".join(canvas.visible_text())


def test_name_stacks_group_hlo_exactly_as_they_group_mlir():
    """The same JAX function as MLIR (with locations) and as HLO (with metadata): every op named
    in both sits in the same groups, from the same source line."""
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")
    from jaxlib import _hlo

    def model(x, w):
        for layer in range(2):
            with jax.named_scope(f"layer_{layer}"):
                with jax.named_scope("dense"):
                    x = jnp.tanh(x @ w) + 1.0
                x = x * 2.0
        return x.sum()

    lowered = jax.jit(model).lower(jnp.ones((4, 4), jnp.float32), jnp.ones((4, 4), jnp.float32))
    mlir = lowered.as_text(debug_info=True)
    hlo = lowered.compiler_ir("hlo").get_hlo_module().to_string(_hlo.HloPrintOptions())

    def placed(text: str) -> dict:
        graph = build_graph(hlodbg.load(text).module)
        out = {}
        for node, data in graph.graph.nodes(data=True):
            op = data.get("op")
            if data["kind"] == "op" and op is not None and name_stack(op.location):
                groups = tuple(graph.clusters[c].label for c in graph.cluster_path(node) if graph.clusters[c].kind == "group")
                out.setdefault(name_stack(op.location), set()).add((groups, describe(op.location)))
        return out

    from_mlir, from_hlo = placed(mlir), placed(hlo)
    common = from_mlir.keys() & from_hlo.keys()
    assert len(common) >= 8 and {"jit(model)/layer_1/dense/tanh", "jit(model)/layer_0/mul"} <= common
    assert {name: from_mlir[name] for name in common} == {name: from_hlo[name] for name in common}
    # The two layers hold the same ops: marked as repeats of each other.
    assert ("layer_1 (2 of 2)", "dense") in {groups for placements in from_hlo.values() for groups, _ in placements}


@pytest.mark.parametrize("name", ["mlp", "transformer_block"])
def test_compiled_jax_programs_draw_their_fusions_as_clusters(hlo_corpus_dir, tmp_path, name):
    program = hlodbg.load(hlo_corpus_dir / f"{name}.post.hlo")
    view = graph_view(program.module)
    fusions = [op for op in program.module.entry.ops if op.name == "hlo.fusion"]
    assert fusions
    for fusion in fusions:
        (node,) = view.nodes_of(fusion)
        cluster = view.clusters[view.cluster_of(node)]
        assert cluster.kind == "op" and cluster.label.endswith(f"fusion {fusion.attr('kind')}")
        assert len(view.cluster_nodes(cluster.id)) > 1  # drawn open: the fused computation inside
    assert [c.label for c in view.clusters.values() if c.kind == "function"] == [f"func @{program.module.entry.sym_name}"]
    out = tmp_path / f"{name}.svg"
    assert cli_main(["export", str(hlo_corpus_dir / f"{name}.post.hlo"), "-o", str(out)]) == 0
    assert out.read_text().count("fusion kLoop") >= 2


def test_a_shard_map_program_draws(hlo_corpus_dir):
    """The tuple packing a shard_map's results got its location and position swapped (the graph's
    name-stack grouping then failed on the position)."""
    program = hlodbg.load(hlo_corpus_dir / "spmd_4x2.pre.hlo")
    packed = [op for op in program.module.walk() if isinstance(op.attr("hlo.packs_results"), UnitAttr)]
    assert packed and all(op.pos is not None and not isinstance(op.location, SourcePos) for op in packed)
    assert build_graph(program.module).node_count > 0


@pytest.mark.parametrize("name", ["spmd_8.post", "int_overflow_shifts.pre"])
def test_no_empty_groups_from_ops_folded_away(hlo_corpus_dir, tmp_path, name):
    """Ops the graph folds into other boxes (HLO's implicit element reads and reshapes) repeated
    into "repeat i of n" groups holding no box; Graphviz gave such clusters no bounding box."""
    graph = build_graph(hlodbg.load(hlo_corpus_dir / f"{name}.hlo").module)
    assert all(cluster.nodes or cluster.children for cluster in graph.clusters.values())
    assert cli_main(["export", str(hlo_corpus_dir / f"{name}.hlo"), "-o", str(tmp_path / "g.svg")]) == 0


async def test_serve_opens_hlo_text(small_hlo, monkeypatch):
    """What each browser session of `hlodbg serve prog.hlo` runs: the debugger on the HLO program."""
    from hlodbg.cli import _parser
    from hlodbg.ui_entry import build_app, server_options

    options, _ = server_options(_parser().parse_args(["serve", str(small_hlo)]), lambda: "localhost")
    command = shlex.split(options["command"])
    app = build_app(_parser().parse_args(command[command.index("open"):]))
    assert app.error is None and app.program.frontend.name == "hlo"
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot)
        assert app.screen.query_one(SourceView).language == "hlo"
        assert app.screen.state.op.name == "hlo.fusion"
