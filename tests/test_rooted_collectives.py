"""The collectives with a root: variadic stablehlo.collective_broadcast with `has_dynamic_root`, and
stablehlo.collective_reduce: printing round trip, every constraint, and runs on the emulated grid.

Expected values are written out by hand from the groups in each program (as test_grid_collectives
does), never computed with hlodbg's own group functions."""
from __future__ import annotations

import numpy as np
import pytest

from hlodbg.engine import ExecutionError, parse_module
from hlodbg.engine.syntax.mlir.printer import print_module
from hlodbg.engine.verify import verify

from .helpers import assert_rejected_at
from .test_grid_collectives import CHANNEL, GLOBAL_IDS, dense, grid_run

I2 = "tensor<2xi64>"


def broadcast(operands: int, attrs: str, dynamic_root: bool = False, root_type: str = "tensor<2xi32>") -> str:
    """`@main` broadcasting `operands` tensor<2xi64> arguments (then a root argument if dynamic)."""
    params = [f"%x{i}: {I2}" for i in range(operands)] + ([f"%root: {root_type}"] if dynamic_root else [])
    uses = [f"%x{i}" for i in range(operands)] + (["%root"] if dynamic_root else [])
    in_types = [I2] * operands + ([root_type] if dynamic_root else [])
    out = ", ".join([I2] * operands)
    flag = ", has_dynamic_root" if dynamic_root else ""
    return f"""
func.func @main({", ".join(params)}) -> ({out}) {{
  %r:{operands} = "stablehlo.collective_broadcast"({", ".join(uses)}) {{{attrs}{flag}}} : ({", ".join(in_types)}) -> ({out})
  return {", ".join(f"%r#{i}" for i in range(operands))} : {out}
}}"""


def reduce_program(attrs: str, body_op: str = "stablehlo.add", operands: int = 1, element: str = "i64") -> str:
    """`@main` reducing `operands` tensor<2xi64> arguments; the body combines one pair (all_reduce's
    computation, applied to each operand)."""
    types = ", ".join([I2] * operands)
    return f"""
func.func @main({", ".join(f"%x{i}: {I2}" for i in range(operands))}) -> ({types}) {{
  %r:{operands} = "stablehlo.collective_reduce"({", ".join(f"%x{i}" for i in range(operands))}) ({{
    ^bb0(%a: tensor<{element}>, %b: tensor<{element}>):
      %s = {body_op} %a, %b : tensor<{element}>
      stablehlo.return %s : tensor<{element}>
  }}) {{{attrs}}} : ({types}) -> ({types})
  return {", ".join(f"%r#{i}" for i in range(operands))} : {types}
}}"""


def per_process(count: int, operands: int = 1, root=None) -> dict:
    """Process r holds [10r + k, 10r + k + 1] in operand k (and the root, if given)."""
    out = {}
    for r in range(count):
        values = [np.array([10 * r + k, 10 * r + k + 1], np.int64) for k in range(operands)]
        out[(r, 0)] = values + ([np.asarray(root, np.int32)] if root is not None else [])
    return out


def test_variadic_dynamic_root_broadcast_prints_and_parses_back():
    text = broadcast(2, f"replica_groups = {dense([[0, 1]])}", dynamic_root=True)
    printed = print_module(parse_module(text))
    assert print_module(parse_module(printed)) == printed
    assert "has_dynamic_root" in printed and '"stablehlo.collective_broadcast"(%x0, %x1, %root)' in printed
    verify(parse_module(printed))


def test_collective_reduce_prints_and_parses_back():
    printed = print_module(parse_module(reduce_program(f"replica_groups = {dense([[0, 1]])}")))
    assert print_module(parse_module(printed)) == printed
    assert '"stablehlo.collective_reduce"(%x0) <{replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}> ({' in printed


# -- constraints -----------------------------------------------------------------------------------

GROUPS = f"replica_groups = {dense([[0, 1]])}"

