"""The execution machine: registry, frames and listeners, control flow, checks, errors, API."""
from __future__ import annotations

import numpy as np
import pytest

import hlodbg
from hlodbg.engine import ExecutionError
from hlodbg.engine.machine.backend import Backend
from hlodbg.engine.run.interpreter import Interpreter, Listener
from hlodbg.engine.ops import load_families
from hlodbg.engine.ops.checks import expect_almost_eq_failure, expect_close_failure, ulp_difference
from hlodbg.engine.ops.registry import EVALUATORS, op, single_op_body


def run(text: str, *args, entry: str = "main"):
    program = hlodbg.load(text)
    interpreter = Interpreter(program.module)
    return interpreter.run(entry, list(args)), interpreter


def test_duplicate_registration_is_refused():
    load_families()
    with pytest.raises(ValueError, match="registered twice"):
        op("stablehlo.constant")(lambda call: None)


def test_every_family_registers_evaluators():
    load_families()
    for name in ["stablehlo.constant", "func.call", "stablehlo.while", "stablehlo.custom_call", "check.expect_eq"]:
        assert name in EVALUATORS


LOOP = """
func.func @main(%n: tensor<i32>) -> (tensor<i32>, tensor<i32>) {
  %zero = stablehlo.constant dense<0> : tensor<i32>
  %one = stablehlo.constant dense<1> : tensor<i32>
  %r:2 = stablehlo.while(%i = %zero, %acc = %zero) : tensor<i32>, tensor<i32>
   cond {
    %c = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  } do {
    %i2 = func.call @inc(%i, %one) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %a2 = func.call @inc(%acc, %i) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    stablehlo.return %i2, %a2 : tensor<i32>, tensor<i32>
  }
  return %r#0, %r#1 : tensor<i32>, tensor<i32>
}
func.func private @inc(%a: tensor<i32>, %b: tensor<i32>) -> tensor<i32> {
  %s = stablehlo.add %a, %b : tensor<i32>
  return %s : tensor<i32>
}
"""


class Recorder(Listener):
    def __init__(self):
        self.events = []

    def before_op(self, event, frame, op, operands):
        self.events.append(("before", op.name, frame.describe()))

    def after_op(self, event, frame, op, operands, results):
        self.events.append(("after", op.name, [np.asarray(r).tolist() for r in results]))

    def enter_frame(self, frame, args):
        self.events.append(("enter", frame.describe(), frame.depth))


def test_while_loop_with_calls_and_listeners():
    program = hlodbg.load(LOOP)
    recorder = Recorder()
    interpreter = Interpreter(program.module, listeners=[recorder])
    i, acc = interpreter.run("main", [np.int32(4)])
    assert int(i) == 4 and int(acc) == 0 + 1 + 2 + 3
    frames = [e[1] for e in recorder.events if e[0] == "enter"]
    assert frames[0] == "@main"
    assert "@main while.cond #0" in frames and "@main while.body #3" in frames
    assert "@main while.cond #4" in frames and "@main while.body #4" not in frames
    assert frames.count("@inc") == 8
    adds = [e for e in recorder.events if e[0] == "after" and e[1] == "stablehlo.add"]
    assert len(adds) == 8
    # The listener sees the condition's compare with its frame.
    assert ("before", "stablehlo.compare", "@main while.cond #0") in recorder.events


def test_same_results_without_listeners():
    (i, acc), _ = run(LOOP, np.int32(7))
    assert (int(i), int(acc)) == (7, 21)


IF_CASE = """
func.func @main(%p: tensor<i1>, %k: tensor<i32>) -> (tensor<f32>, tensor<f32>) {
  %a = stablehlo.constant dense<1.0> : tensor<f32>
  %r = "stablehlo.if"(%p) ({
    stablehlo.return %a : tensor<f32>
  }, {
    %n = stablehlo.negate %a : tensor<f32>
    stablehlo.return %n : tensor<f32>
  }) : (tensor<i1>) -> tensor<f32>
  %c = "stablehlo.case"(%k) ({
    %x = stablehlo.constant dense<10.0> : tensor<f32>
    stablehlo.return %x : tensor<f32>
  }, {
    %y = stablehlo.constant dense<20.0> : tensor<f32>
    stablehlo.return %y : tensor<f32>
  }) : (tensor<i32>) -> tensor<f32>
  return %r, %c : tensor<f32>, tensor<f32>
}
"""


