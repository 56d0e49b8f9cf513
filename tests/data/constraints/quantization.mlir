// Verifier constraint tables: quantization (see tests/test_verifier_constraints.py for the format).
// Spec: docs/spec.md of openxla/stablehlo: uniform_quantize, uniform_dequantize and the quantized
// rules other ops write down (add C2-C7, broadcast_in_dim C6, reshape C3, transpose C4,
// dynamic_broadcast_in_dim C6, dynamic_reshape C3, dot_general C14-C20, convolution C28-C34), plus
// the Inputs/Outputs rows that allow "per-tensor quantized tensor" only (labels I<n> / O<n>).
// The constraints of quantized types themselves (the spec's Types section: C3, C5-C7, C11-C13) are
// reported at the op that introduces the type (its result; a function for its signature), with the
// type's constraint number. Their C1, C2, C4, C8-C10 hold by the type's syntax (the storage bounds
// and zero points are read as integers of the storage type, one zero point per scale), except C4
// (type(scales...) = expressed_type), which is not checked: scales are kept as f64.
// Every chunk below is statically decidable.

// -----

// expect-ok
// Element-wise ops may requantize (baseline types ignore scales and zero points); add takes
// per-axis operands; a per-axis quantized reshape keeps its quantization dimension's slices.
func.func @main(%x: tensor<2x3x!quant.uniform<i8:f32, 0.5:3>>, %p: tensor<2x3x!quant.uniform<i8:f32:1, {0.5:1, 0.25:2, 0.125:0}>>) -> (tensor<2x3x!quant.uniform<i8:f32, 0.25:0>>, tensor<2x3x!quant.uniform<i8:f32:1, {0.5:1, 0.5:2, 0.5:0}>>, tensor<6xf32>, tensor<1x2x3x!quant.uniform<i8:f32:2, {0.5:1, 0.25:2, 0.125:0}>>) {
  %0 = stablehlo.tanh %x : (tensor<2x3x!quant.uniform<i8:f32, 0.5:3>>) -> tensor<2x3x!quant.uniform<i8:f32, 0.25:0>>
  %1 = stablehlo.add %p, %p : (tensor<2x3x!quant.uniform<i8:f32:1, {0.5:1, 0.25:2, 0.125:0}>>, tensor<2x3x!quant.uniform<i8:f32:1, {0.5:1, 0.25:2, 0.125:0}>>) -> tensor<2x3x!quant.uniform<i8:f32:1, {0.5:1, 0.5:2, 0.5:0}>>
  %2 = stablehlo.uniform_dequantize %0 : (tensor<2x3x!quant.uniform<i8:f32, 0.25:0>>) -> tensor<2x3xf32>
  %3 = stablehlo.reshape %2 : (tensor<2x3xf32>) -> tensor<6xf32>
  %4 = stablehlo.reshape %p : (tensor<2x3x!quant.uniform<i8:f32:1, {0.5:1, 0.25:2, 0.125:0}>>) -> tensor<1x2x3x!quant.uniform<i8:f32:2, {0.5:1, 0.25:2, 0.125:0}>>
  return %0, %1, %3, %4 : tensor<2x3x!quant.uniform<i8:f32, 0.25:0>>, tensor<2x3x!quant.uniform<i8:f32:1, {0.5:1, 0.5:2, 0.5:0}>>, tensor<6xf32>, tensor<1x2x3x!quant.uniform<i8:f32:2, {0.5:1, 0.25:2, 0.125:0}>>
}

// -----

// expect-ok
// A hybrid dot_general: float lhs, quantized rhs with zero points 0, float result.
func.func @main(%a: tensor<2x3xf32>, %b: tensor<3x4x!quant.uniform<i8:f32:1, {0.5:0, 0.25:0, 0.5:0, 0.25:0}>>) -> tensor<2x4xf32> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<2x3xf32>, tensor<3x4x!quant.uniform<i8:f32:1, {0.5:0, 0.25:0, 0.5:0, 0.25:0}>>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// expect-error: stablehlo.uniform_quantize C1
// C1: shape(operand) = shape(result).
func.func @main(%x: tensor<2xf32>) -> tensor<3x!quant.uniform<i8:f32, 0.5:0>> {
  %0 = stablehlo.uniform_quantize %x : (tensor<2xf32>) -> tensor<3x!quant.uniform<i8:f32, 0.5:0>>
  return %0 : tensor<3x!quant.uniform<i8:f32, 0.5:0>>
}

// -----

// expect-error: stablehlo.uniform_quantize C2
// C2: expressed_type(result) = element_type(operand) for a float operand.
func.func @main(%x: tensor<2xf32>) -> tensor<2x!quant.uniform<i8:f16, 0.5:0>> {
  %0 = stablehlo.uniform_quantize %x : (tensor<2xf32>) -> tensor<2x!quant.uniform<i8:f16, 0.5:0>>
  return %0 : tensor<2x!quant.uniform<i8:f16, 0.5:0>>
}

// -----

