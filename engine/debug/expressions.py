"""Safe numpy expressions for breakpoint conditions and watches.

An expression is a Python expression over arrays, e.g. `isnan(result).any()`,
`abs(%5).max() > 1e3`, `%0#1[0, :3]` or `iteration == 7 and hit > 2`.

SSA references: `%name` or `%name#k` (name made of `A-Z a-z 0-9 _ $ .`, and `-` before a letter
or `_`, as HLO names such as `%get-tuple-element.4` have; write `%x - y` to subtract) is the value
of that SSA name, fetched through the `lookup` given to `evaluate`. `%` starts a reference only where an
operand is expected: at the start of the expression or after an operator, an opening bracket, a
comma, a colon or a keyword (`and or not in is if else`); spaces do not matter. After an operand
(a name, number, string, reference or closing bracket) `%` is the modulo operator, so `x % 2`,
`x %2`, `%5 % 2` and `(%5)%2` all take a remainder. A `.` followed by one of the array attributes
below (or by a method call) ends a reference, so `%12.mean()` is the mean of `%12` while `%x.y`
names the value `x.y`.

What is allowed: operators, comparisons, `and/or/not`, `a if c else b`, calls, subscripts and
slices, tuple/list displays, literals (numbers, strings, True/False/None, ...), the functions of
FUNCTIONS and the array attributes/methods of ARRAY_ATTRIBUTES. Anything else (lambda,
comprehensions, f-strings, dict/set displays, `:=`, `*`-unpacking, other attributes, names that
start with `_`) is refused when the expression is compiled. Evaluation runs without builtins and
sees every value through a read-only view, so an expression cannot import, open files, reach
Python internals or modify the values it inspects. Its operators and calls run through the guards
of expression_bounds.py: `10**10**10` or `'a' * 10**10` is refused before it starts, one evaluation
stops after a time bound, and an interrupt (Escape in the debugger) stops it at its next step.

Narrow ml_dtypes values (bfloat16, float8, int4, ...) are widened to their compute dtype before
functions and reducing methods see them, so `result.mean()` is right for int4 and bf16 arrays;
`result.dtype` and layout methods (`reshape`, `astype`, ...) still see the stored dtype.
"""
from __future__ import annotations

import ast
import builtins
import functools
import keyword
import math
import re
from typing import Any, Callable, Mapping, Optional

import numpy as np

from ..ir.dtypes import widen
from ..ir.errors import HlodbgError
from ..machine.xla.device_values import is_device_array, to_host
from . import expression_bounds as bounds
from .expression_shapes import quick_comparison, reads_every_value


def _in_words(exc: Exception) -> str:
    """What went wrong evaluating an expression, without Python's exception class names."""
    text = str(exc)
    if isinstance(exc, TypeError) and "ufunc" in text:
        return "these values cannot be combined (their types do not fit together)"
    return text or "it could not be evaluated"


class CaretError(HlodbgError):
    """A problem in a one-line text the user typed (an expression, a breakpoint): `text` and
    `column` (1-based), when the problem has a place, put a caret under it."""

    def __init__(self, message: str, text: Optional[str] = None, column: Optional[int] = None):
        self.text = text
        self.column = column
        super().__init__(message)

    def render(self) -> str:
        head = f"error: {self.message}"
        if self.text is None or self.column is None or "\n" in self.text:
            return head
        return f"{head}\n  {self.text}\n  {' ' * (self.column - 1)}^"


class ExpressionError(CaretError):
    """An expression that cannot be compiled or evaluated; the message says what and where."""


class NotComputedHere(ExpressionError):
    """A `%value` the expression names is not computed at the point it is evaluated at: there the
    expression does not apply (a breakpoint does not hold), which is no fault of the expression."""