@pytest.mark.parametrize(
    "pred,index,expected",
    [(True, 0, (1.0, 10.0)), (False, 1, (-1.0, 20.0)), (True, 7, (1.0, 20.0)), (True, -1, (1.0, 20.0))],
)
def test_if_and_case_including_out_of_range_index(pred, index, expected):
    (r, c), _ = run(IF_CASE, np.bool_(pred), np.int32(index))
    assert (float(r), float(c)) == expected


def test_unknown_op_is_a_located_error():
    text = """
func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "mydialect.frobnicate"(%a) : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
"""
    program = hlodbg.load(text, check=False)
    with pytest.raises(ExecutionError) as info:
        Interpreter(program.module).run("main", [np.zeros(2, np.float32)])
    message = info.value.render()
    assert "mydialect.frobnicate" in message and "<string>:3:" in message


def test_unknown_custom_call_target_names_the_target():
    text = """
func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.custom_call @my_kernel(%a) : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
"""
    with pytest.raises(ExecutionError, match="@my_kernel"):
        run(text, np.zeros(2, np.float32))


def test_bad_arguments_are_reported():
    text = """
func.func @main(%a: tensor<2xi32>) -> tensor<2xi32> {
  return %a : tensor<2xi32>
}
"""
    with pytest.raises(ExecutionError, match="argument 0 of @main: expected tensor<2xi32> but got shape 3"):
        run(text, np.zeros(3, np.int32))
    with pytest.raises(ExecutionError, match="takes 1 argument"):
        run(text)
    with pytest.raises(ExecutionError, match="no function @nope"):
        run(text, np.zeros(2, np.int32), entry="nope")


def test_program_run_api_fills_missing_arguments_reproducibly():
    program = hlodbg.load(LOOP)
    i, acc = program.run(np.int32(5))
    assert (int(i), int(acc)) == (5, 10)
    text = """
func.func @main(%a: tensor<3xf32>, %b: tensor<3xbf16>) -> (tensor<3xf32>, tensor<3xbf16>) {
  return %a, %b : tensor<3xf32>, tensor<3xbf16>
}
"""
    p = hlodbg.load(text)
    first = p.run(seed=3)
    again = p.run(seed=3)
    other = p.run(seed=4)
    assert str(first[1].dtype) == "bfloat16"
    assert np.array_equal(first[0], again[0]) and not np.array_equal(first[0], other[0])
    # A given argument does not change the random values of the others.
    assert np.array_equal(p.run(np.ones(3, np.float32), seed=3)[1].astype(np.float32), first[1].astype(np.float32))


def test_single_op_body_recognition():
    text = """
func.func @main(%x: tensor<4xf32>, %i: tensor<4xi32>) -> (tensor<f32>, tensor<f32>) {
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %s = stablehlo.reduce(%x init: %z) applies stablehlo.add across dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
  %m = stablehlo.reduce(%x init: %z) across dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
   reducer(%a: tensor<f32>, %b: tensor<f32>) {
    %t = stablehlo.add %a, %b : tensor<f32>
    %u = stablehlo.multiply %t, %t : tensor<f32>
    stablehlo.return %u : tensor<f32>
  }
  return %s, %m : tensor<f32>, tensor<f32>
}
"""
    program = hlodbg.load(text)
    reduces = [op for op in program.ops if op.name == "stablehlo.reduce"]
    assert single_op_body(reduces[0].regions[0]) == "add"
    assert single_op_body(reduces[1].regions[0]) is None


def test_check_tolerances_follow_the_reference():
    f32 = np.float32
    one = np.array([1.0], f32)
    next_up = np.nextafter(one, f32(2))
    assert ulp_difference(one, next_up).tolist() == [1]
    assert ulp_difference(np.array([0.0], f32), np.array([-0.0], f32)).tolist() == [0]
    assert ulp_difference(np.array([np.nan], f32), np.array([np.nan], f32)).tolist() == [0]
    assert expect_close_failure(one, next_up, 0, 3) is None
    assert "ULP" in expect_close_failure(one, np.array([1.001], f32), 0, 3)
    assert expect_close_failure(np.array([np.inf], f32), np.array([np.inf], f32), 0, 3) is None
    assert expect_almost_eq_failure(np.array([1.0, np.nan]), np.array([1.00005, np.nan]), 1e-4) is None
    assert expect_almost_eq_failure(np.array([1e-5]), np.array([-1e-5]), 1e-4) is not None  # signs differ
    assert expect_almost_eq_failure(np.array([1.0]), np.array([1.01]), 1e-4) is not None


