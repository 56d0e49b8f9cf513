// Lesson: scatter, gather's mirror: rows of %arg2 (updates) are combined INTO a copy of %arg0
// at the rows %arg1 names, through the update computation (here: add).
//
// What to look at:
//  * update_window_dims = [1]: dimension 1 of the updates is the window (a row of 2);
//    inserted_window_dims = [0]: the window has no dimension 0 of its own (one row);
//    scatter_dims_to_operand_dims = [0]: each index picks a row of the operand.
//  * What surprises people, 1: indices may repeat. Row 1 is named twice (updates 0 and 2), and
//    both are added to it, in order.
//  * What surprises people, 2: an out-of-bounds index (9) is SKIPPED — update 3 is dropped.
//    Gather clamps such an index; scatter ignores the update.
func.func @main(%arg0: tensor<4x2xf32>, %arg1: tensor<4x1xi32>, %arg2: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %0 = "stablehlo.scatter"(%arg0, %arg1, %arg2) ({
  ^bb0(%old: tensor<f32>, %new: tensor<f32>):
    %sum = stablehlo.add %old, %new : tensor<f32>
    stablehlo.return %sum : tensor<f32>
  }) {indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false} : (tensor<4x2xf32>, tensor<4x1xi32>, tensor<4x2xf32>) -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}
