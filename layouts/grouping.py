"""Groups inside one block, so that every view starts folded and no box holds too many boxes.

JAX names every op after the trace that produced it (`jit(f)/layer_3/attn/dot_general`), so the
path minus the op's own name, minus what all ops of the block share, nests ops into the layers
and sub-modules the user wrote ("names"); sibling groups that hold the same ops in the same order
(layer_0 .. layer_11) are marked as repeats, "layer_3 (4 of 12)". Without locations, a model built
from identical layers still shows as the same run of ops repeated back to back: each run becomes
"repeat i of n" (repeats.py). Last, any group or block holding more than MAX_CLUSTER_ITEMS boxes
is cut into chunks of program order, and chunks of chunks (chunking.py).

Block arguments, and constants no name places, go into the group of their first use: a
function's 500 weights sit next to the layers that read them, not in one row above everything.
"""
from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Optional, Sequence, Union

import numpy as np

from hlodbg.engine.ir.core import Operation, Value
from hlodbg.engine.ir.locations import name_stack

from .chunking import crossings, cut_points
from .repeats import MIN_REPEAT_PERIOD, Span, find_tandem_repeat, repeated_spans

MIN_BLOCK_OPS = 6  # smaller blocks read fine without groups
# At most this many boxes (ops, arguments, groups) directly inside one cluster when it can be
# avoided: a scene of 60 boxes lays out in well under a second with any engine.
MAX_CLUSTER_ITEMS = 60


@dataclass
class Group:
    label: str
    fold: str  # "names" (a JAX name stack), "repeat" (one of `count` identical runs) or "chunk"
    members: list[int] = field(default_factory=list)  # indices into the block's ops, direct ones only
    children: list["Group"] = field(default_factory=list)
    arguments: list[int] = field(default_factory=list)  # block arguments drawn directly inside
    name: str = ""  # the name-stack part of the label, without " (i of n)"
    index: int = 0  # for repeats: which one (from 0) of `count`
    count: int = 0
    ends: tuple = (None, None)  # for chunks: what names their first and last box (_end)

    def size(self) -> int:
        return len(self.members) + sum(child.size() for child in self.children)

    def span(self, known: Optional[dict[int, tuple[int, int]]] = None) -> tuple[int, int]:
        """The first and last op index inside (nested ones included); `known` remembers the
        spans of groups that do not change any more."""
        if known is not None and id(self) in known:
            return known[id(self)]
        ends = [(min(self.members), max(self.members))] if self.members else []
        ends += [child.span(known) for child in self.children]
        span = (min(lo for lo, _ in ends), max(hi for _, hi in ends)) if ends else (-1, -1)  # (-1, -1): only unused arguments
        if known is not None:
            known[id(self)] = span
        return span


def group_block(ops: Sequence[Operation], arguments: Sequence[Value] = ()) -> list[Group]:
    """Top-level groups for a block's ops (terminator excluded by the caller) and its arguments.
    Ops and arguments in no group stay directly in the block."""
    if len(ops) < MIN_BLOCK_OPS and len(ops) + len(arguments) <= MAX_CLUSTER_ITEMS:
        return []
    uses = _Uses(ops, arguments)
    signatures = _signatures(ops)
    paths = _scope_paths(ops) if len(ops) >= MIN_BLOCK_OPS else []
    by_name = bool(paths) and sum(path is not None for path in paths) * 2 >= len(ops)
    if by_name:
        root = _groups_by_name(paths)
        _mark_identical_siblings(root, signatures.tolist(), {})
    else:
        root = Group("", "root", list(range(len(ops))))
        if len(ops) >= MIN_BLOCK_OPS:
            _split_repeats(root, signatures, uses)
    _attach_to_first_use(root, ops, uses)
    # Named groups too long to read get their repeats; a block without names already has them.
    _bound_fan_out(root, signatures, uses, {}, search_root=by_name)
    return root.children


# --- uses ---------------------------------------------------------------------------------------
class _Uses:
    """For each op of the block and each block argument, its first and last user in the block
    (ops whose regions use a value count as its users)."""

    def __init__(self, ops: Sequence[Operation], arguments: Sequence[Value]):
        count = len(ops)
        made_by = {id(result): k for k, op in enumerate(ops) for result in op.results}
        made_by.update((id(a), count + j) for j, a in enumerate(arguments))  # arguments after the ops
        first = [-1] * (count + len(arguments))
        last = [-1] * (count + len(arguments))
        for k, op in enumerate(ops):
            for inner in op.walk() if op.regions else (op,):
                for value in inner.operands:
                    producer = made_by.get(id(value))
                    if producer is None or producer == k:
                        continue
                    if first[producer] < 0:
                        first[producer] = k
                    last[producer] = k
        self.first_user, self.argument_first = first[:count], first[count:]
        self.last_user, self.argument_last = last[:count], last[count:]
        self.crossing = crossings(count, list(range(count)) + self.argument_first, last)
        self.ops = ops  # chunk labels name their ops


