"""The check dialect, JAX's `custom_call @check.*` spellings, other custom calls, interpreter ops.

Tolerances follow openxla/stablehlo's CheckOps.td and its translate driver: `expect_almost_eq`
compares absolute differences (default 1e-4; 1e-3 in the custom_call spelling), `expect_close`
counts ULPs (custom_call spelling: 0..3 ULPs; see `ulp_difference`), NaN matches NaN. A failing
check does not stop the run: it is recorded on the interpreter, so every failure is reported.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from ..ir.core import Operation
from ..ir.dtypes import bit_width, is_float_dtype
from ..ir.ml_types import finfo
from ..ir.phrases import Phrase
from ..ir.types import TensorType
from .elementwise_provenance import SAME_INDEX
from .provenance import ProvenanceQuery, Source, explains
from .registry import OpCall, op


@dataclass
class CheckOutcome:
    op: Operation
    kind: str
    passed: bool
    message: str = ""

    @property
    def where(self) -> str:
        return str(self.op.pos) if self.op.pos is not None else self.op.name


def record_check(call: OpCall, kind: str, failure: Optional[str]) -> bool:
    call.interpreter.checks.append(CheckOutcome(call.op, kind, failure is None, failure or ""))
    return failure is None


# -- comparisons -----------------------------------------------------------------------------


def _as_compare(array: np.ndarray) -> np.ndarray:
    """Float-comparable view: narrow floats and int4 in a numpy type numpy compares natively."""
    dtype = array.dtype
    if dtype.kind == "V" or dtype == np.float16:
        return array.astype(np.float64 if is_float_dtype(dtype) else np.int64)
    return array


def _mismatch_message(mask: np.ndarray, actual: np.ndarray, expected: np.ndarray, extra: str = "") -> Optional[str]:
    bad = np.argwhere(mask)
    if bad.size == 0 and not (mask.ndim == 0 and bool(mask)):
        return None
    if mask.ndim == 0:
        return f"value doesn't match: {actual} (actual) vs {expected} (expected){extra}"
    total = len(bad)
    shown = []
    for index in bad[:3]:
        i = tuple(int(k) for k in index)
        shown.append(f"at {list(i)}: {actual[i]} (actual) vs {expected[i]} (expected)")
    more = f" (and {total - 3} more)" if total > 3 else ""
    return f"{total} of {mask.size} elements don't match{extra}: " + "; ".join(shown) + more


def expect_eq_failure(actual: np.ndarray, expected: np.ndarray) -> Optional[str]:
    actual = np.asarray(actual)
    expected = np.asarray(expected)
    if actual.shape != expected.shape:
        return f"shapes differ: {actual.shape} (actual) vs {expected.shape} (expected)"
    a, e = _as_compare(actual), _as_compare(expected)
    if a.dtype.kind in "fc":
        same = (a == e) | (np.isnan(a) & np.isnan(e))
    else:
        same = a == e
    return _mismatch_message(~same, actual, expected)


def _approx_equal_real(a: np.ndarray, e: np.ndarray, tolerance: float) -> np.ndarray:
    both_nan = np.isnan(a) & np.isnan(e)
    equal = a == e
    finite = np.isfinite(a) & np.isfinite(e)
    same_sign = np.signbit(a) == np.signbit(e)
    # The reference requires equal signs even for values within tolerance, except exact zeros.
    close = finite & (same_sign | (a == 0) | (e == 0)) & (np.abs(a - e) <= tolerance)
    return equal | both_nan | close


def expect_almost_eq_failure(actual: np.ndarray, expected: np.ndarray, tolerance: float) -> Optional[str]:
    actual = np.asarray(actual)
    expected = np.asarray(expected)
    if actual.shape != expected.shape:
        return f"shapes differ: {actual.shape} (actual) vs {expected.shape} (expected)"
    a, e = _as_compare(actual), _as_compare(expected)
    if a.dtype.kind == "c":
        ok = _approx_equal_real(a.real, e.real, tolerance) & _approx_equal_real(a.imag, e.imag, tolerance)
    elif a.dtype.kind == "f":
        ok = _approx_equal_real(a.astype(np.float64), e.astype(np.float64), tolerance)
    else:
        ok = a == e
    return _mismatch_message(~ok, actual, expected, f" within tolerance {tolerance:g}")


ULP_MAX = np.uint64(np.iinfo(np.uint64).max)


def ulp_difference(actual: np.ndarray, expected: np.ndarray) -> np.ndarray:
    """Per-element ULP distance (uint64) with the rules of the reference's check.expect_close.

    Identical bit patterns are 0 apart, and so are two NaNs (quiet or signalling, any payload).
    Two finite values are as many ULPs apart as there are representable values between them:
    the distance of their magnitudes' bit patterns, summed when the signs differ, so that +0 and
    -0 are 0 apart and zero and the smallest subnormal 1 apart, and subnormals count like any
    other step. Any other pair holding a non-finite value (a finite value and an infinity or a
    NaN, two infinities of opposite signs) is the maximum distance. Complex values take the
    larger distance of their two parts. This works on the bit patterns of every float type:
    f64 to f4, the types without negative zero (fnuz) and the unsigned f8E8M0FNU alike.
    """
    if actual.dtype.kind == "c":
        return np.maximum(ulp_difference(actual.real, expected.real), ulp_difference(actual.imag, expected.imag))
    a_bits, a_negative = _magnitude_bits(actual)
    b_bits, b_negative = _magnitude_bits(expected)
    a_wide = actual.astype(np.float64)
    b_wide = expected.astype(np.float64)
    finite = np.isfinite(a_wide) & np.isfinite(b_wide)
    # Magnitudes stay below 2**63, so neither the sum nor the difference wraps around.
    apart = np.where(a_negative != b_negative, a_bits + b_bits, np.maximum(a_bits, b_bits) - np.minimum(a_bits, b_bits))
    identical = (a_bits == b_bits) & (a_negative == b_negative)
    both_nan = np.isnan(a_wide) & np.isnan(b_wide)
    return np.where(identical | both_nan, np.uint64(0), np.where(finite, apart, ULP_MAX))


def _magnitude_bits(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(bit pattern without the sign bit as uint64, sign bit set) of a float array of any width."""
    dtype = values.dtype
    width = bit_width(dtype)
    storage = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[dtype.itemsize]
    bits = values.view(storage).astype(np.uint64)  # same item size: any strides will do
    bits &= np.uint64((1 << width) - 1)  # f4/f6 keep their encoding in the low bits of a byte
    if float(finfo(dtype).min) > 0:  # f8E8M0FNU: no sign bit, every bit is exponent
        return bits, np.zeros(bits.shape, bool)
    sign = np.uint64(1 << (width - 1))
    return bits & ~sign, (bits & sign) != 0


