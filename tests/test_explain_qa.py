"""`hlodbg explain` as a workshop teacher and a compiler engineer use it: defects found by running
it over real programs, each pinned here."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from hlodbg.cli import main

DATA = Path(__file__).parent / "data"
GRID_RING = DATA / "grid_ring.mlir"  # four replicas; %sum adds x within pairs [0,1] and [2,3]


def _explain(capsys, *argv) -> tuple[int, str, str]:
    code = main(["explain", *map(str, argv)])
    out, err = capsys.readouterr()
    return code, out, err


def test_per_device_arguments_reach_the_explained_run(tmp_path, capsys):
    for replica in range(4):
        np.savez(tmp_path / f"device_{replica}_0.npz", arg0=np.array([10.0 * replica, 7.0], np.float32))
    code, out, err = _explain(capsys, GRID_RING, "%sum", "--at", "0", "--device", "1,0",
                              "--args-per-device", tmp_path)
    assert code == 0, err
    # device 1 holds x = [10, 7] + its replica id 1; its pair partner device 0 holds [0, 7] + 0.
    assert "at (0) of device (replica 0, partition 0) = 0\n" in out and "operands[0] at (0) = 11\n" in out
    assert "result #0 at (0) = 11\n" in out


def test_device_keys_of_an_npz_reach_the_explained_run(tmp_path, capsys):
    keys = {f"arg0@{replica},0": np.array([100.0 * replica, 1.0], np.float32) for replica in range(4)}
    np.savez(tmp_path / "args.npz", **keys)
    code, out, err = _explain(capsys, GRID_RING, "%sum", "--at", "0", "--device", "3,0", "--args", tmp_path / "args.npz")
    assert code == 0, err
    # device 3: 300 + 3; its partner device 2: 200 + 2.
    assert "result #0 at (0) = 505\n" in out
    assert "the values shown are those of device (replica 3, partition 0), one of the 4 that run this op" in out


MAX_OF_ROWS = """
func.func @main(%x: tensor<3x4xf32>) -> tensor<3xf32> {
  %init = stablehlo.constant dense<-1.0e+09> : tensor<f32>
  %r = stablehlo.reduce(%x init: %init) across dimensions = [1] : (tensor<3x4xf32>, tensor<f32>) -> tensor<3xf32>
   reducer(%a: tensor<f32>, %b: tensor<f32>) {
    %gt = stablehlo.compare GT, %a, %b, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %m = stablehlo.select %gt, %a, %b : tensor<i1>, tensor<f32>
    stablehlo.return %m : tensor<f32>
  }
  return %r : tensor<3xf32>
}
"""


def test_an_op_in_a_body_run_on_whole_arrays_shows_one_executions_values(tmp_path, capsys):
    program = tmp_path / "max_of_rows.mlir"
    program.write_text(MAX_OF_ROWS)
    np.save(tmp_path / "x.npy", np.arange(12, dtype=np.float32).reshape(3, 4))
    code, out, err = _explain(capsys, program, "%m", "--at", "", "--arg", f"0={tmp_path / 'x.npy'}")
    assert code == 0, err
    # The body sees the 3 rows at once; its select has scalar operands, so one row's values are shown.
    pred, a, b, result = [line.strip() for line in out.splitlines() if line.strip().startswith("value:")]
    for line in (a, b, result):
        assert "[" not in line, out
    assert "for 3 elements at once" in out
    # The first execution combines the init value with row 0's first element, 0.
    assert "so result() takes on_false()=0\n" in out


COMPACT_REDUCE = """
func.func @main(%x: tensor<2x3xf32>) -> tensor<2xf32> {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %sum = stablehlo.reduce(%x init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>
  return %sum : tensor<2xf32>
}
"""


def test_a_line_with_a_compact_reduce_names_the_reduce_not_its_body(tmp_path, capsys):
    program = tmp_path / "sum.mlir"
    program.write_text(COMPACT_REDUCE)
    code, out, err = _explain(capsys, program, "4", "--at", "1")
    assert code == 0, err
    assert out.startswith("%sum = stablehlo.reduce (line 4)")


COUNT_TO_THREE = """
func.func @main(%x: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
  %zero = stablehlo.constant dense<0> : tensor<i32>
  %0:2 = stablehlo.while(%i = %zero, %acc = %x) : tensor<i32>, tensor<2xf32>
  cond {
    %3 = stablehlo.constant dense<3> : tensor<i32>
    %1 = stablehlo.compare LT, %i, %3, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %1 : tensor<i1>
  } do {
    %1 = func.call @double(%acc) : (tensor<2xf32>) -> tensor<2xf32>
    %one = stablehlo.constant dense<1> : tensor<i32>
    %2 = stablehlo.add %i, %one : tensor<i32>
    stablehlo.return %2, %1 : tensor<i32>, tensor<2xf32>
  }
  %5 = func.call @halve(%x) : (tensor<2xf32>) -> tensor<2xf32>
  %6 = func.call @halve(%5) : (tensor<2xf32>) -> tensor<2xf32>
  return %0#1, %6 : tensor<2xf32>, tensor<2xf32>
}
func.func private @double(%y: tensor<2xf32>) -> tensor<2xf32> {
  %d = stablehlo.add %y, %y : tensor<2xf32>
  return %d : tensor<2xf32>
}
func.func private @halve(%y: tensor<2xf32>) -> tensor<2xf32> {
  %half = stablehlo.constant dense<0.5> : tensor<2xf32>
  %h = stablehlo.multiply %y, %half : tensor<2xf32>
  return %h : tensor<2xf32>
}
"""


def _count_to_three(tmp_path) -> Path:
    program = tmp_path / "count.mlir"
    program.write_text(COUNT_TO_THREE)
    np.save(tmp_path / "x.npy", np.array([1.0, 2.0], np.float32))
    return program


def test_a_name_defined_in_a_loops_cond_and_body_is_ambiguous(tmp_path, capsys):
    code, out, err = _explain(capsys, _count_to_three(tmp_path), "%1")
    assert code != 0 and "names 2 ops" in err
    assert "stablehlo.compare (line 7)" in err and "func.call (line 10)" in err
    code, out, err = _explain(capsys, _count_to_three(tmp_path), "7")
    assert code == 0 and out.startswith("%1 = stablehlo.compare (line 7)"), err


def test_an_op_that_runs_several_times_says_its_first_execution_is_shown(tmp_path, capsys):
    program = _count_to_three(tmp_path)
    x = f"0={tmp_path / 'x.npy'}"
    code, out, err = _explain(capsys, program, "@double:%d", "--arg", x, "--at", "1")
    assert code == 0, err
    assert "inside the loop of %0 (line 4): the values shown are those of its first execution" in out
    assert "result #0 at (1) = 4\n" in out  # the first doubling of [1, 2]
    code, out, err = _explain(capsys, program, "@halve:%h", "--arg", x, "--at", "0")
    assert code == 0, err
    assert "@halve is called from 2 places" in out and "result #0 at (0) = 0.5\n" in out
    code, out, err = _explain(capsys, program, "%6", "--arg", x)
    assert code == 0, err
    assert "first execution" not in out  # an op of @main outside the loop runs once


SMALL_CONV = """
func.func @main(%x: tensor<1x4x4x2xf32>, %k: tensor<3x3x2x2xf32>) -> tensor<1x4x4x2xf32> {
  %0 = stablehlo.convolution(%x, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [1, 1], pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x2xf32>, tensor<3x3x2x2xf32>) -> tensor<1x4x4x2xf32>
  return %0 : tensor<1x4x4x2xf32>
}
"""


def test_the_generic_inverse_refuses_when_every_answer_is_a_big_window(monkeypatch):
    # A 32x32x64 convolution with a 3x3x64 window made the generic inverse ask 65,536 result elements
    # for over a thousand operand elements each (a minute and a half); its cost is now bounded too.
    import pytest

    import hlodbg
    from hlodbg.engine.ops import provenance as provenance_module
    from tests.provenance_harness import op_under_test

    program = hlodbg.load(SMALL_CONV)
    op = op_under_test(program)
    x, k = np.ones((1, 4, 4, 2), np.float32), np.ones((3, 3, 2, 2), np.float32)
    results = [program.run(x, k)]
    reached = provenance_module.reach(op, 0, (0, 1, 1, 0), operands=[x, k], results=results)
    assert len(reached) == 3 * 3 * 2  # the 3x3 output positions around it, both output features
    # 32 result elements of 36 operand elements each: 1,152 in all.
    monkeypatch.setattr(provenance_module, "REACH_WORK_LIMIT", 1000)
    with pytest.raises(provenance_module.ProvenanceError, match=r"32 result elements of 36 operand elements each "
                       r"\(1,152 in all, more than 1,000\); ask about one result element instead"):
        provenance_module.reach(op, 0, (0, 1, 1, 0), operands=[x, k], results=results)


LONG_DOT = """
func.func @main(%a: tensor<2x40xf32>, %b: tensor<40x3xf32>) -> tensor<2x3xf32> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<2x40xf32>, tensor<40x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
"""


def test_a_long_contraction_lists_its_first_operand_elements_and_counts_the_rest(tmp_path, capsys):
    # A 512-long contraction printed 1,024 source lines; the steps were already cut short.
    program = tmp_path / "dot.mlir"
    program.write_text(LONG_DOT)
    code, out, err = _explain(capsys, program, "%0", "--at", "1,2")
    assert code == 0, err
    listed = [line for line in out.splitlines() if " factor: operand #" in line]
    assert len(listed) == 32 and listed[-1].strip().startswith("rhs factor: operand #1 rhs at (15, 2)")
    assert out.rstrip().endswith("… and 48 more operand elements like these")
    code, out, err = _explain(capsys, program, "%0", "--at", "1,2", "--json")
    assert len(json.loads(out)["provenance"]["sources"]) == 80  # JSON keeps every one


SMALL_HLO = """HloModule small

ENTRY %main (x: f32[2,3]) -> f32[3,2] {
  %x = f32[2,3]{1,0} parameter(0)
  %t = f32[3,2]{1,0} transpose(%x), dimensions={1,0}
  ROOT %b = f32[3,2]{1,0} negate(%t)
}
"""


def test_an_op_read_from_hlo_text_is_titled_with_its_hlo_opcode(tmp_path, capsys):
    program = tmp_path / "small.hlo"
    program.write_text(SMALL_HLO)
    code, out, err = _explain(capsys, program, "t", "--at", "2,1")
    assert code == 0, err
    assert out.startswith("%t = transpose (line 5), read as stablehlo.transpose\n")
    code, out, err = _explain(capsys, program, "%b", "--json")
    assert json.loads(out)["hlo_opcode"] == "negate" and json.loads(out)["op"] == "stablehlo.negate"
    code, out, err = _explain(capsys, program, "5", "--lang", "ja")
    assert out.startswith("%t = transpose（5 行目）")


def test_an_argument_named_as_the_op_is_said_to_be_an_argument(tmp_path, capsys):
    program = tmp_path / "small.hlo"
    program.write_text(SMALL_HLO)
    code, out, err = _explain(capsys, program, "x")
    assert code != 0 and "%x is argument #0 of @main, not the result of an op: name an op that uses it" in err
    code, out, err = _explain(capsys, _count_to_three(tmp_path), "%acc")
    assert code != 0 and "%acc is argument #1 of a region of stablehlo.while (line 4)" in err


def test_an_op_hlodbg_does_not_trace_says_so_in_the_students_language(tmp_path, capsys):
    program = _count_to_three(tmp_path)
    code, out, err = _explain(capsys, program, "%0", "--at", "", "--lang", "ja", "--arg", f"0={tmp_path / 'x.npy'}")
    assert code == 0, err
    element = out.split("はどこから来るか\n")[1].splitlines()
    assert element == ["  結果 #0 の () = 3", "  hlodbg は stablehlo.while の結果の要素をオペランドまでたどらない。上の各節の説明はそのまま成り立つ"]
    code, out, err = _explain(capsys, program, "@halve:%half", "--at", "1", "--lang", "hi", "--arg", f"0={tmp_path / 'x.npy'}")
    assert code == 0, err
    # a constant's elements come from no operand: said in Hindi, with the value (its provenance has no sources)
    assert out.rstrip().endswith("मान ऑपरेंड के मानों पर निर्भर नहीं करता")
    assert "परिणाम #0 का (1) = 0.5" in out


UNCALLED_GATHER = """
func.func @main(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  return %x : tensor<4x3xf32>
}
func.func private @unused(%t: tensor<5x3xf32>, %i: tensor<2x1xi32>) -> tensor<2x3xf32> {
  %0 = "stablehlo.gather"(%t, %i) {dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, slice_sizes = array<i64: 1, 3>, indices_are_sorted = false} : (tensor<5x3xf32>, tensor<2x1xi32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
"""


def test_a_gather_that_never_ran_says_its_provenance_needs_values_in_the_students_language(tmp_path, capsys):
    program = tmp_path / "uncalled.mlir"
    program.write_text(UNCALLED_GATHER)
    code, out, err = _explain(capsys, program, "@unused:%0", "--at", "1,2", "--lang", "ja")
    assert code == 0, err
    assert out.rstrip().endswith("どの要素から作られるかは stablehlo.gather が受け取る値で決まるが、ここではこの op の値がない")


def test_at_takes_an_index_as_explain_prints_it_and_a_scalar_as_empty_brackets(tmp_path, capsys):
    program = tmp_path / "dot.mlir"
    program.write_text(LONG_DOT)
    for at in ("(1, 2)", "[1,2]", " 1, 2 "):
        code, out, err = _explain(capsys, program, "%0", "--at", at)
        assert code == 0 and "Where result #0 element (1, 2) comes from" in out, err
    program = tmp_path / "max_of_rows.mlir"
    program.write_text(MAX_OF_ROWS)
    for at in ("()", "[]", ""):
        code, out, err = _explain(capsys, program, "%m", "--at", at)
        assert code == 0 and "Where result #0 element () comes from" in out, err
    code, out, err = _explain(capsys, program, "%m", "--at", "0")
    assert code != 0 and "is a scalar (type tensor<f32>): give --at '()'" in err


TALL = """
func.func @main(%x: tensor<1x1200xf32>) -> tensor<1200x1xf32> {
  %0 = stablehlo.transpose %x, dims = [1, 0] : (tensor<1x1200xf32>) -> tensor<1200x1xf32>
  return %0 : tensor<1200x1xf32>
}
"""


def test_row_numbers_of_many_digits_stay_left_of_the_cells(tmp_path, capsys):
    # Row 1100 of a tall result: its number overlapped the cells (the band was made for two digits).
    import re
    import xml.etree.ElementTree as ET

    from hlodbg.layouts.op_diagram_canvas import SMALL_SIZE, text_width

    program, svg = tmp_path / "tall.mlir", tmp_path / "tall.svg"
    program.write_text(TALL)
    code, out, err = _explain(capsys, program, "%0", "--at", "1100,0", "--svg", svg)
    assert code == 0, err
    ns = {"s": "http://www.w3.org/2000/svg"}
    root = ET.fromstring(svg.read_text())
    checked = 0
    for group in root.iter("{http://www.w3.org/2000/svg}g"):
        if group.get("class") != "tensor":
            continue
        left = float(group.find("s:text[@class='heading']", ns).get("x"))
        cells = min(float(r.get("x")) for r in group.findall("s:g[@class='cell']/s:rect", ns))
        for number in group.findall("s:text[@class='number']", ns):
            x, digits = float(number.get("x")), number.text
            if x < cells and re.fullmatch(r"\d{4}", digits):
                half = text_width(digits, SMALL_SIZE) / 2
                assert left - 0.5 <= x - half and x + half <= cells, (digits, left, x, cells)
                checked += 1
    assert checked >= 5


BRANCHES_HLO = """HloModule branches

%negate_it (a: f32[3]) -> f32[3] {
  %a = f32[3]{0} parameter(0)
  ROOT %n = f32[3]{0} negate(%a)
}

%keep_it (b: f32[3]) -> f32[3] {
  %b = f32[3]{0} parameter(0)
  ROOT %k = f32[3]{0} copy(%b)
}

ENTRY %main (i: s32[], x: f32[3], y: f32[3]) -> f32[3] {
  %i = s32[] parameter(0)
  %x = f32[3]{0} parameter(1)
  %y = f32[3]{0} parameter(2)
  ROOT %c = f32[3]{0} conditional(%i, %x, %y), branch_computations={%negate_it, %keep_it}
}
"""


def test_an_op_in_an_hlo_conditional_branch_sees_its_branch_operand(tmp_path, capsys):
    # The debugger read a branch's argument as the conditional's operand of the same position: the
    # selector, for branch 0.
    program = tmp_path / "branches.hlo"
    program.write_text(BRANCHES_HLO)
    np.savez(tmp_path / "args.npz", arg0=np.array(0, np.int32), arg1=np.array([1.0, 2.0, 3.0], np.float32),
             arg2=np.array([7.0, 8.0, 9.0], np.float32))
    code, out, err = _explain(capsys, program, "n", "--at", "2", "--args", tmp_path / "args.npz")
    assert code == 0, err
    assert "value: [1., 2., 3.]" in out and "operand #0 operand at (2) = 3\n" in out
    np.savez(tmp_path / "args.npz", arg0=np.array(1, np.int32), arg1=np.array([1.0, 2.0, 3.0], np.float32),
             arg2=np.array([7.0, 8.0, 9.0], np.float32))
    code, out, err = _explain(capsys, program, "k", "--at", "0", "--args", tmp_path / "args.npz")
    assert code == 0, err
    assert "value: [7., 8., 9.]" in out and "operand #0 operand at (0) = 7\n" in out


def test_timeout_inf_is_no_limit_and_bad_numbers_are_refused(tmp_path, capsys):
    program = _count_to_three(tmp_path)
    for no_limit in ("inf", "1e400", "1e12"):  # past a timer's range: as good as no limit
        code, out, err = _explain(capsys, program, "%5", "--timeout", no_limit, "--arg", f"0={tmp_path / 'x.npy'}")
        assert code == 0 and "internal error" not in err, err
        assert "did not finish" not in out
    for bad in ("nan", "-1", "0", "soon"):
        try:
            code = main(["explain", str(program), "%5", "--timeout", bad])
        except SystemExit as exit:
            code = exit.code
        err = capsys.readouterr().err
        assert code == 2 and "argument --timeout: expected a number of seconds" in err and "inf for no limit" in err
    for bad in ("0", "-5"):
        try:
            code = main(["explain", str(program), "%5", "--width", bad])
        except SystemExit as exit:
            code = exit.code
        assert code == 2 and "argument --width: expected a number of columns, 1 or more" in capsys.readouterr().err


def test_a_loop_that_never_ends_is_explained_without_values_after_the_timeout(capsys):
    code, out, err = _explain(capsys, DATA / "endless.mlir", "%r", "--timeout", "0.2", "--at", "()")
    assert code == 0, err
    assert "the run did not finish this op within 0.2 s (a loop that never ends?), so no values are shown" in out
    assert "hlodbg does not trace stablehlo.while's result elements" in out
    # On a grid every device's run is recorded as the debugger is made: that is bounded too.
    code, out, err = _explain(capsys, DATA / "endless.mlir", "%r", "--timeout", "0.2", "--replicas", "2")
    assert code == 0, err
    assert "the run did not finish this op within 0.2 s" in out


def test_a_grid_the_module_does_not_declare_is_given_with_replicas(capsys):
    # uneven_loop's all_reduce groups replicas 0 and 1, but the module declares no grid.
    code, out, err = _explain(capsys, DATA / "grid" / "uneven_loop.mlir", "13", "--replicas", "2", "--device", "1,0",
                              "--at", "0")
    assert code == 0, err
    assert "device 1 (replica 1, partition 0) is member 1 of the process group of devices (0, 1)" in out


def test_an_hlo_computation_used_at_several_places_is_explained_at_its_first_use(capsys):
    # every_construct's %add is the reducer of %red (line 81) and then of the all-reduce %ar (line 85).
    code, out, err = _explain(capsys, DATA / "hlo_printer" / "every_construct.hlo", "sum")
    assert code == 0, err
    assert "this op is in the body of stablehlo.reduce (line 81)" in out


MANY_UPDATES = """
func.func @main(%t: tensor<2x3xf32>, %i: tensor<40x1xi32>, %u: tensor<40x3xf32>) -> tensor<2x3xf32> {
  %0 = "stablehlo.scatter"(%t, %i, %u) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %s : tensor<f32>
  }) {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, indices_are_sorted = false, unique_indices = false} : (tensor<2x3xf32>, tensor<40x1xi32>, tensor<40x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
"""


def test_many_updates_landing_on_one_element_keep_the_first_steps_and_the_conclusion(tmp_path, capsys):
    program = tmp_path / "scatter.mlir"
    program.write_text(MANY_UPDATES)
    np.savez(tmp_path / "args.npz", arg0=np.zeros((2, 3), np.float32), arg1=np.zeros((40, 1), np.int32),
             arg2=np.ones((40, 3), np.float32))
    code, out, err = _explain(capsys, program, "%0", "--at", "0,1", "--args", tmp_path / "args.npz")
    assert code == 0, err
    steps = out.split("the index arithmetic:\n")[1].split("  the operand elements")[0]
    steps = [line.strip() for line in steps.splitlines() if not line.startswith("      ")]  # continuations
    assert len(steps) == 24
    assert steps[0].startswith("result #0(0, 1) starts as the original value")
    assert steps[-3] == "… 20 more steps like these …"
    assert steps[-2].startswith("40 update(s) land here") and steps[-1] == "result(0, 1) = 40"


def test_section_headings_and_value_summaries_are_translated(tmp_path, capsys):
    # Hindi showed the heading "Attributes" and "262144 elements" in English.
    import re

    from hlodbg.engine.debug import explain

    for lang in ("ja", "hi"):
        for phrase in (explain.WHAT, explain.OPERANDS_AND_RESULTS, explain.ATTRIBUTES, explain.RESULT_SHAPE):
            assert not re.search(r"[A-Za-z]{3,}", phrase.say(lang)), (lang, phrase.say(lang))
        summary = explain.VALUE_SUMMARY.say(lang, count=262144, low=-1.5, high=2.5)
        assert not re.search(r"[A-Za-z]{3,}", summary), (lang, summary)
    program = tmp_path / "dot.mlir"
    program.write_text(LONG_DOT)
    code, out, err = _explain(capsys, program, "%0", "--lang", "hi")
    assert code == 0 and "\nएट्रिब्यूट\n" in out and "मान: 80 एलिमेंट, " in out, err


def test_an_op_named_with_its_result_number_asks_about_that_result(tmp_path, capsys):
    program = _count_to_three(tmp_path)
    code, out, err = _explain(capsys, program, "%0#1", "--at", "1", "--arg", f"0={tmp_path / 'x.npy'}")
    assert code == 0, err
    # %0#1 is the loop's accumulator: [1, 2] doubled three times.
    assert "Where result #1 element (1) comes from" in out and "result #1 at (1) = 16\n" in out


def test_the_derived_shape_of_an_op_of_several_results_says_which_result_it_is(tmp_path, capsys):
    code, out, err = _explain(capsys, _count_to_three(tmp_path), "%0")
    assert code == 0, err
    shape = out.split("How the result shape follows\n")[1].splitlines()
    assert shape[:2] == ["  each result has the shape of the operand it comes from: [[], [2]]", "  shape of result #0: []"]


def test_an_hlo_dump_with_elided_constants_is_explained_with_values_after_fill_elided(capsys):
    code, out, err = _explain(capsys, DATA / "hlo_printer" / "elided_constant.hlo", "sum", "--fill-elided", "zeros",
                              "--at", "3")
    assert code == 0, err
    assert "filled with zeros" in err and "element at the same index: operand #1 rhs at (3) = 0\n" in out


TUPLE_HLO = """HloModule pair

ENTRY %main (a: f32[2], b: f32[2]) -> (f32[2], f32[2]) {
  %a = f32[2]{0} parameter(0)
  %b = f32[2]{0} parameter(1)
  ROOT %t = (f32[2]{0}, f32[2]{0}) tuple(%a, %b)
}
"""


def test_an_element_of_a_tuple_is_asked_of_the_get_tuple_element_that_reads_it(tmp_path, capsys):
    program = tmp_path / "pair.hlo"
    program.write_text(TUPLE_HLO)
    code, out, err = _explain(capsys, program, "t", "--at", "0")
    assert code != 0
    assert "not a tensor of static shape: explain the get-tuple-element that reads the part you want" in err


def test_an_hlo_instruction_lowered_to_several_ops_is_explained_as_its_first(capsys):
    # control_flow's %sorted is a stablehlo.sort and the tuple that packs its results, both on line 85:
    # the tuple was explained, so --at was refused.
    code, out, err = _explain(capsys, DATA / "hlo_printer" / "control_flow.hlo", "sorted", "--at", "1")
    assert code == 0, err
    assert out.startswith("%sorted#0, %sorted#1 = sort (line 85), read as stablehlo.sort")


def test_an_op_of_a_loop_of_no_iteration_or_a_branch_not_taken_says_so(capsys):
    # Both said the run "does not stop inside" the while's or the if's body, which it does.
    program = DATA / "explain" / "not_entered.mlir"
    for name, owner in (("%d", "stablehlo.while (line 4)"), ("%n", "stablehlo.if (line 16)")):
        code, out, err = _explain(capsys, program, name)
        assert code == 0, err
        assert f"{owner} ran without running this op (a loop of no iteration, a branch not taken)" in out