# Attributes that only describe or re-lay-out an array: they must see the stored dtype.
_LAYOUT_ATTRIBUTES = frozenset(
    "shape dtype size ndim T real imag astype reshape ravel flatten transpose nonzero item tolist".split()
)
# Methods that compute numbers: numpy gets them wrong or refuses them on narrow ml_dtypes.
_NUMERIC_METHODS = frozenset("max min mean sum std var prod any all argmax argmin round clip cumsum".split())
ARRAY_ATTRIBUTES = _LAYOUT_ATTRIBUTES | _NUMERIC_METHODS

_VALUE = "__hlodbg_value"  # generated call that fetches an SSA reference
_ATTRIBUTE = "__hlodbg_attribute"  # generated call that replaces every attribute access
_BINARY = "__hlodbg_binary"  # generated call that replaces every binary operator (bounds.binary)
_CALL = "__hlodbg_call"  # generated call that wraps every call (bounds.call)
_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_$.")
_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")
_WORD = re.compile(r"\w+")
_NUMBER = re.compile(r"[\w.]+")
_DIGITS = re.compile(r"[0-9]+")
_STRING_PREFIXES = frozenset({"r", "u", "b", "f", "br", "rb", "fr", "rf"})


# ---------------------------------------------------------------------------------------------
# Functions and attribute access available to expressions
# ---------------------------------------------------------------------------------------------


def _wide(x: Any) -> Any:
    # Only ml_dtypes arrays (kind "V") need widening; this check keeps the common case cheap.
    if isinstance(x, (np.ndarray, np.generic)) and x.dtype.kind == "V":
        return widen(x)
    return x


def _named(name: str, function: Callable) -> Callable:
    # Python's own TypeErrors ("abs() takes 1 positional argument...") then name the right function.
    function.__name__ = function.__qualname__ = name
    return function


def _unary(name: str, ufunc: np.ufunc) -> Callable:
    return _named(name, lambda x: ufunc(_wide(x)))


def _reduction(name: str, reduce: Callable) -> Callable:
    return _named(name, lambda x, *args, **kwargs: reduce(_wide(x), *args, **kwargs))


def _extremum(name: str, reduce: Callable, elementwise: np.ufunc) -> Callable:
    def extremum(*args: Any, **kwargs: Any) -> Any:
        if len(args) == 1:
            return reduce(_wide(args[0]), **kwargs)
        if len(args) == 2:
            return elementwise(_wide(args[0]), _wide(args[1]), **kwargs)
        raise TypeError(f"{name}() takes one array (reduction) or two (elementwise), not {len(args)} arguments")

    return _named(name, extremum)


def _where(condition: Any, *choices: Any) -> Any:
    return np.where(_wide(condition), *map(_wide, choices))


def _allclose(a: Any, b: Any, **kwargs: Any) -> bool:
    return bool(np.allclose(_wide(a), _wide(b), **kwargs))


def _norm(x: Any) -> float:
    """The L2 (Frobenius) norm of all elements, in float64."""
    flat = np.ravel(_wide(x))
    if flat.dtype.kind != "c":
        flat = flat.astype(np.float64, copy=False)
    return float(np.linalg.norm(flat))


def _converter(name: str, convert: Callable) -> Callable:
    return _named(name, lambda x: convert(_wide(x)))


FUNCTIONS: dict[str, Any] = {
    "abs": _unary("abs", np.abs),
    "sqrt": _unary("sqrt", np.sqrt),
    "exp": _unary("exp", np.exp),
    "log": _unary("log", np.log),
    "isnan": _unary("isnan", np.isnan),
    "isinf": _unary("isinf", np.isinf),
    "isfinite": _unary("isfinite", np.isfinite),
    "any": _reduction("any", np.any),
    "all": _reduction("all", np.all),
    "sum": _reduction("sum", np.sum),
    "mean": _reduction("mean", np.mean),
    "std": _reduction("std", np.std),
    "var": _reduction("var", np.var),
    "argmax": _reduction("argmax", np.argmax),
    "argmin": _reduction("argmin", np.argmin),
    "count_nonzero": _reduction("count_nonzero", np.count_nonzero),
    "min": _extremum("min", np.min, np.minimum),
    "max": _extremum("max", np.max, np.maximum),
    "where": _named("where", _where),
    "shape": np.shape,
    "size": np.size,
    "len": len,
    "float": _converter("float", float),
    "int": _converter("int", int),
    "bool": _converter("bool", bool),
    "allclose": _named("allclose", _allclose),
    "norm": _named("norm", _norm),
    "nan": math.nan,
    "inf": math.inf,
    "pi": math.pi,
    "e": math.e,
}


