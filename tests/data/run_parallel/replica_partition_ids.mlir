// replica_id and partition_id inside interpreter.run_parallel: each process learns its place
// from the position of its program in `programs`.

module @ids_on_a_2x3_grid {
  func.func @ids() -> (tensor<ui32>, tensor<ui32>) {
    %replica = stablehlo.replica_id : tensor<ui32>
    %partition = stablehlo.partition_id : tensor<ui32>
    func.return %replica, %partition : tensor<ui32>, tensor<ui32>
  }
  func.func @main() {
    %r:12 = "interpreter.run_parallel"() {
      programs = [[@ids, @ids, @ids], [@ids, @ids, @ids]]
    } : () -> (tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>,
               tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>, tensor<ui32>)
    check.expect_eq_const %r#0, dense<0> : tensor<ui32>
    check.expect_eq_const %r#1, dense<0> : tensor<ui32>
    check.expect_eq_const %r#2, dense<0> : tensor<ui32>
    check.expect_eq_const %r#3, dense<1> : tensor<ui32>
    check.expect_eq_const %r#4, dense<0> : tensor<ui32>
    check.expect_eq_const %r#5, dense<2> : tensor<ui32>
    check.expect_eq_const %r#6, dense<1> : tensor<ui32>
    check.expect_eq_const %r#7, dense<0> : tensor<ui32>
    check.expect_eq_const %r#8, dense<1> : tensor<ui32>
    check.expect_eq_const %r#9, dense<1> : tensor<ui32>
    check.expect_eq_const %r#10, dense<1> : tensor<ui32>
    check.expect_eq_const %r#11, dense<2> : tensor<ui32>
    func.return
  }
}

// -----

// Different functions with different signatures per process: the inputs and results are
// ragged, flattened in process order (0,0), (0,1), (1,0), (1,1).
module @different_functions_per_process {
  // x + 10 * replica_id + partition_id
  func.func @tag(%x : tensor<i32>) -> tensor<i32> {
    %replica = stablehlo.replica_id : tensor<ui32>
    %partition = stablehlo.partition_id : tensor<ui32>
    %r = stablehlo.convert %replica : (tensor<ui32>) -> tensor<i32>
    %p = stablehlo.convert %partition : (tensor<ui32>) -> tensor<i32>
    %ten = stablehlo.constant dense<10> : tensor<i32>
    %r10 = stablehlo.multiply %r, %ten : tensor<i32>
    %sum = stablehlo.add %x, %r10 : tensor<i32>
    %out = stablehlo.add %sum, %p : tensor<i32>
    func.return %out : tensor<i32>
  }
  // (a * (partition_id + 1), b + replica_id)
  func.func @scale(%a : tensor<2xi32>, %b : tensor<i32>) -> (tensor<2xi32>, tensor<i32>) {
    %replica = stablehlo.replica_id : tensor<ui32>
    %partition = stablehlo.partition_id : tensor<ui32>
    %r = stablehlo.convert %replica : (tensor<ui32>) -> tensor<i32>
    %p = stablehlo.convert %partition : (tensor<ui32>) -> tensor<i32>
    %one = stablehlo.constant dense<1> : tensor<i32>
    %factor = stablehlo.add %p, %one : tensor<i32>
    %f = stablehlo.broadcast_in_dim %factor, dims = [] : (tensor<i32>) -> tensor<2xi32>
    %scaled = stablehlo.multiply %a, %f : tensor<2xi32>
    %shifted = stablehlo.add %b, %r : tensor<i32>
    func.return %scaled, %shifted : tensor<2xi32>, tensor<i32>
  }
  func.func @main() {
    %x = stablehlo.constant dense<5> : tensor<i32>
    %a = stablehlo.constant dense<[3, 4]> : tensor<2xi32>
    %b = stablehlo.constant dense<7> : tensor<i32>
    %r:6 = "interpreter.run_parallel"(%x, %a, %b, %a, %b, %x) {
      programs = [[@tag, @scale], [@scale, @tag]]
    } : (tensor<i32>, tensor<2xi32>, tensor<i32>, tensor<2xi32>, tensor<i32>, tensor<i32>)
        -> (tensor<i32>, tensor<2xi32>, tensor<i32>, tensor<2xi32>, tensor<i32>, tensor<i32>)
    check.expect_eq_const %r#0, dense<5> : tensor<i32>
    check.expect_eq_const %r#1, dense<[6, 8]> : tensor<2xi32>
    check.expect_eq_const %r#2, dense<7> : tensor<i32>
    check.expect_eq_const %r#3, dense<[3, 4]> : tensor<2xi32>
    check.expect_eq_const %r#4, dense<8> : tensor<i32>
    check.expect_eq_const %r#5, dense<16> : tensor<i32>
    func.return
  }
}
