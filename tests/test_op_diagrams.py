"""Generated op diagrams: golden SVGs of small examples, windowing of big tensors, translated text, legends.

The golden files are tests/data/op_diagrams/<case>.svg; two of them are the README's pictures
(docs/images/op_<case>.svg). After an intended change of looks, regenerate them all with
    HLODBG_UPDATE_DIAGRAMS=1 .venv/bin/python -m pytest tests/test_op_diagrams.py
and look at them (rsvg-convert -z 2 x.svg -o x.png) before committing.
"""
from __future__ import annotations

import os
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

import hlodbg
from hlodbg.engine.ir.phrases import LANGUAGES, Phrase, translations
from hlodbg.engine.machine.process import ProcessId
from hlodbg.engine.ops.provenance import provenance
from hlodbg.layouts import op_diagram, op_diagram_base, op_diagram_collective, op_diagram_ops
from hlodbg.layouts.op_diagram import has_diagram, op_diagram_svg
from tests.op_diagram_cases import CASES, TRANSPOSE, _binary, _unary
from tests.provenance_harness import op_under_test

GOLDEN = Path(__file__).resolve().parent / "data" / "op_diagrams"
UPDATE = os.environ.get("HLODBG_UPDATE_DIAGRAMS") == "1"
README_IMAGES = Path(__file__).resolve().parent.parent / "docs" / "images"
SHOWN_IN_README = ("gather", "reduce_window")
SVG = "{http://www.w3.org/2000/svg}"


def render(case, lang: str = "en") -> str:
    op, operands, results = case.load()
    if case.devices is not None:
        home = ProcessId(1, 0)
        operands, results = case.devices[home]
        prov = case.provenance(op, operands, results, process=home)
        return op_diagram_svg(op, operands=operands, results=results, provenance=prov, lang=lang, devices=case.devices)
    return op_diagram_svg(op, operands=operands, results=results, provenance=case.provenance(op, operands, results), lang=lang)


def texts(svg: str) -> list[str]:
    return ["".join(t.itertext()) for t in ET.fromstring(svg.encode()).iter(f"{SVG}text")]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_diagram_matches_its_golden_file(case):
    svg = render(case)
    ET.fromstring(svg.encode())  # well-formed XML
    assert svg == render(case), "the same op must draw the same bytes"
    path = GOLDEN / f"{case.name}.svg"
    if UPDATE or not path.exists():
        if not UPDATE:
            pytest.fail(f"no golden file {path}; run with HLODBG_UPDATE_DIAGRAMS=1 to write it")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(svg, encoding="utf-8")
    assert svg == path.read_text(encoding="utf-8"), f"{case.name} drew differently; regenerate (see the module docstring) if intended"
    if case.name in SHOWN_IN_README:
        shown = README_IMAGES / f"op_{case.name}.svg"
        if UPDATE:
            shown.parent.mkdir(parents=True, exist_ok=True)
            shown.write_text(svg, encoding="utf-8")
        assert shown.read_text(encoding="utf-8") == svg, f"{shown} is not the {case.name} diagram any more; regenerate"


def test_listed_ops_have_their_own_drawing_and_others_the_generic_one():
    for name in ("gather", "scatter", "reduce_window", "pad", "slice", "dot_general", "convolution", "broadcast_in_dim",
                 "transpose", "concatenate", "all_gather", "all_reduce", "reduce_scatter", "all_to_all", "collective_permute",
                 "collective_broadcast"):
        assert has_diagram(f"stablehlo.{name}"), name
    assert not has_diagram("stablehlo.add")


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_selected_element_and_every_role_are_in_the_legend(case):
    svg = render(case)
    root = ET.fromstring(svg.encode())
    legend = [" ".join(g.itertext()) for g in root.iter(f"{SVG}g") if g.get("class") == "legend-entry"]
    op, operands, results = case.load()
    if case.devices is not None:
        operands, results = case.devices[ProcessId(1, 0)]
    prov = case.provenance(op, operands, results, process=ProcessId(1, 0) if case.devices else None)
    if prov is None:
        assert "result element asked about" not in " ".join(legend)
        return
    assert "the result element asked about" in legend
    for source in prov.sources:
        assert source.role.say("en") in legend, f"role {source.role} has no legend entry"
    # every fill colour a source cell has is a swatch of the legend
    swatches = set(re.findall(r'class="legend-entry"><rect[^>]*fill:(#[0-9a-f]{6})', svg))
    painted = set(re.findall(r'<g class="cell"><title>[^<]*</title><rect[^>]*fill:(#[0-9a-f]{6})', svg)) - {"#ffffff"}
    assert painted <= swatches, f"cells painted in colours the legend does not explain: {painted - swatches}"


