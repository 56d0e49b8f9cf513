"""`interpreter.run_parallel`: the reference interpreter's parallel tests, run by `hlodbg check`.

The programs in tests/data/run_parallel/ cover every collective, send/recv, infeed/outfeed and
replica/partition ids on grids of several shapes, with different functions per process.
"""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from hlodbg.cli import main
from hlodbg.engine.run.interpreter import Interpreter
from hlodbg.engine.run.parallel import plan_run_parallel
from hlodbg.engine.syntax.mlir.parser import parse_chunks
from hlodbg.engine.machine.process import ProcessId

DATA = Path(__file__).parent / "data" / "run_parallel"
FILES = sorted(DATA.glob("*.mlir"))


def chunks(path: Path) -> list:
    return parse_chunks(path.read_text(), str(path))


def check(capsys, *paths, verbose: bool = False) -> tuple[int, str]:
    args = ["check", *(["-v"] if verbose else []), *map(str, paths)]
    status = main(args)
    return status, capsys.readouterr().out


def run_parallel_op(module):
    return next(op for op in module.functions["main"].body.operations if op.name == "interpreter.run_parallel")


# -- the program files pass ----------------------------------------------------------------------


def test_the_program_files_cover_every_communicating_op():
    text = "\n".join(p.read_text() for p in FILES)
    for name in ("all_reduce", "all_gather", "all_to_all", "collective_broadcast", "collective_permute",
                 "reduce_scatter", "send", "recv", "infeed", "outfeed", "replica_id", "partition_id"):
        assert f"stablehlo.{name}" in text, name


def test_every_program_file_passes(capsys):
    status, out = check(capsys, *FILES)
    modules = sum(len(chunks(p)) for p in FILES)
    assert status == 0, out
    assert out.strip() == f"{modules} passed, 0 failed"


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_every_module_runs_its_checks(capsys, path):
    status, out = check(capsys, path, verbose=True)
    assert status == 0, out
    counts = [int(n) for n in re.findall(r": ok \((\d+) checks\)", out)]
    assert len(counts) == len(chunks(path))
    # Each module checks the results of every process (no module passes by checking nothing).
    for module, count in zip(chunks(path), counts):
        assert count >= 1
        assert count == sum(1 for op in module.functions["main"].body.operations if op.name.startswith("check."))


# -- results in process order --------------------------------------------------------------------


def test_inputs_and_results_are_flattened_in_process_order():
    module = chunks(DATA / "replica_partition_ids.mlir")[1]
    plan = plan_run_parallel(run_parallel_op(module), module)
    assert (plan.num_replicas, plan.num_partitions) == (2, 2)
    layout = [(p.process, p.function.sym_name, p.inputs, p.results) for p in plan.placements]
    assert layout == [
        (ProcessId(0, 0), "tag", (0, 1), (0, 1)),
        (ProcessId(0, 1), "scale", (1, 3), (1, 3)),
        (ProcessId(1, 0), "scale", (3, 5), (3, 5)),
        (ProcessId(1, 1), "tag", (5, 6), (5, 6)),
    ]


def test_outfeed_of_the_processes_reaches_the_host_queue():
    module = chunks(DATA / "infeed_outfeed.mlir")[1]
    interpreter = Interpreter(module)
    assert interpreter.run("main") == []
    assert [c.passed for c in interpreter.checks] == [True, True]
    outfeed = interpreter.grid.outfeed
    assert len(outfeed) == 2
    taken = sorted(float(entry[0]) for entry in outfeed)
    assert taken == [1.5, 2.25]  # each replica took one infeed entry
    assert [float(entry[1]) for entry in outfeed] == [3.75, 3.75]
    assert all(entry[1].dtype == np.float32 for entry in outfeed)


