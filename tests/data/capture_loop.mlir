// A loop of 8 iterations that calls @step on a carried vector: finite all along for any
// moderate input (tests/test_capture_replay.py injects a NaN at one iteration of a capture).
func.func @main(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<f32>) {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %r:2 = stablehlo.while(%i = %c0, %acc = %x) : tensor<i32>, tensor<4xf32>
    cond {
      %n = stablehlo.constant dense<8> : tensor<i32>
      %lt = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %lt : tensor<i1>
    } do {
      %one = stablehlo.constant dense<1> : tensor<i32>
      %next = stablehlo.add %i, %one : tensor<i32>
      %y = func.call @step(%acc, %i) : (tensor<4xf32>, tensor<i32>) -> tensor<4xf32>
      stablehlo.return %next, %y : tensor<i32>, tensor<4xf32>
    }
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %sum = stablehlo.reduce(%r#1 init: %zero) applies stablehlo.add across dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
  return %r#1, %sum : tensor<4xf32>, tensor<f32>
}

func.func private @step(%a: tensor<4xf32>, %i: tensor<i32>) -> tensor<4xf32> {
  %f = stablehlo.convert %i : (tensor<i32>) -> tensor<f32>
  %b = stablehlo.broadcast_in_dim %f, dims = [] : (tensor<f32>) -> tensor<4xf32>
  %half = stablehlo.constant dense<0.5> : tensor<4xf32>
  %m = stablehlo.multiply %a, %half : tensor<4xf32>
  %s = stablehlo.add %m, %b : tensor<4xf32>
  %t = stablehlo.tanh %s : tensor<4xf32>
  return %t : tensor<4xf32>
}
