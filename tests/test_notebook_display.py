"""hlodbg's Jupyter displays (hlodbg/notebook.py), without a kernel: what each object's HTML holds,
that a big program's picture stays bounded, and how the formatters are registered.
tests/test_notebook_tour.py runs the sample notebook in a real kernel."""
from __future__ import annotations

import html
import re
import subprocess
import sys
from xml.etree import ElementTree

import numpy as np
import pytest

import hlodbg
from hlodbg import notebook
from hlodbg.notebook import (
    CURRENT_BADGE,
    CURRENT_FILL,
    explanation_html,
    memory_html,
    program_html,
    session_html,
    svg_of,
)
from hlodbg.samples import default_sample_path
from tests.scale_helpers import write_layered_program

SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture
def program():
    return hlodbg.load(default_sample_path())


def marked_names(svg: str) -> list[str]:
    """The names (data-name) of the nodes a picture marks as the current op: filled in its colour
    and carrying its badge."""
    marked = []
    for group in ElementTree.fromstring(svg).iter(f"{SVG}g"):
        if "node" not in group.get("class", "").split():
            continue
        shape = next((e for e in group if e.get("class") == "shape"), None)
        badge = [t.text for t in group.iter(f"{SVG}text") if t.text == CURRENT_BADGE]
        if shape is not None and f"fill:{CURRENT_FILL}" in (shape.get("style") or "") and badge:
            marked.append(group.get("data-name"))
    return marked


def node_count(svg: str) -> int:
    return sum(1 for g in ElementTree.fromstring(svg).iter(f"{SVG}g") if "node" in g.get("class", "").split())


def test_a_program_shows_its_graph(program):
    shown = program_html(program)
    assert f"<b>{program.name}</b>: {program.op_count} ops in {len(program.functions)} functions" in shown
    [svg] = svg_of(shown)
    names = {g.get("data-name") for g in ElementTree.fromstring(svg).iter(f"{SVG}g")}
    assert {"%0", "%1", "%arg0"} <= names  # the while loop and the reduce after it, the first argument
    assert marked_names(svg) == []  # no session: nothing is current


def test_a_session_marks_the_op_it_stopped_at_and_moves_with_each_step(program):
    session = program.session([np.ones((4, 8), np.float32), np.ones((8, 16), np.float32),
                               np.ones((16, 8), np.float32)], persist=False)
    first = session_html(session)
    assert "stopped before event 0" in first and "%c = stablehlo.constant" in first
    around, whole = svg_of(first)
    assert marked_names(around) == marked_names(whole) == ["%c"]
    session.step()
    stepped = session_html(session)
    assert "stopped before event 1" in stepped and "%0#0, %0#1, %0#2, %0#3 = stablehlo.while" in stepped
    assert all(marked_names(svg) == ["%0:4"] for svg in svg_of(stepped))
    # Its operands' summaries, each a line of the table; its results are not computed yet.
    assert re.search(r"operand 0: %arg1 \(w1\)</code></td><td><code>tensor&lt;8x16xf32&gt;</code></td>"
                     r"<td[^>]*>8x16xf32 min 1 max 1 mean 1", stepped)
    assert "not run yet: s.step() runs it" in stepped
    session.step_in()  # into the loop's condition: the op is inside the while's region
    assert "@main while.cond #0" in session_html(session)
    assert all(marked_names(svg) == ["%c_5"] for svg in svg_of(session_html(session)))
    session.back_out()
    assert all(marked_names(svg) == ["%0:4"] for svg in svg_of(session_html(session)))
    for name in ("s.step()", "s.back()", "s.continue_()", "s.reverse_continue()", "s.run_to('%12')"):
        assert f"<code>{html.escape(name)}</code>" in stepped  # the moves a notebook makes, named where it looks


def test_a_finished_session_shows_its_results_and_marks_nothing(program):
    session = program.session(persist=False)
    session.continue_()
    shown = session_html(session)
    assert "<b>finished</b> after" in shown and re.search(r"result 0</code></td><td><code>tensor&lt;4x8xf32&gt;</code></td><td[^>]*>4x8xf32 min", shown)
    [whole] = svg_of(shown)
    assert marked_names(whole) == []