def test_a_printed_module_reads_back_and_passes(capsys, tmp_path):
    assert main(["print", "--chunk", "1", str(DATA / "replica_partition_ids.mlir")]) == 0
    printed = capsys.readouterr().out
    assert '"interpreter.run_parallel"' in printed and "programs = [[@tag, @scale], [@scale, @tag]]" in printed
    path = tmp_path / "printed.mlir"
    path.write_text(printed)
    status, out = check(capsys, path)
    assert status == 0, out


# -- failures are reported, not crashes ----------------------------------------------------------


def test_a_wrong_expectation_fails_naming_the_check(capsys, tmp_path):
    source = (DATA / "all_to_all.mlir").read_text()
    wrong = source.replace("check.expect_eq_const %r#1, dense<[2, 5, 8]>", "check.expect_eq_const %r#1, dense<[2, 5, 9]>")
    assert wrong != source
    path = tmp_path / "wrong.mlir"
    path.write_text(wrong)
    line = next(i for i, text in enumerate(wrong.splitlines(), 1) if "dense<[2, 5, 9]>" in text)
    status, out = check(capsys, path)
    assert status == 1
    assert f"{path}#1: FAILED" in out
    assert f"{path}:{line}:5: error: check.expect_eq failed: 1 of 3 elements don't match: at [2]: 8 (actual) vs 9 (expected)" in out
    assert out.strip().endswith("1 passed, 1 failed")
    assert "Traceback" not in out


def test_a_failing_check_inside_a_program_names_the_process(capsys, tmp_path):
    path = tmp_path / "inner.mlir"
    path.write_text("""
func.func @only_partition_zero(%x : tensor<i32>) -> tensor<i32> {
  %p = stablehlo.partition_id : tensor<ui32>
  %zero = stablehlo.constant dense<0> : tensor<ui32>
  check.expect_eq %p, %zero : tensor<ui32>
  func.return %x : tensor<i32>
}
func.func @main() {
  %x = stablehlo.constant dense<1> : tensor<i32>
  %r:3 = "interpreter.run_parallel"(%x, %x, %x) {
    programs = [[@only_partition_zero, @only_partition_zero, @only_partition_zero]]
  } : (tensor<i32>, tensor<i32>, tensor<i32>) -> (tensor<i32>, tensor<i32>, tensor<i32>)
  check.expect_eq_const %r#2, dense<1> : tensor<i32>
  func.return
}
""")
    status, out = check(capsys, path)
    assert status == 1
    failures = [line for line in out.splitlines() if "error: check." in line]
    assert failures == [
        f"{path}:5:3: error: check.expect_eq failed: value doesn't match: 1 (actual) vs 0 (expected) (on process (replica 0, partition 1))",
        f"{path}:5:3: error: check.expect_eq failed: value doesn't match: 2 (actual) vs 0 (expected) (on process (replica 0, partition 2))",
    ]


SUM = """
func.func @sum(%x : tensor<i32>) -> tensor<i32> {
  %r = "stablehlo.all_reduce"(%x) ({
    ^bb0(%a: tensor<i32>, %b: tensor<i32>):
      %s = stablehlo.add %a, %b : tensor<i32>
      stablehlo.return %s : tensor<i32>
  }) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<i32>) -> tensor<i32>
  func.return %r : tensor<i32>
}
func.func @skip(%x : tensor<i32>) -> tensor<i32> {
  func.return %x : tensor<i32>
}
func.func @gather(%x : tensor<1xi32>) -> tensor<2xi32> {
  %r = "stablehlo.all_gather"(%x) {all_gather_dim = 0 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}
      : (tensor<1xi32>) -> tensor<2xi32>
  func.return %r : tensor<2xi32>
}
"""


