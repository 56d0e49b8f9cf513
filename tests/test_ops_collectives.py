"""Collectives: process-group formation on bigger grids, the ops on the 1x1 grid, channels, feeds."""
from __future__ import annotations

from collections import deque

import numpy as np
import pytest

import hlodbg
from hlodbg.engine import ExecutionError
from hlodbg.engine.ir.attributes import (
    ChannelHandle,
    OpaqueAttr,
    DenseElements,
    ReplicaGroupMeshAxes,
    SymbolRef,
    UnitAttr,
)
from hlodbg.engine.run.interpreter import Interpreter
from hlodbg.engine.ops.collectives import (
    cross_partition,
    cross_replica,
    cross_replica_and_partition,
    flattened_ids,
    mesh_axes_groups,
    permute_groups,
    reduction_groups,
    split_groups,
)
from hlodbg.engine.machine.process import Grid, ProcessId
from hlodbg.engine.ir.types import IntegerType, TensorType


def run(text: str, *args, grid: Grid | None = None):
    interpreter = Interpreter(hlodbg.load(text).module, grid=grid)
    return interpreter.run("main", list(args))


def ids(groups):
    return [[(p.replica_id, p.partition_id) for p in group] for group in groups]


def dense(rows) -> DenseElements:
    array = np.array(rows, np.int64)
    return DenseElements(TensorType(array.shape, IntegerType(64)), array)


# -- group formation: the spec's strategies on a 2x4 grid (2 replicas, 4 partitions) -----------

GRID = Grid(num_replicas=2, num_partitions=4)
P0 = ProcessId(0, 0)


def test_cross_replica_pairs_each_replica_group_with_every_partition():
    assert ids(cross_replica(GRID, [[0, 1]])) == [
        [(0, 0), (1, 0)], [(0, 1), (1, 1)], [(0, 2), (1, 2)], [(0, 3), (1, 3)]]
    assert ids(cross_replica(GRID, [[1], [0]])) == [
        [(1, 0)], [(1, 1)], [(1, 2)], [(1, 3)], [(0, 0)], [(0, 1)], [(0, 2)], [(0, 3)]]


def test_cross_partition_pairs_each_partition_group_with_every_replica():
    assert ids(cross_partition(GRID, [[0, 1], [2, 3]])) == [
        [(0, 0), (0, 1)], [(1, 0), (1, 1)], [(0, 2), (0, 3)], [(1, 2), (1, 3)]]


def test_cross_replica_and_partition_joins_all_partitions_of_a_replica_group():
    assert ids(cross_replica_and_partition(GRID, [[0, 1]])) == [
        [(0, 0), (1, 0), (0, 1), (1, 1), (0, 2), (1, 2), (0, 3), (1, 3)]]
    assert ids(cross_replica_and_partition(GRID, [[0], [1]])) == [
        [(0, 0), (0, 1), (0, 2), (0, 3)], [(1, 0), (1, 1), (1, 2), (1, 3)]]


def test_flattened_ids_are_replica_major():
    assert ids(flattened_ids(GRID, [[0, 1, 2, 3], [4, 5, 6, 7]])) == [
        [(0, 0), (0, 1), (0, 2), (0, 3)], [(1, 0), (1, 1), (1, 2), (1, 3)]]
    assert ids(flattened_ids(GRID, [[0, 4], [1, 5], [2, 6], [3, 7]])) == [
        [(0, 0), (1, 0)], [(0, 1), (1, 1)], [(0, 2), (1, 2)], [(0, 3), (1, 3)]]


@pytest.mark.parametrize("attributes,strategy_groups", [
    ({"replica_groups": [[0, 1]]}, cross_replica(GRID, [[0, 1]])),
    ({"replica_groups": [[0, 1]], "channel_handle": ChannelHandle(1, 1)}, cross_replica_and_partition(GRID, [[0, 1]])),
    ({"replica_groups": [[0, 2, 4, 6], [1, 3, 5, 7]], "channel_handle": ChannelHandle(1, 1),
      "use_global_device_ids": UnitAttr()}, flattened_ids(GRID, [[0, 2, 4, 6], [1, 3, 5, 7]])),
])
def test_reduction_ops_choose_the_strategy_from_channel_and_global_ids(attributes, strategy_groups):
    attributes = dict(attributes, replica_groups=dense(attributes["replica_groups"]))
    assert reduction_groups(P0, GRID, attributes) == strategy_groups


