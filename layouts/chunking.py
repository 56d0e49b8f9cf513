"""Bounded fan-out: a run of boxes too long for one scene cut into chunks in program order.

A cluster holding thousands of boxes (a flat function, 6,000 layers side by side) cannot be laid
out or read at once. Its items, in program order, are cut into chunks, and chunks of chunks, so
that no level holds more than `limit` of them: full chunks at the bottom, the levels above them
balanced (5,880 layers: 10 chunks of about 10 chunks of 60 layers). Each cut is moved,
within a quarter of a chunk of where it would fall, to where the fewest values cross it, so that
chunks read as steps of the computation and few edges run between them.
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np


def crossings(size: int, firsts: Sequence[int], lasts: Sequence[int]) -> np.ndarray:
    """`out[b]` for b in 0..size: how many values, made (or first used) at `firsts[i]` and last
    used at `lasts[i]`, cross the cut just before position b (first < b ≤ last)."""
    firsts = np.asarray(firsts, dtype=np.int64)
    lasts = np.asarray(lasts, dtype=np.int64)
    crossing = lasts > firsts
    diff = np.zeros(size + 2, dtype=np.int64)
    np.add.at(diff, firsts[crossing] + 1, 1)
    np.add.at(diff, lasts[crossing] + 1, -1)
    return np.cumsum(diff)[: size + 1]


def chunk_count(total: int, limit: int) -> int:
    """How many chunks a level of `total` boxes is cut into. The chunks a user finally opens to
    read ops are full (a 129-op layer is 3 chunks of 43, not 11 of 12); the levels above them
    share out those bottom chunks evenly, so the top is not two boxes either (5,880 layers: 10
    chunks of about 10 chunks of 60, not 2 chunks of 49 chunks of 60, which drew a 100k-op
    program folded as two boxes)."""
    bottom = math.ceil(total / limit)  # full chunks of `limit`
    if bottom <= limit:
        return max(2, bottom)
    levels = 1  # levels of chunks above the bottom ones
    while limit**levels < bottom:
        levels += 1
    return max(2, math.ceil(bottom ** (1 / levels) - 1e-9))


def cut_points(weights: Sequence[int], cut_costs: Sequence[int], limit: int) -> list[int]:
    """Where to cut items of these weights (in program order) into chunks: the item indices that
    start a new chunk. `cut_costs[i]` is how many values cross a cut just before item i. Empty
    when everything fits in one level."""
    weights = np.asarray(weights, dtype=np.int64)
    total = int(weights.sum())
    if total <= limit or len(weights) < 2:
        return []
    chunks = min(chunk_count(total, limit), len(weights))
    before = np.concatenate(([0], np.cumsum(weights)[:-1]))  # weight before item i
    costs = np.asarray(cut_costs, dtype=np.float64)
    step = total / chunks
    window = step / 4
    cuts: list[int] = []
    previous = 0
    for j in range(1, chunks):
        target = j * step
        lo = max(int(np.searchsorted(before, target - window, side="left")), previous + 1)
        hi = min(int(np.searchsorted(before, target + window, side="right")), len(weights))
        if lo >= hi:  # one heavy item spans the window: cut right after the previous cut's chunk
            lo, hi = previous + 1, min(previous + 2, len(weights))
            if lo >= hi:
                break
        # Fewest crossing values; among those the cut nearest the even split.
        score = costs[lo:hi] + np.abs(before[lo:hi] - target) / (step + 1)
        cut = lo + int(np.argmin(score))
        cuts.append(cut)
        previous = cut
    return cuts


__all__ = ["crossings", "chunk_count", "cut_points"]
