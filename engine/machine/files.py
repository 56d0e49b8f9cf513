"""Opening the files a user names (programs, argument arrays, captures) without hanging or
reading without end.

A named pipe (FIFO) blocks `open()` until a writer comes, and a device such as /dev/zero or
/dev/urandom never ends, so a path that is not a regular file (directly or through a symlink)
is refused before anything is read. It is opened non-blocking and checked with `fstat` on the
descriptor itself, so what is checked is what is read.
"""
from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import BinaryIO, Union

from .memory import format_bytes

PathLike = Union[str, "os.PathLike[str]"]

# The most of a program file hlodbg reads: its parsed form takes many times the text's size, and a
# file that only claims a size (in /proc) must not be read until memory runs out.
PROGRAM_BYTES_LIMIT = 2 << 30

_KINDS = ((stat.S_ISFIFO, "a named pipe (FIFO)"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


class SpecialFileError(OSError):
    """A path that names something other than a regular file or a directory. Its `strerror`
    reads as the end of `cannot read PATH: ...`."""


def special_kind(mode: int) -> str:
    """What a non-regular file is, in words (`a named pipe (FIFO)`)."""
    for test, kind in _KINDS:
        if test(mode):
            return kind
    return "not a regular file"


def _refuse(mode: int, path: PathLike) -> None:
    if stat.S_ISDIR(mode):
        raise IsADirectoryError(errno.EISDIR, "Is a directory", str(path))
    if not stat.S_ISREG(mode):
        raise SpecialFileError(errno.EINVAL, f"it is {special_kind(mode)}, not a regular file; hlodbg reads "
                                             "only regular files", str(path))


def open_regular(path: PathLike) -> BinaryIO:
    """`path` opened for reading in binary, if it is a regular file (symlinks followed); else
    IsADirectoryError or SpecialFileError, without blocking on a FIFO. Other failures are the
    usual OSErrors (FileNotFoundError, PermissionError)."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        _refuse(os.fstat(fd).st_mode, path)
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def check_regular(path: PathLike) -> None:
    """Raise as `open_regular` would, for a reader (numpy's memory map) that opens the path itself."""
    open_regular(path).close()


def read_bounded(path: PathLike, limit: int, what: str = "such a file") -> bytes:
    """The bytes of regular file `path`, or a SpecialFileError when it holds more than `limit`
    (its size is checked first, and the read stops at limit + 1 bytes whatever `stat` said)."""
    with open_regular(path) as handle:
        size = os.fstat(handle.fileno()).st_size
        data = handle.read(limit + 1) if size <= limit else b""
        if size > limit or len(data) > limit:
            raise SpecialFileError(errno.EFBIG, f"it is larger than {format_bytes(limit)}, the most hlodbg reads "
                                                f"of {what}", str(path))
        return data


def inside(root: PathLike, name: str) -> Path:
    """`name`, a path a directory's own index gives relative to it, as a real path inside `root`;
    ValueError when it is absolute or leads out of `root` (`..`, or a symlink to elsewhere)."""
    if not name or Path(name).is_absolute():
        raise ValueError(f"{name!r} is not a path relative to {root}")
    real_root = Path(root).resolve()
    path = (real_root / name).resolve()
    if not path.is_relative_to(real_root):
        raise ValueError(f"{name!r} leads out of {root}")
    return path


__all__ = ["PROGRAM_BYTES_LIMIT", "SpecialFileError", "check_regular", "inside", "open_regular", "read_bounded",
           "special_kind"]