def test_big_tensor_shows_the_neighbourhood_of_the_element():
    text = _unary("20x30xf32", "30x20xf32", "stablehlo.transpose %a, dims = [1, 0]")
    program = hlodbg.load(text)
    op = op_under_test(program)
    operand = np.arange(600, dtype=np.float32).reshape(20, 30)
    (result,) = program.run(operand)
    prov = provenance(op, (17, 12), operands=[operand], results=[result])
    svg = op_diagram_svg(op, operands=[operand], results=[result], provenance=prov)
    words = texts(svg)
    assert "⋮" in words and "⋯" in words  # ellipses for the rows and columns left out
    assert str(int(operand[12, 17])) in words  # the source's value is drawn
    cells = re.findall(r'<g class="cell">', svg)
    assert len(cells) <= 2 * 8 * 8  # never more than about 8x8 cells per tensor
    assert "599" not in words  # the far corner is left out
    # the row and column numbers around the element are written
    assert {"11", "12", "13", "16", "17", "18"} <= set(words)


def test_rank_3_tensor_shows_the_slice_through_the_element_with_its_fixed_index():
    program = hlodbg.load(TRANSPOSE)
    op = op_under_test(program)
    operand = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
    (result,) = program.run(operand)
    prov = provenance(op, (3, 1, 2), operands=[operand], results=[result])
    words = texts(op_diagram_svg(op, operands=[operand], results=[result], provenance=prov))
    # operand[1, 2, 3] is drawn in its slice: the dimensions it varies along are chosen, the others fixed
    assert any(w.endswith("[1, :, :]") for w in words), words
    assert str(operand[1, 2, 3]) in words


@pytest.mark.parametrize("lang", [lang for lang in LANGUAGES if lang != "en"])
def test_translated_diagram_speaks_its_language(lang):
    program = hlodbg.load(TRANSPOSE)
    op = op_under_test(program)
    operand = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
    (result,) = program.run(operand)
    prov = provenance(op, (3, 1, 2), operands=[operand], results=[result])
    svg = op_diagram_svg(op, operands=[operand], results=[result], provenance=prov, lang=lang)
    ET.fromstring(svg.encode())
    words = " ".join(texts(svg))
    for line in prov.lines(lang):
        assert line in words
    assert op_diagram.TITLE_AT.say(lang, op=op.name, index="[3, 1, 2]") in words
    script = re.compile("[\u3040-\u30ff\u4e00-\u9fff]" if lang == "ja" else "[\u0900-\u097f]")
    assert script.search(words), f"no {lang} text in the diagram"
    family = re.search(r"svg\{font-family:([^;]*);", svg).group(1)
    assert ("CJK" in family or "Hiragino" in family) and "Devanagari" in family


def test_every_diagram_phrase_is_translated_with_its_fields():
    import string

    phrases = [v for module in (op_diagram, op_diagram_base, op_diagram_ops, op_diagram_collective)
               for v in vars(module).values() if isinstance(v, Phrase)]
    assert len(phrases) > 10
    for lang in LANGUAGES[1:]:
        table = translations(lang)
        for phrase in phrases:
            assert phrase.en in table, f"{lang}: no translation of {phrase.en!r}"
            fields = {f for _, f, _, _ in string.Formatter().parse(phrase.en) if f}
            assert fields == {f for _, f, _, _ in string.Formatter().parse(table[phrase.en]) if f}, phrase.en


