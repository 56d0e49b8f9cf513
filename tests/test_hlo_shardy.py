"""Shardy's round-trip form (JAX's pre-optimization HLO of sharded programs) read back into the
Shardy IR the StableHLO form has (engine/syntax/hlo/shardy.py).

The modules here are written in generic MLIR in the shape the HLO lowering gives (custom calls with
`mhlo.frontend_attributes`, `func.call`, the tuple plumbing with `hlo.packs_results`), so the
rewrite is tested on its own; tests marked needs_hlo_frontend read the same programs as HLO text.
"""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from hlodbg.engine.ir.attributes import SdyManualAxes, SdyMesh, SdyShardingPerValue
from hlodbg.engine.ir.errors import ParseError
from hlodbg.engine.run.spmd import is_global_program, run_global
from hlodbg.engine.syntax import hlo as hlo_syntax
from hlodbg.engine.syntax.hlo.shardy import import_shardy
from hlodbg.engine.syntax.mlir import MLIR
from hlodbg.engine.verify import verify

needs_hlo_frontend = pytest.mark.skipif(
    not hasattr(hlo_syntax, "HLO"), reason="the HLO frontend is not merged yet (no engine/syntax/hlo HLO object)")

Q = "\\22"  # a quote inside an MLIR string, as XLA's MLIR form escapes it
MESHES = f'mhlo.frontend_attributes = {{xla.sdy.meshes = "{{mesh = #sdy.mesh<[{Q}x{Q}=2, {Q}y{Q}=2]>}}"}}'


def sdy(text: str) -> str:
    """`#sdy...` text as an MLIR string's contents."""
    return text.replace('"', Q)


def names(values) -> list[str]:
    """Value names as HLO writes them (the MLIR frontend keeps the `%`)."""
    return [v.name.lstrip("%") for v in values]


def imported(text: str, name: str = "test.mlir"):
    (module,) = MLIR.parse_all(textwrap.dedent(text), name)
    import_shardy(module)
    verify(module)
    return module


def shard_map_module(in_shardings=None, out_shardings=None, body_return="%t", extra_call=""):
    """A shard_map on a 2x2 mesh as the lowering gives it: a (4x4, 4x2) → (4x2, 4x2) program whose
    body sums its first operand over "y" and doubles its second."""
    in_shardings = in_shardings or '[<@mesh, [{"x"}, {"y"}]>, <@mesh, [{"x"}, {}]>]'
    out_shardings = out_shardings or '[<@mesh, [{"x"}, {}]>, <@mesh, [{"x"}, {}]>]'
    return f"""
    module @jit_body attributes {{{MESHES}}} {{
      func.func public @main(%a: tensor<4x4xf32>, %b: tensor<4x2xf32>) -> (tensor<4x2xf32>, tensor<4x2xf32>) {{
        %l:2 = stablehlo.custom_call @xla.sdy.GlobalToLocalShape(%a, %b) {{has_side_effect = true, mhlo.frontend_attributes = {{xla.sdy.in_shardings = "#sdy.sharding_per_value<{sdy(in_shardings)}>", xla.sdy.manual_axes = "#sdy<manual_axes{{{Q}x{Q}, {Q}y{Q}}}>"}}}} : (tensor<4x4xf32>, tensor<4x2xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>)
        %lt = stablehlo.tuple %l#0, %l#1 {{hlo.packs_results}} : tuple<tensor<2x2xf32>, tensor<2x2xf32>>
        %l0 = stablehlo.get_tuple_element %lt[0] : (tuple<tensor<2x2xf32>, tensor<2x2xf32>>) -> tensor<2x2xf32>
        %l1 = stablehlo.get_tuple_element %lt[1] : (tuple<tensor<2x2xf32>, tensor<2x2xf32>>) -> tensor<2x2xf32>
        %r = func.call @xla.sdy.manual_computation_body.2(%l0, %l1) {{mhlo.frontend_attributes = {{inlineable = "false"}}}} : (tensor<2x2xf32>, tensor<2x2xf32>) -> tuple<tensor<2x2xf32>, tensor<2x2xf32>>
        %r0 = stablehlo.get_tuple_element %r[0] : (tuple<tensor<2x2xf32>, tensor<2x2xf32>>) -> tensor<2x2xf32>
        %r1 = stablehlo.get_tuple_element %r[1] : (tuple<tensor<2x2xf32>, tensor<2x2xf32>>) -> tensor<2x2xf32>{extra_call}
        %g:2 = stablehlo.custom_call @xla.sdy.LocalToGlobalShape(%r0, %r1) {{has_side_effect = true, mhlo.frontend_attributes = {{xla.sdy.manual_axes = "#sdy<manual_axes{{{Q}x{Q}, {Q}y{Q}}}>", xla.sdy.out_shardings = "#sdy.sharding_per_value<{sdy(out_shardings)}>"}}}} : (tensor<2x2xf32>, tensor<2x2xf32>) -> (tensor<4x2xf32>, tensor<4x2xf32>)
        %gt = stablehlo.tuple %g#0, %g#1 {{hlo.packs_results}} : tuple<tensor<4x2xf32>, tensor<4x2xf32>>
        %g0 = stablehlo.get_tuple_element %gt[0] : (tuple<tensor<4x2xf32>, tensor<4x2xf32>>) -> tensor<4x2xf32>
        %g1 = stablehlo.get_tuple_element %gt[1] : (tuple<tensor<4x2xf32>, tensor<4x2xf32>>) -> tensor<4x2xf32>
        return %g0, %g1 : tensor<4x2xf32>, tensor<4x2xf32>
      }}
      func.func private @xla.sdy.manual_computation_body.2(%x: tensor<2x2xf32>, %y: tensor<2x2xf32>) -> tuple<tensor<2x2xf32>, tensor<2x2xf32>> {{
        %s = "stablehlo.all_reduce"(%x) <{{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1], [2, 3]]> : tensor<2x2xi64>, use_global_device_ids}}> ({{
        ^bb0(%p: tensor<f32>, %q: tensor<f32>):
          %sum = stablehlo.add %p, %q : tensor<f32>
          stablehlo.return %sum : tensor<f32>
        }}) : (tensor<2x2xf32>) -> tensor<2x2xf32>
        %d = stablehlo.add %y, %y : tensor<2x2xf32>
        %t = stablehlo.tuple %s, %d : tuple<tensor<2x2xf32>, tensor<2x2xf32>>
        return {body_return} : tuple<tensor<2x2xf32>, tensor<2x2xf32>>
      }}
    }}"""