def _attribute(obj: Any, name: str) -> Any:
    if name in _NUMERIC_METHODS:
        obj = _wide(obj)
    return bounds.method(obj, name, getattr(obj, name))


# numpy's C code imports helpers lazily (e.g. `ndarray.any` -> numpy._core._methods) through the
# calling frame's builtins, which is the expression's; so __import__ must be there. Expressions
# cannot name it: every name starting with '_' is refused when they are compiled.
_GLOBALS: dict[str, Any] = {
    "__builtins__": {"__import__": builtins.__import__},
    _ATTRIBUTE: _attribute,
    _BINARY: bounds.binary,
    _CALL: bounds.call,
    **FUNCTIONS,
}


def _read_only(value: Any) -> Any:
    """`value` as the expression may see it: arrays become read-only views (no `out=` writes);
    a device array (the XLA backend's) comes to the host, once per evaluation."""
    if is_device_array(value):
        value = to_host(value)
    if isinstance(value, np.ndarray):
        view = value.view()
        view.flags.writeable = False
        return view
    if isinstance(value, (tuple, list)):
        return type(value)(_read_only(v) for v in value)
    if isinstance(value, dict):
        return {k: _read_only(v) for k, v in value.items()}
    return value


# ---------------------------------------------------------------------------------------------
# Compiling
# ---------------------------------------------------------------------------------------------


