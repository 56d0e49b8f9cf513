"""The verifier: checks a parsed module against the StableHLO spec's per-op constraints.

`verify(module)` raises the first VerifyError in textual order; `verify_all(module)` returns every
error (at most one per op). Each message names the op, what is wrong and the spec constraint, e.g.
`stablehlo.add: operands must have the same shape: tensor<2xf32> vs tensor<3xf32> (C1)`, and the
error points at the op's position in the source.

Every op with an OpDef gets generic checks (operand, result and region counts, required attributes
and their kinds); the ops of the spec also get their own constraints, with result types inferred
where the spec defines them (see shape_inference.py). Ops without an OpDef are accepted as they
are. Dynamic dimensions and quantized element types are compared loosely so that valid programs
are never rejected.
"""
from __future__ import annotations

from typing import Callable, Iterator, Optional, Sequence

import numpy as np

from . import attributes as A
from . import syntax as _syntax  # noqa: F401  (registers the OpDefs)
from .errors import VerifyError
from .ir import Block, Function, Module, Operation
from .opdefs import OPS, OpDef
from .shape_inference import (
    Fail,
    check_range,
    check_scatter_shapes,
    check_unique,
    dim_eq,
    elem,
    element_compatible,
    fail,
    fmt_shape,
    fmt_types,
    infer_concatenate,
    infer_convolution,
    infer_dot_general,
    infer_fft,
    infer_gather,
    infer_pad,
    infer_slice,
    is_bool_e,
    is_complex_e,
    is_float_e,
    is_int_e,
    is_promotable,
    is_quant_e,
    is_signed_int_e,
    is_token,
    is_unsigned_int_e,
    num_bits,
    product,
    rank_of,
    real_part_type,
    shape_of,
    shapes_compatible,
    types_compatible,
    window_count,
)
from .types import ComplexType, FloatType, IntegerType, QuantizedType, TensorType, TupleType, Type

CHECKS: dict[str, Callable[[Operation, "_Context"], None]] = {}


def _register(*names: str):
    def decorate(fn):
        for name in names:
            CHECKS[name] = fn
        return fn

    return decorate


class _Context:
    def __init__(self, module: Module):
        self.module = module
        self.functions: dict[str, Function] = {}
        self.duplicates: set[int] = set()
        for op in module.operations:
            if isinstance(op, Function):
                name = str(op.attributes.get("sym_name", ""))
                if name in self.functions:
                    self.duplicates.add(id(op))
                else:
                    self.functions[name] = op


# ---------------------------------------------------------------------------------------------
# Entry points
# ---------------------------------------------------------------------------------------------


def verify(module: Module) -> None:
    """Raise the first VerifyError found (in textual order); return None for a valid module."""
    for error in _errors(module):
        raise error


def verify_all(module: Module) -> list[VerifyError]:
    """Every error found, at most one per op, in textual order."""
    return list(_errors(module))


def _errors(module: Module) -> Iterator[VerifyError]:
    ctx = _Context(module)
    for top in module.operations:
        for op in top.walk():
            error = _verify_op(op, ctx)
            if error is not None:
                yield error


def _verify_op(op: Operation, ctx: _Context) -> Optional[VerifyError]:
    try:
        opdef = OPS.get(op.name)
        if opdef is not None:
            _check_generic(op, opdef)
        _check_structure(op, opdef, ctx)
        check = CHECKS.get(op.name)
        if check is not None:
            check(op, ctx)
    except Fail as f:
        suffix = f" ({f.constraint})" if f.constraint else ""
        return VerifyError(f"{op.name}: {f.message}{suffix}", op.pos)
    except Exception as e:  # malformed IR that a check did not anticipate
        return VerifyError(f"{op.name}: cannot verify this op ({type(e).__name__}: {e})", op.pos)
    return None


# ---------------------------------------------------------------------------------------------
# Generic checks: counts and attribute kinds from the OpDef
# ---------------------------------------------------------------------------------------------


def _check_generic(op: Operation, opdef: OpDef) -> None:
    n = len(op.operands)
    if opdef.operand_groups(n) is None:
        if opdef.variadic:
            expected = f"at least {opdef.min_operands}"
            if opdef.same_variadic_size:
                expected += " (variadic groups of equal size)"
        else:
            expected = str(opdef.min_operands)
        fail(f"expects {expected} operand{'s' if expected != '1' else ''}, got {n}")
    if not opdef.result_count_ok(len(op.results)):
        plural = "" if opdef.results == "1" else "s"
        fail(f"expects {opdef.results} result{plural}, got {len(op.results)}")
    regions = len(op.regions)
    if op.name == "func.func":
        if regions > 1:
            fail(f"expects at most one region, got {regions}")
    elif not opdef.region_count_ok(regions):
        names = opdef.regions
        if names and names[-1].endswith("*"):
            expected = f"at least {len(names) - 1}"
        else:
            expected = str(len(names))
        fail(f"expects {expected} region{'s' if expected != '1' else ''}, got {regions}")
    for name, spec in opdef.attrs.items():
        if name not in op.attributes:
            if spec.required:
                fail(f"missing required attribute '{name}'")
            continue
        value = op.attributes[name]
        if not _attr_kind_ok(spec.kind, value):
            fail(f"attribute '{name}' must be {_KIND_TEXT.get(spec.kind.split('.')[0], spec.kind)}, "
                 f"got {_attr_text(value)}")


_KIND_TEXT = {
    "i64": "an integer attribute",
    "i32": "an integer attribute",
    "i64s": "an array<i64: ...>",
    "bools": "an array<i1: ...>",
    "bool": "true or false",
    "str": "a string",
    "elements": "a dense elements attribute",
    "enum": "an enum attribute",
    "gather": "a #stablehlo.gather<...> attribute",
    "scatter": "a #stablehlo.scatter<...> attribute",
    "dot": "a #stablehlo.dot<...> attribute",
    "conv": "a #stablehlo.conv<...> attribute",
    "channel": "a #stablehlo.channel_handle<...> attribute",
    "symbol": "a symbol reference such as @f",
    "type": "a type",
    "f32": "a float attribute",
    "unit": "a unit attribute",
    "dict": "a dictionary",
    "precision": "a list of precisions",
    "symbols": "a list of symbols",
    "aliases": "a list of output_operand_alias attributes",
    "accuracy": "a #stablehlo.result_accuracy<...> attribute",
    "algorithm": "a #stablehlo.dot_algorithm<...> attribute",
    "groups": "dense replica groups",
}


def _attr_text(value) -> str:
    try:
        return A.format_attribute(value)
    except Exception:
        return repr(value)


def _attr_kind_ok(kind: str, value) -> bool:
    if kind in ("i64", "i32"):
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "i64s":
        return isinstance(value, A.DenseArray) and value.element == "i64"
    if kind == "bools":
        return isinstance(value, A.DenseArray) and value.element == "i1"
    if kind == "bool":
        return isinstance(value, bool) or (isinstance(value, A.IntegerAttr) and getattr(value.type, "width", 0) == 1)
    if kind == "str":
        return isinstance(value, str) and not isinstance(value, A.EnumAttr)
    if kind == "elements":
        return isinstance(value, A.DenseElements)
    if kind.startswith("enum."):
        return isinstance(value, A.EnumAttr) and value.kind == kind[5:]
    structs = {
        "gather": A.GatherDimensionNumbers,
        "scatter": A.ScatterDimensionNumbers,
        "dot": A.DotDimensionNumbers,
        "conv": A.ConvDimensionNumbers,
        "channel": A.ChannelHandle,
        "accuracy": A.ResultAccuracy,
        "algorithm": A.DotAlgorithm,
    }
    if kind in structs:
        return isinstance(value, structs[kind])
    if kind == "symbol":
        return isinstance(value, A.SymbolRef)
    if kind == "type":
        return isinstance(value, Type)
    if kind == "f32":
        return isinstance(value, float) or (isinstance(value, int) and not isinstance(value, bool))
    if kind == "unit":
        return isinstance(value, A.UnitAttr)
    if kind == "dict":
        return isinstance(value, dict)
    if kind == "precision":
        return isinstance(value, (tuple, list)) and all(isinstance(v, A.EnumAttr) for v in value)
    if kind in ("symbols", "aliases"):
        return isinstance(value, (tuple, list))
    if kind == "groups":
        return isinstance(value, (A.DenseElements, A.StructAttr, tuple, list))
    return True  # any, and kinds the verifier does not model


# ---------------------------------------------------------------------------------------------
# Structure: region terminators, functions, calls
# ---------------------------------------------------------------------------------------------


def _check_structure(op: Operation, opdef: Optional[OpDef], ctx: _Context) -> None:
    if isinstance(op, Function):
        _check_function(op, ctx)
    elif opdef is not None and op.dialect == "stablehlo" and op.regions:
        for i, region in enumerate(op.regions):
            if len(region.blocks) != 1:
                fail(f"region #{i} must have exactly one block, got {len(region.blocks)}")
            term = region.blocks[0].terminator
            if term is None or term.name != "stablehlo.return":
                found = "nothing" if term is None else term.name
                fail(f"region #{i} must end in stablehlo.return, found {found}")


