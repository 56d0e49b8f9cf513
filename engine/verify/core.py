"""Verifier core: the check registry, entry points, generic OpDef checks, structure, helpers."""
from __future__ import annotations

from typing import Callable, Iterator, Optional, Sequence

import numpy as np

from ..ir import attributes as A
from ..ir.call_graph import CallGraph, Recursion
from ..ir.collector import collector_paused
from ..ir.core import Block, Function, Module, Operation, function_list
from ..ir.errors import VerifyError
from ..ir.opset import CLOSED_DIALECTS, OPS, OWN_TYPE_RULE, OpDef
from ..ir.types import TensorType, Type
from ..syntax.mlir import attribute_text as T
from .shape_inference import (
    Fail,
    elem,
    element_compatible,
    fail,
    fmt_shape,
    fmt_types,
    is_promotable,
    shape_of,
    shapes_compatible,
    types_compatible,
    within_bounds,
)

CHECKS: dict[str, Callable[[Operation, "_Context"], None]] = {}


# Checks that span op families (the quantization rules shared by many ops); they run for every op,
# before its own check.
CROSS_CHECKS: list[Callable[[Operation], None]] = []


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
    with collector_paused():
        for error in _errors(module):
            raise error


def verify_all(module: Module) -> list[VerifyError]:
    """Every error found, at most one per op, in textual order."""
    with collector_paused():
        return list(_errors(module))


def _errors(module: Module) -> Iterator[VerifyError]:
    ctx = _Context(module)
    recursive_calls = {id(r.site.op): r for r in CallGraph(module).recursions()}
    for top in module.operations:
        for op in top.walk():
            error = _verify_op(op, ctx)
            if error is None and id(op) in recursive_calls:
                error = _recursion_error(recursive_calls[id(op)])
            if error is not None:
                yield error


def _recursion_error(recursion: Recursion) -> VerifyError:
    """A call that closes a cycle of calls: StableHLO has no recursion (a function may not call
    itself, directly or through others), and XLA's call graphs are acyclic."""
    op = recursion.site.op
    return VerifyError(f"{op.name}: calls @{recursion.site.callee} recursively ({recursion.describe()}); "
                       "a function may not call itself, directly or through other functions (callee)", op.pos)


def _verify_op(op: Operation, ctx: _Context) -> Optional[VerifyError]:
    try:
        opdef = OPS.get(op.name)
        if opdef is not None:
            _check_generic(op, opdef)
        elif op.dialect in CLOSED_DIALECTS:
            fail(f"unknown op: the {op.dialect} dialect has no op '{op.mnemonic}'")
        _check_structure(op, opdef, ctx)
        for cross_check in CROSS_CHECKS:
            cross_check(op)
        check = CHECKS.get(op.name)
        if check is not None:
            check(op, ctx)
        elif opdef is not None and opdef.types == OWN_TYPE_RULE:
            # Its definition promises a rule of its own: never pass an op whose rule is missing.
            fail("hlodbg defines this op with a type rule of its own but registers none, so it cannot be "
                 "verified (a bug in hlodbg: register one in engine/verify or say types=NO_TYPE_RULE)")
    except Fail as f:
        suffix = f" ({f.constraint})" if f.constraint else ""
        return VerifyError(f"{op.name}: {f.message}{suffix}", op.pos, f.notes)
    except Exception as e:  # noqa: BLE001 - malformed IR that a check did not anticipate
        return VerifyError(f"{op.name}: cannot verify this op ({type(e).__name__}: {e})", op.pos)
    return None


# ---------------------------------------------------------------------------------------------
# Generic checks: counts and attribute kinds from the OpDef
# ---------------------------------------------------------------------------------------------


# (op name, operand, result and region counts) that _check_counts accepted: the answer depends on
# nothing else, and a program asks it of the same few combinations thousands of times.
_COUNTS_OK: set[tuple[str, int, int, int]] = set()


def _check_generic(op: Operation, opdef: OpDef) -> None:
    counts = (op.name, len(op.operands), len(op.results), len(op.regions))
    if counts not in _COUNTS_OK:
        _check_counts(op, opdef)
        _COUNTS_OK.add(counts)
    for name, spec in opdef.attrs.items():
        if name not in op.attributes:
            if spec.required:
                fail(f"missing required attribute '{name}'")
            continue
        value = op.attributes[name]
        if not _attr_kind_ok(spec.kind, value):
            fail(f"attribute '{name}' must be {_KIND_TEXT.get(spec.kind.split('.')[0], spec.kind)}, "
                 f"got {_attr_text(value)}")


