"""HLO attribute values decode into Python/IR values, and bad ones fail at the offending character.

Every decoder gets the value's text and where it starts; the tests put each value after an
attribute name on an instruction line so the reported column is the one a user would see.
"""
from __future__ import annotations

import numpy as np
import pytest

from hlodbg.engine.ir import attributes as A
from hlodbg.engine.ir.errors import ParseError, SourcePos, SourceText
from hlodbg.engine.ir.sharding import ShardingSyntaxError, parse_hlo_sharding
from hlodbg.engine.syntax.hlo import attr_values as V
from hlodbg.engine.syntax.hlo.tree import HloAttr

PREFIX = "  ROOT r = f32[4] op(a), attr="


def at(value: str) -> tuple[str, SourcePos]:
    """`value` as it sits in a one-line file after PREFIX, and its position there."""
    source = SourceText(PREFIX + value, "t.hlo")
    return value, SourcePos(source, len(PREFIX))


def run(decoder, value: str, *args):
    return decoder(*at(value), *args)


def error_index(decoder, value: str, *args) -> tuple[int, str]:
    """Where (index into `value`) and with what message decoding `value` fails."""
    with pytest.raises(ParseError) as info:
        run(decoder, value, *args)
    error = info.value
    assert error.pos.line == 1 and error.pos.filename == "t.hlo"
    assert error.col == len(PREFIX) + error.pos.offset - len(PREFIX) + 1
    return error.pos.offset - len(PREFIX), error.message


# -- scalars, lists, names -------------------------------------------------------------------------


def test_scalars_and_lists():
    assert run(V.decode_int, "3") == 3 and run(V.decode_int, " -1 ") == -1
    assert run(V.decode_float, "0.5") == 0.5 and run(V.decode_float, "1e-3") == 1e-3
    assert run(V.decode_float, "-inf") == float("-inf") and run(V.decode_float, "2") == 2.0
    assert run(V.decode_bool, "true") is True and run(V.decode_bool, "false") is False
    assert run(V.decode_int_list, "{0,2}") == (0, 2) and run(V.decode_int_list, "{}") == ()
    assert run(V.decode_int_list, "{ 1 , -2 }") == (1, -2)
    assert run(V.decode_int_list_list, "{{0,1},{2,3}}") == [[0, 1], [2, 3]]
    assert run(V.decode_int_list_list, "{{},{4}}") == [[], [4]] and run(V.decode_int_list_list, "{}") == []
    assert run(V.decode_bool_list, "{true,false}") == (True, False) and run(V.decode_bool_list, "{}") == ()
    assert run(V.decode_bool_or_bool_list, "true") == (True,)
    assert run(V.decode_bool_or_bool_list, "{false,true}") == (False, True)


def test_strings_unescape_c_escapes():
    assert run(V.decode_string, r'"lapack_spotrf_ffi"') == "lapack_spotrf_ffi"
    assert run(V.decode_string, r'"a\"b\\c\n\t\x41\101\u00e9"') == 'a"b\\c\n\tAAé'
    assert run(V.decode_string, "'single'") == "single"
    assert run(V.decode_string, '"\u00e9t\u00e9"') == "été"


def test_computation_and_instruction_names():
    assert run(V.decode_computation, "%add.3") == "add.3" and run(V.decode_computation, "region_0.1") == "region_0.1"
    assert run(V.decode_computation_list, "{%a, b.2}") == ["a", "b.2"]
    assert run(V.decode_computation_list, "{}") == []
    assert run(V.decode_instruction_names, "{%get-tuple-element.8, b}") == ["get-tuple-element.8", "b"]


@pytest.mark.parametrize("decoder,value,index,words", [
    (V.decode_int, "3x", 0, "expected an integer"),
    (V.decode_int, "1 2", 2, "unexpected '2'"),
    (V.decode_int_list, "{0,,2}", 3, "expected an integer"),
    (V.decode_int_list, "{0 2}", 3, "expected ',' or '}'"),
    (V.decode_int_list, "{0,2", 4, "end of the"),
    (V.decode_int_list, "0,2}", 0, "expected '{'"),
    (V.decode_int_list_list, "{{0},1}", 5, "expected '{'"),
    (V.decode_bool, "True", 0, "true or false"),
    (V.decode_bool_list, "{true,maybe}", 6, "true or false"),
    (V.decode_string, '"abc', 0, "unterminated string"),
    (V.decode_string, r'"a\qb"', 2, "unknown escape"),
    (V.decode_string, "abc", 0, "a quoted string"),
    (V.decode_computation, "{a}", 0, "a computation name"),
    (V.decode_instruction_names, "{}", 1, "an instruction name"),
    (V.decode_float, "1.5.2", 0, "expected a number"),
])
def test_malformed_scalars_and_lists(decoder, value, index, words):
    where, message = error_index(decoder, value)
    assert (where, words in message) == (index, True), message


# -- window, padding, slice, dim_labels ------------------------------------------------------------


