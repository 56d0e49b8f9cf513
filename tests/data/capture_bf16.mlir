// A bf16 product converted straight to f32: XLA on the CPU keeps the f32 value it computed the
// product in (excess precision), so a capture of it differs from the StableHLO semantics.
func.func @main(%x: tensor<8xf32>) -> tensor<8xf32> {
  %b = stablehlo.convert %x : (tensor<8xf32>) -> tensor<8xbf16>
  %third = stablehlo.constant dense<0.333> : tensor<8xbf16>
  %p = stablehlo.multiply %b, %third : tensor<8xbf16>
  %wide = stablehlo.convert %p : (tensor<8xbf16>) -> tensor<8xf32>
  return %wide : tensor<8xf32>
}