def _check_function(fn: Function, ctx: _Context) -> None:
    name = fn.attributes.get("sym_name")
    if id(fn) in ctx.duplicates:
        fail(f"function @{name} is defined more than once")
    ftype = fn.attributes.get("function_type")
    if fn.is_declaration:
        return
    if len(fn.regions[0].blocks) != 1:
        return  # multi-block bodies are outside StableHLO; leave them alone
    block = fn.body
    if tuple(a.type for a in block.arguments) != tuple(ftype.inputs):
        fail(f"@{name} declares inputs {fmt_types(ftype.inputs)} but its body takes "
             f"{fmt_types(a.type for a in block.arguments)}")
    term = block.terminator
    if term is None or term.name != "func.return":
        found = "nothing" if term is None else term.name
        fail(f"the body of @{name} must end in func.return, found {found}")


@_register("func.return")
def _func_return(op: Operation, ctx: _Context) -> None:
    fn = op.parent_op
    if not isinstance(fn, Function):
        return
    declared = fn.function_type.results
    got = op.operand_types
    if len(got) != len(declared):
        fail(f"returns {len(got)} values but @{fn.sym_name} declares {len(declared)} results "
             f"{fmt_types(declared)}")
    for i, (g, d) in enumerate(zip(got, declared)):
        if not types_compatible(g, d):
            fail(f"return value #{i} has type {g} but @{fn.sym_name} declares result type {d}")
    if op.parent is not None and op.parent.operations[-1] is not op:
        fail("func.return must be the last op of its block")


@_register("stablehlo.return")
def _stablehlo_return(op: Operation, ctx: _Context) -> None:
    if op.parent is not None and op.parent.operations[-1] is not op:
        fail("stablehlo.return must be the last op of its block")


@_register("func.call")
def _func_call(op: Operation, ctx: _Context) -> None:
    callee = op.attributes.get("callee")
    name = callee.name if isinstance(callee, A.SymbolRef) else str(callee)
    fn = ctx.functions.get(name)
    if fn is None:
        known = ", ".join("@" + n for n in ctx.functions) or "none"
        fail(f"calls @{name}, which is not defined in this module (functions: {known})")
    ftype = fn.function_type
    if len(op.operands) != len(ftype.inputs):
        fail(f"passes {len(op.operands)} arguments but @{name} takes {len(ftype.inputs)}")
    for i, (got, want) in enumerate(zip(op.operand_types, ftype.inputs)):
        if not types_compatible(got, want):
            fail(f"argument #{i} has type {got} but @{name} expects {want}")
    if len(op.results) != len(ftype.results):
        fail(f"expects {len(op.results)} results but @{name} returns {len(ftype.results)}")
    for i, (got, want) in enumerate(zip(op.result_types, ftype.results)):
        if not types_compatible(got, want):
            fail(f"result #{i} has type {got} but @{name} returns {want}")


# ---------------------------------------------------------------------------------------------
# Helpers for per-op checks
# ---------------------------------------------------------------------------------------------


def _tensor(t: Type, what: str, constraint: Optional[str] = None) -> TensorType:
    if not isinstance(t, TensorType):
        fail(f"{what} must be a tensor, got {t}", constraint)
    return t


def _ranked(t: Type, what: str) -> Optional[tuple]:
    """The shape of a tensor (None when unranked); fails for non-tensors."""
    return _tensor(t, what).shape


def _ints(op: Operation, name: str, default=None) -> Optional[list[int]]:
    value = op.attributes.get(name)
    if value is None:
        return default
    if isinstance(value, A.DenseElements):
        return [int(v) for v in np.asarray(value.array).reshape(-1)]
    return [int(v) for v in value]


def _int(op: Operation, name: str, default: Optional[int] = None) -> Optional[int]:
    value = op.attributes.get(name)
    return default if value is None else int(value)


def _padding(op: Operation, name: str, rank: int, constraint: str) -> list[tuple[int, int]]:
    value = op.attributes.get(name)
    if value is None:
        return [(0, 0)] * rank
    array = np.asarray(value.array) if isinstance(value, A.DenseElements) else np.asarray(value)
    if array.size == 0 and rank == 0:
        return []
    if array.ndim != 2 or array.shape != (rank, 2):
        fail(f"{name} must have shape {rank}x2, got {fmt_shape(tuple(array.shape))}", constraint)
    return [(int(lo), int(hi)) for lo, hi in array.tolist()]


def _same_shape(a: Type, b: Type, message: str, constraint: Optional[str]) -> None:
    if not shapes_compatible(shape_of(a), shape_of(b)):
        fail(f"{message}: {a} vs {b}", constraint)


def _same_elem(a: Type, b: Type, message: str, constraint: Optional[str]) -> None:
    if not element_compatible(elem(a), elem(b)):
        fail(f"{message}: {a} vs {b}", constraint)


def _same_type(a: Type, b: Type, message: str, constraint: Optional[str]) -> None:
    if not types_compatible(a, b):
        fail(f"{message}: {a} vs {b}", constraint)


def _expect_shape(result: Type, inferred: Optional[tuple], constraint: Optional[str], what: str = "result") -> None:
    got = shape_of(result)
    if inferred is None or got is None:
        return
    if not shapes_compatible(got, tuple(inferred)):
        fail(f"{what} type {result} has shape {fmt_shape(got)}, expected {fmt_shape(tuple(inferred))}",
             constraint)


def _block(op: Operation, index: int) -> Block:
    return op.regions[index].blocks[0]


def _returned(op: Operation, index: int) -> list[Type]:
    term = _block(op, index).terminator
    return [v.type for v in term.operands] if term is not None else []


def _is_scalar_of(t: Type, e: Type) -> bool:
    return isinstance(t, TensorType) and (t.shape is None or t.shape == ()) and element_compatible(t.element, e)


def _check_reducer(op: Operation, index: int, input_elems: Sequence[Type], init_types: Sequence[Type],
                   constraint: str, what: str = "body") -> list[Type]:
    """A reduction region `(tensor<E0>..., tensor<E0>...) -> (tensor<E0>...)`; returns the Ei."""
    n = len(input_elems)
    block = _block(op, index)
    args = [a.type for a in block.arguments]
    if len(args) != 2 * n:
        fail(f"{what} must take {2 * n} arguments, got {len(args)}", constraint)
    elems = []
    for i in range(n):
        a, b = args[i], args[n + i]
        if not isinstance(a, TensorType) or (a.shape is not None and a.shape != ()):
            fail(f"{what} argument #{i} must be a 0-dimensional tensor, got {a}", constraint)
        if not types_compatible(a, b):
            fail(f"{what} arguments #{i} and #{n + i} must have the same type: {a} vs {b}", constraint)
        e = a.element
        if not is_promotable(input_elems[i], e):
            fail(f"{what} argument #{i} has element type {e}, which cannot hold input element type "
                 f"{input_elems[i]}", constraint)
        if i < len(init_types) and not (element_compatible(elem(init_types[i]), e)
                                        or element_compatible(elem(init_types[i]), input_elems[i])):
            fail(f"init value #{i} has type {init_types[i]} but {what} accumulates {e}", constraint)
        elems.append(e)
    returned = _returned(op, index)
    if len(returned) != n:
        fail(f"{what} must return {n} values, returns {len(returned)}", constraint)
    for i, (r, e) in enumerate(zip(returned, elems)):
        if not _is_scalar_of(r, e):
            fail(f"{what} return value #{i} must be tensor<{e}>, got {r}", constraint)
    return elems


# ---------------------------------------------------------------------------------------------
# Element-wise ops
# ---------------------------------------------------------------------------------------------

_ANY = ("any", lambda e: True)
_BI = ("boolean or integer", lambda e: is_bool_e(e) or is_int_e(e))
_I = ("integer", is_int_e)
_FQ = ("floating-point or quantized", lambda e: is_float_e(e) or is_quant_e(e))
_FCQ = ("floating-point, complex or quantized", lambda e: is_float_e(e) or is_complex_e(e) or is_quant_e(e))
_IFCQ = ("integer, floating-point, complex or quantized",
         lambda e: is_int_e(e) or is_float_e(e) or is_complex_e(e) or is_quant_e(e))
_SFCQ = ("signed integer, floating-point, complex or quantized",
         lambda e: is_signed_int_e(e) or is_float_e(e) or is_complex_e(e) or is_quant_e(e))
_FC = ("floating-point or complex", lambda e: is_float_e(e) or is_complex_e(e) or is_quant_e(e))

_UNARY = {
    "cbrt": _FCQ, "ceil": _FQ, "cosine": _FCQ, "count_leading_zeros": _I, "exponential": _FCQ,
    "exponential_minus_one": _FCQ, "floor": _FQ, "log": _FCQ, "log_plus_one": _FCQ, "logistic": _FCQ,
    "negate": _IFCQ, "not": _BI, "popcnt": _I, "round_nearest_afz": _FQ, "round_nearest_even": _FQ,
    "rsqrt": _FCQ, "sign": _SFCQ, "sine": _FCQ, "sqrt": _FCQ, "tan": _FCQ, "tanh": _FCQ,
    "reduce_precision": _FQ,
}
_BINARY = {
    "add": _ANY, "subtract": _IFCQ, "multiply": _ANY, "divide": _IFCQ, "remainder": _IFCQ,
    "power": _IFCQ, "atan2": _FCQ, "maximum": _ANY, "minimum": _ANY, "and": _BI, "or": _BI,
    "xor": _BI, "shift_left": _I, "shift_right_arithmetic": _I, "shift_right_logical": _I,
}


def _check_category(t: TensorType, category, what: str, constraint: Optional[str] = None) -> None:
    text, ok = category
    if not ok(t.element):
        fail(f"{what} must have {text} element type, got {t}", constraint)


