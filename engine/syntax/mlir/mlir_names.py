"""SSA names as MLIR's printer gives them (stablehlo-opt's output), for `print --renumber`.

MLIR names every value afresh when it prints: the entry arguments of a region are `%arg0`,
`%arg1`, ... (or the name its op gives them: `%iterArg`), other values are numbered `%0`, `%1`, ...
(one number per op; `%0#1` is its second result), and ops that name their results get those
names (`%c`, `%cst`, `%output_state, %output`), with `_0`, `_1`, ... added where a name is taken.
A region's values are numbered first, then each nested region starting where its parent region's
numbering ended; sibling regions start at the same point and may reuse each other's names.
"""
from __future__ import annotations

from typing import Optional

from ...ir.core import Module, Operation, Region
from ...ir.opset import OPS
from ...ir.types import IntegerType, TensorType


class _Counters:
    def __init__(self, value: int = 0, argument: int = 0, conflict: int = 0, used: Optional[set] = None):
        self.value, self.argument, self.conflict = value, argument, conflict
        self.used: set[str] = set(used or ())

    def unique(self, wanted: str) -> str:
        name = wanted
        while name in self.used:
            name = f"{wanted}_{self.conflict}"
            self.conflict += 1
        self.used.add(name)
        return name


def mlir_value_names(module: Module) -> dict[int, str]:
    """id(value) -> its name (with `%`) as MLIR prints `module`."""
    names: dict[int, str] = {}
    pending: list[tuple[Region, Operation, _Counters]] = [
        (region, op, _Counters()) for op in module.operations for region in op.regions
    ]
    while pending:
        region, owner, start = pending.pop()
        counters = _Counters(start.value, start.argument, start.conflict, start.used)  # a scope of its own
        _number_region(region, owner, counters, names)
        # Each nested region starts from the counters as its parent region left them.
        for block in region.blocks:
            for op in block.operations:
                for nested in op.regions:
                    pending.append((nested, op, counters))
    return names


def _number_region(region: Region, owner: Operation, counters: _Counters, names: dict[int, str]) -> None:
    argument_names = _entry_argument_names(owner, len(region.blocks[0].arguments) if region.blocks else 0)
    for index, block in enumerate(region.blocks):
        for position, argument in enumerate(block.arguments):
            if index > 0:
                names[id(argument)] = f"%{counters.value}"
                counters.value += 1
            elif argument_names:
                names[id(argument)] = "%" + counters.unique(argument_names[position])
            else:
                names[id(argument)] = "%" + counters.unique(f"arg{counters.argument}")
                counters.argument += 1
        for op in block.operations:
            _number_results(op, counters, names)


def _entry_argument_names(owner: Operation, count: int) -> list[str]:
    """The name of each entry argument its op gives it, or [] for `%argN`."""
    opdef = OPS.get(owner.name)
    given = opdef.entry_argument_names if opdef is not None else ()
    if len(given) == 1:
        return [given[0]] * count
    segments = owner.attributes.get("operandSegmentSizes")
    if not given or segments is None or len(segments) != len(given) or sum(segments) != count:
        return []
    return [name for name, size in zip(given, segments) for _ in range(int(size))]


def _number_results(op: Operation, counters: _Counters, names: dict[int, str]) -> None:
    if not op.results:
        return
    given = _result_names(op)
    if given:
        for value, wanted in zip(op.results, given):
            names[id(value)] = "%" + counters.unique(wanted)
        return
    number = counters.value
    counters.value += 1
    if len(op.results) == 1:
        names[id(op.results[0])] = f"%{number}"
    else:
        for i, value in enumerate(op.results):
            names[id(value)] = f"%{number}#{i}"


def _result_names(op: Operation) -> tuple[str, ...]:
    opdef = OPS.get(op.name)
    if opdef is None or not opdef.result_names:
        return ()
    names = opdef.result_names
    if opdef.float_result_names:
        result_type = op.results[0].type
        element = result_type.element if isinstance(result_type, TensorType) else result_type
        if not isinstance(element, IntegerType):
            names = opdef.float_result_names
    return names if len(names) == len(op.results) else ()

