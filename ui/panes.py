"""The debugger's panes by contract: what a pane shows, where it sits, and the one list of them.

A pane is a widget that declares which views of the SessionState it shows (`shows`, names of
SessionState's fields) and draws itself from a state (`show_state`). MainScreen lays the panes
out from the registry below and, after every move, hands the new state to each pane whose views
changed: a new pane is its widget and one `register_pane` call (docs/architecture.md, "Adding a
pane"). Widgets that are laid out here but filled otherwise (the explain pane and the provenance
view, which answer the cursor) show nothing of the state: their `shows` is empty.
"""
from __future__ import annotations

from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any, Callable, ClassVar, Optional, Protocol

from .state import SessionState

if TYPE_CHECKING:
    from textual.widget import Widget

# Where a pane goes: the top row (graph, source), the bottom row (values, devices), the side panel
# of the bottom row (memory, frames, breakpoints), or the foot of the screen under the command line.
AREAS = ("top", "bottom", "side", "foot")
CONCERNS = tuple(f.name for f in fields(SessionState))


class StatePane(Protocol):
    """What MainScreen asks of a pane that shows part of the session state."""

    shows: ClassVar[tuple[str, ...]]  # SessionState's views the pane draws ("where", "marks", ...)

    def show_state(self, state: SessionState) -> None:
        """Draw the views named in `shows` from `state`."""


@dataclass(frozen=True)
class PaneSpec:
    """One pane of the debugger's screen."""

    widget: type  # a Widget class; a StatePane unless it shows nothing of the state
    id: str  # its DOM id (app.tcss styles it by it)
    area: str  # one of AREAS
    title: Optional[str] = None  # its border title
    # How the screen makes it (default: `widget(id=id)`); gets the screen and the id.
    make: Optional[Callable[[Any, str], "Widget"]] = None
    # Whether the screen has it at all (the devices pane only on a grid); gets the screen.
    present: Optional[Callable[[Any], bool]] = None

    @property
    def shows(self) -> tuple[str, ...]:
        """The views of the state the pane draws; none for a pane filled otherwise."""
        return tuple(getattr(self.widget, "shows", ()))

    def build(self, screen) -> "Widget":
        return self.make(screen, self.id) if self.make is not None else self.widget(id=self.id)

    def wanted(self, screen) -> bool:
        return self.present is None or bool(self.present(screen))


class PaneError(ValueError):
    """A pane registered against the contract (a bug in the code that registers it)."""


PANES: list[PaneSpec] = []


def register_pane(spec: PaneSpec) -> PaneSpec:
    """Add a pane to the debugger's screen, after the panes of its area registered before it. The
    contract is checked here, not at the first move: a known area, an id of its own, and views
    SessionState has."""
    if spec.area not in AREAS:
        raise PaneError(f"pane {spec.id!r}: area {spec.area!r} is not one of {', '.join(AREAS)}")
    if any(other.id == spec.id for other in PANES):
        raise PaneError(f"pane {spec.id!r} is registered already")
    shows = spec.shows
    unknown = [name for name in shows if name not in CONCERNS]
    if unknown:
        raise PaneError(f"pane {spec.id!r} shows {', '.join(unknown)}, which SessionState does not have "
                        f"(it has {', '.join(CONCERNS)})")
    if shows and not callable(getattr(spec.widget, "show_state", None)):
        raise PaneError(f"pane {spec.id!r} shows {', '.join(shows)} but has no show_state(state)")
    PANES.append(spec)
    return spec


def unregister_pane(spec: PaneSpec) -> None:
    """Take a pane off the screens made from now on."""
    PANES.remove(spec)


def needs_drawing(pane: StatePane, state: SessionState, drawn: Optional[SessionState]) -> bool:
    """Whether `pane` must draw `state`: the first state, or a view it shows that is not the one it
    drew (views are made anew for what changed, so identity says it)."""
    return drawn is None or any(getattr(state, name) is not getattr(drawn, name) for name in pane.shows)


__all__ = ["AREAS", "CONCERNS", "PANES", "PaneError", "PaneSpec", "StatePane", "needs_drawing", "register_pane",
           "unregister_pane"]
