"""hlodbg in Jupyter: programs, debugging sessions, explanations and memory profiles show
themselves as pictures.

    import hlodbg                            # in a notebook: the displays below are registered
    program = hlodbg.load("model.mlir")
    program                                  # the dataflow graph, folded as `hlodbg export` draws it
    s = program.session()                    # a debugging session (hlodbg.engine.debug.session)
    s.step(); s                              # where it stopped, the op's values, the op marked
    program.explain("%5", at=(0, 0))         # what the op does, and its diagram
    program.memory("tpu-v5e")                # the memory profile's picture

How it is wired, and why. Three of the four objects belong to the engine (a Session, an
Explanation, a MemoryAnalysis), and the engine never imports layouts/, where the pictures are
drawn (docs/architecture.md), so they cannot draw themselves with a `_repr_html_`. hlodbg, which
may import both, registers IPython display formatters for them by type name
(`for_type_by_name`: registering imports none of their modules) when hlodbg is imported in a
running IPython shell (hlodbg/__init__.py), or on `%load_ext hlodbg`. Program, hlodbg's own,
goes through the same formatters: one way for all four. Outside IPython this module is not
imported, and IPython never is. Every object's text stays useful where HTML is not shown: the
`repr` of a Program, a Session (where it is, without starting the run) and a MemoryAnalysis is one
line, and in IPython an Explanation and a MemoryAnalysis show their reports as the CLI prints them.

Each display is HTML: a few lines of words and the picture as an `<img>` of its SVG in a
scrolling box. An image keeps each SVG to itself; SVGs inlined in one page would share their
`<style>` rules and element ids (a graph's `.title` is not a diagram's).

A graph is drawn at a bounded size: the program as `hlodbg export` draws it (every function once,
calls as nodes) up to FOLD_ABOVE nodes, else with every group folded (a 100k-op program's view is
tens of boxes); a view still over DRAWN_NODES_MAX nodes is not drawn, and the display says how to
draw part of it. Each module is laid out once and kept: a step recolours it, and lays out only
the few ops around the current one for the session's first picture.
"""
from __future__ import annotations

import base64
import html
import weakref
from dataclasses import dataclass
from typing import Any, Optional

FOLD_ABOVE = 600  # nodes of the whole-program view past which its groups are folded
DRAWN_NODES_MAX = 1500  # nodes a picture may have at all
CURRENT_FILL = "#ffd54f"
CURRENT_BADGE = "current op"
NEIGHBOURHOOD_RADIUS = 3  # edges around the current op a session's first picture shows
NEIGHBOURHOOD_NODES = 40
MEMORY_TOP = 10  # buffers listed and drawn at the peak, as `hlodbg memory` does by default
SCROLL_BOX = "max-height:640px;max-width:100%;overflow:auto;border:1px solid #d0d0d0;padding:2px"
# What a notebook calls to move a session (engine/debug/session.py); each returns the Stop.
CONTROLS = ("s.step()", "s.step_in()", "s.step_out()", "s.back()", "s.continue_()", "s.reverse_continue()",
            "s.run_to('%12')", "s.goto(event)", "s.break_at('nan')", "s.restart()")

# The types shown, by the module that defines each (for_type_by_name never imports it).
_PROGRAM = ("hlodbg.program", "Program")
_SESSION = ("hlodbg.engine.debug.session", "Session")
_EXPLANATION = ("hlodbg.engine.debug.explain", "Explanation")
_MEMORY = ("hlodbg.engine.run.memory_profile", "MemoryAnalysis")


def register(shell) -> None:
    """Make an IPython shell display hlodbg's objects (see the module docstring)."""
    formatters = shell.display_formatter.formatters
    rich = formatters["text/html"]
    rich.for_type_by_name(*_PROGRAM, program_html)
    rich.for_type_by_name(*_SESSION, session_html)
    rich.for_type_by_name(*_EXPLANATION, explanation_html)
    rich.for_type_by_name(*_MEMORY, memory_html)
    plain = formatters["text/plain"]  # a pretty-printer's functions are called (object, printer, cycle)
    plain.for_type_by_name(*_EXPLANATION, lambda explanation, printer, cycle: printer.text(explanation.text()))
    plain.for_type_by_name(*_MEMORY, lambda analysis, printer, cycle: printer.text(memory_report(analysis)))


def register_in_running_shell() -> bool:
    """Register with the IPython shell this process runs, if any (IPython is not imported for it)."""
    import sys

    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None and hasattr(ipython, "get_ipython") else None
    if shell is None or not hasattr(shell, "display_formatter"):
        return False
    register(shell)
    return True


# -- the displays --------------------------------------------------------------------------------


def program_html(program) -> str:
    """A Program: its name and size, and its dataflow graph."""
    functions = len(program.functions)
    heading = (f"<b>{_text(program.name)}</b>: {program.op_count:,} ops in {functions} "
               f"function{'s' if functions != 1 else ''}")
    picture, note = _graph_picture(program.module)
    return _block(heading, _note(note), picture)


