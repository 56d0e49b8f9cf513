"""explain (engine/debug/explain, hlodbg explain): every op of the stablehlo and chlo dialects is
explained in every language; the decoders and the shape derivations say exactly what they should
with the op's own numbers; the command finds ops, runs to them, and refuses bad input clearly."""
from __future__ import annotations

import json
import re
import string
from pathlib import Path

import pytest

import hlodbg
import hlodbg.explaining
from hlodbg.cli import main
from hlodbg.engine.debug.explain import explain_op
from hlodbg.engine.debug.explain.text import columns, paragraphs, wrap
from hlodbg.engine.ir.opdefs import OPS
from hlodbg.engine.ir.phrases import LANGUAGES, registered_phrases, translations
from hlodbg.engine.ir.types import TensorType
from hlodbg.engine.syntax import frontend_for
from hlodbg.engine.verify import verify

DATA = Path(__file__).parent / "data"


def _instances() -> dict:
    """One verified instance of every stablehlo/chlo op found in tests/data (the constraint files'
    valid chunks, the test programs, and data/explain/more_ops.mlir for the rest)."""
    wanted = {name for name in OPS if name.startswith(("stablehlo.", "chlo."))}
    found = {}
    for path in sorted(DATA.rglob("*.mlir")):
        for chunk in path.read_text(encoding="utf-8").split("// -----"):
            try:
                modules = frontend_for(chunk, str(path)).parse_all(chunk, str(path))
                for module in modules:
                    verify(module)
            except hlodbg.engine.HlodbgError:
                continue  # an invalid program of a constraint file: not an instance to explain
            for module in modules:
                for function in module.functions.values():
                    for op in function.ops:
                        if op.name in wanted:
                            found.setdefault(op.name, op)
    return found


INSTANCES = _instances()


def test_every_op_definition_has_an_instance():
    wanted = sorted(name for name in OPS if name.startswith(("stablehlo.", "chlo.")))
    assert [name for name in wanted if name not in INSTANCES] == []


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_op_is_explained_in_every_language(lang):
    for name, op in sorted(INSTANCES.items()):
        first = _first_element(op)
        explanation = explain_op(op, lang=lang, at=first)
        text = explanation.text(80)
        assert len(explanation.sections) == (4 if first is None else 5), name
        assert all(section.lines for section in explanation.sections), name
        assert name in explanation.title
        assert json.dumps(explanation.to_dict(), ensure_ascii=False)
        assert [line for line in text.splitlines()[2:] if columns(line) > 80] == [], name


def _first_element(op):
    """The first element of the op's first result, if it is a non-empty static tensor."""
    t = op.results[0].type if op.results else None
    if isinstance(t, TensorType) and t.is_static and all(t.shape):
        return (0,) * len(t.shape)
    return None


def test_explain_phrases_are_translated_with_their_fields():
    def fields(template):
        return sorted(name for _, name, _, _ in string.Formatter().parse(template) if name)

    for lang in LANGUAGES[1:]:
        table = translations(lang)
        missing = [p.en for p in registered_phrases() if p.en not in table]
        assert missing == [], lang
        assert [en for en, tr in table.items() if fields(en) != fields(tr)] == [], lang


def test_wrapping_counts_columns_and_breaks_japanese_between_characters():
    assert columns("形 a") == 4
    assert wrap("結果の形はどう決まるか、それが問題。", 12, "  ", "    ") == [
        "  結果の形は", "    どう決ま", "    るか、そ", "    れが問", "    題。"]  # 。 never starts a line
    assert wrap("offset_dims [2, 3] take the sizes", 16, "", "  ") == ["offset_dims [2,", "  3] take the", "  sizes"]
    assert wrap("abcdefghij", 6, "", "") == ["abcdef", "ghij"]
    assert wrap("次元の数（offset_dims）", 16, "", "") == ["次元の数", "（offset_dims）"]  # （ never ends a line


def test_plain_words_keep_their_paragraphs_and_join_japanese_lines_without_spaces():
    assert paragraphs("Gathers slices\n  of the operand.\n\nThen stacks them.") == [
        "Gathers slices of the operand.", "Then stacks them."]
    assert paragraphs("スライスを\n集めます。 XLA\nでは") == ["スライスを集めます。 XLA では"]


def _op(text: str, name: str):
    program = hlodbg.load(text)
    return next(op for op in program.module.function("main").ops if op.name == name)


def _section(explanation, index: int) -> list[str]:
    return explanation.sections[index].lines


