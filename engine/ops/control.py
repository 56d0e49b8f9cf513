"""Control flow and structure: constant, func.call, while, if, case, composite, tuples, tokens,
async_start/async_done and chlo.scan.

These ops run regions or other functions through the interpreter, so the frames they open are
what the debugger shows (a call, a loop iteration, the taken branch).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..ir.core import symbol_name
from ..ir.dtypes import TOKEN, Future
from ..ir.opset.chlo import scan_groups
from .registry import OpCall, op


@op("stablehlo.constant", "chlo.constant", "arith.constant")
def constant(call: OpCall) -> np.ndarray:
    # Constants are immutable arrays shared by every execution; results are never written in place.
    # Decoded once per op: later calls are one dictionary lookup (no closure, no re-decoding).
    value = call.memo.get("value")
    if value is None:
        value = call.memo["value"] = _readonly(call.attr("value").array)
    return value


def _readonly(array: np.ndarray) -> np.ndarray:
    array = np.array(array, copy=True)
    array.flags.writeable = False
    return array


@op("func.call")
def call_(call: OpCall, *args: Any) -> list[Any]:
    interpreter = call.interpreter
    callee = call.cached("callee", lambda: interpreter.callee(call.op))
    return call.results(interpreter.call_function(callee, list(args), call.op))


@op("stablehlo.while")
def while_(call: OpCall, *state: Any) -> list[Any]:
    # The runners are prepared once per while op run: in a plain run an iteration is then two calls
    # straight into the plan's steps (engine/run/interpreter.py region_runner).
    interpreter = call.interpreter
    whole = interpreter.loop_runner(call.op)  # a plain run's loop, compiled whole
    if whole is not None:
        return call.results(whole(list(state)))
    condition_of = interpreter.region_runner(call.op, 0, "while.cond")
    body = interpreter.region_runner(call.op, 1, "while.body")
    values = list(state)
    iteration = 0
    while True:
        (condition,) = condition_of(values, iteration)
        if not condition:  # a 0-d boolean array
            return call.results(values)
        values = body(values, iteration)
        iteration += 1


@op("stablehlo.if")
def if_(call: OpCall, pred: np.ndarray) -> list[Any]:
    taken = bool(np.asarray(pred))
    return call.results(call.interpreter.run_region(call.op, 0 if taken else 1, [], "if.true" if taken else "if.false"))


@op("stablehlo.case")
def case(call: OpCall, index: np.ndarray) -> list[Any]:
    branches = len(call.op.regions)
    i = int(np.asarray(index))
    # Out-of-range indices run the last branch (spec: "index < 0 or index >= N" -> N-1).
    if i < 0 or i >= branches:
        i = branches - 1
    return call.results(call.interpreter.run_region(call.op, i, [], f"case.{i}"))


@op("stablehlo.composite")
def composite(call: OpCall, *args: Any) -> list[Any]:
    interpreter = call.interpreter
    name = call.attr("decomposition")
    callee = call.cached("callee", lambda: interpreter.module.function(symbol_name(name)))
    return call.results(interpreter.call_function(callee, list(args), call.op))


@op("stablehlo.optimization_barrier")
def optimization_barrier(call: OpCall, *operands: Any) -> Any:
    return call.results(operands)


@op("stablehlo.tuple")
def tuple_(call: OpCall, *operands: Any) -> tuple:
    return tuple(operands)


@op("stablehlo.get_tuple_element")
def get_tuple_element(call: OpCall, operand: tuple) -> Any:
    return operand[int(call.attr("index"))]


@op("stablehlo.after_all")
def after_all(call: OpCall, *tokens: Any) -> Any:
    return TOKEN


@op("stablehlo.create_token")
def create_token(call: OpCall) -> Any:
    return TOKEN


# -- asynchronous ops (spec "async_start", "async_done") ----------------------------------------


@op("stablehlo.async_start")
def async_start(call: OpCall, *operands: Any) -> Future:
    # The body's one op reads the operands, as the enclosing values or as the block's arguments;
    # running it now is an allowed schedule ("the asynchrony is not guaranteed"), and its frame
    # is what the debugger steps into.
    takes_arguments = bool(call.op.regions[0].blocks[0].arguments)
    return Future(call.interpreter.run_region(call.op, 0, list(operands) if takes_arguments else [], "async_start"))


@op("stablehlo.async_done")
def async_done(call: OpCall, *futures: Future) -> Any:
    return call.results([value for future in futures for value in future])


# -- chlo.scan (docs/generated/chlo.md) -------------------------------------------------------------


@op("chlo.scan")
def scan(call: OpCall, *operands: Any) -> list[Any]:
    inputs, inits = call.cached("groups", lambda: _scan_groups(call))
    xs, carries = [np.asarray(x) for x in operands[:inputs]], list(operands[inputs:])
    dimension = int(call.attr("dimension"))
    length = _scan_length(call, xs, inits, dimension)
    steps = range(length - 1, -1, -1) if call.attr("is_reverse") else range(length)
    outputs = len(call.result_types) - inits
    slices: list[list[Any]] = [[None] * length for _ in range(outputs)]
    body = call.interpreter.region_runner(call.op, 0, "scan.body")
    # One body run per position, in scan order: (x slices..., carries...) -> (outputs..., carries...).
    for iteration, t in enumerate(steps):
        step = body([np.take(x, t, axis=dimension) for x in xs] + carries, iteration)
        for k in range(outputs):
            slices[k][t] = np.asarray(step[k])
        carries = list(step[outputs:])
    results = [np.stack(parts, axis=dimension).astype(t.numpy_dtype, copy=False) if length
               else np.zeros(t.shape, t.numpy_dtype)
               for parts, t in zip(slices, call.result_types)]
    return results + carries


def _scan_length(call: OpCall, xs: list, inits: int, dimension: int) -> int:
    """Steps of a scan: the inputs' size along `dimension`, else `scan_dim_size`, else the outputs'."""
    if xs:
        return xs[0].shape[dimension]
    given = call.attr("scan_dim_size")
    if given is not None:
        return int(given)
    outputs = call.result_types[:len(call.result_types) - inits]
    return outputs[0].shape[dimension] if outputs else 0


def _scan_groups(call: OpCall) -> tuple[int, int]:
    try:
        return scan_groups(call.op)
    except ValueError as e:
        raise call.error(str(e)) from None