def test_without_values_the_grids_and_shapes_are_still_drawn():
    program = hlodbg.load(TRANSPOSE)
    op = op_under_test(program)
    svg = op_diagram_svg(op, operands=None, results=None)
    words = texts(svg)
    assert "tensor<2x3x4xi32>" in words and "tensor<4x2x3xi32>" in words
    assert len(re.findall(r'<g class="cell">', svg)) == 3 * 4 + 2 * 3  # a slice of each
    assert op_diagram.NO_VALUES.say("en") in words


def test_collective_colours_each_chunk_by_its_source_device():
    case = next(c for c in CASES if c.name == "all_gather")
    svg = render(case)
    root = ET.fromstring(svg.encode())
    devices = [g for g in root.iter(f"{SVG}g") if g.get("class") == "device"]
    assert len(devices) == 2
    fills = re.findall(r'<g class="cell"><title>[^<]*</title><rect[^>]*fill:(#[0-9a-f]{6})"/><text[^>]*>([^<]*)</text>', svg)
    colour_of = {}
    for fill, value in fills:
        colour_of.setdefault(value, set()).add(fill)
    # device 0's 10, 11 and device 1's 20, 21 keep one colour each in the operands and the gathered results
    assert len(colour_of["10"]) == 1 and len(colour_of["20"] - colour_of["21"]) <= 1
    assert colour_of["10"] != colour_of["20"]


def test_a_provenance_of_another_op_a_wrong_value_or_language_is_refused():
    program = hlodbg.load(TRANSPOSE)
    op = op_under_test(program)
    other = op_under_test(hlodbg.load(TRANSPOSE))
    operand = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
    prov = provenance(other, (0, 0, 0), operands=[operand])
    with pytest.raises(ValueError, match="provenance given is of"):
        op_diagram_svg(op, operands=[operand], results=None, provenance=prov)
    with pytest.raises(ValueError, match="unknown language"):
        op_diagram_svg(op, operands=[operand], results=None, lang="fr")
    with pytest.raises(ValueError, match=r"value given for operand has shape \[4, 6\], but its type is \[2, 3, 4\]"):
        op_diagram_svg(op, operands=[operand.reshape(4, 6)], results=None)


def test_all_reduce_result_is_shaded_as_combined_from_every_device():
    case = next(c for c in CASES if c.name == "all_reduce")
    svg = render(case)
    assert op_diagram_collective.FROM_SEVERAL.say("en") in texts(svg)
    # both devices' operand[0, 1] are painted as summands, with an arrow from each
    assert len(re.findall(r'<g class="arrow">', svg)) == 2


def test_sources_outside_the_drawn_slice_are_counted_in_a_note():
    from hlodbg.engine.ops.provenance import Provenance, Source
    from tests.op_diagram_cases import Role

    program = hlodbg.load(TRANSPOSE)
    op = op_under_test(program)
    # two sources differing in every dimension of the 2x3x4 operand: the slice through the first is drawn
    prov = Provenance(op, 0, (0, 0, 0), (Source(0, (0, 0, 0), Role("summand")), Source(0, (1, 2, 3), Role("summand"))), ())
    svg = op_diagram_svg(op, operands=None, results=None, provenance=prov)
    assert op_diagram_base.HIDDEN_SOURCES.say("en", count=1) in texts(svg)


def test_scatter_numbers_its_updates_in_the_order_they_land():
    case = next(c for c in CASES if c.name == "scatter")
    badges = re.findall(r'<text class="badge"[^>]*>([^<]*)</text>', render(case))
    assert badges == ["1", "2"]


