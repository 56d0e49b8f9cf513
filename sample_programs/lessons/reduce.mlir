// Lesson: reduce: combine all elements along some dimensions into one, starting from an init value.
//
// What to look at:
//  * %0 sums across dimension 1 (the columns): %0[i] = init + %arg0[i,0] + %arg0[i,1] + %arg0[i,2].
//    The reduced dimension disappears from the shape: 2x3 -> 2.
//  * What surprises people: the init value takes part in EVERY result element. Here it is 1.0,
//    not 0.0, so every sum is one too big. (JAX always uses the identity: 0 for add, -inf for max.)
//  * %1 takes the maximum across dimension 0 (the rows), starting from -inf: 2x3 -> 3.
func.func @main(%arg0: tensor<2x3xf32>) -> (tensor<2xf32>, tensor<3xf32>) {
  %cst = stablehlo.constant dense<1.000000e+00> : tensor<f32>
  %0 = stablehlo.reduce(%arg0 init: %cst) applies stablehlo.add across dimensions = [1] : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>
  %cst_0 = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %1 = stablehlo.reduce(%arg0 init: %cst_0) applies stablehlo.maximum across dimensions = [0] : (tensor<2x3xf32>, tensor<f32>) -> tensor<3xf32>
  return %0, %1 : tensor<2xf32>, tensor<3xf32>
}