class Expression:
    """A compiled expression; build it with `compile_expression`. Immutable and reusable."""

    __slots__ = ("text", "names", "values", "strict", "_code", "_columns", "_quick")

    def __init__(self, text: str, names: frozenset[str], values: tuple[str, ...], code: Any,
                 columns: dict[str, int], strict: bool = False, quick: Optional[tuple] = None):
        # compile_expression hands the same Expression to every caller with the same text.
        set_slot = object.__setattr__
        set_slot(self, "text", text)  # as typed
        set_slot(self, "names", names)  # plain names the environment must provide
        set_slot(self, "values", values)  # SSA references, without '%', in order of first use
        # Every evaluation fetches every SSA reference (nothing short-circuits: no `and`/`or`,
        # `x if c else y` or chained comparison), so where one is not computed it cannot hold.
        set_slot(self, "strict", strict)
        # `result > 1e12`, `%5 <= -3`: (kind "value"/"name", name, comparison, number, whether
        # the name is on the left), tested without eval when the value is an array (truth).
        set_slot(self, "_quick", quick)
        set_slot(self, "_code", code)
        set_slot(self, "_columns", columns)  # first column of each name and each "%ref", for messages

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"Expression is immutable; compile a new one instead of setting {name}")

    def __repr__(self) -> str:
        return f"Expression({self.text!r})"

    def evaluate(self, names: Mapping[str, Any], lookup: Optional[Callable[[str], Any]] = None) -> Any:
        """The value of the expression. `names` gives the plain names; `lookup(ssa_name)` the `%` values."""
        if names is None:
            names = {}
        scope: dict[str, Any] = {}
        for name in self.names:
            try:
                scope[name] = _read_only(names[name])
            except KeyError:
                raise self._unknown_name(name, names) from None
        if self.values:
            scope[_VALUE] = self._fetcher(lookup)
        try:
            with np.errstate(all="ignore"), bounds.bounded():
                return eval(self._code, _GLOBALS, scope)
        except ExpressionError:
            raise
        except bounds.EvaluationLimit as exc:
            raise ExpressionError(f"{self.text}: {exc.message}", self.text) from None
        except MemoryError:
            raise ExpressionError(f"{self.text}: there is not enough memory for what it asks", self.text) from None
        except Exception as exc:
            raise ExpressionError(f"{self.text}: {_in_words(exc)}", self.text) from exc

    def truth(self, names: Mapping[str, Any], lookup: Optional[Callable[[str], Any]] = None) -> bool:
        """Whether the expression holds. An array is true anywhere: true if any element is
        nonzero (so `result > 3` holds as soon as one element exceeds 3); None is false;
        anything else is Python's bool()."""
        if self._quick is not None:
            held = self._quick_truth(names, lookup)
            if held is not None:
                return held
        value = self.evaluate(names, lookup)
        if value is None:
            return False
        try:
            if type(value) is np.bool_:
                return bool(value)
            if isinstance(value, (np.ndarray, np.generic)):
                return bool(value.any())
            return bool(value)
        except Exception as exc:
            raise ExpressionError(f"{self.text}: cannot use {type(value).__name__} as a condition: {exc}",
                                  self.text) from exc

    def _quick_truth(self, names: Mapping[str, Any], lookup: Optional[Callable[[str], Any]]) -> Optional[bool]:
        """A comparison of one array with a number, as `truth` would find it but without eval,
        read-only views or numpy's error state (comparisons raise no floating-point errors): a
        breakpoint condition is tested at every op of a long run. None: evaluate it in full
        (anything but an array, or a lookup that fails, which then fails with its own message)."""
        kind, name, compare, number, name_first = self._quick
        try:
            value = names[name] if kind == "name" else lookup(name)
            if type(value) is not np.ndarray:
                return None
            out = compare(value, number) if name_first else compare(number, value)
        except Exception:  # noqa: BLE001 - the full evaluation reports it
            return None
        return bool(out) if type(out) is np.bool_ else bool(out.any())

    def check_names(self, known) -> None:
        """Refuse, now rather than at every evaluation, a plain name outside `known` (so a typo or
        an op kind read as `get - tuple - element` is an error, not a test that never holds)."""
        unknown = sorted(self.names - frozenset(known), key=self._columns.__getitem__)
        if unknown:
            raise self._unknown_name(unknown[0], dict.fromkeys(known))

    def _unknown_name(self, name: str, names: Mapping[str, Any]) -> ExpressionError:
        column = self._columns[name]
        known = ", ".join(sorted(map(str, names))) or "none"
        functions = ", ".join(sorted(FUNCTIONS))
        return ExpressionError(f"unknown name '{name}' at column {column} (known: {known}; functions: {functions})",
                               self.text, column)

    def _fetcher(self, lookup: Optional[Callable[[str], Any]]) -> Callable[[str], Any]:
        def fetch(name: str) -> Any:
            column = self._columns["%" + name]
            if lookup is None:
                raise ExpressionError(f"%{name} at column {column} cannot be used here: no SSA values are available",
                                      self.text, column)
            try:
                return _read_only(lookup(name))
            except ExpressionError:
                raise
            except KeyError:
                raise NotComputedHere(f"unknown value %{name} at column {column}", self.text, column) from None
            except Exception as exc:
                raise ExpressionError(f"looking up %{name} failed: {exc}", self.text, column) from exc

        return fetch


def compile_expression(text: str) -> Expression:
    """Parse and validate `text` once; raise ExpressionError saying what is refused and where."""
    if not isinstance(text, str):
        raise ExpressionError(f"an expression must be a string, not {type(text).__name__}")
    return _compile(text)


