// expect-ok
// The numbered constraints of the reduction ops in docs/spec.md of openxla/stablehlo (head),
// one invalid program each below; every one is decidable from the types and attributes.
// spec: stablehlo.reduce C1-C8
// spec: stablehlo.reduce_window C1-C16
// spec: stablehlo.select_and_scatter C1-C12
// spec: stablehlo.sort C1-C5
// spec: stablehlo.batch_norm_grad C1-C5
// spec: stablehlo.batch_norm_inference C1-C7
// spec: stablehlo.batch_norm_training C1-C7
// A reduce whose body accumulates f32 inputs in f64 (reduce C6: is_promotable) keeps its init
// values in the inputs' type (C2) and gives f64 results (C8); it prints in full and round-trips.
func.func @main(%a: tensor<2x3xf32>, %z: tensor<f32>) -> tensor<2xf64> {
  %0 = "stablehlo.reduce"(%a, %z) ({
  ^bb0(%x: tensor<f64>, %y: tensor<f64>):
    %s = stablehlo.add %x, %y : tensor<f64>
    stablehlo.return %s : tensor<f64>
  }) {dimensions = array<i64: 1>} : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf64>
  return %0 : tensor<2xf64>
}

// -----
// expect-ok
// select_and_scatter whose result type follows its scatter body (C10, C12): f32 operand,
// f64 scatter body, f64 result.
func.func @main(%a: tensor<4x2xf32>, %s: tensor<2x2xf32>, %z: tensor<f32>) -> tensor<4x2xf64> {
  %0 = "stablehlo.select_and_scatter"(%a, %s, %z) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %c = stablehlo.compare GE, %x, %y : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }, {
  ^bb0(%x: tensor<f64>, %y: tensor<f64>):
    %t = stablehlo.add %x, %y : tensor<f64>
    stablehlo.return %t : tensor<f64>
  }) {window_dimensions = array<i64: 3, 1>, window_strides = array<i64: 2, 1>,
      padding = dense<[[0, 1], [0, 0]]> : tensor<2x2xi64>}
    : (tensor<4x2xf32>, tensor<2x2xf32>, tensor<f32>) -> tensor<4x2xf64>
  return %0 : tensor<4x2xf64>
}

// -----
// expect-ok
// A reduce_window over i8 inputs accumulating in i32 (C13) with i32 results (C16).
func.func @main(%a: tensor<4x4xi8>, %z: tensor<i8>) -> tensor<2x2xi32> {
  %0 = "stablehlo.reduce_window"(%a, %z) ({
  ^bb0(%x: tensor<i32>, %y: tensor<i32>):
    %s = stablehlo.add %x, %y : tensor<i32>
    stablehlo.return %s : tensor<i32>
  }) {window_dimensions = array<i64: 2, 2>, window_strides = array<i64: 2, 2>}
    : (tensor<4x4xi8>, tensor<i8>) -> tensor<2x2xi32>
  return %0 : tensor<2x2xi32>
}

// ===== reduce =====================================================================================

// -----
// expect-error: stablehlo.reduce C1
func.func @main(%a: tensor<2x3xf32>, %b: tensor<3x2xf32>, %z: tensor<f32>) -> (tensor<2xf32>, tensor<2xf32>) {
  %0:2 = "stablehlo.reduce"(%a, %b, %z, %z) ({
  ^bb0(%x0: tensor<f32>, %x1: tensor<f32>, %y0: tensor<f32>, %y1: tensor<f32>):
    stablehlo.return %x0, %x1 : tensor<f32>, tensor<f32>
  }) {dimensions = array<i64: 1>} : (tensor<2x3xf32>, tensor<3x2xf32>, tensor<f32>, tensor<f32>) -> (tensor<2xf32>, tensor<2xf32>)
  return %0#0, %0#1 : tensor<2xf32>, tensor<2xf32>
}

// -----
// expect-error: stablehlo.reduce C2
// The init value has the body's type (f64) instead of the inputs' (f32). The StableHLO C++
// verifier accepts this (it compares init values with the body's argument types, ignoring float
// precision); the spec's C2 asks element_type(inputs...) = element_type(init_values...), and its
// semantics convert the init values to the body's types. We follow the spec.
func.func @main(%a: tensor<2x3xf32>, %z: tensor<f64>) -> tensor<2xf64> {
  %0 = "stablehlo.reduce"(%a, %z) ({
  ^bb0(%x: tensor<f64>, %y: tensor<f64>):
    %s = stablehlo.add %x, %y : tensor<f64>
    stablehlo.return %s : tensor<f64>
  }) {dimensions = array<i64: 1>} : (tensor<2x3xf32>, tensor<f64>) -> tensor<2xf64>
  return %0 : tensor<2xf64>
}

