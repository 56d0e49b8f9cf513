"""Capture of a compiled run (engine/run/capture/, `hlodbg capture`): the values XLA computes for
the whole compiled program, named as hlodbg's interpreter names the same op instances.

Every capture here is checked against an interpreter run of the same program on the same
arguments: each captured row must be an instance the interpreter ran (same context, site, result
and device, as `frame_context` gives them) with the same value within the XLA-vs-numpy tolerances
(tests/hlo_oracle.py), and (for `--values all`) every instance the interpreter ran that a capture
keeps must be there.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("jax")

import hlodbg  # noqa: E402
from hlodbg.engine import parse_module  # noqa: E402
from hlodbg.cli import main  # noqa: E402
from hlodbg.engine.run.capture.run import capture  # noqa: E402
from hlodbg.engine.run.capture.transform import instrument, trip_count  # noqa: E402
from hlodbg.engine.run.capture_format import Capture, frame_context, site  # noqa: E402
from hlodbg.engine.run.grid import GridScheduler, ScheduledGrid  # noqa: E402
from hlodbg.engine.run.interpreter import Interpreter, Listener  # noqa: E402

from .helpers import PROGRAMS, require_shared  # noqa: E402
from .hlo_oracle import difference  # noqa: E402


# -- the interpreter's instances, named as a capture names them ----------------------------------

class Instances(Listener):
    """Every op instance's results, keyed (context, site, result, device)."""

    def __init__(self, seen: dict, device: int):
        self.seen = seen
        self.device = device

    def after_op(self, event, frame, op, operands, results):
        for i, value in enumerate(results):
            if isinstance(value, np.ndarray) or np.isscalar(value):
                self.seen[(frame_context(frame), site(op), i, self.device)] = np.array(value)


def interpreter_instances(module, args) -> dict:
    seen: dict = {}
    replicas, partitions = module.num_replicas, module.num_partitions
    if replicas * partitions == 1:
        Interpreter(module, listeners=[Instances(seen, 0)]).run("main", args)
        return seen
    grid = ScheduledGrid(replicas, partitions)
    tasks = {}
    for process in grid.processes():
        device = process.replica_id * partitions + process.partition_id
        interpreter = Interpreter(module, process=process, grid=grid, listeners=[Instances(seen, device)])
        tasks[process] = lambda i=interpreter: i.run("main", args)
    GridScheduler(grid, tasks).run()
    return seen


def check_against_interpreter(directory: Path, module) -> Capture:
    """Every captured row is an interpreter instance with the same value (within tolerance)."""
    captured = Capture.open(directory)
    seen = interpreter_instances(module, [np.asarray(a) for a in captured.inputs()])
    for row in captured:
        assert row.key in seen, f"{row.key} is no instance of the interpreter's run"
        problem = difference(captured.load(row), seen[row.key])
        assert problem is None, f"{row.key} ({row.op}): {problem}"
    return captured


def kept_by_capture(module, key) -> bool:
    """Whether a capture of every value keeps this interpreter instance: not a constant, not
    inside a reducer body (a frame whose owner is not a call, loop, branch or manual part)."""
    context, site_text, _, _ = key
    op = site_op(module, site_text)
    return op.name != "stablehlo.constant"


def site_op(module, site_text):
    name, index = site_text[1:].split("#")
    return module.functions[name].ops[int(index)]


def shared_program(name: str):
    require_shared()
    program = hlodbg.load(PROGRAMS / f"{name}.mlir")
    inputs = np.load(PROGRAMS / f"{name}.inputs.npz")
    return program, [inputs[f"arg{i}"] for i in range(len(inputs.files))]


def capture_text(tmp_path, text: str, args, name: str = "prog", **options) -> tuple[Path, object]:
    path = tmp_path / f"{name}.mlir"
    path.write_text(text)
    directory = tmp_path / f"{name}.hlocap"
    summary = capture(text, str(path), args, directory, **options)
    return directory, summary


# -- the shared programs -------------------------------------------------------------------------

