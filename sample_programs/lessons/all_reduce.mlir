// Lesson: all_reduce, all_gather, reduce_scatter on a grid of 4 devices (mhlo.num_replicas = 4).
// Every device runs this same program on its OWN %arg0 (the lesson's inputs arg0@R,P: device r
// holds 10 * r + 1, 10 * r + 2, ...; `hlodbg run --args-per-device` takes the same form).
// Pick a device in the grid view to see its values.
//
// What to look at:
//  * %0 all_reduce with replica_groups [[0, 1], [2, 3]]: devices 0 and 1 add their %arg0
//    together, devices 2 and 3 theirs. Each device of a group ends with the same sum.
//  * %1 all_gather along dim 0 over all 4 devices: every device gets all four %arg0 one after
//    the other, in group order: %1[4*r + k] = %arg0[k] of device r.
//  * %2 reduce_scatter: like all_reduce over [[0, 1, 2, 3]], but device r keeps only chunk r of
//    the sum (here one element each). What surprises people: the result is SMALLER than %arg0.
module @all_reduce attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 4 : i32} {
  func.func @main(%arg0: tensor<4xf32>) -> (tensor<4xf32>, tensor<16xf32>, tensor<1xf32>) {
    %0 = "stablehlo.all_reduce"(%arg0) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }) {replica_groups = dense<[[0, 1], [2, 3]]> : tensor<2x2xi64>} : (tensor<4xf32>) -> tensor<4xf32>
    %1 = "stablehlo.all_gather"(%arg0) {all_gather_dim = 0 : i64, replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>} : (tensor<4xf32>) -> tensor<16xf32>
    %2 = "stablehlo.reduce_scatter"(%arg0) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }) {replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>, scatter_dimension = 0 : i64} : (tensor<4xf32>) -> tensor<1xf32>
    return %0, %1, %2 : tensor<4xf32>, tensor<16xf32>, tensor<1xf32>
  }
}
