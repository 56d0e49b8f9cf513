// Lesson: reduce_window: reduce every window of a sliding window (max pooling, sum pooling).
//
// What to look at:
//  * window_dimensions = [2, 2]: each window covers 2 rows and 2 columns.
//  * window_strides = [2, 1]: the window jumps 2 rows but moves 1 column at a time.
//  * padding = [[0, 0], [1, 0]]: one column of padding (the init value, -inf) on the left.
//    Shape: rows (4 - 2) / 2 + 1 = 2; columns (1 + 3 - 2) / 1 + 1 = 3.
//  * What surprises people: in column 0 of the result the window is half padding, so only one
//    real column of %arg0 takes part.
func.func @main(%arg0: tensor<4x3xf32>) -> tensor<2x3xf32> {
  %cst = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %0 = "stablehlo.reduce_window"(%arg0, %cst) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %m = stablehlo.maximum %a, %b : tensor<f32>
    stablehlo.return %m : tensor<f32>
  }) {padding = dense<[[0, 0], [1, 0]]> : tensor<2x2xi64>, window_dimensions = array<i64: 2, 2>, window_strides = array<i64: 2, 1>} : (tensor<4x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
