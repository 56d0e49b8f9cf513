"""The NaN trap: `trap_nans(f)` runs f compiled as usual and, when its outputs hold NaN or Inf,
finds the op jit's own run made it in.

While nothing is non-finite the wrapper adds one small jitted reduction over the outputs on
their devices (the sum of every floating leaf times zero: finite exactly when every element is)
and reads back one boolean: no output is copied to the host. When the check fails, the same call is replayed through a capture
of the compiled program (engine/run/capture/: the program XLA compiles, with every value an
extra output, run on the same platform and grid), so the NaN looked for is the one jit made —
not one an eager re-run (`jax_debug_nans`) may or may not make. The capture is then replayed in
hlodbg's debugger (engine/debug/capture_replay.py: the captured values in place of computed
ones) and the first op instance holding the non-finite element found on every device of the
grid (engine/debug/lineage.py first_nonfinite). Its JAX source line comes from the op's `loc`,
its loop iteration from the frames of the replayed run.

Interactive (a terminal, or `interactive=True`) the debugger opens stopped there; after it is
closed, or at once in batch, a NonFiniteError names the op, the JAX line, the iteration, the
device and the capture's directory (kept, so `hlodbg RUN.hlocap/program.mlir --capture
RUN.hlocap` reopens it).
"""
from __future__ import annotations

import functools
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Optional

import jax
import jax.numpy as jnp
import numpy as np

from hlodbg.engine import ExecutionError

from .lowering import JaxCallError, LoweredCall, jitted_function, keeps_users_jax_settings, lower_call

DEFAULT_CAPTURE_DIR = "hlodbg-nans"


@dataclass
class NonFiniteOrigin:
    """Where the replayed run first made the non-finite element the outputs hold."""

    kind: str  # "nan" or "inf"
    op: Any  # the Operation
    value: str  # its result's name (%12)
    element: tuple[int, ...]
    site: str  # `@main#12`: the op's place in the capture
    context: str  # the capture's context of the instance (calls and loop iterations on the way)
    iterations: tuple[int, ...]  # loop iterations around it, outermost first
    loops: tuple[str, ...]  # each of those loops, described (`stablehlo.while at train.py:40`)
    device: int
    devices: int
    jax_line: str  # `train.py:42`, "" when the op carries no source line
    name_stack: str  # `jit(train)/while/body/log`
    source: Optional[str]  # "captured" (XLA's value) or "computed" (from captured operands)

    def describe(self) -> str:
        what = "NaN" if self.kind == "nan" else "Inf"
        where = f" at {self.jax_line}" if self.jax_line else " (the op carries no JAX source line)"
        stack = f" ({self.name_stack})" if self.name_stack else ""
        text = f"the first {what} of jit's own run is made by {self.op.name} {self.value} ({self.site}){where}{stack}"
        if self.iterations:
            loops = ", ".join(f"iteration {i} of {loop}" for i, loop in zip(self.iterations, self.loops))
            text += f", in {loops}"
        if self.devices > 1:
            text += f", on device {self.device} of {self.devices}"
        element = ",".join(map(str, self.element))
        return text + f", element [{element}]"


class NonFiniteError(ExecutionError):
    """A trapped function's outputs held NaN or Inf: `origin` (a NonFiniteOrigin, None when the
    replay did not make it again), `capture`, the capture of jit's run, and `program`, the
    program captured with the call's arguments bound (`error.program.debug(capture=error.capture)`
    reopens the run; `hlodbg.jax.diff(error.program, capture=error.capture)` compares it with the
    emulator)."""

    def __init__(self, message: str, origin: Optional[NonFiniteOrigin], capture: Path, program: Any = None):
        self.origin = origin
        self.capture = capture
        self.program = program
        super().__init__(message)