// expect-error: stablehlo.uniform_quantize I1
// I1: the operand is a tensor of floating-point or quantized type.
func.func @main(%x: tensor<2xi32>) -> tensor<2x!quant.uniform<i8:f32, 0.5:0>> {
  %0 = stablehlo.uniform_quantize %x : (tensor<2xi32>) -> tensor<2x!quant.uniform<i8:f32, 0.5:0>>
  return %0 : tensor<2x!quant.uniform<i8:f32, 0.5:0>>
}

// -----

// expect-error: stablehlo.uniform_quantize O1
// O1: the result is a quantized tensor.
func.func @main(%x: tensor<2xf32>) -> tensor<2xi8> {
  %0 = stablehlo.uniform_quantize %x : (tensor<2xf32>) -> tensor<2xi8>
  return %0 : tensor<2xi8>
}

// -----

// expect-error: stablehlo.uniform_dequantize C1
// C1: shape(operand) = shape(result).
func.func @main(%x: tensor<2x!quant.uniform<i8:f32, 0.5:0>>) -> tensor<3xf32> {
  %0 = stablehlo.uniform_dequantize %x : (tensor<2x!quant.uniform<i8:f32, 0.5:0>>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// expect-error: stablehlo.uniform_dequantize C2
// C2: element_type(result) = expressed_type(operand).
func.func @main(%x: tensor<2x!quant.uniform<i8:f32, 0.5:0>>) -> tensor<2xf64> {
  %0 = stablehlo.uniform_dequantize %x : (tensor<2x!quant.uniform<i8:f32, 0.5:0>>) -> tensor<2xf64>
  return %0 : tensor<2xf64>
}

// -----

// expect-error: stablehlo.uniform_dequantize I1
// I1: the operand is a quantized tensor.
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "stablehlo.uniform_dequantize"(%x) : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// expect-error: stablehlo.add C2
// C2: if one of lhs, rhs and result is quantized, all are.
func.func @main(%a: tensor<2x!quant.uniform<i8:f32, 0.5:0>>, %b: tensor<2xf32>) -> tensor<2x!quant.uniform<i8:f32, 0.5:0>> {
  %0 = "stablehlo.add"(%a, %b) : (tensor<2x!quant.uniform<i8:f32, 0.5:0>>, tensor<2xf32>) -> tensor<2x!quant.uniform<i8:f32, 0.5:0>>
  return %0 : tensor<2x!quant.uniform<i8:f32, 0.5:0>>
}

// -----

// expect-error: stablehlo.add C3
// C3: storage_type(lhs) = storage_type(rhs) = storage_type(result).
func.func @main(%a: tensor<2x!quant.uniform<i8:f32, 0.5:0>>, %b: tensor<2x!quant.uniform<i16:f32, 0.5:0>>) -> tensor<2x!quant.uniform<i8:f32, 0.5:0>> {
  %0 = "stablehlo.add"(%a, %b) : (tensor<2x!quant.uniform<i8:f32, 0.5:0>>, tensor<2x!quant.uniform<i16:f32, 0.5:0>>) -> tensor<2x!quant.uniform<i8:f32, 0.5:0>>
  return %0 : tensor<2x!quant.uniform<i8:f32, 0.5:0>>
}

// -----

// expect-error: stablehlo.add C4
// C4: expressed_type(lhs) = expressed_type(rhs) = expressed_type(result).
func.func @main(%a: tensor<2x!quant.uniform<i8:f32, 0.5:0>>, %b: tensor<2x!quant.uniform<i8:f32, 0.5:0>>) -> tensor<2x!quant.uniform<i8:f16, 0.5:0>> {
  %0 = "stablehlo.add"(%a, %b) : (tensor<2x!quant.uniform<i8:f32, 0.5:0>>, tensor<2x!quant.uniform<i8:f32, 0.5:0>>) -> tensor<2x!quant.uniform<i8:f16, 0.5:0>>
  return %0 : tensor<2x!quant.uniform<i8:f16, 0.5:0>>
}

// -----

// expect-error: stablehlo.add C5
// C5: the result is per-axis quantized exactly when lhs or rhs is.
func.func @main(%a: tensor<2x!quant.uniform<i8:f32:0, {0.5:0, 0.25:0}>>, %b: tensor<2x!quant.uniform<i8:f32, 0.5:0>>) -> tensor<2x!quant.uniform<i8:f32, 0.5:0>> {
  %0 = "stablehlo.add"(%a, %b) : (tensor<2x!quant.uniform<i8:f32:0, {0.5:0, 0.25:0}>>, tensor<2x!quant.uniform<i8:f32, 0.5:0>>) -> tensor<2x!quant.uniform<i8:f32, 0.5:0>>
  return %0 : tensor<2x!quant.uniform<i8:f32, 0.5:0>>
}

// -----

// expect-error: stablehlo.add C6
// C6: a per-axis lhs has the result's quantization dimension.
func.func @main(%a: tensor<2x2x!quant.uniform<i8:f32:0, {0.5:0, 0.25:0}>>, %b: tensor<2x2x!quant.uniform<i8:f32, 0.5:0>>) -> tensor<2x2x!quant.uniform<i8:f32:1, {0.5:0, 0.25:0}>> {
  %0 = "stablehlo.add"(%a, %b) : (tensor<2x2x!quant.uniform<i8:f32:0, {0.5:0, 0.25:0}>>, tensor<2x2x!quant.uniform<i8:f32, 0.5:0>>) -> tensor<2x2x!quant.uniform<i8:f32:1, {0.5:0, 0.25:0}>>
  return %0 : tensor<2x2x!quant.uniform<i8:f32:1, {0.5:0, 0.25:0}>>
}

// -----

// expect-error: stablehlo.add C7
// C7: a per-axis rhs has the result's quantization dimension.
func.func @main(%a: tensor<2x2x!quant.uniform<i8:f32, 0.5:0>>, %b: tensor<2x2x!quant.uniform<i8:f32:1, {0.5:0, 0.25:0}>>) -> tensor<2x2x!quant.uniform<i8:f32:0, {0.5:0, 0.25:0}>> {
  %0 = "stablehlo.add"(%a, %b) : (tensor<2x2x!quant.uniform<i8:f32, 0.5:0>>, tensor<2x2x!quant.uniform<i8:f32:1, {0.5:0, 0.25:0}>>) -> tensor<2x2x!quant.uniform<i8:f32:0, {0.5:0, 0.25:0}>>
  return %0 : tensor<2x2x!quant.uniform<i8:f32:0, {0.5:0, 0.25:0}>>
}

// -----

// expect-error: stablehlo.subtract I1
// I1: subtract takes per-tensor quantized tensors only (add is the one binary op that allows per-axis).
func.func @main(%a: tensor<2x!quant.uniform<i8:f32:0, {0.5:0, 0.25:0}>>) -> tensor<2x!quant.uniform<i8:f32:0, {0.5:0, 0.25:0}>> {
  %0 = "stablehlo.subtract"(%a, %a) : (tensor<2x!quant.uniform<i8:f32:0, {0.5:0, 0.25:0}>>, tensor<2x!quant.uniform<i8:f32:0, {0.5:0, 0.25:0}>>) -> tensor<2x!quant.uniform<i8:f32:0, {0.5:0, 0.25:0}>>
  return %0 : tensor<2x!quant.uniform<i8:f32:0, {0.5:0, 0.25:0}>>
}

// -----

// expect-error: stablehlo.abs I1
// I1: the operand is a per-tensor quantized tensor at most.
func.func @main(%a: tensor<2x!quant.uniform<i8:f32:0, {0.5:0, 0.25:0}>>) -> tensor<2x!quant.uniform<i8:f32:0, {0.5:0, 0.25:0}>> {
  %0 = "stablehlo.abs"(%a) : (tensor<2x!quant.uniform<i8:f32:0, {0.5:0, 0.25:0}>>) -> tensor<2x!quant.uniform<i8:f32:0, {0.5:0, 0.25:0}>>
  return %0 : tensor<2x!quant.uniform<i8:f32:0, {0.5:0, 0.25:0}>>
}

// -----

// expect-error: stablehlo.negate O1
// O1: the result is a per-tensor quantized tensor at most.
func.func @main(%a: tensor<2x!quant.uniform<i8:f32, 0.5:0>>) -> tensor<2x!quant.uniform<i8:f32:0, {0.5:0, 0.25:0}>> {
  %0 = "stablehlo.negate"(%a) : (tensor<2x!quant.uniform<i8:f32, 0.5:0>>) -> tensor<2x!quant.uniform<i8:f32:0, {0.5:0, 0.25:0}>>
  return %0 : tensor<2x!quant.uniform<i8:f32:0, {0.5:0, 0.25:0}>>
}

// -----

// expect-error: stablehlo.select I2
// I2: on_true is a per-tensor quantized tensor at most.
func.func @main(%p: tensor<i1>, %a: tensor<2x!quant.uniform<i8:f32:0, {0.5:0, 0.25:0}>>) -> tensor<2x!quant.uniform<i8:f32:0, {0.5:0, 0.25:0}>> {
  %0 = "stablehlo.select"(%p, %a, %a) : (tensor<i1>, tensor<2x!quant.uniform<i8:f32:0, {0.5:0, 0.25:0}>>, tensor<2x!quant.uniform<i8:f32:0, {0.5:0, 0.25:0}>>) -> tensor<2x!quant.uniform<i8:f32:0, {0.5:0, 0.25:0}>>
  return %0 : tensor<2x!quant.uniform<i8:f32:0, {0.5:0, 0.25:0}>>
}

// -----

// expect-error: stablehlo.concatenate I1
// I1: inputs are per-tensor quantized tensors at most.
func.func @main(%a: tensor<2x!quant.uniform<i8:f32:0, {0.5:0, 0.25:0}>>) -> tensor<4x!quant.uniform<i8:f32:0, {0.5:0, 0.25:0, 0.5:0, 0.25:0}>> {
  %0 = "stablehlo.concatenate"(%a, %a) {dimension = 0 : i64} : (tensor<2x!quant.uniform<i8:f32:0, {0.5:0, 0.25:0}>>, tensor<2x!quant.uniform<i8:f32:0, {0.5:0, 0.25:0}>>) -> tensor<4x!quant.uniform<i8:f32:0, {0.5:0, 0.25:0, 0.5:0, 0.25:0}>>
  return %0 : tensor<4x!quant.uniform<i8:f32:0, {0.5:0, 0.25:0, 0.5:0, 0.25:0}>>
}

// -----

// expect-error: stablehlo.tanh C1
// C1: baseline_type(operand) = baseline_type(result); the storage types differ (i8 vs i16).
func.func @main(%a: tensor<2x!quant.uniform<i8:f32, 0.5:0>>) -> tensor<2x!quant.uniform<i16:f32, 0.5:0>> {
  %0 = "stablehlo.tanh"(%a) : (tensor<2x!quant.uniform<i8:f32, 0.5:0>>) -> tensor<2x!quant.uniform<i16:f32, 0.5:0>>
  return %0 : tensor<2x!quant.uniform<i16:f32, 0.5:0>>
}

// -----

// expect-error: stablehlo.maximum C1
// C1: baseline_type(lhs) = baseline_type(rhs); a float and a quantized tensor differ.
func.func @main(%a: tensor<2x!quant.uniform<i8:f32, 0.5:0>>, %b: tensor<2xf32>) -> tensor<2x!quant.uniform<i8:f32, 0.5:0>> {
  %0 = "stablehlo.maximum"(%a, %b) : (tensor<2x!quant.uniform<i8:f32, 0.5:0>>, tensor<2xf32>) -> tensor<2x!quant.uniform<i8:f32, 0.5:0>>
  return %0 : tensor<2x!quant.uniform<i8:f32, 0.5:0>>
}

// -----

// expect-error: stablehlo.slice C1
// C1: element_type(operand) = element_type(result); slicing keeps scales and zero points.
func.func @main(%a: tensor<4x!quant.uniform<i8:f32, 0.5:0>>) -> tensor<2x!quant.uniform<i8:f32, 0.25:0>> {
  %0 = "stablehlo.slice"(%a) {start_indices = array<i64: 0>, limit_indices = array<i64: 2>, strides = array<i64: 1>} : (tensor<4x!quant.uniform<i8:f32, 0.5:0>>) -> tensor<2x!quant.uniform<i8:f32, 0.25:0>>
  return %0 : tensor<2x!quant.uniform<i8:f32, 0.25:0>>
}

// -----

// expect-error: stablehlo.broadcast_in_dim C1
// C1: a per-tensor quantized operand keeps its element type, scale included.
func.func @main(%a: tensor<2x!quant.uniform<i8:f32, 0.5:0>>) -> tensor<3x2x!quant.uniform<i8:f32, 0.25:0>> {
  %0 = stablehlo.broadcast_in_dim %a, dims = [1] : (tensor<2x!quant.uniform<i8:f32, 0.5:0>>) -> tensor<3x2x!quant.uniform<i8:f32, 0.25:0>>
  return %0 : tensor<3x2x!quant.uniform<i8:f32, 0.25:0>>
}

// -----

// expect-error: stablehlo.broadcast_in_dim C6
// C6: quantization_dimension(result) = broadcast_dimensions[quantization_dimension(operand)] = 1.
func.func @main(%a: tensor<2x!quant.uniform<i8:f32:0, {0.5:0, 0.25:0}>>) -> tensor<2x2x!quant.uniform<i8:f32:0, {0.5:0, 0.25:0}>> {
  %0 = stablehlo.broadcast_in_dim %a, dims = [1] : (tensor<2x!quant.uniform<i8:f32:0, {0.5:0, 0.25:0}>>) -> tensor<2x2x!quant.uniform<i8:f32:0, {0.5:0, 0.25:0}>>
  return %0 : tensor<2x2x!quant.uniform<i8:f32:0, {0.5:0, 0.25:0}>>
}

// -----

// expect-error: stablehlo.dynamic_broadcast_in_dim C6
// C6: broadcasting a quantization dimension of size 1 repeats its one scale and zero point.
func.func @main(%a: tensor<1x!quant.uniform<i8:f32:0, {0.5:0}>>, %s: tensor<2xi64>) -> tensor<2x3x!quant.uniform<i8:f32:1, {0.5:0, 0.25:0, 0.5:0}>> {
  %0 = stablehlo.dynamic_broadcast_in_dim %a, %s, dims = [1] : (tensor<1x!quant.uniform<i8:f32:0, {0.5:0}>>, tensor<2xi64>) -> tensor<2x3x!quant.uniform<i8:f32:1, {0.5:0, 0.25:0, 0.5:0}>>
  return %0 : tensor<2x3x!quant.uniform<i8:f32:1, {0.5:0, 0.25:0, 0.5:0}>>
}

// -----

// expect-error: stablehlo.transpose C4
// C4: quantization_dimension(operand) = permutation[quantization_dimension(result)] = 1. (The
// scales are the operand's: C1 lets only the quantization dimension differ.)
func.func @main(%a: tensor<2x2x!quant.uniform<i8:f32:0, {0.5:0, 0.25:0}>>) -> tensor<2x2x!quant.uniform<i8:f32:0, {0.5:0, 0.25:0}>> {
  %0 = stablehlo.transpose %a, dims = [1, 0] : (tensor<2x2x!quant.uniform<i8:f32:0, {0.5:0, 0.25:0}>>) -> tensor<2x2x!quant.uniform<i8:f32:0, {0.5:0, 0.25:0}>>
  return %0 : tensor<2x2x!quant.uniform<i8:f32:0, {0.5:0, 0.25:0}>>
}

// -----

// expect-error: stablehlo.reshape C3
// C3: a per-axis reshape keeps the quantization dimension (size 2) and the element counts around it.
func.func @main(%a: tensor<2x3x!quant.uniform<i8:f32:0, {0.5:0, 0.25:0}>>) -> tensor<3x2x!quant.uniform<i8:f32:1, {0.5:0, 0.25:0}>> {
  %0 = stablehlo.reshape %a : (tensor<2x3x!quant.uniform<i8:f32:0, {0.5:0, 0.25:0}>>) -> tensor<3x2x!quant.uniform<i8:f32:1, {0.5:0, 0.25:0}>>
  return %0 : tensor<3x2x!quant.uniform<i8:f32:1, {0.5:0, 0.25:0}>>
}

// -----

// expect-error: stablehlo.dynamic_reshape C3
// C3: as reshape's C3.
func.func @main(%a: tensor<2x3x!quant.uniform<i8:f32:0, {0.5:0, 0.25:0}>>, %s: tensor<2xi64>) -> tensor<3x2x!quant.uniform<i8:f32:1, {0.5:0, 0.25:0}>> {
  %0 = stablehlo.dynamic_reshape %a, %s : (tensor<2x3x!quant.uniform<i8:f32:0, {0.5:0, 0.25:0}>>, tensor<2xi64>) -> tensor<3x2x!quant.uniform<i8:f32:1, {0.5:0, 0.25:0}>>
  return %0 : tensor<3x2x!quant.uniform<i8:f32:1, {0.5:0, 0.25:0}>>
}

// -----

// expect-error: stablehlo.bitcast_convert C1
// C1: a quantized type counts with its storage type: i8 to i16 takes a last dimension of 2.
func.func @main(%a: tensor<3x!quant.uniform<i8:f32, 0.5:0>>) -> tensor<3xi16> {
  %0 = stablehlo.bitcast_convert %a : (tensor<3x!quant.uniform<i8:f32, 0.5:0>>) -> tensor<3xi16>
  return %0 : tensor<3xi16>
}

// -----

// expect-error: stablehlo.convert I1
// I1: convert takes plain tensors; quantized ones go through uniform_dequantize.
func.func @main(%a: tensor<3x!quant.uniform<i8:f32, 0.5:0>>) -> tensor<3xf32> {
  %0 = "stablehlo.convert"(%a) : (tensor<3x!quant.uniform<i8:f32, 0.5:0>>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// expect-error: stablehlo.dot_general C14
// C14: a quantized lhs needs a quantized rhs and result.
func.func @main(%a: tensor<2x3x!quant.uniform<i8:f32, 0.5:0>>, %b: tensor<3x4xf32>) -> tensor<2x4x!quant.uniform<i8:f32, 0.5:0>> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<2x3x!quant.uniform<i8:f32, 0.5:0>>, tensor<3x4xf32>) -> tensor<2x4x!quant.uniform<i8:f32, 0.5:0>>
  return %0 : tensor<2x4x!quant.uniform<i8:f32, 0.5:0>>
}

// -----

// expect-error: stablehlo.dot_general C15
// C15: zero_points(rhs) = 0.
func.func @main(%a: tensor<2x3x!quant.uniform<i8:f32, 0.5:0>>, %b: tensor<3x4x!quant.uniform<i8:f32, 0.5:1>>) -> tensor<2x4x!quant.uniform<i8:f32, 0.5:0>> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<2x3x!quant.uniform<i8:f32, 0.5:0>>, tensor<3x4x!quant.uniform<i8:f32, 0.5:1>>) -> tensor<2x4x!quant.uniform<i8:f32, 0.5:0>>
  return %0 : tensor<2x4x!quant.uniform<i8:f32, 0.5:0>>
}

