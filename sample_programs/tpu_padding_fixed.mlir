// tpu_padding.mlir with the points stored coordinate-first: f32[3,65536], still pinned row-major.
// The long dimension is now the minor one, so the TPU's 128 lanes are full and only the 3 rows pad
// to 4: `hlodbg memory sample_programs/tpu_padding_fixed.mlir --target tpu-v5e` gives %points
// f32[3,65536]{1,0:T(4,128)}, 1 MiB instead of 32 MiB.
func.func @main(%points: tensor<3x65536xf32> {mhlo.layout_mode = "{1,0}"}, %center: tensor<3xf32>) -> tensor<65536xf32> {
  %c = stablehlo.broadcast_in_dim %center, dims = [0] : (tensor<3xf32>) -> tensor<3x65536xf32>
  %d = stablehlo.subtract %points, %c : tensor<3x65536xf32>
  %sq = stablehlo.multiply %d, %d : tensor<3x65536xf32>
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %r = stablehlo.reduce(%sq init: %zero) applies stablehlo.add across dimensions = [0] : (tensor<3x65536xf32>, tensor<f32>) -> tensor<65536xf32>
  return %r : tensor<65536xf32>
}
