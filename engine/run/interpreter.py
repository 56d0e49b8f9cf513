"""The execution machine: runs functions op by op through the evaluator registry.

Every op's step (evaluator, prepared OpCall) is made once and kept in the interpreter's `Plan`
(engine/run/plan.py), so later runs reuse decoded attributes and constants. A block's steps run
in one of two forms of the same algorithm — evaluate each step on its operands, keep its results,
let every value go after its last use (engine/run/liveness.py) — and nowhere else
(tests/test_architecture.py checks that no other module calls an evaluator in a loop of its own):

- the **plain loop** (`_run_fast`, and its compiled form for hot blocks, block_code.py), when nothing
  observes the run (no listener but step timers, `--profile`'s; a backend whose storage is the
  numpy value itself): values live in
  a flat frame per function call (a list of slots; a region body runs in its function's frame),
  runs of elementwise steps may be fused (fusion.py), and while loops run their regions through
  `region_runner` with no Frame object per iteration;
- the **observed loop** (`_run_observed`), otherwise: values kept by Value in each Frame's `env`
  (in the backend's own form when its storage is not transparent), and the run's one `Listener`
  (several are fanned out) told of every frame entered and left and of every **event**: each op
  before and after it runs and each block's terminator as it hands values back, numbered by the
  interpreter's event clock (`events`) in the order they start. The debugger's recorder
  (engine/debug/recording.py), the NaN scan, lockstep comparison, lessons and `--profile` are all
  listeners of this loop, so an event number means the same op instance to all of them. Frames
  form a stack: function calls, while condition/body iterations, if/case branches and reducer
  bodies.
"""
from __future__ import annotations

from functools import partial
from sys import getrefcount
from typing import Any, Callable, Optional, Sequence

import numpy as np

from ..ir.core import Block, Function, Module, Operation, Value, function_list, symbol_name
from ..ir.dtypes import as_value
from ..ir.errors import ExecutionError, HlodbgError
from ..ir.types import QuantizedType, TensorType
from ..machine.allocator import keep_freed_memory
from ..machine.backend import CPU, Backend
from ..machine.memory import format_bytes, physical_memory
from ..machine.process import Grid, ProcessId
from ..ops import load_families
from ..ops.registry import EVALUATORS, OpCall
from . import parallel  # noqa: F401  (registers interpreter.run_parallel, which runs a grid)
from .arguments import read_only
from .block_code import MOST_STEPS, block_function, loop_function
from .deep_stack import run_with_room
from .liveness import liveness_of
from .plan import SOLE_HOLDER, CompiledSteps, FastBlock, Plan, Step, failure, frozen
from .screen import screen_step

# Functions longer than this run observed without letting values go early (Interpreter._values_dying).
LIVENESS_UP_TO = 30_000


class Frame:
    """One level of the execution stack (a class with slots: an observed loop makes two a
    iteration)."""

    __slots__ = ("function", "kind", "owner", "iteration", "parent", "env", "block", "__weakref__")

    def __init__(self, function: Function, kind: str, owner: Optional[Operation] = None, iteration: Optional[int] = None,
                 parent: Optional["Frame"] = None, env: Optional[dict] = None, block: Optional[Block] = None):
        self.function = function
        self.kind = kind  # "function" | "while.cond" | "while.body" | "if.true" | "case.2" | "body" ...
        self.owner = owner  # the call/while/if/reduce op that opened this frame
        self.iteration = iteration
        self.parent = parent
        self.env = env  # values by Value (observed runs; None in plain runs, whose values are slots)
        self.block = block  # the block it runs (observed runs)

    @property
    def depth(self) -> int:
        return 0 if self.parent is None else self.parent.depth + 1

    def describe(self) -> str:
        return describe_frame(self.function.sym_name, self.kind, self.iteration)

    def __repr__(self) -> str:
        return f"Frame({self.describe()})"


def describe_frame(function: str, kind: str, iteration: Optional[int], with_function: bool = True, note: str = "") -> str:
    """`@f`, `@f while.body #3` (or `while.body #3` without the function), then `(note)`: one
    frame, for people. Every frame the engine, the CLI and the UI show is spelled here."""
    where = f"@{function}"
    if kind != "function":
        it = f" #{iteration}" if iteration is not None else ""
        where = f"{where} {kind}{it}" if with_function else f"{kind}{it}"
    return where + (f" ({note})" if note else "")


