"""HLO text as read, before it becomes IR: a module, its computations and their instructions.

The parser (parser.py) builds this tree from XLA's text (../shared/docs/hlo_text.md §3); the
lowering (lower.py) turns it into the IR every other layer uses. The tree keeps what the text
said and where: names without `%`, shapes with their layout text, every attribute's value as the
exact text written (decoded per opcode by attr_values.py, so an error points into the value), and
a SourcePos for each piece.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from ...ir.errors import SourcePos, SourceText


@dataclass
class HloShape:
    """`f32[2,<=8,?]{2,1,0:T(8,128)}`, `pred[]`, `token[]`, or a tuple `(f32[2], (s32[], u32[]))`.

    `element` is XLA's type name (`f32`, `pred`, `token`, `opaque`, ...) for arrays and None for
    tuples; `dims` holds sizes with None for an unbounded `?`; `bounded[i]` marks `<=N` (N is the
    bound, kept in dims); `layout` is the layout's text with its braces (`{1,0:T(8,128)}`) or None
    when the text gave none; `elements` lists a tuple's shapes.
    """

    element: Optional[str]
    dims: tuple[Optional[int], ...] = ()
    bounded: tuple[bool, ...] = ()
    layout: Optional[str] = None
    elements: Optional[tuple["HloShape", ...]] = None
    pos: Optional[SourcePos] = None

    @property
    def is_tuple(self) -> bool:
        return self.elements is not None

    def text(self, with_layout: bool = True) -> str:
        """The shape as XLA prints it."""
        if self.elements is not None:
            return "(" + ", ".join(e.text(with_layout) for e in self.elements) + ")"
        dims = ",".join(("?" if d is None else ("<=" if b else "") + str(d))
                        for d, b in zip(self.dims, self.bounded or (False,) * len(self.dims)))
        layout = self.layout if with_layout and self.layout is not None else ""
        return f"{self.element}[{dims}]{layout}"


@dataclass
class HloAttr:
    """One `name=value` of an instruction, a module header or a computation: the value's exact text
    (brace-balanced, strings kept quoted) and where it starts."""

    name: str
    text: str
    pos: SourcePos


@dataclass
class HloOperand:
    """An operand reference: the instruction's name, and the shape older XLA printed inline
    (`f32[4]{0} %x`), which the lowering checks against the operand's own shape."""

    name: str
    pos: SourcePos
    shape: Optional[HloShape] = None


@dataclass
class HloInstruction:
    """`[ROOT] name = shape opcode(operands), attr=value, ...`.

    `literal` is the text between a constant's parentheses (`{ {1, 2}, {3, 4} }`, `1`, `{...}`),
    with `literal_pos` where it starts; other opcodes have None. `end` is the text offset just past
    the instruction (its last attribute), so the source pane can highlight it whole.
    `control_predecessors` come out of their attribute into names. `shape` is None when the text
    wrote none (XLA infers some opcodes' shapes); the lowering fills it in.
    """

    name: str
    shape: Optional[HloShape]
    opcode: str
    operands: list[HloOperand]
    attrs: dict[str, HloAttr]
    pos: SourcePos
    opcode_pos: SourcePos
    end: int
    is_root: bool = False
    literal: Optional[str] = None
    literal_pos: Optional[SourcePos] = None


@dataclass
class HloParameterDecl:
    """One `name: shape` of a computation's printed signature."""

    name: str
    shape: HloShape
    pos: SourcePos


@dataclass
class HloComputation:
    """`[ENTRY] name [(params) -> shape] { instructions }[, execution_thread="..."]`.

    `signature` is None when the text printed none; `root` is the ROOT instruction (the last one
    when none is marked); `attrs` holds what follows the closing brace.
    """

    name: str
    instructions: list[HloInstruction]
    root: HloInstruction
    pos: SourcePos
    end: int
    is_entry: bool = False
    signature: Optional[list[HloParameterDecl]] = None
    result_shape: Optional[HloShape] = None
    attrs: dict[str, HloAttr] = field(default_factory=dict)

    def parameters(self) -> list[HloInstruction]:
        """The `parameter(n)` instructions in parameter-number order."""
        params = [i for i in self.instructions if i.opcode == "parameter"]
        return sorted(params, key=lambda i: int(i.literal or 0))


@dataclass
class FileLocation:
    file_name_id: int
    function_name_id: int
    line: int
    end_line: Optional[int] = None
    column: Optional[int] = None
    end_column: Optional[int] = None


@dataclass
class StackFrameTables:
    """The `FileNames / FunctionNames / FileLocations / StackFrames` section (ids 1-based as printed;
    a frame's `parent_frame_id` is printed as parent index + 1, so 1... see hlo_text.md §3):
    `frames[id] = (file_location_id, parent_frame_id as printed)`."""

    file_names: dict[int, str] = field(default_factory=dict)
    function_names: dict[int, str] = field(default_factory=dict)
    file_locations: dict[int, FileLocation] = field(default_factory=dict)
    frames: dict[int, tuple[int, int]] = field(default_factory=dict)
    text: str = ""  # the section exactly as written, for the printer to give back


@dataclass
class HloModuleText:
    """One module: `HloModule name, attr=value...`, the stack frames, the computations (callees
    before callers, as the text has them) and the entry. A header-less text has name None."""

    name: Optional[str]
    attrs: dict[str, HloAttr]
    computations: list[HloComputation]
    entry: HloComputation
    source: SourceText
    pos: SourcePos
    stack_frames: Optional[StackFrameTables] = None

    def computation(self, name: str) -> Optional[HloComputation]:
        for c in self.computations:
            if c.name == name:
                return c
        return None
