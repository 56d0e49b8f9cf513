"""The HLO text parser (engine/syntax/hlo/parser.py): every construct of XLA's grammar, as the
printers of old and new XLA/JAX write it, into the parse tree; and located errors for bad text.

The constructs follow the list of XLA's hlo_parser_test.cc; the modules are our own."""
from __future__ import annotations

import pytest

from hlodbg.engine.ir.errors import ParseError
from hlodbg.engine.syntax.hlo.parser import parse_hlo_modules, parse_inline_computation


def parse_one(text: str):
    modules = parse_hlo_modules(text, "t.hlo")
    assert len(modules) == 1
    return modules[0]


def error_of(text: str) -> ParseError:
    with pytest.raises(ParseError) as info:
        parse_hlo_modules(text, "bad.hlo")
    return info.value


# -- module forms ---------------------------------------------------------------------------------

PRE_OPT = """\
HloModule jit_g, entry_computation_layout={(f32[4,8]{1,0})->(f32[8]{0}, f32[])}

sum.1 {
  a.1 = f32[] parameter(0)
  b.1 = f32[] parameter(1)
  ROOT s.1 = f32[] add(a.1, b.1)
}

ENTRY main.2 {
  x.1 = f32[4,8]{1,0} parameter(0)
  zero.1 = f32[] constant(0)
  r.1 = f32[8]{0} reduce(x.1, zero.1), dimensions={0}, to_apply=sum.1
  t.1 = f32[] reduce(r.1, zero.1), dimensions={0}, to_apply=sum.1
  ROOT out.1 = (f32[8]{0}, f32[]) tuple(r.1, t.1)
}
"""


def test_pre_optimization_module_without_percent_or_signatures():
    m = parse_one(PRE_OPT)
    assert m.name == "jit_g"
    assert m.attrs["entry_computation_layout"].text == "{(f32[4,8]{1,0})->(f32[8]{0}, f32[])}"
    assert [c.name for c in m.computations] == ["sum.1", "main.2"]
    assert m.entry.name == "main.2" and m.entry.is_entry
    assert m.entry.signature is None
    assert m.entry.root.name == "out.1" and m.entry.root.is_root
    reduce = m.entry.instructions[2]
    assert reduce.opcode == "reduce" and [o.name for o in reduce.operands] == ["x.1", "zero.1"]
    assert {k: a.text for k, a in reduce.attrs.items()} == {"dimensions": "{0}",
                                                           "to_apply": "sum.1"}
    assert (reduce.pos.line, reduce.pos.col) == (12, 3)
    assert (reduce.opcode_pos.line, reduce.opcode_pos.col) == (12, 19)
    assert PRE_OPT[reduce.pos.offset:reduce.end].endswith("to_apply=sum.1")
    assert m.entry.parameters()[0].literal == "0"
    assert m.entry.instructions[1].literal == "0"


POST_OPT = """\
HloModule jit_g, is_scheduled=true, entry_computation_layout={(f32[4]{0})->f32[4]{0}}, \
allow_spmd_sharding_propagation_to_output={true}

FileNames
1 "/home/u/g.py"

FunctionNames
1 "<module>"
2 "g"

FileLocations
1 {file_name_id=1 function_name_id=1 line=9 end_line=9 column=4 end_column=20}
2 {file_name_id=1 function_name_id=2 line=3 end_line=3 column=11 end_column=19}

StackFrames
1 {file_location_id=1 parent_frame_id=1}
2 {file_location_id=2 parent_frame_id=2}


%fused_computation (param_0: f32[4]) -> f32[4] {
  %param_0 = f32[4]{0} parameter(0)
  ROOT %tanh.0 = f32[4]{0} tanh(%param_0), metadata={op_name="jit(g)/tanh" stack_frame_id=2}
}

ENTRY %main.3 (x.1: f32[4]) -> f32[4] {
  %x.1 = f32[4]{0} parameter(0), metadata={op_name="x"}
  ROOT %f = f32[4]{0} fusion(%x.1), kind=kLoop, calls=%fused_computation, \
metadata={op_name="jit(g)/tanh" source_file="/home/u/g.py" source_line=3}, \
backend_config={"outer_dimension_partitions":[],"flag":"}{"}
}
"""


