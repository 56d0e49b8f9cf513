// A loop that calls @update five times; @update takes a square root that turns NaN on
// iteration 3 when the argument starts at 100 (10, 3, 1, then sqrt(1 - 3)).
func.func @main(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<f32>) {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %r:2 = stablehlo.while(%i = %c0, %acc = %x) : tensor<i32>, tensor<4xf32>
    cond {
      %n = stablehlo.constant dense<5> : tensor<i32>
      %lt = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %lt : tensor<i1>
    } do {
      %one = stablehlo.constant dense<1> : tensor<i32>
      %next = stablehlo.add %i, %one : tensor<i32>
      %y = func.call @update(%acc, %i) : (tensor<4xf32>, tensor<i32>) -> tensor<4xf32>
      stablehlo.return %next, %y : tensor<i32>, tensor<4xf32>
    }
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %sum = stablehlo.reduce(%r#1 init: %zero) applies stablehlo.add across dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
  return %r#1, %sum : tensor<4xf32>, tensor<f32>
}

func.func private @update(%a: tensor<4xf32>, %i: tensor<i32>) -> tensor<4xf32> {
  %f = stablehlo.convert %i : (tensor<i32>) -> tensor<f32>
  %b = stablehlo.broadcast_in_dim %f, dims = [] : (tensor<f32>) -> tensor<4xf32>
  %d = stablehlo.subtract %a, %b : tensor<4xf32>
  %s = stablehlo.sqrt %d : tensor<4xf32>
  return %s : tensor<4xf32>
}
