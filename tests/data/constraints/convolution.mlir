// expect-ok
// The numbered constraints of convolution and dynamic_conv in docs/spec.md of openxla/stablehlo
// (head); both ops share one numbered list. One invalid program each below.
// spec: stablehlo.convolution C1-C34
// spec: stablehlo.dynamic_conv C1-C34
// dynamic_conv's C25 fixes the result's spatial sizes from the padding *values*: the verifier
// checks them when the padding operand is a stablehlo.constant and leaves them alone otherwise
// (the batch and feature sizes of C25, and everything else, are always decidable).
func.func @main(%lhs: tensor<1x4x4x1xi64>, %rhs: tensor<3x3x1x1xi64>, %p: tensor<2x2xi64>) -> (tensor<1x2x2x1xi64>, tensor<1x?x?x1xi64>) {
  %pad = stablehlo.constant dense<[[1, 1], [1, 1]]> : tensor<2x2xi64>
  %0 = "stablehlo.dynamic_conv"(%lhs, %rhs, %pad) {
    window_strides = array<i64: 4, 4>, lhs_dilation = array<i64: 2, 2>, rhs_dilation = array<i64: 1, 1>,
    window_reversal = array<i1: false, false>,
    dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>,
    feature_group_count = 1 : i64, batch_group_count = 1 : i64,
    precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]
  } : (tensor<1x4x4x1xi64>, tensor<3x3x1x1xi64>, tensor<2x2xi64>) -> tensor<1x2x2x1xi64>
  %1 = "stablehlo.dynamic_conv"(%lhs, %rhs, %p) {
    dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>,
    feature_group_count = 1 : i64, batch_group_count = 1 : i64
  } : (tensor<1x4x4x1xi64>, tensor<3x3x1x1xi64>, tensor<2x2xi64>) -> tensor<1x?x?x1xi64>
  return %0, %1 : tensor<1x2x2x1xi64>, tensor<1x?x?x1xi64>
}

// -----
// expect-ok
// Quantized convolutions: per-tensor lhs, rhs quantized per axis along its output feature
// dimension, result per axis along its output feature dimension; and a hybrid one (float lhs and
// result, quantized rhs expressed in the lhs type).
func.func @main(%a: tensor<1x4x4x2x!quant.uniform<i8:f32, 0.5:1>>, %b: tensor<3x3x2x4x!quant.uniform<i8:f32:3, {0.1, 0.2, 0.3, 0.4}>>, %c: tensor<1x4x4x2xf32>, %d: tensor<3x3x2x4x!quant.uniform<i8:f32, 0.25>>) -> (tensor<1x2x2x4x!quant.uniform<i32:f32:3, {0.1, 0.2, 0.3, 0.4}>>, tensor<1x2x2x4xf32>) {
  %0 = stablehlo.convolution(%a, %b) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [1, 1]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64}
    : (tensor<1x4x4x2x!quant.uniform<i8:f32, 0.5:1>>, tensor<3x3x2x4x!quant.uniform<i8:f32:3, {0.1, 0.2, 0.3, 0.4}>>) -> tensor<1x2x2x4x!quant.uniform<i32:f32:3, {0.1, 0.2, 0.3, 0.4}>>
  %1 = stablehlo.convolution(%c, %d) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [1, 1]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64}
    : (tensor<1x4x4x2xf32>, tensor<3x3x2x4x!quant.uniform<i8:f32, 0.25>>) -> tensor<1x2x2x4xf32>
  return %0, %1 : tensor<1x2x2x4x!quant.uniform<i32:f32:3, {0.1, 0.2, 0.3, 0.4}>>, tensor<1x2x2x4xf32>
}

// -----
// expect-ok
// A result wider than its operands, as JAX lowers preferred_element_type. The spec's C27 reads
// element_type(lhs) = element_type(rhs) = element_type(result), but StableHLO's own verifier
// leaves the result's element type unchecked (openxla/stablehlo#1896) and its interpreter
// accumulates in the result type (#2953); hlodbg accepts these so that JAX programs verify.
func.func @main(%a: tensor<1x4x4x2xf16>, %b: tensor<3x3x2x4xf16>, %c: tensor<1x4x4x2xi8>, %d: tensor<3x3x2x4xi8>) -> (tensor<1x2x2x4xf32>, tensor<1x2x2x4xi32>) {
  %0 = stablehlo.convolution(%a, %b) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [1, 1]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64}
    : (tensor<1x4x4x2xf16>, tensor<3x3x2x4xf16>) -> tensor<1x2x2x4xf32>
  %1 = stablehlo.convolution(%c, %d) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [1, 1]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64}
    : (tensor<1x4x4x2xi8>, tensor<3x3x2x4xi8>) -> tensor<1x2x2x4xi32>
  return %0, %1 : tensor<1x2x2x4xf32>, tensor<1x2x2x4xi32>
}

// ===== convolution ===============================================================================

// -----
// expect-error: stablehlo.convolution C1
func.func @main(%a: tensor<1x4x4x2xf32>, %b: tensor<3x3x2xf32>) -> tensor<1x2x2x4xf32> {
  %0 = "stablehlo.convolution"(%a, %b) {
    window_strides = array<i64: 1, 1>,
    padding = dense<0> : tensor<2x2xi64>,
    lhs_dilation = array<i64: 1, 1>,
    rhs_dilation = array<i64: 1, 1>,
    dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>,
    feature_group_count = 1 : i64,
    batch_group_count = 1 : i64
  } : (tensor<1x4x4x2xf32>, tensor<3x3x2xf32>) -> tensor<1x2x2x4xf32>
  return %0 : tensor<1x2x2x4xf32>
}

// -----
// expect-error: stablehlo.convolution C2
func.func @main(%a: tensor<1x4x4x2xf32>, %b: tensor<3x3x2x4xf32>) -> tensor<1x2x2x4xf32> {
  %0 = "stablehlo.convolution"(%a, %b) {
    window_strides = array<i64: 1>,
    padding = dense<0> : tensor<2x2xi64>,
    lhs_dilation = array<i64: 1, 1>,
    rhs_dilation = array<i64: 1, 1>,
    dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>,
    feature_group_count = 1 : i64,
    batch_group_count = 1 : i64
  } : (tensor<1x4x4x2xf32>, tensor<3x3x2x4xf32>) -> tensor<1x2x2x4xf32>
  return %0 : tensor<1x2x2x4xf32>
}

// -----
// expect-error: stablehlo.convolution C3
func.func @main(%a: tensor<1x4x4x2xf32>, %b: tensor<3x3x2x4xf32>) -> tensor<1x2x2x4xf32> {
  %0 = "stablehlo.convolution"(%a, %b) {
    window_strides = array<i64: 1, 0>,
    padding = dense<0> : tensor<2x2xi64>,
    lhs_dilation = array<i64: 1, 1>,
    rhs_dilation = array<i64: 1, 1>,
    dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>,
    feature_group_count = 1 : i64,
    batch_group_count = 1 : i64
  } : (tensor<1x4x4x2xf32>, tensor<3x3x2x4xf32>) -> tensor<1x2x2x4xf32>
  return %0 : tensor<1x2x2x4xf32>
}

// -----
// expect-error: stablehlo.convolution C4
func.func @main(%a: tensor<1x4x4x2xf32>, %b: tensor<3x3x2x4xf32>) -> tensor<1x2x2x4xf32> {
  %0 = "stablehlo.convolution"(%a, %b) {
    window_strides = array<i64: 1, 1>,
    padding = dense<0> : tensor<3x2xi64>,
    lhs_dilation = array<i64: 1, 1>,
    rhs_dilation = array<i64: 1, 1>,
    dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>,
    feature_group_count = 1 : i64,
    batch_group_count = 1 : i64
  } : (tensor<1x4x4x2xf32>, tensor<3x3x2x4xf32>) -> tensor<1x2x2x4xf32>
  return %0 : tensor<1x2x2x4xf32>
}

// -----
// expect-error: stablehlo.convolution C5
func.func @main(%a: tensor<1x4x4x2xf32>, %b: tensor<3x3x2x4xf32>) -> tensor<1x2x2x4xf32> {
  %0 = "stablehlo.convolution"(%a, %b) {
    window_strides = array<i64: 1, 1>,
    padding = dense<0> : tensor<2x2xi64>,
    lhs_dilation = array<i64: 1>,
    rhs_dilation = array<i64: 1, 1>,
    dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>,
    feature_group_count = 1 : i64,
    batch_group_count = 1 : i64
  } : (tensor<1x4x4x2xf32>, tensor<3x3x2x4xf32>) -> tensor<1x2x2x4xf32>
  return %0 : tensor<1x2x2x4xf32>
}

