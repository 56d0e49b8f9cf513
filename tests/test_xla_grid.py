"""The XLA backend on a grid of real devices (8 host CPU devices, tests/conftest.py): process
(r, p) runs on device r * P + p, a group meeting at a collective runs it as ONE XLA execution
over its devices (engine/machine/xla/collectives.py), and sharded programs give XLA's results.

Expected values come from the emulated grid's own tables (tests/test_grid_collectives.py: numpy
over groups written out literally) and from JAX (the shared corpus, tests/test_spmd.py's
programs), compared with the contract's tolerances (tests/hlo_oracle.py `difference`).
"""
from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("jax")

import hlodbg
from hlodbg.cli import main
from hlodbg.engine.debug.grid_session import GridSession
from hlodbg.engine.ir.errors import ExecutionError
from hlodbg.engine.ir.opdefs import OPS
from hlodbg.engine.machine.process import ProcessId
from hlodbg.engine.machine.targets import backend_for
from hlodbg.engine.machine.xla.collectives import group_collectives, group_module_text
from hlodbg.engine.machine.xla.runtime import XlaUnavailable
from hlodbg.engine.ops.registry import EVALUATORS
from hlodbg.engine.run.checking import check_files
from hlodbg.engine.run.grid import ScheduledGrid
from hlodbg.engine.run.spmd import run_global, run_grid

from .helpers import PROGRAMS
from .hlo_oracle import difference
from .test_grid_collectives import CASES, CHANNEL, GLOBAL_IDS, dense, distinct_values, grid_run, program, reducing, with_inputs
from .test_rooted_collectives import broadcast, per_process, reduce_program
from .test_spmd import jax_programs  # noqa: F401 - the fixture making JAX's sharded programs

XLA = "xla:cpu"


@pytest.fixture(scope="module")
def backend():
    return backend_for(XLA)


def executions(backend) -> int:
    return group_collectives(backend.runtime).executions


def assert_close(got, want, what: str) -> None:
    problem = difference(np.asarray(got), np.asarray(want))
    assert problem is None, f"{what}: {problem}"


def device_of(value) -> int:
    (device,) = value.devices()
    return device.id


# -- every collective kind and group strategy ------------------------------------------------------


@pytest.mark.parametrize("text,grid,inputs,expected", CASES)
def test_collectives_give_the_emulated_grid_results(backend, text, grid, inputs, expected):
    results = grid_run(text, inputs, *grid, backend=backend)
    for process, want in expected.items():
        for i, (got, w) in enumerate(zip(results[process], want)):
            assert np.asarray(got).dtype == np.asarray(w).dtype, process
            assert_close(got, w, f"result {i} of process {process}")


V42 = distinct_values(4, 2, (2, 3))
I23 = ["tensor<2x3xi64>"]
# (program, its grid, how many groups meet at its one collective)
ONE_EXECUTION_PER_GROUP = {
    "all_reduce_cross_replica": (program(reducing("all_reduce", "add", "i64", f"replica_groups = {dense([[0, 1], [2, 3]])}"), I23, I23), (4, 2), 4),
    "all_gather_flattened_ids": (program(f'"stablehlo.all_gather"(OPERANDS) {{all_gather_dim = 1 : i64, replica_groups = '
                                         f'{dense([[0, 1, 2, 3], [4, 5, 6, 7]])}, {GLOBAL_IDS}}}', I23, ["tensor<2x12xi64>"]), (4, 2), 2),
    "reduce_scatter_flattened_ids_strided": (program(reducing("reduce_scatter", "add", "i64", "scatter_dimension = 1 : i64, replica_groups = "
                                                              f"{dense([[0, 2, 4, 6], [1, 3, 5, 7]])}, {GLOBAL_IDS}"),
                                                     ["tensor<2x4xi64>"], ["tensor<2x1xi64>"]), (4, 2), 2),
    "collective_permute_cross_replica": (program(f'"stablehlo.collective_permute"(OPERANDS) {{source_target_pairs = '
                                                 f'{dense([[0, 1], [1, 2], [2, 3], [3, 0]])}}}', I23, I23), (4, 2), 2),
    "all_to_all_cross_partition_2x4": (program(f'"stablehlo.all_to_all"(OPERANDS) {{split_dimension = 1 : i64, concat_dimension = 0 : i64, '
                                               f'split_count = 4 : i64, replica_groups = {dense([[3, 2, 1, 0]])}, {CHANNEL}}}',
                                               ["tensor<2x4xi64>"], ["tensor<8x1xi64>"]), (2, 4), 2),
    "all_reduce_cross_replica_and_partition_2x4": (program(reducing("all_reduce", "add", "i64", f"replica_groups = {dense([[0], [1]])}, {CHANNEL}"),
                                                           I23, I23), (2, 4), 2),
}


