"""Excess precision: the one rounding XLA skips when a narrow-float result is widened right away.

StableHLO rounds every op's result to its type (hlodbg's `--per-op-rounding`). XLA (flag
`xla_allow_excess_precision`, on by default) may keep more precision, and so do the emulated
targets by default (they are "XLA on the CPU", "XLA on a TPU"). What XLA
on the CPU does, measured with `jax.jit` (jaxlib on the CPU, 2026) rather than read from its
passes:

- a bf16 (or f8) op that computes in f32 (arithmetic, transcendental, dot_general, ...) whose
  result is converted to f32 hands the convert its f32 value: `convert(multiply(a, b)) : bf16 ->
  f32` is `a * b` in f32, not rounded to bf16 (the shared mixed_bf16 program's result1);
- every other use of that result still sees it rounded to bf16 (the same value may be rounded for
  one user and not for the convert), chains of bf16 ops round after every op, and conversions the
  program itself chains (`convert(convert(x : f32 -> bf16) : bf16 -> f32)`) round;
- f16 ops are computed in f16 on the CPU: nothing to skip.

`keep_excess_precision` wraps both ops of such a pair. The producer also evaluates itself with
f32 results (one more element-wise op or dot, only when the switch is on) and leaves that value,
beside the rounded one it returns, for its conversion on the same thread; the conversion converts
it when the rounded value it was handed is bit for bit that one (a replay that starts between the
two, or a value recomputed alone, finds no such value and evaluates the producer again from the
frame's operands, or rounds as usual outside a frame). Every loop (the plain one, generated block
code, fused blocks, the observed and recording loops) runs the same wrapped evaluators, so all
agree. A TPU does the same inside a fusion (tpu.md §4.6); which ops XLA:TPU fuses is not
public, so there the switch applies the CPU's rule (approximate).
"""
from __future__ import annotations

import threading
from dataclasses import replace
from typing import Any, Callable, Optional

import numpy as np

from ..ir.core import Operation
from ..ir.dtypes import compute_dtype, is_narrow_float
from ..ir.opset import is_float_math
from ..ir.types import FloatType, TensorType, Type

_F32_TYPE = FloatType("f32")


def _float_dtype(type: Type) -> Optional[np.dtype]:
    if not isinstance(type, TensorType):
        return None
    dtype = getattr(type.element, "numpy_dtype", None)
    if dtype is None or not (dtype.kind == "f" or is_narrow_float(dtype)):
        return None
    return np.dtype(dtype)


def excess_producer(op: Operation) -> Optional[Operation]:
    """The op whose unrounded f32 result the widening conversion `op` would see under excess
    precision, or None when `op` is not such a conversion or its operand has no such producer."""
    if not is_float_math(op.name) or len(op.operands) != 1 or len(op.results) != 1 or op.regions:
        return None
    narrow = _float_dtype(op.operands[0].type)
    wide = _float_dtype(op.results[0].type)
    # A conversion that widens a narrow float computed in f32 (bf16, f8; not f16, native on the CPU).
    if narrow is None or wide is None or not is_narrow_float(narrow) or narrow == np.float16:
        return None
    if wide.itemsize <= narrow.itemsize or compute_dtype(narrow).itemsize > wide.itemsize:
        return None
    producer = op.operands[0].owner
    if not isinstance(producer, Operation) or producer.regions or len(producer.results) != 1:
        return None
    if not is_float_math(producer.name):
        return None
    # The producer computes in its own type: every float operand has the result's type (so a
    # conversion into bf16 written by the program is not a producer: its rounding stays).
    for operand in producer.operands:
        dtype = _float_dtype(operand.type)
        if dtype is not None and dtype != narrow:
            return None
    return producer


def excess_conversions(module: Any) -> list[Operation]:
    """The conversions of `module` excess precision changes, in program order."""
    return [op for op in module.walk() if excess_producer(op) is not None]


