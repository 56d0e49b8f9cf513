"""Verifier checks: Random numbers, quantization, shapes."""
from __future__ import annotations

import numpy as np

from ..ir.core import Operation
from ..ir.types import IntegerType, QuantizedType
from . import data_movement
from .core import (
    CROSS_CHECKS,
    _constant_array,
    _Context,
    _expect_shape,
    _int,
    _ints,
    _is_scalar_of,
    _register,
    _same_elem,
    _same_shape,
    _same_type,
    _tensor,
)
from .quantized_types import check_quantization
from .shape_inference import (
    check_range,
    check_unique,
    dim_eq,
    fail,
    fmt_shape,
    is_bool_e,
    is_complex_e,
    is_float_e,
    is_int_e,
    is_quant_e,
    rank_of,
    shapes_compatible,
)

CROSS_CHECKS.append(check_quantization)


@_register("stablehlo.rng_bit_generator")
def _rng_bit_generator(op: Operation, ctx: _Context) -> None:
    state = _tensor(op.operand_types[0], "initial_state")
    _same_type(state, op.result_types[0], "output_state must have the type of initial_state", "C1")
    out = _tensor(op.result_types[1], "output")
    if not (is_int_e(out.element) or is_float_e(out.element)):
        fail(f"output must have integer or floating-point element type, got {out}", "O2")
    if rank_of(state) not in (None, 1):
        fail(f"initial_state must be 1-dimensional, got {state}", "I2")
    size = None if state.shape is None else state.shape[0]
    algorithm = str(op.attributes["rng_algorithm"])
    allowed = {"THREE_FRY": (2,), "PHILOX": (2, 3)}.get(algorithm)
    if allowed and size is not None and size not in allowed:
        fail(f"initial_state of {algorithm} must have {' or '.join(map(str, allowed))} elements, got {size}", "C2")


@_register("stablehlo.rng")
def _rng(op: Operation, ctx: _Context) -> None:
    a = _tensor(op.operand_types[0], "a")
    b = _tensor(op.operand_types[1], "b")
    shape = _tensor(op.operand_types[2], "shape")
    r = _tensor(op.result_types[0], "result")
    for name, t, label in (("a", a, "I1"), ("b", b, "I2")):
        if rank_of(t) not in (None, 0):
            fail(f"{name} must be a 0-dimensional tensor, got {t}", label)
        if not (is_int_e(t.element) or is_bool_e(t.element) or is_float_e(t.element)):
            fail(f"{name} must have integer, boolean or floating-point element type, got {t}", label)
    if a.element != b.element:
        fail(f"a and b must have the same element type: {a} vs {b}", "C1")
    if a.element != r.element:
        fail(f"result must have the element type of a: {a} vs {r}", "C1")
    if str(op.attributes["rng_distribution"]) == "NORMAL" and not is_float_e(a.element):
        fail(f"NORMAL needs floating-point a, b and result, got {a}", "C2")
    if shape.shape is not None and len(shape.shape) != 1:
        fail(f"shape must be a 1-dimensional tensor, got {shape}", "I3")
    if shape.shape is not None and r.shape is not None:
        if not dim_eq(shape.shape[0], len(r.shape)):
            fail(f"shape has {shape.shape[0]} entries but the result has rank {len(r.shape)}", "C3")
        sizes = _constant_array(op.operands[2])
        if sizes is not None and not shapes_compatible(r.shape, tuple(int(d) for d in sizes.reshape(-1))):
            fail(f"result {r} does not have the shape {fmt_shape(tuple(int(d) for d in sizes.reshape(-1)))} "
                 f"that the shape operand holds", "C3")


@_register("stablehlo.uniform_quantize")
def _uniform_quantize(op: Operation, ctx: _Context) -> None:
    x = _tensor(op.operand_types[0], "operand")
    r = _tensor(op.result_types[0], "result")
    if not (is_float_e(x.element) or is_quant_e(x.element)):
        fail(f"operand must have floating-point or quantized element type, got {x}", "I1")
    if not isinstance(r.element, QuantizedType):
        fail(f"result must have a quantized element type, got {r}", "O1")
    _same_shape(x, r, "operand and result must have the same shape", "C1")
    expressed = x.element if is_float_e(x.element) else x.element.expressed
    if r.element.expressed != expressed:
        fail(f"the result's expressed type must be {expressed}, got {r.element.expressed}", "C2")


@_register("stablehlo.uniform_dequantize")
def _uniform_dequantize(op: Operation, ctx: _Context) -> None:
    x = _tensor(op.operand_types[0], "operand")
    r = _tensor(op.result_types[0], "result")
    if not isinstance(x.element, QuantizedType):
        fail(f"operand must have a quantized element type, got {x}", "I1")
    _same_shape(x, r, "operand and result must have the same shape", "C1")
    if r.element != x.element.expressed:
        fail(f"result element type must be the expressed type {x.element.expressed}, got {r}", "C2")


@_register("stablehlo.get_dimension_size")
def _get_dimension_size(op: Operation, ctx: _Context) -> None:
    x = _tensor(op.operand_types[0], "operand")
    d = _int(op, "dimension")
    if x.shape is not None and not 0 <= d < len(x.shape):
        fail(f"dimension {d} is out of range [0, {len(x.shape)})", "C1")
    r = op.result_types[0]
    if not _is_scalar_of(r, IntegerType(32)):
        fail(f"result must be tensor<i32>, got {r}", "O1")


