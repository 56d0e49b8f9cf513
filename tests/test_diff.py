"""CPU vs another target, op by op (engine/debug/divergence.py, `hlodbg diff`, `--break-on
diverge`, `hlodbg export --overlay divergence --against TARGET`).

The divergences come from the real tpu-v5e target: f32 dots at DEFAULT precision take one bf16
MXU pass there (engine/machine/tpu/numerics.py), so a dot of operands near 1+2^-10 parts from the CPU.
"""
from __future__ import annotations

import importlib.util
import json

import numpy as np
import pytest

import hlodbg
from hlodbg.cli import main
from hlodbg.engine import ExecutionError
from hlodbg.engine.debug.difference import compare_values
from hlodbg.engine.debug.divergence import compare_runs
from hlodbg.engine.machine.backend import CPU, Backend

ONE_PLUS = np.float32(1 + 2 ** -10)  # not a bf16: rounds to 1.0

# The dot runs in every iteration; its operand is exactly 1 in iteration 0 (the same on every
# target) and 1 + 2^-10 from iteration 1 on, where bf16 operands give K instead of K(1+2^-10)^2.
LOOP = """
func.func @main(%x: tensor<4x8xf32>) -> tensor<4x4xf32> {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %zero = stablehlo.constant dense<0.0> : tensor<4x4xf32>
  %r:3 = stablehlo.while(%i = %c0, %v = %x, %acc = %zero) : tensor<i32>, tensor<4x8xf32>, tensor<4x4xf32>
    cond {
      %n = stablehlo.constant dense<3> : tensor<i32>
      %lt = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %lt : tensor<i1>
    } do {
      %t = stablehlo.transpose %v, dims = [1, 0] : (tensor<4x8xf32>) -> tensor<8x4xf32>
      %d = stablehlo.dot_general %v, %t, contracting_dims = [1] x [0] : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x4xf32>
      %step = stablehlo.constant dense<0.0009765625> : tensor<4x8xf32>
      %w = stablehlo.add %v, %step : tensor<4x8xf32>
      %one = stablehlo.constant dense<1> : tensor<i32>
      %j = stablehlo.add %i, %one : tensor<i32>
      stablehlo.return %j, %w, %d : tensor<i32>, tensor<4x8xf32>, tensor<4x4xf32>
    }
  return %r#2 : tensor<4x4xf32>
}
"""

# Data movement and integer arithmetic only: nothing a TPU computes differently.
MOVES = """
func.func @main(%x: tensor<2x6xf32>, %k: tensor<2x6xi32>) -> (tensor<3x4xf32>, tensor<6x2xi32>) {
  %t = stablehlo.transpose %x, dims = [1, 0] : (tensor<2x6xf32>) -> tensor<6x2xf32>
  %r = stablehlo.reshape %t : (tensor<6x2xf32>) -> tensor<3x4xf32>
  %s = stablehlo.slice %k [0:2, 0:6] : (tensor<2x6xi32>) -> tensor<2x6xi32>
  %m = stablehlo.multiply %s, %s : tensor<2x6xi32>
  %a = stablehlo.add %m, %k : tensor<2x6xi32>
  %kt = stablehlo.transpose %a, dims = [1, 0] : (tensor<2x6xi32>) -> tensor<6x2xi32>
  %d = stablehlo.dot_general %kt, %s, contracting_dims = [1] x [0] : (tensor<6x2xi32>, tensor<2x6xi32>) -> tensor<6x6xi32>
  %sl = stablehlo.slice %d [0:6, 0:2] : (tensor<6x6xi32>) -> tensor<6x2xi32>
  return %r, %sl : tensor<3x4xf32>, tensor<6x2xi32>
}
"""


def tpu():
    """A fresh emulated TPU v5e: f32 dots at DEFAULT precision take one bf16 MXU pass."""
    from hlodbg.engine.machine.targets import backend_for

    return backend_for("tpu-v5e")


@pytest.fixture
def files(tmp_path):
    loop = tmp_path / "loop.mlir"
    loop.write_text(LOOP)
    moves = tmp_path / "moves.mlir"
    moves.write_text(MOVES)
    inputs = tmp_path / "in.npz"
    np.savez(inputs, arg0=np.ones((4, 8), np.float32))
    return loop, moves, inputs


def _loop_report(**options):
    program = hlodbg.load(LOOP)
    return program, compare_runs(program.module, [np.ones((4, 8), np.float32)], CPU, tpu(), **options)