A = np.arange(16, dtype=np.float32).reshape(4, 4)
B = np.arange(8, dtype=np.float32).reshape(4, 2) - 3


def test_shard_map_becomes_one_manual_computation():
    module = imported(shard_map_module())
    (mesh,) = [op for op in module.operations if op.name == "sdy.mesh"]
    assert mesh.attributes["sym_name"] == "mesh" and mesh.attributes["mesh"] == SdyMesh((("x", 2), ("y", 2)))
    assert module.num_partitions == 4
    assert list(module.functions) == ["main"]  # the body moved into the manual computation
    ops = [op.name for op in module.entry.body.operations]
    assert ops == ["sdy.manual_computation", "stablehlo.tuple", "stablehlo.get_tuple_element",
                   "stablehlo.get_tuple_element", "func.return"]
    manual = module.entry.body.operations[0]
    assert names(manual.operands) == ["a", "b"]
    assert names(manual.results) == ["g#0", "g#1"]
    assert manual.attributes["manual_axes"] == SdyManualAxes(("x", "y"))
    assert isinstance(manual.attributes["in_shardings"], SdyShardingPerValue)
    assert str(manual.attributes["in_shardings"]) == '#sdy.sharding_per_value<[<@mesh, [{"x"}, {"y"}]>, <@mesh, [{"x"}, {}]>]>'
    assert str(manual.attributes["out_shardings"]) == '#sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>, <@mesh, [{"x"}, {}]>]>'
    body = manual.regions[0].blocks[0]
    assert names(body.arguments) == ["x", "y"]
    # The body's tuple root stays its ROOT and is returned element by element.
    assert [op.name for op in body.operations] == ["stablehlo.all_reduce", "stablehlo.add", "stablehlo.tuple",
                                                   "stablehlo.get_tuple_element", "stablehlo.get_tuple_element",
                                                   "sdy.return"]
    assert names(body.operations[-1].operands) == ["t#0", "t#1"]
    assert all("hlo.implicit" in op.attributes for op in body.operations[3:5])


def test_manual_computation_runs_like_the_shard_map():
    module = imported(shard_map_module())
    assert is_global_program(module)
    summed, doubled = run_global(module, [A, B])
    np.testing.assert_array_equal(summed, A[:, :2] + A[:, 2:])
    np.testing.assert_array_equal(doubled, 2 * B)


def test_operands_in_another_order_keep_their_shardings():
    text = shard_map_module().replace("func.call @xla.sdy.manual_computation_body.2(%l0, %l1)",
                                      "func.call @xla.sdy.manual_computation_body.2(%l1, %l0)")
    text = text.replace("(%x: tensor<2x2xf32>, %y: tensor<2x2xf32>)", "(%y: tensor<2x2xf32>, %x: tensor<2x2xf32>)")
    module = imported(text)
    manual = module.entry.body.operations[0]
    assert names(manual.operands) == ["b", "a"]
    assert str(manual.attributes["in_shardings"]) == '#sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>, <@mesh, [{"x"}, {"y"}]>]>'
    summed, doubled = run_global(module, [A, B])
    np.testing.assert_array_equal(summed, A[:, :2] + A[:, 2:])


