"""What a TPU does differently per op: which contraction passes, where subnormals are flushed,
which types it refuses, and the notes that explain a result that differs from the CPU's.

Everything here is decided from an op's definition (ir/opset traits) and types, once per op when
its block is compiled (TpuBackend.wrap_evaluator); nothing names individual ops.
"""
from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, Callable, Iterable, Optional

import numpy as np

from ...ir.core import Operation, Value
from ...ir.errors import ExecutionError
from ...ir.opset import (
    callee_attribute,
    family_of,
    has_aliasing_regions,
    has_expandable_body,
    is_float_math,
    is_transcendental,
    lookup,
)
from ...ir.types import ComplexType, TensorType, TupleType, Type
from .numerics import BF16, PASS_PLANS, flush_subnormals, flushes

_PRECISION_PASSES = {"DEFAULT": 1, "HIGH": 3, "HIGHEST": 6}
# A precision as StableHLO (`HIGHEST`) or CHLO (`#chlo<precision HIGHEST>`) spells it.
_PRECISION_WORD = re.compile(r"\b(HIGHEST|HIGH|DEFAULT)\b")
_PRESET_NAMES = {1: "BF16_BF16_F32", 3: "BF16_BF16_F32_X3", 6: "BF16_BF16_F32_X6"}


class UnsupportedOnTpu(ValueError):
    """An attribute or type a TPU does not run (a dot algorithm, f64 without --allow-f64)."""


# -- contractions ------------------------------------------------------------------------------------


def mxu_passes(precision: Iterable[str] = (), algorithm: Any = None) -> int:
    """1, 3 or 6: the bf16 passes an f32 contraction takes on a TPU.

    `precision` is the op's precision_config (the higher of the two operands' counts; none is
    DEFAULT); `algorithm` a #stablehlo.dot_algorithm, of which a TPU runs BF16_BF16_F32, _X3 and
    _X6 (component counts 1, as JAX writes them, or the bf16 parts per operand, as the spec's
    example does). Anything else raises UnsupportedOnTpu."""
    if algorithm is not None:
        return _algorithm_passes(algorithm)
    passes = 1
    for value in precision:
        word = _PRECISION_WORD.search(str(value).upper())
        passes = max(passes, _PRECISION_PASSES[word.group(1)] if word else 1)
    return passes


def _algorithm_passes(algorithm: Any) -> int:
    lhs, rhs, acc = (str(getattr(algorithm, f, "")) for f in ("lhs_precision_type", "rhs_precision_type",
                                                               "accumulation_type"))
    operations = int(getattr(algorithm, "num_primitive_operations", 0))
    plan = PASS_PLANS.get(operations)
    if lhs == rhs == "bf16" and acc == "f32" and plan is not None:
        parts = plan[0]
        counts = (int(algorithm.lhs_component_count), int(algorithm.rhs_component_count))
        if all(count in (1, parts) for count in counts):
            return operations
    supported = ", ".join(_PRESET_NAMES.values())
    # Named as JAX names its presets (TF32_TF32_F32, BF16_BF16_F32_X9), not as a Python repr.
    name = "_".join(t.upper() for t in (lhs, rhs, acc)) + (f"_X{operations}" if operations > 1 else "")
    counts = (getattr(algorithm, "lhs_component_count", 1), getattr(algorithm, "rhs_component_count", 1))
    if tuple(counts) != (1, 1):
        name += f" with component counts {counts[0]} and {counts[1]}"
    raise UnsupportedOnTpu(f"dot algorithm {name} is not supported on TPU (a TPU runs {supported})")


def is_bf16_exact(dtype: np.dtype) -> bool:
    """Whether every value of float type `dtype` is a bf16 value (bf16 and the 8-bit floats), so
    a contraction of such operands is one exact-product pass whatever its precision."""
    return dtype.itemsize == 1 or dtype == BF16


# -- types -------------------------------------------------------------------------------------------


def _element_types(types: Iterable[Type]) -> Iterable[Type]:
    for t in types:
        if isinstance(t, TupleType):
            yield from _element_types(t.types)
        elif isinstance(t, TensorType):
            yield t.element
        else:
            yield t


def _signature(op: Operation) -> tuple[Type, ...]:
    return (*(v.type for v in op.operands), *(v.type for v in op.results))