def test_window_full_and_defaults():
    window = run(V.decode_window, "{size=3x3 stride=2x2 pad=1_1x0_0 lhs_dilate=1x2 rhs_dilate=2x1 rhs_reversal=0x1}")
    assert window == {"size": (3, 3), "stride": (2, 2), "pad": ((1, 1), (0, 0)), "lhs_dilate": (1, 2),
                      "rhs_dilate": (2, 1), "rhs_reversal": (False, True)}
    # any order, 1-D plain ints, negative padding, absent fields at XLA's defaults
    assert run(V.decode_window, "{pad=-1_2 size=5}") == {
        "size": (5,), "stride": (1,), "pad": ((-1, 2),), "lhs_dilate": (1,), "rhs_dilate": (1,),
        "rhs_reversal": (False,)}
    assert run(V.decode_window, "{}")["size"] == ()
    assert run(V.decode_window, "{size=2x1x1x1 stride=2x1x1x1}")["stride"] == (2, 1, 1, 1)


@pytest.mark.parametrize("value,index,words", [
    ("{size=3x3 stride=2}", 17, "has 1 dimensions but size= has 2"),
    ("{size=3x3 foo=1}", 10, "unknown window field 'foo'"),
    ("{size=3x3 pad=1_1_1x0_0}", 14, "low_high (two numbers)"),
    ("{size=3x3 pad=1_1x0}", 14, "low_high"),
    ("{size=3x3 size=3x3}", 10, "given twice"),
    ("{size=3x}", 6, "N or NxMx"),
    ("{size=3 rhs_reversal=2}", 21, "0 or 1"),
    ("{size=3", 7, "'}' to end the window"),
    ("{size 3}", 1, "followed by '='"),
])
def test_malformed_window(value, index, words):
    where, message = error_index(V.decode_window, value)
    assert (where, words in message) == (index, True), message


def test_padding_and_slice():
    assert run(V.decode_padding, "1_2x0_1_0") == [(1, 2, 0), (0, 1, 0)]
    assert run(V.decode_padding, "-1_-2_3") == [(-1, -2, 3)]
    assert run(V.decode_slice, "{[0:8:2], [1:7]}") == V.SliceRanges((0, 1), (8, 7), (2, 1))
    assert run(V.decode_slice, "{}") == V.SliceRanges((), (), ())
    assert error_index(V.decode_padding, "1_2x0")[0] == 0
    assert error_index(V.decode_padding, "1_2_3_4")[0] == 0
    where, message = error_index(V.decode_slice, "{[0:8:2], [1]}")
    assert where == 10 and "[start:limit]" in message
    where, message = error_index(V.decode_slice, "{[0:8:2:1]}")
    assert where == 1 and "found 4 numbers" in message
    assert error_index(V.decode_slice, "{[0,8]}")[0] == 3


def test_dim_labels_build_conv_dimension_numbers():
    assert run(V.decode_dim_labels, "b01f_01io->b01f") == A.ConvDimensionNumbers(
        input_batch_dimension=0, input_feature_dimension=3, input_spatial_dimensions=(1, 2),
        kernel_input_feature_dimension=2, kernel_output_feature_dimension=3, kernel_spatial_dimensions=(0, 1),
        output_batch_dimension=0, output_feature_dimension=3, output_spatial_dimensions=(1, 2))
    # spatial digits name the spatial dimension at that position: 10 means swapped order
    assert run(V.decode_dim_labels, "bf10_oi01->bf01").input_spatial_dimensions == (3, 2)
    one_d = run(V.decode_dim_labels, "b0f_0io->b0f")
    assert (one_d.input_spatial_dimensions, one_d.kernel_spatial_dimensions) == ((1,), (0,))
    three_d = run(V.decode_dim_labels, "b012f_012io->b012f")
    assert three_d.output_spatial_dimensions == (1, 2, 3) and three_d.kernel_output_feature_dimension == 4
    flat = run(V.decode_dim_labels, "bf_io->bf")
    assert flat.input_spatial_dimensions == () and flat.kernel_input_feature_dimension == 0
    # `?` marks a dimension the numbers leave out
    unknown = run(V.decode_dim_labels, "b0?f_0io->bf0")
    assert (unknown.input_feature_dimension, unknown.input_spatial_dimensions) == (3, (1,))


@pytest.mark.parametrize("value,index,words", [
    ("b01f_01io", 0, "dimension labels like"),
    ("b00f_01io->b01f", 2, "spatial dimension 0 appears twice"),
    ("b02f_01io->b01f", 2, "spatial dimension 2"),
    ("bb1f_0io->b0f", 1, "'b' appears twice"),
    ("b01_01io->b01f", 0, "have no 'f'"),
    ("b0f_01io->b0f", 0, "same number of spatial dimensions"),
])
def test_malformed_dim_labels(value, index, words):
    where, message = error_index(V.decode_dim_labels, value)
    assert (where, words in message) == (index, True), message


