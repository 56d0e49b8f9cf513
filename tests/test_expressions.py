"""Breakpoint/watch expressions: what they compute, how `%` is read, and what they refuse."""
from __future__ import annotations

import ast
import math

import ml_dtypes
import numpy as np
import pytest

from hlodbg.engine import HlodbgError
from hlodbg.engine.debug.expressions import ARRAY_ATTRIBUTES, FUNCTIONS, ExpressionError, compile_expression

from .helpers import count_calls

RESULT = np.array([1.0, np.nan, -3.0, 2000.0], np.float32)
NAMES = {
    "result": RESULT,
    "iteration": 7,
    "hit": 3,
    "operands": [np.array([4.0, 5.0], np.float32), np.array([[1, 2], [3, -4]], np.int32)],
    "x": 17,
}
VALUES = {
    "5": np.arange(10, dtype=np.int64).reshape(2, 5),
    "arg0": np.array([2.0, 4.0, 6.0]),
    "12": np.array([1.0, 3.0]),
    "0#1": np.array([7, 8], np.int32),
    "x.y": np.array(5, np.int32),
    "flag": np.array(False),
}


def lookup(name: str):
    return VALUES[name]


# (expression, expected value)
EVALUATED = [
    ("isnan(result).any()", True),
    ("abs(result).max() > 1e3", False),  # NaN propagates through max()
    ("abs(result[isfinite(result)]).max() > 1e3", True),
    ("%5[0, :3]", [0, 1, 2]),
    ("mean(%arg0) - %12.mean()", 2.0),
    ("iteration == 7 and hit > 2", True),
    ("iteration == 7 and hit > 3", False),
    ("result.shape", (4,)),
    ("operands[1].min()", -4),
    ("%0#1[1]", 8),
    ("%0#1 + %0#1", [14, 16]),
    ("%x.y * 2", 10),
    ("%12.T.shape", (2,)),
    ("-%12", [-1.0, -3.0]),
    ("not %flag", True),
    ("1 if %flag else 2", 2),
    ("[%12[0], %arg0[0]]", [1.0, 2.0]),
    ("'%5' + 'a'", "%5a"),
    ("sqrt(%arg0[1])", 2.0),
    ("exp(0) + log(1)", 1.0),
    ("isinf(result).sum()", 0),
    ("isfinite(result).sum()", 3),
    ("all(%arg0 > 1)", True),
    ("sum(%5)", 45),
    ("sum(%5, axis=1)", [10, 35]),
    ("std(%12) + var(%12)", 2.0),
    ("argmax(%arg0) + argmin(%arg0)", 2),
    ("where(%12 > 2, %12, 0)", [0.0, 3.0]),
    ("shape(%5)", (2, 5)),
    ("size(%5) + len(%5)", 12),
    ("float(%12[1]) + int(%arg0[0])", 5.0),
    ("bool(%flag)", False),
    ("allclose(%12, [1, 3])", True),
    ("count_nonzero(%5)", 9),
    ("norm(operands[0])", math.sqrt(41.0)),
    ("max(%12)", 3.0),
    ("max(%12, 2)", [2.0, 3.0]),
    ("min(%5, axis=0)", [0, 1, 2, 3, 4]),
    ("pi > 3 and e > 2 and inf > 1e308", True),
    ("isnan(nan)", True),
    ("result.dtype == 'float32'", True),
    ("%5.reshape(5, 2)[4, 1]", 9),
]


@pytest.mark.parametrize("text,expected", EVALUATED, ids=[case[0] for case in EVALUATED])
def test_expression_values(text, expected):
    value = compile_expression(text).evaluate(NAMES, lookup)
    if isinstance(expected, str):
        assert value == expected
    elif isinstance(expected, tuple):
        assert tuple(value) == expected
    else:
        np.testing.assert_allclose(np.asarray(value, dtype=np.float64), np.asarray(expected, dtype=np.float64))