def test_a_tuple_root_that_is_not_a_tuple_op_is_taken_apart():
    text = shard_map_module(body_return="%w").replace(
        "%t = stablehlo.tuple %s, %d : tuple<tensor<2x2xf32>, tensor<2x2xf32>>",
        "%t = stablehlo.tuple %s, %d : tuple<tensor<2x2xf32>, tensor<2x2xf32>>\n"
        "        %w = stablehlo.optimization_barrier %t : tuple<tensor<2x2xf32>, tensor<2x2xf32>>")
    module = imported(text)
    body = module.entry.body.operations[0].regions[0].blocks[0]
    assert [op.name for op in body.operations][-3:] == ["stablehlo.get_tuple_element"] * 2 + ["sdy.return"]
    summed, doubled = run_global(module, [A, B])
    np.testing.assert_array_equal(doubled, 2 * B)


def test_a_body_called_twice_is_cloned_into_each_manual_computation():
    one = textwrap.dedent(shard_map_module())
    main_start, main_end = one.index("  func.func public @main"), one.index("  func.func private")
    main = one[main_start:main_end]
    twice = main.replace("@main(", "@second(").replace("func.func public", "func.func private")
    module = imported(one[:main_end] + twice + one[main_end:])
    assert list(module.functions) == ["main", "second"]
    first, second = (f.body.operations[0] for f in module.functions.values())
    assert first.name == second.name == "sdy.manual_computation"
    assert first.regions[0].blocks[0] is not second.regions[0].blocks[0]
    summed, _ = run_global(module, [A, B])
    np.testing.assert_array_equal(summed, A[:, :2] + A[:, 2:])


SINGLE = f"""
    module @one attributes {{{MESHES}}} {{
      func.func public @main(%a: tensor<4x2xf32>) -> tensor<2x2xf32> {{
        %l = stablehlo.custom_call @xla.sdy.GlobalToLocalShape(%a) {{mhlo.frontend_attributes = {{xla.sdy.in_shardings = "#sdy.sharding_per_value<[<@mesh, [{{{Q}x{Q}, ?}}, {{?}}]>]>", xla.sdy.manual_axes = "#sdy<manual_axes{{{Q}x{Q}}}>"}}}} : (tensor<4x2xf32>) -> tensor<2x2xf32>
        %r = func.call @xla.sdy.manual_computation_body.7(%l) : (tensor<2x2xf32>) -> tensor<2x2xf32>
        %g = stablehlo.custom_call @xla.sdy.LocalToGlobalShape(%r) {{mhlo.frontend_attributes = {{xla.sdy.manual_axes = "#sdy<manual_axes{{{Q}x{Q}}}>", xla.sdy.out_shardings = "#sdy.sharding_per_value<[<@mesh, [{{?}}, {{?}}]>]>"}}}} : (tensor<2x2xf32>) -> tensor<2x2xf32>
        return %g : tensor<2x2xf32>
      }}
      func.func private @xla.sdy.manual_computation_body.7(%x: tensor<2x2xf32>) -> tensor<2x2xf32> {{
        %s = "stablehlo.all_reduce"(%x) <{{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 2], [1, 3]]> : tensor<2x2xi64>, use_global_device_ids}}> ({{
        ^bb0(%p: tensor<f32>, %q: tensor<f32>):
          %sum = stablehlo.add %p, %q : tensor<f32>
          stablehlo.return %sum : tensor<f32>
        }}) : (tensor<2x2xf32>) -> tensor<2x2xf32>
        return %s : tensor<2x2xf32>
      }}
    }}"""


def test_partial_shard_map_with_one_value_and_open_dimensions():
    """shard_map over "x" only (y stays automatic), one operand and one result: no tuples."""
    module = imported(SINGLE)
    manual = module.entry.body.operations[0]
    assert manual.name == "sdy.manual_computation"
    assert str(manual.attributes["in_shardings"]) == '#sdy.sharding_per_value<[<@mesh, [{"x", ?}, {?}]>]>'
    (result,) = run_global(module, [np.arange(8, dtype=np.float32).reshape(4, 2)])
    np.testing.assert_array_equal(result, [[4, 6], [8, 10]])


# -- argument and result shardings, sharding constraints -------------------------------------------


