// interpreter.run_parallel running reduce_scatter: reduce across the group, then each member
// keeps its slice along scatter_dimension.

module @sum_scatter_replicas {
  func.func @sum_scatter(%x : tensor<4xi64>) -> tensor<2xi64> {
    %r = "stablehlo.reduce_scatter"(%x) ({
      ^bb0(%a: tensor<i64>, %b: tensor<i64>):
        %s = stablehlo.add %a, %b : tensor<i64>
        stablehlo.return %s : tensor<i64>
    }) {
      scatter_dimension = 0 : i64,
      replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>
    } : (tensor<4xi64>) -> tensor<2xi64>
    func.return %r : tensor<2xi64>
  }
  func.func @main() {
    %x0 = stablehlo.constant dense<[1, 2, 3, 4]> : tensor<4xi64>
    %x1 = stablehlo.constant dense<[10, 20, 30, 40]> : tensor<4xi64>
    %r:2 = "interpreter.run_parallel"(%x0, %x1) {
      programs = [[@sum_scatter], [@sum_scatter]]
    } : (tensor<4xi64>, tensor<4xi64>) -> (tensor<2xi64>, tensor<2xi64>)
    check.expect_eq_const %r#0, dense<[11, 22]> : tensor<2xi64>
    check.expect_eq_const %r#1, dense<[33, 44]> : tensor<2xi64>
    func.return
  }
}

// -----

// use_global_device_ids: the group names flattened device ids, here the two partitions.
module @max_scatter_partitions {
  func.func @max_scatter(%x : tensor<2x4xf32>) -> tensor<2x2xf32> {
    %r = "stablehlo.reduce_scatter"(%x) ({
      ^bb0(%a: tensor<f32>, %b: tensor<f32>):
        %m = stablehlo.maximum %a, %b : tensor<f32>
        stablehlo.return %m : tensor<f32>
    }) {
      scatter_dimension = 1 : i64,
      replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>,
      channel_handle = #stablehlo.channel_handle<handle = 4, type = 1>,
      use_global_device_ids
    } : (tensor<2x4xf32>) -> tensor<2x2xf32>
    func.return %r : tensor<2x2xf32>
  }
  func.func @main() {
    %x0 = stablehlo.constant dense<[[1.0, 8.0, 3.0, 4.0], [5.0, 6.0, 7.0, 0.0]]> : tensor<2x4xf32>
    %x1 = stablehlo.constant dense<[[2.0, 2.0, 9.0, 1.0], [0.0, 9.0, 1.0, 1.0]]> : tensor<2x4xf32>
    %r:2 = "interpreter.run_parallel"(%x0, %x1) {
      programs = [[@max_scatter, @max_scatter]]
    } : (tensor<2x4xf32>, tensor<2x4xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>)
    check.expect_almost_eq_const %r#0, dense<[[2.0, 8.0], [5.0, 9.0]]> : tensor<2x2xf32>
    check.expect_almost_eq_const %r#1, dense<[[9.0, 4.0], [7.0, 1.0]]> : tensor<2x2xf32>
    func.return
  }
}
