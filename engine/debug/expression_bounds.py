"""The work and memory one expression may ask for, checked before each step (expressions.py
rewrites its operators and calls into the guarded forms here when it compiles one).

Python's `int ** int`, `str * int` and numpy's broadcasting are single C calls: once started they
hold the interpreter until they finish (`10**10**10` for hours, `'a' * 10**10` until memory runs
out), and nothing (a trace hook, Escape, SIGTERM's handler) gets a turn. So the size of what an
operator or a call would make is worked out from its operands first, and refused past a bound;
every guarded step also checks the evaluation's deadline and whether it was interrupted. What is
left unguarded (a reduction over a value the program made) is bounded by that value's size.
"""
from __future__ import annotations

import math
import operator
import re
import sys
import threading
import time
from typing import Any, Callable

import numpy as np

from ..ir.errors import HlodbgError

MAX_SECONDS = 10.0  # one evaluation (a `print`, a watch, one test of a condition)
MAX_ARRAY_BYTES = 512 * 2**20  # a new array an expression makes
MAX_OBJECT_BYTES = 16 * 2**20  # a new str, bytes, list or tuple
MAX_MATMUL_STEPS = 2 * 10**9  # multiply-adds of one `@`
_POINTER = 8  # bytes per list/tuple item
_WIDEST_ITEM = 16  # bytes per element of an array result whose dtype is not known yet (complex128)


class EvaluationLimit(HlodbgError):
    """An expression that asked for more than its bounds (the message says which and how much)."""


def _max_int_bits() -> int:
    """Integers as large as Python will still print (its own digit limit), in bits."""
    digits = sys.get_int_max_str_digits() if hasattr(sys, "get_int_max_str_digits") else 0
    return int((digits or 4300) * math.log2(10))


class _Evaluation(threading.local):
    deadline = math.inf
    interrupts = 0


_current = _Evaluation()
_interrupts = [0]  # bumped by interrupt(); an evaluation that saw it change stops


def interrupt() -> None:
    """From any thread: make the expressions being evaluated now stop at their next step."""
    _interrupts[0] += 1


class bounded:
    """`with bounded(): ...` one evaluation: its deadline starts now (nested ones keep the outer)."""

    def __enter__(self):
        self.outer = (_current.deadline, _current.interrupts)
        if _current.deadline == math.inf:
            _current.deadline = time.monotonic() + MAX_SECONDS
            _current.interrupts = _interrupts[0]
        return self

    def __exit__(self, *exc) -> None:
        _current.deadline, _current.interrupts = self.outer


def _check_time() -> None:
    if _interrupts[0] != _current.interrupts:
        raise EvaluationLimit("interrupted")
    if time.monotonic() > _current.deadline:
        raise EvaluationLimit(f"it took longer than {MAX_SECONDS:g} s, the bound of one expression")


def _plain_int(x: Any) -> bool:
    return type(x) is int or type(x) is bool


def _int_bits(op: str, left: int, right: int) -> int:
    """The size in bits of `left op right` for Python ints (an upper bound)."""
    if op == "**":
        if right <= 0 or abs(left) <= 1:
            return 1
        return math.ceil(right * math.log2(abs(left)))
    if op == "*":
        return left.bit_length() + right.bit_length()
    return left.bit_length() + (right if right > 0 else 0)  # "<<"


def _is_array(x: Any) -> bool:
    return isinstance(x, (np.ndarray, np.generic))


def _elements(x: Any) -> int:
    """How many elements numpy sees in `x` (an upper bound on its share of a broadcast)."""
    if type(x) is np.ndarray:
        return x.size
    if isinstance(x, (int, float, complex, np.generic)):
        return 1
    return int(np.size(x))


def _sequence_bytes(seq: Any, count: int) -> int:
    if isinstance(seq, (list, tuple)):
        per_item = _POINTER
    else:
        per_item = 1 if isinstance(seq, bytes) or seq.isascii() else 4
    return len(seq) * max(count, 0) * per_item


def _too_big(text: str, size: int, bound: int) -> EvaluationLimit:
    return EvaluationLimit(f"{text} would make {_amount(size)}, more than the {_amount(bound)} an expression may make")


def _amount(size: int) -> str:
    for unit, scale in (("GB", 2**30), ("MB", 2**20), ("KB", 2**10)):
        if size >= scale:
            return f"{size / scale:,.1f} {unit}"
    return f"{size} bytes"


def _check_array_result(what: str, shapes: list) -> None:
    try:
        shape = np.broadcast_shapes(*shapes)
    except ValueError:
        return  # numpy says the shapes do not fit, and makes nothing
    size = math.prod(shape) * _WIDEST_ITEM
    if size > MAX_ARRAY_BYTES:
        raise _too_big(what, size, MAX_ARRAY_BYTES)