def test_split_ops_use_partitions_when_a_channel_is_given():
    assert split_groups(P0, GRID, {"replica_groups": dense([[0, 1]])}) == cross_replica(GRID, [[0, 1]])
    assert split_groups(P0, GRID, {"replica_groups": dense([[0, 3], [1, 2]]), "channel_handle": ChannelHandle(2, 1)}) \
        == cross_partition(GRID, [[0, 3], [1, 2]])


def test_padding_and_empty_replica_groups():
    # -1 pads ragged groups; no groups at all means one group of every replica (XLA's convention).
    assert reduction_groups(P0, GRID, {"replica_groups": dense([[0, 1], [-1, -1]])}) == cross_replica(GRID, [[0, 1]])
    assert reduction_groups(P0, GRID, {"replica_groups": dense(np.zeros((0, 0), np.int64))}) \
        == cross_replica(GRID, [[0, 1]])


def test_permute_groups_are_source_target_pairs():
    pairs = permute_groups(P0, GRID, {"source_target_pairs": dense([[0, 1], [1, 0]])})
    assert ids(pairs) == [[(0, 0), (1, 0)], [(0, 1), (1, 1)], [(0, 2), (1, 2)], [(0, 3), (1, 3)],
                          [(1, 0), (0, 0)], [(1, 1), (0, 1)], [(1, 2), (0, 2)], [(1, 3), (0, 3)]]
    pairs = permute_groups(P0, GRID, {"source_target_pairs": dense([[0, 3]]), "channel_handle": ChannelHandle(1, 1)})
    assert ids(pairs) == [[(0, 0), (0, 3)], [(1, 0), (1, 3)]]


@pytest.mark.parametrize("form,rows,message", [
    (cross_replica, [[0, 2]], "replica id 2 but the grid has 2"),
    (cross_partition, [[0, 4]], "partition id 4"),
    (flattened_ids, [[0, 8]], "flattened process id 8"),
    (cross_replica, [[0, 0]], "appears twice"),
])
def test_group_ids_are_validated(form, rows, message):
    with pytest.raises(ValueError, match=message):
        form(GRID, rows)


def test_mesh_axes_groups_with_sub_axes():
    # stablehlo/tests/interpret/all_gather.mlir: mesh x=2, y=4; the major half of y.
    mesh = ('#stablehlo.mesh<axes = [#stablehlo.mesh_axis<name = "x", size = 2>, '
            '#stablehlo.mesh_axis<name = "y", size = 4>]>')
    from hlodbg.engine.ir.attributes import OpaqueAttr

    attr = ReplicaGroupMeshAxes(OpaqueAttr(mesh), (OpaqueAttr('#stablehlo.axis_ref<name = "y", sub_axis_info = (1)2>'),))
    assert mesh_axes_groups(attr) == [[0, 2], [1, 3], [4, 6], [5, 7]]
    attr = ReplicaGroupMeshAxes(OpaqueAttr(mesh), (OpaqueAttr('#stablehlo.axis_ref<name = "y", sub_axis_info = (2)2>'),))
    assert mesh_axes_groups(attr) == [[0, 1], [2, 3], [4, 5], [6, 7]]
    attr = ReplicaGroupMeshAxes(OpaqueAttr(mesh), (OpaqueAttr('#stablehlo.axis_ref<name = "x">'),))
    assert mesh_axes_groups(attr) == [[0, 4], [1, 5], [2, 6], [3, 7]]
    attr = ReplicaGroupMeshAxes(OpaqueAttr(mesh), (OpaqueAttr('#stablehlo.axis_ref<name = "y">'),
                                                    OpaqueAttr('#stablehlo.axis_ref<name = "x">')))
    assert mesh_axes_groups(attr) == [[0, 4, 1, 5, 2, 6, 3, 7]]


