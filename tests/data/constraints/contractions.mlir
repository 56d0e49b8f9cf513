// expect-ok
// The numbered constraints of dot_general in docs/spec.md of openxla/stablehlo (head), one invalid
// program each below; all are decidable from the types and attributes. `dot`, `einsum`,
// `unary_einsum` and `torch_index_select` are listed among the spec's deprecated operations and
// have no numbered constraints there.
// spec: stablehlo.dot_general C1-C24
// A trailing comma inside #stablehlo.dot<...> is accepted and the print round-trips.
func.func @main(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<2x4xf32> {
  %0 = "stablehlo.dot_general"(%a, %b) {
    dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0],>
  } : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----
// expect-ok
// A known dot algorithm (tf32 x tf32 accumulated in f32) with DEFAULT precision, and an i8 x i8
// product with an i32 result (the result element type is not constrained for non-quantized operands).
func.func @main(%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>, %c: tensor<2x3xi8>, %d: tensor<3x4xi8>) -> (tensor<2x3x5xf32>, tensor<2x4xi32>) {
  %0 = stablehlo.dot_general %a, %b, batching_dims = [0] x [0], contracting_dims = [2] x [1],
    precision = [DEFAULT, DEFAULT],
    algorithm = <lhs_precision_type = tf32, rhs_precision_type = tf32, accumulation_type = f32,
                 lhs_component_count = 1, rhs_component_count = 1, num_primitive_operations = 1,
                 allow_imprecise_accumulation = false>
    : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
  %1 = stablehlo.dot_general %c, %d, contracting_dims = [1] x [0] : (tensor<2x3xi8>, tensor<3x4xi8>) -> tensor<2x4xi32>
  return %0, %1 : tensor<2x3x5xf32>, tensor<2x4xi32>
}

// -----
// expect-ok
// Quantized operands: a per-tensor lhs with a per-axis rhs (zero points 0, quantized along a
// non-contracting dimension) and a per-axis result; and a hybrid product (float lhs and result,
// quantized rhs whose expressed type is the lhs type).
func.func @main(%a: tensor<2x4x!quant.uniform<i8:f32, 0.5:3>>, %b: tensor<4x5x!quant.uniform<i8:f32:1, {0.1, 0.2, 0.3, 0.4, 0.5}>>, %c: tensor<2x4xf32>, %d: tensor<4x5x!quant.uniform<i8:f32, 0.25>>) -> (tensor<2x5x!quant.uniform<i32:f32:1, {0.1, 0.2, 0.3, 0.4, 0.5}>>, tensor<2x5xf32>) {
  %0 = "stablehlo.dot_general"(%a, %b) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}
    : (tensor<2x4x!quant.uniform<i8:f32, 0.5:3>>, tensor<4x5x!quant.uniform<i8:f32:1, {0.1, 0.2, 0.3, 0.4, 0.5}>>) -> tensor<2x5x!quant.uniform<i32:f32:1, {0.1, 0.2, 0.3, 0.4, 0.5}>>
  %1 = "stablehlo.dot_general"(%c, %d) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}
    : (tensor<2x4xf32>, tensor<4x5x!quant.uniform<i8:f32, 0.25>>) -> tensor<2x5xf32>
  return %0, %1 : tensor<2x5x!quant.uniform<i32:f32:1, {0.1, 0.2, 0.3, 0.4, 0.5}>>, tensor<2x5xf32>
}

// -----
// expect-error: stablehlo.dot_general C1
func.func @main(%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>) -> tensor<2x3x2x5xf32> {
  %0 = "stablehlo.dot_general"(%a, %b) {
    dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [1]>
  } : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x2x5xf32>
  return %0 : tensor<2x3x2x5xf32>
}

// -----
// expect-error: stablehlo.dot_general C2
func.func @main(%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>) -> tensor<2x3x5xf32> {
  %0 = "stablehlo.dot_general"(%a, %b) {
    dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [0], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [1, 2]>
  } : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
  return %0 : tensor<2x3x5xf32>
}

