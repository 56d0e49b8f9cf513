"""Table-driven verifier tests: one invalid program per constraint, valid programs round-trip.

The tables are tests/data/constraints/<family>.mlir, split into chunks by `// -----`. A chunk's
leading comment lines hold its directive:

- `// expect-error: <op name> <constraint>`: the chunk is one invalid program. Verifying it
  raises a VerifyError whose message starts with `<op name>:` and contains `(<constraint>)`,
  located at the line of the first op of that name in the chunk (the line of a func.func is its
  `func.func` line).
- `// expect-ok`: the chunk is valid: it verifies, and parse -> print -> parse -> print gives the
  same text twice.

`<constraint>` is the spec's number, `C1`, `C2`, ... For the checks the spec does not number it
is a short label the verifier writes in the same parentheses: the spec's label of the input whose
type is wrong (`I1`, `I2`, ...), `inferred` for a result whose type the op fixes (a token,
tensor<ui32>), or a lowercase word the table file documents in its header (`layouts`, `aliases`,
`programs`, `broadcast`, ...). Other comment lines of a chunk (`// ...`) are free text, e.g. where
the spec and the StableHLO C++ verifier disagree. Each table file begins with a comment listing the
constraints of its ops that no static check can decide, and why.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from hlodbg.engine import VerifyError, parse_module, print_module
from hlodbg.engine.syntax.mlir.parser import split_chunks
from hlodbg.engine.verify import verify

TABLES = Path(__file__).parent / "data" / "constraints"
FAMILIES = ("control_flow", "custom_call", "collectives", "chlo", "run_parallel")

_DIRECTIVE = re.compile(
    r"^\s*//\s*expect-(?:error:\s*(?P<op>\S+)\s+(?P<constraint>C\d+|I\d+|[a-z][a-z0-9_-]*)|(?P<ok>ok))\s*$")


@dataclass(frozen=True)
class Case:
    file: Path
    first_line: int  # 1-based line of the chunk's first line in the file
    text: str  # the chunk padded with newlines so that its lines keep their numbers in the file
    op: str | None  # None for expect-ok
    constraint: str | None

    @property
    def id(self) -> str:
        what = f"{self.op}-{self.constraint}" if self.op else "ok"
        return f"{self.file.stem}:{self.first_line}:{what}"


def _cases(path: Path) -> list[Case]:
    cases = []
    for lines_before, chunk in split_chunks(path.read_text()):
        lines = chunk.splitlines()
        code = [line for line in lines if line.strip() and not line.strip().startswith("//")]
        if not code:
            continue  # a header or trailing comment, no program
        directives = [m for m in map(_DIRECTIVE.match, lines) if m]
        first = lines_before + next(i for i, line in enumerate(lines, 1) if line.strip())
        assert len(directives) == 1, f"{path.name}:{first}: a chunk needs exactly one expect- directive"
        m = directives[0]
        text = "\n" * lines_before + chunk
        cases.append(Case(path, first, text, None if m["ok"] else m["op"], m["constraint"]))
    return cases


def _all_cases() -> list[Case]:
    return [case for family in FAMILIES for case in _cases(TABLES / f"{family}.mlir")]


CASES = _all_cases()
INVALID = [c for c in CASES if c.op]
VALID = [c for c in CASES if not c.op]


def _op_line(case: Case) -> int:
    """The line of the first op named `case.op`: generic `"name"(...)` or pretty `name ...`."""
    pattern = re.compile(r'(^|[\s=])"?' + re.escape(case.op) + r'"?(?=[\s(<{@]|$)')
    for number, line in enumerate(case.text.splitlines(), 1):
        if not line.strip().startswith("//") and pattern.search(line.split("//")[0]):
            return number
    raise AssertionError(f"{case.id}: no {case.op} op in the chunk")


def test_every_family_has_its_table():
    for family in FAMILIES:
        cases = _cases(TABLES / f"{family}.mlir")
        assert any(c.op for c in cases), f"{family}.mlir has no invalid program"
        assert any(not c.op for c in cases), f"{family}.mlir has no valid program"
        assert (TABLES / f"{family}.mlir").read_text().startswith("//"), f"{family}.mlir needs its header comment"


def test_each_numbered_constraint_is_tested_once_per_op():
    """One program per numbered constraint; a label may name several checks, each with its own."""
    seen = {}
    for case in INVALID:
        if not re.fullmatch(r"C\d+", case.constraint):
            continue
        key = (case.op, case.constraint)
        assert key not in seen, f"{case.id} repeats {seen[key]}"
        seen[key] = case.id


@pytest.mark.parametrize("case", INVALID, ids=[c.id for c in INVALID])
def test_invalid_program_names_op_constraint_and_line(case):
    module = parse_module(case.text, str(case.file))
    with pytest.raises(VerifyError) as info:
        verify(module)
    error = info.value
    assert error.message.startswith(f"{case.op}:"), error.message
    assert f"({case.constraint})" in error.message, error.message
    assert error.line == _op_line(case), f"{error.message} reported at line {error.line}, not {_op_line(case)}"
    assert error.filename == str(case.file)
    assert "Traceback" not in error.render()


@pytest.mark.parametrize("case", VALID, ids=[c.id for c in VALID])
def test_valid_program_verifies_and_round_trips(case):
    module = parse_module(case.text, str(case.file))
    verify(module)
    printed = print_module(module)
    reparsed = parse_module(printed, "printed.mlir")
    verify(reparsed)
    assert print_module(reparsed) == printed