# -- the engine -----------------------------------------------------------------------------------
def test_first_divergence_is_the_dot_in_the_second_iteration():
    program, report = _loop_report()
    first = report.first
    assert first.place.op.name == "stablehlo.dot_general"
    assert first.place.instance == 2  # iteration 0 multiplies exact ones: the same everywhere
    assert [(f.kind, f.iteration) for f in first.place.frames] == [("function", None), ("while.body", 1)]
    assert "while.body #1 (the while at line 5)" in first.place.describe_frames()
    assert first.operands_agree and first.operands_identical
    assert first.notes[0].startswith("stablehlo.dot_general at DEFAULT precision: operands rounded to bf16 on TPU")
    # K = 8 products of (1 + 2^-10)^2 on the CPU; exactly 8 with bf16 operands.
    assert first.target_summaries[0].max == pytest.approx(8 * float(ONE_PLUS) ** 2, rel=1e-7)
    assert first.against_summaries[0].min == first.against_summaries[0].max == 8.0
    total = first.total
    assert total.max_abs == pytest.approx(8 * float(ONE_PLUS) ** 2 - 8, rel=1e-6)
    assert total.beyond == total.size == 16
    # Everything before it agreed: it is the first op instance beyond the tolerance, and the
    # ops that ran before it were compared without diverging.
    tally = report.ops[first.place.op]
    assert tally.runs == 3 and tally.diverged == 2
    parted = {op.name for op, tally in report.ops.items() if tally.diverged}
    assert parted == {"stablehlo.dot_general", "stablehlo.while"}  # the loop returns the dot's value
    assert report.finished and not report.parted
    assert report.diverged == 2 + 1  # the dot in iterations 1 and 2, and the while's result
    assert report.worst.total.max_rel >= total.max_rel


def test_stop_at_first_stops_both_runs_there():
    _, report = _loop_report(stop_at_first=True)
    assert report.first is not None and report.diverged == 1 and not report.finished
    assert report.results is None


def test_event_numbers_are_the_sessions():
    program, report = _loop_report()
    session = program.session([np.ones((4, 8), np.float32)], persist=False)
    session.goto(report.first.place.event)
    assert session.op is report.first.place.op
    assert [(f.kind, f.iteration) for f in session.stack] == [("function", None), ("while.body", 1)]


def test_a_looser_tolerance_finds_nothing():
    _, report = _loop_report(rtol=1e-2)
    assert report.first is None and report.diverged == 0 and report.compared > 0


def test_data_movement_and_integers_do_not_diverge():
    program = hlodbg.load(MOVES)
    rng = np.random.default_rng(1)
    args = [rng.standard_normal((2, 6)).astype(np.float32), rng.integers(-50, 50, (2, 6)).astype(np.int32)]
    report = compare_runs(program.module, args, CPU, tpu())
    assert report.first is None and report.diverged == 0
    assert report.compared == 8 and report.finished
    assert all(tally.max_abs == 0 for tally in report.ops.values())


def test_runs_that_take_different_paths_part_after_the_predicate():
    text = LOOP.replace("%lt = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>",
                        "%e = stablehlo.slice %acc [0:1, 0:1] : (tensor<4x4xf32>) -> tensor<1x1xf32>\n"
                        "      %s = stablehlo.reshape %e : (tensor<1x1xf32>) -> tensor<f32>\n"
                        "      %limit = stablehlo.constant dense<8.0> : tensor<f32>\n"
                        "      %lt = stablehlo.compare LE, %s, %limit : (tensor<f32>, tensor<f32>) -> tensor<i1>")
    program = hlodbg.load(text)
    report = compare_runs(program.module, [np.ones((4, 8), np.float32)], CPU, tpu())
    assert report.first.place.op.name == "stablehlo.dot_general"
    assert "the runs part" in report.parted and not report.finished


def test_a_run_that_fails_is_named():
    class Refuses(Backend):
        name = "refuser"

        def matmul(self, *args, **kwargs):
            raise ExecutionError("no dots here")

    program = hlodbg.load(LOOP)
    with pytest.raises(ExecutionError, match="the refuser run failed"):
        compare_runs(program.module, [np.ones((4, 8), np.float32)], CPU, Refuses())