# -- enums: the IR the MLIR frontend builds -----------------------------------------------------

EQUIVALENT_MLIR = """
func.func @main(%a: tensor<4xf32>, %b: tensor<4x4xf32>, %c: tensor<2xui64>, %d: tensor<4xcomplex<f32>>) -> tensor<4xi1> {
  %0 = stablehlo.compare LT, %a, %a, TOTALORDER : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %1 = stablehlo.dot_general %b, %b, contracting_dims = [1] x [0], precision = [HIGHEST, DEFAULT], algorithm = <lhs_precision_type = bf16, rhs_precision_type = bf16, accumulation_type = f32, lhs_component_count = 1, rhs_component_count = 1, num_primitive_operations = 3, allow_imprecise_accumulation = false> : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %2:2 = stablehlo.rng_bit_generator %c, algorithm = THREE_FRY : (tensor<2xui64>) -> (tensor<2xui64>, tensor<4xui32>)
  %3 = stablehlo.fft %d, type = IRFFT, length = [4] : (tensor<4xcomplex<f32>>) -> tensor<4xf32>
  %4 = "stablehlo.triangular_solve"(%b, %b) {left_side = true, lower = true, unit_diagonal = false, transpose_a = #stablehlo<transpose ADJOINT>} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %s = stablehlo.constant dense<[4]> : tensor<1xi64>
  %5 = stablehlo.rng %z, %z, %s, distribution = NORMAL : (tensor<f32>, tensor<f32>, tensor<1xi64>) -> tensor<4xf32>
  %6 = stablehlo.custom_call @foo(%a) {api_version = 4 : i32} : (tensor<4xf32>) -> tensor<4xf32>
  %7 = stablehlo.exponential %a {result_accuracy = #stablehlo.result_accuracy<mode = #stablehlo.result_accuracy_mode<HIGHEST>>} : tensor<4xf32>
  %8 = stablehlo.exponential %a {result_accuracy = #stablehlo.result_accuracy<atol = 0.5, rtol = 0.0, ulps = 2, mode = #stablehlo.result_accuracy_mode<TOLERANCE>>} : tensor<4xf32>
  %9 = stablehlo.convolution(%b, %b) dim_numbers = [b, f] x [o, i] -> [f, b], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %10 = stablehlo.custom_call @bar(%a) {output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [], operand_index = 0, operand_tuple_indices = []>]} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xi1>
}
"""


def _mlir_attributes() -> dict[str, dict]:
    from hlodbg.engine.syntax import frontend_for

    module = frontend_for(EQUIVALENT_MLIR, "eq.mlir").parse_all(EQUIVALENT_MLIR, "eq.mlir")[0]
    found: dict[str, dict] = {}
    for op in module.walk():
        found.setdefault(op.name, []).append(op.attributes)
    return found


def test_enums_match_the_mlir_frontend():
    mlir = _mlir_attributes()
    same = [
        (run(V.decode_comparison_direction, "LT"), mlir["stablehlo.compare"][0]["comparison_direction"]),
        (run(V.decode_comparison_type, "TOTALORDER"), mlir["stablehlo.compare"][0]["compare_type"]),
        (run(V.decode_precision_list, "{highest,DEFAULT}"), mlir["stablehlo.dot_general"][0]["precision_config"]),
        (run(V.decode_dot_algorithm, "dot_bf16_bf16_f32_x3"), mlir["stablehlo.dot_general"][0]["algorithm"]),
        (run(V.decode_rng_algorithm, "rng_three_fry"), mlir["stablehlo.rng_bit_generator"][0]["rng_algorithm"]),
        (run(V.decode_fft_type, "IRFFT"), mlir["stablehlo.fft"][0]["fft_type"]),
        (run(V.decode_transpose, "ADJOINT"), mlir["stablehlo.triangular_solve"][0]["transpose_a"]),
        (run(V.decode_rng_distribution, "rng_normal"), mlir["stablehlo.rng"][0]["rng_distribution"]),
        (run(V.decode_api_version, "API_VERSION_TYPED_FFI"), mlir["stablehlo.custom_call"][0]["api_version"]),
        (run(V.decode_result_accuracy, "{mode=highest}"), mlir["stablehlo.exponential"][0]["result_accuracy"]),
        (run(V.decode_result_accuracy, "{tolerance={atol=0.5,rtol=0,ulps=2}}"),
         mlir["stablehlo.exponential"][1]["result_accuracy"]),
        (run(V.decode_dim_labels, "bf_oi->fb"), mlir["stablehlo.convolution"][0]["dimension_numbers"]),
        (A.ArrayAttr(run(V.decode_output_to_operand_aliasing, "{{}: (0, {})}")),
         mlir["stablehlo.custom_call"][1]["output_operand_aliases"]),
    ]
    for ours, theirs in same:
        assert A.attribute_key(ours) == A.attribute_key(theirs), (ours, theirs)


