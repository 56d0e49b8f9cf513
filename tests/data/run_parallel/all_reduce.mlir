// interpreter.run_parallel running all_reduce on grids of several shapes.

module @sum_across_replicas {
  func.func @sum(%x : tensor<3xi32>) -> tensor<3xi32> {
    %r = "stablehlo.all_reduce"(%x) ({
      ^bb0(%a: tensor<i32>, %b: tensor<i32>):
        %s = stablehlo.add %a, %b : tensor<i32>
        stablehlo.return %s : tensor<i32>
    }) {
      replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>
    } : (tensor<3xi32>) -> tensor<3xi32>
    func.return %r : tensor<3xi32>
  }
  func.func @main() {
    %x0 = stablehlo.constant dense<[1, 2, 3]> : tensor<3xi32>
    %x1 = stablehlo.constant dense<[10, 20, 30]> : tensor<3xi32>
    %r:2 = "interpreter.run_parallel"(%x0, %x1) {
      programs = [[@sum], [@sum]]
    } : (tensor<3xi32>, tensor<3xi32>) -> (tensor<3xi32>, tensor<3xi32>)
    check.expect_eq_const %r#0, dense<[11, 22, 33]> : tensor<3xi32>
    check.expect_eq_const %r#1, dense<[11, 22, 33]> : tensor<3xi32>
    func.return
  }
}

// -----

// A channel id without use_global_device_ids groups replicas together with all their partitions:
// replica group [0] of a 1x3 grid is its three partitions.
module @max_across_replica_and_partitions {
  func.func @max(%x : tensor<4xi64>) -> tensor<4xi64> {
    %r = "stablehlo.all_reduce"(%x) ({
      ^bb0(%a: tensor<i64>, %b: tensor<i64>):
        %m = stablehlo.maximum %a, %b : tensor<i64>
        stablehlo.return %m : tensor<i64>
    }) {
      replica_groups = dense<[[0]]> : tensor<1x1xi64>,
      channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>
    } : (tensor<4xi64>) -> tensor<4xi64>
    func.return %r : tensor<4xi64>
  }
  func.func @main() {
    %x0 = stablehlo.constant dense<[1, 9, 3, -4]> : tensor<4xi64>
    %x1 = stablehlo.constant dense<[5, 2, 8, 0]> : tensor<4xi64>
    %x2 = stablehlo.constant dense<[7, 7, 1, 2]> : tensor<4xi64>
    %r:3 = "interpreter.run_parallel"(%x0, %x1, %x2) {
      programs = [[@max, @max, @max]]
    } : (tensor<4xi64>, tensor<4xi64>, tensor<4xi64>) -> (tensor<4xi64>, tensor<4xi64>, tensor<4xi64>)
    check.expect_eq %r#0, %r#1 : tensor<4xi64>
    check.expect_eq %r#1, %r#2 : tensor<4xi64>
    check.expect_eq_const %r#2, dense<[7, 9, 8, 2]> : tensor<4xi64>
    func.return
  }
}

// -----

// Device ids of a 2x2 grid: (0,0)=0, (0,1)=1, (1,0)=2, (1,1)=3; the groups pair 0 with 3, 1 with 2.
module @flattened_ids_on_a_2x2_grid {
  func.func @sum(%x : tensor<2xf32>) -> tensor<2xf32> {
    %r = "stablehlo.all_reduce"(%x) ({
      ^bb0(%a: tensor<f32>, %b: tensor<f32>):
        %s = stablehlo.add %a, %b : tensor<f32>
        stablehlo.return %s : tensor<f32>
    }) {
      replica_groups = dense<[[0, 3], [1, 2]]> : tensor<2x2xi64>,
      channel_handle = #stablehlo.channel_handle<handle = 7, type = 1>,
      use_global_device_ids
    } : (tensor<2xf32>) -> tensor<2xf32>
    func.return %r : tensor<2xf32>
  }
  func.func @main() {
    %d0 = stablehlo.constant dense<[0.5, 1.0]> : tensor<2xf32>
    %d1 = stablehlo.constant dense<[2.0, 3.0]> : tensor<2xf32>
    %d2 = stablehlo.constant dense<[4.0, 5.0]> : tensor<2xf32>
    %d3 = stablehlo.constant dense<[0.25, 0.125]> : tensor<2xf32>
    %r:4 = "interpreter.run_parallel"(%d0, %d1, %d2, %d3) {
      programs = [[@sum, @sum], [@sum, @sum]]
    } : (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>)
        -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>)
    check.expect_almost_eq_const %r#0, dense<[0.75, 1.125]> : tensor<2xf32>
    check.expect_almost_eq_const %r#1, dense<[6.0, 8.0]> : tensor<2xf32>
    check.expect_almost_eq_const %r#2, dense<[6.0, 8.0]> : tensor<2xf32>
    check.expect_almost_eq_const %r#3, dense<[0.75, 1.125]> : tensor<2xf32>
    func.return
  }
}

// -----

// Two different functions meet at one all_reduce: one process contributes its input, the other
// twice its input, and both also return what they contributed.
module @different_programs_one_collective {
  func.func @plain(%x : tensor<2xi32>) -> (tensor<2xi32>, tensor<2xi32>) {
    %r = "stablehlo.all_reduce"(%x) ({
      ^bb0(%a: tensor<i32>, %b: tensor<i32>):
        %s = stablehlo.add %a, %b : tensor<i32>
        stablehlo.return %s : tensor<i32>
    }) {
      replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>
    } : (tensor<2xi32>) -> tensor<2xi32>
    func.return %x, %r : tensor<2xi32>, tensor<2xi32>
  }
  func.func @doubled(%x : tensor<2xi32>) -> (tensor<2xi32>, tensor<2xi32>) {
    %twice = stablehlo.add %x, %x : tensor<2xi32>
    %r = "stablehlo.all_reduce"(%twice) ({
      ^bb0(%a: tensor<i32>, %b: tensor<i32>):
        %s = stablehlo.add %a, %b : tensor<i32>
        stablehlo.return %s : tensor<i32>
    }) {
      replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>
    } : (tensor<2xi32>) -> tensor<2xi32>
    func.return %twice, %r : tensor<2xi32>, tensor<2xi32>
  }
  func.func @main() {
    %x0 = stablehlo.constant dense<[1, 2]> : tensor<2xi32>
    %x1 = stablehlo.constant dense<[3, 4]> : tensor<2xi32>
    %r:4 = "interpreter.run_parallel"(%x0, %x1) {
      programs = [[@plain], [@doubled]]
    } : (tensor<2xi32>, tensor<2xi32>) -> (tensor<2xi32>, tensor<2xi32>, tensor<2xi32>, tensor<2xi32>)
    check.expect_eq_const %r#0, dense<[1, 2]> : tensor<2xi32>
    check.expect_eq_const %r#1, dense<[7, 10]> : tensor<2xi32>
    check.expect_eq_const %r#2, dense<[6, 8]> : tensor<2xi32>
    check.expect_eq_const %r#3, dense<[7, 10]> : tensor<2xi32>
    func.return
  }
}