class Listener:
    """What the observed loop tells about a run; subclass and override what you need. `event` is
    the interpreter's event number (ops and block terminators, in the order they start);
    `results` a list with one entry per result of `op`."""

    def enter_frame(self, frame: Frame, args: list) -> None:
        pass

    def exit_frame(self, frame: Frame, results: Optional[list]) -> None:
        """`frame` is left: with its results, or None when an error unwinds it."""

    def before_op(self, event: int, frame: Frame, op: Operation, operands: list) -> None:
        pass

    def after_op(self, event: int, frame: Frame, op: Operation, operands: list, results: list) -> None:
        pass

    def returning(self, event: int, frame: Frame, op: Operation, values: list) -> None:
        """The block's terminator `op` is about to hand `values` to the block's owner."""

    # A listener that `times_steps` needs no events: it leaves a run plain (fused, compiled code
    # aside) and is told of each step of the plain loop instead — a fused group is one step, with
    # its `members` — as well as of the events when something else makes the run observed.
    times_steps = False

    def step_started(self, step: Any) -> None:
        pass

    def step_finished(self, step: Any) -> None:
        pass


class _FanOut(Listener):
    """Several listeners heard as one, in order."""

    def __init__(self, listeners: Sequence[Listener]):
        self.listeners = list(listeners)

    def enter_frame(self, frame, args):
        for listener in self.listeners:
            listener.enter_frame(frame, args)

    def exit_frame(self, frame, results):
        for listener in self.listeners:
            listener.exit_frame(frame, results)

    def before_op(self, event, frame, op, operands):
        for listener in self.listeners:
            listener.before_op(event, frame, op, operands)

    def after_op(self, event, frame, op, operands, results):
        for listener in self.listeners:
            listener.after_op(event, frame, op, operands, results)

    def returning(self, event, frame, op, values):
        for listener in self.listeners:
            listener.returning(event, frame, op, values)


_SILENT = Listener()  # an observed run no one listens to (a backend with storage of its own)


