// interpreter.run_parallel with an infeed queue (functions returning one tensor each, taken in
// order) and outfeed (the values go to the host's outfeed queue; tests/test_run_parallel.py
// looks at them).

module @one_process_reads_the_queue {
  func.func @read_two(%token : !stablehlo.token) -> (tensor<2xi64>, tensor<2xi64>) {
    %a, %t1 = "stablehlo.infeed"(%token) : (!stablehlo.token) -> (tensor<2xi64>, !stablehlo.token)
    %b, %t2 = "stablehlo.infeed"(%t1) : (!stablehlo.token) -> (tensor<2xi64>, !stablehlo.token)
    func.return %a, %b : tensor<2xi64>, tensor<2xi64>
  }
  func.func @first() -> tensor<2xi64> {
    %v = stablehlo.constant dense<[1, 2]> : tensor<2xi64>
    func.return %v : tensor<2xi64>
  }
  func.func @second() -> tensor<2xi64> {
    %v = stablehlo.constant dense<[3, 4]> : tensor<2xi64>
    func.return %v : tensor<2xi64>
  }
  func.func @main() {
    %token = stablehlo.after_all : !stablehlo.token
    %r:2 = "interpreter.run_parallel"(%token) {
      infeed = [@first, @second],
      programs = [[@read_two]]
    } : (!stablehlo.token) -> (tensor<2xi64>, tensor<2xi64>)
    check.expect_eq_const %r#0, dense<[1, 2]> : tensor<2xi64>
    check.expect_eq_const %r#1, dense<[3, 4]> : tensor<2xi64>
    func.return
  }
}

// -----

// Two replicas share one queue: which one takes which entry is up to the scheduler, so they
// sum what they took; each outfeeds its entry and the sum.
module @shared_queue_then_all_reduce {
  func.func @take_and_sum(%token : !stablehlo.token) -> tensor<f32> {
    %v, %t1 = "stablehlo.infeed"(%token) : (!stablehlo.token) -> (tensor<f32>, !stablehlo.token)
    %sum = "stablehlo.all_reduce"(%v) ({
      ^bb0(%a: tensor<f32>, %b: tensor<f32>):
        %s = stablehlo.add %a, %b : tensor<f32>
        stablehlo.return %s : tensor<f32>
    }) {
      replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>
    } : (tensor<f32>) -> tensor<f32>
    %t2 = "stablehlo.outfeed"(%v, %sum, %t1) : (tensor<f32>, tensor<f32>, !stablehlo.token) -> !stablehlo.token
    func.return %sum : tensor<f32>
  }
  func.func @one_and_a_half() -> tensor<f32> {
    %v = stablehlo.constant dense<1.5> : tensor<f32>
    func.return %v : tensor<f32>
  }
  func.func @two_and_a_quarter() -> tensor<f32> {
    %v = stablehlo.constant dense<2.25> : tensor<f32>
    func.return %v : tensor<f32>
  }
  func.func @main() {
    %token = stablehlo.after_all : !stablehlo.token
    %r:2 = "interpreter.run_parallel"(%token, %token) {
      infeed = [@one_and_a_half, @two_and_a_quarter],
      programs = [[@take_and_sum], [@take_and_sum]]
    } : (!stablehlo.token, !stablehlo.token) -> (tensor<f32>, tensor<f32>)
    check.expect_almost_eq_const %r#0, dense<3.75> : tensor<f32>
    check.expect_almost_eq_const %r#1, dense<3.75> : tensor<f32>
    func.return
  }
}
