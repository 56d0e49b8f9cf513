// A TPU memory lesson: why a 768 KiB array takes 32 MiB of HBM, and the shape that fixes it.
//
// Squared distances of 65,536 points to a center. The points are f32[65536,3] and their layout is
// pinned row-major (`mhlo.layout_mode = "{1,0}"`, what JAX writes when a jax.Layout fixes an
// argument's layout): the minor dimension, 3, is the one a TPU tiles by 128 lanes.
//
//   hlodbg memory sample_programs/tpu_padding.mlir --target tpu-v5e
//
// shows %points as f32[65536,3]{1,0:T(8,128)}: 768 KiB of data in a 32 MiB buffer (42.7x), 93% of
// the peak is padding. tpu_padding_fixed.mlir keeps the same data as f32[3,65536] (the coordinate
// first), so the 65,536 points run along the lanes: 1 MiB (1.3x, the 3 rows padded to 4).
// In the debugger (`hlodbg sample_programs/tpu_padding.mlir --target tpu-v5e`) the inspector's
// physical view draws the tiles and their padding, and the memory pane shows the peak.
func.func @main(%points: tensor<65536x3xf32> {mhlo.layout_mode = "{1,0}"}, %center: tensor<3xf32>) -> tensor<65536xf32> {
  %c = stablehlo.broadcast_in_dim %center, dims = [1] : (tensor<3xf32>) -> tensor<65536x3xf32>
  %d = stablehlo.subtract %points, %c : tensor<65536x3xf32>
  %sq = stablehlo.multiply %d, %d : tensor<65536x3xf32>
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %r = stablehlo.reduce(%sq init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<65536x3xf32>, tensor<f32>) -> tensor<65536xf32>
  return %r : tensor<65536xf32>
}
