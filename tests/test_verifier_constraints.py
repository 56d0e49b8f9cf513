"""Table-driven verifier tests: one small program per numbered constraint of the StableHLO spec.

The tables are the `.mlir` files in tests/data/constraints/ (one file per op family). Each file is
split by `// -----` lines into chunks, and every chunk starts with one annotation comment:

    // expect-error: stablehlo.pad C2
    //   The chunk is one invalid program. Verifying it must fail, and the first error must
    //   - start with the op name (`stablehlo.pad: ...`),
    //   - contain the constraint's label in parentheses (`(C2)`), and
    //   - point at the line of the first op of that name in the chunk.
    //   The label is the spec's constraint number (C1, C2, ...). For rules that the spec writes
    //   into an op's Inputs/Outputs table rather than a numbered constraint (an element type
    //   category, "per-tensor quantized tensor", "constant of type si32"), the label is the
    //   table row's label (I1, I2, ... for inputs; O1, ... for outputs). For checks the spec
    //   neither numbers nor tabulates (chlo.md's traits, custom_call layouts, the reference
    //   interpreter's run_parallel) it is a lowercase word the table file explains in its header
    //   (`broadcast`, `inferred`, `layouts`, `programs`, ...).

    // expect-ok
    //   The chunk is a valid program: it parses, verifies, prints, and the printed text parses
    //   back to a module that prints the same text (print round-trips).

More comment lines may follow the annotation (why the program is wrong, where the spec and the
StableHLO C++ verifier disagree). Line numbers are those of the whole file, so a failure names
the file and line to look at. Constraints judged not statically decidable are listed in a comment
at the top of each file, with the reason. A file may also say which constraints it covers:

    // spec: stablehlo.reduce C1-C8
    // undecidable: stablehlo.dynamic_conv C25 <why>

and then every listed constraint has exactly one invalid program or one `undecidable` line.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from hlodbg.engine import VerifyError, parse_module, print_module, split_chunks
from hlodbg.engine.verify import verify

CONSTRAINTS = Path(__file__).resolve().parent / "data" / "constraints"

_EXPECT_ERROR = re.compile(
    r"^\s*//\s*expect-error:\s*(?P<op>[\w.$-]+)\s+(?P<label>[CIO]\d+|[a-z][a-z0-9_-]*)\s*$")
_SPEC = re.compile(r"^\s*//\s*spec:\s*(\S+)\s+C(\d+)-C(\d+)\s*$")
_UNDECIDABLE = re.compile(r"^\s*//\s*undecidable:\s*(\S+)\s+(C\d+)\b\s*\S")
_EXPECT_OK = re.compile(r"^\s*//\s*expect-ok\s*$")


@dataclass(frozen=True)
class Case:
    path: Path
    first_line: int  # 1-based line of the chunk's first line in the file
    text: str  # the chunk, padded with blank lines so that line numbers are the file's
    kind: str  # "error" or "ok"
    op: str = ""
    label: str = ""

    @property
    def id(self) -> str:
        what = f"{self.op}-{self.label}" if self.kind == "error" else "ok"
        return f"{self.path.stem}:{self.first_line}:{what}"


def _annotation(chunk: str) -> tuple[str, str, str, int]:
    """(kind, op, label, index of the directive's line) from the chunk's leading comment lines (a
    file's first chunk may open with notes on the whole file before its directive)."""
    lines = chunk.splitlines()
    for index, line in enumerate(lines):
        if not line.strip():
            continue
        if m := _EXPECT_ERROR.match(line):
            return "error", m["op"], m["label"], index
        if _EXPECT_OK.match(line):
            return "ok", "", "", index
        if not line.lstrip().startswith("//"):
            return "none", "", "", index
    return "empty", "", "", 0  # only comments: a note on the file, e.g. the constraints left out and why


def _cases() -> list[Case]:
    cases = []
    for path in sorted(CONSTRAINTS.glob("*.mlir")):
        for offset, chunk in split_chunks(path.read_text()):
            kind, op, label, index = _annotation(chunk)
            if kind == "empty":
                continue
            first = offset + 1 + index
            cases.append(Case(path, first, "\n" * offset + chunk, kind, op, label))
    return cases


CASES = _cases()
ERROR_CASES = [c for c in CASES if c.kind == "error"]
OK_CASES = [c for c in CASES if c.kind == "ok"]


def _first_line_of(module, op_name: str) -> int:
    for top in module.operations:
        for op in top.walk():
            if op.name == op_name and op.pos is not None:
                return op.pos.line
    raise AssertionError(f"the chunk holds no {op_name} op")


def test_every_chunk_is_annotated():
    bad = [f"{c.path.name}:{c.first_line}" for c in CASES if c.kind not in ("error", "ok")]
    assert not bad, "chunks must start with `// expect-error: <op> <Cn>` or `// expect-ok`: " + ", ".join(bad)
    assert ERROR_CASES and OK_CASES


@pytest.mark.parametrize("case", ERROR_CASES, ids=[c.id for c in ERROR_CASES])
def test_invalid_program_is_rejected_with_its_constraint(case: Case):
    module = parse_module(case.text, str(case.path))
    with pytest.raises(VerifyError) as info:
        verify(module)
    error = info.value
    where = f"{case.path.name}:{case.first_line}"
    assert error.message.startswith(f"{case.op}:"), f"{where}: error names another op: {error.message}"
    assert f"({case.label})" in error.message, f"{where}: expected ({case.label}) in: {error.message}"
    expected_line = _first_line_of(module, case.op)
    assert error.line == expected_line, f"{where}: error at line {error.line}, op at {expected_line}"


@pytest.mark.parametrize("case", OK_CASES, ids=[c.id for c in OK_CASES])
def test_valid_program_is_accepted_and_round_trips(case: Case):
    module = parse_module(case.text, str(case.path))
    verify(module)
    printed = print_module(module)
    reparsed = parse_module(printed, "printed.mlir")
    verify(reparsed)
    assert print_module(reparsed) == printed


def _coverage(path: Path) -> tuple[dict[str, set[str]], dict[str, list[str]]]:
    """The constraints a file's `// spec:` lines list per op, and those its programs or
    `// undecidable:` lines cover."""
    listed: dict[str, set[str]] = {}
    covered: dict[str, list[str]] = {}
    for line in path.read_text().splitlines():
        if m := _SPEC.match(line):
            listed[m[1]] = {f"C{i}" for i in range(int(m[2]), int(m[3]) + 1)}
        elif m := _UNDECIDABLE.match(line):
            covered.setdefault(m[1], []).append(m[2])
        elif (m := _EXPECT_ERROR.match(line)) and m["label"].startswith("C"):
            covered.setdefault(m["op"], []).append(m["label"])
    return listed, covered


LISTING_FILES = [p for p in sorted(CONSTRAINTS.glob("*.mlir")) if _coverage(p)[0]]


@pytest.mark.parametrize("path", LISTING_FILES, ids=lambda p: p.name)
def test_every_listed_constraint_has_one_program(path: Path):
    listed, covered = _coverage(path)
    for op_name, constraints in listed.items():
        got = covered.get(op_name, [])
        missing = sorted(constraints - set(got), key=lambda c: int(c[1:]))
        extra = sorted(set(got) - constraints)
        twice = sorted({c for c in got if got.count(c) > 1})
        assert not missing, f"{path.name}: {op_name}: no program for {missing}"
        assert not extra, f"{path.name}: {op_name}: programs for constraints the spec does not list: {extra}"
        assert not twice, f"{path.name}: {op_name}: more than one program or note for {twice}"
