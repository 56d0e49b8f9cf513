// Lesson: all_to_all, collective_permute, collective_broadcast on a grid of 4 devices.
// Device r holds %x = %arg0 + 10 * r (made from stablehlo.replica_id).
//
// What to look at:
//  * %0 all_to_all: every device cuts %x into 4 chunks (split_dimension 0) and sends chunk j to
//    device j; each device concatenates what it receives in device order. It is a transpose of
//    (device, chunk): %0[j] on device r is %x[r] of device j.
//  * %1 collective_permute with pairs (0->1), (1->2), (2->3): each device sends %x to the next.
//    What surprises people: device 0 receives from nobody, and its result is all ZEROS.
//  * %2 collective_broadcast with group [1, 0, 2, 3]: the FIRST device of the group (device 1,
//    not device 0) sends its %x to all the others.
module @all_to_all attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 4 : i32} {
  func.func @main(%arg0: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
    %r = stablehlo.replica_id : tensor<ui32>
    %rf = stablehlo.convert %r : (tensor<ui32>) -> tensor<f32>
    %ten = stablehlo.constant dense<1.000000e+01> : tensor<f32>
    %shift = stablehlo.multiply %rf, %ten : tensor<f32>
    %spread = stablehlo.broadcast_in_dim %shift, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %x = stablehlo.add %arg0, %spread : tensor<4xf32>
    %0 = "stablehlo.all_to_all"(%x) {concat_dimension = 0 : i64, replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>, split_count = 4 : i64, split_dimension = 0 : i64} : (tensor<4xf32>) -> tensor<4xf32>
    %1 = "stablehlo.collective_permute"(%x) {source_target_pairs = dense<[[0, 1], [1, 2], [2, 3]]> : tensor<3x2xi64>} : (tensor<4xf32>) -> tensor<4xf32>
    %2 = "stablehlo.collective_broadcast"(%x) {replica_groups = dense<[[1, 0, 2, 3]]> : tensor<1x4xi64>} : (tensor<4xf32>) -> tensor<4xf32>
    return %0, %1, %2 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  }
}
