"""chlo.mulhi and chlo.scan (docs/generated/chlo.md): pretty syntax round trip, the checks the
verifier makes, semantics against plain Python/numpy (and JAX's cumulative ops), and the debugger
stepping through scan's body one position at a time."""
from __future__ import annotations

import numpy as np
import pytest

import hlodbg
from hlodbg.engine import VerifyError, parse_module
from hlodbg.engine.syntax.mlir.printer import print_module
from hlodbg.engine.verify import verify

from .helpers import interpret


def _round_trip(text: str) -> str:
    printed = print_module(parse_module(text))
    assert print_module(parse_module(printed)) == printed
    generic = print_module(parse_module(text), generic=True)
    assert print_module(parse_module(generic)) == printed
    return printed


# -- chlo.mulhi ---------------------------------------------------------------------------------------

MULHI = """
func.func @main(%a: tensor<6x{t}>, %b: tensor<6x{t}>) -> tensor<6x{t}> {{
  %r = chlo.mulhi %a, %b : tensor<6x{t}>, tensor<6x{t}> -> tensor<6x{t}>
  return %r : tensor<6x{t}>
}}"""


def test_mulhi_prints_in_its_pretty_form_and_parses_back():
    printed = _round_trip(MULHI.format(t="i32"))
    assert "chlo.mulhi %a, %b : tensor<6xi32>, tensor<6xi32> -> tensor<6xi32>" in printed


@pytest.mark.parametrize("mlir, dtype, bits", [
    ("i8", np.int8, 8), ("ui8", np.uint8, 8), ("i16", np.int16, 16), ("ui16", np.uint16, 16),
    ("i32", np.int32, 32), ("ui32", np.uint32, 32), ("i64", np.int64, 64), ("ui64", np.uint64, 64),
])
def test_mulhi_is_the_high_half_of_the_full_product(mlir, dtype, bits):
    info = np.iinfo(dtype)
    a = np.array([info.min, info.max, info.max, -1 if info.min else 3, 7, info.min], dtype)
    b = np.array([info.min, info.max, 2, info.max, 0, 1], dtype)
    (got,) = interpret(MULHI.format(t=mlir), a, b)
    want = [(int(x) * int(y)) >> bits for x, y in zip(a.tolist(), b.tolist())]
    assert got.dtype == np.dtype(dtype) and got.tolist() == want


def test_mulhi_of_4_bit_integers_uses_the_type_width():
    text = """
    func.func @main() -> tensor<3xi4> {
      %a = stablehlo.constant dense<[7, -8, 5]> : tensor<3xi4>
      %b = stablehlo.constant dense<[7, 7, -3]> : tensor<3xi4>
      %r = chlo.mulhi %a, %b : tensor<3xi4>, tensor<3xi4> -> tensor<3xi4>
      return %r : tensor<3xi4>
    }"""
    (got,) = interpret(text)
    assert got.astype(np.int64).tolist() == [(7 * 7) >> 4, (-8 * 7) >> 4, (5 * -3) >> 4]


@pytest.mark.parametrize("types, fragment", [
    (("f32", "f32", "f32"), "operands must be integer tensors"),
    (("i32", "i16", "i32"), "lhs and rhs must have the same type"),
    (("i32", "i32", "i64"), "result must have the operands' type"),
])
def test_mulhi_rejects_what_is_not_an_integer_product(types, fragment):
    a, b, r = (f"tensor<2x{t}>" for t in types)
    text = f"""
func.func @main(%a: {a}, %b: {b}) -> {r} {{
  %r = chlo.mulhi %a, %b : {a}, {b} -> {r}
  return %r : {r}
}}"""
    with pytest.raises(VerifyError, match=fragment) as info:
        verify(parse_module(text))
    assert info.value.pos.line == 3


# -- chlo.scan ----------------------------------------------------------------------------------------

CUMSUM = """
func.func @main(%x: tensor<2x5xf32>) -> (tensor<2x5xf32>, tensor<2xf32>) {
  %zero = stablehlo.constant dense<0.0> : tensor<2xf32>
  %0:2 = chlo.scan(%x) inits(%zero) dimension=1REVERSE {
  ^bb0(%slice: tensor<2xf32>, %carry: tensor<2xf32>):
    %sum = stablehlo.add %carry, %slice : tensor<2xf32>
    stablehlo.return %sum, %sum : tensor<2xf32>, tensor<2xf32>
  } : (tensor<2x5xf32>, tensor<2xf32>) -> (tensor<2x5xf32>, tensor<2xf32>)
  return %0#0, %0#1 : tensor<2x5xf32>, tensor<2xf32>
}"""

