"""What every op diagram is made of: the op's tensors as panels, coloured by the provenance's roles.

A drawing function, registered per op with `@draws("stablehlo.gather")`, receives a `Scene` (the
op, its values, the provenance of the element asked about, the language) and returns the block to
draw; it asks the scene for the panels of the op's operands and results (already painted with the
sources' role colours and the selected result element) and adds what its op needs: an outline for
a window or slice, arrows for the index path, a note. The scene keeps the legend: every colour a
drawing uses is entered there once, with the role's name in the diagram's language.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Sequence

import numpy as np

from hlodbg.engine.ir.core import Operation
from hlodbg.engine.ir.opdefs import lookup
from hlodbg.engine.ir.phrases import Phrase
from hlodbg.engine.ir.types import TensorType
from hlodbg.engine.ops.provenance import Provenance, Source

from .op_diagram_canvas import (
    SELECTED,
    Block,
    Colour,
    Column,
    LegendEntry,
    RoleColours,
    Row,
    arrow,
    link_ends,
    link_under,
)
from .op_diagram_grid import NUMBER_BAND, Mark, TensorPanel

RESULT = Phrase("result")
RESULT_NUMBERED = Phrase("result #{number}")
SELECTED_ELEMENT = Phrase("the result element asked about")
HIDDEN_SOURCES = Phrase("{count} more source element(s) lie outside the slices drawn")


@dataclass(eq=False)
class Connection:
    """An arrow between two sets of cells, resolved once the panels are placed."""

    start: TensorPanel
    start_cells: Sequence
    end: TensorPanel
    end_cells: Sequence
    colour: Colour
    label: str = ""
    under: bool = False  # dip under the grids (between devices) rather than go straight across


@dataclass
class Scene:
    op: Operation
    operands: Optional[Sequence[Any]]
    results: Optional[Sequence[Any]]
    provenance: Optional[Provenance]
    lang: str
    devices: Optional[dict] = None
    roles: RoleColours = field(default_factory=RoleColours)
    legend: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    connections: list = field(default_factory=list)
    source_panels: list = field(default_factory=list)  # (panel, sources painted on it) to count the hidden ones
    home: Any = None  # on a grid, the device whose result element is asked about
    device_panels: dict = field(default_factory=dict)  # on a grid: device -> (operand panels, result panels)

    # -- naming ----------------------------------------------------------------------------------
    def say(self, phrase: Phrase, **fields) -> str:
        return phrase.say(self.lang, **fields)

    def operand_names(self) -> list[str]:
        """The spec's name of each operand position (`operand`, `start_indices`, `inputs[1]`)."""
        return operand_names(self.op)

    # -- colours and legend --------------------------------------------------------------------
    def role_colour(self, role: Phrase | str) -> Colour:
        """The role's colour, entered in the legend under the role's name in the diagram's language."""
        colour = self.colour_of(role)
        self.add_legend(role.say(self.lang) if hasattr(role, "say") else str(role), colour)
        return colour

    def colour_of(self, role: Phrase | str) -> Colour:
        return self.roles.of(role_key(role))

    def add_legend(self, label: str, colour: Colour, outline: bool = False) -> None:
        entry = LegendEntry(label, colour, outline)
        if entry not in self.legend:
            self.legend.append(entry)

    # -- panels ----------------------------------------------------------------------------------
    def value(self, values: Optional[Sequence[Any]], i: int, shape: tuple[int, ...], what: str) -> Optional[np.ndarray]:
        """The value drawn in a panel, checked against the shape the op's type gives it."""
        if values is None or i >= len(values) or values[i] is None:
            return None
        array = np.asarray(values[i])
        if array.shape != shape:
            raise ValueError(f"{self.op.name}: the value given for {what} has shape {list(array.shape)}, "
                             f"but its type is {shape_text(shape)}")
        return array

    def sources(self, operand: int, device=None) -> list[Source]:
        if self.provenance is None:
            return []
        return [s for s in self.provenance.sources if s.operand == operand and self._on(s.device, device)]

    def _on(self, where, device) -> bool:
        """Whether something placed on `where` (None: the asking device) is drawn on `device`."""
        return device is None or (where if where is not None else self.home) == device

    def operand_panel(self, i: int, *, values: Optional[Sequence[Any]] = None, device=None, heading: Optional[str] = None,
                      dims=None, numbered: bool = False) -> TensorPanel:
        """Operand `i`'s grid with its sources painted in their roles' colours; `numbered` writes
        the order the op combines them in (scatter's updates), also when one element counts twice."""
        value, name = self.op.operands[i], self.operand_names()[i]
        shape = static_shape(self.op, value.type, name)
        panel = TensorPanel(heading or f"{name} {value.name}", name, str(value.type), shape,
                            self.value(self.operands if values is None else values, i, shape, name), dims=dims)
        painted = self.sources(i, device)
        for source in painted:
            panel.paint.setdefault(tuple(source.index), self.role_colour(source.role))
        if numbered and len(painted) > 1:
            for order, source in enumerate(painted, 1):
                key = tuple(source.index)
                panel.badges[key] = (panel.badges[key] + "," if key in panel.badges else "") + str(order)
        self.source_panels.append((panel, painted))
        return panel

    def result_panel(self, r: int = 0, *, values: Optional[Sequence[Any]] = None, device=None, heading: Optional[str] = None,
                     dims=None) -> TensorPanel:
        value = self.op.results[r]
        if heading is None:
            heading = self.say(RESULT) if len(self.op.results) == 1 else self.say(RESULT_NUMBERED, number=r)
            heading = f"{heading} {value.name}"
        shape = static_shape(self.op, value.type, f"result #{r}")
        panel = TensorPanel(heading, "result" if len(self.op.results) == 1 else f"result#{r}", str(value.type), shape,
                            self.value(self.results if values is None else values, r, shape, f"result #{r}"), dims=dims)
        if self.asked_about(r, device):
            panel.selected = tuple(self.provenance.index)
            self.add_legend(self.say(SELECTED_ELEMENT), SELECTED)
        return panel

    def asked_about(self, r: int, device=None) -> bool:
        p = self.provenance
        return p is not None and p.result == r and self._on(p.device, device)

    # -- drawing aids --------------------------------------------------------------------------
    def connect(self, start: TensorPanel, start_cells, end: TensorPanel, end_cells, colour: Colour, label: str = "",
                under: bool = False) -> None:
        self.connections.append(Connection(start, list(start_cells), end, list(end_cells), colour, label, under))

    def outline(self, panel: TensorPanel, cells, colour: Colour, label: Optional[str] = None, dashed: bool = True) -> None:
        cells = [tuple(c) for c in cells]
        if cells:
            panel.marks.append(Mark.around(cells, colour, dashed))
        if label:
            self.add_legend(label, colour, outline=True)

    def connect_sources(self, panel: TensorPanel, operand: int, result: TensorPanel, device=None, under: bool = False) -> None:
        """One arrow per role from the operand's sources to the selected result element."""
        if self.provenance is None or result.selected is None:
            return
        by_role: dict[str, list[Source]] = {}
        for source in self.sources(operand, device):
            by_role.setdefault(role_key(source.role), []).append(source)
        for role, sources in by_role.items():
            self.connect(panel, [s.index for s in sources], result, [result.selected], self.roles.of(role), under=under)

    def draw_connections(self, out: list[str]) -> None:
        ends = [(c, c.start.cells_box(c.start_cells), c.end.cells_box(c.end_cells)) for c in self.connections]
        ends = [(c, start, end) for c, start, end in ends if start is not None and end is not None]
        arriving: dict = defaultdict(list)  # several arrows into one cell arrive side by side, not on one point
        for c, _, end in ends:
            arriving[(id(c.end), end)].append(c)
        for c, start, end in ends:
            if c.under:
                begin, finish, control = link_under(c.start.grid_box(), start, c.end.grid_box(), end)
                arrow(out, begin, finish, c.colour, c.label, control=control)
                continue
            begin, finish = link_ends(c.start.grid_box(), start, c.end.grid_box(), end, NUMBER_BAND + 1)
            group = arriving[(id(c.end), end)]
            shift = (group.index(c) - (len(group) - 1) / 2) * 5.0
            horizontal = abs(finish[0] - begin[0]) >= abs(finish[1] - begin[1])
            finish = (finish[0], finish[1] + shift) if horizontal else (finish[0] + shift, finish[1])
            arrow(out, begin, finish, c.colour, c.label)

    def hidden_sources(self) -> int:
        return sum(1 for panel, sources in self.source_panels for s in sources if not panel.visible(tuple(s.index)))


