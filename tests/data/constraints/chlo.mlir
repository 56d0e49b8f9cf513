// Verifier checks of the CHLO ops (docs/generated/chlo.md). chlo.md numbers no constraints: the
// rules are each op's traits, operand table and description, and each check carries a label in
// parentheses: operand-type, same-type, same-shape, same-element, broadcast, inferred, k, ragged,
// group-sizes, group-dims, dot (engine/verify/chlo.py explains each).
// Run by tests/test_verifier_constraints.py, which documents the directives.
// Not statically decidable: the values of group_sizes of chlo.ragged_dot (they are data; groups
// past the ragged dimension's extent only cover less).

// expect-error: chlo.erf operand-type
func.func @erf_of_integers(%a: tensor<2xi32>) -> tensor<2xi32> {
  %r = "chlo.erf"(%a) : (tensor<2xi32>) -> tensor<2xi32>
  func.return %r : tensor<2xi32>
}

// -----

// expect-error: chlo._asin_acos_kernel operand-type
func.func @kernel_of_reals(%a: tensor<2xf32>) -> tensor<2xf32> {
  %r = "chlo._asin_acos_kernel"(%a) : (tensor<2xf32>) -> tensor<2xf32>
  func.return %r : tensor<2xf32>
}

// -----

// expect-error: chlo.tan same-type
func.func @tan_result(%a: tensor<2xf32>) -> tensor<2xf64> {
  %r = "chlo.tan"(%a) : (tensor<2xf32>) -> tensor<2xf64>
  func.return %r : tensor<2xf64>
}

// -----

// expect-error: chlo.is_inf same-shape
func.func @is_inf_shape(%a: tensor<2xf32>) -> tensor<3xi1> {
  %r = "chlo.is_inf"(%a) : (tensor<2xf32>) -> tensor<3xi1>
  func.return %r : tensor<3xi1>
}

// -----

// expect-error: chlo.is_pos_inf inferred
func.func @is_pos_inf_result(%a: tensor<2xf32>) -> tensor<2xf32> {
  %r = "chlo.is_pos_inf"(%a) : (tensor<2xf32>) -> tensor<2xf32>
  func.return %r : tensor<2xf32>
}

// -----

// expect-error: chlo.next_after same-type
func.func @next_after_types(%a: tensor<2xf32>, %b: tensor<2xf64>) -> tensor<2xf32> {
  %r = "chlo.next_after"(%a, %b) : (tensor<2xf32>, tensor<2xf64>) -> tensor<2xf32>
  func.return %r : tensor<2xf32>
}

// -----

// expect-error: chlo.broadcast_add broadcast
func.func @add_shapes(%a: tensor<2x3xf32>, %b: tensor<4xf32>) -> tensor<2x3xf32> {
  %r = "chlo.broadcast_add"(%a, %b) : (tensor<2x3xf32>, tensor<4xf32>) -> tensor<2x3xf32>
  func.return %r : tensor<2x3xf32>
}

// -----