// -----

// expect-error: stablehlo.dot_general C16
// C16: the quantization dimension of rhs is not a contracting dimension.
func.func @main(%a: tensor<2x3x!quant.uniform<i8:f32, 0.5:0>>, %b: tensor<3x4x!quant.uniform<i8:f32:0, {0.5:0, 0.5:0, 0.5:0}>>) -> tensor<2x4x!quant.uniform<i8:f32, 0.5:0>> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<2x3x!quant.uniform<i8:f32, 0.5:0>>, tensor<3x4x!quant.uniform<i8:f32:0, {0.5:0, 0.5:0, 0.5:0}>>) -> tensor<2x4x!quant.uniform<i8:f32, 0.5:0>>
  return %0 : tensor<2x4x!quant.uniform<i8:f32, 0.5:0>>
}

// -----

// expect-error: stablehlo.dot_general C17
// C17: storage_type(lhs) = storage_type(rhs).
func.func @main(%a: tensor<2x3x!quant.uniform<i8:f32, 0.5:0>>, %b: tensor<3x4x!quant.uniform<i16:f32, 0.5:0>>) -> tensor<2x4x!quant.uniform<i8:f32, 0.5:0>> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<2x3x!quant.uniform<i8:f32, 0.5:0>>, tensor<3x4x!quant.uniform<i16:f32, 0.5:0>>) -> tensor<2x4x!quant.uniform<i8:f32, 0.5:0>>
  return %0 : tensor<2x4x!quant.uniform<i8:f32, 0.5:0>>
}

