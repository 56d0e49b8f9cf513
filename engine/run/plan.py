"""The prepared plan of a run: every op's step made once and kept for every later run.

A plan belongs to one Interpreter (so to one module and one backend; hlodbg.Program keeps one
interpreter per target, so a second `program.run` finds its plan ready). It holds:

- **steps** (`Step`): per op, its evaluator (wrapped by the backend) and its `OpCall` (decoded
  attributes, result types, memo of derived forms). An OpCall's `interpreter` is the plan's own
  interpreter, and regions and calls run through it: runs of one interpreter never overlap (each
  run's state, such as its frames, lives on the interpreter for the length of the run), so the
  steps are safely shared by every run of it; another interpreter (the debugger's recorder, a
  grid's other processes) builds a plan of its own.
- **constants**: a step whose operands all come from constant steps (of its block or, in a region,
  of the blocks around it) is `foldable`;
  its value is computed by the first run and kept read-only in `step.folded` (`frozen`), and no
  later run evaluates it again. A run never returns a kept value itself (Interpreter.run copies it).
- **two views of a block's steps**: `steps(block)` the op-by-op steps, compiled as a run reaches
  them (`CompiledSteps`: a 100k-op function starts at once), which the observed loop (listeners,
  backends that keep values in a form of their own) and the debugger's recorder run with values
  kept by Value in a dict; and `fast_block(block)`, the plain run's view (`FastBlock`): the same
  Step objects with their operands and results as **slots of a flat frame** (a list; the slot of
  a value is its liveness `index` in its function, nested regions included, so a region body
  reads and writes its function's frame) and the slots **to clear after each step** (liveness
  `last_uses`: a plain run drops every value after its last use; engine/run/liveness.py says why
  that is right across loop iterations, captures, tuples and block results).
- **`reuse`**: per step, the operand positions whose value dies at that step and whose buffer no
  one else can see (not a block argument, not held by a tuple, not used twice by the op, the op
  runs no region). The plain loop sets `call.reuse` to those of them no other reference holds
  (a reference count: a value that aliases another live value, or a view's base, is held twice)
  right before calling the evaluator and back to `()` after; an evaluator may then write its result
  into such an operand when it owns its data, is writeable and has the result's shape and dtype.

**Running the views.** The observed loop and the recorder evaluate a step through
`Step.evaluate` (the kept constant, or the evaluator's output, kept when foldable; a failure
located at the op). The plain loop (Interpreter._run_fast) inlines the same, and a block a plain
run runs again and again (a loop's condition and body, any block from its second run on, up to
block_code.MOST_STEPS steps) is compiled once into a straight-line function over the same steps
(engine/run/block_code.py), so its per-op cost is one evaluator call and the slot stores.

**The fusion hook.** `fast_block(block).steps` is `fuse(steps, plan)` when engine/run/fusion.py
defines `fuse` (plain runs only): it may replace runs of steps by steps of its own with the same
interface — `evaluator(call, *operands)`, `call` (with `.op` for error messages and a `reuse`
slot), `operand_slots`, `result_slots`, `single`, `free` (slots cleared after it), `folded` (None)
and `foldable` (False) — and must keep the frees of the steps it replaces. Both the plain loop and the compiled blocks run
what `fuse` returns; the observed loop and the debugger never see fused steps.
"""
from __future__ import annotations

import sys
from typing import Any, Callable, Optional, Sequence

import numpy as np

from ..ir.core import Block, Function, Module, Operation, Value
from ..ir.errors import ExecutionError, HlodbgError
from ..ir.opset import is_float_math, is_foldable, is_terminator
from ..ir.types import TupleType
from ..ops.registry import OpCall
from .fusion import fuse
from .liveness import liveness_of
from .screen import screened_results