// -----
// expect-error: stablehlo.reduce C3
func.func @main(%a: tensor<2x3xf32>, %z: tensor<f32>) -> tensor<2xf32> {
  %0 = "stablehlo.reduce"(%a, %a, %z, %z) ({
  ^bb0(%x0: tensor<f32>, %x1: tensor<f32>, %y0: tensor<f32>, %y1: tensor<f32>):
    stablehlo.return %x0, %x1 : tensor<f32>, tensor<f32>
  }) {dimensions = array<i64: 1>} : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<f32>, tensor<f32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----
// expect-error: stablehlo.reduce C4
func.func @main(%a: tensor<2x3xf32>, %z: tensor<f32>) -> tensor<2x3xf32> {
  %0 = stablehlo.reduce(%a init: %z) applies stablehlo.add across dimensions = [2] : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----
// expect-error: stablehlo.reduce C5
func.func @main(%a: tensor<2x3xf32>, %z: tensor<f32>) -> tensor<2xf32> {
  %0 = stablehlo.reduce(%a init: %z) applies stablehlo.add across dimensions = [1, 1] : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----
// expect-error: stablehlo.reduce C6
// An i32 body cannot accumulate f32 inputs (is_promotable(f32, i32) is false).
func.func @main(%a: tensor<2x3xf32>, %z: tensor<f32>) -> tensor<2xi32> {
  %0 = "stablehlo.reduce"(%a, %z) ({
  ^bb0(%x: tensor<i32>, %y: tensor<i32>):
    %s = stablehlo.add %x, %y : tensor<i32>
    stablehlo.return %s : tensor<i32>
  }) {dimensions = array<i64: 1>} : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xi32>
  return %0 : tensor<2xi32>
}

// -----
// expect-error: stablehlo.reduce C7
func.func @main(%a: tensor<2x3xf32>, %z: tensor<f32>) -> tensor<3xf32> {
  %0 = stablehlo.reduce(%a init: %z) applies stablehlo.add across dimensions = [1] : (tensor<2x3xf32>, tensor<f32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----
// expect-error: stablehlo.reduce C8
func.func @main(%a: tensor<2x3xf32>, %z: tensor<f32>) -> tensor<2xf64> {
  %0 = "stablehlo.reduce"(%a, %z) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %s = stablehlo.add %x, %y : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) {dimensions = array<i64: 1>} : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf64>
  return %0 : tensor<2xf64>
}

// ===== reduce_window ==============================================================================

// -----
// expect-error: stablehlo.reduce_window C1
func.func @main(%a: tensor<4x4xf32>, %z: tensor<f32>) -> tensor<2x2xf32> {
  %0 = "stablehlo.reduce_window"(%a, %a, %z, %z) ({
  ^bb0(%x0: tensor<f32>, %x1: tensor<f32>, %y0: tensor<f32>, %y1: tensor<f32>):
    stablehlo.return %x0, %x1 : tensor<f32>, tensor<f32>
  }) {window_dimensions = array<i64: 2, 2>, window_strides = array<i64: 2, 2>}
    : (tensor<4x4xf32>, tensor<4x4xf32>, tensor<f32>, tensor<f32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----
// expect-error: stablehlo.reduce_window C2
func.func @main(%a: tensor<4x4xf32>, %b: tensor<4x6xf32>, %z: tensor<f32>) -> (tensor<2x2xf32>, tensor<2x2xf32>) {
  %0:2 = "stablehlo.reduce_window"(%a, %b, %z, %z) ({
  ^bb0(%x0: tensor<f32>, %x1: tensor<f32>, %y0: tensor<f32>, %y1: tensor<f32>):
    stablehlo.return %x0, %x1 : tensor<f32>, tensor<f32>
  }) {window_dimensions = array<i64: 2, 2>, window_strides = array<i64: 2, 2>}
    : (tensor<4x4xf32>, tensor<4x6xf32>, tensor<f32>, tensor<f32>) -> (tensor<2x2xf32>, tensor<2x2xf32>)
  return %0#0, %0#1 : tensor<2x2xf32>, tensor<2x2xf32>
}

// -----
// expect-error: stablehlo.reduce_window C3
func.func @main(%a: tensor<4x4xf32>, %z: tensor<f64>) -> tensor<2x2xf64> {
  %0 = "stablehlo.reduce_window"(%a, %z) ({
  ^bb0(%x: tensor<f64>, %y: tensor<f64>):
    %s = stablehlo.add %x, %y : tensor<f64>
    stablehlo.return %s : tensor<f64>
  }) {window_dimensions = array<i64: 2, 2>, window_strides = array<i64: 2, 2>}
    : (tensor<4x4xf32>, tensor<f64>) -> tensor<2x2xf64>
  return %0 : tensor<2x2xf64>
}

// -----
// expect-error: stablehlo.reduce_window C4
func.func @main(%a: tensor<4x4xf32>, %z: tensor<f32>) -> tensor<2x2xf32> {
  %0 = "stablehlo.reduce_window"(%a, %z) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %s = stablehlo.add %x, %y : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) {window_dimensions = array<i64: 2>, window_strides = array<i64: 2, 2>}
    : (tensor<4x4xf32>, tensor<f32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----
// expect-error: stablehlo.reduce_window C5
func.func @main(%a: tensor<4x4xf32>, %z: tensor<f32>) -> tensor<2x2xf32> {
  %0 = "stablehlo.reduce_window"(%a, %z) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %s = stablehlo.add %x, %y : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) {window_dimensions = array<i64: 0, 2>, window_strides = array<i64: 2, 2>}
    : (tensor<4x4xf32>, tensor<f32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----
// expect-error: stablehlo.reduce_window C6
func.func @main(%a: tensor<4x4xf32>, %z: tensor<f32>) -> tensor<2x2xf32> {
  %0 = "stablehlo.reduce_window"(%a, %z) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %s = stablehlo.add %x, %y : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) {window_dimensions = array<i64: 2, 2>, window_strides = array<i64: 2, 2, 2>}
    : (tensor<4x4xf32>, tensor<f32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----
// expect-error: stablehlo.reduce_window C7
func.func @main(%a: tensor<4x4xf32>, %z: tensor<f32>) -> tensor<2x2xf32> {
  %0 = "stablehlo.reduce_window"(%a, %z) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %s = stablehlo.add %x, %y : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) {window_dimensions = array<i64: 2, 2>, window_strides = array<i64: 2, 0>}
    : (tensor<4x4xf32>, tensor<f32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----
// expect-error: stablehlo.reduce_window C8
func.func @main(%a: tensor<4x4xf32>, %z: tensor<f32>) -> tensor<2x2xf32> {
  %0 = "stablehlo.reduce_window"(%a, %z) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %s = stablehlo.add %x, %y : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) {window_dimensions = array<i64: 2, 2>, window_strides = array<i64: 2, 2>, base_dilations = array<i64: 1>}
    : (tensor<4x4xf32>, tensor<f32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----
// expect-error: stablehlo.reduce_window C9
func.func @main(%a: tensor<4x4xf32>, %z: tensor<f32>) -> tensor<2x2xf32> {
  %0 = "stablehlo.reduce_window"(%a, %z) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %s = stablehlo.add %x, %y : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) {window_dimensions = array<i64: 2, 2>, window_strides = array<i64: 2, 2>, base_dilations = array<i64: 1, -1>}
    : (tensor<4x4xf32>, tensor<f32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----
// expect-error: stablehlo.reduce_window C10
func.func @main(%a: tensor<4x4xf32>, %z: tensor<f32>) -> tensor<2x2xf32> {
  %0 = "stablehlo.reduce_window"(%a, %z) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %s = stablehlo.add %x, %y : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) {window_dimensions = array<i64: 2, 2>, window_strides = array<i64: 2, 2>, window_dilations = array<i64: 1, 1, 1>}
    : (tensor<4x4xf32>, tensor<f32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----
// expect-error: stablehlo.reduce_window C11
func.func @main(%a: tensor<4x4xf32>, %z: tensor<f32>) -> tensor<2x2xf32> {
  %0 = "stablehlo.reduce_window"(%a, %z) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %s = stablehlo.add %x, %y : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) {window_dimensions = array<i64: 2, 2>, window_strides = array<i64: 2, 2>, window_dilations = array<i64: 0, 1>}
    : (tensor<4x4xf32>, tensor<f32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----
// expect-error: stablehlo.reduce_window C12
func.func @main(%a: tensor<4x4xf32>, %z: tensor<f32>) -> tensor<2x2xf32> {
  %0 = "stablehlo.reduce_window"(%a, %z) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %s = stablehlo.add %x, %y : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) {window_dimensions = array<i64: 2, 2>, window_strides = array<i64: 2, 2>, padding = dense<0> : tensor<1x2xi64>}
    : (tensor<4x4xf32>, tensor<f32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----
// expect-error: stablehlo.reduce_window C13
// The body returns an i1 where it accumulates f32.
func.func @main(%a: tensor<4x4xf32>, %z: tensor<f32>) -> tensor<2x2xf32> {
  %0 = "stablehlo.reduce_window"(%a, %z) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %c = stablehlo.compare GT, %x, %y : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }) {window_dimensions = array<i64: 2, 2>, window_strides = array<i64: 2, 2>}
    : (tensor<4x4xf32>, tensor<f32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----
// expect-error: stablehlo.reduce_window C14
func.func @main(%a: tensor<4x4xf32>, %z: tensor<f32>) -> (tensor<2x2xf32>, tensor<2x3xf32>) {
  %0:2 = "stablehlo.reduce_window"(%a, %a, %z, %z) ({
  ^bb0(%x0: tensor<f32>, %x1: tensor<f32>, %y0: tensor<f32>, %y1: tensor<f32>):
    stablehlo.return %x0, %x1 : tensor<f32>, tensor<f32>
  }) {window_dimensions = array<i64: 2, 2>, window_strides = array<i64: 2, 2>}
    : (tensor<4x4xf32>, tensor<4x4xf32>, tensor<f32>, tensor<f32>) -> (tensor<2x2xf32>, tensor<2x3xf32>)
  return %0#0, %0#1 : tensor<2x2xf32>, tensor<2x3xf32>
}

// -----
// expect-error: stablehlo.reduce_window C15
func.func @main(%a: tensor<4x4xf32>, %z: tensor<f32>) -> tensor<3x3xf32> {
  %0 = "stablehlo.reduce_window"(%a, %z) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %s = stablehlo.add %x, %y : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) {window_dimensions = array<i64: 2, 2>, window_strides = array<i64: 2, 2>}
    : (tensor<4x4xf32>, tensor<f32>) -> tensor<3x3xf32>
  return %0 : tensor<3x3xf32>
}

// -----
// expect-error: stablehlo.reduce_window C16
func.func @main(%a: tensor<4x4xf32>, %z: tensor<f32>) -> tensor<2x2xf16> {
  %0 = "stablehlo.reduce_window"(%a, %z) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %s = stablehlo.add %x, %y : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) {window_dimensions = array<i64: 2, 2>, window_strides = array<i64: 2, 2>}
    : (tensor<4x4xf32>, tensor<f32>) -> tensor<2x2xf16>
  return %0 : tensor<2x2xf16>
}

// ===== select_and_scatter =======================================================================

// -----
// expect-error: stablehlo.select_and_scatter C1
func.func @main(%a: tensor<4x2xf32>, %s: tensor<2x2xi32>, %z: tensor<f32>) -> tensor<4x2xf32> {
  %0 = "stablehlo.select_and_scatter"(%a, %s, %z) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %c = stablehlo.compare GE, %x, %y : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }, {
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %t = stablehlo.add %x, %y : tensor<f32>
    stablehlo.return %t : tensor<f32>
  }) {window_dimensions = array<i64: 3, 1>, window_strides = array<i64: 2, 1>,
      padding = dense<[[0, 1], [0, 0]]> : tensor<2x2xi64>}
    : (tensor<4x2xf32>, tensor<2x2xi32>, tensor<f32>) -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----
// expect-error: stablehlo.select_and_scatter C2
func.func @main(%a: tensor<4x2xf32>, %s: tensor<3x2xf32>, %z: tensor<f32>) -> tensor<4x2xf32> {
  %0 = "stablehlo.select_and_scatter"(%a, %s, %z) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %c = stablehlo.compare GE, %x, %y : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }, {
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %t = stablehlo.add %x, %y : tensor<f32>
    stablehlo.return %t : tensor<f32>
  }) {window_dimensions = array<i64: 3, 1>, window_strides = array<i64: 2, 1>,
      padding = dense<[[0, 1], [0, 0]]> : tensor<2x2xi64>}
    : (tensor<4x2xf32>, tensor<3x2xf32>, tensor<f32>) -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----
// expect-error: stablehlo.select_and_scatter C3
// init_value must have the operand's element type even when the scatter body is wider.
func.func @main(%a: tensor<4x2xf32>, %s: tensor<2x2xf32>, %z: tensor<f64>) -> tensor<4x2xf32> {
  %0 = "stablehlo.select_and_scatter"(%a, %s, %z) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %c = stablehlo.compare GE, %x, %y : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }, {
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %t = stablehlo.add %x, %y : tensor<f32>
    stablehlo.return %t : tensor<f32>
  }) {window_dimensions = array<i64: 3, 1>, window_strides = array<i64: 2, 1>,
      padding = dense<[[0, 1], [0, 0]]> : tensor<2x2xi64>}
    : (tensor<4x2xf32>, tensor<2x2xf32>, tensor<f64>) -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----
// expect-error: stablehlo.select_and_scatter C4
func.func @main(%a: tensor<4x2xf32>, %s: tensor<2x2xf32>, %z: tensor<f32>) -> tensor<4x2xf32> {
  %0 = "stablehlo.select_and_scatter"(%a, %s, %z) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %c = stablehlo.compare GE, %x, %y : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }, {
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %t = stablehlo.add %x, %y : tensor<f32>
    stablehlo.return %t : tensor<f32>
  }) {window_dimensions = array<i64: 3>, window_strides = array<i64: 2, 1>,
      padding = dense<[[0, 1], [0, 0]]> : tensor<2x2xi64>}
    : (tensor<4x2xf32>, tensor<2x2xf32>, tensor<f32>) -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----
// expect-error: stablehlo.select_and_scatter C5
func.func @main(%a: tensor<4x2xf32>, %s: tensor<2x2xf32>, %z: tensor<f32>) -> tensor<4x2xf32> {
  %0 = "stablehlo.select_and_scatter"(%a, %s, %z) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %c = stablehlo.compare GE, %x, %y : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }, {
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %t = stablehlo.add %x, %y : tensor<f32>
    stablehlo.return %t : tensor<f32>
  }) {window_dimensions = array<i64: 3, 0>, window_strides = array<i64: 2, 1>,
      padding = dense<[[0, 1], [0, 0]]> : tensor<2x2xi64>}
    : (tensor<4x2xf32>, tensor<2x2xf32>, tensor<f32>) -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----
// expect-error: stablehlo.select_and_scatter C6
func.func @main(%a: tensor<4x2xf32>, %s: tensor<2x2xf32>, %z: tensor<f32>) -> tensor<4x2xf32> {
  %0 = "stablehlo.select_and_scatter"(%a, %s, %z) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %c = stablehlo.compare GE, %x, %y : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }, {
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %t = stablehlo.add %x, %y : tensor<f32>
    stablehlo.return %t : tensor<f32>
  }) {window_dimensions = array<i64: 3, 1>, window_strides = array<i64: 2>,
      padding = dense<[[0, 1], [0, 0]]> : tensor<2x2xi64>}
    : (tensor<4x2xf32>, tensor<2x2xf32>, tensor<f32>) -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----
// expect-error: stablehlo.select_and_scatter C7
func.func @main(%a: tensor<4x2xf32>, %s: tensor<2x2xf32>, %z: tensor<f32>) -> tensor<4x2xf32> {
  %0 = "stablehlo.select_and_scatter"(%a, %s, %z) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %c = stablehlo.compare GE, %x, %y : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }, {
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %t = stablehlo.add %x, %y : tensor<f32>
    stablehlo.return %t : tensor<f32>
  }) {window_dimensions = array<i64: 3, 1>, window_strides = array<i64: 2, 0>,
      padding = dense<[[0, 1], [0, 0]]> : tensor<2x2xi64>}
    : (tensor<4x2xf32>, tensor<2x2xf32>, tensor<f32>) -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----
// expect-error: stablehlo.select_and_scatter C8
func.func @main(%a: tensor<4x2xf32>, %s: tensor<2x2xf32>, %z: tensor<f32>) -> tensor<4x2xf32> {
  %0 = "stablehlo.select_and_scatter"(%a, %s, %z) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %c = stablehlo.compare GE, %x, %y : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }, {
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %t = stablehlo.add %x, %y : tensor<f32>
    stablehlo.return %t : tensor<f32>
  }) {window_dimensions = array<i64: 3, 1>, window_strides = array<i64: 2, 1>,
      padding = dense<[0, 1]> : tensor<2xi64>}
    : (tensor<4x2xf32>, tensor<2x2xf32>, tensor<f32>) -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----
// expect-error: stablehlo.select_and_scatter C9
// select returns a float instead of tensor<i1>.
func.func @main(%a: tensor<4x2xf32>, %s: tensor<2x2xf32>, %z: tensor<f32>) -> tensor<4x2xf32> {
  %0 = "stablehlo.select_and_scatter"(%a, %s, %z) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %c = stablehlo.add %x, %y : tensor<f32>
    stablehlo.return %c : tensor<f32>
  }, {
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %t = stablehlo.add %x, %y : tensor<f32>
    stablehlo.return %t : tensor<f32>
  }) {window_dimensions = array<i64: 3, 1>, window_strides = array<i64: 2, 1>,
      padding = dense<[[0, 1], [0, 0]]> : tensor<2x2xi64>}
    : (tensor<4x2xf32>, tensor<2x2xf32>, tensor<f32>) -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----
// expect-error: stablehlo.select_and_scatter C10
// An i32 scatter body cannot accumulate f32 values (is_promotable(f32, i32) is false).
func.func @main(%a: tensor<4x2xf32>, %s: tensor<2x2xf32>, %z: tensor<f32>) -> tensor<4x2xf32> {
  %0 = "stablehlo.select_and_scatter"(%a, %s, %z) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %c = stablehlo.compare GE, %x, %y : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }, {
  ^bb0(%x: tensor<i32>, %y: tensor<i32>):
    %t = stablehlo.add %x, %y : tensor<i32>
    stablehlo.return %t : tensor<i32>
  }) {window_dimensions = array<i64: 3, 1>, window_strides = array<i64: 2, 1>,
      padding = dense<[[0, 1], [0, 0]]> : tensor<2x2xi64>}
    : (tensor<4x2xf32>, tensor<2x2xf32>, tensor<f32>) -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----
// expect-error: stablehlo.select_and_scatter C11
func.func @main(%a: tensor<4x2xf32>, %s: tensor<2x2xf32>, %z: tensor<f32>) -> tensor<4x3xf32> {
  %0 = "stablehlo.select_and_scatter"(%a, %s, %z) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %c = stablehlo.compare GE, %x, %y : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }, {
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %t = stablehlo.add %x, %y : tensor<f32>
    stablehlo.return %t : tensor<f32>
  }) {window_dimensions = array<i64: 3, 1>, window_strides = array<i64: 2, 1>,
      padding = dense<[[0, 1], [0, 0]]> : tensor<2x2xi64>}
    : (tensor<4x2xf32>, tensor<2x2xf32>, tensor<f32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----
// expect-error: stablehlo.select_and_scatter C12
// The result is f64 but the scatter body works in f32.
func.func @main(%a: tensor<4x2xf32>, %s: tensor<2x2xf32>, %z: tensor<f32>) -> tensor<4x2xf64> {
  %0 = "stablehlo.select_and_scatter"(%a, %s, %z) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %c = stablehlo.compare GE, %x, %y : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }, {
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %t = stablehlo.add %x, %y : tensor<f32>
    stablehlo.return %t : tensor<f32>
  }) {window_dimensions = array<i64: 3, 1>, window_strides = array<i64: 2, 1>,
      padding = dense<[[0, 1], [0, 0]]> : tensor<2x2xi64>}
    : (tensor<4x2xf32>, tensor<2x2xf32>, tensor<f32>) -> tensor<4x2xf64>
  return %0 : tensor<4x2xf64>
}

// ===== sort =======================================================================================

// -----
// expect-error: stablehlo.sort C1
func.func @main() {
  "stablehlo.sort"() ({
    %t = stablehlo.constant dense<true> : tensor<i1>
    stablehlo.return %t : tensor<i1>
  }) {dimension = 0 : i64} : () -> ()
  return
}

// -----
// expect-error: stablehlo.sort C2
func.func @main(%a: tensor<3xf32>) -> tensor<3xf64> {
  %0 = "stablehlo.sort"(%a) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %c = stablehlo.compare LT, %x, %y : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }) {dimension = 0 : i64} : (tensor<3xf32>) -> tensor<3xf64>
  return %0 : tensor<3xf64>
}