def test_post_optimization_module_with_percent_signatures_and_stack_frames():
    m = parse_one(POST_OPT)
    assert list(m.attrs) == ["is_scheduled", "entry_computation_layout",
                             "allow_spmd_sharding_propagation_to_output"]
    assert m.attrs["allow_spmd_sharding_propagation_to_output"].text == "{true}"
    frames = m.stack_frames
    assert frames.file_names == {1: "/home/u/g.py"}
    assert frames.function_names == {1: "<module>", 2: "g"}
    assert frames.file_locations[2].line == 3 and frames.file_locations[2].end_column == 19
    assert frames.frames == {1: (1, 1), 2: (2, 2)}
    assert frames.text.startswith("FileNames") and frames.text.endswith("parent_frame_id=2}")
    fused, entry = m.computations
    assert fused.signature[0].name == "param_0" and fused.signature[0].shape.text() == "f32[4]"
    assert fused.result_shape.text() == "f32[4]"
    assert entry.signature[0].name == "x.1"
    fusion = entry.root
    assert fusion.name == "f" and fusion.attrs["calls"].text == "%fused_computation"
    assert fusion.attrs["backend_config"].text == \
        '{"outer_dimension_partitions":[],"flag":"}{"}'
    assert fusion.attrs["metadata"].text.startswith('{op_name="jit(g)/tanh"')


def test_stack_frames_without_end_line_and_column():
    m = parse_one('HloModule m\nFileNames\n1 "a.py"\nFunctionNames\n1 "f"\nFileLocations\n'
                  '1 {file_name_id=1 function_name_id=1 line=7}\nStackFrames\n'
                  '1 {file_location_id=1 parent_frame_id=1}\n'
                  'ENTRY e {\n  ROOT p = f32[] parameter(0)\n}\n')
    loc = m.stack_frames.file_locations[1]
    assert (loc.line, loc.end_line, loc.column, loc.end_column) == (7, None, None, None)


def test_header_less_module_takes_the_entry_or_the_last_computation():
    two = "a {\n  ROOT p = f32[] parameter(0)\n}\nb {\n  ROOT q = s32[] parameter(0)\n}\n"
    m = parse_one(two)
    assert m.name is None and m.attrs == {} and m.entry.name == "b" and not m.entry.is_entry
    marked = two.replace("a {", "ENTRY a {")
    assert parse_one(marked).entry.name == "a"
    assert parse_one("fusion {\n  ROOT p = f32[] parameter(0)\n}").entry.name == "fusion"


def test_old_colon_module_header_and_quoted_name():
    assert parse_one("HloModule convolution.167:\n\nENTRY e {\n ROOT p = f32[] parameter(0)\n}"
                     ).name == "convolution.167"
    assert parse_one('HloModule "my module"\nENTRY e {\n ROOT p = f32[] parameter(0)\n}'
                     ).name == "my module"


def test_root_defaults_to_the_last_instruction():
    m = parse_one("ENTRY e {\n  a = f32[] parameter(0)\n  b = f32[] negate(a)\n}")
    assert m.entry.root.name == "b" and not m.entry.root.is_root


def test_header_attributes_of_every_form_keep_their_text():
    header = ("HloModule m, is_scheduled=true, replica_count=2, num_partitions=4, "
              "input_output_alias={ {0}: (0, {}, may-alias), {1}: (1, {}, must-alias) }, "
              "buffer_donor={ (0, {}) }, alias_passthrough_params=true, "
              'frontend_attributes={xla.sdy.meshes={mesh = #sdy.mesh<["x"=2]>}, k="v"}, '
              "allow_spmd_sharding_propagation_to_parameters={false,true}\n")
    m = parse_one(header + "ENTRY e {\n  ROOT p = f32[] parameter(0)\n}\n")
    assert m.attrs["replica_count"].text == "2"
    assert m.attrs["input_output_alias"].text == \
        "{ {0}: (0, {}, may-alias), {1}: (1, {}, must-alias) }"
    assert m.attrs["frontend_attributes"].text.endswith('k="v"}')
    assert (m.attrs["num_partitions"].pos.line, m.attrs["num_partitions"].pos.col) == (1, 65)