SHARDED_JIT = f"""
    module @jit_f attributes {{{MESHES}}} {{
      func.func public @main(%x: tensor<4x2xf32> {{mhlo.frontend_attributes = {{xla.sdy.sharding = "#sdy.sharding<@mesh, [{{{Q}x{Q}}}, {{}}]>"}}, mhlo.sharding = "{{devices=[2,1,2]<=[4] last_tile_dim_replicate}}"}}, %w: tensor<2x2xf32>) -> (tensor<4x2xf32>, tensor<f32>) {{
        %c = stablehlo.custom_call @Sharding(%x) {{backend_config = "unspecified_dims=[1]", mhlo.sharding = "{{devices=[2,2]<=[4]}}", mhlo.frontend_attributes = {{xla.sdy.sharding = "#sdy.sharding_per_value<[<@mesh, [{{{Q}x{Q}}}, {{{Q}y{Q}}}]>]>", other = "kept"}}}} : (tensor<4x2xf32>) -> tensor<4x2xf32>
        %m = stablehlo.dot_general %c, %w, contracting_dims = [1] x [0] : (tensor<4x2xf32>, tensor<2x2xf32>) -> tensor<4x2xf32>
        %r = stablehlo.custom_call @xla.sdy.FuncResultSharding(%m) {{has_side_effect = true, mhlo.frontend_attributes = {{xla.sdy.sharding = "#sdy.sharding_per_value<[<@mesh, [{{}}, {{{Q}y{Q}}}]>]>"}}}} : (tensor<4x2xf32>) -> tensor<4x2xf32>
        %dead = stablehlo.reshape %r {{mhlo.sharding = "{{replicated}}"}} : (tensor<4x2xf32>) -> tensor<4x2xf32>
        %z = stablehlo.constant dense<0.0> : tensor<f32>
        %s = stablehlo.reduce(%m init: %z) applies stablehlo.add across dimensions = [0, 1] : (tensor<4x2xf32>, tensor<f32>) -> tensor<f32>
        %rs = stablehlo.custom_call @xla.sdy.FuncResultSharding(%s) {{has_side_effect = true, mhlo.frontend_attributes = {{xla.sdy.sharding = "#sdy.sharding_per_value<[<@mesh, []>]>"}}}} : (tensor<f32>) -> tensor<f32>
        %t = stablehlo.tuple %r, %rs : tuple<tensor<4x2xf32>, tensor<f32>>
        %t0 = stablehlo.get_tuple_element %t[0] {{hlo.implicit}} : (tuple<tensor<4x2xf32>, tensor<f32>>) -> tensor<4x2xf32>
        %t1 = stablehlo.get_tuple_element %t[1] {{hlo.implicit}} : (tuple<tensor<4x2xf32>, tensor<f32>>) -> tensor<f32>
        return %t0, %t1 : tensor<4x2xf32>, tensor<f32>
      }}
    }}"""


def test_argument_and_result_shardings_become_sdy_sharding_attributes():
    module = imported(SHARDED_JIT)
    main = module.entry
    assert str(main.arg_attrs(0)["sdy.sharding"]) == '#sdy.sharding<@mesh, [{"x"}, {}]>'
    # The HLO facts stay, for the printer and the inspector.
    assert "xla.sdy.sharding" in main.arg_attrs(0)["mhlo.frontend_attributes"]
    assert main.arg_attrs(0)["mhlo.sharding"] == "{devices=[2,1,2]<=[4] last_tile_dim_replicate}"
    assert main.arg_attrs(1) == {}
    assert str(main.res_attrs(0)["sdy.sharding"]) == '#sdy.sharding<@mesh, [{}, {"y"}]>'
    assert str(main.res_attrs(1)["sdy.sharding"]) == "#sdy.sharding<@mesh, []>"
    # The result markers stay (an identity), so the module prints back as it was written.
    markers = [op for op in main.body.operations if op.attributes.get("call_target_name") == "xla.sdy.FuncResultSharding"]
    assert names(op.results[0] for op in markers) == ["r", "rs"]


def test_sharding_custom_call_gets_its_shardy_sharding():
    """A sharding constraint stays `custom_call @Sharding` with its mhlo.sharding (what the engine
    and the devices pane read) and gets the `sdy.sharding` XLA's import gives it."""
    module = imported(SHARDED_JIT)
    constraint = module.entry.body.operations[0]
    assert constraint.attributes["call_target_name"] == "Sharding" and names(constraint.results) == ["c"]
    # unspecified_dims=[1] in the backend_config: dimension 1 stays open to the partitioner.
    assert str(constraint.attributes["sdy.sharding"]) == '#sdy.sharding_per_value<[<@mesh, [{"x"}, {"y", ?}]>]>'
    assert constraint.attributes["mhlo.sharding"] == "{devices=[2,2]<=[4]}"