// -----
// expect-error: stablehlo.sort C3
func.func @main(%a: tensor<3xf32>, %b: tensor<4xi32>) -> (tensor<3xf32>, tensor<4xi32>) {
  %0:2 = "stablehlo.sort"(%a, %b) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>, %i: tensor<i32>, %j: tensor<i32>):
    %c = stablehlo.compare LT, %x, %y : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }) {dimension = 0 : i64} : (tensor<3xf32>, tensor<4xi32>) -> (tensor<3xf32>, tensor<4xi32>)
  return %0#0, %0#1 : tensor<3xf32>, tensor<4xi32>
}

// -----
// expect-error: stablehlo.sort C4
func.func @main(%a: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "stablehlo.sort"(%a) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %c = stablehlo.compare LT, %x, %y : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }) {dimension = -2 : i64} : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----
// expect-error: stablehlo.sort C5
// The comparator of an f32 and an i32 input takes (f32, f32, f32, f32) instead of (f32, f32, i32, i32).
func.func @main(%a: tensor<3xf32>, %b: tensor<3xi32>) -> (tensor<3xf32>, tensor<3xi32>) {
  %0:2 = "stablehlo.sort"(%a, %b) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>, %i: tensor<f32>, %j: tensor<f32>):
    %c = stablehlo.compare LT, %x, %y : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }) {dimension = 0 : i64} : (tensor<3xf32>, tensor<3xi32>) -> (tensor<3xf32>, tensor<3xi32>)
  return %0#0, %0#1 : tensor<3xf32>, tensor<3xi32>
}