@functools.lru_cache(maxsize=512)  # breakpoints re-set with the same text reuse the compiled code
def _compile(text: str) -> Expression:
    if not text.strip():
        raise ExpressionError("empty expression", text)
    source, origin, values = _substitute_references(text)
    indent = len(source) - len(source.lstrip())  # Python would call leading spaces an indent
    source, origin = source[indent:], origin[indent:]
    source += "\n"  # without it Python places a syntax error at the end of the text in column 0
    origin.append(origin[-1])
    locate = _Locator(text, source, origin)
    try:
        tree = ast.parse(source, mode="eval")
        columns = _validate(tree, locate)
        strict = reads_every_value(tree)
        tree = ast.fix_missing_locations(_rewrite(tree))
        code = compile(tree, "<expression>", "eval")
    except SyntaxError as exc:
        offset = locate.syntax_error(exc)
        detail = "" if exc.msg == "invalid syntax" else f": {exc.msg}"
        raise locate.error(f"invalid syntax{detail}", offset) from None
    except (RecursionError, MemoryError):  # Python's parser and compiler recurse per nesting level
        raise ExpressionError("expression is nested too deeply", text) from None
    columns.update(("%" + name, _column(text, offset)) for name, offset in values.items())
    names = frozenset(name for name in columns if not name.startswith("%"))
    return Expression(text, names, tuple(values), code, columns, strict,
                      quick_comparison(tree, _VALUE, frozenset(FUNCTIONS)))




class _Locator:
    """Maps positions in the rewritten source back to the text as typed."""

    def __init__(self, text: str, source: str, origin: list[int]):
        self.text = text
        self.source = source
        self.origin = origin
        self.line_starts = [0] + [i + 1 for i, c in enumerate(source) if c == "\n"]

    def node(self, node: ast.AST) -> int:
        return self._offset(node.lineno, node.col_offset, in_bytes=True)

    def syntax_error(self, exc: SyntaxError) -> int:
        return self._offset(exc.lineno or 1, (exc.offset or 1) - 1, in_bytes=False)

    def _offset(self, lineno: int, column: int, in_bytes: bool) -> int:
        lineno = min(max(lineno, 1), len(self.line_starts))
        start = self.line_starts[lineno - 1]
        if in_bytes:  # ast columns count UTF-8 bytes
            line = self.source[start:].split("\n", 1)[0]
            column = len(line.encode("utf-8")[:column].decode("utf-8", errors="ignore"))
        position = min(max(start + column, 0), len(self.source))
        return self.origin[position]

    def error(self, message: str, offset: int) -> ExpressionError:
        return _error_at(self.text, message, offset)


def _column(text: str, offset: int) -> int:
    return offset - (text.rfind("\n", 0, offset) + 1) + 1


def _error_at(text: str, message: str, offset: int) -> ExpressionError:
    column = _column(text, offset)
    if "\n" in text:
        return ExpressionError(f"{message} (line {text.count(chr(10), 0, offset) + 1}, column {column})", text, column)
    return ExpressionError(f"{message} (column {column})", text, column)


def _substitute_references(text: str) -> tuple[str, list[int], dict[str, int]]:
    """Replace `%name` references by `__hlodbg_value('name')` calls.

    Returns the rewritten source, for each of its characters (and its end) the offset in `text`
    it came from, and the referenced names (in order of first use) with the offset of their '%'.
    """
    pieces: list[str] = []
    origin: list[int] = []
    values: dict[str, int] = {}

    def emit(piece: str, at: int, spread: bool = True) -> None:
        pieces.append(piece)
        origin.extend(range(at, at + len(piece)) if spread else [at] * len(piece))

    i, n = 0, len(text)
    expect_operand = True
    while i < n:
        c = text[i]
        if c.isspace() or c == "\\":
            emit(c, i)
            i += 1
        elif c in "'\"":
            end = _string_end(text, i)
            emit(text[i:end], i)
            i, expect_operand = end, False
        elif c.isalpha() or c == "_":
            word = _WORD.match(text, i).group()
            end = i + len(word)
            if word.startswith("_"):
                what = "attribute" if text[:i].rstrip().endswith(".") else "name"
                raise _error_at(text, f"{what} '{word}' is not allowed: names starting with '_' are private", i)
            if word.lower() in _STRING_PREFIXES and end < n and text[end] in "'\"":
                end = _string_end(text, end)
                expect_operand = False
            else:
                expect_operand = keyword.iskeyword(word) and word not in ("True", "False", "None")
            emit(text[i:end], i)
            i = end
        elif c.isdigit() or (c == "." and i + 1 < n and text[i + 1].isdigit()):
            end = _NUMBER.match(text, i).end()
            emit(text[i:end], i)
            i, expect_operand = end, False
        elif c == "#":
            raise _error_at(text, "'#' is only allowed in a value reference such as %0#1", i)
        elif c == "%" and expect_operand and i + 1 < n and text[i + 1] in _NAME_CHARS:
            name, end = _reference(text, i)
            values.setdefault(name, i)
            emit(f"{_VALUE}({name!r})", i, spread=False)
            i, expect_operand = end, False
        else:
            emit(c, i)
            i += 1
            expect_operand = c not in ")]}"
    origin.append(n)
    return "".join(pieces), origin, values


