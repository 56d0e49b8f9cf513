"""Every move lands where a plain run says it should (issue 33): random sequences of moves on a
session that keeps almost nothing (a tiny budget, a checkpoint at nearly every op, so values are
dropped and recomputed all the time) against the same moves on a session that keeps everything,
whose run is itself checked against a plain run. Positions, ops, frames, operands and results
must agree at every stop."""
from __future__ import annotations

from pathlib import Path
from unittest import mock

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import hlodbg
from hlodbg.engine.debug import values as values_module

HERE = Path(__file__).resolve().parent
SHARED = HERE.parents[1] / "shared" / "programs"

LOOP_WITH_CALLS = """
func.func @main(%x: tensor<8xf32>, %n: tensor<i32>) -> (tensor<8xf32>, tensor<f32>) {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %r:2 = stablehlo.while(%i = %c0, %acc = %x) : tensor<i32>, tensor<8xf32>
    cond {
      %lt = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %lt : tensor<i1>
    } do {
      %one = stablehlo.constant dense<1> : tensor<i32>
      %next = stablehlo.add %i, %one : tensor<i32>
      %two = stablehlo.constant dense<2> : tensor<i32>
      %rem = stablehlo.remainder %i, %two : tensor<i32>
      %zero = stablehlo.constant dense<0> : tensor<i32>
      %even = stablehlo.compare EQ, %rem, %zero : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %y = "stablehlo.if"(%even) ({
        %u = func.call @update(%acc, %i) : (tensor<8xf32>, tensor<i32>) -> tensor<8xf32>
        stablehlo.return %u : tensor<8xf32>
      }, {
        %s = stablehlo.sine %acc : tensor<8xf32>
        stablehlo.return %s : tensor<8xf32>
      }) : (tensor<i1>) -> tensor<8xf32>
      stablehlo.return %next, %y : tensor<i32>, tensor<8xf32>
    }
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %sum = stablehlo.reduce(%r#1 init: %zero) applies stablehlo.add across dimensions = [0] : (tensor<8xf32>, tensor<f32>) -> tensor<f32>
  return %r#1, %sum : tensor<8xf32>, tensor<f32>
}

func.func private @update(%a: tensor<8xf32>, %i: tensor<i32>) -> tensor<8xf32> {
  %f = stablehlo.convert %i : (tensor<i32>) -> tensor<f32>
  %b = stablehlo.broadcast_in_dim %f, dims = [] : (tensor<f32>) -> tensor<8xf32>
  %d = stablehlo.multiply %a, %b : tensor<8xf32>
  %e = stablehlo.exponential %d : tensor<8xf32>
  %s = stablehlo.sqrt %e : tensor<8xf32>
  return %s : tensor<8xf32>
}
"""


def _cases():
    cases = [("loop_with_calls", LOOP_WITH_CALLS, [np.linspace(-1, 1, 8, dtype=np.float32), np.int32(9)]),
             ("nan_in_loop", (HERE / "data" / "nan_in_loop.mlir").read_text(), [np.full(4, 100, np.float32)])]
    for name in ("rnn_scan", "sort_topk", "gpt_tiny"):
        path = SHARED / f"{name}.mlir"
        if path.exists():
            with np.load(SHARED / f"{name}.inputs.npz") as inputs:
                cases.append((name, path.read_text(), [inputs[f"arg{i}"] for i in range(len(inputs.files))]))
    return cases


CASES = _cases()
MOVES = ("step", "back", "step_in", "back_in", "step_out", "back_out", "continue_", "reverse_continue",
         "goto", "restart", "run_to")


def _same(left, right) -> bool:
    left, right = list(left), list(right)
    return len(left) == len(right) and all(
        np.asarray(a).dtype == np.asarray(b).dtype and np.asarray(a).tobytes() == np.asarray(b).tobytes()
        for a, b in zip(left, right))


def _where(session) -> tuple:
    stack = tuple(info.describe() for info in session.stack)
    op = session.op
    return session.position, op.name if op is not None else None, stack, session.finished


def _apply(session, move: str, number: int) -> str:
    if move == "goto":
        limit = max(1, len(session.trace))
        return session.goto(number % limit).reason
    if move == "run_to":
        ops = [op for op in session.trace.ops[:64] if op.results]
        if not ops:
            return "none"
        try:
            return session.run_to(ops[number % len(ops)]).reason
        except hlodbg.HlodbgError:
            return "refused"
    return getattr(session, move)().reason


@pytest.mark.parametrize("name,program,args", CASES, ids=[case[0] for case in CASES])
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(moves=st.lists(st.tuples(st.sampled_from(MOVES), st.integers(0, 10_000)), min_size=1, max_size=14),
       breakpoint_kind=st.sampled_from(["none", "op", "nan"]))
def test_random_moves_land_where_a_session_keeping_everything_lands(name, program, args, moves, breakpoint_kind):
    loaded = hlodbg.load(program)
    arguments = args
    keeping = loaded.session(arguments, persist=False)
    with mock.patch.object(values_module, "FIRST_CHECKPOINT_SECONDS", 1e-7):
        dropping = loaded.session(arguments, persist=False, memory=2048)
    try:
        if breakpoint_kind == "op":
            lines = [op.pos.line for op in loaded.module.function("main").ops if op.results and op.pos is not None]
            spec = f"line {lines[min(3, len(lines) - 1)]}"
            keeping.break_at(spec), dropping.break_at(spec)
        elif breakpoint_kind == "nan":
            keeping.break_at("nan"), dropping.break_at("nan")
        for move, number in moves:
            expected = _apply(keeping, move, number)
            assert _apply(dropping, move, number) == expected, move
            assert _where(dropping) == _where(keeping), move
            if not keeping.finished:
                assert _same(dropping.operands(), keeping.operands()), move
                assert _same(dropping.outputs(), keeping.outputs()), move
        keeping.continue_(), dropping.continue_()
        while keeping.continue_().reason != "end":
            dropping.continue_()
        while dropping.continue_().reason != "end":
            pass
        plain = loaded.run(*arguments)
        assert _same(keeping.results, plain) and _same(dropping.results, plain)
    finally:
        keeping.close(), dropping.close()
