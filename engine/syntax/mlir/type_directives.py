"""Type directives of the op formats (format.py): how the trailing `: ...` of an op's pretty form
gives its operand and result types, e.g. `%functional` reads `: (T1, T2) -> R` and `%same` reads
one type `T` when every operand and the result have it (else the functional form).

Each directive is a pair in TYPE_DIRECTIVES: parse(state) reads the types into a ParseState (checking
them against the operands' known types), print(op) writes them back.
"""
from __future__ import annotations

from typing import Callable, Optional

from ...ir.core import Operation
from ...ir.types import ComplexType, FunctionType, TensorType, TupleType, Type, format_result_types
from .parse_state import ParseState


def _start_types(state: ParseState) -> None:
    state.p.skip_ws()
    state.type_pos = state.p.pos


def _parse_functional(state: ParseState) -> None:
    _start_types(state)
    p = state.p
    t = p.parse_type("a function type (operand types) -> result types")
    if not isinstance(t, FunctionType):
        p.error(f"{state.opdef.name} ends with a function type such as (tensor<f32>) -> tensor<f32>", state.type_pos)
    state.check_operand_types(list(t.inputs))
    state.result_types = list(t.results)


def _print_functional(op: Operation) -> str:
    return str(FunctionType(tuple(op.operand_types), tuple(op.result_types)))


def _took_functional(state: ParseState, t: Type) -> bool:
    """Every short type form may also be written as a full function type; take it if it is one."""
    if not isinstance(t, FunctionType):
        return False
    state.check_operand_types(list(t.inputs))
    state.result_types = list(t.results)
    return True


def _parse_same(state: ParseState) -> None:
    """SameOperandsAndResultType: `: T` when every operand and the result are T, else functional."""
    _start_types(state)
    p = state.p
    t = p.parse_type()
    if _took_functional(state, t):
        return
    state.check_operand_types([t] * len(state.operands))
    state.result_types = [t]


def _print_same(op: Operation) -> str:
    types = op.operand_types + op.result_types
    if types and all(t == types[0] for t in types):
        return f"{types[0]}"
    return _print_functional(op)


def _parse_select(state: ParseState) -> None:
    """`: P, T` (predicate type, then the type of both branches and the result) or functional."""
    _start_types(state)
    p = state.p
    first = p.parse_type()
    if _took_functional(state, first):
        return
    p.expect(",", "and the type of the selected values")
    second = p.parse_type()
    state.check_operand_types([first, second, second])
    state.result_types = [second]


def _print_select(op: Operation) -> str:
    pred, on_true, on_false = op.operand_types
    result = op.result_types[0]
    if on_true == on_false == result:
        return f"{pred}, {result}"
    return _print_functional(op)


def _real_of(t: Type) -> Optional[Type]:
    if isinstance(t, TensorType) and isinstance(t.element, ComplexType):
        return TensorType(t.shape, t.element.element, t.encoding)
    return None


def _parse_complex(state: ParseState) -> None:
    _start_types(state)
    t = state.p.parse_type()
    if _took_functional(state, t):
        return
    real = _real_of(t)
    if real is None:
        state.p.error(f"stablehlo.complex produces a complex tensor, not {t}", state.type_pos)
    state.check_operand_types([real, real])
    state.result_types = [t]


def _print_complex(op: Operation) -> str:
    real = _real_of(op.result_types[0])
    if real is not None and all(t == real for t in op.operand_types):
        return f"{op.result_types[0]}"
    return _print_functional(op)


def _parse_tuple(state: ParseState) -> None:
    _start_types(state)
    t = state.p.parse_type("a tuple type")
    if _took_functional(state, t):
        return
    if not isinstance(t, TupleType):
        state.p.error(f"stablehlo.tuple produces a tuple type, not {t}", state.type_pos)
    state.check_operand_types(list(t.types))
    state.result_types = [t]


def _print_tuple(op: Operation) -> str:
    return f"{op.result_types[0]}"


def _parse_variadic_same(state: ParseState) -> None:
    """after_all: `: !stablehlo.token` — the one type of the inputs and the result."""
    _start_types(state)
    t = state.p.parse_type()
    if _took_functional(state, t):
        return
    state.check_operand_types([t] * len(state.operands))
    state.result_types = [t]