def cumsum(attributes: str) -> str:
    return CUMSUM.replace("REVERSE", attributes)


# Two inputs, one output, one carry: outputs need not match inputs (chlo.md: results are the body's
# outputs stacked along the dimension, then the final carries).
MIXED = """
func.func @main(%a: tensor<5x2xf64>, %b: tensor<5x3xf64>, %c: tensor<4xf64>) -> (tensor<5xf64>, tensor<4xf64>) {
  %0:2 = chlo.scan(%a, %b) inits(%c) dimension=0 {
  ^bb0(%b0: tensor<2xf64>, %b1: tensor<3xf64>, %b2: tensor<4xf64>):
    %zero = stablehlo.constant dense<0.0> : tensor<f64>
    %s0 = stablehlo.reduce(%b0 init: %zero) applies stablehlo.add across dimensions = [0] : (tensor<2xf64>, tensor<f64>) -> tensor<f64>
    %s1 = stablehlo.reduce(%b1 init: %zero) applies stablehlo.add across dimensions = [0] : (tensor<3xf64>, tensor<f64>) -> tensor<f64>
    %out = stablehlo.subtract %s0, %s1 : tensor<f64>
    %next = stablehlo.add %b2, %b2 : tensor<4xf64>
    stablehlo.return %out, %next : tensor<f64>, tensor<4xf64>
  } : (tensor<5x2xf64>, tensor<5x3xf64>, tensor<4xf64>) -> (tensor<5xf64>, tensor<4xf64>)
  return %0#0, %0#1 : tensor<5xf64>, tensor<4xf64>
}"""


@pytest.mark.parametrize("text", [cumsum(""), cumsum(" attributes {is_reverse = true}"), MIXED])
def test_scan_prints_in_its_pretty_form_and_parses_back(text):
    printed = _round_trip(text)
    assert "chlo.scan(" in printed and " inits (" in printed and " dimension=" in printed
    generic = print_module(parse_module(text), generic=True)
    assert "operandSegmentSizes = array<i32:" in generic and "resultSegmentSizes = array<i32:" in generic


@pytest.mark.parametrize("reverse", [False, True])
def test_scan_cumsum_matches_numpy_and_jax(reverse):
    from jax import lax

    x = np.random.default_rng(3).standard_normal((2, 5)).astype(np.float32)
    flag = " attributes {is_reverse = true}" if reverse else ""
    outputs, carry = interpret(cumsum(flag), x)
    order = x[:, ::-1] if reverse else x
    want = np.cumsum(order, axis=1, dtype=np.float32)  # sequential f32 sums, the scan's own order
    want = want[:, ::-1] if reverse else want
    np.testing.assert_array_equal(outputs, want)
    np.testing.assert_array_equal(carry, want[:, 0] if reverse else want[:, -1])
    jax_sums = np.asarray(lax.cumsum(x, axis=1, reverse=reverse))
    np.testing.assert_allclose(outputs, jax_sums, rtol=1e-6, atol=1e-6)  # XLA sums in another order


def test_scan_with_more_inputs_than_outputs():
    rng = np.random.default_rng(4)
    a, b, c = rng.standard_normal((5, 2)), rng.standard_normal((5, 3)), rng.standard_normal(4)
    outputs, carry = interpret(MIXED, a, b, c)
    np.testing.assert_allclose(outputs, a.sum(axis=1) - b.sum(axis=1), rtol=1e-12)
    np.testing.assert_array_equal(carry, c * 32)


def test_scan_over_an_empty_dimension_returns_empty_outputs_and_the_inits():
    text = """
    func.func @main(%x: tensor<0xi32>, %c: tensor<i32>) -> (tensor<0xi32>, tensor<i32>) {
      %0:2 = chlo.scan(%x) inits(%c) dimension=0 {
      ^bb0(%s: tensor<i32>, %k: tensor<i32>):
        %n = stablehlo.add %s, %k : tensor<i32>
        stablehlo.return %n, %n : tensor<i32>, tensor<i32>
      } : (tensor<0xi32>, tensor<i32>) -> (tensor<0xi32>, tensor<i32>)
      return %0#0, %0#1 : tensor<0xi32>, tensor<i32>
    }"""
    outputs, carry = interpret(text, np.zeros(0, np.int32), np.int32(7))
    assert outputs.shape == (0,) and outputs.dtype == np.int32 and int(carry) == 7


