"""Shardy's attributes (`#sdy.sharding`, `#sdy.mesh`, in/out shardings, manual axes) as values:
what they hold and how MLIR spells them back."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from .quoting import quote_string


@dataclass(frozen=True)
class SdyAxisRef:
    """A mesh axis, or a sub-axis `"x":(1)2` (pre-size and size)."""

    name: str
    sub: Optional[tuple[int, int]] = None

    def __str__(self) -> str:
        text = quote_string(self.name)
        if self.sub is not None:
            text += f":({self.sub[0]}){self.sub[1]}"
        return text


@dataclass(frozen=True)
class SdyDimSharding:
    """One dimension of a `#sdy.sharding`: the axes it is split over, and whether it is closed."""

    axes: tuple[SdyAxisRef, ...] = ()
    is_closed: bool = True
    priority: Optional[int] = None

    def __str__(self) -> str:
        body = ", ".join(map(str, self.axes))
        if not self.is_closed:
            body = body + ", ?" if body else "?"
        text = "{" + body + "}"
        if self.priority is not None:
            text += f"p{self.priority}"
        return text


@dataclass(frozen=True)
class SdySharding:
    """`#sdy.sharding<@mesh, [{"x"}, {}], replicated={"y"}>`: how a tensor lies on a mesh."""

    mesh: Any  # SymbolRef, or an inline SdyMesh
    dims: tuple[SdyDimSharding, ...]
    replicated: tuple[SdyAxisRef, ...] = ()
    unreduced: tuple[SdyAxisRef, ...] = ()

    def body(self) -> str:
        text = f"{self.mesh}, [{', '.join(map(str, self.dims))}]"
        if self.replicated:
            text += ", replicated={" + ", ".join(map(str, self.replicated)) + "}"
        if self.unreduced:
            text += ", unreduced={" + ", ".join(map(str, self.unreduced)) + "}"
        return text

    def __str__(self) -> str:
        return f"#sdy.sharding<{self.body()}>"


@dataclass(frozen=True)
class SdyMesh:
    """`<["x"=4, "y"=2]>`: named axes with sizes (and optional device ids)."""

    axes: tuple[tuple[str, int], ...]
    device_ids: tuple[int, ...] = ()

    def body(self) -> str:
        text = "[" + ", ".join(f"{quote_string(n)}={s}" for n, s in self.axes) + "]"
        if self.device_ids:
            text += ", device_ids=[" + ", ".join(map(str, self.device_ids)) + "]"
        return text

    def __str__(self) -> str:
        return f"#sdy.mesh<{self.body()}>"

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(s for _, s in self.axes)


@dataclass(frozen=True)
class SdyShardingPerValue:
    """`[<@mesh, [...]>, <@mesh, [...]>]` as written in in_shardings/out_shardings."""

    shardings: tuple[SdySharding, ...] = field(default_factory=tuple)

    def stripped(self) -> str:
        """The form manual_computation spells inline: `[<@mesh, [...]>, ...]`."""
        return "[" + ", ".join(f"<{s.body()}>" for s in self.shardings) + "]"

    def __str__(self) -> str:
        return f"#sdy.sharding_per_value<{self.stripped()}>"


@dataclass(frozen=True)
class SdyManualAxes:
    """`{"x", "y"}` in manual_axes."""

    axes: tuple[str, ...] = ()

    def stripped(self) -> str:
        return "{" + ", ".join(quote_string(a) for a in self.axes) + "}"

    def __str__(self) -> str:
        return f"#sdy<manual_axes{self.stripped()}>"