// -----
// expect-error: stablehlo.convolution C6
func.func @main(%a: tensor<1x4x4x2xf32>, %b: tensor<3x3x2x4xf32>) -> tensor<1x2x2x4xf32> {
  %0 = "stablehlo.convolution"(%a, %b) {
    window_strides = array<i64: 1, 1>,
    padding = dense<0> : tensor<2x2xi64>,
    lhs_dilation = array<i64: 0, 1>,
    rhs_dilation = array<i64: 1, 1>,
    dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>,
    feature_group_count = 1 : i64,
    batch_group_count = 1 : i64
  } : (tensor<1x4x4x2xf32>, tensor<3x3x2x4xf32>) -> tensor<1x2x2x4xf32>
  return %0 : tensor<1x2x2x4xf32>
}

// -----
// expect-error: stablehlo.convolution C7
func.func @main(%a: tensor<1x4x4x2xf32>, %b: tensor<3x3x2x4xf32>) -> tensor<1x2x2x4xf32> {
  %0 = "stablehlo.convolution"(%a, %b) {
    window_strides = array<i64: 1, 1>,
    padding = dense<0> : tensor<2x2xi64>,
    lhs_dilation = array<i64: 1, 1>,
    rhs_dilation = array<i64: 1, 1, 1>,
    dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>,
    feature_group_count = 1 : i64,
    batch_group_count = 1 : i64
  } : (tensor<1x4x4x2xf32>, tensor<3x3x2x4xf32>) -> tensor<1x2x2x4xf32>
  return %0 : tensor<1x2x2x4xf32>
}

// -----
// expect-error: stablehlo.convolution C8
func.func @main(%a: tensor<1x4x4x2xf32>, %b: tensor<3x3x2x4xf32>) -> tensor<1x2x2x4xf32> {
  %0 = "stablehlo.convolution"(%a, %b) {
    window_strides = array<i64: 1, 1>,
    padding = dense<0> : tensor<2x2xi64>,
    lhs_dilation = array<i64: 1, 1>,
    rhs_dilation = array<i64: 1, -1>,
    dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>,
    feature_group_count = 1 : i64,
    batch_group_count = 1 : i64
  } : (tensor<1x4x4x2xf32>, tensor<3x3x2x4xf32>) -> tensor<1x2x2x4xf32>
  return %0 : tensor<1x2x2x4xf32>
}

// -----
// expect-error: stablehlo.convolution C9
func.func @main(%a: tensor<1x4x4x2xf32>, %b: tensor<3x3x2x4xf32>) -> tensor<1x2x2x4xf32> {
  %0 = "stablehlo.convolution"(%a, %b) {
    window_strides = array<i64: 1, 1>,
    padding = dense<0> : tensor<2x2xi64>,
    lhs_dilation = array<i64: 1, 1>,
    rhs_dilation = array<i64: 1, 1>,
    window_reversal = array<i1: false>,
    dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>,
    feature_group_count = 1 : i64,
    batch_group_count = 1 : i64
  } : (tensor<1x4x4x2xf32>, tensor<3x3x2x4xf32>) -> tensor<1x2x2x4xf32>
  return %0 : tensor<1x2x2x4xf32>
}

// -----
// expect-error: stablehlo.convolution C10
// The batch size 1 does not split into 2 batch groups.
func.func @main(%a: tensor<1x4x4x2xf32>, %b: tensor<3x3x2x4xf32>) -> tensor<1x2x2x4xf32> {
  %0 = "stablehlo.convolution"(%a, %b) {
    window_strides = array<i64: 1, 1>,
    padding = dense<0> : tensor<2x2xi64>,
    lhs_dilation = array<i64: 1, 1>,
    rhs_dilation = array<i64: 1, 1>,
    dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>,
    feature_group_count = 1 : i64,
    batch_group_count = 2 : i64
  } : (tensor<1x4x4x2xf32>, tensor<3x3x2x4xf32>) -> tensor<1x2x2x4xf32>
  return %0 : tensor<1x2x2x4xf32>
}

// -----
// expect-error: stablehlo.convolution C11
// The 2 input features do not split into 3 feature groups.
func.func @main(%a: tensor<1x4x4x2xf32>, %b: tensor<3x3x2x4xf32>) -> tensor<1x2x2x4xf32> {
  %0 = "stablehlo.convolution"(%a, %b) {
    window_strides = array<i64: 1, 1>,
    padding = dense<0> : tensor<2x2xi64>,
    lhs_dilation = array<i64: 1, 1>,
    rhs_dilation = array<i64: 1, 1>,
    dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>,
    feature_group_count = 3 : i64,
    batch_group_count = 1 : i64
  } : (tensor<1x4x4x2xf32>, tensor<3x3x2x4xf32>) -> tensor<1x2x2x4xf32>
  return %0 : tensor<1x2x2x4xf32>
}

// -----
// expect-error: stablehlo.convolution C12
func.func @main(%a: tensor<1x4x4x2xf32>, %b: tensor<3x3x2x4xf32>) -> tensor<1x2x2x4xf32> {
  %0 = "stablehlo.convolution"(%a, %b) {
    window_strides = array<i64: 1, 1>,
    padding = dense<0> : tensor<2x2xi64>,
    lhs_dilation = array<i64: 1, 1>,
    rhs_dilation = array<i64: 1, 1>,
    dimension_numbers = #stablehlo.conv<raw input_batch_dimension = 0, input_feature_dimension = 3, input_spatial_dimensions = [1], kernel_input_feature_dimension = 2, kernel_output_feature_dimension = 3, kernel_spatial_dimensions = [0, 1], output_batch_dimension = 0, output_feature_dimension = 3, output_spatial_dimensions = [1, 2]>,
    feature_group_count = 1 : i64,
    batch_group_count = 1 : i64
  } : (tensor<1x4x4x2xf32>, tensor<3x3x2x4xf32>) -> tensor<1x2x2x4xf32>
  return %0 : tensor<1x2x2x4xf32>
}

// -----
// expect-error: stablehlo.convolution C13
func.func @main(%a: tensor<1x4x4x2xf32>, %b: tensor<3x3x2x4xf32>) -> tensor<1x2x2x4xf32> {
  %0 = "stablehlo.convolution"(%a, %b) {
    window_strides = array<i64: 1, 1>,
    padding = dense<0> : tensor<2x2xi64>,
    lhs_dilation = array<i64: 1, 1>,
    rhs_dilation = array<i64: 1, 1>,
    dimension_numbers = #stablehlo.conv<raw input_batch_dimension = 0, input_feature_dimension = 3, input_spatial_dimensions = [1, 1], kernel_input_feature_dimension = 2, kernel_output_feature_dimension = 3, kernel_spatial_dimensions = [0, 1], output_batch_dimension = 0, output_feature_dimension = 3, output_spatial_dimensions = [1, 2]>,
    feature_group_count = 1 : i64,
    batch_group_count = 1 : i64
  } : (tensor<1x4x4x2xf32>, tensor<3x3x2x4xf32>) -> tensor<1x2x2x4xf32>
  return %0 : tensor<1x2x2x4xf32>
}

// -----
// expect-error: stablehlo.convolution C14
func.func @main(%a: tensor<1x4x4x2xf32>, %b: tensor<3x3x1x4xf32>) -> tensor<1x2x2x4xf32> {
  %0 = "stablehlo.convolution"(%a, %b) {
    window_strides = array<i64: 1, 1>,
    padding = dense<0> : tensor<2x2xi64>,
    lhs_dilation = array<i64: 1, 1>,
    rhs_dilation = array<i64: 1, 1>,
    dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>,
    feature_group_count = 1 : i64,
    batch_group_count = 1 : i64
  } : (tensor<1x4x4x2xf32>, tensor<3x3x1x4xf32>) -> tensor<1x2x2x4xf32>
  return %0 : tensor<1x2x2x4xf32>
}

// -----
// expect-error: stablehlo.convolution C15
func.func @main(%a: tensor<2x4x4x2xf32>, %b: tensor<3x3x2x3xf32>) -> tensor<1x2x2x3xf32> {
  %0 = "stablehlo.convolution"(%a, %b) {
    window_strides = array<i64: 1, 1>,
    padding = dense<0> : tensor<2x2xi64>,
    lhs_dilation = array<i64: 1, 1>,
    rhs_dilation = array<i64: 1, 1>,
    dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>,
    feature_group_count = 1 : i64,
    batch_group_count = 2 : i64
  } : (tensor<2x4x4x2xf32>, tensor<3x3x2x3xf32>) -> tensor<1x2x2x3xf32>
  return %0 : tensor<1x2x2x3xf32>
}