def test_sharded_mlp_per_device_rows_match_the_emulated_grid(tmp_path):
    program, args = shared_program("sharded_mlp_4x2")
    directory, summary = capture_text(tmp_path, program.source, args, "sharded_mlp_4x2")
    captured = check_against_interpreter(directory, program.module)
    assert summary.devices == 8 and captured.grid == (1, 8)
    assert captured.manifest["global_values"] == "device 0 holds the global array"
    assert [d["id"] for d in captured.devices] == list(range(8))
    manual = [op for op in program.module.function("main").ops if op.name == "sdy.manual_computation"][0]
    inside = {(row.site, row.device) for row in captured if row.context == site(manual)}
    body_ops = [op for op in manual.walk() if op is not manual and op.parent_op is manual
                and op.name not in ("stablehlo.constant", "sdy.return")]
    # One row per device for every value computed inside the manual computation.
    assert inside == {(site(op), d) for op in body_ops for d in range(8)}
    # The global result once, on device 0, the whole array: XLA's expected output.
    expected = np.load(PROGRAMS / "sharded_mlp_4x2.expected.npz")["result0"]
    row = captured.row("", site(manual), 0, 0)
    assert row is not None and [r.device for r in captured if r.site == site(manual) and r.context == ""] == [0]
    assert difference(captured.load(row), expected) is None
    manifest = json.loads((directory / "capture.json").read_text())
    for key in ("program", "entry", "target", "platform", "jax_version", "devices", "grid", "hosts", "values",
                "loop_capacity", "left_out", "xla_memory", "seconds", "input_dtypes"):
        assert key in manifest
    assert manifest["target"] == "xla:cpu" and "temp" in manifest["xla_memory"]
    assert any("values inside stablehlo.all_reduce" in note for note in manifest["left_out"])


@pytest.mark.parametrize("name", ["rnn_scan", "gpt_tiny"])
def test_shared_program_matches_the_numpy_run(tmp_path, name):
    program, args = shared_program(name)
    directory, _ = capture_text(tmp_path, program.source, args, name)
    captured = check_against_interpreter(directory, program.module)
    seen = interpreter_instances(program.module, args)
    kept = {key for key in seen if kept_by_capture(program.module, key)} - reducer_instances(program.module, seen)
    assert kept == {row.key for row in captured}
    assert (directory / "program.mlir").read_text() == program.source


def reducer_instances(module, seen) -> set:
    """Instances inside reducer bodies (reduce's add, ...): never captured."""
    out = set()
    for key in seen:
        op = site_op(module, key[1])
        owner = op.parent_op
        while owner is not None and owner.name != "func.func":
            if owner.name not in ("stablehlo.while", "stablehlo.if", "stablehlo.case", "sdy.manual_computation"):
                out.add(key)
                break
            owner = owner.parent_op
    return out


def test_rnn_scan_loop_is_counted_and_every_iteration_is_kept(tmp_path):
    program, args = shared_program("rnn_scan")
    loop = [op for op in program.module.function("main").ops if op.name == "stablehlo.while"][0]
    assert trip_count(loop) == 6
    directory, _ = capture_text(tmp_path, program.source, args, "rnn_scan", loop_capacity=2)
    captured = Capture.open(directory)
    # A counted loop keeps every iteration whatever --loop-capacity says.
    iterations = {row.context.split("/")[0] for row in captured if row.context}
    assert iterations == {f"{site(loop)}[{i}]" for i in range(7)}  # 6 bodies; the 7th evaluates the condition
    assert not any("raise --loop-capacity" in note for note in captured.manifest["left_out"])


# -- loops, branches, calls ----------------------------------------------------------------------

