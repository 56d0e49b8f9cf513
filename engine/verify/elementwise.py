"""Verifier checks: Element-wise ops."""
from __future__ import annotations

from typing import Optional

from ..ir.core import Operation
from ..ir.opset import ELEMENT_TYPES, OPS, OpDef, when_defined
from ..ir.types import ComplexType, FloatType, TensorType
from .core import (
    CHECKS,
    _block,
    _Context,
    _ints,
    _is_scalar_of,
    _register,
    _returned,
    _same_shape,
    _tensor,
)
from .quantized_types import check_result_accuracy, is_per_axis, same_baseline, same_baseline_element
from .shape_inference import (
    fail,
    fmt_types,
    is_bool_e,
    is_complex_e,
    is_float_e,
    is_int_e,
    is_quant_e,
    is_signed_int_e,
    is_unsigned_int_e,
    rank_of,
    real_part_type,
    shapes_compatible,
)

_ANY = ("any", lambda e: True)
_BI = ("boolean or integer", lambda e: is_bool_e(e) or is_int_e(e))
_I = ("integer", is_int_e)
_FQ = ("floating-point or quantized", lambda e: is_float_e(e) or is_quant_e(e))
_FCQ = ("floating-point, complex or quantized", lambda e: is_float_e(e) or is_complex_e(e) or is_quant_e(e))
_IFCQ = ("integer, floating-point, complex or quantized",
         lambda e: is_int_e(e) or is_float_e(e) or is_complex_e(e) or is_quant_e(e))
_SFCQ = ("signed integer, floating-point, complex or quantized",
         lambda e: is_signed_int_e(e) or is_float_e(e) or is_complex_e(e) or is_quant_e(e))
_FC = ("floating-point or complex", lambda e: is_float_e(e) or is_complex_e(e) or is_quant_e(e))

# What each shared element type rule of the op definitions (OpDef.types) admits.
ELEMENT_KINDS = {
    "any": _ANY,
    "bool_or_int": _BI,
    "int": _I,
    "float_or_quantized": _FQ,
    "float_complex_quantized": _FCQ,
    "int_float_complex_quantized": _IFCQ,
    "signed_int_float_complex_quantized": _SFCQ,
}
assert set(ELEMENT_KINDS) == set(ELEMENT_TYPES), "every shared element type rule has its kinds here"


def _check_category(t: TensorType, category, what: str, constraint: Optional[str] = None) -> None:
    text, ok = category
    if not ok(t.element):
        fail(f"{what} must have {text} element type, got {t}", constraint)


_INT32 = (-(2 ** 31), 2 ** 31 - 1)


def _unary(op: Operation, ctx: _Context) -> None:
    """An element-wise op of one operand under a shared type rule (its definition's `types`)."""
    _same_typed_unary(op, ELEMENT_KINDS[OPS[op.name].types])


def _same_typed_unary(op: Operation, kinds) -> None:
    x = _tensor(op.operand_types[0], "operand")
    r = _tensor(op.result_types[0], "result")
    _check_category(x, kinds, "operand", "I1")
    _same_shape(x, r, "operand and result must have the same shape", "C1")
    if not same_baseline_element(x, r):
        fail(f"operand and result must have the same element type: {x} vs {r}", "C1")
    if "result_accuracy" in OPS[op.name].attrs:  # the transcendental ops; their Inputs row I2
        check_result_accuracy(op, "I2")


@_register("stablehlo.reduce_precision")
def _reduce_precision(op: Operation, ctx: _Context) -> None:
    _same_typed_unary(op, _FQ)
    for label, name in (("I2", "exponent_bits"), ("I3", "mantissa_bits")):
        bits = int(op.attributes[name])
        if not _INT32[0] <= bits <= _INT32[1]:
            fail(f"{name} = {bits} does not fit the spec's si32 type", label)
    if int(op.attributes["exponent_bits"]) < 1:
        fail(f"exponent_bits = {int(op.attributes['exponent_bits'])} must be at least 1", "C2")
    if int(op.attributes["mantissa_bits"]) < 0:
        fail(f"mantissa_bits = {int(op.attributes['mantissa_bits'])} must be non-negative", "C3")


_REAL_OR_COMPLEX = ("floating-point or complex", lambda e: is_float_e(e) or is_complex_e(e))


@_register("stablehlo.abs", "stablehlo.real", "stablehlo.imag")
def _real_valued(op: Operation, ctx: _Context) -> None:
    x = _tensor(op.operand_types[0], "operand")
    r = _tensor(op.result_types[0], "result")
    category = _SFCQ if op.mnemonic == "abs" else _REAL_OR_COMPLEX
    _check_category(x, category, "operand", "I1")
    _same_shape(x, r, "operand and result must have the same shape", "C1")
    want = real_part_type(x.element)
    if not same_baseline_element(want, r.element):
        fail(f"result element type must be {want} for operand {x}, got {r}", "C2")


