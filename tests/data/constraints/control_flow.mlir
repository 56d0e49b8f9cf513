// Verifier constraints of the control-flow family: while, if, case, optimization_barrier,
// composite (docs/spec.md at head) and the func ops (builtin; the spec names no constraints for
// them, so their checks carry labels: `callee`, `signature`, `terminator`; `terminator` also names
// a region of a StableHLO op that does not end in stablehlo.return).
// Run by tests/test_verifier_constraints.py, which documents the directives.
// Not statically decidable: none; every numbered constraint of these ops is a type rule.
// Types the Inputs tables fix are checked under the input's label: `(I1)` for the pred of if and
// the index of case, `(I5)` for the si32 version of composite.

// expect-error: stablehlo.while C1
func.func @while_cond_args(%n: tensor<i64>) -> tensor<i64> {
  %r = "stablehlo.while"(%n) ({
  ^bb0(%x: tensor<i32>):
    %c = stablehlo.constant dense<true> : tensor<i1>
    stablehlo.return %c : tensor<i1>
  }, {
  ^bb0(%x: tensor<i64>):
    stablehlo.return %x : tensor<i64>
  }) : (tensor<i64>) -> tensor<i64>
  func.return %r : tensor<i64>
}

// -----

// expect-error: stablehlo.while C2
func.func @while_body_returns(%n: tensor<i64>) -> tensor<i64> {
  %r = "stablehlo.while"(%n) ({
  ^bb0(%x: tensor<i64>):
    %c = stablehlo.constant dense<true> : tensor<i1>
    stablehlo.return %c : tensor<i1>
  }, {
  ^bb0(%x: tensor<i64>):
    %y = stablehlo.convert %x : (tensor<i64>) -> tensor<i32>
    stablehlo.return %y : tensor<i32>
  }) : (tensor<i64>) -> tensor<i64>
  func.return %r : tensor<i64>
}

// -----

// expect-error: stablehlo.while C3
func.func @while_results(%n: tensor<i64>) -> tensor<i32> {
  %r = "stablehlo.while"(%n) ({
  ^bb0(%x: tensor<i64>):
    %c = stablehlo.constant dense<true> : tensor<i1>
    stablehlo.return %c : tensor<i1>
  }, {
  ^bb0(%x: tensor<i64>):
    stablehlo.return %x : tensor<i64>
  }) : (tensor<i64>) -> tensor<i32>
  func.return %r : tensor<i32>
}

// -----

// expect-error: stablehlo.if I1
func.func @if_pred(%p: tensor<2xi1>, %a: tensor<f32>) -> tensor<f32> {
  %r = "stablehlo.if"(%p) ({
    stablehlo.return %a : tensor<f32>
  }, {
    stablehlo.return %a : tensor<f32>
  }) : (tensor<2xi1>) -> tensor<f32>
  func.return %r : tensor<f32>
}

// -----

// expect-error: stablehlo.if C1
func.func @if_branch_args(%p: tensor<i1>, %a: tensor<f32>) -> tensor<f32> {
  %r = "stablehlo.if"(%p) ({
  ^bb0(%x: tensor<f32>):
    stablehlo.return %x : tensor<f32>
  }, {
    stablehlo.return %a : tensor<f32>
  }) : (tensor<i1>) -> tensor<f32>
  func.return %r : tensor<f32>
}

// -----

// expect-error: stablehlo.if C2
func.func @if_branches_differ(%p: tensor<i1>, %a: tensor<f32>, %b: tensor<2xf32>) -> tensor<f32> {
  %r = "stablehlo.if"(%p) ({
    stablehlo.return %a : tensor<f32>
  }, {
    stablehlo.return %b : tensor<2xf32>
  }) : (tensor<i1>) -> tensor<f32>
  func.return %r : tensor<f32>
}

// -----

// expect-error: stablehlo.if C3
func.func @if_results(%p: tensor<i1>, %a: tensor<f32>) -> tensor<f64> {
  %r = "stablehlo.if"(%p) ({
    stablehlo.return %a : tensor<f32>
  }, {
    stablehlo.return %a : tensor<f32>
  }) : (tensor<i1>) -> tensor<f64>
  func.return %r : tensor<f64>
}