NAN_LOOP = """
module @nan_in_loop {
  func.func public @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    %zero = stablehlo.constant dense<0> : tensor<i32>
    %out:2 = stablehlo.while(%i = %zero, %acc = %x) : tensor<i32>, tensor<4xf32>
    cond {
      %n = stablehlo.constant dense<8> : tensor<i32>
      %go = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %go : tensor<i1>
    } do {
      %four = stablehlo.constant dense<4> : tensor<i32>
      %left = stablehlo.subtract %four, %i : tensor<i32>
      %f = stablehlo.convert %left : (tensor<i32>) -> tensor<f32>
      %root = stablehlo.sqrt %f : tensor<f32>
      %wide = stablehlo.broadcast_in_dim %root, dims = [] : (tensor<f32>) -> tensor<4xf32>
      %next = stablehlo.add %acc, %wide : tensor<4xf32>
      %one = stablehlo.constant dense<1> : tensor<i32>
      %j = stablehlo.add %i, %one : tensor<i32>
      stablehlo.return %j, %next : tensor<i32>, tensor<4xf32>
    }
    return %out#1 : tensor<4xf32>
  }
}
"""


def test_nan_inside_a_loop_first_appears_in_iteration_5(tmp_path):
    directory, _ = capture_text(tmp_path, NAN_LOOP, [np.arange(4, dtype=np.float32)], "nan_loop")
    module = hlodbg.load(tmp_path / "nan_loop.mlir").module
    captured = check_against_interpreter(directory, module)
    loop = [op for op in module.function("main").ops if op.name == "stablehlo.while"][0]
    assert trip_count(loop) == 8
    rows = [row for row in captured if row.context]
    assert {row.context for row in rows} == {f"{site(loop)}[{i}]" for i in range(9)}
    with_nan = sorted(int(row.context.split("[")[1].rstrip("]")) for row in rows
                      if np.isnan(np.asarray(captured.load(row), np.float64)).any())
    assert with_nan[0] == 5 and set(with_nan) == set(range(5, 8))
    sqrt = [op for op in module.function("main").ops if op.name == "stablehlo.sqrt"][0]
    assert np.isnan(captured.array(f"{site(loop)}[5]", site(sqrt)))
    assert not np.isnan(captured.array(f"{site(loop)}[4]", site(sqrt)))


UNCOUNTED_LOOP_WITH_BRANCH_AND_CALLS = """
module @uncounted {
  func.func public @main(%x: tensor<3xf32>, %n: tensor<i32>) -> tensor<3xf32> {
    %zero = stablehlo.constant dense<0> : tensor<i32>
    %out:2 = stablehlo.while(%i = %zero, %acc = %x) : tensor<i32>, tensor<3xf32>
    cond {
      %go = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %go : tensor<i1>
    } do {
      %two = stablehlo.constant dense<2> : tensor<i32>
      %r = stablehlo.remainder %i, %two : tensor<i32>
      %even = stablehlo.compare EQ, %r, %zero, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %next = "stablehlo.if"(%even) ({
        %d = func.call @double(%acc) : (tensor<3xf32>) -> tensor<3xf32>
        stablehlo.return %d : tensor<3xf32>
      }, {
        %n2 = stablehlo.negate %acc : tensor<3xf32>
        stablehlo.return %n2 : tensor<3xf32>
      }) : (tensor<i1>) -> tensor<3xf32>
      %one = stablehlo.constant dense<1> : tensor<i32>
      %j = stablehlo.add %i, %one : tensor<i32>
      stablehlo.return %j, %next : tensor<i32>, tensor<3xf32>
    }
    %last = func.call @double(%out#1) : (tensor<3xf32>) -> tensor<3xf32>
    return %last : tensor<3xf32>
  }
  func.func private @double(%v: tensor<3xf32>) -> tensor<3xf32> {
    %s = stablehlo.add %v, %v : tensor<3xf32>
    return %s : tensor<3xf32>
  }
}
"""