// -----

// expect-error: stablehlo.dot_general C18
// C18: expressed_type(lhs) = expressed_type(rhs) = expressed_type(result).
func.func @main(%a: tensor<2x3x!quant.uniform<i8:f32, 0.5:0>>, %b: tensor<3x4x!quant.uniform<i8:f32, 0.5:0>>) -> tensor<2x4x!quant.uniform<i8:bf16, 0.5:0>> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<2x3x!quant.uniform<i8:f32, 0.5:0>>, tensor<3x4x!quant.uniform<i8:f32, 0.5:0>>) -> tensor<2x4x!quant.uniform<i8:bf16, 0.5:0>>
  return %0 : tensor<2x4x!quant.uniform<i8:bf16, 0.5:0>>
}

// -----

// expect-error: stablehlo.dot_general C19
// C19: a per-tensor quantized rhs gives a per-tensor quantized result.
func.func @main(%a: tensor<2x3x!quant.uniform<i8:f32, 0.5:0>>, %b: tensor<3x4x!quant.uniform<i8:f32, 0.5:0>>) -> tensor<2x4x!quant.uniform<i8:f32:1, {0.5:0, 0.5:0, 0.5:0, 0.5:0}>> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<2x3x!quant.uniform<i8:f32, 0.5:0>>, tensor<3x4x!quant.uniform<i8:f32, 0.5:0>>) -> tensor<2x4x!quant.uniform<i8:f32:1, {0.5:0, 0.5:0, 0.5:0, 0.5:0}>>
  return %0 : tensor<2x4x!quant.uniform<i8:f32:1, {0.5:0, 0.5:0, 0.5:0, 0.5:0}>>
}