# -- computations ---------------------------------------------------------------------------------

def test_signatures_with_tuples_and_execution_thread():
    m = parse_one("%comp (p: (f32[2], s32[]), q: token[]) -> () {\n"
                  "  %p = (f32[2]{0}, s32[]) parameter(0)\n"
                  "  %q = token[] parameter(1)\n"
                  "  ROOT %t = () tuple()\n"
                  '}, execution_thread="host"\n'
                  "ENTRY %e () -> f32[2] {\n  ROOT %c = f32[2]{0} constant({1, 2})\n}\n")
    comp = m.computations[0]
    assert comp.attrs["execution_thread"].text == '"host"'
    assert m.source.text[:comp.end].endswith('}, execution_thread="host"')
    assert m.source.text[:m.entry.end].endswith("constant({1, 2})\n}")
    assert comp.signature[0].shape.text() == "(f32[2], s32[])"
    assert comp.result_shape.is_tuple and comp.result_shape.elements == ()
    assert comp.root.operands == []
    assert m.entry.signature == [] and m.entry.result_shape.text() == "f32[2]"


# -- shapes ---------------------------------------------------------------------------------------

ALL_ELEMENT_TYPES = ("pred s1 s2 s4 s8 s16 s32 s64 u1 u2 u4 u8 u16 u32 u64 f16 bf16 f32 f64 c64 "
                     "c128 f4e2m1fn f8e3m4 f8e4m3 f8e4m3fn f8e4m3b11fnuz f8e4m3fnuz f8e5m2 "
                     "f8e5m2fnuz f8e8m0fnu").split()


@pytest.mark.parametrize("element", ALL_ELEMENT_TYPES)
def test_every_element_type_parses(element):
    m = parse_one(f"ENTRY e {{\n  ROOT p = {element}[2,3]{{0,1}} parameter(0)\n}}")
    shape = m.entry.root.shape
    assert shape.element == element and shape.dims == (2, 3) and shape.layout == "{0,1}"


@pytest.mark.parametrize("text, dims, bounded, layout", [
    ("f32[]", (), (), None),
    ("f32[]{}", (), (), "{}"),
    ("u32[]{:S(2)}", (), (), "{:S(2)}"),
    ("f32[<=8,4]", (8, 4), (True, False), None),
    ("f32[?,3]{1,0}", (None, 3), (False, False), "{1,0}"),
    ("bf16[1,2,2048,6144]{3,2,1,0:T(8,128)(2,1)S(1)}", (1, 2, 2048, 6144),
     (False,) * 4, "{3,2,1,0:T(8,128)(2,1)S(1)}"),
    ("f32[8,128]{0,1:T(2,128)(2,1)*(1)L(4)E(32)S(3)M(1024)}", (8, 128), (False, False),
     "{0,1:T(2,128)(2,1)*(1)L(4)E(32)S(3)M(1024)}"),
    ("s8[2, 3]{ 1, 0 }", (2, 3), (False, False), "{ 1, 0 }"),
])
def test_array_shapes_with_dynamic_dims_and_layouts(text, dims, bounded, layout):
    shape = parse_one(f"ENTRY e {{\n  ROOT p = {text} parameter(0)\n}}").entry.root.shape
    assert (shape.dims, shape.bounded, shape.layout) == (dims, bounded, layout)


def test_tuple_shapes_nested_and_empty_with_index_comments():
    text = ("ENTRY e {\n  ROOT p = (f32[2]{0}, (s32[], u32[]), (), token[], f32[1], "
            "/*index=5*/f32[3]) parameter(0)\n}")
    shape = parse_one(text).entry.root.shape
    assert shape.text() == "(f32[2]{0}, (s32[], u32[]), (), token[], f32[1], f32[3])"
    assert shape.elements[1].elements[1].element == "u32"
    assert shape.elements[2].elements == ()


def test_a_brace_after_the_result_shape_opens_the_body_not_a_layout():
    m = parse_one("ENTRY %e (a: f32[2]) -> f32[2] {\n  ROOT %a = f32[2]{0} parameter(0)\n}")
    assert m.entry.result_shape.layout is None and m.entry.root.name == "a"


