"""The op registry: one evaluator per op name, and the per-op context evaluators receive.

An evaluator is a plain function `evaluator(call, *operands)` registered with `@op("stablehlo.add")`.
`operands` are numpy arrays (tuples for tuple values, `Token` for tokens); the evaluator returns
the single result, or a sequence of results when the op has several (or none). `call` is an
`OpCall`, prepared once per op when the program is loaded: it carries the decoded attributes, the
result types, the backend that owns numerics and storage, the process (replica_id, partition_id)
and a way to run the op's regions. Dispatch (interpreter.py) is kept apart from semantics.
"""
from __future__ import annotations

from typing import Any, Callable, Optional, Sequence

from ..ir.core import Operation, Region
from ..ir.errors import ExecutionError
from ..ir.types import QuantizedType, TensorType, Type

Evaluator = Callable[..., Any]

EVALUATORS: dict[str, Evaluator] = {}


def op(*names: str) -> Callable[[Evaluator], Evaluator]:
    """Register `fn` as the evaluator of each op name; a second registration is refused."""

    def register(fn: Evaluator) -> Evaluator:
        for name in names:
            if name in EVALUATORS:
                raise ValueError(f"evaluator for {name} registered twice ({EVALUATORS[name].__module__} and {fn.__module__})")
            EVALUATORS[name] = fn
        return fn

    return register


# An evaluator may carry a direct form, `evaluator.direct_form(call) -> Optional[Callable]`: for
# that call (decided once, from its types and attributes), a function of the operands alone that
# computes the evaluator's result when the operands have exactly the dtypes the call declares (a
# 0-d result may come back as a numpy scalar: the caller keeps it an array). Plain runs call it
# from their block code where the evaluator's own checks cost more than the arithmetic
# (engine/run/block_code.py); None: no such form for this call. It may carry a scalar form too,
# `evaluator.scalar_form(call) -> Optional[Callable]`: the same for 0-d operands held as numpy
# scalars (or 0-d arrays) of those dtypes, returning a numpy scalar with the bits the direct form
# gives; a compiled loop keeps its 0-d values as scalars between such steps.


def evaluator_for(name: str) -> Optional[Evaluator]:
    return EVALUATORS.get(name)


class OpCall:
    """Everything an evaluator needs besides its operands, built once per op at load time."""

    __slots__ = ("op", "attrs", "result_types", "operand_types", "interpreter", "backend", "memo", "reuse")

    def __init__(self, op: Operation, interpreter: Any):
        self.op = op
        self.attrs = op.attributes
        self.result_types: list[Type] = [v.type for v in op.results]
        self.operand_types: list[Type] = [v.type for v in op.operands]
        self.interpreter = interpreter
        # The machine's storage and numerics policy (machine/backend.py): every rounding,
        # staging and matmul choice an evaluator makes goes through it.
        self.backend = interpreter.backend
        # Evaluators keep derived attribute forms here (permutations, index maps), computed once.
        self.memo: dict[str, Any] = {}
        # The operand positions whose buffers this call may overwrite with its result (the value
        # dies here and nothing else holds it; engine/run/plan.py): set by a plain run right
        # before the call, () otherwise. Write into `operands[i]` only when it is writeable, owns
        # its data and has the result's shape and dtype.
        self.reuse: tuple[int, ...] = ()

    # -- attributes and types ---------------------------------------------------------------
    def attr(self, name: str, default: Any = None) -> Any:
        return self.attrs.get(name, default)

    @property
    def result_type(self) -> Type:
        return self.result_types[0]

    @property
    def result_dtype(self):
        return self.result_types[0].numpy_dtype

    @property
    def result_shape(self) -> tuple[int, ...]:
        t = self.result_types[0]
        if not isinstance(t, TensorType) or t.shape is None:
            raise self.error(f"result type {t} has no static shape")
        return t.shape

    def results(self, values: Sequence[Any]) -> Any:
        """Package a list of results the way the interpreter expects (bare when there is one)."""
        return values[0] if len(self.result_types) == 1 else list(values)

    def cached(self, key: str, compute: Callable[[], Any]) -> Any:
        try:
            return self.memo[key]
        except KeyError:
            value = self.memo[key] = compute()
            return value

    # -- machine ----------------------------------------------------------------------------
    @property
    def process(self):
        return self.interpreter.process

    @property
    def grid(self):
        return self.interpreter.grid

    @property
    def regions(self) -> list[Region]:
        return self.op.regions

    def run_region(self, index: int, *args: Any, kind: str = "body") -> list[Any]:
        """Run region `index` on `args`; returns the terminator's operands.

        Bodies of reduce-like ops are run on whole arrays at once (every pair in one call), so
        their arguments may have more dimensions than the 0-d block arguments declare.
        """
        return self.interpreter.run_region(self.op, index, list(args), kind)

    def body_kind(self, index: int = 0) -> Optional[str]:
        """The single elementwise op a region applies (`"add"`, `"maximum"`, ...), if it is one.

        None when the interpreter expands bodies (the debugger showing a body evaluated).
        """
        if self.interpreter is not None and self.interpreter.expand_bodies:
            return None
        return self.cached(f"body_kind{index}", lambda: single_op_body(self.op.regions[index]))

    def error(self, message: str, notes: Sequence[str] = ()) -> ExecutionError:
        return ExecutionError(f"{self.op.name}: {message}", self.op.pos, tuple(notes))


# Ops a recognised reducer body may apply; each maps to a numpy ufunc in the reduction families.
REDUCER_OPS = {
    "stablehlo.add": "add",
    "stablehlo.multiply": "multiply",
    "stablehlo.maximum": "maximum",
    "stablehlo.minimum": "minimum",
    "stablehlo.and": "and",
    "stablehlo.or": "or",
    "stablehlo.xor": "xor",
}


def single_op_body(region: Region) -> Optional[str]:
    """`"add"` for `^bb(a, b): r = add(a, b) (either order); return r`, else None.

    Variadic bodies (several pairs of arguments) qualify when every result is the same op on
    its own pair: `(a0, a1, b0, b1) -> (op(a0, b0), op(a1, b1))`.
    """
    if not region.blocks:
        return None
    block = region.blocks[0]
    args = block.arguments
    ops = block.operations
    n = len(args) // 2
    if n == 0 or len(args) != 2 * n or len(ops) != n + 1:
        return None
    # Quantized bodies combine real values, not storage integers: no ufunc shortcut for them.
    if any(isinstance(getattr(a.type, "element", None), QuantizedType) for a in args):
        return None
    terminator = ops[-1]
    kinds = set()
    for i, body_op in enumerate(ops[:-1]):
        kind = REDUCER_OPS.get(body_op.name)
        if kind is None or len(body_op.operands) != 2 or len(body_op.results) != 1:
            return None
        pair = {args[i], args[i + n]}
        if set(body_op.operands) != pair or body_op.operands[0] is body_op.operands[1]:
            return None
        if terminator.operands[i] is not body_op.results[0]:
            return None
        kinds.add(kind)
    if len(kinds) != 1 or len(terminator.operands) != n:
        return None
    return kinds.pop()