GATHER = """
func.func @main(%operand: tensor<3x4x2xi32>, %idx: tensor<2x3x2xi64>) -> tensor<2x3x2x2xi32> {
  %0 = "stablehlo.gather"(%operand, %idx) {
    dimension_numbers = #stablehlo.gather<offset_dims = [2, 3], collapsed_slice_dims = [0],
                                          start_index_map = [1, 0], index_vector_dim = 2>,
    slice_sizes = array<i64: 1, 2, 2>, indices_are_sorted = false
  } : (tensor<3x4x2xi32>, tensor<2x3x2xi64>) -> tensor<2x3x2x2xi32>
  return %0 : tensor<2x3x2x2xi32>
}"""


def test_gather_fields_are_decoded_with_xla_and_stablehlo_names():
    lines = _section(explain_op(_op(GATHER, "stablehlo.gather")), 2)
    decoded = lines[1:lines.index(next(l for l in lines if l.startswith("slice_sizes = ")))]
    assert decoded == [
        "  offset_dims = [2, 3] (XLA: offset_dims, called output_window_dims before 2018): the result dimensions "
        "that index inside each slice",
        "  the other result dimensions [0, 1] are what XLA calls batch_dims: they choose which start index is used",
        "  collapsed_slice_dims = [0] (XLA: collapsed_slice_dims, called elided_window_dims before 2018): operand "
        "dimensions sliced with size 1 and left out of the result",
        "  start_index_map = [1, 0] (XLA: start_index_map, called gather_dims_to_operand_dims before 2018): start "
        "index component 0 → operand dimension 1, start index component 1 → operand dimension 0",
        "  index_vector_dim = 2 (XLA: index_vector_dim): dimension 2 of the indices (size 2) holds each index vector",
        "  slice_sizes = [1, 2, 2] (XLA: slice_sizes, called window_bounds before 2018): the size of the slice cut "
        "from the operand at each start",
        "  offset dimensions reach the operand (XLA's remapped_offset_dims): result dimension 2 → operand "
        "dimension 1, result dimension 3 → operand dimension 2",
        "  start_indices is the operand XLA called gather_indices before 2018",
    ]


def test_gather_shape_is_derived_with_its_numbers():
    assert _section(explain_op(_op(GATHER, "stablehlo.gather")), 3) == [
        "start_indices has shape [2, 3, 2]; without index_vector_dim 2 that leaves the batch sizes [2, 3]",
        "slice_sizes [1, 2, 2] without collapsed_slice_dims [0] and operand_batching_dims [] leaves the offset "
        "sizes [2, 2]",
        "the result has 2 batch + 2 offset = 4 dimensions; offset_dims [2, 3] take the offset sizes in order, "
        "the other dimensions the batch sizes in order",
        "result dimension 0: batch dimension, size 2",
        "result dimension 1: batch dimension, size 3",
        "result dimension 2: offset dimension, size 2",
        "result dimension 3: offset dimension, size 2",
        "result shape: [2, 3, 2, 2]",
    ]


DOT = """
func.func @main(%a: tensor<5x2x3xf32>, %b: tensor<5x3x4xf32>) -> tensor<5x2x4xf32> {
  %0 = stablehlo.dot_general %a, %b, batching_dims = [0] x [0], contracting_dims = [2] x [1],
       precision = [DEFAULT, HIGHEST] : (tensor<5x2x3xf32>, tensor<5x3x4xf32>) -> tensor<5x2x4xf32>
  return %0 : tensor<5x2x4xf32>
}"""


def test_dot_general_dimensions_per_side_and_shape():
    explanation = explain_op(_op(DOT, "stablehlo.dot_general"))
    attributes = _section(explanation, 2)
    assert attributes[1:6] == [
        "  lhs [5, 2, 3]: batch dimensions [0], contracting dimensions [2], free dimensions [1]",
        "  rhs [5, 3, 4]: batch dimensions [0], contracting dimensions [1], free dimensions [2]",
        "  lhs dimension 0 and rhs dimension 0 (size 5) are a batch: each batch element has its own product",
        "  lhs dimension 2 (size 3) is multiplied along rhs dimension 1 (size 3) and summed",
        "  XLA writes them lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}",
    ]
    assert "  rhs: HIGHEST, the most precise (on a TPU six bfloat16 passes, about float32)" in attributes
    assert _section(explanation, 3) == [
        "batch dimensions (lhs [0], rhs [0]) come first: sizes [5]",
        "contracting dimensions (lhs [2], rhs [1], sizes [3]) are summed over and disappear",
        "then the free dimensions of lhs [1]: sizes [2]",
        "then the free dimensions of rhs [2]: sizes [4]",
        "result shape: [5, 2, 4]",
    ]