def _check_counts(op: Operation, opdef: OpDef) -> None:
    n = len(op.operands)
    if opdef.operand_groups(n) is None:
        if opdef.variadic and opdef.same_variadic_size:
            groups = [name for name, arity in opdef.operands if arity in ("*", "?")]
            fail(f"expects as many {' as '.join(groups)}, got {n} operands")
        expected = f"at least {opdef.min_operands}" if opdef.variadic else str(opdef.min_operands)
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
    "f64": "a float attribute",
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
        return T.format_attribute(value)
    except Exception:  # noqa: BLE001 - an attribute the printer cannot show is shown as Python shows it
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
    if kind in ("f32", "f64"):
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
                fail(f"region #{i} must have exactly one block, got {len(region.blocks)}", "regions")
            term = region.blocks[0].terminator
            if term is None or term.name != "stablehlo.return":
                found = "nothing" if term is None else term.name
                fail(f"region #{i} must end in stablehlo.return, found {found}", "terminator")


def _check_function(fn: Function, ctx: _Context) -> None:
    name = fn.attributes.get("sym_name")
    if id(fn) in ctx.duplicates:
        fail(f"function @{name} is defined more than once", "symbol")
    ftype = fn.attributes.get("function_type")
    if fn.is_declaration:
        return
    if len(fn.regions[0].blocks) != 1:
        return  # multi-block bodies are outside StableHLO; leave them alone
    block = fn.body
    if tuple(a.type for a in block.arguments) != tuple(ftype.inputs):
        fail(f"@{name} declares inputs {fmt_types(ftype.inputs)} but its body takes "
             f"{fmt_types(a.type for a in block.arguments)}", "signature")
    term = block.terminator
    if term is None or term.name not in _FUNCTION_TERMINATORS:
        found = "nothing" if term is None else term.name
        fail(f"the body of @{name} must end in func.return, found {found}", "terminator")


# func.func's own verifier does not ask for func.return: stablehlo-opt accepts (and prints) a body
# that ends in stablehlo.return, and it hands its operands back as func.return does.
_FUNCTION_TERMINATORS = ("func.return", "stablehlo.return")


def _function_results(op: Operation) -> None:
    """A function's terminator returns values of the function's declared result types."""
    fn = op.parent_op
    declared = fn.function_type.results
    got = op.operand_types
    if len(got) != len(declared):
        fail(f"returns {len(got)} values but @{fn.sym_name} declares {len(declared)} results "
             f"{fmt_types(declared)}", "signature")
    for i, (g, d) in enumerate(zip(got, declared)):
        if not types_compatible(g, d):
            fail(f"return value #{i} has type {g} but @{fn.sym_name} declares result type {d}", "signature")


@_register("func.return")
def _func_return(op: Operation, ctx: _Context) -> None:
    if not isinstance(op.parent_op, Function):
        return
    _function_results(op)
    if op.parent is not None and op.parent.operations[-1] is not op:
        fail("func.return must be the last op of its block", "terminator")


@_register("stablehlo.return")
def _stablehlo_return(op: Operation, ctx: _Context) -> None:
    if isinstance(op.parent_op, Function):
        _function_results(op)
    if op.parent is not None and op.parent.operations[-1] is not op:
        fail("stablehlo.return must be the last op of its block", "terminator")


def _callee(op: Operation, ctx: _Context):
    """The function an op's `callee` names; an error listing the module's functions otherwise."""
    callee = op.attributes.get("callee")
    name = callee.name if isinstance(callee, A.SymbolRef) else str(callee)
    fn = ctx.functions.get(name)
    if fn is None:
        fail(f"calls @{name}, which is not defined in this module (functions: {function_list(ctx.functions, name)})", "callee")
    return fn


@_register("func.call")
def _func_call(op: Operation, ctx: _Context) -> None:
    fn = _callee(op, ctx)
    name = fn.sym_name
    ftype = fn.function_type
    if len(op.operands) != len(ftype.inputs):
        fail(f"passes {len(op.operands)} arguments but @{name} takes {len(ftype.inputs)}", "signature")
    for i, (got, want) in enumerate(zip(op.operand_types, ftype.inputs)):
        if not types_compatible(got, want):
            fail(f"argument #{i} has type {got} but @{name} expects {want}", "signature")
    if len(op.results) != len(ftype.results):
        fail(f"expects {len(op.results)} results but @{name} returns {len(ftype.results)}", "signature")
    for i, (got, want) in enumerate(zip(op.result_types, ftype.results)):
        if not types_compatible(got, want):
            fail(f"result #{i} has type {got} but @{name} returns {want}", "signature")


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
    bounded = isinstance(a, TensorType) and isinstance(b, TensorType)
    if not shapes_compatible(shape_of(a), shape_of(b)) or (bounded and not within_bounds(a, b)):
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


def _constant_array(value) -> Optional[np.ndarray]:
    """The elements of `value` when a stablehlo.constant produces it (shape operands, paddings,
    roots), else None: such operands make a constraint on their values decidable statically."""
    producer = value.defining_op
    if producer is None or producer.name != "stablehlo.constant":
        return None
    elements = producer.attributes.get("value")
    if not isinstance(elements, A.DenseElements) or isinstance(elements, A.ElidedElements):
        return None
    return np.asarray(elements.array)


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