@lru_cache(maxsize=4096)
def _signature_facts(types: tuple[Type, ...]) -> tuple[Optional[str], Optional[str], bool]:
    """(first 64-bit float type, first 64-bit integer type, whether any has its subnormals flushed:
    f32 or bf16) of an op with these operand and result types: worked out once per signature (a program has few), since
    every op of every session asks when its step is compiled."""
    wide_float = wide_int = None
    flushed = False
    for element in _element_types(types):
        name = str(element)
        if wide_float is None and (name == "f64" or (isinstance(element, ComplexType) and str(element.element) == "f64")):
            wide_float = name
        if wide_int is None and name in ("i64", "si64", "ui64"):
            wide_int = name
        dtype = getattr(element, "numpy_dtype", None) if not isinstance(element, ComplexType) else None
        if dtype is not None and flushes(np.dtype(dtype)):
            flushed = True
    return wide_float, wide_int, flushed


def sixty_four_bit(op: Operation) -> tuple[Optional[str], Optional[str]]:
    """(the first 64-bit float type of `op`'s operands/results, the first 64-bit integer one)."""
    wide_float, wide_int, _ = _signature_facts(_signature(op))
    return wide_float, wide_int


def passes_values_on(op: Operation) -> bool:
    """Whether `op` only hands its operands to a body or callee (a call, while, if, case): the ops
    inside compute, so they, not it, are the first to need a type."""
    return callee_attribute(op.name) is not None or has_aliasing_regions(op.name)


def f64_refusal(op: Operation, target: str) -> Optional[str]:
    """The message refusing `op` on a TPU when it needs f64 or complex<f64>, else None. The op that
    needs them is the first that computes with or holds such values, not a call or loop passing
    them on (its body is refused at its own first such op)."""
    wide_float, _ = sixty_four_bit(op)
    if wide_float is None or passes_values_on(op):
        return None
    return (f"{wide_float} is not supported on {target}: TPUs have no 64-bit floating point; "
            f"--allow-f64 emulates it in f64")


# -- subnormals ---------------------------------------------------------------------------------------


def computes_with_floats(op: Operation) -> bool:
    """Whether `op` computes with float values: its definition says so, or it applies an expandable
    body (a reducer) whose every op does and which returns floats. Such a body may be applied as a
    numpy ufunc without running its ops, so the op flushes around it; a body with other ops always
    runs as a region, where its own ops flush."""
    if is_float_math(op.name):
        return True
    if not has_expandable_body(op.name) or not op.regions:
        return False
    for region in op.regions:
        if not region.blocks:
            return False
        body = region.blocks[0].operations
        computing, terminator = body[:-1], body[-1] if body else None
        if not computing or terminator is None or not all(is_float_math(o.name) for o in computing):
            return False
        returned = [getattr(t, "numpy_dtype", None) for t in _element_types(v.type for v in terminator.operands)]
        if not all(d is not None and flushes(np.dtype(d)) for d in returned):
            return False
    return True


def touches_flushed_floats(op: Operation) -> bool:
    """Whether any operand or result of `op` is f32 or bf16 (the types a TPU flushes)."""
    return _signature_facts(_signature(op))[2]


def flushes_around(op: Operation) -> bool:
    """Whether a TPU flushes the subnormal operands and results of `op`."""
    return computes_with_floats(op) and touches_flushed_floats(op)


def may_hold_subnormals(value: Value, depth: int = 0) -> bool:
    """Whether `value` may hold subnormal f32/bf16 elements when an op reads it. Not when that is
    provable from the program: a result of an op that flushes its results, a data-movement result
    (no body, the element type of its data operand) of values that hold none, a constant literal
    without any. Block arguments and everything else may."""
    owner = value.owner
    if not isinstance(owner, Operation):
        return True
    if flushes_around(owner):
        return False
    if depth >= _PROOF_DEPTH:
        return True
    family = family_of(owner.name)
    if family == "data_movement" and not owner.regions and owner.operands:
        element = _tensor_element(value)
        if element is None or element != _tensor_element(owner.operands[0]):
            return True  # a bitcast_convert from another type makes new bit patterns
        return any(may_hold_subnormals(v, depth + 1) for v in owner.operands if _tensor_element(v) == element)
    if family == "constant" and not owner.operands:
        try:
            literal = getattr(owner.attributes.get("value"), "array", None)
        except Exception:  # noqa: BLE001 - a literal that does not decode fails where the constant runs
            return True
        return not isinstance(literal, np.ndarray) or flush_subnormals(literal) is not literal
    return True