@_register(*(f"stablehlo.{n}" for n in _UNARY))
def _unary(op: Operation, ctx: _Context) -> None:
    x = _tensor(op.operand_types[0], "operand")
    r = _tensor(op.result_types[0], "result")
    _check_category(x, _UNARY[op.mnemonic], "operand")
    _same_shape(x, r, "operand and result must have the same shape", "C1")
    _same_elem(x, r, "operand and result must have the same element type", "C1")
    if op.name == "stablehlo.reduce_precision":
        if int(op.attributes["exponent_bits"]) < 1:
            fail(f"exponent_bits = {int(op.attributes['exponent_bits'])} must be at least 1", "C2")
        if int(op.attributes["mantissa_bits"]) < 0:
            fail(f"mantissa_bits = {int(op.attributes['mantissa_bits'])} must be non-negative", "C3")


@_register("stablehlo.abs", "stablehlo.real", "stablehlo.imag")
def _real_valued(op: Operation, ctx: _Context) -> None:
    x = _tensor(op.operand_types[0], "operand")
    r = _tensor(op.result_types[0], "result")
    category = _SFCQ if op.mnemonic == "abs" else _FC
    _check_category(x, category, "operand")
    _same_shape(x, r, "operand and result must have the same shape", "C1")
    want = real_part_type(x.element)
    if not element_compatible(want, r.element):
        fail(f"result element type must be {want} for operand {x}, got {r}", "C2")


@_register("stablehlo.convert")
def _convert(op: Operation, ctx: _Context) -> None:
    x = _tensor(op.operand_types[0], "operand")
    r = _tensor(op.result_types[0], "result")
    _same_shape(x, r, "operand and result must have the same shape", "C1")


@_register("stablehlo.is_finite")
def _is_finite(op: Operation, ctx: _Context) -> None:
    x = _tensor(op.operand_types[0], "x")
    y = _tensor(op.result_types[0], "y")
    _check_category(x, _FQ, "x")
    _same_shape(x, y, "x and y must have the same shape", "C1")
    if not is_bool_e(y.element):
        fail(f"y must have element type i1, got {y}")


@_register(*(f"stablehlo.{n}" for n in _BINARY))
def _binary(op: Operation, ctx: _Context) -> None:
    lhs = _tensor(op.operand_types[0], "lhs")
    rhs = _tensor(op.operand_types[1], "rhs")
    r = _tensor(op.result_types[0], "result")
    _same_shape(lhs, rhs, "operands must have the same shape", "C1")
    _same_elem(lhs, rhs, "operands must have the same element type", "C1")
    _check_category(lhs, _BINARY[op.mnemonic], "operands")
    _same_shape(lhs, r, "result must have the operands' shape", "C1")
    _same_elem(lhs, r, "result must have the operands' element type", "C1")


@_register("stablehlo.complex")
def _complex(op: Operation, ctx: _Context) -> None:
    lhs = _tensor(op.operand_types[0], "lhs")
    rhs = _tensor(op.operand_types[1], "rhs")
    r = _tensor(op.result_types[0], "result")
    _same_type(lhs, rhs, "lhs and rhs must have the same type", "C1")
    if not isinstance(lhs.element, FloatType) or lhs.element.name not in ("f32", "f64"):
        fail(f"operands must have element type f32 or f64, got {lhs}", "C1")
    _same_shape(lhs, r, "result must have the operands' shape", "C2")
    if r.element != ComplexType(lhs.element):
        fail(f"result element type must be complex<{lhs.element}>, got {r}", "C3")


_COMPARE_TYPES = {
    "signed": ("SIGNED",),
    "unsigned": ("UNSIGNED",),
    "float": ("FLOAT", "TOTALORDER"),
    "complex": ("FLOAT",),
}


@_register("stablehlo.compare")
def _compare(op: Operation, ctx: _Context) -> None:
    lhs = _tensor(op.operand_types[0], "lhs")
    rhs = _tensor(op.operand_types[1], "rhs")
    r = _tensor(op.result_types[0], "result")
    _same_elem(lhs, rhs, "lhs and rhs must have the same element type", "C1")
    _same_shape(lhs, rhs, "lhs and rhs must have the same shape", "C2")
    _same_shape(lhs, r, "result must have the operands' shape", "C2")
    if not is_bool_e(r.element):
        fail(f"result must have element type i1, got {r}")
    compare_type = op.attributes.get("compare_type")
    if compare_type is None or str(compare_type) == "NOTYPE":
        return
    e = lhs.element
    if is_bool_e(e) or is_unsigned_int_e(e):
        group = "unsigned"
    elif is_int_e(e):
        group = "signed"
    elif is_float_e(e):
        group = "float"
    elif is_complex_e(e):
        group = "complex"
    else:
        return
    if str(compare_type) not in _COMPARE_TYPES[group]:
        allowed = " or ".join(_COMPARE_TYPES[group])
        fail(f"compare_type {compare_type} is not allowed for element type {e}; use {allowed}", "C3")


@_register("stablehlo.select")
def _select(op: Operation, ctx: _Context) -> None:
    pred = _tensor(op.operand_types[0], "pred")
    on_true = _tensor(op.operand_types[1], "on_true")
    on_false = _tensor(op.operand_types[2], "on_false")
    r = _tensor(op.result_types[0], "result")
    if not is_bool_e(pred.element):
        fail(f"pred must have element type i1, got {pred}")
    if rank_of(pred) != 0:
        _same_shape(pred, on_true, "pred must be 0-dimensional or have the shape of on_true", "C1")
    _same_type(on_true, on_false, "on_true and on_false must have the same type", "C2")
    _same_type(on_true, r, "result must have the type of on_true", "C2")


@_register("stablehlo.clamp")
def _clamp(op: Operation, ctx: _Context) -> None:
    lo = _tensor(op.operand_types[0], "min")
    x = _tensor(op.operand_types[1], "operand")
    hi = _tensor(op.operand_types[2], "max")
    r = _tensor(op.result_types[0], "result")
    if rank_of(lo) != 0:
        _same_shape(lo, x, "min must be 0-dimensional or have the shape of operand", "C1")
    if rank_of(hi) != 0:
        _same_shape(hi, x, "max must be 0-dimensional or have the shape of operand", "C2")
    _same_elem(lo, x, "min and operand must have the same element type", "C3")
    _same_elem(hi, x, "max and operand must have the same element type", "C3")
    _same_type(x, r, "result must have the type of operand", "C4")


@_register("stablehlo.map")
def _map(op: Operation, ctx: _Context) -> None:
    if not op.operands:
        fail("needs at least one input", "C2")
    inputs = [_tensor(t, f"input #{i}") for i, t in enumerate(op.operand_types)]
    r = _tensor(op.result_types[0], "result")
    for i, t in enumerate(inputs):
        _same_shape(inputs[0], t, f"input #{i} must have the shape of input #0", "C1")
    _same_shape(inputs[0], r, "result must have the inputs' shape", "C1")
    rank = rank_of(inputs[0])
    dims = _ints(op, "dimensions")
    if rank is not None and dims != list(range(rank)):
        fail(f"dimensions must be {list(range(rank))}, got {dims}", "C3")
    args = [a.type for a in _block(op, 0).arguments]
    if len(args) != len(inputs):
        fail(f"computation must take {len(inputs)} arguments, got {len(args)}", "C4")
    for i, (a, t) in enumerate(zip(args, inputs)):
        if not _is_scalar_of(a, t.element):
            fail(f"computation argument #{i} must be tensor<{t.element}>, got {a}", "C4")
    returned = _returned(op, 0)
    if len(returned) != 1 or not _is_scalar_of(returned[0], r.element):
        fail(f"computation must return one tensor<{r.element}>, returns {fmt_types(returned)}", "C4")


# ---------------------------------------------------------------------------------------------
# Data movement
# ---------------------------------------------------------------------------------------------


@_register("stablehlo.broadcast_in_dim")
def _broadcast_in_dim(op: Operation, ctx: _Context) -> None:
    x = _tensor(op.operand_types[0], "operand")
    r = _tensor(op.result_types[0], "result")
    _same_elem(x, r, "operand and result must have the same element type", "C1")
    dims = _ints(op, "broadcast_dimensions")
    xs, rs = x.shape, r.shape
    if xs is not None and len(dims) != len(xs):
        fail(f"broadcast_dimensions has {len(dims)} entries but the operand has rank {len(xs)}", "C2")
    check_range(dims, None if rs is None else len(rs), "broadcast dimension", "C3")
    check_unique(dims, "broadcast_dimensions", "C4")
    if xs is None or rs is None:
        return
    for j, d in enumerate(dims):
        if xs[j] != 1 and not dim_eq(xs[j], rs[d]):
            fail(f"dim(operand, {j}) = {xs[j]} must be 1 or equal dim(result, {d}) = {rs[d]}", "C5")


@_register("stablehlo.broadcast")
def _broadcast(op: Operation, ctx: _Context) -> None:
    x = _tensor(op.operand_types[0], "operand")
    r = _tensor(op.result_types[0], "result")
    _same_elem(x, r, "operand and result must have the same element type", None)
    if x.shape is not None:
        _expect_shape(r, tuple(_ints(op, "broadcast_sizes")) + x.shape, None)


@_register("stablehlo.transpose")
def _transpose(op: Operation, ctx: _Context) -> None:
    x = _tensor(op.operand_types[0], "operand")
    r = _tensor(op.result_types[0], "result")
    _same_elem(x, r, "operand and result must have the same element type", "C1")
    perm = _ints(op, "permutation")
    if x.shape is None:
        return
    if sorted(perm) != list(range(len(x.shape))):
        fail(f"permutation {perm} is not a permutation of [0, ..., {len(x.shape) - 1}]", "C2")
    _expect_shape(r, tuple(x.shape[p] for p in perm), "C3")


