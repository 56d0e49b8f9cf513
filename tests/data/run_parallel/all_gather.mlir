// interpreter.run_parallel running all_gather across replicas and across partitions.

module @gather_replicas {
  func.func @gather(%x : tensor<2x2xi64>) -> tensor<2x4xi64> {
    %r = "stablehlo.all_gather"(%x) {
      all_gather_dim = 1 : i64,
      replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>
    } : (tensor<2x2xi64>) -> tensor<2x4xi64>
    func.return %r : tensor<2x4xi64>
  }
  func.func @main() {
    %x0 = stablehlo.constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi64>
    %x1 = stablehlo.constant dense<[[5, 6], [7, 8]]> : tensor<2x2xi64>
    %r:2 = "interpreter.run_parallel"(%x0, %x1) {
      programs = [[@gather], [@gather]]
    } : (tensor<2x2xi64>, tensor<2x2xi64>) -> (tensor<2x4xi64>, tensor<2x4xi64>)
    check.expect_eq_const %r#0, dense<[[1, 2, 5, 6], [3, 4, 7, 8]]> : tensor<2x4xi64>
    check.expect_eq_const %r#1, dense<[[1, 2, 5, 6], [3, 4, 7, 8]]> : tensor<2x4xi64>
    func.return
  }
}

// -----

// Flattened device ids (replica * 2 + partition): groups [0, 1] and [2, 3] make each replica of
// the 2x2 grid gather its own two partitions.
module @gather_partitions_on_a_2x2_grid {
  func.func @gather(%x : tensor<2xi32>) -> tensor<4xi32> {
    %r = "stablehlo.all_gather"(%x) {
      all_gather_dim = 0 : i64,
      replica_groups = dense<[[0, 1], [2, 3]]> : tensor<2x2xi64>,
      channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>,
      use_global_device_ids
    } : (tensor<2xi32>) -> tensor<4xi32>
    func.return %r : tensor<4xi32>
  }
  func.func @main() {
    %x00 = stablehlo.constant dense<[1, 2]> : tensor<2xi32>
    %x01 = stablehlo.constant dense<[3, 4]> : tensor<2xi32>
    %x10 = stablehlo.constant dense<[5, 6]> : tensor<2xi32>
    %x11 = stablehlo.constant dense<[7, 8]> : tensor<2xi32>
    %r:4 = "interpreter.run_parallel"(%x00, %x01, %x10, %x11) {
      programs = [[@gather, @gather], [@gather, @gather]]
    } : (tensor<2xi32>, tensor<2xi32>, tensor<2xi32>, tensor<2xi32>)
        -> (tensor<4xi32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi32>)
    check.expect_eq_const %r#0, dense<[1, 2, 3, 4]> : tensor<4xi32>
    check.expect_eq_const %r#1, dense<[1, 2, 3, 4]> : tensor<4xi32>
    check.expect_eq_const %r#2, dense<[5, 6, 7, 8]> : tensor<4xi32>
    check.expect_eq_const %r#3, dense<[5, 6, 7, 8]> : tensor<4xi32>
    func.return
  }
}