def test_comparison_type_defaults_by_element_type():
    assert [str(V.default_comparison_type(t)) for t in ("f32", "bf16", "c64", "s8", "u32", "pred")] == [
        "FLOAT", "FLOAT", "FLOAT", "SIGNED", "UNSIGNED", "UNSIGNED"]
    assert V.default_comparison_type("f16").kind == "comparison_type"


def test_enum_words_follow_xla_case_rules():
    # jaxlib 0.10.2 rejects `direction=lt`, `type=float`, `fft_type=fft` and accepts
    # `distribution=RNG_UNIFORM`, `operand_precision={high}`, `algorithm=DOT_BF16_BF16_F32`.
    assert error_index(V.decode_comparison_direction, "lt")[0] == 0
    assert error_index(V.decode_comparison_type, "float")[0] == 0
    assert error_index(V.decode_fft_type, "fft")[0] == 0
    assert error_index(V.decode_transpose, "no_transpose")[0] == 0
    assert run(V.decode_rng_distribution, "RNG_UNIFORM") == "UNIFORM"
    assert run(V.decode_dot_algorithm, "DOT_F16_F16_F32").accumulation_type == A.FloatType("f32")
    assert run(V.decode_api_version, "api_version_original") == 1
    assert run(V.decode_custom_call_schedule, "schedule_latest") == "SCHEDULE_LATEST"
    assert run(V.decode_fusion_kind, "kLoop") == "kLoop" and error_index(V.decode_fusion_kind, "loop")[0] == 0
    assert run(V.decode_conv_kind, "wgrad") == "wgrad"
    where, message = error_index(V.decode_precision_list, "{high, fastest}")
    assert where == 7 and "DEFAULT, HIGH, HIGHEST" in message


def test_dot_algorithms():
    fast = run(V.decode_dot_algorithm, "dot_any_f8_any_f8_f32_fast_accum")
    # XLA's own HLO -> StableHLO translation writes any_f8 as f8E5M2
    assert (fast.lhs_precision_type, fast.allow_imprecise_accumulation) == (A.FloatType("f8E5M2"), True)
    assert run(V.decode_dot_algorithm, "dot_tf32_tf32_f32").lhs_precision_type == A.FloatType("tf32")
    assert run(V.decode_dot_algorithm, "dot_f64_f64_f64").num_primitive_operations == 1
    assert error_index(V.decode_dot_algorithm, "alg_unset")[0] == 0


# -- replica groups and pairs ------------------------------------------------------------------


@pytest.mark.parametrize("value,groups", [
    ("{{0,1},{2,3}}", [[0, 1], [2, 3]]),
    ("{}", []),
    ("{{0,1,2,3},{4,5,6,7}}", [[0, 1, 2, 3], [4, 5, 6, 7]]),
    ("[2,2]<=[4]", [[0, 1], [2, 3]]),
    ("[4,2]<=[2,4]T(1,0)", [[0, 4], [1, 5], [2, 6], [3, 7]]),  # hlo_text.md §6 worked example
    ("[1,8]<=[8]", [list(range(8))]),
    ("[2,4]<=[2,2,2]T(2,1,0)", [[0, 4, 2, 6], [1, 5, 3, 7]]),
    ("mesh['x'=2,'y'=4] {'x'}", [[0, 4], [1, 5], [2, 6], [3, 7]]),  # hlo_text.md §6 worked example
    ("mesh[x=2,y=4] {x}", [[0, 4], [1, 5], [2, 6], [3, 7]]),
    ("mesh['x'=2,'y'=4] {'y'}", [[0, 1, 2, 3], [4, 5, 6, 7]]),
    ("mesh['x'=2,'y'=4] {'y','x'}", [[0, 4, 1, 5, 2, 6, 3, 7]]),
    ("mesh['x'=2,'y'=4] {'x','y'}", [[0, 1, 2, 3, 4, 5, 6, 7]]),
    ("mesh['x'=2,'y'=4] {'y':(2)2}", [[0, 1], [2, 3], [4, 5], [6, 7]]),
    ("mesh['x'=2,'y'=4] {'y':(1)2}", [[0, 2], [1, 3], [4, 6], [5, 7]]),
    ("mesh['x'=2,'y'=4] {'y':(1)2, 'x'}", [[0, 4, 2, 6], [1, 5, 3, 7]]),
    ("mesh['x'=2,'y'=4] {}", [[d] for d in range(8)]),
    ("mesh['x'=2,'y'=4], device_ids=(7,6,5,4,3,2,1,0) {'x'}", [[7, 3], [6, 2], [5, 1], [4, 0]]),
    ("mesh['x'=2,'y'=2], device_ids=([2,2]T(1,0)) {'y'}", [[0, 2], [1, 3]]),
])
def test_replica_groups(value, groups):
    assert run(V.decode_replica_groups, value) == groups


