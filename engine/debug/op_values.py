"""One execution of an op as an explanation reads it, and an element of one of its values.

`hlodbg explain` (the CLI) and the debugger's explain pane and provenance view (the UI) ask the
same questions of an op instance: its operands and results (None before it has run), what they
are called, and on a grid the other devices' side of a collective. `OpValues` carries that to
engine/debug/explain and engine/ops/provenance, whoever gathered it. `parse_element_index` reads
the element a user names (`--at 1,0,2`, `:explain --at 1,0,2`, `:trace %v[1,0]`), checking it
against the value's shape when the caller knows it.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Sequence

from ..ir.core import Operation
from ..ir.errors import HlodbgError
from ..ir.locations import located_name
from ..machine.process import ProcessId


def operand_label(i: int, operand) -> str:
    """'operand 1: %3'; an argument its location names, with that name ('operand 0: %arg1
    (params['w'])': JAX's pytree path); only the position for a value the text never named (the
    ops of a reducer body printed in the short `applies` form)."""
    if not operand.name:
        return f"operand {i}"
    located = located_name(operand) if operand.is_block_argument else ""
    return f"operand {i}: {operand.name}" + (f" ({located})" if located and located != operand.name.lstrip("%") else "")


def result_label(k: int, result) -> str:
    """'%5', or 'result 0' for a result the text never named."""
    return result.name or f"result {k}"


@dataclass(frozen=True)
class OpValues:
    """One execution of `op`: its values (None when it has not run, with `note` saying why when
    there is something to say), their labels, and on a grid the focused device (`process`), how
    to read another device's (operands, results) of it (`peer_values`), every device's values
    (`devices`, when gathered all at once) and the devices' numbers (`device_names`)."""

    op: Operation
    operands: Optional[Sequence[Any]] = None
    results: Optional[Sequence[Any]] = None
    process: Optional[ProcessId] = None
    peer_values: Optional[Callable[[ProcessId], tuple[Sequence[Any], Sequence[Any]]]] = None
    devices: dict = field(default_factory=dict)  # ProcessId -> (operands, results)
    device_names: dict = field(default_factory=dict)  # ProcessId -> device number
    note: Optional[str | list[str]] = None  # why there are no values, or what to know about these

    @property
    def operand_labels(self) -> list[str]:
        return [operand_label(i, o) for i, o in enumerate(self.op.operands)]

    @property
    def result_labels(self) -> list[str]:
        return [result_label(k, r) for k, r in enumerate(self.op.results)]

    def operand_type(self, i: int) -> str:
        return str(self.op.operands[i].type)

    def result_type(self, k: int) -> str:
        return str(self.op.results[k].type)


class ElementIndexError(HlodbgError):
    """An element written wrongly, or one outside the value's shape."""


def parse_element_index(text: str, shape: Optional[Sequence[int]] = None, *, option: str = "",
                        subject: str = "the value", type_text: str = "") -> tuple[int, ...]:
    """`1,0,2`, `(1, 0, 2)` (as explain prints an index), `[1, 0, 2]`; `()`, `[]` or nothing for a
    scalar's element. With `shape`, the index is checked against it and the errors say the shape;
    `option` (`--at`) and `subject` (`result #0 of %5`, of type `type_text`) name what was asked."""
    said = f"{option} {text!r}" if option else repr(text)
    inner = text.strip()
    if inner[:1] + inner[-1:] in ("()", "[]"):
        inner = inner[1:-1].strip()
    parts = [p.strip() for p in inner.split(",")] if inner else []
    if shape is None:
        if not all(p.lstrip("-").isdigit() for p in parts if p):
            raise ElementIndexError(f"an element is written as numbers separated by commas (1,0,2), not '{text}'")
        return tuple(int(p) for p in parts if p)
    shape = tuple(shape)
    if not shape and parts:
        scalar = f"{subject} is a scalar" + (f" (type {type_text})" if type_text else "")
        raise ElementIndexError(f"{said}: {scalar}: give {option or 'the index'} '()'")
    if not all(p.lstrip("-").isdigit() for p in parts):
        raise ElementIndexError(f"{said}: expected {len(shape)} comma-separated integers (the result has shape "
                                f"{list(shape)})")
    index = tuple(int(p) for p in parts)
    if len(index) != len(shape):
        raise ElementIndexError(f"{said} has {len(index)} index(es) but {subject} has rank {len(shape)} (shape "
                                f"{list(shape)}): give {len(shape)}")
    for dim, (i, n) in enumerate(zip(index, shape)):
        if not 0 <= i < n:
            raise ElementIndexError(f"{said}: index {i} of dimension {dim} is outside the result's shape "
                                    f"{list(shape)} (expected 0 to {n - 1})")
    return index


__all__ = ["ElementIndexError", "OpValues", "operand_label", "parse_element_index", "result_label"]
