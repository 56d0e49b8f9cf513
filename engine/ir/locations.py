"""Producer locations: the `loc(...)` a producer such as JAX attached to an op.

JAX writes `loc(#loc12)` on ops and defines the aliases at the end of the file, e.g.
`#loc12 = loc("jit(f)/layer_0/attn/dot_general"(#loc5))` and `#loc5 = loc("model.py":42:9)`;
callsite and fused locations chain frames together. `user_frame()` digs out the line a JAX user
recognises, and `name_stack()` the `jit(f)/layer_0/...` path used for grouping.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, Optional, Union

from .attributes import quote_string
from .notation import attribute_text


class Location:
    __slots__ = ()

    def walk(self) -> Iterator["Location"]:
        yield self


@dataclass(frozen=True, slots=True)
class UnknownLoc(Location):
    def __str__(self) -> str:
        return "loc(unknown)"


@dataclass(frozen=True, slots=True)
class FileLineColLoc(Location):
    filename: str
    line: int
    col: int
    end_line: Optional[int] = None
    end_col: Optional[int] = None

    def __str__(self) -> str:
        return f"loc({self.body()})"

    def body(self) -> str:
        text = f"{quote_string(self.filename)}:{self.line}:{self.col}"
        if self.end_col is not None:
            if self.end_line is not None and self.end_line != self.line:
                text += f" to {self.end_line}:{self.end_col}"
            else:
                text += f" to :{self.end_col}"
        return text

    def short(self) -> str:
        """`model.py:42` — the file's base name and line, as users cite it."""
        return f"{self.filename.rsplit('/', 1)[-1]}:{self.line}"


@dataclass(frozen=True, slots=True)
class NameLoc(Location):
    name: str
    child: Optional[Location] = None

    def __str__(self) -> str:
        return f"loc({self.body()})"

    def body(self) -> str:
        if self.child is None:
            return quote_string(self.name)
        return f"{quote_string(self.name)}({_inner(self.child)})"

    def walk(self):
        yield self
        if self.child is not None:
            yield from self.child.walk()


@dataclass(frozen=True, slots=True)
class CallSiteLoc(Location):
    callee: Location
    caller: Location

    def __str__(self) -> str:
        return f"loc({self.body()})"

    def body(self) -> str:
        return f"callsite({_inner(self.callee)} at {_inner(self.caller)})"

    def walk(self):
        yield self
        yield from self.callee.walk()
        yield from self.caller.walk()


@dataclass(frozen=True, slots=True)
class FusedLoc(Location):
    locations: tuple[Location, ...]
    metadata: object = None

    def __str__(self) -> str:
        return f"loc({self.body()})"

    def body(self) -> str:
        meta = f"<{attribute_text(self.metadata)}>" if self.metadata is not None else ""
        return f"fused{meta}[{', '.join(_inner(l) for l in self.locations)}]"

    def walk(self):
        yield self
        for loc in self.locations:
            yield from loc.walk()


@dataclass(frozen=True, slots=True)
class OpaqueLoc(Location):
    """A location attribute of another dialect, kept verbatim."""

    text: str

    def __str__(self) -> str:
        return f"loc({self.text})"

    def body(self) -> str:
        return self.text


def _inner(loc: Location) -> str:
    if isinstance(loc, UnknownLoc):
        return "unknown"
    return loc.body()  # type: ignore[attr-defined]


LocationLike = Union[Location, None]


def user_frame(loc: Optional[Location]) -> Optional[FileLineColLoc]:
    """The innermost file:line:col in the chain — for JAX, the line of the user's Python code."""
    if loc is None:
        return None
    if isinstance(loc, CallSiteLoc):
        # The callee is the innermost frame; the caller chain leads back out to the entry point.
        return user_frame(loc.callee) or user_frame(loc.caller)
    for node in loc.walk():
        if isinstance(node, FileLineColLoc):
            return node
    return None


def name_stack(loc: Optional[Location]) -> Optional[str]:
    """The producer's op name (JAX: `jit(f)/layer_0/attn/dot_general`), if the location has one."""
    if loc is None:
        return None
    for node in loc.walk():
        if isinstance(node, NameLoc):
            return node.name
    return None


def located_name(value) -> str:
    """The name a block argument's own location gives it (JAX names each parameter of @main by its
    pytree path: `%arg1: tensor<3x3xf32> loc("params['layer_0']['w']")`), or ""."""
    loc = value.location
    if isinstance(loc, NameLoc) and not loc.name.isdigit():
        return loc.name
    return ""


def describe(loc: Optional[Location]) -> str:
    """One short line for UIs and messages: `model.py:42 (jit(f)/attn/dot_general)`."""
    frame = user_frame(loc)
    name = name_stack(loc)
    if frame and name:
        return f"{frame.short()} ({name})"
    if frame:
        return frame.short()
    return name or ""
