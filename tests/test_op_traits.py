"""Facts about ops are traits on their definitions (engine/ir/opdefs.py): every op the
interpreter can run has a definition, and the traits answer what the engine asks."""
from __future__ import annotations

import pytest

import hlodbg
from hlodbg.engine.ir.opset import (
    OPS,
    callee_attribute,
    effect_of,
    has_aliasing_regions,
    has_expandable_body,
    is_collective,
    is_foldable,
    is_replayable,
    is_terminator,
)
from hlodbg.engine.ops import load_families
from hlodbg.engine.ops.registry import EVALUATORS
from hlodbg.engine.syntax import MLIR, frontend_for


def test_every_op_with_an_evaluator_has_a_definition():
    load_families()
    assert sorted(set(EVALUATORS) - set(OPS)) == []


@pytest.mark.parametrize("name", ["func.return", "stablehlo.return", "sdy.return", "mhlo.return", "chlo.return"])
def test_block_terminators(name):
    assert is_terminator(name)


def test_non_terminators():
    assert not is_terminator("stablehlo.add") and not is_terminator("stablehlo.while")
    assert not is_terminator("stablehlo.no_such_op")


def test_effects_decide_folding_and_replay():
    # Pure ops fold on constants unless they have regions to run.
    assert is_foldable("stablehlo.add", False) and not is_foldable("stablehlo.reduce", True)
    # Depends on the process or records something: never folded, but the same again.
    for name in ("stablehlo.replica_id", "stablehlo.partition_id", "stablehlo.after_all", "check.expect_eq",
                 "func.call", "stablehlo.composite", "interpreter.run_parallel"):
        assert effect_of(name) == "impure" and not is_foldable(name, False) and is_replayable(name), name
    # Randomness, queues, other processes, the outside world: never folded, never replayed.
    for name in ("stablehlo.rng", "stablehlo.rng_bit_generator", "stablehlo.custom_call", "stablehlo.infeed",
                 "stablehlo.outfeed", "stablehlo.send", "stablehlo.recv", "stablehlo.all_reduce",
                 "stablehlo.cross-replica-sum", "interpreter.probe", "interpreter.print", "sdy.manual_computation"):
        assert effect_of(name) == "not_replayable" and not is_replayable(name), name
    # Ops without a definition take their dialect's effect.
    assert effect_of("check.some_future_check") == "impure"
    assert effect_of("sdy.some_future_op") == "not_replayable"
    assert effect_of("stablehlo.no_such_op") == "pure"


def test_collectives_calls_aliasing_and_expandable_bodies():
    collectives = {name for name in OPS if is_collective(name)}
    assert collectives == {"stablehlo.all_reduce", "stablehlo.all_gather", "stablehlo.reduce_scatter",
                           "stablehlo.all_to_all", "stablehlo.collective_broadcast",
                           "stablehlo.collective_permute", "stablehlo.cross-replica-sum",
                           "stablehlo.collective_reduce", "hlo.ragged_all_to_all"}
    # async_start meets no one itself: the collective in its body does.
    assert not is_collective("stablehlo.async_start") and not is_collective("stablehlo.async_done")
    assert {name for name in OPS if has_aliasing_regions(name)} == {
        "func.call", "stablehlo.composite", "stablehlo.while", "stablehlo.if", "stablehlo.case",
        "hlo.fusion", "hlo.async_start"}
    # hlo.conditional's branches take the operands after the selector, not the op's operands in
    # order: the debugger must not show the selector as a branch's argument.
    assert not has_aliasing_regions("hlo.conditional")
    assert {name for name in OPS if has_expandable_body(name)} == {
        "stablehlo.reduce", "stablehlo.reduce_window", "stablehlo.scatter", "stablehlo.sort", "stablehlo.map",
        "stablehlo.select_and_scatter", "stablehlo.all_reduce", "stablehlo.reduce_scatter",
        "stablehlo.collective_reduce"}
    assert callee_attribute("func.call") == "callee" and callee_attribute("stablehlo.composite") == "decomposition"
    assert callee_attribute("hlo.fusion") == "callee" and callee_attribute("hlo.async_start") == "callee"
    assert callee_attribute("stablehlo.add") is None


def test_per_tensor_quantization_is_a_trait_of_the_ops_the_spec_restricts():
    # The spec's Inputs tables: "per-tensor quantized tensor" for abs, reduce, gather, ...;
    # "quantized tensor" (per-axis too) for add, reshape, transpose, while, ...
    for name in ("stablehlo.abs", "stablehlo.reduce", "stablehlo.gather", "stablehlo.optimization_barrier"):
        assert OPS[name].per_tensor_quantized, name
    for name in ("stablehlo.add", "stablehlo.reshape", "stablehlo.transpose", "stablehlo.while",
                 "stablehlo.broadcast_in_dim", "stablehlo.uniform_quantize", "chlo.tan"):
        assert not OPS[name].per_tensor_quantized, name


def test_the_frontend_is_picked_from_the_text_or_the_file_name():
    assert frontend_for("module {\n}") is MLIR
    assert frontend_for("// a comment\nfunc.func @main() {\n  return\n}") is MLIR
    assert frontend_for("", "prog.mlir") is MLIR
    assert MLIR.recognizes("#loc = loc(unknown)\nmodule {}")
    assert not MLIR.recognizes("HloModule m\n\nENTRY e {\n}")


def test_a_one_line_program_is_text_and_a_path_is_a_path(tmp_path):
    program = hlodbg.load("module {}")
    assert program.path is None and program.module is not None
    odd = tmp_path / "module {x}.mlir"  # a file name that looks like text
    odd.write_text("module {\n}\n")
    assert hlodbg.load(str(odd)).path == odd
    with pytest.raises(hlodbg.ParseError, match="no such file"):
        hlodbg.load(str(tmp_path / "missing.mlir"))
