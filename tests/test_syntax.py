"""Pretty syntax of each op family: parse, print back verbatim, and agree with the generic form."""
from __future__ import annotations

import numpy as np
import pytest

import hlodbg
from hlodbg.engine import parse_module, print_module, structural_key
from hlodbg.engine.ir.attributes import (
    ConvDimensionNumbers,
    DenseArray,
    DenseElements,
    DotDimensionNumbers,
    EnumAttr,
    GatherDimensionNumbers,
    IntegerAttr,
)
from hlodbg.engine.ir.types import QuantizedType, TensorType

F = "tensor<2x3xf32>"

# (function arguments, one op line exactly as the printer writes it)
PRETTY_OPS = [
    (f"%a: {F}, %b: {F}", f"%0 = stablehlo.add %a, %b : {F}"),
    (f"%a: {F}", f"%0 = stablehlo.exponential %a : {F}"),
    (f"%a: {F}", "%0 = stablehlo.convert %a : (tensor<2x3xf32>) -> tensor<2x3xbf16>"),
    ("%a: tensor<2xcomplex<f32>>", "%0 = stablehlo.real %a : (tensor<2xcomplex<f32>>) -> tensor<2xf32>"),
    ("%a: tensor<2xf32>, %b: tensor<2xf32>", "%0 = stablehlo.complex %a, %b : tensor<2xcomplex<f32>>"),
    (f"%a: {F}, %b: {F}", "%0 = stablehlo.compare GT, %a, %b, FLOAT : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>"),
    (f"%a: {F}, %b: {F}", "%0 = stablehlo.compare LT, %a, %b : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>"),
    (f"%p: tensor<2x3xi1>, %a: {F}, %b: {F}", f"%0 = stablehlo.select %p, %a, %b : tensor<2x3xi1>, {F}"),
    (f"%lo: tensor<f32>, %a: {F}, %hi: tensor<f32>",
     "%0 = stablehlo.clamp %lo, %a, %hi : (tensor<f32>, tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>"),
    ("%a: tensor<3xf32>", "%0 = stablehlo.broadcast_in_dim %a, dims = [1] : (tensor<3xf32>) -> tensor<2x3xf32>"),
    ("%a: tensor<3xi32>", "%0 = stablehlo.broadcast %a, sizes = [1, 2] : (tensor<3xi32>) -> tensor<1x2x3xi32>"),
    (f"%a: {F}", "%0 = stablehlo.transpose %a, dims = [1, 0] : (tensor<2x3xf32>) -> tensor<3x2xf32>"),
    (f"%a: {F}", f"%0 = stablehlo.reverse %a, dims = [0, 1] : {F}"),
    (f"%a: {F}", "%0 = stablehlo.reshape %a : (tensor<2x3xf32>) -> tensor<6xf32>"),
    (f"%a: {F}, %b: {F}",
     "%0 = stablehlo.concatenate %a, %b, dim = 0 : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>"),
    (f"%a: {F}, %v: tensor<f32>",
     "%0 = stablehlo.pad %a, %v, low = [0, 1], high = [1, -1], interior = [0, 0] : (tensor<2x3xf32>, tensor<f32>) -> tensor<3x3xf32>"),
    ("%a: tensor<3x8xf32>", "%0 = stablehlo.slice %a [1:3, 4:8:2] : (tensor<3x8xf32>) -> tensor<2x2xf32>"),
    (f"%a: {F}, %i: tensor<i64>",
     "%0 = stablehlo.dynamic_slice %a, %i, %i, sizes = [1, 2] : (tensor<2x3xf32>, tensor<i64>, tensor<i64>) -> tensor<1x2xf32>"),
    (f"%a: {F}, %u: tensor<1x2xf32>, %i: tensor<i64>",
     "%0 = stablehlo.dynamic_update_slice %a, %u, %i, %i : (tensor<2x3xf32>, tensor<1x2xf32>, tensor<i64>, tensor<i64>) -> tensor<2x3xf32>"),
    ("", "%0 = stablehlo.iota dim = 1 : tensor<2x3xi32>"),
    ("%a: tensor<2x2x2xf32>, %b: tensor<2x2x3xf32>",
     "%0 = stablehlo.dot_general %a, %b, batching_dims = [0] x [0], contracting_dims = [2] x [1], precision = [DEFAULT, HIGHEST] : (tensor<2x2x2xf32>, tensor<2x2x3xf32>) -> tensor<2x2x3xf32>"),
    ("%a: tensor<2x2xf32>, %b: tensor<2x3xf32>",
     "%0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<2x2xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>"),
    ("%a: tensor<2x2xf32>, %b: tensor<2x3xf32>",
     "%0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0], algorithm = <lhs_precision_type = tf32, rhs_precision_type = tf32, accumulation_type = f32, lhs_component_count = 1, rhs_component_count = 1, num_primitive_operations = 1, allow_imprecise_accumulation = false> : (tensor<2x2xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>"),
    ("%a: tensor<3xf32>", "%0 = stablehlo.dot %a, %a, precision = [DEFAULT, DEFAULT] : (tensor<3xf32>, tensor<3xf32>) -> tensor<f32>"),
    ("%x: tensor<1x4x4x1xf32>, %k: tensor<3x3x1x1xf32>",
     "%0 = stablehlo.convolution(%x, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [4, 4], pad = [[1, 1], [0, 2]], lhs_dilate = [2, 2], rhs_dilate = [1, 1], reverse = [false, true]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x1xf32>, tensor<3x3x1x1xf32>) -> tensor<1x2x2x1xf32>"),
    ("%x: tensor<1x4x4x1xf32>, %k: tensor<3x3x1x1xf32>",
     "%0 = stablehlo.convolution(%x, %k) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x1xf32>, tensor<3x3x1x1xf32>) -> tensor<1x2x2x1xf32>"),
    ("%a: tensor<3x4xf32>", "%0 = stablehlo.reduce_precision %a, format = e5m10 : tensor<3x4xf32>"),
    ("%a: tensor<16xcomplex<f32>>",
     "%0 = stablehlo.fft %a, type = FFT, length = [16] : (tensor<16xcomplex<f32>>) -> tensor<16xcomplex<f32>>"),
    ("%a: tensor<2x2xf32>", "%0 = stablehlo.cholesky %a, lower = true : tensor<2x2xf32>"),
    ("%a: tensor<2x2xf32>", "%0 = stablehlo.cholesky %a : tensor<2x2xf32>"),
    ("%s: tensor<2xui64>", "%0:2 = stablehlo.rng_bit_generator %s, algorithm = PHILOX : (tensor<2xui64>) -> (tensor<2xui64>, tensor<4xui32>)"),
    ("%a: tensor<f32>, %b: tensor<f32>, %s: tensor<2xi64>",
     "%0 = stablehlo.rng %a, %b, %s, distribution = NORMAL : (tensor<f32>, tensor<f32>, tensor<2xi64>) -> tensor<2x3xf32>"),
    ("%a: tensor<2x3xf32>, %b: tensor<3x4xf32>",
     '%0 = stablehlo.einsum %a, %b, config = "ab,bc->ac" : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>'),
    (f"%a: {F}", '%0 = stablehlo.custom_call @foo(%a) {backend_config = "bar", has_side_effect = true} : (tensor<2x3xf32>) -> tensor<2x3xf32>'),
    (f"%a: {F}", '%0 = stablehlo.custom_call @"odd-name"(%a, %a) {api_version = 4 : i32} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>'),
    (f"%a: {F}", "stablehlo.custom_call @check.expect_close(%a, %a) {has_side_effect = true} : (tensor<2x3xf32>, tensor<2x3xf32>) -> ()"),
    ("%a: tensor<f32>", '%0 = stablehlo.composite "my.op" %a {composite_attributes = {k = "v"}, decomposition = @f, version = 1 : i32} : (tensor<f32>) -> tensor<f32>'),
    ("%t: tuple<tensor<i32>, tensor<f32>>", "%0 = stablehlo.get_tuple_element %t[1] : (tuple<tensor<i32>, tensor<f32>>) -> tensor<f32>"),
    ("%a: tensor<i32>", "%0 = stablehlo.tuple %a, %a : tuple<tensor<i32>, tensor<i32>>"),
    (f"%a: {F}", "%0 = stablehlo.get_dimension_size %a, dim = 1 : (tensor<2x3xf32>) -> tensor<i32>"),
    ("%t: !stablehlo.token", "%0 = stablehlo.after_all %t, %t : !stablehlo.token"),
    ("", "%0 = stablehlo.replica_id : tensor<ui32>"),
    ("", "%0 = stablehlo.create_token : !stablehlo.token"),
    (f"%a: {F}", f"%0:2 = stablehlo.optimization_barrier %a, %a : {F}, {F}"),
    (f"%a: {F}", "%0 = stablehlo.uniform_quantize %a : (tensor<2x3xf32>) -> tensor<2x3x!quant.uniform<i8:f32, 5.000000e-01:-3>>"),
    ("%a: tensor<4xf32>", "%0 = stablehlo.uniform_quantize %a : (tensor<4xf32>) -> tensor<4x!quant.uniform<i8<-127:127>:f32:0, {1.000000e-01,2.000000e-01:1,3.000000e-01,4.000000e-01:-2}>>"),
    ("", "%c = stablehlo.constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi32>"),
    ("", "%cst = stablehlo.constant {mhlo.frontend_attributes = {a = \"b\"}} dense<5.000000e-01> : tensor<f32>"),
    ("", "%c = stablehlo.constant() <{value = dense<[1, 2]> : tensor<2xi8>}> : () -> tensor<2x!quant.uniform<i8:f32, 2.000000e+00:15>>"),
    ("%a: tensor<16xf32>", "%0:2 = chlo.top_k(%a, k = 4) : tensor<16xf32> -> (tensor<4xf32>, tensor<4xi32>)"),
    ("%a: tensor<4xf32>", "%0 = chlo.lgamma %a : tensor<4xf32> -> tensor<4xf32>"),
    ("%a: tensor<4xf32>", "%0 = chlo.next_after %a, %a : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>"),
    ("%a: tensor<4xf32>, %b: tensor<2x4xf32>",
     "%0 = chlo.broadcast_add %a, %b {broadcast_dimensions = array<i64: 1>} : (tensor<4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>"),
    ("%a: tensor<8x16xf32>", '%0 = sdy.sharding_constraint %a <@mesh, [{}, {"x", ?}p1]> : tensor<8x16xf32>'),
]


