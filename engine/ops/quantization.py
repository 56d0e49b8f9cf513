"""Quantized tensors: uniform_quantize/uniform_dequantize and the spec's dequantize_op_quantize.

A quantized tensor holds its storage integers; `f = (i - zero_point) * scale` gives the value it
stands for, per tensor or per slice of `quantized_dimension`. The interpreter hands every op that
touches a quantized type and is not in `NATIVE_QUANTIZED_OPS` to `wrap_quantized`, which gives the
op the meaning the spec prescribes for quantized types:

* ops that only move elements (reshape, transpose, gather, ...) keep working on storage when
  their quantized types share the quantization parameters, as the spec's constraints require
  (`element_type(result) = element_type(operand)`); the values are copied bit for bit;
* every other op is `dequantize_op_quantize`: quantized operands are dequantized to their
  expressed type, the float evaluator runs on a view of the op whose quantized types are
  replaced by their expressed types, and results of quantized type are quantized back. Float
  operands pass through untouched, which makes the hybrid ops (float lhs, quantized rhs of
  dot_general/convolution) `hybrid_dequantize_then_op`.

Arithmetic follows the spec's `quantize`/`dequantize` in the expressed type: `x / scale +
zero_point`, clamped to `[storage_min, storage_max]`, rounded half to even; NaN becomes storage
0 (as XLA converts NaN to integers). Narrow expressed types (bf16, f16) round after every step,
each step being computed in f32.
"""
from __future__ import annotations

import copy
from typing import Any, Callable, Optional

import numpy as np

from ..ir.dtypes import compute_dtype, narrow
from ..ir.types import QuantizedType, TensorType, Type
from .elementwise_provenance import elementwise_provenance
from .provenance import explains
from .registry import OpCall, op

# Ops that run on quantized storage as they are: they convert types themselves, only carry
# values (control flow, calls, tuples, communication, checks comparing storage) or run regions
# whose own ops are quantized (the region's ops are wrapped, the owner must not be).
NATIVE_QUANTIZED_OPS = frozenset({
    "stablehlo.uniform_quantize",
    "stablehlo.uniform_dequantize",
    "stablehlo.constant",
    "chlo.constant",
    "func.call",
    "func.return",
    "stablehlo.return",
    "stablehlo.while",
    "stablehlo.if",
    "stablehlo.case",
    "stablehlo.composite",
    "stablehlo.optimization_barrier",
    "stablehlo.tuple",
    "stablehlo.get_tuple_element",
    "stablehlo.get_dimension_size",
    "stablehlo.bitcast_convert",  # reinterprets the storage bits (spec C1 uses storage_type)
    "stablehlo.custom_call",
    "stablehlo.async_start",
    "stablehlo.async_done",
    "sdy.manual_computation",
    "sdy.return",
    # Regions: reductions, sorts and scatters apply their body to quantized element values.
    "stablehlo.reduce",
    "stablehlo.reduce_window",
    "stablehlo.select_and_scatter",
    "stablehlo.scatter",
    "stablehlo.sort",
    "stablehlo.map",
    "chlo.scan",
    # Communication: values travel as they are (collectives.py quantizes its zero fill).
    "stablehlo.all_gather",
    "stablehlo.all_reduce",
    "stablehlo.reduce_scatter",
    "stablehlo.all_to_all",
    "stablehlo.collective_broadcast",
    "stablehlo.collective_reduce",
    "stablehlo.collective_permute",
    "stablehlo.send",
    "stablehlo.recv",
    "stablehlo.infeed",
    "stablehlo.outfeed",
    # Checks compare storage integers with the storage integers of their constants.
    "check.expect_eq",
    "check.expect_eq_const",
    "check.eq",
    "check.expect_almost_eq",
    "check.expect_almost_eq_const",
    "check.almost_eq",
    "check.expect_close",
    "check.expect_serialized_eq",
    "interpreter.print",
    "interpreter.probe",
})

