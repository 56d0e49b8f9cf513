"""Small example ops for the op-diagram tests: a program, its arguments and the element asked about.

A case without `by_hand` asks the family's provenance function (`provenance()`); a case with one
answers from a provenance built by hand from the spec's semantics (written while the family's
function was not on this branch), with roles named in English only (`Role`, deliberately not a
registered Phrase: the phrasebook test would ask for its translations). The choice is explicit so
that a golden file does not change when a family lands.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np

import hlodbg
from hlodbg.engine.ir.phrases import field_text
from hlodbg.engine.machine.process import ProcessId
from hlodbg.engine.ops.provenance import Provenance, ProvenanceQuery, Source, provenance
from tests.provenance_harness import op_under_test


class Role:
    """A role or step template in English only, shaped like a Phrase (`en`, `say`)."""

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
    by_hand: Optional[Callable] = None  # a provenance function (query -> Provenance) written for the test
    devices: Optional[dict] = None  # collectives: ProcessId -> (operands, results), built by the case

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
        peer_values = (lambda p: self.devices[p]) if self.devices else None
        if self.by_hand is None:
            return provenance(op, self.at, operands=operands, results=results, process=process, peer_values=peer_values)
        return self.by_hand(ProvenanceQuery(op, 0, tuple(self.at), operands, results, process, peer_values))


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

COPIED, GATHERED, START, UPDATE, ORIGINAL, INDEX = (Role("copied element"), Role("gathered element"), Role("start index"),
                                                    Role("update"), Role("original value"), Role("scatter index"))
WINDOW_ELEMENT, INIT, PADDING_VALUE = Role("window element"), Role("init value"), Role("padding value")
LHS, RHS, INPUT, KERNEL = Role("lhs row element"), Role("rhs column element"), Role("input window element"), Role("kernel element")
SAYS = Role("{what}")


def _gather_by_hand(q):
    # result[1, 0, 1, 0]: batch (1, 0) reads start_indices[1, 0, :] = (0, 1); start_index_map [1, 0] puts
    # 0 in dimension 1 and 1 in dimension 0; offsets (1, 0) go to the kept dimensions 1 and 2.
    return q.answer([Source(1, (1, 0, 0), START), Source(1, (1, 0, 1), START), Source(0, (1, 1, 0), GATHERED)],
            [(SAYS, {"what": "batch index (1, 0) reads start_indices[1, 0, :] = (0, 1)"}),
             (SAYS, {"what": "start = (1, 0, 0) (start_index_map = [1, 0]), offset = (0, 1, 0)"}),
             (SAYS, {"what": "result[1, 0, 1, 0] = operand[1, 1, 0]"})])


def _scatter_by_hand(q):
    return q.answer([Source(0, (1, 2), ORIGINAL), Source(1, (0, 0), INDEX), Source(2, (0, 2), UPDATE), Source(1, (1, 0), INDEX),
             Source(2, (1, 2), UPDATE)],
            [(SAYS, {"what": "updates[0, 2] and updates[1, 2] both land on [1, 2] (scatter_indices = 1, 1)"}),
             (SAYS, {"what": "result[1, 2] = add(add(input[1, 2], updates[0, 2]), updates[1, 2])"})])


def _reduce_window_by_hand(q):
    window = [Source(0, (r, c), WINDOW_ELEMENT) for r in (1, 2) for c in (2, 3, 4)]
    return q.answer([Source(1, (), INIT)] + window,
            [(SAYS, {"what": "window start = (1, 1) * strides (1, 2) = (1, 2); window (2, 3) covers rows 1-2, columns 2-4"}),
             (SAYS, {"what": "result[1, 1] = add over init and input[1:3, 2:5]"})])


def _pad_by_hand(q):
    return q.answer([Source(0, (0, 1), COPIED)],
            [(SAYS, {"what": "row: 1 - low 1 = 0 = 0 * (interior 1 + 1) → operand row 0"}),
             (SAYS, {"what": "column: 2 - low 0 = 2 = 1 * (interior 1 + 1) → operand column 1"})])


def _slice_by_hand(q):
    return q.answer([Source(0, (3, 4), COPIED)], [(SAYS, {"what": "operand index = start (1, 0) + (1, 2) * strides (2, 2) = (3, 4)"})])


def _dot_by_hand(q):
    return q.answer([s for k in range(4) for s in (Source(0, (1, k), LHS), Source(1, (k, 0), RHS))],
            [(SAYS, {"what": "result[1, 0] = Σ_k lhs[1, k] · rhs[k, 0], k = 0..3 (contracting dims [1] x [0])"})])


def _conv_by_hand(q):
    return q.answer([s for i in range(3) for j in range(3) for s in (Source(0, (0, 1 + i, 2 + j, 0), INPUT), Source(1, (i, j, 0, 0), KERNEL))],
            [(SAYS, {"what": "output (1, 2) reads the input window starting at (1, 2) * stride (1, 1) = (1, 2)"}),
             (SAYS, {"what": "result[0, 1, 2, 0] = Σ_(i,j) lhs[0, 1+i, 2+j, 0] · rhs[i, j, 0, 0]"})])


def _broadcast_by_hand(q):
    return q.answer([Source(0, (2,), COPIED)], [(SAYS, {"what": "result dimension 1 → operand dimension 0 (broadcast_dimensions = [1]): index 2"})])


def _concat_by_hand(q):
    return q.answer([Source(1, (0, 1), COPIED)], [(SAYS, {"what": "row 2 is past inputs[0] (2 rows): inputs[1] row 2 - 2 = 0"})])


def _add_by_hand(q):
    return q.answer([Source(0, (1, 2), Role("lhs")), Source(1, (1, 2), Role("rhs"))], [(SAYS, {"what": "result[1, 2] = lhs[1, 2] + rhs[1, 2]"})])


def all_gather_by_hand(q):
    """A test-only all_gather provenance over replica group [[0, 1]] (until the grid family lands)."""
    dim = int(q.attr("all_gather_dim"))
    size = q.operand_shape(0)[dim]
    device, within = divmod(q.index[dim], size)
    index = list(q.index)
    index[dim] = within
    return q.answer([Source(0, tuple(index), Role("gathered element"), ProcessId(device, 0))],
                    [(SAYS, {"what": f"result column {q.index[dim]} = device {device}'s column {within}"})])


def all_reduce_by_hand(q):
    """A test-only all_reduce provenance over replica group [[0, 1]]: the same element of both devices."""
    devices = [ProcessId(0, 0), ProcessId(1, 0)]
    return q.answer([Source(0, tuple(q.index), Role("summand"), d) for d in devices],
                    [(SAYS, {"what": f"result{list(q.index)} = add over devices 0, 1 of operand{list(q.index)}"})])


GRID_BY_HAND = {"stablehlo.all_gather": all_gather_by_hand, "stablehlo.all_reduce": all_reduce_by_hand}


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
         (1, 0, 1, 0), _gather_by_hand),
    Case("scatter", SCATTER, [_f32((3, 4)), np.array([[1], [1]], dtype=np.int64), _f32((2, 4), 100)], (1, 2), _scatter_by_hand),
    Case("reduce_window", REDUCE_WINDOW, [_f32((4, 5)), np.float32(0)], (1, 1), _reduce_window_by_hand),
    Case("pad", PAD, [_f32((2, 3), 1), np.float32(-1)], (1, 2), _pad_by_hand),
    Case("slice", SLICE, [_i32((6, 5))], (1, 2), _slice_by_hand),
    Case("dot_general", DOT, [_f32((3, 4)), _f32((4, 2))], (1, 0), _dot_by_hand),
    Case("convolution", CONV, [_f32((1, 5, 5, 1)), np.ones((3, 3, 1, 1), np.float32)], (0, 1, 2, 0), _conv_by_hand),
    Case("broadcast_in_dim", BROADCAST, [_i32((3,), 7)], (1, 2), _broadcast_by_hand),
    Case("transpose", TRANSPOSE, [_i32((2, 3, 4))], (3, 1, 2)),
    Case("concatenate", CONCAT, [_i32((2, 3)), _i32((1, 3), 6)], (2, 1), _concat_by_hand),
    Case("add", ADD, [_f32((2, 3)), _f32((2, 3), 10)], (1, 2), _add_by_hand),
    Case("all_gather", ALL_GATHER, [], (1, 3), all_gather_by_hand, _all_gather_devices()),
    Case("all_reduce", ALL_REDUCE, [], (0, 1), all_reduce_by_hand, _all_reduce_devices()),
    Case("gather_shapes_only", GATHER, [_i32((3, 4, 2)), np.zeros((2, 3, 2), np.int64)], None),
]

HAND_BUILT = [c.name for c in CASES if c.by_hand is not None]