// -----

// expect-error: stablehlo.case I1
// The spec's index is a 0-dimensional si32 tensor; a 64-bit index is rejected.
func.func @case_index(%i: tensor<i64>, %a: tensor<f32>) -> tensor<f32> {
  %r = "stablehlo.case"(%i) ({
    stablehlo.return %a : tensor<f32>
  }) : (tensor<i64>) -> tensor<f32>
  func.return %r : tensor<f32>
}

// -----

// expect-error: stablehlo.case C1
func.func @case_no_branches(%i: tensor<i32>) {
  "stablehlo.case"(%i) : (tensor<i32>) -> ()
  func.return
}

// -----

// expect-error: stablehlo.case C2
func.func @case_branch_args(%i: tensor<i32>, %a: tensor<f32>) -> tensor<f32> {
  %r = "stablehlo.case"(%i) ({
  ^bb0(%x: tensor<f32>):
    stablehlo.return %x : tensor<f32>
  }) : (tensor<i32>) -> tensor<f32>
  func.return %r : tensor<f32>
}

// -----

// expect-error: stablehlo.case C3
func.func @case_branches_differ(%i: tensor<i32>, %a: tensor<f32>, %b: tensor<i32>) -> tensor<f32> {
  %r = "stablehlo.case"(%i) ({
    stablehlo.return %a : tensor<f32>
  }, {
    stablehlo.return %b : tensor<i32>
  }) : (tensor<i32>) -> tensor<f32>
  func.return %r : tensor<f32>
}

// -----

// expect-error: stablehlo.case C4
func.func @case_results(%i: tensor<i32>, %a: tensor<f32>) -> (tensor<f32>, tensor<f32>) {
  %r:2 = "stablehlo.case"(%i) ({
    stablehlo.return %a : tensor<f32>
  }) : (tensor<i32>) -> (tensor<f32>, tensor<f32>)
  func.return %r#0, %r#1 : tensor<f32>, tensor<f32>
}

// -----

// expect-error: stablehlo.optimization_barrier C1
// The spec at head has one constraint, type(operand...) = type(result...); older versions split
// it into C1 (counts) and C2 (types).
func.func @barrier(%a: tensor<2xf32>, %t: !stablehlo.token) -> tensor<2xf32> {
  %r:2 = "stablehlo.optimization_barrier"(%a, %t) : (tensor<2xf32>, !stablehlo.token) -> (tensor<2xf32>, tensor<2xf32>)
  func.return %r#0 : tensor<2xf32>
}

// -----

// expect-error: stablehlo.composite C1
func.func @composite_name(%a: tensor<f32>) -> tensor<f32> {
  %r = "stablehlo.composite"(%a) {name = "no_namespace", decomposition = @identity} : (tensor<f32>) -> tensor<f32>
  func.return %r : tensor<f32>
}
func.func @identity(%a: tensor<f32>) -> tensor<f32> {
  func.return %a : tensor<f32>
}

// -----

// expect-error: stablehlo.composite C2
func.func @composite_decomposition(%a: tensor<f32>) -> tensor<f32> {
  %r = "stablehlo.composite"(%a) {name = "my.op", decomposition = @nowhere} : (tensor<f32>) -> tensor<f32>
  func.return %r : tensor<f32>
}

// -----

// expect-error: stablehlo.composite C3
func.func @composite_inputs(%a: tensor<f32>, %b: tensor<f32>) -> tensor<f32> {
  %r = "stablehlo.composite"(%a, %b) {name = "my.op", decomposition = @identity} : (tensor<f32>, tensor<f32>) -> tensor<f32>
  func.return %r : tensor<f32>
}
func.func @identity(%a: tensor<f32>) -> tensor<f32> {
  func.return %a : tensor<f32>
}

// -----

// expect-error: stablehlo.composite C4
func.func @composite_results(%a: tensor<f32>) -> tensor<i32> {
  %r = "stablehlo.composite"(%a) {name = "my.op", decomposition = @identity} : (tensor<f32>) -> tensor<i32>
  func.return %r : tensor<i32>
}
func.func @identity(%a: tensor<f32>) -> tensor<f32> {
  func.return %a : tensor<f32>
}

// -----