def test_sharded_jit_runs_as_a_global_program_on_the_mesh_grid():
    module = imported(SHARDED_JIT)
    assert (module.num_replicas, module.num_partitions) == (1, 4)
    x = np.arange(8, dtype=np.float32).reshape(4, 2)
    w = np.array([[1, 2], [3, 4]], np.float32)
    product, total = run_global(module, [x, w])
    np.testing.assert_array_equal(product, x @ w)
    assert total == (x @ w).sum()


def test_a_module_without_meshes_is_left_alone():
    text = """
        func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
          %0 = stablehlo.custom_call @Sharding(%a) {mhlo.sharding = "{replicated}"} : (tensor<2xf32>) -> tensor<2xf32>
          return %0 : tensor<2xf32>
        }"""
    module = imported(text)
    assert [op.name for op in module.entry.body.operations] == ["stablehlo.custom_call", "func.return"]
    assert module.num_partitions == 1 and not is_global_program(module)


def test_a_module_with_its_own_grid_keeps_it():
    text = SINGLE.replace("attributes {", "attributes {mhlo.num_partitions = 8 : i32, ")
    assert imported(text).num_partitions == 8


# -- errors ----------------------------------------------------------------------------------------


def error_of(text: str, name: str = "bad.mlir") -> ParseError:
    with pytest.raises(ParseError) as info:
        imported(text, name)
    return info.value


def line_col_of(text: str, needle: str, occurrence: int = 0) -> tuple[int, int]:
    text = textwrap.dedent(text)
    offset = -1
    for _ in range(occurrence + 1):
        offset = text.index(needle, offset + 1)
    line = text.count("\n", 0, offset) + 1
    return line, offset - text.rfind("\n", 0, offset)


def test_a_damaged_sharding_points_inside_the_string():
    text = shard_map_module(in_shardings='[<@mesh, [{"x"}, {"y"}]>, <@mesh, [{"x"}, {} }]>]')
    error = error_of(text)
    assert "custom-call 'l': in xla.sdy.in_shardings:" in error.message
    line, col = line_col_of(text, "{} }")
    # The file column of the stray `}` (after `{}` and a space), through the string's \22 escapes.
    assert (error.line, error.col) == (line, col + 3), error.render()


def test_a_sharding_of_the_wrong_kind_is_named():
    text = SHARDED_JIT.replace('"#sdy.sharding<@mesh, [{\\22x\\22}, {}]>"', '"#sdy<manual_axes{\\22x\\22}>"')
    error = error_of(text)
    assert "parameter 'x': xla.sdy.sharding must be a #sdy.sharding<...>" in error.message


def test_an_unknown_mesh_is_named():
    error = error_of(shard_map_module(out_shardings='[<@mesh, [{"x"}, {}]>, <@other, [{"x"}, {}]>]'))
    assert "xla.sdy.out_shardings of 'g' names mesh @other, which the module does not define (meshes: @mesh)" in error.message
    assert error.line is not None


def test_too_few_shardings_are_named():
    error = error_of(shard_map_module(in_shardings='[<@mesh, [{"x"}, {"y"}]>]'))
    assert "xla.sdy.in_shardings of 'l' lists 1 sharding(s) for 2 operand(s)" in error.message


def test_body_results_used_outside_the_shard_map_are_refused():
    extra = "\n        %leak = stablehlo.negate %r0 : tensor<2x2xf32>"
    error = error_of(shard_map_module(extra_call=extra))
    assert "call 'r' of xla.sdy.manual_computation_body.2" in error.message
    assert "must all go to one xla.sdy.LocalToGlobalShape" in error.message and "'leak'" in error.message


def test_a_call_not_fed_by_global_to_local_is_refused():
    text = shard_map_module().replace("@xla.sdy.manual_computation_body.2(%l0, %l1)",
                                      "@xla.sdy.manual_computation_body.2(%l0, %l0)")
    text = text.replace("@xla.sdy.manual_computation_body.2(%l0, %l0)", "@xla.sdy.manual_computation_body.2(%l0, %b2)")
    text = text.replace("%r = func.call", "%b2 = stablehlo.slice %b [0:2, 0:2] : (tensor<4x2xf32>) -> tensor<2x2xf32>\n        %r = func.call")
    error = error_of(text)
    assert "operand 1 must be a result of the xla.sdy.GlobalToLocalShape custom call" in error.message
    assert (error.line, error.col) == line_col_of(text, "%r = func.call"), error.render()


def test_other_shardy_custom_calls_are_named():
    text = SINGLE.replace("%r = func.call", "%k = stablehlo.custom_call @xla.sdy.ShardingGroup(%a) : (tensor<4x2xf32>) -> tensor<4x2xf32>\n        %r = func.call")
    error = error_of(text)
    assert "custom-call target 'xla.sdy.ShardingGroup' is a Shardy round-trip form hlodbg does not read" in error.message
    assert (error.line, error.col) == line_col_of(text, "%k = "), error.render()


