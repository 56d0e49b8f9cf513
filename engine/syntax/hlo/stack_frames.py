"""The stack-frame section jaxlib prints between the module header and the computations:

    FileNames
    1 "/path/f.py"
    FunctionNames
    1 "<module>"
    FileLocations
    1 {file_name_id=1 function_name_id=1 line=8 end_line=8 column=6 end_column=28}
    StackFrames
    1 {file_location_id=1 parent_frame_id=1}

Each table is optional but they come in this order. Older XLA printed no `end_line`/`end_column`
(hlo_text.md §3), so the location fields other than the ids and `line` are optional.
"""
from __future__ import annotations

import re
from typing import Callable, Optional

from .lexer import Cursor
from .tree import FileLocation, StackFrameTables

SECTION_WORDS = ("FileNames", "FunctionNames", "FileLocations", "StackFrames")
_FIELD = re.compile(r"([a-z_]+)=")
_LOCATION_FIELDS = ("file_name_id", "function_name_id", "line", "end_line", "column", "end_column")
_LOCATION_REQUIRED = ("file_name_id", "function_name_id", "line")
_FRAME_FIELDS = ("file_location_id", "parent_frame_id")


def starts_stack_frames(cur: Cursor) -> bool:
    return cur.peek_name() in SECTION_WORDS


def parse_stack_frames(cur: Cursor) -> StackFrameTables:
    cur.skip()
    start = cur.pos
    tables = StackFrameTables()
    readers: dict[str, Callable[[Cursor, int], None]] = {
        "FileNames": lambda c, i: tables.file_names.__setitem__(i, c.string("a file name")),
        "FunctionNames": lambda c, i: tables.function_names.__setitem__(
            i, c.string("a function name")),
        "FileLocations": lambda c, i: tables.file_locations.__setitem__(i, _location(c)),
        "StackFrames": lambda c, i: tables.frames.__setitem__(i, _frame(c)),
    }
    for index, word in enumerate(SECTION_WORDS):
        if not cur.accept_keyword(word):
            later = cur.peek_name()
            if later in SECTION_WORDS[:index]:
                cur.fail(f"'{later}' comes out of order (the tables are "
                         f"{', '.join(SECTION_WORDS)}, in that order)")
            continue
        table_name = word
        while _starts_int(cur):
            id_pos = cur.pos
            number = cur.integer()
            table = _table(tables, table_name)
            if number in table:
                cur.fail(f"{table_name} id {number} is defined twice", id_pos)
            readers[table_name](cur, number)
    tables.text = cur.text[start:cur.pos]
    return tables


def _table(tables: StackFrameTables, word: str) -> dict:
    return {"FileNames": tables.file_names, "FunctionNames": tables.function_names,
            "FileLocations": tables.file_locations, "StackFrames": tables.frames}[word]


def _starts_int(cur: Cursor) -> bool:
    ch = cur.peek()
    return ch.isdigit()


def _fields(cur: Cursor, allowed: tuple[str, ...], what: str) -> dict[str, int]:
    """`{name=int name=int ...}` (spaces between fields, as printed; commas tolerated)."""
    cur.expect("{", f"'{{' opening the {what}")
    values: dict[str, int] = {}
    while not cur.accept("}"):
        cur.skip()
        m = _FIELD.match(cur.text, cur.pos, cur.end)
        if not m:
            cur.expected(f"a field 'name=value' or '}}' in the {what}")
        if m.group(1) not in allowed:
            cur.fail(f"unknown field '{m.group(1)}' in the {what} (expected one of "
                     f"{', '.join(allowed)})")
        if m.group(1) in values:
            cur.fail(f"field '{m.group(1)}' is given twice in the {what}")
        cur.pos = m.end()
        values[m.group(1)] = cur.integer(f"an integer value for '{m.group(1)}'")
        cur.accept(",")
    return values


def _location(cur: Cursor) -> FileLocation:
    cur.skip()
    start = cur.pos
    values = _fields(cur, _LOCATION_FIELDS, "file location")
    missing = [f for f in _LOCATION_REQUIRED if f not in values]
    if missing:
        cur.fail(f"the file location lacks {', '.join(missing)}", start)
    return FileLocation(**values)


def _frame(cur: Cursor) -> tuple[int, int]:
    cur.skip()
    start = cur.pos
    values = _fields(cur, _FRAME_FIELDS, "stack frame")
    missing: Optional[list] = [f for f in _FRAME_FIELDS if f not in values]
    if missing:
        cur.fail(f"the stack frame lacks {', '.join(missing)}", start)
    return values["file_location_id"], values["parent_frame_id"]