def _no_values(_: Any, default: tuple = ()) -> tuple:
    return ()


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
        self.plan = Plan(module, self._step)
        # When set, plain runs screen every step's results for NaN/Inf (screen.py): the hook is
        # called with the step and a value surely_finite did not clear.
        self.screen: Optional[Callable[[Any, Any], None]] = None
        self._slots: Optional[list] = None  # the flat frame of the function a plain run is in
        # The event clock of observed runs: the number the next event gets (Listener).
        self.events = 0
        self._dying: dict[Function, tuple] = {}  # function -> (op -> values dying there, block -> unused arguments)

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
        if self.screen is not None:
            other.screen_results(self.screen)
        return other

    def screen_results(self, hook: Callable[[Any, Any], None]) -> None:
        """From now on, plain runs screen every step's values for NaN/Inf and call `hook(step,
        value)` with each one surely_finite does not clear (screen.py). Their blocks are not
        fused, so that every op's value exists to be screened."""
        self.screen = hook
        self.plan.screening()

    def run(self, entry: str = "main", args: Sequence[Any] = ()) -> list[Any]:
        function = self.entry_function(entry)
        values = entry_arguments(function, args)
        self.events = 0

        def run() -> list[Any]:
            with np.errstate(all="ignore"):
                return self.call_function(function, values)

        # Calls nest Python frames: a chain of calls deeper than this thread has room for runs on a
        # thread with room for it (deep_stack.py).
        results = run_with_room(self.module, run)
        # A kept constant (or a read-only argument) returned is copied: what a run returns is never
        # shared with a later run, nor is it the caller's own data.
        return [r.copy() if isinstance(r, np.ndarray) and not r.flags.writeable else r for r in results]

    @property
    def plain(self) -> bool:
        """Whether runs take the plain loop: nothing observes them but step timers (see the module
        doc)."""
        backend = self.backend
        return (backend.transparent_storage and not backend.reads_frames
                and all(listener.times_steps for listener in self.listeners))

    def call_function(self, function: Function, args: list[Any], owner: Optional[Operation] = None) -> list[Any]:
        if function.is_declaration:
            raise ExecutionError(f"@{function.sym_name} is only declared; it has no body to run", function.pos)
        if self.plain:
            fast = self.plan.fast_block(function.body)
            saved, saved_slots = self.frame, self._slots
            slots = [None] * fast.size
            self.frame = Frame(function, "function", owner, None, saved, None)
            self._slots = slots
            try:
                return self._block_runner(fast)(slots, args)
            finally:
                self.frame, self._slots = saved, saved_slots
        frame = Frame(function, "function", owner, None, self.frame, {}, function.body)
        return self._run_frame(frame, function.body, args)

    def run_region(self, op: Operation, index: int, args: list[Any], kind: str = "body", iteration: Optional[int] = None) -> list[Any]:
        """Run region `index` of `op` in a child frame that sees the enclosing values."""
        parent = self.frame
        function = parent.function if parent is not None else op.function
        block = op.regions[index].blocks[0]
        slots = self._slots
        if slots is not None and self.plain:
            # The region's values are slots of its function's frame; the Frame is for the ops that
            # ask where they run (a manual computation's axes, the run's root).
            self.frame = Frame(function, kind, op, iteration, parent, None)
            try:
                return self._block_runner(self.plan.fast_block(block))(slots, args)
            finally:
                self.frame = parent
        env = parent.env if parent is not None and parent.env is not None else {}
        frame = Frame(function, kind, op, iteration, parent, env, block)
        return self._run_frame(frame, block, args)

    def region_runner(self, op: Operation, index: int, kind: str) -> Callable[[list, int], list[Any]]:
        """`run(args, iteration) -> results` running region `index` of `op` again and again (a
        loop's condition and body): in a plain run, straight on the plan's steps in the current
        function's frame, with no Frame per iteration; else as run_region does."""
        slots = self._slots
        if slots is not None and self.plain:
            return partial(self._block_runner(self.plan.fast_block(op.regions[index].blocks[0]), hot=True), slots)
        run_region = self.run_region
        return lambda args, iteration: run_region(op, index, args, kind, iteration)

    def loop_runner(self, op: Operation) -> Optional[Callable[[list], list[Any]]]:
        """`run(values) -> values` running a while loop `op` whole, its condition and body
        compiled into one function (block_code.loop_function), in a plain run with nothing
        listening; None otherwise (the loop then runs region_runner's runners)."""
        slots = self._slots
        if slots is None or not self.plain or self.listeners:
            return None
        condition = self.plan.fast_block(op.regions[0].blocks[0])
        if condition.loop is None:
            body = self.plan.fast_block(op.regions[1].blocks[0])
            if len(condition.steps) + len(body.steps) > MOST_STEPS:
                return None
            condition.loop = loop_function(condition, body, self.screen)
        return partial(condition.loop, slots)

    # -- machinery ------------------------------------------------------------------------
    def _block_runner(self, fast: FastBlock, hot: bool = False) -> Callable:
        """`run(slots, args, iteration=None)` for `fast`: the plain loop on its first run, the
        block compiled to a function of its own (block_code.py) from its second run on, or at once
        when `hot` (a loop's condition and body); always the loop while steps are timed."""
        if self.listeners:
            return partial(self._run_fast, fast)
        code = fast.code
        if code is not None:
            return code
        fast.runs += 1
        if (hot or fast.runs > 1) and len(fast.steps) <= MOST_STEPS:
            code = fast.code = block_function(fast, partial(_block_arguments, fast.block), self.screen)
            return code
        return partial(self._run_fast, fast)

    def _run_fast(self, fast: FastBlock, slots: list, args: list[Any], iteration: Optional[int] = None) -> list[Any]:
        """The plain loop: `fast`'s steps on the flat frame `slots`, each value dropped after its
        last use, an operand no one else holds offered to the evaluator for its result (`reuse`)."""
        arguments = fast.arguments
        if len(args) != len(arguments):
            _block_arguments(fast.block, args)  # says what is wrong
        for slot, arg in zip(arguments, args):
            slots[slot] = arg
        timers = self.listeners
        screen = self.screen
        for step in fast.steps:
            out = step.folded
            if out is None:
                for timer in timers:
                    timer.step_started(step)
                reuse = step.reuse
                try:
                    if reuse:
                        operands = [slots[i] for i in step.operand_slots]
                        call = step.call
                        # Held by its slot and `operands` only: nothing else can see it written.
                        call.reuse = tuple(i for i in reuse if getrefcount(operands[i]) <= SOLE_HOLDER)
                        try:
                            out = step.evaluator(call, *operands)
                        finally:
                            call.reuse = ()
                    else:
                        out = step.evaluator(step.call, *[slots[i] for i in step.operand_slots])
                except HlodbgError:
                    raise
                except Exception as e:
                    raise failure(step, e) from e
                if step.foldable:
                    step.folded = frozen(out)
                if screen is not None and step.screened:
                    screen_step(screen, step, out)
                for timer in timers:
                    timer.step_finished(step)
            if step.single:
                slots[step.result_slots[0]] = out
            elif step.result_slots:
                for slot, result in zip(step.result_slots, out):
                    slots[slot] = result
            for slot in step.free:
                slots[slot] = None
        returned = [slots[i] for i in fast.returned]
        for slot in fast.free:
            slots[slot] = None
        return returned

    def _run_frame(self, frame: Frame, block: Block, args: list[Any]) -> list[Any]:
        saved = self.frame
        self.frame = frame
        listeners = self.listeners
        listener = listeners[0] if len(listeners) == 1 else _FanOut(listeners) if listeners else _SILENT
        entered, results = False, None
        try:
            listener.enter_frame(frame, args)
            entered = True
            steps, terminator = self.plan.steps(block)
            arguments = block.arguments
            if len(args) != len(arguments):
                _block_arguments(block, args)  # says what is wrong
            results = self._run_observed(listener, block, steps, terminator, arguments, args, frame.env)
            return results
        finally:
            self.frame = saved
            if entered:
                listener.exit_frame(frame, results)

    def _run_observed(self, listener: Listener, block: Block, steps: "CompiledSteps", terminator, arguments, args,
                      env: dict) -> list[Any]:
        """The observed loop: the block's steps, each event told to `listener` with its number,
        values kept by Value in `env` (in the backend's form when its storage is not transparent)
        and let go after their last use."""
        frame = self.frame
        backend = self.backend
        transparent = backend.transparent_storage
        store, load = backend.store, backend.load
        before_op, after_op, returning = listener.before_op, listener.after_op, listener.returning
        dying, unused = self._values_dying(frame.function)
        for value, arg in zip(arguments, args):
            env[value] = arg if transparent else store(arg, value)
        for value in unused(block):
            env.pop(value, None)
        for step in steps:
            if transparent:
                operands = [env[v] for v in step.operands]
            else:
                operands = [load(env[v], v) for v in step.operands]
            op = step.op
            event = self.events
            self.events = event + 1
            before_op(event, frame, op, operands)
            out = step.evaluate(operands)
            if step.single:
                env[step.results[0]] = out if transparent else store(out, step.results[0])
                after_op(event, frame, op, operands, [out])
            else:
                if step.results:
                    for value, result in zip(step.results, out):
                        env[value] = result if transparent else store(result, value)
                after_op(event, frame, op, operands, list(out) if step.results else [])
            for value in dying(op, ()):
                env.pop(value, None)
        if terminator is None:
            return []
        returned = [env[v] if transparent else load(env[v], v) for v in terminator.operands]
        event = self.events
        self.events = event + 1
        returning(event, frame, terminator, returned)
        for value in dying(terminator, ()):
            env.pop(value, None)
        return returned

    def _values_dying(self, function: Function) -> tuple[Callable, Callable]:
        """(`dying(op, ())`: the values an observed run lets go once `op` is done, block -> its
        arguments no op reads), from the function's liveness; nothing to let go in a function with more than
        LIVENESS_UP_TO ops, whose analysis would cost more than the first steps of a debugging
        session may (its values then stay until its frame ends)."""
        found = self._dying.get(function)
        if found is None:
            found = (_no_values, _no_values)
            if len(function.ops) <= LIVENESS_UP_TO:
                try:
                    liveness = liveness_of(self.module).function(function)
                    found = (liveness.last_uses_table.get, liveness.unused_arguments)
                except HlodbgError:
                    pass  # a region of several blocks: keep every value
            self._dying[function] = found
        return found

    def _failure(self, step: Step, error: Exception) -> ExecutionError:
        return failure(step, error)

    def _compile(self, block: Block) -> tuple["CompiledSteps", Optional[Operation]]:
        """The block's op-by-op steps and its terminator (Plan.steps)."""
        return self.plan.steps(block)

    @property
    def _step_of(self) -> dict:
        return self.plan.step_of

    def step_for(self, op: Operation) -> Step:
        """The compiled step of `op` (its block compiled up to it on first use)."""
        return self.plan.step_for(op)

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


_frozen = frozen  # the recorder's name for it


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
                raise ExecutionError(message, op.pos)  # noqa: B023 - returned at once, the loop ends here

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
