"""Differential tests of the HLO frontend: the JAX programs of tests/hlo_corpus.py, in every form
XLA prints them in, run through `hlodbg.load(path).run(*inputs)` and reproduce XLA's outputs.

- pre-optimization HLO (`as_text(dialect="hlo")`): global programs, sharded ones included (their
  shard_map bodies sit between Shardy custom calls); they run like the StableHLO form.
- post-optimization HLO with full constants: one program per partition; a sharded one runs on its
  grid with each partition's local shards and gives each partition's local results.
- `compile().as_text()` (constants over 10 elements elided): it opens; running a program with an
  elided constant is refused with a message naming the constant (expected behaviour: the values are
  not in the text); a program without one runs like the full form.
- XLA's own dump files (`--xla_dump_to`) of the MLP.
- the StableHLO form of the same programs: a check of the corpus against today's MLIR path.

Tolerances are per program (hlo_corpus.CORPUS, each with its reason); integers and booleans are
always compared exactly.
"""
from __future__ import annotations

import re

import numpy as np
import pytest

import hlodbg
from hlodbg.engine.ir.errors import ExecutionError
from hlodbg.engine.machine.process import ProcessId
from hlodbg.engine.run.spmd import run_grid
from hlodbg.engine.syntax import hlo as hlo_syntax

from .helpers import assert_close
from .hlo_corpus import BY_NAME, CORPUS, DUMPED, load_arrays

# The frontend is written on other branches; until it is merged these tests cannot run.
needs_hlo_frontend = pytest.mark.skipif(
    not hasattr(hlo_syntax, "HLO"),
    reason="the HLO frontend is not merged yet (engine/syntax/hlo/__init__.py has no HLO object)")

NAMES = [program.name for program in CORPUS]
SINGLE_DEVICE = [program.name for program in CORPUS if not program.spmd]
SPMD = [program.name for program in CORPUS if program.spmd]
ELIDING = [program.name for program in CORPUS if program.elides_constants]
NOT_ELIDING = [program.name for program in CORPUS if not program.elides_constants]


def recorded(directory, name):
    """(global inputs, XLA's global outputs, the npz) of program `name`."""
    data = load_arrays(directory / f"{name}.npz")
    inputs = [data[f"arg{i}"] for i in range(_count(data, "arg"))]
    outputs = [data[f"out{i}"] for i in range(_count(data, "out"))]
    return inputs, outputs, data


def _count(data, prefix: str) -> int:
    return sum(1 for key in data if re.fullmatch(rf"{prefix}\d+", key))


def assert_reproduces(results, expected, name: str, where: str = "") -> None:
    results = list(results)
    assert len(results) == len(expected), f"{name}{where}: {len(results)} results, XLA gives {len(expected)}"
    tolerance = BY_NAME[name].tolerance
    for i, (got, want) in enumerate(zip(results, expected)):
        try:
            assert_close(got, want, tolerance.rtol)
        except AssertionError as error:
            raise AssertionError(f"{name}{where} result {i} (rtol {tolerance.rtol}: {tolerance.why})\n{error}") from None


def load_hlo(path):
    program = hlodbg.load(path)
    assert program.frontend.name == "hlo", f"{path.name} was read by the {program.frontend.name} frontend"
    return program


# -- the StableHLO form: the corpus against today's engine ----------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_stablehlo_form_reproduces_xla(hlo_corpus_dir, name):
    inputs, expected, _ = recorded(hlo_corpus_dir, name)
    results = hlodbg.load(hlo_corpus_dir / f"{name}.stablehlo.mlir").run(*inputs)
    assert_reproduces(results, expected, name, " (StableHLO)")


# -- pre-optimization HLO: global programs ---------------------------------------------------------


@needs_hlo_frontend
@pytest.mark.parametrize("name", NAMES)
def test_pre_optimization_hlo_reproduces_xla(hlo_corpus_dir, name):
    inputs, expected, _ = recorded(hlo_corpus_dir, name)
    results = load_hlo(hlo_corpus_dir / f"{name}.pre.hlo").run(*inputs)
    assert_reproduces(results, expected, name, " (pre-optimization HLO)")


# -- post-optimization HLO with full constants -----------------------------------------------------