# -- instructions and operands --------------------------------------------------------------------

def test_inline_operand_shapes_of_older_xla():
    m = parse_one("ENTRY %e {\n  %x = f32[4]{0} parameter(0)\n"
                  "  ROOT %a = f32[4]{0} add(f32[4]{0} %x, f32[4]{0} %x)\n}")
    operands = m.entry.root.operands
    assert [o.name for o in operands] == ["x", "x"]
    assert operands[0].shape.text() == "f32[4]{0}" and operands[1].pos.col == 51


def test_nested_operand_instructions_are_hoisted_before_their_user():
    m = parse_one("ENTRY e {\n  x = f32[] parameter(0)\n"
                  "  ROOT r = f32[] add(x, f32[] multiply(f32[] constant(2), x))\n"
                  "  constant.nested.1 = f32[] constant(7)\n}")
    names = [i.name for i in m.entry.instructions]
    assert len(names) == len(set(names)) == 5
    const, mul = m.entry.instructions[1], m.entry.instructions[2]
    assert (const.opcode, const.literal, mul.opcode) == ("constant", "2", "multiply")
    assert mul.operands[0].name == const.name and mul.operands[1].name == "x"
    assert m.entry.root.operands[1].name == mul.name
    assert m.entry.root.is_root and m.entry.root.name == "r"
    assert "constant.nested.1" in names  # the written name kept; the nested one moved


def test_constant_literal_text_and_position_and_parameter_number():
    m = parse_one("ENTRY e {\n  c = f32[2,2] constant({ {1, 2}, {3, (4)} })\n"
                  "  ROOT p = f32[] parameter( 0 )\n}")
    c = m.entry.instructions[0]
    assert c.literal == "{ {1, 2}, {3, (4)} }"
    assert (c.literal_pos.line, c.literal_pos.col) == (2, 25)
    assert m.entry.root.literal == "0" and m.entry.root.literal_pos.col == 29


# -- attribute values -----------------------------------------------------------------------------

ATTRIBUTE_VALUES = [
    "{0,2}", "{}", "true", "kLoop", "%sum", "3x3", "1_2x0_1", "-1_2x0_-3", "b01f_01io->b01f",
    "bf01_oi01->bf01", "0", "-7", "1e-05", "0.001", '"a,b}"', "'q'",
    "{size=3x3 stride=2x2 pad=1_1x1_1}", "{[0:8:2], [1:4]}",
    "{devices=[2,1,2]0,1,2,3 last_tile_dim_replicate}", "{{replicated}, {maximal device=0}}",
    "[2,4]<=[8]", "[2,4]<=[4,2]T(1,0)", "mesh['x'=2,'y'=4] {'x'}", "mesh[x=2,y=2] {x:(1)2}",
    "mesh[x=2,y=2], device_ids=(1,0,3,2) {x}", "{mesh['x'=2,'y'=2], [{'y'}, {}], manual={'x'}}",
    "{{0,1},{1,0}}", '{op_name="jit(f)/x" source_file="/a b.py" source_line=3}',
    '{"k":{"v":[1,2]},"s":"}"}', "L.0@2:4", "{high,default}", "{%a, %b}",
    "{ {}: (0, {}) }", "{devices=[2,2]<=[4] last_tile_dims={manual}}",
    "s32[2] {1, 2}", "{{0}}",
]


@pytest.mark.parametrize("value", ATTRIBUTE_VALUES)
def test_attribute_value_forms_keep_their_exact_text(value):
    text = (f"ENTRY e {{\n  p = f32[] parameter(0)\n"
            f"  ROOT r = f32[] copy(p), first={value}, last=done\n}}")
    attrs = parse_one(text).entry.root.attrs
    assert attrs["first"].text == value
    assert attrs["first"].pos.col == 33
    assert attrs["last"].text == "done"


def test_control_predecessors_and_dashed_attribute_names_stay_attributes():
    m = parse_one("ENTRY e {\n  a = f32[] parameter(0)\n  b = f32[] negate(a)\n"
                  "  ROOT c = f32[] copy(a), control-predecessors={b}\n}")
    assert m.entry.root.attrs["control-predecessors"].text == "{b}"