// -----

// expect-error: stablehlo.dot_general C20
// C20: a hybrid dot_general has element_type(lhs) = expressed_type(rhs) = element_type(result).
func.func @main(%a: tensor<2x3xf16>, %b: tensor<3x4x!quant.uniform<i8:f32, 0.5:0>>) -> tensor<2x4xf16> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<2x3xf16>, tensor<3x4x!quant.uniform<i8:f32, 0.5:0>>) -> tensor<2x4xf16>
  return %0 : tensor<2x4xf16>
}

// -----

// expect-error: stablehlo.dot_general I1
// I1: lhs is a tensor or a per-tensor quantized tensor.
func.func @main(%a: tensor<2x3x!quant.uniform<i8:f32:0, {0.5:0, 0.5:0}>>, %b: tensor<3x4x!quant.uniform<i8:f32, 0.5:0>>) -> tensor<2x4x!quant.uniform<i8:f32, 0.5:0>> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<2x3x!quant.uniform<i8:f32:0, {0.5:0, 0.5:0}>>, tensor<3x4x!quant.uniform<i8:f32, 0.5:0>>) -> tensor<2x4x!quant.uniform<i8:f32, 0.5:0>>
  return %0 : tensor<2x4x!quant.uniform<i8:f32, 0.5:0>>
}

