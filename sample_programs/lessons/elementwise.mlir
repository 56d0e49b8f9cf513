// Lesson: elementwise ops. Each result element is made from the operand elements at the SAME index.
//
// What to look at:
//  * %0 multiplies element by element: %0[i,j] = %arg0[i,j] * %arg1[i,j]. No matrix product here.
//  * %1 compares and gives booleans (tensor<2x3xi1>): same shape, another element type.
//  * %2 picks per element: %1[i,j] ? %0[i,j] : %arg0[i,j].
//  * %3 converts float to integer. What surprises people: it truncates toward zero
//    (-1.5 becomes -1, 2.7 becomes 2); it does not round.
func.func @main(%arg0: tensor<2x3xf32>, %arg1: tensor<2x3xf32>) -> tensor<2x3xi32> {
  %0 = stablehlo.multiply %arg0, %arg1 : tensor<2x3xf32>
  %1 = stablehlo.compare GT, %0, %arg0, FLOAT : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>
  %2 = stablehlo.select %1, %0, %arg0 : tensor<2x3xi1>, tensor<2x3xf32>
  %3 = stablehlo.convert %2 : (tensor<2x3xf32>) -> tensor<2x3xi32>
  return %3 : tensor<2x3xi32>
}
