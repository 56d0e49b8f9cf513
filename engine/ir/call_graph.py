"""The call graph of a module: which functions each function names, its cycles and its depth.

A function names another through its ops' callee attribute (the `callee_attr` trait: func.call,
a composite's decomposition, a fusion's or an async wrapper's computation) and through a custom
call's `called_computations`. Programs are data: a chain of calls is as deep as the program makes
it, so every walk here keeps its own stack and none is bounded by Python's recursion limit.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, Optional

from .attributes import ArrayAttr, SymbolRef
from .core import Function, Module, Operation
from .opdefs import callee_attribute

# Attributes that name functions without the op running them itself as a call.
_FUNCTION_LIST_ATTRIBUTES = ("called_computations",)


def named_functions(op: Operation) -> list[str]:
    """The functions `op` names: its callee, then any called computations."""
    names = []
    attribute = callee_attribute(op.name)
    if attribute is not None:
        ref = op.attributes.get(attribute)
        if isinstance(ref, SymbolRef):
            names.append(ref.name)
    for attribute in _FUNCTION_LIST_ATTRIBUTES:
        refs = op.attributes.get(attribute)
        if isinstance(refs, ArrayAttr):
            names.extend(ref.name for ref in refs if isinstance(ref, SymbolRef))
    return names


def ops_with_nesting(function: Operation) -> Iterator[tuple[Operation, int]]:
    """Every op inside `function`, in textual order, with how many regions enclose it within the
    function (0 for an op of the body itself)."""
    pending: list[tuple[Operation, int]] = []
    for block in function.regions[0].blocks if function.regions else ():
        pending.extend((op, 0) for op in reversed(block.operations))
    while pending:
        op, nesting = pending.pop()
        yield op, nesting
        if op.regions:
            for region in reversed(op.regions):
                for block in reversed(region.blocks):
                    pending.extend((inner, nesting + 1) for inner in reversed(block.operations))


@dataclass(frozen=True)
class CallSite:
    op: Operation  # the op naming the callee
    callee: str
    nesting: int  # regions around `op` inside its function


@dataclass(frozen=True)
class Recursion:
    """A cycle of calls: `names[0]` calls `names[1]` ... calls `names[-1] == names[0]`; `site` is
    the op that closes it."""

    site: CallSite
    names: tuple[str, ...]

    def describe(self) -> str:
        return " -> ".join(f"@{name}" for name in self.names)


class CallGraph:
    """The call sites of every function of `module` whose callee is defined there."""

    def __init__(self, module: Module):
        self.functions: dict[str, Function] = {}
        for op in module.operations:
            if isinstance(op, Function):
                self.functions.setdefault(op.sym_name, op)
        self.sites: dict[str, list[CallSite]] = {}
        self.deepest_region: dict[str, int] = {}
        names_functions: dict[str, bool] = {}  # op name -> may it name a function (per name, not per op)
        for name, function in self.functions.items():
            sites = self.sites[name] = []
            deepest = 0
            for op, nesting in ops_with_nesting(function):
                if nesting > deepest:
                    deepest = nesting
                if not op.attributes:  # most ops name no function: no lookup for them
                    continue
                may = names_functions.get(op.name)
                if may is None:
                    may = names_functions[op.name] = callee_attribute(op.name) is not None
                if may or any(attribute in op.attributes for attribute in _FUNCTION_LIST_ATTRIBUTES):
                    sites.extend(CallSite(op, callee, nesting) for callee in named_functions(op)
                                 if callee in self.functions)
            self.deepest_region[name] = deepest

    def recursions(self) -> list[Recursion]:
        """Every cycle a depth-first walk from the functions in module order meets, once per
        closing call site (so a recursive module always gives at least one)."""
        state: dict[str, int] = {}  # 1: on the walk's path, 2: done
        found: list[Recursion] = []
        for root in self.functions:
            if root in state:
                continue
            path: list[str] = [root]
            cursors = [iter(self.sites[root])]
            state[root] = 1
            while cursors:
                site = next(cursors[-1], None)
                if site is None:
                    state[path.pop()] = 2
                    cursors.pop()
                    continue
                seen = state.get(site.callee)
                if seen == 1:
                    start = path.index(site.callee)
                    found.append(Recursion(site, (*path[start:], site.callee)))
                elif seen is None:
                    state[site.callee] = 1
                    path.append(site.callee)
                    cursors.append(iter(self.sites[site.callee]))
        return found

    def depths(self) -> dict[str, int]:
        """Function -> the deepest nesting a run of it can reach: each call counts one level and
        each region around the call (or around an op) one more. Assumes no recursion (the
        verifier rejects it); a cycle is counted once round."""
        depth: dict[str, int] = {}
        started: set[str] = set()
        for root in self.functions:
            stack: list[tuple[str, bool]] = [(root, False)]
            while stack:
                name, callees_done = stack.pop()
                if name in depth:
                    continue
                if callees_done:
                    depth[name] = max([self.deepest_region[name]]
                                      + [site.nesting + 1 + depth.get(site.callee, 0) for site in self.sites[name]])
                    continue
                started.add(name)
                stack.append((name, True))
                stack.extend((site.callee, False) for site in self.sites[name] if site.callee not in started)
        return depth


def call_depth(module: Module, entry: Optional[str] = None) -> int:
    """The depth of `entry` (CallGraph.depths); with no entry, the deepest of any function."""
    depths = CallGraph(module).depths()
    if entry is not None:
        try:
            return depths[module.function(entry).sym_name]
        except KeyError:
            return 0
    return max(depths.values(), default=0)