// -----

// expect-error: stablehlo.convolution C28
// C28: a quantized lhs needs a quantized rhs and result.
func.func @main(%a: tensor<1x4x2x!quant.uniform<i8:f32, 0.5:0>>, %b: tensor<3x2x2x!quant.uniform<i8:f32, 0.5:0>>) -> tensor<1x2x2xf32> {
  %0 = stablehlo.convolution(%a, %b) dim_numbers = [b, 0, f]x[0, i, o]->[b, 0, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x2x!quant.uniform<i8:f32, 0.5:0>>, tensor<3x2x2x!quant.uniform<i8:f32, 0.5:0>>) -> tensor<1x2x2xf32>
  return %0 : tensor<1x2x2xf32>
}

// -----

// expect-error: stablehlo.convolution C29
// C29: a per-axis rhs is quantized along kernel_output_feature_dimension (2).
func.func @main(%a: tensor<1x4x2x!quant.uniform<i8:f32, 0.5:0>>, %b: tensor<3x2x2x!quant.uniform<i8:f32:1, {0.5:0, 0.5:0}>>) -> tensor<1x2x2x!quant.uniform<i32:f32, 0.25:0>> {
  %0 = stablehlo.convolution(%a, %b) dim_numbers = [b, 0, f]x[0, i, o]->[b, 0, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x2x!quant.uniform<i8:f32, 0.5:0>>, tensor<3x2x2x!quant.uniform<i8:f32:1, {0.5:0, 0.5:0}>>) -> tensor<1x2x2x!quant.uniform<i32:f32, 0.25:0>>
  return %0 : tensor<1x2x2x!quant.uniform<i32:f32, 0.25:0>>
}

