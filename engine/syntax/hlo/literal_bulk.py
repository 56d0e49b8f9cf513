"""The bulk path for big constant literals: their brace structure checked and their elements cut
out with numpy over the bytes, instead of a Python step per brace.

A 1,000,000 x 4 literal has two million braces; walking them one at a time costs seconds. Here the
text is viewed as a byte array: the nesting depth after every byte is one cumulative sum, the
structure is right when the braces and the commas between groups spell exactly the skeleton the
shape demands (`{{},{},...}`) and each innermost group holds the shape's last dimension of
elements. Anything unexpected returns None, and literals.py's exact per-brace pass then finds
and locates the error.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

_OPEN, _CLOSE, _COMMA = ord("{"), ord("}"), ord(",")
_WHITESPACE = np.zeros(256, dtype=bool)
_WHITESPACE[[ord(c) for c in " \t\r\n"]] = True


def _skeleton(dims: tuple[int, ...]) -> bytes:
    """The braces and the commas between groups of a literal of `dims` (leaves left empty)."""
    inner = b"{}"
    for size in reversed(dims[:-1]):
        inner = b"{" + b",".join([inner] * size) + b"}"
    return inner


def bulk_items(text: str, dims: tuple[int, ...]) -> Optional[list[bytes]]:
    """The element texts of a well-formed array literal of `dims` (rank >= 1, no zero dims), in
    row-major order; None when anything is off (the caller's exact pass reports it)."""
    rank = len(dims)
    if rank > 64:
        return None
    try:
        raw = text.encode("ascii")
    except UnicodeEncodeError:
        return None
    data = np.frombuffer(raw, dtype=np.uint8)
    is_open = data == _OPEN
    is_close = data == _CLOSE
    # int8 keeps the sum ten times cheaper than the default int64; a deeper (wrapping) text
    # cannot spell the expected skeleton below, and ranks stay far under 127.
    depth = np.cumsum(is_open.view(np.int8) - is_close.view(np.int8), dtype=np.int8)
    if depth.size == 0 or depth.min() < 0 or depth[-1] != 0 or depth.max() != rank:
        return None
    in_leaf = depth == rank
    is_comma = data == _COMMA
    outer_comma = is_comma & ~in_leaf
    skeleton = data[is_open | is_close | outer_comma].tobytes()
    if skeleton != _skeleton(dims):
        return None
    # Between groups only whitespace (the closing brace of a leaf has depth rank-1 after it).
    between = ~in_leaf & ~is_open & ~is_close & ~is_comma
    if _WHITESPACE[data[between]].size and not _WHITESPACE[data[between]].all():
        return None
    # Each leaf holds dims[-1] elements: dims[-1]-1 commas at leaf depth.
    leaf_starts = np.flatnonzero(is_open & in_leaf)
    leaf_of_comma = np.searchsorted(leaf_starts, np.flatnonzero(is_comma & in_leaf)) - 1
    commas = np.bincount(leaf_of_comma, minlength=leaf_starts.size)
    if (commas != dims[-1] - 1).any():
        return None
    # The elements: leaf contents, each leaf's closing brace turned into a separator.
    content = (in_leaf & ~is_open) | (is_close & (depth == rank - 1))
    stream = data[content].copy()
    stream[stream == _CLOSE] = _COMMA
    items = stream.tobytes().split(b",")
    items.pop()  # after the last leaf's separator
    return items


def only_characters(text: str, allowed: str) -> bool:
    """Whether `text` holds only `allowed` (ASCII) characters; one table lookup per byte."""
    try:
        raw = text.encode("ascii")
    except UnicodeEncodeError:
        return False
    table = np.zeros(256, dtype=bool)
    table[list(allowed.encode("ascii"))] = True
    return bool(table[np.frombuffer(raw, dtype=np.uint8)].all())