// expect-error: chlo.broadcast_multiply broadcast
func.func @multiply_dims(%a: tensor<2xf32>, %b: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %r = "chlo.broadcast_multiply"(%a, %b) {broadcast_dimensions = array<i64: 2>} : (tensor<2xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %r : tensor<2x3xf32>
}

// -----

// expect-error: chlo.broadcast_subtract same-element
func.func @subtract_elements(%a: tensor<3xf32>, %b: tensor<3xi32>) -> tensor<3xf32> {
  %r = "chlo.broadcast_subtract"(%a, %b) : (tensor<3xf32>, tensor<3xi32>) -> tensor<3xf32>
  func.return %r : tensor<3xf32>
}

// -----

// expect-error: chlo.broadcast_and operand-type
func.func @and_of_floats(%a: tensor<3xf32>) -> tensor<3xf32> {
  %r = "chlo.broadcast_and"(%a, %a) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  func.return %r : tensor<3xf32>
}

// -----

// expect-error: chlo.broadcast_compare inferred
func.func @compare_result(%a: tensor<3xf32>, %b: tensor<2x1xf32>) -> tensor<2x3xf32> {
  %r = "chlo.broadcast_compare"(%a, %b) {comparison_direction = #chlo<comparison_direction LT>} : (tensor<3xf32>, tensor<2x1xf32>) -> tensor<2x3xf32>
  func.return %r : tensor<2x3xf32>
}

// -----

// expect-error: chlo.broadcast_complex inferred
// The result shape is the broadcast shape 2x3, not 3.
func.func @complex_shape(%a: tensor<3xf32>, %b: tensor<2x1xf32>) -> tensor<3xcomplex<f32>> {
  %r = "chlo.broadcast_complex"(%a, %b) : (tensor<3xf32>, tensor<2x1xf32>) -> tensor<3xcomplex<f32>>
  func.return %r : tensor<3xcomplex<f32>>
}

// -----

// expect-error: chlo.broadcast_select operand-type
func.func @select_pred(%p: tensor<3xi32>, %a: tensor<3xf32>) -> tensor<3xf32> {
  %r = "chlo.broadcast_select"(%p, %a, %a) : (tensor<3xi32>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  func.return %r : tensor<3xf32>
}

// -----

// expect-error: chlo.constant_like inferred
func.func @constant_like_shape(%a: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %r = "chlo.constant_like"(%a) {value = 1.0 : f32} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  func.return %r : tensor<3x2xf32>
}

// -----

// expect-error: chlo.top_k k
func.func @top_k_too_many(%a: tensor<5xf32>) -> tensor<6xf32> {
  %v, %i = chlo.top_k(%a, k = 6) : tensor<5xf32> -> (tensor<6xf32>, tensor<6xi32>)
  func.return %v : tensor<6xf32>
}

// -----

// expect-error: chlo.top_k inferred
// The indices are i32 (the type the op infers).
func.func @top_k_indices(%a: tensor<5xf32>) -> tensor<2xi64> {
  %v, %i = chlo.top_k(%a, k = 2) : tensor<5xf32> -> (tensor<2xf32>, tensor<2xi64>)
  func.return %i : tensor<2xi64>
}

// -----

// expect-error: chlo.ragged_dot ragged
func.func @ragged_none(%a: tensor<4x3xf32>, %b: tensor<2x3x5xf32>, %g: tensor<2xi64>) -> tensor<4x5xf32> {
  %r = "chlo.ragged_dot"(%a, %b, %g) {ragged_dot_dimension_numbers = #chlo.ragged_dot<lhs_batching_dimensions = [], rhs_batching_dimensions = [], lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1], lhs_ragged_dimensions = [], rhs_group_dimensions = [0]>} : (tensor<4x3xf32>, tensor<2x3x5xf32>, tensor<2xi64>) -> tensor<4x5xf32>
  func.return %r : tensor<4x5xf32>
}

// -----

// expect-error: chlo.ragged_dot group-sizes
// Mode 2 (ragged contracting) with a batch dimension: group_sizes is [b, g] = [2, 3] or [g].
func.func @ragged_group_sizes(%a: tensor<2x4x6xf32>, %b: tensor<2x6x5xf32>, %g: tensor<4x3xi64>) -> tensor<3x2x4x5xf32> {
  %r = "chlo.ragged_dot"(%a, %b, %g) {ragged_dot_dimension_numbers = #chlo.ragged_dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [0], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [1], lhs_ragged_dimensions = [2], rhs_group_dimensions = []>} : (tensor<2x4x6xf32>, tensor<2x6x5xf32>, tensor<4x3xi64>) -> tensor<3x2x4x5xf32>
  func.return %r : tensor<3x2x4x5xf32>
}

// -----

// expect-error: chlo.ragged_dot group-dims
// Mode 1 (ragged non-contracting): the rhs group dimension has g = 2 entries, not 3.
func.func @ragged_group_dim(%a: tensor<4x3xf32>, %b: tensor<3x3x5xf32>, %g: tensor<2xi64>) -> tensor<4x5xf32> {
  %r = "chlo.ragged_dot"(%a, %b, %g) {ragged_dot_dimension_numbers = #chlo.ragged_dot<lhs_batching_dimensions = [], rhs_batching_dimensions = [], lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1], lhs_ragged_dimensions = [0], rhs_group_dimensions = [0]>} : (tensor<4x3xf32>, tensor<3x3x5xf32>, tensor<2xi64>) -> tensor<4x5xf32>
  func.return %r : tensor<4x5xf32>
}

// -----

// expect-error: chlo.ragged_dot dot
func.func @ragged_contracting_sizes(%a: tensor<4x3xf32>, %b: tensor<2x7x5xf32>, %g: tensor<2xi64>) -> tensor<4x5xf32> {
  %r = "chlo.ragged_dot"(%a, %b, %g) {ragged_dot_dimension_numbers = #chlo.ragged_dot<lhs_batching_dimensions = [], rhs_batching_dimensions = [], lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1], lhs_ragged_dimensions = [0], rhs_group_dimensions = [0]>} : (tensor<4x3xf32>, tensor<2x7x5xf32>, tensor<2xi64>) -> tensor<4x5xf32>
  func.return %r : tensor<4x5xf32>
}

// -----

// expect-error: chlo.ragged_dot inferred
// Mode 2 puts the groups first: [g, m, n] = 3x4x5.
func.func @ragged_result(%a: tensor<4x6xf32>, %b: tensor<6x5xf32>, %g: tensor<3xi64>) -> tensor<4x5xf32> {
  %r = "chlo.ragged_dot"(%a, %b, %g) {ragged_dot_dimension_numbers = #chlo.ragged_dot<lhs_batching_dimensions = [], rhs_batching_dimensions = [], lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0], lhs_ragged_dimensions = [1], rhs_group_dimensions = []>} : (tensor<4x6xf32>, tensor<6x5xf32>, tensor<3xi64>) -> tensor<4x5xf32>
  func.return %r : tensor<4x5xf32>
}

// -----

// expect-error: chlo.constant inferred
func.func @constant_type() -> tensor<3xf32> {
  %r = "chlo.constant"() {value = dense<1.0> : tensor<2xf32>} : () -> tensor<3xf32>
  func.return %r : tensor<3xf32>
}

// -----

// expect-ok
func.func @main(%a: tensor<2x3xf32>, %v: tensor<3xf32>, %m: tensor<4x3xf32>, %w: tensor<2x3x5xf32>, %g: tensor<2xi64>, %z: tensor<3xcomplex<f32>>, %p: tensor<3xi1>) -> (tensor<2x3xf32>, tensor<4x5xf32>, tensor<2x3xi1>) {
  %0 = "chlo.erf"(%a) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = "chlo.asinh"(%z) : (tensor<3xcomplex<f32>>) -> tensor<3xcomplex<f32>>
  %2 = "chlo._asin_acos_kernel"(%1) : (tensor<3xcomplex<f32>>) -> tensor<3xcomplex<f32>>
  %3 = "chlo.is_neg_inf"(%0) : (tensor<2x3xf32>) -> tensor<2x3xi1>
  %4 = "chlo.broadcast_add"(%0, %v) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %5 = "chlo.broadcast_multiply"(%v, %4) {broadcast_dimensions = array<i64: 1>} : (tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %6 = "chlo.broadcast_compare"(%5, %v) {comparison_direction = #chlo<comparison_direction LT>} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  %7 = "chlo.broadcast_select"(%p, %5, %4) : (tensor<3xi1>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %8 = "chlo.constant_like"(%7) {value = 2.0 : f32} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %9 = "chlo.next_after"(%7, %8) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %vals, %idx = chlo.top_k(%9, k = 2) : tensor<2x3xf32> -> (tensor<2x2xf32>, tensor<2x2xi32>)
  %r = "chlo.ragged_dot"(%m, %w, %g) {ragged_dot_dimension_numbers = #chlo.ragged_dot<lhs_batching_dimensions = [], rhs_batching_dimensions = [], lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1], lhs_ragged_dimensions = [0], rhs_group_dimensions = [0]>} : (tensor<4x3xf32>, tensor<2x3x5xf32>, tensor<2xi64>) -> tensor<4x5xf32>
  func.return %9, %r, %6 : tensor<2x3xf32>, tensor<4x5xf32>, tensor<2x3xi1>
}
