"""GridSession: recorded grid runs, lock-step moves, per-device breakpoints, collective views."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import hlodbg
from hlodbg.engine.run.grid import GridError
from hlodbg.engine.run.spmd import run_grid
from hlodbg.engine.debug.grid_session import GridSession
from hlodbg.engine.machine.process import ProcessId

DATA = Path(__file__).parent / "data"
RING = DATA / "grid_ring.mlir"
X = np.array([1.0, 2.0], np.float32)

SKIPPED_COLLECTIVE = """
module attributes {mhlo.num_replicas = 2 : i32, mhlo.num_partitions = 1 : i32} {
func.func @main(%x: tensor<f32>) -> tensor<f32> {
  %r = stablehlo.replica_id : tensor<ui32>
  %z = stablehlo.constant dense<0> : tensor<ui32>
  %c = stablehlo.compare EQ, %r, %z : (tensor<ui32>, tensor<ui32>) -> tensor<i1>
  %o = "stablehlo.if"(%c) ({
    %a = "stablehlo.all_reduce"(%x) ({
      ^bb0(%p: tensor<f32>, %q: tensor<f32>):
        %t = stablehlo.add %p, %q : tensor<f32>
        stablehlo.return %t : tensor<f32>
    }) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<f32>) -> tensor<f32>
    stablehlo.return %a : tensor<f32>
  }, {
    stablehlo.return %x : tensor<f32>
  }) : (tensor<i1>) -> tensor<f32>
  return %o : tensor<f32>
}
}
"""


@pytest.fixture
def grid():
    session = GridSession(hlodbg.load(RING).module, [X], memory=1 << 28)
    yield session
    session.close()


def test_recorded_results_equal_a_plain_grid_run(grid):
    plain = run_grid(hlodbg.load(RING).module, [X])
    for process, session in grid.sessions.items():
        assert session.position == 0
        for ours, theirs in zip(session.results, plain[process]):
            np.testing.assert_array_equal(ours, theirs)


def test_lockstep_moves_every_device_to_the_same_op(grid):
    while grid.session.op.name != "stablehlo.collective_permute":
        grid.move("step")
    assert {s.op.name for s in grid.sessions.values()} == {"stablehlo.collective_permute"}
    grid.lockstep = False
    grid.move("step")
    others = {p: s.op.name for p, s in grid.sessions.items() if p != grid.focus}
    assert set(others.values()) == {"stablehlo.collective_permute"} and grid.session.op.name == "stablehlo.all_gather"
    grid.lockstep = True
    grid.move("back")
    assert {s.op.name for s in grid.sessions.values()} == {"stablehlo.collective_permute"}


def test_values_of_a_collective_per_device(grid):
    while grid.session.op.name != "stablehlo.collective_permute":
        grid.move("step")
    views = grid.values_of(grid.session.op)
    for view in views:
        assert view.sends_to == (view.device + 1) % 4 and view.receives_from == (view.device - 1) % 4
        np.testing.assert_array_equal(view.inputs[0], X + view.device)
        np.testing.assert_array_equal(view.outputs[0], X + (view.device - 1) % 4)
    all_reduce = grid.session.trace.ops[grid.session.position - 1]
    assert all_reduce.name == "stablehlo.all_reduce"
    assert [v.group for v in grid.values_of(all_reduce)] == [(0, 1), (0, 1), (2, 3), (2, 3)]


def test_per_device_and_global_breakpoints(grid):
    grid.break_at("%all", device=ProcessId(2, 0))
    stop = grid.continue_()
    assert stop.reason == "breakpoint" and grid.focus == ProcessId(2, 0)
    assert all(s.op.name == "stablehlo.all_gather" for s in grid.sessions.values())
    stop = grid.continue_()
    assert stop.reason == "end"
    grid.move("restart")
    grid.set_focus(ProcessId(0, 0))
    grid.break_at("%ring")
    stop = grid.continue_()
    assert stop.reason == "breakpoint" and grid.focus == ProcessId(0, 0) and grid.session.op.name == "stablehlo.collective_permute"


def test_a_deadlocked_run_is_reported_and_stays_steppable():
    grid = GridSession(hlodbg.load(SKIPPED_COLLECTIVE).module, [np.float32(1)], memory=1 << 26)
    assert isinstance(grid.error, GridError)
    assert "waits at %a = stablehlo.all_reduce" in grid.error.render() and "device 1 (replica 1, partition 0): finished" in grid.error.render()
    grid.continue_()
    assert grid.session.op.name == "stablehlo.all_reduce"  # device 0 stops where it waits
    assert grid.sessions[ProcessId(1, 0)].position == 0  # no all_reduce on device 1 to line up with
    grid.set_focus(ProcessId(1, 0))
    grid.continue_()
    assert grid.session.finished and float(grid.session.results[0]) == 1.0
    grid.close()


def test_focus_off_the_grid_is_a_clear_error():
    with pytest.raises(GridError, match="not on the 4x1 grid"):
        GridSession(hlodbg.load(RING).module, [X], focus=ProcessId(0, 3))