class Step:
    """One op of a block, prepared once: its evaluator and OpCall, the Values it reads and writes
    (the observed loop's keys), and for plain runs the slots of the same values in the flat frame,
    the slots to clear after it and the operand positions it may reuse. `foldable` steps compute a
    constant: their value is kept in `folded`."""

    __slots__ = ("evaluator", "call", "op", "operands", "results", "single", "foldable", "folded",
                 "operand_slots", "result_slots", "free", "reuse", "screened")

    def __init__(self, evaluator: Callable, call: OpCall, operands: list[Value], results: list[Value]):
        self.evaluator = evaluator
        self.call = call
        self.op = call.op
        self.operands = operands
        self.results = results
        self.single = len(results) == 1
        self.foldable = False
        self.folded: Any = None
        self.operand_slots: tuple[int, ...] = ()
        self.result_slots: tuple[int, ...] = ()
        self.free: tuple[int, ...] = ()
        self.reuse: tuple[int, ...] = ()
        # Results a screened plain run looks at for NaN/Inf (screen.py): none for a constant as
        # written (a JAX program's NaN fill value is no hit), else those of float types.
        self.screened: tuple[int, ...] = ()

    def evaluate(self, operands: Sequence[Any]) -> Any:
        """The step's output for `operands` (the value for one result, a sequence for several):
        the kept constant, or the evaluator's, kept when the step is foldable. Every loop (plain,
        observed, the recorder's) evaluates a step through here or its inlined copy in the plain
        loop; a failure becomes a located ExecutionError."""
        out = self.folded
        if out is None:
            try:
                out = self.evaluator(self.call, *operands)
            except HlodbgError:
                raise
            except Exception as e:
                raise failure(self, e) from e
            if self.foldable:
                self.folded = frozen(out)
        return out


def failure(step: Step, error: Exception) -> ExecutionError:
    """`error`, raised by `step`'s evaluator, as a message located at its op."""
    import os

    op = step.call.op
    if os.environ.get("HLODBG_DEBUG"):
        import traceback

        traceback.print_exception(error)
    message = str(error) or type(error).__name__
    if isinstance(error, MemoryError):
        message = f"out of memory ({message})"
    return ExecutionError(f"{op.name} failed: {message}", op.pos)


def frozen(out: Any) -> Any:
    """A kept value is shared by every later run: make sure nothing can write to it."""
    for array in out if isinstance(out, list) else (out,):
        if isinstance(array, np.ndarray):
            array.flags.writeable = False
    return out


class CompiledSteps:
    """A block's steps, compiled in program order as a run reaches them, a slice at a time.

    A 100k-op function starts at once (its first state needs one step, not 100k); iterating the
    steps compiles the next slice whenever the run gets past the compiled ones, so every run sees
    the same steps. Constant-folding marks only look back (an op is constant when every operand
    came from an earlier constant op), so marking slice by slice marks exactly what marking the
    whole block would."""

    __slots__ = ("_ops", "_steps", "_make", "_step_of", "_constant", "_complete")

    SLICE = 256  # ops compiled at a time: a small loop body in one slice, a big block step by step

    def __init__(self, ops: Sequence[Operation], make: Callable[[Operation], Step], step_of: dict,
                 constant: Optional[set] = None):
        self._ops = ops
        self._steps: list[Step] = []
        self._make = make
        self._step_of = step_of  # the plan's op -> step, filled as slices are compiled
        # The constant values this block sees: its own constant steps' and, for a region, those of
        # the enclosing blocks (the same set: a region reads only values defined before its owner).
        self._constant: set = set() if constant is None else constant
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

    def all(self) -> list[Step]:
        """Every step, compiled now."""
        while self._compile_slice():
            pass
        return self._steps

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


class FastBlock:
    """A block as a plain run runs it: its steps with flat-frame slots, the slots its arguments go
    to, the slots its terminator hands back, and the slots to clear once they are read."""

    __slots__ = ("block", "steps", "arguments", "returned", "free", "size", "runs", "code", "loop")

    def __init__(self, block: Block, steps: list, arguments: tuple[int, ...], returned: tuple[int, ...],
                 free: tuple[int, ...], size: int):
        self.block = block
        self.steps = steps
        self.arguments = arguments
        self.returned = returned
        self.free = free
        self.size = size  # slots in the function's frame
        self.runs = 0  # plain runs of it by the loop, until it is compiled
        self.code: Optional[Callable] = None  # block_code.block_function's, once the block is hot
        self.loop: Optional[Callable] = None  # a while condition's: the whole loop (block_code.loop_function)


