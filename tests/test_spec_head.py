"""Constructs of openxla/stablehlo at its head (3c9301c, 2026-08-13) that hlodbg read wrongly:
StableHLO's own tests write them so, its spec (or, where the spec is silent, its C++ verifier)
says what is valid. One small program per construct: valid ones parse, verify and round trip;
invalid ones are rejected at the op with the constraint they break.
"""
from __future__ import annotations

import numpy as np
import pytest

import hlodbg
from hlodbg.engine import ExecutionError, parse_module, print_module, structural_key
from hlodbg.engine.verify import verify

from .helpers import assert_rejected_at, interpret
from .test_grid_collectives import grid_run


def _main(signature: str, body: str) -> str:
    return f"func.func @main({signature}) {{\n{body}\n}}"


def _collective_reduce(operands: str, types: str, results: str, extra: str = "", elem: str = "f32") -> str:
    return f"""  %0 = "stablehlo.collective_reduce"({operands}) ({{
  ^bb0(%a: tensor<{elem}>, %b: tensor<{elem}>):
    %s = stablehlo.add %a, %b : tensor<{elem}>
    "stablehlo.return"(%s) : (tensor<{elem}>) -> ()
  }}) {{replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>{extra}}} : ({types}) -> {results}"""


VALID = {
    "collective_reduce_with_a_dynamic_root": _main(
        "%x: tensor<4xf32>, %root: tensor<1xi32>",
        _collective_reduce("%x, %root", "tensor<4xf32>, tensor<1xi32>", "tensor<4xf32>", ", has_dynamic_root")
        + "\n  return"),
    "collective_reduce_variadic_with_a_dynamic_root": _main(
        "%x: tensor<4xf32>, %y: tensor<4xf32>, %root: tensor<2xi32>",
        _collective_reduce("%x, %y, %root", "tensor<4xf32>, tensor<4xf32>, tensor<2xi32>",
                           "(tensor<4xf32>, tensor<4xf32>)", ", has_dynamic_root").replace("%0 =", "%0:2 =")
        + "\n  return"),
    "collective_reduce_promoting_to_its_body": _main(
        "%x: tensor<4xf32>", _collective_reduce("%x", "tensor<4xf32>", "tensor<4xf64>", elem="f64") + "\n  return"),
    "function_ending_in_stablehlo_return": """
func.func @main(%x: tensor<3xi64>) -> (tensor<3xi64>, tensor<3xi64>) {
  %0 = stablehlo.add %x, %x : tensor<3xi64>
  "stablehlo.return"(%0, %x) : (tensor<3xi64>, tensor<3xi64>) -> ()
}""",
    # chlo.md's operand table of the shifts is any tensor.
    "chlo_shift_of_floats": _main(
        "%x: tensor<2xf64>, %y: tensor<2xf64>",
        "  %0 = chlo.broadcast_shift_left %x, %y : (tensor<2xf64>, tensor<2xf64>) -> tensor<2xf64>\n  return"),
    # Operands of one rank broadcast numpy's way; broadcast_dimensions are for a lower-rank one.
    "chlo_compare_of_one_rank_with_broadcast_dimensions": """
func.func @main(%x: tensor<2x3xf64>, %y: tensor<2x3xf64>) -> tensor<2x3xi1> {
  %0 = chlo.broadcast_compare %x, %y {comparison_direction = #chlo<comparison_direction LT>, broadcast_dimensions = array<i64: 1>} : (tensor<2x3xf64>, tensor<2x3xf64>) -> tensor<2x3xi1>
  return %0 : tensor<2x3xi1>
}""",
    "chlo_add_of_quantized_operands_with_other_scales": _main(
        "%x: tensor<2x!quant.uniform<i8:f32, 2.0:15>>, %y: tensor<2x!quant.uniform<i8:f32, 3.0:15>>",
        "  %0 = chlo.broadcast_add %x, %y : (tensor<2x!quant.uniform<i8:f32, 2.0:15>>, "
        "tensor<2x!quant.uniform<i8:f32, 3.0:15>>) -> tensor<2x!quant.uniform<i8:f32, 2.0:15>>\n  return"),
    # Loop variables less static than the operands: the pretty form would give them the operands'
    # types, so the loop prints generically.
    "while_with_less_static_loop_variables": """
func.func @main(%x: tensor<4xf32>) -> tensor<?xf32> {
  %w = "stablehlo.while"(%x) ({
  ^bb0(%a: tensor<?xf32>):
    %t = stablehlo.constant dense<true> : tensor<i1>
    stablehlo.return %t : tensor<i1>
  }, {
  ^bb0(%a: tensor<?xf32>):
    stablehlo.return %a : tensor<?xf32>
  }) : (tensor<4xf32>) -> tensor<?xf32>
  return %w : tensor<?xf32>
}""",
    # A located body op: printed without locations, the compact form is the one either way.
    "reduce_whose_body_op_has_a_location": """
func.func @main(%x: tensor<1x2xf32>, %init: tensor<f32>) -> tensor<1xf32> {
  %0 = "stablehlo.reduce"(%x, %init) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32> loc("body")
    "stablehlo.return"(%s) : (tensor<f32>) -> ()
  }) {dimensions = array<i64: 1>} : (tensor<1x2xf32>, tensor<f32>) -> tensor<1xf32>
  return %0 : tensor<1xf32>
}""",
    "reshape_to_one_bounded_dimension": _main(
        "%x: tensor<?x4xf32, #stablehlo.bounds<3, ?>>",
        "  %0 = stablehlo.reshape %x : (tensor<?x4xf32, #stablehlo.bounds<3, ?>>) -> "
        "tensor<?xf32, #stablehlo.bounds<12>>\n  return"),
    # The quant dialect's unsigned storage, and a storage range that is the whole type (no range).
    "quantized_unsigned_storage_and_full_range": _main(
        "%x: tensor<2x!quant.uniform<u8:f32, 0.5:3>>, %y: tensor<2x!quant.uniform<i8<-128:127>:f32, 1.0:17>>",
        "  %0 = stablehlo.transpose %y, dims = [0] : (tensor<2x!quant.uniform<i8<-128:127>:f32, 1.0:17>>) -> "
        "tensor<2x!quant.uniform<i8:f32, 1.0:17>>\n  return"),
    # An op of a dialect hlodbg does not model keeps a constant of its own element type verbatim.
    "unregistered_op_with_a_constant_of_strings": """
func.func @main() -> tensor<!tf_type.string> {
  %0 = "tf.Const"() {value = dense<"hello"> : tensor<!tf_type.string>} : () -> tensor<!tf_type.string>
  return %0 : tensor<!tf_type.string>
}""",
    # MLIR's own tensor constant and cast, as StableHLO's tests write them among StableHLO ops.
    "arith_constant_and_tensor_cast": """
func.func @main(%x: tensor<4xi32>) -> tensor<?xi32> {
  %c = arith.constant dense<[1, 2, 3, 4]> : tensor<4xi32>
  %0 = stablehlo.add %x, %c : tensor<4xi32>
  %1 = tensor.cast %0 : tensor<4xi32> to tensor<?xi32>
  return %1 : tensor<?xi32>
}""",
    "chlo_top_k_unstable": """
func.func @main(%x: tensor<5xf32>) -> (tensor<2xf32>, tensor<2xi32>) {
  %v, %i = chlo.top_k(%x, k = 2, is_stable = false) : tensor<5xf32> -> (tensor<2xf32>, tensor<2xi32>)
  return %v, %i : tensor<2xf32>, tensor<2xi32>
}""",
    # A scan without inputs says how many steps it takes.
    "chlo_scan_of_a_given_size": """
func.func @main(%c: tensor<f32>) -> (tensor<3xf32>, tensor<f32>) {
  %0, %1 = chlo.scan () inits (%c) dimension = 0 attributes {scan_dim_size = 3 : i64} {
  ^bb0(%carry: tensor<f32>):
    %one = stablehlo.constant dense<1.0> : tensor<f32>
    %2 = stablehlo.add %carry, %one : tensor<f32>
    stablehlo.return %2, %2 : tensor<f32>, tensor<f32>
  } : (tensor<f32>) -> (tensor<3xf32>, tensor<f32>)
  return %0, %1 : tensor<3xf32>, tensor<f32>
}""",
    "custom_call_with_result_tilings": _main(
        "%x: tensor<4xf32>",
        '  %0 = "stablehlo.custom_call"(%x) {call_target_name = "foo", result_tilings = [[dense<[8, 128]> : '
        'tensor<2xindex>]]} : (tensor<4xf32>) -> tensor<4xf32>\n  return'),
    "dynamic_reshape_to_what_its_constant_shape_says": """
func.func @main(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %s = stablehlo.constant dense<[3, 2]> : tensor<2xi64>
  %0 = stablehlo.dynamic_reshape %x, %s : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}""",
}