// ===== batch_norm_grad ============================================================================

// -----
// expect-error: stablehlo.batch_norm_grad C1
func.func @main(%x: tensor<2x3xf32>, %s: tensor<3xf32>, %g: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0:3 = "stablehlo.batch_norm_grad"(%x, %s, %s, %s, %g) {epsilon = 1.0e-3 : f32, feature_index = 2 : i64}
    : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>)
  return %0#0 : tensor<2x3xf32>
}

// -----
// expect-error: stablehlo.batch_norm_grad C2
func.func @main(%x: tensor<2x3xf32>, %s: tensor<3xf32>, %m: tensor<3xf64>, %g: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0:3 = "stablehlo.batch_norm_grad"(%x, %s, %m, %s, %g) {epsilon = 1.0e-3 : f32, feature_index = 1 : i64}
    : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf64>, tensor<3xf32>, tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>)
  return %0#0 : tensor<2x3xf32>
}

// -----
// expect-error: stablehlo.batch_norm_grad C3
func.func @main(%x: tensor<2x3xf32>, %s: tensor<3xf32>, %g: tensor<4x3xf32>) -> tensor<2x3xf32> {
  %0:3 = "stablehlo.batch_norm_grad"(%x, %s, %s, %s, %g) {epsilon = 1.0e-3 : f32, feature_index = 1 : i64}
    : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<4x3xf32>) -> (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>)
  return %0#0 : tensor<2x3xf32>
}

