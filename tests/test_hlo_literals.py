"""Constant literals of HLO text (engine/syntax/hlo/literals.py): every element type, nesting,
special values, NaN payloads, complex, tuples, elided `{...}`, range checks and located errors."""
from __future__ import annotations

import numpy as np
import pytest

from hlodbg.engine.ir.errors import ParseError, SourcePos, SourceText
from hlodbg.engine.syntax.hlo.literals import (
    ElidedLiteral,
    literal_dtype,
    parse_literal,
    parse_shaped_literal,
)
from hlodbg.engine.syntax.hlo.parser import parse_hlo_modules
from hlodbg.engine.syntax.hlo.tree import HloShape


def shape(element: str, *dims: int) -> HloShape:
    return HloShape(element, tuple(dims), (False,) * len(dims))


def literal(text: str, element: str, *dims: int):
    return parse_literal(text, SourcePos(SourceText(text, "lit.hlo"), 0), shape(element, *dims))


def literal_error(text: str, element: str, *dims: int) -> ParseError:
    with pytest.raises(ParseError) as info:
        literal(text, element, *dims)
    return info.value


def bits(array: np.ndarray) -> list[int]:
    return [int(b) for b in np.atleast_1d(array).view(f"u{array.dtype.itemsize}")]


@pytest.mark.parametrize("element, text, expected", [
    ("pred", "true", True), ("pred", "false", False),
    ("s8", "-128", -128), ("s16", "32767", 32767), ("s32", "-2147483648", -2147483648),
    ("s64", "-9223372036854775808", -(1 << 63)), ("u8", "255", 255), ("u16", "65535", 65535),
    ("u32", "4294967295", 4294967295), ("u64", "18446744073709551615", (1 << 64) - 1),
    ("s1", "-1", -1), ("u1", "1", 1), ("s2", "-2", -2), ("u2", "3", 3), ("s4", "-8", -8),
    ("u4", "15", 15),
    ("f16", "65504", 65504.0), ("bf16", "0.3008", 0.30078125), ("f32", "1e-05", 1e-05),
    ("f64", "-1.79769e+308", -1.79769e+308), ("f8e4m3fn", "448", 448.0),
    ("f8e5m2", "-57344", -57344.0), ("f8e4m3fnuz", "0.5", 0.5), ("f8e5m2fnuz", "2", 2.0),
    ("f8e4m3b11fnuz", "1", 1.0), ("f8e3m4", "15.5", 15.5), ("f8e4m3", "-240", -240.0),
    ("f8e8m0fnu", "0.25", 0.25), ("f4e2m1fn", "-6", -6.0),
])
def test_scalars_of_every_element_type(element, text, expected):
    value = literal(text, element)
    assert value.dtype == literal_dtype(element) and value.shape == ()
    assert value.item() == expected if element not in ("f32",) else \
        value == np.float32(expected)


def test_special_float_values_and_nan_payloads():
    assert np.isposinf(literal("inf", "f32")) and np.isneginf(literal("-inf", "bf16"))
    assert bits(literal("nan", "f32")) == [0x7FC00000]
    assert bits(literal("-nan", "f32")) == [0xFFC00000]
    assert bits(literal("nan(0x7f)", "f32")) == [0x7F80007F]
    assert bits(literal("-nan(0x1)", "f16")) == [0xFC01]
    assert bits(literal("{1, nan(0x3), -nan(0x40)}", "bf16", 3)) == [0x3F80, 0x7F83, 0xFFC0]
    assert bits(literal("nan(0x8000000000001)", "f64")) == [0x7FF8000000000001]
    assert np.isnan(literal("{nan, 7, -nan}", "f8e4m3fn", 3)[[0, 2]]).all()


def test_nested_braces_are_row_major_whatever_the_layout():
    value = literal("{ { 1, 2, 3 }, { 4, 5, 6 } }", "s32", 2, 3)
    assert value.tolist() == [[1, 2, 3], [4, 5, 6]]
    text = "{ /*i0=0*/ { /*i1=0*/ {-1} }, { /*i1=1*/ {4.5} } }"
    assert literal(text, "f32", 2, 1, 1).tolist() == [[[-1.0]], [[4.5]]]