OTHER_COLLECTIVES = {
    "all_to_all": ('"stablehlo.all_to_all"(%a) {split_dimension = 1 : i64, concat_dimension = 0 : i64, split_count = 2 : i64, '
                   'replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}', "2x4xf32", "4x2xf32"),
    "collective_permute": ('"stablehlo.collective_permute"(%a) {source_target_pairs = dense<[[0, 1], [1, 0]]> : tensor<2x2xi64>}',
                           "2x4xf32", "2x4xf32"),
}


@pytest.mark.parametrize("name", sorted(OTHER_COLLECTIVES))
def test_every_collective_is_drawn_as_boxes_of_devices(name):
    body, shape_in, shape_out = OTHER_COLLECTIVES[name]
    op = op_under_test(hlodbg.load(_unary(shape_in, shape_out, body)))
    out_shape = tuple(int(d) for d in shape_out.removesuffix("xf32").split("x"))
    devices = {ProcessId(r, 0): ([np.full((2, 4), 10.0 * r, np.float32)], [np.full(out_shape, 1.0 + r, np.float32)])
               for r in range(2)}
    svg = op_diagram_svg(op, operands=None, results=None, devices=devices)
    root = ET.fromstring(svg.encode())
    assert len([g for g in root.iter(f"{SVG}g") if g.get("class") == "device"]) == 2
    words = texts(svg)
    assert {"10", "2"} <= set(words)  # device 1's operand and result values
    assert op_diagram.NO_VALUES.say("en") not in words


def test_cells_write_every_kind_of_element_briefly():
    from hlodbg.layouts.op_diagram_grid import value_text

    assert [value_text(v) for v in (np.float32("nan"), np.float32("-inf"), np.float64(2.5), np.float32(3.0), np.int8(-4),
                                    np.bool_(True), np.complex64(1 - 2j), np.float32(1 / 3))] == \
        ["nan", "-inf", "2.5", "3", "-4", "T", "1-2i", "0.3333"]


def test_each_cell_names_its_full_index_in_a_tooltip():
    case = next(c for c in CASES if c.name == "gather")
    svg = render(case)
    assert "<title>operand[1, 1, 0] = 10</title>" in svg and "<title>result[1, 0, 1, 0] = 10</title>" in svg


def test_a_long_index_arithmetic_keeps_its_first_steps_and_its_conclusion():
    text = _binary("convolution", "1x9x9x1xf32", "9x9x1x1xf32", "1x1x1x1xf32",
                   "stablehlo.convolution(%a, %b) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], "
                   "window = {stride = [1, 1]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64}")
    program = hlodbg.load(text)
    op = op_under_test(program)
    x, k = np.ones((1, 9, 9, 1), np.float32), np.ones((9, 9, 1, 1), np.float32)
    (result,) = program.run(x, k)
    prov = provenance(op, (0, 0, 0, 0), operands=[x, k], results=[result])
    assert len(prov.lines()) > op_diagram.CAPTION_LINES
    words = texts(op_diagram_svg(op, operands=[x, k], results=[result], provenance=prov))
    steps = prov.lines()
    kept = op_diagram.CAPTION_LINES - 2
    assert steps[0] in words and steps[-1] in words and steps[kept] not in words
    assert op_diagram.MORE_STEPS.say("en", count=len(steps) - kept - 1) in words


def test_devices_may_come_as_the_grid_values_a_session_hands_to_provenance():
    from hlodbg.engine.machine.process import Grid
    from hlodbg.engine.ops.collectives_provenance import GridValues

    case = next(c for c in CASES if c.name == "all_gather")
    op, _, _ = case.load()
    home = ProcessId(1, 0)
    peers = GridValues(Grid(num_replicas=2), case.devices)
    operands, results = case.devices[home]
    prov = provenance(op, case.at, operands=operands, results=results, process=home, peer_values=peers)
    svg = op_diagram_svg(op, operands=operands, results=results, provenance=prov, devices=peers)
    assert svg == render(case)