@_register("stablehlo.convert")
def _convert(op: Operation, ctx: _Context) -> None:
    x = _tensor(op.operand_types[0], "operand")
    r = _tensor(op.result_types[0], "result")
    # The spec types both as plain tensors: uniform_quantize/uniform_dequantize convert quantized ones.
    if is_quant_e(x.element):
        fail(f"operand must be a tensor, not a quantized tensor ({x}); use uniform_dequantize", "I1")
    if is_quant_e(r.element):
        fail(f"result must be a tensor, not a quantized tensor ({r}); use uniform_quantize", "O1")
    _same_shape(x, r, "operand and result must have the same shape", "C1")


@_register("stablehlo.is_finite")
def _is_finite(op: Operation, ctx: _Context) -> None:
    x = _tensor(op.operand_types[0], "x")
    y = _tensor(op.result_types[0], "y")
    _check_category(x, _FQ, "x", "I1")
    _same_shape(x, y, "x and y must have the same shape", "C1")
    if not is_bool_e(y.element):
        fail(f"y must have element type i1, got {y}", "O1")


# Signatures (op name, operand and result types) that _binary accepted: its rule reads nothing
# else, and a big program asks it of the same few signatures tens of thousands of times. Bounded:
# emptied when it fills.
_ACCEPTED_BINARY: set = set()
_MOST_ACCEPTED = 1 << 14


def _binary(op: Operation, ctx: _Context) -> None:
    """An element-wise op of two operands under a shared type rule (its definition's `types`)."""
    signature: Optional[tuple] = (op.name, *op.operand_types, *op.result_types)
    try:
        if signature in _ACCEPTED_BINARY:
            return
    except TypeError:  # a type that cannot be hashed: checked every time
        signature = None
    _check_binary(op)
    if signature is not None:
        if len(_ACCEPTED_BINARY) >= _MOST_ACCEPTED:
            _ACCEPTED_BINARY.clear()
        _ACCEPTED_BINARY.add(signature)


def _check_binary(op: Operation) -> None:
    lhs = _tensor(op.operand_types[0], "lhs")
    rhs = _tensor(op.operand_types[1], "rhs")
    r = _tensor(op.result_types[0], "result")
    _same_shape(lhs, rhs, "operands must have the same shape", "C1")
    _same_shape(lhs, r, "result must have the operands' shape", "C1")
    if op.name == "stablehlo.add" and any(is_quant_e(t.element) for t in (lhs, rhs, r)):
        _check_quantized_add(lhs, rhs, r)
        return
    types = OPS[op.name].types
    category = ELEMENT_KINDS[types]
    _check_category(lhs, category, "lhs", "I1")
    _check_category(rhs, category, "rhs", "I2")
    # Where no quantized type is allowed, C1 is a plain type equality.
    exact = types in ("bool_or_int", "int")
    same = (lambda a, b: a.element == b.element) if exact else same_baseline_element
    if not same(lhs, rhs):
        fail(f"operands must have the same element type: {lhs} vs {rhs}", "C1")
    if not same(lhs, r):
        fail(f"result must have the operands' element type: {lhs} vs {r}", "C1")


def _shared_type_rule(opdef: OpDef) -> None:
    """Every op whose definition names a shared element type rule is checked by it (ops defined
    now or later)."""
    if opdef.types in ELEMENT_TYPES:
        CHECKS[opdef.name] = _unary if len(opdef.operands) == 1 else _binary


when_defined(_shared_type_rule)


def _check_quantized_add(lhs: TensorType, rhs: TensorType, r: TensorType) -> None:
    """add's quantized constraints C2-C7 (add may requantize, and takes per-axis operands)."""
    for name, t in (("lhs", lhs), ("rhs", rhs), ("result", r)):
        if not is_quant_e(t.element):
            fail(f"lhs, rhs and result must all be quantized when one is; {name} is {t}", "C2")
    if not lhs.element.storage == rhs.element.storage == r.element.storage:
        fail(f"lhs, rhs and result must have the same storage type: {lhs}, {rhs}, {r}", "C3")
    if not lhs.element.expressed == rhs.element.expressed == r.element.expressed:
        fail(f"lhs, rhs and result must have the same expressed type: {lhs}, {rhs}, {r}", "C4")
    if (is_per_axis(lhs) or is_per_axis(rhs)) != is_per_axis(r):
        fail(f"the result must be per-axis quantized exactly when lhs or rhs is: {lhs}, {rhs}, {r}", "C5")
    for name, t, label in (("lhs", lhs, "C6"), ("rhs", rhs, "C7")):
        if is_per_axis(t) and t.element.quantized_dimension != r.element.quantized_dimension:
            fail(f"{name} and result must have the same quantization dimension: {t} vs {r}", label)


