// Lesson: dynamic_slice and dynamic_update_slice: a slice whose start is a runtime value.
//
// What to look at:
//  * %0 cuts a 2x2 block starting at (%arg1, %arg2) = (3, 1). What surprises people: a start
//    that would run off the end is clamped so the block fits: row 3 becomes 4 - 2 = 2.
//    So %0[0,0] is %arg0[2,1], not %arg0[3,1].
//  * %1 writes the 1x3 %arg3 into a copy of %arg0 at (%arg1, %arg4) = (3, 2). Column 2 + 3
//    would pass the edge, so the start column is clamped to 4 - 3 = 1. Everything outside the
//    written block is %arg0 unchanged.
func.func @main(%arg0: tensor<4x4xf32>, %arg1: tensor<i32>, %arg2: tensor<i32>, %arg3: tensor<1x3xf32>, %arg4: tensor<i32>) -> (tensor<2x2xf32>, tensor<4x4xf32>) {
  %0 = stablehlo.dynamic_slice %arg0, %arg1, %arg2, sizes = [2, 2] : (tensor<4x4xf32>, tensor<i32>, tensor<i32>) -> tensor<2x2xf32>
  %1 = stablehlo.dynamic_update_slice %arg0, %arg3, %arg1, %arg4 : (tensor<4x4xf32>, tensor<1x3xf32>, tensor<i32>, tensor<i32>) -> tensor<4x4xf32>
  return %0, %1 : tensor<2x2xf32>, tensor<4x4xf32>
}