CONV = """
func.func @main(%x: tensor<1x5x5x2xf32>, %k: tensor<3x3x2x4xf32>) -> tensor<1x3x1x4xf32> {
  %0 = stablehlo.convolution(%x, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f],
       window = {stride = [2, 2], pad = [[1, 1], [0, 0]], rhs_dilate = [1, 2]}
       {batch_group_count = 1 : i64, feature_group_count = 1 : i64}
       : (tensor<1x5x5x2xf32>, tensor<3x3x2x4xf32>) -> tensor<1x3x1x4xf32>
  return %0 : tensor<1x3x1x4xf32>
}"""


def test_convolution_layout_in_both_notations_and_its_windows():
    explanation = explain_op(_op(CONV, "stablehlo.convolution"))
    attributes = _section(explanation, 2)
    assert "  StableHLO writes the layout [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]; XLA's dim_labels are " \
           "b01f_01io->b01f" in attributes
    assert "  kernel: input feature dimension 2, output feature dimension 3, spatial dimensions [0, 1]" in attributes
    assert _section(explanation, 3) == [
        "output dimension 0 (batch): input batch 1 / batch_group_count 1 = 1",
        "output dimension 3 (feature): the kernel's output feature size 4",
        "output dimension 1 (spatial 0): input 5 dilated by 1 → 5, padded (1, 1) → 7; window 3 dilated by 1 → 3; "
        "(7 - 3) / 2 + 1 = 3",
        "output dimension 2 (spatial 1): input 5 dilated by 1 → 5, padded (0, 0) → 5; window 3 dilated by 2 → 5; "
        "(5 - 5) / 2 + 1 = 1",
        "result shape: [1, 3, 1, 4]",
    ]


SHAPES = """
func.func @main(%x: tensor<2x3xf32>, %y: tensor<4x3xf32>, %v: tensor<f32>) -> tensor<2x3xf32> {
  %0 = stablehlo.slice %x [0:2:1, 1:3:2] : (tensor<2x3xf32>) -> tensor<2x1xf32>
  %1 = stablehlo.pad %x, %v, low = [1, 0], high = [0, -1], interior = [2, 1] : (tensor<2x3xf32>, tensor<f32>) -> tensor<5x4xf32>
  %2 = stablehlo.concatenate %x, %y, dim = 0 : (tensor<2x3xf32>, tensor<4x3xf32>) -> tensor<6x3xf32>
  %3 = stablehlo.broadcast_in_dim %x, dims = [2, 1] : (tensor<2x3xf32>) -> tensor<4x3x2xf32>
  %4 = stablehlo.reduce(%x init: %v) applies stablehlo.add across dimensions = [1] : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>
  return %x : tensor<2x3xf32>
}"""


@pytest.mark.parametrize("name, expected", [
    ("stablehlo.slice", ["dimension 0: ceil((2 - 0) / 1) = 2", "dimension 1: ceil((3 - 1) / 2) = 1",
                         "result shape: [2, 1]"]),
    ("stablehlo.pad", ["dimension 0: 1 + 2 + 1 × 2 + 0 = 5", "dimension 1: 0 + 3 + 2 × 1 + -1 = 4",
                       "result shape: [5, 4]"]),
    ("stablehlo.concatenate", ["dimension 0 (the concatenate dimension): [2, 4] add up to 6",
                               "every other dimension is the same in every input", "result shape: [6, 3]"]),
    ("stablehlo.broadcast_in_dim", ["result dimension 0, size 4: new, the operand repeats along it",
                                    "result dimension 1, size 3: from operand dimension 1 (size 3)",
                                    "result dimension 2, size 2: from operand dimension 0 (size 2)",
                                    "result shape: [4, 3, 2]"]),
    ("stablehlo.reduce", ["dimensions [1] (sizes [3]) are reduced away; the others keep their sizes",
                          "result shape: [2]"]),
])
def test_shape_derivations_use_the_ops_numbers(name, expected):
    assert _section(explain_op(_op(SHAPES, name)), 3) == expected