@_register("stablehlo.reshape")
def _reshape(op: Operation, ctx: _Context) -> None:
    x = _tensor(op.operand_types[0], "operand")
    r = _tensor(op.result_types[0], "result")
    _same_elem(x, r, "operand and result must have the same element type", "C1")
    if x.shape is None or r.shape is None:
        return
    a, b = product(x.shape), product(r.shape)
    if a is not None and b is not None and a != b:
        fail(f"operand {x} has {a} elements but result {r} has {b}", "C2")


@_register("stablehlo.concatenate")
def _concatenate(op: Operation, ctx: _Context) -> None:
    if not op.operands:
        fail("needs at least one input", "C3")
    inputs = [_tensor(t, f"input #{i}") for i, t in enumerate(op.operand_types)]
    r = _tensor(op.result_types[0], "result")
    for i, t in enumerate(inputs):
        _same_elem(inputs[0], t, f"input #{i} must have the element type of input #0", "C1")
    _same_elem(inputs[0], r, "result must have the inputs' element type", "C5")
    if any(t.shape is None for t in inputs):
        return
    d = _int(op, "dimension")
    rank = len(inputs[0].shape)
    if not 0 <= d < rank:
        fail(f"dimension {d} is out of range [0, {rank})", "C4")
    _expect_shape(r, infer_concatenate([t.shape for t in inputs], d), "C6")


@_register("stablehlo.pad")
def _pad(op: Operation, ctx: _Context) -> None:
    x = _tensor(op.operand_types[0], "operand")
    value = _tensor(op.operand_types[1], "padding_value")
    r = _tensor(op.result_types[0], "result")
    if rank_of(value) not in (None, 0):
        fail(f"padding_value must be a 0-dimensional tensor, got {value}")
    _same_elem(x, value, "operand and padding_value must have the same element type", "C1")
    _same_elem(x, r, "operand and result must have the same element type", "C1")
    low, high, interior = (_ints(op, n) for n in ("edge_padding_low", "edge_padding_high", "interior_padding"))
    if x.shape is None:
        return
    for name, values in (("edge_padding_low", low), ("edge_padding_high", high), ("interior_padding", interior)):
        if len(values) != len(x.shape):
            fail(f"{name} has {len(values)} entries but the operand has rank {len(x.shape)}", "C2")
    for i, v in enumerate(interior):
        if v < 0:
            fail(f"interior_padding[{i}] = {v} must be non-negative", "C3")
    _expect_shape(r, infer_pad(x.shape, low, high, interior), "C4")


@_register("stablehlo.slice")
def _slice(op: Operation, ctx: _Context) -> None:
    x = _tensor(op.operand_types[0], "operand")
    r = _tensor(op.result_types[0], "result")
    _same_elem(x, r, "operand and result must have the same element type", "C1")
    start, limit, strides = (_ints(op, n) for n in ("start_indices", "limit_indices", "strides"))
    if x.shape is None:
        return
    for name, values in (("start_indices", start), ("limit_indices", limit), ("strides", strides)):
        if len(values) != len(x.shape):
            fail(f"{name} has {len(values)} entries but the operand has rank {len(x.shape)}", "C2")
    _expect_shape(r, infer_slice(x.shape, start, limit, strides), "C5")


def _check_start_indices(types: Sequence[Type], constraint: str) -> None:
    for i, t in enumerate(types):
        t = _tensor(t, f"start index #{i}")
        if rank_of(t) not in (None, 0) or not is_int_e(t.element):
            fail(f"start index #{i} must be a 0-dimensional integer tensor, got {t}")
        if t != types[0]:
            fail(f"start indices must all have the same type: {types[0]} vs {t}", constraint)


@_register("stablehlo.dynamic_slice")
def _dynamic_slice(op: Operation, ctx: _Context) -> None:
    x = _tensor(op.operand_types[0], "operand")
    r = _tensor(op.result_types[0], "result")
    _same_elem(x, r, "operand and result must have the same element type", "C1")
    indices = op.operand_types[1:]
    _check_start_indices(indices, "C3")
    sizes = _ints(op, "slice_sizes")
    if x.shape is not None:
        if len(indices) != len(x.shape) or len(sizes) != len(x.shape):
            fail(f"needs one start index and one slice size per operand dimension ({len(x.shape)}), got "
                 f"{len(indices)} start indices and {len(sizes)} slice sizes", "C2")
        for k, (s, d) in enumerate(zip(sizes, x.shape)):
            if s < 0 or (d is not None and s > d):
                fail(f"slice_sizes[{k}] = {s} is out of range [0, {d}]", "C4")
    _expect_shape(r, tuple(sizes), "C5")


@_register("stablehlo.dynamic_update_slice")
def _dynamic_update_slice(op: Operation, ctx: _Context) -> None:
    x = _tensor(op.operand_types[0], "operand")
    update = _tensor(op.operand_types[1], "update")
    r = _tensor(op.result_types[0], "result")
    _same_type(x, r, "operand and result must have the same type", "C1")
    _same_elem(x, update, "update and operand must have the same element type", "C2")
    indices = op.operand_types[2:]
    if x.shape is None or update.shape is None:
        return
    if len(update.shape) != len(x.shape):
        fail(f"update has rank {len(update.shape)} but the operand has rank {len(x.shape)}", "C3")
    if len(indices) != len(x.shape):
        fail(f"needs {len(x.shape)} start indices, got {len(indices)}", "C4")
    _check_start_indices(indices, "C5")
    for k, (u, d) in enumerate(zip(update.shape, x.shape)):
        if u is not None and d is not None and u > d:
            fail(f"dim(update, {k}) = {u} exceeds dim(operand, {k}) = {d}", "C6")


@_register("stablehlo.iota")
def _iota(op: Operation, ctx: _Context) -> None:
    r = _tensor(op.result_types[0], "output")
    e = r.element
    if not (is_int_e(e) or is_float_e(e) or is_complex_e(e) or is_quant_e(e)):
        fail(f"output must have integer, floating-point or complex element type, got {r}")
    d = _int(op, "iota_dimension")
    if r.shape is not None and not 0 <= d < len(r.shape):
        fail(f"iota_dimension {d} is out of range [0, {len(r.shape)})", "C1")


@_register("stablehlo.reverse")
def _reverse(op: Operation, ctx: _Context) -> None:
    x = _tensor(op.operand_types[0], "operand")
    r = _tensor(op.result_types[0], "result")
    _same_type(x, r, "operand and result must have the same type", "C1")
    dims = _ints(op, "dimensions")
    check_unique(dims, "dimensions", "C2")
    check_range(dims, rank_of(r), "dimension", "C3")


@_register("stablehlo.gather")
def _gather(op: Operation, ctx: _Context) -> None:
    x = _tensor(op.operand_types[0], "operand")
    idx = _tensor(op.operand_types[1], "start_indices")
    r = _tensor(op.result_types[0], "result")
    if not is_int_e(idx.element):
        fail(f"start_indices must have integer element type, got {idx}")
    _same_elem(x, r, "operand and result must have the same element type", "C23")
    if x.shape is None or idx.shape is None:
        return
    inferred = infer_gather(x.shape, idx.shape, op.attributes["dimension_numbers"], _ints(op, "slice_sizes"))
    _expect_shape(r, inferred, "C22")


@_register("stablehlo.scatter")
def _scatter(op: Operation, ctx: _Context) -> None:
    n = (len(op.operands) - 1) // 2
    if n < 1:
        fail("needs at least one input and one update", "C5")
    inputs = [_tensor(t, f"input #{i}") for i, t in enumerate(op.operand_types[:n])]
    idx = _tensor(op.operand_types[n], "scatter_indices")
    updates = [_tensor(t, f"update #{i}") for i, t in enumerate(op.operand_types[n + 1:])]
    if not is_int_e(idx.element):
        fail(f"scatter_indices must have integer element type, got {idx}")
    if len(op.results) != n:
        fail(f"has {n} inputs but {len(op.results)} results", "C24")
    for i in range(n):
        _same_shape(inputs[0], inputs[i], f"input #{i} must have the shape of input #0", "C1")
        _same_shape(updates[0], updates[i], f"update #{i} must have the shape of update #0", "C3")
        _same_elem(inputs[i], updates[i], f"update #{i} must have the element type of input #{i}", "C6")
    elems = _check_reducer(op, 0, [t.element for t in inputs], [], "C23", "update_computation")
    for i, (t, res) in enumerate(zip(inputs, op.result_types)):
        _same_shape(t, res, f"result #{i} must have the shape of input #{i}", "C24")
        if not element_compatible(elem(res), elems[i]):
            fail(f"result #{i} has type {res} but update_computation produces {elems[i]}", "C25")
    if inputs[0].shape is None or idx.shape is None or updates[0].shape is None:
        return
    check_scatter_shapes(inputs[0].shape, idx.shape, updates[0].shape, op.attributes["scatter_dimension_numbers"])


@_register("stablehlo.get_tuple_element")
def _get_tuple_element(op: Operation, ctx: _Context) -> None:
    t = op.operand_types[0]
    if not isinstance(t, TupleType):
        fail(f"operand must be a tuple, got {t}")
    index = _int(op, "index")
    if not 0 <= index < len(t.types):
        fail(f"index {index} is out of range [0, {len(t.types)})", "C1")
    _same_type(t.types[index], op.result_types[0], f"result must have the type of tuple element {index}", "C2")