# `%` is a reference where an operand is expected and the modulo operator after an operand.
# (expression, expected value, SSA references it uses)
MODULO_OR_REFERENCE = [
    ("x % 2", 1, ()),
    ("x %2", 1, ()),
    ("x%2", 1, ()),
    ("11 %x", 11, ()),
    ("%12 % 2", [1.0, 1.0], ("12",)),
    ("(%12)%2", [1.0, 1.0], ("12",)),
    ("%12[1]%2", 1.0, ("12",)),
    ("x % %12[1]", 2.0, ("12",)),
    ("x %%12[1]", 2.0, ("12",)),
    ("(x)% 5", 2, ()),
    ("%arg0 %4", [2.0, 0.0, 2.0], ("arg0",)),
    ("%x.y%3", 2, ("x.y",)),
    ("%12 %2", [1.0, 1.0], ("12",)),
    ("1 if x % 2 else %12[0]", 1, ("12",)),
]


@pytest.mark.parametrize("text,expected,values", MODULO_OR_REFERENCE, ids=[c[0] for c in MODULO_OR_REFERENCE])
def test_modulo_versus_reference(text, expected, values):
    expression = compile_expression(text)
    assert expression.values == values
    np.testing.assert_allclose(np.asarray(expression.evaluate(NAMES, lookup), np.float64), expected)


# (expression, plain names, SSA references in order of first use)
NAMES_AND_VALUES = [
    ("isnan(result).any()", {"result"}, ()),
    ("iteration == 7 and hit > 2", {"iteration", "hit"}, ()),
    ("%5 + %arg0.sum() - %0#1[0] + %5.max()", set(), ("5", "arg0", "0#1")),
    ("%a$b.c + %x_1#12", set(), ("a$b.c", "x_1#12")),
    ("%12.mean() + %12.foo", set(), ("12", "12.foo")),
    ("max(a, b) + pi", {"a", "b"}, ()),
    ("'%5 and x'", set(), ()),
]


@pytest.mark.parametrize("text,names,values", NAMES_AND_VALUES, ids=[c[0] for c in NAMES_AND_VALUES])
def test_names_and_references_are_reported(text, names, values):
    expression = compile_expression(text)
    assert expression.text == text
    assert expression.names == frozenset(names)
    assert expression.values == values


# (expression, fragment of the message, column it points at)
REFUSED = [
    ("__import__('os')", "name '__import__' is not allowed", 1),
    ("result.__class__", "attribute '__class__' is not allowed", 8),
    ("result._x", "attribute '_x' is not allowed", 8),
    ("result.tofile('x')", "attribute 'tofile' is not allowed", 8),
    ("(result + 1).tofile('x')", "attribute 'tofile' is not allowed", 14),
    ("(lambda: 1)()", "lambda is not allowed", 2),
    ("[x for x in y]", "list comprehension is not allowed", 1),
    ("sum(x for x in y)", "generator expression is not allowed", 4),
    ("{x for x in y}", "set comprehension is not allowed", 1),
    ("{1: 2}", "dict display", 1),
    ("{1, 2}", "set display", 1),
    ("f'{result}'", "f-string is not allowed", 1),
    ("max(*operands)", "'*' unpacking is not allowed", 5),
    ("max(**kw)", "'**' unpacking is not allowed", 5),
    ("(y := 2)", "assignment expression ':=' is not allowed", 2),
    ("b'abc'", "bytes literals are not allowed", 1),
    ("x +", "invalid syntax", 4),
    ("x[", "invalid syntax: '[' was never closed", 2),
    ("x = 1", "invalid syntax", 3),
    ("f(1,,2)", "invalid syntax", 5),
    ("result # comment", "'#' is only allowed in a value reference", 8),
    ("%0# + 1", "'#' after %0 must be followed by a result number", 3),
    ("1 + %", "invalid syntax", 5),
    ("", "empty expression", None),
    ("   ", "empty expression", None),
]


@pytest.mark.parametrize("text,message,column", REFUSED, ids=[c[0] or "<empty>" for c in REFUSED])
def test_refused_expressions_say_what_and_where(text, message, column):
    with pytest.raises(ExpressionError) as caught:
        compile_expression(text)
    error = caught.value
    assert message in error.message
    assert error.column == column
    if column is not None:
        assert f"column {column}" in error.message
        assert str(error).endswith("\n  " + " " * (column - 1) + "^")