@_register("stablehlo.complex")
def _complex(op: Operation, ctx: _Context) -> None:
    lhs = _tensor(op.operand_types[0], "lhs")
    rhs = _tensor(op.operand_types[1], "rhs")
    r = _tensor(op.result_types[0], "result")
    if not isinstance(lhs.element, FloatType) or lhs.element.name not in ("f32", "f64"):
        fail(f"lhs must have element type f32 or f64, got {lhs}", "I1")
    if not (shapes_compatible(lhs.shape, rhs.shape) and lhs.element == rhs.element):
        fail(f"lhs and rhs must have the same type: {lhs} vs {rhs}", "C1")
    _same_shape(lhs, r, "result must have the operands' shape", "C2")
    if r.element != ComplexType(lhs.element):
        fail(f"result element type must be complex<{lhs.element}>, got {r}", "C3")


_COMPARE_TYPES = {
    "signed": ("SIGNED",),
    "unsigned": ("UNSIGNED",),
    "float": ("FLOAT", "TOTALORDER"),
    "complex": ("FLOAT",),
}


@_register("stablehlo.compare")
def _compare(op: Operation, ctx: _Context) -> None:
    lhs = _tensor(op.operand_types[0], "lhs")
    rhs = _tensor(op.operand_types[1], "rhs")
    r = _tensor(op.result_types[0], "result")
    if not same_baseline_element(lhs, rhs):
        fail(f"lhs and rhs must have the same element type: {lhs} vs {rhs}", "C1")
    _same_shape(lhs, rhs, "lhs and rhs must have the same shape", "C2")
    _same_shape(lhs, r, "result must have the operands' shape", "C2")
    if not is_bool_e(r.element):
        fail(f"result must have element type i1, got {r}", "O1")
    compare_type = op.attributes.get("compare_type")
    if compare_type is None or str(compare_type) == "NOTYPE":
        return
    e = lhs.element
    if is_bool_e(e) or is_unsigned_int_e(e):
        group = "unsigned"
    elif is_int_e(e):
        group = "signed"
    elif is_float_e(e):
        group = "float"
    elif is_complex_e(e):
        group = "complex"
    else:
        return
    if str(compare_type) not in _COMPARE_TYPES[group]:
        allowed = " or ".join(_COMPARE_TYPES[group])
        fail(f"compare_type {compare_type} is not allowed for element type {e}; use {allowed}", "C3")


@_register("stablehlo.select")
def _select(op: Operation, ctx: _Context) -> None:
    pred = _tensor(op.operand_types[0], "pred")
    on_true = _tensor(op.operand_types[1], "on_true")
    on_false = _tensor(op.operand_types[2], "on_false")
    r = _tensor(op.result_types[0], "result")
    if not is_bool_e(pred.element):
        fail(f"pred must have element type i1, got {pred}", "I1")
    if rank_of(pred) != 0:
        _same_shape(pred, on_true, "pred must be 0-dimensional or have the shape of on_true", "C1")
    same_baseline(on_true, on_false, "on_true and on_false must have the same type", "C2")
    same_baseline(on_true, r, "result must have the type of on_true", "C2")


@_register("stablehlo.clamp")
def _clamp(op: Operation, ctx: _Context) -> None:
    lo = _tensor(op.operand_types[0], "min")
    x = _tensor(op.operand_types[1], "operand")
    hi = _tensor(op.operand_types[2], "max")
    r = _tensor(op.result_types[0], "result")
    if rank_of(lo) != 0:
        _same_shape(lo, x, "min must be 0-dimensional or have the shape of operand", "C1")
    if rank_of(hi) != 0:
        _same_shape(hi, x, "max must be 0-dimensional or have the shape of operand", "C2")
    if not same_baseline_element(lo, x):
        fail(f"min and operand must have the same element type: {lo} vs {x}", "C3")
    if not same_baseline_element(hi, x):
        fail(f"max and operand must have the same element type: {hi} vs {x}", "C3")
    same_baseline(x, r, "result must have the type of operand", "C4")


@_register("stablehlo.map")
def _map(op: Operation, ctx: _Context) -> None:
    if not op.operands:
        fail("needs at least one input", "C2")
    inputs = [_tensor(t, f"input #{i}") for i, t in enumerate(op.operand_types)]
    r = _tensor(op.result_types[0], "result")
    for i, t in enumerate(inputs):
        _same_shape(inputs[0], t, f"input #{i} must have the shape of input #0", "C1")
    _same_shape(inputs[0], r, "result must have the inputs' shape", "C1")
    rank = rank_of(inputs[0])
    dims = _ints(op, "dimensions")
    if rank is not None and dims != list(range(rank)):
        fail(f"dimensions must be {list(range(rank))}, got {dims}", "C3")
    args = [a.type for a in _block(op, 0).arguments]
    if len(args) != len(inputs):
        fail(f"computation must take {len(inputs)} arguments, got {len(args)}", "C4")
    for i, (a, t) in enumerate(zip(args, inputs)):
        if not _is_scalar_of(a, t.element):
            fail(f"computation argument #{i} must be tensor<{t.element}>, got {a}", "C4")
    returned = _returned(op, 0)
    if len(returned) != 1 or not _is_scalar_of(returned[0], r.element):
        fail(f"computation must return one tensor<{r.element}>, returns {fmt_types(returned)}", "C4")