def test_last_attribute_value_ends_at_the_line_comment():
    m = parse_one("ENTRY e { // the body\n  a = f32[] parameter(0) // first\n"
                  "  ROOT b = f32[] copy(a), x=kTag // done\n}\n// trailing")
    assert m.entry.root.attrs["x"].text == "kTag"


# -- files with several modules -------------------------------------------------------------------

def test_split_files_keep_true_positions():
    text = ("HloModule one\nENTRY e {\n  ROOT p = f32[] parameter(0)\n}\n// -----\n"
            "HloModule two\nENTRY e {\n  ROOT q = s32[] parameter(0)\n}\n  // -----  \n\n")
    one, two = parse_hlo_modules(text, "s.hlo")
    assert (one.name, two.name) == ("one", "two")
    assert (two.entry.root.pos.line, two.entry.root.pos.col) == (8, 8)
    assert two.source is one.source and two.pos.line == 6


def test_custom_call_literal_attribute_keeps_shape_and_value():
    m = parse_one("ENTRY e {\n  ROOT c = f32[] custom-call(), custom_call_target=\"t\", "
                  "literal=f32[] 0.1, other={1}\n}")
    assert m.entry.root.attrs["literal"].text == "f32[] 0.1"
    m = parse_one("ENTRY e {\n  ROOT c = f32[] custom-call(), literal=( s32[2]{0} {4, 5}, "
                  "pred[] 1 )\n}")
    assert m.entry.root.attrs["literal"].text == "( s32[2]{0} {4, 5}, pred[] 1 )"


def test_strings_may_span_lines_inside_values():
    m = parse_one('HloModule m, origin_recovery_table={\n  "\n  ENTRY x {\n  }\n  "\n}\n'
                  "ENTRY e {\n  ROOT p = f32[] parameter(0)\n}")
    assert m.attrs["origin_recovery_table"].text.count("\n") == 5


def test_nested_multi_line_operand_with_tuple_shape():
    m = parse_one("ENTRY t {\n  ROOT r = f32[10] get-tuple-element(\n"
                  "    (f32[10], f16[10]) tuple(f32[10] parameter(0), f16[10] parameter(1))\n"
                  "  ), index=0\n}")
    opcodes = [i.opcode for i in m.entry.instructions]
    assert opcodes == ["parameter", "parameter", "tuple", "get-tuple-element"]
    assert [p.literal for p in m.entry.parameters()] == ["0", "1"]
    assert m.entry.root.attrs["index"].text == "0"


# -- errors: located, naming what was expected ----------------------------------------------------

ENTRY_OK = "ENTRY e {\n  ROOT p = f32[] parameter(0)\n}\n"