@pytest.mark.parametrize("name", list(VALID))
def test_valid_program_verifies_and_round_trips(name):
    module = parse_module(VALID[name], "prog.mlir")
    verify(module)
    printed = print_module(module)
    again = parse_module(printed, "printed.mlir")
    verify(again)
    assert print_module(again) == printed
    assert structural_key(again) == structural_key(module)


INVALID = [
    ("collective_reduce_without_operands", _main("", _collective_reduce("", "", "()").replace("%0 = ", "") + "\n  return"),
     "needs at least one operand to reduce", "C3", "stablehlo.collective_reduce"),
    ("collective_reduce_with_only_a_root", _main(
        "%root: tensor<1xi32>",
        _collective_reduce("%root", "tensor<1xi32>", "()", ", has_dynamic_root").replace("%0 = ", "") + "\n  return"),
     "needs at least one operand to reduce before the root", "C3", "stablehlo.collective_reduce"),
    ("collective_reduce_root_of_floats", _main(
        "%x: tensor<4xf32>, %root: tensor<1xf32>",
        _collective_reduce("%x, %root", "tensor<4xf32>, tensor<1xf32>", "tensor<4xf32>", ", has_dynamic_root")
        + "\n  return"),
     "root must hold si32 indices", "C3", "stablehlo.collective_reduce"),
    ("collective_reduce_root_of_the_wrong_size", _main(
        "%x: tensor<4xf32>, %y: tensor<4xf32>, %root: tensor<1xi32>",
        _collective_reduce("%x, %y, %root", "tensor<4xf32>, tensor<4xf32>, tensor<1xi32>",
                           "(tensor<4xf32>, tensor<4xf32>)", ", has_dynamic_root").replace("%0 =", "%0:2 =")
        + "\n  return"),
     "one index per reduced operand (tensor<2xi32>)", "C3", "stablehlo.collective_reduce"),
    ("collective_reduce_result_for_the_root", _main(
        "%x: tensor<4xf32>, %root: tensor<1xi32>",
        _collective_reduce("%x, %root", "tensor<4xf32>, tensor<1xi32>", "(tensor<4xf32>, tensor<1xi32>)",
                           ", has_dynamic_root").replace("%0 =", "%0:2 =") + "\n  return"),
     "has 1 operand(s) to reduce but 2 result(s)", "C3", "stablehlo.collective_reduce"),
    ("collective_reduce_global_ids_without_a_channel", _main(
        "%x: tensor<4xf32>",
        _collective_reduce("%x", "tensor<4xf32>", "tensor<4xf32>", ", use_global_device_ids") + "\n  return"),
     "use_global_device_ids needs a channel_handle with a positive handle", "I3", "stablehlo.collective_reduce"),
    ("function_returning_the_wrong_count_through_stablehlo_return", """
func.func @main(%x: tensor<3xi64>) -> () {
  "stablehlo.return"(%x) : (tensor<3xi64>) -> ()
}""", "returns 1 values but @main declares 0 results", "signature", "stablehlo.return"),
    ("chlo_add_of_other_storage_types", _main(
        "%x: tensor<2x!quant.uniform<i8:f32, 2.0:15>>, %y: tensor<2x!quant.uniform<i8:f32, 3.0:15>>",
        "  %0 = chlo.broadcast_add %x, %y : (tensor<2x!quant.uniform<i8:f32, 2.0:15>>, "
        "tensor<2x!quant.uniform<i8:f32, 3.0:15>>) -> tensor<2x!quant.uniform<i16:f32, 2.0:15>>\n  return"),
     "result element type must be", "inferred", "chlo.broadcast_add"),
    ("chlo_max_of_other_expressed_types", _main(
        "%x: tensor<2x!quant.uniform<i8:f16, 2.0:15>>, %y: tensor<2x!quant.uniform<i8:f32, 3.0:15>>",
        "  %0 = chlo.broadcast_maximum %x, %y : (tensor<2x!quant.uniform<i8:f16, 2.0:15>>, "
        "tensor<2x!quant.uniform<i8:f32, 3.0:15>>) -> tensor<2x!quant.uniform<i8:f32, 2.0:15>>\n  return"),
     "lhs and rhs must have the same element type", "same-element", "chlo.broadcast_maximum"),
    ("dynamic_broadcast_in_dim_to_a_negative_size", _main("%x: tensor<4xf32>", """  %s = stablehlo.constant dense<[-1, 4]> : tensor<2xi64>
  %0 = stablehlo.dynamic_broadcast_in_dim %x, %s, dims = [1] : (tensor<4xf32>, tensor<2xi64>) -> tensor<3x4xf32>
  return"""), "output_dimensions [-1, 4] holds a negative size", "C7", "dynamic_broadcast_in_dim"),
    ("dynamic_broadcast_in_dim_to_another_shape", _main("%x: tensor<4xf32>", """  %s = stablehlo.constant dense<[1, 4]> : tensor<2xi64>
  %0 = stablehlo.dynamic_broadcast_in_dim %x, %s, dims = [1] : (tensor<4xf32>, tensor<2xi64>) -> tensor<3x4xf32>
  return"""), "output_dimensions is [1, 4] but the result type is tensor<3x4xf32>", "C7", "dynamic_broadcast_in_dim"),
    ("dynamic_broadcast_in_dim_of_an_operand_that_does_not_fit", _main("%x: tensor<1x3xi32>", """  %s = stablehlo.constant dense<[2, 1, 1]> : tensor<3xi32>
  %0 = stablehlo.dynamic_broadcast_in_dim %x, %s, dims = [1, 2] : (tensor<1x3xi32>, tensor<3xi32>) -> tensor<?x?x?xi32>
  return"""), "dim(operand, 1) = 3 must be 1 or output_dimensions[2] = 1", "C5", "dynamic_broadcast_in_dim"),
    ("dynamic_broadcast_in_dim_shape_of_unknown_size", _main(
        "%x: tensor<?x?xi32>, %s: tensor<?xi64>",
        "  %0 = stablehlo.dynamic_broadcast_in_dim %x, %s, dims = [1, 2] : (tensor<?x?xi32>, tensor<?xi64>) -> "
        "tensor<7x8x9xi32>\n  return"),
     "output_dimensions must be a statically shaped 1-dimensional tensor", "I2", "dynamic_broadcast_in_dim"),
    ("dynamic_reshape_to_another_shape", _main("%x: tensor<4xf32>", """  %s = stablehlo.constant dense<[2, 2]> : tensor<2xi64>
  %0 = stablehlo.dynamic_reshape %x, %s : (tensor<4xf32>, tensor<2xi64>) -> tensor<1x4xf32>
  return"""), "output_shape is [2, 2] but the result type is tensor<1x4xf32>", "C4", "dynamic_reshape"),
    ("dynamic_reshape_to_more_elements", _main("%x: tensor<2x5xf32>", """  %s = stablehlo.constant dense<[2, 3, 4]> : tensor<3xi32>
  %0 = stablehlo.dynamic_reshape %x, %s : (tensor<2x5xf32>, tensor<3xi32>) -> tensor<?x?x?xf32>
  return"""), "output_shape [2, 3, 4] has 24 elements but the operand", "C2", "dynamic_reshape"),
    ("dynamic_reshape_shape_of_unknown_size", _main(
        "%x: tensor<?xf32>, %s: tensor<?xi64>",
        "  %0 = stablehlo.dynamic_reshape %x, %s : (tensor<?xf32>, tensor<?xi64>) -> tensor<1x4xf32>\n  return"),
     "output_shape must be a statically shaped 1-dimensional tensor", "I2", "dynamic_reshape"),
    ("dynamic_iota_to_another_shape", _main("", """  %s = stablehlo.constant dense<[1]> : tensor<1xi64>
  %0 = stablehlo.dynamic_iota %s, dim = 0 : (tensor<1xi64>) -> tensor<4xf32>
  return"""), "output_shape is [1] but the result type is tensor<4xf32>", "C2", "dynamic_iota"),
    ("dynamic_pad_with_negative_interior_padding", _main(
        "%x: tensor<4xf64>, %v: tensor<f64>, %lo: tensor<1xi32>, %hi: tensor<1xi32>",
        """  %i = stablehlo.constant dense<-1> : tensor<1xi32>
  %0 = stablehlo.dynamic_pad %x, %v, %lo, %hi, %i : (tensor<4xf64>, tensor<f64>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<?xf64>
  return"""), "interior_padding must be non-negative", "C3", "dynamic_pad"),
    ("dynamic_pad_to_another_size", _main("%x: tensor<4xf64>, %v: tensor<f64>", """  %p = stablehlo.constant dense<1> : tensor<1xi32>
  %0 = stablehlo.dynamic_pad %x, %v, %p, %p, %p : (tensor<4xf64>, tensor<f64>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<4xf64>
  return"""), "expected 9", "C4", "dynamic_pad"),
    ("dynamic_gather_slice_past_the_operand", _main("%x: tensor<?x?x2xi32>, %i: tensor<?x?x?xi32>", """  %s = stablehlo.constant dense<[1, 1, 8]> : tensor<3xi32>
  %0 = "stablehlo.dynamic_gather"(%x, %i, %s) {dimension_numbers = #stablehlo.gather<offset_dims = [2], collapsed_slice_dims = [0, 1], start_index_map = [0, 1], index_vector_dim = 2>} : (tensor<?x?x2xi32>, tensor<?x?x?xi32>, tensor<3xi32>) -> tensor<?x?x?xi32>
  return"""), "slice_sizes[2] = 8 is out of range [0, 2]", "C12", "dynamic_gather"),
    ("dynamic_gather_collapsing_a_wide_slice", _main("%x: tensor<?x?x?xi32>, %i: tensor<?x?x?xi32>", """  %s = stablehlo.constant dense<[1, 1, 8]> : tensor<3xi32>
  %0 = "stablehlo.dynamic_gather"(%x, %i, %s) {dimension_numbers = #stablehlo.gather<offset_dims = [2], collapsed_slice_dims = [0, 2], start_index_map = [0, 1], index_vector_dim = 2>} : (tensor<?x?x?xi32>, tensor<?x?x?xi32>, tensor<3xi32>) -> tensor<?x?x?xi32>
  return"""), "slice_sizes[2] = 8 must be at most 1 for a collapsed dimension", "C8", "dynamic_gather"),
    ("infeed_layout_per_result", _main("%t: !stablehlo.token", """  %0:3 = "stablehlo.infeed"(%t) {infeed_config = "", layout = [[0, 1]]} : (!stablehlo.token) -> (tensor<3x3xi32>, tensor<i1>, !stablehlo.token)
  return"""), "layout has 1 entries but there are 2 results before the token", "layout", "stablehlo.infeed"),
    ("infeed_layout_of_integers", _main("%t: !stablehlo.token", """  %0:2 = "stablehlo.infeed"(%t) {infeed_config = "", layout = [0]} : (!stablehlo.token) -> (tensor<3x3xi32>, !stablehlo.token)
  return"""), "layout entry #0 must be an array of integers", "layout", "stablehlo.infeed"),
    ("all_to_all_over_no_groups", _main("%x: tensor<4x16xf32>", """  %0 = "stablehlo.all_to_all"(%x) {split_dimension = 1 : i64, concat_dimension = 0 : i64, split_count = 4 : i64, replica_groups = dense<0> : tensor<0x2xi64>} : (tensor<4x16xf32>) -> tensor<16x4xf32>
  return"""), "replica groups have 2 processes each, but split_count is 4", "C8", "stablehlo.all_to_all"),
    ("transpose_changing_per_axis_scales", _main("%x: tensor<2x2x!quant.uniform<i8:f32:0, {0.1:-30, 0.2:-30}>>", """  %0 = stablehlo.transpose %x, dims = [1, 0] : (tensor<2x2x!quant.uniform<i8:f32:0, {0.1:-30, 0.2:-30}>>) -> tensor<2x2x!quant.uniform<i8:f32:1, {0.1:-30, 0.3:-30}>>
  return"""), "operand and result must have the same element type", "C1", "stablehlo.transpose"),
    ("add_result_past_the_operands_bound", _main(
        "%x: tensor<?xf32, #stablehlo.bounds<4>>",
        "  %0 = stablehlo.add %x, %x : (tensor<?xf32, #stablehlo.bounds<4>>, tensor<?xf32, #stablehlo.bounds<4>>) "
        "-> tensor<5xf32>\n  return"),
     "tensor<5xf32>", "C1", "stablehlo.add"),
    ("broadcast_in_dim_to_an_unbounded_dynamic_result", _main("%x: tensor<3xi32>", """  %0 = stablehlo.broadcast_in_dim %x, dims = [1] : (tensor<3xi32>) -> tensor<?x3xi32>
  return"""), "result must be statically shaped or have one dynamic dimension with a bound", "O1", "broadcast_in_dim"),
    ("reshape_to_two_bounded_dimensions", _main("%x: tensor<?x?xf32, #stablehlo.bounds<5, 5>>", """  %0 = stablehlo.reshape %x : (tensor<?x?xf32, #stablehlo.bounds<5, 5>>) -> tensor<?x?xf32, #stablehlo.bounds<5, 5>>
  return"""), "one dynamic dimension with a bound", "O1", "stablehlo.reshape"),
    ("all_gather_over_a_mesh_the_module_lacks", _main("%x: tensor<16x8xf32>", """  %0 = "stablehlo.all_gather"(%x) {all_gather_dim = 1 : i64, replica_groups = #stablehlo.replica_group_mesh_axes<mesh = @missing, axes = [#stablehlo.axis_ref<name = "a">]>, channel_handle = #stablehlo.channel_handle<handle = 1, type = 0>} : (tensor<16x8xf32>) -> tensor<16x16xf32>
  return"""), "replica_groups name the mesh @missing, which the module does not define", "I3", "stablehlo.all_gather"),
    ("all_gather_group_padded_with_minus_one", _main("%x: tensor<8x2xf32>", """  %0 = "stablehlo.all_gather"(%x) {all_gather_dim = 1 : i64, channel_handle = #stablehlo.channel_handle<handle = 1, type = 0>, replica_groups = dense<[[0, 2, 4, 6], [1, 3, 5, -1]]> : tensor<2x4xi64>} : (tensor<8x2xf32>) -> tensor<8x8xf32>
  return"""), "replica_groups hold -1", "C4", "stablehlo.all_gather"),
    ("irfft_of_a_spectrum_that_does_not_fit_fft_length", _main("%x: tensor<?x8xcomplex<f32>>", """  %0 = "stablehlo.fft"(%x) {fft_length = array<i64: 16>, fft_type = #stablehlo<fft_type IRFFT>} : (tensor<?x8xcomplex<f32>>) -> tensor<?x?xf32>
  return"""), "IRFFT of fft_length [16] needs an operand ending in 9", "C5", "stablehlo.fft"),
    ("quantized_scale_past_the_expressed_type", _main("%x: tensor<2x!quant.uniform<i4:f16, 1.0e+05>>", """  %0 = stablehlo.add %x, %x : tensor<2x!quant.uniform<i4:f16, 1.0e+05>>
  return"""), "scale 100000 is not a value of f16", "C4", "func.func"),
    ("quantized_scale_below_the_expressed_type", _main("%x: tensor<2x!quant.uniform<i4:f16, 4.0e-08>>", """  %0 = stablehlo.add %x, %x : tensor<2x!quant.uniform<i4:f16, 4.0e-08>>
  return"""), "scale 4e-08 is not a value of f16", "C4", "func.func"),
    ("tensor_cast_to_another_element_type", _main("%x: tensor<4xi32>", """  %0 = tensor.cast %x : tensor<4xi32> to tensor<?xf32>
  return"""), "cannot cast tensor<4xi32> to tensor<?xf32>", "inferred", "tensor.cast"),
    ("tensor_cast_to_another_size", _main("%x: tensor<4xi32>", """  %0 = tensor.cast %x : tensor<4xi32> to tensor<5xi32>
  return"""), "cannot cast tensor<4xi32> to tensor<5xi32>", "inferred", "tensor.cast"),
    ("arith_constant_of_another_type", _main("", """  %0 = "arith.constant"() <{value = dense<1> : tensor<2xi32>}> : () -> tensor<3xi32>
  return"""), "value has type tensor<2xi32> but the result is tensor<3xi32>", "inferred", "arith.constant"),
    ("chlo_scan_of_another_size_than_its_input", _main("%x: tensor<2x3xf32>, %c: tensor<3xf32>", """  %0, %1 = chlo.scan (%x) inits (%c) dimension = 0 attributes {scan_dim_size = 3 : i64} {
  ^bb0(%input: tensor<3xf32>, %carry: tensor<3xf32>):
    %2 = stablehlo.add %input, %carry : tensor<3xf32>
    stablehlo.return %2, %2 : tensor<3xf32>, tensor<3xf32>
  } : (tensor<2x3xf32>, tensor<3xf32>) -> (tensor<2x3xf32>, tensor<3xf32>)
  return"""), "scan_dim_size is 3 but input #0 tensor<2x3xf32> has 2 along dimension 0", "scan", "chlo.scan"),
    ("reshape_changing_per_axis_zero_points", _main("%x: tensor<1x2x2x!quant.uniform<i8:f32:0, {1.0:17}>>", """  %0 = stablehlo.reshape %x : (tensor<1x2x2x!quant.uniform<i8:f32:0, {1.0:17}>>) -> tensor<1x2x2x!quant.uniform<i8:f32:0, {1.0:18}>>
  return"""), "operand and result must have the same element type", "C1", "stablehlo.reshape"),
]