def test_damaged_meshes_point_inside_the_header():
    text = SINGLE.replace(f"{Q}y{Q}=2]>", f"{Q}y{Q}=two]>")
    error = error_of(text)
    assert "module one: in xla.sdy.meshes:" in error.message
    line, col = line_col_of(text, "two")
    assert (error.line, error.col) == (line, col), error.render()


# -- the same forms in HLO text (what JAX prints) ---------------------------------------------------


SHARD_MAP_HLO = r"""HloModule jit_body, frontend_attributes={xla.sdy.meshes={mesh = #sdy.mesh<["x"=2, "y"=2]>}}

region_0.1 {
  p = f32[] parameter(0)
  q = f32[] parameter(1)
  ROOT sum = f32[] add(p, q)
}

xla.sdy.manual_computation_body.2 {
  x = f32[2,2]{1,0} parameter(0)
  s = f32[2,2]{1,0} all-reduce(x), channel_id=1, replica_groups={{0,1},{2,3}}, use_global_device_ids=true, to_apply=region_0.1
  y = f32[2,2]{1,0} parameter(1)
  d = f32[2,2]{1,0} add(y, y)
  ROOT t = (f32[2,2]{1,0}, f32[2,2]{1,0}) tuple(s, d)
}

ENTRY main.3 {
  a = f32[4,4]{1,0} parameter(0)
  b = f32[4,2]{1,0} parameter(1)
  l = (f32[2,2]{1,0}, f32[2,2]{1,0}) custom-call(a, b), custom_call_target="xla.sdy.GlobalToLocalShape", custom_call_has_side_effect=true, frontend_attributes={xla.sdy.in_shardings="#sdy.sharding_per_value<[<@mesh, [{\"x\"}, {\"y\"}]>, <@mesh, [{\"x\"}, {}]>]>",xla.sdy.manual_axes="#sdy<manual_axes{\"x\", \"y\"}>"}
  l0 = f32[2,2]{1,0} get-tuple-element(l), index=0
  l1 = f32[2,2]{1,0} get-tuple-element(l), index=1
  r = (f32[2,2]{1,0}, f32[2,2]{1,0}) call(l0, l1), to_apply=xla.sdy.manual_computation_body.2, frontend_attributes={inlineable="false"}
  r0 = f32[2,2]{1,0} get-tuple-element(r), index=0, frontend_attributes={inlineable="false"}
  r1 = f32[2,2]{1,0} get-tuple-element(r), index=1, frontend_attributes={inlineable="false"}
  g = (f32[4,2]{1,0}, f32[4,2]{1,0}) custom-call(r0, r1), custom_call_target="xla.sdy.LocalToGlobalShape", custom_call_has_side_effect=true, frontend_attributes={xla.sdy.manual_axes="#sdy<manual_axes{\"x\", \"y\"}>",xla.sdy.out_shardings="#sdy.sharding_per_value<[<@mesh, [{\"x\"}, {}]>, <@mesh, [{\"x\"}, {}]>]>"}
  g0 = f32[4,2]{1,0} get-tuple-element(g), index=0
  g1 = f32[4,2]{1,0} get-tuple-element(g), index=1
  ROOT out = (f32[4,2]{1,0}, f32[4,2]{1,0}) tuple(g0, g1)
}
"""


def hlo_module(text: str, name: str = "test.hlo"):
    (module,) = hlo_syntax.HLO.parse_all(text, name)
    verify(module)
    return module


@needs_hlo_frontend
def test_hlo_shard_map_is_a_manual_computation_on_the_mesh_grid():
    module = hlo_module(SHARD_MAP_HLO)
    assert [op.name for op in module.operations] == ["sdy.mesh", "func.func"]
    assert module.num_partitions == 4
    (manual,) = [op for op in module.entry.body.operations if op.name == "sdy.manual_computation"]
    assert names(manual.operands) == ["a", "b"]
    assert [str(n) for n in manual.attributes["hlo.computations"]] == ["xla.sdy.manual_computation_body.2"]
    assert not any(op.name in ("stablehlo.custom_call", "func.call") for op in module.entry.ops)
    summed, doubled = run_global(module, [A, B])
    np.testing.assert_array_equal(summed, A[:, :2] + A[:, 2:])
    np.testing.assert_array_equal(doubled, 2 * B)


@needs_hlo_frontend
def test_hlo_run_takes_the_grid_from_the_mesh(tmp_path, capsys):
    from hlodbg.cli import main

    path = tmp_path / "shard_map.hlo"
    path.write_text(SHARD_MAP_HLO)
    np.savez(tmp_path / "args.npz", A, B)
    assert main(["run", str(path), "--args", str(tmp_path / "args.npz"), "--out", str(tmp_path / "out.npz")]) == 0
    assert "global results of a sharded program run on 4 emulated devices" in capsys.readouterr().err
    saved = np.load(tmp_path / "out.npz")
    np.testing.assert_array_equal(saved["result0"], A[:, :2] + A[:, 2:])