def test_mesh_axes_groups_from_an_sdy_mesh_symbol():
    module = hlodbg.load('sdy.mesh @m = <["a"=2, "b"=2], device_ids=[3, 2, 1, 0]>\n'
                         'func.func @main() {\n  return\n}').module
    attr = ReplicaGroupMeshAxes(SymbolRef("m"), (OpaqueAttr('#sdy<axis_ref"a">'),))
    assert mesh_axes_groups(attr, module) == [[3, 1], [2, 0]]


# -- the ops on the 1x1 grid -------------------------------------------------------------------

ALL_REDUCE = """
func.func @main(%x: tensor<4xf32>, %y: tensor<2xi32>) -> (tensor<4xf32>, tensor<2xi32>) {
  %r:2 = "stablehlo.all_reduce"(%x, %y) <{replica_groups = dense<[[0]]> : tensor<1x1xi64>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.multiply %a, %b : tensor<f32>
    %t = stablehlo.add %s, %a : tensor<f32>
    stablehlo.return %t : tensor<f32>
  }) : (tensor<4xf32>, tensor<2xi32>) -> (tensor<4xf32>, tensor<2xi32>)
  return %r#0, %r#1 : tensor<4xf32>, tensor<2xi32>
}"""


def test_all_reduce_of_one_process_returns_its_own_values():
    x = np.array([1.5, -2.0, 0.0, 3.0], np.float32)
    y = np.array([7, -9], np.int32)
    rx, ry = _run_unverified(ALL_REDUCE, x, y)
    np.testing.assert_array_equal(rx, x)
    np.testing.assert_array_equal(ry, y)


def _run_unverified(text, *args):
    # The variadic all_reduce above mixes element types under one f32 body; keep it unverified.
    return Interpreter(hlodbg.load(text, check=False).module).run("main", list(args))


def test_collectives_against_jax_shard_map_on_one_device():
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp
    from jax.sharding import PartitionSpec as P

    mesh = jax.make_mesh((1,), ("x",))

    def f(x):
        return (
            jax.lax.psum(x, "x"),
            jax.lax.pmax(x, "x"),
            jax.lax.pmin(x.astype(jnp.int32), "x"),
            jax.lax.all_gather(x, "x"),
            jax.lax.all_gather(x, "x", tiled=True),
            jax.lax.ppermute(x, "x", [(0, 0)]),
            jax.lax.psum_scatter(x.reshape(1, 6), "x"),
            jax.lax.axis_index("x"),
            jax.lax.all_to_all(x.reshape(2, 3), "x", 0, 1, tiled=True),
        )

    g = jax.jit(jax.shard_map(f, mesh=mesh, in_specs=P(), out_specs=P(), check_vma=False))
    x = np.array([1.5, -2.0, 0.25, 3.0, -0.0, 7.0], np.float32)
    expected = g(x)
    got = run(g.lower(x).as_text(), x)
    assert len(got) == len(expected)
    for e, r in zip(expected, got):
        e = np.asarray(e)
        assert r.dtype == e.dtype and r.shape == e.shape
        np.testing.assert_array_equal(r, e)


def op_program(body: str, arg: str = "tensor<2x3xf32>", result: str = "tensor<2x3xf32>") -> str:
    return f"func.func @main(%x: {arg}) -> {result} {{\n  %r = {body}\n  return %r : {result}\n}}"


X = np.arange(6, dtype=np.float32).reshape(2, 3)


