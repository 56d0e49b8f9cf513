// Four replicas: each adds its replica id to x, sums within pairs [0,1] and [2,3], passes its
// value one step around a ring, and gathers everyone's value. For the grid view tests.
module attributes {mhlo.num_replicas = 4 : i32, mhlo.num_partitions = 1 : i32} {
  func.func @main(%x: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>, tensor<8xf32>) {
    %r = stablehlo.replica_id : tensor<ui32>
    %rf = stablehlo.convert %r : (tensor<ui32>) -> tensor<f32>
    %b = stablehlo.broadcast_in_dim %rf, dims = [] : (tensor<f32>) -> tensor<2xf32>
    %y = stablehlo.add %x, %b : tensor<2xf32>
    %sum = "stablehlo.all_reduce"(%y) ({
      ^bb0(%a: tensor<f32>, %c: tensor<f32>):
        %t = stablehlo.add %a, %c : tensor<f32>
        stablehlo.return %t : tensor<f32>
    }) {replica_groups = dense<[[0, 1], [2, 3]]> : tensor<2x2xi64>} : (tensor<2xf32>) -> tensor<2xf32>
    %ring = "stablehlo.collective_permute"(%y) {source_target_pairs = dense<[[0, 1], [1, 2], [2, 3], [3, 0]]> : tensor<4x2xi64>} : (tensor<2xf32>) -> tensor<2xf32>
    %all = "stablehlo.all_gather"(%y) {all_gather_dim = 0 : i64, replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>} : (tensor<2xf32>) -> tensor<8xf32>
    return %sum, %ring, %all : tensor<2xf32>, tensor<2xf32>, tensor<8xf32>
  }
}
