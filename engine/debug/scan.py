"""A run that only looks for the first NaN or Inf: `hlodbg run PROG --break-on nan|inf|nonfinite`.

A session records every value so that it can step back; a run that only asks where the first
NaN/Inf appears needs none of that. `find_first_nonfinite` runs the plain interpreter screening
each op's output (engine/run/screen.py: one dot product), and only when an op's output holds
what the test looks for runs again with one listener that stops the run at that op, keeping what
a report needs:
the op, its event number (the interpreter's event clock, so the one a session gives the same op
instance), its frames, operands and outputs. As a session's NaN/Inf breakpoints do, it looks at
the values the run computes: a constant as written (a JAX program's NaN fill value, a reduction's
-inf start, broadcast) is not a hit (`literal_constant`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional, Sequence

from ..ir.core import Module, Operation
from ..ir.locations import describe as describe_location
from ..machine.backend import CPU, Backend
from ..run.interpreter import Frame, Listener, describe_frame
from ..run.plan import Plan, written_constant
from ..run.request import Runner, RunRequest
from .breakpoints import VALUE_TESTS, surely_finite, value_test


@dataclass
class FirstHit:
    """The first op instance whose result met the test."""

    event: int
    op: Operation
    frames: list[Frame]  # outermost first
    operands: list
    outputs: list

    @property
    def producer(self) -> str:
        return describe_location(self.op.location)

    def describe_frames(self) -> str:
        """`@main > while.body #3 > @update`, as a session's stop report spells it."""
        return " > ".join(describe_frame(f.function.sym_name, f.kind, f.iteration, f.kind == "function")
                          for f in self.frames)


@dataclass
class ScanResult:
    hit: Optional[FirstHit]
    results: Optional[list]  # the program's results when nothing met the test
    printed: list[str]


class _Found(BaseException):
    """Ends the run at the hit: not an Exception, so no evaluator turns it into an op failure."""


def literal_constant(plan: Plan, op: Operation) -> bool:
    """Whether `op`'s value is one of the program's constants as written (plan.written_constant)."""
    step = plan.step_of.get(op)
    return step is not None and written_constant(step)


class _FirstNonfinite(Listener):
    def __init__(self, test: str, plan: Plan):
        self.holds = value_test(test)
        self.plan = plan
        self.hit: Optional[FirstHit] = None

    def after_op(self, event: int, frame: Frame, op: Operation, operands: list, results: list) -> None:
        if not results or all(surely_finite(out) for out in results) or literal_constant(self.plan, op):
            return
        if self.holds(results):
            frames = []
            while frame is not None:
                frames.append(frame)
                frame = frame.parent
            self.hit = FirstHit(event, op, frames[::-1], list(operands), list(results))
            raise _Found()


def find_first_nonfinite(module: Module, args: Sequence[Any], test: str, entry: str = "main",
                         backend: Backend = CPU) -> ScanResult:
    """Run `entry` on `args` until an op's result holds what `test` (nan, inf or nonfinite)
    looks for; the hit, or the program's results when none did.

    Two passes: a screened plain run (engine/run/screen.py: the plain loop's speed, one dot
    product per float result) says whether any op makes such a value; only if one does, an
    observed run from the start finds which op instance, its event number and frames (runs are
    deterministic: it meets the same value). A backend whose runs are never plain (TPU storage)
    takes the observed run at once."""
    if test not in VALUE_TESTS:
        raise ValueError(f"test must be one of {', '.join(VALUE_TESTS)}, not {test!r}")
    request = RunRequest(module, list(args), entry, backend)
    screened = Runner()
    interpreter = screened.interpreter(request)
    if interpreter.plain:
        holds = value_test(test)

        def screen(step, value) -> None:
            if holds([value]):
                raise _Found()

        interpreter.screen_results(screen)
        try:
            outcome = screened.run(request)
        except _Found:
            pass  # where: the observed run below
        else:
            return ScanResult(None, outcome.results, outcome.printed)
    runner = Runner()
    listener = _FirstNonfinite(test, runner.interpreter(request).plan)
    try:
        outcome = runner.run(request, lambda process: [listener])
    except _Found:
        return ScanResult(listener.hit, None, runner.interpreter(request).printed)
    return ScanResult(None, outcome.results, outcome.printed)


__all__ = ["FirstHit", "ScanResult", "find_first_nonfinite"]
