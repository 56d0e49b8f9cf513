// Ops of the stablehlo and chlo dialects that tests/data/ has no valid program for: one small
// instance each, for tests/test_explain.py (explain works for every op definition).
func.func @unary(%x: tensor<2x3xf32>, %i: tensor<2x3xi32>, %c: tensor<2x3xcomplex<f32>>) -> tensor<2x3xf32> {
  %0 = chlo.acos %x : tensor<2x3xf32> -> tensor<2x3xf32>
  %1 = chlo.conj %c : tensor<2x3xcomplex<f32>> -> tensor<2x3xcomplex<f32>>
  %2 = chlo.is_inf %x : tensor<2x3xf32> -> tensor<2x3xi1>
  %3 = chlo.is_pos_inf %x : tensor<2x3xf32> -> tensor<2x3xi1>
  %4 = chlo.square %x : tensor<2x3xf32> -> tensor<2x3xf32>
  %5 = stablehlo.count_leading_zeros %i : tensor<2x3xi32>
  %6 = stablehlo.logistic %x : tensor<2x3xf32>
  %7 = stablehlo.round_nearest_afz %x : tensor<2x3xf32>
  %8 = stablehlo.tan %x : tensor<2x3xf32>
  %9 = chlo.polygamma %x, %x : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
  %10 = chlo.zeta %x, %x : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
  %11 = chlo.mulhi %i, %i : tensor<2x3xi32>, tensor<2x3xi32> -> tensor<2x3xi32>
  return %0 : tensor<2x3xf32>
}
func.func @broadcasting(%x: tensor<2x3xf32>, %r: tensor<3xf32>, %i: tensor<2x3xi32>, %j: tensor<3xi32>, %p: tensor<2x3xi1>, %q: tensor<3xi1>) -> tensor<2x3xf32> {
  %0 = chlo.broadcast_and %p, %q : (tensor<2x3xi1>, tensor<3xi1>) -> tensor<2x3xi1>
  %1 = chlo.broadcast_atan2 %x, %r : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %2 = chlo.broadcast_complex %x, %r : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xcomplex<f32>>
  %3 = chlo.broadcast_divide %x, %r {broadcast_dimensions = array<i64: 1>} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %4 = chlo.broadcast_maximum %x, %r : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %5 = chlo.broadcast_minimum %x, %r : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %6 = chlo.broadcast_next_after %x, %r : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %7 = chlo.broadcast_or %p, %q : (tensor<2x3xi1>, tensor<3xi1>) -> tensor<2x3xi1>
  %8 = chlo.broadcast_polygamma %x, %r : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %9 = chlo.broadcast_power %x, %r : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %10 = chlo.broadcast_remainder %x, %r : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %11 = chlo.broadcast_shift_left %i, %j : (tensor<2x3xi32>, tensor<3xi32>) -> tensor<2x3xi32>
  %12 = chlo.broadcast_shift_right_arithmetic %i, %j : (tensor<2x3xi32>, tensor<3xi32>) -> tensor<2x3xi32>
  %13 = chlo.broadcast_shift_right_logical %i, %j : (tensor<2x3xi32>, tensor<3xi32>) -> tensor<2x3xi32>
  %14 = chlo.broadcast_subtract %x, %r : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %15 = chlo.broadcast_xor %i, %j : (tensor<2x3xi32>, tensor<3xi32>) -> tensor<2x3xi32>
  %16 = chlo.broadcast_zeta %x, %r : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %1 : tensor<2x3xf32>
}
func.func @constants() -> tensor<2xf32> {
  %0 = "chlo.constant"() {value = dense<[1.0, 2.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
func.func @scan(%x: tensor<2x5xf32>) -> tensor<2x5xf32> {
  %zero = stablehlo.constant dense<0.0> : tensor<2xf32>
  %0:2 = chlo.scan(%x) inits(%zero) dimension=1 {
  ^bb0(%slice: tensor<2xf32>, %carry: tensor<2xf32>):
    %sum = stablehlo.add %carry, %slice : tensor<2xf32>
    "chlo.return"(%sum, %sum) : (tensor<2xf32>, tensor<2xf32>) -> ()
  } : (tensor<2x5xf32>, tensor<2xf32>) -> (tensor<2x5xf32>, tensor<2xf32>)
  return %0#0 : tensor<2x5xf32>
}
func.func @asynchronous(%x: tensor<4xi32>) -> tensor<2xi32> {
  %f = "stablehlo.async_start"(%x) ({
    %s = stablehlo.slice %x [1:3] : (tensor<4xi32>) -> tensor<2xi32>
    stablehlo.return %s : tensor<2xi32>
  }) : (tensor<4xi32>) -> !stablehlo.future<tensor<2xi32>>
  %r = "stablehlo.async_done"(%f) : (!stablehlo.future<tensor<2xi32>>) -> tensor<2xi32>
  return %r : tensor<2xi32>
}
func.func @batch_norm(%x: tensor<2x3xf32>, %s: tensor<3xf32>, %m: tensor<3xf32>, %v: tensor<3xf32>) -> tensor<2x3xf32> {
  %0 = "stablehlo.batch_norm_inference"(%x, %s, %m, %s, %v) {epsilon = 1.0e-3 : f32, feature_index = 1 : i64} : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %1:3 = "stablehlo.batch_norm_training"(%x, %s, %m) {epsilon = 1.0e-3 : f32, feature_index = 1 : i64} : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>)
  %2:3 = "stablehlo.batch_norm_grad"(%x, %s, %m, %v, %x) {epsilon = 1.0e-3 : f32, feature_index = 1 : i64} : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>)
  return %0 : tensor<2x3xf32>
}
func.func @movement(%x: tensor<2x3xf32>, %i: tensor<2xi32>, %k: tensor<4x2xi64>) -> tensor<2x2x3xf32> {
  %0 = stablehlo.broadcast %x, sizes = [2] : (tensor<2x3xf32>) -> tensor<2x2x3xf32>
  %sizes = stablehlo.constant dense<[1, 3]> : tensor<2xi64>
  %1 = "stablehlo.dynamic_gather"(%x, %k, %sizes) {dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0, 1], index_vector_dim = 1>} : (tensor<2x3xf32>, tensor<4x2xi64>, tensor<2xi64>) -> tensor<4x3xf32>
  %2 = "stablehlo.torch_index_select"(%x, %i) {dim = 0 : i64, batch_dims = 0 : i64} : (tensor<2x3xf32>, tensor<2xi32>) -> tensor<2x3xf32>
  %start = stablehlo.constant dense<[0, 1]> : tensor<2xi64>
  %limit = stablehlo.constant dense<[2, 3]> : tensor<2xi64>
  %step = stablehlo.constant dense<[1, 1]> : tensor<2xi64>
  %3 = stablehlo.real_dynamic_slice %x, %start, %limit, %step : (tensor<2x3xf32>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<?x?xf32>
  %n = stablehlo.constant dense<2> : tensor<i32>
  %4 = "stablehlo.set_dimension_size"(%x, %n) {dimension = 1 : i64} : (tensor<2x3xf32>, tensor<i32>) -> tensor<2x?xf32, #stablehlo.bounds<?, 3>>
  %t = "stablehlo.tuple"(%x, %i) : (tensor<2x3xf32>, tensor<2xi32>) -> tuple<tensor<2x3xf32>, tensor<2xi32>>
  %5 = "stablehlo.get_tuple_element"(%t) {index = 0 : i32} : (tuple<tensor<2x3xf32>, tensor<2xi32>>) -> tensor<2x3xf32>
  return %0 : tensor<2x2x3xf32>
}
func.func @contractions(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<2x4xf32> {
  %0 = "stablehlo.dot"(%a, %b) : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  %1 = "stablehlo.einsum"(%a, %b) {einsum_config = "ab,bc->ac"} : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  %2 = "stablehlo.unary_einsum"(%a) {einsum_config = "ab->ba"} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return %0 : tensor<2x4xf32>
}
func.func @quantize(%x: tensor<2xf32>) -> tensor<2x!quant.uniform<i8:f32, 0.5:3>> {
  %0 = stablehlo.uniform_quantize %x : (tensor<2xf32>) -> tensor<2x!quant.uniform<i8:f32, 0.5:3>>
  return %0 : tensor<2x!quant.uniform<i8:f32, 0.5:3>>
}
func.func @collectives(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "stablehlo.collective_reduce"(%x) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %s : tensor<f32>
  }) {replica_groups = dense<[[0]]> : tensor<1x1xi64>} : (tensor<2xf32>) -> tensor<2xf32>
  %1 = "stablehlo.cross-replica-sum"(%x) {replica_groups = dense<[[0]]> : tensor<1x1xi64>} : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
func.func @more_unary(%x: tensor<2x3xf32>, %i: tensor<2x3xi32>, %c: tensor<2x3xcomplex<f32>>) -> tensor<2x3xf32> {
  %0 = chlo.acosh %x : tensor<2x3xf32> -> tensor<2x3xf32>
  %1 = chlo.asin %x : tensor<2x3xf32> -> tensor<2x3xf32>
  %2 = chlo.atan %x : tensor<2x3xf32> -> tensor<2x3xf32>
  %3 = chlo.atanh %x : tensor<2x3xf32> -> tensor<2x3xf32>
  %4 = chlo.bessel_i1e %x : tensor<2x3xf32> -> tensor<2x3xf32>
  %5 = chlo.cosh %x : tensor<2x3xf32> -> tensor<2x3xf32>
  %6 = chlo.digamma %x : tensor<2x3xf32> -> tensor<2x3xf32>
  %7 = chlo.erf_inv %x : tensor<2x3xf32> -> tensor<2x3xf32>
  %8 = chlo.erfc %x : tensor<2x3xf32> -> tensor<2x3xf32>
  %9 = chlo.lgamma %x : tensor<2x3xf32> -> tensor<2x3xf32>
  %10 = chlo.sinh %x : tensor<2x3xf32> -> tensor<2x3xf32>
  %11 = chlo.tan %x : tensor<2x3xf32> -> tensor<2x3xf32>
  %12 = stablehlo.bitcast_convert %x : (tensor<2x3xf32>) -> tensor<2x3xi32>
  %13 = stablehlo.cbrt %x : tensor<2x3xf32>
  %14 = stablehlo.ceil %x : tensor<2x3xf32>
  %15 = stablehlo.complex %x, %x : tensor<2x3xcomplex<f32>>
  %16 = stablehlo.cosine %x : tensor<2x3xf32>
  %17 = stablehlo.exponential_minus_one %x : tensor<2x3xf32>
  %18 = stablehlo.floor %x : tensor<2x3xf32>
  %19 = stablehlo.imag %c : (tensor<2x3xcomplex<f32>>) -> tensor<2x3xf32>
  %20 = stablehlo.is_finite %x : (tensor<2x3xf32>) -> tensor<2x3xi1>
  %21 = stablehlo.log %x : tensor<2x3xf32>
  %22 = stablehlo.log_plus_one %x : tensor<2x3xf32>
  %23 = stablehlo.minimum %x, %x : tensor<2x3xf32>
  %24 = stablehlo.not %i : tensor<2x3xi32>
  %25 = stablehlo.or %i, %i : tensor<2x3xi32>
  %26 = stablehlo.power %x, %x : tensor<2x3xf32>
  %27 = stablehlo.remainder %x, %x : tensor<2x3xf32>
  %28 = stablehlo.round_nearest_even %x : tensor<2x3xf32>
  %29 = stablehlo.rsqrt %x : tensor<2x3xf32>
  %30 = stablehlo.shift_left %i, %i : tensor<2x3xi32>
  %31 = stablehlo.shift_right_arithmetic %i, %i : tensor<2x3xi32>
  %32 = stablehlo.shift_right_logical %i, %i : tensor<2x3xi32>
  %33 = stablehlo.sign %x : tensor<2x3xf32>
  %34 = stablehlo.sine %x : tensor<2x3xf32>
  %35 = stablehlo.xor %i, %i : tensor<2x3xi32>
  %37 = stablehlo.divide %x, %x : tensor<2x3xf32>
  %36 = "stablehlo.sort"(%x) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %lt = stablehlo.compare LT, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %lt : tensor<i1>
  }) {dimension = 1 : i64, is_stable = true} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
