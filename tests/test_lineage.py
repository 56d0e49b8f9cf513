"""`trace`: where an element came from over the whole run (engine/debug/lineage.py), through
elementwise chains, dots, reduces, broadcasts, calls and loop iterations; NaN origins; the bounds."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import hlodbg
from hlodbg.cli import main
from hlodbg.engine.debug.lineage import LineageError, first_nonfinite, trace_element

DATA = Path(__file__).resolve().parent / "data"
SHARED = Path(__file__).resolve().parents[1] / ".." / "shared" / "programs"

CHAIN = """
func.func @main(%x: tensor<3xf32>, %y: tensor<3xf32>) -> tensor<3xf32> {
  %e = stablehlo.exponential %x : tensor<3xf32>
  %two = stablehlo.constant dense<2.0> : tensor<3xf32>
  %m = stablehlo.multiply %e, %two : tensor<3xf32>
  %s = stablehlo.add %m, %y : tensor<3xf32>
  return %s : tensor<3xf32>
}
"""

DOT = """
func.func @main(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<f32> {
  %d = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %r = stablehlo.reduce(%d init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<2x4xf32>, tensor<f32>) -> tensor<2xf32>
  %b2 = stablehlo.broadcast_in_dim %r, dims = [0] : (tensor<2xf32>) -> tensor<2x5xf32>
  %t = stablehlo.slice %b2 [1:2, 3:4] : (tensor<2x5xf32>) -> tensor<1x1xf32>
  %loss = stablehlo.reshape %t : (tensor<1x1xf32>) -> tensor<f32>
  return %loss : tensor<f32>
}
"""

# %x gains 10 on iteration 3 only (of 6); %i counts.
LOOP = """
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %r:2 = stablehlo.while(%i = %c0, %acc = %x) : tensor<i32>, tensor<2xf32>
    cond {
      %n = stablehlo.constant dense<6> : tensor<i32>
      %lt = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %lt : tensor<i1>
    } do {
      %one = stablehlo.constant dense<1> : tensor<i32>
      %three = stablehlo.constant dense<3> : tensor<i32>
      %next = stablehlo.add %i, %one : tensor<i32>
      %is3 = stablehlo.compare EQ, %i, %three : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %ten = stablehlo.constant dense<10.0> : tensor<2xf32>
      %more = stablehlo.add %acc, %ten : tensor<2xf32>
      %new = stablehlo.select %is3, %more, %acc : tensor<i1>, tensor<2xf32>
      stablehlo.return %next, %new : tensor<i32>, tensor<2xf32>
    }
  return %r#1 : tensor<2xf32>
}
"""

# 0/0 made in the middle of a chain, then carried on.
NAN_CHAIN = """
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = stablehlo.subtract %x, %x : tensor<4xf32>
  %b = stablehlo.divide %a, %a : tensor<4xf32>
  %two = stablehlo.constant dense<2.0> : tensor<4xf32>
  %c = stablehlo.multiply %b, %two : tensor<4xf32>
  %d = stablehlo.add %c, %x : tensor<4xf32>
  return %d : tensor<4xf32>
}
"""

LOG = """
func.func @main(%x: tensor<3xf32>) -> tensor<3xf32> {
  %n = stablehlo.negate %x : tensor<3xf32>
  %l = stablehlo.log %n : tensor<3xf32>
  %e = stablehlo.exponential %l : tensor<3xf32>
  return %e : tensor<3xf32>
}
"""


def finished(text, *args):
    session = hlodbg.load(text).session([np.asarray(a) for a in args], persist=False)
    session.continue_()
    return session


def path_of(found):
    return [(s.kind, s.value, s.index) for s in found.steps]


def leaves_of(found):
    return [(leaf.kind, leaf.name, leaf.region, leaf.count) for leaf in found.leaves]


def test_an_elementwise_chain_goes_back_to_its_arguments_and_constant():
    session = finished(CHAIN, np.array([0, 1, 2], np.float32), np.array([5, 6, 7], np.float32))
    found = trace_element(session, "%s", (1,))
    assert path_of(found) == [("op", "%s", (1,)), ("op", "%m", (1,)), ("op", "%e", (1,)), ("argument", "arg0 (x)", (1,))]
    assert found.element == f"{2 * np.exp(np.float32(1)) + 6:.6g}"
    assert [f.describe() for f in found.steps[0].fanin] == ["%m[1]: element at the same index",
                                                            "%y[1]: element at the same index"]
    assert leaves_of(found) == [("argument", "arg0 (x)", "[1]", 1), ("argument", "arg1 (y)", "[1]", 1),
                                ("constant", "%two (stablehlo.constant line 4)", "[1]", 1)]
    assert found.complete and found.origin is None and found.steps[0].line == 6


def test_a_dot_reads_a_row_and_a_column_through_reduce_broadcast_and_slice():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.arange(12, dtype=np.float32).reshape(3, 4)
    session = finished(DOT, a, b)
    found = trace_element(session, "%loss")
    assert [s.value for s in found.steps] == ["%loss", "%t", "%b2", "%r", "%d", "arg0 (a)"]
    assert found.element == f"{float((a @ b)[1].sum()):.6g}"
    reduce_step = found.steps[3]
    assert [f.describe() for f in reduce_step.fanin] == ["%zero: init value", "%d[1, :] (4 elements): reduced element"]
    dot_step = found.steps[4]
    assert [f.describe() for f in dot_step.fanin] == ["%a[1, :] (3 elements): lhs factor",
                                                     "%b[:, 0] (3 elements): rhs factor"]
    assert leaves_of(found) == [("argument", "arg0 (a)", "[1, :]", 3), ("argument", "arg1 (b)", "[:, :]", 12),
                                ("constant", "%zero (stablehlo.constant line 4)", "", 1)]


def test_a_loop_result_comes_from_the_iteration_that_last_changed_it():
    session = finished(LOOP, np.array([1, 2], np.float32))
    found = trace_element(session, "%r#1", (1,))
    assert found.element == "12"
    assert [s.kind for s in found.steps[:3]] == ["loop", "loop", "op"]
    state = found.steps[1]
    assert state.value == "%acc" and state.changed_in == 3 and found.last_change == 3
    assert state.note == ("as while.cond #6 sees it: last changed in iteration 3 (from 2 to 12); the 2 later "
                          "iteration(s) left it as it was")
    assert found.steps[2].value == "%new" and found.steps[2].frame == "@main while.body #3"
    # The select's chosen value is %more = %acc + 10: the state before iteration 3, which no
    # earlier iteration changed, so the loop's initial value: the argument.
    assert [s.value for s in found.steps[3:]] == ["%more", "%acc", "arg0 (x)"]
    assert found.steps[4].note == ("as while.cond #3 sees it: no iteration before this one changed it: it is the "
                                   "loop's initial value")
    assert ("argument", "arg0 (x)", "[1]", 1) in leaves_of(found)
    # the loop counter changes on every iteration: its last change is the last one
    counter = trace_element(session, "%r#0")
    assert counter.last_change == 5


def test_a_call_result_is_what_the_function_returned_from_what_the_call_passed_in():
    session = finished((DATA / "call_names.mlir").read_text(), np.array([1, 2, 3, 4], np.float32))
    found = trace_element(session, "%1", (3,))  # @main's concatenate: its element 3 is %0[1]
    assert [(s.kind, s.value, s.frame) for s in found.steps] == [
        ("op", "%1", "@main"), ("call", "%0", "@main"), ("op", "%1", "@half"), ("op", "%s", "@half"),
        ("op", "%n", "@main"), ("argument", "arg0 (x)", "@main")]
    assert found.steps[1].note == "returned by @half"
    assert leaves_of(found) == [("argument", "arg0 (x)", "[1]", 1)]


def test_a_nan_made_by_zero_over_zero_deep_in_a_chain_is_traced_to_the_divide():
    session = finished(NAN_CHAIN, np.array([1, 2, 3, 4], np.float32))
    found = trace_element(session, "%d", (2,))
    assert found.element == "nan"
    assert [s.value for s in found.steps] == ["%d", "%c", "%b"]
    assert found.origin == 2 and found.steps[2].origin and found.steps[2].op == "stablehlo.divide"
    assert "origin: step 3" in found.text()


def test_the_first_nan_of_a_run_is_found_and_its_origin_is_log_of_a_negative():
    session = hlodbg.load(LOG).session([np.array([-1, 2, -3], np.float32)], persist=False)
    name, event, at = first_nonfinite(session, "nan")
    assert (name, at) == ("%l", (1,))
    session.continue_()
    found = trace_element(session, "%e", (1,))
    assert [s.value for s in found.steps] == ["%e", "%l"] and found.origin == 1
    assert [f.describe() for f in found.steps[1].fanin] == ["%n[1]: element at the same index"]


def test_a_non_finite_argument_is_where_the_path_ends():
    session = finished(CHAIN, np.array([0, np.inf, 2], np.float32), np.array([5, 6, 7], np.float32))
    found = trace_element(session, "%s", (1,))
    assert found.origin is None and found.steps[-1].kind == "argument" and found.steps[-1].element == "inf"
    assert "comes in with argument arg0 (x)" in found.text()


def test_a_question_past_the_bounds_says_which_bound_stopped_it():
    a = np.ones((2, 3), np.float32)
    b = np.ones((3, 4), np.float32)
    session = finished(DOT, a, b)
    found = trace_element(session, "%loss", element_limit=5)
    assert not found.complete
    assert found.notes == ["the element depends on more than 5 elements: the leaves listed are those found among "
                           "the first ones (the path is complete)"]
    assert "depends on (as far as the bounds let the search go):" in found.text()
    short = trace_element(session, "%loss", path_limit=2)
    assert len(short.steps) == 2 and short.notes[0] == "the path is longer than 2 steps: it stops there"
    asked = trace_element(session, "%loss", question_limit=2)
    assert not asked.complete and asked.notes == [
        "the element depends on elements of more than 2 op instances: the leaves listed are those found before (the "
        "path is complete)"]
    assert [s.value for s in asked.steps] == [s.value for s in found.steps]  # the path is not bounded by it
    looped = trace_element(finished(LOOP, np.array([1, 2], np.float32)), "%r#1", (0,), loop_limit=2)
    assert any("took more than 2 loop iterations" in note for note in looped.notes)


def test_bad_questions_get_clear_messages():
    session = finished(CHAIN, np.zeros(3, np.float32), np.zeros(3, np.float32))
    with pytest.raises(LineageError, match=r"%s has shape \[3\]: name one element of it \(e.g. --at 0\)"):
        trace_element(session, "%s")
    with pytest.raises(LineageError, match=r"\[3\] is not an element of %s \(shape \[3\]\)"):
        trace_element(session, "%s", (3,))
    with pytest.raises(LineageError, match="%nope has not been made by the run so far"):
        trace_element(session, "%nope", (0,))
    with pytest.raises(LineageError, match="expected a value name such as %loss"):
        trace_element(session, "s", (0,))
    with pytest.raises(LineageError, match="the run made no NaN element"):
        first_nonfinite(hlodbg.load(CHAIN).session([np.zeros(3, np.float32)] * 2, persist=False))


# -- the command line -------------------------------------------------------------------------------


@pytest.fixture
def nan_chain(tmp_path):
    program = tmp_path / "chain.mlir"
    program.write_text(NAN_CHAIN)
    inputs = tmp_path / "in.npz"
    np.savez(inputs, x=np.array([1, 2, 3, 4], np.float32))
    return str(program), str(inputs)


def test_cli_trace_prints_the_path_with_lines_values_and_leaves(nan_chain, capsys):
    program, inputs = nan_chain
    assert main(["trace", program, "--args", inputs, "--value", "%d", "--at", "2"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "trace of %d[2] = nan (event 4)"
    assert "    3. [1] %b[2] = nan: stablehlo.divide in @main line 4  <- origin" in out
    assert "       reads %a[2]: element at the same index" in out
    assert "  argument arg0 (x) at [2]" in out


def test_cli_trace_json_and_nan(nan_chain, capsys):
    program, inputs = nan_chain
    assert main(["trace", program, "--args", inputs, "--nan", "--json"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert (found["value"], found["index"], found["origin"]) == ("%b", [0], 0)
    assert found["steps"][0]["op"] == "stablehlo.divide" and found["steps"][0]["reads"][0]["name"] == "%a"
    assert found["leaves"] == [{"kind": "argument", "name": "arg0 (x)", "count": 1, "region": "[0]", "event": None,
                                "note": ""}]


@pytest.mark.parametrize("extra, message", [
    (["--value", "%d", "--at", "9"], "error: [9] is not an element of %d (shape [4])"),
    (["--value", "%d", "--at", "x"], "--at 'x': expected comma-separated indices"),
    (["--value", "%zz", "--at", "0"], "%zz has not been made by the run so far"),
    ([], "trace needs --value %V"),
    (["--inf"], "the run made no Inf element"),
    (["--nan", "--at", "1"], "--nan finds its own element"),
])
def test_cli_trace_bad_input_exits_2_with_a_message(nan_chain, capsys, extra, message):
    program, inputs = nan_chain
    assert main(["trace", program, "--args", inputs, *extra]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


@pytest.mark.skipif(not (SHARED / "gpt_tiny.mlir").exists(), reason="../shared/programs is not here")
def test_gpt_tiny_output_element_is_traced_to_a_bounded_answer():
    program = hlodbg.load(SHARED / "gpt_tiny.mlir")
    inputs = np.load(SHARED / "gpt_tiny.inputs.npz")
    args = [inputs[f"arg{i}"] for i in range(len(inputs.files))]
    args[1] = args[1].copy()
    token = int(args[0].reshape(-1)[3])
    args[1][token, 5] = np.inf  # one embedding element: row 3 of the output turns NaN
    session = program.session(args, persist=False)
    session.continue_()
    result = session.trace.ops[session.trace.frame_records[0].last].operands[0].name
    found = trace_element(session, result, (3, 7))
    assert found.element == "nan"
    assert not found.complete and found.elements_visited <= 50_001
    name, event, at = first_nonfinite(program.session(args, persist=False), "nan")
    first = trace_element(session, name, at, event)
    assert first.steps[-1].kind == "argument" and first.steps[-1].element == "inf"
    assert first.steps[-1].index == (token, 5)


@pytest.mark.skipif(not (SHARED / "sharded_mlp_4x2.mlir").exists(), reason="../shared/programs is not here")
def test_on_a_grid_a_collectives_elements_from_other_devices_are_named_not_followed(capsys):
    program = str(SHARED / "sharded_mlp_4x2.mlir")
    inputs = str(SHARED / "sharded_mlp_4x2.inputs.npz")
    assert main(["trace", program, "--args", inputs, "--value", "%7", "--at", "3,4", "--device", "0,2", "--json"]) == 0
    found = json.loads(capsys.readouterr().out)
    peers = {leaf["name"]: leaf for leaf in found["leaves"] if leaf["kind"] == "peer"}
    device = "of device (replica 0, partition {}), read by"
    assert set(peers) == {
        f"%1 {device.format(3)} %2 (stablehlo.all_reduce line 6)",  # its pair in the reduction group
        *(f"%2 {device.format(p)} %3 (stablehlo.all_gather line 11)" for p in (0, 4, 6)),  # the other members
        f"%2 {device.format(0)} %4 (stablehlo.collective_permute line 12)"}  # the source of device 2's pair
    assert peers[f"%2 {device.format(0)} %4 (stablehlo.collective_permute line 12)"]["region"] == "[3, 4]"
    assert found["steps"][-1]["kind"] == "peer" and found["steps"][-1]["op"] == "stablehlo.all_gather"


def test_hlo_tuples_are_followed_part_by_part_through_a_loop_and_branches():
    text = (DATA / "hlo_printer" / "control_flow.hlo").read_text()
    session = finished(text, np.array([1, 2, 3, 4], np.float32), np.int32(0), np.bool_(True))
    found = trace_element(session, "%first", (1,))
    assert [s.value for s in found.steps] == [
        "%first", "%both part 0", "%tt part 0", "%plus", "%t0", "%pair part 0", "%sel", "%n0", "%wx", "%w part 1",
        "%t part 1", "%t.2 part 1", "%grown", "%x", "%t part 1", "%t.2 part 1", "%grown", "%x", "%t part 1",
        "%t.2 part 1", "%grown", "%x", "%t part 1", "%init part 1", "%f", "%neg", "arg0 (x.0)"]
    assert found.element == "18.5"  # -(-x[1] doubled three times) + c[1]
    assert [s.changed_in for s in found.steps if s.value == "%t part 1"] == [2, 1, 0, None]
    assert found.steps[7].frame == "@main case.0" and found.steps[3].frame == "@main if.true"
    with pytest.raises(LineageError, match="%w is a tuple of 2 values, not a tensor"):
        trace_element(session, "%w", (0,))


def test_cli_trace_of_a_run_that_never_ends_stops_at_its_timeout(tmp_path, capsys):
    program = tmp_path / "endless.mlir"
    program.write_text("""