@_register("stablehlo.tuple")
def _tuple(op: Operation, ctx: _Context) -> None:
    r = op.result_types[0]
    want = TupleType(tuple(op.operand_types))
    if not isinstance(r, TupleType) or not types_compatible(r, want):
        fail(f"result type must be {want}, got {r}", "C2")


@_register("stablehlo.bitcast_convert")
def _bitcast_convert(op: Operation, ctx: _Context) -> None:
    x = _tensor(op.operand_types[0], "operand")
    r = _tensor(op.result_types[0], "result")
    if is_complex_e(x.element) != is_complex_e(r.element):
        fail(f"cannot bitcast between complex and non-complex types: {x} to {r}", "C2")
    a, b = num_bits(x.element), num_bits(r.element)
    if a is None or b is None or x.shape is None or r.shape is None:
        return
    xs, rs = x.shape, r.shape
    if a == b:
        _expect_shape(r, xs, "C1")
    elif b < a:
        if len(rs) != len(xs) + 1 or rs[-1] not in (None, a // b) or a % b:
            fail(f"bitcasting {x.element} to the narrower {r.element} needs result shape "
                 f"{fmt_shape(xs + (a // b,))}, got {r}", "C1")
        _expect_shape(r, xs + (a // b,), "C1")
    else:
        if len(xs) != len(rs) + 1 or xs[-1] not in (None, b // a) or b % a:
            fail(f"bitcasting {x.element} to the wider {r.element} needs an operand whose last dimension "
                 f"is {b // a}, got {x}", "C1")
        _expect_shape(r, xs[:-1], "C1")


@_register("stablehlo.constant")
def _constant(op: Operation, ctx: _Context) -> None:
    value = op.attributes["value"]
    r = _tensor(op.result_types[0], "output")
    vt = value.type
    if not shapes_compatible(vt.shape, r.shape):
        fail(f"value has type {vt} but the output is {r}", "C1")
    ve, re = vt.element, r.element
    if ve != re and not (is_quant_e(re) and (is_quant_e(ve) or ve == re.storage or is_int_e(ve))):
        fail(f"value has type {vt} but the output is {r}", "C1")


# ---------------------------------------------------------------------------------------------
# Reductions and windows
# ---------------------------------------------------------------------------------------------


@_register("stablehlo.reduce")
def _reduce(op: Operation, ctx: _Context) -> None:
    n = len(op.operands) // 2
    if n < 1 or len(op.results) != n:
        fail(f"needs N >= 1 inputs, N init values and N results, got {len(op.operands)} operands and "
             f"{len(op.results)} results", "C3")
    inputs = [_tensor(t, f"input #{i}") for i, t in enumerate(op.operand_types[:n])]
    inits = [_tensor(t, f"init value #{i}") for i, t in enumerate(op.operand_types[n:])]
    results = [_tensor(t, f"result #{i}") for i, t in enumerate(op.result_types)]
    for i, t in enumerate(inputs):
        _same_shape(inputs[0], t, f"input #{i} must have the shape of input #0", "C1")
        if rank_of(inits[i]) not in (None, 0):
            fail(f"init value #{i} must be a 0-dimensional tensor, got {inits[i]}")
    dims = _ints(op, "dimensions")
    rank = rank_of(inputs[0])
    check_range(dims, rank, "dimension", "C4")
    check_unique(dims, "dimensions", "C5")
    elems = _check_reducer(op, 0, [t.element for t in inputs], inits, "C6")
    for i, (t, res) in enumerate(zip(inputs, results)):
        if t.shape is not None:
            _expect_shape(res, tuple(d for k, d in enumerate(t.shape) if k not in dims), "C7", f"result #{i}")
        if not element_compatible(res.element, elems[i]):
            fail(f"result #{i} has type {res} but the body produces {elems[i]}", "C8")


def _window_attrs(op: Operation, rank: int, dims_name: str = "window_dimensions"):
    window = _ints(op, dims_name, [1] * rank)
    strides = _ints(op, "window_strides", [1] * rank)
    base = _ints(op, "base_dilations", [1] * rank)
    wdil = _ints(op, "window_dilations", [1] * rank)
    return window, strides, base, wdil


@_register("stablehlo.reduce_window")
def _reduce_window(op: Operation, ctx: _Context) -> None:
    n = len(op.operands) // 2
    if n < 1 or len(op.results) != n:
        fail(f"needs N >= 1 inputs, N init values and N results, got {len(op.operands)} operands and "
             f"{len(op.results)} results", "C1")
    inputs = [_tensor(t, f"input #{i}") for i, t in enumerate(op.operand_types[:n])]
    inits = [_tensor(t, f"init value #{i}") for i, t in enumerate(op.operand_types[n:])]
    results = [_tensor(t, f"result #{i}") for i, t in enumerate(op.result_types)]
    for i in range(n):
        _same_shape(inputs[0], inputs[i], f"input #{i} must have the shape of input #0", "C2")
        _same_elem(inputs[i], inits[i], f"input #{i} and init value #{i} must have the same element type", "C3")
        if rank_of(inits[i]) not in (None, 0):
            fail(f"init value #{i} must be a 0-dimensional tensor, got {inits[i]}")
        _same_shape(results[0], results[i], f"result #{i} must have the shape of result #0", "C14")
    elems = _check_reducer(op, 0, [t.element for t in inputs], inits, "C13")
    for i, res in enumerate(results):
        if not element_compatible(res.element, elems[i]):
            fail(f"result #{i} has type {res} but the body produces {elems[i]}", "C16")
    shape = inputs[0].shape
    if shape is None:
        return
    rank = len(shape)
    window, strides, base, wdil = _window_attrs(op, rank)
    for name, values, c_size, c_pos in (("window_dimensions", window, "C4", "C5"),
                                        ("window_strides", strides, "C6", "C7"),
                                        ("base_dilations", base, "C8", "C9"),
                                        ("window_dilations", wdil, "C10", "C11")):
        if len(values) != rank:
            fail(f"{name} has {len(values)} entries but the inputs have rank {rank}", c_size)
        for i, v in enumerate(values):
            if v <= 0:
                fail(f"{name}[{i}] = {v} must be positive", c_pos)
    padding = _padding(op, "padding", rank, "C12")
    inferred = tuple(window_count(shape[i], window[i], strides[i], base[i], wdil[i], *padding[i])
                     for i in range(rank))
    _expect_shape(results[0], inferred, "C15", "result #0")


@_register("stablehlo.select_and_scatter")
def _select_and_scatter(op: Operation, ctx: _Context) -> None:
    x = _tensor(op.operand_types[0], "operand")
    source = _tensor(op.operand_types[1], "source")
    init = _tensor(op.operand_types[2], "init_value")
    r = _tensor(op.result_types[0], "result")
    _same_elem(x, source, "operand and source must have the same element type", "C2")
    if rank_of(init) not in (None, 0):
        fail(f"init_value must be a 0-dimensional tensor, got {init}")
    _same_elem(x, init, "init_value must have the operand's element type", "C4")
    _same_type(x, r, "result must have the operand's type", "C12")
    e = x.element
    args = [a.type for a in _block(op, 0).arguments]
    if len(args) != 2 or not all(_is_scalar_of(a, e) for a in args):
        fail(f"select must take (tensor<{e}>, tensor<{e}>), takes {fmt_types(args)}", "C10")
    returned = _returned(op, 0)
    if len(returned) != 1 or not _is_scalar_of(returned[0], IntegerType(1)):
        fail(f"select must return tensor<i1>, returns {fmt_types(returned)}", "C10")
    _check_reducer(op, 1, [e], [init], "C11", "scatter")
    if x.shape is None:
        return
    rank = len(x.shape)
    window, strides, _, _ = _window_attrs(op, rank)
    for name, values, c_size, c_pos in (("window_dimensions", window, "C5", "C6"),
                                        ("window_strides", strides, "C7", "C8")):
        if len(values) != rank:
            fail(f"{name} has {len(values)} entries but the operand has rank {rank}", c_size)
        for i, v in enumerate(values):
            if v <= 0:
                fail(f"{name}[{i}] = {v} must be positive", c_pos)
    padding = _padding(op, "padding", rank, "C9")
    inferred = tuple(window_count(x.shape[i], window[i], strides[i], 1, 1, *padding[i]) for i in range(rank))
    _expect_shape(source, inferred, "C3", "source")


@_register("stablehlo.sort")
def _sort(op: Operation, ctx: _Context) -> None:
    if not op.operands:
        fail("needs at least one input", "C1")
    inputs = [_tensor(t, f"input #{i}") for i, t in enumerate(op.operand_types)]
    if len(op.results) != len(inputs):
        fail(f"has {len(inputs)} inputs but {len(op.results)} results", "C2")
    for i, (t, res) in enumerate(zip(inputs, op.result_types)):
        _same_type(t, res, f"result #{i} must have the type of input #{i}", "C2")
        _same_shape(inputs[0], t, f"input #{i} must have the shape of input #0", "C3")
    rank = rank_of(inputs[0])
    d = _int(op, "dimension", -1)
    if rank is not None and not -rank <= d < rank:
        fail(f"dimension {d} is out of range [{-rank}, {rank})", "C4")
    args = [a.type for a in _block(op, 0).arguments]
    if len(args) != 2 * len(inputs):
        fail(f"comparator must take {2 * len(inputs)} arguments, got {len(args)}", "C5")
    for i, t in enumerate(inputs):
        for a in args[2 * i:2 * i + 2]:
            if not _is_scalar_of(a, t.element):
                fail(f"comparator arguments #{2 * i} and #{2 * i + 1} must be tensor<{t.element}>, got {a}", "C5")
    returned = _returned(op, 0)
    if len(returned) != 1 or not _is_scalar_of(returned[0], IntegerType(1)):
        fail(f"comparator must return tensor<i1>, returns {fmt_types(returned)}", "C5")


def _feature_index(op: Operation, x: TensorType) -> Optional[int]:
    f = _int(op, "feature_index")
    if x.shape is not None and not 0 <= f < len(x.shape):
        fail(f"feature_index {f} is out of range [0, {len(x.shape)})", "C1")
    return None if x.shape is None else x.shape[f]


def _check_features(types: Sequence[tuple[str, Type]], x: TensorType, size, elem_c: str, size_c: str) -> None:
    for name, t in types:
        t = _tensor(t, name)
        _same_elem(x, t, f"{name} must have the operand's element type", elem_c)
        if rank_of(t) not in (None, 1):
            fail(f"{name} must be 1-dimensional, got {t}")
        if t.shape is not None and not dim_eq(t.shape[0], size):
            fail(f"{name} has size {t.shape[0]} but dim(operand, feature_index) = {size}", size_c)


@_register("stablehlo.batch_norm_inference")
def _batch_norm_inference(op: Operation, ctx: _Context) -> None:
    x = _tensor(op.operand_types[0], "operand")
    size = _feature_index(op, x)
    names = ("scale", "offset", "mean", "variance")
    _check_features(list(zip(names, op.operand_types[1:])), x, size, "C2", "C3")
    _same_type(x, op.result_types[0], "result must have the operand's type", "C7")


@_register("stablehlo.batch_norm_training")
def _batch_norm_training(op: Operation, ctx: _Context) -> None:
    x = _tensor(op.operand_types[0], "operand")
    size = _feature_index(op, x)
    _check_features([("scale", op.operand_types[1]), ("offset", op.operand_types[2])], x, size, "C2", "C3")
    _same_type(x, op.result_types[0], "output must have the operand's type", "C7")
    _check_features([("batch_mean", op.result_types[1]), ("batch_var", op.result_types[2])], x, size, "C2", "C5")


@_register("stablehlo.batch_norm_grad")
def _batch_norm_grad(op: Operation, ctx: _Context) -> None:
    x = _tensor(op.operand_types[0], "operand")
    size = _feature_index(op, x)
    names = ("scale", "mean", "variance")
    _check_features(list(zip(names, op.operand_types[1:4])), x, size, "C2", "C5")
    _same_type(x, op.operand_types[4], "grad_output must have the operand's type", "C3")
    _same_type(x, op.result_types[0], "grad_operand must have the operand's type", "C3")
    _check_features([("grad_scale", op.result_types[1]), ("grad_offset", op.result_types[2])], x, size, "C2", "C4")


# ---------------------------------------------------------------------------------------------
# Contractions
# ---------------------------------------------------------------------------------------------


def _check_precision(op: Operation, constraint: str) -> None:
    precision = op.attributes.get("precision_config")
    if precision is not None and len(precision) > 2:
        fail(f"precision_config has {len(precision)} entries; at most 2 are allowed", constraint)


def _mixed_quantization(*types: TensorType) -> bool:
    return any(is_quant_e(t.element) for t in types)


@_register("stablehlo.dot_general")
def _dot_general(op: Operation, ctx: _Context) -> None:
    lhs = _tensor(op.operand_types[0], "lhs")
    rhs = _tensor(op.operand_types[1], "rhs")
    r = _tensor(op.result_types[0], "result")
    if not _mixed_quantization(lhs, rhs):
        _same_elem(lhs, rhs, "lhs and rhs must have the same element type", "C1")
    _check_precision(op, "C12")
    if lhs.shape is None or rhs.shape is None:
        return
    dn = op.attributes["dot_dimension_numbers"]
    inferred = infer_dot_general(lhs.shape, rhs.shape, dn.lhs_batching_dimensions, dn.rhs_batching_dimensions,
                                 dn.lhs_contracting_dimensions, dn.rhs_contracting_dimensions)
    _expect_shape(r, inferred, "C13")


@_register("stablehlo.dot")
def _dot(op: Operation, ctx: _Context) -> None:
    lhs = _tensor(op.operand_types[0], "lhs")
    rhs = _tensor(op.operand_types[1], "rhs")
    r = _tensor(op.result_types[0], "result")
    if not _mixed_quantization(lhs, rhs):
        _same_elem(lhs, rhs, "lhs and rhs must have the same element type", None)
    _check_precision(op, None)
    if lhs.shape is None or rhs.shape is None:
        return
    if len(lhs.shape) not in (1, 2) or len(rhs.shape) not in (1, 2):
        fail(f"operands must be vectors or matrices, got {lhs} and {rhs}")
    if not dim_eq(lhs.shape[-1], rhs.shape[0]):
        fail(f"contracting dimensions differ: {lhs.shape[-1]} (last of lhs) vs {rhs.shape[0]} (first of rhs)")
    _expect_shape(r, lhs.shape[:-1] + rhs.shape[1:], None)


@_register("stablehlo.convolution")
def _convolution(op: Operation, ctx: _Context) -> None:
    lhs = _tensor(op.operand_types[0], "lhs")
    rhs = _tensor(op.operand_types[1], "rhs")
    r = _tensor(op.result_types[0], "result")
    if not _mixed_quantization(lhs, rhs):
        _same_elem(lhs, rhs, "lhs and rhs must have the same element type", "C2")
    _check_precision(op, "C25")
    if lhs.shape is None or rhs.shape is None:
        return
    n = len(lhs.shape)
    if n < 2:
        fail(f"lhs must have rank at least 2 (batch and feature dimensions), got {lhs}", "C14")
    spatial = n - 2
    if r.shape is not None and len(r.shape) != n:
        fail(f"result has rank {len(r.shape)} but lhs has rank {n}", "C28")
    reversal = op.attributes.get("window_reversal")
    if reversal is not None and len(reversal) != spatial:
        fail(f"window_reversal has {len(reversal)} entries but there are {spatial} spatial dimensions", "C10")
    inferred = infer_convolution(
        lhs.shape, rhs.shape, op.attributes["dimension_numbers"],
        _ints(op, "window_strides", [1] * spatial), _padding(op, "padding", spatial, "C5"),
        _ints(op, "lhs_dilation", [1] * spatial), _ints(op, "rhs_dilation", [1] * spatial),
        _int(op, "feature_group_count", 1), _int(op, "batch_group_count", 1))
    _expect_shape(r, inferred, "C26")


@_register("stablehlo.fft")
def _fft(op: Operation, ctx: _Context) -> None:
    x = _tensor(op.operand_types[0], "operand")
    r = _tensor(op.result_types[0], "result")
    kind = str(op.attributes["fft_type"])
    xe, re = x.element, r.element
    if kind in ("FFT", "IFFT"):
        if not is_complex_e(xe) or xe != re:
            fail(f"{kind} needs the same complex element type for operand and result, got {x} and {r}", "C2")
    elif kind == "RFFT":
        if not is_float_e(xe) or re != ComplexType(xe):
            fail(f"RFFT needs a floating-point operand and a complex result of the same precision, "
                 f"got {x} and {r}", "C2")
    elif kind == "IRFFT":
        if not is_complex_e(xe) or re != xe.element:
            fail(f"IRFFT needs a complex operand and a floating-point result of the same precision, "
                 f"got {x} and {r}", "C2")
    if x.shape is None:
        return
    _expect_shape(r, infer_fft(x.shape, kind, _ints(op, "fft_length"), xe), "C5")


@_register("stablehlo.cholesky")
def _cholesky(op: Operation, ctx: _Context) -> None:
    a = _tensor(op.operand_types[0], "a")
    _check_category(a, _FC, "a")
    _same_type(a, op.result_types[0], "result must have the type of a", "C1")
    if a.shape is None:
        return
    if len(a.shape) < 2:
        fail(f"a must have rank at least 2, got {a}", "C2")
    if not dim_eq(a.shape[-2], a.shape[-1]):
        fail(f"a must be square in its last two dimensions, got {a}", "C3")


@_register("stablehlo.triangular_solve")
def _triangular_solve(op: Operation, ctx: _Context) -> None:
    a = _tensor(op.operand_types[0], "a")
    b = _tensor(op.operand_types[1], "b")
    _check_category(a, _FC, "a")
    _same_elem(a, b, "a and b must have the same element type", "C1")
    _same_type(b, op.result_types[0], "result must have the type of b", "C4")
    if a.shape is None or b.shape is None:
        return
    if len(a.shape) != len(b.shape) or len(a.shape) < 2:
        fail(f"a and b must have the same rank, at least 2: {a} vs {b}", "C2")
    for i in range(len(a.shape) - 2):
        if not dim_eq(a.shape[i], b.shape[i]):
            fail(f"batch dimension {i} differs: {a} vs {b}", "C3")
    left = bool(op.attributes["left_side"])
    k = b.shape[-2] if left else b.shape[-1]
    if not (dim_eq(a.shape[-2], a.shape[-1]) and dim_eq(a.shape[-1], k)):
        side = "-2" if left else "-1"
        fail(f"a must be square with size dim(b, {side}) = {k}, got {a}", "C3")


# ---------------------------------------------------------------------------------------------
# Control flow
# ---------------------------------------------------------------------------------------------


def _compare_types(got: Sequence[Type], want: Sequence[Type], what: str, constraint: str) -> None:
    if len(got) != len(want) or not all(types_compatible(g, w) for g, w in zip(got, want)):
        fail(f"{what} {fmt_types(got)}, expected {fmt_types(want)}", constraint)


@_register("stablehlo.while")
def _while(op: Operation, ctx: _Context) -> None:
    operands = op.operand_types
    cond_args = [a.type for a in _block(op, 0).arguments]
    _compare_types(cond_args, operands, "cond takes", "C1")
    cond = _returned(op, 0)
    if len(cond) != 1 or not _is_scalar_of(cond[0], IntegerType(1)):
        fail(f"cond must return tensor<i1>, returns {fmt_types(cond)}", "C1")
    body_args = [a.type for a in _block(op, 1).arguments]
    _compare_types(body_args, operands, "body takes", "C2")
    _compare_types(_returned(op, 1), operands, "body returns", "C2")
    _compare_types(op.result_types, operands, "results have types", "C3")


def _check_branches(op: Operation, first_c: str, same_c: str, result_c: str) -> None:
    for i in range(len(op.regions)):
        args = _block(op, i).arguments
        if args:
            fail(f"branch #{i} must take no arguments, takes {len(args)}", first_c)
    first = _returned(op, 0)
    for i in range(1, len(op.regions)):
        _compare_types(_returned(op, i), first, f"branch #{i} returns", same_c)
    _compare_types(op.result_types, first, "results have types", result_c)


@_register("stablehlo.if")
def _if(op: Operation, ctx: _Context) -> None:
    pred = op.operand_types[0]
    if not _is_scalar_of(pred, IntegerType(1)):
        fail(f"pred must be tensor<i1>, got {pred}")
    _check_branches(op, "C1", "C2", "C3")


@_register("stablehlo.case")
def _case(op: Operation, ctx: _Context) -> None:
    index = op.operand_types[0]
    if not isinstance(index, TensorType) or index.shape != () or not (
            isinstance(index.element, IntegerType) and index.element.width == 32 and not index.element.is_unsigned):
        fail(f"index must be a 0-dimensional 32-bit integer tensor, got {index}")
    if not op.regions:
        fail("needs at least one branch", "C1")
    _check_branches(op, "C2", "C3", "C4")


@_register("stablehlo.optimization_barrier")
def _optimization_barrier(op: Operation, ctx: _Context) -> None:
    if len(op.operands) != len(op.results):
        fail(f"has {len(op.operands)} operands but {len(op.results)} results", "C1")
    _compare_types(op.result_types, op.operand_types, "results have types", "C2")


@_register("stablehlo.composite")
def _composite(op: Operation, ctx: _Context) -> None:
    name = str(op.attributes["name"])
    if "." not in name:
        fail(f"name \"{name}\" must be a namespaced op name such as \"my.op\"", "C1")
    ref = op.attributes["decomposition"]
    fn = ctx.functions.get(ref.name)
    if fn is None:
        fail(f"decomposition @{ref.name} is not defined in this module", "C2")
    ftype = fn.function_type
    _compare_types(op.operand_types, ftype.inputs, "inputs have types", "C3")
    _compare_types(op.result_types, ftype.results, "results have types", "C4")


# ---------------------------------------------------------------------------------------------
# Collectives and communication
# ---------------------------------------------------------------------------------------------


def _group_size(op: Operation) -> Optional[int]:
    groups = op.attributes.get("replica_groups")
    if not isinstance(groups, A.DenseElements):
        return None
    array = np.asarray(groups.array)
    if array.ndim != 2 or array.shape[1] == 0:
        return None
    return int(array.shape[1])


def _check_groups(op: Operation, unique_c: str, channel_c: Optional[str]) -> None:
    groups = op.attributes.get("replica_groups")
    if isinstance(groups, A.DenseElements):
        values = [int(v) for v in np.asarray(groups.array).reshape(-1) if int(v) >= 0]
        check_unique(values, "replica_groups values", unique_c)
    if channel_c and isinstance(op.attributes.get("use_global_device_ids"), A.UnitAttr):
        handle = op.attributes.get("channel_handle")
        if handle is None or handle.handle <= 0:
            fail("use_global_device_ids needs a channel_handle with a positive handle", channel_c)


def _pairs(op: Operation, result_c: str) -> list[tuple[TensorType, TensorType]]:
    if len(op.operands) != len(op.results):
        fail(f"has {len(op.operands)} operands but {len(op.results)} results", result_c)
    return [(_tensor(a, f"operand #{i}"), _tensor(b, f"result #{i}"))
            for i, (a, b) in enumerate(zip(op.operand_types, op.result_types))]


@_register("stablehlo.all_gather")
def _all_gather(op: Operation, ctx: _Context) -> None:
    _check_groups(op, "C2", "C5")
    d = _int(op, "all_gather_dim")
    size = _group_size(op)
    for x, r in _pairs(op, "C6"):
        _same_elem(x, r, "result must have the operand's element type", "C6")
        if x.shape is None:
            continue
        if not 0 <= d < len(x.shape):
            fail(f"all_gather_dim {d} is out of range [0, {len(x.shape)})", "C1")
        out = list(x.shape)
        out[d] = None if size is None or x.shape[d] is None else x.shape[d] * size
        _expect_shape(r, tuple(out), "C6")


@_register("stablehlo.all_reduce")
def _all_reduce(op: Operation, ctx: _Context) -> None:
    _check_groups(op, "C1", "C4")
    pairs = _pairs(op, "C6")
    block = _block(op, 0)
    if len(block.arguments) != 2:
        fail(f"computation must take 2 arguments, takes {len(block.arguments)}", "C5")
    if pairs and all(x.element == pairs[0][0].element for x, _ in pairs):
        e = _check_reducer(op, 0, [pairs[0][0].element], [], "C5", "computation")[0]
        for i, (x, r) in enumerate(pairs):
            _same_shape(x, r, f"result #{i} must have the shape of operand #{i}", "C6")
            if not element_compatible(r.element, e):
                fail(f"result #{i} has type {r} but the computation produces {e}", "C6")
    else:
        for i, (x, r) in enumerate(pairs):
            _same_shape(x, r, f"result #{i} must have the shape of operand #{i}", "C6")


@_register("stablehlo.reduce_scatter")
def _reduce_scatter(op: Operation, ctx: _Context) -> None:
    _check_groups(op, "C3", "C6")
    x = _tensor(op.operand_types[0], "operand")
    r = _tensor(op.result_types[0], "result")
    e = _check_reducer(op, 0, [x.element], [], "C7", "computation")[0]
    if not element_compatible(r.element, e):
        fail(f"result has type {r} but the computation produces {e}", "C8")
    if x.shape is None:
        return
    d = _int(op, "scatter_dimension")
    if not 0 <= d < len(x.shape):
        fail(f"scatter_dimension {d} is out of range [0, {len(x.shape)})", "C2")
    size = _group_size(op)
    out = list(x.shape)
    if size is not None and x.shape[d] is not None:
        if x.shape[d] % size:
            fail(f"dim(operand, {d}) = {x.shape[d]} is not divisible by the group size {size}", "C1")
        out[d] = x.shape[d] // size
    else:
        out[d] = None
    _expect_shape(r, tuple(out), "C8")


@_register("stablehlo.all_to_all")
def _all_to_all(op: Operation, ctx: _Context) -> None:
    _check_groups(op, "C5", None)
    split, concat, count = (_int(op, n) for n in ("split_dimension", "concat_dimension", "split_count"))
    if count <= 0:
        fail(f"split_count = {count} must be positive", "C4")
    for x, r in _pairs(op, "C8"):
        _same_elem(x, r, "result must have the operand's element type", "C8")
        if x.shape is None:
            continue
        rank = len(x.shape)
        if not 0 <= split < rank:
            fail(f"split_dimension {split} is out of range [0, {rank})", "C1")
        if not 0 <= concat < rank:
            fail(f"concat_dimension {concat} is out of range [0, {rank})", "C3")
        if x.shape[split] is not None and x.shape[split] % count:
            fail(f"dim(operand, {split}) = {x.shape[split]} is not divisible by split_count {count}", "C2")
        out = list(x.shape)
        out[split] = None if out[split] is None else out[split] // count
        out[concat] = None if out[concat] is None else out[concat] * count
        _expect_shape(r, tuple(out), "C8")


@_register("stablehlo.collective_permute")
def _collective_permute(op: Operation, ctx: _Context) -> None:
    pairs = np.asarray(op.attributes["source_target_pairs"].array)
    if pairs.size and (pairs.ndim != 2 or pairs.shape[1] != 2):
        fail(f"source_target_pairs must have shape Nx2, got {fmt_shape(tuple(pairs.shape))}", "C1")
    if pairs.size:
        check_unique([int(v) for v in pairs[:, 0]], "sources in source_target_pairs", "C2")
        check_unique([int(v) for v in pairs[:, 1]], "targets in source_target_pairs", "C3")
    _same_type(op.operand_types[0], op.result_types[0], "result must have the operand's type", "C5")


@_register("stablehlo.collective_broadcast")
def _collective_broadcast(op: Operation, ctx: _Context) -> None:
    _same_type(op.operand_types[0], op.result_types[0], "result must have the operand's type", "C3")


@_register("stablehlo.after_all")
def _after_all(op: Operation, ctx: _Context) -> None:
    for i, t in enumerate(op.operand_types):
        if not is_token(t):
            fail(f"input #{i} must be a token, got {t}")
    if not is_token(op.result_types[0]):
        fail(f"result must be a token, got {op.result_types[0]}")


@_register("stablehlo.create_token")
def _create_token(op: Operation, ctx: _Context) -> None:
    if not is_token(op.result_types[0]):
        fail(f"result must be a token, got {op.result_types[0]}")


@_register("stablehlo.infeed", "stablehlo.recv")
def _infeed(op: Operation, ctx: _Context) -> None:
    if not is_token(op.operand_types[0]):
        fail(f"token must be a token, got {op.operand_types[0]}")
    if not op.results:
        fail("needs at least one result", "C2" if op.mnemonic == "recv" else "C1")
    if not is_token(op.result_types[-1]):
        fail(f"the last result must be a token, got {op.result_types[-1]}", "C3" if op.mnemonic == "recv" else "C2")


@_register("stablehlo.send", "stablehlo.outfeed")
def _send(op: Operation, ctx: _Context) -> None:
    if not is_token(op.operand_types[-1]):
        fail(f"the last operand must be a token, got {op.operand_types[-1]}")
    if not is_token(op.result_types[0]):
        fail(f"result must be a token, got {op.result_types[0]}")


@_register("stablehlo.replica_id", "stablehlo.partition_id")
def _process_id(op: Operation, ctx: _Context) -> None:
    r = op.result_types[0]
    if not _is_scalar_of(r, IntegerType(32, "unsigned")):
        fail(f"result must be tensor<ui32>, got {r}")


# ---------------------------------------------------------------------------------------------
# Random numbers, quantization, shapes
# ---------------------------------------------------------------------------------------------


@_register("stablehlo.rng_bit_generator")
def _rng_bit_generator(op: Operation, ctx: _Context) -> None:
    state = _tensor(op.operand_types[0], "initial_state")
    _same_type(state, op.result_types[0], "output_state must have the type of initial_state", "C1")
    out = _tensor(op.result_types[1], "output")
    if not (is_int_e(out.element) or is_float_e(out.element)):
        fail(f"output must have integer or floating-point element type, got {out}")
    if rank_of(state) not in (None, 1):
        fail(f"initial_state must be 1-dimensional, got {state}")
    size = None if state.shape is None else state.shape[0]
    algorithm = str(op.attributes["rng_algorithm"])
    allowed = {"THREE_FRY": (2,), "PHILOX": (2, 3)}.get(algorithm)
    if allowed and size is not None and size not in allowed:
        fail(f"initial_state of {algorithm} must have {' or '.join(map(str, allowed))} elements, got {size}", "C2")


@_register("stablehlo.rng")
def _rng(op: Operation, ctx: _Context) -> None:
    a = _tensor(op.operand_types[0], "a")
    b = _tensor(op.operand_types[1], "b")
    shape = _tensor(op.operand_types[2], "shape")
    r = _tensor(op.result_types[0], "result")
    for name, t in (("a", a), ("b", b)):
        if rank_of(t) not in (None, 0):
            fail(f"{name} must be a 0-dimensional tensor, got {t}")
    _same_elem(a, b, "a and b must have the same element type", "C1")
    _same_elem(a, r, "result must have the element type of a", "C1")
    if str(op.attributes["rng_distribution"]) == "NORMAL" and not is_float_e(a.element):
        fail(f"NORMAL needs floating-point a, b and result, got {a}", "C2")
    if shape.shape is not None and len(shape.shape) == 1 and r.shape is not None:
        if not dim_eq(shape.shape[0], len(r.shape)):
            fail(f"shape has {shape.shape[0]} entries but the result has rank {len(r.shape)}", "C3")


@_register("stablehlo.uniform_quantize")
def _uniform_quantize(op: Operation, ctx: _Context) -> None:
    x = _tensor(op.operand_types[0], "operand")
    r = _tensor(op.result_types[0], "result")
    if not (is_float_e(x.element) or is_quant_e(x.element)):
        fail(f"operand must have floating-point or quantized element type, got {x}")
    if not isinstance(r.element, QuantizedType):
        fail(f"result must have a quantized element type, got {r}")
    _same_shape(x, r, "operand and result must have the same shape", "C1")
    expressed = x.element if is_float_e(x.element) else x.element.expressed
    if r.element.expressed != expressed:
        fail(f"the result's expressed type must be {expressed}, got {r.element.expressed}", "C2")


@_register("stablehlo.uniform_dequantize")
def _uniform_dequantize(op: Operation, ctx: _Context) -> None:
    x = _tensor(op.operand_types[0], "operand")
    r = _tensor(op.result_types[0], "result")
    if not isinstance(x.element, QuantizedType):
        fail(f"operand must have a quantized element type, got {x}")
    _same_shape(x, r, "operand and result must have the same shape", "C1")
    if r.element != x.element.expressed:
        fail(f"result element type must be the expressed type {x.element.expressed}, got {r}", "C2")


@_register("stablehlo.get_dimension_size")
def _get_dimension_size(op: Operation, ctx: _Context) -> None:
    x = _tensor(op.operand_types[0], "operand")
    d = _int(op, "dimension")
    if x.shape is not None and not 0 <= d < len(x.shape):
        fail(f"dimension {d} is out of range [0, {len(x.shape)})", "C1")
    r = op.result_types[0]
    if not _is_scalar_of(r, IntegerType(32)):
        fail(f"result must be tensor<i32>, got {r}")


@_register("stablehlo.set_dimension_size")
def _set_dimension_size(op: Operation, ctx: _Context) -> None:
    x = _tensor(op.operand_types[0], "operand")
    r = _tensor(op.result_types[0], "result")
    _same_elem(x, r, "operand and result must have the same element type", None)
    d = _int(op, "dimension")
    if x.shape is not None:
        if not 0 <= d < len(x.shape):
            fail(f"dimension {d} is out of range [0, {len(x.shape)})")
        _expect_shape(r, tuple(None if i == d else s for i, s in enumerate(x.shape)), None)


@_register("stablehlo.dynamic_broadcast_in_dim")
def _dynamic_broadcast_in_dim(op: Operation, ctx: _Context) -> None:
    x = _tensor(op.operand_types[0], "operand")
    r = _tensor(op.result_types[0], "result")
    _same_elem(x, r, "operand and result must have the same element type", None)
    dims = _ints(op, "broadcast_dimensions")
    if x.shape is not None and len(dims) != len(x.shape):
        fail(f"broadcast_dimensions has {len(dims)} entries but the operand has rank {len(x.shape)}")
    check_range(dims, rank_of(r), "broadcast dimension", None)
    check_unique(dims, "broadcast_dimensions", None)


@_register("stablehlo.dynamic_reshape", "stablehlo.dynamic_iota")
def _dynamic_shape(op: Operation, ctx: _Context) -> None:
    r = _tensor(op.result_types[0], "result")
    if op.name == "stablehlo.dynamic_reshape":
        _same_elem(op.operand_types[0], r, "operand and result must have the same element type", None)
    shape = _tensor(op.operand_types[-1], "output_shape")
    if shape.shape is not None and len(shape.shape) == 1 and r.shape is not None:
        if not dim_eq(shape.shape[0], len(r.shape)):
            fail(f"output_shape has {shape.shape[0]} entries but the result has rank {len(r.shape)}")


# ---------------------------------------------------------------------------------------------
# CHLO: the few shape rules that are plain
# ---------------------------------------------------------------------------------------------

_CHLO_PREDICATES = {"chlo.is_inf", "chlo.is_neg_inf", "chlo.is_pos_inf"}
_CHLO_UNARY = [
    "acos", "acosh", "asin", "asinh", "atan", "atanh", "bessel_i1e", "conj", "cosh", "sinh", "tan",
    "digamma", "erf", "erf_inv", "erfc", "lgamma", "is_inf", "is_neg_inf", "is_pos_inf", "square",
]


@_register(*(f"chlo.{n}" for n in _CHLO_UNARY))
def _chlo_unary(op: Operation, ctx: _Context) -> None:
    x = _tensor(op.operand_types[0], "operand")
    r = _tensor(op.result_types[0], "result")
    _same_shape(x, r, "operand and result must have the same shape", None)
    if op.name in _CHLO_PREDICATES:
        if not is_bool_e(r.element):
            fail(f"result must have element type i1, got {r}")
    else:
        _same_elem(x, r, "operand and result must have the same element type", None)


@_register("chlo.top_k")
def _chlo_top_k(op: Operation, ctx: _Context) -> None:
    x = _tensor(op.operand_types[0], "operand")
    values = _tensor(op.result_types[0], "values")
    indices = _tensor(op.result_types[1], "indices")
    _same_elem(x, values, "values must have the operand's element type", None)
    if not is_int_e(indices.element):
        fail(f"indices must have integer element type, got {indices}")
    if x.shape is None:
        return
    if not x.shape:
        fail(f"operand must have rank at least 1, got {x}")
    k = _int(op, "k")
    if k < 0 or (x.shape[-1] is not None and k > x.shape[-1]):
        fail(f"k = {k} must be in [0, {x.shape[-1]}]")
    _expect_shape(values, x.shape[:-1] + (k,), None, "values")
    _expect_shape(indices, x.shape[:-1] + (k,), None, "indices")


__all__ = ["verify", "verify_all", "CHECKS"]
