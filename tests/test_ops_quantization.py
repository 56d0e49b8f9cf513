"""Quantized tensors: uniform_(de)quantize, dequantize_op_quantize, storage-level data movement."""
from __future__ import annotations

import numpy as np
import pytest

import hlodbg
from hlodbg.engine.run.interpreter import Interpreter
from hlodbg.engine.ops.quantization import (
    NATIVE_QUANTIZED_OPS,
    STORAGE_OPS,
    dequantize,
    quantize,
    quantized_element,
)
from hlodbg.engine.ir.types import FloatType, IntegerType, QuantizedType


def run(text: str, *args):
    return Interpreter(hlodbg.load(text).module).run("main", list(args))


def qtype(storage="i8", scale=0.5, zero_point=0, expressed="f32", axis=None, scales=None, zero_points=None,
          low=None, high=None) -> QuantizedType:
    width = int(storage.lstrip("ui"))
    signed = "signless" if storage.startswith("i") else "unsigned"
    if scales is None:
        scales, zero_points = (scale,), (zero_point,)
    return QuantizedType(IntegerType(width, signed), FloatType(expressed), tuple(scales), tuple(zero_points),
                         axis, low, high)


def spec_quantize(x, scale, zero_point, low, high):
    """The spec's formula in f32, written independently of the engine."""
    scaled = np.float32(x) / np.float32(scale) + np.float32(zero_point)
    return np.rint(np.clip(scaled, np.float32(low), np.float32(high))).astype(np.int64)


def spec_dequantize(q, scale, zero_point):
    return (np.asarray(q, np.int64) - zero_point).astype(np.float32) * np.float32(scale)


# -- the spec's examples -------------------------------------------------------------------------

PER_AXIS = "!quant.uniform<i8:f32:0, {0.1:-30,0.5:-20}>"
REQUANT = "!quant.uniform<i8:f32:0, {0.1:-20,0.2:-30}>"


def test_uniform_quantize_per_axis_spec_example():
    text = f"""
func.func @main(%x: tensor<2xf32>) -> (tensor<2x{PER_AXIS}>, tensor<2x{REQUANT}>, tensor<2xf32>) {{
  %q = stablehlo.uniform_quantize %x : (tensor<2xf32>) -> tensor<2x{PER_AXIS}>
  %r = stablehlo.uniform_quantize %q : (tensor<2x{PER_AXIS}>) -> tensor<2x{REQUANT}>
  %f = stablehlo.uniform_dequantize %q : (tensor<2x{PER_AXIS}>) -> tensor<2xf32>
  return %q, %r, %f : tensor<2x{PER_AXIS}>, tensor<2x{REQUANT}>, tensor<2xf32>
}}"""
    q, r, f = run(text, np.array([4.0, 15.0], np.float32))
    assert q.dtype == np.int8 and q.tolist() == [10, 10]
    assert r.tolist() == [20, 45]
    np.testing.assert_allclose(f, [4.0, 15.0], rtol=1e-6)


def test_rounding_is_half_to_even_and_clamped_to_storage_bounds():
    t = qtype("i8", 1.0, 0, low=-100, high=100)
    x = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 99.5, 250.0, -1e9, np.inf, -np.inf], np.float32)
    assert quantize(x, t).tolist() == [0, 2, 2, 0, -2, -2, 100, 100, -100, 100, -100]


def test_nan_quantizes_to_storage_zero():
    # 0/0 in a quantized divide: XLA converts NaN to integer 0, which the conformance suite expects.
    t = qtype("i8", 0.0039215686274509803, -128)
    assert quantize(np.array([np.nan], np.float32), t).tolist() == [0]


