// A 3-D tensor for the inspector: iota over a 4x5x6 cube, scaled, then summed over its last axis.
func.func @main(%scale: tensor<f32>) -> tensor<4x5xf32> {
  %i = stablehlo.iota dim = 2 : tensor<4x5x6xf32>
  %j = stablehlo.iota dim = 0 : tensor<4x5x6xf32>
  %s = stablehlo.broadcast_in_dim %scale, dims = [] : (tensor<f32>) -> tensor<4x5x6xf32>
  %a = stablehlo.add %i, %j : tensor<4x5x6xf32>
  %cube = stablehlo.multiply %a, %s : tensor<4x5x6xf32>
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %sum = stablehlo.reduce(%cube init: %zero) applies stablehlo.add across dimensions = [2] : (tensor<4x5x6xf32>, tensor<f32>) -> tensor<4x5xf32>
  return %sum : tensor<4x5xf32>
}