func.func @main(%x: tensor<f32>) -> tensor<f32> {
  %r = stablehlo.while(%a = %x) : tensor<f32>
    cond {
      %t = stablehlo.constant dense<true> : tensor<i1>
      stablehlo.return %t : tensor<i1>
    } do {
      %one = stablehlo.constant dense<1.0> : tensor<f32>
      %b = stablehlo.add %a, %one : tensor<f32>
      stablehlo.return %b : tensor<f32>
    }
  return %r : tensor<f32>
}
""")
    for which in (["--nan"], ["--value", "%r"]):
        assert main(["trace", str(program), *which, "--timeout", "0.3"]) == 2
        assert "the run did not get there within 0.3 s (a loop that never ends?)" in capsys.readouterr().err


def test_a_nan_constant_is_where_the_nan_comes_in_not_an_origin():
    session = finished("""
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %c = stablehlo.constant dense<[1.0, 0x7FC00000]> : tensor<2xf32>
  %s = stablehlo.add %x, %c : tensor<2xf32>
  return %s : tensor<2xf32>
}
""", np.ones(2, np.float32))
    found = trace_element(session, "%s", (1,))
    assert found.origin is None and [(s.kind, s.value) for s in found.steps] == [("op", "%s"), ("constant", "%c")]
    assert "origin: no op made it non-finite: it comes in with constant %c[1] = nan" in found.text()


def test_a_loops_state_asked_about_inside_the_body_says_when_it_last_changed():
    session = hlodbg.load(LOOP).session([np.array([1, 2], np.float32)], persist=False)
    session.continue_()
    body5 = next(r for r in session.trace.frame_records if r.kind == "while.body" and r.iteration == 5)
    session.goto(body5.first)
    found = trace_element(session, "%acc", (0,))
    assert found.element == "11" and found.last_change == 3
    assert found.steps[0].kind == "loop" and found.steps[0].note.startswith("as while.cond #5 sees it: last changed in "
                                                                           "iteration 3 (from 1 to 11)")


def test_an_if_result_is_what_the_branch_that_ran_returned():
    session = finished("""
