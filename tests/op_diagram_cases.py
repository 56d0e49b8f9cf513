"""Small example ops for the op-diagram tests: a program, its arguments and the element asked about.

Each case's provenance is the family's own answer (`provenance()`), so a golden diagram shows what
hlodbg says about the element; a collective's case gives every device's values, as a grid would.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np

import hlodbg
from hlodbg.engine.ir.phrases import field_text
from hlodbg.engine.machine.process import Grid, ProcessId
from hlodbg.engine.ops.collectives_provenance import GridValues
from hlodbg.engine.ops.provenance import Provenance, provenance
from tests.provenance_harness import op_under_test


class Role:
    """A role in English only, shaped like a Phrase (`en`, `say`), for a provenance a test builds by
    hand (deliberately not a registered Phrase: the phrasebook test would ask for its translations)."""

    def __init__(self, en: str) -> None:
        self.en = en

    def say(self, lang: str = "en", **fields) -> str:
        return self.en.format(**{k: field_text(v) for k, v in fields.items()})

    def __str__(self) -> str:
        return self.en


@dataclass
class Case:
    name: str
    text: str
    args: list
    at: Optional[tuple]
    devices: Optional[dict] = None  # collectives: ProcessId -> (operands, results)

    def load(self):
        program = hlodbg.load(self.text)
        op = op_under_test(program)
        if self.devices is not None:
            return op, None, None
        out = program.run(*self.args)
        results = list(out) if isinstance(out, (list, tuple)) else [out]
        return op, list(self.args), results

    def provenance(self, op, operands, results, process=None) -> Optional[Provenance]:
        if self.at is None:
            return None
        peer_values = GridValues(Grid(num_replicas=len(self.devices)), self.devices) if self.devices else None
        return provenance(op, self.at, operands=operands, results=results, process=process, peer_values=peer_values)


def _binary(name: str, shape_a: str, shape_b: str, shape_out: str, body: str) -> str:
    return (f"func.func @main(%a: tensor<{shape_a}>, %b: tensor<{shape_b}>) -> tensor<{shape_out}> {{\n"
            f"  %r = {body} : (tensor<{shape_a}>, tensor<{shape_b}>) -> tensor<{shape_out}>\n"
            f"  return %r : tensor<{shape_out}>\n}}\n")


def _unary(shape_in: str, shape_out: str, body: str) -> str:
    return (f"func.func @main(%a: tensor<{shape_in}>) -> tensor<{shape_out}> {{\n"
            f"  %r = {body} : (tensor<{shape_in}>) -> tensor<{shape_out}>\n"
            f"  return %r : tensor<{shape_out}>\n}}\n")


ADD_BODY = """({
    ^bb0(%x: tensor<f32>, %y: tensor<f32>):
      %s = stablehlo.add %x, %y : tensor<f32>
      stablehlo.return %s : tensor<f32>
  })"""

GATHER = _binary("gather", "3x4x2xi32", "2x3x2xi64", "2x3x2x2xi32", """"stablehlo.gather"(%a, %b) {
    dimension_numbers = #stablehlo.gather<offset_dims = [2, 3], collapsed_slice_dims = [0], start_index_map = [1, 0], index_vector_dim = 2>,
    slice_sizes = array<i64: 1, 2, 2>, indices_are_sorted = false}""")

SCATTER = """func.func @main(%input: tensor<3x4xf32>, %idx: tensor<2x1xi64>, %upd: tensor<2x4xf32>) -> tensor<3x4xf32> {
  %r = "stablehlo.scatter"(%input, %idx, %upd) """ + ADD_BODY + """ {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, indices_are_sorted = false, unique_indices = false} : (tensor<3x4xf32>, tensor<2x1xi64>, tensor<2x4xf32>) -> tensor<3x4xf32>
  return %r : tensor<3x4xf32>
}
"""

REDUCE_WINDOW = _binary("reduce_window", "4x5xf32", "f32", "3x2xf32", '"stablehlo.reduce_window"(%a, %b) ' + ADD_BODY +
                        " {window_dimensions = array<i64: 2, 3>, window_strides = array<i64: 1, 2>}")

PAD = _binary("pad", "2x3xf32", "f32", "4x6xf32", "stablehlo.pad %a, %b, low = [1, 0], high = [0, 1], interior = [1, 1]")

SLICE = _unary("6x5xi32", "2x3xi32", '"stablehlo.slice"(%a) {start_indices = array<i64: 1, 0>, limit_indices = array<i64: 5, 5>, strides = array<i64: 2, 2>}')

DOT = _binary("dot_general", "3x4xf32", "4x2xf32", "3x2xf32", "stablehlo.dot_general %a, %b, contracting_dims = [1] x [0]")

CONV = _binary("convolution", "1x5x5x1xf32", "3x3x1x1xf32", "1x3x3x1xf32",
               "stablehlo.convolution(%a, %b) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [1, 1]} "
               "{batch_group_count = 1 : i64, feature_group_count = 1 : i64}")

BROADCAST = _unary("3xi32", "2x3xi32", "stablehlo.broadcast_in_dim %a, dims = [1]")

TRANSPOSE = _unary("2x3x4xi32", "4x2x3xi32", "stablehlo.transpose %a, dims = [2, 0, 1]")

CONCAT = _binary("concatenate", "2x3xi32", "1x3xi32", "3x3xi32", "stablehlo.concatenate %a, %b, dim = 0")

ADD = _binary("add", "2x3xf32", "2x3xf32", "2x3xf32", "stablehlo.add %a, %b")

ALL_REDUCE = _unary("2x2xf32", "2x2xf32", '"stablehlo.all_reduce"(%a) ' + ADD_BODY + ' {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}')

ALL_GATHER = _unary("2x2xf32", "2x4xf32", '"stablehlo.all_gather"(%a) {all_gather_dim = 1 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}')

def _f32(shape, start=0):
    return (np.arange(int(np.prod(shape)), dtype=np.float32) + start).reshape(shape)


def _i32(shape, start=0):
    return (np.arange(int(np.prod(shape)), dtype=np.int32) + start).reshape(shape)


def _all_gather_devices():
    operands = {p: _f32((2, 2), 10 * (p.replica_id + 1)) for p in (ProcessId(0, 0), ProcessId(1, 0))}
    gathered = np.concatenate([operands[ProcessId(0, 0)], operands[ProcessId(1, 0)]], axis=1)
    return {p: ([v], [gathered]) for p, v in operands.items()}


def _all_reduce_devices():
    operands = {p: _f32((2, 2), 10 * (p.replica_id + 1)) for p in (ProcessId(0, 0), ProcessId(1, 0))}
    total = operands[ProcessId(0, 0)] + operands[ProcessId(1, 0)]
    return {p: ([v], [total]) for p, v in operands.items()}


CASES = [
    Case("gather", GATHER, [_i32((3, 4, 2)), np.array([[[0, 1], [1, 0], [2, 1]], [[0, 1], [1, 1], [0, 9]]], dtype=np.int64)],
         (1, 0, 1, 0)),
    Case("scatter", SCATTER, [_f32((3, 4)), np.array([[1], [1]], dtype=np.int64), _f32((2, 4), 100)], (1, 2)),
    Case("reduce_window", REDUCE_WINDOW, [_f32((4, 5)), np.float32(0)], (1, 1)),
    Case("pad", PAD, [_f32((2, 3), 1), np.float32(-1)], (1, 2)),
    Case("slice", SLICE, [_i32((6, 5))], (1, 2)),
    Case("dot_general", DOT, [_f32((3, 4)), _f32((4, 2))], (1, 0)),
    Case("convolution", CONV, [_f32((1, 5, 5, 1)), np.ones((3, 3, 1, 1), np.float32)], (0, 1, 2, 0)),
    Case("broadcast_in_dim", BROADCAST, [_i32((3,), 7)], (1, 2)),
    Case("transpose", TRANSPOSE, [_i32((2, 3, 4))], (3, 1, 2)),
    Case("concatenate", CONCAT, [_i32((2, 3)), _i32((1, 3), 6)], (2, 1)),
    Case("add", ADD, [_f32((2, 3)), _f32((2, 3), 10)], (1, 2)),
    Case("all_gather", ALL_GATHER, [], (1, 3), _all_gather_devices()),
    Case("all_reduce", ALL_REDUCE, [], (0, 1), _all_reduce_devices()),
    Case("gather_shapes_only", GATHER, [_i32((3, 4, 2)), np.zeros((2, 3, 2), np.int64)], None),
]