def test_empty_literals():
    assert literal("{}", "f32", 0).shape == (0,)
    assert literal("{ {}, {} }", "s8", 2, 0).shape == (2, 0)
    assert literal("{ { /*i0=0*/ }, { /*i0=1*/ } }", "f32", 2, 0, 4, 3).shape == (2, 0, 4, 3)
    assert literal("{}", "f32", 0, 3).shape == (0, 3)


def test_complex_and_pred_arrays():
    value = literal("{(1, 2), (-inf, nan)}", "c64", 2)
    assert value.dtype == np.complex64 and value[0] == 1 + 2j and np.isneginf(value[1].real)
    assert literal("(1.5, -2)", "c128").item() == 1.5 - 2j
    assert literal("{ { 0, 1, 0 }, { true, false, true } }", "pred", 2, 3).tolist() == \
        [[False, True, False], [True, False, True]]


def test_tuple_literal():
    tuple_shape = HloShape(None, elements=(shape("f32", 2, 1), shape("s32", 2), HloShape(
        None, elements=())))
    text = "( { {1}, {2} }, {2, 42}, ( ) )"
    first, second, empty = parse_literal(text, SourcePos(SourceText(text), 0), tuple_shape)
    assert first.tolist() == [[1.0], [2.0]] and second.tolist() == [2, 42] and empty == ()


def test_elided_literals_give_a_marker():
    for text in ("{...}", "{1, 2, ...}", "{ {...} }"):
        marker = literal(text, "f32", 100)
        assert isinstance(marker, ElidedLiteral) and marker.shape.dims == (100,)


@pytest.mark.parametrize("text, element, dims, col, message", [
    ("-65520", "f16", (), 1, "out of range for f16"),
    ("1e100", "bf16", (), 1, "out of range for bf16"),
    ("16", "u4", (), 1, "out of range for u4"),
    ("-9", "s4", (), 1, "out of range for s4"),
    ("-1", "u64", (), 1, "out of range for u64"),
    ("{1, 256}", "u8", (2,), 5, "256 is out of range for u8"),
    ("{1, 2x}", "f32", (2,), 5, "expected a number for f32, found '2x'"),
    ("{1, 1_0}", "f32", (2,), 5, "found '1_0'"),
    ("{1, 1.5}", "s32", (2,), 5, "expected an integer for s32"),
    ("{true, maybe}", "pred", (2,), 8, "expected true or false, found 'maybe'"),
    ("inf", "f8e4m3fn", (), 1, "has no infinity"),
    ("nan", "f4e2m1fn", (), 1, "has no NaN"),
    ("nan(0x0)", "f32", (), 1, "cannot be 0"),
    ("nan(0x800000)", "f32", (), 1, "does not fit the 23 mantissa bits"),
    ("nan(0x1)", "f8e4m3fn", (), 1, "has no NaN payloads"),
    ("{1, 2, 3, 4, 5, 6}", "f32", (2, 3), 2, "expected '{' or '}' at brace level 1"),
    ("{1,{2}}", "f32", (2,), 4, "too many brace levels"),
    ("{ {1, 2, 3} }", "f32", (2, 3), 1, "expected 2 group(s) in dimension 0, found 1"),
    ("{ {1, 2}, {3, 4} }", "f32", (2, 3), 4, "expected 3 element(s) here, found 2"),
    ("}{1, 2}", "f32", (2,), 1, "expected '{' opening a literal of rank 1"),
    ("{1, 2", "f32", (2,), 1, "never closed"),
    ("{1, 2} 3", "f32", (2,), 8, "unexpected text after the literal"),
    ("{1}", "f32", (), 1, "a scalar literal has no braces"),
    ("{(1, 2), 3}", "c64", (2,), 10, "expected a complex element"),
    ("{(1, x)}", "c64", (1,), 6, "expected a number for f32, found 'x'"),
    ("{1, 2 /* open", "f32", (2,), 7, "unterminated '/*'"),
])
def test_bad_literals_are_located_errors(text, element, dims, col, message):
    error = literal_error(text, element, *dims)
    assert message in error.message and error.col == col, error.render()