@pytest.mark.parametrize("name, text, fragment, constraint, marker", INVALID, ids=[case[0] for case in INVALID])
def test_invalid_program_is_rejected_at_its_op(name, text, fragment, constraint, marker):
    assert_rejected_at(text, fragment, constraint, marker)


def test_set_dimension_size_takes_a_scalar_size():
    # set_dimension_size is not in the spec; its op definition takes a 0-dimensional size.
    text = _main("%x: tensor<1x512xf32>", """  %d = stablehlo.constant dense<512> : tensor<1xi32>
  %0 = "stablehlo.set_dimension_size"(%x, %d) {dimension = 1 : i64} : (tensor<1x512xf32>, tensor<1xi32>) -> tensor<1x512xf32>
  return""")
    with pytest.raises(hlodbg.VerifyError, match="size must be a 0-dimensional tensor, got tensor<1xi32>") as info:
        verify(parse_module(text, "prog.mlir"))
    assert info.value.pos.line == 3


def test_an_unknown_stablehlo_type_is_a_parse_error_naming_the_types():
    with pytest.raises(hlodbg.ParseError, match=r"unknown stablehlo type !stablehlo.foobar: .*!stablehlo.token") as info:
        parse_module("func.func private @f() -> !stablehlo.foobar\n", "prog.mlir")
    assert (info.value.pos.line, info.value.pos.col) == (1, 27)