def test_uncounted_loop_keeps_its_capacity_branches_by_the_taken_one_calls_per_site(tmp_path):
    args = [np.array([1, 2, 3], np.float32), np.array(5, np.int32)]
    directory, _ = capture_text(tmp_path, UNCOUNTED_LOOP_WITH_BRANCH_AND_CALLS, args, "uncounted", loop_capacity=3)
    module = hlodbg.load(tmp_path / "uncounted.mlir").module
    captured = check_against_interpreter(directory, module)
    main = module.function("main")
    loop = next(op for op in main.ops if op.name == "stablehlo.while")
    branch = next(op for op in main.ops if op.name == "stablehlo.if")
    calls = [op for op in main.ops if op.name == "func.call"]
    add = module.function("double").ops[0]
    assert trip_count(loop) is None
    # Iterations 0..2 kept (the capacity), 3..4 named as left out.
    in_loop = {row.context.split("/")[0] for row in captured if row.context.startswith(site(loop) + "[")}
    assert in_loop == {f"{site(loop)}[{i}]" for i in range(3)} | {f"{site(loop)}[5]"}
    assert any(f"iterations 3..4 of the loop {site(loop)}" in note for note in captured.manifest["left_out"])
    # The callee's add, once per call site and iteration: the call in the even branch, the one after the loop.
    contexts = sorted(row.context for row in captured if row.site == site(add))
    assert contexts == sorted([f"{site(loop)}[0]/{site(branch)}/{site(calls[0])}",
                               f"{site(loop)}[2]/{site(branch)}/{site(calls[0])}", site(calls[1])])
    # The branch not taken (odd iteration 1 ran the negate) has no rows of the other branch.
    negate = next(op for op in main.ops if op.name == "stablehlo.negate")
    assert [row.context for row in captured if row.site == site(negate)] == [f"{site(loop)}[1]/{site(branch)}"]


def test_values_spec_selects_only_those_values(tmp_path, capsys):
    require_shared()
    out = tmp_path / "gpt.hlocap"
    assert main(["capture", str(PROGRAMS / "gpt_tiny.mlir"), "--args", str(PROGRAMS / "gpt_tiny.inputs.npz"),
                 "--values", "stablehlo.dot_general, line:40", "-o", str(out)]) == 0
    summary = capsys.readouterr().out
    assert "captured" in summary and "value instance(s)" in summary
    program = hlodbg.load(PROGRAMS / "gpt_tiny.mlir")
    captured = check_against_interpreter(out, program.module)
    ops = {row.op for row in captured}
    assert ops == {"stablehlo.dot_general", "stablehlo.add"}
    line_40 = [row for row in captured if row.op == "stablehlo.add"]
    assert line_40 and all(site_op(program.module, row.site).pos.line == 40 for row in line_40)
    dots = [op for f in program.module.functions.values() for op in f.ops if op.name == "stablehlo.dot_general"]
    assert {row.site for row in captured if row.op == "stablehlo.dot_general"} == {site(op) for op in dots}
    assert captured.manifest["values"] == "stablehlo.dot_general, line:40"
    # The instrumented module has only those values as extra outputs.
    full = instrument(program.source, "gpt_tiny.mlir")
    assert captured.manifest["outputs"] == len({(row.site, row.result) for row in captured}) < len(full.outputs)


def test_values_spec_that_points_nowhere_is_a_clear_error(tmp_path, capsys):
    require_shared()
    status = main(["capture", str(PROGRAMS / "mlp.mlir"), "--values", "%nope", "-o", str(tmp_path / "x.hlocap")])
    assert status == 2
    assert "--values '%nope'" in capsys.readouterr().err


def test_merge_without_host_indexes_is_a_clear_error(tmp_path, capsys):
    require_shared()
    program, args = shared_program("mlp")
    directory, _ = capture_text(tmp_path, program.source, args, "mlp")
    manifest = json.loads((directory / "capture.json").read_text())
    manifest["hosts"] = 2
    (directory / "capture.json").write_text(json.dumps(manifest))
    assert main(["capture", "--merge", str(directory)]) == 2
    assert "host(s) 0, 1 of 2 wrote no index" in capsys.readouterr().err


def test_instrumented_text_reads_back_and_original_is_untouched():
    program, _ = shared_program("rnn_scan")
    instrumented = instrument(program.source, "rnn_scan.mlir")
    again = parse_module(instrumented.text)
    assert len(again.function("main").function_type.results) == (
        instrumented.first_output + len(instrumented.outputs))
    assert site(instrumented.original.function("main").ops[3]) == "@main#3"
    assert len(instrumented.original.function("main").function_type.results) == 2