def test_refusal_is_leftmost_and_uses_columns_of_the_typed_text():
    # The reference is rewritten internally; columns still count characters as typed.
    with pytest.raises(ExpressionError, match=r"attribute 'tofile' is not allowed .*\(column 23\)"):
        compile_expression("%long_name#3 + %other.tofile() + {1: 2}")
    with pytest.raises(ExpressionError, match=r"lambda is not allowed.*\(line 2, column 3\)"):
        compile_expression("(x +\n (lambda: 1)())")


def test_open_and_other_builtins_are_unknown_names_at_evaluation():
    expression = compile_expression("open('f')")
    with pytest.raises(ExpressionError, match=r"unknown name 'open' at column 1 \(known: .*result.*functions: abs"):
        expression.evaluate(NAMES)


def test_unknown_name_lists_known_names_and_functions():
    with pytest.raises(ExpressionError) as caught:
        compile_expression("isnan(resutl).any()").evaluate({"result": RESULT, "hit": 1})
    message = caught.value.message
    assert message.startswith("unknown name 'resutl' at column 7 (known: hit, result; functions: ")
    assert all(name in message for name in ("isnan", "norm", "allclose"))


@pytest.mark.parametrize(
    "text,lookup_function,message",
    [
        ("%nope + 1", lookup, "unknown value %nope at column 1"),
        ("1 + %5", None, "%5 at column 5 cannot be used here"),
        ("%5", lambda name: 1 / 0, "looking up %5 failed: division by zero"),
    ],
)
def test_reference_lookup_failures(text, lookup_function, message):
    with pytest.raises(ExpressionError, match=message):
        compile_expression(text).evaluate(NAMES, lookup_function)


def test_lookup_may_raise_expression_error_itself():
    def refusing(name):
        raise ExpressionError(f"%{name} is not computed yet")

    with pytest.raises(ExpressionError, match=r"^error: %5 is not computed yet$"):
        compile_expression("%5.max()").evaluate({}, refusing)


def test_references_are_looked_up_only_when_reached():
    seen = []

    def recording(name):
        seen.append(name)
        return VALUES[name]

    assert compile_expression("iteration == 1 and %5.max() > 0").evaluate(NAMES, recording) is False
    assert seen == []


@pytest.mark.parametrize(
    "text,fragment",
    [
        ("len(iteration)", "object of type 'int' has no len()"),
        ("result + 'a'", "these values cannot be combined"),
        ("abs(result, result)", "abs() takes 1 positional argument"),
        ("max(result, result, result)", "max() takes one array (reduction) or two"),
        ("operands[5]", "index out of range"),
        ("result.reshape(3)", "cannot reshape array"),
    ],
)
def test_evaluation_errors_keep_the_original_message(text, fragment):
    with pytest.raises(ExpressionError) as caught:
        compile_expression(text).evaluate(NAMES)
    message = caught.value.message
    assert fragment in message and message.startswith(text)
    assert "Error" not in message and "ufunc" not in message  # no Python exception class names


@pytest.mark.parametrize(
    "text",
    ["result.clip(0, 1, out=result)", "abs(operands[0]).round(0, operands[0])", "%12.cumsum(out=%12)"],
)
def test_expressions_cannot_modify_the_values_they_see(text):
    before_result, before_operand, before_value = RESULT.copy(), NAMES["operands"][0].copy(), VALUES["12"].copy()
    with pytest.raises(ExpressionError, match="read-only"):
        compile_expression(text).evaluate(NAMES, lookup)
    np.testing.assert_array_equal(RESULT, before_result)
    np.testing.assert_array_equal(NAMES["operands"][0], before_operand)
    np.testing.assert_array_equal(VALUES["12"], before_value)


