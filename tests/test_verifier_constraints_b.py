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


# -- what the numbered programs cannot show ---------------------------------------------------------

_DOT_ALGORITHM = """
func.func @main(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<2x4xf32> {{
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0],
    algorithm = <lhs_precision_type = {lhs}, rhs_precision_type = {rhs}, accumulation_type = {acc},
                 lhs_component_count = {lc}, rhs_component_count = {rc}, num_primitive_operations = {n},
                 allow_imprecise_accumulation = {imprecise}>
    : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}}
"""

_KNOWN = [("f16", "f16", "f32", 1, 1, 1, "false"), ("bf16", "bf16", "f32", 1, 1, 6, "false"),
          ("tf32", "tf32", "f32", 1, 1, 3, "false"), ("f64", "f64", "f64", 1, 1, 1, "false"),
          ("f8E4M3FN", "f8E5M2", "f32", 1, 1, 1, "true")]
_UNKNOWN = [("f16", "bf16", "f32", 1, 1, 1, "false"), ("bf16", "bf16", "f32", 1, 1, 2, "false"),
            ("f32", "f32", "f32", 3, 3, 6, "false"), ("f32", "f32", "f32", 1, 1, 1, "true"),
            ("f8E4M3FN", "f8E4M3FN", "f16", 1, 1, 1, "false")]


def _algorithm_program(lhs, rhs, acc, lc, rc, n, imprecise):
    return parse_module(_DOT_ALGORITHM.format(lhs=lhs, rhs=rhs, acc=acc, lc=lc, rc=rc, n=n, imprecise=imprecise),
                        "algorithm.mlir")


@pytest.mark.parametrize("fields", _KNOWN, ids=lambda f: "-".join(map(str, f)))
def test_known_dot_algorithms_verify(fields):
    verify(_algorithm_program(*fields))


@pytest.mark.parametrize("fields", _UNKNOWN, ids=lambda f: "-".join(map(str, f)))
def test_dot_algorithms_no_hardware_supports_are_rejected(fields):
    # The spec: "StableHLO verification will provide best effort verification, preventing
    # algorithms that are not known to be supported on *any* hardware" (no numbered constraint).
    with pytest.raises(VerifyError) as info:
        verify(_algorithm_program(*fields))
    assert info.value.message.startswith("stablehlo.dot_general: algorithm <")
    assert "is not known to be supported on any hardware" in info.value.message
    assert info.value.line == 3


def _promotable(src: str, dst: str) -> bool:
    from hlodbg.engine.syntax.mlir.parser import Parser
    from hlodbg.engine.verify.shape_inference import is_promotable

    def element(text):
        return Parser(f"tensor<{text}>", "t.mlir").parse_type().element

    return is_promotable(element(src), element(dst))


@pytest.mark.parametrize("src,dst,expected", [
    ("i8", "i32", True), ("ui8", "i32", True), ("i32", "ui32", True), ("i32", "i16", False),
    ("i1", "i1", True), ("i1", "i8", False), ("i8", "i1", False),
    ("f32", "f64", True), ("f8E4M3FN", "bf16", True), ("f16", "bf16", True), ("f64", "f32", False),
    ("complex<f32>", "complex<f64>", True), ("complex<f64>", "complex<f32>", False),
    ("f32", "complex<f32>", False), ("i32", "f32", False),
    ("!quant.uniform<i8:f32, 0.5>", "!quant.uniform<i32:f32, 0.25:1>", True),
    ("!quant.uniform<i16:f32, 0.5>", "!quant.uniform<i8:f32, 0.5>", False),
    ("!quant.uniform<i8:f32, 0.5>", "!quant.uniform<i32:f16, 0.5>", False),
    ("!quant.uniform<i8:f32, 0.5>", "f32", False),
])
def test_is_promotable_follows_the_spec(src, dst, expected):
    # The spec's Notation section: same kind (boolean, integer, float, complex, or quantized with
    # the same expressed type) and a destination at least as wide (storage width for quantized).
    assert _promotable(src, dst) is expected
