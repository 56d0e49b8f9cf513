"""The Textual app: browse a program's functions and ops beside its source.

Selecting an op shows its .mlir line highlighted in the source, its producer location (the JAX
line that made it), its types and decoded attributes.
"""
from __future__ import annotations

from typing import Optional

from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Footer, Header, Static, Tree

from hlodbg.engine import Function, Operation
from hlodbg.engine.attributes import format_attribute
from hlodbg.engine.locations import describe, name_stack, user_frame
from hlodbg.layouts.labels import result_names
from hlodbg.layouts.palette import node_category, style_of

from .lexer import StableHLOLexer

class SourcePane(VerticalScroll):
    """The program text with the selected op's line highlighted."""

    def __init__(self, text: str, **kwargs):
        super().__init__(**kwargs)
        self.text = text
        self.lexer = StableHLOLexer()
        self.view = Static(self._syntax(None), id="source-text")

    def compose(self) -> ComposeResult:
        yield self.view

    def _syntax(self, line: Optional[int]) -> Syntax:
        return Syntax(
            self.text,
            self.lexer,
            line_numbers=True,
            highlight_lines={line} if line else set(),
            word_wrap=False,
            theme="monokai",
        )

    def show_line(self, line: int) -> None:
        self.view.update(self._syntax(line))
        self.scroll_to(y=max(0, line - 6), animate=False)


def describe_op(op: Operation) -> Table:
    table = Table.grid(padding=(0, 1))
    table.add_column(style="bold")
    table.add_column()
    category = node_category(op.name)
    table.add_row("op", Text(op.name, style=style_of(category).terminal))
    table.add_row("category", style_of(category).title)
    if op.pos is not None:
        table.add_row("source", str(op.pos))
    frame = user_frame(op.location)
    if frame is not None:
        table.add_row("producer", f"{frame.filename}:{frame.line}:{frame.col}")
    stack = name_stack(op.location)
    if stack:
        table.add_row("name", stack)
    for i, value in enumerate(op.operands):
        table.add_row(f"operand {i}", f"{value.name}: {value.type}")
    for i, value in enumerate(op.results):
        table.add_row(f"result {i}", f"{value.name}: {value.type}")
    for key, value in op.attributes.items():
        text = format_attribute(value)
        table.add_row(key, text if len(text) < 400 else text[:400] + " ...")
    return table


class ProgramApp(App):
    """hlodbg's main window."""

    CSS_PATH = "app.tcss"
    TITLE = "hlodbg"
    BINDINGS = [
        Binding("q", "quit", "Quit", id="quit"),
        Binding("s", "focus_source", "Source", id="focus_source"),
        Binding("o", "focus_ops", "Ops", id="focus_ops"),
    ]

    def __init__(self, program, **kwargs):
        super().__init__(**kwargs)
        self.program = program
        self.selected_op: Optional[Operation] = None
        self.sub_title = f"{program.name} — {program.op_count} ops, {len(program.functions)} functions"

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal():
            with Vertical(id="left"):
                yield Tree(self.program.name, id="ops")
                yield VerticalScroll(Static("Select an op", id="details"), id="details-pane")
            yield SourcePane(self.program.source, id="source")
        yield Footer()

    def on_mount(self) -> None:
        tree = self.query_one("#ops", Tree)
        tree.root.expand()
        for function in self.program.functions.values():
            node = tree.root.add(Text(f"@{function.sym_name}", style="bold"), data=function, expand=True)
            if not function.is_declaration:
                self._add_ops(node, function.body.operations)
        tree.focus()

    def _add_ops(self, parent, ops) -> None:
        for op in ops:
            label = Text()
            if op.results:
                label.append(result_names(op) + " = ", style="dim")
            label.append(op.name, style=style_of(node_category(op.name)).terminal)
            where = describe(op.location)
            if where:
                label.append(f"  {where}", style="dim italic")
            if op.regions:
                node = parent.add(label, data=op, expand=False)
                for index, region in enumerate(op.regions):
                    region_node = node.add(Text(f"region {index}", style="italic"), data=op)
                    for block in region.blocks:
                        self._add_ops(region_node, block.operations)
            else:
                parent.add_leaf(label, data=op)

    def on_tree_node_highlighted(self, event: Tree.NodeHighlighted) -> None:
        op = event.node.data
        if isinstance(op, Operation):
            self.show_op(op)

    def show_op(self, op: Operation) -> None:
        self.selected_op = op
        details = self.query_one("#details", Static)
        details.update(describe_op(op) if not isinstance(op, Function) else f"@{op.sym_name}: {op.function_type}")
        if op.pos is not None:
            self.query_one(SourcePane).show_line(op.pos.line)

    def action_focus_source(self) -> None:
        self.query_one(SourcePane).focus()

    def action_focus_ops(self) -> None:
        self.query_one("#ops", Tree).focus()
