"""Element provenance of stablehlo.sort and chlo.top_k, checked against the evaluator.

A sorted element is the moved element of its row, placed by the comparator's verdict on the
row's keys (engine/ops/sorting.py says why both are reported). The harness checks the moved
elements with the keys held; the key tests below check the keys: an order-preserving nudge of a
key element changes exactly the result elements it is the moved element of, and any change of a
key element changes only result elements that report it.
"""
from __future__ import annotations

import numpy as np
import pytest

import hlodbg
from hlodbg.engine.ops.provenance import provenance, reach
from hlodbg.engine.ops.sorting import comparator_operands

from tests.provenance_harness import check_provenance, op_under_test

KEYS_AND_VALUES = """
func.func @main(%k: tensor<4x3xf32>, %v: tensor<4x3xi32>) -> (tensor<4x3xf32>, tensor<4x3xi32>) {
  %0:2 = "stablehlo.sort"(%k, %v) <{dimension = 0 : i64, is_stable = true}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<i32>, %d: tensor<i32>):
    %lt = stablehlo.compare GT, %a, %b, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  }) : (tensor<4x3xf32>, tensor<4x3xi32>) -> (tensor<4x3xf32>, tensor<4x3xi32>)
  return %0#0, %0#1 : tensor<4x3xf32>, tensor<4x3xi32>
}
"""

# Two keys compared lexicographically (first, then second), an unstable sort of a third operand.
TWO_KEYS = """
func.func @main(%a: tensor<2x5xi32>, %b: tensor<2x5xf32>, %v: tensor<2x5xf32>) -> (tensor<2x5xi32>, tensor<2x5xf32>, tensor<2x5xf32>) {
  %0:3 = "stablehlo.sort"(%a, %b, %v) <{dimension = 1 : i64, is_stable = false}> ({
  ^bb0(%a0: tensor<i32>, %a1: tensor<i32>, %b0: tensor<f32>, %b1: tensor<f32>, %v0: tensor<f32>, %v1: tensor<f32>):
    %lt = stablehlo.compare LT, %a0, %a1, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %eq = stablehlo.compare EQ, %a0, %a1, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %lt2 = stablehlo.compare LT, %b0, %b1, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %and = stablehlo.and %eq, %lt2 : tensor<i1>
    %or = stablehlo.or %lt, %and : tensor<i1>
    stablehlo.return %or : tensor<i1>
  }) : (tensor<2x5xi32>, tensor<2x5xf32>, tensor<2x5xf32>) -> (tensor<2x5xi32>, tensor<2x5xf32>, tensor<2x5xf32>)
  return %0#0, %0#1, %0#2 : tensor<2x5xi32>, tensor<2x5xf32>, tensor<2x5xf32>
}
"""

# A comparator hlodbg does not recognise (it runs the region): keys are the arguments it reads.
DIFFERENCE = """
func.func @main(%x: tensor<6xf32>, %i: tensor<6xi32>) -> (tensor<6xf32>, tensor<6xi32>) {
  %0:2 = "stablehlo.sort"(%x, %i) <{dimension = 0 : i64, is_stable = true}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<i32>, %d: tensor<i32>):
    %z = stablehlo.constant dense<0.0> : tensor<f32>
    %diff = stablehlo.subtract %a, %b : tensor<f32>
    %lt = stablehlo.compare LT, %diff, %z, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  }) : (tensor<6xf32>, tensor<6xi32>) -> (tensor<6xf32>, tensor<6xi32>)
  return %0#0, %0#1 : tensor<6xf32>, tensor<6xi32>
}
"""

TOP_K = """
func.func @main(%x: tensor<3x5xf32>) -> (tensor<3x2xf32>, tensor<3x2xi32>) {
  %0:2 = chlo.top_k(%x, k = 2) : tensor<3x5xf32> -> (tensor<3x2xf32>, tensor<3x2xi32>)
  return %0#0, %0#1 : tensor<3x2xf32>, tensor<3x2xi32>
}
"""

RNG = np.random.default_rng(7)
KEYS = RNG.permutation(12).reshape(4, 3).astype(np.float32) * 2  # distinct, 2 apart
VALUES = np.arange(12, dtype=np.int32).reshape(4, 3) * 10 + 1
A = np.array([[3, 1, 3, 2, 1], [0, 0, 1, 1, 0]], np.int32)  # ties broken by the second key
B = np.array([[5, 2, 1, 0, 4], [3, 1, 4, 0, 2]], np.float32) * 2
V = np.arange(10, dtype=np.float32).reshape(2, 5) + 0.5
X = np.array([4, -2, 8, 0, 6, 2], np.float32)
TOP = RNG.permutation(15).reshape(3, 5).astype(np.float32) * 2