def test_a_session_after_an_op_ran_shows_its_results(program):
    session = program.session(persist=False)
    session.step()
    session.back()  # the constant has run: its result is known here
    assert "%c = stablehlo.constant" in session_html(session)
    assert re.search(r"result 0: %c</code></td><td><code>tensor&lt;i32&gt;</code></td><td[^>]*>i32 .*0",
                     session_html(session))


FAILING = """func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.abs %a : tensor<2xf32>
  %1 = stablehlo.custom_call @nonesuch(%0) : (tensor<2xf32>) -> tensor<2xf32>
  return %1 : tensor<2xf32>
}"""


def test_a_session_whose_run_failed_says_why_where_it_stopped():
    session = hlodbg.load(FAILING).session(persist=False)
    assert session.continue_().reason == "error"
    shown = session_html(session)
    assert "<b>the run failed</b>:<pre" in shown and "unknown custom_call target @nonesuch" in shown
    assert "not computed: the run failed" in shown and "2xf32 min" in shown  # its operand is known
    assert all(marked_names(svg) == ["%1"] for svg in svg_of(shown))
    assert repr(session) == "<Session of @main: at [1] @main: %1 = stablehlo.custom_call line 3 (the run failed)>"


def test_the_text_of_a_session_says_where_it_is_without_starting_the_run(program):
    session = program.session(persist=False)
    assert repr(session) == "<Session of @main: not started>"
    assert len(session.trace) == 0  # asking did not run anything
    session.step()
    assert repr(session) == "<Session of @main: at [1] @main: %0#0, %0#1, %0#2, %0#3 = stablehlo.while line 18>"
    session.continue_()
    assert repr(session) == "<Session of @main: finished>"


def test_an_explanation_shows_its_text_and_its_diagram(program):
    explanation = program.explain("%1", at=(2,))
    shown = explanation_html(explanation)
    assert "%1 = stablehlo.reduce (line" in shown and "Where result #0 element (2) comes from" in shown
    [diagram] = svg_of(shown)
    assert "stablehlo.reduce: where result[2] comes from" in diagram
    assert repr(explanation).startswith("<Explanation %1 = stablehlo.reduce (line")


def test_explain_reads_the_element_as_text_too_and_refuses_a_wrong_one(program):
    assert program.explain("%1", at="2").provenance.index == (2,)
    with pytest.raises(hlodbg.HlodbgError, match=r"^error: at '2,0' has 2 index\(es\) but result #0 of %1 has rank 1"):
        program.explain("%1", at=(2, 0))
    with pytest.raises(hlodbg.HlodbgError, match=r"^error: result 1: %1 \(stablehlo.reduce\) has 1 result\(s\)"):
        program.explain("%1", at=(2,), result=1)
    with pytest.raises(ValueError, match="unknown language 'xx'"):
        program.explain("%1", lang="xx")


def test_a_memory_profile_shows_the_report_and_its_picture(program):
    shown = memory_html(program.memory("tpu-v5e"))
    assert "tiny_model.mlir @main on tpu-v5e" in shown and "peak" in shown
    [picture] = svg_of(shown)
    assert ElementTree.fromstring(picture).tag == f"{SVG}svg"
    assert notebook.memory_report(program.memory("tpu-v5e")).startswith("tiny_model.mlir @main on tpu-v5e")
    assert repr(program.memory("tpu-v5e")) == "<MemoryAnalysis of @main on tpu-v5e: 1 device (1x1), peak 20.5 KiB, fits>"


def test_a_big_program_is_drawn_folded_and_bounded(tmp_path, monkeypatch):
    big = hlodbg.load(write_layered_program(tmp_path, 3000))  # about 190 layers of 16 ops
    shown = program_html(big)
    [svg] = svg_of(shown)
    assert node_count(svg) <= notebook.FOLD_ABOVE
    assert "drawn with each group folded into one box" in shown
    session = big.session(persist=False)
    session.run_to("%200")
    stepped = session_html(session)
    around, whole = svg_of(stepped)
    assert marked_names(around) == ["%200"]  # the ops around it, nothing folded
    [box] = marked_names(whole)  # in the whole program, the folded layer holding it
    assert box != "%200" and node_count(whole) <= notebook.FOLD_ABOVE