def _signatures(ops: Sequence[Operation]) -> np.ndarray:
    """One number per op: equal for ops of the same name, result types and operand count."""
    ids: dict[tuple, int] = {}
    type_ids: dict[int, int] = {}  # id(type) -> number: the parser shares type objects, so few
    type_numbers: dict[str, int] = {}
    out = np.empty(len(ops), dtype=np.int64)
    for k, op in enumerate(ops):
        key = [op.name, len(op.operands)]
        for value in op.results:
            number = type_ids.get(id(value.type))
            if number is None:
                number = type_numbers.setdefault(str(value.type), len(type_numbers))
                type_ids[id(value.type)] = number
            key.append(number)
        out[k] = ids.setdefault(tuple(key), len(ids))
    return out


# --- name stacks ----------------------------------------------------------------------------
def _scope_paths(ops: Sequence[Operation]) -> list[Optional[list[str]]]:
    """Each op's name-stack path without the op's own name; None without a name stack."""
    known: dict[int, Optional[list[str]]] = {}  # by location: JAX's `#loc` aliases share them
    shared: dict[tuple, list[str]] = {}  # ops of one scope share one list (_groups_by_name files each list once)
    paths = []
    for op in ops:
        key = id(op.location)
        if key not in known:
            name = name_stack(op.location)
            path = [p for p in name.split("/") if p][:-1] if name else None  # the last part names the op
            known[key] = shared.setdefault(tuple(path), path) if path is not None else None
        paths.append(known[key])
    return paths


class _Trie:
    __slots__ = ("children", "members")

    def __init__(self):
        self.children: dict[str, _Trie] = {}
        self.members: list[int] = []

    def holds_two(self) -> bool:
        """Whether two or more ops are below (without counting every op of a big subtree: each
        trie node asks, so counting them all would be quadratic in the depth)."""
        seen = len(self.members)
        stack = list(self.children.values())
        while seen < 2 and stack:
            node = stack.pop()
            seen += len(node.members)
            stack.extend(node.children.values())
        return seen >= 2


def _groups_by_name(paths: list[Optional[list[str]]]) -> Group:
    named = [p for p in paths if p]  # `jit(f)` alone names a top-level op: no constraint
    common = 0
    if named:
        shortest = min(len(p) for p in named)
        while common < shortest and all(p[common] == named[0][common] for p in named):
            common += 1
    trie = _Trie()
    leaf_of: dict[int, _Trie] = {}  # id(path) -> its trie node: ops of one scope share their path
    for index, path in enumerate(paths):
        node = leaf_of.get(id(path))
        if node is None:
            node = trie
            for part in (path or [])[common:]:
                child = node.children.get(part)
                if child is None:  # not setdefault: that would make a node for every op
                    child = node.children[part] = _Trie()
                node = child
            leaf_of[id(path)] = node
        node.members.append(index)
    # Ops directly under the root, and lone ops of single-op scopes, stay ungrouped.
    root = Group("", "root", list(trie.members))
    for label, child in trie.children.items():
        built = _build(label, child)
        if isinstance(built, Group):
            root.children.append(built)
        else:
            root.members.extend(built)
    if len(root.children) == 1 and not root.members:
        root = root.children[0]  # one group around everything says nothing
    root.members.sort()
    return root


def _build(label: str, node: _Trie) -> Union[Group, list[int]]:
    """A Group for a trie node with two or more ops below it, else the lone member indices."""
    # Merge single-child chains with no ops of their own: `layer_0/attn` reads better as one.
    while len(node.children) == 1 and not node.members:
        (sub_label, sub), = node.children.items()
        label, node = f"{label}/{sub_label}", sub
    if not node.holds_two():
        return _all_members(node)
    group = Group(label, "names", list(node.members), name=label)
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