BAD_INPUTS = [
    ("", 1, 1, "expected 'HloModule' or a computation"),
    ("  // only a comment\n", 2, 1, "expected 'HloModule' or a computation"),
    ("HloModule m\n", 2, 1, "expected a computation"),
    ("HloModule m, is_scheduled\n" + ENTRY_OK, 1, 26, "expected '=' after attribute name"),
    ("HloModule m, a=1, a=2\n" + ENTRY_OK, 1, 19, "attribute 'a' is given twice"),
    ("HloModule m, x=\n" + ENTRY_OK, 1, 16, "expected a value for attribute 'x'"),
    ("ENTRY e {\n  ROOT p = f32[] parameter(0)\n", 1, 7, "is never closed"),
    ("ENTRY e {\n}\n", 1, 7, "has no instructions"),
    ("ENTRY e {\n  ROOT p = g32[] parameter(0)\n}", 2, 12, "unknown element type 'g32'"),
    ("ENTRY e {\n  ROOT p = f32[2,x] parameter(0)\n}", 2, 18, "expected a dimension size"),
    ("ENTRY e {\n  ROOT p = f32[2]{1} parameter(0)\n}", 2, 18,
     "must be a permutation of the 1 dimension(s)"),
    ("ENTRY e {\n  ROOT p = f32[2]{0 parameter(0)\n}", 2, 18, "expected a layout"),
    ("ENTRY e {\n  ROOT p = (f32[], parameter(0)\n}", 2, 20, "expected a tuple element shape"),
    ("ENTRY e {\n  ROOT p = f32[] parameter(x)\n}", 2, 28, "expected the parameter number"),
    ("ENTRY e {\n  ROOT p = f32[] parameter(-1)\n}", 2, 28, "cannot be negative"),
    ("ENTRY e {\n  ROOT c = f32[] constant()\n}", 2, 27, "expected the constant's literal"),
    ("ENTRY e {\n  ROOT c = f32[] constant({1, 2)\n}", 2, 32, "expected '}' to close"),
    ("ENTRY e {\n  p = f32[] parameter(0)\n  ROOT a = f32[] add(p p)\n}", 3, 24,
     "expected ',' or ')' in the operands of 'a'"),
    ("ENTRY e {\n  p = f32[] parameter(0)\n  ROOT a = f32[] add(p,)\n}", 3, 24,
     "expected an operand"),
    ("ENTRY e {\n  p = f32[] parameter(0)\n  p = f32[] parameter(1)\n}", 3, 3,
     "instruction 'p' is already defined"),
    ("ENTRY e {\n  ROOT p = f32[] parameter(0)\n  ROOT q = f32[] parameter(1)\n}", 3, 8,
     "a second ROOT"),
    ("ENTRY a {\n  ROOT p = f32[] parameter(0)\n}\nENTRY b {\n  ROOT p = f32[] parameter(0)\n}",
     4, 1, "a second ENTRY computation 'b'"),
    ("a {\n  ROOT p = f32[] parameter(0)\n}\na {\n  ROOT p = f32[] parameter(0)\n}", 4, 1,
     "computation 'a' is already defined"),
    ("ENTRY e {\n  ROOT p = f32[] parameter(0), x=\"abc\n}", 2, 34, "unterminated string"),
    ("ENTRY e {\n  ROOT p = f32[] parameter(0), x={a\n}", 1, 7, "is never closed"),
    ("ENTRY e {\n  ROOT p = f32[] parameter(0) /* open\n}", 2, 31, "unterminated '/*'"),
    ("ENTRY e {\n  ROOT p = f32[] parameter(0)\n  q = f32[] negate p\n}", 3, 20,
     "expected '(' after opcode 'negate'"),
    ("ENTRY e {\n  ROOT p = f32[] f32(0)\n}", 2, 18, "expected an opcode, found 'f32'"),
    ("ENTRY e (p f32[]) -> f32[] {\n  ROOT p = f32[] parameter(0)\n}", 1, 12,
     "expected ':' and the shape of parameter 'p'"),
    ("ENTRY e (p: f32[]) f32[] {\n  ROOT p = f32[] parameter(0)\n}", 1, 20, "expected '->'"),
    ("ENTRY e {\n  ROOT p = b(f32[4]) parameter(0)\n}", 2, 12,
     "buffer shapes 'b(...)' (printed by the newest XLA) are not supported"),
    ("HloModule m\nFileNames\n1 \"a\"\nFileLocations\n1 {file_name_id=1 line=2}\n" + ENTRY_OK,
     5, 3, "lacks function_name_id"),
    ("HloModule m\nFunctionNames\n1 \"f\"\nFileNames\n1 \"a\"\n" + ENTRY_OK, 4, 1,
     "'FileNames' comes out of order"),
    ("HloModule m\nStackFrames\n1 {file_location_id=1 parent=1}\n" + ENTRY_OK, 3, 23,
     "unknown field 'parent'"),
    ("HloModule m\nFileNames\n1 \"a\"\n1 \"b\"\n" + ENTRY_OK, 4, 1,
     "FileNames id 1 is defined twice"),
    ("ENTRY e {\n  ROOT p = f32[] parameter(0)\n}\nHloModule again\n" + ENTRY_OK, 4, 1,
     "expected a computation name"),
    ("ENTRY e {\n  ROOT p = f32[] parameter(0)\n  ENTRY\n}", 3, 3, "expected an instruction"),
    ("ENTRY e {\n  ROOT a = f32[] add(p, p)\n  p = f32[] parameter(0)\n}", 2, 22,
     "operand 'p' is not defined before this use"),
    ("ENTRY e {\n  ROOT a = f32[] add(f32[] p, f32[] p)\n  p = f32[] parameter(0)\n}", 2, 28,
     "operand 'p' is not defined before this use"),
    ("ENTRY e {\n  p = f32[] parameter(0)\n  q = f32[] parameter(0)\n}", 3, 23,
     "parameter number 0 is already taken by 'p'"),
    ("ENTRY e {\n  p = f32[] parameter(0)\n  q = f32[] parameter(2)\n}", 3, 23,
     "parameter number 2 leaves a gap"),
]