def test_a_deadlock_inside_run_parallel_is_a_clear_error(capsys, tmp_path):
    path = tmp_path / "deadlock.mlir"
    path.write_text(SUM + """
func.func @main() {
  %x = stablehlo.constant dense<1> : tensor<i32>
  %r:2 = "interpreter.run_parallel"(%x, %x) {programs = [[@sum], [@skip]]} : (tensor<i32>, tensor<i32>) -> (tensor<i32>, tensor<i32>)
  check.expect_eq_const %r#0, dense<2> : tensor<i32>
  func.return
}
""")
    status, out = check(capsys, path)
    assert status == 1
    assert f"{path}:3:3: error: the grid run can never go on: 1 of 2 process(es) wait for partners that will not come" in out
    assert f"note: device 0 (replica 0, partition 0): waits at %r = stablehlo.all_reduce ({path}:3:3) for devices 0, 1" in out
    assert "note: device 1 (replica 1, partition 0): finished" in out
    assert f"note: in the 2x1 grid of interpreter.run_parallel at {path}:21:3" in out
    assert "Traceback" not in out and out.strip().endswith("0 passed, 1 failed")


def test_processes_meeting_at_different_collectives_is_a_clear_error(capsys, tmp_path):
    path = tmp_path / "mismatch.mlir"
    path.write_text(SUM + """
func.func @main() {
  %x = stablehlo.constant dense<1> : tensor<i32>
  %y = stablehlo.constant dense<[2]> : tensor<1xi32>
  %r:2 = "interpreter.run_parallel"(%x, %y) {programs = [[@sum], [@gather]]} : (tensor<i32>, tensor<1xi32>) -> (tensor<i32>, tensor<2xi32>)
  func.return
}
""")
    status, out = check(capsys, path)
    assert status == 1
    assert "error: devices 0 and 1 meet at different collectives" in out
    assert "stablehlo.all_reduce" in out and "stablehlo.all_gather" in out
    assert f"note: in the 2x1 grid of interpreter.run_parallel at {path}:22:3" in out


def test_a_recv_nobody_sends_to_is_a_deadlock(capsys, tmp_path):
    path = tmp_path / "recv.mlir"
    path.write_text("""
func.func @wait(%t : !stablehlo.token) -> tensor<i32> {
  %v, %t2 = "stablehlo.recv"(%t) {channel_handle = #stablehlo.channel_handle<handle = 9, type = 1>}
      : (!stablehlo.token) -> (tensor<i32>, !stablehlo.token)
  func.return %v : tensor<i32>
}
func.func @main() {
  %t = stablehlo.after_all : !stablehlo.token
  %r = "interpreter.run_parallel"(%t) {programs = [[@wait]]} : (!stablehlo.token) -> tensor<i32>
  func.return
}
""")
    status, out = check(capsys, path)
    assert status == 1
    assert "the grid run can never go on" in out
    assert f"waits at %v, %t2 = stablehlo.recv ({path}:3:3) for a send on channel 9" in out


def _main_with(op_text: str, functions: str = "") -> str:
    return functions + "\nfunc.func @main() {\n  %x = stablehlo.constant dense<1> : tensor<i32>\n  " + op_text + "\n  func.return\n}\n"


F = "func.func @f(%a : tensor<i32>) -> tensor<i32> {\n  func.return %a : tensor<i32>\n}\n"
QUEUE2 = ("func.func @q() -> (tensor<i32>, tensor<i32>) {\n  %v = stablehlo.constant dense<1> : tensor<i32>\n"
          "  func.return %v, %v : tensor<i32>, tensor<i32>\n}\n")
READ = ("func.func @read(%t : !stablehlo.token) -> tensor<i32> {\n"
        "  %v, %t2 = \"stablehlo.infeed\"(%t) : (!stablehlo.token) -> (tensor<i32>, !stablehlo.token)\n"
        "  func.return %v : tensor<i32>\n}\n")