// -----
// expect-error: stablehlo.convolution C16
func.func @main(%a: tensor<1x4x4x2xf32>, %b: tensor<3x3x1x3xf32>) -> tensor<1x2x2x3xf32> {
  %0 = "stablehlo.convolution"(%a, %b) {
    window_strides = array<i64: 1, 1>,
    padding = dense<0> : tensor<2x2xi64>,
    lhs_dilation = array<i64: 1, 1>,
    rhs_dilation = array<i64: 1, 1>,
    dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>,
    feature_group_count = 2 : i64,
    batch_group_count = 1 : i64
  } : (tensor<1x4x4x2xf32>, tensor<3x3x1x3xf32>) -> tensor<1x2x2x3xf32>
  return %0 : tensor<1x2x2x3xf32>
}

// -----
// expect-error: stablehlo.convolution C17
func.func @main(%a: tensor<1x4x4x2xf32>, %b: tensor<3x3x2x4xf32>) -> tensor<1x2x2x4xf32> {
  %0 = "stablehlo.convolution"(%a, %b) {
    window_strides = array<i64: 1, 1>,
    padding = dense<0> : tensor<2x2xi64>,
    lhs_dilation = array<i64: 1, 1>,
    rhs_dilation = array<i64: 1, 1>,
    dimension_numbers = #stablehlo.conv<raw input_batch_dimension = 0, input_feature_dimension = 3, input_spatial_dimensions = [1, 2], kernel_input_feature_dimension = 2, kernel_output_feature_dimension = 3, kernel_spatial_dimensions = [0], output_batch_dimension = 0, output_feature_dimension = 3, output_spatial_dimensions = [1, 2]>,
    feature_group_count = 1 : i64,
    batch_group_count = 1 : i64
  } : (tensor<1x4x4x2xf32>, tensor<3x3x2x4xf32>) -> tensor<1x2x2x4xf32>
  return %0 : tensor<1x2x2x4xf32>
}

// -----
// expect-error: stablehlo.convolution C18
func.func @main(%a: tensor<1x4x4x2xf32>, %b: tensor<3x3x2x4xf32>) -> tensor<1x2x2x4xf32> {
  %0 = "stablehlo.convolution"(%a, %b) {
    window_strides = array<i64: 1, 1>,
    padding = dense<0> : tensor<2x2xi64>,
    lhs_dilation = array<i64: 1, 1>,
    rhs_dilation = array<i64: 1, 1>,
    dimension_numbers = #stablehlo.conv<raw input_batch_dimension = 0, input_feature_dimension = 3, input_spatial_dimensions = [1, 2], kernel_input_feature_dimension = 2, kernel_output_feature_dimension = 3, kernel_spatial_dimensions = [0, 4], output_batch_dimension = 0, output_feature_dimension = 3, output_spatial_dimensions = [1, 2]>,
    feature_group_count = 1 : i64,
    batch_group_count = 1 : i64
  } : (tensor<1x4x4x2xf32>, tensor<3x3x2x4xf32>) -> tensor<1x2x2x4xf32>
  return %0 : tensor<1x2x2x4xf32>
}

// -----
// expect-error: stablehlo.convolution C19
func.func @main(%a: tensor<1x4x4x2xf32>, %b: tensor<3x3x2x4xf32>) -> tensor<1x2x2x4xf32> {
  %0 = "stablehlo.convolution"(%a, %b) {
    window_strides = array<i64: 1, 1>,
    padding = dense<0> : tensor<2x2xi64>,
    lhs_dilation = array<i64: 1, 1>,
    rhs_dilation = array<i64: 1, 1>,
    dimension_numbers = #stablehlo.conv<raw input_batch_dimension = 0, input_feature_dimension = 3, input_spatial_dimensions = [1, 2], kernel_input_feature_dimension = 2, kernel_output_feature_dimension = 3, kernel_spatial_dimensions = [0, 1], output_batch_dimension = 0, output_feature_dimension = 3, output_spatial_dimensions = [1]>,
    feature_group_count = 1 : i64,
    batch_group_count = 1 : i64
  } : (tensor<1x4x4x2xf32>, tensor<3x3x2x4xf32>) -> tensor<1x2x2x4xf32>
  return %0 : tensor<1x2x2x4xf32>
}

// -----
// expect-error: stablehlo.convolution C20
func.func @main(%a: tensor<1x4x4x2xf32>, %b: tensor<3x3x2x4xf32>) -> tensor<1x2x2x4xf32> {
  %0 = "stablehlo.convolution"(%a, %b) {
    window_strides = array<i64: 1, 1>,
    padding = dense<0> : tensor<2x2xi64>,
    lhs_dilation = array<i64: 1, 1>,
    rhs_dilation = array<i64: 1, 1>,
    dimension_numbers = #stablehlo.conv<raw input_batch_dimension = 0, input_feature_dimension = 3, input_spatial_dimensions = [1, 2], kernel_input_feature_dimension = 2, kernel_output_feature_dimension = 3, kernel_spatial_dimensions = [0, 1], output_batch_dimension = 0, output_feature_dimension = 3, output_spatial_dimensions = [1, 1]>,
    feature_group_count = 1 : i64,
    batch_group_count = 1 : i64
  } : (tensor<1x4x4x2xf32>, tensor<3x3x2x4xf32>) -> tensor<1x2x2x4xf32>
  return %0 : tensor<1x2x2x4xf32>
}

// -----
// expect-error: stablehlo.convolution C21
func.func @main(%a: tensor<1x4x4x2xf32>, %b: tensor<3x3x2x4xf32>) -> tensor<1x2x2x4xf32> {
  %0 = "stablehlo.convolution"(%a, %b) {
    window_strides = array<i64: 1, 1>,
    padding = dense<0> : tensor<2x2xi64>,
    lhs_dilation = array<i64: 1, 1>,
    rhs_dilation = array<i64: 1, 1>,
    dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>,
    feature_group_count = 0 : i64,
    batch_group_count = 1 : i64
  } : (tensor<1x4x4x2xf32>, tensor<3x3x2x4xf32>) -> tensor<1x2x2x4xf32>
  return %0 : tensor<1x2x2x4xf32>
}

// -----
// expect-error: stablehlo.convolution C22
func.func @main(%a: tensor<1x4x4x2xf32>, %b: tensor<3x3x2x4xf32>) -> tensor<1x2x2x4xf32> {
  %0 = "stablehlo.convolution"(%a, %b) {
    window_strides = array<i64: 1, 1>,
    padding = dense<0> : tensor<2x2xi64>,
    lhs_dilation = array<i64: 1, 1>,
    rhs_dilation = array<i64: 1, 1>,
    dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>,
    feature_group_count = 1 : i64,
    batch_group_count = 0 : i64
  } : (tensor<1x4x4x2xf32>, tensor<3x3x2x4xf32>) -> tensor<1x2x2x4xf32>
  return %0 : tensor<1x2x2x4xf32>
}

// -----
// expect-error: stablehlo.convolution C23
func.func @main(%a: tensor<2x4x4x2xf32>, %b: tensor<3x3x1x4xf32>) -> tensor<1x2x2x4xf32> {
  %0 = "stablehlo.convolution"(%a, %b) {
    window_strides = array<i64: 1, 1>,
    padding = dense<0> : tensor<2x2xi64>,
    lhs_dilation = array<i64: 1, 1>,
    rhs_dilation = array<i64: 1, 1>,
    dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>,
    feature_group_count = 2 : i64,
    batch_group_count = 2 : i64
  } : (tensor<2x4x4x2xf32>, tensor<3x3x1x4xf32>) -> tensor<1x2x2x4xf32>
  return %0 : tensor<1x2x2x4xf32>
}