@pytest.mark.parametrize("name", sorted(ONE_EXECUTION_PER_GROUP))
def test_each_group_runs_its_collective_as_one_xla_execution(backend, name):
    text, (replicas, partitions), groups = ONE_EXECUTION_PER_GROUP[name]
    shape = (2, 4) if "%x0: tensor<2x4xi64>" in text else (2, 3)
    inputs = with_inputs(distinct_values(replicas, partitions, shape))
    before = executions(backend)
    numpy_results = grid_run(text, inputs, replicas, partitions)
    xla_results = grid_run(text, inputs, replicas, partitions, backend=backend)
    assert executions(backend) - before == groups
    for (r, p), values in xla_results.items():
        for got, want in zip(values, numpy_results[(r, p)]):
            assert device_of(got) == r * partitions + p  # each member's result stays on its own device
            np.testing.assert_array_equal(np.asarray(got), want)


def test_a_group_local_module_has_one_group_of_local_replicas():
    text = ONE_EXECUTION_PER_GROUP["all_gather_flattened_ids"][0]
    (op,) = [op for op in hlodbg.load(text).module.walk() if op.name == "stablehlo.all_gather"]
    local = group_module_text(op, 4)
    assert "mhlo.num_replicas = 4 : i32" in local and "mhlo.num_partitions = 1 : i32" in local
    assert "replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>" in local
    assert "channel_handle" not in local and "use_global_device_ids" not in local


def test_a_collective_xla_cannot_run_here_is_computed_from_the_contributions_and_says_so(backend):
    # XLA:CPU has no collective-broadcast: the evaluator computes it from the exchanged values.
    module = hlodbg.load(program(f'"stablehlo.collective_broadcast"(OPERANDS) {{replica_groups = {dense([[1, 0]])}}}',
                                 I23, I23)).module
    (op,) = [op for op in module.walk() if op.name == "stablehlo.collective_broadcast"]
    assert backend.numerics_notes(op) == []  # not run yet
    before = executions(backend)
    args = {ProcessId(r, p): [value] for (r, p), value in V42.items()}
    results = run_grid(module, args, num_replicas=4, num_partitions=2, backend=backend)
    assert executions(backend) == before
    for process, (got,) in results.items():
        r, p = process.replica_id, process.partition_id
        np.testing.assert_array_equal(got, V42[(1, p)] if r < 2 else np.zeros((2, 3), np.int64))
    (note,) = backend.numerics_notes(op)
    assert "collective_broadcast runs in hlodbg's interpreter" in note and "not as an XLA collective" in note


ROOTED = {  # collectives XLA has no op for (collective_reduce) or no root operand (dynamic roots)
    "collective_reduce_flattened_ids": (reduce_program(f"replica_groups = {dense([[3, 0], [1, 2]])}, {GLOBAL_IDS}"), (2, 2),
                                        {(r, p): [np.array([2 * r + p, 1], np.int64)] for r in range(2) for p in range(2)}),
    "broadcast_dynamic_root": (broadcast(2, f"replica_groups = {dense([[0, 1], [3, 2]])}", dynamic_root=True), (4, 1),
                               per_process(4, 2, root=[1, 0])),
}