def test_check_ops_record_every_failure_and_keep_running():
    text = """
func.func @main() {
  %a = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %b = stablehlo.constant dense<[1.0, 2.5]> : tensor<2xf32>
  "check.expect_almost_eq"(%a, %b) {tolerance = 1.0 : f64} : (tensor<2xf32>, tensor<2xf32>) -> ()
  "check.expect_eq"(%a, %b) : (tensor<2xf32>, tensor<2xf32>) -> ()
  "check.expect_eq_const"(%a) {value = dense<[1.0, 2.0]> : tensor<2xf32>} : (tensor<2xf32>) -> ()
  "check.expect_close"(%a, %b) {max_ulp_difference = 1 : ui64} : (tensor<2xf32>, tensor<2xf32>) -> ()
  return
}
"""
    program = hlodbg.load(text, check=False)
    interpreter = Interpreter(program.module)
    interpreter.run("main", [])
    assert [c.passed for c in interpreter.checks] == [True, False, True, False]
    assert "at [1]: 2.0 (actual) vs 2.5 (expected)" in interpreter.checks[1].message
    assert interpreter.checks[1].where == "<string>:6:3"


class BoxedBackend(Backend):
    """A backend that keeps values in its own wrapper and counts matmuls, like a TPU backend will."""

    transparent_storage = False

    def __init__(self):
        self.stored = 0
        self.matmuls = 0

    def store(self, value, type):
        self.stored += 1
        return ("boxed", value)

    def load(self, stored, type):
        assert stored[0] == "boxed", "the interpreter handed an unboxed value to an evaluator"
        return stored[1]

    def matmul(self, lhs, rhs, result_dtype, precision=(), accumulation_dtype=None, algorithm=None):
        self.matmuls += 1
        return super().matmul(lhs, rhs, result_dtype, precision, accumulation_dtype, algorithm)


DOT_LOOP = """
func.func @main(%w: tensor<4x4xf32>, %x: tensor<4xf32>) -> tensor<4xf32> {
  %zero = stablehlo.constant dense<0> : tensor<i32>
  %one = stablehlo.constant dense<1> : tensor<i32>
  %three = stablehlo.constant dense<3> : tensor<i32>
  %r:2 = stablehlo.while(%i = %zero, %v = %x) : tensor<i32>, tensor<4xf32>
   cond {
    %c = stablehlo.compare LT, %i, %three : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  } do {
    %y = stablehlo.dot_general %w, %v, contracting_dims = [1] x [0] : (tensor<4x4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %t = stablehlo.tanh %y : tensor<4xf32>
    %i2 = stablehlo.add %i, %one : tensor<i32>
    stablehlo.return %i2, %t : tensor<i32>, tensor<4xf32>
  }
  return %r#1 : tensor<4xf32>
}
"""


def test_the_backend_owns_storage_and_matmul_numerics():
    program = hlodbg.load(DOT_LOOP)
    rng = np.random.default_rng(0)
    w = rng.standard_normal((4, 4)).astype(np.float32)
    x = rng.standard_normal(4).astype(np.float32)
    (expected,) = Interpreter(program.module).run("main", [w, x])
    backend = BoxedBackend()
    (actual,) = Interpreter(program.module, backend=backend).run("main", [w, x])
    np.testing.assert_array_equal(actual, expected)
    assert backend.matmuls == 3 and backend.stored > 10
    reference = x
    for _ in range(3):
        reference = np.tanh(w @ reference)
    np.testing.assert_allclose(actual, reference, rtol=1e-5)


STRUCTURE = """
func.func @main(%x: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
  %0 = stablehlo.composite "my.square" %x {decomposition = @square} : (tensor<2xf32>) -> tensor<2xf32>
  %t = stablehlo.tuple %0, %x : tuple<tensor<2xf32>, tensor<2xf32>>
  %1 = stablehlo.get_tuple_element %t[1] : (tuple<tensor<2xf32>, tensor<2xf32>>) -> tensor<2xf32>
  %2:2 = stablehlo.optimization_barrier %0, %1 : tensor<2xf32>, tensor<2xf32>
  %tok = stablehlo.after_all : !stablehlo.token
  return %2#0, %2#1 : tensor<2xf32>, tensor<2xf32>
}
func.func private @square(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.multiply %x, %x : tensor<2xf32>
  return %0 : tensor<2xf32>
}
"""


def test_composite_tuples_barrier_and_tokens():
    (square, same), _ = run(STRUCTURE, np.array([3.0, -2.0], np.float32))
    assert square.tolist() == [9.0, 4.0] and same.tolist() == [3.0, -2.0]


