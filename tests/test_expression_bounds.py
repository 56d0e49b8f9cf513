"""Expressions a participant can type that once held the interpreter for hours or asked for
gigabytes: each is refused before it starts, in words, and an interrupt stops an evaluation."""
from __future__ import annotations

import threading

import numpy as np
import pytest

from hlodbg.engine.debug import expression_bounds
from hlodbg.engine.debug.expressions import ExpressionError, compile_expression


@pytest.mark.parametrize("text, words", [
    ("10**10**10", "integer of about 10,000,000,000 digits"),
    ("'a'*1500000000", "would make 1.4 GB"),
    ("'a'*10**10", "would make 9.3 GB"),
    ("[0]*10**9", "would make 7.5 GB"),
    ("1 << 10**12", "'<<' would make an integer"),
    ("x[:, None] * x[None, :]", "'*' would make"),
    ("x.reshape(-1, 1) @ x.reshape(1, -1)", "'@' would make"),
    ("x.astype('U100000')", ".astype() would make"),
    ("where(x[:, None] > 0, x, x[:, None])", "where() would make"),
    ("'%0999999999d' % 1", "pads to at most 10,000 characters"),
    ("'%.999999999f' % 1.0", "not 999999999"),
    ("'%*d' % (10**8, 1)", "no '*' widths"),
])
def test_an_expression_past_its_bounds_is_refused_in_words(text, words):
    with pytest.raises(ExpressionError) as caught:
        compile_expression(text).evaluate({"x": np.arange(100_000.0)})
    assert words in caught.value.message and "could not be evaluated" not in caught.value.message


def test_expressions_within_the_bounds_still_work():
    x = np.arange(10.0)
    assert compile_expression("2**100").evaluate({}) == 2**100
    assert compile_expression("'ab' * 3 + 'c'").evaluate({}) == "abababc"
    assert compile_expression("'%5.2f|%s' % (3.14159, 'x')").evaluate({}) == " 3.14|x"
    assert compile_expression("x % 4").evaluate({"x": 10}) == 2
    assert compile_expression("(x[:, None] * x[None, :]).sum()").evaluate({"x": x}) == 2025.0
    assert compile_expression("max(x, 3).min() + x @ x").evaluate({"x": x}) == 288.0


def test_an_interrupt_stops_an_evaluation_at_its_next_step(monkeypatch):
    started, interrupted = threading.Event(), threading.Event()
    original = expression_bounds.BINARY_OPERATORS["+"]

    def slow_add(a, b):  # one step of a long evaluation: the interrupt comes in between
        started.set()
        interrupted.wait(10)
        return original(a, b)

    monkeypatch.setitem(expression_bounds.BINARY_OPERATORS, "+", slow_add)
    outcome = []

    def evaluate():
        try:
            outcome.append(compile_expression("x + 1 + 2 + 3").evaluate({"x": 1}))
        except ExpressionError as e:
            outcome.append(e.message)

    worker = threading.Thread(target=evaluate)
    worker.start()
    assert started.wait(10)
    expression_bounds.interrupt()
    interrupted.set()
    worker.join(10)
    assert outcome == ["x + 1 + 2 + 3: interrupted"]


def test_an_evaluation_stops_at_its_time_bound(monkeypatch):
    monkeypatch.setattr(expression_bounds, "MAX_SECONDS", -1.0)  # every step is past the deadline
    with pytest.raises(ExpressionError, match="took longer than"):
        compile_expression("x + 1").evaluate({"x": 1})


def test_printing_a_huge_nested_result_shows_its_first_items():
    from hlodbg.ui.commands import format_value

    value = compile_expression("[[0] * 10**6] * 10**6").evaluate({})  # 8 MB: within the bounds
    text = format_value(value)
    assert len(text) <= 2000 and text.startswith("((0, 0, 0")
    assert format_value("a" * 10**7, limit=120) == "a" * 119 + "…"
    assert format_value([1, (2, 3)]) == "(1, (2, 3))"