INVALID = [
    ("broadcast_groups_not_unique", broadcast(1, f"replica_groups = {dense([[0, 0]])}"), "must be unique", "C1"),
    ("broadcast_result_type", f"""
func.func @main(%x: {I2}) -> tensor<2xi32> {{
  %r = "stablehlo.collective_broadcast"(%x) {{{GROUPS}}} : ({I2}) -> tensor<2xi32>
  return %r : tensor<2xi32>
}}""", "result #0 must have the type of operand #0", "C3"),
    ("broadcast_fewer_results", f"""
func.func @main(%x: {I2}, %y: {I2}) -> {I2} {{
  %r = "stablehlo.collective_broadcast"(%x, %y) {{{GROUPS}}} : ({I2}, {I2}) -> {I2}
  return %r : {I2}
}}""", "has 2 operand(s) to broadcast but 1 result(s)", "C3"),
    ("broadcast_root_only", f"""
func.func @main(%root: tensor<1xi32>) -> () {{
  "stablehlo.collective_broadcast"(%root) {{{GROUPS}, has_dynamic_root}} : (tensor<1xi32>) -> ()
  return
}}""", "needs at least one operand to broadcast before the root", "C3"),
    ("broadcast_root_size", broadcast(2, GROUPS, dynamic_root=True, root_type="tensor<3xi32>"),
     "one index per broadcast operand (tensor<2xi32>)", "C4"),
    ("broadcast_root_rank", broadcast(1, GROUPS, dynamic_root=True, root_type="tensor<1x1xi32>"),
     "root must be a 1-dimensional tensor", "C4"),
    ("broadcast_root_float", broadcast(1, GROUPS, dynamic_root=True, root_type="tensor<1xf32>"),
     "root must hold integer indices", "C4"),
    ("broadcast_root_outside_the_group", f"""
func.func @main(%x: {I2}) -> {I2} {{
  %root = stablehlo.constant dense<[2]> : tensor<1xi32>
  %r = "stablehlo.collective_broadcast"(%x, %root) {{{GROUPS}, has_dynamic_root}} : ({I2}, tensor<1xi32>) -> {I2}
  return %r : {I2}
}}""", "root[0] = 2 is not an index into a process group of 2 processes", "C5"),
    ("reduce_groups_not_unique", reduce_program(f"replica_groups = {dense([[1, 1]])}"), "must be unique", "C1"),
    ("reduce_global_ids_without_channel", reduce_program(f"{GROUPS}, use_global_device_ids"),
     "use_global_device_ids needs a channel_handle with a positive handle", "I3"),
    ("reduce_body_on_other_elements", reduce_program(GROUPS, element="f32"),
     "computation argument #0 has element type f32, which cannot hold input element type i64", "C4"),
    ("reduce_result_shape", reduce_program(GROUPS).replace(f"-> ({I2})", "-> (tensor<3xi64>)")
     .replace(f"return %r#0 : {I2}", "return %r#0 : tensor<3xi64>").replace(f"-> ({I2}) {{", "-> (tensor<3xi64>) {"),
     "result #0 must have the shape of operand #0", "C3"),
]


@pytest.mark.parametrize("name, text, fragment, constraint", INVALID, ids=[case[0] for case in INVALID])
def test_each_constraint_rejects_its_invalid_program_at_the_op(name, text, fragment, constraint):
    assert_rejected_at(text, fragment, constraint, '"stablehlo.collective_')


# -- collective_broadcast on the grid ----------------------------------------------------------------


def test_spec_example_broadcast_from_the_first_member():
    # spec collective_broadcast: replica_groups [[2, 1]] on 4 replicas; 0 and 3 are in no group.
    results = grid_run(broadcast(1, f"replica_groups = {dense([[2, 1]])}"), per_process(4), 4, 1)
    assert [results[(r, 0)][0].tolist() for r in range(4)] == [[0, 0], [20, 21], [20, 21], [0, 0]]


def test_variadic_broadcast_sends_every_operand_from_the_first_member():
    results = grid_run(broadcast(2, f"replica_groups = {dense([[1, 0], [3, 2]])}"), per_process(4, 2), 4, 1)
    want = {0: [[10, 11], [11, 12]], 1: [[10, 11], [11, 12]], 2: [[30, 31], [31, 32]], 3: [[30, 31], [31, 32]]}
    for r in range(4):
        assert [v.tolist() for v in results[(r, 0)]] == want[r]


def test_dynamic_root_picks_the_source_of_each_operand_in_its_group():
    # root = [1, 0]: operand 0 from each group's second member, operand 1 from its first.
    text = broadcast(2, f"replica_groups = {dense([[0, 1], [3, 2]])}", dynamic_root=True)
    results = grid_run(text, per_process(4, 2, root=[1, 0]), 4, 1)
    want = {0: [[10, 11], [1, 2]], 1: [[10, 11], [1, 2]], 2: [[20, 21], [31, 32]], 3: [[20, 21], [31, 32]]}
    for r in range(4):
        assert [v.tolist() for v in results[(r, 0)]] == want[r]