PROBES = """
func.func @main() {
  %a = stablehlo.constant dense<[1, 2]> : tensor<2xi32>
  %b = interpreter.probe %a, probe_id = "a" : tensor<2xi32>
  %c = stablehlo.add %b, %b : tensor<2xi32>
  %d = interpreter.probe %c, probe_id = "a" : tensor<2xi32>
  interpreter.print %c : tensor<2xi32>
  check.expect_serialized_eq %a, probe_id = "a" : tensor<2xi32>
  check.expect_serialized_eq %c, probe_id = "a", iter = 1 : tensor<2xi32>
  check.expect_serialized_eq %a, probe_id = "a", iter = 1 : tensor<2xi32>
  return
}
"""


def test_probe_print_and_serialized_checks(tmp_path):
    program = hlodbg.load(PROBES, check=False)
    interpreter = Interpreter(program.module)
    interpreter.probe_dir = str(tmp_path)
    interpreter.run("main", [])
    assert [c.passed for c in interpreter.checks] == [True, True, False]
    assert interpreter.printed == ["tensor<2xi32> [2, 4]"]
    index = (tmp_path / "index.csv").read_text().splitlines()
    assert [line.split(",")[:2] for line in index] == [["a", "tensor<2xi32>"], ["a", "tensor<2xi32>"]]


PRETTY_CHECKS = """
func.func @pretty() {
  %a = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %b = interpreter.probe %a, probe_id = "a" : tensor<2xf32>
  check.expect_eq %a, %b : tensor<2xf32>
  check.expect_eq_const %a, dense<[1.0, 2.0]> : tensor<2xf32>
  check.expect_almost_eq %a, %b, tolerance = 1.0e-3 : tensor<2xf32>
  check.expect_almost_eq_const %a, dense<[1.0, 2.5]> : tensor<2xf32>, tolerance = 0.01
  check.expect_close %a, %b, max_ulp_difference = 3, min_ulp_difference = 0 : tensor<2xf32>, tensor<2xf32>
  interpreter.print %a : tensor<2xf32>
  func.return
}
"""


def test_check_dialect_pretty_forms_parse_print_and_run():
    from hlodbg.engine.run.checking import check_module

    program = hlodbg.load(PRETTY_CHECKS)
    text = program.to_text()
    assert "check.expect_close %a, %b, max_ulp_difference = 3, min_ulp_difference = 0 : tensor<2xf32>, tensor<2xf32>" in text
    assert "check.expect_almost_eq %a, %b, tolerance = 1.000000e-03 : tensor<2xf32>" in text  # MLIR spells f64 so
    for module in (program.module, hlodbg.load(text).module):
        outcome = check_module(module)
        assert [c.passed for c in outcome.checks] == [True, True, True, False, True]
        assert outcome.printed == ["tensor<2xf32> [1., 2.]"]


@pytest.mark.parametrize("element, data, message", [
    ("i8", np.array([1, 300], np.int64), "int64 data holding 300, outside i8's range -128..127"),
    ("ui8", np.array([-1, 2], np.int32), "int32 data holding -1, outside ui8's range 0..255"),
    ("i4", np.array([7, 8], np.int32), "int32 data holding 8, outside i4's range -8..7"),
    ("f32", np.array([1.0, 1e40]), "float64 data holding 1e\\+40, too large for f32"),
    ("f16", np.array([70000, 1], np.int64), "int64 data holding 70000, too large for f16"),
    ("bf16", np.array([1.0, -1e300]), "float64 data holding -1e\\+300, too large for bf16"),
    ("f8E4M3FN", np.array([1.0, 1000.0], np.float32), "float32 data holding 1000, too large for f8E4M3FN"),
])
def test_arguments_that_a_cast_would_wrap_or_overflow_are_refused(element, data, message):
    """A file's int64/float64 data is cast to the argument's element type, but a value the cast
    would change beyond rounding (wrap-around, inf) is an error, not a silently different run."""
    text = f"""
func.func @main(%a: tensor<2x{element}>) -> tensor<2x{element}> {{
  return %a : tensor<2x{element}>
}}
"""
    with pytest.raises(ExecutionError, match=f"argument 0 of @main: expected tensor<2x{element}> but got {message}"):
        run(text, data)


def test_arguments_that_fit_after_a_cast_run():
    text = """
func.func @main(%a: tensor<2xi8>, %b: tensor<2xf16>) -> (tensor<2xi8>, tensor<2xf16>) {
  return %a, %b : tensor<2xi8>, tensor<2xf16>
}
"""
    (small, huge), _ = run(text, np.array([-128, 127], np.int64), np.array([np.inf, 0.1]))
    assert small.tolist() == [-128, 127] and np.isinf(huge[0])  # an inf that was given stays inf
