// A reduce along one axis: stepping into its body replays it on whole arrays (32 pairs at once).
func.func @main(%x: tensor<32x32xf32>) -> tensor<32xf32> {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %sum = stablehlo.reduce(%x init: %zero) applies stablehlo.add across dimensions = [0] : (tensor<32x32xf32>, tensor<f32>) -> tensor<32xf32>
  return %sum : tensor<32xf32>
}
