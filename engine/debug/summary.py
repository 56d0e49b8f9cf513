"""One-line statistics of runtime values, for watches, the value inspector and `hlodbg run`.

`summarize(value)` counts NaN/Inf and zeros and computes min/max/mean/std over the finite elements
of a tensor (recursively for tuples). Large arrays are processed in blocks of BLOCK elements, so
summarising a 100M-element tensor needs only a few block-sized temporaries. Mean and standard
deviation are accumulated in float64 with Chan's pairwise update, which stays accurate when the
mean is large compared with the spread.

Tensors of more than SAMPLE_ABOVE elements (a model's weights) are summarised from a sample first:
mean, standard deviation and the zero count are estimated from SAMPLE_SIZE elements read in
evenly spaced runs (a memory-mapped argument reads a few MB, not GBs), and the summary says so
(`sampled`). Min, max and the NaN/Inf counts stay exact, from one vectorised pass (about 0.2 s a
GB, a twentieth of the full statistics): a single NaN or outlier must never hide in what was not
sampled, and whatever decides on finiteness (NaN overlays, `finite`) reads these. `exact=True`
computes everything in full.

A device array (the XLA backend's values, machine/xla/device_values.py) is summarised where it is
when it is a big float array on an accelerator (a compiled reduction sends back nine numbers,
exact over every element), and brought to the host once otherwise (on the CPU always: a memcpy,
and numpy's statistics are faster there than a launched reduction).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Iterator, Optional, Union

import numpy as np

from ..ir.dtypes import Token, is_float_dtype, is_narrow_int, widen
from ..ir.types import float_storage_names
from ..machine.xla.device_values import float_statistics, is_device_array, summarised_on_device, to_host

BLOCK = 1 << 22  # elements per block: 16 MiB of float32, 32 MiB once converted to float64
SAMPLE_ABOVE = 100_000_000  # elements above which mean/std/zeros are estimated from a sample
SAMPLE_SIZE = 1_000_000  # elements in that sample
SAMPLE_RUNS = 256  # read as this many evenly spaced runs of consecutive elements

Number = Union[float, int, bool]

_MLIR_ELEMENT_NAMES = {
    "bool": "i1",
    **{f"int{w}": f"i{w}" for w in (2, 4, 8, 16, 32, 64)},
    **{f"uint{w}": f"ui{w}" for w in (2, 4, 8, 16, 32, 64)},
    "complex64": "complex<f32>",
    "complex128": "complex<f64>",
    # tf32 is stored as float32, which must print as f32.
    **float_storage_names(),
}


@dataclass(frozen=True)
class ValueSummary:
    """Statistics of one value.

    Tensors: min/max/mean/std are over the finite elements (None when there are none); for complex
    tensors they are over the magnitudes |z|. A complex element counts as NaN when either part is
    NaN, and each infinite part counts once into posinf or neginf by its own sign (so 1 element
    `inf - inf*j` adds 1 to both). Booleans have min/max False/True and mean = fraction true.
    Tuples: `elements` holds one summary per element and `size` is their number. Tokens: nothing.
    """

    kind: str  # "tensor" | "tuple" | "token"
    dtype: str  # numpy name: "float32", "bfloat16", ...; "" for tuples and tokens
    shape: tuple[int, ...]
    size: int
    nan: int = 0
    posinf: int = 0
    neginf: int = 0
    min: Optional[Number] = None
    max: Optional[Number] = None
    mean: Optional[float] = None  # accumulated in float64
    std: Optional[float] = None  # population standard deviation (ddof=0)
    zeros: int = 0
    elements: tuple["ValueSummary", ...] = ()
    sampled: int = 0  # elements mean/std/zeros were estimated from; 0: every statistic is exact

    @property
    def exact(self) -> bool:
        """Every statistic computed over every element (tuples: of every element)."""
        if self.kind == "tuple":
            return all(element.exact for element in self.elements)
        return not self.sampled

    @property
    def finite(self) -> bool:
        """No NaN or Inf anywhere (tuples: in no element)."""
        if self.kind == "tuple":
            return all(element.finite for element in self.elements)
        return self.nan == 0 and self.inf == 0

    @property
    def inf(self) -> int:
        return self.posinf + self.neginf

    @property
    def type_text(self) -> str:
        """MLIR-like spelling without `tensor<>`: `2x3xf32`, `bf16`, `4xcomplex<f32>`."""
        element = _MLIR_ELEMENT_NAMES.get(self.dtype, self.dtype)
        return "x".join([*map(str, self.shape), element])

    def describe(self) -> str:
        """One line, e.g. `2x3xf32 min -1.2 max 3.4 mean 0.5 std 1.1 · 2 NaN · 1 +Inf`."""
        if self.kind == "token":
            return "token"
        if self.kind == "tuple":
            return "tuple(" + ", ".join(element.describe() for element in self.elements) + ")"
        if self.size == 0:
            return f"{self.type_text} (empty)"
        parts = [self.type_text]
        if self.dtype.startswith("complex"):
            parts.append("|z|")
        for label, number in (("min", self.min), ("max", self.max), ("mean", self.mean), ("std", self.std)):
            if number is not None:
                estimated = "≈" if self.sampled and label in ("mean", "std") else ""
                parts.append(f"{label} {estimated}{_format_number(number)}")
        text = " ".join(parts)
        for count, label in ((self.nan, "NaN"), (self.posinf, "+Inf"), (self.neginf, "-Inf")):
            if count:
                text += f" · {count} {label}"
        if self.sampled:
            text += f" ({self.sample_text})"
        return text

    @property
    def sample_text(self) -> str:
        """`≈ sampled 1M of 268M`: what a sampled summary's mean/std/zeros were estimated from."""
        return f"≈ sampled {count_text(self.sampled)} of {count_text(self.size)}" if self.sampled else ""

    def to_json(self) -> dict:
        """All fields under fixed keys; non-finite floats become the strings "nan", "inf", "-inf"."""
        return {
            "kind": self.kind,
            "dtype": self.dtype,
            "shape": list(self.shape),
            "size": self.size,
            "nan": self.nan,
            "posinf": self.posinf,
            "neginf": self.neginf,
            "min": _json_number(self.min),
            "max": _json_number(self.max),
            "mean": _json_number(self.mean),
            "std": _json_number(self.std),
            "zeros": self.zeros,
            "elements": [element.to_json() for element in self.elements],
            "sampled": self.sampled,
        }