def mode_note(module: Any, excess_precision: bool) -> list[str]:
    """What a run of `module` should be told about the rounding in force: nothing when no
    conversion of it depends on it, else how many do and what the other mode would do."""
    changed = excess_conversions(module)
    if not changed:
        return []
    first = changed[0]
    where = f" (first at line {first.pos.line})" if first.pos is not None else ""
    if excess_precision:
        return [f"excess precision, as XLA: {len(changed)} conversion(s) to f32 take their bf16/f8 producer's "
                f"f32 value unrounded{where}; --per-op-rounding rounds it first, as the StableHLO spec says"]
    return [f"per-op rounding (--per-op-rounding), as the StableHLO spec says: {len(changed)} conversion(s) to f32 "
            f"take their producer's value rounded to bf16/f8 first{where}, which XLA does not"]


# Per thread (fused blocks run on several): producer op -> (its rounded result, its f32 result), the
# last evaluation's, taken by the conversion that reads it.
_UNROUNDED = threading.local()


def _unrounded() -> dict:
    values = getattr(_UNROUNDED, "values", None)
    if values is None:
        values = _UNROUNDED.values = {}
    return values


def _feeds_excess_conversion(op: Operation) -> bool:
    return len(op.results) == 1 and any(excess_producer(user) is op for user in op.results[0].users)


def keep_excess_precision(op: Operation, evaluator: Callable, backend: Any) -> Callable:
    """`evaluator` of `op`, wrapped when `op` is one of an excess-precision pair: a widening
    conversion converts its producer's f32 value instead of the rounded one, and the producer
    leaves that f32 value for it; `evaluator` itself for every other op."""
    producer = excess_producer(op)
    if producer is not None:
        return _convert_unrounded(producer, evaluator, backend)
    if _feeds_excess_conversion(op):
        return _keep_f32_value(op, evaluator)
    return evaluator


def _keep_f32_value(producer: Operation, evaluator: Callable) -> Callable:
    wide_calls: dict = {}

    def evaluate_keeping_f32(call: Any, *operands: Any) -> Any:
        wide_call = wide_calls.get(id(call))
        if wide_call is None or wide_call[0] is not call:
            wide_call = wide_calls[id(call)] = (call, _f32_call(call))
        # The f32 evaluation first: the rounded one may write its result into a dying operand.
        wide = np.asarray(evaluator(wide_call[1], *operands))
        result = evaluator(call, *operands)
        _unrounded()[producer] = (np.asarray(result), wide)
        return result

    return evaluate_keeping_f32


def _same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    unsigned = np.dtype(f"u{a.dtype.itemsize}")
    return bool(np.array_equal(np.ascontiguousarray(a).view(unsigned), np.ascontiguousarray(b).view(unsigned)))


def _convert_unrounded(producer: Operation, evaluator: Callable, backend: Any) -> Callable:
    load = backend.load
    widened: dict = {}

    def convert_unrounded(call: Any, operand: Any) -> Any:
        kept = _unrounded().pop(producer, None)
        operand_array = np.asarray(operand)
        if kept is not None and _same_bits(kept[0], operand_array):
            return evaluator(call, kept[1])
        # No value of this evaluation of the producer (a replay or recomputation starting here):
        # evaluate it again from the frame's operands.
        interpreter = call.interpreter
        frame = getattr(interpreter, "frame", None)
        try:
            env = frame.env
            inputs = [load(env[v], v) for v in producer.operands]
        except (AttributeError, KeyError, TypeError):
            return evaluator(call, operand)  # run outside a frame: round as usual
        step = interpreter.step_for(producer)
        wide_call = widened.get("call")
        if wide_call is None or wide_call.op is not producer:
            wide_call = widened["call"] = _f32_call(step.call)
        return evaluator(call, np.asarray(step.evaluator(wide_call, *inputs)))

    return convert_unrounded


def _f32_call(call: Any) -> Any:
    """A copy of an evaluator's OpCall whose result types have f32 elements."""
    wide = type(call).__new__(type(call))
    for name in type(call).__slots__:
        setattr(wide, name, getattr(call, name))
    wide.result_types = [replace(t, element=_F32_TYPE) if isinstance(t, TensorType) else t for t in call.result_types]
    wide.memo = {}
    wide.reuse = ()  # its result never goes into an operand's buffer: the rounded evaluation reads them next
    return wide


__all__ = ["excess_conversions", "excess_producer", "keep_excess_precision", "mode_note"]
