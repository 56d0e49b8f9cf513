// A reduce whose body ops the run does not stop at, and a clamp with scalar bounds (tests/test_explain.py).
func.func @main(%x: tensor<2x3xf32>) -> tensor<2xf32> {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %sum = stablehlo.reduce(%x init: %zero) across dimensions = [1] : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>
   reducer(%a: tensor<f32>, %b: tensor<f32>) {
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }
  %c = stablehlo.clamp %zero, %x, %zero : (tensor<f32>, tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  return %sum : tensor<2xf32>
}