def _module(args: str, line: str) -> str:
    return f"module {{\n  func.func @f({args}) {{\n    {line}\n    return\n  }}\n}}\n"


def _op_name(line: str) -> str:
    return line.split(" = ", 1)[1].split()[0] if " = " in line.split("(")[0] else line.split()[0]


@pytest.mark.parametrize("args,line", PRETTY_OPS, ids=[_op_name(l) for _, l in PRETTY_OPS])
def test_pretty_form_prints_back_verbatim_and_matches_generic(args, line):
    module = parse_module(_module(args, line))
    printed = print_module(module)
    assert f"    {line}\n" in printed, printed
    generic = print_module(module, generic=True)
    assert structural_key(parse_module(generic)) == structural_key(module)


def _op(text: str, name: str):
    module = parse_module(text)
    return next(op for op in module.walk() if op.name == name)


def test_attributes_are_decoded_into_python_and_numpy_values():
    op = _op(_module("%a: tensor<128x64xf32>, %i: tensor<16x1xi32>",
                     '%0 = "stablehlo.gather"(%a, %i) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], '
                     "collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, "
                     "slice_sizes = array<i64: 1, 64>}> : (tensor<128x64xf32>, tensor<16x1xi32>) -> tensor<16x64xf32>"),
             "stablehlo.gather")
    dn = op.attributes["dimension_numbers"]
    assert isinstance(dn, GatherDimensionNumbers)
    assert dn.offset_dims == (1,) and dn.start_index_map == (0,) and dn.index_vector_dim == 1
    assert isinstance(op.attributes["slice_sizes"], DenseArray) and tuple(op.attributes["slice_sizes"]) == (1, 64)
    assert op.attributes["indices_are_sorted"] is False

    cmp = _op(_module("%a: tensor<2xf32>", "%0 = stablehlo.compare GE, %a, %a, FLOAT : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xi1>"),
              "stablehlo.compare")
    direction = cmp.attributes["comparison_direction"]
    assert isinstance(direction, EnumAttr) and direction == "GE" and direction.kind == "comparison_direction"

    dot = _op(_module("%a: tensor<2x2x2xf32>", "%0 = stablehlo.dot_general %a, %a, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<2x2x2xf32>, tensor<2x2x2xf32>) -> tensor<2x2x2xf32>"),
              "stablehlo.dot_general")
    assert dot.attributes["dot_dimension_numbers"] == DotDimensionNumbers((0,), (0,), (2,), (1,))

    conv = _op(_module("%x: tensor<1x4x4x1xf32>, %k: tensor<3x3x1x1xf32>",
                       "%0 = stablehlo.convolution(%x, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x1xf32>, tensor<3x3x1x1xf32>) -> tensor<1x4x4x1xf32>"),
               "stablehlo.convolution")
    cd = conv.attributes["dimension_numbers"]
    assert isinstance(cd, ConvDimensionNumbers)
    assert (cd.input_batch_dimension, cd.input_feature_dimension, cd.input_spatial_dimensions) == (0, 3, (1, 2))
    assert (cd.kernel_input_feature_dimension, cd.kernel_output_feature_dimension) == (2, 3)
    assert conv.attributes["padding"].array.tolist() == [[1, 1], [1, 1]]
    assert isinstance(conv.attributes["feature_group_count"], IntegerAttr) and conv.attributes["feature_group_count"] == 1


