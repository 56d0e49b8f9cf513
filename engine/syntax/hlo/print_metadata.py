"""`metadata={...}` made from a location, for what has a location but no metadata text kept: the
parameters of computations cloned into regions, and ops of modules from MLIR (as XLA's own
MLIR→HLO translation writes their locations).

The inverse of facts.location: `NameLoc(op_name, where)`, where is a stack-frame chain (found
again in the module's stack-frame tables: `stack_frame_id=`) or a file position
(`source_file=`, `source_line=`, ...), in XLA's order of the metadata fields.
"""
from __future__ import annotations

from typing import Optional

from ...ir.errors import HlodbgError, SourceText
from ...ir.locations import CallSiteLoc, FileLineColLoc, Location, NameLoc, user_frame
from .facts import frame_chain
from .print_text import quoted
from .tree import StackFrameTables


def stack_frame_tables(text: Optional[str]) -> Optional[StackFrameTables]:
    """The tables of a module's kept stack-frame section (None without one or when unreadable)."""
    if not text:
        return None
    from .lexer import Cursor
    from .stack_frames import parse_stack_frames

    try:
        return parse_stack_frames(Cursor(SourceText(str(text), "<stack frames>")))
    except HlodbgError:
        return None


class FrameIndex:
    """Stack-frame ids by the location chain each stands for."""

    def __init__(self, tables: Optional[StackFrameTables]):
        self.ids: dict[Location, int] = {}
        if tables is not None:
            for frame_id in sorted(tables.frames):
                chain = frame_chain(frame_id, tables)
                if chain is not None:
                    self.ids.setdefault(chain, frame_id)

    def metadata_text(self, loc: Optional[Location]) -> Optional[str]:
        if loc is None:
            return None
        name, where = (loc.name, loc.child) if isinstance(loc, NameLoc) else (None, loc)
        fields = [f"op_name={quoted(name)}"] if name else []
        frame_id = self.ids.get(where) if where is not None else None
        if frame_id is not None:
            fields.append(f"stack_frame_id={frame_id}")
        else:
            place = where if isinstance(where, FileLineColLoc) else (
                user_frame(where) if isinstance(where, (CallSiteLoc, NameLoc)) else None)
            if place is not None:
                fields += [f"source_file={quoted(place.filename)}", f"source_line={place.line}"]
                if place.end_line is not None:
                    fields.append(f"source_end_line={place.end_line}")
                if place.col:
                    fields.append(f"source_column={place.col}")
                if place.end_col is not None:
                    fields.append(f"source_end_column={place.end_col}")
        return "{" + " ".join(fields) + "}" if fields else None


__all__ = ["FrameIndex", "stack_frame_tables"]
