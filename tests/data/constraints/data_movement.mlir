// Verifier constraint tables: data movement ops (see tests/test_verifier_constraints.py for the format).
// Spec: docs/spec.md of openxla/stablehlo.
// Constraints judged not statically decidable (not listed below):
// - dynamic_gather C8 and C12 (slice_sizes[collapsed_slice_dims...] <= 1, 0 <= slice_sizes <=
//   shape(operand)): slice_sizes is a run-time value.
// - dynamic_pad C3 (0 <= interior_padding) and the sizes in C4: the paddings are run-time values;
//   C4 is checked as far as it is static (the result keeps the operand's rank).
// - dynamic_reshape C2 (size(operand) = size(result)) with a dynamic result dimension, and
//   dynamic_broadcast_in_dim C5 against dynamic result dimensions: known only at run time.
// - scatter C5 (0 < size(inputs) = size(updates)): the operand list is split into inputs and
//   updates by counting, so an unequal split is a wrong operand count, reported by the generic
//   operand-count check (which names no constraint).
// Quantized-type constraints (broadcast_in_dim C6, reshape C3, transpose C4, ...) are in
// quantization.mlir.

// -----

// expect-ok
func.func @main(%x: tensor<1x3xf32>, %k: tensor<i64>) -> (tensor<2x2xf32>, tensor<3x2xf32>, tensor<i32>) {
  %0 = stablehlo.broadcast_in_dim %x, dims = [0, 1] : (tensor<1x3xf32>) -> tensor<2x3xf32>
  %1 = stablehlo.transpose %0, dims = [1, 0] : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %2 = stablehlo.reshape %1 : (tensor<3x2xf32>) -> tensor<6xf32>
  %3 = stablehlo.reverse %2, dims = [0] : tensor<6xf32>
  %4 = stablehlo.slice %3 [1:5:2] : (tensor<6xf32>) -> tensor<2xf32>
  %5 = stablehlo.concatenate %4, %4, dim = 0 : (tensor<2xf32>, tensor<2xf32>) -> tensor<4xf32>
  %cst = stablehlo.constant dense<0.0> : tensor<f32>
  %6 = stablehlo.pad %5, %cst, low = [1], high = [0], interior = [1] : (tensor<4xf32>, tensor<f32>) -> tensor<8xf32>
  %7 = stablehlo.dynamic_slice %6, %k, sizes = [4] : (tensor<8xf32>, tensor<i64>) -> tensor<4xf32>
  %8 = stablehlo.reshape %7 : (tensor<4xf32>) -> tensor<2x2xf32>
  %9 = stablehlo.dynamic_update_slice %1, %8, %k, %k : (tensor<3x2xf32>, tensor<2x2xf32>, tensor<i64>, tensor<i64>) -> tensor<3x2xf32>
  %10 = stablehlo.get_dimension_size %9, dim = 0 : (tensor<3x2xf32>) -> tensor<i32>
  return %8, %9, %10 : tensor<2x2xf32>, tensor<3x2xf32>, tensor<i32>
}

// -----