# How many data-movement ops back a proof looks (a longer chain is flushed at its reader).
_PROOF_DEPTH = 16


def _tensor_element(value: Value) -> Optional[Type]:
    type = value.type
    return type.element if isinstance(type, TensorType) else None


def flushed_operands(op: Operation) -> tuple[bool, ...]:
    """For each operand of `op`, whether a flushing `op` flushes it (it may hold subnormals)."""
    return tuple(may_hold_subnormals(v) for v in op.operands)


def flushing(op: Operation, evaluator: Callable, flushed: Optional[tuple[bool, ...]] = None) -> Callable:
    """`evaluator` with subnormal f32/bf16 operands and results flushed to signed zero.
    Only the operands `flushed` marks (by default flushed_operands(op)) are looked at: the others
    provably hold no subnormals."""
    single = len(op.results) == 1
    fresh = flushed_operands(op) if flushed is None else flushed
    if not any(fresh):
        def flushed_results(call: Any, *operands: Any) -> Any:
            out = evaluator(call, *operands)
            return flush_subnormals(out) if single else [flush_subnormals(x) for x in out]

        return flushed_results

    def flushed_both(call: Any, *operands: Any) -> Any:
        out = evaluator(call, *(flush_subnormals(x) if f else x for x, f in zip(operands, fresh)))
        return flush_subnormals(out) if single else [flush_subnormals(x) for x in out]

    return flushed_both


def refusing(op: Operation, message: str) -> Callable:
    """An evaluator raising `message` at `op`'s location."""

    def refuse(call: Any, *operands: Any) -> Any:
        raise ExecutionError(f"{op.name}: {message}", op.pos)

    return refuse


# -- notes ---------------------------------------------------------------------------------------------


def contraction_note(op: Operation, mxu_width: int) -> Optional[str]:
    """Why a float contraction's result differs on a TPU, or None when `op` is no float contraction
    (or its algorithm is refused: the run says so)."""
    opdef = lookup(op.name)
    if opdef is None or opdef.family != "contraction" or not is_float_math(op.name):
        return None
    dtypes = [getattr(v.type, "numpy_dtype", None) for v in op.operands[:2]]
    if len(dtypes) < 2 or any(d is None or (np.dtype(d).kind != "f" and not is_bf16_exact(np.dtype(d))) for d in dtypes):
        return None
    if not {"precision_config", "algorithm", "einsum_config"} & set(opdef.attrs):
        return None  # contractions that do not multiply matrices on the MXU (fft, cholesky, ...)
    chunks = f"f32 accumulation in {mxu_width}-wide K chunks (order approximate)"
    if all(is_bf16_exact(np.dtype(d)) for d in dtypes):
        return f"{op.name} of {dtypes[0]} operands: exact bf16 products on the MXU, {chunks}"
    algorithm = op.attributes.get("algorithm")
    precision = tuple(str(p) for p in (op.attributes.get("precision_config") or ()))
    try:
        passes = mxu_passes(precision, algorithm)
    except UnsupportedOnTpu:
        return None
    names = {count: name for name, count in _PRECISION_PASSES.items()}
    setting = f"algorithm {_PRESET_NAMES[passes]}" if algorithm is not None else f"{names[passes]} precision"
    if passes == 1:
        how = "operands rounded to bf16 on TPU (1 MXU pass)"
    else:
        how = f"operands split into bf16 parts, {passes} MXU passes (XLA's split; TPU's own is not public: approximate)"
    return f"{op.name} at {setting}: {how}, {chunks}"


def transcendental(op: Operation) -> bool:
    """An op whose result a TPU computes with its own polynomial (its definition says it is
    transcendental; an exact op such as chlo.square rounds its IEEE result as the CPU does)."""
    return is_transcendental(op.name)


__all__ = [
    "UnsupportedOnTpu", "computes_with_floats", "contraction_note", "f64_refusal", "flushed_operands", "flushes_around",
    "flushing", "is_bf16_exact", "may_hold_subnormals",
    "mxu_passes", "refusing", "sixty_four_bit", "touches_flushed_floats", "transcendental",
]