@pytest.mark.parametrize("body,result,expected", [
    ('"stablehlo.all_gather"(%x) <{all_gather_dim = 1 : i64, replica_groups = dense<[[0]]> : tensor<1x1xi64>}>'
     ' : (tensor<2x3xf32>) -> tensor<2x3xf32>', "tensor<2x3xf32>", X),
    ('"stablehlo.all_to_all"(%x) <{split_dimension = 1 : i64, concat_dimension = 0 : i64, split_count = 1 : i64,'
     ' replica_groups = dense<[[0]]> : tensor<1x1xi64>}> : (tensor<2x3xf32>) -> tensor<2x3xf32>', "tensor<2x3xf32>", X),
    ('"stablehlo.collective_broadcast"(%x) <{replica_groups = dense<[[0]]> : tensor<1x1xi64>}>'
     ' : (tensor<2x3xf32>) -> tensor<2x3xf32>', "tensor<2x3xf32>", X),
    ('"stablehlo.collective_permute"(%x) <{source_target_pairs = dense<[[0, 0]]> : tensor<1x2xi64>}>'
     ' : (tensor<2x3xf32>) -> tensor<2x3xf32>', "tensor<2x3xf32>", X),
    ('"stablehlo.collective_permute"(%x) <{source_target_pairs = dense<> : tensor<0x2xi64>}>'
     ' : (tensor<2x3xf32>) -> tensor<2x3xf32>', "tensor<2x3xf32>", np.zeros((2, 3), np.float32)),
    ('"stablehlo.cross-replica-sum"(%x) {replica_groups = dense<[[0]]> : tensor<1x1xi64>}'
     ' : (tensor<2x3xf32>) -> tensor<2x3xf32>', "tensor<2x3xf32>", X),
])
def test_data_collectives_on_one_process(body, result, expected):
    (r,) = run(op_program(body, result=result), X)
    np.testing.assert_array_equal(r, expected)
    assert r.dtype == np.float32


def test_reduce_scatter_and_variadic_all_gather_and_all_to_all():
    text = """
func.func @main(%x: tensor<2x3xf32>, %y: tensor<4xi8>)
    -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<4xi8>, tensor<2x3xf32>, tensor<4xi8>) {
  %r = "stablehlo.reduce_scatter"(%x) <{scatter_dimension = 0 : i64, replica_groups = dense<[[0]]> : tensor<1x1xi64>,
      channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, use_global_device_ids}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.maximum %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %g:2 = "stablehlo.all_gather"(%x, %y) <{all_gather_dim = 0 : i64, replica_groups = dense<[[0]]> : tensor<1x1xi64>}>
      : (tensor<2x3xf32>, tensor<4xi8>) -> (tensor<2x3xf32>, tensor<4xi8>)
  %a:2 = "stablehlo.all_to_all"(%x, %y) <{split_dimension = 0 : i64, concat_dimension = 0 : i64, split_count = 1 : i64,
      replica_groups = dense<[[0]]> : tensor<1x1xi64>}> : (tensor<2x3xf32>, tensor<4xi8>) -> (tensor<2x3xf32>, tensor<4xi8>)
  return %r, %g#0, %g#1, %a#0, %a#1 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<4xi8>, tensor<2x3xf32>, tensor<4xi8>
}"""
    y = np.array([1, -2, 3, -4], np.int8)
    r, g0, g1, a0, a1 = run(text, X, y)
    np.testing.assert_array_equal(r, X)
    for got, expected in ((g0, X), (g1, y), (a0, X), (a1, y)):
        assert got.dtype == expected.dtype
        np.testing.assert_array_equal(got, expected)


def test_replica_and_partition_ids():
    text = """
func.func @main() -> (tensor<ui32>, tensor<ui32>) {
  %r = stablehlo.replica_id : tensor<ui32>
  %p = stablehlo.partition_id : tensor<ui32>
  return %r, %p : tensor<ui32>, tensor<ui32>
}"""
    module = hlodbg.load(text).module
    r, p = Interpreter(module).run("main", [])
    assert r.dtype == np.uint32 and r.shape == () and int(r) == 0 and int(p) == 0
    # The ops read the process the interpreter runs as (the grid issue runs several).
    r, p = Interpreter(module, process=ProcessId(1, 3), grid=Grid(2, 4)).run("main", [])
    assert (int(r), int(p)) == (1, 3)