def expect_close_failure(actual: np.ndarray, expected: np.ndarray, min_ulp: int, max_ulp: int) -> Optional[str]:
    actual = np.asarray(actual)
    expected = np.asarray(expected)
    if actual.shape != expected.shape:
        return f"shapes differ: {actual.shape} (actual) vs {expected.shape} (expected)"
    if actual.dtype.kind != "c" and not is_float_dtype(actual.dtype):
        return expect_eq_failure(actual, expected)
    diff = ulp_difference(actual, expected)
    bad = (diff < np.uint64(min_ulp)) | (diff > np.uint64(max_ulp))
    if not bad.any():
        return None
    worst = diff[bad].max()
    distance = "a non-finite mismatch" if worst == ULP_MAX else f"{int(worst)} ULP"
    return _mismatch_message(bad, actual, expected, f" within {min_ulp}..{max_ulp} ULP (farthest: {distance})")


def _const(call: OpCall) -> np.ndarray:
    return call.attr("value").array


# -- check dialect ---------------------------------------------------------------------------


@op("check.expect_eq")
def expect_eq(call: OpCall, lhs: np.ndarray, rhs: np.ndarray) -> list:
    record_check(call, "expect_eq", expect_eq_failure(lhs, rhs))
    return []


@op("check.expect_eq_const", "check.eq")
def expect_eq_const(call: OpCall, lhs: np.ndarray) -> Any:
    passed = record_check(call, "expect_eq", expect_eq_failure(lhs, _const(call)))
    return np.array(passed) if call.result_types else []


@op("check.expect_almost_eq")
def expect_almost_eq(call: OpCall, lhs: np.ndarray, rhs: np.ndarray) -> list:
    tolerance = float(call.attr("tolerance", 1e-4))
    record_check(call, "expect_almost_eq", expect_almost_eq_failure(lhs, rhs, tolerance))
    return []


@op("check.expect_almost_eq_const", "check.almost_eq")
def expect_almost_eq_const(call: OpCall, lhs: np.ndarray) -> Any:
    tolerance = float(call.attr("tolerance", 1e-4))
    passed = record_check(call, "expect_almost_eq", expect_almost_eq_failure(lhs, _const(call), tolerance))
    return np.array(passed) if call.result_types else []


@op("check.expect_close")
def expect_close(call: OpCall, actual: np.ndarray, expected: np.ndarray) -> list:
    low = int(call.attr("min_ulp_difference", 0))
    high = int(call.attr("max_ulp_difference", 1))
    record_check(call, "expect_close", expect_close_failure(actual, expected, low, high))
    return []


# -- custom_call -----------------------------------------------------------------------------

_CUSTOM_CHECKS = {"check.expect_eq", "check.expect_close", "check.expect_almost_eq", "check.eq"}


@op("stablehlo.custom_call")
def custom_call(call: OpCall, *operands: Any) -> Any:
    target = str(call.attr("call_target_name", ""))
    if target in _CUSTOM_CHECKS:
        return _custom_check(call, target, operands)
    handler = CUSTOM_CALL_TARGETS.get(target)
    if handler is None:
        for prefix, what in CUSTOM_CALL_REFUSALS:
            if target.startswith(prefix):
                raise call.error(f"@{target} is {what}, which hlodbg cannot run: it runs programs as XLA "
                                 "runs them on the CPU",
                                 ("compile the program for the CPU (JAX_PLATFORMS=cpu) to get a module "
                                  "hlodbg can run",))
        raise call.error(f"unknown custom_call target @{target}; hlodbg runs: {_known_targets()}")
    return handler(call, *operands)


