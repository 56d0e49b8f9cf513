// Lesson: XLA broadcasting (chlo.broadcast_*). StableHLO's own add needs operands of one shape;
// chlo's broadcast_* ops (what XLA's client builders produce) stretch the smaller operand first.
//
// What to look at:
//  * %0: no broadcast_dimensions, so numpy's rule: the 3-vector lines up with the LAST dimension
//    of the 2x3 matrix. %0[i,j] = %arg0[i,j] + %arg1[j].
//  * %1: broadcast_dimensions = [0] says "the 2-vector is dimension 0 of the result":
//    %1[i,j] = %arg0[i,j] * %arg2[i]. Without it a 2-vector could not pair with 3 columns.
//  * %2: degenerate (size 1) dimensions stretch: 2x1 and 1x3 give 2x3.
//    What surprises people: neither operand has the result's shape, yet it is fine.
//    %2[i,j] = %arg3[i,0] - %arg4[0,j].
func.func @main(%arg0: tensor<2x3xf32>, %arg1: tensor<3xf32>, %arg2: tensor<2xf32>, %arg3: tensor<2x1xf32>, %arg4: tensor<1x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  %0 = chlo.broadcast_add %arg0, %arg1 : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %1 = chlo.broadcast_multiply %arg0, %arg2 {broadcast_dimensions = array<i64: 0>} : (tensor<2x3xf32>, tensor<2xf32>) -> tensor<2x3xf32>
  %2 = chlo.broadcast_subtract %arg3, %arg4 : (tensor<2x1xf32>, tensor<1x3xf32>) -> tensor<2x3xf32>
  return %0, %1, %2 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}