@needs_hlo_frontend
def test_hlo_damaged_sharding_points_inside_the_escaped_string():
    text = SHARD_MAP_HLO.replace(r'<@mesh, [{\"x\"}, {}]>]>",xla.sdy.manual_axes', r'<@mesh, [{\"x\"}, {} }]>]>",xla.sdy.manual_axes')
    with pytest.raises(ParseError) as info:
        hlo_module(text)
    error = info.value
    assert "custom-call 'l': in xla.sdy.in_shardings: expected ']'" in error.message
    line, col = line_col_of(text, "{} }")
    assert (error.line, error.col) == (line, col + 3), error.render()  # the stray `}`


@needs_hlo_frontend
def test_hlo_damaged_mesh_points_into_the_header():
    text = SHARD_MAP_HLO.replace('"y"=2]>', '"y"=]>')
    with pytest.raises(ParseError) as info:
        hlo_module(text)
    assert "in xla.sdy.meshes: expected an axis size" in info.value.message
    assert (info.value.line, info.value.col) == line_col_of(text, ']>}}')


SHARDED_JIT_HLO = r"""HloModule jit_f, frontend_attributes={xla.sdy.meshes={mesh = #sdy.mesh<["x"=2, "y"=2]>}}

region_0.1 {
  p = f32[] parameter(0)
  q = f32[] parameter(1)
  ROOT sum = f32[] add(p, q)
}

ENTRY main.2 {
  x = f32[4,2]{1,0} parameter(0), sharding={devices=[2,1,2]<=[4] last_tile_dim_replicate}, frontend_attributes={xla.sdy.sharding="#sdy.sharding<@mesh, [{\"x\"}, {}]>"}
  w = f32[2,2]{1,0} parameter(1), sharding={replicated}, frontend_attributes={xla.sdy.sharding="#sdy.sharding<@mesh, [{}, {}]>"}
  c = f32[4,2]{1,0} custom-call(x), custom_call_target="Sharding", sharding={devices=[2,2]<=[4]}, frontend_attributes={xla.sdy.sharding="#sdy.sharding_per_value<[<@mesh, [{\"x\"}, {\"y\"}]>]>"}
  m = f32[4,2]{1,0} dot(c, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  r = f32[4,2]{1,0} custom-call(m), custom_call_target="xla.sdy.FuncResultSharding", custom_call_has_side_effect=true, frontend_attributes={xla.sdy.sharding="#sdy.sharding_per_value<[<@mesh, [{}, {\"y\"}]>]>"}
  dead = f32[4,2]{1,0} reshape(r), sharding={devices=[1,2,2]<=[4] last_tile_dim_replicate}
  zero = f32[] constant(0)
  s = f32[] reduce(m, zero), dimensions={0,1}, to_apply=region_0.1
  rs = f32[] custom-call(s), custom_call_target="xla.sdy.FuncResultSharding", custom_call_has_side_effect=true, frontend_attributes={xla.sdy.sharding="#sdy.sharding_per_value<[<@mesh, []>]>"}
  ROOT t = (f32[4,2]{1,0}, f32[]) tuple(r, rs), sharding={{devices=[1,2,2]<=[4] last_tile_dim_replicate}, {replicated}}
}
"""


@needs_hlo_frontend
def test_hlo_sharded_jit_has_the_stablehlo_forms_shardings_and_runs_globally():
    module = hlo_module(SHARDED_JIT_HLO)
    main = module.entry
    assert str(main.arg_attrs(0)["sdy.sharding"]) == '#sdy.sharding<@mesh, [{"x"}, {}]>'
    assert str(main.arg_attrs(1)["sdy.sharding"]) == "#sdy.sharding<@mesh, [{}, {}]>"
    assert str(main.res_attrs(0)["sdy.sharding"]) == '#sdy.sharding<@mesh, [{}, {"y"}]>'
    assert str(main.res_attrs(1)["sdy.sharding"]) == "#sdy.sharding<@mesh, []>"
    (constraint,) = [op for op in main.body.operations if "sdy.sharding" in op.attributes]
    assert names(constraint.results) == ["c"]
    x = np.arange(8, dtype=np.float32).reshape(4, 2)
    w = np.array([[1, 2], [3, 4]], np.float32)
    product, total = run_global(module, [x, w])
    np.testing.assert_array_equal(product, x @ w)
    assert total == (x @ w).sum()