def _print_variadic_same(op: Operation) -> str:
    return f"{op.result_types[0]}"


def _parse_pairwise(state: ParseState) -> None:
    """optimization_barrier: `: T1, T2` — each result has its operand's type."""
    _start_types(state)
    types = state.p.parse_type_list()
    state.check_operand_types(types)
    state.result_types = types


def _print_pairwise(op: Operation) -> str:
    return ", ".join(map(str, op.operand_types))


def _parse_results(state: ParseState) -> None:
    """`: T` or `: T1, T2` — the result types only (ops without operands)."""
    _start_types(state)
    state.result_types = state.p.parse_type_list()


def _print_results(op: Operation) -> str:
    return ", ".join(map(str, op.result_types))


def _parse_operands_arrow(state: ParseState) -> None:
    """`: T1, T2 -> R` or `: T -> (R1, R2)` (chlo style: operand types, arrow, result types)."""
    _start_types(state)
    p = state.p
    operand_types = p.parse_type_list()
    if len(operand_types) == 1 and isinstance(operand_types[0], FunctionType) and not p.peek("->"):
        ftype = operand_types[0]
        state.check_operand_types(list(ftype.inputs))
        state.result_types = list(ftype.results)
        return
    p.expect("->", "and the result types")
    results = p.parse_result_types()
    state.check_operand_types(operand_types)
    state.result_types = results


def _print_operands_arrow(op: Operation) -> str:
    return ", ".join(map(str, op.operand_types)) + " -> " + format_result_types(op.result_types)


def _parse_operand_types(state: ParseState) -> None:
    """return: `: T1, T2` after the operands, absent when there are none."""
    p = state.p
    if not state.operands:
        state.result_types = []
        return
    p.expect(":", "and the operand types")
    _start_types(state)
    state.check_operand_types(p.parse_type_list())
    state.result_types = []


def _print_operand_types(op: Operation) -> str:
    if not op.operands:
        return ""
    return ": " + ", ".join(map(str, op.operand_types))


def _parse_operands_same(state: ParseState) -> None:
    """`: T` — the one type of every operand; the op has no results (check.expect_eq)."""
    _start_types(state)
    t = state.p.parse_type()
    state.check_operand_types([t] * len(state.operands))
    state.result_types = []


def _print_operands_same(op: Operation) -> str:
    return f"{op.operand_types[0]}"


def _parse_operand_list(state: ParseState) -> None:
    """`: T1, T2` — each operand's type; the op has no results (check.expect_close)."""
    _start_types(state)
    state.check_operand_types(state.p.parse_type_list())
    state.result_types = []


def _parse_cast(state: ParseState) -> None:
    """`T to U`: the operand's type, then the result's (tensor.cast)."""
    _start_types(state)
    p = state.p
    state.check_operand_types([p.parse_type("the type cast from")])
    p.expect_keyword("to", "between the types cast from and to")
    state.result_types = [p.parse_type("the type cast to")]


def _print_cast(op: Operation) -> str:
    return f"{op.operand_types[0]} to {op.result_types[0]}"


def _parse_no_results(state: ParseState) -> None:
    """Nothing to read: operand types are known from the values, and there are no results."""
    state.result_types = []


TYPE_DIRECTIVES: dict[str, tuple[Callable, Callable]] = {
    "functional": (_parse_functional, _print_functional),
    "same": (_parse_same, _print_same),
    "select": (_parse_select, _print_select),
    "complex": (_parse_complex, _print_complex),
    "tuple": (_parse_tuple, _print_tuple),
    "variadic_same": (_parse_variadic_same, _print_variadic_same),
    "pairwise": (_parse_pairwise, _print_pairwise),
    "results": (_parse_results, _print_results),
    "operands_arrow": (_parse_operands_arrow, _print_operands_arrow),
    "operand_types": (_parse_operand_types, _print_operand_types),
    "operands_same": (_parse_operands_same, _print_operands_same),
    "operand_list": (_parse_operand_list, _print_pairwise),
    "no_results": (_parse_no_results, lambda op: ""),
    "cast": (_parse_cast, _print_cast),
}