func.func @main(%p: tensor<i1>, %x: tensor<2xf32>) -> tensor<2xf32> {
  %r = "stablehlo.if"(%p) ({
    %a = stablehlo.negate %x : tensor<2xf32>
    stablehlo.return %a : tensor<2xf32>
  }, {
    %b = stablehlo.abs %x : tensor<2xf32>
    stablehlo.return %b : tensor<2xf32>
  }) : (tensor<i1>) -> tensor<2xf32>
  return %r : tensor<2xf32>
}
""", np.bool_(True), np.array([3, -5], np.float32))
    found = trace_element(session, "%r", (1,))
    assert [(s.kind, s.value, s.frame, s.element) for s in found.steps] == [
        ("call", "%r", "@main", "5"), ("op", "%a", "@main if.true", "5"), ("argument", "arg1 (x)", "@main", "-5")]
    assert found.steps[0].note == "returned by @main if.true"


def test_the_answer_is_the_same_when_the_run_kept_almost_no_values():
    x = np.array([1, 2], np.float32)
    answers = []
    for memory in (None, "1K"):  # 1K: the store drops nearly every value and recomputes what trace reads
        session = hlodbg.load(LOOP).session([x], memory=memory, persist=False)
        session.continue_()
        answers.append(trace_element(session, "%r#1", (1,)).to_dict())
    assert answers[0] == answers[1]


def test_cli_trace_takes_the_target_and_memory_options(nan_chain, capsys):
    program, inputs = nan_chain
    assert main(["trace", program, "--args", inputs, "--value", "%d", "--at", "2", "--target", "tpu-v5e",
                 "--memory", "1K", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["origin"] == 2
    assert main(["trace", program, "--args", inputs, "--value", "%d", "--at", "2", "--target", "nope"]) == 2
    assert "unknown target 'nope'" in capsys.readouterr().err


OVERFLOW_THEN_NAN = """
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %e = stablehlo.exponential %x : tensor<2xf32>
  %d = stablehlo.subtract %e, %e : tensor<2xf32>
  return %d : tensor<2xf32>
}
"""

# Replica 3 alone takes the log of a negative number; the all_reduce then spreads the NaN to its
# pair (replicas 2 and 3), never to replicas 0 and 1.
NAN_ON_ONE_REPLICA = """
module attributes {mhlo.num_replicas = 4 : i32, mhlo.num_partitions = 1 : i32} {
  func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
    %r = stablehlo.replica_id : tensor<ui32>
    %rf = stablehlo.convert %r : (tensor<ui32>) -> tensor<f32>
    %b = stablehlo.broadcast_in_dim %rf, dims = [] : (tensor<f32>) -> tensor<2xf32>
    %y = stablehlo.subtract %x, %b : tensor<2xf32>
    %l = stablehlo.log %y : tensor<2xf32>
    %sum = "stablehlo.all_reduce"(%l) ({
      ^bb0(%a: tensor<f32>, %c: tensor<f32>):
        %t = stablehlo.add %a, %c : tensor<f32>
        stablehlo.return %t : tensor<f32>
    }) {replica_groups = dense<[[0, 1], [2, 3]]> : tensor<2x2xi64>} : (tensor<2xf32>) -> tensor<2xf32>
    return %sum : tensor<2xf32>
  }
}
"""


def test_nonfinite_finds_the_inf_that_later_made_the_nan():
    program = hlodbg.load(OVERFLOW_THEN_NAN)
    session = program.session([np.array([1, 100], np.float32)], persist=False)
    assert first_nonfinite(session, "nonfinite")[0::2] == ("%e", (1,))
    session = program.session([np.array([1, 100], np.float32)], persist=False)
    assert first_nonfinite(session, "nan")[0::2] == ("%d", (1,))


def test_on_a_grid_the_target_finds_the_nan_on_the_device_that_made_it():
    target = hlodbg.load(NAN_ON_ONE_REPLICA).debug([np.array([5, 2.5], np.float32)], persist=False)
    name, event, at = first_nonfinite(target.session, "nan", target=target)
    assert (name, at, target.device_id(target.focus)) == ("%l", (1,), 3)
    assert target.session.timeline.main.trace.ops[event].name == "stablehlo.log"
    target.close()
    alone = hlodbg.load(NAN_ON_ONE_REPLICA).debug([np.array([5, 2.5], np.float32)], persist=False)
    with pytest.raises(LineageError, match="the run made no NaN element"):  # device 0 only: never one there
        first_nonfinite(alone.session, "nan", lambda: alone.move("continue_"))
    alone.close()


def test_cli_trace_nan_on_a_grid_looks_on_every_device(tmp_path, capsys):
    program = tmp_path / "one_replica.mlir"
    program.write_text(NAN_ON_ONE_REPLICA)
    inputs = tmp_path / "in.npz"
    np.savez(inputs, x=np.array([5, 2.5], np.float32))
    assert main(["trace", str(program), "--args", str(inputs), "--nan", "--json"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert (found["value"], found["index"], found["steps"][0]["op"]) == ("%l", [1], "stablehlo.log")


def test_mcp_trace_nan_on_a_grid_looks_on_every_device(tmp_path):
    # The MCP server's trace answers as `hlodbg trace --nan` does: without a device, every device looks.
    from hlodbg.mcp.folders import Folders
    from hlodbg.mcp.sessions import Desk

    program = tmp_path / "one_replica.mlir"
    program.write_text(NAN_ON_ONE_REPLICA)
    inputs = tmp_path / "in.npz"
    np.savez(inputs, x=np.array([5, 2.5], np.float32))
    desk = Desk(Folders.make(str(tmp_path / "work"), [str(tmp_path)]))
    try:
        desk.call(lambda: desk.load(str(program), args=str(inputs))).result()
        [handle] = desk.open
        traced = desk.call(lambda: desk.trace(handle, "nan")).result()
    finally:
        desk.close_all()
    assert "%l" in traced and "stablehlo.log" in traced and "[1]" in traced, traced