@pytest.mark.parametrize(
    "literal,type_text,expected",
    [
        ("dense<1.5>", "tensor<2x2xf32>", np.full((2, 2), 1.5, np.float32)),
        ("dense<[[1, 2], [3, 4]]>", "tensor<2x2xi32>", np.array([[1, 2], [3, 4]], np.int32)),
        ('dense<"0x0000803F00000040">', "tensor<2xf32>", np.array([1.0, 2.0], np.float32)),
        ('dense<"0x0000803F">', "tensor<3xf32>", np.ones(3, np.float32)),
        ("dense<[true, false]>", "tensor<2xi1>", np.array([True, False])),
        ('dense<"0x0001">', "tensor<2xi1>", np.array([False, True])),
        ("dense<[(1.0,2.0), (3.0,-4.0)]>", "tensor<2xcomplex<f32>>", np.array([1 + 2j, 3 - 4j], np.complex64)),
        ("dense<[-8, 7]>", "tensor<2xi4>", np.array([-8, 7], np.int8)),
        ("dense<255>", "tensor<ui8>", np.array(255, np.uint8)),
        ("dense<[]>", "tensor<0xf32>", np.zeros(0, np.float32)),
    ],
)
def test_dense_literals_decode_to_numpy(literal, type_text, expected):
    op = _op(_module("", f"%c = stablehlo.constant {literal} : {type_text}"), "stablehlo.constant")
    value = op.attributes["value"]
    assert isinstance(value, DenseElements)
    assert value.array.shape == expected.shape
    np.testing.assert_array_equal(value.array.astype(expected.dtype), expected)
    # ... and they print back to something that decodes identically.
    again = _op(print_module(parse_module(_module("", f"%c = stablehlo.constant {literal} : {type_text}"))), "stablehlo.constant")
    np.testing.assert_array_equal(again.attributes["value"].array, value.array)