DrawFunction = Callable[[Scene], Block]
DRAWERS: dict[str, DrawFunction] = {}


def draws(*names: str) -> Callable[[DrawFunction], DrawFunction]:
    """Register the dedicated drawing of each op name."""

    def register(fn: DrawFunction) -> DrawFunction:
        for name in names:
            if name in DRAWERS:
                raise ValueError(f"diagram for {name} registered twice")
            DRAWERS[name] = fn
        return fn

    return register


def generic(scene: Scene) -> Block:
    """Operands on the left, results on the right, sources painted and an arrow per role."""
    operands = {i: scene.operand_panel(i) for i, v in enumerate(scene.op.operands) if is_tensor(v)}
    results = {r: scene.result_panel(r) for r, v in enumerate(scene.op.results) if is_tensor(v)}
    for r, result in results.items():
        if scene.asked_about(r):
            for i, panel in operands.items():
                scene.connect_sources(panel, i, result)
    return Row([Column(list(operands.values())), Column(list(results.values()))], gap=80)


def role_key(role) -> str:
    """A role by its English name (the same in every language), for its colour."""
    return getattr(role, "en", None) or str(role)


def operand_names(op: Operation) -> list[str]:
    """Each flat operand position named as the op's definition names it; a variadic group's members numbered."""
    definition = lookup(op.name)
    count = len(op.operands)
    if definition is None or not definition.operands:
        return [f"operand #{i}" for i in range(count)]
    fixed = sum(1 for _, arity in definition.operands if arity == "")
    variadic = [name for name, arity in definition.operands if arity in ("*", "?")]
    spare = count - fixed
    names: list[str] = []
    for name, arity in definition.operands:
        if arity == "":
            names.append(name)
        else:
            n = spare // len(variadic) if variadic else 0  # groups of one op share their length
            names.extend([name] if arity == "?" and n == 1 else [f"{name}[{k}]" for k in range(n)])
    if len(names) != count:
        return [f"operand #{i}" for i in range(count)]
    return names


def static_shape(op: Operation, type_, what: str) -> tuple[int, ...]:
    if not isinstance(type_, TensorType) or type_.shape is None or any(d is None or d < 0 for d in type_.shape):
        raise ValueError(f"{op.name} at {op.pos}: cannot draw its {what} of type {type_}: "
                         "only tensors of static shape are drawn")
    return tuple(int(d) for d in type_.shape)


def shape_text(shape: Sequence[int]) -> str:
    return "[" + ", ".join(str(d) for d in shape) + "]"


def is_tensor(value) -> bool:
    return isinstance(value.type, TensorType)


__all__ = ["Scene", "draws", "DRAWERS", "generic", "operand_names", "static_shape", "is_tensor", "RESULT"]