def test_xla_broadcasting_of_a_chlo_op_and_a_collective_that_keeps_shapes():
    op = _op("""
func.func @main(%x: tensor<2x3xf32>, %r: tensor<3xf32>) -> tensor<2x3xf32> {
  %0 = chlo.broadcast_divide %x, %r {broadcast_dimensions = array<i64: 1>} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %1 = "stablehlo.collective_permute"(%0) {source_target_pairs = dense<[[0, 1], [1, 0]]> : tensor<2x2xi64>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %1 : tensor<2x3xf32>
}""", "chlo.broadcast_divide")
    assert _section(explain_op(op), 3) == [
        "broadcast_dimensions [1] place the smaller operand's dimensions in the larger one's",
        "dimension 0: operand sizes [2, 1] → 2 (a size 1 stretches)",
        "dimension 1: operand sizes [3, 3] → 3",
        "result shape: [2, 3]",
    ]
    permute = explain_op(next(o for o in op.parent.operations if o.name == "stablehlo.collective_permute"))
    assert _section(permute, 2)[1:] == [
        "  process 0 sends to process 1", "  process 1 sends to process 0",
        "  the ids are replica ids: each group works within every partition (cross_replica)"]
    assert _section(permute, 3) == ["each result has the shape of the operand it comes from: [2, 3]",
                                    "result shape: [2, 3]"]


def test_shapes_are_said_in_japanese_and_hindi():
    op = _op(SHAPES, "stablehlo.slice")
    for lang in ("ja", "hi"):
        lines = _section(explain_op(op, lang=lang), 3)
        assert lines[0] != "dimension 0: ceil((2 - 0) / 1) = 2" and "ceil((2 - 0) / 1) = 2" in lines[0]


def test_provenance_of_an_element_with_values():
    op = _op("""
func.func @main(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %0 = stablehlo.transpose %x, dims = [1, 0] : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}""", "stablehlo.transpose")
    import numpy as np

    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    explanation = explain_op(op, at=(2, 1), operands=[x], results=[x.T])
    lines = _section(explanation, 4)
    assert lines[0] == "result #0 at (2, 1) = 5"
    assert lines[-1] == "  copied element: operand #0 operand at (1, 2) = 5"
    assert explanation.to_dict()["provenance"]["sources"] == [
        {"operand": 0, "index": [1, 2], "role": "copied element", "device": None}]


def test_an_element_without_provenance_says_why():
    # gather's provenance needs its indices' values (or no family answers yet): either way, a sentence.
    lines = _section(explain_op(_op(GATHER, "stablehlo.gather"), at=(1, 0, 1, 1)), 4)
    assert lines == ["which elements make it depends on the values stablehlo.gather sees, and this op has no values here"]


# -- the command ------------------------------------------------------------------------------

TRANSPOSE = """func.func @main(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %0 = stablehlo.transpose %x, dims = [1, 0] : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}
func.func private @never(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.negate %x : tensor<2xf32>
  return %0 : tensor<2xf32>
}
"""


@pytest.fixture
def program(tmp_path):
    import numpy as np

    path = tmp_path / "t.mlir"
    path.write_text(TRANSPOSE)
    np.savez(tmp_path / "in.npz", arg0=np.arange(6, dtype=np.float32).reshape(2, 3))
    return path, tmp_path / "in.npz"


def _run(capsys, *argv):
    status = main(["explain", *map(str, argv)])
    out, err = capsys.readouterr()
    return status, out, err


def test_command_explains_an_op_and_an_element_with_values(program, capsys):
    path, args = program
    status, out, err = _run(capsys, path, "%0", "--at", "2,1", "--args", args, "--lang", "en")
    assert status == 0, err
    assert out.startswith("%0 = stablehlo.transpose (line 2)\n")
    assert "Where result #0 element (2, 1) comes from\n  result #0 at (2, 1) = 5\n" in out
    assert "    copied element: operand #0 operand at (1, 2) = 5\n" in out


def test_command_finds_the_op_by_line_and_function(program, capsys):
    path, args = program
    assert _run(capsys, path, "2", "--lang", "en")[1].startswith("%0 = stablehlo.transpose (line 2)")
    assert _run(capsys, path, "transpose", "--lang", "en")[1].startswith("%0 = stablehlo.transpose (line 2)")
    status, out, _ = _run(capsys, path, "@never:%0", "--lang", "en")
    assert status == 0 and out.startswith("%0 = stablehlo.negate (line 6)")
    assert "the run did not reach this op (its function is not called on this run): no values are shown" in out


