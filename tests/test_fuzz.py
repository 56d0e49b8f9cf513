"""Mutated corpus files (truncations, deleted/duplicated tokens, swapped characters) produce only
ParseError or VerifyError: never a crash, never a hang."""
from __future__ import annotations

import os
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hlodbg.engine import ParseError, VerifyError, parse_chunks
from hlodbg.engine.verify import verify
from .helpers import PROGRAMS, SAMPLES, corpus_files


_TOKEN = re.compile(r"%[\w#.$-]+|@[\w.$]+|\"[^\"\n]*\"|[\w.]+|->|\S")


def _seed_texts() -> list[str]:
    picks = [SAMPLES / "tiny_model.mlir"]
    if PROGRAMS.is_dir():
        picks += sorted(PROGRAMS.glob("*.mlir"))
    files = corpus_files()
    # A spread of conformance files: one in every forty, small enough to mutate quickly.
    picks += [p for p in files[::40] if p.stat().st_size < 20_000]
    return [p.read_text() for p in picks]


SEEDS = _seed_texts()


@st.composite
def mutated(draw):
    text = draw(st.sampled_from(SEEDS))
    kind = draw(st.sampled_from(["truncate", "delete", "duplicate", "swap", "replace"]))
    tokens = [m.span() for m in _TOKEN.finditer(text)]
    if kind == "truncate":
        cut = draw(st.integers(0, len(text)))
        return text[:cut]
    if kind == "swap":
        i = draw(st.integers(0, len(text) - 2))
        return text[:i] + text[i + 1] + text[i] + text[i + 2:]
    start, end = tokens[draw(st.integers(0, len(tokens) - 1))]
    if kind == "delete":
        return text[:start] + text[end:]
    if kind == "duplicate":
        return text[:end] + " " + text[start:end] + text[end:]
    other_start, other_end = tokens[draw(st.integers(0, len(tokens) - 1))]
    return text[:start] + text[other_start:other_end] + text[end:]


@settings(max_examples=int(os.environ.get("HLODBG_FUZZ_EXAMPLES", "300")), deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(mutated())
def test_mutations_raise_only_parse_or_verify_errors(text):
    try:
        for module in parse_chunks(text, "mutant.mlir"):
            verify(module)
    except (ParseError, VerifyError) as e:
        rendered = e.render()
        assert rendered.startswith(("mutant.mlir:", "error:")), rendered


@pytest.mark.parametrize("depth", [5000])
def test_deep_nesting_is_an_error_not_a_crash(depth):
    text = "func.func @f() -> tensor<f32> {\n  %c = stablehlo.constant dense<" + "[" * depth + "1" + "]" * depth + "> : tensor<f32>\n}"
    with pytest.raises(ParseError):
        parse_chunks(text, "deep.mlir")