// expect-ok
func.func @main(%x: tensor<2x3x4x2xi32>, %i: tensor<2x2x3x2xi64>, %u: tensor<2x2x3x2x2xi32>) -> (tensor<2x2x3x2x2xi32>, tensor<2x3x4x2xi32>) {
  %0 = "stablehlo.gather"(%x, %i) {dimension_numbers = #stablehlo.gather<offset_dims = [3, 4], collapsed_slice_dims = [1], operand_batching_dims = [0], start_indices_batching_dims = [1], start_index_map = [2, 1], index_vector_dim = 3>, indices_are_sorted = false, slice_sizes = array<i64: 1, 1, 2, 2>} : (tensor<2x3x4x2xi32>, tensor<2x2x3x2xi64>) -> tensor<2x2x3x2x2xi32>
  %1 = "stablehlo.scatter"(%x, %i, %u) ({
  ^bb0(%a: tensor<i32>, %b: tensor<i32>):
    %2 = stablehlo.add %a, %b : tensor<i32>
    stablehlo.return %2 : tensor<i32>
  }) {indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [3, 4], inserted_window_dims = [1], input_batching_dims = [0], scatter_indices_batching_dims = [1], scatter_dims_to_operand_dims = [2, 1], index_vector_dim = 3>, unique_indices = false} : (tensor<2x3x4x2xi32>, tensor<2x2x3x2xi64>, tensor<2x2x3x2x2xi32>) -> tensor<2x3x4x2xi32>
  return %0, %1 : tensor<2x2x3x2x2xi32>, tensor<2x3x4x2xi32>
}

// -----

// expect-ok
func.func @main(%x: tensor<1x3xi64>, %s: tensor<3xi64>, %z: tensor<i64>, %p: tensor<2xi64>) -> (tensor<?x3x?xi64>, tensor<?x?xi64>, tensor<?x?xi64>) {
  %0 = stablehlo.dynamic_broadcast_in_dim %x, %s, dims = [2, 1] : (tensor<1x3xi64>, tensor<3xi64>) -> tensor<?x3x?xi64>
  %1 = stablehlo.dynamic_reshape %x, %p : (tensor<1x3xi64>, tensor<2xi64>) -> tensor<?x?xi64>
  %2 = stablehlo.dynamic_pad %x, %z, %p, %p, %p : (tensor<1x3xi64>, tensor<i64>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<?x?xi64>
  return %0, %1, %2 : tensor<?x3x?xi64>, tensor<?x?xi64>, tensor<?x?xi64>
}

// -----

// expect-ok
// A trailing comma inside #stablehlo.gather<...> and #stablehlo.scatter<...> parses (MLIR allows
// it); the printed form drops it and parses back the same.
func.func @main(%x: tensor<3x4x2xf32>, %i: tensor<2x3x2xi64>, %u: tensor<2x3x2x2xf32>) -> (tensor<2x3x2x2xf32>, tensor<3x4x2xf32>) {
  %0 = "stablehlo.gather"(%x, %i) {dimension_numbers = #stablehlo.gather<offset_dims = [2, 3], collapsed_slice_dims = [0], start_index_map = [1, 0], index_vector_dim = 2,>, slice_sizes = array<i64: 1, 2, 2>} : (tensor<3x4x2xf32>, tensor<2x3x2xi64>) -> tensor<2x3x2x2xf32>
  %1 = "stablehlo.scatter"(%x, %i, %u) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    stablehlo.return %b : tensor<f32>
  }) {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [2, 3], inserted_window_dims = [0], scatter_dims_to_operand_dims = [1, 0], index_vector_dim = 2,>} : (tensor<3x4x2xf32>, tensor<2x3x2xi64>, tensor<2x3x2x2xf32>) -> tensor<3x4x2xf32>
  return %0, %1 : tensor<2x3x2x2xf32>, tensor<3x4x2xf32>
}

// -----

// expect-error: stablehlo.broadcast_in_dim C1
// C1: element_type(result) = element_type(operand).
func.func @main(%x: tensor<3xf32>) -> tensor<2x3xf64> {
  %0 = stablehlo.broadcast_in_dim %x, dims = [1] : (tensor<3xf32>) -> tensor<2x3xf64>
  return %0 : tensor<2x3xf64>
}

// -----

// expect-error: stablehlo.broadcast_in_dim C2
// C2: size(broadcast_dimensions) = rank(operand).
func.func @main(%x: tensor<3xf32>) -> tensor<2x3xf32> {
  %0 = stablehlo.broadcast_in_dim %x, dims = [0, 1] : (tensor<3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// expect-error: stablehlo.broadcast_in_dim C3
// C3: 0 <= broadcast_dimensions < rank(result).
func.func @main(%x: tensor<3xf32>) -> tensor<2x3xf32> {
  %0 = stablehlo.broadcast_in_dim %x, dims = [2] : (tensor<3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// expect-error: stablehlo.broadcast_in_dim C4
// C4: is_unique(broadcast_dimensions).
func.func @main(%x: tensor<1x3xf32>) -> tensor<3x3xf32> {
  %0 = stablehlo.broadcast_in_dim %x, dims = [1, 1] : (tensor<1x3xf32>) -> tensor<3x3xf32>
  return %0 : tensor<3x3xf32>
}

// -----

// expect-error: stablehlo.broadcast_in_dim C5
// C5: dim(operand, 0) = 3 is neither 1 nor dim(result, 0) = 2.
func.func @main(%x: tensor<3xf32>) -> tensor<2x3xf32> {
  %0 = stablehlo.broadcast_in_dim %x, dims = [0] : (tensor<3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// expect-error: stablehlo.dynamic_broadcast_in_dim C1
// C1: element_type(result) = element_type(operand).
func.func @main(%x: tensor<3xf32>, %s: tensor<2xi64>) -> tensor<2x3xi32> {
  %0 = stablehlo.dynamic_broadcast_in_dim %x, %s, dims = [1] : (tensor<3xf32>, tensor<2xi64>) -> tensor<2x3xi32>
  return %0 : tensor<2x3xi32>
}

// -----

// expect-error: stablehlo.dynamic_broadcast_in_dim C2
// C2: size(broadcast_dimensions) = rank(operand).
func.func @main(%x: tensor<3xf32>, %s: tensor<2xi64>) -> tensor<2x3xf32> {
  %0 = stablehlo.dynamic_broadcast_in_dim %x, %s, dims = [] : (tensor<3xf32>, tensor<2xi64>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// expect-error: stablehlo.dynamic_broadcast_in_dim C3
// C3: 0 <= broadcast_dimensions < rank(result).
func.func @main(%x: tensor<3xf32>, %s: tensor<2xi64>) -> tensor<?x?xf32> {
  %0 = stablehlo.dynamic_broadcast_in_dim %x, %s, dims = [-1] : (tensor<3xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

// expect-error: stablehlo.dynamic_broadcast_in_dim C4
// C4: is_unique(broadcast_dimensions).
func.func @main(%x: tensor<1x3xf32>, %s: tensor<2xi64>) -> tensor<?x?xf32> {
  %0 = stablehlo.dynamic_broadcast_in_dim %x, %s, dims = [0, 0] : (tensor<1x3xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

// expect-error: stablehlo.dynamic_broadcast_in_dim C5
// C5: dim(operand, 0) = 3 is neither 1 nor the static dim(result, 1) = 4.
func.func @main(%x: tensor<3xf32>, %s: tensor<2xi64>) -> tensor<?x4xf32> {
  %0 = stablehlo.dynamic_broadcast_in_dim %x, %s, dims = [1] : (tensor<3xf32>, tensor<2xi64>) -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

// expect-error: stablehlo.dynamic_broadcast_in_dim C7
// C7: size(output_dimensions) = rank(result).
func.func @main(%x: tensor<3xf32>, %s: tensor<3xi64>) -> tensor<?x3xf32> {
  %0 = stablehlo.dynamic_broadcast_in_dim %x, %s, dims = [1] : (tensor<3xf32>, tensor<3xi64>) -> tensor<?x3xf32>
  return %0 : tensor<?x3xf32>
}

// -----

// expect-error: stablehlo.dynamic_broadcast_in_dim C8
// C8: known_expanding_dimensions and known_nonexpanding_dimensions are unique together.
func.func @main(%x: tensor<1xf32>, %s: tensor<2xi64>) -> tensor<?x?xf32> {
  %0 = "stablehlo.dynamic_broadcast_in_dim"(%x, %s) {broadcast_dimensions = array<i64: 1>, known_expanding_dimensions = array<i64: 0>, known_nonexpanding_dimensions = array<i64: 0>} : (tensor<1xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

// expect-error: stablehlo.dynamic_broadcast_in_dim C9
// C9: 0 <= known_expanding_dimensions < rank(operand).
func.func @main(%x: tensor<1xf32>, %s: tensor<2xi64>) -> tensor<?x?xf32> {
  %0 = "stablehlo.dynamic_broadcast_in_dim"(%x, %s) {broadcast_dimensions = array<i64: 1>, known_expanding_dimensions = array<i64: 1>} : (tensor<1xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

// expect-error: stablehlo.dynamic_broadcast_in_dim C10
// C10: 0 <= known_nonexpanding_dimensions < rank(operand).
func.func @main(%x: tensor<1xf32>, %s: tensor<2xi64>) -> tensor<?x?xf32> {
  %0 = "stablehlo.dynamic_broadcast_in_dim"(%x, %s) {broadcast_dimensions = array<i64: 1>, known_nonexpanding_dimensions = array<i64: 2>} : (tensor<1xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

// expect-error: stablehlo.transpose C1
// C1: element_type(result) = element_type(operand).
func.func @main(%x: tensor<2x3xf32>) -> tensor<3x2xf16> {
  %0 = stablehlo.transpose %x, dims = [1, 0] : (tensor<2x3xf32>) -> tensor<3x2xf16>
  return %0 : tensor<3x2xf16>
}

// -----

// expect-error: stablehlo.transpose C2
// C2: permutation is a permutation of range(rank(operand)).
func.func @main(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %0 = stablehlo.transpose %x, dims = [1, 1] : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

// expect-error: stablehlo.transpose C3
// C3: shape(result) = dim(operand, permutation...).
func.func @main(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = stablehlo.transpose %x, dims = [1, 0] : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// expect-error: stablehlo.reshape C1
// C1: element_type(result) = element_type(operand).
func.func @main(%x: tensor<2x3xf32>) -> tensor<6xi32> {
  %0 = stablehlo.reshape %x : (tensor<2x3xf32>) -> tensor<6xi32>
  return %0 : tensor<6xi32>
}

// -----

// expect-error: stablehlo.reshape C2
// C2: size(operand) = size(result).
func.func @main(%x: tensor<2x3xf32>) -> tensor<5xf32> {
  %0 = stablehlo.reshape %x : (tensor<2x3xf32>) -> tensor<5xf32>
  return %0 : tensor<5xf32>
}

// -----

// expect-error: stablehlo.dynamic_reshape C1
// C1: element_type(result) = element_type(operand).
func.func @main(%x: tensor<2x3xf32>, %s: tensor<1xi64>) -> tensor<?xf64> {
  %0 = stablehlo.dynamic_reshape %x, %s : (tensor<2x3xf32>, tensor<1xi64>) -> tensor<?xf64>
  return %0 : tensor<?xf64>
}

// -----

// expect-error: stablehlo.dynamic_reshape C2
// C2: size(operand) = size(result), decidable here as both shapes are static.
func.func @main(%x: tensor<2x3xf32>, %s: tensor<1xi64>) -> tensor<7xf32> {
  %0 = stablehlo.dynamic_reshape %x, %s : (tensor<2x3xf32>, tensor<1xi64>) -> tensor<7xf32>
  return %0 : tensor<7xf32>
}

// -----

// expect-error: stablehlo.dynamic_reshape C4
// C4: size(output_shape) = rank(result).
func.func @main(%x: tensor<2x3xf32>, %s: tensor<2xi64>) -> tensor<?xf32> {
  %0 = stablehlo.dynamic_reshape %x, %s : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

// expect-error: stablehlo.reverse C1
// C1: type(operand) = type(result).
func.func @main(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %0 = "stablehlo.reverse"(%x) {dimensions = array<i64: 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

// expect-error: stablehlo.reverse C2
// C2: is_unique(dimensions).
func.func @main(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = stablehlo.reverse %x, dims = [1, 1] : tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// expect-error: stablehlo.reverse C3
// C3: 0 <= dimensions < rank(result).
func.func @main(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = stablehlo.reverse %x, dims = [2] : tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// expect-error: stablehlo.slice C1
// C1: element_type(operand) = element_type(result).
func.func @main(%x: tensor<6xf32>) -> tensor<2xi32> {
  %0 = stablehlo.slice %x [0:2] : (tensor<6xf32>) -> tensor<2xi32>
  return %0 : tensor<2xi32>
}

// -----

// expect-error: stablehlo.slice C2
// C2: size(start_indices) = size(limit_indices) = size(strides) = rank(operand).
func.func @main(%x: tensor<6xf32>) -> tensor<2xf32> {
  %0 = "stablehlo.slice"(%x) {start_indices = array<i64: 0, 0>, limit_indices = array<i64: 2, 2>, strides = array<i64: 1, 1>} : (tensor<6xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// expect-error: stablehlo.slice C3
// C3: 0 <= start_indices <= limit_indices <= shape(operand); the limit 7 is past the end.
func.func @main(%x: tensor<6xf32>) -> tensor<2xf32> {
  %0 = stablehlo.slice %x [5:7] : (tensor<6xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// expect-error: stablehlo.slice C4
// C4: 0 < strides.
func.func @main(%x: tensor<6xf32>) -> tensor<2xf32> {
  %0 = "stablehlo.slice"(%x) {start_indices = array<i64: 0>, limit_indices = array<i64: 2>, strides = array<i64: 0>} : (tensor<6xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// expect-error: stablehlo.slice C5
// C5: shape(result) = ceil((limit_indices - start_indices) / strides) = [3].
func.func @main(%x: tensor<6xf32>) -> tensor<2xf32> {
  %0 = stablehlo.slice %x [0:6:2] : (tensor<6xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// expect-error: stablehlo.dynamic_slice C1
// C1: element_type(operand) = element_type(result).
func.func @main(%x: tensor<6xf32>, %k: tensor<i64>) -> tensor<2xf64> {
  %0 = stablehlo.dynamic_slice %x, %k, sizes = [2] : (tensor<6xf32>, tensor<i64>) -> tensor<2xf64>
  return %0 : tensor<2xf64>
}

// -----

// expect-error: stablehlo.dynamic_slice C2
// C2: size(start_indices) = size(slice_sizes) = rank(operand).
func.func @main(%x: tensor<6xf32>, %k: tensor<i64>) -> tensor<2xf32> {
  %0 = stablehlo.dynamic_slice %x, %k, %k, sizes = [2] : (tensor<6xf32>, tensor<i64>, tensor<i64>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// expect-error: stablehlo.dynamic_slice C3
// C3: same(type(start_indices...)).
func.func @main(%x: tensor<6x6xf32>, %k: tensor<i64>, %j: tensor<i32>) -> tensor<2x2xf32> {
  %0 = stablehlo.dynamic_slice %x, %k, %j, sizes = [2, 2] : (tensor<6x6xf32>, tensor<i64>, tensor<i32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

// expect-error: stablehlo.dynamic_slice C4
// C4: 0 <= slice_sizes <= shape(operand).
func.func @main(%x: tensor<6xf32>, %k: tensor<i64>) -> tensor<7xf32> {
  %0 = stablehlo.dynamic_slice %x, %k, sizes = [7] : (tensor<6xf32>, tensor<i64>) -> tensor<7xf32>
  return %0 : tensor<7xf32>
}

// -----

// expect-error: stablehlo.dynamic_slice C5
// C5: shape(result) = slice_sizes.
func.func @main(%x: tensor<6xf32>, %k: tensor<i64>) -> tensor<3xf32> {
  %0 = stablehlo.dynamic_slice %x, %k, sizes = [2] : (tensor<6xf32>, tensor<i64>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// expect-error: stablehlo.dynamic_update_slice C1
// C1: type(operand) = type(result).
func.func @main(%x: tensor<6xf32>, %u: tensor<2xf32>, %k: tensor<i64>) -> tensor<7xf32> {
  %0 = stablehlo.dynamic_update_slice %x, %u, %k : (tensor<6xf32>, tensor<2xf32>, tensor<i64>) -> tensor<7xf32>
  return %0 : tensor<7xf32>
}

// -----

// expect-error: stablehlo.dynamic_update_slice C2
// C2: element_type(update) = element_type(operand).
func.func @main(%x: tensor<6xf32>, %u: tensor<2xi32>, %k: tensor<i64>) -> tensor<6xf32> {
  %0 = stablehlo.dynamic_update_slice %x, %u, %k : (tensor<6xf32>, tensor<2xi32>, tensor<i64>) -> tensor<6xf32>
  return %0 : tensor<6xf32>
}

// -----

// expect-error: stablehlo.dynamic_update_slice C3
// C3: rank(update) = rank(operand).
func.func @main(%x: tensor<6xf32>, %u: tensor<2x1xf32>, %k: tensor<i64>) -> tensor<6xf32> {
  %0 = stablehlo.dynamic_update_slice %x, %u, %k : (tensor<6xf32>, tensor<2x1xf32>, tensor<i64>) -> tensor<6xf32>
  return %0 : tensor<6xf32>
}

// -----

// expect-error: stablehlo.dynamic_update_slice C4
// C4: size(start_indices) = rank(operand).
func.func @main(%x: tensor<6xf32>, %u: tensor<2xf32>, %k: tensor<i64>) -> tensor<6xf32> {
  %0 = stablehlo.dynamic_update_slice %x, %u, %k, %k : (tensor<6xf32>, tensor<2xf32>, tensor<i64>, tensor<i64>) -> tensor<6xf32>
  return %0 : tensor<6xf32>
}

// -----

// expect-error: stablehlo.dynamic_update_slice C5
// C5: same(type(start_indices...)).
func.func @main(%x: tensor<6x6xf32>, %u: tensor<2x2xf32>, %k: tensor<i64>, %j: tensor<i32>) -> tensor<6x6xf32> {
  %0 = stablehlo.dynamic_update_slice %x, %u, %k, %j : (tensor<6x6xf32>, tensor<2x2xf32>, tensor<i64>, tensor<i32>) -> tensor<6x6xf32>
  return %0 : tensor<6x6xf32>
}

// -----

// expect-error: stablehlo.dynamic_update_slice C6
// C6: 0 <= shape(update) <= shape(operand).
func.func @main(%x: tensor<6xf32>, %u: tensor<8xf32>, %k: tensor<i64>) -> tensor<6xf32> {
  %0 = stablehlo.dynamic_update_slice %x, %u, %k : (tensor<6xf32>, tensor<8xf32>, tensor<i64>) -> tensor<6xf32>
  return %0 : tensor<6xf32>
}

// -----

// expect-error: stablehlo.pad C1
// C1: element_type(operand) = element_type(padding_value) = element_type(result).
func.func @main(%x: tensor<4xf32>, %v: tensor<f64>) -> tensor<5xf32> {
  %0 = stablehlo.pad %x, %v, low = [1], high = [0], interior = [0] : (tensor<4xf32>, tensor<f64>) -> tensor<5xf32>
  return %0 : tensor<5xf32>
}

// -----

// expect-error: stablehlo.pad C2
// C2: size(edge_padding_low) = size(edge_padding_high) = size(interior_padding) = rank(operand).
func.func @main(%x: tensor<4xf32>, %v: tensor<f32>) -> tensor<5xf32> {
  %0 = "stablehlo.pad"(%x, %v) {edge_padding_low = array<i64: 1, 0>, edge_padding_high = array<i64: 0>, interior_padding = array<i64: 0>} : (tensor<4xf32>, tensor<f32>) -> tensor<5xf32>
  return %0 : tensor<5xf32>
}

// -----

// expect-error: stablehlo.pad C3
// C3: 0 <= interior_padding.
func.func @main(%x: tensor<4xf32>, %v: tensor<f32>) -> tensor<1xf32> {
  %0 = stablehlo.pad %x, %v, low = [0], high = [0], interior = [-1] : (tensor<4xf32>, tensor<f32>) -> tensor<1xf32>
  return %0 : tensor<1xf32>
}

// -----

// expect-error: stablehlo.pad C4
// C4: shape(result) = 4 + 1 + 3 * 1 + 0 = 8.
func.func @main(%x: tensor<4xf32>, %v: tensor<f32>) -> tensor<9xf32> {
  %0 = stablehlo.pad %x, %v, low = [1], high = [0], interior = [1] : (tensor<4xf32>, tensor<f32>) -> tensor<9xf32>
  return %0 : tensor<9xf32>
}

// -----

// expect-error: stablehlo.pad I2
// I2: padding_value is a 0-dimensional tensor.
func.func @main(%x: tensor<4xf32>, %v: tensor<1xf32>) -> tensor<4xf32> {
  %0 = "stablehlo.pad"(%x, %v) {edge_padding_low = array<i64: 0>, edge_padding_high = array<i64: 0>, interior_padding = array<i64: 0>} : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// expect-error: stablehlo.dynamic_pad C1
// C1: element_type(operand) = element_type(padding_value) = element_type(result).
func.func @main(%x: tensor<4xf32>, %v: tensor<i32>, %p: tensor<1xi64>) -> tensor<?xf32> {
  %0 = stablehlo.dynamic_pad %x, %v, %p, %p, %p : (tensor<4xf32>, tensor<i32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

// expect-error: stablehlo.dynamic_pad C2
// C2: size(edge_padding_low) = ... = rank(operand).
func.func @main(%x: tensor<4xf32>, %v: tensor<f32>, %p: tensor<2xi64>) -> tensor<?xf32> {
  %0 = stablehlo.dynamic_pad %x, %v, %p, %p, %p : (tensor<4xf32>, tensor<f32>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

// expect-error: stablehlo.dynamic_pad C4
// C4: shape(result) has one entry per operand dimension (the sizes themselves are run-time values).
func.func @main(%x: tensor<4xf32>, %v: tensor<f32>, %p: tensor<1xi64>) -> tensor<?x?xf32> {
  %0 = stablehlo.dynamic_pad %x, %v, %p, %p, %p : (tensor<4xf32>, tensor<f32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

// expect-error: stablehlo.concatenate C1
// C1: same(element_type(inputs...)).
func.func @main(%a: tensor<2xf32>, %b: tensor<2xf64>) -> tensor<4xf32> {
  %0 = stablehlo.concatenate %a, %b, dim = 0 : (tensor<2xf32>, tensor<2xf64>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// expect-error: stablehlo.concatenate C2
// C2: same(shape(inputs...)) except for dim(inputs..., dimension).
func.func @main(%a: tensor<2x3xf32>, %b: tensor<2x4xf32>) -> tensor<4x3xf32> {
  %0 = stablehlo.concatenate %a, %b, dim = 0 : (tensor<2x3xf32>, tensor<2x4xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

// expect-error: stablehlo.concatenate C3
// C3: 0 < size(inputs).
func.func @main() -> tensor<0xf32> {
  %0 = "stablehlo.concatenate"() {dimension = 0 : i64} : () -> tensor<0xf32>
  return %0 : tensor<0xf32>
}

// -----

// expect-error: stablehlo.concatenate C4
// C4: 0 <= dimension < rank(inputs[0]).
func.func @main(%a: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<4xf32> {
  %0 = stablehlo.concatenate %a, %b, dim = 1 : (tensor<2xf32>, tensor<2xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// expect-error: stablehlo.concatenate C5
// C5: element_type(result) = element_type(inputs[0]).
func.func @main(%a: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<4xi32> {
  %0 = stablehlo.concatenate %a, %b, dim = 0 : (tensor<2xf32>, tensor<2xf32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// expect-error: stablehlo.concatenate C6
// C6: dim(result, 0) = 2 + 3.
func.func @main(%a: tensor<2xf32>, %b: tensor<3xf32>) -> tensor<4xf32> {
  %0 = stablehlo.concatenate %a, %b, dim = 0 : (tensor<2xf32>, tensor<3xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// expect-error: stablehlo.bitcast_convert C1
// C1: bitcasting f32 to the narrower i8 adds a last dimension of 32 / 8 = 4.
func.func @main(%x: tensor<2xf32>) -> tensor<2x2xi8> {
  %0 = stablehlo.bitcast_convert %x : (tensor<2xf32>) -> tensor<2x2xi8>
  return %0 : tensor<2x2xi8>
}

// -----

// expect-error: stablehlo.bitcast_convert C2
// C2: no conversion between complex and non-complex types.
func.func @main(%x: tensor<2xcomplex<f32>>) -> tensor<2xf64> {
  %0 = stablehlo.bitcast_convert %x : (tensor<2xcomplex<f32>>) -> tensor<2xf64>
  return %0 : tensor<2xf64>
}

// -----

// expect-error: stablehlo.get_dimension_size C1
// C1: 0 <= dimension < rank(operand).
func.func @main(%x: tensor<2x3xf32>) -> tensor<i32> {
  %0 = stablehlo.get_dimension_size %x, dim = 2 : (tensor<2x3xf32>) -> tensor<i32>
  return %0 : tensor<i32>
}

// -----

// expect-error: stablehlo.get_dimension_size O1
// O1: the result is a 0-dimensional tensor of type si32.
func.func @main(%x: tensor<2x3xf32>) -> tensor<i64> {
  %0 = "stablehlo.get_dimension_size"(%x) {dimension = 0 : i64} : (tensor<2x3xf32>) -> tensor<i64>
  return %0 : tensor<i64>
}

// -----

// expect-error: stablehlo.tuple C1
// C1: result has type tuple<E0, ..., EN-1> where Ei = type(val[i]).
func.func @main(%a: tensor<2xf32>, %b: tensor<i32>) -> tuple<tensor<2xf32>, tensor<i64>> {
  %0 = "stablehlo.tuple"(%a, %b) : (tensor<2xf32>, tensor<i32>) -> tuple<tensor<2xf32>, tensor<i64>>
  return %0 : tuple<tensor<2xf32>, tensor<i64>>
}

// -----

// expect-error: stablehlo.get_tuple_element C1
// C1: 0 <= index < size(operand).
func.func @main(%t: tuple<tensor<2xf32>, tensor<i32>>) -> tensor<i32> {
  %0 = stablehlo.get_tuple_element %t[2] : (tuple<tensor<2xf32>, tensor<i32>>) -> tensor<i32>
  return %0 : tensor<i32>
}

// -----

// expect-error: stablehlo.get_tuple_element C2
// C2: type(result) = tuple_element_types(operand)[index].
func.func @main(%t: tuple<tensor<2xf32>, tensor<i32>>) -> tensor<i32> {
  %0 = stablehlo.get_tuple_element %t[0] : (tuple<tensor<2xf32>, tensor<i32>>) -> tensor<i32>
  return %0 : tensor<i32>
}

// -----

// expect-error: stablehlo.dynamic_gather C1
// C1: rank(operand) = size(offset_dims) + size(collapsed_slice_dims).
func.func @main(%x: tensor<3x4x2xf32>, %i: tensor<2x3x2xi64>, %s: tensor<3xi64>) -> tensor<2x3x?x?xf32> {
  %0 = "stablehlo.dynamic_gather"(%x, %i, %s) {dimension_numbers = #stablehlo.gather<offset_dims = [2], collapsed_slice_dims = [0], start_index_map = [1, 0], index_vector_dim = 2>} : (tensor<3x4x2xf32>, tensor<2x3x2xi64>, tensor<3xi64>) -> tensor<2x3x?x?xf32>
  return %0 : tensor<2x3x?x?xf32>
}

// -----

// expect-error: stablehlo.dynamic_gather C3
// C3: size(start_index_map) = dim(start_indices, index_vector_dim).
func.func @main(%x: tensor<3x4x2xf32>, %i: tensor<2x3x2xi64>, %s: tensor<3xi64>) -> tensor<2x3x?x?xf32> {
  %0 = "stablehlo.dynamic_gather"(%x, %i, %s) {dimension_numbers = #stablehlo.gather<offset_dims = [2, 3], collapsed_slice_dims = [0], start_index_map = [1], index_vector_dim = 2>} : (tensor<3x4x2xf32>, tensor<2x3x2xi64>, tensor<3xi64>) -> tensor<2x3x?x?xf32>
  return %0 : tensor<2x3x?x?xf32>
}

// -----

// expect-error: stablehlo.dynamic_gather C6
// C6: collapsed_slice_dims is sorted (gather's C7, renumbered).
func.func @main(%x: tensor<3x4x2xf32>, %i: tensor<2x3x2xi64>, %s: tensor<3xi64>) -> tensor<2x3x?xf32> {
  %0 = "stablehlo.dynamic_gather"(%x, %i, %s) {dimension_numbers = #stablehlo.gather<offset_dims = [2], collapsed_slice_dims = [1, 0], start_index_map = [1, 0], index_vector_dim = 2>} : (tensor<3x4x2xf32>, tensor<2x3x2xi64>, tensor<3xi64>) -> tensor<2x3x?xf32>
  return %0 : tensor<2x3x?xf32>
}

// -----

// expect-error: stablehlo.dynamic_gather C10
// C10: 0 <= start_index_map < rank(operand).
func.func @main(%x: tensor<3x4x2xf32>, %i: tensor<2x3x2xi64>, %s: tensor<3xi64>) -> tensor<2x3x?x?xf32> {
  %0 = "stablehlo.dynamic_gather"(%x, %i, %s) {dimension_numbers = #stablehlo.gather<offset_dims = [2, 3], collapsed_slice_dims = [0], start_index_map = [1, 5], index_vector_dim = 2>} : (tensor<3x4x2xf32>, tensor<2x3x2xi64>, tensor<3xi64>) -> tensor<2x3x?x?xf32>
  return %0 : tensor<2x3x?x?xf32>
}

// -----

// expect-error: stablehlo.dynamic_gather C11
// C11: size(slice_sizes) = rank(operand).
func.func @main(%x: tensor<3x4x2xf32>, %i: tensor<2x3x2xi64>, %s: tensor<2xi64>) -> tensor<2x3x?x?xf32> {
  %0 = "stablehlo.dynamic_gather"(%x, %i, %s) {dimension_numbers = #stablehlo.gather<offset_dims = [2, 3], collapsed_slice_dims = [0], start_index_map = [1, 0], index_vector_dim = 2>} : (tensor<3x4x2xf32>, tensor<2x3x2xi64>, tensor<2xi64>) -> tensor<2x3x?x?xf32>
  return %0 : tensor<2x3x?x?xf32>
}

// -----

// expect-error: stablehlo.dynamic_gather C13
// C13: the result type is inferred: the batch dimensions are 2x3 and two offset dimensions follow.
func.func @main(%x: tensor<3x4x2xf32>, %i: tensor<2x3x2xi64>, %s: tensor<3xi64>) -> tensor<2x5x?x?xf32> {
  %0 = "stablehlo.dynamic_gather"(%x, %i, %s) {dimension_numbers = #stablehlo.gather<offset_dims = [2, 3], collapsed_slice_dims = [0], start_index_map = [1, 0], index_vector_dim = 2>} : (tensor<3x4x2xf32>, tensor<2x3x2xi64>, tensor<3xi64>) -> tensor<2x5x?x?xf32>
  return %0 : tensor<2x5x?x?xf32>
}

// -----

// expect-error: stablehlo.dynamic_gather C14
// C14: element_type(operand) = element_type(result).
func.func @main(%x: tensor<3x4x2xf32>, %i: tensor<2x3x2xi64>, %s: tensor<3xi64>) -> tensor<2x3x?x?xi32> {
  %0 = "stablehlo.dynamic_gather"(%x, %i, %s) {dimension_numbers = #stablehlo.gather<offset_dims = [2, 3], collapsed_slice_dims = [0], start_index_map = [1, 0], index_vector_dim = 2>} : (tensor<3x4x2xf32>, tensor<2x3x2xi64>, tensor<3xi64>) -> tensor<2x3x?x?xi32>
  return %0 : tensor<2x3x?x?xi32>
}

// -----

// expect-error: stablehlo.gather C1
// C1: rank(operand) = size(offset_dims) + size(collapsed_slice_dims) + size(operand_batching_dims).
func.func @main(%x: tensor<3x4x2xf32>, %i: tensor<2x3x2xi64>) -> tensor<2x3x2x2xf32> {
  %0 = "stablehlo.gather"(%x, %i) {dimension_numbers = #stablehlo.gather<offset_dims = [2], collapsed_slice_dims = [0], start_index_map = [1, 0], index_vector_dim = 2>, slice_sizes = array<i64: 1, 2, 2>} : (tensor<3x4x2xf32>, tensor<2x3x2xi64>) -> tensor<2x3x2x2xf32>
  return %0 : tensor<2x3x2x2xf32>
}

// -----

// expect-error: stablehlo.gather C2
// C2: 0 <= index_vector_dim <= rank(start_indices).
func.func @main(%x: tensor<3x4x2xf32>, %i: tensor<2x3x2xi64>) -> tensor<2x3x2x2xf32> {
  %0 = "stablehlo.gather"(%x, %i) {dimension_numbers = #stablehlo.gather<offset_dims = [2, 3], collapsed_slice_dims = [0], start_index_map = [1, 0], index_vector_dim = 4>, slice_sizes = array<i64: 1, 2, 2>} : (tensor<3x4x2xf32>, tensor<2x3x2xi64>) -> tensor<2x3x2x2xf32>
  return %0 : tensor<2x3x2x2xf32>
}

// -----

// expect-error: stablehlo.gather C3
// C3: size(start_index_map) = dim(start_indices, index_vector_dim).
func.func @main(%x: tensor<3x4x2xf32>, %i: tensor<2x3x2xi64>) -> tensor<2x3x2x2xf32> {
  %0 = "stablehlo.gather"(%x, %i) {dimension_numbers = #stablehlo.gather<offset_dims = [2, 3], collapsed_slice_dims = [0], start_index_map = [1], index_vector_dim = 2>, slice_sizes = array<i64: 1, 2, 2>} : (tensor<3x4x2xf32>, tensor<2x3x2xi64>) -> tensor<2x3x2x2xf32>
  return %0 : tensor<2x3x2x2xf32>
}

// -----

// expect-error: stablehlo.gather C4
// C4: offset_dims is sorted.
func.func @main(%x: tensor<3x4x2xf32>, %i: tensor<2x3x2xi64>) -> tensor<2x3x2x2xf32> {
  %0 = "stablehlo.gather"(%x, %i) {dimension_numbers = #stablehlo.gather<offset_dims = [3, 2], collapsed_slice_dims = [0], start_index_map = [1, 0], index_vector_dim = 2>, slice_sizes = array<i64: 1, 2, 2>} : (tensor<3x4x2xf32>, tensor<2x3x2xi64>) -> tensor<2x3x2x2xf32>
  return %0 : tensor<2x3x2x2xf32>
}

// -----

// expect-error: stablehlo.gather C5
// C5: 0 <= offset_dims < rank(result); the result has rank 4.
func.func @main(%x: tensor<3x4x2xf32>, %i: tensor<2x3x2xi64>) -> tensor<2x3x2x2xf32> {
  %0 = "stablehlo.gather"(%x, %i) {dimension_numbers = #stablehlo.gather<offset_dims = [2, 4], collapsed_slice_dims = [0], start_index_map = [1, 0], index_vector_dim = 2>, slice_sizes = array<i64: 1, 2, 2>} : (tensor<3x4x2xf32>, tensor<2x3x2xi64>) -> tensor<2x3x2x2xf32>
  return %0 : tensor<2x3x2x2xf32>
}

// -----

// expect-error: stablehlo.gather C6
// C6: collapsed_slice_dims and operand_batching_dims are unique together.
func.func @main(%x: tensor<2x3x4x2xf32>, %i: tensor<2x2x3x2xi64>) -> tensor<2x2x3x2x2xf32> {
  %0 = "stablehlo.gather"(%x, %i) {dimension_numbers = #stablehlo.gather<offset_dims = [3, 4], collapsed_slice_dims = [1], operand_batching_dims = [1], start_indices_batching_dims = [1], start_index_map = [2, 1], index_vector_dim = 3>, slice_sizes = array<i64: 1, 1, 2, 2>} : (tensor<2x3x4x2xf32>, tensor<2x2x3x2xi64>) -> tensor<2x2x3x2x2xf32>
  return %0 : tensor<2x2x3x2x2xf32>
}

// -----

// expect-error: stablehlo.gather C7
// C7: collapsed_slice_dims is sorted.
func.func @main(%x: tensor<3x4x2xf32>, %i: tensor<2x3x2xi64>) -> tensor<2x3x2xf32> {
  %0 = "stablehlo.gather"(%x, %i) {dimension_numbers = #stablehlo.gather<offset_dims = [2], collapsed_slice_dims = [1, 0], start_index_map = [1, 0], index_vector_dim = 2>, slice_sizes = array<i64: 1, 1, 2>} : (tensor<3x4x2xf32>, tensor<2x3x2xi64>) -> tensor<2x3x2xf32>
  return %0 : tensor<2x3x2xf32>
}

// -----

// expect-error: stablehlo.gather C8
// C8: 0 <= collapsed_slice_dims < rank(operand).
func.func @main(%x: tensor<3x4x2xf32>, %i: tensor<2x3x2xi64>) -> tensor<2x3x2x2xf32> {
  %0 = "stablehlo.gather"(%x, %i) {dimension_numbers = #stablehlo.gather<offset_dims = [2, 3], collapsed_slice_dims = [3], start_index_map = [1, 0], index_vector_dim = 2>, slice_sizes = array<i64: 1, 2, 2>} : (tensor<3x4x2xf32>, tensor<2x3x2xi64>) -> tensor<2x3x2x2xf32>
  return %0 : tensor<2x3x2x2xf32>
}

// -----

// expect-error: stablehlo.gather C9
// C9: slice_sizes[collapsed_slice_dims...] <= 1.
func.func @main(%x: tensor<3x4x2xf32>, %i: tensor<2x3x2xi64>) -> tensor<2x3x2x2xf32> {
  %0 = "stablehlo.gather"(%x, %i) {dimension_numbers = #stablehlo.gather<offset_dims = [2, 3], collapsed_slice_dims = [0], start_index_map = [1, 0], index_vector_dim = 2>, slice_sizes = array<i64: 2, 2, 2>} : (tensor<3x4x2xf32>, tensor<2x3x2xi64>) -> tensor<2x3x2x2xf32>
  return %0 : tensor<2x3x2x2xf32>
}

// -----

// expect-error: stablehlo.gather C10
// C10: operand_batching_dims is sorted.
func.func @main(%x: tensor<2x3x4x2xf32>, %i: tensor<2x2x3x2xi64>) -> tensor<2x2x3x2x2xf32> {
  %0 = "stablehlo.gather"(%x, %i) {dimension_numbers = #stablehlo.gather<offset_dims = [3, 4], collapsed_slice_dims = [], operand_batching_dims = [1, 0], start_indices_batching_dims = [0, 1], start_index_map = [2, 1], index_vector_dim = 3>, slice_sizes = array<i64: 1, 1, 2, 2>} : (tensor<2x3x4x2xf32>, tensor<2x2x3x2xi64>) -> tensor<2x2x3x2x2xf32>
  return %0 : tensor<2x2x3x2x2xf32>
}

// -----

// expect-error: stablehlo.gather C11
// C11: 0 <= operand_batching_dims < rank(operand).
func.func @main(%x: tensor<2x3x4x2xf32>, %i: tensor<2x2x3x2xi64>) -> tensor<2x2x3x2x2xf32> {
  %0 = "stablehlo.gather"(%x, %i) {dimension_numbers = #stablehlo.gather<offset_dims = [3, 4], collapsed_slice_dims = [1], operand_batching_dims = [4], start_indices_batching_dims = [1], start_index_map = [2, 1], index_vector_dim = 3>, slice_sizes = array<i64: 1, 1, 2, 2>} : (tensor<2x3x4x2xf32>, tensor<2x2x3x2xi64>) -> tensor<2x2x3x2x2xf32>
  return %0 : tensor<2x2x3x2x2xf32>
}

// -----

// expect-error: stablehlo.gather C12
// C12: slice_sizes[operand_batching_dims...] <= 1.
func.func @main(%x: tensor<2x3x4x2xf32>, %i: tensor<2x2x3x2xi64>) -> tensor<2x2x3x2x2xf32> {
  %0 = "stablehlo.gather"(%x, %i) {dimension_numbers = #stablehlo.gather<offset_dims = [3, 4], collapsed_slice_dims = [1], operand_batching_dims = [0], start_indices_batching_dims = [1], start_index_map = [2, 1], index_vector_dim = 3>, slice_sizes = array<i64: 2, 1, 2, 2>} : (tensor<2x3x4x2xf32>, tensor<2x2x3x2xi64>) -> tensor<2x2x3x2x2xf32>
  return %0 : tensor<2x2x3x2x2xf32>
}

// -----

// expect-error: stablehlo.gather C13
// C13: start_indices_batching_dims is unique.
func.func @main(%x: tensor<2x3x4x2xf32>, %i: tensor<2x2x3x2xi64>) -> tensor<2x2x3x2x2xf32> {
  %0 = "stablehlo.gather"(%x, %i) {dimension_numbers = #stablehlo.gather<offset_dims = [3, 4], collapsed_slice_dims = [1], operand_batching_dims = [0], start_indices_batching_dims = [1, 1], start_index_map = [2, 1], index_vector_dim = 3>, slice_sizes = array<i64: 1, 1, 2, 2>} : (tensor<2x3x4x2xf32>, tensor<2x2x3x2xi64>) -> tensor<2x2x3x2x2xf32>
  return %0 : tensor<2x2x3x2x2xf32>
}

// -----

// expect-error: stablehlo.gather C14
// C14: 0 <= start_indices_batching_dims < rank(start_indices).
func.func @main(%x: tensor<2x3x4x2xf32>, %i: tensor<2x2x3x2xi64>) -> tensor<2x2x3x2x2xf32> {
  %0 = "stablehlo.gather"(%x, %i) {dimension_numbers = #stablehlo.gather<offset_dims = [3, 4], collapsed_slice_dims = [1], operand_batching_dims = [0], start_indices_batching_dims = [4], start_index_map = [2, 1], index_vector_dim = 3>, slice_sizes = array<i64: 1, 1, 2, 2>} : (tensor<2x3x4x2xf32>, tensor<2x2x3x2xi64>) -> tensor<2x2x3x2x2xf32>
  return %0 : tensor<2x2x3x2x2xf32>
}

// -----

// expect-error: stablehlo.gather C15
// C15: index_vector_dim is not a start_indices batching dimension.
func.func @main(%x: tensor<2x3x4x2xf32>, %i: tensor<2x2x3x2xi64>) -> tensor<2x2x3x2x2xf32> {
  %0 = "stablehlo.gather"(%x, %i) {dimension_numbers = #stablehlo.gather<offset_dims = [3, 4], collapsed_slice_dims = [1], operand_batching_dims = [0], start_indices_batching_dims = [3], start_index_map = [2, 1], index_vector_dim = 3>, slice_sizes = array<i64: 1, 1, 2, 2>} : (tensor<2x3x4x2xf32>, tensor<2x2x3x2xi64>) -> tensor<2x2x3x2x2xf32>
  return %0 : tensor<2x2x3x2x2xf32>
}

// -----

// expect-error: stablehlo.gather C16
// C16: size(operand_batching_dims) = size(start_indices_batching_dims).
func.func @main(%x: tensor<2x3x4x2xf32>, %i: tensor<2x2x3x2xi64>) -> tensor<2x2x3x2x2xf32> {
  %0 = "stablehlo.gather"(%x, %i) {dimension_numbers = #stablehlo.gather<offset_dims = [3, 4], collapsed_slice_dims = [1], operand_batching_dims = [0], start_indices_batching_dims = [1, 2], start_index_map = [2, 1], index_vector_dim = 3>, slice_sizes = array<i64: 1, 1, 2, 2>} : (tensor<2x3x4x2xf32>, tensor<2x2x3x2xi64>) -> tensor<2x2x3x2x2xf32>
  return %0 : tensor<2x2x3x2x2xf32>
}

// -----

// expect-error: stablehlo.gather C17
// C17: dim(operand, 0) = 2 but dim(start_indices, 2) = 3.
func.func @main(%x: tensor<2x3x4x2xf32>, %i: tensor<2x2x3x2xi64>) -> tensor<2x2x3x2x2xf32> {
  %0 = "stablehlo.gather"(%x, %i) {dimension_numbers = #stablehlo.gather<offset_dims = [3, 4], collapsed_slice_dims = [1], operand_batching_dims = [0], start_indices_batching_dims = [2], start_index_map = [2, 1], index_vector_dim = 3>, slice_sizes = array<i64: 1, 1, 2, 2>} : (tensor<2x3x4x2xf32>, tensor<2x2x3x2xi64>) -> tensor<2x2x3x2x2xf32>
  return %0 : tensor<2x2x3x2x2xf32>
}

// -----

// expect-error: stablehlo.gather C18
// C18: start_index_map and operand_batching_dims are unique together.
func.func @main(%x: tensor<2x3x4x2xf32>, %i: tensor<2x2x3x2xi64>) -> tensor<2x2x3x2x2xf32> {
  %0 = "stablehlo.gather"(%x, %i) {dimension_numbers = #stablehlo.gather<offset_dims = [3, 4], collapsed_slice_dims = [1], operand_batching_dims = [0], start_indices_batching_dims = [1], start_index_map = [2, 0], index_vector_dim = 3>, slice_sizes = array<i64: 1, 1, 2, 2>} : (tensor<2x3x4x2xf32>, tensor<2x2x3x2xi64>) -> tensor<2x2x3x2x2xf32>
  return %0 : tensor<2x2x3x2x2xf32>
}

// -----

// expect-error: stablehlo.gather C19
// C19: 0 <= start_index_map < rank(operand).
func.func @main(%x: tensor<3x4x2xf32>, %i: tensor<2x3x2xi64>) -> tensor<2x3x2x2xf32> {
  %0 = "stablehlo.gather"(%x, %i) {dimension_numbers = #stablehlo.gather<offset_dims = [2, 3], collapsed_slice_dims = [0], start_index_map = [1, 3], index_vector_dim = 2>, slice_sizes = array<i64: 1, 2, 2>} : (tensor<3x4x2xf32>, tensor<2x3x2xi64>) -> tensor<2x3x2x2xf32>
  return %0 : tensor<2x3x2x2xf32>
}

// -----

// expect-error: stablehlo.gather C20
// C20: size(slice_sizes) = rank(operand).
func.func @main(%x: tensor<3x4x2xf32>, %i: tensor<2x3x2xi64>) -> tensor<2x3x2x2xf32> {
  %0 = "stablehlo.gather"(%x, %i) {dimension_numbers = #stablehlo.gather<offset_dims = [2, 3], collapsed_slice_dims = [0], start_index_map = [1, 0], index_vector_dim = 2>, slice_sizes = array<i64: 1, 2>} : (tensor<3x4x2xf32>, tensor<2x3x2xi64>) -> tensor<2x3x2x2xf32>
  return %0 : tensor<2x3x2x2xf32>
}

// -----

// expect-error: stablehlo.gather C21
// C21: 0 <= slice_sizes <= shape(operand); dim(operand, 2) = 2.
func.func @main(%x: tensor<3x4x2xf32>, %i: tensor<2x3x2xi64>) -> tensor<2x3x2x2xf32> {
  %0 = "stablehlo.gather"(%x, %i) {dimension_numbers = #stablehlo.gather<offset_dims = [2, 3], collapsed_slice_dims = [0], start_index_map = [1, 0], index_vector_dim = 2>, slice_sizes = array<i64: 1, 2, 3>} : (tensor<3x4x2xf32>, tensor<2x3x2xi64>) -> tensor<2x3x2x2xf32>
  return %0 : tensor<2x3x2x2xf32>
}

// -----

// expect-error: stablehlo.gather C22
// C22: the result shape is 2x3x2x2 (batch dimensions, then the offset dimensions).
func.func @main(%x: tensor<3x4x2xf32>, %i: tensor<2x3x2xi64>) -> tensor<2x3x2x3xf32> {
  %0 = "stablehlo.gather"(%x, %i) {dimension_numbers = #stablehlo.gather<offset_dims = [2, 3], collapsed_slice_dims = [0], start_index_map = [1, 0], index_vector_dim = 2>, slice_sizes = array<i64: 1, 2, 2>} : (tensor<3x4x2xf32>, tensor<2x3x2xi64>) -> tensor<2x3x2x3xf32>
  return %0 : tensor<2x3x2x3xf32>
}

// -----

// expect-error: stablehlo.gather C23
// C23: element_type(operand) = element_type(result).
func.func @main(%x: tensor<3x4x2xf32>, %i: tensor<2x3x2xi64>) -> tensor<2x3x2x2xf64> {
  %0 = "stablehlo.gather"(%x, %i) {dimension_numbers = #stablehlo.gather<offset_dims = [2, 3], collapsed_slice_dims = [0], start_index_map = [1, 0], index_vector_dim = 2>, slice_sizes = array<i64: 1, 2, 2>} : (tensor<3x4x2xf32>, tensor<2x3x2xi64>) -> tensor<2x3x2x2xf64>
  return %0 : tensor<2x3x2x2xf64>
}

// -----

// expect-error: stablehlo.scatter C1
// C1: same(shape(inputs...)).
func.func @main(%x0: tensor<3x4x2xf32>, %x1: tensor<3x5x2xf32>, %i: tensor<2x3x2xi64>, %u0: tensor<2x3x2x2xf32>, %u1: tensor<2x3x2x2xf32>) -> (tensor<3x4x2xf32>, tensor<3x5x2xf32>) {
  %r:2 = "stablehlo.scatter"(%x0, %x1, %i, %u0, %u1) ({
  ^bb0(%a0: tensor<f32>, %a1: tensor<f32>, %b0: tensor<f32>, %b1: tensor<f32>):
    %s0 = stablehlo.add %a0, %b0 : tensor<f32>
    %s1 = stablehlo.add %a1, %b1 : tensor<f32>
    stablehlo.return %s0, %s1 : tensor<f32>, tensor<f32>
  }) {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [2, 3], inserted_window_dims = [0], scatter_dims_to_operand_dims = [1, 0], index_vector_dim = 2>} : (tensor<3x4x2xf32>, tensor<3x5x2xf32>, tensor<2x3x2xi64>, tensor<2x3x2x2xf32>, tensor<2x3x2x2xf32>) -> (tensor<3x4x2xf32>, tensor<3x5x2xf32>)
  return %r#0, %r#1 : tensor<3x4x2xf32>, tensor<3x5x2xf32>
}

// -----

// expect-error: stablehlo.scatter C2
// C2: rank(inputs[0]) = size(update_window_dims) + size(inserted_window_dims) + size(input_batching_dims).
func.func @main(%x0: tensor<3x4x2xf32>, %i: tensor<2x3x2xi64>, %u0: tensor<2x3x2x2xf32>) -> tensor<3x4x2xf32> {
  %r = "stablehlo.scatter"(%x0, %i, %u0) ({
  ^bb0(%a0: tensor<f32>, %b0: tensor<f32>):
    %s0 = stablehlo.add %a0, %b0 : tensor<f32>
    stablehlo.return %s0 : tensor<f32>
  }) {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [2, 3], inserted_window_dims = [], scatter_dims_to_operand_dims = [1, 0], index_vector_dim = 2>} : (tensor<3x4x2xf32>, tensor<2x3x2xi64>, tensor<2x3x2x2xf32>) -> tensor<3x4x2xf32>
  return %r : tensor<3x4x2xf32>
}

// -----

// expect-error: stablehlo.scatter C3
// C3: same(shape(updates...)).
func.func @main(%x0: tensor<3x4x2xf32>, %x1: tensor<3x4x2xf32>, %i: tensor<2x3x2xi64>, %u0: tensor<2x3x2x2xf32>, %u1: tensor<2x3x2x1xf32>) -> (tensor<3x4x2xf32>, tensor<3x4x2xf32>) {
  %r:2 = "stablehlo.scatter"(%x0, %x1, %i, %u0, %u1) ({
  ^bb0(%a0: tensor<f32>, %a1: tensor<f32>, %b0: tensor<f32>, %b1: tensor<f32>):
    %s0 = stablehlo.add %a0, %b0 : tensor<f32>
    %s1 = stablehlo.add %a1, %b1 : tensor<f32>
    stablehlo.return %s0, %s1 : tensor<f32>, tensor<f32>
  }) {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [2, 3], inserted_window_dims = [0], scatter_dims_to_operand_dims = [1, 0], index_vector_dim = 2>} : (tensor<3x4x2xf32>, tensor<3x4x2xf32>, tensor<2x3x2xi64>, tensor<2x3x2x2xf32>, tensor<2x3x2x1xf32>) -> (tensor<3x4x2xf32>, tensor<3x4x2xf32>)
  return %r#0, %r#1 : tensor<3x4x2xf32>, tensor<3x4x2xf32>
}

// -----

// expect-error: stablehlo.scatter C4
// C4: an update window dimension (3) is larger than the input's (2).
func.func @main(%x0: tensor<3x4x2xf32>, %i: tensor<2x3x2xi64>, %u0: tensor<2x3x2x3xf32>) -> tensor<3x4x2xf32> {
  %r = "stablehlo.scatter"(%x0, %i, %u0) ({
  ^bb0(%a0: tensor<f32>, %b0: tensor<f32>):
    %s0 = stablehlo.add %a0, %b0 : tensor<f32>
    stablehlo.return %s0 : tensor<f32>
  }) {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [2, 3], inserted_window_dims = [0], scatter_dims_to_operand_dims = [1, 0], index_vector_dim = 2>} : (tensor<3x4x2xf32>, tensor<2x3x2xi64>, tensor<2x3x2x3xf32>) -> tensor<3x4x2xf32>
  return %r : tensor<3x4x2xf32>
}

// -----

// expect-error: stablehlo.scatter C6
// C6: element_type(updates...) = element_type(inputs...).
func.func @main(%x0: tensor<3x4x2xf32>, %i: tensor<2x3x2xi64>, %u0: tensor<2x3x2x2xf64>) -> tensor<3x4x2xf32> {
  %r = "stablehlo.scatter"(%x0, %i, %u0) ({
  ^bb0(%a0: tensor<f32>, %b0: tensor<f32>):
    %s0 = stablehlo.add %a0, %b0 : tensor<f32>
    stablehlo.return %s0 : tensor<f32>
  }) {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [2, 3], inserted_window_dims = [0], scatter_dims_to_operand_dims = [1, 0], index_vector_dim = 2>} : (tensor<3x4x2xf32>, tensor<2x3x2xi64>, tensor<2x3x2x2xf64>) -> tensor<3x4x2xf32>
  return %r : tensor<3x4x2xf32>
}

// -----

// expect-error: stablehlo.scatter C7
// C7: update_window_dims is sorted.
func.func @main(%x0: tensor<3x4x2xf32>, %i: tensor<2x3x2xi64>, %u0: tensor<2x3x2x2xf32>) -> tensor<3x4x2xf32> {
  %r = "stablehlo.scatter"(%x0, %i, %u0) ({
  ^bb0(%a0: tensor<f32>, %b0: tensor<f32>):
    %s0 = stablehlo.add %a0, %b0 : tensor<f32>
    stablehlo.return %s0 : tensor<f32>
  }) {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [3, 2], inserted_window_dims = [0], scatter_dims_to_operand_dims = [1, 0], index_vector_dim = 2>} : (tensor<3x4x2xf32>, tensor<2x3x2xi64>, tensor<2x3x2x2xf32>) -> tensor<3x4x2xf32>
  return %r : tensor<3x4x2xf32>
}

// -----

// expect-error: stablehlo.scatter C8
// C8: 0 <= update_window_dims < rank(updates[0]).
func.func @main(%x0: tensor<3x4x2xf32>, %i: tensor<2x3x2xi64>, %u0: tensor<2x3x2x2xf32>) -> tensor<3x4x2xf32> {
  %r = "stablehlo.scatter"(%x0, %i, %u0) ({
  ^bb0(%a0: tensor<f32>, %b0: tensor<f32>):
    %s0 = stablehlo.add %a0, %b0 : tensor<f32>
    stablehlo.return %s0 : tensor<f32>
  }) {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [2, 4], inserted_window_dims = [0], scatter_dims_to_operand_dims = [1, 0], index_vector_dim = 2>} : (tensor<3x4x2xf32>, tensor<2x3x2xi64>, tensor<2x3x2x2xf32>) -> tensor<3x4x2xf32>
  return %r : tensor<3x4x2xf32>
}

// -----

// expect-error: stablehlo.scatter C9
// C9: inserted_window_dims and input_batching_dims are unique together.
func.func @main(%x0: tensor<2x3x4x2xf32>, %i: tensor<2x2x3x2xi64>, %u0: tensor<2x2x3x2x2xf32>) -> tensor<2x3x4x2xf32> {
  %r = "stablehlo.scatter"(%x0, %i, %u0) ({
  ^bb0(%a0: tensor<f32>, %b0: tensor<f32>):
    %s0 = stablehlo.add %a0, %b0 : tensor<f32>
    stablehlo.return %s0 : tensor<f32>
  }) {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [3, 4], inserted_window_dims = [0], input_batching_dims = [0], scatter_indices_batching_dims = [1], scatter_dims_to_operand_dims = [2, 1], index_vector_dim = 3>} : (tensor<2x3x4x2xf32>, tensor<2x2x3x2xi64>, tensor<2x2x3x2x2xf32>) -> tensor<2x3x4x2xf32>
  return %r : tensor<2x3x4x2xf32>
}

// -----

// expect-error: stablehlo.scatter C10
// C10: inserted_window_dims is sorted.
func.func @main(%x0: tensor<3x4x2xf32>, %i: tensor<2x3x2xi64>, %u0: tensor<2x3x2xf32>) -> tensor<3x4x2xf32> {
  %r = "stablehlo.scatter"(%x0, %i, %u0) ({
  ^bb0(%a0: tensor<f32>, %b0: tensor<f32>):
    %s0 = stablehlo.add %a0, %b0 : tensor<f32>
    stablehlo.return %s0 : tensor<f32>
  }) {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [2], inserted_window_dims = [1, 0], scatter_dims_to_operand_dims = [1, 0], index_vector_dim = 2>} : (tensor<3x4x2xf32>, tensor<2x3x2xi64>, tensor<2x3x2xf32>) -> tensor<3x4x2xf32>
  return %r : tensor<3x4x2xf32>
}

// -----

// expect-error: stablehlo.scatter C11
// C11: 0 <= inserted_window_dims < rank(inputs[0]).
func.func @main(%x0: tensor<3x4x2xf32>, %i: tensor<2x3x2xi64>, %u0: tensor<2x3x2x2xf32>) -> tensor<3x4x2xf32> {
  %r = "stablehlo.scatter"(%x0, %i, %u0) ({
  ^bb0(%a0: tensor<f32>, %b0: tensor<f32>):
    %s0 = stablehlo.add %a0, %b0 : tensor<f32>
    stablehlo.return %s0 : tensor<f32>
  }) {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [2, 3], inserted_window_dims = [3], scatter_dims_to_operand_dims = [1, 0], index_vector_dim = 2>} : (tensor<3x4x2xf32>, tensor<2x3x2xi64>, tensor<2x3x2x2xf32>) -> tensor<3x4x2xf32>
  return %r : tensor<3x4x2xf32>
}

// -----

// expect-error: stablehlo.scatter C12
// C12: input_batching_dims is sorted.
func.func @main(%x0: tensor<2x3x4x2xf32>, %i: tensor<2x2x3x2xi64>, %u0: tensor<2x2x3x2x2xf32>) -> tensor<2x3x4x2xf32> {
  %r = "stablehlo.scatter"(%x0, %i, %u0) ({
  ^bb0(%a0: tensor<f32>, %b0: tensor<f32>):
    %s0 = stablehlo.add %a0, %b0 : tensor<f32>
    stablehlo.return %s0 : tensor<f32>
  }) {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [3, 4], inserted_window_dims = [], input_batching_dims = [1, 0], scatter_indices_batching_dims = [0, 1], scatter_dims_to_operand_dims = [2, 1], index_vector_dim = 3>} : (tensor<2x3x4x2xf32>, tensor<2x2x3x2xi64>, tensor<2x2x3x2x2xf32>) -> tensor<2x3x4x2xf32>
  return %r : tensor<2x3x4x2xf32>
}

// -----

// expect-error: stablehlo.scatter C13
// C13: 0 <= input_batching_dims < rank(inputs[0]).
func.func @main(%x0: tensor<2x3x4x2xf32>, %i: tensor<2x2x3x2xi64>, %u0: tensor<2x2x3x2x2xf32>) -> tensor<2x3x4x2xf32> {
  %r = "stablehlo.scatter"(%x0, %i, %u0) ({
  ^bb0(%a0: tensor<f32>, %b0: tensor<f32>):
    %s0 = stablehlo.add %a0, %b0 : tensor<f32>
    stablehlo.return %s0 : tensor<f32>
  }) {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [3, 4], inserted_window_dims = [1], input_batching_dims = [4], scatter_indices_batching_dims = [1], scatter_dims_to_operand_dims = [2, 1], index_vector_dim = 3>} : (tensor<2x3x4x2xf32>, tensor<2x2x3x2xi64>, tensor<2x2x3x2x2xf32>) -> tensor<2x3x4x2xf32>
  return %r : tensor<2x3x4x2xf32>
}

// -----

// expect-error: stablehlo.scatter C14
// C14: scatter_indices_batching_dims is unique.
func.func @main(%x0: tensor<2x3x4x2xf32>, %i: tensor<2x2x3x2xi64>, %u0: tensor<2x2x3x2x2xf32>) -> tensor<2x3x4x2xf32> {
  %r = "stablehlo.scatter"(%x0, %i, %u0) ({
  ^bb0(%a0: tensor<f32>, %b0: tensor<f32>):
    %s0 = stablehlo.add %a0, %b0 : tensor<f32>
    stablehlo.return %s0 : tensor<f32>
  }) {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [3, 4], inserted_window_dims = [1], input_batching_dims = [0], scatter_indices_batching_dims = [1, 1], scatter_dims_to_operand_dims = [2, 1], index_vector_dim = 3>} : (tensor<2x3x4x2xf32>, tensor<2x2x3x2xi64>, tensor<2x2x3x2x2xf32>) -> tensor<2x3x4x2xf32>
  return %r : tensor<2x3x4x2xf32>
}

// -----

// expect-error: stablehlo.scatter C15
// C15: 0 <= scatter_indices_batching_dims < rank(scatter_indices).
func.func @main(%x0: tensor<2x3x4x2xf32>, %i: tensor<2x2x3x2xi64>, %u0: tensor<2x2x3x2x2xf32>) -> tensor<2x3x4x2xf32> {
  %r = "stablehlo.scatter"(%x0, %i, %u0) ({
  ^bb0(%a0: tensor<f32>, %b0: tensor<f32>):
    %s0 = stablehlo.add %a0, %b0 : tensor<f32>
    stablehlo.return %s0 : tensor<f32>
  }) {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [3, 4], inserted_window_dims = [1], input_batching_dims = [0], scatter_indices_batching_dims = [4], scatter_dims_to_operand_dims = [2, 1], index_vector_dim = 3>} : (tensor<2x3x4x2xf32>, tensor<2x2x3x2xi64>, tensor<2x2x3x2x2xf32>) -> tensor<2x3x4x2xf32>
  return %r : tensor<2x3x4x2xf32>
}

// -----

// expect-error: stablehlo.scatter C16
// C16: index_vector_dim is not a scatter_indices batching dimension.
func.func @main(%x0: tensor<2x3x4x2xf32>, %i: tensor<2x2x3x2xi64>, %u0: tensor<2x2x3x2x2xf32>) -> tensor<2x3x4x2xf32> {
  %r = "stablehlo.scatter"(%x0, %i, %u0) ({
  ^bb0(%a0: tensor<f32>, %b0: tensor<f32>):
    %s0 = stablehlo.add %a0, %b0 : tensor<f32>
    stablehlo.return %s0 : tensor<f32>
  }) {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [3, 4], inserted_window_dims = [1], input_batching_dims = [0], scatter_indices_batching_dims = [3], scatter_dims_to_operand_dims = [2, 1], index_vector_dim = 3>} : (tensor<2x3x4x2xf32>, tensor<2x2x3x2xi64>, tensor<2x2x3x2x2xf32>) -> tensor<2x3x4x2xf32>
  return %r : tensor<2x3x4x2xf32>
}

// -----

// expect-error: stablehlo.scatter C17
// C17: size(input_batching_dims) = size(scatter_indices_batching_dims).
func.func @main(%x0: tensor<2x3x4x2xf32>, %i: tensor<2x2x3x2xi64>, %u0: tensor<2x2x3x2x2xf32>) -> tensor<2x3x4x2xf32> {
  %r = "stablehlo.scatter"(%x0, %i, %u0) ({
  ^bb0(%a0: tensor<f32>, %b0: tensor<f32>):
    %s0 = stablehlo.add %a0, %b0 : tensor<f32>
    stablehlo.return %s0 : tensor<f32>
  }) {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [3, 4], inserted_window_dims = [1], input_batching_dims = [0], scatter_indices_batching_dims = [1, 2], scatter_dims_to_operand_dims = [2, 1], index_vector_dim = 3>} : (tensor<2x3x4x2xf32>, tensor<2x2x3x2xi64>, tensor<2x2x3x2x2xf32>) -> tensor<2x3x4x2xf32>
  return %r : tensor<2x3x4x2xf32>
}

// -----

// expect-error: stablehlo.scatter C18
// C18: dim(inputs[0], 0) = 2 but dim(scatter_indices, 2) = 3.
func.func @main(%x0: tensor<2x3x4x2xf32>, %i: tensor<2x2x3x2xi64>, %u0: tensor<2x2x3x2x2xf32>) -> tensor<2x3x4x2xf32> {
  %r = "stablehlo.scatter"(%x0, %i, %u0) ({
  ^bb0(%a0: tensor<f32>, %b0: tensor<f32>):
    %s0 = stablehlo.add %a0, %b0 : tensor<f32>
    stablehlo.return %s0 : tensor<f32>
  }) {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [3, 4], inserted_window_dims = [1], input_batching_dims = [0], scatter_indices_batching_dims = [2], scatter_dims_to_operand_dims = [2, 1], index_vector_dim = 3>} : (tensor<2x3x4x2xf32>, tensor<2x2x3x2xi64>, tensor<2x2x3x2x2xf32>) -> tensor<2x3x4x2xf32>
  return %r : tensor<2x3x4x2xf32>
}

// -----

// expect-error: stablehlo.scatter C19
// C19: size(scatter_dims_to_operand_dims) = dim(scatter_indices, index_vector_dim).
func.func @main(%x0: tensor<3x4x2xf32>, %i: tensor<2x3x2xi64>, %u0: tensor<2x3x2x2xf32>) -> tensor<3x4x2xf32> {
  %r = "stablehlo.scatter"(%x0, %i, %u0) ({
  ^bb0(%a0: tensor<f32>, %b0: tensor<f32>):
    %s0 = stablehlo.add %a0, %b0 : tensor<f32>
    stablehlo.return %s0 : tensor<f32>
  }) {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [2, 3], inserted_window_dims = [0], scatter_dims_to_operand_dims = [1], index_vector_dim = 2>} : (tensor<3x4x2xf32>, tensor<2x3x2xi64>, tensor<2x3x2x2xf32>) -> tensor<3x4x2xf32>
  return %r : tensor<3x4x2xf32>
}

// -----

// expect-error: stablehlo.scatter C20
// C20: scatter_dims_to_operand_dims and input_batching_dims are unique together.
func.func @main(%x0: tensor<2x3x4x2xf32>, %i: tensor<2x2x3x2xi64>, %u0: tensor<2x2x3x2x2xf32>) -> tensor<2x3x4x2xf32> {
  %r = "stablehlo.scatter"(%x0, %i, %u0) ({
  ^bb0(%a0: tensor<f32>, %b0: tensor<f32>):
    %s0 = stablehlo.add %a0, %b0 : tensor<f32>
    stablehlo.return %s0 : tensor<f32>
  }) {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [3, 4], inserted_window_dims = [1], input_batching_dims = [0], scatter_indices_batching_dims = [1], scatter_dims_to_operand_dims = [2, 0], index_vector_dim = 3>} : (tensor<2x3x4x2xf32>, tensor<2x2x3x2xi64>, tensor<2x2x3x2x2xf32>) -> tensor<2x3x4x2xf32>
  return %r : tensor<2x3x4x2xf32>
}

// -----

// expect-error: stablehlo.scatter C21
// C21: 0 <= scatter_dims_to_operand_dims < rank(inputs[0]).
func.func @main(%x0: tensor<3x4x2xf32>, %i: tensor<2x3x2xi64>, %u0: tensor<2x3x2x2xf32>) -> tensor<3x4x2xf32> {
  %r = "stablehlo.scatter"(%x0, %i, %u0) ({
  ^bb0(%a0: tensor<f32>, %b0: tensor<f32>):
    %s0 = stablehlo.add %a0, %b0 : tensor<f32>
    stablehlo.return %s0 : tensor<f32>
  }) {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [2, 3], inserted_window_dims = [0], scatter_dims_to_operand_dims = [1, 3], index_vector_dim = 2>} : (tensor<3x4x2xf32>, tensor<2x3x2xi64>, tensor<2x3x2x2xf32>) -> tensor<3x4x2xf32>
  return %r : tensor<3x4x2xf32>
}

// -----

// expect-error: stablehlo.scatter C22
// C22: 0 <= index_vector_dim <= rank(scatter_indices).
func.func @main(%x0: tensor<3x4x2xf32>, %i: tensor<2x3x2xi64>, %u0: tensor<2x3x2x2xf32>) -> tensor<3x4x2xf32> {
  %r = "stablehlo.scatter"(%x0, %i, %u0) ({
  ^bb0(%a0: tensor<f32>, %b0: tensor<f32>):
    %s0 = stablehlo.add %a0, %b0 : tensor<f32>
    stablehlo.return %s0 : tensor<f32>
  }) {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [2, 3], inserted_window_dims = [0], scatter_dims_to_operand_dims = [1, 0], index_vector_dim = 4>} : (tensor<3x4x2xf32>, tensor<2x3x2xi64>, tensor<2x3x2x2xf32>) -> tensor<3x4x2xf32>
  return %r : tensor<3x4x2xf32>
}

// -----

// expect-error: stablehlo.scatter C23
// C23: update_computation takes tensor<Ei> with is_promotable(f32, Ei); i32 cannot hold f32.
func.func @main(%x0: tensor<3x4x2xf32>, %i: tensor<2x3x2xi64>, %u0: tensor<2x3x2x2xf32>) -> tensor<3x4x2xi32> {
  %r = "stablehlo.scatter"(%x0, %i, %u0) ({
  ^bb0(%a0: tensor<i32>, %b0: tensor<i32>):
    %s0 = stablehlo.add %a0, %b0 : tensor<i32>
    stablehlo.return %s0 : tensor<i32>
  }) {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [2, 3], inserted_window_dims = [0], scatter_dims_to_operand_dims = [1, 0], index_vector_dim = 2>} : (tensor<3x4x2xf32>, tensor<2x3x2xi64>, tensor<2x3x2x2xf32>) -> tensor<3x4x2xi32>
  return %r : tensor<3x4x2xi32>
}

// -----

// expect-error: stablehlo.scatter C24
// C24: shape(inputs...) = shape(results...).
func.func @main(%x0: tensor<3x4x2xf32>, %i: tensor<2x3x2xi64>, %u0: tensor<2x3x2x2xf32>) -> tensor<3x4x3xf32> {
  %r = "stablehlo.scatter"(%x0, %i, %u0) ({
  ^bb0(%a0: tensor<f32>, %b0: tensor<f32>):
    %s0 = stablehlo.add %a0, %b0 : tensor<f32>
    stablehlo.return %s0 : tensor<f32>
  }) {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [2, 3], inserted_window_dims = [0], scatter_dims_to_operand_dims = [1, 0], index_vector_dim = 2>} : (tensor<3x4x2xf32>, tensor<2x3x2xi64>, tensor<2x3x2x2xf32>) -> tensor<3x4x3xf32>
  return %r : tensor<3x4x3xf32>
}

// -----

// expect-error: stablehlo.scatter C25
// C25: element_type(results[i]) = Ei, the update_computation's type (f32).
func.func @main(%x0: tensor<3x4x2xf32>, %i: tensor<2x3x2xi64>, %u0: tensor<2x3x2x2xf32>) -> tensor<3x4x2xf64> {
  %r = "stablehlo.scatter"(%x0, %i, %u0) ({
  ^bb0(%a0: tensor<f32>, %b0: tensor<f32>):
    %s0 = stablehlo.add %a0, %b0 : tensor<f32>
    stablehlo.return %s0 : tensor<f32>
  }) {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [2, 3], inserted_window_dims = [0], scatter_dims_to_operand_dims = [1, 0], index_vector_dim = 2>} : (tensor<3x4x2xf32>, tensor<2x3x2xi64>, tensor<2x3x2x2xf32>) -> tensor<3x4x2xf64>
  return %r : tensor<3x4x2xf64>
}

// -----

// expect-error: stablehlo.dynamic_slice I2
// I2: start_indices are 0-dimensional tensors of integer type.
func.func @main(%x: tensor<6xf32>, %k: tensor<f32>) -> tensor<2xf32> {
  %0 = "stablehlo.dynamic_slice"(%x, %k) {slice_sizes = array<i64: 2>} : (tensor<6xf32>, tensor<f32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// expect-error: stablehlo.dynamic_update_slice I3
// I3: start_indices are 0-dimensional tensors of integer type.
func.func @main(%x: tensor<6xf32>, %u: tensor<2xf32>, %k: tensor<1xi64>) -> tensor<6xf32> {
  %0 = "stablehlo.dynamic_update_slice"(%x, %u, %k) : (tensor<6xf32>, tensor<2xf32>, tensor<1xi64>) -> tensor<6xf32>
  return %0 : tensor<6xf32>
}

// -----

// expect-error: stablehlo.gather I2
// I2: start_indices is a tensor of integer type.
func.func @main(%x: tensor<3x4x2xf32>, %i: tensor<2x3x2xf32>) -> tensor<2x3x2x2xf32> {
  %0 = "stablehlo.gather"(%x, %i) {dimension_numbers = #stablehlo.gather<offset_dims = [2, 3], collapsed_slice_dims = [0], start_index_map = [1, 0], index_vector_dim = 2>, slice_sizes = array<i64: 1, 2, 2>} : (tensor<3x4x2xf32>, tensor<2x3x2xf32>) -> tensor<2x3x2x2xf32>
  return %0 : tensor<2x3x2x2xf32>
}

// -----

// expect-error: stablehlo.get_tuple_element I1
// I1: operand is a tuple.
func.func @main(%t: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "stablehlo.get_tuple_element"(%t) {index = 0 : i32} : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// expect-error: stablehlo.dynamic_gather C2
// C2: 0 <= index_vector_dim <= rank(start_indices).
func.func @main(%x: tensor<3x4x2xf32>, %i: tensor<2x3x2xi64>, %s: tensor<3xi64>) -> tensor<2x3x?x?xf32> {
  %0 = "stablehlo.dynamic_gather"(%x, %i, %s) {dimension_numbers = #stablehlo.gather<offset_dims = [2, 3], collapsed_slice_dims = [0], start_index_map = [1, 0], index_vector_dim = 4>} : (tensor<3x4x2xf32>, tensor<2x3x2xi64>, tensor<3xi64>) -> tensor<2x3x?x?xf32>
  return %0 : tensor<2x3x?x?xf32>
}

// -----

// expect-error: stablehlo.dynamic_gather C4
// C4: offset_dims is sorted.
func.func @main(%x: tensor<3x4x2xf32>, %i: tensor<2x3x2xi64>, %s: tensor<3xi64>) -> tensor<2x3x?x?xf32> {
  %0 = "stablehlo.dynamic_gather"(%x, %i, %s) {dimension_numbers = #stablehlo.gather<offset_dims = [3, 2], collapsed_slice_dims = [0], start_index_map = [1, 0], index_vector_dim = 2>} : (tensor<3x4x2xf32>, tensor<2x3x2xi64>, tensor<3xi64>) -> tensor<2x3x?x?xf32>
  return %0 : tensor<2x3x?x?xf32>
}

// -----

// expect-error: stablehlo.dynamic_gather C5
// C5: 0 <= offset_dims < rank(result); the result has rank 4.
func.func @main(%x: tensor<3x4x2xf32>, %i: tensor<2x3x2xi64>, %s: tensor<3xi64>) -> tensor<2x3x?x?xf32> {
  %0 = "stablehlo.dynamic_gather"(%x, %i, %s) {dimension_numbers = #stablehlo.gather<offset_dims = [2, 4], collapsed_slice_dims = [0], start_index_map = [1, 0], index_vector_dim = 2>} : (tensor<3x4x2xf32>, tensor<2x3x2xi64>, tensor<3xi64>) -> tensor<2x3x?x?xf32>
  return %0 : tensor<2x3x?x?xf32>
}

// -----

// expect-error: stablehlo.dynamic_gather C7
// C7: 0 <= collapsed_slice_dims < rank(operand).
func.func @main(%x: tensor<3x4x2xf32>, %i: tensor<2x3x2xi64>, %s: tensor<3xi64>) -> tensor<2x3x?x?xf32> {
  %0 = "stablehlo.dynamic_gather"(%x, %i, %s) {dimension_numbers = #stablehlo.gather<offset_dims = [2, 3], collapsed_slice_dims = [3], start_index_map = [1, 0], index_vector_dim = 2>} : (tensor<3x4x2xf32>, tensor<2x3x2xi64>, tensor<3xi64>) -> tensor<2x3x?x?xf32>
  return %0 : tensor<2x3x?x?xf32>
}

// -----

// expect-error: stablehlo.dynamic_gather C9
// C9: is_unique(start_index_map).
func.func @main(%x: tensor<3x4x2xf32>, %i: tensor<2x3x2xi64>, %s: tensor<3xi64>) -> tensor<2x3x?x?xf32> {
  %0 = "stablehlo.dynamic_gather"(%x, %i, %s) {dimension_numbers = #stablehlo.gather<offset_dims = [2, 3], collapsed_slice_dims = [0], start_index_map = [1, 1], index_vector_dim = 2>} : (tensor<3x4x2xf32>, tensor<2x3x2xi64>, tensor<3xi64>) -> tensor<2x3x?x?xf32>
  return %0 : tensor<2x3x?x?xf32>
}

// -----

// expect-error: stablehlo.concatenate C4
// A negative dimension is out of range whatever the rank, so unranked inputs do not hide it.
func.func @main(%a: tensor<*xf32>, %b: tensor<*xf32>) -> tensor<*xf32> {
  %0 = "stablehlo.concatenate"(%a, %b) {dimension = -1 : i64} : (tensor<*xf32>, tensor<*xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

// expect-error: stablehlo.constant C1
// A quantized constant's value is given in its storage type (i8 here); ui8 elements are another type.
func.func @main() -> tensor<2x!quant.uniform<i8:f32, 2.0:15>> {
  %0 = "stablehlo.constant"() {value = dense<[1, 2]> : tensor<2xui8>} : () -> tensor<2x!quant.uniform<i8:f32, 2.0:15>>
  return %0 : tensor<2x!quant.uniform<i8:f32, 2.0:15>>
}

// -----

// expect-ok
func.func @main() -> tensor<2x!quant.uniform<i8:f32, 2.0:15>> {
  %0 = "stablehlo.constant"() {value = dense<[1, 2]> : tensor<2xi8>} : () -> tensor<2x!quant.uniform<i8:f32, 2.0:15>>
  return %0 : tensor<2x!quant.uniform<i8:f32, 2.0:15>>
}