@pytest.mark.parametrize("value,index,words", [
    ("[4,2]<=[4]", 7, "holds 4 devices, expected 8"),
    ("[4,2]<=[2,4]T(1,1)", 13, "permutation"),
    ("[8]<=[8]", 0, "[groups,group_size]"),
    ("{{0,1},2}", 7, "expected '{'"),
    ("mesh['x'=2,'y'=4] {'z'}", 19, "no axis 'z'"),
    ("mesh['x'=2,'y'=4] {'y':(3)2}", 19, "does not divide"),
    ("mesh['x'=2,'y'=4] {'x','x'}", 18, "selected twice"),
    ("mesh['x'=2,'x'=4] {'x'}", 11, "appears twice"),
    ("mesh['x'=2,'y'=4], device_ids=(0,1) {'x'}", 31, "lists 2 devices"),
    ("mesh['x'=2] {'x'} extra", 18, "unexpected 'extra'"),
    ("[100000000,100]<=[10000000000]", 17, "more than hlodbg reads"),
    ("mesh['x'=100000,'y'=100000] {'x'}", 4, "more than hlodbg reads"),
    ("all", 0, "replica groups"),
])
def test_malformed_replica_groups(value, index, words):
    where, message = error_index(V.decode_replica_groups, value)
    assert (where, words in message) == (index, True), message


def test_source_target_pairs():
    assert run(V.decode_source_target_pairs, "{{0,1},{1,2}}") == [(0, 1), (1, 2)]
    assert run(V.decode_source_target_pairs, "{}") == []
    where, message = error_index(V.decode_source_target_pairs, "{{0,1},{1,2,3}}")
    assert where == 7 and "pair" in message


# -- shardings -----------------------------------------------------------------------------------

SHARDINGS = [
    "{replicated}", "{manual}", "{unknown}", "{unreduced}", "{maximal device=3}",
    "{devices=[2,1,4]0,1,2,3,4,5,6,7}", "{devices=[2,4]<=[8]}", "{devices=[4,1,2]<=[2,4]T(1,0) last_tile_dim_replicate}",
    "{devices=[2,1,2]<=[4] last_tile_dims={manual, replicated}}", "{replicated shard_as 1}",
    "{devices=[2]0,1 shard_like 2}", '{devices=[2]0,1 metadata={op_name="a" source_line=3}}',
    '{replicated metadata={{op_name="a"}, {op_name="b"}}}', "{{replicated}, {devices=[2]0,1}}", "{}",
]
NAMED_SHARDINGS = [
    "{mesh['x'=2,'y'=2], [{'y'}, {}], manual={'x'}}", "{mesh[x=2,y=2], [{y}, {}], replicated={x}}",
    "{mesh['x'=2,'y'=4], [{'y':(1)2, ?}, {}], unreduced={'x'}}", "{maximal_mesh[device_id=0]}",
    "{mesh['x'=2], replicated}", '{mesh[x=2], manual, metadata={op_name="a"}}',
    "{mesh['x'=4], device_ids=(3,2,1,0), [{'x'}]}",
]


@pytest.mark.parametrize("value", SHARDINGS + NAMED_SHARDINGS)
def test_sharding_text_is_kept(value):
    assert run(V.decode_sharding, " " + value + " ") == value


@pytest.mark.parametrize("value", SHARDINGS)
def test_sharding_ir_reads_what_the_decoder_accepts(value):
    parse_hlo_sharding(run(V.decode_sharding, value))


@pytest.mark.parametrize("value", NAMED_SHARDINGS)
def test_sharding_ir_places_the_named_mesh_form(value):
    # What each one places: tests/test_hlo_gaps.py.
    assert V.is_named_sharding(value)
    assert parse_hlo_sharding(value).kind in ("tiled", "maximal", "replicated", "manual")


def test_sharding_ir_skips_shard_groups_and_reads_unreduced_and_empty_tuples():
    assert parse_hlo_sharding("{devices=[2]1,0 shard_as 1}").tile_assignment.tolist() == [1, 0]
    assert parse_hlo_sharding("{unreduced}").kind == "unreduced"
    empty = parse_hlo_sharding("{}")
    assert (empty.kind, empty.elements) == ("tuple", ())


@pytest.mark.parametrize("value,index,words", [
    ("{replicated", 11, "'}' to end the sharding"),
    ("{maximal}", 1, "exactly one device"),
    ("{replicated device=1}", 1, "assigns no devices"),
    ("{devices=[2,2]0,1,2}", 14, "needs 4 devices, found 3"),
    ("{devices=[2]<=[3]}", 14, "holds 3 devices, expected 2"),
    ("{devices=[1]0}", 1, "needs more than one"),
    ("{bogus}", 1, "unexpected 'bogus'"),
    ("{colour=red}", 1, "unknown sharding attribute 'colour='"),
    ("{replicated manual}", 1, "found replicated and manual"),
    ("{devices=[2]0,1 last_tile_dims={manual, spare}}", 40, "subgroup kind"),
    ("{{replicated}, replicated}", 15, "'{' to start a tuple element"),
    ("{mesh['x'=2], [{'z'}]}", 16, "no axis 'z'"),
    ("{mesh['x'=2], [{'x'}], colour={}}", 23, "unknown named-sharding attribute"),
    ("{devices=[2]0,1 metadata={op_name=3}}", 34, "quoted string for op_name"),
])
def test_malformed_sharding(value, index, words):
    where, message = error_index(V.decode_sharding, value)
    assert (where, words in message) == (index, True), message