def test_special_floats_keep_their_bits():
    text = _module("", "%c = stablehlo.constant dense<[0x7FC00000, 0xFF800000, 0x7F800000, -0.0]> : tensor<4xf32>")
    array = _op(text, "stablehlo.constant").attributes["value"].array
    assert np.isnan(array[0]) and array[1] == -np.inf and array[2] == np.inf and np.signbit(array[3])
    printed = print_module(parse_module(text))
    assert "0x7FC00000" in printed and "0xFF800000" in printed
    bf = _op(_module("", "%c = stablehlo.constant dense<0xFF80> : tensor<bf16>"), "stablehlo.constant")
    assert bf.attributes["value"].array.astype(np.float32) == -np.inf


def test_quantized_types_per_tensor_and_per_axis():
    t = _op(_module("", "%c = stablehlo.constant() <{value = dense<[1, 2]> : tensor<2xi8>}> : () -> tensor<2x!quant.uniform<i8:f32:0, {0.5:1, 2.0:-1}>>"),
            "stablehlo.constant").result_types[0]
    assert isinstance(t, TensorType)
    q = t.element
    assert isinstance(q, QuantizedType) and q.is_per_axis and q.quantized_dimension == 0
    assert q.scales == (0.5, 2.0) and q.zero_points == (1, -1)


