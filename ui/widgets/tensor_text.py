"""Text for tensors: cell formatting for every dtype, diffs against a previous value, histograms,
and the types of tuple elements. Plain numpy; the inspector widget draws what these return."""
from __future__ import annotations

import math
from typing import Any, Optional

import numpy as np
from textual.content import Content

from hlodbg.engine.debug.summary import ValueSummary
from hlodbg.engine.ir.dtypes import Token, compute_dtype, widen

HISTOGRAM_BINS = 40
HISTOGRAM_SAMPLE = 1_000_000  # elements the histogram reads at most
CHANGE_BLOCK = 1 << 22  # elements compared at once when counting diff changes
SPARK_LEVELS = " ▁▂▃▄▅▆▇█"
MUTED = "dim"


def format_float(number: float) -> str:
    if math.isnan(number):
        return "nan"
    if math.isinf(number):
        return "inf" if number > 0 else "-inf"
    return f"{number:.6g}"


def _format_complex(number: complex) -> str:
    real, imag = format_float(number.real), format_float(number.imag)
    return f"{real}{imag if imag.startswith('-') else '+' + imag}j"


def format_cells(array: np.ndarray) -> tuple[list, np.ndarray]:
    """Texts of a (small) array's elements as nested lists, and where they are NaN or Inf."""
    values = widen(array)
    kind = values.dtype.kind
    if kind == "b":
        texts = np.where(values, "T", "F").tolist()
    else:
        spell = str if kind in "iu" else _format_complex if kind == "c" else format_float
        flat = [spell(number) for number in values.reshape(-1).tolist()]
        texts = np.array(flat, dtype=object).reshape(values.shape).tolist()
    bad = ~np.isfinite(values) if kind in "fc" else np.zeros(values.shape, dtype=bool)
    return texts, bad


def changed_mask(value: np.ndarray, previous: np.ndarray) -> np.ndarray:
    """Elements that differ; NaN staying NaN is not a change."""
    value, previous = widen(value), widen(previous)
    differ = value != previous
    if value.dtype.kind in "fc":
        differ &= ~(np.isnan(value) & np.isnan(previous))
    return differ


def count_changed(value: np.ndarray, previous: np.ndarray) -> int:
    """How many elements differ, comparing block by block so huge tensors need no full-size mask."""
    if value.size <= CHANGE_BLOCK:
        return int(np.count_nonzero(changed_mask(value, previous)))
    if value.shape[0] == 1:
        return count_changed(value[0], previous[0])
    rows = max(1, CHANGE_BLOCK // (value.size // value.shape[0]))
    return sum(count_changed(value[start:start + rows], previous[start:start + rows])
               for start in range(0, value.shape[0], rows))


def histogram_line(array: np.ndarray, width: Optional[int] = None) -> Content:
    """A sparkline of ~HISTOGRAM_BINS bins over the finite values (|z| for complex), range at both
    ends; with `width`, fewer bins (at least 8) so that the line fits in that many columns."""
    stride = max(1, math.ceil(array.size / HISTOGRAM_SAMPLE))
    if array.flags.c_contiguous:
        sample = array.reshape(-1)[::stride]
    else:  # a strided view: pick the sample by flat index instead of copying the whole array
        sample = array.flat[np.arange(0, array.size, stride, dtype=np.int64)]
    sample = widen(np.asarray(sample))
    if sample.dtype.kind == "c":
        sample = np.abs(sample)
    sample = sample[np.isfinite(sample)] if sample.dtype.kind == "f" else sample
    if sample.size == 0:
        return Content("histogram: no finite values")
    sample = sample.astype(np.float64)
    low, high = float(sample.min()), float(sample.max())
    note = f"  (every {stride}th element)" if stride > 1 else ""
    if low == high:
        return Content(f"histogram: all {sample.size} values are {format_float(low)}{note}")
    bins = HISTOGRAM_BINS
    if width is not None:
        frame = len(f"histogram {format_float(low)} ▕▏ {format_float(high)}{note}")
        bins = max(8, min(bins, width - frame))
    if compute_dtype(array.dtype).kind in "iu":
        bins = int(min(HISTOGRAM_BINS, high - low + 1))
    counts, _ = np.histogram(sample, bins=bins, range=(low, high))
    levels = np.ceil(counts * (len(SPARK_LEVELS) - 1) / counts.max()).astype(np.int64)
    spark = "".join(SPARK_LEVELS[level] for level in levels.tolist())
    return Content.assemble("histogram ", format_float(low), " ▕", (spark, "$text-accent"), "▏ ",
                            format_float(high), (note, MUTED))


def element_type_text(value: Any) -> str:
    """An MLIR-like type for a tuple element when the tuple's type text cannot be split."""
    if isinstance(value, Token):
        return "!stablehlo.token"
    if isinstance(value, tuple):
        return "tuple<" + ", ".join(element_type_text(element) for element in value) + ">"
    array = np.asarray(value)
    shape_only = ValueSummary(kind="tensor", dtype=str(array.dtype), shape=array.shape, size=array.size)
    return f"tensor<{shape_only.type_text}>"


def split_tuple_type(type_text: str, count: int) -> Optional[list[str]]:
    """`tuple<a, b<c, d>>` -> ["a", "b<c, d>"], or None when it does not hold `count` parts."""
    text = type_text.strip()
    if not (text.startswith("tuple<") and text.endswith(">")):
        return None
    inner, parts, depth, start = text[len("tuple<"):-1], [], 0, 0
    for position, char in enumerate(inner):
        if char == "<":
            depth += 1
        elif char == ">" and inner[position - 1] != "-":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(inner[start:position].strip())
            start = position + 1
    if inner.strip():
        parts.append(inner[start:].strip())
    return parts if len(parts) == count else None


def element_count(value: Any) -> int:
    if isinstance(value, tuple):
        return sum(element_count(element) for element in value)
    return int(value.size) if isinstance(value, np.ndarray) else 1


def as_tensor(value: Any) -> Optional[np.ndarray]:
    if isinstance(value, np.ndarray):
        return value
    if isinstance(value, (np.generic, bool, int, float, complex)):
        return np.asarray(value)
    return None