NESTED_LOOPS_AND_CASE = """
module @nested {
  func.func public @main(%x: tensor<2xf32>) -> tensor<2xf32> {
    %zero = stablehlo.constant dense<0> : tensor<i32>
    %outer:2 = stablehlo.while(%i = %zero, %acc = %x) : tensor<i32>, tensor<2xf32>
    cond {
      %three = stablehlo.constant dense<3> : tensor<i32>
      %go = stablehlo.compare LT, %i, %three, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %go : tensor<i1>
    } do {
      %inner:2 = stablehlo.while(%k = %zero, %v = %acc) : tensor<i32>, tensor<2xf32>
      cond {
        %go2 = stablehlo.compare LT, %k, %i, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
        stablehlo.return %go2 : tensor<i1>
      } do {
        %picked = "stablehlo.case"(%k) ({
          %a = stablehlo.add %v, %v : tensor<2xf32>
          stablehlo.return %a : tensor<2xf32>
        }, {
          %m = stablehlo.multiply %v, %v : tensor<2xf32>
          stablehlo.return %m : tensor<2xf32>
        }) : (tensor<i32>) -> tensor<2xf32>
        %one = stablehlo.constant dense<1> : tensor<i32>
        %k1 = stablehlo.add %k, %one : tensor<i32>
        stablehlo.return %k1, %picked : tensor<i32>, tensor<2xf32>
      }
      %one = stablehlo.constant dense<1> : tensor<i32>
      %i1 = stablehlo.add %i, %one : tensor<i32>
      stablehlo.return %i1, %inner#1 : tensor<i32>, tensor<2xf32>
    }
    return %outer#1 : tensor<2xf32>
  }
}
"""


def test_nested_loops_keep_each_inner_run_and_case_branches(tmp_path):
    directory, _ = capture_text(tmp_path, NESTED_LOOPS_AND_CASE, [np.array([1.5, -2], np.float32)], "nested")
    module = hlodbg.load(tmp_path / "nested.mlir").module
    captured = check_against_interpreter(directory, module)
    seen = interpreter_instances(module, [np.array([1.5, -2], np.float32)])
    kept = {key for key in seen if kept_by_capture(module, key)}
    assert kept == {row.key for row in captured}
    main = module.function("main")
    outer, inner = [op for op in main.ops if op.name == "stablehlo.while"]
    multiply = next(op for op in main.ops if op.name == "stablehlo.multiply")
    case = next(op for op in main.ops if op.name == "stablehlo.case")
    # Outer iteration i runs the inner loop i times; the case's second branch runs at k = 1 (and
    # k >= 2 runs the last branch too, as the spec says for an index out of range).
    assert sorted(row.context for row in captured if row.site == site(multiply)) == [
        f"{site(outer)}[2]/{site(inner)}[1]/{site(case)}"]


LOOP_OVER_MANUAL = """
module @loop_over_manual attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["x"=2, "y"=2]>
  func.func public @main(%x: tensor<4x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> (tensor<4x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) {
    %zero = stablehlo.constant dense<0> : tensor<i32>
    %out:2 = stablehlo.while(%i = %zero, %acc = %x) : tensor<i32>, tensor<4x2xf32>
    cond {
      %n = stablehlo.constant dense<3> : tensor<i32>
      %go = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %go : tensor<i1>
    } do {
      %y = sdy.manual_computation(%acc) in_shardings=[<@mesh, [{"x"}, {}]>] out_shardings=[<@mesh, [{"x"}, {}]>] manual_axes={"x"} (%local: tensor<2x2xf32>) {
        %total = "stablehlo.all_reduce"(%local) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 2], [1, 3]]> : tensor<2x2xi64>, use_global_device_ids}> ({
        ^bb0(%a: tensor<f32>, %b: tensor<f32>):
          %s = stablehlo.add %a, %b : tensor<f32>
          stablehlo.return %s : tensor<f32>
        }) : (tensor<2x2xf32>) -> tensor<2x2xf32>
        %half = stablehlo.constant dense<0.5> : tensor<2x2xf32>
        %scaled = stablehlo.multiply %total, %half : tensor<2x2xf32>
        %mixed = stablehlo.add %scaled, %local : tensor<2x2xf32>
        sdy.return %mixed : tensor<2x2xf32>
      } : (tensor<4x2xf32>) -> tensor<4x2xf32>
      %one = stablehlo.constant dense<1> : tensor<i32>
      %j = stablehlo.add %i, %one : tensor<i32>
      stablehlo.return %j, %y : tensor<i32>, tensor<4x2xf32>
    }
    return %out#1 : tensor<4x2xf32>
  }
}
"""