def test_locations_resolve_aliases_defined_after_use():
    text = """
    module {
      func.func @main(%a: tensor<f32> loc("x")) -> tensor<f32> {
        %0 = stablehlo.add %a, %a : tensor<f32> loc(#loc3)
        return %0 : tensor<f32> loc(#loc)
      } loc(#loc)
    } loc(#loc)
    #loc = loc(unknown)
    #loc1 = loc("model.py":42:9)
    #loc2 = loc("model.py":7:1)
    #loc3 = loc("jit(f)/layer_0/add"(callsite(#loc1 at #loc2)))
    """
    from hlodbg.engine.ir.locations import describe, name_stack, user_frame

    module = parse_module(text, "prog.mlir")
    add = next(op for op in module.walk() if op.name == "stablehlo.add")
    assert user_frame(add.location).line == 42
    assert name_stack(add.location) == "jit(f)/layer_0/add"
    assert describe(add.location) == "model.py:42 (jit(f)/layer_0/add)"
    assert (add.pos.line, add.pos.col) == (4, 9)
    assert module.entry.arguments[0].location.name == "x"
    again = parse_module(print_module(module, debug_info=True))
    assert structural_key(again, with_locations=True) == structural_key(module, with_locations=True)


def test_dense_resource_blobs_and_aliases():
    text = """
    #map = #stablehlo.channel_handle<handle = 1, type = 1>
    !t = tensor<2xf32>
    module {
      func.func @main() -> !t {
        %c = stablehlo.constant dense_resource<blob1> : tensor<2xf32>
        return %c : !t
      }
    }
    {-#
      dialect_resources: {
        builtin: {
          blob1: "0x040000000000803F00000040"
        }
      }
    #-}
    """
    module = parse_module(text)
    const = next(op for op in module.walk() if op.name == "stablehlo.constant")
    np.testing.assert_array_equal(const.attributes["value"].array, np.array([1.0, 2.0], np.float32))
    assert structural_key(parse_module(print_module(module))) == structural_key(module)


def test_reduce_compact_and_region_forms():
    compact = "%0 = stablehlo.reduce(%a init: %c) applies stablehlo.add across dimensions = [1] : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>"
    module = parse_module(_module("%a: tensor<2x3xf32>, %c: tensor<f32>", compact))
    assert compact in print_module(module)
    reduce = next(op for op in module.walk() if op.name == "stablehlo.reduce")
    body = reduce.regions[0].blocks[0]
    assert [op.name for op in body.operations] == ["stablehlo.add", "stablehlo.return"]
    variadic = """
    func.func @argmax(%a: tensor<4xf32>, %i: tensor<4xi32>, %c: tensor<f32>, %z: tensor<i32>) -> (tensor<f32>, tensor<i32>) {
      %0:2 = stablehlo.reduce(%a init: %c), (%i init: %z) across dimensions = [0] : (tensor<4xf32>, tensor<4xi32>, tensor<f32>, tensor<i32>) -> (tensor<f32>, tensor<i32>)
       reducer(%x: tensor<f32>, %y: tensor<f32>) (%xi: tensor<i32>, %yi: tensor<i32>)  {
        %1 = stablehlo.compare GT, %x, %y : (tensor<f32>, tensor<f32>) -> tensor<i1>
        %2 = stablehlo.select %1, %x, %y : tensor<i1>, tensor<f32>
        %3 = stablehlo.select %1, %xi, %yi : tensor<i1>, tensor<i32>
        stablehlo.return %2, %3 : tensor<f32>, tensor<i32>
      }
      return %0#0, %0#1 : tensor<f32>, tensor<i32>
    }
    """
    module = parse_module(variadic)
    reduce = next(op for op in module.walk() if op.name == "stablehlo.reduce")
    # Block arguments pair up as (input i, accumulator i): x, xi, y, yi.
    assert [a.name for a in reduce.regions[0].blocks[0].arguments] == ["%x", "%xi", "%y", "%yi"]
    assert structural_key(parse_module(print_module(module))) == structural_key(module)


def test_split_input_chunks_keep_file_line_numbers():
    from hlodbg.engine import parse_chunks

    text = "func.func @a() {\n  return\n}\n// -----\nfunc.func @b() {\n  return\n}\n"
    first, second = parse_chunks(text, "split.mlir")
    assert first.functions["a"].pos.line == 1
    assert second.functions["b"].pos.line == 5