# Ops whose spec semantics copy elements (`result[i] = operand[j]`) and whose constraints make the
# result's element type the operand's: on storage they are exact.
STORAGE_OPS = frozenset({
    "stablehlo.broadcast_in_dim",
    "stablehlo.broadcast",
    "stablehlo.dynamic_broadcast_in_dim",
    "stablehlo.concatenate",
    "stablehlo.dynamic_slice",
    "stablehlo.dynamic_update_slice",
    "stablehlo.real_dynamic_slice",
    "stablehlo.gather",
    "stablehlo.dynamic_gather",
    "stablehlo.torch_index_select",
    "stablehlo.pad",
    "stablehlo.dynamic_pad",
    "stablehlo.reshape",
    "stablehlo.dynamic_reshape",
    "stablehlo.reverse",
    "stablehlo.slice",
    "stablehlo.transpose",
    "stablehlo.set_dimension_size",
    "sdy.sharding_constraint",
    "sdy.reshard",
})


# -- the two conversions ---------------------------------------------------------------------


def quantized_element(t: Type) -> Optional[QuantizedType]:
    """The quantized element type of tensor type `t`, or None."""
    if isinstance(t, TensorType) and isinstance(t.element, QuantizedType):
        return t.element
    return None


def _parameters(q: QuantizedType, shape: tuple, dtype: np.dtype) -> tuple[np.ndarray, np.ndarray]:
    """Scales (in `dtype`) and zero points (int64), shaped to broadcast against an array of `shape`."""
    scales = np.asarray(q.scales, np.float64).astype(dtype)
    zero_points = np.asarray(q.zero_points, np.int64)
    if q.quantized_dimension is None:
        return scales.reshape(()), zero_points.reshape(())
    axis = q.quantized_dimension
    if not 0 <= axis < len(shape) or shape[axis] != len(q.scales):
        raise ValueError(f"{q} has {len(q.scales)} scales along dimension {axis}, "
                         f"which a tensor of shape {list(shape)} does not match")
    along = [1] * len(shape)
    along[axis] = len(q.scales)
    return scales.reshape(along), zero_points.reshape(along)


def dequantize(storage: np.ndarray, q: QuantizedType) -> np.ndarray:
    """`(storage - zero_point) * scale` in the expressed type."""
    expressed = q.expressed.numpy_dtype
    work = compute_dtype(expressed)
    storage = np.asarray(storage)
    scales, zero_points = _parameters(q, storage.shape, work)
    # The subtraction is exact in int64; the spec's storage-type subtraction cannot overflow there.
    shifted = narrow((storage.astype(np.int64) - zero_points).astype(work), expressed).astype(work)
    return narrow(shifted * scales, expressed)


def quantize(values: np.ndarray, q: QuantizedType) -> np.ndarray:
    """Clamp(`values / scale + zero_point`) rounded half to even, as storage integers."""
    expressed = q.expressed.numpy_dtype
    work = compute_dtype(expressed)
    values = np.asarray(values)
    if values.dtype.kind == "c":
        raise ValueError(f"cannot quantize complex values to {q}")
    x = values.astype(work)
    scales, zero_points = _parameters(q, x.shape, work)
    low, high = q.effective_min, q.effective_max
    scaled = _step(x / scales, expressed, work)
    shifted = _step(scaled + zero_points.astype(work), expressed, work)
    clamped = np.minimum(np.maximum(shifted, _step(np.asarray(low, work), expressed, work)),
                         _step(np.asarray(high, work), expressed, work))
    rounded = np.rint(clamped.astype(np.float64))
    # Bounds converted to the expressed type can round outward (2^31 - 1 in f32): clip exactly.
    rounded = np.clip(np.nan_to_num(rounded, nan=0.0), low, high)
    return rounded.astype(q.storage.numpy_dtype)


def _step(array: np.ndarray, expressed: np.dtype, work: np.dtype) -> np.ndarray:
    """One arithmetic step of the spec, rounded to a narrow expressed type when there is one."""
    return array if expressed == work else narrow(array, expressed).astype(work)