def test_value_differences():
    nan, inf = np.nan, np.inf
    same = compare_values(np.array([nan, inf, -0.0, 1.0], np.float32), np.array([nan, inf, 0.0, 1.0], np.float32))
    assert not same.diverged and same.max_abs == 0 and same.abs_index == ()
    flushed = compare_values(np.array([1e-40, 1.0]), np.array([0.0, 1.0]))  # a subnormal flushed to zero
    assert flushed.diverged and flushed.max_rel == 1.0 and flushed.rel_index == (0,)
    assert not compare_values(np.array([1e-40]), np.array([0.0]), atol=1e-30).diverged
    assert compare_values(np.array([1.0, nan]), np.array([1.0, 2.0])).max_rel == inf
    ints = compare_values(np.array([[1, 2], [3, 4]], np.int32), np.array([[1, 2], [3, 5]], np.int32), rtol=1.0)
    assert ints.diverged and ints.max_abs == 1 and ints.abs_index == (1, 1)  # integers must be equal
    pair = compare_values((np.zeros(2), np.array([1.0, 2.0])), (np.zeros(2), np.array([1.0, 2.5])))
    assert pair.abs_index == (1, 1) and pair.beyond == 1
    assert compare_values(np.zeros(2), np.zeros(3)).note.startswith("shapes differ")


def test_large_values_are_compared_block_by_block(monkeypatch):
    import hlodbg.engine.debug.difference as difference

    monkeypatch.setattr(difference, "BLOCK", 3)
    a = np.arange(20, dtype=np.float32).reshape(4, 5)
    b = a.copy()
    b[3, 1] += 5  # in the last block
    b[0, 1] = 3  # the largest relative error (2/3), in the first block
    found = compare_values(a, b)
    assert (found.abs_index, found.rel_index, found.beyond, found.size) == ((3, 1), (0, 1), 2, 20)
    assert found.max_abs == 5 and found.max_rel == pytest.approx(2 / 3)


# -- --break-on diverge -------------------------------------------------------------------------------
def test_break_on_diverge_stops_the_session_at_that_instance():
    program = hlodbg.load(LOOP)
    session = program.debug([np.ones((4, 8), np.float32)], persist=False, backend=tpu()).session
    bp = session.break_at("diverge")
    assert bp.spec == "diverge against cpu" and "run 2" in bp.note
    stop = session.continue_()
    assert stop.reason == "breakpoint" and stop.hits[0].after
    event = session.event(stop.hits[0].event)
    assert event.op.name == "stablehlo.dot_general"
    assert [(f.kind, f.iteration) for f in session.stack] == [("function", None), ("while.body", 1)]
    assert np.all(event.outputs[0] == 8.0)  # the bf16 result, in this (the target's) run
    assert session.continue_().reason == "end"  # one op instance, not every run of the op


def test_restarting_on_new_arguments_finds_the_divergence_again():
    program = hlodbg.load(LOOP)
    session = program.debug([np.ones((4, 8), np.float32)], persist=False, backend=tpu()).session
    bp = session.break_at("diverge")
    session.restart([np.full((4, 8), ONE_PLUS)])  # not a bf16: the first iteration's dot differs
    assert session.breakpoints.breakpoints == [bp] and "run 1" in bp.note
    session.continue_()
    assert [(f.kind, f.iteration) for f in session.stack] == [("function", None), ("while.body", 0)]
    assert session.event(session.position - 1).op.name == "stablehlo.dot_general"


def test_break_on_diverge_with_nothing_to_find_never_stops():
    program = hlodbg.load(LOOP)
    session = program.debug([np.ones((4, 8), np.float32)], persist=False, backend=tpu()).session
    bp = session.break_at("diverge against cpu rtol=0.1")
    assert "no op diverges from cpu" in bp.note
    assert session.continue_().reason == "end"


def test_bad_diverge_specs():
    from hlodbg.engine.debug.breakpoints import BreakpointError

    session = hlodbg.load(LOOP).session([np.ones((4, 8), np.float32)], persist=False)
    with pytest.raises(BreakpointError, match="diverge \\[against TARGET\\]"):
        session.break_at("diverge from cpu")
    with pytest.raises(BreakpointError, match="rtol must be a number"):
        session.break_at("diverge rtol=-1")
    with pytest.raises(BreakpointError, match="no condition"):
        session.break_at("diverge", condition="nan")