def session_html(session) -> str:
    """A debugging Session: where it stopped, the op's operands and results, the ops around it
    and (opened on a click) the whole graph, the op marked in both, and the calls that move it."""
    op = None if session.finished else session.op
    around = _picture(lambda: neighbourhood_svg(session.module, op), "the ops around the current op") if op else ""
    whole, note = _graph_picture(session.module, current=op)
    if whole and around:
        whole = f"<details><summary>the whole program</summary>{whole}</details>"
    controls = "moves: " + " · ".join(f"<code>{_text(c)}</code>" for c in CONTROLS)
    return _block(*_session_status(session), around, _note(note), whole, f'<div style="color:#606060">{controls}</div>')


def explanation_html(explanation) -> str:
    """An Explanation: its text as `hlodbg explain` prints it, and the op's diagram."""
    from hlodbg.layouts.op_diagram import explanation_svg

    picture = _picture(lambda: explanation_svg(explanation), f"diagram of {explanation.op.name}")
    return _block(f"<pre>{_text(explanation.text())}</pre>", picture)


def memory_html(analysis) -> str:
    """A MemoryAnalysis: `hlodbg memory`'s report and its picture."""
    from hlodbg.layouts.memory_svg import memory_svg

    name = _module_name(analysis.module)
    picture = _picture(lambda: memory_svg(analysis, name, MEMORY_TOP), f"memory of {name}")
    return _block(f"<pre>{_text(memory_report(analysis))}</pre>", picture)


def memory_report(analysis) -> str:
    from hlodbg.cli_memory import memory_text

    return memory_text(_module_name(analysis.module), analysis, MEMORY_TOP)


# -- a session's status --------------------------------------------------------------------------


def _session_status(session) -> list[str]:
    from hlodbg.engine.debug.op_values import operand_label
    from hlodbg.engine.debug.stops import op_label

    if session.finished:
        if session.error is not None:
            return [f"<b>failed</b>:<pre style=\"margin:2px 0\">{_text(str(session.error))}</pre>"]
        from hlodbg.engine.run.interpreter import entry_function

        types = entry_function(session.module, session.entry).function_type.results
        rows = [(f"result {k}", str(t), _summary(v)) for k, (t, v) in enumerate(zip(types, session.results or []))]
        return [f"<b>finished</b> after {len(session.trace):,} events", _table(rows)]
    event = session.event()
    op = event.op
    line = f" (line {op.pos.line})" if op.pos is not None else ""
    out = [f"<b>stopped before event {event.id:,}</b>: <code>{_text(op_label(op))}</code>{line}",
           f"<pre style=\"margin:2px 0\">{_text(session.where())}</pre>"]
    if session.note:
        out.append(_note(session.note))
    missing = "not run yet: s.step() runs it"
    if session.error is not None:
        out.append(f"<b>the run failed</b>:<pre style=\"margin:2px 0\">{_text(str(session.error))}</pre>")
        missing = "not computed: the run failed"
    rows = [(operand_label(i, operand), str(operand.type), _summary(value))  # an argument with its pytree name
            for i, (operand, value) in enumerate(zip(op.operands, event.inputs))]
    outputs = event.outputs
    for k, result in enumerate(op.results):
        rows.append((f"result {k}: {result.name}", str(result.type), _summary(outputs[k]) if k < len(outputs) else missing))
    out.append(_table(rows))
    return out


def _summary(value: Any) -> str:
    from hlodbg.engine.debug.summary import summarize

    try:
        return summarize(value).describe()
    except (TypeError, ValueError):  # not a numeric tensor: say what it is
        return type(value).__name__


# -- the graph -----------------------------------------------------------------------------------


@dataclass
class _Drawing:
    """A module's graph as a notebook draws it: the bounded view, its layout (None when even the
    folded view is too big to draw), and a sentence on how it was folded or why it is not drawn."""

    view: Any
    layout: Any
    note: str


_drawings: "weakref.WeakKeyDictionary[Any, _Drawing]" = weakref.WeakKeyDictionary()


def _drawing(module) -> _Drawing:
    found = _drawings.get(module)
    if found is None:
        found = _drawings[module] = _draw(module)
    return found


def _draw(module) -> _Drawing:
    from hlodbg.layouts.export import folded_view
    from hlodbg.layouts.layout import compute_layout

    view, collapse = folded_view(module, FOLD_ABOVE)
    if view.node_count > DRAWN_NODES_MAX:
        return _Drawing(view, None, f"the graph has {view.node_count:,} nodes even with its groups folded, more than "
                                    f"the {DRAWN_NODES_MAX:,} a notebook draws: draw one function or the neighbourhood "
                                    "of an op with `hlodbg export PROG -o OUT.svg --function NAME` or `--focus %N`")
    note = ""
    if collapse == "groups":
        note = (f"{view.base.node_count:,} nodes, drawn with each group folded into one box ({view.node_count:,} "
                "nodes): `hlodbg export PROG -o OUT.svg` draws every op")
    return _Drawing(view, compute_layout(view), note)


