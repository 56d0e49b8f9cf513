"""How two values of the same SSA value differ: the measure `hlodbg diff`, `--break-on diverge`
and the divergence overlay share (divergence.py runs the programs; this only compares).

Floats and complex numbers are compared element by element with a symmetric tolerance: elements
a and b agree when they are equal (NaN with NaN, Inf with the same Inf, -0 with +0) or when
|a - b| <= atol + rtol * max(|a|, |b|). Their relative error is |a - b| / max(|a|, |b|) (0 where
both are 0; Inf where one is NaN or Inf and the other is not). Symmetric, so neither target is
"the truth": a TPU's flushed subnormal (1e-40 against 0) is a relative error of 1. Integers and
booleans must be equal: a tolerance has no meaning for a saturated convert or a flipped predicate.

XLA against hlodbg's numpy backend (`rtol=None`, `XLA_TOLERANCE`: a capture of a real run against
the emulator) is held to XLA's own tolerances instead, per element type and relative to the
larger value's largest finite magnitude (at least 1), as tests/hlo_oracle.py holds hlodbg to XLA:
f64/c128 1e-9, f32/c64 2e-5, f16/bf16/f8 2e-2, integers and booleans exact. XLA vectorises and
reorders float arithmetic and has its own approximations of transcendental functions, so an
element near zero in a result of large ones may differ by far more than its own magnitude.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from ..ir.dtypes import Token, compute_dtype, widen

DEFAULT_RTOL = 1e-5
DEFAULT_ATOL = 0.0
XLA_TOLERANCE = None  # as rtol: XLA's tolerances by element type (the module docstring)
BLOCK = 1 << 20  # elements compared at a time: each float64 temporary is 8 MiB


@dataclass
class Difference:
    """The difference of two values: largest absolute and relative errors and where they are
    (an element index; for a tuple, the element's position first), and how many of `size`
    elements are beyond the tolerance."""

    max_abs: float = 0.0
    abs_index: tuple = ()
    max_rel: float = 0.0
    rel_index: tuple = ()
    beyond: int = 0
    size: int = 0
    note: str = ""  # set when the values cannot be compared element by element

    @property
    def diverged(self) -> bool:
        return self.beyond > 0

    def describe(self) -> str:
        """`max abs 0.0078 at [1, 2], max rel 0.002 at [1, 2]; 16 of 16 elements beyond`."""
        if self.note:
            return self.note
        if self.max_abs == 0:
            return "identical" if self.size else "nothing to compare"
        text = (f"max abs {_number(self.max_abs)} at {_index(self.abs_index)}, "
                f"max rel {_number(self.max_rel)} at {_index(self.rel_index)}")
        if self.beyond:
            return text + f"; {self.beyond} of {self.size} element(s) beyond tolerance"
        return text + " (within tolerance)"

    def to_json(self) -> dict:
        return {"max_abs": _json(self.max_abs), "abs_index": list(self.abs_index), "max_rel": _json(self.max_rel),
                "rel_index": list(self.rel_index), "beyond": self.beyond, "size": self.size, "note": self.note}


def xla_rtol(dtype: np.dtype) -> float:
    """XLA's tolerance for an element type, relative to a value's largest finite magnitude."""
    dtype = np.dtype(dtype)
    if dtype.kind in "iub":
        return 0.0
    if dtype.itemsize <= 2 or dtype.name.startswith(("bfloat", "float8", "float4")) or dtype.kind not in "fc":
        return 2e-2
    return 1e-9 if dtype in (np.float64, np.complex128) else 2e-5


def tolerance_text(rtol: Optional[float], atol: float) -> str:
    """`rtol 1e-05, atol 0`, or how XLA's tolerances are applied."""
    if rtol is XLA_TOLERANCE:
        return "XLA's tolerances: f32 2e-05, f64 1e-09, 16/8-bit floats 0.02 of each value's largest magnitude"
    return f"rtol {rtol:g}, atol {atol:g}"


def compare_values(a: Any, b: Any, rtol: Optional[float] = DEFAULT_RTOL, atol: float = DEFAULT_ATOL) -> Difference:
    """The Difference of two runtime values (arrays, tuples of them, tokens); `rtol=None`:
    XLA's tolerances (the module docstring)."""
    if isinstance(a, tuple) or isinstance(b, tuple):
        return _compare_tuples(a, b, rtol, atol)
    if isinstance(a, Token) or isinstance(b, Token):
        same = isinstance(a, Token) and isinstance(b, Token)
        return Difference() if same else Difference(np.inf, (), np.inf, (), 1, 1, "a token against a tensor")
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape:
        return Difference(np.inf, (), np.inf, (), max(a.size, b.size), max(a.size, b.size),
                          f"shapes differ: {list(a.shape)} against {list(b.shape)}")
    if a.size == 0:
        return Difference()
    # Block by block over the flat values, so the float64 temporaries stay a few MiB whatever
    # the size; indices are unravelled in the value's shape.
    flat_a, flat_b = a.reshape(-1), b.reshape(-1)
    numbers = compute_dtype(a.dtype).kind in "fc" or compute_dtype(b.dtype).kind in "fc"
    compare_block = _compare_numbers if numbers else _compare_exact
    largest = None
    if rtol is XLA_TOLERANCE:
        rtol = max(xla_rtol(a.dtype), xla_rtol(b.dtype))
        largest = max(1.0, _largest_finite(flat_a), _largest_finite(flat_b)) if numbers else None
    max_abs = max_rel = 0.0
    abs_at = rel_at = beyond = 0
    for start in range(0, a.size, BLOCK):
        block = compare_block(widen(flat_a[start:start + BLOCK]), widen(flat_b[start:start + BLOCK]), rtol, atol, largest)
        block_abs, block_abs_at, block_rel, block_rel_at, block_beyond = block
        if block_abs > max_abs:
            max_abs, abs_at = block_abs, start + block_abs_at
        if block_rel > max_rel:
            max_rel, rel_at = block_rel, start + block_rel_at
        beyond += block_beyond
    # No index for an error of 0: no element is where they differ most.
    return Difference(max_abs, _unravel(abs_at, a.shape) if max_abs else (), max_rel,
                      _unravel(rel_at, a.shape) if max_rel else (), beyond, int(a.size))


def _largest_finite(flat: np.ndarray) -> float:
    """The largest finite magnitude of a flat value, block by block."""
    largest = 0.0
    for start in range(0, flat.size, BLOCK):
        block = np.abs(widen(flat[start:start + BLOCK]).astype(np.complex128 if np.iscomplexobj(flat) else np.float64))
        finite = block[np.isfinite(block)]
        if finite.size:
            largest = max(largest, float(finite.max()))
    return largest


def _compare_numbers(a: np.ndarray, b: np.ndarray, rtol: float, atol: float, largest: Optional[float] = None) -> tuple:
    """(max abs, its position, max rel, its position, elements beyond) of two flat blocks; with
    `largest`, the tolerance is relative to it rather than to each pair of elements."""
    kind = np.complex128 if np.iscomplexobj(a) or np.iscomplexobj(b) else np.float64
    a, b = a.astype(kind, copy=False), b.astype(kind, copy=False)
    with np.errstate(all="ignore"):
        same = (a == b) | (np.isnan(a) & np.isnan(b))
        error = np.abs(a - b)
        error[same] = 0.0
        error[np.isnan(error)] = np.inf  # NaN against a number, or Inf against the other Inf
        scale = np.maximum(np.abs(a), np.abs(b))
        relative = np.where(error == 0, 0.0, error / np.where(scale == 0, 1.0, scale))
        relative[np.isnan(relative)] = np.inf
        beyond = ~same & ~(error <= atol + rtol * (scale if largest is None else largest))
    return _extremes(error, relative, int(np.count_nonzero(beyond)))


def _compare_exact(a: np.ndarray, b: np.ndarray, rtol: float, atol: float, largest: Optional[float] = None) -> tuple:
    """The same for integers and booleans, which must be equal (the tolerances do not apply)."""
    unequal = a != b
    if not unequal.any():
        return 0.0, 0, 0.0, 0, 0
    wide_a, wide_b = a.astype(np.float64), b.astype(np.float64)  # no wrap-around in the subtraction
    error = np.where(unequal, np.abs(wide_a - wide_b), 0.0)
    scale = np.maximum(np.abs(wide_a), np.abs(wide_b))
    relative = np.where(unequal, error / np.where(scale == 0, 1.0, scale), 0.0)
    return _extremes(error, relative, int(np.count_nonzero(unequal)))


def _extremes(error: np.ndarray, relative: np.ndarray, beyond: int) -> tuple:
    at_abs = int(np.argmax(error))
    at_rel = int(np.argmax(relative))
    return float(error[at_abs]), at_abs, float(relative[at_rel]), at_rel, beyond


def _compare_tuples(a: Any, b: Any, rtol: Optional[float], atol: float) -> Difference:
    if not (isinstance(a, tuple) and isinstance(b, tuple)) or len(a) != len(b):
        return Difference(np.inf, (), np.inf, (), 1, 1, "a tuple against a value of another shape")
    return combine([compare_values(x, y, rtol, atol) for x, y in zip(a, b)], prefix=True)


def combine(differences: list[Difference], prefix: bool = False) -> Difference:
    """One Difference for several values (an op's results; with `prefix`, a tuple's elements,
    whose position leads the index)."""
    total = Difference()
    for position, d in enumerate(differences):
        where = (position,) if prefix else ()
        if d.max_abs > total.max_abs or (d.max_abs == total.max_abs and not total.abs_index and d.abs_index):
            total.max_abs, total.abs_index = d.max_abs, where + d.abs_index
        if d.max_rel > total.max_rel:
            total.max_rel, total.rel_index = d.max_rel, where + d.rel_index
        total.beyond += d.beyond
        total.size += d.size
        total.note = total.note or d.note
    return total


def _unravel(flat: int, shape: tuple) -> tuple:
    return tuple(int(i) for i in np.unravel_index(flat, shape)) if shape else ()


def _index(index: tuple) -> str:
    return "[" + ", ".join(map(str, index)) + "]"


def _number(value: float) -> str:
    return "inf" if value == np.inf else f"{value:.3g}"


def _json(value: float) -> Any:
    return "inf" if value == np.inf else value


def describe_number(value: Optional[float]) -> str:
    return "-" if value is None else _number(value)


__all__ = ["DEFAULT_ATOL", "DEFAULT_RTOL", "Difference", "XLA_TOLERANCE", "combine", "compare_values", "describe_number",
           "tolerance_text", "xla_rtol"]