# ml_dtypes arrays: (expression, expected) with b = bf16 [1, 2, 4], q = int4 [1, 2, 2], f = f8E4M3FN [0.5, nan, 3]
NARROW = {
    "b": np.array([1, 2, 4], ml_dtypes.bfloat16),
    "q": np.array([1, 2, 2], ml_dtypes.int4),
    "f": np.array([0.5, np.nan, 3], ml_dtypes.float8_e4m3fn),
}
NARROW_CASES = [
    ("q.mean()", 5 / 3),  # numpy alone answers in int4 (2)
    ("q.std()", math.sqrt(2 / 9)),  # numpy alone answers 0
    ("mean(q)", 5 / 3),
    ("std(q) ** 2", 2 / 9),
    ("q.sum() + sum(q)", 10),
    ("max(q) - min(q)", 1),
    ("b.mean()", 7 / 3),
    ("norm(b)", math.sqrt(21)),
    ("isnan(f).sum()", 1),
    ("f[isfinite(f)].max()", 3.0),
    ("float(b[2]) + int(q[0])", 5.0),
    ("allclose(b, [1, 2, 4])", 1.0),
    ("(b + 1)[0]", 2.0),
]


@pytest.mark.parametrize("text,expected", NARROW_CASES, ids=[c[0] for c in NARROW_CASES])
def test_narrow_ml_dtypes_are_widened_for_arithmetic(text, expected):
    value = compile_expression(text).evaluate(NARROW)
    assert float(value) == pytest.approx(expected, rel=1e-6)


@pytest.mark.parametrize(
    "text,dtype",
    [
        ("b.dtype", ml_dtypes.bfloat16),
        ("b.reshape(3, 1).dtype", ml_dtypes.bfloat16),
        ("q.ravel().dtype", ml_dtypes.int4),
        ("b.astype('float32').dtype", np.float32),
        ("b.T.dtype", ml_dtypes.bfloat16),
    ],
)
def test_layout_attributes_keep_the_stored_dtype(text, dtype):
    assert compile_expression(text).evaluate(NARROW) == np.dtype(dtype)


# (expression, truth) -- arrays are true anywhere
TRUTH = [
    ("result > 1000", True),
    ("result > 5000", False),
    ("isnan(result)", True),
    ("%flag", False),
    ("None", False),
    ("0", False),
    ("iteration", True),
    ("result.shape", True),
    ("()", False),
    ("b > 3", True),
    ("q > 2", False),
]


@pytest.mark.parametrize("text,truth", TRUTH, ids=[c[0] for c in TRUTH])
def test_truth(text, truth):
    assert compile_expression(text).truth({**NAMES, **NARROW}, lookup) is truth


def test_non_string_expression_is_an_expression_error():
    with pytest.raises(ExpressionError, match="must be a string, not int"):
        compile_expression(42)
    assert issubclass(ExpressionError, HlodbgError)


def test_leading_spaces_and_line_breaks_inside_brackets_are_fine():
    assert compile_expression("  (iteration +\n 1)").evaluate(NAMES) == 8


def test_tables_name_what_they_promise():
    assert {"abs", "sqrt", "norm", "where", "allclose", "count_nonzero", "nan", "inf", "pi", "e"} <= set(FUNCTIONS)
    assert not any(name.startswith("_") for name in [*FUNCTIONS, *ARRAY_ATTRIBUTES])
    assert "tofile" not in ARRAY_ATTRIBUTES and "np" not in FUNCTIONS and "numpy" not in FUNCTIONS


def test_compiled_once_and_evaluated_without_parsing(monkeypatch):
    # A breakpoint condition is evaluated at every op of a run: the text is parsed and compiled
    # once, never per evaluation (what an evaluation costs is benchmarks/breakpoints.py's figure).
    expression = compile_expression("isnan(result).any()")
    assert compile_expression("isnan(result).any()") is expression
    parsed = count_calls(monkeypatch, ast, "parse")
    names = {"result": np.ones(8, np.float32)}
    assert not any(expression.evaluate(names) for _ in range(100))
    assert parsed == []


def test_deep_nesting_is_a_message_and_long_chains_work():
    assert compile_expression(" + ".join(["x.max()"] * 300)).evaluate({"x": np.ones(2)}) == 300
    for text in ["-" * 100_000 + "1", "+".join(["x"] * 100_000)]:
        with pytest.raises(ExpressionError, match="nested too deeply"):
            compile_expression(text)


def test_expressions_are_immutable_because_compiling_is_cached():
    expression = compile_expression("hit > 2")
    with pytest.raises(AttributeError, match="immutable"):
        expression.text = "hit > 3"
    assert compile_expression("hit > 2").text == "hit > 2"