def _reference(text: str, start: int) -> tuple[str, int]:
    """The SSA name of the reference whose '%' is at `start`, and where the reference ends."""
    n = len(text)
    end = start + 1
    while end < n and (text[end] in _NAME_CHARS or _joins_name(text, end)):
        if text[end] == ".":
            attribute = _IDENTIFIER.match(text, end + 1)
            if attribute and (attribute.end() == n or text[attribute.end()] != "$"):
                after = attribute.end()
                if attribute.group() in ARRAY_ATTRIBUTES or text[after:after + 1] == "(":
                    break  # `%12.mean()`: the reference is %12
        end += 1
    name = text[start + 1:end].rstrip(".")
    end = start + 1 + len(name)
    if not name:
        raise _error_at(text, "'%' must be followed by an SSA name, as in %0 or %arg0", start)
    if end < n and text[end] == "#":
        digits = _DIGITS.match(text, end + 1)
        if digits is None:
            raise _error_at(text, f"'#' after %{name} must be followed by a result number, as in %{name}#1", end)
        name += "#" + digits.group()
        end = digits.end()
    return name, end


def _joins_name(text: str, at: int) -> bool:
    """Whether the '-' at `at` is inside a name, as in HLO's `%get-tuple-element.4`: it is when a
    letter or '_' follows, so `%x-1` still subtracts (and `%x - y` with spaces does too)."""
    return text[at] == "-" and at + 1 < len(text) and (text[at + 1].isalpha() or text[at + 1] == "_")


def _string_end(text: str, start: int) -> int:
    """The offset just past the string literal whose opening quote is at `start`."""
    quote = text[start] * 3 if text.startswith(text[start] * 3, start) else text[start]
    i = start + len(quote)
    while i < len(text):
        if text[i] == "\\":
            i += 2
        elif text.startswith(quote, i):
            return i + len(quote)
        else:
            i += 1
    return len(text)  # unterminated: ast.parse reports it


_OPERATORS = (ast.operator, ast.unaryop, ast.cmpop, ast.boolop, ast.expr_context)
_ALLOWED_NODES = (
    ast.Expression, ast.BoolOp, ast.BinOp, ast.UnaryOp, ast.Compare, ast.IfExp, ast.Call, ast.keyword,
    ast.Attribute, ast.Subscript, ast.Slice, ast.Tuple, ast.List, ast.Constant, ast.Name, *_OPERATORS,
)
_CONSTANT_TYPES = (int, float, complex, str, bool, type(None), type(Ellipsis))
_CONSTRUCT_NAMES = {
    "Lambda": "lambda", "ListComp": "list comprehension", "SetComp": "set comprehension",
    "DictComp": "dict comprehension", "GeneratorExp": "generator expression", "Starred": "'*' unpacking",
    "NamedExpr": "assignment expression ':='", "JoinedStr": "f-string", "FormattedValue": "f-string",
    "Await": "await", "Yield": "yield", "YieldFrom": "yield from", "Dict": "dict display {...}",
    "Set": "set display {...}",
}