@pytest.mark.parametrize("text, line, col, message", BAD_INPUTS)
def test_malformed_text_gives_a_located_parse_error(text, line, col, message):
    error = error_of(text)
    assert message in error.message
    assert (error.line, error.col) == (line, col), error.render()
    assert error.filename == "bad.hlo"


def _valid_modules() -> list[str]:
    return [PRE_OPT, POST_OPT, ATTRIBUTE_MODULE]


ATTRIBUTE_MODULE = ("HloModule m, input_output_alias={ {0}: (0, {}, may-alias) }\n"
                    "ENTRY e {\n  p = f32[2,2]{1,0:T(2,128)} parameter(0)\n"
                    "  c = c64[2] constant({(1, 2), (3, 4)})\n"
                    "  ROOT r = f32[2,2]{1,0} copy(f32[2,2]{1,0} p), "
                    + ", ".join(f"a{i}={v}" for i, v in enumerate(ATTRIBUTE_VALUES)) + "\n}\n")


def _parse_or_error(text: str) -> None:
    """Parses fully (literals too); ParseError is fine, any other exception is a bug."""
    from hlodbg.engine.syntax.hlo.literals import parse_literal
    try:
        for module in parse_hlo_modules(text, "fuzz.hlo"):
            for computation in module.computations:
                for instruction in computation.instructions:
                    if instruction.opcode == "constant":
                        parse_literal(instruction.literal, instruction.literal_pos,
                                      instruction.shape)
    except ParseError as error:
        assert error.pos is not None and 0 <= error.pos.offset <= len(text)


@pytest.mark.parametrize("index", range(3))
def test_truncated_modules_give_parse_errors_never_other_exceptions(index):
    text = _valid_modules()[index]
    for cut in range(len(text)):
        _parse_or_error(text[:cut])


@pytest.mark.parametrize("index", range(3))
def test_perturbed_modules_give_parse_errors_never_other_exceptions(index):
    import random
    text = _valid_modules()[index]
    rng = random.Random(index)
    for _ in range(1500):
        at = rng.randrange(len(text))
        ch = rng.choice("{}()[],=%\"' \n-:/*x0.9<>?")
        mutated = text[:at] + ch + (text[at + 1:] if rng.random() < 0.5 else text[at:])
        _parse_or_error(mutated)


def test_inline_computation_attribute_is_read_at_its_position():
    m = parse_one("ENTRY e {\n  p = f32[4] parameter(0)\n  z = f32[] constant(0)\n"
                  "  ROOT r = f32[] reduce(p, z), dimensions={0}, to_apply={\n"
                  "    a = f32[] parameter(0)\n    b = f32[] parameter(1)\n"
                  "    ROOT s = f32[] add(a, b)\n  }\n}")
    inline = parse_inline_computation(m.entry.root.attrs["to_apply"], "r.to_apply")
    assert [i.name for i in inline.instructions] == ["a", "b", "s"] and inline.root.name == "s"
    assert (inline.root.pos.line, inline.root.pos.col) == (7, 10)
    with pytest.raises(ParseError, match="expected a computation name or an inline"):
        parse_inline_computation(m.entry.root.attrs["dimensions"].__class__(
            "to_apply", "sum", m.entry.root.attrs["dimensions"].pos), "x")
    broken = parse_one("ENTRY e {\n  ROOT r = f32[] call(), to_apply={ a = f32[] }\n}")
    with pytest.raises(ParseError, match="expected the opcode of instruction 'a'") as info:
        parse_inline_computation(broken.entry.root.attrs["to_apply"], "r.to_apply")
    assert (info.value.line, info.value.col) == (2, 47)


