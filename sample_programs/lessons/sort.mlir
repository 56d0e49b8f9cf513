// Lesson: sort and top_k.
//
// What to look at:
//  * %0 sorts each row of %arg0 (dimension = 1) in DESCENDING order: the comparator returns
//    "a > b", meaning "a goes first". It sorts %arg1 along with it: every operand is permuted
//    the same way, so %0#1 tells where each sorted key came from (an argsort).
//  * is_stable = true: equal keys keep their order (row 1 has two 5s).
//  * %1 chlo.top_k takes the k = 2 largest of each row, with their positions: the same as the
//    first two columns of %0. What surprises people: top_k works on the LAST dimension only.
func.func @main(%arg0: tensor<2x4xf32>, %arg1: tensor<2x4xi32>) -> (tensor<2x4xf32>, tensor<2x4xi32>, tensor<2x2xf32>, tensor<2x2xi32>) {
  %0:2 = "stablehlo.sort"(%arg0, %arg1) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>, %ia: tensor<i32>, %ib: tensor<i32>):
    %gt = stablehlo.compare GT, %a, %b, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %gt : tensor<i1>
  }) {dimension = 1 : i64, is_stable = true} : (tensor<2x4xf32>, tensor<2x4xi32>) -> (tensor<2x4xf32>, tensor<2x4xi32>)
  %1:2 = chlo.top_k(%arg0, k = 2) : tensor<2x4xf32> -> (tensor<2x2xf32>, tensor<2x2xi32>)
  return %0#0, %0#1, %1#0, %1#1 : tensor<2x4xf32>, tensor<2x4xi32>, tensor<2x2xf32>, tensor<2x2xi32>
}
