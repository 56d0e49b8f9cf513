"""A plain run drops every value after its last use (engine/run/plan.py, liveness.py) and offers
dying operands' buffers to evaluators (`OpCall.reuse`): it never frees or overwrites something
still needed — a value used again in a later loop iteration, one a region captures, a result
that is also an argument, a value returned twice, a tuple member, a value both branches of a case
read, a call's or a loop's result that is its operand — and never writes an argument.

Each program runs three ways: the observed loop (a listener attached: every value kept), the
plain loop, and the plain loop with every evaluator taking any buffer it is offered (what an
evaluator writing into a dead operand does at most), each twice (a plain run's block runs in the
loop the first time, compiled the next: engine/run/block_code.py); all must agree bit for bit.
"""
from __future__ import annotations

import hashlib
import weakref

import numpy as np
import pytest

import hlodbg
from hlodbg.engine.run import block_code
from hlodbg.engine.run.interpreter import Interpreter, Listener

F4 = "tensor<4xf32>"


def greedy(step):
    """`step` with an evaluator that writes its result into the first operand it may reuse."""
    evaluate = step.evaluator

    def taking(call, *operands):
        out = evaluate(call, *operands)
        for i in call.reuse:
            buffer = operands[i]
            if (isinstance(out, np.ndarray) and isinstance(buffer, np.ndarray) and buffer.flags.writeable
                    and buffer.flags.owndata and buffer.shape == out.shape and buffer.dtype == out.dtype):
                buffer[...] = out
                TAKEN.append(call.op.name)
                return buffer
        return out

    step.evaluator = taking
    return step


TAKEN: list[str] = []


@pytest.fixture(autouse=True)
def reuse_at_every_size(monkeypatch):
    """These programs' small arrays would skip the dying-operand check in compiled blocks
    (block_code.REUSE_MOST_ELEMENTS): offer reuse at every size, which is what is tested."""
    monkeypatch.setattr(block_code, "REUSE_MOST_ELEMENTS", -1)


def interpreter(text: str, how: str) -> Interpreter:
    module = hlodbg.load(text).module
    if how == "observed":
        return Interpreter(module, listeners=[Listener()])
    found = Interpreter(module)
    if how == "greedy":
        make = found.plan._make_step
        found.plan._make_step = lambda op: greedy(make(op))
    return found


def checksum(arrays) -> str:
    digest = hashlib.sha256()
    for a in arrays:
        digest.update(np.ascontiguousarray(a).tobytes())
    return digest.hexdigest()


def run_three_ways(text: str, args: list) -> list:
    before = checksum(args)
    runs = {}
    for how in ("observed", "plain", "greedy"):
        chosen = interpreter(text, how)
        assert chosen.plain == (how != "observed")
        # Twice: a block's first plain run is the loop's, the second its compiled function's.
        for again in ("", " again"):
            runs[how + again] = [np.array(r) for r in chosen.run("main", args)]
            assert checksum(args) == before, f"the {how}{again} run wrote into an argument"
    for how in ("plain", "greedy", "plain again", "greedy again", "observed again"):
        assert len(runs[how]) == len(runs["observed"])
        for mine, theirs in zip(runs[how], runs["observed"]):
            assert mine.tobytes() == theirs.tobytes(), how
    return runs["plain"]


def x4() -> np.ndarray:
    return np.array([0.5, -1.25, 2.0, 3.5], np.float32)