def test_groups_needing_more_processes_are_clear_errors():
    text = op_program('"stablehlo.all_gather"(%x) <{all_gather_dim = 0 : i64, replica_groups = dense<[[0, 1]]>'
                      ' : tensor<1x2xi64>}> : (tensor<2x3xf32>) -> tensor<4x3xf32>', result="tensor<4x3xf32>")
    with pytest.raises(ExecutionError, match="replica id 1 but the grid has 1"):
        run(text, X)


def test_quantized_permute_fills_with_quantized_zero():
    t = "tensor<3x!quant.uniform<i8:f32, 0.5:-7>>"
    text = op_program('"stablehlo.collective_permute"(%x) <{source_target_pairs = dense<> : tensor<0x2xi64>}>'
                      f' : ({t}) -> {t}', arg=t, result=t)
    (r,) = run(text, np.array([1, 2, 3], np.int8))
    assert r.dtype == np.int8 and r.tolist() == [-7, -7, -7]


# -- channels and feeds --------------------------------------------------------------------------

SEND_RECV = """
func.func @main(%x: tensor<2xf32>, %y: tensor<i32>) -> (tensor<2xf32>, tensor<i32>) {
  %t0 = stablehlo.create_token : !stablehlo.token
  %t1 = "stablehlo.send"(%x, %y, %t0) <{channel_handle = #stablehlo.channel_handle<handle = 5, type = 1>}>
      : (tensor<2xf32>, tensor<i32>, !stablehlo.token) -> !stablehlo.token
  %a, %b, %t2 = "stablehlo.recv"(%t1) <{channel_handle = #stablehlo.channel_handle<handle = 5, type = 1>}>
      : (!stablehlo.token) -> (tensor<2xf32>, tensor<i32>, !stablehlo.token)
  return %a, %b : tensor<2xf32>, tensor<i32>
}"""


def test_send_then_recv_on_one_process():
    a, b = run(SEND_RECV, np.array([1.0, 2.0], np.float32), np.int32(7))
    assert a.tolist() == [1.0, 2.0] and int(b) == 7


def test_recv_without_send_is_a_deadlock_error():
    text = SEND_RECV.replace("handle = 5, type = 1>}>\n      : (!stablehlo.token)", "handle = 6, type = 1>}>\n      : (!stablehlo.token)")
    with pytest.raises(ExecutionError, match="nothing was sent on channel 6.*deadlock"):
        run(text, np.array([1.0, 2.0], np.float32), np.int32(7))


FEEDS = """
func.func @main() -> (tensor<2xi32>, tensor<f32>) {
  %t0 = stablehlo.create_token : !stablehlo.token
  %a, %t1 = "stablehlo.infeed"(%t0) <{infeed_config = ""}> : (!stablehlo.token) -> (tensor<2xi32>, !stablehlo.token)
  %b, %t2 = "stablehlo.infeed"(%t1) <{infeed_config = ""}> : (!stablehlo.token) -> (tensor<f32>, !stablehlo.token)
  %t3 = "stablehlo.outfeed"(%a, %b, %t2) <{outfeed_config = ""}> : (tensor<2xi32>, tensor<f32>, !stablehlo.token) -> !stablehlo.token
  return %a, %b : tensor<2xi32>, tensor<f32>
}"""


def test_infeed_pops_and_outfeed_appends():
    grid = Grid(infeed=deque([[3, 4], (np.float32(2.5),)]))
    a, b = run(FEEDS, grid=grid)
    assert a.dtype == np.int32 and a.tolist() == [3, 4] and float(b) == 2.5
    assert not grid.infeed
    assert len(grid.outfeed) == 1 and [np.asarray(v).tolist() for v in grid.outfeed[0]] == [[3, 4], 2.5]


def test_empty_infeed_is_an_error():
    with pytest.raises(ExecutionError, match="infeed queue is empty"):
        run(FEEDS, grid=Grid(infeed=[[3, 4]]))  # a plain list is accepted as the queue


def test_infeed_values_must_fit_the_result_types():
    with pytest.raises(ExecutionError, match="value 0 from the infeed"):
        run(FEEDS, grid=Grid(infeed=deque([[1, 2, 3]])))
