// Lesson: dot_general, the one op behind matmul, batched matmul, einsum and inner products.
//
// What to look at:
//  * %0: batching_dims = [0] x [0] pairs the leading dimension (2 separate matmuls);
//    contracting_dims = [2] x [1] multiplies lhs's dim 2 with rhs's dim 1 and sums them away.
//    %0[b,i,j] = sum over k of %arg0[b,i,k] * %arg1[b,k,j].
//  * The result's dimensions are always: batch dims, then lhs's free dims, then rhs's free dims.
//  * %1 contracts dimension 0 of both operands (lhs "transposed"): (3x2) . (3x4) -> 2x4.
//    What surprises people: no transpose op is needed; the contracting dims say it.
func.func @main(%arg0: tensor<2x2x3xf32>, %arg1: tensor<2x3x2xf32>, %arg2: tensor<3x2xf32>, %arg3: tensor<3x4xf32>) -> (tensor<2x2x2xf32>, tensor<2x4xf32>) {
  %0 = stablehlo.dot_general %arg0, %arg1, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<2x2x3xf32>, tensor<2x3x2xf32>) -> tensor<2x2x2xf32>
  %1 = stablehlo.dot_general %arg2, %arg3, contracting_dims = [0] x [0] : (tensor<3x2xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  return %0, %1 : tensor<2x2x2xf32>, tensor<2x4xf32>
}
