"""The verifier on the tensor op families (element-wise, data movement, contractions, reductions):
invalid programs fail at the right op with the right constraint, valid ones pass; and how errors
are reported (every error, errors inside regions, no false positives on the shared corpus).
test_verifier_structure.py holds the same tables for control flow, calls, collectives and
quantization.

Each invalid program marks the line of the offending op with `// ERR`; the test checks that the
first VerifyError points at that line and that its message contains the given fragment.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from hlodbg.engine import VerifyError, parse_chunks
from hlodbg.engine.verify import verify, verify_all

from .helpers import assert_rejected_at_marked_line, assert_verifies, parse_marked
from .test_verifier_structure import INVALID as STRUCTURE_INVALID

SHARED = Path(__file__).resolve().parents[2] / "shared"


INVALID = [
    # -- element-wise ------------------------------------------------------------------------------
    ("add_shape", """
        func.func @main(%a: tensor<2xf32>, %b: tensor<3xf32>) -> tensor<2xf32> {
          %0 = "stablehlo.add"(%a, %b) : (tensor<2xf32>, tensor<3xf32>) -> tensor<2xf32>  // ERR
          return %0 : tensor<2xf32>
        }""", "stablehlo.add: operands must have the same shape: tensor<2xf32> vs tensor<3xf32> (C1)"),
    ("add_element_type", """
        func.func @main(%a: tensor<2xf32>, %b: tensor<2xi32>) -> tensor<2xf32> {
          %0 = "stablehlo.add"(%a, %b) : (tensor<2xf32>, tensor<2xi32>) -> tensor<2xf32>  // ERR
          return %0 : tensor<2xf32>
        }""", "operands must have the same element type"),
    ("subtract_result_shape", """
        func.func @main(%a: tensor<2xf32>) -> tensor<4xf32> {
          %0 = "stablehlo.subtract"(%a, %a) : (tensor<2xf32>, tensor<2xf32>) -> tensor<4xf32>  // ERR
          return %0 : tensor<4xf32>
        }""", "result must have the operands' shape"),
    ("and_on_floats", """
        func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
          %0 = stablehlo.and %a, %a : tensor<2xf32>  // ERR
          return %0 : tensor<2xf32>
        }""", "boolean or integer element type"),
    ("shift_on_floats", """
        func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
          %0 = stablehlo.shift_left %a, %a : tensor<2xf32>  // ERR
          return %0 : tensor<2xf32>
        }""", "must have integer element type"),
    ("sqrt_on_integers", """
        func.func @main(%a: tensor<2xi32>) -> tensor<2xi32> {
          %0 = stablehlo.sqrt %a : tensor<2xi32>  // ERR
          return %0 : tensor<2xi32>
        }""", "floating-point, complex or quantized"),
    ("abs_complex_result", """
        func.func @main(%a: tensor<2xcomplex<f32>>) -> tensor<2xcomplex<f32>> {
          %0 = "stablehlo.abs"(%a) : (tensor<2xcomplex<f32>>) -> tensor<2xcomplex<f32>>  // ERR
          return %0 : tensor<2xcomplex<f32>>
        }""", "result element type must be f32 for operand"),
    ("is_finite_result", """
        func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
          %0 = stablehlo.is_finite %a : (tensor<2xf32>) -> tensor<2xf32>  // ERR
          return %0 : tensor<2xf32>
        }""", "element type i1"),
    ("compare_result_not_bool", """
        func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
          %0 = stablehlo.compare LT, %a, %a : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>  // ERR
          return %0 : tensor<2xf32>
        }""", "result must have element type i1"),
    ("compare_type_for_integers", """
        func.func @main(%a: tensor<2xi32>) -> tensor<2xi1> {
          %0 = stablehlo.compare LT, %a, %a, FLOAT : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi1>  // ERR
          return %0 : tensor<2xi1>
        }""", "compare_type FLOAT is not allowed for element type i32; use SIGNED (C3)"),
    ("convert_shape", """
        func.func @main(%a: tensor<2xf32>) -> tensor<3xi32> {
          %0 = stablehlo.convert %a : (tensor<2xf32>) -> tensor<3xi32>  // ERR
          return %0 : tensor<3xi32>
        }""", "operand and result must have the same shape"),
    ("complex_result", """
        func.func @main(%a: tensor<2xf32>) -> tensor<2xcomplex<f64>> {
          %0 = stablehlo.complex %a, %a : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xcomplex<f64>>  // ERR
          return %0 : tensor<2xcomplex<f64>>
        }""", "result element type must be complex<f32>, got tensor<2xcomplex<f64>> (C3)"),
    ("select_pred_shape", """
        func.func @main(%p: tensor<3xi1>, %a: tensor<2xf32>) -> tensor<2xf32> {
          %0 = stablehlo.select %p, %a, %a : tensor<3xi1>, tensor<2xf32>  // ERR
          return %0 : tensor<2xf32>
        }""", "pred must be 0-dimensional or have the shape of on_true"),
    ("clamp_min_shape", """
        func.func @main(%m: tensor<3xf32>, %a: tensor<2xf32>) -> tensor<2xf32> {
          %0 = "stablehlo.clamp"(%m, %a, %a) : (tensor<3xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>  // ERR
          return %0 : tensor<2xf32>
        }""", "min must be 0-dimensional or have the shape of operand: tensor<3xf32> vs tensor<2xf32> (C1)"),
    ("reduce_precision_bits", """
        func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
          %0 = stablehlo.reduce_precision %a, format = e0m2 : tensor<2xf32>  // ERR
          return %0 : tensor<2xf32>
        }""", "exponent_bits = 0 must be at least 1 (C2)"),
    # -- data movement ---------------------------------------------------------------------------
    ("broadcast_in_dim_dim_out_of_range", """
        func.func @main(%a: tensor<3xf32>) -> tensor<2x3xf32> {
          %0 = stablehlo.broadcast_in_dim %a, dims = [2] : (tensor<3xf32>) -> tensor<2x3xf32>  // ERR
          return %0 : tensor<2x3xf32>
        }""", "broadcast dimension 2 is out of range [0, 2) (C3)"),
    ("broadcast_in_dim_dims_count", """
        func.func @main(%a: tensor<3xf32>) -> tensor<2x3xf32> {
          %0 = stablehlo.broadcast_in_dim %a, dims = [0, 1] : (tensor<3xf32>) -> tensor<2x3xf32>  // ERR
          return %0 : tensor<2x3xf32>
        }""", "(C2)"),
    ("broadcast_in_dim_size", """
        func.func @main(%a: tensor<3xf32>) -> tensor<2x4xf32> {
          %0 = stablehlo.broadcast_in_dim %a, dims = [1] : (tensor<3xf32>) -> tensor<2x4xf32>  // ERR
          return %0 : tensor<2x4xf32>
        }""", "dim(operand, 0) = 3 must be 1 or equal dim(result, 1) = 4 (C5)"),
    ("transpose_not_a_permutation", """
        func.func @main(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
          %0 = stablehlo.transpose %a, dims = [0, 0] : (tensor<2x3xf32>) -> tensor<2x3xf32>  // ERR
          return %0 : tensor<2x3xf32>
        }""", "is not a permutation"),
    ("transpose_result_shape", """
        func.func @main(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
          %0 = stablehlo.transpose %a, dims = [1, 0] : (tensor<2x3xf32>) -> tensor<2x3xf32>  // ERR
          return %0 : tensor<2x3xf32>
        }""", "expected 3x2 (C3)"),
    ("reshape_element_count", """
        func.func @main(%a: tensor<2x3xf32>) -> tensor<7xf32> {
          %0 = stablehlo.reshape %a : (tensor<2x3xf32>) -> tensor<7xf32>  // ERR
          return %0 : tensor<7xf32>
        }""", "has 6 elements but result tensor<7xf32> has 7 (C2)"),
    ("concatenate_other_dims", """
        func.func @main(%a: tensor<2x3xf32>, %b: tensor<2x4xf32>) -> tensor<4x3xf32> {
          %0 = stablehlo.concatenate %a, %b, dim = 0 : (tensor<2x3xf32>, tensor<2x4xf32>) -> tensor<4x3xf32>  // ERR
          return %0 : tensor<4x3xf32>
        }""", "outside dimension 0 (C2)"),
    ("concatenate_result", """
        func.func @main(%a: tensor<2x3xf32>, %b: tensor<1x3xf32>) -> tensor<4x3xf32> {
          %0 = stablehlo.concatenate %a, %b, dim = 0 : (tensor<2x3xf32>, tensor<1x3xf32>) -> tensor<4x3xf32>  // ERR
          return %0 : tensor<4x3xf32>
        }""", "expected 3x3 (C6)"),
    ("pad_result_shape", """
        func.func @main(%a: tensor<2x3xf32>, %v: tensor<f32>) -> tensor<5x9xf32> {
          %0 = stablehlo.pad %a, %v, low = [0, 1], high = [2, 1], interior = [1, 1] : (tensor<2x3xf32>, tensor<f32>) -> tensor<5x9xf32>  // ERR
          return %0 : tensor<5x9xf32>
        }""", "expected 5x7 (C4)"),
    ("slice_limit", """
        func.func @main(%a: tensor<4xf32>) -> tensor<5xf32> {
          %0 = stablehlo.slice %a [0:5] : (tensor<4xf32>) -> tensor<5xf32>  // ERR
          return %0 : tensor<5xf32>
        }""", "limit_indices[0] <= dim(operand, 0)"),
    ("slice_result_shape", """
        func.func @main(%a: tensor<8xf32>) -> tensor<3xf32> {
          %0 = stablehlo.slice %a [1:8:2] : (tensor<8xf32>) -> tensor<3xf32>  // ERR
          return %0 : tensor<3xf32>
        }""", "expected 4 (C5)"),
    ("dynamic_slice_sizes", """
        func.func @main(%a: tensor<4xf32>, %i: tensor<i32>) -> tensor<5xf32> {
          %0 = stablehlo.dynamic_slice %a, %i, sizes = [5] : (tensor<4xf32>, tensor<i32>) -> tensor<5xf32>  // ERR
          return %0 : tensor<5xf32>
        }""", "slice_sizes[0] = 5 is out of range [0, 4] (C4)"),
    ("dynamic_update_slice_update_too_big", """
        func.func @main(%a: tensor<4xf32>, %u: tensor<5xf32>, %i: tensor<i32>) -> tensor<4xf32> {
          %0 = stablehlo.dynamic_update_slice %a, %u, %i : (tensor<4xf32>, tensor<5xf32>, tensor<i32>) -> tensor<4xf32>  // ERR
          return %0 : tensor<4xf32>
        }""", "dim(update, 0) = 5 exceeds dim(operand, 0) = 4 (C6)"),
    ("iota_dimension", """
        func.func @main() -> tensor<4xi32> {
          %0 = stablehlo.iota dim = 1 : tensor<4xi32>  // ERR
          return %0 : tensor<4xi32>
        }""", "iota_dimension 1 is out of range [0, 1) (C1)"),
    ("reverse_duplicate_dims", """
        func.func @main(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
          %0 = stablehlo.reverse %a, dims = [1, 1] : tensor<2x3xf32>  // ERR
          return %0 : tensor<2x3xf32>
        }""", "dimensions must be unique, but 1 appears twice in [1, 1] (C2)"),
    ("gather_result_shape", """
        func.func @main(%a: tensor<3x4xf32>, %i: tensor<2x1xi32>) -> tensor<2x3xf32> {
          %0 = "stablehlo.gather"(%a, %i) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, slice_sizes = array<i64: 1, 4>}> : (tensor<3x4xf32>, tensor<2x1xi32>) -> tensor<2x3xf32>  // ERR
          return %0 : tensor<2x3xf32>
        }""", "expected 2x4 (C22)"),
    ("gather_collapsed_slice_size", """
        func.func @main(%a: tensor<3x4xf32>, %i: tensor<2x1xi32>) -> tensor<2x4xf32> {
          %0 = "stablehlo.gather"(%a, %i) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, slice_sizes = array<i64: 2, 4>}> : (tensor<3x4xf32>, tensor<2x1xi32>) -> tensor<2x4xf32>  // ERR
          return %0 : tensor<2x4xf32>
        }""", "slice_sizes[0] = 2 must be at most 1 for a collapsed dimension (C9)"),
    ("scatter_update_shape", """
        func.func @main(%a: tensor<3x4xf32>, %i: tensor<2x1xi32>, %u: tensor<2x5xf32>) -> tensor<3x4xf32> {
          %0 = "stablehlo.scatter"(%a, %i, %u) <{scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}> ({  // ERR
          ^bb0(%x: tensor<f32>, %y: tensor<f32>):
            %s = stablehlo.add %x, %y : tensor<f32>
            stablehlo.return %s : tensor<f32>
          }) : (tensor<3x4xf32>, tensor<2x1xi32>, tensor<2x5xf32>) -> tensor<3x4xf32>
          return %0 : tensor<3x4xf32>
        }""", "update window dimension 1 has size 5, larger than the operand's 4 (C4)"),
    ("get_tuple_element_index", """
        func.func @main(%t: tuple<tensor<2xf32>, tensor<i32>>) -> tensor<i32> {
          %0 = stablehlo.get_tuple_element %t[2] : (tuple<tensor<2xf32>, tensor<i32>>) -> tensor<i32>  // ERR
          return %0 : tensor<i32>
        }""", "index 2 is out of range [0, 2) (C1)"),
    ("tuple_result_type", """
        func.func @main(%a: tensor<2xf32>) -> tuple<tensor<3xf32>> {
          %0 = "stablehlo.tuple"(%a) : (tensor<2xf32>) -> tuple<tensor<3xf32>>  // ERR
          return %0 : tuple<tensor<3xf32>>
        }""", "result type must be tuple<tensor<2xf32>>, got tuple<tensor<3xf32>> (C1)"),  # the spec numbers it C1
    ("bitcast_convert_shape", """
        func.func @main(%a: tensor<2xf32>) -> tensor<2x2xi8> {
          %0 = stablehlo.bitcast_convert %a : (tensor<2xf32>) -> tensor<2x2xi8>  // ERR
          return %0 : tensor<2x2xi8>
        }""", "needs result shape 2x4"),
    ("broadcast_sizes", """
        func.func @main(%a: tensor<3xf32>) -> tensor<2x4xf32> {
          %0 = stablehlo.broadcast %a, sizes = [2] : (tensor<3xf32>) -> tensor<2x4xf32>  // ERR
          return %0 : tensor<2x4xf32>
        }""", "expected 2x3"),
    # -- contractions ------------------------------------------------------------------------------
    ("dot_sizes", """
        func.func @main(%a: tensor<2x3xf32>, %b: tensor<4xf32>) -> tensor<2xf32> {
          %0 = stablehlo.dot %a, %b : (tensor<2x3xf32>, tensor<4xf32>) -> tensor<2xf32>  // ERR
          return %0 : tensor<2xf32>
        }""", "contracting dimensions differ: 3 (last of lhs) vs 4 (first of rhs)"),
    ("dot_general_contracting_sizes", """
        func.func @main(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) -> tensor<2x5xf32> {
          %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<2x5xf32>  // ERR
          return %0 : tensor<2x5xf32>
        }""", "contracting dimension sizes differ: dim(lhs, 1) = 3 but dim(rhs, 0) = 4 (C10)"),
    ("dot_general_batching_sizes", """
        func.func @main(%a: tensor<2x3x4xf32>, %b: tensor<5x4x6xf32>) -> tensor<2x3x6xf32> {
          %0 = stablehlo.dot_general %a, %b, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<2x3x4xf32>, tensor<5x4x6xf32>) -> tensor<2x3x6xf32>  // ERR
          return %0 : tensor<2x3x6xf32>
        }""", "(C9)"),
    ("dot_general_result_shape", """
        func.func @main(%a: tensor<2x3xf32>, %b: tensor<3x5xf32>) -> tensor<5x2xf32> {
          %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<2x3xf32>, tensor<3x5xf32>) -> tensor<5x2xf32>  // ERR
          return %0 : tensor<5x2xf32>
        }""", "expected 2x5 (C12)"),
    ("convolution_feature_groups", """
        func.func @main(%a: tensor<1x8x8x3xf32>, %k: tensor<3x3x3x4xf32>) -> tensor<1x6x6x4xf32> {
          %0 = stablehlo.convolution(%a, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 2 : i64} : (tensor<1x8x8x3xf32>, tensor<3x3x3x4xf32>) -> tensor<1x6x6x4xf32>  // ERR
          return %0 : tensor<1x6x6x4xf32>
        }""", "input feature size 3 is not divisible by feature_group_count 2 (C11)"),
    ("convolution_result_shape", """
        func.func @main(%a: tensor<1x8x8x3xf32>, %k: tensor<3x3x3x4xf32>) -> tensor<1x8x8x4xf32> {
          %0 = stablehlo.convolution(%a, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [1, 1]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x8x8x3xf32>, tensor<3x3x3x4xf32>) -> tensor<1x8x8x4xf32>  // ERR
          return %0 : tensor<1x8x8x4xf32>
        }""", "expected 1x6x6x4 (C25)"),
    ("fft_rfft_result", """
        func.func @main(%a: tensor<8xf32>) -> tensor<8xcomplex<f32>> {
          %0 = stablehlo.fft %a, type = RFFT, length = [8] : (tensor<8xf32>) -> tensor<8xcomplex<f32>>  // ERR
          return %0 : tensor<8xcomplex<f32>>
        }""", "RFFT of 8 points has 5 complex coefficients in its last dimension, got tensor<8xcomplex<f32>> (C5)"),
    ("cholesky_not_square", """
        func.func @main(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
          %0 = stablehlo.cholesky %a : tensor<2x3xf32>  // ERR
          return %0 : tensor<2x3xf32>
        }""", "a must be square in its last two dimensions"),
    ("triangular_solve_sizes", """
        func.func @main(%a: tensor<3x3xf32>, %b: tensor<4x2xf32>) -> tensor<4x2xf32> {
          %0 = "stablehlo.triangular_solve"(%a, %b) {left_side = true, lower = true, unit_diagonal = false, transpose_a = #stablehlo<transpose NO_TRANSPOSE>} : (tensor<3x3xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>  // ERR
          return %0 : tensor<4x2xf32>
        }""", "a must be square with size dim(b, -2) = 4"),
    # -- reductions ------------------------------------------------------------------------------
    ("reduce_result_shape", """
        func.func @main(%a: tensor<2x3xf32>, %z: tensor<f32>) -> tensor<3xf32> {
          %0 = stablehlo.reduce(%a init: %z) applies stablehlo.add across dimensions = [1] : (tensor<2x3xf32>, tensor<f32>) -> tensor<3xf32>  // ERR
          return %0 : tensor<3xf32>
        }""", "expected 2 (C7)"),
    ("reduce_dimension_out_of_range", """
        func.func @main(%a: tensor<2x3xf32>, %z: tensor<f32>) -> tensor<2xf32> {
          %0 = stablehlo.reduce(%a init: %z) applies stablehlo.add across dimensions = [2] : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>  // ERR
          return %0 : tensor<2xf32>
        }""", "dimension 2 is out of range [0, 2) (C4)"),
    ("reduce_body_arity", """
        func.func @main(%a: tensor<2x3xf32>, %z: tensor<f32>) -> tensor<2xf32> {
          %0 = "stablehlo.reduce"(%a, %z) <{dimensions = array<i64: 1>}> ({  // ERR
          ^bb0(%x: tensor<f32>):
            stablehlo.return %x : tensor<f32>
          }) : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>
          return %0 : tensor<2xf32>
        }""", "body must take 2 arguments, got 1 (C6)"),
    ("reduce_window_result_shape", """
        func.func @main(%a: tensor<4x6xf32>, %z: tensor<f32>) -> tensor<4x6xf32> {
          %0 = "stablehlo.reduce_window"(%a, %z) <{window_dimensions = array<i64: 2, 2>, window_strides = array<i64: 2, 2>}> ({  // ERR
          ^bb0(%x: tensor<f32>, %y: tensor<f32>):
            %m = stablehlo.maximum %x, %y : tensor<f32>
            stablehlo.return %m : tensor<f32>
          }) : (tensor<4x6xf32>, tensor<f32>) -> tensor<4x6xf32>
          return %0 : tensor<4x6xf32>
        }""", "expected 2x3 (C15)"),
    ("select_and_scatter_source_shape", """
        func.func @main(%a: tensor<4x6xf32>, %s: tensor<4x6xf32>, %z: tensor<f32>) -> tensor<4x6xf32> {
          %0 = "stablehlo.select_and_scatter"(%a, %s, %z) <{window_dimensions = array<i64: 2, 2>, window_strides = array<i64: 2, 2>}> ({  // ERR
          ^bb0(%x: tensor<f32>, %y: tensor<f32>):
            %c = stablehlo.compare GE, %x, %y : (tensor<f32>, tensor<f32>) -> tensor<i1>
            stablehlo.return %c : tensor<i1>
          }, {
          ^bb0(%x: tensor<f32>, %y: tensor<f32>):
            %m = stablehlo.add %x, %y : tensor<f32>
            stablehlo.return %m : tensor<f32>
          }) : (tensor<4x6xf32>, tensor<4x6xf32>, tensor<f32>) -> tensor<4x6xf32>
          return %0 : tensor<4x6xf32>
        }""", "source type tensor<4x6xf32> has shape 4x6, expected 2x3 (C2)"),
    ("sort_comparator_result", """
        func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
          %0 = "stablehlo.sort"(%a) <{dimension = 0 : i64}> ({  // ERR
          ^bb0(%x: tensor<f32>, %y: tensor<f32>):
            stablehlo.return %x : tensor<f32>
          }) : (tensor<4xf32>) -> tensor<4xf32>
          return %0 : tensor<4xf32>
        }""", "comparator must return tensor<i1>, returns (tensor<f32>) (C5)"),
    ("map_dimensions", """
        func.func @main(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
          %0 = "stablehlo.map"(%a) <{dimensions = array<i64: 0>}> ({  // ERR
          ^bb0(%x: tensor<f32>):
            stablehlo.return %x : tensor<f32>
          }) : (tensor<2x3xf32>) -> tensor<2x3xf32>
          return %0 : tensor<2x3xf32>
        }""", "dimensions must be [0, 1], got [0] (C3)"),
    ("batch_norm_scale_size", """
        func.func @main(%a: tensor<2x3xf32>, %s: tensor<2xf32>) -> tensor<2x3xf32> {
          %0 = "stablehlo.batch_norm_inference"(%a, %s, %s, %s, %s) {epsilon = 1.0e-3 : f32, feature_index = 1 : i64} : (tensor<2x3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<2x3xf32>  // ERR
          return %0 : tensor<2x3xf32>
        }""", "scale has size 2 but dim(operand, feature_index) = 3 (C3)"),
]


VALID = [
    ("elementwise", """
        func.func @main(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>, %p: tensor<2x3xi1>) -> tensor<2x3xf32> {
          %0 = stablehlo.add %a, %b : tensor<2x3xf32>
          %1 = stablehlo.exponential %0 : tensor<2x3xf32>
          %2 = stablehlo.compare GT, %1, %b, FLOAT : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>
          %3 = stablehlo.and %2, %p : tensor<2x3xi1>
          %4 = stablehlo.select %3, %1, %b : tensor<2x3xi1>, tensor<2x3xf32>
          %5 = stablehlo.convert %4 : (tensor<2x3xf32>) -> tensor<2x3xi32>
          %6 = stablehlo.shift_left %5, %5 : tensor<2x3xi32>
          %7 = stablehlo.convert %6 : (tensor<2x3xi32>) -> tensor<2x3xf32>
          %c = stablehlo.constant dense<0.0> : tensor<f32>
          %8 = stablehlo.clamp %c, %7, %a : (tensor<f32>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
          return %8 : tensor<2x3xf32>
        }"""),
    ("complex_parts", """
        func.func @main(%a: tensor<2xf64>) -> (tensor<2xf64>, tensor<2xf64>, tensor<2xi1>) {
          %0 = stablehlo.complex %a, %a : (tensor<2xf64>, tensor<2xf64>) -> tensor<2xcomplex<f64>>
          %1 = stablehlo.abs %0 : (tensor<2xcomplex<f64>>) -> tensor<2xf64>
          %2 = stablehlo.imag %0 : (tensor<2xcomplex<f64>>) -> tensor<2xf64>
          %3 = stablehlo.is_finite %1 : (tensor<2xf64>) -> tensor<2xi1>
          return %1, %2, %3 : tensor<2xf64>, tensor<2xf64>, tensor<2xi1>
        }"""),
    ("data_movement", """
        func.func @main(%a: tensor<3xf32>, %v: tensor<f32>, %i: tensor<i32>) -> tensor<3x2xf32> {
          %0 = stablehlo.broadcast_in_dim %a, dims = [1] : (tensor<3xf32>) -> tensor<2x3xf32>
          %1 = stablehlo.transpose %0, dims = [1, 0] : (tensor<2x3xf32>) -> tensor<3x2xf32>
          %2 = stablehlo.reshape %1 : (tensor<3x2xf32>) -> tensor<6xf32>
          %3 = stablehlo.pad %2, %v, low = [1], high = [-1], interior = [1] : (tensor<6xf32>, tensor<f32>) -> tensor<11xf32>
          %4 = stablehlo.slice %3 [0:11:2] : (tensor<11xf32>) -> tensor<6xf32>
          %5 = stablehlo.concatenate %4, %2, dim = 0 : (tensor<6xf32>, tensor<6xf32>) -> tensor<12xf32>
          %6 = stablehlo.dynamic_slice %5, %i, sizes = [6] : (tensor<12xf32>, tensor<i32>) -> tensor<6xf32>
          %7 = stablehlo.dynamic_update_slice %5, %6, %i : (tensor<12xf32>, tensor<6xf32>, tensor<i32>) -> tensor<12xf32>
          %8 = stablehlo.reverse %7, dims = [0] : tensor<12xf32>
          %9 = stablehlo.slice %8 [0:6] : (tensor<12xf32>) -> tensor<6xf32>
          %10 = stablehlo.reshape %9 : (tensor<6xf32>) -> tensor<3x2xf32>
          %11 = stablehlo.bitcast_convert %10 : (tensor<3x2xf32>) -> tensor<3x2x2xi16>
          %12 = stablehlo.bitcast_convert %11 : (tensor<3x2x2xi16>) -> tensor<3x2xf32>
          return %12 : tensor<3x2xf32>
        }"""),
    ("dynamic_dimensions", """
        func.func @main(%a: tensor<?x3xf32>, %b: tensor<2x3xf32>) -> tensor<?x3xf32> {
          %0 = "stablehlo.add"(%a, %b) : (tensor<?x3xf32>, tensor<2x3xf32>) -> tensor<?x3xf32>
          %1 = stablehlo.broadcast_in_dim %0, dims = [0, 1] : (tensor<?x3xf32>) -> tensor<2x3xf32>
          return %1 : tensor<2x3xf32>
        }"""),
    ("dot_general_batch", """
        func.func @main(%a: tensor<4x2x3xbf16>, %b: tensor<4x3x5xbf16>) -> tensor<4x2x5xf32> {
          %0 = stablehlo.dot_general %a, %b, batching_dims = [0] x [0], contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<4x2x3xbf16>, tensor<4x3x5xbf16>) -> tensor<4x2x5xf32>
          return %0 : tensor<4x2x5xf32>
        }"""),
    ("convolution_groups_and_strides", """
        func.func @main(%a: tensor<2x9x10x6xf32>, %k: tensor<4x5x3x6xf32>) -> tensor<2x3x3x6xf32> {
          %0 = stablehlo.convolution(%a, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [2, 3], pad = [[0, 0], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 2 : i64} : (tensor<2x9x10x6xf32>, tensor<4x5x3x6xf32>) -> tensor<2x3x3x6xf32>
          return %0 : tensor<2x3x3x6xf32>
        }"""),
    ("reductions", """
        func.func @main(%a: tensor<4x6xf32>, %z: tensor<f32>) -> (tensor<4xf32>, tensor<2x3xf32>) {
          %0 = stablehlo.reduce(%a init: %z) applies stablehlo.add across dimensions = [1] : (tensor<4x6xf32>, tensor<f32>) -> tensor<4xf32>
          %1 = "stablehlo.reduce_window"(%a, %z) <{window_dimensions = array<i64: 2, 2>, window_strides = array<i64: 2, 2>}> ({
          ^bb0(%x: tensor<f32>, %y: tensor<f32>):
            %m = stablehlo.maximum %x, %y : tensor<f32>
            stablehlo.return %m : tensor<f32>
          }) : (tensor<4x6xf32>, tensor<f32>) -> tensor<2x3xf32>
          return %0, %1 : tensor<4xf32>, tensor<2x3xf32>
        }"""),
    ("variadic_reduce_argmax", """
        func.func @main(%a: tensor<4x10xf32>, %i: tensor<4x10xi32>) -> tensor<4xi32> {
          %c = stablehlo.constant dense<0xFF800000> : tensor<f32>
          %c0 = stablehlo.constant dense<0> : tensor<i32>
          %0:2 = stablehlo.reduce(%a init: %c), (%i init: %c0) across dimensions = [1] : (tensor<4x10xf32>, tensor<4x10xi32>, tensor<f32>, tensor<i32>) -> (tensor<4xf32>, tensor<4xi32>)
           reducer(%x: tensor<f32>, %y: tensor<f32>) (%xi: tensor<i32>, %yi: tensor<i32>) {
            %g = stablehlo.compare GT, %x, %y, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
            %m = stablehlo.select %g, %x, %y : tensor<i1>, tensor<f32>
            %mi = stablehlo.select %g, %xi, %yi : tensor<i1>, tensor<i32>
            stablehlo.return %m, %mi : tensor<f32>, tensor<i32>
          }
          return %0#1 : tensor<4xi32>
        }"""),
    ("gather_and_scatter", """
        func.func @main(%a: tensor<3x4xf32>, %i: tensor<2x1xi32>, %u: tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<3x4xf32>) {
          %0 = "stablehlo.gather"(%a, %i) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, slice_sizes = array<i64: 1, 4>}> : (tensor<3x4xf32>, tensor<2x1xi32>) -> tensor<2x4xf32>
          %1 = "stablehlo.scatter"(%a, %i, %u) <{scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}> ({
          ^bb0(%x: tensor<f32>, %y: tensor<f32>):
            %s = stablehlo.add %x, %y : tensor<f32>
            stablehlo.return %s : tensor<f32>
          }) : (tensor<3x4xf32>, tensor<2x1xi32>, tensor<2x4xf32>) -> tensor<3x4xf32>
          return %0, %1 : tensor<2x4xf32>, tensor<3x4xf32>
        }"""),
    ("gather_with_batching_dims", """
        func.func @main(%a: tensor<2x5x3xf32>, %i: tensor<2x4x1xi32>) -> tensor<2x4x3xf32> {
          %0 = "stablehlo.gather"(%a, %i) <{dimension_numbers = #stablehlo.gather<offset_dims = [2], collapsed_slice_dims = [1], operand_batching_dims = [0], start_indices_batching_dims = [0], start_index_map = [1], index_vector_dim = 2>, slice_sizes = array<i64: 1, 1, 3>}> : (tensor<2x5x3xf32>, tensor<2x4x1xi32>) -> tensor<2x4x3xf32>
          return %0 : tensor<2x4x3xf32>
        }"""),
    ("sort_two_inputs", """
        func.func @main(%a: tensor<4xf32>, %b: tensor<4xi32>) -> tensor<4xi32> {
          %0:2 = "stablehlo.sort"(%a, %b) <{dimension = -1 : i64, is_stable = true}> ({
          ^bb0(%x: tensor<f32>, %y: tensor<f32>, %xi: tensor<i32>, %yi: tensor<i32>):
            %c = stablehlo.compare LT, %x, %y, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
            stablehlo.return %c : tensor<i1>
          }) : (tensor<4xf32>, tensor<4xi32>) -> (tensor<4xf32>, tensor<4xi32>)
          return %0#1 : tensor<4xi32>
        }"""),
    ("fft_and_linalg", """
        func.func @main(%a: tensor<3x8xf32>, %m: tensor<4x4xf32>, %b: tensor<4x2xf32>) -> (tensor<3x5xcomplex<f32>>, tensor<3x8xf32>, tensor<4x2xf32>) {
          %0 = stablehlo.fft %a, type = RFFT, length = [8] : (tensor<3x8xf32>) -> tensor<3x5xcomplex<f32>>
          %1 = stablehlo.fft %0, type = IRFFT, length = [8] : (tensor<3x5xcomplex<f32>>) -> tensor<3x8xf32>
          %2 = stablehlo.cholesky %m, lower = true : tensor<4x4xf32>
          %3 = "stablehlo.triangular_solve"(%2, %b) {left_side = true, lower = true, unit_diagonal = false, transpose_a = #stablehlo<transpose NO_TRANSPOSE>} : (tensor<4x4xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
          return %0, %1, %3 : tensor<3x5xcomplex<f32>>, tensor<3x8xf32>, tensor<4x2xf32>
        }"""),
]



def test_there_are_enough_cases():
    # Counted over both halves of the table (this module's families and test_verifier_structure's).
    every = INVALID + STRUCTURE_INVALID
    assert len(every) >= 30
    assert len({name for name, *_ in every}) == len(every)


@pytest.mark.parametrize("name,text,fragment", INVALID, ids=[c[0] for c in INVALID])
def test_invalid_program_is_rejected(name, text, fragment):
    assert_rejected_at_marked_line(text, fragment)


@pytest.mark.parametrize("name,text", VALID, ids=[c[0] for c in VALID])
def test_valid_program_passes(name, text):
    assert_verifies(text)


def test_error_message_names_op_and_constraint():
    module = parse_marked(INVALID[0][1])
    with pytest.raises(VerifyError) as info:
        verify(module)
    assert info.value.message == (
        "stablehlo.add: operands must have the same shape: tensor<2xf32> vs tensor<3xf32> (C1)"
    )


def test_verify_all_collects_every_error():
    module = parse_marked("""
        func.func @main(%a: tensor<2xf32>, %b: tensor<3xf32>) -> tensor<2xi32> {
          %0 = "stablehlo.add"(%a, %b) : (tensor<2xf32>, tensor<3xf32>) -> tensor<2xf32>
          %1 = stablehlo.reshape %a : (tensor<2xf32>) -> tensor<3xf32>
          %2 = call @nowhere(%a) : (tensor<2xf32>) -> tensor<2xf32>
          return %0 : tensor<2xf32>
        }""")
    errors = verify_all(module)
    assert [e.line for e in errors] == [2, 3, 4, 5]
    assert "stablehlo.add" in errors[0].message
    assert "stablehlo.reshape" in errors[1].message
    assert "func.call" in errors[2].message
    assert "func.return" in errors[3].message
    with pytest.raises(VerifyError) as info:
        verify(module)
    assert info.value.line == 2


def test_nested_errors_are_reported_inside_regions():
    module = parse_marked("""
        func.func @main(%a: tensor<4x6xf32>, %z: tensor<f32>) -> tensor<4xf32> {
          %0 = "stablehlo.reduce"(%a, %z) <{dimensions = array<i64: 1>}> ({
          ^bb0(%x: tensor<f32>, %y: tensor<f32>):
            %s = "stablehlo.add"(%x, %a) : (tensor<f32>, tensor<4x6xf32>) -> tensor<f32>
            stablehlo.return %x : tensor<f32>
          }) : (tensor<4x6xf32>, tensor<f32>) -> tensor<4xf32>
          return %0 : tensor<4xf32>
        }""")
    errors = verify_all(module)
    assert len(errors) == 1 and errors[0].line == 4
    assert "operands must have the same shape" in errors[0].message


def _corpus_files() -> list[Path]:
    if not SHARED.is_dir():
        pytest.skip("../shared is not present")
    files = sorted((SHARED / "conformance" / "stablehlo_testdata").rglob("*.mlir"))
    files += sorted((SHARED / "programs").glob("*.mlir"))
    if not files:
        pytest.skip("../shared holds no .mlir programs")
    return files


def test_shared_corpus_has_no_false_positives():
    failures = []
    count = 0
    for path in _corpus_files():
        for module in parse_chunks(path.read_text(), str(path)):
            count += 1
            failures += [e.render().splitlines()[0] for e in verify_all(module)]
    assert count > 0
    assert not failures, "\n".join(failures[:20])


def test_a_signature_accepted_once_does_not_pass_another_op_or_result_type():
    """_binary remembers the signatures it accepted: one differing in its op or result type is
    still checked (and refused)."""
    import hlodbg

    good = "func.func @main(%a: tensor<2xi32>) -> tensor<2xi32> {\n  %0 = stablehlo.add %a, %a : tensor<2xi32>\n  return %0 : tensor<2xi32>\n}"
    hlodbg.load(good)
    wider = ("func.func @main(%a: tensor<2xi32>) -> tensor<3xi32> {\n  %0 = stablehlo.add %a, %a : "
             "(tensor<2xi32>, tensor<2xi32>) -> tensor<3xi32>\n  return %0 : tensor<3xi32>\n}")
    with pytest.raises(VerifyError, match="result must have the operands' shape"):
        hlodbg.load(wider)
    with pytest.raises(hlodbg.HlodbgError):
        hlodbg.load(good.replace("tensor<2xi32>", "tensor<2xf32>").replace("stablehlo.add", "stablehlo.and"))
