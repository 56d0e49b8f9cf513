// Lesson: reshape, transpose and broadcast_in_dim: the same numbers, another arrangement.
//
// What to look at:
//  * %0 reshape keeps the row-major order of the elements: read %arg0 row by row (0..11) and
//    refill a 3x4. %0[2,1] is element number 2*4+1 = 9 of that order, which is %arg0[1,3].
//  * %1 transpose, dims = [1, 0]: result dimension i is operand dimension dims[i].
//    %1[i,j] = %0[j,i]. What surprises people: for 3 or more dims, dims is NOT "where each
//    operand dim goes"; it says where each result dim comes from.
//  * %2 broadcast_in_dim, dims = [1]: operand dimension 0 becomes result dimension 1, so every
//    row of %2 is a copy of %arg1: %2[i,j] = %arg1[j].
//  * %3 adds them.
func.func @main(%arg0: tensor<2x6xf32>, %arg1: tensor<3xf32>) -> tensor<4x3xf32> {
  %0 = stablehlo.reshape %arg0 : (tensor<2x6xf32>) -> tensor<3x4xf32>
  %1 = stablehlo.transpose %0, dims = [1, 0] : (tensor<3x4xf32>) -> tensor<4x3xf32>
  %2 = stablehlo.broadcast_in_dim %arg1, dims = [1] : (tensor<3xf32>) -> tensor<4x3xf32>
  %3 = stablehlo.add %1, %2 : tensor<4x3xf32>
  return %3 : tensor<4x3xf32>
}