def test_run_break_on_diverge(files, capsys):
    loop, _, inputs = files
    assert main(["run", str(loop), "--args", str(inputs), "--break-on", "diverge"]) == 3
    out = capsys.readouterr().out
    assert out.startswith("stopped at breakpoint 'diverge' after event ")
    assert "%d = stablehlo.dot_general (run 2)" in out and "while.body #1" in out
    assert "operands agree (identical): this op is where the targets part" in out
    assert main(["run", str(loop), "--args", str(inputs), "--break-on", "diverge rtol=0.1"]) == 0
    assert "result0" in capsys.readouterr().out
    assert main(["run", str(loop), "--args", str(inputs), "--against", "cpu"]) == 2
    assert "add --break-on diverge" in capsys.readouterr().err


# -- hlodbg diff ---------------------------------------------------------------------------------------
def test_diff_names_the_first_divergence(files, capsys):
    loop, _, inputs = files
    assert main(["diff", str(loop), "--args", str(inputs), "--against", "tpu-v5e"]) == 1
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0].startswith("first divergence: event ") and lines[0].endswith("%d = stablehlo.dot_general (run 2)")
    assert f"  at {loop}:12:7" in lines
    assert "  in: @main > while.body #1 (the while at line 5)" in lines
    assert any(line.startswith("  result %d: max abs 0.0156 at [0, 0], max rel 0.00195 at [0, 0]; 16 of 16") for line in lines)
    assert "    tpu-v5e: finite: 4x4xf32 min 8 max 8 mean 8 std 0" in lines
    assert any(line.startswith("  why: stablehlo.dot_general at DEFAULT precision: operands rounded to bf16 on TPU")
               for line in lines)
    assert any(line.startswith("summary: ") and "3 diverged (2 op(s))" in line for line in lines)


def test_diff_tolerances(files, capsys):
    loop, _, inputs = files
    assert main(["diff", str(loop), "--args", str(inputs), "--against", "tpu", "--rtol", "1e-2"]) == 0
    assert "none diverged" in capsys.readouterr().out
    assert main(["diff", str(loop), "--args", str(inputs), "--against", "tpu", "--rtol", "0", "--atol", "0.1"]) == 0
    assert main(["diff", str(loop), "--args", str(inputs), "--against", "tpu", "--rtol", "0", "--atol", "0.01"]) == 1
    capsys.readouterr()
    assert main(["diff", str(loop), "--against", "tpu", "--rtol", "-1"]) == 2
    assert "--rtol must be a number, 0 or more" in capsys.readouterr().err
    assert main(["diff", str(loop), "--against", "tpu-v99"]) == 2
    assert "unknown target 'tpu-v99'" in capsys.readouterr().err


