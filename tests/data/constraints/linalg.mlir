// expect-ok
// The numbered constraints of cholesky, triangular_solve and fft in docs/spec.md of
// openxla/stablehlo (head), one invalid program each below; all decidable from the types.
// spec: stablehlo.cholesky C1-C3
// spec: stablehlo.triangular_solve C1-C4
// spec: stablehlo.fft C1-C5
// triangular_solve's C3 reads `shape(a)[:-3] = shape(b)[:-3]`; its semantics solve a[i0, ..., iR-3]
// against b[i0, ..., iR-3], so the verifier compares every batch dimension (all but the last two),
// as the StableHLO C++ verifier does.
func.func @main(%a: tensor<2x3x3xf32>, %b: tensor<2x3x4xf32>, %s: tensor<4x5xcomplex<f32>>) -> (tensor<2x3x3xf32>, tensor<2x3x4xf32>, tensor<4x8xf32>) {
  %0 = "stablehlo.cholesky"(%a) {lower = true} : (tensor<2x3x3xf32>) -> tensor<2x3x3xf32>
  %1 = "stablehlo.triangular_solve"(%a, %b) {left_side = true, lower = true, unit_diagonal = false,
    transpose_a = #stablehlo<transpose NO_TRANSPOSE>} : (tensor<2x3x3xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %2 = stablehlo.fft %s, type = IRFFT, length = [4, 8] : (tensor<4x5xcomplex<f32>>) -> tensor<4x8xf32>
  return %0, %1, %2 : tensor<2x3x3xf32>, tensor<2x3x4xf32>, tensor<4x8xf32>
}

// ===== cholesky ===================================================================================

// -----
// expect-error: stablehlo.cholesky C1
func.func @main(%a: tensor<3x3xf32>) -> tensor<3x3xf64> {
  %0 = "stablehlo.cholesky"(%a) {lower = true} : (tensor<3x3xf32>) -> tensor<3x3xf64>
  return %0 : tensor<3x3xf64>
}

// -----
// expect-error: stablehlo.cholesky C2
func.func @main(%a: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "stablehlo.cholesky"(%a) {lower = true} : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----
// expect-error: stablehlo.cholesky C3
func.func @main(%a: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %0 = "stablehlo.cholesky"(%a) {lower = true} : (tensor<3x4xf32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// ===== triangular_solve ===========================================================================

// -----
// expect-error: stablehlo.triangular_solve C1
func.func @main(%a: tensor<3x3xf32>, %b: tensor<3x4xf64>) -> tensor<3x4xf64> {
  %0 = "stablehlo.triangular_solve"(%a, %b) {left_side = true, lower = true, unit_diagonal = false,
    transpose_a = #stablehlo<transpose NO_TRANSPOSE>} : (tensor<3x3xf32>, tensor<3x4xf64>) -> tensor<3x4xf64>
  return %0 : tensor<3x4xf64>
}

// -----
// expect-error: stablehlo.triangular_solve C2
func.func @main(%a: tensor<3x3xf32>, %b: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %0 = "stablehlo.triangular_solve"(%a, %b) {left_side = true, lower = true, unit_diagonal = false,
    transpose_a = #stablehlo<transpose NO_TRANSPOSE>} : (tensor<3x3xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}

// -----
// expect-error: stablehlo.triangular_solve C3
// With left_side = false, dim(a, -1) must be dim(b, -1) = 4.
func.func @main(%a: tensor<3x3xf32>, %b: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %0 = "stablehlo.triangular_solve"(%a, %b) {left_side = false, lower = true, unit_diagonal = false,
    transpose_a = #stablehlo<transpose NO_TRANSPOSE>} : (tensor<3x3xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----
// expect-error: stablehlo.triangular_solve C4
func.func @main(%a: tensor<3x3xf32>, %b: tensor<3x4xf32>) -> tensor<4x3xf32> {
  %0 = "stablehlo.triangular_solve"(%a, %b) {left_side = true, lower = true, unit_diagonal = false,
    transpose_a = #stablehlo<transpose NO_TRANSPOSE>} : (tensor<3x3xf32>, tensor<3x4xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// ===== fft ========================================================================================

// -----
// expect-error: stablehlo.fft C1
func.func @main(%a: tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>> {
  %0 = stablehlo.fft %a, type = FFT, length = [4, 4] : (tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>>
  return %0 : tensor<4xcomplex<f32>>
}

// -----
// expect-error: stablehlo.fft C2
// FFT transforms complex values; an f32 operand needs RFFT.
func.func @main(%a: tensor<4xf32>) -> tensor<4xcomplex<f32>> {
  %0 = stablehlo.fft %a, type = FFT, length = [4] : (tensor<4xf32>) -> tensor<4xcomplex<f32>>
  return %0 : tensor<4xcomplex<f32>>
}

// -----
// expect-error: stablehlo.fft C3
func.func @main(%a: tensor<2x2x2x2xcomplex<f32>>) -> tensor<2x2x2x2xcomplex<f32>> {
  %0 = stablehlo.fft %a, type = FFT, length = [2, 2, 2, 2] : (tensor<2x2x2x2xcomplex<f32>>) -> tensor<2x2x2x2xcomplex<f32>>
  return %0 : tensor<2x2x2x2xcomplex<f32>>
}

// -----
// expect-error: stablehlo.fft C4
// The real operand of an RFFT ends in fft_length.
func.func @main(%a: tensor<8xf32>) -> tensor<5xcomplex<f32>> {
  %0 = stablehlo.fft %a, type = RFFT, length = [6] : (tensor<8xf32>) -> tensor<5xcomplex<f32>>
  return %0 : tensor<5xcomplex<f32>>
}

// -----
// expect-error: stablehlo.fft C5
func.func @main(%a: tensor<8xf32>) -> tensor<8xcomplex<f32>> {
  %0 = stablehlo.fft %a, type = RFFT, length = [8] : (tensor<8xf32>) -> tensor<8xcomplex<f32>>
  return %0 : tensor<8xcomplex<f32>>
}

// -----

// expect-error: stablehlo.triangular_solve I6
// transpose_a is one of NO_TRANSPOSE, TRANSPOSE and ADJOINT (Inputs table); the dialect's enum
// also spells TRANSPOSE_INVALID, which the interpreter would otherwise run as NO_TRANSPOSE.
func.func @triangular_solve_invalid_transpose(%a: tensor<4x4xf32>, %b: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %0 = "stablehlo.triangular_solve"(%a, %b) {left_side = true, lower = true, unit_diagonal = true, transpose_a = #stablehlo<transpose TRANSPOSE_INVALID>} : (tensor<4x4xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  func.return %0 : tensor<4x3xf32>
}
