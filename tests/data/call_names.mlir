// The callee reuses the caller's value names with other types (%1 is 2xf32 in @half, 4xf32 in
// @main): after stepping over the call the values pane names values as @main sees them.
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %n = stablehlo.negate %x : tensor<4xf32>
  %0 = func.call @half(%n) : (tensor<4xf32>) -> tensor<2xf32>
  %1 = stablehlo.concatenate %0, %0, dim = 0 : (tensor<2xf32>, tensor<2xf32>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}

func.func private @half(%a: tensor<4xf32>) -> tensor<2xf32> {
  %0 = stablehlo.compare GT, %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %s = stablehlo.select %0, %a, %a : tensor<4xi1>, tensor<4xf32>
  %1 = stablehlo.slice %s [0:2] : (tensor<4xf32>) -> tensor<2xf32>
  return %1 : tensor<2xf32>
}
