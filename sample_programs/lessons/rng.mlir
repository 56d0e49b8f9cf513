// Lesson: random numbers. StableHLO has no hidden random state: rng_bit_generator takes a
// state (a key) and returns a NEW state together with the random bits.
//
// What to look at:
//  * %0 uses the THREE_FRY algorithm (what JAX uses): the same %arg0 always gives the same bits,
//    on every run and every machine. The bits' shape comes from the result type (2x3 of ui32),
//    not from an operand.
//  * %1 feeds the new state %0#0 back in: the next draw. What surprises people: a loop that
//    passes the OLD state again draws the very same numbers every iteration.
//  * %2 turns bits into floats in [1, 2): keep 23 random mantissa bits (shift right by 9) under
//    the exponent of 1.0 (0x3F800000), then bitcast. Subtract 1 for [0, 1).
func.func @main(%arg0: tensor<2xui64>) -> (tensor<2x3xui32>, tensor<2x3xui32>, tensor<2x3xf32>) {
  %0:2 = stablehlo.rng_bit_generator %arg0, algorithm = THREE_FRY : (tensor<2xui64>) -> (tensor<2xui64>, tensor<2x3xui32>)
  %1:2 = stablehlo.rng_bit_generator %0#0, algorithm = THREE_FRY : (tensor<2xui64>) -> (tensor<2xui64>, tensor<2x3xui32>)
  %nine = stablehlo.constant dense<9> : tensor<2x3xui32>
  %mantissa = stablehlo.shift_right_logical %0#1, %nine : tensor<2x3xui32>
  %one = stablehlo.constant dense<1065353216> : tensor<2x3xui32>
  %bits = stablehlo.or %mantissa, %one : tensor<2x3xui32>
  %2 = stablehlo.bitcast_convert %bits : (tensor<2x3xui32>) -> tensor<2x3xf32>
  return %0#1, %1#1, %2 : tensor<2x3xui32>, tensor<2x3xui32>, tensor<2x3xf32>
}
