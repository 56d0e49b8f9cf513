// interpreter.run_parallel running collective_broadcast: the first member of each group sends its
// operand to the group; processes in no group get zeros.

module @broadcast_among_replicas {
  func.func @broadcast(%x : tensor<2xi64>) -> tensor<2xi64> {
    %r = "stablehlo.collective_broadcast"(%x) {
      replica_groups = dense<[[2, 1]]> : tensor<1x2xi64>
    } : (tensor<2xi64>) -> tensor<2xi64>
    func.return %r : tensor<2xi64>
  }
  func.func @main() {
    %x0 = stablehlo.constant dense<[1, 2]> : tensor<2xi64>
    %x1 = stablehlo.constant dense<[3, 4]> : tensor<2xi64>
    %x2 = stablehlo.constant dense<[5, 6]> : tensor<2xi64>
    %x3 = stablehlo.constant dense<[7, 8]> : tensor<2xi64>
    %r:4 = "interpreter.run_parallel"(%x0, %x1, %x2, %x3) {
      programs = [[@broadcast], [@broadcast], [@broadcast], [@broadcast]]
    } : (tensor<2xi64>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>)
        -> (tensor<2xi64>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>)
    check.expect_eq_const %r#0, dense<[0, 0]> : tensor<2xi64>
    check.expect_eq_const %r#1, dense<[5, 6]> : tensor<2xi64>
    check.expect_eq_const %r#2, dense<[5, 6]> : tensor<2xi64>
    check.expect_eq_const %r#3, dense<[0, 0]> : tensor<2xi64>
    func.return
  }
}

// -----

module @broadcast_among_partitions {
  func.func @broadcast(%x : tensor<1xf32>) -> tensor<1xf32> {
    %r = "stablehlo.collective_broadcast"(%x) {
      replica_groups = dense<[[1, 0]]> : tensor<1x2xi64>,
      channel_handle = #stablehlo.channel_handle<handle = 3, type = 1>
    } : (tensor<1xf32>) -> tensor<1xf32>
    func.return %r : tensor<1xf32>
  }
  func.func @main() {
    %x0 = stablehlo.constant dense<[1.5]> : tensor<1xf32>
    %x1 = stablehlo.constant dense<[2.5]> : tensor<1xf32>
    %r:2 = "interpreter.run_parallel"(%x0, %x1) {
      programs = [[@broadcast, @broadcast]]
    } : (tensor<1xf32>, tensor<1xf32>) -> (tensor<1xf32>, tensor<1xf32>)
    check.expect_almost_eq_const %r#0, dense<[2.5]> : tensor<1xf32>
    check.expect_almost_eq_const %r#1, dense<[2.5]> : tensor<1xf32>
    func.return
  }
}
