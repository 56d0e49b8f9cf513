"""The program as the editor's disassembly view shows it: every op of the module in program order,
one "instruction" each, as hlodbg reads it — StableHLO MLIR, so for an XLA HLO file the view shows
what each instruction became beside the HLO text the source view shows. An op's address is its
place in that order (`0x1a`); every stack frame's `instructionPointerReference` is its op's.
"""
from __future__ import annotations

from typing import Any, Optional

from hlodbg.engine.ir.core import Module, Operation
from hlodbg.engine.ir.errors import HlodbgError
from hlodbg.engine.syntax.mlir.printer import print_op

MAX_INSTRUCTIONS = 100_000  # one request's listing; editors ask for a few hundred at a time
INSTRUCTION_CHARS = 240  # an op's line, clipped (a constant's elements can run to megabytes)


class DisassemblyError(HlodbgError):
    """A disassemble request that names no place in the program."""


class Disassembly:
    def __init__(self, module: Module):
        self._ops: list[Operation] = [op for function in module.functions.values() for op in function.ops]
        self._place = {id(op): k for k, op in enumerate(self._ops)}
        self._text: dict[int, str] = {}

    def address(self, op: Operation) -> Optional[str]:
        place = self._place.get(id(op))
        return None if place is None else f"0x{place:x}"

    def instructions(self, reference: Any, offset: Any, instruction_offset: Any, count: Any,
                     source: Optional[dict]) -> list[dict]:
        """`count` instructions from `reference` + `offset` + `instruction_offset` (places before the
        first op or after the last are listed as invalid, as the protocol asks)."""
        if not isinstance(reference, str):
            raise DisassemblyError(f"disassemble: memoryReference is an address such as 0x1a, not {reference!r}")
        try:
            base = int(reference, 0)
        except ValueError:
            raise DisassemblyError(f"disassemble: memoryReference {reference!r} is not an address such as 0x1a") from None
        for name, value in (("offset", offset), ("instructionOffset", instruction_offset), ("instructionCount", count)):
            if not isinstance(value, int) or isinstance(value, bool):
                raise DisassemblyError(f"disassemble: {name} is a whole number, not {value!r}")
        if not 0 <= count <= MAX_INSTRUCTIONS:
            raise DisassemblyError(f"disassemble: instructionCount must be from 0 to {MAX_INSTRUCTIONS:,}")
        first = base + offset + instruction_offset
        return [self._instruction(k, source) for k in range(first, first + count)]

    def _instruction(self, place: int, source: Optional[dict]) -> dict:
        if not 0 <= place < len(self._ops):
            return {"address": f"0x{max(place, 0):x}" if place >= 0 else f"-0x{-place:x}", "instruction": "",
                    "presentationHint": "invalid"}
        op = self._ops[place]
        text = self._text.get(place)
        if text is None:
            text = print_op(op).split("\n", 1)[0]
            if len(text) > INSTRUCTION_CHARS:
                text = text[:INSTRUCTION_CHARS] + "…"
            self._text[place] = text
        out: dict[str, Any] = {"address": f"0x{place:x}", "instruction": text}
        if op.function is not None:
            out["symbol"] = f"@{op.function.sym_name}"
        if op.pos is not None and source is not None:
            out.update(location=source, line=op.pos.line, column=op.pos.col)
        return out


__all__ = ["Disassembly", "DisassemblyError"]