// -----
// expect-error: stablehlo.convolution C24
func.func @main(%a: tensor<1x4x4x2xf32>, %b: tensor<3x3x2x4xf32>) -> tensor<1x2x2x4xf32> {
  %0 = "stablehlo.convolution"(%a, %b) {
    window_strides = array<i64: 1, 1>,
    padding = dense<0> : tensor<2x2xi64>,
    lhs_dilation = array<i64: 1, 1>,
    rhs_dilation = array<i64: 1, 1>,
    dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>,
    feature_group_count = 1 : i64,
    batch_group_count = 1 : i64,
    precision_config = [#stablehlo<precision DEFAULT>]
  } : (tensor<1x4x4x2xf32>, tensor<3x3x2x4xf32>) -> tensor<1x2x2x4xf32>
  return %0 : tensor<1x2x2x4xf32>
}

// -----
// expect-error: stablehlo.convolution C25
func.func @main(%a: tensor<1x4x4x2xf32>, %b: tensor<3x3x2x4xf32>) -> tensor<1x3x3x4xf32> {
  %0 = "stablehlo.convolution"(%a, %b) {
    window_strides = array<i64: 1, 1>,
    padding = dense<0> : tensor<2x2xi64>,
    lhs_dilation = array<i64: 1, 1>,
    rhs_dilation = array<i64: 1, 1>,
    dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>,
    feature_group_count = 1 : i64,
    batch_group_count = 1 : i64
  } : (tensor<1x4x4x2xf32>, tensor<3x3x2x4xf32>) -> tensor<1x3x3x4xf32>
  return %0 : tensor<1x3x3x4xf32>
}

// -----
// expect-error: stablehlo.convolution C26
func.func @main(%a: tensor<1x4x4x2xf32>, %b: tensor<3x3x2x4xf32>) -> tensor<1x2x2xf32> {
  %0 = "stablehlo.convolution"(%a, %b) {
    window_strides = array<i64: 1, 1>,
    padding = dense<0> : tensor<2x2xi64>,
    lhs_dilation = array<i64: 1, 1>,
    rhs_dilation = array<i64: 1, 1>,
    dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>,
    feature_group_count = 1 : i64,
    batch_group_count = 1 : i64
  } : (tensor<1x4x4x2xf32>, tensor<3x3x2x4xf32>) -> tensor<1x2x2xf32>
  return %0 : tensor<1x2x2xf32>
}

// -----
// expect-error: stablehlo.convolution C27
// Without quantization lhs and rhs have the same element type.
func.func @main(%a: tensor<1x4x4x2xf32>, %b: tensor<3x3x2x4xf16>) -> tensor<1x2x2x4xf32> {
  %0 = "stablehlo.convolution"(%a, %b) {
    window_strides = array<i64: 1, 1>,
    padding = dense<0> : tensor<2x2xi64>,
    lhs_dilation = array<i64: 1, 1>,
    rhs_dilation = array<i64: 1, 1>,
    dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>,
    feature_group_count = 1 : i64,
    batch_group_count = 1 : i64
  } : (tensor<1x4x4x2xf32>, tensor<3x3x2x4xf16>) -> tensor<1x2x2x4xf32>
  return %0 : tensor<1x2x2x4xf32>
}

// -----
// expect-error: stablehlo.convolution C28
// A quantized lhs needs a quantized result.
func.func @main(%a: tensor<1x4x4x2x!quant.uniform<i8:f32, 0.5:1>>, %b: tensor<3x3x2x4x!quant.uniform<i8:f32, 0.25>>) -> tensor<1x2x2x4xf32> {
  %0 = "stablehlo.convolution"(%a, %b) {
    window_strides = array<i64: 1, 1>,
    padding = dense<0> : tensor<2x2xi64>,
    lhs_dilation = array<i64: 1, 1>,
    rhs_dilation = array<i64: 1, 1>,
    dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>,
    feature_group_count = 1 : i64,
    batch_group_count = 1 : i64
  } : (tensor<1x4x4x2x!quant.uniform<i8:f32, 0.5:1>>, tensor<3x3x2x4x!quant.uniform<i8:f32, 0.25>>) -> tensor<1x2x2x4xf32>
  return %0 : tensor<1x2x2x4xf32>
}

// -----
// expect-error: stablehlo.convolution C29
// The rhs is quantized along a spatial dimension instead of its output feature dimension.
func.func @main(%a: tensor<1x4x4x2x!quant.uniform<i8:f32, 0.5:1>>, %b: tensor<3x3x2x4x!quant.uniform<i8:f32:0, {0.1, 0.2, 0.3}>>) -> tensor<1x2x2x4x!quant.uniform<i32:f32, 0.125>> {
  %0 = "stablehlo.convolution"(%a, %b) {
    window_strides = array<i64: 1, 1>,
    padding = dense<0> : tensor<2x2xi64>,
    lhs_dilation = array<i64: 1, 1>,
    rhs_dilation = array<i64: 1, 1>,
    dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>,
    feature_group_count = 1 : i64,
    batch_group_count = 1 : i64
  } : (tensor<1x4x4x2x!quant.uniform<i8:f32, 0.5:1>>, tensor<3x3x2x4x!quant.uniform<i8:f32:0, {0.1, 0.2, 0.3}>>) -> tensor<1x2x2x4x!quant.uniform<i32:f32, 0.125>>
  return %0 : tensor<1x2x2x4x!quant.uniform<i32:f32, 0.125>>
}

// -----
// expect-error: stablehlo.convolution C30
// The result is quantized along a spatial dimension instead of its output feature dimension.
func.func @main(%a: tensor<1x4x4x2x!quant.uniform<i8:f32, 0.5:1>>, %b: tensor<3x3x2x4x!quant.uniform<i8:f32:3, {0.1, 0.2, 0.3, 0.4}>>) -> tensor<1x2x2x4x!quant.uniform<i32:f32:1, {0.1, 0.2}>> {
  %0 = "stablehlo.convolution"(%a, %b) {
    window_strides = array<i64: 1, 1>,
    padding = dense<0> : tensor<2x2xi64>,
    lhs_dilation = array<i64: 1, 1>,
    rhs_dilation = array<i64: 1, 1>,
    dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>,
    feature_group_count = 1 : i64,
    batch_group_count = 1 : i64
  } : (tensor<1x4x4x2x!quant.uniform<i8:f32, 0.5:1>>, tensor<3x3x2x4x!quant.uniform<i8:f32:3, {0.1, 0.2, 0.3, 0.4}>>) -> tensor<1x2x2x4x!quant.uniform<i32:f32:1, {0.1, 0.2}>>
  return %0 : tensor<1x2x2x4x!quant.uniform<i32:f32:1, {0.1, 0.2}>>
}

// -----
// expect-error: stablehlo.convolution C31
func.func @main(%a: tensor<1x4x4x2x!quant.uniform<i8:f32, 0.5:1>>, %b: tensor<3x3x2x4x!quant.uniform<i16:f32, 0.25>>) -> tensor<1x2x2x4x!quant.uniform<i32:f32, 0.125>> {
  %0 = "stablehlo.convolution"(%a, %b) {
    window_strides = array<i64: 1, 1>,
    padding = dense<0> : tensor<2x2xi64>,
    lhs_dilation = array<i64: 1, 1>,
    rhs_dilation = array<i64: 1, 1>,
    dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>,
    feature_group_count = 1 : i64,
    batch_group_count = 1 : i64
  } : (tensor<1x4x4x2x!quant.uniform<i8:f32, 0.5:1>>, tensor<3x3x2x4x!quant.uniform<i16:f32, 0.25>>) -> tensor<1x2x2x4x!quant.uniform<i32:f32, 0.125>>
  return %0 : tensor<1x2x2x4x!quant.uniform<i32:f32, 0.125>>
}

// -----
// expect-error: stablehlo.convolution C32
func.func @main(%a: tensor<1x4x4x2x!quant.uniform<i8:f32, 0.5:1>>, %b: tensor<3x3x2x4x!quant.uniform<i8:f32, 0.25>>) -> tensor<1x2x2x4x!quant.uniform<i32:f16, 0.125>> {
  %0 = "stablehlo.convolution"(%a, %b) {
    window_strides = array<i64: 1, 1>,
    padding = dense<0> : tensor<2x2xi64>,
    lhs_dilation = array<i64: 1, 1>,
    rhs_dilation = array<i64: 1, 1>,
    dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>,
    feature_group_count = 1 : i64,
    batch_group_count = 1 : i64
  } : (tensor<1x4x4x2x!quant.uniform<i8:f32, 0.5:1>>, tensor<3x3x2x4x!quant.uniform<i8:f32, 0.25>>) -> tensor<1x2x2x4x!quant.uniform<i32:f16, 0.125>>
  return %0 : tensor<1x2x2x4x!quant.uniform<i32:f16, 0.125>>
}

// -----
// expect-error: stablehlo.convolution C33
// A per-tensor rhs gives a per-tensor result.
func.func @main(%a: tensor<1x4x4x2x!quant.uniform<i8:f32, 0.5:1>>, %b: tensor<3x3x2x4x!quant.uniform<i8:f32, 0.25>>) -> tensor<1x2x2x4x!quant.uniform<i32:f32:3, {0.1, 0.2, 0.3, 0.4}>> {
  %0 = "stablehlo.convolution"(%a, %b) {
    window_strides = array<i64: 1, 1>,
    padding = dense<0> : tensor<2x2xi64>,
    lhs_dilation = array<i64: 1, 1>,
    rhs_dilation = array<i64: 1, 1>,
    dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>,
    feature_group_count = 1 : i64,
    batch_group_count = 1 : i64
  } : (tensor<1x4x4x2x!quant.uniform<i8:f32, 0.5:1>>, tensor<3x3x2x4x!quant.uniform<i8:f32, 0.25>>) -> tensor<1x2x2x4x!quant.uniform<i32:f32:3, {0.1, 0.2, 0.3, 0.4}>>
  return %0 : tensor<1x2x2x4x!quant.uniform<i32:f32:3, {0.1, 0.2, 0.3, 0.4}>>
}

// -----
// expect-error: stablehlo.convolution C34
// A hybrid convolution (float lhs, quantized rhs) gives a result of the lhs type.
func.func @main(%a: tensor<1x4x4x2xf32>, %b: tensor<3x3x2x4x!quant.uniform<i8:f32, 0.25>>) -> tensor<1x2x2x4xf16> {
  %0 = "stablehlo.convolution"(%a, %b) {
    window_strides = array<i64: 1, 1>,
    padding = dense<0> : tensor<2x2xi64>,
    lhs_dilation = array<i64: 1, 1>,
    rhs_dilation = array<i64: 1, 1>,
    dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>,
    feature_group_count = 1 : i64,
    batch_group_count = 1 : i64
  } : (tensor<1x4x4x2xf32>, tensor<3x3x2x4x!quant.uniform<i8:f32, 0.25>>) -> tensor<1x2x2x4xf16>
  return %0 : tensor<1x2x2x4xf16>
}

// ===== dynamic_conv ==============================================================================

// -----
// expect-error: stablehlo.dynamic_conv C1
func.func @main(%a: tensor<1x4x4x2xf32>, %b: tensor<3x3x2xf32>, %p: tensor<2x2xi64>) -> tensor<1x2x2x4xf32> {
  %0 = "stablehlo.dynamic_conv"(%a, %b, %p) {
    window_strides = array<i64: 1, 1>,
    lhs_dilation = array<i64: 1, 1>,
    rhs_dilation = array<i64: 1, 1>,
    dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>,
    feature_group_count = 1 : i64,
    batch_group_count = 1 : i64
  } : (tensor<1x4x4x2xf32>, tensor<3x3x2xf32>, tensor<2x2xi64>) -> tensor<1x2x2x4xf32>
  return %0 : tensor<1x2x2x4xf32>
}

// -----
// expect-error: stablehlo.dynamic_conv C2
func.func @main(%a: tensor<1x4x4x2xf32>, %b: tensor<3x3x2x4xf32>, %p: tensor<2x2xi64>) -> tensor<1x2x2x4xf32> {
  %0 = "stablehlo.dynamic_conv"(%a, %b, %p) {
    window_strides = array<i64: 1>,
    lhs_dilation = array<i64: 1, 1>,
    rhs_dilation = array<i64: 1, 1>,
    dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>,
    feature_group_count = 1 : i64,
    batch_group_count = 1 : i64
  } : (tensor<1x4x4x2xf32>, tensor<3x3x2x4xf32>, tensor<2x2xi64>) -> tensor<1x2x2x4xf32>
  return %0 : tensor<1x2x2x4xf32>
}

// -----
// expect-error: stablehlo.dynamic_conv C3
func.func @main(%a: tensor<1x4x4x2xf32>, %b: tensor<3x3x2x4xf32>, %p: tensor<2x2xi64>) -> tensor<1x2x2x4xf32> {
  %0 = "stablehlo.dynamic_conv"(%a, %b, %p) {
    window_strides = array<i64: 1, 0>,
    lhs_dilation = array<i64: 1, 1>,
    rhs_dilation = array<i64: 1, 1>,
    dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>,
    feature_group_count = 1 : i64,
    batch_group_count = 1 : i64
  } : (tensor<1x4x4x2xf32>, tensor<3x3x2x4xf32>, tensor<2x2xi64>) -> tensor<1x2x2x4xf32>
  return %0 : tensor<1x2x2x4xf32>
}

// -----
// expect-error: stablehlo.dynamic_conv C4
func.func @main(%a: tensor<1x4x4x2xf32>, %b: tensor<3x3x2x4xf32>, %p: tensor<3x2xi64>) -> tensor<1x2x2x4xf32> {
  %0 = "stablehlo.dynamic_conv"(%a, %b, %p) {
    window_strides = array<i64: 1, 1>,
    lhs_dilation = array<i64: 1, 1>,
    rhs_dilation = array<i64: 1, 1>,
    dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>,
    feature_group_count = 1 : i64,
    batch_group_count = 1 : i64
  } : (tensor<1x4x4x2xf32>, tensor<3x3x2x4xf32>, tensor<3x2xi64>) -> tensor<1x2x2x4xf32>
  return %0 : tensor<1x2x2x4xf32>
}

// -----
// expect-error: stablehlo.dynamic_conv C5
func.func @main(%a: tensor<1x4x4x2xf32>, %b: tensor<3x3x2x4xf32>, %p: tensor<2x2xi64>) -> tensor<1x2x2x4xf32> {
  %0 = "stablehlo.dynamic_conv"(%a, %b, %p) {
    window_strides = array<i64: 1, 1>,
    lhs_dilation = array<i64: 1>,
    rhs_dilation = array<i64: 1, 1>,
    dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>,
    feature_group_count = 1 : i64,
    batch_group_count = 1 : i64
  } : (tensor<1x4x4x2xf32>, tensor<3x3x2x4xf32>, tensor<2x2xi64>) -> tensor<1x2x2x4xf32>
  return %0 : tensor<1x2x2x4xf32>
}

// -----
// expect-error: stablehlo.dynamic_conv C6
func.func @main(%a: tensor<1x4x4x2xf32>, %b: tensor<3x3x2x4xf32>, %p: tensor<2x2xi64>) -> tensor<1x2x2x4xf32> {
  %0 = "stablehlo.dynamic_conv"(%a, %b, %p) {
    window_strides = array<i64: 1, 1>,
    lhs_dilation = array<i64: 0, 1>,
    rhs_dilation = array<i64: 1, 1>,
    dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>,
    feature_group_count = 1 : i64,
    batch_group_count = 1 : i64
  } : (tensor<1x4x4x2xf32>, tensor<3x3x2x4xf32>, tensor<2x2xi64>) -> tensor<1x2x2x4xf32>
  return %0 : tensor<1x2x2x4xf32>
}

// -----
// expect-error: stablehlo.dynamic_conv C7
func.func @main(%a: tensor<1x4x4x2xf32>, %b: tensor<3x3x2x4xf32>, %p: tensor<2x2xi64>) -> tensor<1x2x2x4xf32> {
  %0 = "stablehlo.dynamic_conv"(%a, %b, %p) {
    window_strides = array<i64: 1, 1>,
    lhs_dilation = array<i64: 1, 1>,
    rhs_dilation = array<i64: 1, 1, 1>,
    dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>,
    feature_group_count = 1 : i64,
    batch_group_count = 1 : i64
  } : (tensor<1x4x4x2xf32>, tensor<3x3x2x4xf32>, tensor<2x2xi64>) -> tensor<1x2x2x4xf32>
  return %0 : tensor<1x2x2x4xf32>
}

// -----
// expect-error: stablehlo.dynamic_conv C8
func.func @main(%a: tensor<1x4x4x2xf32>, %b: tensor<3x3x2x4xf32>, %p: tensor<2x2xi64>) -> tensor<1x2x2x4xf32> {
  %0 = "stablehlo.dynamic_conv"(%a, %b, %p) {
    window_strides = array<i64: 1, 1>,
    lhs_dilation = array<i64: 1, 1>,
    rhs_dilation = array<i64: 1, -1>,
    dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>,
    feature_group_count = 1 : i64,
    batch_group_count = 1 : i64
  } : (tensor<1x4x4x2xf32>, tensor<3x3x2x4xf32>, tensor<2x2xi64>) -> tensor<1x2x2x4xf32>
  return %0 : tensor<1x2x2x4xf32>
}

// -----
// expect-error: stablehlo.dynamic_conv C9
func.func @main(%a: tensor<1x4x4x2xf32>, %b: tensor<3x3x2x4xf32>, %p: tensor<2x2xi64>) -> tensor<1x2x2x4xf32> {
  %0 = "stablehlo.dynamic_conv"(%a, %b, %p) {
    window_strides = array<i64: 1, 1>,
    lhs_dilation = array<i64: 1, 1>,
    rhs_dilation = array<i64: 1, 1>,
    window_reversal = array<i1: false>,
    dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>,
    feature_group_count = 1 : i64,
    batch_group_count = 1 : i64
  } : (tensor<1x4x4x2xf32>, tensor<3x3x2x4xf32>, tensor<2x2xi64>) -> tensor<1x2x2x4xf32>
  return %0 : tensor<1x2x2x4xf32>
}

// -----
// expect-error: stablehlo.dynamic_conv C10
// The batch size 1 does not split into 2 batch groups.
func.func @main(%a: tensor<1x4x4x2xf32>, %b: tensor<3x3x2x4xf32>, %p: tensor<2x2xi64>) -> tensor<1x2x2x4xf32> {
  %0 = "stablehlo.dynamic_conv"(%a, %b, %p) {
    window_strides = array<i64: 1, 1>,
    lhs_dilation = array<i64: 1, 1>,
    rhs_dilation = array<i64: 1, 1>,
    dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>,
    feature_group_count = 1 : i64,
    batch_group_count = 2 : i64
  } : (tensor<1x4x4x2xf32>, tensor<3x3x2x4xf32>, tensor<2x2xi64>) -> tensor<1x2x2x4xf32>
  return %0 : tensor<1x2x2x4xf32>
}

// -----
// expect-error: stablehlo.dynamic_conv C11
// The 2 input features do not split into 3 feature groups.
func.func @main(%a: tensor<1x4x4x2xf32>, %b: tensor<3x3x2x4xf32>, %p: tensor<2x2xi64>) -> tensor<1x2x2x4xf32> {
  %0 = "stablehlo.dynamic_conv"(%a, %b, %p) {
    window_strides = array<i64: 1, 1>,
    lhs_dilation = array<i64: 1, 1>,
    rhs_dilation = array<i64: 1, 1>,
    dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>,
    feature_group_count = 3 : i64,
    batch_group_count = 1 : i64
  } : (tensor<1x4x4x2xf32>, tensor<3x3x2x4xf32>, tensor<2x2xi64>) -> tensor<1x2x2x4xf32>
  return %0 : tensor<1x2x2x4xf32>
}

// -----
// expect-error: stablehlo.dynamic_conv C12
func.func @main(%a: tensor<1x4x4x2xf32>, %b: tensor<3x3x2x4xf32>, %p: tensor<2x2xi64>) -> tensor<1x2x2x4xf32> {
  %0 = "stablehlo.dynamic_conv"(%a, %b, %p) {
    window_strides = array<i64: 1, 1>,
    lhs_dilation = array<i64: 1, 1>,
    rhs_dilation = array<i64: 1, 1>,
    dimension_numbers = #stablehlo.conv<raw input_batch_dimension = 0, input_feature_dimension = 3, input_spatial_dimensions = [1], kernel_input_feature_dimension = 2, kernel_output_feature_dimension = 3, kernel_spatial_dimensions = [0, 1], output_batch_dimension = 0, output_feature_dimension = 3, output_spatial_dimensions = [1, 2]>,
    feature_group_count = 1 : i64,
    batch_group_count = 1 : i64
  } : (tensor<1x4x4x2xf32>, tensor<3x3x2x4xf32>, tensor<2x2xi64>) -> tensor<1x2x2x4xf32>
  return %0 : tensor<1x2x2x4xf32>
}

// -----
// expect-error: stablehlo.dynamic_conv C13
func.func @main(%a: tensor<1x4x4x2xf32>, %b: tensor<3x3x2x4xf32>, %p: tensor<2x2xi64>) -> tensor<1x2x2x4xf32> {
  %0 = "stablehlo.dynamic_conv"(%a, %b, %p) {
    window_strides = array<i64: 1, 1>,
    lhs_dilation = array<i64: 1, 1>,
    rhs_dilation = array<i64: 1, 1>,
    dimension_numbers = #stablehlo.conv<raw input_batch_dimension = 0, input_feature_dimension = 3, input_spatial_dimensions = [1, 1], kernel_input_feature_dimension = 2, kernel_output_feature_dimension = 3, kernel_spatial_dimensions = [0, 1], output_batch_dimension = 0, output_feature_dimension = 3, output_spatial_dimensions = [1, 2]>,
    feature_group_count = 1 : i64,
    batch_group_count = 1 : i64
  } : (tensor<1x4x4x2xf32>, tensor<3x3x2x4xf32>, tensor<2x2xi64>) -> tensor<1x2x2x4xf32>
  return %0 : tensor<1x2x2x4xf32>
}

// -----
// expect-error: stablehlo.dynamic_conv C14
func.func @main(%a: tensor<1x4x4x2xf32>, %b: tensor<3x3x1x4xf32>, %p: tensor<2x2xi64>) -> tensor<1x2x2x4xf32> {
  %0 = "stablehlo.dynamic_conv"(%a, %b, %p) {
    window_strides = array<i64: 1, 1>,
    lhs_dilation = array<i64: 1, 1>,
    rhs_dilation = array<i64: 1, 1>,
    dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>,
    feature_group_count = 1 : i64,
    batch_group_count = 1 : i64
  } : (tensor<1x4x4x2xf32>, tensor<3x3x1x4xf32>, tensor<2x2xi64>) -> tensor<1x2x2x4xf32>
  return %0 : tensor<1x2x2x4xf32>
}

// -----
// expect-error: stablehlo.dynamic_conv C15
func.func @main(%a: tensor<2x4x4x2xf32>, %b: tensor<3x3x2x3xf32>, %p: tensor<2x2xi64>) -> tensor<1x2x2x3xf32> {
  %0 = "stablehlo.dynamic_conv"(%a, %b, %p) {
    window_strides = array<i64: 1, 1>,
    lhs_dilation = array<i64: 1, 1>,
    rhs_dilation = array<i64: 1, 1>,
    dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>,
    feature_group_count = 1 : i64,
    batch_group_count = 2 : i64
  } : (tensor<2x4x4x2xf32>, tensor<3x3x2x3xf32>, tensor<2x2xi64>) -> tensor<1x2x2x3xf32>
  return %0 : tensor<1x2x2x3xf32>
}

// -----
// expect-error: stablehlo.dynamic_conv C16
func.func @main(%a: tensor<1x4x4x2xf32>, %b: tensor<3x3x1x3xf32>, %p: tensor<2x2xi64>) -> tensor<1x2x2x3xf32> {
  %0 = "stablehlo.dynamic_conv"(%a, %b, %p) {
    window_strides = array<i64: 1, 1>,
    lhs_dilation = array<i64: 1, 1>,
    rhs_dilation = array<i64: 1, 1>,
    dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>,
    feature_group_count = 2 : i64,
    batch_group_count = 1 : i64
  } : (tensor<1x4x4x2xf32>, tensor<3x3x1x3xf32>, tensor<2x2xi64>) -> tensor<1x2x2x3xf32>
  return %0 : tensor<1x2x2x3xf32>
}

// -----
// expect-error: stablehlo.dynamic_conv C17
func.func @main(%a: tensor<1x4x4x2xf32>, %b: tensor<3x3x2x4xf32>, %p: tensor<2x2xi64>) -> tensor<1x2x2x4xf32> {
  %0 = "stablehlo.dynamic_conv"(%a, %b, %p) {
    window_strides = array<i64: 1, 1>,
    lhs_dilation = array<i64: 1, 1>,
    rhs_dilation = array<i64: 1, 1>,
    dimension_numbers = #stablehlo.conv<raw input_batch_dimension = 0, input_feature_dimension = 3, input_spatial_dimensions = [1, 2], kernel_input_feature_dimension = 2, kernel_output_feature_dimension = 3, kernel_spatial_dimensions = [0], output_batch_dimension = 0, output_feature_dimension = 3, output_spatial_dimensions = [1, 2]>,
    feature_group_count = 1 : i64,
    batch_group_count = 1 : i64
  } : (tensor<1x4x4x2xf32>, tensor<3x3x2x4xf32>, tensor<2x2xi64>) -> tensor<1x2x2x4xf32>
  return %0 : tensor<1x2x2x4xf32>
}

// -----
// expect-error: stablehlo.dynamic_conv C18
func.func @main(%a: tensor<1x4x4x2xf32>, %b: tensor<3x3x2x4xf32>, %p: tensor<2x2xi64>) -> tensor<1x2x2x4xf32> {
  %0 = "stablehlo.dynamic_conv"(%a, %b, %p) {
    window_strides = array<i64: 1, 1>,
    lhs_dilation = array<i64: 1, 1>,
    rhs_dilation = array<i64: 1, 1>,
    dimension_numbers = #stablehlo.conv<raw input_batch_dimension = 0, input_feature_dimension = 3, input_spatial_dimensions = [1, 2], kernel_input_feature_dimension = 2, kernel_output_feature_dimension = 3, kernel_spatial_dimensions = [0, 4], output_batch_dimension = 0, output_feature_dimension = 3, output_spatial_dimensions = [1, 2]>,
    feature_group_count = 1 : i64,
    batch_group_count = 1 : i64
  } : (tensor<1x4x4x2xf32>, tensor<3x3x2x4xf32>, tensor<2x2xi64>) -> tensor<1x2x2x4xf32>
  return %0 : tensor<1x2x2x4xf32>
}

// -----
// expect-error: stablehlo.dynamic_conv C19
func.func @main(%a: tensor<1x4x4x2xf32>, %b: tensor<3x3x2x4xf32>, %p: tensor<2x2xi64>) -> tensor<1x2x2x4xf32> {
  %0 = "stablehlo.dynamic_conv"(%a, %b, %p) {
    window_strides = array<i64: 1, 1>,
    lhs_dilation = array<i64: 1, 1>,
    rhs_dilation = array<i64: 1, 1>,
    dimension_numbers = #stablehlo.conv<raw input_batch_dimension = 0, input_feature_dimension = 3, input_spatial_dimensions = [1, 2], kernel_input_feature_dimension = 2, kernel_output_feature_dimension = 3, kernel_spatial_dimensions = [0, 1], output_batch_dimension = 0, output_feature_dimension = 3, output_spatial_dimensions = [1]>,
    feature_group_count = 1 : i64,
    batch_group_count = 1 : i64
  } : (tensor<1x4x4x2xf32>, tensor<3x3x2x4xf32>, tensor<2x2xi64>) -> tensor<1x2x2x4xf32>
  return %0 : tensor<1x2x2x4xf32>
}

// -----
// expect-error: stablehlo.dynamic_conv C20
func.func @main(%a: tensor<1x4x4x2xf32>, %b: tensor<3x3x2x4xf32>, %p: tensor<2x2xi64>) -> tensor<1x2x2x4xf32> {
  %0 = "stablehlo.dynamic_conv"(%a, %b, %p) {
    window_strides = array<i64: 1, 1>,
    lhs_dilation = array<i64: 1, 1>,
    rhs_dilation = array<i64: 1, 1>,
    dimension_numbers = #stablehlo.conv<raw input_batch_dimension = 0, input_feature_dimension = 3, input_spatial_dimensions = [1, 2], kernel_input_feature_dimension = 2, kernel_output_feature_dimension = 3, kernel_spatial_dimensions = [0, 1], output_batch_dimension = 0, output_feature_dimension = 3, output_spatial_dimensions = [1, 1]>,
    feature_group_count = 1 : i64,
    batch_group_count = 1 : i64
  } : (tensor<1x4x4x2xf32>, tensor<3x3x2x4xf32>, tensor<2x2xi64>) -> tensor<1x2x2x4xf32>
  return %0 : tensor<1x2x2x4xf32>
}

// -----
// expect-error: stablehlo.dynamic_conv C21
func.func @main(%a: tensor<1x4x4x2xf32>, %b: tensor<3x3x2x4xf32>, %p: tensor<2x2xi64>) -> tensor<1x2x2x4xf32> {
  %0 = "stablehlo.dynamic_conv"(%a, %b, %p) {
    window_strides = array<i64: 1, 1>,
    lhs_dilation = array<i64: 1, 1>,
    rhs_dilation = array<i64: 1, 1>,
    dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>,
    feature_group_count = 0 : i64,
    batch_group_count = 1 : i64
  } : (tensor<1x4x4x2xf32>, tensor<3x3x2x4xf32>, tensor<2x2xi64>) -> tensor<1x2x2x4xf32>
  return %0 : tensor<1x2x2x4xf32>
}

// -----
// expect-error: stablehlo.dynamic_conv C22
func.func @main(%a: tensor<1x4x4x2xf32>, %b: tensor<3x3x2x4xf32>, %p: tensor<2x2xi64>) -> tensor<1x2x2x4xf32> {
  %0 = "stablehlo.dynamic_conv"(%a, %b, %p) {
    window_strides = array<i64: 1, 1>,
    lhs_dilation = array<i64: 1, 1>,
    rhs_dilation = array<i64: 1, 1>,
    dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>,
    feature_group_count = 1 : i64,
    batch_group_count = 0 : i64
  } : (tensor<1x4x4x2xf32>, tensor<3x3x2x4xf32>, tensor<2x2xi64>) -> tensor<1x2x2x4xf32>
  return %0 : tensor<1x2x2x4xf32>
}

// -----
// expect-error: stablehlo.dynamic_conv C23
func.func @main(%a: tensor<2x4x4x2xf32>, %b: tensor<3x3x1x4xf32>, %p: tensor<2x2xi64>) -> tensor<1x2x2x4xf32> {
  %0 = "stablehlo.dynamic_conv"(%a, %b, %p) {
    window_strides = array<i64: 1, 1>,
    lhs_dilation = array<i64: 1, 1>,
    rhs_dilation = array<i64: 1, 1>,
    dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>,
    feature_group_count = 2 : i64,
    batch_group_count = 2 : i64
  } : (tensor<2x4x4x2xf32>, tensor<3x3x1x4xf32>, tensor<2x2xi64>) -> tensor<1x2x2x4xf32>
  return %0 : tensor<1x2x2x4xf32>
}

// -----
// expect-error: stablehlo.dynamic_conv C24
func.func @main(%a: tensor<1x4x4x2xf32>, %b: tensor<3x3x2x4xf32>, %p: tensor<2x2xi64>) -> tensor<1x2x2x4xf32> {
  %0 = "stablehlo.dynamic_conv"(%a, %b, %p) {
    window_strides = array<i64: 1, 1>,
    lhs_dilation = array<i64: 1, 1>,
    rhs_dilation = array<i64: 1, 1>,
    dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>,
    feature_group_count = 1 : i64,
    batch_group_count = 1 : i64,
    precision_config = [#stablehlo<precision DEFAULT>]
  } : (tensor<1x4x4x2xf32>, tensor<3x3x2x4xf32>, tensor<2x2xi64>) -> tensor<1x2x2x4xf32>
  return %0 : tensor<1x2x2x4xf32>
}

// -----
// expect-error: stablehlo.dynamic_conv C25
// The constant padding [[1, 0], [1, 0]] gives 3x3 windows positions, not 2x2.
func.func @main(%a: tensor<1x4x4x2xf32>, %b: tensor<3x3x2x4xf32>, %p: tensor<2x2xi64>) -> tensor<1x2x2x4xf32> {
  %pad = stablehlo.constant dense<[[1, 0], [1, 0]]> : tensor<2x2xi64>
  %0 = "stablehlo.dynamic_conv"(%a, %b, %pad) {
    window_strides = array<i64: 1, 1>,
    lhs_dilation = array<i64: 1, 1>,
    rhs_dilation = array<i64: 1, 1>,
    dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>,
    feature_group_count = 1 : i64,
    batch_group_count = 1 : i64
  } : (tensor<1x4x4x2xf32>, tensor<3x3x2x4xf32>, tensor<2x2xi64>) -> tensor<1x2x2x4xf32>
  return %0 : tensor<1x2x2x4xf32>
}

// -----
// expect-error: stablehlo.dynamic_conv C26
func.func @main(%a: tensor<1x4x4x2xf32>, %b: tensor<3x3x2x4xf32>, %p: tensor<2x2xi64>) -> tensor<1x2x2xf32> {
  %0 = "stablehlo.dynamic_conv"(%a, %b, %p) {
    window_strides = array<i64: 1, 1>,
    lhs_dilation = array<i64: 1, 1>,
    rhs_dilation = array<i64: 1, 1>,
    dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>,
    feature_group_count = 1 : i64,
    batch_group_count = 1 : i64
  } : (tensor<1x4x4x2xf32>, tensor<3x3x2x4xf32>, tensor<2x2xi64>) -> tensor<1x2x2xf32>
  return %0 : tensor<1x2x2xf32>
}

// -----
// expect-error: stablehlo.dynamic_conv C27
// Without quantization lhs and rhs have the same element type.
func.func @main(%a: tensor<1x4x4x2xf32>, %b: tensor<3x3x2x4xf16>, %p: tensor<2x2xi64>) -> tensor<1x2x2x4xf32> {
  %0 = "stablehlo.dynamic_conv"(%a, %b, %p) {
    window_strides = array<i64: 1, 1>,
    lhs_dilation = array<i64: 1, 1>,
    rhs_dilation = array<i64: 1, 1>,
    dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>,
    feature_group_count = 1 : i64,
    batch_group_count = 1 : i64
  } : (tensor<1x4x4x2xf32>, tensor<3x3x2x4xf16>, tensor<2x2xi64>) -> tensor<1x2x2x4xf32>
  return %0 : tensor<1x2x2x4xf32>
}

// -----
// expect-error: stablehlo.dynamic_conv C28
// A quantized lhs needs a quantized result.
func.func @main(%a: tensor<1x4x4x2x!quant.uniform<i8:f32, 0.5:1>>, %b: tensor<3x3x2x4x!quant.uniform<i8:f32, 0.25>>, %p: tensor<2x2xi64>) -> tensor<1x2x2x4xf32> {
  %0 = "stablehlo.dynamic_conv"(%a, %b, %p) {
    window_strides = array<i64: 1, 1>,
    lhs_dilation = array<i64: 1, 1>,
    rhs_dilation = array<i64: 1, 1>,
    dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>,
    feature_group_count = 1 : i64,
    batch_group_count = 1 : i64
  } : (tensor<1x4x4x2x!quant.uniform<i8:f32, 0.5:1>>, tensor<3x3x2x4x!quant.uniform<i8:f32, 0.25>>, tensor<2x2xi64>) -> tensor<1x2x2x4xf32>
  return %0 : tensor<1x2x2x4xf32>
}

// -----
// expect-error: stablehlo.dynamic_conv C29
// The rhs is quantized along a spatial dimension instead of its output feature dimension.
func.func @main(%a: tensor<1x4x4x2x!quant.uniform<i8:f32, 0.5:1>>, %b: tensor<3x3x2x4x!quant.uniform<i8:f32:0, {0.1, 0.2, 0.3}>>, %p: tensor<2x2xi64>) -> tensor<1x2x2x4x!quant.uniform<i32:f32, 0.125>> {
  %0 = "stablehlo.dynamic_conv"(%a, %b, %p) {
    window_strides = array<i64: 1, 1>,
    lhs_dilation = array<i64: 1, 1>,
    rhs_dilation = array<i64: 1, 1>,
    dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>,
    feature_group_count = 1 : i64,
    batch_group_count = 1 : i64
  } : (tensor<1x4x4x2x!quant.uniform<i8:f32, 0.5:1>>, tensor<3x3x2x4x!quant.uniform<i8:f32:0, {0.1, 0.2, 0.3}>>, tensor<2x2xi64>) -> tensor<1x2x2x4x!quant.uniform<i32:f32, 0.125>>
  return %0 : tensor<1x2x2x4x!quant.uniform<i32:f32, 0.125>>
}

// -----
// expect-error: stablehlo.dynamic_conv C30
// The result is quantized along a spatial dimension instead of its output feature dimension.
func.func @main(%a: tensor<1x4x4x2x!quant.uniform<i8:f32, 0.5:1>>, %b: tensor<3x3x2x4x!quant.uniform<i8:f32:3, {0.1, 0.2, 0.3, 0.4}>>, %p: tensor<2x2xi64>) -> tensor<1x2x2x4x!quant.uniform<i32:f32:1, {0.1, 0.2}>> {
  %0 = "stablehlo.dynamic_conv"(%a, %b, %p) {
    window_strides = array<i64: 1, 1>,
    lhs_dilation = array<i64: 1, 1>,
    rhs_dilation = array<i64: 1, 1>,
    dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>,
    feature_group_count = 1 : i64,
    batch_group_count = 1 : i64
  } : (tensor<1x4x4x2x!quant.uniform<i8:f32, 0.5:1>>, tensor<3x3x2x4x!quant.uniform<i8:f32:3, {0.1, 0.2, 0.3, 0.4}>>, tensor<2x2xi64>) -> tensor<1x2x2x4x!quant.uniform<i32:f32:1, {0.1, 0.2}>>
  return %0 : tensor<1x2x2x4x!quant.uniform<i32:f32:1, {0.1, 0.2}>>
}

// -----
// expect-error: stablehlo.dynamic_conv C31
func.func @main(%a: tensor<1x4x4x2x!quant.uniform<i8:f32, 0.5:1>>, %b: tensor<3x3x2x4x!quant.uniform<i16:f32, 0.25>>, %p: tensor<2x2xi64>) -> tensor<1x2x2x4x!quant.uniform<i32:f32, 0.125>> {
  %0 = "stablehlo.dynamic_conv"(%a, %b, %p) {
    window_strides = array<i64: 1, 1>,
    lhs_dilation = array<i64: 1, 1>,
    rhs_dilation = array<i64: 1, 1>,
    dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>,
    feature_group_count = 1 : i64,
    batch_group_count = 1 : i64
  } : (tensor<1x4x4x2x!quant.uniform<i8:f32, 0.5:1>>, tensor<3x3x2x4x!quant.uniform<i16:f32, 0.25>>, tensor<2x2xi64>) -> tensor<1x2x2x4x!quant.uniform<i32:f32, 0.125>>
  return %0 : tensor<1x2x2x4x!quant.uniform<i32:f32, 0.125>>
}

// -----
// expect-error: stablehlo.dynamic_conv C32
func.func @main(%a: tensor<1x4x4x2x!quant.uniform<i8:f32, 0.5:1>>, %b: tensor<3x3x2x4x!quant.uniform<i8:f32, 0.25>>, %p: tensor<2x2xi64>) -> tensor<1x2x2x4x!quant.uniform<i32:f16, 0.125>> {
  %0 = "stablehlo.dynamic_conv"(%a, %b, %p) {
    window_strides = array<i64: 1, 1>,
    lhs_dilation = array<i64: 1, 1>,
    rhs_dilation = array<i64: 1, 1>,
    dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>,
    feature_group_count = 1 : i64,
    batch_group_count = 1 : i64
  } : (tensor<1x4x4x2x!quant.uniform<i8:f32, 0.5:1>>, tensor<3x3x2x4x!quant.uniform<i8:f32, 0.25>>, tensor<2x2xi64>) -> tensor<1x2x2x4x!quant.uniform<i32:f16, 0.125>>
  return %0 : tensor<1x2x2x4x!quant.uniform<i32:f16, 0.125>>
}

// -----
// expect-error: stablehlo.dynamic_conv C33
// A per-tensor rhs gives a per-tensor result.
func.func @main(%a: tensor<1x4x4x2x!quant.uniform<i8:f32, 0.5:1>>, %b: tensor<3x3x2x4x!quant.uniform<i8:f32, 0.25>>, %p: tensor<2x2xi64>) -> tensor<1x2x2x4x!quant.uniform<i32:f32:3, {0.1, 0.2, 0.3, 0.4}>> {
  %0 = "stablehlo.dynamic_conv"(%a, %b, %p) {
    window_strides = array<i64: 1, 1>,
    lhs_dilation = array<i64: 1, 1>,
    rhs_dilation = array<i64: 1, 1>,
    dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>,
    feature_group_count = 1 : i64,
    batch_group_count = 1 : i64
  } : (tensor<1x4x4x2x!quant.uniform<i8:f32, 0.5:1>>, tensor<3x3x2x4x!quant.uniform<i8:f32, 0.25>>, tensor<2x2xi64>) -> tensor<1x2x2x4x!quant.uniform<i32:f32:3, {0.1, 0.2, 0.3, 0.4}>>
  return %0 : tensor<1x2x2x4x!quant.uniform<i32:f32:3, {0.1, 0.2, 0.3, 0.4}>>
}

// -----
// expect-error: stablehlo.dynamic_conv C34
// A hybrid convolution (float lhs, quantized rhs) gives a result of the lhs type.
func.func @main(%a: tensor<1x4x4x2xf32>, %b: tensor<3x3x2x4x!quant.uniform<i8:f32, 0.25>>, %p: tensor<2x2xi64>) -> tensor<1x2x2x4xf16> {
  %0 = "stablehlo.dynamic_conv"(%a, %b, %p) {
    window_strides = array<i64: 1, 1>,
    lhs_dilation = array<i64: 1, 1>,
    rhs_dilation = array<i64: 1, 1>,
    dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>,
    feature_group_count = 1 : i64,
    batch_group_count = 1 : i64
  } : (tensor<1x4x4x2xf32>, tensor<3x3x2x4x!quant.uniform<i8:f32, 0.25>>, tensor<2x2xi64>) -> tensor<1x2x2x4xf16>
  return %0 : tensor<1x2x2x4xf16>
}