@pytest.mark.parametrize("name", sorted(ROOTED))
def test_rooted_collectives_give_the_emulated_grid_results(backend, name):
    text, grid, inputs = ROOTED[name]
    emulated = grid_run(text, inputs, *grid)
    for process, values in grid_run(text, inputs, *grid, backend=backend).items():
        for got, want in zip(values, emulated[process]):
            np.testing.assert_array_equal(np.asarray(got), want, err_msg=f"{name} on {process}")


def test_a_collective_xla_refuses_for_a_wrong_group_size_gets_the_evaluator_error(backend):
    # split_count 4 over groups of 2 (all_to_all C8; the verifier is skipped so the run meets it).
    text = program(f'"stablehlo.all_to_all"(OPERANDS) {{split_dimension = 0 : i64, concat_dimension = 0 : i64, '
                   f'split_count = 4 : i64, replica_groups = {dense([[0, 1]])}}}', ["tensor<4xf32>"], ["tensor<4xf32>"])
    with pytest.raises(ExecutionError, match=r"split_count is 4 but the process group has 2") as caught:
        grid_run(text, {(r, 0): [np.float32([1, 2, 3, 4])] for r in range(2)}, 2, 1, verify=False, backend=backend)
    assert "on device 0 (replica 0, partition 0) of a 2x1 grid" in str(caught.value)


def test_every_collective_evaluator_asks_the_machine_first():
    collective = [name for name, opdef in OPS.items() if opdef.is_collective and name in EVALUATORS]
    assert "stablehlo.all_reduce" in collective
    assert [name for name in collective if not getattr(EVALUATORS[name], "real_collective", False)] == []


RUN_PARALLEL = Path(__file__).parent / "data" / "run_parallel"


@pytest.mark.parametrize("name", ["all_gather", "all_reduce", "all_to_all", "collective_permute", "reduce_scatter"])
def test_run_parallel_processes_meet_on_their_devices(backend, name):
    # interpreter.run_parallel grids (the reference interpreter's self-checking form) on xla:cpu.
    before = executions(backend)
    passed, failed = check_files([str(RUN_PARALLEL / f"{name}.mlir")], out=io.StringIO(), backend=backend)
    assert (passed, failed) != (0, 0) and failed == 0
    assert executions(backend) > before


# -- devices -----------------------------------------------------------------------------------------


def test_process_r_p_runs_on_device_r_times_p_plus_p(backend):
    grid = ScheduledGrid(2, 4)
    bound = {process: backend.for_device(process, grid) for process in grid.processes()}
    assert {process: b.device.id for process, b in bound.items()} == {
        ProcessId(r, p): r * 4 + p for r in range(2) for p in range(4)}
    assert backend.for_device(ProcessId(0, 0)) is backend  # outside a grid run: device 0


def test_a_grid_larger_than_the_devices_is_a_clear_error(backend):
    text = program(reducing("all_reduce", "add", "i64", f"replica_groups = {dense([list(range(16))])}"), I23, I23)
    with pytest.raises(XlaUnavailable) as info:
        run_grid(hlodbg.load(text).module, [np.zeros((2, 3), np.int64)], num_replicas=16, backend=backend)
    message = str(info.value)
    assert "the run needs 16 cpu device(s) but there are 8" in message
    assert "XLA_FLAGS=--xla_force_host_platform_device_count=16" in message


# -- sharded programs --------------------------------------------------------------------------------


def _sharded_mlp():
    if not (PROGRAMS / "sharded_mlp_4x2.mlir").exists():
        pytest.skip("../shared/programs is not present")
    program_ = hlodbg.load(PROGRAMS / "sharded_mlp_4x2.mlir")
    inputs = np.load(PROGRAMS / "sharded_mlp_4x2.inputs.npz")
    expected = np.load(PROGRAMS / "sharded_mlp_4x2.expected.npz")["result0"]
    return program_, [inputs["arg0"], inputs["arg1"]], expected