@pytest.mark.parametrize("tensor, message, column", [
    ("tensor<?x?xf32, #stablehlo.type_extensions<bounds = [3]>>", r"1 bound\(s\) for a tensor of rank 2", 42),
    ("tensor<3xf32, #stablehlo.bounds<3>>", r"dimension 0 is static \(3\) and cannot have a bound", 40),
])
def test_bounds_that_do_not_fit_the_tensor_are_a_parse_error(tensor, message, column):
    with pytest.raises(hlodbg.ParseError, match=message) as info:
        parse_module(f"func.func private @f(%a: {tensor})\n", "prog.mlir")
    assert (info.value.pos.line, info.value.pos.col) == (1, column)


def test_a_stablehlo_constant_of_strings_is_refused_at_its_value():
    text = _main("", '  %0 = stablehlo.constant dense<"hi"> : tensor<!tf_type.string>\n  return')
    with pytest.raises(hlodbg.ParseError, match="takes a dense elements value") as info:
        parse_module(text, "prog.mlir")
    assert info.value.pos.line == 2


def test_quantized_types_print_as_the_quant_dialect_does():
    module = parse_module(VALID["quantized_unsigned_storage_and_full_range"], "prog.mlir")
    printed = print_module(module)
    assert "!quant.uniform<u8:f32, 5.000000e-01:3>" in printed and "<-128:127>" not in printed