def _mark_identical_siblings(group: Group, signatures: list[int], spans: dict) -> int:
    """Mark children holding the same ops in the same order under names alike up to their
    numbers (layer_0 .. layer_11) as repeats; returns the group's structure hash."""
    hashes = [_mark_identical_siblings(child, signatures, spans) for child in group.children]
    firsts = [child.span(spans)[0] for child in group.children]
    items: list[tuple[int, object]] = [(k, signatures[k]) for k in group.members]
    items += [(first, (_stem(child.label), h)) for child, first, h in zip(group.children, firsts, hashes)]
    items.sort(key=lambda item: item[0])
    alike: dict[tuple, list[tuple[int, Group]]] = defaultdict(list)
    for child, first, h in zip(group.children, firsts, hashes):
        if child.fold == "names":
            alike[(_stem(child.label), h)].append((first, child))
    for siblings in alike.values():
        if len(siblings) < 2:
            continue
        siblings.sort(key=lambda pair: pair[0])
        for i, (_, child) in enumerate(siblings):
            child.fold, child.index, child.count = "repeat", i, len(siblings)
            child.label = f"{child.name} ({i + 1} of {len(siblings)})"
    return hash(tuple([shape for _, shape in items]))


_NUMBER = re.compile(r"\d+")


def _stem(label: str) -> str:
    return _NUMBER.sub("#", label)


# --- repeats without names ------------------------------------------------------------------
def _split_repeats(group: Group, signatures: np.ndarray, uses: _Uses, large: int = MAX_CLUSTER_ITEMS) -> bool:
    """Move runs of `group`'s direct ops repeated back to back into "repeat i of n" children."""
    members = sorted(group.members)
    # The cut before each member (and after the last) costs the values crossing it.
    cut_costs = uses.crossing[members + [members[-1] + 1]] if members else None
    spans = repeated_spans(signatures[members], large, cut_costs)
    if not spans:
        return False
    covered = np.zeros(len(members), dtype=bool)
    for span in spans:
        group.children.append(_span_group(span, members))
        covered[span.start : span.stop] = True
    group.members = [members[p] for p in np.flatnonzero(~covered)]
    return True


def _span_group(span: Span, members: list[int]) -> Group:
    group = Group(f"repeat {span.index + 1} of {span.count}", "repeat", index=span.index, count=span.count)
    inside = np.zeros(span.stop - span.start, dtype=bool)
    for unit in span.units:
        group.children.append(_span_group(unit, members))
        inside[unit.start - span.start : unit.stop - span.start] = True
    group.members = [members[span.start + p] for p in np.flatnonzero(~inside)]
    return group


# --- arguments and constants next to their first use ----------------------------------------
def _attach_to_first_use(root: Group, ops: Sequence[Operation], uses: _Uses) -> None:
    owner: list[Group] = [root] * len(ops)

    def own(group: Group) -> None:
        for k in group.members:
            owner[k] = group
        for child in group.children:
            own(child)

    own(root)
    moved: set[int] = set()
    for k in root.members:
        op, user = ops[k], uses.first_user[k]
        if not op.operands and not op.regions and user >= 0 and owner[user] is not root:
            owner[user].members.append(k)
            owner[k] = owner[user]
            moved.add(k)
    if moved:
        root.members = [k for k in root.members if k not in moved]
        for group in {id(owner[k]): owner[k] for k in moved}.values():
            group.members.sort()
    for j, user in enumerate(uses.argument_first):
        (owner[user] if user >= 0 else root).arguments.append(j)


# --- bounded fan-out ------------------------------------------------------------------------
def _bound_fan_out(group: Group, signatures: np.ndarray, uses: _Uses, spans: dict, search_root: bool = True) -> None:
    for child in list(group.children):
        _bound_fan_out(child, signatures, uses, spans)
    if search_root and group.fold in ("root", "names") and len(group.members) > MAX_CLUSTER_ITEMS:
        before = len(group.children)
        if _split_repeats(group, signatures, uses):
            _move_arguments_into(group, group.children[before:], uses)
            for child in group.children[before:]:
                _bound_fan_out(child, signatures, uses, spans)
    _chunk(group, uses, spans)


def _move_arguments_into(group: Group, new: list[Group], uses: _Uses) -> None:
    """Arguments whose first user moved into a new child group follow it there."""
    owner: dict[int, Group] = {}

    def own(child: Group) -> None:
        for k in child.members:
            owner[k] = child
        for grandchild in child.children:
            own(grandchild)

    for child in new:
        own(child)
    kept = []
    for j in group.arguments:
        home = owner.get(uses.argument_first[j])
        (home.arguments if home is not None else kept).append(j)
    group.arguments = kept