@needs_hlo_frontend
def test_hlo_sharding_naming_an_unknown_mesh_is_located_at_the_parameter():
    text = SHARDED_JIT_HLO.replace(r'"#sdy.sharding<@mesh, [{}, {}]>"', r'"#sdy.sharding<@grid, [{}, {}]>"')
    with pytest.raises(ParseError) as info:
        hlo_module(text)
    assert "parameter 'w' names mesh @grid, which the module does not define (meshes: @mesh)" in info.value.message
    assert (info.value.line, info.value.col) == line_col_of(text, "w = ")


# A shard_map over "x" holding two over "y": one without operands (JAX computes axis_index("x")
# that way inside a nested shard_map) and one on a tile. The inner ones are rewritten first.
NESTED_HLO = r"""HloModule jit_outer, frontend_attributes={xla.sdy.meshes={mesh = #sdy.mesh<["x"=2, "y"=2]>}}

xla.sdy.manual_computation_body.1 {
  pid = u32[] partition-id()
  two = u32[] constant(2)
  major = u32[] divide(pid, two)
  ROOT x_index = u32[] remainder(major, two)
}

xla.sdy.manual_computation_body_0.2 {
  column = f32[2,1]{1,0} parameter(0)
  ROOT twice = f32[2,1]{1,0} add(column, column)
}

xla.sdy.manual_computation_body_1.3 {
  rows = f32[2,2]{1,0} parameter(0)
  index_local = u32[] call(), to_apply=xla.sdy.manual_computation_body.1, frontend_attributes={inlineable="false"}
  index = u32[] custom-call(index_local), custom_call_target="xla.sdy.LocalToGlobalShape", custom_call_has_side_effect=true, frontend_attributes={xla.sdy.manual_axes="#sdy<manual_axes{\"y\"}>",xla.sdy.out_shardings="#sdy.sharding_per_value<[<@mesh, []>]>"}
  index_f = f32[] convert(index)
  index_b = f32[2,2]{1,0} broadcast(index_f), dimensions={}
  shifted = f32[2,2]{1,0} add(rows, index_b)
  cut = f32[2,1]{1,0} custom-call(shifted), custom_call_target="xla.sdy.GlobalToLocalShape", custom_call_has_side_effect=true, frontend_attributes={xla.sdy.in_shardings="#sdy.sharding_per_value<[<@mesh, [{}, {\"y\"}]>]>",xla.sdy.manual_axes="#sdy<manual_axes{\"y\"}>"}
  inner = f32[2,1]{1,0} call(cut), to_apply=xla.sdy.manual_computation_body_0.2
  ROOT joined = f32[2,2]{1,0} custom-call(inner), custom_call_target="xla.sdy.LocalToGlobalShape", custom_call_has_side_effect=true, frontend_attributes={xla.sdy.manual_axes="#sdy<manual_axes{\"y\"}>",xla.sdy.out_shardings="#sdy.sharding_per_value<[<@mesh, [{}, {\"y\"}]>]>"}
}

ENTRY main.4 {
  a = f32[4,2]{1,0} parameter(0)
  enter = f32[2,2]{1,0} custom-call(a), custom_call_target="xla.sdy.GlobalToLocalShape", custom_call_has_side_effect=true, frontend_attributes={xla.sdy.in_shardings="#sdy.sharding_per_value<[<@mesh, [{\"x\"}, {}]>]>",xla.sdy.manual_axes="#sdy<manual_axes{\"x\"}>"}
  body = f32[2,2]{1,0} call(enter), to_apply=xla.sdy.manual_computation_body_1.3
  ROOT exit = f32[4,2]{1,0} custom-call(body), custom_call_target="xla.sdy.LocalToGlobalShape", custom_call_has_side_effect=true, frontend_attributes={xla.sdy.manual_axes="#sdy<manual_axes{\"x\"}>",xla.sdy.out_shardings="#sdy.sharding_per_value<[<@mesh, [{\"x\"}, {}]>]>"}
}
"""


@needs_hlo_frontend
def test_hlo_nested_shard_maps_and_one_without_operands():
    module = hlo_module(NESTED_HLO)
    assert list(module.functions) == ["main.4"]
    (outer,) = [op for op in module.entry.body.operations if op.name == "sdy.manual_computation"]
    inner = [op for op in outer.regions[0].blocks[0].operations if op.name == "sdy.manual_computation"]
    assert [(len(op.operands), str(op.attributes["manual_axes"])) for op in inner] == [
        (0, '#sdy<manual_axes{"y"}>'), (1, '#sdy<manual_axes{"y"}>')]
    a = np.arange(8, dtype=np.float32).reshape(4, 2)
    (result,) = run_global(module, [a])
    np.testing.assert_array_equal(result, 2 * (a + np.array([[0], [0], [1], [1]], np.float32)))
