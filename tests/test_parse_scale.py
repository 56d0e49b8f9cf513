"""Parsing big programs: repeated op lines built from templates (op_templates.py), the fast
location-alias form, and the cycle collector paused and the module frozen while it lives."""
from __future__ import annotations

import gc
import weakref

import pytest

from hlodbg.engine import ParseError, parse_module, print_module
from hlodbg.engine.ir import collector
from hlodbg.engine.ir.attributes import attribute_key
from hlodbg.engine.ir.locations import NameLoc
from hlodbg.engine.syntax.mlir.op_templates import OpTemplates
from hlodbg.engine.syntax.mlir.parser import Parser
from tests.test_syntax import PRETTY_OPS


def _full_parse_only(monkeypatch) -> None:
    monkeypatch.setattr(OpTemplates, "get", lambda self, shape: None)


def _twice(args: str, line: str) -> str:
    """A function with the op line twice: the second use of the shape may come from a template."""
    results, eq, rest = line.partition(" = ")
    second = results.replace("%", "%again") + eq + rest if rest.strip() and eq and results.startswith("%") else line
    return f"func.func @f({args}) {{\n  {line}\n  {second}\n  func.return\n}}\n"


@pytest.mark.parametrize("args,line", PRETTY_OPS, ids=[line.split(" = ")[-1][:40] for _, line in PRETTY_OPS])
def test_a_repeated_line_builds_the_op_the_full_parse_builds(args, line, monkeypatch):
    text = _twice(args, line)
    templated = parse_module(text)
    ops = templated.functions["f"].body.operations
    assert print_module(templated) == _printed_without_templates(text, monkeypatch)
    first, second = ops[0], ops[1]
    assert _keys(second.attributes) == _keys(first.attributes) and second.attributes is not first.attributes
    assert [v.type for v in second.results] == [v.type for v in first.results]


def _keys(attributes: dict) -> dict:
    return {name: attribute_key(value) for name, value in attributes.items()}


def _printed_without_templates(text: str, monkeypatch) -> str:
    with monkeypatch.context() as m:
        _full_parse_only(m)
        return print_module(parse_module(text))


def test_repeated_lines_are_served_by_templates():
    t = "tensor<4x16xf32>"
    body = "\n".join(f"  %{i + 1} = stablehlo.add %{i}, %{i} : {t}" for i in range(50))
    parser = Parser(f"func.func @f(%0: {t}) -> {t} {{\n{body}\n  return %50 : {t}\n}}\n")
    module = parser.parse_top_level()
    served = parser.templates.templates
    assert list(served) == [f"stablehlo.add %, % : {t}", f"return % : {t}"]
    assert served[f"stablehlo.add %, % : {t}"] is not None
    ops = module.functions["f"].body.operations
    assert [op.operands[0].name for op in ops[:3]] == ["%0", "%1", "%2"]
    assert ops[1].operands[0].uses == [(ops[1], 0), (ops[1], 1)]


def test_a_repeated_line_with_another_operand_type_reports_it_at_the_operand():
    text = """func.func @f(%a: tensor<2xf32>, %b: tensor<3xf32>) {
  %0 = stablehlo.negate %a : tensor<2xf32>
  %1 = stablehlo.negate %b : tensor<2xf32>
  func.return
}
"""
    with pytest.raises(ParseError) as e:
        parse_module(text, "t.mlir")
    assert str(e.value.pos) == "t.mlir:3:25"
    assert "%b has type tensor<3xf32>, but stablehlo.negate declares tensor<2xf32> for it" in e.value.message


def test_a_repeated_line_with_an_undefined_value_names_it():
    text = """func.func @f(%a: tensor<2xf32>) {
  %0 = stablehlo.negate %a : tensor<2xf32>
  %1 = stablehlo.negate %zz : tensor<2xf32>
  func.return
}
"""
    with pytest.raises(ParseError) as e:
        parse_module(text, "t.mlir")
    assert str(e.value.pos) == "t.mlir:3:25"
    assert e.value.message == "use of undefined SSA value %zz"


def test_an_op_continued_on_the_next_line_is_read_whole():
    t = "tensor<2xf32>"
    text = f"""func.func @f(%a: {t}) {{
  %0 = stablehlo.add %a, %a : {t}
  %1 = stablehlo.add %0, %0
      : {t}
  %2 = stablehlo.add %1, %1 : {t}
  func.return
}}
"""
    ops = parse_module(text).functions["f"].body.operations
    assert [op.operands[0].name for op in ops[:3]] == ["%a", "%0", "%1"]


