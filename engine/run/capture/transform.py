"""Instrumenting a module so that XLA's own compiled run returns the values to capture.

`instrument(text, selected, loop_capacity)` parses the program afresh (the copy it rewrites; the
original stays as it is, for naming) and adds every chosen value as an extra result of the entry
function, so XLA compiles the whole program, fusions included, and hands those values back:

- a value in a function reached by `func.call` leaves the callee as an extra result, and every
  call site gets the extra results (`call` step: the call's site in the context);
- a value in a `stablehlo.while` body is written, each iteration, into a row of a buffer the loop
  carries ([capacity + 1, ...]; the iteration counter the loop also carries picks the row, and
  iterations past the capacity all land in the spare last row, which is never read). The
  capacity is the trip count of a counted loop JAX emits (scan, fori_loop: the counter starts
  at a constant, grows by 1 and is compared below a constant), else `loop_capacity`. The
  condition's ops run again at the top of the body (their values at iterations 0..n-1) and after
  the loop (the evaluation that ended it, iteration n); the counter's final value says n;
- a value in a branch of `stablehlo.if`/`case` leaves through an extra result; the other branches
  return zeros there, and the predicate/index, captured alongside, says which branch ran;
- a value inside `sdy.manual_computation` is per device: it leaves as [1, ..., 1, *shape] with
  one leading dimension per manual axis, split over that axis by the extra out sharding, so the
  global result holds every device's own value.

Ops whose regions are bodies XLA turns into loops over elements (reduce, sort, scatter,
all_reduce, ...) or which call functions some other way keep their inner values to themselves;
`Instrumented.left_out` names them. Constants are captured only when asked for by name or kind
(their values are in the program text).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Optional

import numpy as np

from ...ir.attributes import ArrayAttr, SdyAxisRef, SdyDimSharding, SdySharding, SdyShardingPerValue, SymbolRef
from ...ir.core import Function, Module, Operation, Value, symbol_name
from ...ir.errors import HlodbgError
from ...ir.opset import callee_attribute, is_terminator
from ...ir.types import TensorType
from ...ops.spmd import Mesh, resolve_mesh
from ...syntax.mlir import MLIR
from .building import I64, Cursor, add_operand, add_result, clone_ops, with_leading

DEFAULT_LOOP_CAPACITY = 1000


class CaptureTransformError(HlodbgError):
    """A program the capture transform cannot instrument (it says which op and why)."""


@dataclass(frozen=True)
class Step:
    """One step of the way from the entry function to a captured value (outermost first).

    kind: "call" (a func.call), "loop" (an iteration of a while: one leading dimension of
    `capacity` + 1 rows), "last" (the loop condition's final evaluation, after the loop),
    "branch" (region `branch` of an if/case), "manual" (a manual computation: one leading
    dimension per manual axis, `axes` = ((name, size), ...) over `mesh`)."""

    kind: str
    op: Operation  # the op of the ORIGINAL program
    capacity: int = 0
    branch: int = 0
    axes: tuple = ()
    mesh: Optional[Mesh] = None
    mesh_ref: object = None  # how the program names the mesh (a SymbolRef or an inline mesh)

    @property
    def dims(self) -> tuple[int, ...]:
        if self.kind == "loop":
            return (self.capacity + 1,)
        if self.kind == "manual":
            return tuple(size for _, size in self.axes)
        return ()


@dataclass(frozen=True)
class Output:
    """An extra result of the instrumented entry function: what it holds and how to read it.

    kind: "value" (result `result` of `op`), "count" (the iterations `op`, a while, ran), "taken"
    (the predicate of `op`, an if, or its index, a case). The array's leading dimensions are the
    steps' dims (outermost first), then the value's own shape."""

    kind: str
    op: Operation
    result: int
    steps: tuple[Step, ...]
    value_type: TensorType
    index: int = -1  # the position among the entry function's results

    @property
    def shape(self) -> tuple[int, ...]:
        dims: tuple[int, ...] = ()
        for step in self.steps:
            dims += step.dims
        return dims + tuple(self.value_type.shape)


@dataclass
class _Pending:
    """A value on its way out: the rewritten program's value holding it, and what it is."""

    value: Value
    kind: str
    op: Operation
    result: int
    steps: tuple[Step, ...]
    value_type: TensorType

    def through(self, value: Value, step: Step) -> "_Pending":
        return _Pending(value, self.kind, self.op, self.result, (step,) + self.steps, self.value_type)


@dataclass
class Instrumented:
    """The rewritten module, its extra results, and what was not captured."""

    original: Module
    module: Module
    entry: str
    outputs: list[Output]
    first_output: int  # the entry function's original result count
    left_out: list[str] = field(default_factory=list)

    @property
    def text(self) -> str:
        return MLIR.print(self.module)


Selection = Optional[Callable[[Operation], bool]]


def instrument(text: str, filename: str, entry: str = "main", selected: Selection = None,
               loop_capacity: int = DEFAULT_LOOP_CAPACITY) -> Instrumented:
    """`text` with every value `selected` accepts (an op of the original program; None: every
    value but constants) returned by the entry function. See the module docstring."""
    if loop_capacity < 1:
        raise CaptureTransformError(f"the loop capacity must be at least 1, not {loop_capacity}")
    original = _parse(text, filename)
    work = _parse(text, filename)
    return _Instrumenter(original, work, entry, selected, loop_capacity).run()


def _parse(text: str, filename: str) -> Module:
    modules = MLIR.parse_all(text, filename)
    if len(modules) != 1:
        raise CaptureTransformError(f"{filename} holds {len(modules)} modules; capture one module at a time")
    return modules[0]


class _Instrumenter:
    def __init__(self, original: Module, work: Module, entry: str, selected: Selection, capacity: int):
        self.original = original
        self.work = work
        self.entry = entry
        self.selected = selected
        self.capacity = capacity
        self.originals: dict[Operation, Operation] = {}
        for name, function in work.functions.items():
            self.originals.update(zip(function.ops, original.functions[name].ops))
        self.done: dict[str, list[_Pending]] = {}
        self.inner_left_out: dict[str, list[str]] = {}
        self.constants_skipped = False
        self.meshes: dict[str, Mesh] = {}
        self.groups: dict[Operation, str] = {}  # ops given extra results -> their results' group name

    # -- the program ----------------------------------------------------------------------------
    def run(self) -> Instrumented:
        try:
            main = self.work.function(self.entry)
        except KeyError as e:
            raise CaptureTransformError(str(e.args[0])) from None
        first = len(main.function_type.results)
        pending = self._function(main, entry=True)
        outputs = [Output(p.kind, p.op, p.result, p.steps, p.value_type, first + i) for i, p in enumerate(pending)]
        return Instrumented(self.original, self.work, main.sym_name, outputs, first, self._left_out())

    def _left_out(self) -> list[str]:
        notes = []
        if self.constants_skipped:
            notes.append("constants (their values are in the program text; name them in --values to capture them)")
        for name, sites in sorted(self.inner_left_out.items()):
            shown = ", ".join(sites[:5]) + (f" and {len(sites) - 5} more" if len(sites) > 5 else "")
            notes.append(f"values inside {name} bodies ({shown}): XLA runs them as loops over elements")
        return notes

    def _function(self, function: Function, entry: bool = False) -> list[_Pending]:
        """The values of `function` (callees included) made extra results of it."""
        name = function.sym_name
        if name in self.done:
            return self.done[name]
        self.done[name] = []  # a call cycle (StableHLO has none) would end here
        pending = self._block(function.body)
        ret = function.body.terminator
        results = list(function.function_type.results)
        for item in pending:
            add_operand(ret, item.value)
            results.append(item.value.type)
        if pending:
            function_type = function.function_type
            function.attributes["function_type"] = type(function_type)(function_type.inputs, tuple(results))
            self._result_attributes(function, pending, entry)
        self.done[name] = pending
        return pending

    def _result_attributes(self, function: Function, pending: list[_Pending], entry: bool) -> None:
        attrs = function.attributes.get("res_attrs")
        sharded = entry and self.work.num_partitions > 1
        if attrs is None and not sharded:
            return
        count = len(function.function_type.results) - len(pending)
        existing = list(attrs) if attrs is not None else [{} for _ in range(count)]
        extra = [self._output_sharding(item) if sharded else {} for item in pending]
        function.attributes["res_attrs"] = ArrayAttr(existing + extra)

    def _output_sharding(self, item: _Pending) -> dict:
        """A sharded program's extra result: per-device dims split over their manual axes, all
        else replicated (so host 0 holds every global value whole)."""
        mesh_name = self._default_mesh()
        if mesh_name is None:
            return {"mhlo.sharding": "{replicated}"}
        dims = []
        mesh = SymbolRef(mesh_name)
        for step in item.steps:
            if step.kind == "manual":
                dims.extend(SdyDimSharding((SdyAxisRef(axis),)) for axis, _ in step.axes)
                mesh = step.mesh_ref
            else:
                dims.extend(SdyDimSharding() for _ in step.dims)
        dims.extend(SdyDimSharding() for _ in item.value_type.shape)
        return {"sdy.sharding": SdySharding(mesh, tuple(dims))}

    def _default_mesh(self) -> Optional[str]:
        for op in self.work.operations:
            if op.name == "sdy.mesh":
                return str(op.attributes["sym_name"])
        return None

    # -- blocks ---------------------------------------------------------------------------------
    def _block(self, block) -> list[_Pending]:
        pending: list[_Pending] = []
        for op in list(block.operations):
            if not is_terminator(op.name):
                pending.extend(self._op(op))
        return pending

    def _op(self, op: Operation) -> list[_Pending]:
        original = self.originals.get(op)
        if original is None:
            return []  # made by this transform
        pending = self._values(op, original)
        threader = THREADERS.get(op.name)
        if threader is not None:
            pending.extend(threader(self, op, original))
        elif op.regions and any(block.operations for region in op.regions for block in region.blocks):
            self.inner_left_out.setdefault(op.name, []).append(_site_text(original))
        elif callee_attribute(op.name):
            self.inner_left_out.setdefault(op.name, []).append(_site_text(original))
        return pending

    def _values(self, op: Operation, original: Operation) -> list[_Pending]:
        if self.selected is None:
            if op.name in ("stablehlo.constant", "chlo.constant"):
                self.constants_skipped = True
                return []
        elif not self.selected(original):
            return []
        out = []
        for index, value in enumerate(op.results):
            t = value.type
            if isinstance(t, TensorType) and t.is_static:
                out.append(_Pending(value, "value", original, index, (), t))
        return out

    # -- threading values out of regions and callees --------------------------------------------
    def _call(self, op: Operation, original: Operation) -> list[_Pending]:
        name = symbol_name(op.attributes.get("callee"))
        try:
            callee = self.work.function(name)
        except KeyError:
            raise CaptureTransformError(f"{op.name} at {op.pos}: no function @{name}") from None
        if callee.is_declaration:
            return []
        step = Step("call", original)
        return [item.through(self._result(op, item.value.type), step) for item in self._function(callee)]

    def _while(self, op: Operation, original: Operation) -> list[_Pending]:
        cond, body = op.regions[0].block, op.regions[1].block
        carried = len(op.operands)
        # The condition's values at iterations 0..n-1: its ops again at the top of the body.
        top = Cursor(body, body.operations[0] if body.operations else None)
        condition_ops = [o for o in cond.operations if not is_terminator(o.name)]
        clone_ops(condition_ops, dict(zip(cond.arguments, body.arguments)), top, self.originals)
        inside = self._block(body)
        # ... and the evaluation that ended the loop, after it, on its results.
        after = Cursor(op.parent, _next_op(op))
        last = clone_ops(condition_ops, dict(zip(cond.arguments, op.results[:carried])), after, self.originals)
        finals = [item for copy in last for item in self._op(copy)]
        if not inside and not finals:
            return []
        capacity = trip_count(op)
        capacity = self.capacity if capacity is None else max(capacity, 1)
        before = Cursor.before(op)
        end = Cursor.before_terminator(body)
        # Carried values, the body's results and the loop's results go in the same order.
        counter = self._carry(op, before.integer(0, "cap_iteration"), I64)
        add_operand(body.terminator, end.op("stablehlo.add", [counter, end.integer(1, "cap_one")], I64, "cap_next"))
        count = self._result(op, I64)
        row = end.op("stablehlo.minimum", [counter, end.integer(capacity, "cap_capacity")], I64, "cap_row_index")
        zero = end.integer(0, "cap_index") if any(item.value.type.shape for item in inside) else None
        step = Step("loop", original, capacity=capacity)
        out = []
        for item in inside:
            t = item.value.type
            buffer_type = with_leading(t, (capacity + 1,))
            buffer = self._carry(op, before.zeros(buffer_type, "cap_buffer"), buffer_type)
            update = end.reshape(item.value, (1, *t.shape))
            written = end.op("stablehlo.dynamic_update_slice", [buffer, update, row] + [zero] * len(t.shape),
                             buffer_type, "cap_buffer")
            add_operand(body.terminator, written)
            out.append(item.through(self._result(op, buffer_type), step))
        out.append(_Pending(count, "count", original, 0, (), I64))
        last_step = Step("last", original)
        out.extend(_Pending(item.value, item.kind, item.op, item.result, (last_step,) + item.steps, item.value_type)
                   for item in finals)
        return out

    def _result(self, op: Operation, t: TensorType) -> Value:
        return add_result(op, t, self.groups)

    @staticmethod
    def _carry(op: Operation, initial: Value, t: TensorType) -> Value:
        """A new value `op` (a while) carries, starting at `initial`: the body's block argument."""
        add_operand(op, initial)
        op.regions[0].block.add_argument("%cap_carried", t)
        return op.regions[1].block.add_argument("%cap_carried", t)

    def _branches(self, op: Operation, original: Operation) -> list[_Pending]:
        per_region = [self._block(region.block) for region in op.regions]
        everything = [(k, item) for k, items in enumerate(per_region) for item in items]
        if not everything:
            return []
        for k, region in enumerate(op.regions):
            block = region.block
            end = Cursor.before_terminator(block)
            for j, item in everything:
                add_operand(block.terminator, item.value if j == k else end.zeros(item.value.type))
        out = [item.through(self._result(op, item.value.type), Step("branch", original, branch=k)) for k, item in everything]
        selector = op.operands[0]
        out.append(_Pending(selector, "taken", original, 0, (), selector.type))
        return out

    def _manual(self, op: Operation, original: Operation) -> list[_Pending]:
        body = op.regions[0].block
        inside = self._block(body)
        if not inside:
            return []
        shardings = list(op.attributes["in_shardings"].shardings) + list(op.attributes["out_shardings"].shardings)
        if not shardings:
            raise CaptureTransformError(f"{op.name} at {op.pos}: no in or out shardings name its mesh")
        mesh_ref = shardings[0].mesh
        mesh = self._mesh(mesh_ref, op)
        sizes = dict(mesh.axes)
        axes = tuple((axis, sizes[axis]) for axis in op.attributes["manual_axes"].axes)
        step = Step("manual", original, axes=axes, mesh=mesh, mesh_ref=mesh_ref)
        end = Cursor.before_terminator(body)
        new_shardings = list(op.attributes["out_shardings"].shardings)
        out = []
        for item in inside:
            t = item.value.type
            add_operand(body.terminator, end.reshape(item.value, (1,) * len(axes) + tuple(t.shape)))
            dims = tuple(SdyDimSharding((SdyAxisRef(axis),)) for axis, _ in axes) + tuple(SdyDimSharding() for _ in t.shape)
            new_shardings.append(SdySharding(mesh_ref, dims))
            out.append(item.through(self._result(op, with_leading(t, [size for _, size in axes])), step))
        op.attributes["out_shardings"] = SdyShardingPerValue(tuple(new_shardings))
        return out

    def _mesh(self, mesh_ref, op: Operation) -> Mesh:
        key = str(mesh_ref)
        if key not in self.meshes:
            try:
                self.meshes[key] = resolve_mesh(mesh_ref, self.work)
            except ValueError as e:
                raise CaptureTransformError(f"{op.name} at {op.pos}: {e}") from None
        return self.meshes[key]


# How values leave each kind of op that opens frames of its own; every other op with regions or
# a callee keeps its inner values (left_out says which).
THREADERS: dict[str, Callable[[_Instrumenter, Operation, Operation], list[_Pending]]] = {
    "func.call": _Instrumenter._call,
    "stablehlo.while": _Instrumenter._while,
    "stablehlo.if": _Instrumenter._branches,
    "stablehlo.case": _Instrumenter._branches,
    "sdy.manual_computation": _Instrumenter._manual,
}


def trip_count(op: Operation) -> Optional[int]:
    """The iterations of a counted while (the counter starts at a constant, the body adds 1 to
    it, the condition compares it LT a constant), or None for any other loop."""
    cond, body = op.regions[0].block, op.regions[1].block
    if not cond.terminator or not cond.terminator.operands:
        return None
    compare = cond.terminator.operands[0].defining_op
    if compare is None or compare.name != "stablehlo.compare" or str(compare.attributes.get("comparison_direction")) != "LT":
        return None
    counter, bound = compare.operands
    if not counter.is_block_argument or counter.owner is not cond:
        return None
    k = counter.index
    limit = _constant(bound)
    start = _constant(op.operands[k])
    following = body.terminator.operands[k].defining_op if body.terminator else None
    if limit is None or start is None or following is None or following.name != "stablehlo.add":
        return None
    a, b = following.operands
    if not ((a is body.arguments[k] and _constant(b) == 1) or (b is body.arguments[k] and _constant(a) == 1)):
        return None
    return max(0, limit - start)


def _constant(value: Value) -> Optional[int]:
    op = value.defining_op
    if op is None or op.name != "stablehlo.constant":
        return None
    array = op.attributes["value"].array
    if array.shape != () or array.dtype.kind not in "iu":
        return None
    return int(np.asarray(array))


def _next_op(op: Operation) -> Optional[Operation]:
    operations = op.parent.operations
    index = operations.index(op)
    return operations[index + 1] if index + 1 < len(operations) else None


def _site_text(op: Operation) -> str:
    from ..capture_format import site

    return site(op)
