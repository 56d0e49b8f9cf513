// A loop of no iteration (5 < 3 is false) and a branch not taken: their ops never run.
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %zero = stablehlo.constant dense<5> : tensor<i32>
  %0:2 = stablehlo.while(%i = %zero, %acc = %x) : tensor<i32>, tensor<2xf32>
  cond {
    %3 = stablehlo.constant dense<3> : tensor<i32>
    %1 = stablehlo.compare LT, %i, %3, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %1 : tensor<i1>
  } do {
    %d = stablehlo.add %acc, %acc : tensor<2xf32>
    %one = stablehlo.constant dense<1> : tensor<i32>
    %2 = stablehlo.add %i, %one : tensor<i32>
    stablehlo.return %2, %d : tensor<i32>, tensor<2xf32>
  }
  %c = stablehlo.constant dense<true> : tensor<i1>
  %r = "stablehlo.if"(%c) ({
    stablehlo.return %x : tensor<2xf32>
  }, {
    %n = stablehlo.negate %x : tensor<2xf32>
    stablehlo.return %n : tensor<2xf32>
  }) : (tensor<i1>) -> tensor<2xf32>
  return %0#1 : tensor<2xf32>
}
