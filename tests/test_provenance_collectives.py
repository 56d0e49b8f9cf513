"""Element provenance of the collectives, checked on the emulated grid against per-device perturbation.

Each program applies one collective to per-device arguments that differ on every device; the
grid harness perturbs one element of one device's operand at a time, runs the grid again and
checks which devices' result elements change against the reported sources (and `reach`).
"""
from __future__ import annotations

import numpy as np
import pytest

import hlodbg
from hlodbg.engine.machine.process import Grid, ProcessId
from hlodbg.engine.ops.collectives_provenance import GridValues
from hlodbg.engine.ops.provenance import ProvenanceError, provenance
from hlodbg.engine.run.spmd import run_grid

from tests.provenance_grid_harness import check_grid_provenance
from tests.provenance_harness import op_under_test

CHANNEL = "channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>"


def dense(rows) -> str:
    return f"dense<{rows}> : tensor<{len(rows)}x{len(rows[0])}xi64>"


def program(op: str, in_types: list[str], out_types: list[str], body: str = "") -> str:
    params = ", ".join(f"%x{i}: {t}" for i, t in enumerate(in_types))
    operands = ", ".join(f"%x{i}" for i in range(len(in_types)))
    many = len(out_types) > 1
    results = ", ".join(f"%r#{i}" for i in range(len(out_types))) if many else "%r"
    outs = ", ".join(out_types)
    region = ""
    if body:
        element = in_types[0].split("x")[-1].rstrip(">")
        region = (f" ({{\n  ^bb0(%a: tensor<{element}>, %b: tensor<{element}>):\n"
                  f"    %c = stablehlo.{body} %a, %b : tensor<{element}>\n    stablehlo.return %c : tensor<{element}>\n  }})")
    return (f"func.func @main({params}) -> ({outs}) {{\n"
            f"  %r{':' + str(len(out_types)) if many else ''} = \"stablehlo.{op.split('(')[0]}\"({operands}){region} "
            f"{{{op.split('(', 1)[1]}}} : ({', '.join(in_types)}) -> ({outs})\n"
            f"  return {results} : {outs}\n}}\n")


def per_device(replicas, partitions, *shapes, dtype=np.float32):
    """Arguments different on every device: 1 + arange, then 100·device added, signs mixed."""
    grid = Grid(replicas, partitions)
    out = {}
    for p in grid.processes():
        d = grid.device_id(p)
        out[p] = [((np.arange(int(np.prod(s))).reshape(s) + 1 + 100 * d + 1000 * k) * (-1) ** d).astype(dtype)
                  for k, s in enumerate(shapes)]
    return out


F2, F2x4, F4x2 = "tensor<2xf32>", "tensor<2x4xf32>", "tensor<4x2xf32>"

CASES = {
    "all_reduce_cross_replica": (program(f"all_reduce(replica_groups = {dense([[0, 1], [3, 2]])}", [F2], [F2], "add"),
                                 (4, 1), [(2,)], ()),
    "all_reduce_variadic_flattened_ids": (
        program(f"all_reduce(replica_groups = {dense([[0, 3], [1, 2]])}, {CHANNEL}, use_global_device_ids",
                [F2, F2], [F2, F2], "maximum"), (2, 2), [(2,), (2,)], ()),
    "collective_reduce": (program(f"collective_reduce(replica_groups = {dense([[1, 0], [2, 3]])}", [F2], [F2], "add"),
                          (4, 1), [(2,)], ()),
    "reduce_scatter_replica_and_partition": (
        program(f"reduce_scatter(scatter_dimension = 1 : i64, replica_groups = {dense([[1, 0]])}, {CHANNEL}",
                [F2x4], ["tensor<2x1xf32>"], "add"), (2, 2), [(2, 4)], ()),
    "all_gather_reordered_group": (program(f"all_gather(all_gather_dim = 0 : i64, replica_groups = {dense([[1, 0]])}",
                                           ["tensor<2x2xf32>"], [F4x2]), (2, 1), [(2, 2)], ()),
    "all_to_all_cross_partition": (
        program(f"all_to_all(split_dimension = 1 : i64, concat_dimension = 0 : i64, split_count = 2 : i64, "
                f"replica_groups = {dense([[0, 1], [3, 2]])}, {CHANNEL}", [F2x4], ["tensor<4x2xf32>"]),
        (1, 4), [(2, 4)], ()),
    "all_to_all_same_dimension": (
        program(f"all_to_all(split_dimension = 0 : i64, concat_dimension = 0 : i64, split_count = 2 : i64, "
                f"replica_groups = {dense([[1, 0]])}", ["tensor<4xf32>"], ["tensor<4xf32>"]), (2, 1), [(4,)], ()),
    "collective_permute_with_a_silent_device": (
        program(f"collective_permute(source_target_pairs = {dense([[0, 1], [1, 2]])}", [F2], [F2]), (3, 1), [(2,)], ()),
    "collective_broadcast": (program(f"collective_broadcast(replica_groups = {dense([[2, 3], [1, 0]])}", [F2], [F2]),
                             (4, 1), [(2,)], ()),
}