def test_ops_attributes_and_types_of_other_dialects_are_kept():
    text = """
    module {
      func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
        %0 = "mydialect.frobnicate"(%a) <{level = 3 : i32}> {note = #mydialect.hint<fast, [1, 2]>} : (tensor<2xf32>) -> tensor<2xf32>
        %1:2 = "mydialect.split"(%0) : (tensor<2xf32>) -> (!mydialect.handle<x>, tensor<2xf32>)
        return %1#1 : tensor<2xf32>
      }
    }
    """
    module = parse_module(text)
    op = next(o for o in module.walk() if o.name == "mydialect.frobnicate")
    assert int(op.attributes["level"]) == 3
    assert str(op.attributes["note"]) == "#mydialect.hint<fast, [1, 2]>"
    printed = print_module(module)
    assert '"mydialect.frobnicate"(%a) <{level = 3 : i32}> {note = #mydialect.hint<fast, [1, 2]>}' in printed
    assert "!mydialect.handle<x>" in printed
    assert structural_key(parse_module(printed)) == structural_key(module)


def test_reducer_arguments_may_carry_locations():
    text = """
    func.func @argmax(%a: tensor<4xf32>, %i: tensor<4xi32>, %c: tensor<f32>, %z: tensor<i32>) -> (tensor<f32>, tensor<i32>) {
      %0:2 = stablehlo.reduce(%a init: %c), (%i init: %z) across dimensions = [0] : (tensor<4xf32>, tensor<4xi32>, tensor<f32>, tensor<i32>) -> (tensor<f32>, tensor<i32>)
       reducer(%x: tensor<f32> loc("a"), %y: tensor<f32> loc("b")) (%xi: tensor<i32> loc("c"), %yi: tensor<i32> loc("d"))  {
        stablehlo.return %x, %xi : tensor<f32>, tensor<i32>
      }
      return %0#0, %0#1 : tensor<f32>, tensor<i32>
    }
    """
    module = parse_module(text)
    reduce = next(op for op in module.walk() if op.name == "stablehlo.reduce")
    assert [a.location.name for a in reduce.regions[0].blocks[0].arguments] == ["a", "c", "b", "d"]
    assert 'loc("c")' in print_module(module, debug_info=True)


def test_long_signatures_parse_without_backtracking():
    # The signature pattern without atomic groups backtracked exponentially on this line (60
    # operands took minutes; 120 would never end): it parses now, and what that costs is
    # benchmarks/parse.py's figure.
    n = 120
    types = ", ".join(["tensor<2x3xf32>"] * n)
    args = ", ".join(f"%a{i}: tensor<2x3xf32>" for i in range(n))
    uses = ", ".join(f"%a{i}" for i in range(n))
    # A generic op whose result list is long and ends in a type the fast path does not take.
    text = (
        f"func.func @f({args}) {{\n"
        f'  %0:{n + 1} = "x.y"({uses}) : ({types}) -> ({types}, tensor<2x!quant.uniform<i8:f32, 1.0>>)\n'
        "  return\n}\n"
    )
    op = next(op for op in parse_module(text).walk() if op.name == "x.y")
    assert len(op.operands) == n and len(op.results) == n + 1


def test_empty_function_body_is_a_parse_error():
    from hlodbg.engine import ParseError

    with pytest.raises(ParseError, match="body of @f is empty"):
        parse_module("func.func @f() {}")


def test_float_bit_widths():
    from hlodbg.engine.ir.types import FloatType

    widths = {n: FloatType(n).bit_width for n in ("f4E2M1FN", "f6E3M2FN", "f8E4M3FN", "bf16", "f16", "f32", "f64")}
    assert widths == {"f4E2M1FN": 4, "f6E3M2FN": 6, "f8E4M3FN": 8, "bf16": 16, "f16": 16, "f32": 32, "f64": 64}


def test_a_float_literal_past_its_types_range_is_infinite_without_a_numpy_warning():
    import warnings

    text = "func.func @main() -> tensor<2xf32> {\n  %0 = stablehlo.constant dense<[1e40, -1e40]> : tensor<2xf32>\n  return %0 : tensor<2xf32>\n}\n"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a RuntimeWarning would reach the user's terminal
        (value,) = hlodbg.load(text).run()
    assert list(value) == [float("inf"), float("-inf")]


def test_a_signalling_nan_constant_prints_without_a_floating_point_warning():
    """nan(0x1) in HLO text (f32 0x7F800001, a signalling NaN) printed through numpy's f64 cast
    raised its "invalid value encountered in cast" RuntimeWarning onto the user's terminal."""
    import warnings

    import numpy as np

    from hlodbg.engine.ir.types import FloatType
    from hlodbg.engine.syntax.mlir.dense import format_float_element

    signalling = np.array([0x7F800001], np.uint32).view(np.float32)[0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert format_float_element(signalling, FloatType("f32")) == "0x7F800001"
