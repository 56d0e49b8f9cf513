"""The execution machine: runs functions op by op through the evaluator registry.

Each block is compiled once into steps (evaluator, prepared OpCall, operand and result values),
slice by slice as runs reach them (CompiledSteps), so running an op costs a dict lookup per
operand and one Python call. There are two loops over a block's steps: a fast one for a plain
run, and an observed one when listeners are attached or the backend keeps values in a form of its own. Listeners get `before_op`/`after_op`
for every op, `returning` for every block's terminator and `enter_frame`/`exit_frame` for every
function call and region body (the debugger's recorder, engine/debug/recording.py, runs a
recording loop of its own instead). Frames form a stack: function calls, while condition/body iterations, if/case branches
and reducer bodies.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Sequence

import numpy as np

from ..machine.allocator import keep_freed_memory
from ..machine.backend import CPU, Backend
from ..machine.memory import format_bytes, physical_memory
from ..ir.dtypes import as_value
from .arguments import read_only
from ..ir.errors import ExecutionError, HlodbgError
from ..ir.core import Block, Function, Module, Operation, Value, function_list, symbol_name
from ..ir.opset import is_foldable, is_terminator
from ..ops import load_families
from .fusion import fuse
from .liveness import liveness_of
from . import parallel  # noqa: F401  (registers interpreter.run_parallel, which runs a grid)
from ..ops.registry import EVALUATORS, OpCall
from ..machine.process import Grid, ProcessId
from ..ir.types import QuantizedType, TensorType



@dataclass
class Frame:
    """One level of the execution stack."""

    function: Function
    kind: str  # "function" | "while.cond" | "while.body" | "if.true" | "case.2" | "body" ...
    owner: Optional[Operation] = None  # the call/while/if/reduce op that opened this frame
    iteration: Optional[int] = None
    parent: Optional["Frame"] = None
    env: dict = field(default_factory=dict, repr=False)

    @property
    def depth(self) -> int:
        return 0 if self.parent is None else self.parent.depth + 1

    def describe(self) -> str:
        return describe_frame(self.function.sym_name, self.kind, self.iteration)


def describe_frame(function: str, kind: str, iteration: Optional[int], with_function: bool = True, note: str = "") -> str:
    """`@f`, `@f while.body #3` (or `while.body #3` without the function), then `(note)`: one
    frame, for people. Every frame the engine, the CLI and the UI show is spelled here."""
    where = f"@{function}"
    if kind != "function":
        it = f" #{iteration}" if iteration is not None else ""
        where = f"{where} {kind}{it}" if with_function else f"{kind}{it}"
    return where + (f" ({note})" if note else "")


class Listener:
    """Hooks called around every op and frame. Subclass and override what you need."""

    def before_op(self, frame: Frame, op: Operation, operands: list) -> None:
        pass

    def after_op(self, frame: Frame, op: Operation, operands: list, results: list) -> None:
        pass

    def enter_frame(self, frame: Frame, args: list) -> None:
        pass

    def exit_frame(self, frame: Frame, results: list) -> None:
        pass

    def returning(self, frame: Frame, op: Operation, values: list) -> None:
        """The block's terminator `op` is about to hand `values` to the block's owner."""
        pass

    def observe(self, frame: Frame) -> tuple[Callable, Callable, Callable]:
        """The observed loop's hooks for one run of a block in `frame`: (before_op(frame, op,
        operands), finished(frame, op, operands, out), returning(frame, op, values)), where `out`
        is what the evaluator returned (the value for one result, a sequence for several). A
        listener called for every op may return closures prepared for the block instead."""
        after_op = self.after_op

        def finished(frame: Frame, op: Operation, operands: list, out: Any) -> None:
            count = len(op.results)
            after_op(frame, op, operands, [out] if count == 1 else list(out) if count else [])

        return self.before_op, finished, self.returning


def _fan_out(listeners: Sequence[Listener], frame: Frame) -> tuple[Callable, Callable, Callable]:
    """(before_op, after_op, returning) calling every listener; one listener's own hooks when
    there is only one (the debugger's case), so the observed loop pays one call per hook."""
    if len(listeners) == 1:
        return listeners[0].observe(frame)

    hooks = [listener.observe(frame) for listener in listeners]

    def before(frame, op, operands):
        for hook in hooks:
            hook[0](frame, op, operands)

    def finished(frame, op, operands, out):
        for hook in hooks:
            hook[1](frame, op, operands, out)

    def returning(frame, op, values):
        for hook in hooks:
            hook[2](frame, op, values)

    return before, finished, returning


class Step:
    """One op of a compiled block. `foldable` steps compute a constant: their value is kept."""

    __slots__ = ("evaluator", "call", "op", "operands", "results", "single", "foldable", "folded")

    def __init__(self, evaluator: Callable, call: OpCall, operands: list[Value], results: list[Value]):
        self.evaluator = evaluator
        self.call = call
        self.op = call.op
        self.operands = operands
        self.results = results
        self.single = len(results) == 1
        self.foldable = False
        self.folded: Any = None


class CompiledSteps:
    """A block's steps, compiled in program order as a run reaches them, a slice at a time.

    A 100k-op function starts at once (its first state needs one step, not 100k); iterating the
    steps compiles the next slice whenever the run gets past the compiled ones, so every run sees
    the same steps. Constant-folding marks only look back (an op is constant when every operand
    came from an earlier constant op), so marking slice by slice marks exactly what marking the
    whole block would."""

    __slots__ = ("_ops", "_steps", "_make", "_step_of", "_constant", "_complete")

    SLICE = 256  # ops compiled at a time: a small loop body in one slice, a big block step by step

    def __init__(self, ops: Sequence[Operation], make: Callable[[Operation], Step], step_of: dict):
        self._ops = ops
        self._steps: list[Step] = []
        self._make = make
        self._step_of = step_of  # the interpreter's op -> step, filled as slices are compiled
        self._constant: set = set()
        self._complete = not ops

    def __len__(self) -> int:
        return len(self._ops)

    def __iter__(self):
        if self._complete:
            return iter(self._steps)
        return self._growing()

    def __getitem__(self, index: int) -> Step:
        if index < 0:
            index += len(self._ops)
        while index >= len(self._steps) and self._compile_slice():
            pass
        return self._steps[index]

    def _growing(self):
        steps = self._steps
        i = 0
        while i < len(steps) or self._compile_slice():
            yield steps[i]
            i += 1

    def reach(self, op: Operation) -> Optional[Step]:
        """The step of `op`, compiling up to it; None when `op` is not one of these steps."""
        step_of = self._step_of
        while op not in step_of and self._compile_slice():
            pass
        return step_of.get(op)

    def _compile_slice(self) -> bool:
        """Compile the next slice of steps; False when every step is compiled already."""
        steps, ops = self._steps, self._ops
        start = len(steps)
        if start >= len(ops):
            return False
        made = [self._make(op) for op in ops[start:start + self.SLICE]]
        _mark_constant_steps(made, self._constant)
        self._step_of.update((step.op, step) for step in made)
        steps.extend(made)
        self._complete = len(steps) == len(ops)
        return True


class Interpreter:
    """Runs one process's view of a module: `Interpreter(module).run("main", args)`."""

    def __init__(
        self,
        module: Module,
        backend: Backend = CPU,
        process: ProcessId = ProcessId(0, 0),
        grid: Optional[Grid] = None,
        listeners: Sequence[Listener] = (),
    ):
        load_families()
        keep_freed_memory()
        self.module = module
        self.backend = backend  # storage and numerics (machine/backend.py)
        backend.prepare(module)
        self.process = process
        self.grid = grid if grid is not None else Grid(1, 1)
        self.listeners: list[Listener] = list(listeners)
        self.frame: Optional[Frame] = None
        self.printed: list[str] = []  # interpreter.print output, in order
        self.probe_dir: Optional[str] = None
        self.probe_counts: dict[str, int] = {}
        self.checks: list = []  # CheckOutcome of every check op run, in order
        # When set, reducer bodies always run as regions (no ufunc shortcut for a recognised
        # single-op body), so the debugger can show them evaluated; results may round differently.
        self.expand_bodies = False
        self._compiled: dict[int, tuple[CompiledSteps, Optional[Operation]]] = {}
        self._step_of: dict[Operation, Step] = {}
        # Plain runs run chains of elementwise ops fused (run/fusion.py); off: every op on its own.
        self.fuse_elementwise = True
        self._fast: dict[int, list] = {}

    # -- entry points ---------------------------------------------------------------------
    def entry_function(self, entry: str) -> Function:
        return entry_function(self.module, entry)

    def for_process(self, process: ProcessId, grid: Optional[Grid]) -> "Interpreter":
        """A plain interpreter for another process of a nested grid (interpreter.run_parallel) that
        prints, probes and expands bodies like this one."""
        other = Interpreter(self.module, backend=self.backend.for_device(process, grid), process=process, grid=grid)
        other.printed = self.printed
        other.probe_dir = self.probe_dir
        other.probe_counts = self.probe_counts
        other.expand_bodies = self.expand_bodies
        return other

    def run(self, entry: str = "main", args: Sequence[Any] = ()) -> list[Any]:
        function = self.entry_function(entry)
        values = entry_arguments(function, args)
        with np.errstate(all="ignore"):
            return self.call_function(function, values)

    def call_function(self, function: Function, args: list[Any], owner: Optional[Operation] = None) -> list[Any]:
        if function.is_declaration:
            raise ExecutionError(f"@{function.sym_name} is only declared; it has no body to run", function.pos)
        frame = Frame(function, "function", owner, None, self.frame, {})
        return self._run_frame(frame, function.body, args)

    def run_region(self, op: Operation, index: int, args: list[Any], kind: str = "body", iteration: Optional[int] = None) -> list[Any]:
        """Run region `index` of `op` in a child frame that sees the enclosing values."""
        parent = self.frame
        function = parent.function if parent is not None else op.function
        env = parent.env if parent is not None else {}
        frame = Frame(function, kind, op, iteration, parent, env)
        return self._run_frame(frame, op.regions[index].blocks[0], args)

    # -- machinery ------------------------------------------------------------------------
    def _run_frame(self, frame: Frame, block: Block, args: list[Any]) -> list[Any]:
        saved = self.frame
        self.frame = frame
        listeners = self.listeners
        try:
            for listener in listeners:
                listener.enter_frame(frame, args)
            results = self._run_block(block, args, frame.env)
            for listener in listeners:
                listener.exit_frame(frame, results)
            return results
        finally:
            self.frame = saved

    def _run_block(self, block: Block, args: list[Any], env: dict) -> list[Any]:
        steps, terminator = self._compile(block)
        arguments = _block_arguments(block, args)
        if self.listeners or not self.backend.transparent_storage:
            return self._run_steps_general(steps, terminator, arguments, args, env)
        if self.fuse_elementwise:
            steps = self._fast_steps(block, steps)
        for value, arg in zip(arguments, args):
            env[value] = arg
        for step in steps:
            out = step.folded
            if out is None:
                try:
                    out = step.evaluator(step.call, *[env[v] for v in step.operands])
                except HlodbgError:
                    raise
                except Exception as e:  # noqa: BLE001 - every failure becomes a located message
                    raise self._failure(step, e) from e
                if step.foldable:
                    step.folded = _frozen(out)
            if step.single:
                env[step.results[0]] = out
            elif step.results:
                for value, result in zip(step.results, out):
                    env[value] = result
        if terminator is None:
            return []
        return [env[v] for v in terminator.operands]

    def _run_steps_general(self, steps: "CompiledSteps", terminator, arguments, args, env: dict) -> list[Any]:
        """The observed loop: the same steps, announced to the listeners before and after each op
        and before the terminator hands its values back (Listener.observe), and values kept in the
        backend's form when its storage is not transparent."""
        frame = self.frame
        backend = self.backend
        transparent = backend.transparent_storage
        store, load = backend.store, backend.load
        before_op, finished, returning = _fan_out(self.listeners, frame)
        for value, arg in zip(arguments, args):
            env[value] = arg if transparent else store(arg, value)
        for step in steps:
            if transparent:
                operands = [env[v] for v in step.operands]
            else:
                operands = [load(env[v], v) for v in step.operands]
            op = step.op
            before_op(frame, op, operands)
            out = step.folded
            if out is None:
                try:
                    out = step.evaluator(step.call, *operands)
                except HlodbgError:
                    raise
                except Exception as e:  # noqa: BLE001 - every failure becomes a located message
                    raise self._failure(step, e) from e
                if step.foldable:
                    step.folded = _frozen(out)
            if step.single:
                env[step.results[0]] = out if transparent else store(out, step.results[0])
            elif step.results:
                for value, result in zip(step.results, out):
                    env[value] = result if transparent else store(result, value)
            finished(frame, op, operands, out)
        if terminator is None:
            return []
        returned = [env[v] if transparent else load(env[v], v) for v in terminator.operands]
        returning(frame, terminator, returned)
        return returned

    def _fast_steps(self, block: Block, steps: "CompiledSteps") -> list:
        """The block's steps for plain runs: groups of elementwise ops fused (run/fusion.py)."""
        fast = self._fast.get(id(block))
        if fast is None:
            ops = block.operations
            function = ops[0].function if ops else None
            fast = list(steps)
            if function is not None and fast:
                fast = fuse(fast, liveness_of(self.module).function(function).position)
            self._fast[id(block)] = fast
        return fast

    def _failure(self, step: Step, error: Exception) -> ExecutionError:
        op = step.call.op
        if os.environ.get("HLODBG_DEBUG"):
            import traceback

            traceback.print_exception(error)
        message = str(error) or type(error).__name__
        if isinstance(error, MemoryError):
            message = f"out of memory ({message})"
        return ExecutionError(f"{op.name} failed: {message}", op.pos)

    def _compile(self, block: Block) -> tuple["CompiledSteps", Optional[Operation]]:
        key = id(block)
        compiled = self._compiled.get(key)
        if compiled is not None:
            return compiled
        ops = block.operations
        terminator = ops[-1] if ops and is_terminator(ops[-1].name) else None
        body = ops[:-1] if terminator is not None else ops
        self._compiled[key] = compiled = (CompiledSteps(body, self._step, self._step_of), terminator)
        return compiled

    def step_for(self, op: Operation) -> Step:
        """The compiled step of `op` (its block compiled up to it on first use)."""
        step = self._step_of.get(op)
        if step is None:
            step = self._compile(op.parent)[0].reach(op)
        if step is not None:
            return step
        raise ExecutionError(f"{op.name} is not a step of its block (a terminator?)", op.pos)

    def _step(self, op: Operation) -> Step:
        call = OpCall(op, self)
        evaluator = EVALUATORS.get(op.name)
        if evaluator is None:
            evaluator = _unsupported(op)
        elif _has_quantized_types(op):
            from ..ops.quantization import NATIVE_QUANTIZED_OPS, wrap_quantized

            if op.name not in NATIVE_QUANTIZED_OPS:
                evaluator = wrap_quantized(evaluator, call)
        oversized = _result_beyond_memory(op, self.backend)
        if oversized is not None:
            evaluator = oversized
        # The machine's own arithmetic around the op (a TPU's subnormal flushing, f64 refusal).
        evaluator = self.backend.wrap_evaluator(op, evaluator)
        return Step(evaluator, call, list(op.operands), list(op.results))

    def callee(self, op: Operation) -> Function:
        name = symbol_name(op.attributes.get("callee"))
        try:
            return self.module.function(name)
        except (KeyError, ValueError):
            raise ExecutionError(f"{op.name}: no function @{name} in the module", op.pos) from None


def entry_function(module: Module, entry: str) -> Function:
    """The function named `entry` (`main` also names the module's entry function, see
    Module.function), or an error listing the functions there are."""
    functions = module.functions
    if entry == "main" and entry not in functions and module.entry is not None:
        return module.function(entry)
    if entry not in functions:
        where = f" in {module.source.name}" if module.source is not None else ""
        raise ExecutionError(f"no function @{entry}{where} (functions: {function_list(functions, entry)})")
    return functions[entry]


def entry_arguments(function: Function, args: Sequence[Any]) -> list[Any]:
    """`args` as values of the function's argument types, or a located error saying which."""
    inputs = function.function_type.inputs
    name = function.sym_name
    if len(args) != len(inputs):
        raise ExecutionError(f"@{name} takes {len(inputs)} argument(s), {len(args)} given", function.pos)
    values = []
    for i, (arg, t) in enumerate(zip(args, inputs)):
        try:
            values.append(read_only(as_value(arg, t)))  # an argument is never written
        except ValueError as e:
            raise ExecutionError(f"argument {i} of @{name}: {e}", function.pos) from None
    return values


def _block_arguments(block: Block, args: list[Any]) -> list[Value]:
    """The block's arguments, after checking a region was given as many values as it takes."""
    arguments = block.arguments
    if len(args) != len(arguments):
        owner = block.parent.parent if block.parent is not None else None
        raise ExecutionError(f"region expects {len(arguments)} argument(s), got {len(args)}", owner.pos if owner else None)
    return arguments


def _frozen(out: Any) -> Any:
    """A kept value is shared by every later run: make sure nothing can write to it."""
    for array in out if isinstance(out, list) else (out,):
        if isinstance(array, np.ndarray):
            array.flags.writeable = False
    return out


def _mark_constant_steps(steps: list[Step], constant: set) -> None:
    """Mark pure region-free ops fed only by constants: they compute the same value every run.

    JAX programs broadcast and convert many constants; computing each once makes repeated runs
    (loops, the debugger's replays) cheaper. Listeners still see every op with its value.
    `constant` holds the values of the block's earlier constant steps and gains these steps' own.
    """
    for step in steps:
        op = step.call.op
        pure = is_foldable(op.name, bool(op.regions))
        if pure and op.results and all(v in constant for v in step.operands):
            step.foldable = True
            constant.update(step.results)


def _has_quantized_types(op: Operation) -> bool:
    for v in (*op.operands, *op.results):
        t = v.type
        if isinstance(t, TensorType) and isinstance(t.element, QuantizedType):
            return True
    return False


def _result_beyond_memory(op: Operation, backend: Backend) -> Optional[Callable]:
    """An evaluator refusing `op` when one of its results needs more than all of the machine's
    memory (a `dense<0.0> : tensor<512x1x6400x6400xf32>` splat, say, or a small array in a layout
    whose tiles pad it a millionfold on an emulated TPU), or None when they fit."""
    memory = physical_memory()
    if memory is None:
        return None
    for result in op.results:
        t = result.type
        if not isinstance(t, TensorType) or not t.is_static:
            continue
        try:
            size = t.num_elements * t.numpy_dtype.itemsize
        except (TypeError, AttributeError, NotImplementedError):
            continue
        stored = ""
        if not backend.transparent_storage:
            physical = backend.buffer_bytes(result)[1]
            if physical > size:
                size, stored = physical, f" in its {backend.describe()} layout"
        if size > memory:
            message = (f"{op.name}: its result {t} needs {format_bytes(size)}{stored}, more than the "
                       f"{format_bytes(memory)} of memory this machine has")

            def evaluator(call: OpCall, *operands: Any) -> Any:
                raise ExecutionError(message, op.pos)

            return evaluator
    return None


def _unsupported(op: Operation) -> Callable:
    notes = ()
    if op.name.startswith("sdy."):
        notes = ("hlodbg runs Shardy's sdy.manual_computation, sdy.sharding_constraint and sdy.reshard; other sdy "
                 "ops come from Shardy's partitioning passes, not from JAX's lowered programs",)

    def evaluator(call: OpCall, *operands: Any) -> Any:
        raise ExecutionError(f"hlodbg cannot execute {op.name}: no evaluator for this op", op.pos, notes)

    return evaluator


def run_module(module: Module, args: Sequence[Any] = (), entry: str = "main", backend: Backend = CPU,
               process: ProcessId = ProcessId(0, 0)) -> list[Any]:
    """Run `entry` of `module` on one process and return its results."""
    return Interpreter(module, backend=backend, process=process).run(entry, args)