// -----

// expect-error: stablehlo.convolution C30
// C30: a per-axis result is quantized along output_feature_dimension (2).
func.func @main(%a: tensor<1x4x2x!quant.uniform<i8:f32, 0.5:0>>, %b: tensor<3x2x2x!quant.uniform<i8:f32:2, {0.5:0, 0.5:0}>>) -> tensor<1x2x2x!quant.uniform<i8:f32:1, {0.5:0, 0.5:0}>> {
  %0 = stablehlo.convolution(%a, %b) dim_numbers = [b, 0, f]x[0, i, o]->[b, 0, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x2x!quant.uniform<i8:f32, 0.5:0>>, tensor<3x2x2x!quant.uniform<i8:f32:2, {0.5:0, 0.5:0}>>) -> tensor<1x2x2x!quant.uniform<i8:f32:1, {0.5:0, 0.5:0}>>
  return %0 : tensor<1x2x2x!quant.uniform<i8:f32:1, {0.5:0, 0.5:0}>>
}

// -----

// expect-error: stablehlo.convolution C31
// C31: storage_type(lhs) = storage_type(rhs).
func.func @main(%a: tensor<1x4x2x!quant.uniform<i8:f32, 0.5:0>>, %b: tensor<3x2x2x!quant.uniform<i16:f32, 0.5:0>>) -> tensor<1x2x2x!quant.uniform<i32:f32, 0.25:0>> {
  %0 = stablehlo.convolution(%a, %b) dim_numbers = [b, 0, f]x[0, i, o]->[b, 0, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x2x!quant.uniform<i8:f32, 0.5:0>>, tensor<3x2x2x!quant.uniform<i16:f32, 0.5:0>>) -> tensor<1x2x2x!quant.uniform<i32:f32, 0.25:0>>
  return %0 : tensor<1x2x2x!quant.uniform<i32:f32, 0.25:0>>
}

// -----

// expect-error: stablehlo.convolution C32
// C32: expressed_type(lhs) = expressed_type(rhs) = expressed_type(result).
func.func @main(%a: tensor<1x4x2x!quant.uniform<i8:f32, 0.5:0>>, %b: tensor<3x2x2x!quant.uniform<i8:f32, 0.5:0>>) -> tensor<1x2x2x!quant.uniform<i32:f16, 0.25:0>> {
  %0 = stablehlo.convolution(%a, %b) dim_numbers = [b, 0, f]x[0, i, o]->[b, 0, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x2x!quant.uniform<i8:f32, 0.5:0>>, tensor<3x2x2x!quant.uniform<i8:f32, 0.5:0>>) -> tensor<1x2x2x!quant.uniform<i32:f16, 0.25:0>>
  return %0 : tensor<1x2x2x!quant.uniform<i32:f16, 0.25:0>>
}

// -----

// expect-error: stablehlo.convolution C33
// C33: a per-tensor quantized rhs gives a per-tensor quantized result.
func.func @main(%a: tensor<1x4x2x!quant.uniform<i8:f32, 0.5:0>>, %b: tensor<3x2x2x!quant.uniform<i8:f32, 0.5:0>>) -> tensor<1x2x2x!quant.uniform<i8:f32:2, {0.5:0, 0.5:0}>> {
  %0 = stablehlo.convolution(%a, %b) dim_numbers = [b, 0, f]x[0, i, o]->[b, 0, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x2x!quant.uniform<i8:f32, 0.5:0>>, tensor<3x2x2x!quant.uniform<i8:f32, 0.5:0>>) -> tensor<1x2x2x!quant.uniform<i8:f32:2, {0.5:0, 0.5:0}>>
  return %0 : tensor<1x2x2x!quant.uniform<i8:f32:2, {0.5:0, 0.5:0}>>
}

// -----

// expect-error: stablehlo.convolution C34
// C34: a hybrid convolution has element_type(lhs) = expressed_type(rhs) = element_type(result).
func.func @main(%a: tensor<1x4x2xf32>, %b: tensor<3x2x2x!quant.uniform<i8:f32, 0.5:0>>) -> tensor<1x2x2xf16> {
  %0 = stablehlo.convolution(%a, %b) dim_numbers = [b, 0, f]x[0, i, o]->[b, 0, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x2xf32>, tensor<3x2x2x!quant.uniform<i8:f32, 0.5:0>>) -> tensor<1x2x2xf16>
  return %0 : tensor<1x2x2xf16>
}

// -----

// expect-error: stablehlo.uniform_quantize C3
// Quantized element type C3: min_value(storage_type) <= storage_min < storage_max <= max_value(storage_type).
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.uniform_quantize %x : (tensor<2xf32>) -> tensor<2x!quant.uniform<i8<5:2>:f32, 0.5:3>>
  %1 = stablehlo.uniform_dequantize %0 : (tensor<2x!quant.uniform<i8<5:2>:f32, 0.5:3>>) -> tensor<2xf32>
  return %1 : tensor<2xf32>
}

// -----

