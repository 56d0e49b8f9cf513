"""The file a program's breakpoints and watches are kept in, shared by every session on it.

    {"version": 1, "breakpoints": [{"spec": "%12", "condition": null, "ignore": 0, "enabled": true}],
     "watches": ["%acc.sum()"]}

Reading checks every field. A file that is not of this form (not JSON, not UTF-8, another version,
`"breakpoints": 5`, nested past what can be read, numbers out of range, too large) is said and left
as it is: the session neither uses nor writes it. An entry that is not a breakpoint is said, and
kept in the file as it was read.

Two sessions may have the file open at once (two terminals on one program, a UI and a script).
Each save is a merge under a lock: the file is read again, this session's own changes since it
last read or wrote it (what it added, what it removed) are applied to what the file holds now,
and the result replaces the file through a temporary file of its own (os.replace, so a reader
sees the old file or the new one, never a part). The other session's breakpoints stay.
"""
from __future__ import annotations

import json
import math
import os
import stat
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Optional

try:
    import fcntl
except ImportError:  # Windows: saves are merged, without the lock that orders two at once
    fcntl = None

VERSION = 1
FILE_LIMIT = 4 << 20  # bytes: a breakpoint file is a few hundred lines
IGNORE_LIMIT = 2**63 - 1  # an ignore count is a number of hits


class BreakpointFileError(ValueError):
    """The file is not a breakpoint file this version can read: it is left as it is."""


@dataclass
class Contents:
    """What a breakpoint file holds, entries as they were read (any JSON value)."""

    breakpoints: list = field(default_factory=list)
    watches: list = field(default_factory=list)

    def to_json(self) -> dict:
        return {"version": VERSION, "breakpoints": self.breakpoints, "watches": self.watches}


def read(path: Path) -> Optional[Contents]:
    """The file's contents; None when there is no file. BreakpointFileError (with what is wrong)
    when it is not a breakpoint file."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):  # a FIFO would block the open, a device never end
            raise BreakpointFileError("not a regular file")
        with open(path, "rb") as handle:
            raw = handle.read(FILE_LIMIT + 1)
    except FileNotFoundError:
        return None
    except OSError as e:
        raise BreakpointFileError(f"cannot read it ({e.strerror or e})") from None
    if len(raw) > FILE_LIMIT:
        raise BreakpointFileError(f"larger than {FILE_LIMIT:,} bytes")
    try:
        data = json.loads(raw.decode("utf-8"), parse_float=_finite_float, parse_constant=_no_constant)
    except UnicodeDecodeError as e:
        raise BreakpointFileError(f"not UTF-8 text (byte {raw[e.start]:#04x} at offset {e.start})") from None
    except RecursionError:
        raise BreakpointFileError("nested too deeply to be a breakpoint file") from None
    except ValueError as e:  # json's own message says where: "Expecting value: line 1 column 2 (char 1)"
        raise BreakpointFileError(f"not JSON ({e})") from None
    if not isinstance(data, dict):
        raise BreakpointFileError(f"expected an object with \"breakpoints\" and \"watches\", not {_kind(data)}")
    version = data.get("version", VERSION)
    if version != VERSION or isinstance(version, bool):
        raise BreakpointFileError(f"\"version\" is {_brief(version)}; this hlodbg reads version {VERSION}")
    contents = Contents()
    for name in ("breakpoints", "watches"):
        value = data.get(name, [])
        if not isinstance(value, list):
            raise BreakpointFileError(f"\"{name}\" must be a list, not {_kind(value)}")
        setattr(contents, name, value)
    return contents


def entry_problem(entry: Any) -> Optional[str]:
    """What is wrong with one entry of "breakpoints", or None for a breakpoint."""
    if not isinstance(entry, dict):
        return f"expected an object with \"spec\", not {_kind(entry)}"
    spec = entry.get("spec")
    if not isinstance(spec, str) or not spec.strip():
        return f"\"spec\" must be the place, such as \"%12\" or \"nan\", not {_brief(spec)}"
    condition = entry.get("condition")
    if condition is not None and not isinstance(condition, str):
        return f"\"condition\" must be an expression or null, not {_brief(condition)}"
    ignore = entry.get("ignore", 0)
    if isinstance(ignore, bool) or not isinstance(ignore, int) or not 0 <= ignore <= IGNORE_LIMIT:
        return f"\"ignore\" must be a whole number of hits from 0 to {IGNORE_LIMIT}, not {_brief(ignore)}"
    if not isinstance(entry.get("enabled", True), bool):
        return f"\"enabled\" must be true or false, not {_brief(entry.get('enabled'))}"
    return None


def merged(now: Contents, before: Contents, ours: Contents) -> Contents:
    """What the file should hold: `now` (what it holds) with this session's changes since it held
    `before` (what this session last read or wrote) applied: entries of `ours` it did not hold are
    added, entries of `before` no longer in `ours` are removed; everything else stays as it is."""
    return Contents(_merged_list(now.breakpoints, before.breakpoints, ours.breakpoints),
                    _merged_list(now.watches, before.watches, ours.watches))


def save(path: Path, before: Contents, ours: Contents) -> tuple[Contents, bool]:
    """Merge this session's changes into the file (see `merged`); (what it holds now, whether
    another session had changed it since `before`). BreakpointFileError when the file has become
    something else than a breakpoint file (it is left as it is); OSError when it cannot be written."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with _locked(path):
        now = read(path) or Contents()
        result = merged(now, before, ours)
        _replace(path, json.dumps(result.to_json(), indent=1))
    changed_elsewhere = _keys(now.breakpoints) != _keys(before.breakpoints) or _keys(now.watches) != _keys(before.watches)
    return result, changed_elsewhere


def _merged_list(now: list, before: list, ours: list) -> list:
    mine, had = _keys(ours), _keys(before)
    removed = had - mine
    kept = [e for e in now if _key(e) not in removed]
    present = {_key(e) for e in kept}
    added = []
    for entry in ours:
        key = _key(entry)
        if key not in had and key not in present:
            added.append(entry)
            present.add(key)
    return kept + added


def _keys(entries: list) -> set[str]:
    return {_key(e) for e in entries}


def _key(entry: Any) -> str:
    """An entry's identity: equal JSON, whatever the order of its fields."""
    return json.dumps(entry, sort_keys=True)


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    """One save of `path` at a time, across processes and threads (a lock file beside it)."""
    if fcntl is None:
        yield
        return
    with open(path.with_name(path.name + ".lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _replace(path: Path, text: str) -> None:
    """Write `text` to a temporary file of its own beside `path`, then put it in place."""
    handle = tempfile.NamedTemporaryFile("w", dir=path.parent, prefix=path.name + ".", suffix=".tmp",
                                         delete=False, encoding="utf-8")
    try:
        with handle:
            handle.write(text)
        os.replace(handle.name, path)
    except BaseException:
        try:
            os.unlink(handle.name)
        except OSError:
            pass
        raise


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"the number {text[:40]} is out of range")
    return value


def _no_constant(text: str) -> float:
    raise ValueError(f"{text} is not a number JSON has")


KINDS = {dict: "an object", list: "a list", str: "a string", bool: "true or false", type(None): "null"}


def _kind(value: Any) -> str:
    kind = KINDS.get(type(value))
    return kind if kind is not None else f"the number {_brief(value)}"


def _brief(value: Any) -> str:
    text = json.dumps(value) if not isinstance(value, (dict, list)) else _kind(value)
    return text if len(text) <= 40 else text[:39] + "…"


__all__ = ["BreakpointFileError", "Contents", "entry_problem", "merged", "read", "save"]
