"""Table-driven verifier tests: one program per numbered spec constraint, read from data files.

Each file of tests/data/constraints/ holds `// -----` separated programs. A program whose leading
comment lines carry `// expect-error: <op name> <Cn>` is invalid: verifying it must raise a
VerifyError whose message starts with the op name and contains `(<Cn>)`, at the line of the first
op of that name in the program. A program marked `// expect-ok` is valid: it verifies, and
printing it, parsing the print and printing again gives the same text (the print round-trips).

A file may also list, in comments anywhere, the constraints of each op it covers and those no
static check can decide:

    // spec: stablehlo.reduce C1-C8
    // undecidable: stablehlo.dynamic_conv C25 <why>

and then every listed constraint has exactly one invalid program or an `undecidable` line.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from hlodbg.engine import VerifyError, parse_module, print_module, split_chunks
from hlodbg.engine.verify import verify

DATA = Path(__file__).resolve().parent / "data" / "constraints"

EXPECT_ERROR = re.compile(r"^//\s*expect-error:\s*(\S+)\s+(C\d+)\s*$")
EXPECT_OK = re.compile(r"^//\s*expect-ok\b")
SPEC = re.compile(r"^//\s*spec:\s*(\S+)\s+C(\d+)-C(\d+)\s*$")
UNDECIDABLE = re.compile(r"^//\s*undecidable:\s*(\S+)\s+(C\d+)\b\s*\S")


def _leading_comments(chunk: str) -> list[str]:
    lines = []
    for line in chunk.splitlines():
        stripped = line.strip()
        if not stripped:
            continue
        if not stripped.startswith("//"):
            break
        lines.append(stripped)
    return lines


def _cases():
    cases = []
    for path in sorted(DATA.glob("*.mlir")):
        text = path.read_text()
        for offset, chunk in split_chunks(text):
            comments = _leading_comments(chunk)
            errors = [m.groups() for m in map(EXPECT_ERROR.match, comments) if m]
            ok = any(EXPECT_OK.match(c) for c in comments)
            if not errors and not ok:
                continue
            assert len(errors) + ok == 1, f"{path.name}:{offset + 1}: one expectation per program"
            expected = errors[0] if errors else None
            name = f"{path.stem}:{offset + 2}:" + (f"{expected[0]}-{expected[1]}" if expected else "ok")
            cases.append(pytest.param(path.name, offset, chunk, expected, id=name))
    return cases


CASES = _cases()


def _parse(filename: str, offset: int, chunk: str):
    return parse_module("\n" * offset + chunk, filename)


def _first_op_line(module, name: str) -> int:
    for top in module.operations:
        for op in top.walk():
            if op.name == name:
                return op.pos.line
    raise AssertionError(f"no {name} op in the program")


def test_the_data_files_hold_cases():
    assert DATA.is_dir()
    assert len([c for c in CASES if c.values[3] is not None]) >= 100


@pytest.mark.parametrize("filename,offset,chunk,expected", CASES)
def test_constraint(filename, offset, chunk, expected):
    module = _parse(filename, offset, chunk)
    if expected is None:
        verify(module)
        printed = print_module(module)
        reparsed = parse_module(printed, "printed.mlir")
        verify(reparsed)
        assert print_module(reparsed) == printed
        return
    op_name, constraint = expected
    with pytest.raises(VerifyError) as info:
        verify(module)
    message = info.value.message
    assert message.startswith(op_name + ":"), message
    assert f"({constraint})" in message, message
    assert info.value.line == _first_op_line(module, op_name), f"{message} at line {info.value.line}"


def _coverage(path: Path):
    text = path.read_text()
    spec: dict[str, set[str]] = {}
    covered: dict[str, list[str]] = {}
    for line in text.splitlines():
        line = line.strip()
        if m := SPEC.match(line):
            spec[m[1]] = {f"C{i}" for i in range(int(m[2]), int(m[3]) + 1)}
        elif m := UNDECIDABLE.match(line):
            covered.setdefault(m[1], []).append(m[2])
        elif m := EXPECT_ERROR.match(line):
            covered.setdefault(m[1], []).append(m[2])
    return spec, covered


@pytest.mark.parametrize("path", sorted(DATA.glob("*.mlir")), ids=lambda p: p.name)
def test_every_listed_constraint_has_one_program(path):
    spec, covered = _coverage(path)
    assert spec, f"{path.name} lists no `// spec:` lines"
    for op_name, constraints in spec.items():
        got = covered.get(op_name, [])
        missing = sorted(constraints - set(got), key=lambda c: int(c[1:]))
        extra = sorted(set(got) - constraints)
        twice = sorted({c for c in got if got.count(c) > 1})
        assert not missing, f"{op_name}: no program for {missing}"
        assert not extra, f"{op_name}: programs for constraints the spec does not list: {extra}"
        assert not twice, f"{op_name}: more than one program or note for {twice}"