def trap_nans(f: Optional[Callable] = None, *, interactive: Optional[bool] = None,
              capture_dir: os.PathLike | str = DEFAULT_CAPTURE_DIR, static_argnums=None, static_argnames=None):
    """`f` wrapped so that it runs compiled as usual, and when its outputs hold NaN or Inf the
    call is replayed through a capture of the compiled program and the first op that made the
    element reported (see the module docstring). Usable as a decorator, with or without options.

    `interactive`: open the debugger there (default: when standard input and output are a
    terminal); either way a NonFiniteError is raised after. `capture_dir`: where captures are
    written (one directory per trapped call). `static_argnums`/`static_argnames`: jax.jit's,
    for a plain `f` (a jitted one keeps its own)."""
    if f is None:
        return functools.partial(trap_nans, interactive=interactive, capture_dir=capture_dir,
                                 static_argnums=static_argnums, static_argnames=static_argnames)
    return NanTrap(f, interactive, Path(capture_dir), static_argnums, static_argnames)


def _all_finite(tree: Any) -> jax.Array:
    """One boolean on the device: every element of every inexact leaf of `tree` is finite. Each
    leaf times zero is zero where it is finite and NaN where it is not (IEEE: 0 x Inf is NaN), so
    the sum of all of them is finite exactly when every element is: a multiply and an add per
    element, which XLA vectorises (an `all(isfinite)` reduction of booleans is slower)."""
    total = sum((jnp.sum(leaf * 0) for leaf in jax.tree_util.tree_leaves(tree)
                 if jnp.issubdtype(jnp.result_type(leaf), jnp.inexact)), jnp.float32(0))
    return jnp.isfinite(total)


_ALL_FINITE = jax.jit(_all_finite)


class NanTrap:
    """The wrapper trap_nans returns: call it as f."""

    def __init__(self, f: Callable, interactive: Optional[bool], capture_dir: Path, static_argnums, static_argnames):
        self.jitted = jitted_function(f, static_argnums, static_argnames)
        info = getattr(self.jitted, "_jit_info", None)
        if info is not None and (info.donate_argnums or info.donate_argnames):
            raise JaxCallError("trap_nans replays a call on its arguments, which a function donating them "
                               "(donate_argnums/donate_argnames) frees: trap the function without donation")
        self.interactive = interactive
        self.capture_dir = capture_dir
        self.name = getattr(f, "__name__", None) or getattr(getattr(f, "__wrapped__", None), "__name__", "f")
        functools.update_wrapper(self, f, updated=())

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        outputs = self.jitted(*args, **kwargs)
        if np.asarray(_ALL_FINITE(outputs)).item():  # one byte read back (bool() takes JAX's slower path)
            return outputs
        raise self.explain(args, kwargs, outputs)

    @keeps_users_jax_settings
    def explain(self, args: tuple, kwargs: dict, outputs: Any) -> NonFiniteError:
        """The error for a call whose `outputs` are not all finite, after the capture (and,
        interactive, the debugger)."""
        call = lower_call(self.jitted, args, kwargs)
        what = "NaN" if any(bool(jnp.any(jnp.isnan(leaf))) for leaf in jax.tree_util.tree_leaves(outputs)
                            if jnp.issubdtype(jnp.result_type(leaf), jnp.inexact)) else "Inf"
        directory = self._capture(call, outputs)
        origin, why = find_origin(call.program, directory)
        reopen = f"hlodbg {directory / 'program.mlir'} --capture {directory}"
        arrived = nonfinite_arguments(call.program)  # the first op then only passed on what came in
        head = f"{self.name} returned {what}" + (f": {arrived};" if arrived else "")
        if origin is None:
            message = (f"{head}{'' if arrived else ','} but the capture of its compiled program did not make it "
                       f"again ({why}); the capture is in {directory} ({reopen})")
        else:
            message = f"{head}{'' if arrived else ':'} {origin.describe()}. Capture: {directory} ({reopen})"
        if self._interactive():
            from hlodbg.engine.debug.capture_replay import open_replay
            from hlodbg.ui_entry import run_app

            from .tools import debug_app

            program = call.program
            replay = open_replay(directory, program.module, program.source, program.name)
            run_app(debug_app(program, break_on="nonfinite", backend=replay))
        return NonFiniteError(message, origin, directory, call.program)

    def _interactive(self) -> bool:
        if self.interactive is not None:
            return self.interactive
        return sys.stdin.isatty() and sys.stdout.isatty()

    def _capture(self, call: LoweredCall, outputs: Any) -> Path:
        from hlodbg.engine.run.capture.run import capture

        self.capture_dir.mkdir(parents=True, exist_ok=True)
        number = 0
        while (directory := self.capture_dir / f"{self.name}-{number}.hlocap").exists():
            number += 1
        program = call.program
        capture(program.source, f"{self.name}.mlir", program.arguments, directory, platform=_platform(outputs))
        return directory