# Both printings of the compiled module with full constants: XLA's default options (`%` names,
# signatures, metadata, stack frames) and its short parsable form.
FULL_CONSTANT_FORMS = ["post", "post_parsable"]


@needs_hlo_frontend
@pytest.mark.parametrize("form", FULL_CONSTANT_FORMS)
@pytest.mark.parametrize("name", SINGLE_DEVICE)
def test_post_optimization_hlo_reproduces_xla(hlo_corpus_dir, name, form):
    inputs, expected, _ = recorded(hlo_corpus_dir, name)
    program = load_hlo(hlo_corpus_dir / f"{name}.{form}.hlo")
    assert "{...}" not in program.source
    assert_reproduces(program.run(*inputs), expected, name, f" ({form}.hlo)")


@needs_hlo_frontend
@pytest.mark.parametrize("form", FULL_CONSTANT_FORMS)
@pytest.mark.parametrize("name", SPMD)
def test_post_optimization_spmd_hlo_reproduces_every_partition(hlo_corpus_dir, name, form):
    """The partitioned module runs once per partition (partition-id 0..N-1) on that partition's
    local shards; each partition's results are its shards of XLA's outputs."""
    program = load_hlo(hlo_corpus_dir / f"{name}.{form}.hlo")
    assert_every_partition_reproduces(program, hlo_corpus_dir, name, f"{form}.hlo")


def assert_every_partition_reproduces(program, directory, name: str, form: str) -> None:
    inputs, expected, data = recorded(directory, name)
    partitions = int(data["partitions"])
    assert (program.num_replicas, program.num_partitions) == (1, partitions)
    local_inputs = {ProcessId(0, p): [data[f"arg{i}.dev{p}"] for i in range(len(inputs))] for p in range(partitions)}
    per_partition = run_grid(program.module, local_inputs, entry=program.entry.sym_name)
    assert set(per_partition) == set(local_inputs)
    for p in range(partitions):
        local_expected = [data[f"out{i}.dev{p}"] for i in range(len(expected))]
        assert_reproduces(per_partition[ProcessId(0, p)], local_expected, name, f" ({form}, partition {p})")


# -- compile().as_text(): constants elided ---------------------------------------------------------


def elided_constants(text: str) -> list[str]:
    return re.findall(r"%?([\w.\-]+) = \S+ constant\(\{\.\.\.\}\)", text)


@needs_hlo_frontend
@pytest.mark.parametrize("name", ELIDING)
def test_elided_constants_open_but_running_names_the_constant(hlo_corpus_dir, name):
    """Expected behaviour: the constant's values are not in the text, so the run is refused with a
    message naming the constant and how to get full constants."""
    inputs, _, _ = recorded(hlo_corpus_dir, name)
    program = load_hlo(hlo_corpus_dir / f"{name}.post_elided.hlo")
    elided = elided_constants(program.source)
    assert elided, "the corpus promised an elided constant"
    assert program.op_count > 0
    with pytest.raises(ExecutionError) as error:
        program.run(*inputs)
    message = str(error.value)
    assert any(constant in message for constant in elided), message
    assert "xla_dump_large_constants" in message, message


@needs_hlo_frontend
@pytest.mark.parametrize("name", NOT_ELIDING)
def test_compiled_as_text_without_elided_constants_reproduces_xla(hlo_corpus_dir, name):
    program = load_hlo(hlo_corpus_dir / f"{name}.post_elided.hlo")
    assert not elided_constants(program.source)
    if BY_NAME[name].spmd:
        assert_every_partition_reproduces(program, hlo_corpus_dir, name, "compile().as_text()")
    else:
        inputs, expected, _ = recorded(hlo_corpus_dir, name)
        assert_reproduces(program.run(*inputs), expected, name, " (compile().as_text())")


# -- XLA's dump files ------------------------------------------------------------------------------


@needs_hlo_frontend
@pytest.mark.parametrize("suffix", ["before_optimizations.txt", "cpu_after_optimizations.txt"])
def test_xla_dump_files_reproduce_xla(hlo_corpus_dir, suffix):
    inputs, expected, _ = recorded(hlo_corpus_dir, DUMPED)
    (path,) = (hlo_corpus_dir / "dump").glob(f"module_*.jit_{DUMPED}.{suffix}")
    assert_reproduces(load_hlo(path).run(*inputs), expected, DUMPED, f" ({path.name})")
