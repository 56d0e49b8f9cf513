// interpreter.run_parallel running all_to_all: each process sends chunk i of its operand to the
// i-th member of its group and concatenates what it receives in group order.

module @split_rows_concat_columns {
  func.func @exchange(%x : tensor<4x2xi64>) -> tensor<2x4xi64> {
    %r = "stablehlo.all_to_all"(%x) {
      split_dimension = 0 : i64,
      concat_dimension = 1 : i64,
      split_count = 2 : i64,
      replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>,
      channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>
    } : (tensor<4x2xi64>) -> tensor<2x4xi64>
    func.return %r : tensor<2x4xi64>
  }
  func.func @main() {
    %x0 = stablehlo.constant dense<[[1, 2], [3, 4], [5, 6], [7, 8]]> : tensor<4x2xi64>
    %x1 = stablehlo.constant dense<[[11, 12], [13, 14], [15, 16], [17, 18]]> : tensor<4x2xi64>
    %r:2 = "interpreter.run_parallel"(%x0, %x1) {
      programs = [[@exchange, @exchange]]
    } : (tensor<4x2xi64>, tensor<4x2xi64>) -> (tensor<2x4xi64>, tensor<2x4xi64>)
    check.expect_eq_const %r#0, dense<[[1, 2, 11, 12], [3, 4, 13, 14]]> : tensor<2x4xi64>
    check.expect_eq_const %r#1, dense<[[5, 6, 15, 16], [7, 8, 17, 18]]> : tensor<2x4xi64>
    func.return
  }
}

// -----

// Three replicas exchanging one element each: a transpose of the 3x3 matrix of their operands.
module @transpose_across_three_replicas {
  func.func @exchange(%x : tensor<3xi32>) -> tensor<3xi32> {
    %r = "stablehlo.all_to_all"(%x) {
      split_dimension = 0 : i64,
      concat_dimension = 0 : i64,
      split_count = 3 : i64,
      replica_groups = dense<[[0, 1, 2]]> : tensor<1x3xi64>
    } : (tensor<3xi32>) -> tensor<3xi32>
    func.return %r : tensor<3xi32>
  }
  func.func @main() {
    %x0 = stablehlo.constant dense<[1, 2, 3]> : tensor<3xi32>
    %x1 = stablehlo.constant dense<[4, 5, 6]> : tensor<3xi32>
    %x2 = stablehlo.constant dense<[7, 8, 9]> : tensor<3xi32>
    %r:3 = "interpreter.run_parallel"(%x0, %x1, %x2) {
      programs = [[@exchange], [@exchange], [@exchange]]
    } : (tensor<3xi32>, tensor<3xi32>, tensor<3xi32>) -> (tensor<3xi32>, tensor<3xi32>, tensor<3xi32>)
    check.expect_eq_const %r#0, dense<[1, 4, 7]> : tensor<3xi32>
    check.expect_eq_const %r#1, dense<[2, 5, 8]> : tensor<3xi32>
    check.expect_eq_const %r#2, dense<[3, 6, 9]> : tensor<3xi32>
    func.return
  }
}