# -- records ---------------------------------------------------------------------------------------


def test_metadata():
    text = ('{op_type="dot" op_name="jit(f)/dot_general" source_file="x.py" source_line=3 source_end_line=3 '
            'source_column=8 source_end_column=21 stack_frame_id=5 profile_type={1} deduplicated_name="d" '
            'scheduling_name="s"}')
    assert run(V.decode_metadata, text) == {
        "op_type": "dot", "op_name": "jit(f)/dot_general", "source_file": "x.py", "source_line": 3,
        "source_end_line": 3, "source_column": 8, "source_end_column": 21, "stack_frame_id": 5,
        "profile_type": (1,), "deduplicated_name": "d", "scheduling_name": "s"}
    # commas are accepted too, and keys from newer XLA are kept
    assert run(V.decode_metadata, '{op_name="a", newer=7, blob={x}, word=yes}') == {
        "op_name": "a", "newer": 7, "blob": "{x}", "word": "yes"}
    assert run(V.decode_metadata, "{}") == {}
    assert error_index(V.decode_metadata, '{source_line="3"}')[0] == 13
    assert error_index(V.decode_metadata, '{op_name="a" op_name="b"}')[0] == 13


def test_frontend_attributes_backend_config_statistics():
    assert run(V.decode_frontend_attributes, '{k="v",xla.sdy.meshes={mesh = #sdy.mesh<["x"=2, "y"=4]>}}') == {
        "k": "v", "xla.sdy.meshes": '{mesh = #sdy.mesh<["x"=2, "y"=4]>}'}
    assert run(V.decode_frontend_attributes, "{}") == {}
    assert error_index(V.decode_frontend_attributes, '{k=3}')[0] == 3
    assert error_index(V.decode_frontend_attributes, '{k={a}')[0] == 6
    assert run(V.decode_backend_config, '{"fusion_config":{"kind":"__ynn_fusion"}}') == \
        '{"fusion_config":{"kind":"__ynn_fusion"}}'
    assert run(V.decode_backend_config, r'"{\"a\":1}"') == '{"a":1}'
    assert run(V.decode_backend_config, "{mode = 86 : ui8, uplo = 76 : ui8}") == "{mode = 86 : ui8, uplo = 76 : ui8}"
    assert run(V.decode_statistics, "{visualizing_index=0,stat-0=0.5,stat-1=2}") == {
        "visualizing_index": 0, "stat-0": 0.5, "stat-1": 2}
    assert run(V.decode_statistics, "{}") == {}
    assert error_index(V.decode_statistics, "{visualizing_index=0,stat-0=high}")[0] == 28


def test_domain():
    assert run(V.decode_domain, '{kind="sharding", entry={maximal device=0}, exit={replicated}}') == {
        "kind": "sharding", "entry": "{maximal device=0}", "exit": "{replicated}"}
    assert error_index(V.decode_domain, '{kind="colour", entry={replicated}, exit={replicated}}')[0] == 6
    assert error_index(V.decode_domain, '{kind="sharding", entry={maximal}, exit={replicated}}')[0] == 25
    assert "no exit=" in error_index(V.decode_domain, '{kind="sharding", entry={replicated}}')[1]


def test_result_accuracy_errors():
    assert error_index(V.decode_result_accuracy, "{mode=lowest}")[0] == 6
    assert error_index(V.decode_result_accuracy, "{tolerance={atol=1,eps=2}}")[0] == 19
    assert error_index(V.decode_result_accuracy, "{tolerance={ulps=1.5}}")[0] == 17


def test_aliasing():
    assert run(V.decode_output_to_operand_aliasing, "{{0}: (0, {}), {1}: (1, {0})}") == [
        A.OutputOperandAlias((0,), 0, ()), A.OutputOperandAlias((1,), 1, (0,))]
    assert run(V.decode_input_output_alias, "{ {0}: (0, {}, may-alias), {1}: (1, {2}, must-alias), {2}: (2, {}) }") == [
        V.InputOutputAlias((0,), 0, (), "may-alias"), V.InputOutputAlias((1,), 1, (2,), "must-alias"),
        V.InputOutputAlias((2,), 2, (), "may-alias")]
    assert run(V.decode_buffer_donor, "{ (0, {}), (1, {2}) }") == [(0, ()), (1, (2,))]
    assert error_index(V.decode_input_output_alias, "{ {0}: (0, {}, maybe-alias) }")[0] == 15
    assert error_index(V.decode_output_to_operand_aliasing, "{{0} (0, {})}")[0] == 5