// expect-error: stablehlo.composite I5
// version is an si32 constant (I5); 2^31 does not fit.
func.func @composite_version(%a: tensor<f32>) -> tensor<f32> {
  %r = "stablehlo.composite"(%a) {name = "my.op", decomposition = @identity, version = 2147483648 : i64} : (tensor<f32>) -> tensor<f32>
  func.return %r : tensor<f32>
}
func.func @identity(%a: tensor<f32>) -> tensor<f32> {
  func.return %a : tensor<f32>
}

// -----

// expect-error: func.call callee
func.func @call_unknown(%a: tensor<f32>) -> tensor<f32> {
  %r = func.call @nowhere(%a) : (tensor<f32>) -> tensor<f32>
  func.return %r : tensor<f32>
}

// -----

// expect-error: func.call signature
func.func @call_types(%a: tensor<f32>) -> tensor<f32> {
  %r = func.call @twice(%a) : (tensor<f32>) -> tensor<f32>
  func.return %r : tensor<f32>
}
func.func @twice(%a: tensor<i32>) -> tensor<i32> {
  func.return %a : tensor<i32>
}

// -----

// expect-error: func.return signature
func.func @return_type(%a: tensor<f32>) -> tensor<i32> {
  func.return %a : tensor<f32>
}

// -----

// expect-error: stablehlo.while terminator
// Every region of a StableHLO op ends in stablehlo.return.
func.func @while_body_terminator(%n: tensor<i64>) -> tensor<i64> {
  %r = "stablehlo.while"(%n) ({
  ^bb0(%x: tensor<i64>):
    %c = stablehlo.constant dense<true> : tensor<i1>
    stablehlo.return %c : tensor<i1>
  }, {
  ^bb0(%x: tensor<i64>):
    func.return %x : tensor<i64>
  }) : (tensor<i64>) -> tensor<i64>
  func.return %r : tensor<i64>
}

// -----

// expect-error: func.func signature
"func.func"() ({
^bb0(%a: tensor<i32>):
  "func.return"(%a) : (tensor<i32>) -> ()
}) {function_type = (tensor<f32>) -> tensor<i32>, sym_name = "body_takes_other_types"} : () -> ()

// -----

// expect-ok
func.func @main(%n: tensor<i64>, %p: tensor<i1>, %i: tensor<i32>, %a: tensor<2xf32>) -> (tensor<i64>, tensor<2xf32>) {
  %w = "stablehlo.while"(%n) ({
  ^bb0(%x: tensor<i64>):
    %c = stablehlo.constant dense<10> : tensor<i64>
    %lt = stablehlo.compare LT, %x, %c : (tensor<i64>, tensor<i64>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  }, {
  ^bb0(%x: tensor<i64>):
    %one = stablehlo.constant dense<1> : tensor<i64>
    %y = stablehlo.add %x, %one : tensor<i64>
    stablehlo.return %y : tensor<i64>
  }) : (tensor<i64>) -> tensor<i64>
  %f = "stablehlo.if"(%p) ({
    stablehlo.return %a : tensor<2xf32>
  }, {
    %neg = stablehlo.negate %a : tensor<2xf32>
    stablehlo.return %neg : tensor<2xf32>
  }) : (tensor<i1>) -> tensor<2xf32>
  %s = "stablehlo.case"(%i) ({
    stablehlo.return %f : tensor<2xf32>
  }, {
    stablehlo.return %a : tensor<2xf32>
  }) : (tensor<i32>) -> tensor<2xf32>
  %b:2 = stablehlo.optimization_barrier %w, %s : tensor<i64>, tensor<2xf32>
  %k = stablehlo.composite "my_namespace.double" %b#1 {composite_attributes = {factor = 2 : i64}, decomposition = @double, version = 1 : i32} : (tensor<2xf32>) -> tensor<2xf32>
  %r = func.call @double(%k) : (tensor<2xf32>) -> tensor<2xf32>
  func.return %b#0, %r : tensor<i64>, tensor<2xf32>
}
func.func private @double(%a: tensor<2xf32>) -> tensor<2xf32> {
  %r = stablehlo.add %a, %a : tensor<2xf32>
  func.return %r : tensor<2xf32>
}