def test_a_graph_too_big_even_folded_says_so_instead_of_drawing(program, monkeypatch):
    monkeypatch.setattr(notebook, "DRAWN_NODES_MAX", 3)
    monkeypatch.setattr(notebook, "_drawings", type(notebook._drawings)())
    shown = program_html(program)
    assert svg_of(shown) == []
    assert "more than the 3 a notebook draws" in shown and "--focus %N" in shown
    session = program.session(persist=False)
    assert len(svg_of(session_html(session))) == 1  # the ops around the current op are still drawn


def test_a_picture_that_cannot_be_made_is_a_sentence_not_a_traceback(program, monkeypatch):
    from hlodbg.layouts.graph import GraphError

    def refuse(module, fold_above):
        raise GraphError("no layout today")

    monkeypatch.setattr("hlodbg.layouts.export.folded_view", refuse)
    monkeypatch.setattr(notebook, "_drawings", type(notebook._drawings)())
    shown = program_html(program)
    assert "no picture: no layout today" in shown and svg_of(shown) == []


def test_the_formatters_are_registered_by_type_name():
    formatters = pytest.importorskip("IPython.core.formatters")

    class Shell:
        display_formatter = formatters.DisplayFormatter()

    notebook.register(Shell)
    program = hlodbg.load(default_sample_path())
    data, _ = Shell.display_formatter.format(program)
    assert svg_of(data["text/html"]) and data["text/plain"] == repr(program)
    explanation = program.explain("%1")
    data, _ = Shell.display_formatter.format(explanation)
    assert data["text/plain"] == explanation.text() and svg_of(data["text/html"])
    data, _ = Shell.display_formatter.format(program.memory())
    assert data["text/plain"].startswith("tiny_model.mlir @main on cpu") and svg_of(data["text/html"])
    session = program.session(persist=False)
    data, _ = Shell.display_formatter.format(session)
    assert data["text/plain"] == "<Session of @main: not started>" and len(svg_of(data["text/html"])) == 2


def test_importing_hlodbg_outside_ipython_imports_no_ipython():
    code = ("import sys, hlodbg; p = hlodbg.load(str(hlodbg.samples.default_sample_path())); repr(p); "
            "print('IPython' in sys.modules, 'hlodbg.notebook' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.stdout.split() == ["False", "False"], done.stderr


SHOWN_IN_SHELL = ("p = hlodbg.load(str(hlodbg.samples.default_sample_path())); "
                  "shell.display_formatter.formatters['text/html'].enabled = True; "  # a terminal shell shows text only
                  "data, _ = shell.display_formatter.format(p); print('data:image/svg+xml' in data.get('text/html', ''))")


@pytest.mark.parametrize("code", [
    # imported inside a running shell (a notebook's kernel): registered at once
    "from IPython.testing.globalipapp import start_ipython; shell = start_ipython(); import hlodbg; ",
    # imported before the shell started: `%load_ext hlodbg`
    "import hlodbg; from IPython.testing.globalipapp import start_ipython; shell = start_ipython(); "
    "shell.run_line_magic('load_ext', 'hlodbg'); ",
], ids=["import", "load_ext"])
def test_a_shell_shows_programs_after_import_or_load_ext(code):
    pytest.importorskip("IPython")
    done = subprocess.run([sys.executable, "-c", code + SHOWN_IN_SHELL], capture_output=True, text=True, timeout=300)
    assert done.stdout.split()[-1:] == ["True"], done.stderr


def test_without_load_ext_a_shell_started_after_import_shows_text():
    """The check above can fail: a shell that hlodbg was imported before shows no picture until
    `%load_ext hlodbg`."""
    pytest.importorskip("IPython")
    code = "import hlodbg; from IPython.testing.globalipapp import start_ipython; shell = start_ipython(); "
    done = subprocess.run([sys.executable, "-c", code + SHOWN_IN_SHELL], capture_output=True, text=True, timeout=300)
    assert done.stdout.split()[-1:] == ["False"], done.stderr