def test_entry_computation_layout_keeps_shape_texts():
    text = "{(f32[2]{0}, (s32[], f32[2,2]{0,1}), /*index=2*/u32[])->(f32[2]{0}, s32[])}"
    layout = run(V.decode_entry_computation_layout, text)
    assert [t for t, _ in layout.parameters] == ["f32[2]{0}", "(s32[], f32[2,2]{0,1})", "u32[]"]
    assert [p.offset - len(PREFIX) for _, p in layout.parameters] == [2, 13, 48]
    assert layout.result[0] == "(f32[2]{0}, s32[])" and layout.result[1].offset - len(PREFIX) == 56
    empty = run(V.decode_entry_computation_layout, "{()->f32[]}")
    assert empty.parameters == () and empty.result[0] == "f32[]"
    assert error_index(V.decode_entry_computation_layout, "{(f32[2]{0}->f32[]}")[0] == 11
    assert error_index(V.decode_entry_computation_layout, "{(f32[2]{0})->f32[2]{0}")[0] == 23
    assert error_index(V.decode_entry_computation_layout, "{(f32[2])f32[]}")[0] == 9


def test_shapes_and_the_remaining_enums():
    shapes = run(V.decode_shape_list, "{f32[4,4]{0,1}, (s32[], u32[])}")
    assert [(t, p.offset - len(PREFIX)) for t, p in shapes] == [("f32[4,4]{0,1}", 1), ("(s32[], u32[])", 16)]
    assert run(V.decode_shape_list, "{}") == []
    assert run(V.decode_shape, " f32[2]{0} ")[0] == "f32[2]{0}"
    assert error_index(V.decode_shape, "f32[2]{0")[0] == 6
    assert error_index(V.decode_shape_list, "{f32[2]]}")[0] == 7
    assert run(V.decode_collective_mode, "cross_replica_and_partition") == "cross_replica_and_partition"
    assert error_index(V.decode_collective_mode, "CROSS_REPLICA")[0] == 0  # XLA takes lower case only
    assert run(V.decode_padding_type, "PADDING_SAME") == "PADDING_SAME"


def test_decode_by_kind_names_the_attribute():
    source = SourceText("x = f32[] op(), window={size=3 pad=1}", "k.hlo")
    attr = HloAttr("window", "{size=3 pad=1}", SourcePos(source, 23))
    with pytest.raises(ParseError) as info:
        V.decode(attr, "window")
    assert "in window" in info.value.message and info.value.col == 36  # the '1' after pad=
    assert V.decode(HloAttr("dimensions", "{1,0}", SourcePos(source, 0)), "int_list") == (1, 0)
    assert V.decode(HloAttr("sparsity", "L.0@2:4", SourcePos(source, 0)), "raw") == "L.0@2:4"
    with pytest.raises(ValueError, match="no HLO attribute decoder"):
        V.decode(attr, "colour")


# -- cross-checks against XLA (jaxlib's parser and its HLO -> StableHLO translation) --------------

GROUP_FORMS = ["[4,2]<=[2,4]T(1,0)", "[2,4]<=[8]", "[2,4]<=[2,2,2]T(2,1,0)", "{{0,3},{1,2},{4,7},{5,6}}"]
MESH_FORMS = ["mesh['x'=2,'y'=4] {'x'}", "mesh['x'=2,'y'=4] {'y'}", "mesh['x'=2,'y'=4] {'y','x'}",
              "mesh['x'=2,'y'=4] {'y':(2)2}", "mesh['x'=2,'y'=4] {'y':(1)2, 'x'}"]


def _all_reduce_module(groups: str) -> str:
    return f"""HloModule m, replica_count=8
add {{
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}}
ENTRY e {{
  p = f32[4] parameter(0)
  ROOT r = f32[4] all-reduce(p), replica_groups={groups}, to_apply=add
}}
"""


def _xla_to_stablehlo(groups: str) -> str:
    _hlo = pytest.importorskip("jaxlib._hlo")
    pytest.importorskip("jax")
    from jax._src.interpreters import mlir as jax_mlir
    from jax._src.lib import xla_client
    from jax._src.lib.mlir import ir

    module = _hlo.hlo_module_from_text(_all_reduce_module(groups))
    bytecode = xla_client._xla.mlir.hlo_to_stablehlo(module.as_serialized_hlo_module_proto())
    with jax_mlir.make_ir_context():
        return str(ir.Module.parse(bytecode))


@pytest.mark.parametrize("groups", GROUP_FORMS)
def test_iota_groups_match_xla(groups):
    """XLA expands list and iota groups into the dense replica_groups of stablehlo.all_reduce."""
    from hlodbg.engine.syntax import frontend_for

    text = _xla_to_stablehlo(groups)
    module = frontend_for(text, "xla.mlir").parse_all(text, "xla.mlir")[0]
    op = next(o for o in module.walk() if o.name == "stablehlo.all_reduce")
    assert run(V.decode_replica_groups, groups) == np.asarray(op.attributes["replica_groups"].array).tolist()