@pytest.mark.parametrize("name", CASES)
def test_collective_provenance_matches_the_grid_run(name):
    text, (replicas, partitions), shapes, held = CASES[name]
    counts = check_grid_provenance(text, per_device(replicas, partitions, *shapes), replicas, partitions, held=held)
    assert counts["perturbed"] == replicas * partitions * sum(int(np.prod(s)) for s in shapes)


def test_dynamic_root_broadcast_reports_the_root_index():
    text = ("func.func @main(%x: tensor<2xf32>, %root: tensor<1xi32>) -> tensor<2xf32> {\n"
            f"  %r = \"stablehlo.collective_broadcast\"(%x, %root) {{replica_groups = {dense([[0, 1, 2]])}, has_dynamic_root}}"
            " : (tensor<2xf32>, tensor<1xi32>) -> tensor<2xf32>\n  return %r : tensor<2xf32>\n}\n")
    inputs = per_device(3, 1, (2,))
    for p in inputs:
        inputs[p].append(np.array([2], np.int32))
    check_grid_provenance(text, inputs, 3, 1, held=(1,))


def test_dynamic_root_reduce_reports_the_root_it_delivers_to():
    text = ("func.func @main(%x: tensor<2xf32>, %root: tensor<1xi32>) -> tensor<2xf32> {\n"
            "  %r = \"stablehlo.collective_reduce\"(%x, %root) ({\n"
            "  ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n    %c = stablehlo.add %a, %b : tensor<f32>\n"
            "    stablehlo.return %c : tensor<f32>\n"
            f"  }}) {{replica_groups = {dense([[0, 1, 2]])}, has_dynamic_root}}"
            " : (tensor<2xf32>, tensor<1xi32>) -> tensor<2xf32>\n  return %r : tensor<2xf32>\n}\n")
    inputs = per_device(3, 1, (2,))
    for p in inputs:
        inputs[p].append(np.array([2], np.int32))
    check_grid_provenance(text, inputs, 3, 1, held=(1,))


def answer_on_grid(text, replicas, partitions, process, index, shapes):
    program_ = hlodbg.load(text)
    op = op_under_test(program_)
    inputs = per_device(replicas, partitions, *shapes)
    results = run_grid(program_.module, inputs, num_replicas=replicas, num_partitions=partitions)
    peers = GridValues(Grid(replicas, partitions), {p: (inputs[p], [results[p]]) for p in inputs})
    return provenance(op, index, operands=inputs[process], results=[results[process]], process=process, peer_values=peers)


def test_all_gather_names_the_device_and_its_element():
    text, _, shapes, _ = CASES["all_gather_reordered_group"]
    answer = answer_on_grid(text, 2, 1, ProcessId(0, 0), (1, 1), shapes)
    (source,) = answer.sources
    assert (source.device, source.index, str(source.role)) == (ProcessId(1, 0), (1, 1), "gathered element")
    assert answer.lines()[-1] == ("all_gather_dim 0: position 1 = 0·2+1: member 0, device 1 (replica 1, partition 0), "
                                  "operand(1, 1)")
    assert answer.lines()[0] == "device 0 (replica 0, partition 0) is member 1 of the process group of devices (1, 0)"


def test_permute_without_sender_is_zeros_with_no_source():
    text, _, shapes, _ = CASES["collective_permute_with_a_silent_device"]
    answer = answer_on_grid(text, 3, 1, ProcessId(0, 0), (0,), shapes)
    assert answer.sources == () and "its result is zeros" in answer.lines()[0]


def test_a_single_device_needs_no_grid_and_other_devices_do():
    text, _, _, _ = CASES["all_reduce_cross_replica"]
    op = op_under_test(hlodbg.load(text.replace("[[0, 1], [3, 2]]", "[[0]]").replace("2x2xi64", "1x1xi64")))
    answer = provenance(op, (1,))
    assert [(s.device, s.index) for s in answer.sources] == [(ProcessId(0, 0), (1,))]
    with pytest.raises(ProvenanceError, match="pass peer_values=GridValues"):
        provenance(op, (1,), process=ProcessId(1, 0))
