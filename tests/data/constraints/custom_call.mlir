// Verifier constraints of stablehlo.custom_call. docs/spec.md at head numbers none; its Inputs
// table fixes the kinds of `backend_config` (I4: a string, or with API_VERSION_TYPED_FFI an
// attribute dictionary) and `api_version` (I5: one of the CustomCallApiVersion values 0-4, as
// `4 : i32` or `#stablehlo<custom_call_api_version API_VERSION_TYPED_FFI>`). The layout and alias
// rules come from the StableHLO dialect, which the spec leaves them to; their labels:
//   layouts - operand_layouts and result_layouts come together, one per operand / result (the
//             elements of a single tuple result), each a permutation of the dimensions of its
//             tensor, empty for a token; tuple operands have no layout.
//   aliases - output_operand_aliases name an operand in range, tuple indices that exist, and an
//             output part of the same type as the operand part.
// Run by tests/test_verifier_constraints.py, which documents the directives.
// Not statically decidable: none (what the call does is implementation-defined).

// expect-error: stablehlo.custom_call I5
func.func @api_version(%a: tensor<2xf32>) -> tensor<2xf32> {
  %r = stablehlo.custom_call @foo(%a) {api_version = 7 : i32} : (tensor<2xf32>) -> tensor<2xf32>
  func.return %r : tensor<2xf32>
}

// -----

// expect-error: stablehlo.custom_call I4
// API_VERSION_TYPED_FFI takes its backend_config as a dictionary, not a string.
func.func @typed_ffi_config(%a: tensor<2xf32>) -> tensor<2xf32> {
  %r = stablehlo.custom_call @foo(%a) {api_version = 4 : i32, backend_config = "opaque"} : (tensor<2xf32>) -> tensor<2xf32>
  func.return %r : tensor<2xf32>
}

// -----

// expect-error: stablehlo.custom_call I4
// The older API versions take an opaque string.
func.func @original_config(%a: tensor<2xf32>) -> tensor<2xf32> {
  %r = stablehlo.custom_call @foo(%a) {api_version = 2 : i32, backend_config = {x = 1 : i32}} : (tensor<2xf32>) -> tensor<2xf32>
  func.return %r : tensor<2xf32>
}

// -----

// expect-error: stablehlo.custom_call layouts
func.func @operand_layouts_alone(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %r = stablehlo.custom_call @foo(%a) {operand_layouts = [dense<[1, 0]> : tensor<2xindex>]} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %r : tensor<2x3xf32>
}

// -----

// expect-error: stablehlo.custom_call layouts
func.func @layout_count(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %r = stablehlo.custom_call @foo(%a, %a) {operand_layouts = [dense<[1, 0]> : tensor<2xindex>], result_layouts = [dense<[1, 0]> : tensor<2xindex>]} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %r : tensor<2x3xf32>
}

// -----

// expect-error: stablehlo.custom_call layouts
func.func @layout_not_permutation(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %r = stablehlo.custom_call @foo(%a) {operand_layouts = [dense<[1, 0]> : tensor<2xindex>], result_layouts = [dense<[1, 1]> : tensor<2xindex>]} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %r : tensor<2x3xf32>
}

// -----

// expect-error: stablehlo.custom_call layouts
func.func @token_layout(%a: tensor<2xf32>, %t: !stablehlo.token) -> tensor<2xf32> {
  %r = stablehlo.custom_call @foo(%a, %t) {operand_layouts = [dense<0> : tensor<1xindex>, dense<0> : tensor<1xindex>], result_layouts = [dense<0> : tensor<1xindex>]} : (tensor<2xf32>, !stablehlo.token) -> tensor<2xf32>
  func.return %r : tensor<2xf32>
}

// -----

// expect-error: stablehlo.custom_call aliases
func.func @alias_operand_index(%a: tensor<2xf32>) -> tensor<2xf32> {
  %r = stablehlo.custom_call @foo(%a) {output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [], operand_index = 1, operand_tuple_indices = []>]} : (tensor<2xf32>) -> tensor<2xf32>
  func.return %r : tensor<2xf32>
}

// -----

// expect-error: stablehlo.custom_call aliases
func.func @alias_types(%a: tensor<2xf32>, %b: tensor<3xf32>) -> (tensor<2xf32>, tensor<3xf32>) {
  %r:2 = stablehlo.custom_call @foo(%a, %b) {output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [1], operand_index = 0, operand_tuple_indices = []>]} : (tensor<2xf32>, tensor<3xf32>) -> (tensor<2xf32>, tensor<3xf32>)
  func.return %r#0, %r#1 : tensor<2xf32>, tensor<3xf32>
}

// -----

// expect-error: stablehlo.custom_call aliases
func.func @alias_tuple_index(%a: tensor<2xf32>) -> tensor<2xf32> {
  %r = stablehlo.custom_call @foo(%a) {output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [], operand_index = 0, operand_tuple_indices = [0]>]} : (tensor<2xf32>) -> tensor<2xf32>
  func.return %r : tensor<2xf32>
}

// -----

// expect-ok
func.func @main(%a: tensor<2x3xf32>, %b: tensor<3xf32>, %t: !stablehlo.token) -> (tensor<2x3xf32>, tensor<3xf32>) {
  %0 = stablehlo.custom_call @plain(%a) {backend_config = "anything"} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = stablehlo.custom_call @ffi(%0) {api_version = 4 : i32, backend_config = {scale = 2.0 : f32}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %2 = "stablehlo.custom_call"(%1) {call_target_name = "ffi_enum", api_version = #stablehlo<custom_call_api_version API_VERSION_TYPED_FFI>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %3:2 = stablehlo.custom_call @laid_out(%2, %t) {operand_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<> : tensor<0xindex>], result_layouts = [dense<[1, 0]> : tensor<2xindex>, dense<> : tensor<0xindex>]} : (tensor<2x3xf32>, !stablehlo.token) -> (tensor<2x3xf32>, !stablehlo.token)
  %4:2 = stablehlo.custom_call @in_place(%3#0, %b) {has_side_effect = true, output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [1], operand_index = 1, operand_tuple_indices = []>]} : (tensor<2x3xf32>, tensor<3xf32>) -> (tensor<2x3xf32>, tensor<3xf32>)
  func.return %4#0, %4#1 : tensor<2x3xf32>, tensor<3xf32>
}
