// Verifier checks of `interpreter.run_parallel`, the reference interpreter's op for running a
// grid of processes (stablehlo/reference/InterpreterOps.td and its verifier). It numbers no
// constraints; the labels:
//   programs - a non-empty 2-D array of function symbols [replica][partition], every row as long
//              as the first, each naming a function of the module that has a body.
//   inputs   - the operands are the programs' arguments flattened in process order: their count
//              and types.
//   results  - the results likewise.
//   infeed   - optional, but then non-empty, each a function taking nothing and returning one
//              tensor.
// The reference checks counts but not types; hlodbg also checks the types (a mismatch could only
// fail later, inside a process).
// Run by tests/test_verifier_constraints.py, which documents the directives.
// Not statically decidable: none.

// expect-error: interpreter.run_parallel programs
func.func @f(%a: tensor<i32>) -> tensor<i32> {
  func.return %a : tensor<i32>
}
func.func @main(%x: tensor<i32>) -> tensor<i32> {
  %r = "interpreter.run_parallel"(%x) {programs = [[]]} : (tensor<i32>) -> tensor<i32>
  func.return %r : tensor<i32>
}

// -----

// expect-error: interpreter.run_parallel programs
func.func @f(%a: tensor<i32>) -> tensor<i32> {
  func.return %a : tensor<i32>
}
func.func @main(%x: tensor<i32>) -> (tensor<i32>, tensor<i32>, tensor<i32>) {
  %r:3 = "interpreter.run_parallel"(%x, %x, %x) {programs = [[@f, @f], [@f]]} : (tensor<i32>, tensor<i32>, tensor<i32>) -> (tensor<i32>, tensor<i32>, tensor<i32>)
  func.return %r#0, %r#1, %r#2 : tensor<i32>, tensor<i32>, tensor<i32>
}

// -----

// expect-error: interpreter.run_parallel programs
func.func @main(%x: tensor<i32>) -> tensor<i32> {
  %r = "interpreter.run_parallel"(%x) {programs = [[@missing]]} : (tensor<i32>) -> tensor<i32>
  func.return %r : tensor<i32>
}

// -----

// expect-error: interpreter.run_parallel inputs
func.func @f(%a: tensor<i32>) -> tensor<i32> {
  func.return %a : tensor<i32>
}
func.func @main(%x: tensor<i32>) -> (tensor<i32>, tensor<i32>) {
  %r:2 = "interpreter.run_parallel"(%x) {programs = [[@f, @f]]} : (tensor<i32>) -> (tensor<i32>, tensor<i32>)
  func.return %r#0, %r#1 : tensor<i32>, tensor<i32>
}

// -----

// expect-error: interpreter.run_parallel inputs
func.func @f(%a: tensor<f32>) -> tensor<f32> {
  func.return %a : tensor<f32>
}
func.func @main(%x: tensor<i32>) -> tensor<f32> {
  %r = "interpreter.run_parallel"(%x) {programs = [[@f]]} : (tensor<i32>) -> tensor<f32>
  func.return %r : tensor<f32>
}

// -----

// expect-error: interpreter.run_parallel results
func.func @f(%a: tensor<i32>) -> tensor<i32> {
  func.return %a : tensor<i32>
}
func.func @main(%x: tensor<i32>) -> (tensor<i32>, tensor<i32>) {
  %r:2 = "interpreter.run_parallel"(%x) {programs = [[@f]]} : (tensor<i32>) -> (tensor<i32>, tensor<i32>)
  func.return %r#0, %r#1 : tensor<i32>, tensor<i32>
}

// -----

// expect-error: interpreter.run_parallel infeed
func.func @f(%a: tensor<i32>) -> tensor<i32> {
  func.return %a : tensor<i32>
}
func.func @main(%x: tensor<i32>) -> tensor<i32> {
  %r = "interpreter.run_parallel"(%x) {infeed = [], programs = [[@f]]} : (tensor<i32>) -> tensor<i32>
  func.return %r : tensor<i32>
}

// -----

// expect-error: interpreter.run_parallel infeed
func.func @f(%a: tensor<i32>) -> tensor<i32> {
  func.return %a : tensor<i32>
}
func.func @queue() -> (tensor<i32>, tensor<i32>) {
  %v = stablehlo.constant dense<1> : tensor<i32>
  func.return %v, %v : tensor<i32>, tensor<i32>
}
func.func @main(%x: tensor<i32>) -> tensor<i32> {
  %r = "interpreter.run_parallel"(%x) {infeed = [@queue], programs = [[@f]]} : (tensor<i32>) -> tensor<i32>
  func.return %r : tensor<i32>
}

// -----

// expect-ok
func.func @reader(%t: !stablehlo.token) -> tensor<2xi64> {
  %v, %t2 = "stablehlo.infeed"(%t) {infeed_config = ""} : (!stablehlo.token) -> (tensor<2xi64>, !stablehlo.token)
  func.return %v : tensor<2xi64>
}
func.func @twice(%a: tensor<2xi64>) -> (tensor<2xi64>, tensor<2xi64>) {
  func.return %a, %a : tensor<2xi64>, tensor<2xi64>
}
func.func @queue0() -> tensor<2xi64> {
  %v = stablehlo.constant dense<[1, 2]> : tensor<2xi64>
  func.return %v : tensor<2xi64>
}
func.func @main(%a: tensor<2xi64>) -> (tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) {
  %t = stablehlo.after_all : !stablehlo.token
  %r:3 = "interpreter.run_parallel"(%t, %a) {infeed = [@queue0], programs = [[@reader], [@twice]]} : (!stablehlo.token, tensor<2xi64>) -> (tensor<2xi64>, tensor<2xi64>, tensor<2xi64>)
  func.return %r#0, %r#1, %r#2 : tensor<2xi64>, tensor<2xi64>, tensor<2xi64>
}
