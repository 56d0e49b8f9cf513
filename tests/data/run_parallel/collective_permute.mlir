// interpreter.run_parallel running collective_permute; a process no pair targets gets zeros.

module @ring_of_three_replicas {
  func.func @rotate(%x : tensor<2xi32>) -> tensor<2xi32> {
    %r = "stablehlo.collective_permute"(%x) {
      source_target_pairs = dense<[[0, 1], [1, 2], [2, 0]]> : tensor<3x2xi64>
    } : (tensor<2xi32>) -> tensor<2xi32>
    func.return %r : tensor<2xi32>
  }
  func.func @main() {
    %x0 = stablehlo.constant dense<[1, 2]> : tensor<2xi32>
    %x1 = stablehlo.constant dense<[3, 4]> : tensor<2xi32>
    %x2 = stablehlo.constant dense<[5, 6]> : tensor<2xi32>
    %r:3 = "interpreter.run_parallel"(%x0, %x1, %x2) {
      programs = [[@rotate], [@rotate], [@rotate]]
    } : (tensor<2xi32>, tensor<2xi32>, tensor<2xi32>) -> (tensor<2xi32>, tensor<2xi32>, tensor<2xi32>)
    check.expect_eq_const %r#0, dense<[5, 6]> : tensor<2xi32>
    check.expect_eq_const %r#1, dense<[1, 2]> : tensor<2xi32>
    check.expect_eq_const %r#2, dense<[3, 4]> : tensor<2xi32>
    func.return
  }
}

// -----

module @one_pair_of_partitions {
  func.func @move(%x : tensor<2x2xf32>) -> tensor<2x2xf32> {
    %r = "stablehlo.collective_permute"(%x) {
      source_target_pairs = dense<[[0, 2]]> : tensor<1x2xi64>,
      channel_handle = #stablehlo.channel_handle<handle = 2, type = 1>
    } : (tensor<2x2xf32>) -> tensor<2x2xf32>
    func.return %r : tensor<2x2xf32>
  }
  func.func @main() {
    %x0 = stablehlo.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
    %x1 = stablehlo.constant dense<[[5.0, 6.0], [7.0, 8.0]]> : tensor<2x2xf32>
    %x2 = stablehlo.constant dense<[[9.0, 10.0], [11.0, 12.0]]> : tensor<2x2xf32>
    %r:3 = "interpreter.run_parallel"(%x0, %x1, %x2) {
      programs = [[@move, @move, @move]]
    } : (tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>)
    check.expect_almost_eq_const %r#0, dense<0.0> : tensor<2x2xf32>
    check.expect_almost_eq_const %r#1, dense<0.0> : tensor<2x2xf32>
    check.expect_almost_eq_const %r#2, dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
    func.return
  }
}
