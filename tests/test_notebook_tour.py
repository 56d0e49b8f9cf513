"""The sample notebook (docs/notebooks/hlodbg_tour.ipynb) run by nbclient in a real kernel (python3,
ipykernel, this interpreter): its outputs hold the pictures — the program's graph, the session's
graph with the current op marked as it steps, the explanation's diagram, the memory picture.
Skipped when no kernel can start; every cell has a time limit, so nothing hangs."""
from __future__ import annotations

import contextlib
import re
from pathlib import Path

import pytest

from hlodbg.notebook import svg_of
from tests.test_notebook_display import marked_names

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

TOUR = Path(__file__).resolve().parents[1] / "docs" / "notebooks" / "hlodbg_tour.ipynb"
CELL_SECONDS = 120
KERNEL_START_SECONDS = 60
KERNEL = "python3"  # ipykernel's own, run by this interpreter


@pytest.fixture(scope="module")
def tour(tmp_path_factory):
    """The tour's code cells, run: [(source, {mime type: data})]."""
    from jupyter_client.kernelspec import NoSuchKernel

    notebook = nbformat.read(TOUR, as_version=4)
    client = nbclient.NotebookClient(notebook, timeout=CELL_SECONDS, startup_timeout=KERNEL_START_SECONDS,
                                     kernel_name=KERNEL, allow_errors=False)
    with contextlib.ExitStack() as running:
        try:
            running.enter_context(client.setup_kernel(cwd=str(tmp_path_factory.mktemp("tour"))))
        except (NoSuchKernel, RuntimeError, TimeoutError, OSError) as cannot:
            pytest.skip(f"no Jupyter kernel could start here: {cannot}")
        for index, cell in enumerate(notebook.cells):
            client.execute_cell(cell, index)
    return [(cell.source, _shown(cell)) for cell in notebook.cells if cell.cell_type == "code"]


def _shown(cell) -> dict:
    """What the cell's result displayed (its execute_result), by mime type."""
    results = [o for o in cell.outputs if o.output_type == "execute_result"]
    return dict(results[-1].data) if results else {}


def _cell(tour, source_start: str) -> dict:
    return next(shown for source, shown in tour if source.startswith(source_start))


def _current(shown: dict) -> str:
    """The current op's names as the session's status line writes them."""
    return re.search(r"<b>stopped before event \d+</b>: <code>([^<]*)</code>", shown["text/html"]).group(1)


def test_the_program_shows_its_graph(tour):
    shown = _cell(tour, "import numpy")
    [graph] = svg_of(shown["text/html"])
    assert "<svg" in graph and 'data-name="%1"' in graph
    assert shown["text/plain"].startswith("<Program tiny_model.mlir: 38 ops")


def test_the_session_marks_the_current_op_and_moves_with_each_step(tour):
    opened, stepped, stepped_in = _cell(tour, "rng = "), _cell(tour, "s.step()"), _cell(tour, "s.step_in()")
    assert _current(opened) == "%c = stablehlo.constant"
    assert _current(stepped) == "%0#0, %0#1, %0#2, %0#3 = stablehlo.while"
    assert _current(stepped_in) == "%c_5 = stablehlo.constant"
    for shown, marked in ((opened, "%c"), (stepped, "%0:4"), (stepped_in, "%c_5")):
        around, whole = svg_of(shown["text/html"])
        assert marked_names(around) == marked_names(whole) == [marked]
    assert stepped["text/plain"].startswith("<Session of @main: at [1] @main: %0#0, %0#1, %0#2, %0#3 = stablehlo.while")


def test_moving_back_shows_the_results_of_the_op_that_ran(tour):
    shown = _cell(tour, "s.back()")
    assert _current(shown) == "%cst = stablehlo.constant"
    assert re.search(r"result 0: %cst</code></td><td><code>tensor&lt;f32&gt;</code></td><td[^>]*>f32 · 1 -Inf<",
                     shown["text/html"])


def test_the_explanation_shows_its_diagram(tour):
    shown = _cell(tour, "program.explain")
    [diagram] = svg_of(shown["text/html"])
    assert "stablehlo.reduce: where result[2] comes from" in diagram
    assert shown["text/plain"].startswith("%1 = stablehlo.reduce (line")


def test_the_memory_profile_shows_its_picture(tour):
    shown = _cell(tour, "program.memory")
    [picture] = svg_of(shown["text/html"])
    assert "<svg" in picture and "peak" in picture
    assert shown["text/plain"].startswith("tiny_model.mlir @main on tpu-v5e")


def test_the_finished_session_marks_nothing(tour):
    shown = _cell(tour, "s.continue_()")
    assert "<b>finished</b>" in shown["text/html"] and shown["text/plain"] == "<Session of @main: finished>"
    [whole] = svg_of(shown["text/html"])
    assert marked_names(whole) == []


def test_a_jax_session_names_arguments_by_their_pytree_paths(tour):
    pytest.importorskip("jax")
    shown = _cell(tour, "import jax.numpy")
    assert _current(shown) == "%0 = stablehlo.dot_general"
    html = shown["text/html"]
    assert "operand 1: %arg0 (params[&#x27;w1&#x27;])" in html, html[:2000]
    assert "jit(predict)/dot_general" in html  # the JAX source line the op came from
    around, whole = svg_of(html)
    assert marked_names(around) == marked_names(whole) == ["%0"]