// expect-error: stablehlo.uniform_quantize C5
// Quantized element type C5: 0 < scales.
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.uniform_quantize %x : (tensor<2xf32>) -> tensor<2x!quant.uniform<i8:f32, -5.000000e-01:0>>
  %1 = stablehlo.uniform_dequantize %0 : (tensor<2x!quant.uniform<i8:f32, -5.000000e-01:0>>) -> tensor<2xf32>
  return %1 : tensor<2xf32>
}

// -----

// expect-error: stablehlo.uniform_quantize C6
// Quantized element type C6: is_finite(scales...); 1.0e400 reads as infinity.
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.uniform_quantize %x : (tensor<2xf32>) -> tensor<2x!quant.uniform<i8:f32, 1.0e400:0>>
  %1 = stablehlo.uniform_dequantize %0 : (tensor<2x!quant.uniform<i8:f32, 1.0e400:0>>) -> tensor<2xf32>
  return %1 : tensor<2xf32>
}

// -----

// expect-error: stablehlo.uniform_quantize C7
// Quantized element type C7: storage_min <= zero_points <= storage_max.
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.uniform_quantize %x : (tensor<2xf32>) -> tensor<2x!quant.uniform<i8<-8:7>:f32, 0.5:10>>
  %1 = stablehlo.uniform_dequantize %0 : (tensor<2x!quant.uniform<i8<-8:7>:f32, 0.5:10>>) -> tensor<2xf32>
  return %1 : tensor<2xf32>
}

// -----

// expect-error: stablehlo.uniform_quantize C11
// Quantized element type C11: 0 <= quantization_dimension.
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.uniform_quantize %x : (tensor<2xf32>) -> tensor<2x!quant.uniform<i8:f32:-1, {0.5:0, 0.5:0}>>
  %1 = stablehlo.uniform_dequantize %0 : (tensor<2x!quant.uniform<i8:f32:-1, {0.5:0, 0.5:0}>>) -> tensor<2xf32>
  return %1 : tensor<2xf32>
}

// -----

// expect-error: stablehlo.uniform_quantize C12
// Quantized tensor type C12: quantization_dimension < rank(self).
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.uniform_quantize %x : (tensor<2xf32>) -> tensor<2x!quant.uniform<i8:f32:1, {0.5:0, 0.5:0}>>
  %1 = stablehlo.uniform_dequantize %0 : (tensor<2x!quant.uniform<i8:f32:1, {0.5:0, 0.5:0}>>) -> tensor<2xf32>
  return %1 : tensor<2xf32>
}

// -----

// expect-error: stablehlo.uniform_quantize C13
// Quantized tensor type C13: dim(self, quantization_dimension) = size(scales).
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.uniform_quantize %x : (tensor<2xf32>) -> tensor<2x!quant.uniform<i8:f32:0, {0.5:0, 0.5:0, 0.5:0}>>
  %1 = stablehlo.uniform_dequantize %0 : (tensor<2x!quant.uniform<i8:f32:0, {0.5:0, 0.5:0, 0.5:0}>>) -> tensor<2xf32>
  return %1 : tensor<2xf32>
}

// -----

// expect-error: stablehlo.reduce I1
// I1: reduce's inputs are per-tensor quantized tensors at most (the rule is checked for every op
// whose Inputs table says so, whichever family it belongs to).
func.func @main(%x: tensor<2x3x!quant.uniform<i8:f32:0, {0.5:0, 0.25:0}>>, %z: tensor<!quant.uniform<i8:f32, 0.5:0>>) -> tensor<3x!quant.uniform<i8:f32, 0.5:0>> {
  %0 = stablehlo.reduce(%x init: %z) applies stablehlo.add across dimensions = [0] : (tensor<2x3x!quant.uniform<i8:f32:0, {0.5:0, 0.25:0}>>, tensor<!quant.uniform<i8:f32, 0.5:0>>) -> tensor<3x!quant.uniform<i8:f32, 0.5:0>>
  return %0 : tensor<3x!quant.uniform<i8:f32, 0.5:0>>
}

// -----

// expect-error: stablehlo.sort I1
// I1: sort's inputs are per-tensor quantized tensors at most.
func.func @main(%x: tensor<2x!quant.uniform<i8:f32:0, {0.5:0, 0.25:0}>>) -> tensor<2x!quant.uniform<i8:f32:0, {0.5:0, 0.25:0}>> {
  %0 = "stablehlo.sort"(%x) ({
  ^bb0(%a: tensor<!quant.uniform<i8:f32, 0.5:0>>, %b: tensor<!quant.uniform<i8:f32, 0.5:0>>):
    %1 = stablehlo.compare  LT, %a, %b : (tensor<!quant.uniform<i8:f32, 0.5:0>>, tensor<!quant.uniform<i8:f32, 0.5:0>>) -> tensor<i1>
    stablehlo.return %1 : tensor<i1>
  }) {dimension = 0 : i64} : (tensor<2x!quant.uniform<i8:f32:0, {0.5:0, 0.25:0}>>) -> tensor<2x!quant.uniform<i8:f32:0, {0.5:0, 0.25:0}>>
  return %0 : tensor<2x!quant.uniform<i8:f32:0, {0.5:0, 0.25:0}>>
}