KITCHEN_SINK = """\
HloModule sink, entry_computation_layout={(f32[8]{0})->f32[8]{0}}, replica_count=2

%cond (c: (s32[], f32[8])) -> pred[] {
  %c = (s32[], f32[8]{0}) parameter(0)
  %i = s32[] get-tuple-element((s32[], f32[8]{0}) %c), index=0
  %n = s32[] constant(3)
  ROOT %lt = pred[] compare(s32[] %i, s32[] %n), direction=LT, type=SIGNED
}

%body (b: (s32[], f32[8])) -> (s32[], f32[8]) {
  %b = (s32[], f32[8]{0}) parameter(0)
  %i.1 = s32[] get-tuple-element(%b), index=0
  %v = f32[8]{0} get-tuple-element(%b), index=1
  %one = s32[] constant(1)
  %next = s32[] add(%i.1, %one)
  ROOT %t = (s32[], f32[8]{0}) tuple(%next, %v)
}

%sum (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %s = f32[] add(%x, %y)
}

ENTRY %main (p: f32[8]) -> f32[8] {
  %p = f32[8]{0} parameter(0), sharding={devices=[2]<=[2]}, parameter_replication={false}
  %zero = s32[] constant(0)
  %init = (s32[], f32[8]{0}) tuple(%zero, %p)
  %loop = (s32[], f32[8]{0}) while(%init), condition=%cond, body=%body, \
backend_config={"known_trip_count":{"n":"3"}}
  %v.1 = f32[8]{0} get-tuple-element(%loop), index=1, statistics={visualizing_index=1,stat-1=0.5}
  %ars = f32[8]{0} all-reduce-start(%v.1), channel_id=1, replica_groups={{0,1}}, \
use_global_device_ids=true, to_apply=%sum, origin={{"v"}}
  %ard = f32[8]{0} all-reduce-done(%ars), metadata={op_name="psum" profile_type={1}}
  %tok = token[] after-all()
  %out = token[] outfeed(%ard, %tok), outfeed_shape=f32[8]{0}, outfeed_config="cfg"
  %dom = f32[8]{0} domain(%ard), domain={kind="sharding", entry={maximal device=0}, \
exit={replicated}}
  ROOT %cc = f32[8]{0} custom-call(%dom), custom_call_target="Sharding", \
sharding={{devices=[2]0,1}}, operand_layout_constraints={f32[8]{0}}, \
api_version=API_VERSION_TYPED_FFI, control-predecessors={%out}
}
"""


def test_a_module_mixing_xla_constructs():
    m = parse_one(KITCHEN_SINK)
    assert [c.name for c in m.computations] == ["cond", "body", "sum", "main"]
    main = m.entry
    by_name = {i.name: i for i in main.instructions}
    assert by_name["loop"].attrs["backend_config"].text == '{"known_trip_count":{"n":"3"}}'
    assert by_name["out"].attrs["outfeed_shape"].text == "f32[8]{0}"
    assert by_name["dom"].attrs["domain"].text.endswith("exit={replicated}}")
    assert by_name["ars"].attrs["origin"].text == '{{"v"}}'
    assert main.root.attrs["control-predecessors"].text == "{%out}"
    assert main.root.attrs["operand_layout_constraints"].text == "{f32[8]{0}}"
    assert m.computations[0].root.attrs["type"].text == "SIGNED"
    assert by_name["p"].attrs["sharding"].text == "{devices=[2]<=[2]}"


def test_index_comments_in_operand_lists_and_root_in_the_middle():
    m = parse_one("ENTRY e {\n  v = f32[] parameter(0)\n"
                  "  ROOT t = (f32[], f32[], f32[], f32[], f32[], /*index=5*/f32[]) "
                  "tuple(v, v, v, v, v, /*index=5*/v)\n  n = f32[] negate(v)\n}")
    assert len(m.entry.root.operands) == 6 and m.entry.root.name == "t"
    assert m.entry.instructions[-1].name == "n"