def _validate(tree: ast.Expression, locate: _Locator) -> dict[str, int]:
    """Refuse anything outside the allowed subset (the leftmost problem is reported).

    Returns the plain names used, each with the first column it appears at."""
    problems: list[tuple[int, str]] = []
    name_columns: dict[str, int] = {}
    for node in ast.walk(tree):
        if not isinstance(node, _ALLOWED_NODES):
            # Unplaced nodes (a lambda's arguments, a comprehension's `for`) sit inside a refused one.
            if hasattr(node, "lineno"):
                construct = _CONSTRUCT_NAMES.get(type(node).__name__, type(node).__name__)
                problems.append((locate.node(node), f"{construct} is not allowed in an expression"))
        elif isinstance(node, ast.Constant) and not isinstance(node.value, _CONSTANT_TYPES):
            problems.append((locate.node(node), f"{type(node.value).__name__} literals are not allowed"))
        elif isinstance(node, ast.Attribute) and node.attr not in ARRAY_ATTRIBUTES:
            offset = _attribute_offset(node, locate)
            allowed = ", ".join(sorted(ARRAY_ATTRIBUTES))
            problems.append((offset, f"attribute '{node.attr}' is not allowed (allowed: {allowed})"))
        elif isinstance(node, ast.keyword) and node.arg is None:
            problems.append((locate.node(node), "'**' unpacking is not allowed"))
        elif isinstance(node, ast.Name) and node.id != _VALUE:
            offset = locate.node(node)
            if node.id.startswith("_"):
                problems.append((offset, f"name '{node.id}' is not allowed: names starting with '_' are private"))
            elif node.id not in FUNCTIONS:
                column = _column(locate.text, offset)
                name_columns[node.id] = min(name_columns.get(node.id, column), column)
    if problems:
        offset, message = min(problems)
        raise locate.error(message, offset)
    return name_columns


def _attribute_offset(node: ast.Attribute, locate: _Locator) -> int:
    """Where the attribute's name is typed (after the dot), for a precise caret."""
    end = locate.node(node.value)
    dot = locate.text.find("." + node.attr, end)
    return dot + 1 if dot >= 0 else end


def _rewrite(tree: ast.Expression) -> ast.Expression:
    """`x.mean` -> `__hlodbg_attribute(x, 'mean')`, so narrow dtypes are widened for numeric
    methods; `a ** b` -> `__hlodbg_binary('**', a, b)` and `f(x)` -> `__hlodbg_call(f, x)`, so
    expression_bounds checks each step before it runs.

    Iterative (children before parents) so long chains like `a + a + ... + a` do not recurse.
    """
    for node in reversed(list(ast.walk(tree))):
        for field, child in ast.iter_fields(node):
            if isinstance(child, ast.AST):
                setattr(node, field, _guarded(child))
            elif isinstance(child, list):
                child[:] = [_guarded(c) if isinstance(c, ast.AST) else c for c in child]
    return tree


_OPERATOR_SYMBOLS = {
    ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%", ast.Pow: "**",
    ast.LShift: "<<", ast.RShift: ">>", ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^", ast.MatMult: "@",
}


def _guarded(node: ast.AST) -> ast.AST:
    if isinstance(node, ast.Attribute):
        return _generated_call(_ATTRIBUTE, [node.value, ast.Constant(node.attr)], [], node)
    if isinstance(node, ast.BinOp):
        return _generated_call(_BINARY, [ast.Constant(_OPERATOR_SYMBOLS[type(node.op)]), node.left, node.right], [], node)
    if isinstance(node, ast.Call) and not (isinstance(node.func, ast.Name) and node.func.id.startswith("__hlodbg")):
        return _generated_call(_CALL, [node.func, *node.args], node.keywords, node)
    return node


def _generated_call(name: str, args: list, keywords: list, node: ast.AST) -> ast.Call:
    call = ast.Call(func=ast.Name(id=name, ctx=ast.Load()), args=args, keywords=keywords)
    return ast.copy_location(call, node)
