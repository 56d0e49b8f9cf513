// Lesson: slice, pad, concatenate, reverse: cutting, spacing, joining and flipping.
//
// What to look at:
//  * %0 slice [1:3, 0:4:2]: rows 1 and 2, columns 0 and 2 (stride 2). Limits are exclusive.
//    %0[i,j] = %arg0[1 + i, 0 + 2*j].
//  * %1 pad with low = [1], high = [-1], interior = [1]: one padding value before, one between
//    neighbours, and a NEGATIVE high padding that cuts the last element off. 4 elements become
//    1 + 4 + 3 - 1 = 7. What surprises people: negative padding removes operand elements.
//  * %2 concatenate along dim 0: %arg2 is appended below %0.
//  * %3 reverse along dim 0: %3[i,j] = %2[2 - i, j].
func.func @main(%arg0: tensor<3x4xf32>, %arg1: tensor<4xf32>, %arg2: tensor<1x2xf32>) -> (tensor<7xf32>, tensor<3x2xf32>) {
  %0 = stablehlo.slice %arg0 [1:3, 0:4:2] : (tensor<3x4xf32>) -> tensor<2x2xf32>
  %cst = stablehlo.constant dense<-1.000000e+00> : tensor<f32>
  %1 = stablehlo.pad %arg1, %cst, low = [1], high = [-1], interior = [1] : (tensor<4xf32>, tensor<f32>) -> tensor<7xf32>
  %2 = stablehlo.concatenate %0, %arg2, dim = 0 : (tensor<2x2xf32>, tensor<1x2xf32>) -> tensor<3x2xf32>
  %3 = stablehlo.reverse %2, dims = [0] : tensor<3x2xf32>
  return %1, %3 : tensor<7xf32>, tensor<3x2xf32>
}
