// interpreter.run_parallel running send/recv between processes that run different functions.

// The receiver is process 0, so it runs first and must wait at its recv until process 1 sends.
module @receiver_before_sender {
  func.func @receiver(%token : !stablehlo.token) -> tensor<2x2xi64> {
    %value, %done = "stablehlo.recv"(%token) {
      channel_handle = #stablehlo.channel_handle<handle = 5, type = 1>
    } : (!stablehlo.token) -> (tensor<2x2xi64>, !stablehlo.token)
    func.return %value : tensor<2x2xi64>
  }
  func.func @sender(%x : tensor<2x2xi64>, %token : !stablehlo.token) -> !stablehlo.token {
    %done = "stablehlo.send"(%x, %token) {
      channel_handle = #stablehlo.channel_handle<handle = 5, type = 1>
    } : (tensor<2x2xi64>, !stablehlo.token) -> !stablehlo.token
    func.return %done : !stablehlo.token
  }
  func.func @main() {
    %x = stablehlo.constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi64>
    %token = stablehlo.after_all : !stablehlo.token
    %r:2 = "interpreter.run_parallel"(%token, %x, %token) {
      programs = [[@receiver], [@sender]]
    } : (!stablehlo.token, tensor<2x2xi64>, !stablehlo.token) -> (tensor<2x2xi64>, !stablehlo.token)
    check.expect_eq_const %r#0, dense<[[1, 2], [3, 4]]> : tensor<2x2xi64>
    func.return
  }
}

// -----

// A round trip: partition 0 sends x on channel 1 and waits for the answer on channel 2;
// partition 1 adds 100 to what it receives and sends it back. Two values on one channel
// arrive in the order they were sent.
module @ping_pong {
  func.func @ping(%x : tensor<3xi32>, %token : !stablehlo.token) -> (tensor<3xi32>, tensor<3xi32>) {
    %sent = "stablehlo.send"(%x, %token) {
      channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>
    } : (tensor<3xi32>, !stablehlo.token) -> !stablehlo.token
    %y = stablehlo.multiply %x, %x : tensor<3xi32>
    %sent2 = "stablehlo.send"(%y, %sent) {
      channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>
    } : (tensor<3xi32>, !stablehlo.token) -> !stablehlo.token
    %a, %t1 = "stablehlo.recv"(%sent2) {
      channel_handle = #stablehlo.channel_handle<handle = 2, type = 1>
    } : (!stablehlo.token) -> (tensor<3xi32>, !stablehlo.token)
    %b, %t2 = "stablehlo.recv"(%t1) {
      channel_handle = #stablehlo.channel_handle<handle = 2, type = 1>
    } : (!stablehlo.token) -> (tensor<3xi32>, !stablehlo.token)
    func.return %a, %b : tensor<3xi32>, tensor<3xi32>
  }
  func.func @pong(%token : !stablehlo.token) -> !stablehlo.token {
    %hundred = stablehlo.constant dense<100> : tensor<3xi32>
    %a, %t1 = "stablehlo.recv"(%token) {
      channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>
    } : (!stablehlo.token) -> (tensor<3xi32>, !stablehlo.token)
    %a100 = stablehlo.add %a, %hundred : tensor<3xi32>
    %s1 = "stablehlo.send"(%a100, %t1) {
      channel_handle = #stablehlo.channel_handle<handle = 2, type = 1>
    } : (tensor<3xi32>, !stablehlo.token) -> !stablehlo.token
    %b, %t2 = "stablehlo.recv"(%s1) {
      channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>
    } : (!stablehlo.token) -> (tensor<3xi32>, !stablehlo.token)
    %b100 = stablehlo.add %b, %hundred : tensor<3xi32>
    %s2 = "stablehlo.send"(%b100, %t2) {
      channel_handle = #stablehlo.channel_handle<handle = 2, type = 1>
    } : (tensor<3xi32>, !stablehlo.token) -> !stablehlo.token
    func.return %s2 : !stablehlo.token
  }
  func.func @main() {
    %x = stablehlo.constant dense<[1, 2, 3]> : tensor<3xi32>
    %token = stablehlo.after_all : !stablehlo.token
    %r:3 = "interpreter.run_parallel"(%x, %token, %token) {
      programs = [[@ping, @pong]]
    } : (tensor<3xi32>, !stablehlo.token, !stablehlo.token) -> (tensor<3xi32>, tensor<3xi32>, !stablehlo.token)
    check.expect_eq_const %r#0, dense<[101, 102, 103]> : tensor<3xi32>
    check.expect_eq_const %r#1, dense<[101, 104, 109]> : tensor<3xi32>
    func.return
  }
}