def test_a_captured_value_used_by_every_iteration_and_after_the_loop_survives():
    text = f"""func.func @main(%x: {F4}) -> ({F4}, {F4}) {{
  %c = stablehlo.exponential %x : {F4}
  %zero = stablehlo.constant dense<0> : tensor<i64>
  %one = stablehlo.constant dense<1> : tensor<i64>
  %n = stablehlo.constant dense<3> : tensor<i64>
  %r:2 = stablehlo.while(%i = %zero, %acc = %x) : tensor<i64>, {F4}
    cond {{
      %p = stablehlo.compare LT, %i, %n : (tensor<i64>, tensor<i64>) -> tensor<i1>
      stablehlo.return %p : tensor<i1>
    }} do {{
      %t = stablehlo.add %acc, %c : {F4}
      %u = stablehlo.multiply %t, %t : {F4}
      %v = stablehlo.negate %u : {F4}
      %w = stablehlo.sine %v : {F4}
      %j = stablehlo.add %i, %one : tensor<i64>
      stablehlo.return %j, %w : tensor<i64>, {F4}
    }}
  %after = stablehlo.add %c, %r#1 : {F4}
  return %after, %c : {F4}, {F4}
}}"""
    TAKEN.clear()
    results = run_three_ways(text, [x4()])
    np.testing.assert_array_equal(results[1], np.exp(x4()))
    assert TAKEN, "no evaluator was offered a dying buffer: the test would prove nothing"


def test_a_result_that_is_an_argument_and_a_value_returned_twice():
    text = f"""func.func @main(%x: {F4}) -> ({F4}, {F4}, {F4}, {F4}) {{
  %a = stablehlo.abs %x : {F4}
  %b = stablehlo.negate %a : {F4}
  %c = stablehlo.exponential %b : {F4}
  return %x, %c, %c, %x : {F4}, {F4}, {F4}, {F4}
}}"""
    results = run_three_ways(text, [x4()])
    np.testing.assert_array_equal(results[0], x4())
    np.testing.assert_array_equal(results[1], results[2])


def test_a_call_result_aliasing_its_operand_is_not_overwritten_while_the_operand_lives():
    text = f"""func.func @identity(%y: {F4}) -> {F4} {{
  return %y : {F4}
}}
func.func @main(%x: {F4}) -> {F4} {{
  %w = stablehlo.exponential %x : {F4}
  %r = func.call @identity(%w) : ({F4}) -> {F4}
  %s = stablehlo.negate %r : {F4}
  %t = stablehlo.add %w, %s : {F4}
  return %t : {F4}
}}"""
    results = run_three_ways(text, [x4()])
    np.testing.assert_array_equal(results[0], np.zeros(4, np.float32))


def test_a_loop_result_that_is_its_operand_is_not_overwritten_while_the_operand_lives():
    text = f"""func.func @main(%x: {F4}) -> {F4} {{
  %w = stablehlo.exponential %x : {F4}
  %zero = stablehlo.constant dense<0> : tensor<i64>
  %r:2 = stablehlo.while(%i = %zero, %s = %w) : tensor<i64>, {F4}
    cond {{
      %p = stablehlo.compare LT, %i, %zero : (tensor<i64>, tensor<i64>) -> tensor<i1>
      stablehlo.return %p : tensor<i1>
    }} do {{
      stablehlo.return %i, %s : tensor<i64>, {F4}
    }}
  %n = stablehlo.negate %r#1 : {F4}
  %t = stablehlo.add %w, %n : {F4}
  return %t : {F4}
}}"""
    results = run_three_ways(text, [x4()])
    np.testing.assert_array_equal(results[0], np.zeros(4, np.float32))


def test_a_tuple_member_lives_as_long_as_its_tuple_and_what_is_read_out_of_it():
    T = f"tuple<{F4}, {F4}>"
    text = f"""func.func @main(%x: {F4}) -> ({F4}, {F4}) {{
  %a = stablehlo.exponential %x : {F4}
  %b = stablehlo.negate %x : {F4}
  %t = stablehlo.tuple %a, %b : {T}
  %e = stablehlo.get_tuple_element %t[0] : ({T}) -> {F4}
  %s = stablehlo.sine %e : {F4}
  %f = stablehlo.get_tuple_element %t[1] : ({T}) -> {F4}
  %g = stablehlo.add %f, %a : {F4}
  return %s, %g : {F4}, {F4}
}}"""
    run_three_ways(text, [x4()])