def test_command_json(program, capsys):
    path, args = program
    status, out, _ = _run(capsys, path, "%0", "--at", "0,1", "--args", args, "--json", "--lang", "en")
    data = json.loads(out)
    assert status == 0 and data["op"] == "stablehlo.transpose" and data["line"] == 2
    assert [s["heading"] for s in data["sections"]] == [
        "What it does", "Operands and results", "Attributes", "How the result shape follows",
        "Where result #0 element (0, 1) comes from"]
    assert data["provenance"]["sources"][0]["index"] == [1, 0]


def test_command_speaks_japanese_from_the_option_and_the_locale(program, capsys, monkeypatch):
    path, _ = program
    headings = ["それは何をするか", "結果の形はどう決まるか"]
    assert all(h in _run(capsys, path, "%0", "--lang", "ja")[1] for h in headings)
    monkeypatch.setenv("LC_ALL", "ja_JP.UTF-8")
    assert all(h in _run(capsys, path, "%0")[1] for h in headings)
    monkeypatch.setenv("LC_ALL", "hi_IN.UTF-8")
    assert "यह क्या करता है" in _run(capsys, path, "%0")[1]


def test_command_names_an_hlo_instruction(tmp_path, capsys):
    path = tmp_path / "n.hlo"
    path.write_text("HloModule m\n\nENTRY main {\n  p0 = f32[2,3] parameter(0)\n  ROOT neg.1 = f32[2,3] negate(p0)\n}\n")
    for spec in ("neg.1", "%neg.1"):
        status, out, err = _run(capsys, path, spec, "--lang", "en")
        assert status == 0, err
        assert out.startswith("%neg.1 = negate (line 5), read as stablehlo.negate")  # the HLO opcode first


def test_command_explains_an_op_after_a_failed_run(tmp_path, capsys):
    path = tmp_path / "f.mlir"
    path.write_text("""func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.custom_call @no_such_target(%x) : (tensor<2xf32>) -> tensor<2xf32>
  %1 = stablehlo.negate %0 : tensor<2xf32>
  return %1 : tensor<2xf32>
}""")
    status, out, _ = _run(capsys, path, "%1", "--lang", "en", "--width", "400")
    assert status == 0
    assert "the run stopped with an error before this op ran, so no values are shown: " in out
    assert "no_such_target" in out and "\nHow the result shape follows\n  the op works element by element" in out


@pytest.mark.parametrize("argv, message", [
    (["%7"], "OP '%7': no value %7 in any function; expected %N, @fn:%N, an HLO instruction name or a line number"),
    (["nothing.2"], "OP 'nothing.2': no value %nothing.2 in any function; expected %N, @fn:%N"),
    (["gather"], "OP 'gather': the program has no gather op; expected %N"),
    (["%0", "--at", "3,0"], "--at '3,0': index 3 of dimension 0 is outside the result's shape [3, 2] (expected 0 to 2)"),
    (["%0", "--at", "1"], "--at '1' has 1 index(es) but result #0 of %0 has rank 2 (shape [3, 2]): give 2"),
    (["%0", "--at", "a,b"], "--at 'a,b': expected 2 comma-separated integers (the result has shape [3, 2])"),
    (["%0", "--at", "0,0", "--result", "1"], "--result 1: %0 (stablehlo.transpose) has 1 result(s), numbered 0 to 0"),
    (["%0", "--lang", "fr"], "--lang: unknown language 'fr': expected one of en, ja, hi"),
])
def test_command_refuses_bad_input_clearly(program, capsys, argv, message):
    path, _ = program
    status, out, err = _run(capsys, path, *argv)
    assert status == 2 and out == ""
    assert message in err and "Traceback" not in err


def test_command_writes_the_op_diagram(program, capsys, tmp_path):
    pytest.importorskip("hlodbg.layouts.op_diagram")
    import xml.etree.ElementTree as ElementTree

    path, args = program
    svg = tmp_path / "op.svg"
    status, _, err = _run(capsys, path, "%0", "--at", "2,1", "--args", args, "--svg", svg)
    assert status == 0, err
    assert ElementTree.parse(svg).getroot().tag.endswith("svg")