def test_sharded_mlp_gives_xla_result_with_one_execution_per_group(backend):
    program_, args, expected = _sharded_mlp()
    before = executions(backend)
    (result,) = run_global(program_.module, args, backend=backend)
    # all_reduce over 4 pairs, all_gather over 2 groups of 4, collective_permute over all 8.
    assert executions(backend) - before == 4 + 2 + 1
    assert_close(result, expected, "sharded_mlp_4x2 on xla:cpu")
    (emulated,) = run_global(program_.module, args)
    assert_close(emulated, result, "the emulated grid against xla:cpu")


def test_hlodbg_run_gives_xla_result_for_the_sharded_mlp(tmp_path, capsys):
    _sharded_mlp()
    saved = tmp_path / "out.npz"
    assert main(["run", str(PROGRAMS / "sharded_mlp_4x2.mlir"), "--target", XLA, "--args",
                 str(PROGRAMS / "sharded_mlp_4x2.inputs.npz"), "--out", str(saved)]) == 0
    assert_close(np.load(saved)["result0"], np.load(PROGRAMS / "sharded_mlp_4x2.expected.npz")["result0"], "hlodbg run")


def test_hlodbg_run_with_too_few_devices_says_how_to_get_them(tmp_path):
    _sharded_mlp()
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=4", JAX_PLATFORMS="cpu")
    done = subprocess.run([sys.executable, "-m", "hlodbg", "run", str(PROGRAMS / "sharded_mlp_4x2.mlir"), "--target", XLA,
                           "--args", str(PROGRAMS / "sharded_mlp_4x2.inputs.npz")],
                          env=env, capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 2
    assert ("the run needs 8 cpu device(s) but there are 4; on the CPU start with "
            "XLA_FLAGS=--xla_force_host_platform_device_count=8") in done.stderr
    assert "Traceback" not in done.stderr


SPMD_PROGRAMS = ["psum_y", "psum_all_int", "all_gather_tiled", "all_to_all", "psum_scatter", "ppermute_partial", "nested",
                 "global_around", "gspmd_psum_y", "gspmd_partial_manual", "gspmd_all_to_all"]


@pytest.mark.parametrize("name", SPMD_PROGRAMS)
def test_jax_sharded_programs_give_jax_results(backend, jax_programs, name):  # noqa: F811 - the fixture
    program_ = hlodbg.load(jax_programs / f"{name}.mlir")
    inputs = np.load(jax_programs / f"{name}.inputs.npz")
    expected = np.load(jax_programs / f"{name}.expected.npz")
    results = run_global(program_.module, [inputs[f"arr_{i}"] for i in range(len(inputs.files))], backend=backend)
    assert len(results) == len(expected.files)
    for i, result in enumerate(results):
        assert_close(result, expected[f"arr_{i}"], f"{name} result {i}")


def _first_run(session: GridSession, name: str):
    """Every device's run of the program's one `name` op, seen from the end of the recording."""
    (op,) = [op for op in session.module.walk() if op.name == name]
    assert session.continue_().reason == "end"
    return session.values_of(op)


def test_a_tile_is_cut_on_the_device_holding_the_value(backend, jax_programs):  # noqa: F811 - the fixture
    # global_around: sin(a) @ b is computed on every device, then a manual computation cuts its tile.
    program_ = hlodbg.load(jax_programs / "global_around.mlir")
    inputs = np.load(jax_programs / "global_around.inputs.npz")
    session = GridSession(program_.module, [inputs["arr_0"], inputs["arr_1"]], backend=backend, memory=1 << 28)
    try:
        assert session.error is None
        views = _first_run(session, "stablehlo.all_reduce")  # the first op of the body, on the tile
        assert [device_of(v.inputs[0]) for v in views] == list(range(8))
    finally:
        session.close()


SHARDING_CONSTRAINT = """
module attributes {mhlo.num_partitions = 2 : i32} {
  sdy.mesh @mesh = <["x"=2]>
  func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
    %0 = stablehlo.sine %a : tensor<4xf32>
    %1 = sdy.sharding_constraint %0 <@mesh, [{"x"}]> : tensor<4xf32>
    %2 = stablehlo.cosine %1 : tensor<4xf32>
    return %2 : tensor<4xf32>
  }
}
"""


def test_a_sharding_constraint_leaves_the_value_on_its_device(backend):
    session = GridSession(hlodbg.load(SHARDING_CONSTRAINT).module, [np.float32([0, 1, 2, 3])], backend=backend,
                          memory=1 << 26)
    try:
        views = _first_run(session, "sdy.sharding_constraint")
        assert [device_of(v.outputs[0]) for v in views] == [0, 1]
        assert_close(session.session.results[0], np.cos(np.sin(np.float32([0, 1, 2, 3]))), "the result")
    finally:
        session.close()


UNEVEN_GSPMD = """
module attributes {mhlo.num_partitions = 2 : i32} {
  func.func @main(%a: tensor<5x2xf32>) -> tensor<3x2xf32> {
    %n = stablehlo.negate %a : tensor<5x2xf32>
    %0 = stablehlo.custom_call @Sharding(%n) {mhlo.sharding = "{devices=[2,1]<=[2]}"} : (tensor<5x2xf32>) -> tensor<5x2xf32>
    %1 = stablehlo.custom_call @SPMDFullToShardShape(%0) {mhlo.sharding = "{manual}"} : (tensor<5x2xf32>) -> tensor<3x2xf32>
    %s = "stablehlo.all_reduce"(%1) <{replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>, channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, use_global_device_ids}> ({
      ^bb0(%x: tensor<f32>, %y: tensor<f32>):
        %z = stablehlo.add %x, %y : tensor<f32>
        stablehlo.return %z : tensor<f32>
    }) : (tensor<3x2xf32>) -> tensor<3x2xf32>
    %3 = stablehlo.custom_call @Sharding(%s) {mhlo.sharding = "{manual}"} : (tensor<3x2xf32>) -> tensor<3x2xf32>
    %4 = stablehlo.custom_call @SPMDShardToFullShape(%3) {mhlo.sharding = "{replicated}"} : (tensor<3x2xf32>) -> tensor<3x2xf32>
    return %4 : tensor<3x2xf32>
  }
}
"""


def test_gspmd_uneven_tiles_of_a_device_value_are_padded_and_summed(backend):
    # 5 rows over 2 devices: tiles of 3 rows, the second holds rows 3..4 and a row of zeros.
    a = np.arange(10, dtype=np.float32).reshape(5, 2)
    before = executions(backend)
    (summed,) = run_global(hlodbg.load(UNEVEN_GSPMD).module, [a], backend=backend)
    assert executions(backend) - before == 1
    np.testing.assert_array_equal(np.asarray(summed), -(a[:3] + np.vstack([a[3:], np.zeros((1, 2), np.float32)])))


# -- the grid debugger ---------------------------------------------------------------------------------


def test_the_grid_debugger_steps_a_sharded_program_on_xla(backend):
    program_, args, expected = _sharded_mlp()
    session = GridSession(program_.module, args, backend=backend, memory=1 << 28)
    try:
        assert session.error is None
        session.move("step_in")  # into the manual computation
        while session.session.op.name != "stablehlo.all_gather":
            session.move("step")
        assert {s.op.name for s in session.sessions.values()} == {"stablehlo.all_gather"}
        all_reduce = [op for op in program_.module.walk() if op.name == "stablehlo.all_reduce"][0]
        views = session.values_of(all_reduce)
        assert [v.group for v in views] == [(0, 1), (0, 1), (2, 3), (2, 3), (4, 5), (4, 5), (6, 7), (6, 7)]
        assert [device_of(v.outputs[0]) for v in views] == list(range(8))  # recorded where it was computed
        for first, second in zip(views[::2], views[1::2]):  # both members of a pair hold the pair's sum
            total = np.asarray(first.inputs[0]) + np.asarray(second.inputs[0])
            assert_close(first.outputs[0], total, f"device {first.device}")
            assert_close(second.outputs[0], total, f"device {second.device}")
        session.continue_()
        (result,) = session.session.results
        assert_close(result, expected, "the debugger's result")
    finally:
        session.close()