def _scan(body_args: str, returns: str, result: str = "(tensor<4xi32>, tensor<i32>)", dimension: int = 0,
          inputs: str = "%x", input_types: str = "tensor<4xi32>") -> str:
    return f"""
func.func @main(%x: tensor<4xi32>, %y: tensor<3xi32>, %c: tensor<i32>) -> () {{
  %0:2 = chlo.scan({inputs}) inits(%c) dimension={dimension} {{
  ^bb0({body_args}):
    stablehlo.return {returns}
  }} : ({input_types}, tensor<i32>) -> {result}
  return
}}"""


SCAN_INVALID = [
    ("dimension_out_of_range", _scan("%s: tensor<i32>, %k: tensor<i32>", "%s, %k : tensor<i32>, tensor<i32>", dimension=1),
     "dimension 1 is out of range"),
    ("inputs_of_different_lengths", _scan("%s: tensor<i32>, %t: tensor<i32>, %k: tensor<i32>",
                                          "%s, %k : tensor<i32>, tensor<i32>", inputs="%x, %y",
                                          input_types="tensor<4xi32>, tensor<3xi32>"),
     "inputs must have the same size along dimension 0"),
    ("body_argument_count", _scan("%s: tensor<i32>", "%s, %s : tensor<i32>, tensor<i32>"),
     "body must take 2 arguments"),
    ("body_argument_type", _scan("%s: tensor<4xi32>, %k: tensor<i32>", "%k, %k : tensor<i32>, tensor<i32>"),
     "body argument #0 must be tensor<i32> (a slice of input #0)"),
    ("body_return_count", _scan("%s: tensor<i32>, %k: tensor<i32>", "%s : tensor<i32>"),
     "body must return 2 values (1 outputs, then 1 carries)"),
    ("carry_changes_type", _scan("%s: tensor<i32>, %k: tensor<i32>", "%s, %k : tensor<i32>, tensor<i32>",
                                 result="(tensor<4xi32>, tensor<i64>)"),
     "carry #0 must keep its type"),
    ("output_shape", _scan("%s: tensor<i32>, %k: tensor<i32>", "%s, %k : tensor<i32>, tensor<i32>",
                           result="(tensor<5xi32>, tensor<i32>)"),
     "output #0"),
]


@pytest.mark.parametrize("name, text, fragment", SCAN_INVALID, ids=[case[0] for case in SCAN_INVALID])
def test_scan_rejects_each_inconsistent_program_at_the_op(name, text, fragment):
    with pytest.raises(VerifyError) as info:
        verify(parse_module(text, "prog.mlir"))
    assert fragment in str(info.value), str(info.value)
    assert info.value.pos.line == 3


def test_a_generic_scan_without_segment_sizes_is_rejected_and_printed_generic():
    text = """
    func.func @main(%x: tensor<4xi32>, %c: tensor<i32>) -> () {
      %0:2 = "chlo.scan"(%x, %c) ({
      ^bb0(%s: tensor<i32>, %k: tensor<i32>):
        stablehlo.return %s, %k : tensor<i32>, tensor<i32>
      }) {dimension = 0 : i64} : (tensor<4xi32>, tensor<i32>) -> (tensor<4xi32>, tensor<i32>)
      return
    }"""
    module = parse_module(text)
    with pytest.raises(VerifyError, match="operandSegmentSizes"):
        verify(module)
    assert '"chlo.scan"(%x, %c)' in print_module(module)


def test_the_debugger_steps_through_scan_one_position_at_a_time(tmp_path, monkeypatch):
    monkeypatch.setenv("HLODBG_STATE_DIR", str(tmp_path / "state"))
    x = np.arange(10, dtype=np.float32).reshape(2, 5)
    session = hlodbg.load(cumsum("")).session([x])
    try:
        session.step()
        assert session.op.name == "chlo.scan"
        session.step_in()
        assert [(f.kind, f.iteration) for f in session.stack] == [("function", None), ("scan.body", 0)]
        assert session.value("%slice").tolist() == [0, 5]
        session.step(), session.step()  # %sum, return
        assert [(f.kind, f.iteration) for f in session.stack][-1] == ("scan.body", 1)
        assert session.value("%carry").tolist() == [0, 5] and session.value("%slice").tolist() == [1, 6]
        session.step_out()
        assert session.op.name == "func.return"
        assert session.value("%0#1").tolist() == [10, 35]
    finally:
        session.close()