@pytest.mark.parametrize("storage,scale,zero_point", [
    ("i8", 0.0039215686, -128), ("i8", 0.25, 3), ("ui8", 0.1, 128), ("i16", 1e-3, -7), ("ui16", 2.0, 0),
])
def test_dequantize_then_quantize_round_trips(storage, scale, zero_point):
    t = qtype(storage, scale, zero_point)
    lo, hi = t.effective_min, t.effective_max
    q = np.arange(lo, hi + 1, max(1, (hi - lo) // 4096)).astype(t.storage.numpy_dtype)
    f = dequantize(q, t)
    assert f.dtype == np.float32
    np.testing.assert_array_equal(quantize(f, t), q)
    np.testing.assert_array_equal(f, spec_dequantize(q, scale, zero_point))


def test_quantize_matches_the_spec_formula_on_random_values():
    rng = np.random.default_rng(0)
    for storage, scale, zp in [("i8", 0.0123, 5), ("ui8", 0.5, 100), ("i32", 1.5e-5, 0)]:
        t = qtype(storage, scale, zp)
        x = (rng.standard_normal(500) * 3).astype(np.float32)
        expected = spec_quantize(x, scale, zp, t.effective_min, t.effective_max)
        np.testing.assert_array_equal(quantize(x, t).astype(np.int64), expected)


def test_per_axis_parameters_follow_the_quantization_dimension():
    t = qtype("i8", axis=1, scales=(0.5, 2.0, 1.0), zero_points=(0, 1, -1))
    x = np.array([[1.0, 4.0, 3.0], [-1.0, -4.0, 0.0]], np.float32)
    assert quantize(x, t).tolist() == [[2, 3, 2], [-2, -1, -1]]
    np.testing.assert_array_equal(dequantize(quantize(x, t), t), x)


def test_bf16_expressed_type():
    text = """
func.func @main(%x: tensor<3xbf16>) -> tensor<3xbf16> {
  %q = stablehlo.uniform_quantize %x : (tensor<3xbf16>) -> tensor<3x!quant.uniform<i8:bf16, 0.25:2>>
  %f = stablehlo.uniform_dequantize %q : (tensor<3x!quant.uniform<i8:bf16, 0.25:2>>) -> tensor<3xbf16>
  return %f : tensor<3xbf16>
}"""
    import ml_dtypes

    (f,) = run(text, np.array([1.0, -0.5, 0.3], ml_dtypes.bfloat16))
    assert f.dtype == ml_dtypes.bfloat16
    assert f.astype(np.float32).tolist() == [1.0, -0.5, 0.25]


# -- dequantize_op_quantize over quantized programs ------------------------------------------------

A = "!quant.uniform<i8:f32, 0.05:-3>"
B = "!quant.uniform<i8:f32, 0.02:7>"
C = "!quant.uniform<i8:f32, 0.1:1>"


@pytest.mark.parametrize("name,fn", [
    ("add", np.add), ("multiply", np.multiply), ("subtract", np.subtract), ("maximum", np.maximum),
])
def test_binary_elementwise_is_dequantize_op_quantize(name, fn):
    text = f"""
func.func @main(%a: tensor<6x{A}>, %b: tensor<6x{B}>) -> tensor<6x{C}> {{
  %r = stablehlo.{name} %a, %b : (tensor<6x{A}>, tensor<6x{B}>) -> tensor<6x{C}>
  return %r : tensor<6x{C}>
}}"""
    a = np.array([-128, -20, -3, 0, 40, 127], np.int8)
    b = np.array([-100, 7, 8, 50, 127, -128], np.int8)
    (r,) = run(text, a, b)
    float_result = fn(spec_dequantize(a, 0.05, -3), spec_dequantize(b, 0.02, 7))
    assert r.dtype == np.int8
    np.testing.assert_array_equal(r, spec_quantize(float_result, 0.1, 1, -128, 127))


def test_unary_math_and_comparison():
    text = f"""
func.func @main(%a: tensor<5x{A}>, %b: tensor<5x{A}>) -> (tensor<5x{C}>, tensor<5xi1>) {{
  %t = stablehlo.tanh %a : (tensor<5x{A}>) -> tensor<5x{C}>
  %c = stablehlo.compare LT, %a, %b : (tensor<5x{A}>, tensor<5x{A}>) -> tensor<5xi1>
  return %t, %c : tensor<5x{C}>, tensor<5xi1>
}}"""
    a = np.array([-128, -40, 0, 33, 127], np.int8)
    b = np.array([-127, -40, -1, 34, 100], np.int8)
    t, c = run(text, a, b)
    np.testing.assert_array_equal(t, spec_quantize(np.tanh(spec_dequantize(a, 0.05, -3)), 0.1, 1, -128, 127))
    assert c.tolist() == (a < b).tolist()


def test_quantized_dot_general_to_i32_accumulator():
    lhs_t, rhs_t, out_t = "!quant.uniform<i8:f32, 0.5:-1>", "!quant.uniform<i8:f32, 0.25>", "!quant.uniform<i32:f32, 0.125>"
    text = f"""
func.func @main(%a: tensor<2x3x{lhs_t}>, %b: tensor<3x4x{rhs_t}>) -> tensor<2x4x{out_t}> {{
  %r = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<2x3x{lhs_t}>, tensor<3x4x{rhs_t}>) -> tensor<2x4x{out_t}>
  return %r : tensor<2x4x{out_t}>
}}"""
    rng = np.random.default_rng(1)
    a = rng.integers(-128, 128, (2, 3)).astype(np.int8)
    b = rng.integers(-128, 128, (3, 4)).astype(np.int8)
    (r,) = run(text, a, b)
    exact = (a.astype(np.int64) + 1) @ b.astype(np.int64)  # (a - zp) * 0.5 @ b * 0.25 / 0.125 = product
    assert r.dtype == np.int32
    np.testing.assert_array_equal(r, exact)


def test_hybrid_dot_general_dequantizes_only_the_quantized_rhs():
    rhs_t = "!quant.uniform<i8:f32:1, {0.5:0, 0.25:0}>"
    text = f"""
func.func @main(%a: tensor<2x3xf32>, %b: tensor<3x2x{rhs_t}>) -> tensor<2x2xf32> {{
  %r = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<2x3xf32>, tensor<3x2x{rhs_t}>) -> tensor<2x2xf32>
  return %r : tensor<2x2xf32>
}}"""
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.array([[2, 4], [-2, 8], [1, -4]], np.int8)
    (r,) = run(text, a, b)
    assert r.dtype == np.float32
    np.testing.assert_allclose(r, a @ (b * np.array([0.5, 0.25], np.float32)), rtol=1e-6)


def test_data_movement_stays_on_storage():
    # i32 storage beyond f32's 24-bit mantissa: a dequantize/quantize round trip would lose bits.
    t = "!quant.uniform<i32:f32, 0.001>"
    text = f"""
func.func @main(%x: tensor<2x3x{t}>) -> (tensor<3x2x{t}>, tensor<6x{t}>, tensor<2x{t}>) {{
  %a = stablehlo.transpose %x, dims = [1, 0] : (tensor<2x3x{t}>) -> tensor<3x2x{t}>
  %b = stablehlo.reshape %x : (tensor<2x3x{t}>) -> tensor<6x{t}>
  %c = stablehlo.slice %b [1:5:2] : (tensor<6x{t}>) -> tensor<2x{t}>
  return %a, %b, %c : tensor<3x2x{t}>, tensor<6x{t}>, tensor<2x{t}>
}}"""
    x = np.array([[2**30 + 1, -(2**30) - 3, 5], [16777217, -16777219, 2**31 - 1]], np.int32)
    a, b, c = run(text, x)
    np.testing.assert_array_equal(a, x.T)
    np.testing.assert_array_equal(b, x.reshape(-1))
    np.testing.assert_array_equal(c, x.reshape(-1)[1:5:2])


def test_per_axis_transpose_moves_storage():
    t_in = "!quant.uniform<i8:f32:0, {0.5:1, 2.0:-1}>"
    t_out = "!quant.uniform<i8:f32:1, {0.5:1, 2.0:-1}>"
    text = f"""
func.func @main(%x: tensor<2x3x{t_in}>) -> tensor<3x2x{t_out}> {{
  %a = stablehlo.transpose %x, dims = [1, 0] : (tensor<2x3x{t_in}>) -> tensor<3x2x{t_out}>
  return %a : tensor<3x2x{t_out}>
}}"""
    x = np.arange(6, dtype=np.int8).reshape(2, 3)
    (a,) = run(text, x)
    np.testing.assert_array_equal(a, x.T)


def test_requantizing_data_movement_converts():
    # Different parameters on operand and result: not a storage copy; the values are requantized.
    text = f"""
func.func @main(%x: tensor<4x{A}>) -> tensor<4x{C}> {{
  %r = stablehlo.reshape %x : (tensor<4x{A}>) -> tensor<4x{C}>
  return %r : tensor<4x{C}>
}}"""
    x = np.array([-128, -3, 10, 127], np.int8)
    program = hlodbg.load(text, check=False)
    (r,) = Interpreter(program.module).run("main", [x])
    np.testing.assert_array_equal(r, spec_quantize(spec_dequantize(x, 0.05, -3), 0.1, 1, -128, 127))


def test_the_shared_call_keeps_its_quantized_types():
    text = f"""
func.func @main(%a: tensor<3x{A}>) -> tensor<3x{C}> {{
  %r = stablehlo.negate %a : (tensor<3x{A}>) -> tensor<3x{C}>
  return %r : tensor<3x{C}>
}}"""
    interpreter = Interpreter(hlodbg.load(text).module)
    a = np.array([-10, 0, 10], np.int8)
    first = interpreter.run("main", [a])[0]
    second = interpreter.run("main", [a])[0]
    np.testing.assert_array_equal(first, second)
    step = interpreter.step_for(interpreter.entry_function("main").body.operations[0])
    assert quantized_element(step.call.result_types[0]) is not None
    assert quantized_element(step.call.operand_types[0]) is not None


def test_bitcast_convert_reinterprets_storage_bits():
    t = "!quant.uniform<i8:f32, 0.5:3>"
    text = f"""
func.func @main(%x: tensor<2x{t}>) -> (tensor<2xui8>, tensor<i16>) {{
  %a = stablehlo.bitcast_convert %x : (tensor<2x{t}>) -> tensor<2xui8>
  %b = stablehlo.bitcast_convert %x : (tensor<2x{t}>) -> tensor<i16>
  return %a, %b : tensor<2xui8>, tensor<i16>
}}"""
    x = np.array([-1, 2], np.int8)
    a, b = run(text, x)
    assert a.tolist() == [255, 2] and int(b) == int(x.view(np.int16)[0])


def test_quantized_constant_holds_storage_and_checks_compare_storage():
    text = f"""
func.func @main() -> tensor<3x{A}> {{
  %c = stablehlo.constant dense<[1, -2, 3]> : tensor<3x{A}>
  "check.expect_eq_const"(%c) {{value = dense<[1, -2, 3]> : tensor<3x{A}>}} : (tensor<3x{A}>) -> ()
  return %c : tensor<3x{A}>
}}"""
    interpreter = Interpreter(hlodbg.load(text).module)
    (c,) = interpreter.run("main", [])
    assert c.dtype == np.int8 and c.tolist() == [1, -2, 3]
    assert [check.passed for check in interpreter.checks] == [True]


def test_operation_sets_are_disjoint_and_name_real_ops():
    assert not NATIVE_QUANTIZED_OPS & STORAGE_OPS
    assert "stablehlo.uniform_quantize" in NATIVE_QUANTIZED_OPS
    assert "stablehlo.add" not in NATIVE_QUANTIZED_OPS | STORAGE_OPS