def _known_targets() -> str:
    """Every target hlodbg runs, each LAPACK routine written once (`lapack_{s,d,c,z}potrf_ffi`)."""
    names: set[str] = set()
    letters: dict[str, str] = {}
    for name in _CUSTOM_CHECKS | set(CUSTOM_CALL_TARGETS):
        family = re.fullmatch(r"lapack_([sdcz])(\w+)_ffi", name)
        if family:
            letters[family.group(2)] = letters.get(family.group(2), "") + family.group(1)
        else:
            names.add(name)
    for routine, found in letters.items():
        names.add(f"lapack_{{{','.join(c for c in 'sdcz' if c in found)}}}{routine}_ffi")
    return ", ".join(sorted(names))


def _custom_check(call: OpCall, target: str, operands: tuple) -> Any:
    if len(operands) != 2:
        raise call.error(f"@{target} takes 2 operands (actual, expected), got {len(operands)}")
    actual, expected = operands
    if target == "check.eq":
        integer = np.asarray(expected).dtype.kind in "iub" or not _is_float_like(expected)
        failure = expect_eq_failure(actual, expected) if integer else expect_almost_eq_failure(actual, expected, 1e-4)
        passed = record_check(call, "eq", failure)
        return call.results([np.array(passed)]) if call.result_types else []
    if target == "check.expect_eq":
        failure = expect_eq_failure(actual, expected)
    elif target == "check.expect_close":
        failure = expect_close_failure(actual, expected, 0, 3)
    else:
        failure = expect_almost_eq_failure(actual, expected, 1e-3)
    record_check(call, target.split(".", 1)[1], failure)
    return call.results([]) if call.result_types else []


def _is_float_like(array: np.ndarray) -> bool:
    dtype = np.asarray(array).dtype
    return dtype.kind == "c" or is_float_dtype(dtype)


def _sharding_annotation(call: OpCall, operand: np.ndarray) -> np.ndarray:
    # On one process a sharding annotation changes nothing; the grid issue gives it meaning.
    return operand


def _layout_constraint(call: OpCall, operand: np.ndarray) -> np.ndarray:
    # jax's with_layout_constraint: fixes where the bytes go, never the values. A TPU backend
    # stores the result in the layout it names (machine/tpu/assignment.py); the value is the operand.
    return operand


def _shape_assertion(call: OpCall, condition: np.ndarray, *dims: np.ndarray) -> list:
    # jax.export checks symbolic dimensions at run time; its message has {0}, {1} ... slots.
    if not bool(np.asarray(condition)):
        message = str(call.attr("error_message", "shape assertion failed"))
        try:
            message = message.format(*[int(np.asarray(d)) for d in dims])
        except (IndexError, KeyError, ValueError):
            pass
        raise call.error(message)
    return []


CUSTOM_CALL_TARGETS = {
    "Sharding": _sharding_annotation,
    "LayoutConstraint": _layout_constraint,
    "shape_assertion": _shape_assertion,
}

# (target prefix, what such a target is) for targets no CPU can run; families add theirs.
CUSTOM_CALL_REFUSALS: list[tuple[str, str]] = []

# The element provenance of each target hlodbg can trace (target -> explainer); families add theirs.
CUSTOM_CALL_PROVENANCE: dict = {}

ANNOTATION_PASSES = Phrase("custom_call @{target} only annotates its operand: result{index} = operand{index}")


def annotation_provenance(q: ProvenanceQuery):
    """An annotation of sharding, layout or memory space: its result is its operand, index for index."""
    target = str(q.attr("call_target_name", ""))
    return q.answer([Source(0, q.index, SAME_INDEX)], [(ANNOTATION_PASSES, {"target": target, "index": q.index})])


CUSTOM_CALL_PROVENANCE.update({"Sharding": annotation_provenance, "LayoutConstraint": annotation_provenance})


@explains("stablehlo.custom_call")
def custom_call_provenance(q: ProvenanceQuery):
    target = str(q.attr("call_target_name", ""))
    explainer = CUSTOM_CALL_PROVENANCE.get(target)
    if explainer is None:
        raise q.error(f"hlodbg cannot trace the result elements of custom_call @{target} back to its operands "
                      f"(it can for {', '.join('@' + t for t in sorted(CUSTOM_CALL_PROVENANCE))})")
    return explainer(q)


# -- interpreter dialect -----------------------------------------------------------------------


@op("interpreter.print")
def print_(call: OpCall, operand: Any) -> list:
    text = _format_value(operand, call.operand_types[0])
    call.interpreter.printed.append(text)
    return []


def _format_value(value: Any, t: Any) -> str:
    array = np.asarray(value)
    body = np.array2string(array, separator=", ", threshold=1000) if array.ndim else str(array)
    return f"tensor<{t}> {body}" if not isinstance(t, TensorType) else f"{t} {body}"