def test_dynamic_root_across_partitions_with_a_channel():
    text = broadcast(1, f"replica_groups = {dense([[0, 1]])}, {CHANNEL}", dynamic_root=True, root_type="tensor<1xi32>")
    inputs = {(r, p): [np.array([10 * r + p, 0], np.int64), np.array([1], np.int32)] for r in range(2) for p in range(2)}
    results = grid_run(text, inputs, 2, 2)
    for r in range(2):
        for p in range(2):
            assert results[(r, p)][0].tolist() == [10 * r + 1, 0]


def test_a_root_outside_its_group_at_run_time_names_c5():
    text = broadcast(1, f"replica_groups = {dense([[0, 1]])}", dynamic_root=True, root_type="tensor<1xi32>")
    with pytest.raises(ExecutionError, match=r"root\[0\] = 5 is not an index into the process group .*\(C5\)"):
        grid_run(text, per_process(2, 1, root=[5]), 2, 1)


# -- collective_reduce on the grid ---------------------------------------------------------------------


def test_reduce_delivers_the_group_sum_to_the_first_member_only():
    results = grid_run(reduce_program(f"replica_groups = {dense([[1, 0], [2, 3]])}"), per_process(4), 4, 1)
    assert [results[(r, 0)][0].tolist() for r in range(4)] == [[0, 0], [10, 12], [50, 52], [0, 0]]


def test_variadic_reduce_with_a_maximum_body():
    text = reduce_program(f"replica_groups = {dense([[0, 1, 2]])}", "stablehlo.maximum", operands=2)
    results = grid_run(text, per_process(3, 2), 3, 1)
    assert [v.tolist() for v in results[(0, 0)]] == [[20, 21], [21, 22]]
    assert all(v.tolist() == [0, 0] for r in (1, 2) for v in results[(r, 0)])


def test_reduce_with_global_device_ids_groups_flattened_ids():
    # flattened ids on a 2x2 grid: 0=(0,0) 1=(0,1) 2=(1,0) 3=(1,1); groups [[3, 0], [1, 2]].
    text = reduce_program(f"replica_groups = {dense([[3, 0], [1, 2]])}, {GLOBAL_IDS}")
    inputs = {(r, p): [np.array([2 * r + p, 1], np.int64)] for r in range(2) for p in range(2)}
    results = grid_run(text, inputs, 2, 2)
    assert results[(1, 1)][0].tolist() == [3, 2] and results[(0, 1)][0].tolist() == [3, 2]
    assert results[(0, 0)][0].tolist() == [0, 0] and results[(1, 0)][0].tolist() == [0, 0]


def test_the_root_gets_what_all_reduce_gives():
    groups = f"replica_groups = {dense([[2, 0, 1]])}"
    inputs = per_process(3)
    reduced = grid_run(reduce_program(groups), inputs, 3, 1)
    all_reduce = reduce_program(groups).replace("collective_reduce", "all_reduce")
    everyone = grid_run(all_reduce, inputs, 3, 1)
    np.testing.assert_array_equal(reduced[(2, 0)][0], everyone[(2, 0)][0])


def test_the_grid_debugger_shows_each_device_its_reduce_group(tmp_path, monkeypatch):
    from hlodbg import load
    from hlodbg.engine.debug.grid_session import GridSession

    monkeypatch.setenv("HLODBG_STATE_DIR", str(tmp_path / "state"))
    # Flattened ids on a 2x2 grid (as all_reduce forms them): groups of devices [3, 0] and [1, 2].
    module = load(reduce_program(f"replica_groups = {dense([[3, 0], [1, 2]])}, {GLOBAL_IDS}")).module
    grid = GridSession(module, [np.array([1, 2], np.int64)], num_replicas=2, num_partitions=2, memory=1 << 28)
    try:
        assert grid.session.op.name == "stablehlo.collective_reduce"
        assert [v.group for v in grid.values_of(grid.session.op)] == [(3, 0), (1, 2), (1, 2), (3, 0)]
        grid.move("step")
        outputs = [np.asarray(v.outputs[0]).tolist() for v in grid.values_of(module.function("main").ops[0])]
        assert outputs == [[0, 0], [2, 4], [0, 0], [2, 4]]
    finally:
        grid.close()
