// Replica r runs r + 1 rounds of an all_reduce over replicas 0 and 1: replica 1's second round
// waits for a replica that has already finished.
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %replica = stablehlo.replica_id : tensor<ui32>
  %last = stablehlo.convert %replica : (tensor<ui32>) -> tensor<i32>
  %zero = stablehlo.constant dense<0> : tensor<i32>
  %one = stablehlo.constant dense<1> : tensor<i32>
  %res:2 = stablehlo.while(%i = %zero, %acc = %x) : tensor<i32>, tensor<2xf32>
    cond {
      %more = stablehlo.compare LE, %i, %last : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %more : tensor<i1>
    } do {
      %sum = "stablehlo.all_reduce"(%acc) ({
        ^bb0(%a: tensor<f32>, %b: tensor<f32>):
          %c = stablehlo.add %a, %b : tensor<f32>
          stablehlo.return %c : tensor<f32>
      }) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<2xf32>) -> tensor<2xf32>
      %next = stablehlo.add %i, %one : tensor<i32>
      stablehlo.return %next, %sum : tensor<i32>, tensor<2xf32>
    }
  return %res#1 : tensor<2xf32>
}