@_register("stablehlo.set_dimension_size")
def _set_dimension_size(op: Operation, ctx: _Context) -> None:
    x = _tensor(op.operand_types[0], "operand")
    r = _tensor(op.result_types[0], "result")
    size = _tensor(op.operand_types[1], "size")
    if size.shape is not None and size.shape != ():
        fail(f"size must be a 0-dimensional tensor, got {size}", None)
    _same_elem(x, r, "operand and result must have the same element type", None)
    d = _int(op, "dimension")
    if x.shape is not None:
        if not 0 <= d < len(x.shape):
            fail(f"dimension {d} is out of range [0, {len(x.shape)})")
        _expect_shape(r, tuple(None if i == d else s for i, s in enumerate(x.shape)), None)


@_register("stablehlo.dynamic_broadcast_in_dim")
def _dynamic_broadcast_in_dim(op: Operation, ctx: _Context) -> None:
    x = _tensor(op.operand_types[0], "operand")
    r = _tensor(op.result_types[0], "result")
    data_movement.same_element_but_axis(x, r, "C1", scales_may_differ=True)
    dims = _ints(op, "broadcast_dimensions")
    data_movement.check_broadcast_dims(x, r, dims, ("C2", "C3", "C4", "C5", "C6"))
    _check_output_size(op.operand_types[1], r, "output_dimensions", "C7")
    shape = constant_shape(op, 1, r, "output_dimensions", "C7")
    if shape is not None and x.shape is not None and len(dims) == len(x.shape):
        for d, (size, to) in enumerate(zip(x.shape, dims)):
            if size is not None and 0 <= to < len(shape) and size not in (1, shape[to]):
                fail(f"dim(operand, {d}) = {size} must be 1 or output_dimensions[{to}] = {shape[to]}", "C5")
    expanding = _ints(op, "known_expanding_dimensions", [])
    nonexpanding = _ints(op, "known_nonexpanding_dimensions", [])
    check_unique(expanding + nonexpanding, "known_expanding_dimensions and known_nonexpanding_dimensions", "C8")
    check_range(expanding, rank_of(x), "known_expanding_dimensions entry", "C9")
    check_range(nonexpanding, rank_of(x), "known_nonexpanding_dimensions entry", "C10")


def constant_shape(op: Operation, index: int, r, what: str, constraint: str):
    """The sizes a constant shape operand gives the result (None if it is no constant): each
    non-negative, and the result type's static dimensions equal to them."""
    values = _constant_array(op.operands[index])
    if values is None or values.ndim != 1:
        return None
    sizes = tuple(int(v) for v in values)
    if any(v < 0 for v in sizes):
        fail(f"{what} {list(sizes)} holds a negative size", constraint)
    if r.shape is not None and len(r.shape) == len(sizes):
        for d, (got, want) in enumerate(zip(r.shape, sizes)):
            if got is not None and got != want:
                fail(f"{what} is {list(sizes)} but the result type is {r} (dimension {d})", constraint)
    return sizes


def _check_output_size(shape_type, r, what: str, constraint: str, operand_label: str = "I2") -> None:
    """A 1-dimensional shape operand, of a static size (the op definitions' HLO_StaticDimensionTensor),
    has one entry per result dimension."""
    shape = _tensor(shape_type, what)
    if shape.shape is not None and (len(shape.shape) != 1 or shape.shape[0] is None):
        fail(f"{what} must be a statically shaped 1-dimensional tensor, got {shape}", operand_label)
    if shape.shape is not None and len(shape.shape) == 1 and r.shape is not None:
        if not dim_eq(shape.shape[0], len(r.shape)):
            fail(f"{what} has {shape.shape[0]} entries but the result has rank {len(r.shape)}", constraint)


@_register("stablehlo.dynamic_reshape")
def _dynamic_reshape(op: Operation, ctx: _Context) -> None:
    x = _tensor(op.operand_types[0], "operand")
    r = _tensor(op.result_types[0], "result")
    data_movement.check_reshape(x, r, ("C1", "C2", "C3"))
    _check_output_size(op.operand_types[1], r, "output_shape", "C4")
    shape = constant_shape(op, 1, r, "output_shape", "C4")
    if shape is not None and x.shape is not None and None not in x.shape:
        if int(np.prod(x.shape, dtype=object)) != int(np.prod(shape, dtype=object)):
            fail(f"output_shape {list(shape)} has {int(np.prod(shape, dtype=object))} elements but the operand "
                 f"{x} has {int(np.prod(x.shape, dtype=object))}", "C2")


@_register("stablehlo.dynamic_iota")
def _dynamic_iota(op: Operation, ctx: _Context) -> None:
    r = _tensor(op.result_types[0], "result")
    shape = _tensor(op.operand_types[0], "output_shape")
    d = _int(op, "iota_dimension")
    size = shape.shape[0] if shape.shape is not None and len(shape.shape) == 1 else None
    if d < 0 or (size is not None and d >= size):
        fail(f"iota_dimension {d} is out of range [0, {'?' if size is None else size})", "C1")
    _check_output_size(shape, r, "output_shape", "C2", "I1")
    constant_shape(op, 0, r, "output_shape", "C2")
    e = r.element
    if not (is_int_e(e) or is_float_e(e) or is_complex_e(e) or is_quant_e(e)):
        fail(f"result must have integer, floating-point, complex or quantized element type, got {r}", "O1")