# -- semantics ------------------------------------------------------------------------------------


def test_function_ending_in_stablehlo_return_runs():
    first, second = interpret(VALID["function_ending_in_stablehlo_return"], np.array([1, 2, 3], np.int64))
    assert first.tolist() == [2, 4, 6] and second.tolist() == [1, 2, 3]


@pytest.mark.parametrize("root", [0, 1])
def test_collective_reduce_delivers_to_the_dynamic_root_only(root):
    text = """
func.func @main(%x: tensor<2xi64>, %root: tensor<1xi32>) -> tensor<2xi64> {
  %0 = "stablehlo.collective_reduce"(%x, %root) ({
  ^bb0(%a: tensor<i64>, %b: tensor<i64>):
    %s = stablehlo.add %a, %b : tensor<i64>
    "stablehlo.return"(%s) : (tensor<i64>) -> ()
  }) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>, has_dynamic_root} : (tensor<2xi64>, tensor<1xi32>) -> tensor<2xi64>
  return %0 : tensor<2xi64>
}"""
    roots = np.array([root], np.int32)
    inputs = {(0, 0): [np.array([1, 2]), roots], (1, 0): [np.array([10, 20]), roots]}
    results = grid_run(text, inputs, replicas=2, partitions=1)
    for (replica, _), (value,) in results.items():
        assert value.tolist() == ([11, 22] if replica == root else [0, 0])