def test_partly_manual_computation_inside_a_loop_gives_every_device_each_iteration(tmp_path):
    x = np.arange(8, dtype=np.float32).reshape(4, 2)
    directory, _ = capture_text(tmp_path, LOOP_OVER_MANUAL, [x], "loop_over_manual")
    module = hlodbg.load(tmp_path / "loop_over_manual.mlir").module
    captured = check_against_interpreter(directory, module)
    seen = interpreter_instances(module, [x])
    manual = next(op for op in module.function("main").ops if op.name == "sdy.manual_computation")
    inside = {key for key in seen if f"/{site(manual)}" in key[0] and kept_by_capture(module, key)}
    inside -= reducer_instances(module, seen)
    assert inside == {row.key for row in captured if f"/{site(manual)}" in row.context}
    mixed = next(op for op in module.function("main").ops if op.results and op.results[0].name == "%mixed")
    loop = next(op for op in module.function("main").ops if op.name == "stablehlo.while")
    # Manual over "x" only: devices 0 and 1 (x = 0, y free) hold the same tile, 2 and 3 the other.
    rows = {row.device: captured.load(row) for row in captured
            if row.site == site(mixed) and row.context == f"{site(loop)}[2]/{site(manual)}"}
    assert sorted(rows) == [0, 1, 2, 3]
    np.testing.assert_array_equal(rows[0], rows[1])
    assert not np.array_equal(rows[0], rows[2])


def test_mixed_bf16_capture_is_xla_with_its_excess_precision(tmp_path):
    """XLA:CPU converts a bf16 multiply straight to f32 without rounding it to bf16 first; the
    capture shows that (the interpreter agrees with --excess-precision, not without)."""
    from hlodbg.engine.machine.targets import backend_for

    program, args = shared_program("mixed_bf16")
    directory, _ = capture_text(tmp_path, program.source, args, "mixed_bf16")
    captured = Capture.open(directory)
    expected = np.load(PROGRAMS / "mixed_bf16.expected.npz")["result1"]
    last = site(program.module.function("main").ops[-2])  # %6, the f32 convert before the return
    np.testing.assert_array_equal(captured.array("", last), expected)
    seen = {}
    Interpreter(program.module, backend=backend_for("cpu", excess_precision=True),
                listeners=[Instances(seen, 0)]).run("main", args)
    for row in captured:
        assert difference(captured.load(row), seen[row.key]) is None, row.key


REPLICATED = """
module @replicated attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 2 : i32} {
  func.func public @main(%x: tensor<3xf32>) -> tensor<3xf32> {
    %id = stablehlo.replica_id : tensor<ui32>
    %f = stablehlo.convert %id : (tensor<ui32>) -> tensor<f32>
    %wide = stablehlo.broadcast_in_dim %f, dims = [] : (tensor<f32>) -> tensor<3xf32>
    %y = stablehlo.add %x, %wide : tensor<3xf32>
    %sum = "stablehlo.all_reduce"(%y) <{replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }) : (tensor<3xf32>) -> tensor<3xf32>
    return %sum : tensor<3xf32>
  }
}
"""


def test_replicated_program_gives_every_device_its_own_rows(tmp_path):
    x = np.array([1, 2, 3], np.float32)
    directory, _ = capture_text(tmp_path, REPLICATED, [x], "replicated")
    module = hlodbg.load(tmp_path / "replicated.mlir").module
    captured = check_against_interpreter(directory, module)
    assert captured.grid == (2, 1) and "global_values" not in captured.manifest
    add = site(module.function("main").ops[3])
    np.testing.assert_array_equal(captured.array("", add, 0, 1) - captured.array("", add, 0, 0), np.ones(3, np.float32))
    assert {row.device for row in captured} == {0, 1}
