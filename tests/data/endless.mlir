// A loop that never ends: the debugger must stay responsive and interruptible.
func.func @main(%x: tensor<f32>) -> tensor<f32> {
  %r = stablehlo.while(%v = %x) : tensor<f32>
    cond {
      %t = stablehlo.constant dense<true> : tensor<i1>
      stablehlo.return %t : tensor<i1>
    } do {
      %one = stablehlo.constant dense<1.0> : tensor<f32>
      %next = stablehlo.add %v, %one : tensor<f32>
      stablehlo.return %next : tensor<f32>
    }
  return %r : tensor<f32>
}
