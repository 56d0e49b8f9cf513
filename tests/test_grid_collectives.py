"""Collectives on the emulated grid (engine/grid.py): the spec's examples, its four process-group
strategies, channels, feeds, errors, JAX's own collectives and a 64-device run.

Expected values are computed here with plain numpy from process groups written out literally
(copied from the spec's "Collective ops" section or worked out by hand), never with hlodbg's own
group functions, so a wrong strategy in the engine cannot agree with itself.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
from collections import deque
from importlib.util import find_spec
from pathlib import Path

import numpy as np
import pytest

from hlodbg.engine import ExecutionError
from hlodbg.engine.ir.errors import HlodbgError
from hlodbg.engine.run.grid import GridError, GridScheduler, ScheduledGrid
from hlodbg.engine.run.spmd import run_grid
from hlodbg.engine.run.interpreter import Interpreter
from hlodbg.engine.machine.process import ProcessId
from hlodbg.program import load

DATA = Path(__file__).parent / "data" / "grid"
CHANNEL = "channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>"
GLOBAL_IDS = f"{CHANNEL}, use_global_device_ids"


def run_within(seconds: float, function, *args, **kwargs):
    """Call `function` on a daemon thread so a scheduler that hangs fails the test, not the suite."""
    outcome: dict = {}

    def target():
        try:
            outcome["value"] = function(*args, **kwargs)
        except BaseException as error:  # handed to the test thread below
            outcome["error"] = error

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        pytest.fail(f"the grid run neither finished nor failed within {seconds} s: it hangs")
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def grid_run(text: str, inputs: dict, replicas: int, partitions: int, verify: bool = True, **kwargs) -> dict:
    """Run `text` with {(replica, partition): [args]} and return {(replica, partition): [results]}."""
    module = load(text, check=verify).module
    args = {ProcessId(r, p): list(values) for (r, p), values in inputs.items()}
    results = run_within(30, run_grid, module, args, num_replicas=replicas, num_partitions=partitions, **kwargs)
    return {(pid.replica_id, pid.partition_id): values for pid, values in results.items()}


def processes(replicas: int, partitions: int) -> list[tuple[int, int]]:
    return [(r, p) for r in range(replicas) for p in range(partitions)]


def distinct_values(replicas: int, partitions: int, shape: tuple, dtype=np.int64) -> dict:
    """One input per process, different on every process: arange + 100 * replica + 10 * partition."""
    base = np.arange(int(np.prod(shape))).reshape(shape)
    return {(r, p): (base + 100 * r + 10 * p).astype(dtype) for r, p in processes(replicas, partitions)}


def dense(rows: list[list[int]]) -> str:
    return f"dense<{rows}> : tensor<{len(rows)}x{len(rows[0])}xi64>"


def program(op: str, in_types: list[str], out_types: list[str]) -> str:
    """`func @main` applying one op (written from its operand list on) to its arguments."""
    params = ", ".join(f"%x{i}: {t}" for i, t in enumerate(in_types))
    operands = ", ".join(f"%x{i}" for i in range(len(in_types)))
    results = ", ".join(f"%r#{i}" for i in range(len(out_types))) if len(out_types) > 1 else "%r"
    count = f":{len(out_types)}" if len(out_types) > 1 else ""
    outs = ", ".join(out_types)
    return (f"func.func @main({params}) -> ({outs}) {{\n"
            f"  %r{count} = {op.replace('OPERANDS', operands)} : ({', '.join(in_types)}) -> ({outs})\n"
            f"  return {results} : {outs}\n}}\n")


def reducing(name: str, body_op: str, element: str, attrs: str) -> str:
    return (f'"stablehlo.{name}"(OPERANDS) ({{\n  ^bb0(%a: tensor<{element}>, %b: tensor<{element}>):\n'
            f"    %c = stablehlo.{body_op} %a, %b : tensor<{element}>\n    stablehlo.return %c : tensor<{element}>\n"
            f"  }}) {{{attrs}}}")


# -- numpy references over literal groups of (replica, partition) ----------------------------------


def ref_all_gather(groups, values, axis):
    return {m: [np.concatenate([values[s] for s in g], axis=axis)] for g in groups for m in g}


def ref_all_reduce(groups, values, ufunc):
    return {m: [ufunc.reduce(np.stack([values[s] for s in g]), axis=0)] for g in groups for m in g}


def ref_reduce_scatter(groups, values, ufunc, axis):
    out = {}
    for g in groups:
        parts = np.split(ufunc.reduce(np.stack([values[s] for s in g]), axis=0), len(g), axis=axis)
        out.update({m: [parts[g.index(m)]] for m in g})
    return out


def ref_all_to_all(groups, values, split_axis, concat_axis):
    return {m: [np.concatenate([np.split(values[s], len(g), axis=split_axis)[g.index(m)] for s in g], axis=concat_axis)]
            for g in groups for m in g}


def ref_from_sources(sources: dict, values, every):
    """Each process receives the value of its source, or zeros if it has none."""
    zero = np.zeros_like(next(iter(values.values())))
    return {m: [values[sources[m]] if m in sources else zero] for m in every}


def with_inputs(values: dict) -> dict:
    return {process: [value] for process, value in values.items()}


# -- the table -------------------------------------------------------------------------------------

CASES = []
SIZED_AT_RUN_TIME = {}  # name -> program text: groups that span the partitions (cross_replica_and_partition)


def case(name, text, grid, inputs, expected, sized_at_run_time=False):
    CASES.append(pytest.param(text, grid, inputs, expected, id=name))
    if sized_at_run_time:
        SIZED_AT_RUN_TIME[name] = text


# The spec's own examples (num_replicas: 2, num_partitions: 1 unless said).
F2x2 = "tensor<2x2xf32>"
case("spec_all_gather", program(f'"stablehlo.all_gather"(OPERANDS) {{all_gather_dim = 1 : i64, replica_groups = {dense([[0, 1]])}, '
                                'channel_handle = #stablehlo.channel_handle<handle = 0, type = 0>}', [F2x2], ["tensor<2x4xf32>"]),
     (2, 1), {(0, 0): [np.float32([[1, 2], [3, 4]])], (1, 0): [np.float32([[5, 6], [7, 8]])]},
     {(0, 0): [np.float32([[1, 2, 5, 6], [3, 4, 7, 8]])], (1, 0): [np.float32([[1, 2, 5, 6], [3, 4, 7, 8]])]})
case("spec_all_reduce", program(reducing("all_reduce", "add", "f32", f"replica_groups = {dense([[0, 1]])}"), ["tensor<4xf32>"], ["tensor<4xf32>"]),
     (2, 1), {(0, 0): [np.float32([1, 2, 3, 4])], (1, 0): [np.float32([5, 6, 7, 8])]},
     {(0, 0): [np.float32([6, 8, 10, 12])], (1, 0): [np.float32([6, 8, 10, 12])]})
case("spec_all_to_all", program(f'"stablehlo.all_to_all"(OPERANDS) {{split_dimension = 1 : i64, concat_dimension = 0 : i64, '
                                f'split_count = 2 : i64, replica_groups = {dense([[0, 1]])}}}', ["tensor<2x4xf32>"], ["tensor<4x2xf32>"]),
     (2, 1), {(0, 0): [np.float32([[1, 2, 3, 4], [5, 6, 7, 8]])], (1, 0): [np.float32([[9, 10, 11, 12], [13, 14, 15, 16]])]},
     {(0, 0): [np.float32([[1, 2], [5, 6], [9, 10], [13, 14]])], (1, 0): [np.float32([[3, 4], [7, 8], [11, 12], [15, 16]])]})
case("spec_collective_permute", program(f'"stablehlo.collective_permute"(OPERANDS) {{source_target_pairs = {dense([[0, 1]])}}}', [F2x2], [F2x2]),
     (2, 1), {(0, 0): [np.float32([[1, 2], [3, 4]])], (1, 0): [np.float32([[5, 6], [7, 8]])]},
     {(0, 0): [np.float32([[0, 0], [0, 0]])], (1, 0): [np.float32([[1, 2], [3, 4]])]})
case("spec_reduce_scatter", program(reducing("reduce_scatter", "add", "i64", f"scatter_dimension = 1 : i64, replica_groups = {dense([[0, 1]])}"),
                                    ["tensor<2x4xi64>"], ["tensor<2x2xi64>"]),
     (2, 1), {(0, 0): [np.int64([[1, 2, 3, 4], [5, 6, 7, 8]])], (1, 0): [np.int64([[9, 10, 11, 12], [13, 14, 15, 16]])]},
     {(0, 0): [np.int64([[10, 12], [18, 20]])], (1, 0): [np.int64([[14, 16], [22, 24]])]})
case("spec_collective_broadcast", program(f'"stablehlo.collective_broadcast"(OPERANDS) {{replica_groups = {dense([[2, 1]])}}}',
                                          ["tensor<1x2xi64>"], ["tensor<1x2xi64>"]),
     (4, 1), {(r, 0): [np.int64([[2 * r + 1, 2 * r + 2]])] for r in range(4)},
     {(0, 0): [np.int64([[0, 0]])], (1, 0): [np.int64([[5, 6]])], (2, 0): [np.int64([[5, 6]])], (3, 0): [np.int64([[0, 0]])]})
# stablehlo/tests/interpret/all_gather.mlir: variadic operands; issue 1933 (cross_replica_and_partition on 2x2).
case("upstream_all_gather_variadic", program(f'"stablehlo.all_gather"(OPERANDS) {{all_gather_dim = 1 : i64, replica_groups = {dense([[0, 1]])}}}',
                                             ["tensor<2x2xi64>", "tensor<2x2xi32>"], ["tensor<2x4xi64>", "tensor<2x4xi32>"]),
     (2, 1), {(0, 0): [np.int64([[1, 2], [3, 4]]), np.int32([[5, 6], [7, 8]])],
              (1, 0): [np.int64([[11, 12], [13, 14]]), np.int32([[15, 16], [17, 18]])]},
     {p: [np.int64([[1, 2, 11, 12], [3, 4, 13, 14]]), np.int32([[5, 6, 15, 16], [7, 8, 17, 18]])] for p in [(0, 0), (1, 0)]})
case("upstream_issue_1933", program(f'"stablehlo.all_gather"(OPERANDS) {{all_gather_dim = 1 : i64, replica_groups = {dense([[0, 1]])}, {CHANNEL}}}',
                                    ["tensor<2x2xi64>"], ["tensor<2x8xi64>"]),
     (2, 2), {p: [np.int64([[1, 2], [3, 4]]) if p == (1, 0) else np.int64([[5, 6], [7, 8]])] for p in processes(2, 2)},
     {p: [np.int64([[5, 6, 1, 2, 5, 6, 5, 6], [7, 8, 3, 4, 7, 8, 7, 8]])] for p in processes(2, 2)}, sized_at_run_time=True)
MESH_2x4 = ('#stablehlo.mesh<axes = [#stablehlo.mesh_axis<name = "x", size = 2>, #stablehlo.mesh_axis<name = "y", size = 4>]>')
case("upstream_mesh_axes_subaxis", program(f'"stablehlo.all_gather"(OPERANDS) {{all_gather_dim = 0 : i64, replica_groups = '
                                           f'#stablehlo.replica_group_mesh_axes<mesh = {MESH_2x4}, axes = '
                                           '[#stablehlo.axis_ref<name = "y", sub_axis_info = (1)2>]>}', ["tensor<1xi64>"], ["tensor<2xi64>"]),
     (8, 1), {(r, 0): [np.int64([r])] for r in range(8)},
     {(r, 0): [np.int64(pair)] for r, pair in enumerate([[0, 2], [1, 3], [0, 2], [1, 3], [4, 6], [5, 7], [4, 6], [5, 7]])})

# The four strategies on a grid of 4 replicas x 2 partitions; groups copied from the spec's examples.
V42 = distinct_values(4, 2, (2, 3))
CROSS_REPLICA = [[(0, 0), (1, 0)], [(0, 1), (1, 1)], [(2, 0), (3, 0)], [(2, 1), (3, 1)]]
CROSS_REPLICA_AND_PARTITION = [[(0, 0), (1, 0), (0, 1), (1, 1)], [(2, 0), (3, 0), (2, 1), (3, 1)]]
FLATTENED = [[(0, 0), (0, 1), (1, 0), (1, 1)], [(2, 0), (2, 1), (3, 0), (3, 1)]]
CROSS_PARTITION = [[(0, 0), (0, 1)], [(1, 0), (1, 1)], [(2, 0), (2, 1)], [(3, 0), (3, 1)]]
I23 = ["tensor<2x3xi64>"]


def gather_42(attrs: str, groups_of: int) -> str:
    return program(f'"stablehlo.all_gather"(OPERANDS) {{all_gather_dim = 1 : i64, {attrs}}}', I23, [f"tensor<2x{3 * groups_of}xi64>"])


case("all_gather_cross_replica", gather_42(f"replica_groups = {dense([[0, 1], [2, 3]])}", 2), (4, 2),
     with_inputs(V42), ref_all_gather(CROSS_REPLICA, V42, 1))
case("all_gather_cross_replica_and_partition", gather_42(f"replica_groups = {dense([[0, 1], [2, 3]])}, {CHANNEL}", 4), (4, 2),
     with_inputs(V42), ref_all_gather(CROSS_REPLICA_AND_PARTITION, V42, 1), sized_at_run_time=True)
case("all_gather_flattened_ids", gather_42(f"replica_groups = {dense([[0, 1, 2, 3], [4, 5, 6, 7]])}, {GLOBAL_IDS}", 4), (4, 2),
     with_inputs(V42), ref_all_gather(FLATTENED, V42, 1))
case("all_gather_flattened_ids_strided", gather_42(f"replica_groups = {dense([[6, 4, 2, 0], [7, 5, 3, 1]])}, {GLOBAL_IDS}", 4), (4, 2),
     with_inputs(V42), ref_all_gather([[(3, 0), (2, 0), (1, 0), (0, 0)], [(3, 1), (2, 1), (1, 1), (0, 1)]], V42, 1))
case("all_reduce_max_cross_replica_unordered", program(reducing("all_reduce", "maximum", "i64", f"replica_groups = {dense([[3, 0], [1, 2]])}"), I23, I23),
     (4, 2), with_inputs(V42), ref_all_reduce([[(3, 0), (0, 0)], [(3, 1), (0, 1)], [(1, 0), (2, 0)], [(1, 1), (2, 1)]], V42, np.maximum))
case("all_reduce_cross_replica_and_partition", program(reducing("all_reduce", "add", "i64", f"replica_groups = {dense([[0, 1], [2, 3]])}, {CHANNEL}"), I23, I23),
     (4, 2), with_inputs(V42), ref_all_reduce(CROSS_REPLICA_AND_PARTITION, V42, np.add))
case("all_to_all_cross_partition", program(f'"stablehlo.all_to_all"(OPERANDS) {{split_dimension = 0 : i64, concat_dimension = 1 : i64, '
                                           f'split_count = 2 : i64, replica_groups = {dense([[0, 1]])}, {CHANNEL}}}', I23, ["tensor<1x6xi64>"]),
     (4, 2), with_inputs(V42), ref_all_to_all(CROSS_PARTITION, V42, 0, 1))
case("all_to_all_cross_replica", program(f'"stablehlo.all_to_all"(OPERANDS) {{split_dimension = 0 : i64, concat_dimension = 1 : i64, '
                                         f'split_count = 2 : i64, replica_groups = {dense([[0, 1], [2, 3]])}}}', I23, ["tensor<1x6xi64>"]),
     (4, 2), with_inputs(V42), ref_all_to_all(CROSS_REPLICA, V42, 0, 1))
V48 = distinct_values(4, 2, (8,))
case("reduce_scatter_flattened_ids_reversed", program(reducing("reduce_scatter", "add", "i64", f"scatter_dimension = 0 : i64, replica_groups = "
                                                               f"{dense([[7, 5, 3, 1], [6, 4, 2, 0]])}, {GLOBAL_IDS}"), ["tensor<8xi64>"], ["tensor<2xi64>"]),
     (4, 2), with_inputs(V48), ref_reduce_scatter([[(3, 1), (2, 1), (1, 1), (0, 1)], [(3, 0), (2, 0), (1, 0), (0, 0)]], V48, np.add, 0))
case("reduce_scatter_cross_replica_and_partition", program(reducing("reduce_scatter", "add", "i64", f"scatter_dimension = 0 : i64, replica_groups = "
                                                                     f"{dense([[0, 1, 2, 3]])}, {CHANNEL}"), ["tensor<8xi64>"], ["tensor<1xi64>"]),
     (4, 2), with_inputs(V48), ref_reduce_scatter([[(0, 0), (1, 0), (2, 0), (3, 0), (0, 1), (1, 1), (2, 1), (3, 1)]], V48, np.add, 0),
     sized_at_run_time=True)
case("collective_permute_cross_replica", program(f'"stablehlo.collective_permute"(OPERANDS) {{source_target_pairs = {dense([[0, 2], [2, 1]])}}}', I23, I23),
     (4, 2), with_inputs(V42), ref_from_sources({(2, 0): (0, 0), (2, 1): (0, 1), (1, 0): (2, 0), (1, 1): (2, 1)}, V42, processes(4, 2)))
V24 = distinct_values(2, 4, (2, 3))
case("collective_permute_cross_partition_ring", program(f'"stablehlo.collective_permute"(OPERANDS) {{source_target_pairs = '
                                                        f'{dense([[0, 1], [1, 2], [2, 3], [3, 0]])}, {CHANNEL}}}', I23, I23),
     (2, 4), with_inputs(V24), ref_from_sources({(r, (p + 1) % 4): (r, p) for r, p in processes(2, 4)}, V24, processes(2, 4)))
case("collective_broadcast_cross_partition", program(f'"stablehlo.collective_broadcast"(OPERANDS) {{replica_groups = {dense([[3, 1]])}, {CHANNEL}}}', I23, I23),
     (2, 4), with_inputs(V24), ref_from_sources({(r, p): (r, 3) for r in range(2) for p in (3, 1)}, V24, processes(2, 4)))
case("replica_id_and_partition_id", "func.func @main() -> (tensor<ui32>, tensor<ui32>) {\n  %r = stablehlo.replica_id : tensor<ui32>\n"
     "  %p = stablehlo.partition_id : tensor<ui32>\n  return %r, %p : tensor<ui32>, tensor<ui32>\n}\n",
     (4, 2), {p: [] for p in processes(4, 2)}, {(r, p): [np.uint32(r), np.uint32(p)] for r, p in processes(4, 2)})

# replica_group_mesh_axes naming an sdy.mesh of the module, on a 1x8 grid with flattened ids.
SDY_MESH = 'sdy.mesh @mesh = <["x"=2, "y"=4]>\n'
V18 = distinct_values(1, 8, (2,))


def mesh_axes(axis: str) -> str:
    return f'#stablehlo.replica_group_mesh_axes<mesh = @mesh, axes = [#stablehlo.axis_ref<name = "{axis}">]>'


case("mesh_axes_all_reduce_over_y", SDY_MESH + program(reducing("all_reduce", "add", "i64", f"replica_groups = {mesh_axes('y')}, {GLOBAL_IDS}"),
                                                      ["tensor<2xi64>"], ["tensor<2xi64>"]),
     (1, 8), with_inputs(V18), ref_all_reduce([[(0, 0), (0, 1), (0, 2), (0, 3)], [(0, 4), (0, 5), (0, 6), (0, 7)]], V18, np.add))
case("mesh_axes_all_gather_over_x", SDY_MESH + program(f'"stablehlo.all_gather"(OPERANDS) {{all_gather_dim = 0 : i64, replica_groups = '
                                                       f"{mesh_axes('x')}, {GLOBAL_IDS}}}", ["tensor<2xi64>"], ["tensor<4xi64>"]),
     (1, 8), with_inputs(V18), ref_all_gather([[(0, p), (0, p + 4)] for p in range(4)], V18, 0))

# stablehlo/tests/interpret/all_gather.mlir: four all_gathers in a row meet in order, never mixing rounds.
ROUND = ('  %g{i} = "stablehlo.all_gather"(%s{i}) {{all_gather_dim = 0 : i64, replica_groups = {groups}}} : (tensor<1xi64>) -> tensor<8xi64>\n'
         '  %peer{i} = stablehlo.slice %g{i} [7:8] : (tensor<8xi64>) -> tensor<1xi64>\n'
         '  %s{next} = stablehlo.add %peer{i}, %s0 : tensor<1xi64>\n')
case("upstream_repeated_rendezvous", "func.func @main(%s0: tensor<1xi64>) -> tensor<1xi64> {\n"
     + "".join(ROUND.format(i=i, next=i + 1, groups=dense([list(range(8))])) for i in range(4)) + "  return %s4 : tensor<1xi64>\n}\n",
     (8, 1), {(r, 0): [np.int64([10 ** r])] for r in range(8)},
     {(r, 0): [np.int64([40000000 + 10 ** r if r < 7 else 50000000])] for r in range(8)})


@pytest.mark.parametrize("text,grid,inputs,expected", CASES)
def test_collective_on_the_grid(text, grid, inputs, expected):
    results = grid_run(text, inputs, *grid)
    assert sorted(results) == processes(*grid)
    for process, want in expected.items():
        got = results[process]
        assert len(got) == len(want), process
        for g, w in zip(got, want):
            assert np.asarray(g).dtype == np.asarray(w).dtype, process
            np.testing.assert_array_equal(g, w, err_msg=f"process {process}")


# The verifier cannot know these groups' size (it includes the grid's partitions): it must accept
# the result shapes and leave them to the run (upstream's issue 1933 case among them).
@pytest.mark.parametrize("name", sorted(SIZED_AT_RUN_TIME))
def test_the_verifier_accepts_collectives_over_replicas_and_partitions(name):
    load(SIZED_AT_RUN_TIME[name])


# -- channels and feeds ------------------------------------------------------------------------------


def on_replica_zero(then_ops: str, else_ops: str, result: str = "tensor<2xf32>") -> str:
    """`main(%x)` running `then_ops` on replica 0 and `else_ops` elsewhere; each ends with stablehlo.return."""
    return (f"func.func @main(%x: tensor<2xf32>) -> {result} {{\n"
            "  %t0 = stablehlo.create_token : !stablehlo.token\n"
            "  %replica = stablehlo.replica_id : tensor<ui32>\n"
            "  %zero = stablehlo.constant dense<0> : tensor<ui32>\n"
            "  %first = stablehlo.compare EQ, %replica, %zero : (tensor<ui32>, tensor<ui32>) -> tensor<i1>\n"
            f'  %y = "stablehlo.if"(%first) ({{\n{then_ops}  }}, {{\n{else_ops}  }}) : (tensor<i1>) -> {result}\n'
            f"  return %y : {result}\n}}\n")


def send(value: str, token: str, out: str, channel: int) -> str:
    return (f'    {out} = "stablehlo.send"({value}, {token}) <{{channel_handle = #stablehlo.channel_handle<handle = {channel}, type = 1>}}>'
            " : (tensor<2xf32>, !stablehlo.token) -> !stablehlo.token\n")


def recv(value: str, token: str, out: str, channel: int) -> str:
    return (f'    {value}, {out} = "stablehlo.recv"({token}) <{{channel_handle = #stablehlo.channel_handle<handle = {channel}, type = 1>}}>'
            " : (!stablehlo.token) -> (tensor<2xf32>, !stablehlo.token)\n")


# Device 0 runs first and receives before device 1 has sent: the recv must wait, then answer.
PING_PONG = on_replica_zero(
    recv("%v", "%t0", "%t1", 1) + "    %w = stablehlo.add %v, %x : tensor<2xf32>\n" + send("%w", "%t1", "%t2", 2)
    + "    stablehlo.return %v : tensor<2xf32>\n",
    send("%x", "%t0", "%t1", 1) + recv("%v", "%t1", "%t2", 2) + "    stablehlo.return %v : tensor<2xf32>\n")


def test_recv_waits_for_a_send_from_another_process():
    a, b = np.float32([1, 2]), np.float32([10, 20])
    results = grid_run(PING_PONG, {(0, 0): [a], (1, 0): [b]}, 2, 1)
    np.testing.assert_array_equal(results[(0, 0)][0], b)
    np.testing.assert_array_equal(results[(1, 0)][0], a + b)


def test_recv_whose_send_never_comes_is_a_deadlock_naming_the_channel():
    text = on_replica_zero(recv("%v", "%t0", "%t1", 9) + "    stablehlo.return %v : tensor<2xf32>\n",
                           "    stablehlo.return %x : tensor<2xf32>\n")
    with pytest.raises(GridError) as caught:
        grid_run(text, {(0, 0): [np.float32([1, 2])], (1, 0): [np.float32([3, 4])]}, 2, 1)
    message = str(caught.value)
    assert "channel 9" in message and "stablehlo.recv" in message
    assert "device 0" in message and "device 1 (replica 1, partition 0): finished" in message


FEEDS = """
func.func @main() -> tensor<2xi32> {
  %t0 = stablehlo.create_token : !stablehlo.token
  %a, %t1 = "stablehlo.infeed"(%t0) <{infeed_config = ""}> : (!stablehlo.token) -> (tensor<2xi32>, !stablehlo.token)
  %r = stablehlo.replica_id : tensor<ui32>
  %t2 = "stablehlo.outfeed"(%a, %r, %t1) <{outfeed_config = ""}> : (tensor<2xi32>, tensor<ui32>, !stablehlo.token) -> !stablehlo.token
  return %a : tensor<2xi32>
}
"""


def test_every_process_takes_its_own_infeed_entry():
    results = grid_run(FEEDS, {p: [] for p in processes(2, 1)}, 2, 1, infeed=[np.int32([1, 2]), np.int32([3, 4])])
    # Which process reads first is the scheduler's business; each entry is read exactly once.
    assert sorted(results[p][0].tolist() for p in results) == [[1, 2], [3, 4]]


def test_outfeed_collects_every_process_payload():
    module = load(FEEDS).module
    grid = ScheduledGrid(2, 1, infeed=deque([np.int32([5, 6]), np.int32([7, 8])]))
    tasks = {p: (lambda p=p: Interpreter(module, process=p, grid=grid).run("main", [])) for p in grid.processes()}
    results = run_within(30, GridScheduler(grid, tasks).run)
    sent = {int(replica): payload.tolist() for payload, replica in grid.outfeed}
    assert sent == {pid.replica_id: results[pid][0].tolist() for pid in grid.processes()}


# -- errors: clear messages, never a hang ------------------------------------------------------------


def add_all_reduce(groups: list[list[int]], name: str = "%s", body: str = "add") -> str:
    return (f'    {name} = "stablehlo.all_reduce"(%x) ({{\n      ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n'
            f"        %c = stablehlo.{body} %a, %b : tensor<f32>\n        stablehlo.return %c : tensor<f32>\n"
            f"    }}) {{replica_groups = {dense(groups)}}} : (tensor<2xf32>) -> tensor<2xf32>\n"
            f"    stablehlo.return {name} : tensor<2xf32>\n")


def location_of(text: str, needle: str) -> str:
    """`<string>:line:column` of the first line holding `needle`, at its first non-blank character."""
    for number, line in enumerate(text.splitlines(), start=1):
        if needle in line:
            return f"<string>:{number}:{len(line) - len(line.lstrip()) + 1}"
    raise AssertionError(f"{needle!r} is not in the program")


def test_a_replica_that_skips_a_collective_is_a_deadlock_naming_devices_op_and_location():
    text = on_replica_zero("    stablehlo.return %x : tensor<2xf32>\n", add_all_reduce([[0, 1, 2]]))
    with pytest.raises(GridError) as caught:
        grid_run(text, {p: [np.float32([1, 2])] for p in processes(3, 1)}, 3, 1)
    message = str(caught.value)
    where = location_of(text, '"stablehlo.all_reduce"')
    assert "can never go on" in message and "2 of 3 process(es)" in message
    assert "device 0 (replica 0, partition 0): finished" in message
    for device in (1, 2):
        assert f"device {device} (replica {device}, partition 0): waits at %s = stablehlo.all_reduce ({where})" in message
    assert "for devices 0, 1, 2" in message
    assert caught.value.pos is not None and f"{caught.value.pos.line}:{caught.value.pos.col}" == where.split(":", 1)[1]


def test_processes_of_one_group_at_different_collectives_is_an_error():
    text = on_replica_zero(add_all_reduce([[0, 1]], "%s"), add_all_reduce([[0, 1]], "%m", "maximum"))
    with pytest.raises(GridError) as caught:
        grid_run(text, {p: [np.float32([1, 2])] for p in processes(2, 1)}, 2, 1)
    message = str(caught.value)
    assert "devices 0 and 1 meet at different collectives" in message
    assert f"%s = stablehlo.all_reduce ({location_of(text, '%s = ')})" in message
    assert f"%m = stablehlo.all_reduce ({location_of(text, '%m = ')})" in message


def test_a_replica_running_more_loop_rounds_is_a_deadlock_after_its_partner_finished():
    text = (DATA / "uneven_loop.mlir").read_text()
    with pytest.raises(GridError) as caught:
        grid_run(text, {p: [np.float32([1, 2])] for p in processes(2, 1)}, 2, 1)
    message = str(caught.value)
    assert "device 0 (replica 0, partition 0): finished" in message
    assert f"device 1 (replica 1, partition 0): waits at %sum = stablehlo.all_reduce ({location_of(text, '%sum = ')})" in message


def test_a_recv_and_a_collective_waiting_on_each_other_is_a_deadlock():
    # Replica 0 receives before the all_reduce; replica 1 sends only after it.
    text = on_replica_zero(recv("%v", "%t0", "%t1", 3) + add_all_reduce([[0, 1]], "%s"),
                           add_all_reduce([[0, 1]], "%m").replace("    stablehlo.return %m : tensor<2xf32>\n", "")
                           + send("%m", "%t0", "%t1", 3) + "    stablehlo.return %m : tensor<2xf32>\n")
    with pytest.raises(GridError) as caught:
        grid_run(text, {p: [np.float32([1, 2])] for p in processes(2, 1)}, 2, 1)
    message = str(caught.value)
    assert "2 of 2 process(es)" in message
    assert f"device 0 (replica 0, partition 0): waits at %v, %t1 = stablehlo.recv ({location_of(text, 'stablehlo.recv')}) " \
           "for a send on channel 3" in message
    assert f"device 1 (replica 1, partition 0): waits at %m = stablehlo.all_reduce ({location_of(text, '%m = ')})" in message


PERMUTE_2_TO_1 = program(f'"stablehlo.collective_permute"(OPERANDS) {{source_target_pairs = {dense([[0, 1], [2, 1]])}}}',
                         ["tensor<2xf32>"], ["tensor<2xf32>"])


def test_collective_permute_with_a_duplicate_target_is_refused_by_the_verifier():
    with pytest.raises(HlodbgError, match="unique|twice"):
        load(PERMUTE_2_TO_1)


def test_collective_permute_with_a_duplicate_target_is_refused_by_the_grid():
    with pytest.raises(ExecutionError, match="a target appears twice in source_target_pairs"):
        grid_run(PERMUTE_2_TO_1, {p: [np.float32([1, 2])] for p in processes(3, 1)}, 3, 1, verify=False)


@pytest.mark.parametrize("op,grid,message", [
    (reducing("all_reduce", "add", "f32", f"replica_groups = {dense([[0, 1, 2, 3]])}"), (2, 1),
     r"name replica id 2 but the grid has 2 replica id\(s\)"),
    (reducing("all_reduce", "add", "f32", f"replica_groups = {dense([[0, 1, 2, 3, 4, 5, 6, 7]])}, {GLOBAL_IDS}"), (2, 2),
     r"name flattened process id 4 but the grid has 4"),
    (f'"stablehlo.collective_permute"(OPERANDS) {{source_target_pairs = {dense([[0, 1], [1, 5]])}, {CHANNEL}}}', (1, 2),
     r"name partition id 5 but the grid has 2 partition id\(s\)"),
    (f'"stablehlo.collective_broadcast"(OPERANDS) {{replica_groups = {dense([[3, 0]])}}}', (2, 1),
     r"name replica id 3 but the grid has 2 replica id\(s\)"),
], ids=["replica", "flattened", "permute_partition", "broadcast_replica"])
def test_a_group_naming_a_process_beyond_the_grid_is_a_clear_error(op, grid, message):
    text = program(op, ["tensor<2xf32>"], ["tensor<2xf32>"])
    with pytest.raises(ExecutionError, match=message) as caught:
        grid_run(text, {p: [np.float32([1, 2])] for p in processes(*grid)}, *grid)
    assert "run on a grid with more processes" in str(caught.value)


def test_an_op_error_on_one_device_names_the_device():
    # split_count 4 does not match the 2 processes of the group (all_to_all C8 on this grid). The
    # verifier rejects this program too (C8 holds statically for explicit replica_groups); it is
    # skipped here so that the run meets the error on a device.
    text = program(f'"stablehlo.all_to_all"(OPERANDS) {{split_dimension = 0 : i64, concat_dimension = 0 : i64, '
                   f'split_count = 4 : i64, replica_groups = {dense([[0, 1]])}}}', ["tensor<4xf32>"], ["tensor<4xf32>"])
    with pytest.raises(ExecutionError, match=r"split_count is 4 but the process group has 2") as caught:
        grid_run(text, {p: [np.float32([1, 2, 3, 4])] for p in processes(2, 1)}, 2, 1, verify=False)
    assert "on device 0 (replica 0, partition 0) of a 2x1 grid" in str(caught.value)


def test_a_grid_too_big_to_emulate_is_refused():
    with pytest.raises(GridError, match="emulates at most"):
        grid_run(PERMUTE_2_TO_1, {}, 4097, 1, verify=False)


# -- differential: JAX's collectives on 8 host CPU devices ----------------------------------------------

# Inputs are multiples of 1/4 far below 2**20: every sum is exact whatever order XLA and hlodbg add
# in, so a mismatch is a wrong value, not rounding. Each pmap case: name -> (global input shape, function).
JAX_SCRIPT = r'''
import sys
from pathlib import Path
import numpy as np
import jax, jax.numpy as jnp
from jax import lax
from jax.sharding import NamedSharding, PartitionSpec as P

out = Path(sys.argv[1])
assert len(jax.devices()) == 8, jax.devices()
rng = np.random.default_rng(0)
ring = [(i, (i + 1) % 8) for i in range(8)]
pmapped = {
    "psum": ((8, 4), lambda v: lax.psum(v, "i")),
    "pmax": ((8, 4), lambda v: lax.pmax(v, "i")),
    "all_gather_tiled": ((8, 4), lambda v: lax.all_gather(v, "i", tiled=True)),
    "all_gather_stacked": ((8, 4), lambda v: lax.all_gather(v, "i")),
    "all_to_all": ((8, 8, 3), lambda v: lax.all_to_all(v, "i", 0, 0, tiled=True)),
    "psum_scatter_tiled": ((8, 16), lambda v: lax.psum_scatter(v, "i", tiled=True)),
    "psum_scatter_stacked": ((8, 8, 2), lambda v: lax.psum_scatter(v, "i")),
    "ppermute_ring": ((8, 4), lambda v: lax.ppermute(v, "i", ring)),
    "axis_index": ((8, 4), lambda v: v + lax.axis_index("i")),
    "psum_axis_index_groups": ((8, 4), lambda v: lax.psum(v, "i", axis_index_groups=[[0, 2, 4, 6], [1, 3, 5, 7]])),
}
def save(name, lowered, x, y):
    (out / f"{name}.mlir").write_text(lowered.as_text())
    np.savez(out / f"{name}.npz", x=x, y=np.asarray(y))
def sample(shape):
    return (rng.integers(-400, 400, size=shape) / 4).astype(np.float32)
for name, (shape, fn) in pmapped.items():
    x = sample(shape)
    f = jax.pmap(fn, axis_name="i")
    save(name, f.lower(x), x, f(x))
# 2-D: a 2x4 mesh, collectives over one axis, over the axis tuple, and the other axis's index.
mesh = jax.make_mesh((2, 4), ("x", "y"))
def body(v):
    return (lax.psum(v, "y") + 100 * lax.psum(v, ("x", "y")) + 1000 * lax.axis_index("x")
            + lax.all_gather(v, "x", tiled=True)[1:] + lax.ppermute(v, "y", [(0, 3), (3, 2), (2, 1), (1, 0)]))
f = jax.jit(jax.shard_map(body, mesh=mesh, in_specs=P(("x", "y")), out_specs=P(("x", "y"))))
x = jax.device_put(sample((8, 3)), NamedSharding(mesh, P(("x", "y"))))
save("mesh_2x4", f.lower(x), np.asarray(x), f(x))
'''
JAX_CASES = ["psum", "pmax", "all_gather_tiled", "all_gather_stacked", "all_to_all", "psum_scatter_tiled",
             "psum_scatter_stacked", "ppermute_ring", "axis_index", "psum_axis_index_groups", "mesh_2x4"]


@pytest.fixture(scope="module")
def jax_programs(tmp_path_factory) -> Path:
    if find_spec("jax") is None:
        pytest.skip("jax is not installed")
    out = tmp_path_factory.mktemp("jax_collectives")
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=8", JAX_PLATFORMS="cpu")
    done = subprocess.run([sys.executable, "-c", JAX_SCRIPT, str(out)], env=env, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-3000:]
    return out


MANUAL = re.compile(r"^(?P<indent>\s*)%\S+ = sdy\.manual_computation\(.*manual_axes=\{[^}]*\} \((?P<args>.*)\) \{$")
SDY_RETURN = re.compile(r"^\s*sdy\.return (?P<values>.*) : (?P<types>.*)$")


def per_device_program(text: str) -> str:
    """The program one device runs: `main`'s sdy.manual_computation body as `main`.

    JAX lowers pmap and shard_map to a partitioned module whose main wraps the per-device code
    in one manual computation over every mesh axis; its body, with the module's attributes (grid
    size, meshes) and other functions, is the SPMD program of a single device."""
    lines = text.splitlines()
    main = next(i for i, line in enumerate(lines) if line.lstrip().startswith("func.func public @main("))
    main_indent = lines[main][: len(lines[main]) - len(lines[main].lstrip())]
    main_end = next(i for i in range(main + 1, len(lines)) if lines[i] == main_indent + "}")
    starts = [i for i in range(main, main_end) if MANUAL.match(lines[i])]
    if len(starts) != 1:
        return text  # already per device (the pre-shard_map pmap lowering)
    start = starts[0]
    indent = MANUAL.match(lines[start]).group("indent")
    end = next(i for i in range(start + 1, main_end) if lines[i].startswith(indent + "} : ("))
    returned = SDY_RETURN.match(lines[end - 1])
    assert returned, lines[end - 1]
    assert all(line.strip().startswith("return ") for line in lines[end + 1: main_end]), "main does more than the manual computation"
    body = lines[start + 1: end - 1] + [f"{indent}return {returned['values']} : {returned['types']}"]
    header = f"{main_indent}func.func public @main({MANUAL.match(lines[start])['args']}) -> ({returned['types']}) {{"
    return "\n".join(lines[:main] + [header] + body + lines[main_end:])


@pytest.mark.parametrize("name", JAX_CASES)
def test_jax_collectives_match_on_every_device(jax_programs, name):
    text = (jax_programs / f"{name}.mlir").read_text()
    data = np.load(jax_programs / f"{name}.npz")
    module = load(per_device_program(text)).module
    replicas, partitions = module.num_replicas, module.num_partitions
    assert replicas * partitions == 8
    (arg_type,) = module.function("main").function_type.inputs
    # Device d (replica d // P, partition d % P; mesh device d) holds the d-th slice of the leading dim.
    args = {ProcessId(d // partitions, d % partitions): [part.reshape(arg_type.shape)]
            for d, part in enumerate(np.split(data["x"], 8))}
    results = run_within(30, run_grid, module, args)
    for d, want in enumerate(np.split(data["y"], 8)):
        (got,) = results[ProcessId(d // partitions, d % partitions)]
        np.testing.assert_allclose(np.asarray(got).reshape(want.shape), want, rtol=1e-6, err_msg=f"{name} on device {d}")


def test_per_device_program_keeps_the_grid_and_drops_the_wrapper(jax_programs):
    extracted = per_device_program((jax_programs / "psum.mlir").read_text())
    assert "sdy.manual_computation" not in extracted and "sdy.return" not in extracted
    module = load(extracted).module
    assert (module.num_replicas, module.num_partitions) == (1, 8)
    assert [op.name for op in module.function("main").ops].count("stablehlo.all_reduce") == 1


# -- scale: 64 devices -------------------------------------------------------------------------------


def test_all_reduce_over_64_replicas():
    values = {(r, 0): np.float32([r, 2 * r, -r]) for r in range(64)}
    text = program(reducing("all_reduce", "add", "f32", f"replica_groups = {dense([list(range(64))])}"), ["tensor<3xf32>"], ["tensor<3xf32>"])
    results = grid_run(text, with_inputs(values), 64, 1)
    total = np.float32([2016, 4032, -2016])  # 0 + 1 + ... + 63 = 2016
    assert len(results) == 64 and all(np.array_equal(results[p][0], total) for p in results)


def test_all_gather_over_64_devices_in_column_groups():
    # 8 replicas x 8 partitions; each group is one partition's column of devices, listed bottom-up.
    groups = [[8 * r + p for r in reversed(range(8))] for p in range(8)]
    values = {(r, p): np.int32([8 * r + p]) for r, p in processes(8, 8)}
    text = program(f'"stablehlo.all_gather"(OPERANDS) {{all_gather_dim = 0 : i64, replica_groups = {dense(groups)}, {GLOBAL_IDS}}}',
                   ["tensor<1xi32>"], ["tensor<8xi32>"])
    results = grid_run(text, with_inputs(values), 8, 8)
    assert len(results) == 64
    for (r, p), (got,) in results.items():
        np.testing.assert_array_equal(got, np.int32([8 * row + p for row in reversed(range(8))]), err_msg=f"{(r, p)}")
