// Verifier constraint tables: constants and generators (see tests/test_verifier_constraints.py).
// Spec: docs/spec.md of openxla/stablehlo. All numbered constraints of constant, iota,
// dynamic_iota, rng and rng_bit_generator are decidable from types and attributes, except
// rng_bit_generator C2 for rng_algorithm = DEFAULT (its state size is implementation-defined).

// -----

// expect-ok
func.func @main(%s: tensor<2xui64>, %shape: tensor<2xi64>) -> (tensor<2xui64>, tensor<2x2xui32>, tensor<3x4xf32>, tensor<?x?xi32>, tensor<3x3xf32>) {
  %0 = stablehlo.iota dim = 1 : tensor<3x4xf32>
  %c = stablehlo.constant dense<[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0], [9.0, 10.0, 11.0, 12.0]]> : tensor<3x4xf32>
  %1 = stablehlo.add %0, %c : tensor<3x4xf32>
  %output_state, %output = stablehlo.rng_bit_generator %s, algorithm = THREE_FRY : (tensor<2xui64>) -> (tensor<2xui64>, tensor<2x2xui32>)
  %2 = stablehlo.dynamic_iota %shape, dim = 0 : (tensor<2xi64>) -> tensor<?x?xi32>
  %a = stablehlo.constant dense<0.0> : tensor<f32>
  %b = stablehlo.constant dense<1.0> : tensor<f32>
  %k = stablehlo.constant dense<3> : tensor<2xi64>
  %3 = stablehlo.rng %a, %b, %k, distribution = NORMAL : (tensor<f32>, tensor<f32>, tensor<2xi64>) -> tensor<3x3xf32>
  return %output_state, %output, %1, %2, %3 : tensor<2xui64>, tensor<2x2xui32>, tensor<3x4xf32>, tensor<?x?xi32>, tensor<3x3xf32>
}

// -----