def test_sources_on_other_devices_are_named_with_their_values(monkeypatch):
    """A collective's element comes from another device's operand: the line names the device and
    reads the value from that device's operands (the peer values)."""
    import numpy as np

    import hlodbg.engine.debug.explain as explain
    from hlodbg.engine.machine.process import ProcessId
    from hlodbg.engine.ops.provenance import Provenance, Source
    from hlodbg.engine.ops.shape import COPIED

    op = _op(SHAPES, "stablehlo.slice")
    here, there = ProcessId(1, 0), ProcessId(2, 0)
    answer = Provenance(op, 0, (1, 0), (Source(0, (1, 2), COPIED, there), Source(0, (0, 1), COPIED, here)), (), here)
    monkeypatch.setattr(explain, "provenance", lambda *a, **k: answer)
    mine = np.zeros((2, 3), np.float32)
    theirs = np.arange(6, dtype=np.float32).reshape(2, 3)
    explanation = explain_op(op, at=(1, 0), operands=[mine], results=[np.ones((2, 1))], process=here,
                             peer_values=lambda process: ([theirs], [None]))
    assert _section(explanation, 4)[-2:] == [
        "  copied element: operand #0 operand at (1, 2) of device (replica 2, partition 0) = 5",
        "  copied element: operand #0 operand at (0, 1) = 0"]
    assert explanation.to_dict()["provenance"]["sources"][0]["device"] == [2, 0]
    assert explanation.to_dict()["provenance"]["device"] == [1, 0]


def test_command_on_a_grid_shows_the_chosen_devices_values(tmp_path, capsys):
    import numpy as np

    np.savez(tmp_path / "x.npz", arg0=np.array([0.5, 1.5], np.float32))
    ring = DATA / "grid_ring.mlir"  # each replica adds its id to x before the all_gather
    status, out, err = _run(capsys, ring, "%all", "--device", "1,0", "--args", tmp_path / "x.npz", "--lang", "en")
    assert status == 0, err
    assert re.search(r"  operand #0 operands\[0\] \(%y\): tensor<2xf32>[^\n]*\n    value: \[1.5, 2.5\]\n", out)
    assert "    value: [0.5, 1.5, 1.5, 2.5, 2.5, 3.5, 3.5, 4.5]\n" in out
    status, out, err = _run(capsys, ring, "%all", "--device", "9,0")
    assert status == 2 and "device (replica 9, partition 0) is not on the 4x1 grid" in err


def test_shardings_say_which_device_holds_which_tile():
    op = _op("""
func.func @main(%x: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %0 = stablehlo.custom_call @Sharding(%x) {mhlo.sharding = "{devices=[2,1,2]<=[4] last_tile_dim_replicate}"} : (tensor<4x2xf32>) -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}""", "stablehlo.custom_call")
    lines = _section(explain_op(op), 2)
    at = lines.index(next(line for line in lines if line.startswith("mhlo.sharding = ")))
    assert lines[at + 1:at + 4] == ["  split into [2, 1] tiles along the value's dimensions",
                                    "  tile [0, 0] → devices [0, 1]", "  tile [1, 0] → devices [2, 3]"]


def test_scalar_bounds_and_ops_inside_a_body(capsys):
    path = DATA / "explain" / "reduce_body_and_clamp.mlir"
    status, out, _ = _run(capsys, path, "%c", "--lang", "en", "--width", "200")
    assert status == 0
    assert "  the result has the shape of operand, [2, 3]; each scalar operand (min, max) applies to every element\n" \
           "  result shape: [2, 3]\n" in out
    status, out, _ = _run(capsys, path, "6", "--lang", "en", "--width", "200")
    assert status == 0 and out.startswith("%s = stablehlo.add (line 6)")
    assert "this op is in the body of stablehlo.reduce (line 4), which the run does not stop inside op by op: " \
           "no values are shown" in out


def test_an_elided_constant_and_a_while_over_a_tuple_are_explained(capsys):
    """Two defects: an elided constant's attribute was read for printing (and raised), and the
    while rule read a tuple operand's shape."""
    status, out, err = _run(capsys, DATA / "hlo_printer" / "elided_constant.hlo", "%big", "--at", "3", "--lang", "en",
                            "--width", "300")
    assert status == 0, err
    assert "value = dense_resource<__elided__> : tensor<12xf32>" in out
    assert "the elements of constant %big (tensor<12xf32>) were elided from the text" in out
    program = hlodbg.load(DATA / "hlo_printer" / "control_flow.hlo")
    loop = next(op for op in program.ops if op.name == "stablehlo.while" and not hasattr(op.operands[0].type, "shape"))
    assert _section(explain_op(loop), 3)[0].startswith("there is no rule to derive the shape of stablehlo.while")
