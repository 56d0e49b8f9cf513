"""Groups inside one block: by JAX name stack when ops carry locations, else by repeated structure.

JAX names every op after the trace that produced it (`jit(f)/layer_3/attn/dot_general`), so the
path minus the op's own name, minus what all ops of the block share, nests ops into the layers
and sub-modules the user wrote. Without locations, a model built from identical layers still shows
as the same run of ops repeated; the longest-covering tandem repeat becomes "repeat i of n".
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional, Sequence

import numpy as np

from hlodbg.engine.ir.core import Operation
from hlodbg.engine.ir.locations import name_stack

MIN_BLOCK_OPS = 6  # smaller blocks read fine without groups
MIN_REPEAT_PERIOD = 3


@dataclass
class Group:
    label: str
    kind: str  # "names" or "repeat"
    members: list[int] = field(default_factory=list)  # indices into the block's ops, direct ones only
    children: list["Group"] = field(default_factory=list)

    def size(self) -> int:
        return len(self.members) + sum(child.size() for child in self.children)


def group_block(ops: Sequence[Operation]) -> list[Group]:
    """Top-level groups for a block's ops (terminator excluded by the caller)."""
    if len(ops) < MIN_BLOCK_OPS:
        return []
    paths = [_scope_path(op) for op in ops]
    if sum(path is not None for path in paths) * 2 >= len(ops):
        return _groups_by_name(paths)
    return _groups_by_repeat(ops)


def _scope_path(op: Operation) -> Optional[list[str]]:
    name = name_stack(op.location)
    if not name:
        return None
    parts = [p for p in name.split("/") if p]
    return parts[:-1]  # the last part names the op itself


class _Trie:
    __slots__ = ("children", "members")

    def __init__(self):
        self.children: dict[str, _Trie] = {}
        self.members: list[int] = []

    def count(self) -> int:
        return len(self.members) + sum(c.count() for c in self.children.values())


def _groups_by_name(paths: list[Optional[list[str]]]) -> list[Group]:
    named = [p for p in paths if p]  # `jit(f)` alone names a top-level op: no constraint
    common = 0
    if named:
        shortest = min(len(p) for p in named)
        while common < shortest and all(p[common] == named[0][common] for p in named):
            common += 1
    root = _Trie()
    for index, path in enumerate(paths):
        node = root
        for part in (path or [])[common:]:
            node = node.children.setdefault(part, _Trie())
        node.members.append(index)
    # Ops directly under the root, and lone ops of single-op scopes, stay ungrouped.
    built = [_build(label, child) for label, child in root.children.items()]
    groups = [group for group in built if isinstance(group, Group)]
    if len(groups) == 1 and groups[0].size() == len(paths):
        return groups[0].children  # one group around everything says nothing
    return groups


def _build(label: str, node: _Trie):
    """A Group for a trie node with two or more ops below it, else the lone member indices."""
    # Merge single-child chains with no ops of their own: `layer_0/attn` reads better as one.
    while len(node.children) == 1 and not node.members:
        (sub_label, sub), = node.children.items()
        label, node = f"{label}/{sub_label}", sub
    if node.count() < 2:
        return node.members + [m for c in node.children.values() for m in _all_members(c)]
    group = Group(label, "names", list(node.members))
    for sub_label, sub in node.children.items():
        built = _build(sub_label, sub)
        if isinstance(built, Group):
            group.children.append(built)
        else:
            group.members.extend(built)
    group.members.sort()
    return group


def _all_members(node: _Trie) -> list[int]:
    return node.members + [m for c in node.children.values() for m in _all_members(c)]


def _signature(op: Operation) -> tuple:
    return (op.name, tuple(str(v.type) for v in op.results), len(op.operands))


def find_tandem_repeat(signatures: Sequence[int]) -> Optional[tuple[int, int, int]]:
    """(start, period, count) of the run `s[start:start+period]` repeated `count` ≥ 2 times in a
    row that covers the most items; the shortest period wins ties. None if nothing repeats."""
    seq = np.asarray(signatures, dtype=np.int64)
    n = len(seq)
    best: Optional[tuple[int, int, int]] = None
    best_cover = 0
    for period in range(MIN_REPEAT_PERIOD, n // 2 + 1):
        same = seq[:-period] == seq[period:]
        if not same.any():
            continue
        # Runs of True: positions where seq[i] == seq[i + period] for `length` consecutive i.
        padded = np.concatenate(([False], same, [False]))
        edges = np.flatnonzero(padded[1:] != padded[:-1])
        starts, ends = edges[0::2], edges[1::2]
        lengths = ends - starts
        counts = (lengths + period) // period
        covers = counts * period
        k = int(np.argmax(covers))
        if counts[k] >= 2 and covers[k] > best_cover:
            best_cover = int(covers[k])
            best = (int(starts[k]), period, int(counts[k]))
    return best


def _groups_by_repeat(ops: Sequence[Operation]) -> list[Group]:
    ids: dict[tuple, int] = {}
    signatures = [ids.setdefault(_signature(op), len(ids)) for op in ops]
    found = find_tandem_repeat(signatures)
    if found is None:
        return []
    start, period, count = found
    if period * count < MIN_BLOCK_OPS:
        return []
    return [
        Group(f"repeat {i + 1} of {count}", "repeat", list(range(start + i * period, start + (i + 1) * period)))
        for i in range(count)
    ]


__all__ = ["Group", "group_block", "find_tandem_repeat"]