@pytest.mark.parametrize("groups", MESH_FORMS)
def test_mesh_groups_match_xla(groups):
    """XLA reads the mesh form into `#stablehlo.replica_group_mesh_axes` over an `sdy.mesh`: the
    axes, sub-axes and their order XLA read must be the ones hlodbg read. (Both sides expand with
    engine/ir/mesh_groups.py; the expansion rule itself is pinned by the §6 worked examples in
    test_replica_groups. jaxlib 0.10.2's translation drops `device_ids`, so forms with explicit
    ids are checked there only.)"""
    from hlodbg.engine.ops.collectives import mesh_axes_groups
    from hlodbg.engine.syntax import frontend_for

    text = _xla_to_stablehlo(groups)
    module = frontend_for(text, "xla.mlir").parse_all(text, "xla.mlir")[0]
    op = next(o for o in module.walk() if o.name == "stablehlo.all_reduce")
    assert run(V.decode_replica_groups, groups) == mesh_axes_groups(op.attributes["replica_groups"], module)


@pytest.mark.parametrize("value", [s for s in SHARDINGS if s not in ("{}", "{unreduced}")] + [
    "{mesh['x'=2,'y'=2], [{'y'}, {}], manual={'x'}}", "{maximal_mesh[device_id=0]}"])
def test_shardings_xla_accepts(value):
    """Every sharding form the decoder accepts, XLA's parser accepts too."""
    _hlo = pytest.importorskip("jaxlib._hlo")
    shape = "(f32[4], f32[4])" if value.startswith("{{") else "f32[4]"
    text = f"HloModule m\nENTRY e {{\n  ROOT p = {shape} parameter(0), sharding={value}\n}}\n"
    _hlo.hlo_module_from_text(text)


# -- robustness: damaged values fail as located ParseErrors, never as Python errors ---------------

VALID = [
    (V.decode_int_list_list, "{{0,1},{2,3}}"), (V.decode_string, r'"a\"b\x41\u00e9"'),
    (V.decode_window, "{size=3x3 stride=2x2 pad=1_1x0_0 lhs_dilate=1x2 rhs_dilate=2x1 rhs_reversal=0x1}"),
    (V.decode_padding, "1_2x0_1_0"), (V.decode_slice, "{[0:8:2], [1:7]}"), (V.decode_dim_labels, "b01f_01io->b01f"),
    (V.decode_precision_list, "{highest,default}"), (V.decode_replica_groups, "[4,2]<=[2,4]T(1,0)"),
    (V.decode_replica_groups, "mesh['x'=2,'y'=4], device_ids=(7,6,5,4,3,2,1,0) {'y':(1)2, 'x'}"),
    (V.decode_source_target_pairs, "{{0,1},{1,2}}"),
    (V.decode_sharding, '{{devices=[4,1,2]<=[2,4]T(1,0) last_tile_dim_replicate metadata={op_name="a"}}, {maximal device=1}}'),
    (V.decode_sharding, "{devices=[2,2]0,1,2,3 last_tile_dims={manual} shard_as 1}"),
    (V.decode_sharding, "{mesh['x'=2,'y'=4], [{'y':(1)2, ?}, {}], unreduced={'x'}}"),
    (V.decode_metadata, '{op_type="dot" op_name="f" source_line=3 profile_type={1} extra={a}}'),
    (V.decode_frontend_attributes, '{k="v",m={mesh = #sdy.mesh<["x"=2]>}}'),
    (V.decode_statistics, "{visualizing_index=0,stat-0=0.5}"),
    (V.decode_domain, '{kind="sharding", entry={maximal device=0}, exit={replicated}}'),
    (V.decode_result_accuracy, "{tolerance={atol=0.5,rtol=0,ulps=2}}"),
    (V.decode_output_to_operand_aliasing, "{{0}: (0, {}), {1}: (1, {0})}"),
    (V.decode_input_output_alias, "{ {0}: (0, {}, may-alias) }"), (V.decode_buffer_donor, "{ (0, {}), (1, {2}) }"),
    (V.decode_entry_computation_layout, "{(f32[2]{0}, (s32[], u32[]))->(f32[2]{0:T(2)}, s32[])}"),
]


@pytest.mark.parametrize("decoder,value", VALID)
def test_damaged_values_fail_cleanly(decoder, value):
    run(decoder, value)
    damaged = {value[:n] for n in range(len(value))}
    damaged |= {value[:n] + value[n + 1:] for n in range(len(value))}
    damaged |= {value[:n] + "}" + value[n:] for n in range(len(value))}
    for text in sorted(damaged):
        try:
            run(decoder, text)
        except ParseError as e:
            assert 0 <= e.pos.offset - len(PREFIX) <= len(text), (text, e.message)