def current_node(view, op) -> Optional[str]:
    """The node of `view` that draws `op`: its own, or the folded box around it (a group, a
    fusion, a region drawn inside its op); None when the view does not draw it."""
    from hlodbg.engine.ir.core import Function

    while op is not None and not isinstance(op, Function):
        nodes = view.base.nodes_of(op)
        if nodes:
            return view.shown_as(nodes[0])
        op = op.parent_op
    return None


def graph_svg(module, current=None) -> tuple[Optional[str], str]:
    """(the SVG of the module's bounded graph with the op `current` marked, or None when it is
    too big to draw; the note saying how it was folded or why it is not drawn)."""
    drawing = _drawing(module)
    if drawing.layout is None:
        return None, drawing.note
    return _marked_svg(drawing.view, drawing.layout, current), drawing.note


def neighbourhood_svg(module, op) -> Optional[str]:
    """The SVG of the ops around `op` (NEIGHBOURHOOD_RADIUS edges, at most NEIGHBOURHOOD_NODES
    nodes, inside its function) in the whole graph, nothing folded, `op` marked; None when the
    graph does not draw `op` (a terminator)."""
    from hlodbg.layouts.layout import compute_layout

    whole = _drawing(module).view.base
    node = current_node(whole, op)
    if node is None:
        return None
    view = whole.focus(node, NEIGHBOURHOOD_RADIUS, NEIGHBOURHOOD_NODES)
    # Not cached on disk: a session makes one per op it stops at, and each takes milliseconds.
    return _marked_svg(view, compute_layout(view, use_cache=False), op)


def _marked_svg(view, layout, op) -> str:
    from hlodbg.layouts.overlay import LegendEntry, Overlay
    from hlodbg.layouts.svg import render_svg

    node = current_node(view, op) if op is not None else None
    overlay = None
    if node is not None:
        overlay = Overlay("debugger", fills={node: CURRENT_FILL}, badges={node: CURRENT_BADGE},
                          legend=[LegendEntry(CURRENT_BADGE, CURRENT_FILL)])
    return render_svg(view, layout, overlay=overlay)


def _graph_picture(module, current=None) -> tuple[str, str]:
    """(the graph as an image in a scrolling box, or a sentence saying why there is none; the note)."""
    notes: list[str] = []

    def draw() -> Optional[str]:
        svg, note = graph_svg(module, current)
        notes.append(note)
        return svg

    picture = _picture(draw, "dataflow graph")
    return picture, notes[0] if notes else ""


# -- HTML ----------------------------------------------------------------------------------------


def _picture(draw, alt: str) -> str:
    """`draw()`'s SVG as an image in a scrolling box; what hlodbg says instead when it cannot be
    drawn (a graph too big to lay out), and nothing when `draw` returns None."""
    from hlodbg.engine.ir.errors import HlodbgError

    try:
        svg = draw()
    except HlodbgError as error:
        return _note(f"no picture: {error.message}")
    if svg is None:
        return ""
    data = base64.b64encode(svg.encode("utf-8")).decode("ascii")
    return (f'<div style="{SCROLL_BOX}"><img alt="{_text(alt)}" style="max-width:none" '
            f'src="data:image/svg+xml;base64,{data}"/></div>')


def svg_of(html_text: str) -> list[str]:
    """The SVG documents a display's HTML holds as images (for tests and for saving one)."""
    import re

    return [base64.b64decode(found).decode("utf-8")
            for found in re.findall(r'src="data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)"', html_text)]


def _table(rows: list[tuple[str, str, str]]) -> str:
    if not rows:
        return ""
    body = "".join(f"<tr><td><code>{_text(name)}</code></td><td><code>{_text(type_)}</code></td>"
                   f"<td style=\"text-align:left\">{_text(summary)}</td></tr>" for name, type_, summary in rows)
    return f'<table style="font-size:90%;margin:2px 0">{body}</table>'


def _note(text: str) -> str:
    return f'<div style="color:#606060">{_text(text)}</div>' if text else ""


def _block(*parts: str) -> str:
    return '<div class="hlodbg">' + "".join(f"<div>{p}</div>" if p.startswith("<b>") else p for p in parts if p) + "</div>"


def _text(text: str) -> str:
    return html.escape(text, quote=True)


def _module_name(module) -> str:
    from pathlib import PurePath

    source = getattr(module, "source", None)
    if source is not None and source.name and not source.name.startswith("<"):
        return PurePath(source.name).name
    return module.name or "program"


__all__ = ["register", "register_in_running_shell", "program_html", "session_html", "explanation_html", "memory_html",
           "memory_report", "graph_svg", "neighbourhood_svg", "current_node", "svg_of", "FOLD_ABOVE", "DRAWN_NODES_MAX"]
