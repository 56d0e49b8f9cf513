"""Repeated runs of ops: a model built from identical layers shows as one run of op signatures
repeated back to back (a tandem repeat), at any program size.

Trying every period is quadratic (100,000 ops: minutes). Instead the periods worth checking come
from the program itself: inside a run repeated with period P, each op's signature recurs P ops
later, so P is the most common distance between an occurrence of a signature and its next few
occurrences. A histogram of those distances (n log n: one sort) names a handful of candidate
periods; each is checked exactly in one linear pass.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional, Sequence

import numpy as np

MIN_REPEAT_PERIOD = 3
# A signature that occurs m times inside one repeated unit recurs a period later at its m-th next
# occurrence: looking this many occurrences ahead finds periods of units with repeated ops.
OCCURRENCES_AHEAD = 6
CANDIDATE_PERIODS = 12
# A run repeated back to back must cover this share of its stretch of ops to be worth a group
# (and bounds the work of looking again before and after it: each look shrinks the stretch).
MIN_COVER_SHARE = 1 / 16
MAX_NESTING = 6


def candidate_periods(seq: np.ndarray, limit: int = CANDIDATE_PERIODS) -> list[int]:
    """The periods that most often separate equal signatures, most frequent first."""
    n = len(seq)
    if n < 2 * MIN_REPEAT_PERIOD:
        return []
    order = np.argsort(seq, kind="stable")  # positions grouped by signature, ascending in each
    ordered = seq[order]
    counts = np.zeros(n // 2 + 1, dtype=np.int64)
    for ahead in range(1, OCCURRENCES_AHEAD + 1):
        if ahead >= n:
            break
        same = ordered[ahead:] == ordered[:-ahead]
        distances = (order[ahead:] - order[:-ahead])[same]
        distances = distances[(distances >= MIN_REPEAT_PERIOD) & (distances <= n // 2)]
        if len(distances):
            counts += np.bincount(distances, minlength=len(counts))[: len(counts)]
    ranked = np.argsort(-counts, kind="stable")[:limit]
    return [int(p) for p in ranked if counts[p] > 0]


def repeat_at_period(seq: np.ndarray, period: int) -> Optional[tuple[int, int, int]]:
    """(start, period, count) of the longest run repeated back to back with this period."""
    same = seq[:-period] == seq[period:]
    if not same.any():
        return None
    # Runs of True: positions where seq[i] == seq[i + period] for `length` consecutive i.
    padded = np.concatenate(([False], same, [False]))
    edges = np.flatnonzero(padded[1:] != padded[:-1])
    starts, ends = edges[0::2], edges[1::2]
    counts = (ends - starts + period) // period
    best = int(np.argmax(counts))
    if counts[best] < 2:
        return None
    return int(starts[best]), period, int(counts[best])


def find_tandem_repeat(signatures: Sequence[int]) -> Optional[tuple[int, int, int]]:
    """(start, period, count) of the run `s[start:start+period]` repeated `count` ≥ 2 times in a
    row that covers the most items; the shortest period wins ties. None if nothing repeats.
    Only candidate periods are checked (see the module's docstring): n log n in all."""
    seq = np.asarray(signatures, dtype=np.int64)
    best: Optional[tuple[int, int, int]] = None
    for period in sorted(candidate_periods(seq)):
        found = repeat_at_period(seq, period)
        if found is not None and (best is None or found[1] * found[2] > best[1] * best[2]):
            best = found
    return best


@dataclass
class Span:
    """Positions [start, stop) of a sequence; `units` are the repeated runs found inside it."""

    start: int
    stop: int
    index: int = 0  # which repeat (0-based) of `count`
    count: int = 0
    units: list["Span"] = field(default_factory=list)


def aligned_start(seq: np.ndarray, start: int, period: int, count: int, cut_costs: Optional[np.ndarray]) -> int:
    """Where the units of a repeat found at `start` begin. The periodic stretch may run on past
    its last whole unit; the units can then start a few ops later and still be `count`: among
    those starts, the one whose unit boundaries the fewest values cross (`cut_costs[i]`: values
    crossing a cut before position i), so that a unit is a layer, not a layer shifted by an op."""
    stop = start + period * count
    slack = 0
    while slack < period - 1 and stop + slack < len(seq) and seq[stop + slack] == seq[stop + slack - period]:
        slack += 1
    if cut_costs is None or slack == 0:
        return start
    totals = [int(cut_costs[start + shift : stop + shift + 1 : period].sum()) for shift in range(slack + 1)]
    return start + int(np.argmin(totals))


def repeated_spans(seq: np.ndarray, large: int, cut_costs: Optional[np.ndarray] = None, depth: int = 0) -> list[Span]:
    """The repeats of a sequence as spans, in program order, looking again before and after each
    repeat found; a unit longer than `large` ops gets its own inner repeats (shorter ones read
    fine as they are). `cut_costs` (len(seq) + 1 of them) says where units are best cut."""
    n = len(seq)
    if n < 2 * MIN_REPEAT_PERIOD or depth >= MAX_NESTING:
        return []
    found = find_tandem_repeat(seq)
    if found is None or found[1] * found[2] < max(2 * MIN_REPEAT_PERIOD, n * MIN_COVER_SHARE):
        return []
    _, period, count = found
    start = aligned_start(seq, found[0], period, count, cut_costs)
    stop = start + period * count

    def costs(lo: int, hi: int) -> Optional[np.ndarray]:
        return None if cut_costs is None else cut_costs[lo : hi + 1]

    inner = repeated_spans(seq[start:start + period], large, costs(start, start + period), depth + 1) if period > large else []
    spans = repeated_spans(seq[:start], large, costs(0, start), depth + 1)
    for i in range(count):
        offset = start + i * period  # every unit has the same signatures: the same inner repeats
        spans.append(Span(offset, offset + period, i, count, [_shifted(s, offset) for s in inner]))
    spans += [_shifted(s, stop) for s in repeated_spans(seq[stop:], large, costs(stop, n), depth + 1)]
    return spans


def _shifted(span: Span, offset: int) -> Span:
    return Span(span.start + offset, span.stop + offset, span.index, span.count, [_shifted(s, offset) for s in span.units])


__all__ = ["find_tandem_repeat", "candidate_periods", "repeat_at_period", "repeated_spans", "aligned_start", "Span", "MIN_REPEAT_PERIOD"]