_Item = tuple[int, int, Union[int, Group]]  # (position, weight, op index, or -1 - argument, or group)


def _chunk(group: Group, uses: _Uses, spans: dict) -> None:
    """Cut `group`'s direct boxes into chunks (and chunks of chunks) of program order when there
    are more than MAX_CLUSTER_ITEMS of them; arguments go with their first user."""
    members = set(group.members)
    with_user: dict[int, list[int]] = defaultdict(list)
    loose = []  # arguments nothing in this group uses: first, before every op
    for j in group.arguments:
        user = uses.argument_first[j]
        (with_user[user] if user in members else loose).append(j)
    items: list[_Item] = [(-1, 1, -1 - j) for j in loose]
    items += [(k, 1 + len(with_user.get(k, ())), k) for k in group.members]
    items += [(child.span(spans)[0], 1, child) for child in group.children]
    if sum(weight for _, weight, _ in items) <= MAX_CLUSTER_ITEMS:
        return
    items.sort(key=lambda item: item[0])
    chunks = _cut(items, with_user, uses, spans)
    if chunks:
        group.members, group.children, group.arguments = [], chunks, []


def _cut(items: list[_Item], with_user: dict[int, list[int]], uses: _Uses, spans: dict) -> list[Group]:
    costs = [int(uses.crossing[max(position, 0)]) for position, _, _ in items]
    cuts = cut_points([weight for _, weight, _ in items], costs, MAX_CLUSTER_ITEMS)
    chunks = []
    for lo, hi in zip([0, *cuts], [*cuts, len(items)]) if cuts else ():
        run = items[lo:hi]
        chunk = Group(_chunk_label(run, uses.ops, spans), "chunk", ends=(_end(run[0][2], 0), _end(run[-1][2], -1)))
        inner = _cut(run, with_user, uses, spans) if sum(weight for _, weight, _ in run) > MAX_CLUSTER_ITEMS else []
        if inner:
            chunk.children = inner
        else:
            for _, _, item in run:
                if isinstance(item, Group):
                    chunk.children.append(item)
                elif item < 0:
                    chunk.arguments.append(-1 - item)
                else:
                    chunk.members.append(item)
                    chunk.arguments.extend(with_user.get(item, ()))
        chunks.append(chunk)
    return chunks


def _chunk_label(run: list[_Item], ops: Sequence[Operation], spans: dict) -> str:
    """"layer_0 … layer_18" when a chunk starts and ends with named groups, "repeats 1–19 of
    5,880" with anonymous repeats, else the values its first and last op make, "%1200 … %1799":
    the names on its boxes and in the source text (a chunk inside a layer numbered by its
    position in the function, "ops 10–39", matched nothing the user sees)."""
    head, tail = _end(run[0][2], 0), _end(run[-1][2], -1)
    if isinstance(head, str) and isinstance(tail, str):
        return head if head == tail else f"{head} … {tail}"
    if isinstance(head, tuple) and isinstance(tail, tuple) and head[1] == tail[1]:
        return f"repeats {head[0] + 1:,}–{tail[0] + 1:,} of {head[1]:,}"
    ends: list[int] = []
    for _, _, item in run:
        if isinstance(item, Group):
            ends.extend(item.span(spans))
        elif item >= 0:
            ends.append(item)
    if not ends:
        return "arguments"
    first, last = _result_name(ops, min(ends), max(ends), 1), _result_name(ops, max(ends), min(ends), -1)
    if first is None:
        return f"ops {min(ends) + 1:,}–{max(ends) + 1:,}"  # no op in it makes a value
    return first if first == last else f"{first} … {last}"


def _result_name(ops: Sequence[Operation], start: int, stop: int, step: int) -> Optional[str]:
    """The name of the first value made by ops[start], ops[start + step], ... up to ops[stop]."""
    for k in range(start, stop + step, step):
        if ops[k].results:
            return ops[k].results[0].name
    return None


def _end(item: Union[int, Group], side: int):
    """What names a chunk's first (side 0) or last (side -1) box: a name, (index, count) of an
    anonymous repeat, or None (an op, an argument)."""
    if not isinstance(item, Group):
        return None
    if item.fold == "chunk":
        return item.ends[side]
    if item.name:
        return item.name
    return (item.index, item.count) if item.fold == "repeat" else None


__all__ = ["Group", "group_block", "find_tandem_repeat", "MAX_CLUSTER_ITEMS", "MIN_REPEAT_PERIOD"]