def test_collective_reduce_may_run_asynchronously():
    text = """
func.func @main(%x: tensor<2xi64>) -> tensor<2xi64> {
  %f = "stablehlo.async_start"(%x) ({
  ^bb0(%bx: tensor<2xi64>):
    %0 = "stablehlo.collective_reduce"(%bx) ({
    ^bb0(%a: tensor<i64>, %b: tensor<i64>):
      %s = stablehlo.add %a, %b : tensor<i64>
      "stablehlo.return"(%s) : (tensor<i64>) -> ()
    }) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<2xi64>) -> tensor<2xi64>
    "stablehlo.return"(%0) : (tensor<2xi64>) -> ()
  }) : (tensor<2xi64>) -> !stablehlo.future<tensor<2xi64>>
  %r = "stablehlo.async_done"(%f) : (!stablehlo.future<tensor<2xi64>>) -> tensor<2xi64>
  return %r : tensor<2xi64>
}"""
    inputs = {(0, 0): [np.array([1, 2])], (1, 0): [np.array([10, 20])]}
    results = grid_run(text, inputs, replicas=2, partitions=1)
    assert results[(0, 0)][0].tolist() == [11, 22] and results[(1, 0)][0].tolist() == [0, 0]


def test_running_a_shift_of_floats_is_an_error_at_the_op():
    with pytest.raises(ExecutionError, match="shifts integers; its operands are tensor<2xf64>") as info:
        interpret(VALID["chlo_shift_of_floats"], np.ones(2), np.ones(2))
    assert info.value.pos.line == 2