def convert(values: np.ndarray, source: Type, destination: Type) -> np.ndarray:
    """The spec's `to_destination_type` between float and quantized tensor types."""
    qs, qd = quantized_element(source), quantized_element(destination)
    if qs == qd:
        return values
    if qs is not None:
        values = dequantize(values, qs)
    if qd is not None:
        return quantize(values, qd)
    dtype = destination.numpy_dtype
    return narrow(values, dtype) if values.dtype != dtype else values


# -- the two ops -----------------------------------------------------------------------------


@op("stablehlo.uniform_quantize")
def uniform_quantize(call: OpCall, operand: np.ndarray) -> np.ndarray:
    target = quantized_element(call.result_type)
    if target is None:
        raise call.error(f"result type {call.result_type} is not quantized")
    source = quantized_element(call.operand_types[0])
    values = dequantize(operand, source) if source is not None else operand
    return quantize(values, target)


@op("stablehlo.uniform_dequantize")
def uniform_dequantize(call: OpCall, operand: np.ndarray) -> np.ndarray:
    source = quantized_element(call.operand_types[0])
    if source is None:
        raise call.error(f"operand type {call.operand_types[0]} is not quantized")
    result = dequantize(operand, source)
    dtype = call.result_dtype
    return result if result.dtype == dtype else narrow(result, dtype)


# Per tensor or per axis, each element is (de)quantized on its own, with its axis's scale.
explains("stablehlo.uniform_quantize", "stablehlo.uniform_dequantize")(elementwise_provenance)


# -- dequantize_op_quantize ------------------------------------------------------------------


def expressed_type(t: Type) -> Type:
    """`t` with a quantized element type replaced by its expressed type."""
    q = quantized_element(t)
    return t.with_element(q.expressed) if q is not None else t


def expressed_call(call: OpCall) -> OpCall:
    """A copy of `call` whose quantized operand and result types read as their expressed types.

    The copy shares the op, attributes and interpreter; it has its own memo, so anything an
    evaluator caches from types is computed for the float types.
    """
    view = copy.copy(call)
    view.operand_types = [expressed_type(t) for t in call.operand_types]
    view.result_types = [expressed_type(t) for t in call.result_types]
    view.memo = {}
    return view


def wrap_quantized(evaluator: Callable, call: OpCall) -> Callable:
    """The evaluator running `call` when its op has quantized operands or results."""
    if call.op.name in STORAGE_OPS and _shares_parameters(call):
        return evaluator
    float_call = expressed_call(call)
    operand_types = [quantized_element(t) for t in call.operand_types]
    result_types = [quantized_element(t) for t in call.result_types]
    single = len(call.result_types) == 1

    def dequantize_op_quantize(_call: OpCall, *operands: Any) -> Any:
        inputs = [
            dequantize(x, q) if q is not None else x
            for x, q in zip(operands, operand_types)
        ]
        out = evaluator(float_call, *inputs)
        results = [out] if single else list(out)
        converted = [
            quantize(r, q) if q is not None else r
            for r, q in zip(results, result_types)
        ]
        return converted[0] if single else converted

    dequantize_op_quantize.__name__ = f"dequantize_{getattr(evaluator, '__name__', 'op')}_quantize"
    return dequantize_op_quantize


def _shares_parameters(call: OpCall) -> bool:
    """True when every quantized type of the op has the same parameters (per-axis: always).

    Per-axis types may legitimately differ in their quantization dimension (transpose, reshape)
    or repeat scales (broadcast_in_dim); the spec defines those ops on storage only.
    """
    types = [q for t in (*call.operand_types, *call.result_types) if (q := quantized_element(t)) is not None]
    if any(q.is_per_axis for q in types):
        return True
    # Float operands next to quantized ones (a float padding value, say) need conversions.
    tensors = [t for t in (*call.operand_types, *call.result_types) if isinstance(t, TensorType)]
    values = [t for t in tensors if quantized_element(t) is not None or _is_float(t)]
    if len(values) != len(types):
        return False
    first = types[0]
    return all(q == first for q in types[1:])


def _is_float(t: TensorType) -> bool:
    return t.element.numpy_dtype.kind == "f" or (
        t.element.numpy_dtype.kind == "V" and compute_dtype(t.element.numpy_dtype).kind == "f"
    )