def test_mutable_attributes_are_not_shared_between_ops(monkeypatch):
    # A constant written as a list has a writable array: its line is never a template.
    line = "%0 = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>"
    parser = Parser(_twice("", line))
    ops = parser.parse_top_level().functions["f"].body.operations
    assert ops[0].attributes["value"] is not ops[1].attributes["value"]
    assert list(parser.templates.templates.values())[0] is None


def test_name_location_aliases_read_as_the_general_form_reads_them():
    fast = '#loc1 = loc("model.py":3:1)\n#loc2 = loc("jit(f)/add"(#loc1))\n#loc3 = loc("plain")\n'
    general = fast.replace('loc("jit', 'loc( "jit').replace('loc("plain', 'loc( "plain')
    body = 'func.func @f(%a: tensor<f32>) {\n  %0 = stablehlo.add %a, %a : tensor<f32> loc(#loc2)\n' \
           '  %1 = stablehlo.add %0, %0 : tensor<f32> loc(#loc3)\n  func.return\n}\n'
    locations = []
    for aliases in (fast, general):
        ops = parse_module(body + aliases).functions["f"].body.operations
        locations.append([op.location for op in ops[:2]])
    assert locations[0] == locations[1]
    assert isinstance(locations[0][0], NameLoc) and locations[0][0].child.line == 3


def _big_program(ops: int) -> str:
    t = "tensor<2xf32>"
    body = "\n".join(f"  %{i + 1} = stablehlo.add %{i}, %{i} : {t}" for i in range(ops))
    return f"func.func @f(%0: {t}) -> {t} {{\n{body}\n  return %{ops} : {t}\n}}\n"


def test_a_big_module_is_frozen_while_it_lives_and_collected_after(monkeypatch):
    monkeypatch.setattr(collector, "FREEZE_FROM_OBJECTS", 1_000)
    assert gc.isenabled()
    module = parse_module(_big_program(2_000))
    assert gc.isenabled() and gc.get_freeze_count() > 0
    probe = _Probe()
    module.functions["f"].body.operations[0].attributes["probe"] = probe  # an op lives in cycles
    probe_alive = weakref.ref(probe)
    del module, probe
    assert gc.get_freeze_count() == 0
    gc.collect()
    assert probe_alive() is None  # the op/value cycles were collected, not kept frozen


class _Probe:
    pass


def test_the_collector_runs_again_after_a_parse_error():
    with pytest.raises(ParseError):
        parse_module(_big_program(100).replace("%50 = stablehlo.add", "%50 = stablehlo.nosuch"))
    assert gc.isenabled()


def test_a_repeated_compact_reduce_copies_its_body_with_positions_in_its_own_line(monkeypatch):
    t, s = "tensor<4x16xf32>", "tensor<4xf32>"
    line = "stablehlo.reduce({x} init: %z) applies stablehlo.add across dimensions = [1] : ({t}, tensor<f32>) -> {s}"
    text = (f"func.func @f(%a: {t}, %longer_name: {t}) {{\n  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
            f"  %0 = {line.format(x='%a', t=t, s=s)}\n  %1 = {line.format(x='%longer_name', t=t, s=s)}\n"
            "  func.return\n}\n")
    parser = Parser(text)
    templated = parser.parse_top_level().functions["f"].body.operations[1:3]
    assert [key for key, template in parser.templates.templates.items() if template is not None and 'reduce' in key]
    with monkeypatch.context() as m:
        _full_parse_only(m)
        full = parse_module(text).functions["f"].body.operations[1:3]
    for ours, theirs in zip(templated, full):
        body, expected = ours.regions[0].blocks[0], theirs.regions[0].blocks[0]
        assert [(op.name, str(op.pos)) for op in body.operations] == [(op.name, str(op.pos)) for op in expected.operations]
        assert [a.type for a in body.arguments] == [a.type for a in expected.arguments]
        assert body.operations[0].operands == body.arguments and body.operations[1].operands == body.operations[0].results
        assert ours.regions[0].parent is ours and body.operations[0].parent is body
    assert templated[0].regions[0] is not templated[1].regions[0]


def test_repeated_dense_resource_constants_each_get_their_blob():
    t = "tensor<2xf32>"
    text = (f"func.func @f() -> ({t}, {t}) {{\n"
            f"  %0 = stablehlo.constant dense_resource<blob> : {t}\n"
            f"  %1 = stablehlo.constant dense_resource<blob> : {t}\n"
            f"  return %0, %1 : {t}, {t}\n}}\n"
            '{-#\n  dialect_resources: {\n    builtin: {\n      blob: "0x040000000000803F00000040"\n    }\n  }\n#-}\n')
    ops = parse_module(text).functions["f"].body.operations
    for op in ops[:2]:
        assert op.attributes["value"].array.tolist() == [1.0, 2.0]
