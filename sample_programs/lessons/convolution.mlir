// Lesson: convolution. dim_numbers name each dimension: b (batch), f (feature), 0/1 (spatial);
// for the kernel i (input feature), o (output feature).
//
// What to look at:
//  * %0: a 2x2 kernel slides over a 4x4 image with stride 1 and no padding: 3x3 positions.
//    %0[0,y,x,0] = sum over dy,dx of %arg0[0, y+dy, x+dx, 0] * %arg1[dy, dx, 0, 0].
//    (Like all ML frameworks, this is cross-correlation: the kernel is not flipped.)
//  * %1: stride 2 and one row/column of zero padding before and after: the padded image is 6x6,
//    positions (6 - 2) / 2 + 1 = 3 per dimension. What surprises people: at the corner
//    only ONE real image element is under the kernel; the other three are padding.
func.func @main(%arg0: tensor<1x4x4x1xf32>, %arg1: tensor<2x2x1x1xf32>) -> (tensor<1x3x3x1xf32>, tensor<1x3x3x1xf32>) {
  %0 = stablehlo.convolution(%arg0, %arg1) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [1, 1], pad = [[0, 0], [0, 0]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x1xf32>, tensor<2x2x1x1xf32>) -> tensor<1x3x3x1xf32>
  %1 = stablehlo.convolution(%arg0, %arg1) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [2, 2], pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x1xf32>, tensor<2x2x1x1xf32>) -> tensor<1x3x3x1xf32>
  return %0, %1 : tensor<1x3x3x1xf32>, tensor<1x3x3x1xf32>
}
