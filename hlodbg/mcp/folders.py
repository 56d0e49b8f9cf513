"""Where the MCP server may read and write, and how much text one answer may hold.

An agent names files; the server reads only under the folders it was given (`--root`, default
the folder it was started in, and its work folder) and writes only in its work folder
(`--workdir`, default a new temporary folder). A path is judged after following its links, so
neither `..` nor a symbolic link leads outside. Reading is limited too because a file that does
not parse is quoted in the error (its line and a caret): any file the server could open would
otherwise reach the agent.

Every tool's answer is text of at most `limit` characters; a longer one is cut and ends with a
note saying how to get the rest (the same call with `offset`, or a narrower question).
"""
from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, field
from typing import Optional, Sequence

from hlodbg.engine.ir.errors import HlodbgError, printable

DEFAULT_LIMIT = 8000  # characters per answer: a screenful or two for a model's context


class OutsideFolders(HlodbgError):
    """A path the server is not allowed to read or write."""


@dataclass
class Folders:
    workdir: str
    roots: list[str] = field(default_factory=list)

    @classmethod
    def make(cls, workdir: Optional[str], roots: Sequence[str]) -> "Folders":
        """The work folder (made when missing; a new temporary one when not given) and the roots
        to read under (default: the current folder), all as real paths."""
        if workdir is None:
            workdir = tempfile.mkdtemp(prefix="hlodbg-mcp-")
        else:
            try:
                os.makedirs(workdir, exist_ok=True)
            except OSError as e:
                raise HlodbgError(f"--workdir {printable(workdir)}: cannot make the folder: {e.strerror or e}") from None
        for root in roots:
            if not os.path.isdir(root):
                raise HlodbgError(f"--root {printable(root)}: no such folder")
        workdir = os.path.realpath(workdir)
        readable = [os.path.realpath(r) for r in roots] or [_default_root()]
        return cls(workdir, readable)

    def readable(self, path: str, what: str = "path") -> str:
        """`path` (relative: to the first root) as a real path under a root or the work folder."""
        real = self._real(path, self.roots[0] if self.roots else self.workdir)
        if not any(_inside(real, folder) for folder in [*self.roots, self.workdir]):
            folders = ", ".join(printable(f) for f in [*self.roots, self.workdir])
            raise OutsideFolders(f"{what} {printable(path)} is outside the folders this server reads ({folders}); "
                                 "start `hlodbg mcp` with --root DIR to let it read DIR")
        return real

    def writable(self, path: str, what: str = "path") -> str:
        """`path` (relative: to the work folder) as a real path inside the work folder; its folder
        is made when missing."""
        real = self._real(path, self.workdir)
        if not _inside(real, self.workdir) or real == self.workdir:
            raise OutsideFolders(f"{what} {printable(path)} is outside the work folder {printable(self.workdir)}: "
                                 "this server writes only there (give a name relative to it, e.g. out/x.npy)")
        os.makedirs(os.path.dirname(real), exist_ok=True)
        return real

    @staticmethod
    def _real(path: str, base: str) -> str:
        if not isinstance(path, str) or not path.strip():
            raise HlodbgError("expected a file name, not an empty one")
        path = os.path.expanduser(path.strip())
        return os.path.realpath(path if os.path.isabs(path) else os.path.join(base, path))


def _default_root() -> str:
    """The folder the server was started in, unless that is the file system's root or the home
    folder: an agent would then read every file there (a client starts servers in / or ~ unless
    told otherwise), so the folders to read must be named."""
    here = os.path.realpath(os.getcwd())
    if here == os.path.realpath(os.sep) or here == os.path.realpath(os.path.expanduser("~")):
        raise HlodbgError(f"hlodbg mcp was started in {printable(here)}: name the folders it may read programs from "
                          "with --root DIR (it reads only there and in its --workdir)")
    return here


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def page(text: str, limit: int, offset: int = 0, narrower: str = "", pageable: bool = True) -> str:
    """At most `limit` characters of `text` from `offset`, cut at a line end where one is near,
    with a note saying what was left out and how to get it: the same call with `offset` when the
    tool takes one (`pageable`), or `narrower` (a smaller question that would answer in less)."""
    if offset < 0:
        raise HlodbgError(f"offset {offset}: expected 0 or more characters")
    if offset and offset >= len(text):
        raise HlodbgError(f"offset {offset} is past the end of this answer ({len(text)} characters)")
    rest = text[offset:]
    if len(rest) <= limit:
        return rest
    room = max(limit - 200, limit // 2)  # left for the note
    cut = rest.rfind("\n", room // 2, room)
    end = cut + 1 if cut > 0 else room
    ways = ([f"call again with offset={offset + end}"] if pageable else []) + ([narrower] if narrower else [])
    how = ", or ".join(ways) or "ask a narrower question"
    return (rest[:end] + f"\n… truncated: characters {offset}-{offset + end} of {len(text)} shown; {how}\n")


__all__ = ["DEFAULT_LIMIT", "Folders", "OutsideFolders", "page"]