def test_non_key_operands_are_moved_elements_with_the_keys_held():
    check_provenance(KEYS_AND_VALUES, KEYS, VALUES, held=(0,))
    check_provenance(TWO_KEYS, A, B, V, held=(0, 1))
    check_provenance(DIFFERENCE, X, np.arange(6, dtype=np.int32), held=(0,))


def test_the_keys_are_the_operands_the_comparator_reads():
    assert [comparator_operands(op_under_test(hlodbg.load(t))) for t in (KEYS_AND_VALUES, TWO_KEYS, DIFFERENCE)] == \
        [[0], [0, 1], [0]]


def test_sort_element_names_its_source_position_and_row():
    program = hlodbg.load(KEYS_AND_VALUES)
    op = op_under_test(program)
    results = program.run(KEYS, VALUES)
    answer = provenance(op, (0, 2), result=1, operands=[KEYS, VALUES], results=results)
    source = int(np.argmax(KEYS[:, 2]))  # sorted descending: the largest key of column 2 comes first
    assert (answer.sources[0].operand, answer.sources[0].index, str(answer.sources[0].role)) == (1, (source, 2), "moved element")
    assert sorted(s.index for s in answer.sources[1:]) == [(i, 2) for i in range(4)]
    assert {str(s.role) for s in answer.sources[1:]} == {"compared element"} and {s.operand for s in answer.sources[1:]} == {0}
    assert answer.lines()[0] == f"result(0, 2) is operand({source}, 2) moved from position {source} to position 0 along dimension 0"


def key_nudges(text, args, keys, nudge):
    """For each key element: the result elements an order-preserving nudge changes, and those any change does."""
    program = hlodbg.load(text)
    op = op_under_test(program)
    base = program.run(*args)
    base = list(base) if isinstance(base, (list, tuple)) else [base]
    answers = {(r, at): provenance(op, at, result=r, operands=list(args), results=base)
               for r, value in enumerate(base) for at in np.ndindex(*np.shape(value))}
    for k in keys:
        for element in np.ndindex(*args[k].shape):
            for step, order_kept in ((nudge, True), (-nudge, True), (1000.0, False), (-1000.0, False)):
                trial = [a.copy() for a in args]
                trial[k][element] += step
                got = program.run(*trial)
                got = list(got) if isinstance(got, (list, tuple)) else [got]
                changed = {(r, tuple(int(i) for i in at)) for r, value in enumerate(got)
                           for at in np.argwhere(np.asarray(value) != np.asarray(base[r]))}
                reporting = {key for key, a in answers.items() if any((s.operand, s.index) == (k, element) for s in a.sources)}
                assert changed <= reporting, (k, element, step, sorted(changed - reporting))
                if order_kept:
                    moved = {key for key, a in answers.items()
                             if any((s.operand, s.index, str(s.role)) == (k, element, "moved element") for s in a.sources)}
                    assert changed == moved, (k, element, step)
            want = {(x.result, x.index) for x in reach(op, k, element, operands=list(args), results=base)}
            assert want == reporting


def test_sort_keys_decide_only_their_row_and_a_nudge_moves_only_their_element():
    key_nudges(KEYS_AND_VALUES, [KEYS, VALUES], keys=[0], nudge=0.5)
    key_nudges(TWO_KEYS, [A.astype(np.int32), B, V], keys=[1], nudge=0.5)


def test_top_k_keys_and_indices():
    key_nudges(TOP_K, [TOP], keys=[0], nudge=0.5)
    program = hlodbg.load(TOP_K)
    op = op_under_test(program)
    values, indices = program.run(TOP)
    answer = provenance(op, (1, 1), result=1, operands=[TOP], results=[values, indices])
    second = int(np.argsort(-TOP[1])[1])
    assert answer.lines()[0] == f"result(1, 1) = {second}: the position of the element number 2 from the largest in its row"
    assert sorted(s.index for s in answer.sources) == [(1, j) for j in range(5)]
    value_answer = provenance(op, (1, 1), operands=[TOP], results=[values, indices])
    assert value_answer.sources[0].index == (1, second) and str(value_answer.sources[0].role) == "moved element"


def test_sort_without_values_says_to_run_first():
    op = op_under_test(hlodbg.load(KEYS_AND_VALUES))
    with pytest.raises(Exception, match="run the program to this op first"):
        provenance(op, (0, 0))
