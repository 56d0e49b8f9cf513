// The provenance view and the explain pane: a transpose, a gather reading rows of it (one index
// out of range, clamped), and a while loop, whose elements hlodbg does not trace (one steps into its body).
func.func @main(%operand: tensor<3x4xf32>, %idx: tensor<2x1xi32>, %spd: tensor<2x2xf32>) -> (tensor<2x3xf32>, tensor<2x2xf32>) {
  %t = stablehlo.transpose %operand, dims = [1, 0] : (tensor<3x4xf32>) -> tensor<4x3xf32>
  %g = "stablehlo.gather"(%t, %idx) {
    dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>,
    slice_sizes = array<i64: 1, 3>, indices_are_sorted = false
  } : (tensor<4x3xf32>, tensor<2x1xi32>) -> tensor<2x3xf32>
  %c = stablehlo.while(%x = %spd) : tensor<2x2xf32>
    cond {
      %stop = stablehlo.constant dense<false> : tensor<i1>
      stablehlo.return %stop : tensor<i1>
    } do {
      stablehlo.return %x : tensor<2x2xf32>
    }
  return %g, %c : tensor<2x3xf32>, tensor<2x2xf32>
}