def _check_binary(op: str, left: Any, right: Any) -> None:
    if _plain_int(left) and _plain_int(right) and op in ("**", "*", "<<"):
        bits = _int_bits(op, left, right)
        if bits > _max_int_bits():
            digits = int(bits * math.log10(2))
            raise EvaluationLimit(f"'{op}' would make an integer of about {digits:,} digits "
                                  f"(expressions work with integers of up to {sys.get_int_max_str_digits():,} digits)")
        return
    if _is_array(left) or _is_array(right):
        if op == "@":
            _check_matmul(left, right)
        elif _elements(left) * _elements(right) * _WIDEST_ITEM > MAX_ARRAY_BYTES:  # else no broadcast can be too big
            _check_array_result(f"'{op}'", [np.shape(left), np.shape(right)])
        return
    if op == "*":
        for seq, count in ((left, right), (right, left)):
            if isinstance(seq, (str, bytes, list, tuple)) and _plain_int(count):
                size = _sequence_bytes(seq, count)
                if size > MAX_OBJECT_BYTES:
                    raise _too_big("'*'", size, MAX_OBJECT_BYTES)
    elif op == "%" and isinstance(left, str):
        _check_formatting(left, right)
    elif op == "+" and isinstance(left, (str, bytes, list, tuple)) and type(left) is type(right):
        size = _sequence_bytes(left, 1) + _sequence_bytes(right, 1)
        if size > MAX_OBJECT_BYTES:
            raise _too_big("'+'", size, MAX_OBJECT_BYTES)


_CONVERSION = re.compile(r"%[#0 +-]*(\*|\d+)?(?:\.(\*|\d+))?")
MAX_FIELD = 10_000  # characters one `%` conversion may pad to


def _check_formatting(text: str, values: Any) -> None:
    """`'%0999999999d' % 1` pads to a gigabyte inside one C call: widths and precisions are bounded."""
    for width, precision in _CONVERSION.findall(text):
        for field in (width, precision):
            if field == "*" or (field and int(field) > MAX_FIELD):
                raise EvaluationLimit(f"'%' formatting pads to at most {MAX_FIELD:,} characters a field "
                                      f"(and takes no '*' widths), not {field}")
    items = values if isinstance(values, tuple) else (values,)
    size = len(text) + sum(len(item) if isinstance(item, str) else 64 for item in items)
    if size > MAX_OBJECT_BYTES:
        raise _too_big("'%'", size, MAX_OBJECT_BYTES)


def _check_matmul(left: Any, right: Any) -> None:
    a, b = np.shape(left), np.shape(right)
    if not a or not b:
        return  # numpy refuses a 0-d operand
    a2, b2 = (a if len(a) > 1 else (1,) + a), (b if len(b) > 1 else b + (1,))
    try:
        batch = np.broadcast_shapes(a2[:-2], b2[:-2])
    except ValueError:
        return
    elements = math.prod(batch) * a2[-2] * b2[-1]
    if elements * _WIDEST_ITEM > MAX_ARRAY_BYTES:
        raise _too_big("'@'", elements * _WIDEST_ITEM, MAX_ARRAY_BYTES)
    if elements * a2[-1] > MAX_MATMUL_STEPS:
        raise EvaluationLimit(f"'@' would take {elements * a2[-1]:,} multiply-adds, "
                              f"more than the {MAX_MATMUL_STEPS:,} an expression may ask for")


BINARY_OPERATORS: dict[str, Callable[[Any, Any], Any]] = {
    "+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv, "//": operator.floordiv,
    "%": operator.mod, "**": operator.pow, "<<": operator.lshift, ">>": operator.rshift, "&": operator.and_,
    "|": operator.or_, "^": operator.xor, "@": operator.matmul,
}


def binary(op: str, left: Any, right: Any) -> Any:
    """`left op right`, once its size is known to be within the bounds."""
    _check_time()
    _check_binary(op, left, right)
    return BINARY_OPERATORS[op](left, right)


# Functions whose result is as big as their arguments broadcast together.
BROADCASTING = frozenset({"where", "min", "max", "allclose"})


def call(function: Any, *args: Any, **kwargs: Any) -> Any:
    """`function(*args, **kwargs)`, after the time check (and, for the broadcasting functions,
    the size of their result)."""
    _check_time()
    if getattr(function, "__name__", "") in BROADCASTING and len(args) > 1:
        _check_array_result(f"{function.__name__}()", [np.shape(a) for a in args])
    return function(*args, **kwargs)


def method(obj: Any, name: str, bound: Any) -> Any:
    """The array method `bound` (`obj.name`), wrapped where its result can outgrow `obj`: `astype`
    to a wide dtype (`'U100000'`), `tolist` (a Python object per element)."""
    if not isinstance(obj, np.ndarray) or name not in ("astype", "tolist"):
        return bound

    def checked(*args: Any, **kwargs: Any) -> Any:
        _check_time()
        if name == "tolist":
            size = obj.size * 4 * _POINTER
            if size > MAX_OBJECT_BYTES:
                raise _too_big(".tolist()", size, MAX_OBJECT_BYTES)
        elif args or "dtype" in kwargs:
            wanted = args[0] if args else kwargs["dtype"]
            try:
                itemsize = np.dtype(wanted).itemsize
            except TypeError:
                itemsize = 0  # numpy names the dtype it does not know
            size = obj.size * max(itemsize, obj.itemsize)
            if size > MAX_ARRAY_BYTES:
                raise _too_big(".astype()", size, MAX_ARRAY_BYTES)
        return bound(*args, **kwargs)

    checked.__name__ = checked.__qualname__ = name
    return checked