// expect-error: stablehlo.constant C1
// C1: type(value) = type(output).
func.func @main() -> tensor<3xf32> {
  %0 = "stablehlo.constant"() {value = dense<[1.0, 2.0]> : tensor<2xf32>} : () -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// expect-error: stablehlo.iota C1
// C1: 0 <= iota_dimension < rank(output).
func.func @main() -> tensor<3x4xf32> {
  %0 = stablehlo.iota dim = 2 : tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

// expect-error: stablehlo.iota O1
// O1: the output is a tensor of integer, floating-point or complex type (or per-tensor quantized).
func.func @main() -> tensor<4xi1> {
  %0 = stablehlo.iota dim = 0 : tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

// expect-error: stablehlo.dynamic_iota C1
// C1: 0 <= iota_dimension < size(output_shape).
func.func @main(%shape: tensor<2xi64>) -> tensor<?x?xi32> {
  %0 = stablehlo.dynamic_iota %shape, dim = 2 : (tensor<2xi64>) -> tensor<?x?xi32>
  return %0 : tensor<?x?xi32>
}

// -----

// expect-error: stablehlo.dynamic_iota C2
// C2: rank(result) = size(output_shape).
func.func @main(%shape: tensor<2xi64>) -> tensor<?xi32> {
  %0 = stablehlo.dynamic_iota %shape, dim = 0 : (tensor<2xi64>) -> tensor<?xi32>
  return %0 : tensor<?xi32>
}

// -----

// expect-error: stablehlo.rng C1
// C1: element_type(a) = element_type(b) = element_type(result).
func.func @main(%a: tensor<f32>, %b: tensor<f64>, %k: tensor<1xi64>) -> tensor<3xf32> {
  %0 = stablehlo.rng %a, %b, %k, distribution = UNIFORM : (tensor<f32>, tensor<f64>, tensor<1xi64>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// expect-error: stablehlo.rng C2
// C2: rng_distribution = NORMAL needs floating-point a, b and result.
func.func @main(%a: tensor<i32>, %b: tensor<i32>, %k: tensor<1xi64>) -> tensor<3xi32> {
  %0 = stablehlo.rng %a, %b, %k, distribution = NORMAL : (tensor<i32>, tensor<i32>, tensor<1xi64>) -> tensor<3xi32>
  return %0 : tensor<3xi32>
}

// -----

// expect-error: stablehlo.rng C3
// C3: shape(result) = shape; the 2-entry shape cannot describe a rank-1 result.
func.func @main(%a: tensor<f32>, %b: tensor<f32>, %k: tensor<2xi64>) -> tensor<3xf32> {
  %0 = stablehlo.rng %a, %b, %k, distribution = UNIFORM : (tensor<f32>, tensor<f32>, tensor<2xi64>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// expect-error: stablehlo.rng I1
// I1: a is a 0-dimensional tensor.
func.func @main(%a: tensor<1xf32>, %b: tensor<f32>, %k: tensor<1xi64>) -> tensor<3xf32> {
  %0 = "stablehlo.rng"(%a, %b, %k) {rng_distribution = #stablehlo<rng_distribution UNIFORM>} : (tensor<1xf32>, tensor<f32>, tensor<1xi64>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// expect-error: stablehlo.rng_bit_generator C1
// C1: type(initial_state) = type(output_state).
func.func @main(%s: tensor<2xui64>) -> (tensor<3xui64>, tensor<4xui32>) {
  %0, %1 = "stablehlo.rng_bit_generator"(%s) {rng_algorithm = #stablehlo<rng_algorithm THREE_FRY>} : (tensor<2xui64>) -> (tensor<3xui64>, tensor<4xui32>)
  return %0, %1 : tensor<3xui64>, tensor<4xui32>
}

// -----

// expect-error: stablehlo.rng_bit_generator C2
// C2: THREE_FRY has a state of 2 elements.
func.func @main(%s: tensor<3xui64>) -> (tensor<3xui64>, tensor<4xui32>) {
  %0, %1 = "stablehlo.rng_bit_generator"(%s) {rng_algorithm = #stablehlo<rng_algorithm THREE_FRY>} : (tensor<3xui64>) -> (tensor<3xui64>, tensor<4xui32>)
  return %0, %1 : tensor<3xui64>, tensor<4xui32>
}

// -----

// expect-error: stablehlo.rng_bit_generator I2
// I2: initial_state is a 1-dimensional tensor.
func.func @main(%s: tensor<2x1xui64>) -> (tensor<2x1xui64>, tensor<4xui32>) {
  %0, %1 = "stablehlo.rng_bit_generator"(%s) {rng_algorithm = #stablehlo<rng_algorithm DEFAULT>} : (tensor<2x1xui64>) -> (tensor<2x1xui64>, tensor<4xui32>)
  return %0, %1 : tensor<2x1xui64>, tensor<4xui32>
}

// -----

// expect-error: stablehlo.rng_bit_generator O2
// O2: output is a tensor of integer or floating-point type.
func.func @main(%s: tensor<2xui64>) -> (tensor<2xui64>, tensor<4xi1>) {
  %0, %1 = "stablehlo.rng_bit_generator"(%s) {rng_algorithm = #stablehlo<rng_algorithm PHILOX>} : (tensor<2xui64>) -> (tensor<2xui64>, tensor<4xi1>)
  return %0, %1 : tensor<2xui64>, tensor<4xi1>
}

// -----

// expect-error: stablehlo.rng I2
// I2: b is a 0-dimensional tensor of integer, boolean or floating-point type.
func.func @main(%a: tensor<f32>, %b: tensor<complex<f32>>, %k: tensor<1xi64>) -> tensor<3xf32> {
  %0 = "stablehlo.rng"(%a, %b, %k) {rng_distribution = #stablehlo<rng_distribution UNIFORM>} : (tensor<f32>, tensor<complex<f32>>, tensor<1xi64>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// expect-error: stablehlo.dynamic_iota O1
// O1: the result is a tensor of integer, floating-point or complex type (or per-tensor quantized).
func.func @main(%shape: tensor<1xi64>) -> tensor<?xi1> {
  %0 = stablehlo.dynamic_iota %shape, dim = 0 : (tensor<1xi64>) -> tensor<?xi1>
  return %0 : tensor<?xi1>
}

// -----

// expect-error: stablehlo.rng I3
// shape is a 1-dimensional tensor (Inputs table).
func.func @rng_shape_matrix(%a: tensor<f32>, %b: tensor<f32>) -> tensor<2x3x5xf32> {
  %shape = stablehlo.constant dense<[[2, 3, 5]]> : tensor<1x3xi64>
  %0 = "stablehlo.rng"(%a, %b, %shape) {rng_distribution = #stablehlo<rng_distribution NORMAL>} : (tensor<f32>, tensor<f32>, tensor<1x3xi64>) -> tensor<2x3x5xf32>
  func.return %0 : tensor<2x3x5xf32>
}

// -----

// expect-error: stablehlo.rng C3
// C3: shape(result) = shape; a constant shape operand makes it decidable before the run.
func.func @rng_shape_constant(%a: tensor<f32>, %b: tensor<f32>) -> tensor<12xf32> {
  %shape = stablehlo.constant dense<7> : tensor<1xi64>
  %0 = "stablehlo.rng"(%a, %b, %shape) {rng_distribution = #stablehlo<rng_distribution NORMAL>} : (tensor<f32>, tensor<f32>, tensor<1xi64>) -> tensor<12xf32>
  func.return %0 : tensor<12xf32>
}