class Plan:
    """Every block's steps of one interpreter's module, made once and kept (see the module doc)."""

    def __init__(self, module: Module, make_step: Callable[[Operation], Step]):
        self.module = module
        self._make_step = make_step
        self._compiled: dict[int, tuple[CompiledSteps, Optional[Operation]]] = {}
        self.step_of: dict[Operation, Step] = {}
        self._fast: dict[int, FastBlock] = {}
        self.screens = False  # whether plain runs screen values (screen.py): unfused, steps' `screened` set

    def screening(self) -> None:
        """Plain runs from now on screen every step's values: each op a step of its own, its
        screened results known (blocks made again)."""
        self.screens = True
        self._fast.clear()

    # -- the op-by-op view -----------------------------------------------------------------------
    def steps(self, block: Block) -> tuple[CompiledSteps, Optional[Operation]]:
        """The block's steps (compiled as they are reached) and its terminator, if it has one."""
        key = id(block)
        compiled = self._compiled.get(key)
        if compiled is not None:
            return compiled
        ops = block.operations
        terminator = ops[-1] if ops and is_terminator(ops[-1].name) else None
        body = ops[:-1] if terminator is not None else ops
        owner = block.parent.parent if block.parent is not None else None
        enclosing = None
        if owner is not None and not isinstance(owner, Function) and owner.parent is not None:
            enclosing = self.steps(owner.parent)[0]._constant  # a loop body's op fed by outer constants is one too
        self._compiled[key] = compiled = (CompiledSteps(body, self._make_step, self.step_of, enclosing), terminator)
        return compiled

    def step_for(self, op: Operation) -> Step:
        """The step of `op` (its block compiled up to it on first use)."""
        step = self.step_of.get(op)
        if step is None:
            step = self.steps(op.parent)[0].reach(op)
        if step is not None:
            return step
        raise ExecutionError(f"{op.name} is not a step of its block (a terminator?)", op.pos)

    # -- the plain run's view --------------------------------------------------------------------
    def fast_block(self, block: Block) -> FastBlock:
        """`block` (a function's body or a region's, at any depth) as a plain run runs it, made on
        first use."""
        fast = self._fast.get(id(block))
        if fast is None:
            fast = self._fast[id(block)] = self._make_fast(block)
        return fast

    def fast_steps(self, block: Block) -> list:
        """The plain run's steps of `block`: op-by-op steps with slots, fused where fusion can."""
        return self.fast_block(block).steps

    def _make_fast(self, block: Block) -> FastBlock:
        owner = block.parent.parent if block.parent is not None else None
        function = owner if isinstance(owner, Function) or owner is None else owner.function
        if function is None:
            raise ExecutionError("a block outside any function cannot run")
        compiled, terminator = self.steps(block)
        steps = compiled.all()
        liveness = liveness_of(self.module).function(function)
        index = liveness.index
        for step in steps:
            op = step.op
            step.operand_slots = tuple(index[v] for v in step.operands)
            step.result_slots = tuple(index[v] for v in step.results)
            dying = liveness.last_uses(op)
            step.free = tuple(index[v] for v in dying)
            step.reuse = _reusable(op, dying)
            if self.screens:
                step.screened = () if written_constant(step) else screened_results(op)
        returned = tuple(index[v] for v in terminator.operands) if terminator is not None else ()
        free = tuple(index[v] for v in liveness.last_uses(terminator)) if terminator is not None else ()
        free += tuple(index[v] for v in liveness.unused_arguments(block))
        # F's fused groups (engine/run/fusion.py), unless the run screens every op's value.
        fast_steps = list(steps) if self.screens else fuse(list(steps), self)
        return FastBlock(block, fast_steps, tuple(index[v] for v in block.arguments), returned, free, len(liveness.values))


def written_constant(step: Step) -> bool:
    """Whether `step`'s value is one of the program's constants as written: a constant, or moved or
    tested from constants alone (a broadcast of a NaN fill value), no arithmetic on them. NaN/Inf
    value breakpoints and the scan pass over these: every JAX program holds NaN fill values and
    -inf reduction starts, which are not what a user chasing a NaN looks for; an overflow the
    program computes from constants (`1e38 * 1e38`) is still met."""
    return step.foldable and not is_float_math(step.op.name)


def _reusable(op: Operation, dying: Sequence[Value]) -> tuple[int, ...]:
    """The operand positions of `op` whose buffers may hold its result: the value dies at `op`, is
    an op's result (not a block argument: those alias their owner's operands), no tuple holds it and
    it is no tuple, `op` reads it once and runs no region."""
    if op.regions or not dying:
        return ()
    dying = set(dying)
    operands = op.operands
    positions = []
    for i, v in enumerate(operands):
        if v not in dying or operands.count(v) > 1 or v.defining_op is None:
            continue
        if isinstance(v.type, TupleType) or v.defining_op.name == "stablehlo.get_tuple_element":
            continue
        if any(user.name == "stablehlo.tuple" for user, _ in v.uses):
            continue
        positions.append(i)
    return tuple(positions)


def _sole_holder_count() -> int:
    """What sys.getrefcount says of an operand the plain loop's operand list and one frame slot
    hold and nothing else: the loop compares against it before letting an evaluator reuse it."""
    frame = [np.empty(1)]
    operands = [frame[0]]
    return sys.getrefcount(operands[0])


SOLE_HOLDER = _sole_holder_count()

__all__ = ["CompiledSteps", "FastBlock", "Plan", "SOLE_HOLDER", "Step", "failure", "frozen"]