def test_a_value_both_branches_of_a_case_read_survives_the_branch_taken():
    text = f"""func.func @main(%x: {F4}, %k: tensor<i32>) -> ({F4}, {F4}) {{
  %v = stablehlo.exponential %x : {F4}
  %r = "stablehlo.case"(%k) ({{
    %p = stablehlo.negate %v : {F4}
    stablehlo.return %p : {F4}
  }}, {{
    %q = stablehlo.multiply %v, %v : {F4}
    stablehlo.return %q : {F4}
  }}) : (tensor<i32>) -> {F4}
  %s = stablehlo.sine %r : {F4}
  %after = stablehlo.add %v, %s : {F4}
  return %after, %v : {F4}, {F4}
}}"""
    for k in (0, 1, 7):
        results = run_three_ways(text, [x4(), np.array(k, np.int32)])
        np.testing.assert_array_equal(results[1], np.exp(x4()))


def test_arguments_are_never_offered_for_reuse():
    text = f"""func.func @main(%x: {F4}, %y: {F4}) -> {F4} {{
  %a = stablehlo.add %x, %y : {F4}
  return %a : {F4}
}}"""
    x, y = x4(), x4() * 2
    x.flags.writeable = True
    TAKEN.clear()
    results = run_three_ways(text, [x, y])
    assert TAKEN == []
    np.testing.assert_array_equal(results[0], x4() * 3)


def test_a_plain_run_drops_each_value_after_its_last_use():
    # Conversions change the dtype at each op, so no result can be a reused operand.
    text = """func.func @main(%x: tensor<64xf32>) -> tensor<64xf32> {
  %a = stablehlo.exponential %x : tensor<64xf32>
  %b = stablehlo.convert %a : (tensor<64xf32>) -> tensor<64xf64>
  %c = stablehlo.convert %b : (tensor<64xf64>) -> tensor<64xf16>
  %d = stablehlo.convert %c : (tensor<64xf16>) -> tensor<64xf32>
  %e = stablehlo.add %d, %x : tensor<64xf32>
  return %e : tensor<64xf32>
}"""
    alive_at_last: dict[str, dict] = {}

    def watched(how: str) -> Interpreter:
        found = interpreter(text, how)
        outputs: dict[str, weakref.ref] = {}
        make = found.plan._make_step

        def spying(op):
            step = make(op)
            evaluate = step.evaluator

            def spy(call, *operands):
                if call.op.name == "stablehlo.add":
                    alive_at_last[how] = {name: ref() is not None for name, ref in outputs.items() if name != "%e"}
                out = evaluate(call, *operands)
                outputs[call.op.results[0].name] = weakref.ref(out)
                return out

            step.evaluator = spy
            return step

        found.plan._make_step = spying
        return found

    for how in ("plain", "observed"):
        running = watched(how)
        for _ in range(2):  # the loop's run, then the compiled block's
            running.run("main", [np.linspace(0, 1, 64, dtype=np.float32)])
            # the observed loop lets values go after their last use too (its listeners have them)
            assert alive_at_last[how] == {"%a": False, "%b": False, "%c": False, "%d": True}


@pytest.mark.parametrize("count", [0, 1, 5])
def test_loop_state_is_right_after_any_number_of_iterations(count):
    text = f"""func.func @main(%x: {F4}, %n: tensor<i64>) -> ({F4}, {F4}) {{
  %zero = stablehlo.constant dense<0> : tensor<i64>
  %one = stablehlo.constant dense<1> : tensor<i64>
  %r:3 = stablehlo.while(%i = %zero, %a = %x, %b = %x) : tensor<i64>, {F4}, {F4}
    cond {{
      %p = stablehlo.compare LT, %i, %n : (tensor<i64>, tensor<i64>) -> tensor<i1>
      stablehlo.return %p : tensor<i1>
    }} do {{
      %s = stablehlo.add %a, %b : {F4}
      %h = stablehlo.cosine %s : {F4}
      %j = stablehlo.add %i, %one : tensor<i64>
      stablehlo.return %j, %h, %a : tensor<i64>, {F4}, {F4}
    }}
  return %r#1, %r#2 : {F4}, {F4}
}}"""
    run_three_ways(text, [x4(), np.array(count, np.int64)])
