"""hlodbg's commands on a JAX call: `debug`, `run`, `session`, `export`, `memory`, `diff`.

Each takes the function and its call, `(f, *args, **kwargs)`, lowered by `load` (lowering.py),
or a Program `load` made (`debug(program)`), and does what the command of the same name does
with a program file and its `--args`: the same entry points (hlodbg/ui_entry.py for the
debugger, hlodbg.layouts.export for `export`, Program.memory, engine/debug/divergence.py for
`diff`), so a JAX user gets exactly what the command line shows. hlodbg's own options are
keyword-only and named here; every other keyword argument is the function's.
"""
from __future__ import annotations

from typing import Any, Callable, Optional, Union

from hlodbg.program import Program

from .lowering import JaxCallError, keeps_users_jax_settings, load

FunctionOrProgram = Union[Callable, Program]


def _program(f: FunctionOrProgram, args: tuple, kwargs: dict) -> Program:
    """`f` itself when it is a Program (nothing more may be given), else f's call lowered."""
    if isinstance(f, Program):
        if args or kwargs:
            raise JaxCallError("a Program carries its arguments already: give it alone, or give the function and its "
                               "arguments")
        return f
    return load(f, *args, **kwargs)


def _grid(program: Program) -> tuple[int, int]:
    from hlodbg.engine.run.grid import grid_shape

    return grid_shape(program.module)


@keeps_users_jax_settings
def run(f: FunctionOrProgram, *args: Any, **kwargs: Any):
    """f(*args, **kwargs) run by hlodbg's interpreter on the lowered program (numpy results, in
    the order of the program's results: jit's flattened outputs). `hlodbg.jax.load(...).run(
    target=...)` runs on another target."""
    return _program(f, args, kwargs).run()


@keeps_users_jax_settings
def session(f: FunctionOrProgram, *args: Any, **kwargs: Any):
    """A debugging session on one run of the lowered program (the engine's Session, as
    `Program.session()` returns it): `s.step()`, `s.continue_()`, `s.value("%3")`."""
    program = _program(f, args, kwargs)
    if _grid(program) != (1, 1):
        raise JaxCallError(f"the program runs on a {'x'.join(map(str, _grid(program)))} grid: use "
                           f"hlodbg.jax.load(...).debug() for a target over every device")
    return program.session(persist=False)


def debug_app(program: Program, *, break_on: Optional[str] = None, target: Optional[str] = None, memory=None,
              backend=None):
    """The debugger's app on `program` and its bound arguments, as `hlodbg PROG --args` builds it
    (hlodbg/ui_entry.py's LaunchPlan: the checks it makes on --break-on and the target)."""
    from argparse import Namespace

    from hlodbg.engine.machine.targets import backend_for
    from hlodbg.ui.app import HlodbgApp
    from hlodbg.ui_entry import launch_break_spec

    spec = launch_break_spec(Namespace(break_on=break_on, against=None))
    chosen = backend if backend is not None else backend_for(target)
    chosen.prepare(program.module)
    return HlodbgApp(program, args=program.arguments, break_on=spec, memory=memory, persist=False, backend=chosen)


@keeps_users_jax_settings
def debug(f: FunctionOrProgram, *args: Any, break_on: Optional[str] = None, target: Optional[str] = None,
          **kwargs: Any) -> int:
    """Open the debugger (the terminal UI) on f(*args, **kwargs); returns when it is closed (0, or
    2 when the program could not be opened). `break_on` and `target` are `hlodbg PROG`'s
    --break-on ("nan", "%12", "model.py:42", ...) and --target ("tpu-v5e", ...)."""
    from hlodbg.ui_entry import run_app

    return run_app(debug_app(_program(f, args, kwargs), break_on=break_on, target=target))


@keeps_users_jax_settings
def export(f: FunctionOrProgram, *args: Any, output: str, collapse: str = "calls", overlay: Optional[str] = None,
           title: Optional[str] = None, format: Optional[str] = None, **kwargs: Any):
    """`hlodbg export`: the lowered program's dataflow graph written to `output` (.svg, .png,
    .dot, .json); `overlay` "nan" or "range" colours the ops by the values of a run on the
    call's arguments. Returns the export's report (nodes, edges, seconds)."""
    from hlodbg.layouts.export import export_graph, format_of, graph_view

    program = _program(f, args, kwargs)
    view = graph_view(program.module, collapse=collapse)
    painted = None
    if overlay is not None:
        painted = _value_overlay(program, view, overlay)
    return export_graph(view, output, format_of(output, format), overlay=painted, title=title)


def _value_overlay(program: Program, view, overlay: str):
    from hlodbg.cli_session import continue_within_memory
    from hlodbg.layouts import overlay as overlays

    painters = {"nan": overlays.nan_overlay, "range": overlays.range_overlay}
    if overlay not in painters:
        raise JaxCallError(f"overlay {overlay!r}: expected one of {', '.join(painters)}")
    run_session = program.session(persist=False)
    try:
        continue_within_memory(run_session)
        return painters[overlay](view, run_session.op_statistics())
    finally:
        run_session.close()


@keeps_users_jax_settings
def memory(f: FunctionOrProgram, *args: Any, target: Optional[str] = None, **kwargs: Any):
    """`hlodbg memory`: the static memory profile of the lowered program on `target` (default the
    CPU's; "tpu-v5e", ...), a MemoryAnalysis (Program.memory); `hlodbg.cli_memory.memory_text(
    name, analysis)` is the command's report."""
    return _program(f, args, kwargs).memory(target)


@keeps_users_jax_settings
def diff(f: FunctionOrProgram, *args: Any, against: Optional[str] = None, target: Optional[str] = None,
         capture: Optional[str] = None, rtol: Optional[float] = None, atol: Optional[float] = None, **kwargs: Any):
    """`hlodbg diff`: the lowered program run on `target` (default cpu) and on `against` (e.g.
    "tpu-v5e") in lockstep on the call's arguments, or — `capture`, a capture of this program —
    the captured real run against the emulator; the report names the first op whose result
    differs beyond the tolerance (`hlodbg.divergence_report.report_text(report, name)` prints it
    as the command does)."""
    from hlodbg.engine.debug.capture_replay import open_replay
    from hlodbg.engine.debug.divergence import DivergeSpec, compare_runs
    from hlodbg.engine.machine.targets import backend_for

    program = _program(f, args, kwargs)
    values = program.arguments
    if capture is not None:
        first = open_replay(capture, program.module, program.source, program.name)
        second = backend_for(against)
    elif against is None:
        raise JaxCallError("diff compares two runs: name the second with against='tpu-v5e' (a target), or give "
                           "capture= a capture of this program to compare the real run with the emulator")
    else:
        first, second = backend_for(target), backend_for(against)
    rtol, atol = DivergeSpec(rtol=rtol, atol=atol).tolerances(first, second)
    return compare_runs(program.module, values, first, second, rtol=rtol, atol=atol, grid=_grid(program))


__all__ = ["debug", "debug_app", "diff", "export", "memory", "run", "session"]