// -----
// expect-error: stablehlo.dot_general C3
func.func @main(%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>) -> tensor<2x3x5xf32> {
  %0 = "stablehlo.dot_general"(%a, %b) {
    dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [0], lhs_contracting_dimensions = [0], rhs_contracting_dimensions = [1]>
  } : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
  return %0 : tensor<2x3x5xf32>
}

// -----
// expect-error: stablehlo.dot_general C4
func.func @main(%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>) -> tensor<2x3x5xf32> {
  %0 = "stablehlo.dot_general"(%a, %b) {
    dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [0], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [0]>
  } : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
  return %0 : tensor<2x3x5xf32>
}

// -----
// expect-error: stablehlo.dot_general C5
func.func @main(%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>) -> tensor<2x3x5xf32> {
  %0 = "stablehlo.dot_general"(%a, %b) {
    dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [3], rhs_batching_dimensions = [0], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [1]>
  } : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
  return %0 : tensor<2x3x5xf32>
}

// -----
// expect-error: stablehlo.dot_general C6
func.func @main(%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>) -> tensor<2x3x5xf32> {
  %0 = "stablehlo.dot_general"(%a, %b) {
    dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [0], lhs_contracting_dimensions = [3], rhs_contracting_dimensions = [1]>
  } : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
  return %0 : tensor<2x3x5xf32>
}

// -----
// expect-error: stablehlo.dot_general C7
func.func @main(%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>) -> tensor<2x3x5xf32> {
  %0 = "stablehlo.dot_general"(%a, %b) {
    dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [3], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [1]>
  } : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
  return %0 : tensor<2x3x5xf32>
}

// -----
// expect-error: stablehlo.dot_general C8
func.func @main(%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>) -> tensor<2x3x5xf32> {
  %0 = "stablehlo.dot_general"(%a, %b) {
    dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [0], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [3]>
  } : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
  return %0 : tensor<2x3x5xf32>
}

// -----
// expect-error: stablehlo.dot_general C9
func.func @main(%a: tensor<2x3x4xf32>, %b: tensor<3x4x5xf32>) -> tensor<2x3x5xf32> {
  %0 = "stablehlo.dot_general"(%a, %b) {
    dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [0], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [1]>
  } : (tensor<2x3x4xf32>, tensor<3x4x5xf32>) -> tensor<2x3x5xf32>
  return %0 : tensor<2x3x5xf32>
}

// -----
// expect-error: stablehlo.dot_general C10
func.func @main(%a: tensor<2x3x4xf32>, %b: tensor<2x5x5xf32>) -> tensor<2x3x5xf32> {
  %0 = "stablehlo.dot_general"(%a, %b) {
    dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [0], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [1]>
  } : (tensor<2x3x4xf32>, tensor<2x5x5xf32>) -> tensor<2x3x5xf32>
  return %0 : tensor<2x3x5xf32>
}

