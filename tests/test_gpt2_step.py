"""benchmarks/gpt2_step.py (issue 33's GPT-2-shaped training step) in its --quick shape: JAX's text
parses and verifies, the inputs it writes are the program's arguments in order, and the step runs."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("jax")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import gpt2_step  # noqa: E402 - needs the benchmarks directory on sys.path

import hlodbg  # noqa: E402
from hlodbg.engine.ir.types import TensorType  # noqa: E402


def test_quick_shape_parses_verifies_and_runs(tmp_path):
    program_path, inputs_path = gpt2_step.files(gpt2_step.QUICK, tmp_path)
    program = hlodbg.load(str(program_path))  # parses and verifies
    stored = np.load(inputs_path)
    arguments = [stored[f"arg{i}"] for i in range(len(stored.files))]
    parameters = program.entry.function_type.inputs
    assert len(arguments) == len(parameters) == 1 + gpt2_step.QUICK.layers * 10 + 2  # embed, layers, tokens, targets
    for argument, parameter in zip(arguments, parameters):
        assert isinstance(parameter, TensorType)
        assert tuple(parameter.shape) == argument.shape

    loss, *updated = program.run(*arguments)
    weights = arguments[:-2]  # the SGD step returns every weight, updated in place of the old one
    assert [w.shape for w in updated] == [w.shape for w in weights]
    assert any(not np.array_equal(new, old) for new, old in zip(updated, weights))
    # Small random weights give nearly uniform predictions: the loss is about log(vocabulary).
    assert abs(float(loss) - np.log(gpt2_step.QUICK.vocab)) < 0.5


def test_files_are_written_once(tmp_path):
    program_path, inputs_path = gpt2_step.files(gpt2_step.QUICK, tmp_path)
    written = program_path.stat().st_mtime_ns, inputs_path.stat().st_mtime_ns
    assert gpt2_step.files(gpt2_step.QUICK, tmp_path) == (program_path, inputs_path)
    assert (program_path.stat().st_mtime_ns, inputs_path.stat().st_mtime_ns) == written
    assert not list(tmp_path.glob("*.partial*"))
