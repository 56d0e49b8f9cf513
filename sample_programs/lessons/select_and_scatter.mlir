// Lesson: select_and_scatter: the gradient of max pooling. For each window of %arg0, `select`
// picks one element (here the largest: GE keeps the first of equals); the matching element of
// %arg1 (one per window) is added, with `scatter`, to the result at the picked position.
// Positions no window picks keep the init value (0).
//
// What to look at:
//  * %0: 2x2 windows with stride 2 on a 4x4 operand: 4 windows, no overlap, %arg1 is 2x2.
//  * %1: 2x2 windows with stride 1 on a 3x3 operand: 4 windows that overlap. What surprises
//    people: the largest element sits in the middle, every window picks it, and it receives
//    the SUM of all four source values.
func.func @main(%arg0: tensor<4x4xf32>, %arg1: tensor<2x2xf32>, %arg2: tensor<3x3xf32>) -> (tensor<4x4xf32>, tensor<3x3xf32>) {
  %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %0 = "stablehlo.select_and_scatter"(%arg0, %arg1, %cst) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %ge = stablehlo.compare GE, %a, %b, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %ge : tensor<i1>
  }, {
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %sum = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %sum : tensor<f32>
  }) {window_dimensions = array<i64: 2, 2>, window_strides = array<i64: 2, 2>} : (tensor<4x4xf32>, tensor<2x2xf32>, tensor<f32>) -> tensor<4x4xf32>
  %1 = "stablehlo.select_and_scatter"(%arg2, %arg1, %cst) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %ge = stablehlo.compare GE, %a, %b, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %ge : tensor<i1>
  }, {
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %sum = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %sum : tensor<f32>
  }) {window_dimensions = array<i64: 2, 2>, window_strides = array<i64: 1, 1>} : (tensor<3x3xf32>, tensor<2x2xf32>, tensor<f32>) -> tensor<3x3xf32>
  return %0, %1 : tensor<4x4xf32>, tensor<3x3xf32>
}