def count_text(count: int) -> str:
    """1048576 -> `1M`, 268435456 -> `268M`, 1500 -> `1.5k`: an element count at a glance."""
    for scale, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if count >= scale:
            return f"{count / scale:.3g}{suffix}"
    return str(count)


def _format_number(number: Number) -> str:
    if isinstance(number, bool):
        return "true" if number else "false"
    if isinstance(number, int):
        return str(number)
    return f"{number:.6g}"


def _json_number(number: Optional[Number]) -> Any:
    if isinstance(number, float) and not math.isfinite(number):
        return str(number)
    return number


def summarize(value: Any, exact: bool = False, sample_above: Optional[int] = None) -> ValueSummary:
    """The summary of a runtime value: a numpy array (or scalar), a tuple of values, or a token.

    A tensor of more than `sample_above` elements (default SAMPLE_ABOVE) gets its mean, std and
    zero count from a sample unless `exact` (see the module's note; min/max/NaN/Inf are exact
    either way). Raises TypeError for values that are not numeric tensors (strings, objects, None).
    """
    if isinstance(value, Token):
        return ValueSummary(kind="token", dtype="", shape=(), size=0)
    if isinstance(value, tuple):
        elements = tuple(summarize(element, exact, sample_above) for element in value)
        return ValueSummary(kind="tuple", dtype="", shape=(), size=len(elements), elements=elements)
    if is_device_array(value):
        if summarised_on_device(value):
            return ValueSummary(kind="tensor", dtype=str(np.dtype(value.dtype)), shape=tuple(value.shape),
                                size=int(value.size), **float_statistics(value))
        value = to_host(value)
    array = np.asarray(value)
    dtype = array.dtype
    if dtype == np.bool_:
        statistics = _bool_statistics
    elif dtype.kind in "iu" or is_narrow_int(dtype):
        statistics = _integer_statistics
    elif is_float_dtype(dtype):
        statistics = _float_statistics
    elif dtype.kind == "c":
        statistics = _complex_statistics
    else:
        raise TypeError(f"cannot summarize a value of type {type(value).__name__} with dtype {dtype}")
    limit = SAMPLE_ABOVE if sample_above is None else sample_above
    sampled = 0
    with np.errstate(all="ignore"):  # squares of huge values may overflow; that is a result, not news
        if exact or array.size <= limit or statistics is _bool_statistics:  # a bool count is cheap
            numbers = statistics(array)
        else:
            sample = _sample(array, min(SAMPLE_SIZE, limit))
            numbers = statistics(sample)
            numbers["zeros"] = round(numbers.get("zeros", 0) * array.size / sample.size)
            numbers.update(_extremes(array, statistics is _complex_statistics))
            sampled = int(sample.size)
    return ValueSummary(kind="tensor", dtype=str(dtype), shape=tuple(array.shape), size=int(array.size),
                        sampled=sampled, **numbers)