BAD_OPS = {
    "too_few_inputs": (
        _main_with('%r:2 = "interpreter.run_parallel"(%x) {programs = [[@f, @f]]} : (tensor<i32>) -> (tensor<i32>, tensor<i32>)', F),
        "interpreter.run_parallel: 1 input(s) given, but the programs take 2 in all",
        "note: inputs are flattened in process order: @f on (replica 0, partition 0) takes 1, @f on (replica 0, partition 1) takes 1"),
    "too_many_results": (
        _main_with('%r:2 = "interpreter.run_parallel"(%x) {programs = [[@f]]} : (tensor<i32>) -> (tensor<i32>, tensor<i32>)', F),
        "interpreter.run_parallel: 2 result(s) declared, but the programs return 1 in all",
        "note: results are flattened in process order: @f on (replica 0, partition 0) returns 1"),
    "unknown_function": (
        _main_with('%r = "interpreter.run_parallel"(%x) {programs = [[@g]]} : (tensor<i32>) -> tensor<i32>', F),
        "interpreter.run_parallel: programs[0][0] names function @g, which is not in the module (functions: @f, @main)", ""),
    "ragged_programs": (
        _main_with('%r:3 = "interpreter.run_parallel"(%x, %x, %x) {programs = [[@f, @f], [@f]]} '
                   ': (tensor<i32>, tensor<i32>, tensor<i32>) -> (tensor<i32>, tensor<i32>, tensor<i32>)', F),
        "interpreter.run_parallel: every row of `programs` must have 2 partition(s) like row 0, but row 1 has 1", ""),
    "input_type": (
        _main_with('%r = "interpreter.run_parallel"(%x) {programs = [[@g]]} : (tensor<i32>) -> tensor<f32>',
                   "func.func @g(%a : tensor<f32>) -> tensor<f32> {\n  func.return %a : tensor<f32>\n}\n"),
        "interpreter.run_parallel: input #0 has type tensor<i32>, but it is argument #0 of @g on (replica 0, partition 0), "
        "which takes tensor<f32>", ""),
    "result_type": (
        _main_with('%r = "interpreter.run_parallel"(%x) {programs = [[@f]]} : (tensor<i32>) -> tensor<f32>', F),
        "interpreter.run_parallel: result #0 is declared tensor<f32>, but it is result #0 of @f on (replica 0, partition 0), "
        "which returns tensor<i32>", ""),
    "empty_infeed": (
        _main_with('%r = "interpreter.run_parallel"(%x) {infeed = [], programs = [[@f]]} : (tensor<i32>) -> tensor<i32>', F),
        "interpreter.run_parallel: `infeed` is optional but cannot be empty", ""),
    "infeed_returns_two": (
        _main_with('%r = "interpreter.run_parallel"(%x) {infeed = [@q], programs = [[@f]]} : (tensor<i32>) -> tensor<i32>', F + QUEUE2),
        "interpreter.run_parallel: infeed function @q must return one tensor, but returns tensor<i32>, tensor<i32>", ""),
    "infeed_runs_dry": (
        _main_with('%t = stablehlo.after_all : !stablehlo.token\n  '
                   '%r = "interpreter.run_parallel"(%t) {programs = [[@read]]} : (!stablehlo.token) -> tensor<i32>', READ),
        "stablehlo.infeed: infeed queue is empty",
        "`infeed = [@f, ...]` attribute fills: 0 value(s)"),
    "no_programs": (
        _main_with('%r = "interpreter.run_parallel"(%x) : (tensor<i32>) -> tensor<i32>', F),
        "interpreter.run_parallel: missing required attribute 'programs'", ""),
}


@pytest.mark.parametrize("name", sorted(BAD_OPS))
def test_a_malformed_run_parallel_is_a_located_error(capsys, tmp_path, name):
    source, message, note = BAD_OPS[name]
    path = tmp_path / f"{name}.mlir"
    path.write_text(source)
    status, out = check(capsys, path)
    assert status == 1
    assert "Traceback" not in out
    error_line = next(line for line in out.splitlines() if ": error: " in line)
    assert error_line.startswith(f"{path}:") and message in error_line, out
    if "interpreter.run_parallel:" in message:  # the op itself is at fault: the error points at it
        line = next(i for i, text in enumerate(source.splitlines(), 1) if "interpreter.run_parallel" in text)
        assert error_line.startswith(f"{path}:{line}:3: error: ")
    assert note in out