def test_diff_json(files, capsys):
    loop, moves, inputs = files
    assert main(["diff", str(loop), "--args", str(inputs), "--against", "tpu-v5e", "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert (data["target"], data["against"], data["rtol"], data["atol"]) == ("cpu", "tpu-v5e", 1e-5, 0.0)
    assert data["diverged"] == 3 and data["diverged_ops"] == 2 and data["finished"] and data["parted"] is None
    first = data["first"]
    assert (first["op"], first["instance"], first["line"]) == ("stablehlo.dot_general", 2, 12)
    assert first["frames"] == "@main > while.body #1 (the while at line 5)"
    assert first["results"][0]["against"]["max"] == 8.0 and first["results"][0]["difference"]["beyond"] == 16
    assert first["operands_agree"] and [o["name"] for o in first["operands"]] == ["%v", "%t"]
    assert first["notes"][0].startswith("stablehlo.dot_general at DEFAULT precision: operands rounded to bf16 on TPU")
    assert main(["diff", str(moves), "--against", "tpu-v5e", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["first"] is None and data["diverged"] == 0 and data["compared"] == 8


# Two replicas: device 0 multiplies exact ones (the same everywhere), device 1 ones + 2^-10.
GRID = """
module attributes {mhlo.num_replicas = 2 : i32, mhlo.num_partitions = 1 : i32} {
func.func @main(%x: tensor<4x8xf32>) -> tensor<4x4xf32> {
  %r = stablehlo.replica_id : tensor<ui32>
  %rf = stablehlo.convert %r : (tensor<ui32>) -> tensor<f32>
  %step = stablehlo.constant dense<0.0009765625> : tensor<f32>
  %s = stablehlo.multiply %rf, %step : tensor<f32>
  %b = stablehlo.broadcast_in_dim %s, dims = [] : (tensor<f32>) -> tensor<4x8xf32>
  %v = stablehlo.add %x, %b : tensor<4x8xf32>
  %t = stablehlo.transpose %v, dims = [1, 0] : (tensor<4x8xf32>) -> tensor<8x4xf32>
  %d = stablehlo.dot_general %v, %t, contracting_dims = [1] x [0] : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x4xf32>
  %sum = "stablehlo.all_reduce"(%d) ({
    ^bb0(%p: tensor<f32>, %q: tensor<f32>):
      %a = stablehlo.add %p, %q : tensor<f32>
      stablehlo.return %a : tensor<f32>
  }) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  return %sum : tensor<4x4xf32>
}
}
"""


def test_grids_are_compared_device_by_device():
    from hlodbg.engine.machine.process import ProcessId

    program = hlodbg.load(GRID)
    report = compare_runs(program.module, [np.ones((4, 8), np.float32)], CPU, tpu(), grid=(2, 1))
    assert report.devices == 2 and report.finished and report.compared == 2 * 9
    first = report.first
    assert (first.place.op.name, first.place.device, first.place.process) == ("stablehlo.dot_general", 1, ProcessId(1, 0))
    assert first.operands_agree and not first.collective
    # Device 0's dot agrees; its all_reduce is where device 1's difference reaches it.
    on_zero = report.first_by_device[ProcessId(0, 0)]
    assert on_zero.place.op.name == "stablehlo.all_reduce" and on_zero.operands_agree and on_zero.collective
    assert set(report.results) == {ProcessId(0, 0), ProcessId(1, 0)}


def test_diff_and_break_on_name_the_device(tmp_path, files, capsys):
    _, _, inputs = files
    program = tmp_path / "grid.mlir"
    program.write_text(GRID)
    assert main(["diff", str(program), "--args", str(inputs), "--against", "tpu-v5e"]) == 1
    out = capsys.readouterr().out
    assert out.startswith("first divergence: event 7 on device 1 (replica 1, partition 0): %d = stablehlo.dot_general")
    assert "  event 8 on device 0 (replica 0, partition 0): %sum = stablehlo.all_reduce at line 12" in out
    assert "on each of 2 devices" in out
    assert main(["diff", str(program), "--args", str(inputs), "--against", "tpu-v5e", "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["devices"] == 2 and [d["device"] for d in data["first_by_device"]] == [1, 0]
    assert data["first_by_device"][1]["collective"] is True
    assert main(["run", str(program), "--args", str(inputs), "--break-on", "diverge"]) == 3
    assert capsys.readouterr().out.startswith("stopped at breakpoint 'diverge' after event 7 on device 1")
    assert main(["run", str(program), "--args", str(inputs), "--break-on", "diverge rtol=0.1"]) == 0
    assert "result0@1,0" in capsys.readouterr().out


def test_diverge_breakpoints_in_a_grid_session_say_what_to_use():
    from hlodbg.engine.debug.breakpoints import BreakpointError

    target = hlodbg.load(GRID).debug([np.ones((4, 8), np.float32)], persist=False, backend=tpu())
    with pytest.raises(BreakpointError, match="hlodbg diff"):
        target.break_at("diverge")


def test_the_shared_sharded_mlp(capsys):
    from .helpers import PROGRAMS, require_shared

    require_shared()
    program = PROGRAMS / "sharded_mlp_4x2.mlir"
    assert main(["diff", str(program), "--args", str(PROGRAMS / "sharded_mlp_4x2.inputs.npz"), "--against", "tpu-v5e",
                 "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["devices"] == 8 and len(data["first_by_device"]) == 8
    assert all(d["op"] == "stablehlo.dot_general" and d["operands_agree"] for d in data["first_by_device"])
    assert data["first"]["frames"] == "@main > manual (the manual_computation at line 4)"


# -- the export overlay ---------------------------------------------------------------------------------
def test_export_divergence_overlay_against_a_target(files, tmp_path, capsys):
    from hlodbg.layouts.overlay import DIVERGENCE, FIRST_BAD

    loop, _, inputs = files
    out = tmp_path / "div.svg"
    assert main(["export", str(loop), "-o", str(out), "--values", str(inputs), "--overlay", "divergence",
                 "--against", "tpu-v5e"]) == 0
    svg = out.read_text()
    assert "max relative divergence, cpu vs tpu-v5e" in svg and "first divergence" in svg
    assert FIRST_BAD in svg and DIVERGENCE[0][1] in svg  # the dot, and ops that agree
    data = tmp_path / "div.json"
    assert main(["export", str(loop), "-o", str(data), "--values", str(inputs), "--overlay", "divergence",
                 "--against", "tpu-v5e"]) == 0
    nodes = {n["name"]: n for n in json.loads(data.read_text())["nodes"]}
    assert nodes["%d"]["fill"] == FIRST_BAD and nodes["%d"]["badge"].startswith("first Δ")
    assert nodes["%w"]["fill"] == DIVERGENCE[0][1]  # an add of identical operands
    assert main(["export", str(loop), "-o", str(out), "--overlay", "divergence", "--against", "tpu-v99"]) == 2
    assert "REF.npz" in capsys.readouterr().err


def test_open_break_on_diverge_names_the_against_target():
    from argparse import Namespace

    from hlodbg.engine.machine.targets import TargetError
    from hlodbg.ui_entry import CliError, launch_break_spec

    assert launch_break_spec(Namespace(break_on="diverge", against="cpu")) == "diverge against cpu"
    assert launch_break_spec(Namespace(break_on="diverge against cpu", against=None)) == "diverge against cpu"
    assert launch_break_spec(Namespace(break_on="nan", against=None)) == "nan"
    with pytest.raises(TargetError, match="unknown target 'tpu-v99'"):
        launch_break_spec(Namespace(break_on="diverge", against="tpu-v99"))
    with pytest.raises(CliError, match="add --break-on diverge"):
        launch_break_spec(Namespace(break_on="nan", against="cpu"))


# -- the real TPU target ---------------------------------------------------------------------------------
def _tpu_ready() -> bool:
    found = importlib.util.find_spec
    return found("hlodbg.engine.machine.layout") is not None and found("hlodbg.engine.machine.tpu.numerics") is not None


@pytest.mark.skipif(not _tpu_ready(), reason="needs TPU storage (machine/layout.py) and numerics (tpu/numerics.py)")
def test_real_tpu_target_diverges_at_the_dot():
    from hlodbg.engine.machine.targets import backend_for

    program = hlodbg.load(LOOP)
    report = compare_runs(program.module, [np.ones((4, 8), np.float32)], CPU, backend_for("tpu-v5e"))
    assert report.first.place.op.name == "stablehlo.dot_general" and report.first.place.instance == 2
    assert report.first.operands_agree and report.first.notes
    moves = hlodbg.load(MOVES)
    args = [np.arange(12, dtype=np.float32).reshape(2, 6), np.arange(12, dtype=np.int32).reshape(2, 6)]
    assert compare_runs(moves.module, args, CPU, backend_for("tpu-v5e")).first is None


def test_the_reasons_given_are_those_the_values_meet():
    # The dot's operands and results hold no subnormal: flushing them is no reason it parts.
    _, report = _loop_report()
    assert not any("subnormal" in note for note in report.first.notes)
    # 1e-30 x 1e-10 is subnormal on the CPU and 0 on a TPU: there it is the reason.
    program = hlodbg.load("""
func.func @main(%a: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<2xf32> {
  %c = stablehlo.multiply %a, %b : tensor<2xf32>
  return %c : tensor<2xf32>
}""")
    args = [np.array([1e-30, 1], np.float32), np.array([1e-10, 2], np.float32)]
    first = compare_runs(program.module, args, CPU, tpu()).first
    assert first.notes == ["subnormal inputs/results flushed to zero"]


def test_tpu_options_go_to_the_side_that_is_a_tpu(tmp_path, capsys):
    # `diff --against tpu-v5e --allow-f64` runs the CPU against a TPU emulating f64 (before, the
    # flag was refused: the default --target is the CPU, and the TPU side never got it).
    prog = tmp_path / "wide.mlir"
    prog.write_text("""
func.func @main(%x: tensor<3xf64>) -> tensor<3xf64> {
  %y = stablehlo.add %x, %x : tensor<3xf64>
  return %y : tensor<3xf64>
}""")
    assert main(["diff", str(prog), "--against", "tpu-v5e"]) == 2
    assert "--allow-f64" in capsys.readouterr().err
    assert main(["diff", str(prog), "--against", "tpu-v5e", "--allow-f64"]) == 0
    assert "none diverged" in capsys.readouterr().out
    from hlodbg.cli import _parser
    from hlodbg.divergence_report import backends

    args = _parser().parse_args(["diff", str(prog), "--against", "tpu", "--layout", "arg0=0", "--per-op-rounding"])
    target, against = backends(args)
    assert target.describe() == "cpu" and not target.excess_precision and against.excess_precision
    assert against.layout_options == {"arg0": "0"}
    assert main(["diff", str(prog), "--against", "cpu", "--layout", "arg0=0"]) == 2
    assert "--layout applies to TPU targets" in capsys.readouterr().err
