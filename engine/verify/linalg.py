"""Verifier checks: fft, cholesky and triangular_solve (docs/spec.md of openxla/stablehlo, head)."""
from __future__ import annotations

from ..ir.core import Operation
from ..ir.types import ComplexType
from .core import _Context, _ints, _register, _same_elem, _same_shape, _same_type, _tensor
from .elementwise import _FC, _check_category
from .shape_inference import dim_eq, fail, fmt_shape, is_complex_e, is_float_e


@_register("stablehlo.fft")
def _fft(op: Operation, ctx: _Context) -> None:
    x = _tensor(op.operand_types[0], "operand")
    r = _tensor(op.result_types[0], "result")
    kind = str(op.attributes["fft_type"])
    length = _ints(op, "fft_length")
    if x.shape is not None and len(length) > len(x.shape):
        fail(f"size(fft_length) = {len(length)} exceeds rank(operand) = {len(x.shape)}", "C1")
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
    if not 1 <= len(length) <= 3:
        fail(f"fft_length must have 1 to 3 entries, got {len(length)}", "C3")
    real = {"RFFT": ("operand", x), "IRFFT": ("result", r)}.get(kind)
    if real is not None and real[1].shape is not None:
        name, t = real
        tail = t.shape[len(t.shape) - len(length):]
        if len(tail) < len(length) or not all(dim_eq(a, b) for a, b in zip(tail, length)):
            fail(f"the trailing dimensions of the real {name} {t} must equal fft_length {list(length)}", "C4")
    if kind == "IRFFT":
        _check_irfft_spectrum(x, length)
    _check_fft_shapes(kind, x, r)


def _check_irfft_spectrum(x, length) -> None:
    """IRFFT's result ends in fft_length (C4) and is the operand's shape but for the last dimension
    (C5): the operand's own trailing dimensions follow from fft_length, whatever the result type
    leaves dynamic."""
    if x.shape is None or len(length) > len(x.shape):
        return
    tail = x.shape[len(x.shape) - len(length):]
    n = length[-1]
    expected = list(length[:-1]) + [0 if n == 0 else n // 2 + 1]
    if not all(dim_eq(got, want) for got, want in zip(tail, expected)):
        fail(f"IRFFT of fft_length {list(length)} needs an operand ending in {fmt_shape(tuple(expected))}, "
             f"got {x}", "C5")


def _check_fft_shapes(kind: str, x, r) -> None:
    """C5: the shapes agree except that a real signal of n points has n/2 + 1 complex coefficients."""
    if x.shape is None or r.shape is None:
        return
    if len(x.shape) != len(r.shape) or not all(dim_eq(a, b) for a, b in zip(x.shape[:-1], r.shape[:-1])):
        fail(f"result shape {fmt_shape(r.shape)} must be the operand's {fmt_shape(x.shape)} except its last "
             "dimension", "C5")
    real, spectrum = {"RFFT": (x, r), "IRFFT": (r, x)}.get(kind, (None, None))
    if real is None:
        if not dim_eq(x.shape[-1], r.shape[-1]):
            fail(f"result shape {fmt_shape(r.shape)} must be the operand's {fmt_shape(x.shape)}", "C5")
        return
    n = real.shape[-1] if real.shape else None
    if n is None:
        return
    expected = 0 if n == 0 else n // 2 + 1
    if not dim_eq(spectrum.shape[-1], expected):
        fail(f"{kind} of {n} points has {expected} complex coefficients in its last dimension, got "
             f"{spectrum}", "C5")


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
    transpose = str(op.attributes.get("transpose_a", "NO_TRANSPOSE"))
    if transpose not in ("NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"):
        # The dialect's enum also has TRANSPOSE_INVALID; the spec's Inputs table does not.
        fail(f"transpose_a must be NO_TRANSPOSE, TRANSPOSE or ADJOINT, got {transpose}", "I6")
    _same_elem(a, b, "a and b must have the same element type", "C1")
    _same_elem(b, op.result_types[0], "result must have the element type of b", "C4")
    _same_shape(b, op.result_types[0], "result must have the shape of b", "C4")
    if a.shape is None or b.shape is None:
        return
    if len(a.shape) != len(b.shape) or len(a.shape) < 2:
        fail(f"a and b must have the same rank, at least 2: {a} vs {b}", "C2")
    # The spec writes `shape(a)[:-3] = shape(b)[:-3]`, but its semantics solve a[i0, ..., iR-3]
    # against b[i0, ..., iR-3], so every batch dimension (all but the last two) must agree.
    for i in range(len(a.shape) - 2):
        if not dim_eq(a.shape[i], b.shape[i]):
            fail(f"batch dimension {i} differs: {a} vs {b}", "C3")
    left = bool(op.attributes["left_side"])
    k = b.shape[-2] if left else b.shape[-1]
    if not (dim_eq(a.shape[-2], a.shape[-1]) and dim_eq(a.shape[-1], k)):
        side = "-2" if left else "-1"
        fail(f"a must be square with size dim(b, {side}) = {k}, got {a}", "C3")
