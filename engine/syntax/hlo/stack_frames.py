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
from typing import Callable

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
    end = start
    # Each section: the table it fills and how one entry after its id is read.
    sections: dict[str, tuple[dict, Callable[[Cursor], object]]] = {
        "FileNames": (tables.file_names, lambda c: c.string("a file name")),
        "FunctionNames": (tables.function_names, lambda c: c.string("a function name")),
        "FileLocations": (tables.file_locations, _location),
        "StackFrames": (tables.frames, _frame),
    }
    for index, word in enumerate(SECTION_WORDS):
        if not cur.accept_keyword(word):
            later = cur.peek_name()
            if later in SECTION_WORDS[:index]:
                cur.fail(f"'{later}' comes out of order (the tables are "
                         f"{', '.join(SECTION_WORDS)}, in that order)")
            continue
        end = cur.pos
        table, read_entry = sections[word]
        while cur.peek().isdigit():
            id_pos = cur.pos
            number = cur.integer()
            if number in table:
                cur.fail(f"{word} id {number} is defined twice", id_pos)
            table[number] = read_entry(cur)
            end = cur.pos
    tables.text = cur.text[start:end]
    return tables


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
    missing = [f for f in _FRAME_FIELDS if f not in values]
    if missing:
        cur.fail(f"the stack frame lacks {', '.join(missing)}", start)
    return values["file_location_id"], values["parent_frame_id"]
