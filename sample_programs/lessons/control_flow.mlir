// Lesson: while, if and case: control flow with regions.
//
// What to look at:
//  * %0 is a while loop carrying (counter, x). `cond` runs before every iteration; the body
//    doubles x and counts. Starting from x = 3, how often does the body run before x >= 100?
//    Step with n into the body and watch %doubled change per iteration.
//  * %1 `if` runs ONE of its two regions, chosen by %pred; the other never runs.
//  * %2 `case` runs region number %arg0. What surprises people: an index out of range (here 7,
//    with 3 branches) is not an error: it runs the LAST branch.
func.func @main(%arg0: tensor<i32>, %arg1: tensor<f32>) -> (tensor<i32>, tensor<f32>, tensor<f32>, tensor<f32>) {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %0:2 = stablehlo.while(%count = %c0, %x = %arg1) : tensor<i32>, tensor<f32>
  cond {
    %limit = stablehlo.constant dense<1.000000e+02> : tensor<f32>
    %below = stablehlo.compare LT, %x, %limit, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %below : tensor<i1>
  } do {
    %two = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %doubled = stablehlo.multiply %x, %two : tensor<f32>
    %one = stablehlo.constant dense<1> : tensor<i32>
    %next = stablehlo.add %count, %one : tensor<i32>
    stablehlo.return %next, %doubled : tensor<i32>, tensor<f32>
  }
  %five = stablehlo.constant dense<5> : tensor<i32>
  %pred = stablehlo.compare GT, %0#0, %five, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
  %1 = "stablehlo.if"(%pred) ({
    %big = stablehlo.negate %0#1 : tensor<f32>
    stablehlo.return %big : tensor<f32>
  }, {
    stablehlo.return %0#1 : tensor<f32>
  }) : (tensor<i1>) -> tensor<f32>
  %2 = "stablehlo.case"(%arg0) ({
    %b0 = stablehlo.constant dense<1.000000e+01> : tensor<f32>
    stablehlo.return %b0 : tensor<f32>
  }, {
    %b1 = stablehlo.constant dense<2.000000e+01> : tensor<f32>
    stablehlo.return %b1 : tensor<f32>
  }, {
    %b2 = stablehlo.constant dense<3.000000e+01> : tensor<f32>
    stablehlo.return %b2 : tensor<f32>
  }) : (tensor<i32>) -> tensor<f32>
  return %0#0, %0#1, %1, %2 : tensor<i32>, tensor<f32>, tensor<f32>, tensor<f32>
}
