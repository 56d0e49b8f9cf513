// Verifier constraint tables: element-wise ops (see tests/test_verifier_constraints.py for the format).
// Spec: docs/spec.md of openxla/stablehlo. Every numbered constraint of these ops is decidable from
// the types and attributes alone, so each has a program below; the Ix/Ox labels are the spec's
// Inputs/Outputs table rows (element type categories, attribute types).
// Not here: the quantized rules of add (C2-C7) and per-axis operands are in quantization.mlir.

// -----

// expect-ok
func.func @main(%x: tensor<2xf32>, %y: tensor<2xf32>, %i: tensor<2xi32>) -> (tensor<2xf32>, tensor<2xi1>) {
  %0 = stablehlo.exponential %x {result_accuracy = #stablehlo.result_accuracy<atol = 1.000000e-05, rtol = 0.000000e+00, ulps = 2, mode = #stablehlo.result_accuracy_mode<TOLERANCE>>} : tensor<2xf32>
  %1 = stablehlo.reduce_precision %0, format = e5m10 : tensor<2xf32>
  %2 = stablehlo.atan2 %1, %y : tensor<2xf32>
  %3 = stablehlo.compare  LT, %2, %y,  TOTALORDER : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xi1>
  %4 = stablehlo.select %3, %2, %y : tensor<2xi1>, tensor<2xf32>
  %5 = stablehlo.popcnt %i : tensor<2xi32>
  %6 = stablehlo.compare  EQ, %5, %i,  SIGNED : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi1>
  %7 = stablehlo.and %3, %6 : tensor<2xi1>
  return %4, %7 : tensor<2xf32>, tensor<2xi1>
}

// -----

// expect-ok
func.func @main(%c: tensor<3xcomplex<f64>>, %lo: tensor<f64>, %hi: tensor<f64>) -> tensor<3xf64> {
  %0 = stablehlo.abs %c : (tensor<3xcomplex<f64>>) -> tensor<3xf64>
  %1 = stablehlo.real %c : (tensor<3xcomplex<f64>>) -> tensor<3xf64>
  %2 = stablehlo.clamp %lo, %1, %hi : (tensor<f64>, tensor<3xf64>, tensor<f64>) -> tensor<3xf64>
  %3 = "stablehlo.map"(%0, %2) ({
  ^bb0(%a: tensor<f64>, %b: tensor<f64>):
    %4 = stablehlo.maximum %a, %b : tensor<f64>
    stablehlo.return %4 : tensor<f64>
  }) {dimensions = array<i64: 0>} : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
  return %3 : tensor<3xf64>
}

// -----

// expect-error: stablehlo.compare C1
// C1: baseline_element_type(lhs) = baseline_element_type(rhs).
func.func @main(%a: tensor<2xf32>, %b: tensor<2xf64>) -> tensor<2xi1> {
  %0 = stablehlo.compare  LT, %a, %b : (tensor<2xf32>, tensor<2xf64>) -> tensor<2xi1>
  return %0 : tensor<2xi1>
}

// -----

// expect-error: stablehlo.compare C2
// C2: shape(lhs) = shape(rhs) = shape(result).
func.func @main(%a: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<3xi1> {
  %0 = stablehlo.compare  LT, %a, %b : (tensor<2xf32>, tensor<2xf32>) -> tensor<3xi1>
  return %0 : tensor<3xi1>
}

// -----

// expect-error: stablehlo.compare C3
// C3: an unsigned integer element type is compared with compare_type UNSIGNED.
func.func @main(%a: tensor<2xui32>, %b: tensor<2xui32>) -> tensor<2xi1> {
  %0 = stablehlo.compare  LT, %a, %b,  SIGNED : (tensor<2xui32>, tensor<2xui32>) -> tensor<2xi1>
  return %0 : tensor<2xi1>
}

// -----

// expect-error: stablehlo.compare O1
// O1: the result is a tensor of boolean type.
func.func @main(%a: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<2xi8> {
  %0 = "stablehlo.compare"(%a, %b) {comparison_direction = #stablehlo<comparison_direction LT>} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xi8>
  return %0 : tensor<2xi8>
}

// -----

// expect-error: stablehlo.select C1
// C1: rank(pred) = 0 or shape(pred) = shape(on_true).
func.func @main(%p: tensor<3xi1>, %a: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.select %p, %a, %b : (tensor<3xi1>, tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// expect-error: stablehlo.select C2
// C2: baseline_type(on_true) = baseline_type(on_false) = baseline_type(result).
func.func @main(%p: tensor<i1>, %a: tensor<2xf32>, %b: tensor<2xf16>) -> tensor<2xf32> {
  %0 = stablehlo.select %p, %a, %b : (tensor<i1>, tensor<2xf32>, tensor<2xf16>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// expect-error: stablehlo.select I1
// I1: pred is a tensor of type i1.
func.func @main(%p: tensor<i32>, %a: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.select %p, %a, %b : (tensor<i32>, tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// expect-error: stablehlo.clamp C1
// C1: rank(min) = 0 or shape(min) = shape(operand).
func.func @main(%lo: tensor<2xf32>, %x: tensor<3xf32>, %hi: tensor<f32>) -> tensor<3xf32> {
  %0 = stablehlo.clamp %lo, %x, %hi : (tensor<2xf32>, tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// expect-error: stablehlo.clamp C2
// C2: rank(max) = 0 or shape(max) = shape(operand).
func.func @main(%lo: tensor<f32>, %x: tensor<3xf32>, %hi: tensor<1xf32>) -> tensor<3xf32> {
  %0 = stablehlo.clamp %lo, %x, %hi : (tensor<f32>, tensor<3xf32>, tensor<1xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// expect-error: stablehlo.clamp C3
// C3: min, operand and max have the same baseline element type.
func.func @main(%lo: tensor<i32>, %x: tensor<3xf32>, %hi: tensor<f32>) -> tensor<3xf32> {
  %0 = stablehlo.clamp %lo, %x, %hi : (tensor<i32>, tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// expect-error: stablehlo.clamp C4
// C4: baseline_type(operand) = baseline_type(result).
func.func @main(%lo: tensor<f32>, %x: tensor<3xf32>, %hi: tensor<f32>) -> tensor<3xf64> {
  %0 = stablehlo.clamp %lo, %x, %hi : (tensor<f32>, tensor<3xf32>, tensor<f32>) -> tensor<3xf64>
  return %0 : tensor<3xf64>
}

// -----

// expect-error: stablehlo.map C1
// C1: shape(inputs...) = shape(result).
func.func @main(%a: tensor<2xf32>, %b: tensor<3xf32>) -> tensor<2xf32> {
  %0 = "stablehlo.map"(%a, %b) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %1 = stablehlo.add %x, %y : tensor<f32>
    stablehlo.return %1 : tensor<f32>
  }) {dimensions = array<i64: 0>} : (tensor<2xf32>, tensor<3xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// expect-error: stablehlo.map C2
// C2: 0 < size(inputs).
func.func @main() -> tensor<f32> {
  %0 = "stablehlo.map"() ({
  ^bb0:
    %1 = stablehlo.constant dense<1.0> : tensor<f32>
    stablehlo.return %1 : tensor<f32>
  }) {dimensions = array<i64>} : () -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// expect-error: stablehlo.map C3
// C3: dimensions = range(rank(inputs[0])).
func.func @main(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = "stablehlo.map"(%a) ({
  ^bb0(%x: tensor<f32>):
    stablehlo.return %x : tensor<f32>
  }) {dimensions = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// expect-error: stablehlo.map C4
// C4: computation has type (tensor<E0>) -> tensor<E'>; it takes tensor<i32> for f32 inputs.
func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "stablehlo.map"(%a) ({
  ^bb0(%x: tensor<i32>):
    %1 = stablehlo.convert %x : (tensor<i32>) -> tensor<f32>
    stablehlo.return %1 : tensor<f32>
  }) {dimensions = array<i64: 0>} : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// expect-error: stablehlo.cbrt C1
// C1: baseline_type(operand) = baseline_type(result); the element types differ.
func.func @main(%x: tensor<2xf32>) -> tensor<2xf64> {
  %0 = "stablehlo.cbrt"(%x) : (tensor<2xf32>) -> tensor<2xf64>
  return %0 : tensor<2xf64>
}

// -----

// expect-error: stablehlo.cbrt I1
// I1: the operand is a tensor of floating-point or complex type (or per-tensor quantized).
func.func @main(%x: tensor<2xi32>) -> tensor<2xi32> {
  %0 = "stablehlo.cbrt"(%x) : (tensor<2xi32>) -> tensor<2xi32>
  return %0 : tensor<2xi32>
}

// -----

// expect-error: stablehlo.cbrt I2
// I2 result_accuracy: mode HIGHEST asks for the most accurate result, so its tolerances must be zero
// (the StableHLO C++ verifier's rule; the spec types the attribute in its Inputs table).
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "stablehlo.cbrt"(%x) {result_accuracy = #stablehlo.result_accuracy<atol = 1.000000e-05, rtol = 0.000000e+00, ulps = 0, mode = #stablehlo.result_accuracy_mode<HIGHEST>>} : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// expect-error: stablehlo.cosine C1
// C1: baseline_type(operand) = baseline_type(result); the element types differ.
func.func @main(%x: tensor<2xf32>) -> tensor<2xf64> {
  %0 = "stablehlo.cosine"(%x) : (tensor<2xf32>) -> tensor<2xf64>
  return %0 : tensor<2xf64>
}

// -----

// expect-error: stablehlo.cosine I1
// I1: the operand is a tensor of floating-point or complex type (or per-tensor quantized).
func.func @main(%x: tensor<2xi32>) -> tensor<2xi32> {
  %0 = "stablehlo.cosine"(%x) : (tensor<2xi32>) -> tensor<2xi32>
  return %0 : tensor<2xi32>
}

// -----

// expect-error: stablehlo.cosine I2
// I2 result_accuracy: mode HIGHEST asks for the most accurate result, so its tolerances must be zero
// (the StableHLO C++ verifier's rule; the spec types the attribute in its Inputs table).
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "stablehlo.cosine"(%x) {result_accuracy = #stablehlo.result_accuracy<atol = 1.000000e-05, rtol = 0.000000e+00, ulps = 0, mode = #stablehlo.result_accuracy_mode<HIGHEST>>} : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// expect-error: stablehlo.exponential C1
// C1: baseline_type(operand) = baseline_type(result); the element types differ.
func.func @main(%x: tensor<2xf32>) -> tensor<2xf64> {
  %0 = "stablehlo.exponential"(%x) : (tensor<2xf32>) -> tensor<2xf64>
  return %0 : tensor<2xf64>
}

// -----

// expect-error: stablehlo.exponential I1
// I1: the operand is a tensor of floating-point or complex type (or per-tensor quantized).
func.func @main(%x: tensor<2xi32>) -> tensor<2xi32> {
  %0 = "stablehlo.exponential"(%x) : (tensor<2xi32>) -> tensor<2xi32>
  return %0 : tensor<2xi32>
}

// -----

// expect-error: stablehlo.exponential I2
// I2 result_accuracy: mode HIGHEST asks for the most accurate result, so its tolerances must be zero
// (the StableHLO C++ verifier's rule; the spec types the attribute in its Inputs table).
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "stablehlo.exponential"(%x) {result_accuracy = #stablehlo.result_accuracy<atol = 1.000000e-05, rtol = 0.000000e+00, ulps = 0, mode = #stablehlo.result_accuracy_mode<HIGHEST>>} : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// expect-error: stablehlo.exponential_minus_one C1
// C1: baseline_type(operand) = baseline_type(result); the element types differ.
func.func @main(%x: tensor<2xf32>) -> tensor<2xf64> {
  %0 = "stablehlo.exponential_minus_one"(%x) : (tensor<2xf32>) -> tensor<2xf64>
  return %0 : tensor<2xf64>
}

// -----

// expect-error: stablehlo.exponential_minus_one I1
// I1: the operand is a tensor of floating-point or complex type (or per-tensor quantized).
func.func @main(%x: tensor<2xi32>) -> tensor<2xi32> {
  %0 = "stablehlo.exponential_minus_one"(%x) : (tensor<2xi32>) -> tensor<2xi32>
  return %0 : tensor<2xi32>
}

// -----

// expect-error: stablehlo.exponential_minus_one I2
// I2 result_accuracy: mode HIGHEST asks for the most accurate result, so its tolerances must be zero
// (the StableHLO C++ verifier's rule; the spec types the attribute in its Inputs table).
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "stablehlo.exponential_minus_one"(%x) {result_accuracy = #stablehlo.result_accuracy<atol = 1.000000e-05, rtol = 0.000000e+00, ulps = 0, mode = #stablehlo.result_accuracy_mode<HIGHEST>>} : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// expect-error: stablehlo.log C1
// C1: baseline_type(operand) = baseline_type(result); the element types differ.
func.func @main(%x: tensor<2xf32>) -> tensor<2xf64> {
  %0 = "stablehlo.log"(%x) : (tensor<2xf32>) -> tensor<2xf64>
  return %0 : tensor<2xf64>
}

// -----

// expect-error: stablehlo.log I1
// I1: the operand is a tensor of floating-point or complex type (or per-tensor quantized).
func.func @main(%x: tensor<2xi32>) -> tensor<2xi32> {
  %0 = "stablehlo.log"(%x) : (tensor<2xi32>) -> tensor<2xi32>
  return %0 : tensor<2xi32>
}

// -----

// expect-error: stablehlo.log I2
// I2 result_accuracy: mode HIGHEST asks for the most accurate result, so its tolerances must be zero
// (the StableHLO C++ verifier's rule; the spec types the attribute in its Inputs table).
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "stablehlo.log"(%x) {result_accuracy = #stablehlo.result_accuracy<atol = 1.000000e-05, rtol = 0.000000e+00, ulps = 0, mode = #stablehlo.result_accuracy_mode<HIGHEST>>} : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// expect-error: stablehlo.log_plus_one C1
// C1: baseline_type(operand) = baseline_type(result); the element types differ.
func.func @main(%x: tensor<2xf32>) -> tensor<2xf64> {
  %0 = "stablehlo.log_plus_one"(%x) : (tensor<2xf32>) -> tensor<2xf64>
  return %0 : tensor<2xf64>
}

// -----

// expect-error: stablehlo.log_plus_one I1
// I1: the operand is a tensor of floating-point or complex type (or per-tensor quantized).
func.func @main(%x: tensor<2xi32>) -> tensor<2xi32> {
  %0 = "stablehlo.log_plus_one"(%x) : (tensor<2xi32>) -> tensor<2xi32>
  return %0 : tensor<2xi32>
}

// -----

// expect-error: stablehlo.log_plus_one I2
// I2 result_accuracy: mode HIGHEST asks for the most accurate result, so its tolerances must be zero
// (the StableHLO C++ verifier's rule; the spec types the attribute in its Inputs table).
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "stablehlo.log_plus_one"(%x) {result_accuracy = #stablehlo.result_accuracy<atol = 1.000000e-05, rtol = 0.000000e+00, ulps = 0, mode = #stablehlo.result_accuracy_mode<HIGHEST>>} : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// expect-error: stablehlo.logistic C1
// C1: baseline_type(operand) = baseline_type(result); the element types differ.
func.func @main(%x: tensor<2xf32>) -> tensor<2xf64> {
  %0 = "stablehlo.logistic"(%x) : (tensor<2xf32>) -> tensor<2xf64>
  return %0 : tensor<2xf64>
}

// -----

// expect-error: stablehlo.logistic I1
// I1: the operand is a tensor of floating-point or complex type (or per-tensor quantized).
func.func @main(%x: tensor<2xi32>) -> tensor<2xi32> {
  %0 = "stablehlo.logistic"(%x) : (tensor<2xi32>) -> tensor<2xi32>
  return %0 : tensor<2xi32>
}

// -----

// expect-error: stablehlo.logistic I2
// I2 result_accuracy: mode HIGHEST asks for the most accurate result, so its tolerances must be zero
// (the StableHLO C++ verifier's rule; the spec types the attribute in its Inputs table).
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "stablehlo.logistic"(%x) {result_accuracy = #stablehlo.result_accuracy<atol = 1.000000e-05, rtol = 0.000000e+00, ulps = 0, mode = #stablehlo.result_accuracy_mode<HIGHEST>>} : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// expect-error: stablehlo.rsqrt C1
// C1: baseline_type(operand) = baseline_type(result); the element types differ.
func.func @main(%x: tensor<2xf32>) -> tensor<2xf64> {
  %0 = "stablehlo.rsqrt"(%x) : (tensor<2xf32>) -> tensor<2xf64>
  return %0 : tensor<2xf64>
}

// -----

// expect-error: stablehlo.rsqrt I1
// I1: the operand is a tensor of floating-point or complex type (or per-tensor quantized).
func.func @main(%x: tensor<2xi32>) -> tensor<2xi32> {
  %0 = "stablehlo.rsqrt"(%x) : (tensor<2xi32>) -> tensor<2xi32>
  return %0 : tensor<2xi32>
}

// -----

// expect-error: stablehlo.rsqrt I2
// I2 result_accuracy: mode HIGHEST asks for the most accurate result, so its tolerances must be zero
// (the StableHLO C++ verifier's rule; the spec types the attribute in its Inputs table).
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "stablehlo.rsqrt"(%x) {result_accuracy = #stablehlo.result_accuracy<atol = 1.000000e-05, rtol = 0.000000e+00, ulps = 0, mode = #stablehlo.result_accuracy_mode<HIGHEST>>} : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// expect-error: stablehlo.sine C1
// C1: baseline_type(operand) = baseline_type(result); the element types differ.
func.func @main(%x: tensor<2xf32>) -> tensor<2xf64> {
  %0 = "stablehlo.sine"(%x) : (tensor<2xf32>) -> tensor<2xf64>
  return %0 : tensor<2xf64>
}

// -----

// expect-error: stablehlo.sine I1
// I1: the operand is a tensor of floating-point or complex type (or per-tensor quantized).
func.func @main(%x: tensor<2xi32>) -> tensor<2xi32> {
  %0 = "stablehlo.sine"(%x) : (tensor<2xi32>) -> tensor<2xi32>
  return %0 : tensor<2xi32>
}

// -----

// expect-error: stablehlo.sine I2
// I2 result_accuracy: mode HIGHEST asks for the most accurate result, so its tolerances must be zero
// (the StableHLO C++ verifier's rule; the spec types the attribute in its Inputs table).
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "stablehlo.sine"(%x) {result_accuracy = #stablehlo.result_accuracy<atol = 1.000000e-05, rtol = 0.000000e+00, ulps = 0, mode = #stablehlo.result_accuracy_mode<HIGHEST>>} : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// expect-error: stablehlo.sqrt C1
// C1: baseline_type(operand) = baseline_type(result); the element types differ.
func.func @main(%x: tensor<2xf32>) -> tensor<2xf64> {
  %0 = "stablehlo.sqrt"(%x) : (tensor<2xf32>) -> tensor<2xf64>
  return %0 : tensor<2xf64>
}

// -----

// expect-error: stablehlo.sqrt I1
// I1: the operand is a tensor of floating-point or complex type (or per-tensor quantized).
func.func @main(%x: tensor<2xi32>) -> tensor<2xi32> {
  %0 = "stablehlo.sqrt"(%x) : (tensor<2xi32>) -> tensor<2xi32>
  return %0 : tensor<2xi32>
}

// -----

// expect-error: stablehlo.sqrt I2
// I2 result_accuracy: mode HIGHEST asks for the most accurate result, so its tolerances must be zero
// (the StableHLO C++ verifier's rule; the spec types the attribute in its Inputs table).
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "stablehlo.sqrt"(%x) {result_accuracy = #stablehlo.result_accuracy<atol = 1.000000e-05, rtol = 0.000000e+00, ulps = 0, mode = #stablehlo.result_accuracy_mode<HIGHEST>>} : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// expect-error: stablehlo.tan C1
// C1: baseline_type(operand) = baseline_type(result); the element types differ.
func.func @main(%x: tensor<2xf32>) -> tensor<2xf64> {
  %0 = "stablehlo.tan"(%x) : (tensor<2xf32>) -> tensor<2xf64>
  return %0 : tensor<2xf64>
}

// -----

// expect-error: stablehlo.tan I1
// I1: the operand is a tensor of floating-point or complex type (or per-tensor quantized).
func.func @main(%x: tensor<2xi32>) -> tensor<2xi32> {
  %0 = "stablehlo.tan"(%x) : (tensor<2xi32>) -> tensor<2xi32>
  return %0 : tensor<2xi32>
}

// -----

// expect-error: stablehlo.tan I2
// I2 result_accuracy: mode HIGHEST asks for the most accurate result, so its tolerances must be zero
// (the StableHLO C++ verifier's rule; the spec types the attribute in its Inputs table).
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "stablehlo.tan"(%x) {result_accuracy = #stablehlo.result_accuracy<atol = 1.000000e-05, rtol = 0.000000e+00, ulps = 0, mode = #stablehlo.result_accuracy_mode<HIGHEST>>} : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// expect-error: stablehlo.tanh C1
// C1: baseline_type(operand) = baseline_type(result); the element types differ.
func.func @main(%x: tensor<2xf32>) -> tensor<2xf64> {
  %0 = "stablehlo.tanh"(%x) : (tensor<2xf32>) -> tensor<2xf64>
  return %0 : tensor<2xf64>
}

// -----

// expect-error: stablehlo.tanh I1
// I1: the operand is a tensor of floating-point or complex type (or per-tensor quantized).
func.func @main(%x: tensor<2xi32>) -> tensor<2xi32> {
  %0 = "stablehlo.tanh"(%x) : (tensor<2xi32>) -> tensor<2xi32>
  return %0 : tensor<2xi32>
}

// -----

// expect-error: stablehlo.tanh I2
// I2 result_accuracy: mode HIGHEST asks for the most accurate result, so its tolerances must be zero
// (the StableHLO C++ verifier's rule; the spec types the attribute in its Inputs table).
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "stablehlo.tanh"(%x) {result_accuracy = #stablehlo.result_accuracy<atol = 1.000000e-05, rtol = 0.000000e+00, ulps = 0, mode = #stablehlo.result_accuracy_mode<HIGHEST>>} : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// expect-error: stablehlo.ceil C1
// C1: baseline_type(operand) = baseline_type(result); the shapes differ.
func.func @main(%x: tensor<2xf32>) -> tensor<3xf32> {
  %0 = "stablehlo.ceil"(%x) : (tensor<2xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// expect-error: stablehlo.ceil I1
// I1: the operand is a tensor of floating-point type (complex is not allowed).
func.func @main(%x: tensor<2xcomplex<f32>>) -> tensor<2xcomplex<f32>> {
  %0 = "stablehlo.ceil"(%x) : (tensor<2xcomplex<f32>>) -> tensor<2xcomplex<f32>>
  return %0 : tensor<2xcomplex<f32>>
}

// -----

// expect-error: stablehlo.floor C1
// C1: baseline_type(operand) = baseline_type(result); the shapes differ.
func.func @main(%x: tensor<2xf32>) -> tensor<3xf32> {
  %0 = "stablehlo.floor"(%x) : (tensor<2xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// expect-error: stablehlo.floor I1
// I1: the operand is a tensor of floating-point type (complex is not allowed).
func.func @main(%x: tensor<2xcomplex<f32>>) -> tensor<2xcomplex<f32>> {
  %0 = "stablehlo.floor"(%x) : (tensor<2xcomplex<f32>>) -> tensor<2xcomplex<f32>>
  return %0 : tensor<2xcomplex<f32>>
}

// -----

// expect-error: stablehlo.round_nearest_afz C1
// C1: baseline_type(operand) = baseline_type(result); the shapes differ.
func.func @main(%x: tensor<2xf32>) -> tensor<3xf32> {
  %0 = "stablehlo.round_nearest_afz"(%x) : (tensor<2xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// expect-error: stablehlo.round_nearest_afz I1
// I1: the operand is a tensor of floating-point type (complex is not allowed).
func.func @main(%x: tensor<2xcomplex<f32>>) -> tensor<2xcomplex<f32>> {
  %0 = "stablehlo.round_nearest_afz"(%x) : (tensor<2xcomplex<f32>>) -> tensor<2xcomplex<f32>>
  return %0 : tensor<2xcomplex<f32>>
}

// -----

// expect-error: stablehlo.round_nearest_even C1
// C1: baseline_type(operand) = baseline_type(result); the shapes differ.
func.func @main(%x: tensor<2xf32>) -> tensor<3xf32> {
  %0 = "stablehlo.round_nearest_even"(%x) : (tensor<2xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// expect-error: stablehlo.round_nearest_even I1
// I1: the operand is a tensor of floating-point type (complex is not allowed).
func.func @main(%x: tensor<2xcomplex<f32>>) -> tensor<2xcomplex<f32>> {
  %0 = "stablehlo.round_nearest_even"(%x) : (tensor<2xcomplex<f32>>) -> tensor<2xcomplex<f32>>
  return %0 : tensor<2xcomplex<f32>>
}

// -----

// expect-error: stablehlo.negate C1
// C1: baseline_type(operand) = baseline_type(result).
func.func @main(%x: tensor<2xi32>) -> tensor<2xi64> {
  %0 = "stablehlo.negate"(%x) : (tensor<2xi32>) -> tensor<2xi64>
  return %0 : tensor<2xi64>
}

// -----

// expect-error: stablehlo.negate I1
// I1: integer, floating-point or complex; booleans are not integers.
func.func @main(%x: tensor<2xi1>) -> tensor<2xi1> {
  %0 = "stablehlo.negate"(%x) : (tensor<2xi1>) -> tensor<2xi1>
  return %0 : tensor<2xi1>
}

// -----

// expect-error: stablehlo.sign C1
// C1: baseline_type(operand) = baseline_type(result).
func.func @main(%x: tensor<2xf32>) -> tensor<2x1xf32> {
  %0 = "stablehlo.sign"(%x) : (tensor<2xf32>) -> tensor<2x1xf32>
  return %0 : tensor<2x1xf32>
}

// -----

// expect-error: stablehlo.sign I1
// I1: signed integer, floating-point or complex; unsigned integers are not allowed.
func.func @main(%x: tensor<2xui32>) -> tensor<2xui32> {
  %0 = "stablehlo.sign"(%x) : (tensor<2xui32>) -> tensor<2xui32>
  return %0 : tensor<2xui32>
}

// -----

// expect-error: stablehlo.not C1
// C1: type(operand) = type(result).
func.func @main(%x: tensor<2xi32>) -> tensor<2xi16> {
  %0 = "stablehlo.not"(%x) : (tensor<2xi32>) -> tensor<2xi16>
  return %0 : tensor<2xi16>
}

// -----

// expect-error: stablehlo.popcnt C1
// C1: type(operand) = type(result).
func.func @main(%x: tensor<2xi32>) -> tensor<2xi16> {
  %0 = "stablehlo.popcnt"(%x) : (tensor<2xi32>) -> tensor<2xi16>
  return %0 : tensor<2xi16>
}

// -----

// expect-error: stablehlo.count_leading_zeros C1
// C1: type(operand) = type(result).
func.func @main(%x: tensor<2xi32>) -> tensor<2xi16> {
  %0 = "stablehlo.count_leading_zeros"(%x) : (tensor<2xi32>) -> tensor<2xi16>
  return %0 : tensor<2xi16>
}

// -----

// expect-error: stablehlo.not I1
// I1: boolean or integer.
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "stablehlo.not"(%x) : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// expect-error: stablehlo.popcnt I1
// I1: integer (i1 is the boolean type).
func.func @main(%x: tensor<2xi1>) -> tensor<2xi1> {
  %0 = "stablehlo.popcnt"(%x) : (tensor<2xi1>) -> tensor<2xi1>
  return %0 : tensor<2xi1>
}

// -----

// expect-error: stablehlo.count_leading_zeros I1
// I1: integer.
func.func @main(%x: tensor<2xf16>) -> tensor<2xf16> {
  %0 = "stablehlo.count_leading_zeros"(%x) : (tensor<2xf16>) -> tensor<2xf16>
  return %0 : tensor<2xf16>
}

// -----

// expect-error: stablehlo.abs C1
// C1: shape(result) = shape(operand).
func.func @main(%x: tensor<2xf32>) -> tensor<3xf32> {
  %0 = "stablehlo.abs"(%x) : (tensor<2xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// expect-error: stablehlo.abs C2
// C2: abs of complex<f64> has element type f64.
func.func @main(%x: tensor<2xcomplex<f64>>) -> tensor<2xf32> {
  %0 = "stablehlo.abs"(%x) : (tensor<2xcomplex<f64>>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// expect-error: stablehlo.abs I1
// I1: signed integer, floating-point or complex.
func.func @main(%x: tensor<2xui8>) -> tensor<2xui8> {
  %0 = "stablehlo.abs"(%x) : (tensor<2xui8>) -> tensor<2xui8>
  return %0 : tensor<2xui8>
}

// -----

// expect-error: stablehlo.real C1
// C1: shape(result) = shape(operand).
func.func @main(%x: tensor<2xcomplex<f32>>) -> tensor<4xf32> {
  %0 = "stablehlo.real"(%x) : (tensor<2xcomplex<f32>>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// expect-error: stablehlo.real C2
// C2: the result element type is the complex element type f32.
func.func @main(%x: tensor<2xcomplex<f32>>) -> tensor<2xf64> {
  %0 = "stablehlo.real"(%x) : (tensor<2xcomplex<f32>>) -> tensor<2xf64>
  return %0 : tensor<2xf64>
}

// -----

// expect-error: stablehlo.real I1
// I1: floating-point or complex.
func.func @main(%x: tensor<2xi32>) -> tensor<2xi32> {
  %0 = "stablehlo.real"(%x) : (tensor<2xi32>) -> tensor<2xi32>
  return %0 : tensor<2xi32>
}

// -----

// expect-error: stablehlo.imag C1
// C1: shape(result) = shape(operand).
func.func @main(%x: tensor<2xcomplex<f32>>) -> tensor<4xf32> {
  %0 = "stablehlo.imag"(%x) : (tensor<2xcomplex<f32>>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// expect-error: stablehlo.imag C2
// C2: the result element type is the complex element type f32.
func.func @main(%x: tensor<2xcomplex<f32>>) -> tensor<2xf64> {
  %0 = "stablehlo.imag"(%x) : (tensor<2xcomplex<f32>>) -> tensor<2xf64>
  return %0 : tensor<2xf64>
}

// -----

// expect-error: stablehlo.imag I1
// I1: floating-point or complex.
func.func @main(%x: tensor<2xi32>) -> tensor<2xi32> {
  %0 = "stablehlo.imag"(%x) : (tensor<2xi32>) -> tensor<2xi32>
  return %0 : tensor<2xi32>
}

// -----

// expect-error: stablehlo.is_finite C1
// C1: shape(x) = shape(y).
func.func @main(%x: tensor<2xf32>) -> tensor<3xi1> {
  %0 = "stablehlo.is_finite"(%x) : (tensor<2xf32>) -> tensor<3xi1>
  return %0 : tensor<3xi1>
}

// -----

// expect-error: stablehlo.is_finite I1
// I1: x is a tensor of floating-point type (or per-tensor quantized).
func.func @main(%x: tensor<2xi32>) -> tensor<2xi1> {
  %0 = "stablehlo.is_finite"(%x) : (tensor<2xi32>) -> tensor<2xi1>
  return %0 : tensor<2xi1>
}

// -----

// expect-error: stablehlo.is_finite O1
// O1: y is a tensor of boolean type.
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "stablehlo.is_finite"(%x) : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// expect-error: stablehlo.convert C1
// C1: shape(operand) = shape(result).
func.func @main(%x: tensor<2xi32>) -> tensor<3xf32> {
  %0 = "stablehlo.convert"(%x) : (tensor<2xi32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// expect-error: stablehlo.reduce_precision C1
// C1: baseline_type(operand) = baseline_type(output).
func.func @main(%x: tensor<2xf32>) -> tensor<2xf16> {
  %0 = "stablehlo.reduce_precision"(%x) {exponent_bits = 5 : i32, mantissa_bits = 10 : i32} : (tensor<2xf32>) -> tensor<2xf16>
  return %0 : tensor<2xf16>
}

// -----

// expect-error: stablehlo.reduce_precision C2
// C2: 1 <= exponent_bits.
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "stablehlo.reduce_precision"(%x) {exponent_bits = 0 : i32, mantissa_bits = 10 : i32} : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// expect-error: stablehlo.reduce_precision C3
// C3: 0 <= mantissa_bits.
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "stablehlo.reduce_precision"(%x) {exponent_bits = 5 : i32, mantissa_bits = -1 : i32} : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// expect-error: stablehlo.reduce_precision I2
// I2: exponent_bits is a constant of type si32; 2^31 does not fit it (the bit count is past int32).
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "stablehlo.reduce_precision"(%x) {exponent_bits = 2147483648 : i64, mantissa_bits = 10 : i32} : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// expect-error: stablehlo.reduce_precision I3
// I3: mantissa_bits is a constant of type si32; 2^40 does not fit it.
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "stablehlo.reduce_precision"(%x) {exponent_bits = 8 : i32, mantissa_bits = 1099511627776 : i64} : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// expect-error: stablehlo.reduce_precision I1
// I1: floating-point (or per-tensor quantized).
func.func @main(%x: tensor<2xi32>) -> tensor<2xi32> {
  %0 = "stablehlo.reduce_precision"(%x) {exponent_bits = 5 : i32, mantissa_bits = 10 : i32} : (tensor<2xi32>) -> tensor<2xi32>
  return %0 : tensor<2xi32>
}

// -----

// expect-error: stablehlo.add C1
// C1: lhs, rhs and result have the same (baseline) type; the result's differs.
func.func @main(%a: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<2xf64> {
  %0 = "stablehlo.add"(%a, %b) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf64>
  return %0 : tensor<2xf64>
}

// -----

// expect-error: stablehlo.maximum C1
// C1: lhs, rhs and result have the same (baseline) type; the result's differs.
func.func @main(%a: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<2xf64> {
  %0 = "stablehlo.maximum"(%a, %b) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf64>
  return %0 : tensor<2xf64>
}

// -----

// expect-error: stablehlo.minimum C1
// C1: lhs, rhs and result have the same (baseline) type; the result's differs.
func.func @main(%a: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<2xf64> {
  %0 = "stablehlo.minimum"(%a, %b) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf64>
  return %0 : tensor<2xf64>
}

// -----

// expect-error: stablehlo.multiply C1
// C1: lhs, rhs and result have the same (baseline) type; the result's differs.
func.func @main(%a: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<2xf64> {
  %0 = "stablehlo.multiply"(%a, %b) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf64>
  return %0 : tensor<2xf64>
}

// -----

// expect-error: stablehlo.subtract C1
// C1: lhs, rhs and result have the same (baseline) type; the result's differs.
func.func @main(%a: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<2xf64> {
  %0 = "stablehlo.subtract"(%a, %b) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf64>
  return %0 : tensor<2xf64>
}

// -----

// expect-error: stablehlo.divide C1
// C1: lhs, rhs and result have the same (baseline) type; the result's differs.
func.func @main(%a: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<2xf64> {
  %0 = "stablehlo.divide"(%a, %b) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf64>
  return %0 : tensor<2xf64>
}

// -----

// expect-error: stablehlo.remainder C1
// C1: lhs, rhs and result have the same (baseline) type; the result's differs.
func.func @main(%a: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<2xf64> {
  %0 = "stablehlo.remainder"(%a, %b) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf64>
  return %0 : tensor<2xf64>
}

// -----

// expect-error: stablehlo.power C1
// C1: lhs, rhs and result have the same (baseline) type; the result's differs.
func.func @main(%a: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<2xf64> {
  %0 = "stablehlo.power"(%a, %b) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf64>
  return %0 : tensor<2xf64>
}

// -----

// expect-error: stablehlo.atan2 C1
// C1: lhs, rhs and result have the same (baseline) type; the result's differs.
func.func @main(%a: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<2xf64> {
  %0 = "stablehlo.atan2"(%a, %b) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf64>
  return %0 : tensor<2xf64>
}

// -----

// expect-error: stablehlo.subtract I1
// I1: integer, floating-point or complex (or per-tensor quantized); not boolean.
func.func @main(%a: tensor<2xi1>, %b: tensor<2xi1>) -> tensor<2xi1> {
  %0 = "stablehlo.subtract"(%a, %b) : (tensor<2xi1>, tensor<2xi1>) -> tensor<2xi1>
  return %0 : tensor<2xi1>
}

// -----

// expect-error: stablehlo.divide I1
// I1: integer, floating-point or complex (or per-tensor quantized); not boolean.
func.func @main(%a: tensor<2xi1>, %b: tensor<2xi1>) -> tensor<2xi1> {
  %0 = "stablehlo.divide"(%a, %b) : (tensor<2xi1>, tensor<2xi1>) -> tensor<2xi1>
  return %0 : tensor<2xi1>
}

// -----

// expect-error: stablehlo.remainder I1
// I1: integer, floating-point or complex (or per-tensor quantized); not boolean.
func.func @main(%a: tensor<2xi1>, %b: tensor<2xi1>) -> tensor<2xi1> {
  %0 = "stablehlo.remainder"(%a, %b) : (tensor<2xi1>, tensor<2xi1>) -> tensor<2xi1>
  return %0 : tensor<2xi1>
}

// -----

// expect-error: stablehlo.power I1
// I1: integer, floating-point or complex (or per-tensor quantized); not boolean.
func.func @main(%a: tensor<2xi1>, %b: tensor<2xi1>) -> tensor<2xi1> {
  %0 = "stablehlo.power"(%a, %b) : (tensor<2xi1>, tensor<2xi1>) -> tensor<2xi1>
  return %0 : tensor<2xi1>
}

// -----

// expect-error: stablehlo.atan2 I1
// I1: floating-point or complex.
func.func @main(%a: tensor<2xi32>, %b: tensor<2xi32>) -> tensor<2xi32> {
  %0 = "stablehlo.atan2"(%a, %b) : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>
  return %0 : tensor<2xi32>
}

// -----

// expect-error: stablehlo.and C1
// C1: type(lhs) = type(rhs) = type(result).
func.func @main(%a: tensor<2xi32>, %b: tensor<2xi32>) -> tensor<2xi64> {
  %0 = "stablehlo.and"(%a, %b) : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi64>
  return %0 : tensor<2xi64>
}

// -----

// expect-error: stablehlo.and I1
// I1: boolean or integer.
func.func @main(%a: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "stablehlo.and"(%a, %b) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// expect-error: stablehlo.or C1
// C1: type(lhs) = type(rhs) = type(result).
func.func @main(%a: tensor<2xi32>, %b: tensor<2xi32>) -> tensor<2xi64> {
  %0 = "stablehlo.or"(%a, %b) : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi64>
  return %0 : tensor<2xi64>
}

// -----

// expect-error: stablehlo.or I1
// I1: boolean or integer.
func.func @main(%a: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "stablehlo.or"(%a, %b) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// expect-error: stablehlo.xor C1
// C1: type(lhs) = type(rhs) = type(result).
func.func @main(%a: tensor<2xi32>, %b: tensor<2xi32>) -> tensor<2xi64> {
  %0 = "stablehlo.xor"(%a, %b) : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi64>
  return %0 : tensor<2xi64>
}

// -----

// expect-error: stablehlo.xor I1
// I1: boolean or integer.
func.func @main(%a: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "stablehlo.xor"(%a, %b) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// expect-error: stablehlo.shift_left C1
// C1: type(lhs) = type(rhs) = type(result).
func.func @main(%a: tensor<2xi32>, %b: tensor<2xui32>) -> tensor<2xi32> {
  %0 = "stablehlo.shift_left"(%a, %b) : (tensor<2xi32>, tensor<2xui32>) -> tensor<2xi32>
  return %0 : tensor<2xi32>
}

// -----

// expect-error: stablehlo.shift_left I1
// I1: integer (i1 is the boolean type).
func.func @main(%a: tensor<2xi1>, %b: tensor<2xi1>) -> tensor<2xi1> {
  %0 = "stablehlo.shift_left"(%a, %b) : (tensor<2xi1>, tensor<2xi1>) -> tensor<2xi1>
  return %0 : tensor<2xi1>
}

// -----

// expect-error: stablehlo.shift_right_arithmetic C1
// C1: type(lhs) = type(rhs) = type(result).
func.func @main(%a: tensor<2xi32>, %b: tensor<2xui32>) -> tensor<2xi32> {
  %0 = "stablehlo.shift_right_arithmetic"(%a, %b) : (tensor<2xi32>, tensor<2xui32>) -> tensor<2xi32>
  return %0 : tensor<2xi32>
}

// -----

// expect-error: stablehlo.shift_right_arithmetic I1
// I1: integer (i1 is the boolean type).
func.func @main(%a: tensor<2xi1>, %b: tensor<2xi1>) -> tensor<2xi1> {
  %0 = "stablehlo.shift_right_arithmetic"(%a, %b) : (tensor<2xi1>, tensor<2xi1>) -> tensor<2xi1>
  return %0 : tensor<2xi1>
}

// -----

// expect-error: stablehlo.shift_right_logical C1
// C1: type(lhs) = type(rhs) = type(result).
func.func @main(%a: tensor<2xi32>, %b: tensor<2xui32>) -> tensor<2xi32> {
  %0 = "stablehlo.shift_right_logical"(%a, %b) : (tensor<2xi32>, tensor<2xui32>) -> tensor<2xi32>
  return %0 : tensor<2xi32>
}

// -----

// expect-error: stablehlo.shift_right_logical I1
// I1: integer (i1 is the boolean type).
func.func @main(%a: tensor<2xi1>, %b: tensor<2xi1>) -> tensor<2xi1> {
  %0 = "stablehlo.shift_right_logical"(%a, %b) : (tensor<2xi1>, tensor<2xi1>) -> tensor<2xi1>
  return %0 : tensor<2xi1>
}

// -----

// expect-error: stablehlo.complex C1
// C1: type(lhs) = type(rhs).
func.func @main(%a: tensor<2xf32>, %b: tensor<3xf32>) -> tensor<2xcomplex<f32>> {
  %0 = "stablehlo.complex"(%a, %b) : (tensor<2xf32>, tensor<3xf32>) -> tensor<2xcomplex<f32>>
  return %0 : tensor<2xcomplex<f32>>
}

// -----

// expect-error: stablehlo.complex C2
// C2: shape(result) = shape(lhs).
func.func @main(%a: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<3xcomplex<f32>> {
  %0 = "stablehlo.complex"(%a, %b) : (tensor<2xf32>, tensor<2xf32>) -> tensor<3xcomplex<f32>>
  return %0 : tensor<3xcomplex<f32>>
}

// -----

// expect-error: stablehlo.complex C3
// C3: element_type(result) = complex<element_type(lhs)> = complex<f64>.
func.func @main(%a: tensor<2xf64>, %b: tensor<2xf64>) -> tensor<2xcomplex<f32>> {
  %0 = "stablehlo.complex"(%a, %b) : (tensor<2xf64>, tensor<2xf64>) -> tensor<2xcomplex<f32>>
  return %0 : tensor<2xcomplex<f32>>
}

// -----

// expect-error: stablehlo.complex I1
// I1: lhs is a tensor of type f32 or f64.
func.func @main(%a: tensor<2xf16>, %b: tensor<2xf16>) -> tensor<2xcomplex<f32>> {
  %0 = "stablehlo.complex"(%a, %b) : (tensor<2xf16>, tensor<2xf16>) -> tensor<2xcomplex<f32>>
  return %0 : tensor<2xcomplex<f32>>
}