// -----
// expect-error: stablehlo.batch_norm_grad C4
// variance must have the shape of scale.
func.func @main(%x: tensor<2x3xf32>, %s: tensor<3xf32>, %v: tensor<4xf32>, %g: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0:3 = "stablehlo.batch_norm_grad"(%x, %s, %s, %v, %g) {epsilon = 1.0e-3 : f32, feature_index = 1 : i64}
    : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<4xf32>, tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>)
  return %0#0 : tensor<2x3xf32>
}

// -----
// expect-error: stablehlo.batch_norm_grad C5
// Every 1-dimensional tensor has size 2 (C4 holds), but dim(operand, feature_index) = 3.
func.func @main(%x: tensor<2x3xf32>, %s: tensor<2xf32>, %g: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0:3 = "stablehlo.batch_norm_grad"(%x, %s, %s, %s, %g) {epsilon = 1.0e-3 : f32, feature_index = 1 : i64}
    : (tensor<2x3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2xf32>, tensor<2xf32>)
  return %0#0 : tensor<2x3xf32>
}

// ===== batch_norm_inference =======================================================================

// -----
// expect-error: stablehlo.batch_norm_inference C1
func.func @main(%x: tensor<2x3xf32>, %s: tensor<3xf32>) -> tensor<2x3xf32> {
  %0 = "stablehlo.batch_norm_inference"(%x, %s, %s, %s, %s) {epsilon = 1.0e-3 : f32, feature_index = -1 : i64}
    : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----
// expect-error: stablehlo.batch_norm_inference C2
func.func @main(%x: tensor<2x3xf32>, %s: tensor<3xf32>, %o: tensor<3xf16>) -> tensor<2x3xf32> {
  %0 = "stablehlo.batch_norm_inference"(%x, %s, %o, %s, %s) {epsilon = 1.0e-3 : f32, feature_index = 1 : i64}
    : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf16>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----
// expect-error: stablehlo.batch_norm_inference C3
func.func @main(%x: tensor<2x3xf32>, %s: tensor<3xf32>, %b: tensor<2xf32>) -> tensor<2x3xf32> {
  %0 = "stablehlo.batch_norm_inference"(%x, %b, %s, %s, %s) {epsilon = 1.0e-3 : f32, feature_index = 1 : i64}
    : (tensor<2x3xf32>, tensor<2xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----
// expect-error: stablehlo.batch_norm_inference C4
func.func @main(%x: tensor<2x3xf32>, %s: tensor<3xf32>, %b: tensor<2xf32>) -> tensor<2x3xf32> {
  %0 = "stablehlo.batch_norm_inference"(%x, %s, %b, %s, %s) {epsilon = 1.0e-3 : f32, feature_index = 1 : i64}
    : (tensor<2x3xf32>, tensor<3xf32>, tensor<2xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----
// expect-error: stablehlo.batch_norm_inference C5
func.func @main(%x: tensor<2x3xf32>, %s: tensor<3xf32>, %b: tensor<2xf32>) -> tensor<2x3xf32> {
  %0 = "stablehlo.batch_norm_inference"(%x, %s, %s, %b, %s) {epsilon = 1.0e-3 : f32, feature_index = 1 : i64}
    : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<2xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----
// expect-error: stablehlo.batch_norm_inference C6
func.func @main(%x: tensor<2x3xf32>, %s: tensor<3xf32>, %b: tensor<2xf32>) -> tensor<2x3xf32> {
  %0 = "stablehlo.batch_norm_inference"(%x, %s, %s, %s, %b) {epsilon = 1.0e-3 : f32, feature_index = 1 : i64}
    : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<2xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----
// expect-error: stablehlo.batch_norm_inference C7
func.func @main(%x: tensor<2x3xf32>, %s: tensor<3xf32>) -> tensor<3x2xf32> {
  %0 = "stablehlo.batch_norm_inference"(%x, %s, %s, %s, %s) {epsilon = 1.0e-3 : f32, feature_index = 1 : i64}
    : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// ===== batch_norm_training ========================================================================

// -----
// expect-error: stablehlo.batch_norm_training C1
func.func @main(%x: tensor<2x3xf32>, %s: tensor<3xf32>) -> tensor<2x3xf32> {
  %0:3 = "stablehlo.batch_norm_training"(%x, %s, %s) {epsilon = 1.0e-3 : f32, feature_index = 2 : i64}
    : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>)
  return %0#0 : tensor<2x3xf32>
}

// -----
// expect-error: stablehlo.batch_norm_training C2
func.func @main(%x: tensor<2x3xf32>, %s: tensor<3xf32>) -> tensor<2x3xf32> {
  %0:3 = "stablehlo.batch_norm_training"(%x, %s, %s) {epsilon = 1.0e-3 : f32, feature_index = 1 : i64}
    : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3xf32>, tensor<3xf64>, tensor<3xf32>)
  return %0#0 : tensor<2x3xf32>
}

// -----
// expect-error: stablehlo.batch_norm_training C3
func.func @main(%x: tensor<2x3xf32>, %s: tensor<3xf32>, %b: tensor<2xf32>) -> tensor<2x3xf32> {
  %0:3 = "stablehlo.batch_norm_training"(%x, %b, %s) {epsilon = 1.0e-3 : f32, feature_index = 1 : i64}
    : (tensor<2x3xf32>, tensor<2xf32>, tensor<3xf32>) -> (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>)
  return %0#0 : tensor<2x3xf32>
}

// -----
// expect-error: stablehlo.batch_norm_training C4
func.func @main(%x: tensor<2x3xf32>, %s: tensor<3xf32>, %b: tensor<2xf32>) -> tensor<2x3xf32> {
  %0:3 = "stablehlo.batch_norm_training"(%x, %s, %b) {epsilon = 1.0e-3 : f32, feature_index = 1 : i64}
    : (tensor<2x3xf32>, tensor<3xf32>, tensor<2xf32>) -> (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>)
  return %0#0 : tensor<2x3xf32>
}

// -----
// expect-error: stablehlo.batch_norm_training C5
func.func @main(%x: tensor<2x3xf32>, %s: tensor<3xf32>) -> tensor<2x3xf32> {
  %0:3 = "stablehlo.batch_norm_training"(%x, %s, %s) {epsilon = 1.0e-3 : f32, feature_index = 1 : i64}
    : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3xf32>, tensor<2xf32>, tensor<3xf32>)
  return %0#0 : tensor<2x3xf32>
}

// -----
// expect-error: stablehlo.batch_norm_training C6
func.func @main(%x: tensor<2x3xf32>, %s: tensor<3xf32>) -> tensor<2x3xf32> {
  %0:3 = "stablehlo.batch_norm_training"(%x, %s, %s) {epsilon = 1.0e-3 : f32, feature_index = 1 : i64}
    : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3xf32>, tensor<3xf32>, tensor<2xf32>)
  return %0#0 : tensor<2x3xf32>
}

// -----
// expect-error: stablehlo.batch_norm_training C7
func.func @main(%x: tensor<2x3xf32>, %s: tensor<3xf32>) -> tensor<2x3xf32> {
  %0:3 = "stablehlo.batch_norm_training"(%x, %s, %s) {epsilon = 1.0e-3 : f32, feature_index = 1 : i64}
    : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<3x2xf32>, tensor<3xf32>, tensor<3xf32>)
  return %0#1 : tensor<3xf32>
}

// -----

// expect-error: stablehlo.reduce I2
// init_values are 0-dimensional tensors (Inputs table). The StableHLO C++ verifier accepts this
// program (a tensor<4xf32> body); the spec does not, and the spec wins.
func.func @reduce_vector_init(%x: tensor<4x4xf32>, %i: tensor<4xf32>) -> tensor<4xf32> {
  %r = "stablehlo.reduce"(%x, %i) ({
    ^bb0(%a: tensor<4xf32>, %b: tensor<4xf32>):
      %s = stablehlo.add %a, %b : tensor<4xf32>
      stablehlo.return %s : tensor<4xf32>
  }) {dimensions = array<i64: 0>} : (tensor<4x4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}

// -----

// expect-error: stablehlo.reduce_window I2
func.func @reduce_window_vector_init(%x: tensor<4xf32>, %i: tensor<1xf32>) -> tensor<2xf32> {
  %r = "stablehlo.reduce_window"(%x, %i) ({
    ^bb0(%a: tensor<1xf32>, %b: tensor<1xf32>):
      %s = stablehlo.add %a, %b : tensor<1xf32>
      stablehlo.return %s : tensor<1xf32>
  }) {window_dimensions = array<i64: 2>, window_strides = array<i64: 2>} : (tensor<4xf32>, tensor<1xf32>) -> tensor<2xf32>
  func.return %r : tensor<2xf32>
}

// -----

// expect-error: stablehlo.select_and_scatter I3
func.func @select_and_scatter_vector_init(%x: tensor<4xf32>, %src: tensor<2xf32>, %i: tensor<1xf32>) -> tensor<4xf32> {
  %r = "stablehlo.select_and_scatter"(%x, %src, %i) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %c = stablehlo.compare GE, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %c : tensor<i1>
  }, {
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %s : tensor<f32>
  }) {window_dimensions = array<i64: 2>, window_strides = array<i64: 2>} : (tensor<4xf32>, tensor<2xf32>, tensor<1xf32>) -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}
