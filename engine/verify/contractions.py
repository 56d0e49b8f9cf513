"""Verifier checks: Contractions."""
from __future__ import annotations

from ..ir.core import Operation
from .shape_inference import (
    dim_eq,
    fail,
    infer_convolution,
    infer_dot_general,
    infer_fft,
    is_complex_e,
    is_float_e,
    is_quant_e,
)
from ..ir.types import ComplexType, TensorType
from .core import _Context, _expect_shape, _int, _ints, _padding, _register, _same_elem, _same_type, _tensor
from .elementwise import _FC, _check_category


def _check_precision(op: Operation, constraint: str) -> None:
    precision = op.attributes.get("precision_config")
    if precision is not None and len(precision) > 2:
        fail(f"precision_config has {len(precision)} entries; at most 2 are allowed", constraint)


def _mixed_quantization(*types: TensorType) -> bool:
    return any(is_quant_e(t.element) for t in types)


def _contraction_types(op: Operation, same_elem_constraint, precision_constraint):
    """What dot, dot_general and convolution share: lhs/rhs element types and precision config."""
    lhs = _tensor(op.operand_types[0], "lhs")
    rhs = _tensor(op.operand_types[1], "rhs")
    result = _tensor(op.result_types[0], "result")
    if not _mixed_quantization(lhs, rhs):
        _same_elem(lhs, rhs, "lhs and rhs must have the same element type", same_elem_constraint)
    _check_precision(op, precision_constraint)
    return lhs, rhs, result


@_register("stablehlo.dot_general")
def _dot_general(op: Operation, ctx: _Context) -> None:
    lhs, rhs, r = _contraction_types(op, "C1", "C12")
    if lhs.shape is None or rhs.shape is None:
        return
    dn = op.attributes["dot_dimension_numbers"]
    inferred = infer_dot_general(lhs.shape, rhs.shape, dn.lhs_batching_dimensions, dn.rhs_batching_dimensions,
                                 dn.lhs_contracting_dimensions, dn.rhs_contracting_dimensions)
    _expect_shape(r, inferred, "C13")


@_register("stablehlo.dot")
def _dot(op: Operation, ctx: _Context) -> None:
    lhs, rhs, r = _contraction_types(op, None, None)
    if lhs.shape is None or rhs.shape is None:
        return
    if len(lhs.shape) not in (1, 2) or len(rhs.shape) not in (1, 2):
        fail(f"operands must be vectors or matrices, got {lhs} and {rhs}")
    if not dim_eq(lhs.shape[-1], rhs.shape[0]):
        fail(f"contracting dimensions differ: {lhs.shape[-1]} (last of lhs) vs {rhs.shape[0]} (first of rhs)")
    _expect_shape(r, lhs.shape[:-1] + rhs.shape[1:], None)


@_register("stablehlo.convolution")
def _convolution(op: Operation, ctx: _Context) -> None:
    lhs, rhs, r = _contraction_types(op, "C2", "C25")
    if lhs.shape is None or rhs.shape is None:
        return
    n = len(lhs.shape)
    if n < 2:
        fail(f"lhs must have rank at least 2 (batch and feature dimensions), got {lhs}", "C14")
    spatial = n - 2
    if r.shape is not None and len(r.shape) != n:
        fail(f"result has rank {len(r.shape)} but lhs has rank {n}", "C28")
    reversal = op.attributes.get("window_reversal")
    if reversal is not None and len(reversal) != spatial:
        fail(f"window_reversal has {len(reversal)} entries but there are {spatial} spatial dimensions", "C10")
    inferred = infer_convolution(
        lhs.shape, rhs.shape, op.attributes["dimension_numbers"],
        _ints(op, "window_strides", [1] * spatial), _padding(op, "padding", spatial, "C5"),
        _ints(op, "lhs_dilation", [1] * spatial), _ints(op, "rhs_dilation", [1] * spatial),
        _int(op, "feature_group_count", 1), _int(op, "batch_group_count", 1))
    _expect_shape(r, inferred, "C26")


@_register("stablehlo.fft")
def _fft(op: Operation, ctx: _Context) -> None:
    x = _tensor(op.operand_types[0], "operand")
    r = _tensor(op.result_types[0], "result")
    kind = str(op.attributes["fft_type"])
    xe, re = x.element, r.element
    if kind in ("FFT", "IFFT"):
        if not is_complex_e(xe) or xe != re:
            fail(f"{kind} needs the same complex element type for operand and result, got {x} and {r}", "C2")
    elif kind == "RFFT":
        if not is_float_e(xe) or re != ComplexType(xe):
            fail(f"RFFT needs a floating-point operand and a complex result of the same precision, "
                 f"got {x} and {r}", "C2")
    elif kind == "IRFFT":
        if not is_complex_e(xe) or re != xe.element:
            fail(f"IRFFT needs a complex operand and a floating-point result of the same precision, "
                 f"got {x} and {r}", "C2")
    if x.shape is None:
        return
    _expect_shape(r, infer_fft(x.shape, kind, _ints(op, "fft_length"), xe), "C5")


@_register("stablehlo.cholesky")
def _cholesky(op: Operation, ctx: _Context) -> None:
    a = _tensor(op.operand_types[0], "a")
    _check_category(a, _FC, "a")
    _same_type(a, op.result_types[0], "result must have the type of a", "C1")
    if a.shape is None:
        return
    if len(a.shape) < 2:
        fail(f"a must have rank at least 2, got {a}", "C2")
    if not dim_eq(a.shape[-2], a.shape[-1]):
        fail(f"a must be square in its last two dimensions, got {a}", "C3")


@_register("stablehlo.triangular_solve")
def _triangular_solve(op: Operation, ctx: _Context) -> None:
    a = _tensor(op.operand_types[0], "a")
    b = _tensor(op.operand_types[1], "b")
    _check_category(a, _FC, "a")
    _same_elem(a, b, "a and b must have the same element type", "C1")
    _same_type(b, op.result_types[0], "result must have the type of b", "C4")
    if a.shape is None or b.shape is None:
        return
    if len(a.shape) != len(b.shape) or len(a.shape) < 2:
        fail(f"a and b must have the same rank, at least 2: {a} vs {b}", "C2")
    for i in range(len(a.shape) - 2):
        if not dim_eq(a.shape[i], b.shape[i]):
            fail(f"batch dimension {i} differs: {a} vs {b}", "C3")
    left = bool(op.attributes["left_side"])
    k = b.shape[-2] if left else b.shape[-1]
    if not (dim_eq(a.shape[-2], a.shape[-1]) and dim_eq(a.shape[-1], k)):
        side = "-2" if left else "-1"
        fail(f"a must be square with size dim(b, {side}) = {k}, got {a}", "C3")
