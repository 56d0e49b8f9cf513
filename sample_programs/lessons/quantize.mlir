// Lesson: uniform_quantize and uniform_dequantize. The type !quant.uniform<i8:f32, 0.5:-1> says:
// stored as i8, meaning f32, scale 0.5, zero point -1. real = (stored - zero_point) * scale.
//
// What to look at:
//  * %0 quantizes: stored = round_half_even(x / 0.5 + (-1)), clamped to the i8 range [-128, 127].
//    The zero point is added BEFORE rounding (StableHLO spec, uniform_quantize).
//  * %1 dequantizes back: (stored + 1) * 0.5. Compare %1 with %arg0: the round trip loses
//    what falls between steps of 0.5.
//  * What surprises people, 1: 0.75 / 0.5 - 1 = 0.5 rounds to 0 (half to EVEN), so 0.75 comes
//    back as 0.5; and 0.25 / 0.5 - 1 = -0.5 rounds to 0 as well: two inputs, one stored value.
//  * What surprises people, 2: 100 / 0.5 = 200, minus 1, does not fit in i8: it saturates at 127, and
//    comes back as 64, not 100.
func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.uniform_quantize %arg0 : (tensor<4xf32>) -> tensor<4x!quant.uniform<i8:f32, 5.000000e-01:-1>>
  %1 = stablehlo.uniform_dequantize %0 : (tensor<4x!quant.uniform<i8:f32, 5.000000e-01:-1>>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}