def nonfinite_arguments(program: Any) -> str:
    """`argument x holds NaN at [1]` (naming the first argument that holds a non-finite element,
    by its pytree path), or "" when every argument is finite."""
    from hlodbg.engine.run.arguments import ArgumentNames

    names = ArgumentNames(program.entry)
    for k, value in enumerate(program.arguments):
        if value.dtype.kind not in "fc":
            try:
                value = value.astype(np.float32)  # bf16 and the other ml_dtypes floats; integers stay finite
            except (TypeError, ValueError):
                continue
        bad = np.argwhere(~np.isfinite(value))
        if len(bad):
            element = tuple(int(i) for i in bad[0])
            kind = "NaN" if np.isnan(value[element]) else "Inf"
            name = next((n for n in names.by_position[k] if n != f"arg{k}"), f"arg{k}")
            return f"argument {name} holds {kind} at [{','.join(map(str, element))}], so the call brought it in"
    return ""


def _platform(outputs: Any) -> str:
    """The platform the call ran on ("cpu", "gpu", "tpu"), read from its outputs' devices."""
    for leaf in jax.tree_util.tree_leaves(outputs):
        devices = getattr(leaf, "devices", None)
        if devices is not None:
            return next(iter(devices())).platform
    return jax.default_backend()


def find_origin(program: Any, directory: Path) -> tuple[Optional[NonFiniteOrigin], str]:
    """The first op instance of the replay of the capture at `directory` (of `program`, a
    Program) whose result holds a NaN or Inf element (an Inf that later makes the NaN the outputs
    hold is where it began), on any device of the grid; (None, why) when the replay makes none."""
    from hlodbg.engine.debug.capture_replay import record_context, value_source
    from hlodbg.engine.debug.lineage import LineageError, first_nonfinite
    from hlodbg.engine.ir.locations import describe, name_stack, user_frame
    from hlodbg.engine.run.capture_format import site

    target = program.debug(capture=directory, persist=False)
    try:
        session = target.session
        try:
            value, event, element = first_nonfinite(session, "nonfinite", target=target if target.multi_device else None)
        except LineageError as error:
            return None, error.message
        session = target.session  # the device that made it first
        trace = session.timeline.main.trace
        op = trace.ops[event]
        frames = [frame for frame in trace.frames[event].chain() if frame.iteration is not None]
        loops = tuple(_loop_words(trace.ops[frame.owner], describe) for frame in frames)
        frame = user_frame(op.location)
        made = session.event(event).outputs[[result.name for result in op.results].index(value)]
        kind = "nan" if np.isnan(np.asarray(made)[element]) else "inf"
        origin = NonFiniteOrigin(kind, op, value, element, site(op), record_context(trace, trace.frames[event]),
                                 tuple(frame.iteration for frame in frames), loops, target.device_id(target.focus),
                                 len(target.processes), frame.short() if frame is not None else "",
                                 name_stack(op.location) or "", value_source(session, event))
        return origin, ""
    finally:
        target.close()


def _loop_words(owner: Any, describe: Callable) -> str:
    """`the while at train.py:12 (jit(train)/while)`, or by its line in the program's text when
    it carries no JAX location."""
    kind = owner.name.rsplit(".", 1)[-1]
    where = describe(owner.location)
    if where:
        return f"the {kind} at {where}"
    return f"the {kind} on line {owner.pos.line} of the program" if owner.pos is not None else f"the {kind}"


__all__ = ["DEFAULT_CAPTURE_DIR", "NanTrap", "NonFiniteError", "NonFiniteOrigin", "find_origin", "trap_nans"]