def _sample(array: np.ndarray, count: int) -> np.ndarray:
    """`count` elements of `array` in SAMPLE_RUNS evenly spaced runs of consecutive elements (in
    memory order, so a memory-mapped file is read in a few pages per run), as a 1-D copy."""
    runs = max(1, min(SAMPLE_RUNS, count))
    length = -(-count // runs)
    starts = np.linspace(0, array.size - length, runs).astype(np.int64)
    indices = (starts[:, None] + np.arange(length, dtype=np.int64)).reshape(-1)[:count]
    if array.flags.c_contiguous or array.flags.f_contiguous:
        return array.ravel(order="K")[indices]  # ravel of a contiguous array is a view
    return array[np.unravel_index(indices, array.shape)]


def _extremes(array: np.ndarray, magnitudes: bool) -> dict:
    """Exact min/max (over finite elements; of |z| for complex) and NaN/Inf counts, in one pass:
    a block whose min and max are finite holds no NaN or Inf, so only a rare non-finite block is
    looked at more closely."""
    low = high = None
    nan = posinf = neginf = 0
    floating = magnitudes or is_float_dtype(array.dtype)
    for block in _blocks(array):
        block = widen(block)
        if magnitudes:
            parts = (block.real, block.imag)
            if not all(np.isfinite(part.min()) and np.isfinite(part.max()) for part in parts):
                finite = np.isfinite(block)
                nan += int(np.count_nonzero(np.isnan(block)))
                for part in parts:
                    posinf += int(np.count_nonzero(part == np.inf))
                    neginf += int(np.count_nonzero(part == -np.inf))
                block = block[finite]
            block = np.abs(block)
        elif floating:
            if not (np.isfinite(block.min()) and np.isfinite(block.max())):
                nan += int(np.count_nonzero(np.isnan(block)))
                posinf += int(np.count_nonzero(block == np.inf))
                neginf += int(np.count_nonzero(block == -np.inf))
                block = block[np.isfinite(block)]
        if block.size:
            block_low, block_high = block.min(), block.max()
            low = block_low if low is None else min(low, block_low)
            high = block_high if high is None else max(high, block_high)
    convert = float if floating else int
    out = dict(min=None if low is None else convert(low), max=None if high is None else convert(high))
    if floating:
        out.update(nan=nan, posinf=posinf, neginf=neginf)
    return out


class _Moments:
    """Count, min, max, mean and sum of squared deviations, merged block by block."""

    __slots__ = ("count", "low", "high", "mean", "m2", "zeros")

    def __init__(self) -> None:
        self.count = 0
        self.low: Any = None
        self.high: Any = None
        self.mean = 0.0
        self.m2 = 0.0
        self.zeros = 0

    def add(self, values: np.ndarray) -> None:
        """Merge a 1-D block of finite real values (any real numeric dtype)."""
        n = int(values.size)
        if n == 0:
            return
        low, high = values.min(), values.max()
        self.low = low if self.low is None else min(self.low, low)
        self.high = high if self.high is None else max(self.high, high)
        self.zeros += n - int(np.count_nonzero(values))
        deviations = values.astype(np.float64)  # a copy: shifted in place below
        block_mean = float(deviations.sum()) / n
        if not math.isfinite(block_mean):  # float64 values near the limit: divide before adding
            block_mean = float((deviations / n).sum())
        deviations -= block_mean
        block_m2 = float(np.dot(deviations, deviations))
        if self.count == 0:
            self.count, self.mean, self.m2 = n, block_mean, block_m2
            return
        total = self.count + n
        delta = block_mean - self.mean
        self.mean += delta * (n / total)
        self.m2 += block_m2 + delta * delta * (self.count * n / total)
        self.count = total

    def statistics(self, convert: type) -> dict:
        if self.count == 0:
            return dict(zeros=self.zeros)
        return dict(min=convert(self.low), max=convert(self.high), mean=self.mean,
                    std=math.sqrt(max(self.m2, 0.0) / self.count), zeros=self.zeros)


def _blocks(array: np.ndarray) -> Iterator[np.ndarray]:
    """1-D pieces of at most BLOCK elements covering `array`, without copying it whole."""
    if array.size == 0:
        return
    if array.size <= BLOCK or array.flags.c_contiguous or array.flags.f_contiguous:
        # Statistics ignore element order, so a Fortran-ordered array is read in memory order.
        flat = array.ravel(order="K")  # a view unless the (small) array is strided
        for start in range(0, flat.size, BLOCK):
            yield flat[start:start + BLOCK]
        return
    if array.shape[0] == 1:
        yield from _blocks(array[0])
        return
    rows = max(1, BLOCK // (array.size // array.shape[0]))
    for start in range(0, array.shape[0], rows):
        yield from _blocks(array[start:start + rows])


def _bool_statistics(array: np.ndarray) -> dict:
    if array.size == 0:
        return {}
    true = int(np.count_nonzero(array))
    size = int(array.size)
    fraction = true / size
    return dict(min=true == size, max=true > 0, mean=fraction,
                std=math.sqrt(fraction * (1.0 - fraction)), zeros=size - true)


def _integer_statistics(array: np.ndarray) -> dict:
    moments = _Moments()
    for block in _blocks(array):
        moments.add(widen(block))
    return moments.statistics(int)


def _float_statistics(array: np.ndarray) -> dict:
    moments = _Moments()
    nan = posinf = neginf = 0
    for block in _blocks(array):
        block = widen(block)  # bf16/f8/f6/f4 -> float32, per block
        finite = np.isfinite(block)
        if np.count_nonzero(finite) < block.size:
            nan += int(np.count_nonzero(np.isnan(block)))
            posinf += int(np.count_nonzero(block == np.inf))
            neginf += int(np.count_nonzero(block == -np.inf))
            block = block[finite]
        moments.add(block)
    return dict(nan=nan, posinf=posinf, neginf=neginf, **moments.statistics(float))


def _complex_statistics(array: np.ndarray) -> dict:
    moments = _Moments()
    nan = posinf = neginf = 0
    for block in _blocks(array):
        finite = np.isfinite(block)  # both parts finite
        if np.count_nonzero(finite) < block.size:
            nan += int(np.count_nonzero(np.isnan(block)))  # either part NaN
            for part in (block.real, block.imag):
                posinf += int(np.count_nonzero(part == np.inf))
                neginf += int(np.count_nonzero(part == -np.inf))
            block = block[finite]
        moments.add(np.abs(block))
    return dict(nan=nan, posinf=posinf, neginf=neginf, **moments.statistics(float))
