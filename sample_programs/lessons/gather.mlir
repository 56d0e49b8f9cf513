// Lesson: gather. XLA's operation-semantics page names the fields offset_dims,
// collapsed_slice_dims, start_index_map, index_vector_dim (the StableHLO names are the same).
//
// What to look at:
//  * %0 is an embedding lookup: each row of %arg1 holds one start index into dimension 0 of the
//    5x3 table (start_index_map = [0]); slice_sizes = [1, 3] cuts one whole row; the size-1
//    dimension 0 is dropped (collapsed_slice_dims = [0]); the row's 3 elements become result
//    dimension 1 (offset_dims = [1]). So %0[b, k] = %arg0[%arg1[b, 0], k].
//  * What surprises people: an out-of-bounds start index is CLAMPED, not an error. %arg1[2] is 7,
//    the table has 5 rows, so the start is clamped to 5 - 1 = 4.
//  * %1 cuts 2x2 windows of a 4x4 operand at the (row, column) starts in %arg3; nothing is
//    collapsed, so the result is 2 (windows) x 2 x 2. The start (3, 3) is clamped to (2, 2)
//    so that the whole window fits.
func.func @main(%arg0: tensor<5x3xf32>, %arg1: tensor<3x1xi32>, %arg2: tensor<4x4xf32>, %arg3: tensor<2x2xi32>) -> (tensor<3x3xf32>, tensor<2x2x2xf32>) {
  %0 = "stablehlo.gather"(%arg0, %arg1) {dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 3>} : (tensor<5x3xf32>, tensor<3x1xi32>) -> tensor<3x3xf32>
  %1 = "stablehlo.gather"(%arg2, %arg3) {dimension_numbers = #stablehlo.gather<offset_dims = [1, 2], start_index_map = [0, 1], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 2, 2>} : (tensor<4x4xf32>, tensor<2x2xi32>) -> tensor<2x2x2xf32>
  return %0, %1 : tensor<3x3xf32>, tensor<2x2x2xf32>
}
