"""Where the files a debugger session writes go (`:export graph.svg`, the `e` key).

A local session writes where its user says, as any command-line tool does. A served one (`hlodbg
serve`: whoever reaches the server types the names) writes only into its own folder, which the
server made for it and removes when it ends: of a typed path only the file name is kept, so
`../../x.svg`, `/etc/x.svg` and `-` (standard output, which carries the served screen) never reach
past it, and the file is then offered to the participant's browser as a download."""
from __future__ import annotations

import re
from pathlib import Path, PurePosixPath
from typing import Optional

SESSION_FOLDER = "HLODBG_SESSION_DIR"  # set by `hlodbg serve` for each session: the folder it may write into
_PLAIN_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,127}")


class SessionFiles:
    def __init__(self, directory: Optional[Path] = None):
        self.directory = Path(directory) if directory is not None else None

    @property
    def served(self) -> bool:
        """Whether files are kept in the session's folder and delivered as downloads."""
        return self.directory is not None

    def place(self, typed: str) -> str:
        """The path to write for a file the user named `typed`."""
        if self.directory is None:
            return typed
        name = PurePosixPath(typed).name
        if not _PLAIN_NAME.fullmatch(name):
            from .controller import CommandError

            raise CommandError(f"'{typed}': this session writes only into its own folder, under a plain file name "
                               "such as graph.svg (letters, digits, '.', '_' and '-'), and your browser downloads it")
        path = self.directory / name
        if path.is_symlink():  # nothing in a session makes one; never write through one all the same
            path.unlink()
        return str(path)