def test_literal_errors_point_into_the_file():
    text = "ENTRY e {\n  ROOT c = u8[3] constant({1, 2, 300})\n}\n"
    constant = parse_hlo_modules(text, "f.hlo")[0].entry.root
    with pytest.raises(ParseError) as info:
        parse_literal(constant.literal, constant.literal_pos, constant.shape)
    assert str(info.value.pos) == "f.hlo:2:34"


def test_token_constants_have_no_literal():
    assert "cannot have a literal" in literal_error("0", "token").message
    text = "{1, 2}"
    with pytest.raises(ParseError, match="static dimensions"):
        parse_literal(text, SourcePos(SourceText(text), 0), HloShape("f32", (None,), (False,)))


def test_large_flat_literal_takes_the_bulk_path_and_keeps_every_value():
    rng = np.random.default_rng(0)
    values = rng.standard_normal(200_000).astype(np.float32)
    text = "{" + ", ".join(repr(float(v)) for v in values) + "}"
    assert np.array_equal(literal(text, "f32", 200_000), values)
    ints = rng.integers(-(1 << 31), 1 << 31, size=(300, 400))
    text = "{ " + ", ".join("{" + ",".join(map(str, row)) + "}" for row in ints) + " }"
    assert np.array_equal(literal(text, "s32", 300, 400), ints.astype(np.int32))
    big = "{" + ", ".join(["1.5"] * 99_999 + ["bad"]) + "}"
    assert literal_error(big, "f32", 100_000).col == len(big) - 3


def _fuzz_cases():
    rows = np.arange(2000).reshape(50, 40)
    return [
        ("{ " + ", ".join("{" + ",".join(map(str, r)) + "}" for r in rows) + " }",
         shape("s32", 50, 40)),
        ("{" + ", ".join(repr(float(x)) for x in np.linspace(-3, 3, 1500)) + "}",
         shape("f32", 1500)),
        ("{ {1, 2}, {3, nan(0x3)} }", shape("bf16", 2, 2)),
        ("{(1, 2), (3, -4)}", shape("c64", 2)),
        ("{true, false}", shape("pred", 2)),
        ("( {1, 2}, 3 )", HloShape(None, elements=(shape("s8", 2), shape("f16")))),
    ]


@pytest.mark.parametrize("index", range(6))
def test_perturbed_literals_give_parse_errors_never_other_exceptions(index):
    import random
    text, literal_shape = _fuzz_cases()[index]
    rng = random.Random(index)
    for _ in range(300):
        at = rng.randrange(len(text))
        mutated = text[:at] + rng.choice("{}(),-.e x0n9/*[]") + (
            text[at + 1:] if rng.random() < 0.5 else text[at:])
        try:
            parse_literal(mutated, SourcePos(SourceText(mutated), 0), literal_shape)
        except ParseError as error:
            assert 0 <= error.pos.offset <= len(mutated)


def test_a_non_comma_between_groups_is_a_located_error():
    error = literal_error("{ {1, 2}-, {3, 4} }", "s32", 2, 2)
    assert "expected '{' or '}' at brace level 1" in error.message and error.col == 9


def test_custom_call_literal_attribute_with_its_shape():
    text = ("ENTRY e {\n  ROOT c = f32[] custom-call(), literal=( s32[2]{0} {4, 128}, "
            "pred[] true, (f32[] 0.5) ), x=1\n}")
    attr = parse_hlo_modules(text, "cc.hlo")[0].entry.root.attrs["literal"]
    shape, (ints, flag, (half,)) = parse_shaped_literal(attr.text, attr.pos)
    assert shape.text() == "(s32[2]{0}, pred[], (f32[]))"
    assert ints.tolist() == [4, 128] and flag.item() is True and half.item() == 0.5
    scalar_shape, value = parse_shaped_literal("f32[] 0.1", SourcePos(SourceText("f32[] 0.1"), 0))
    assert scalar_shape.element == "f32" and value == np.float32(0.1)
    with pytest.raises(ParseError, match="expected 2 element") as info:
        bad = "s32[2]{0} {1, 2, 3}"
        parse_shaped_literal(bad, SourcePos(SourceText(bad), 0))
    assert info.value.col == 12
    with pytest.raises(ParseError, match="expected the end of the literal"):
        parse_shaped_literal("f32[] 1 2", SourcePos(SourceText("f32[] 1 2"), 0))