// -----
// expect-error: stablehlo.dot_general C11
// precision_config, when given, has one entry per operand.
func.func @main(%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>) -> tensor<2x3x5xf32> {
  %0 = "stablehlo.dot_general"(%a, %b) {
    dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [0], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [1]>,
    precision_config = [#stablehlo<precision HIGH>]
  } : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
  return %0 : tensor<2x3x5xf32>
}

// -----
// expect-error: stablehlo.dot_general C12
func.func @main(%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>) -> tensor<2x5x3xf32> {
  %0 = "stablehlo.dot_general"(%a, %b) {
    dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [0], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [1]>
  } : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x5x3xf32>
  return %0 : tensor<2x5x3xf32>
}

// -----
// expect-error: stablehlo.dot_general C13
func.func @main(%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf16>) -> tensor<2x3x5xf32> {
  %0 = "stablehlo.dot_general"(%a, %b) {
    dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [0], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [1]>
  } : (tensor<2x3x4xf32>, tensor<2x4x5xf16>) -> tensor<2x3x5xf32>
  return %0 : tensor<2x3x5xf32>
}

// -----
// expect-error: stablehlo.dot_general C14
// A quantized lhs needs a quantized result.
func.func @main(%a: tensor<2x4x!quant.uniform<i8:f32, 0.5:3>>, %b: tensor<4x5x!quant.uniform<i8:f32, 0.25>>) -> tensor<2x5xf32> {
  %0 = "stablehlo.dot_general"(%a, %b) {
    dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>
  } : (tensor<2x4x!quant.uniform<i8:f32, 0.5:3>>, tensor<4x5x!quant.uniform<i8:f32, 0.25>>) -> tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}

// -----
// expect-error: stablehlo.dot_general C15
// The rhs zero point must be 0.
func.func @main(%a: tensor<2x4x!quant.uniform<i8:f32, 0.5:3>>, %b: tensor<4x5x!quant.uniform<i8:f32, 0.25:1>>) -> tensor<2x5x!quant.uniform<i32:f32, 0.125>> {
  %0 = "stablehlo.dot_general"(%a, %b) {
    dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>
  } : (tensor<2x4x!quant.uniform<i8:f32, 0.5:3>>, tensor<4x5x!quant.uniform<i8:f32, 0.25:1>>) -> tensor<2x5x!quant.uniform<i32:f32, 0.125>>
  return %0 : tensor<2x5x!quant.uniform<i32:f32, 0.125>>
}

// -----
// expect-error: stablehlo.dot_general C16
// The rhs is quantized along its contracting dimension.
func.func @main(%a: tensor<2x4x!quant.uniform<i8:f32, 0.5:3>>, %b: tensor<4x5x!quant.uniform<i8:f32:0, {0.1, 0.2, 0.3, 0.4}>>) -> tensor<2x5x!quant.uniform<i32:f32, 0.125>> {
  %0 = "stablehlo.dot_general"(%a, %b) {
    dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>
  } : (tensor<2x4x!quant.uniform<i8:f32, 0.5:3>>, tensor<4x5x!quant.uniform<i8:f32:0, {0.1, 0.2, 0.3, 0.4}>>) -> tensor<2x5x!quant.uniform<i32:f32, 0.125>>
  return %0 : tensor<2x5x!quant.uniform<i32:f32, 0.125>>
}

// -----
// expect-error: stablehlo.dot_general C17
func.func @main(%a: tensor<2x4x!quant.uniform<i8:f32, 0.5:3>>, %b: tensor<4x5x!quant.uniform<i16:f32, 0.25>>) -> tensor<2x5x!quant.uniform<i32:f32, 0.125>> {
  %0 = "stablehlo.dot_general"(%a, %b) {
    dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>
  } : (tensor<2x4x!quant.uniform<i8:f32, 0.5:3>>, tensor<4x5x!quant.uniform<i16:f32, 0.25>>) -> tensor<2x5x!quant.uniform<i32:f32, 0.125>>
  return %0 : tensor<2x5x!quant.uniform<i32:f32, 0.125>>
}

// -----
// expect-error: stablehlo.dot_general C18
func.func @main(%a: tensor<2x4x!quant.uniform<i8:f32, 0.5:3>>, %b: tensor<4x5x!quant.uniform<i8:f32, 0.25>>) -> tensor<2x5x!quant.uniform<i32:f16, 0.125>> {
  %0 = "stablehlo.dot_general"(%a, %b) {
    dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>
  } : (tensor<2x4x!quant.uniform<i8:f32, 0.5:3>>, tensor<4x5x!quant.uniform<i8:f32, 0.25>>) -> tensor<2x5x!quant.uniform<i32:f16, 0.125>>
  return %0 : tensor<2x5x!quant.uniform<i32:f16, 0.125>>
}

// -----
// expect-error: stablehlo.dot_general C19
// A per-tensor rhs gives a per-tensor result.
func.func @main(%a: tensor<2x4x!quant.uniform<i8:f32, 0.5:3>>, %b: tensor<4x5x!quant.uniform<i8:f32, 0.25>>) -> tensor<2x5x!quant.uniform<i32:f32:1, {0.1, 0.2, 0.3, 0.4, 0.5}>> {
  %0 = "stablehlo.dot_general"(%a, %b) {
    dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>
  } : (tensor<2x4x!quant.uniform<i8:f32, 0.5:3>>, tensor<4x5x!quant.uniform<i8:f32, 0.25>>) -> tensor<2x5x!quant.uniform<i32:f32:1, {0.1, 0.2, 0.3, 0.4, 0.5}>>
  return %0 : tensor<2x5x!quant.uniform<i32:f32:1, {0.1, 0.2, 0.3, 0.4, 0.5}>>
}

// -----
// expect-error: stablehlo.dot_general C20
// A hybrid product (float lhs, quantized rhs) gives a result of the lhs type.
func.func @main(%a: tensor<2x4xf32>, %b: tensor<4x5x!quant.uniform<i8:f32, 0.25>>) -> tensor<2x5xf16> {
  %0 = "stablehlo.dot_general"(%a, %b) {
    dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>
  } : (tensor<2x4xf32>, tensor<4x5x!quant.uniform<i8:f32, 0.25>>) -> tensor<2x5xf16>
  return %0 : tensor<2x5xf16>
}

// -----
// expect-error: stablehlo.dot_general C21
// With an algorithm, every precision_config entry is DEFAULT.
func.func @main(%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>) -> tensor<2x3x5xf32> {
  %0 = "stablehlo.dot_general"(%a, %b) {
    dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [0], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [1]>,
    precision_config = [#stablehlo<precision HIGHEST>, #stablehlo<precision DEFAULT>],
    algorithm = #stablehlo.dot_algorithm<lhs_precision_type = bf16, rhs_precision_type = bf16, accumulation_type = f32, lhs_component_count = 1, rhs_component_count = 1, num_primitive_operations = 1, allow_imprecise_accumulation = false>
  } : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
  return %0 : tensor<2x3x5xf32>
}

// -----
// expect-error: stablehlo.dot_general C22
func.func @main(%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>) -> tensor<2x3x5xf32> {
  %0 = "stablehlo.dot_general"(%a, %b) {
    dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [0], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [1]>,
    precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>],
    algorithm = #stablehlo.dot_algorithm<lhs_precision_type = bf16, rhs_precision_type = bf16, accumulation_type = f32, lhs_component_count = 0, rhs_component_count = 1, num_primitive_operations = 1, allow_imprecise_accumulation = false>
  } : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
  return %0 : tensor<2x3x5xf32>
}

// -----
// expect-error: stablehlo.dot_general C23
func.func @main(%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>) -> tensor<2x3x5xf32> {
  %0 = "stablehlo.dot_general"(%a, %b) {
    dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [0], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [1]>,
    precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>],
    algorithm = #stablehlo.dot_algorithm<lhs_precision_type = bf16, rhs_precision_type = bf16, accumulation_type = f32, lhs_component_count = 1, rhs_component_count = 0, num_primitive_operations = 1, allow_imprecise_accumulation = false>
  } : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
  return %0 : tensor<2x3x5xf32>
}

// -----
// expect-error: stablehlo.dot_general C24
func.func @main(%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>) -> tensor<2x3x5xf32> {
  %0 = "stablehlo.dot_general"(%a, %b) {
    dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [0], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [1]>,
    precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>],
    algorithm = #stablehlo.dot_algorithm<lhs_precision_type = bf16, rhs_precision_type = bf16, accumulation_type = f32, lhs_component_count = 1, rhs_component_count = 1, num_primitive_operations = 0, allow_imprecise_accumulation = false>
  } : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
  return %0 : tensor<2x3x5xf32>
}
