// Lesson: all_reduce, all_gather, reduce_scatter on a grid of 4 devices (mhlo.num_replicas = 4).
// Every device runs this same program. %x differs per device: device r holds %arg0 + 10 * r
// (made from stablehlo.replica_id, so that one input file serves all devices).
// Pick a device in the grid view to see its values.
//
// What to look at:
//  * %0 all_reduce with replica_groups [[0, 1], [2, 3]]: devices 0 and 1 add their %x together,
//    devices 2 and 3 theirs. Each device of a group ends with the same sum.
//  * %1 all_gather along dim 0 over all 4 devices: every device gets all four %x one after the
//    other, in group order: %1[4*r + k] = %x[k] of device r.
//  * %2 reduce_scatter: like all_reduce over [[0, 1, 2, 3]], but device r keeps only chunk r of
//    the sum (here one element each). What surprises people: the result is SMALLER than %x.
module @all_reduce attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 4 : i32} {
  func.func @main(%arg0: tensor<4xf32>) -> (tensor<4xf32>, tensor<16xf32>, tensor<1xf32>) {
    %r = stablehlo.replica_id : tensor<ui32>
    %rf = stablehlo.convert %r : (tensor<ui32>) -> tensor<f32>
    %ten = stablehlo.constant dense<1.000000e+01> : tensor<f32>
    %shift = stablehlo.multiply %rf, %ten : tensor<f32>
    %spread = stablehlo.broadcast_in_dim %shift, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %x = stablehlo.add %arg0, %spread : tensor<4xf32>
    %0 = "stablehlo.all_reduce"(%x) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }) {replica_groups = dense<[[0, 1], [2, 3]]> : tensor<2x2xi64>} : (tensor<4xf32>) -> tensor<4xf32>
    %1 = "stablehlo.all_gather"(%x) {all_gather_dim = 0 : i64, replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>} : (tensor<4xf32>) -> tensor<16xf32>
    %2 = "stablehlo.reduce_scatter"(%x) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }) {replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>, scatter_dimension = 0 : i64} : (tensor<4xf32>) -> tensor<1xf32>
    return %0, %1, %2 : tensor<4xf32>, tensor<16xf32>, tensor<1xf32>
  }
}
