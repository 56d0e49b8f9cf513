"""A block's steps are compiled as a run reaches them (CompiledSteps), a slice at a time: a
100k-op function's first state must not wait for 100k steps, and every run must see what the
whole block compiled at once would give."""
from __future__ import annotations

import numpy as np

import hlodbg
from hlodbg.engine.run.interpreter import CompiledSteps, Interpreter

SLICES = 3  # the program spans this many slices and a bit


def _chain_program(ops: int) -> str:
    """%x + a constant chain crossing slice boundaries: constant ops alternate with ops fed by %x."""
    lines = ["func.func @main(%x: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {",
             "  %c0 = stablehlo.constant dense<1.0> : tensor<2xf32>",
             "  %v0 = stablehlo.add %x, %c0 : tensor<2xf32>"]
    for k in range(1, ops // 2):
        lines.append(f"  %c{k} = stablehlo.multiply %c{k - 1}, %c{k - 1} : tensor<2xf32>")
        lines.append(f"  %v{k} = stablehlo.add %v{k - 1}, %c{k} : tensor<2xf32>")
    last = ops // 2 - 1
    lines += [f"  return %c{last}, %v{last} : tensor<2xf32>, tensor<2xf32>", "}"]
    return "\n".join(lines)


OPS = CompiledSteps.SLICE * SLICES + 10
TEXT = _chain_program(OPS)


def test_constant_marks_across_slices_are_those_of_the_whole_block():
    program = hlodbg.load(TEXT)
    interpreter = Interpreter(program.module)
    x = np.array([1.0, 2.0], np.float32)
    constant, value = interpreter.run("main", [x])
    steps, _ = interpreter._compile(program.module.function("main").body)
    marks = [step.foldable for step in steps]
    # %c_k (even places) only ever read constants; %v_k (odd places) read %x.
    assert marks == [k % 2 == 0 for k in range(len(marks))]
    assert len(marks) == len(steps) > CompiledSteps.SLICE * SLICES
    last = len(marks) // 2 - 1
    np.testing.assert_array_equal(constant, np.ones(2, np.float32))
    np.testing.assert_array_equal(value, x + (last + 1))
    again = interpreter.run("main", [x])  # the kept constants serve the second run
    np.testing.assert_array_equal(again[1], value)


def test_a_session_compiles_only_what_its_run_has_reached():
    program = hlodbg.load(TEXT)
    session = program.debug([np.array([1.0, 2.0], np.float32)], persist=False).session
    assert session.op is not None  # the first state: parked before the first op
    compiled = session._recorder._step_of
    assert 0 < len(compiled) <= CompiledSteps.SLICE
    session.continue_()
    assert session.finished and len(compiled) == len(program.module.function("main").body.operations) - 1
    plain = program.run(np.array([1.0, 2.0], np.float32))
    for recorded, expected in zip(session.results, plain):
        np.testing.assert_array_equal(recorded, expected)


def test_step_for_compiles_up_to_the_op_asked_for():
    program = hlodbg.load(TEXT)
    interpreter = Interpreter(program.module)
    body = program.module.function("main").body.operations
    late = body[CompiledSteps.SLICE * 2 + 5]
    step = interpreter.step_for(late)
    assert step.op is late
    assert len(interpreter._step_of) == CompiledSteps.SLICE * 3
    try:
        interpreter.step_for(body[-1])
    except hlodbg.engine.ExecutionError as e:
        assert "not a step of its block" in str(e)
    else:
        raise AssertionError("a terminator has no step")
    assert len(interpreter._step_of) == len(body) - 1