def test_a_reduce_over_non_scalar_bodies_prints_its_body_in_full():
    # Not valid by the spec (I2: 0-dimensional init values), but printed, it must still say what
    # was read: the compact `applies` form stands for a body over 0-dimensional tensors.
    text = """
func.func @main(%x: tensor<4x4xf32>, %init: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "stablehlo.reduce"(%x, %init) ({
  ^bb0(%a: tensor<4xf32>, %b: tensor<4xf32>):
    %s = stablehlo.add %a, %b : tensor<4xf32>
    stablehlo.return %s : tensor<4xf32>
  }) {dimensions = array<i64: 0>} : (tensor<4x4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}"""
    module = parse_module(text, "prog.mlir")
    printed = print_module(module)
    assert "applies" not in printed
    assert structural_key(parse_module(printed, "printed.mlir")) == structural_key(module)


def test_a_chlo_compare_of_one_rank_compares_element_by_element():
    x, y = np.arange(6.0).reshape(2, 3), np.full((2, 3), 2.5)
    (result,) = interpret(VALID["chlo_compare_of_one_rank_with_broadcast_dimensions"], x, y)
    assert result.tolist() == (x < y).tolist()


def test_arith_constant_and_tensor_cast_run():
    (result,) = interpret(VALID["arith_constant_and_tensor_cast"], np.array([10, 20, 30, 40], np.int32))
    assert result.tolist() == [11, 22, 33, 44]


def test_a_scan_without_inputs_takes_scan_dim_size_steps():
    outputs, last = interpret(VALID["chlo_scan_of_a_given_size"], np.float32(0.5))
    assert outputs.tolist() == [1.5, 2.5, 3.5] and float(last) == 3.5


def test_result_tilings_are_the_custom_calls_own_attribute():
    generic = print_module(parse_module(VALID["custom_call_with_result_tilings"], "prog.mlir"), generic=True)
    start = generic.index("<{call_target_name = \"foo\"")
    properties = generic[start:generic.index("}>", start)]
    assert "result_tilings = [[dense<[8, 128]> : tensor<2xindex>]]" in properties
