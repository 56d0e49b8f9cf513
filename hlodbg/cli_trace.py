"""`hlodbg trace PROG --value %v --at I,J`: where one element of a value came from, op by op
through the whole run, to the arguments and constants it depends on; for a NaN or Inf element,
to the op that first made it from finite operands (engine/debug/lineage.py). Without --value,
`--nan` / `--inf` finds the first NaN / Inf the run makes and traces that.

The program runs on --args/--arg or seeded random inputs as `run` does; the value traced is the
last one the run made under that name (an op in a loop: its last iteration), or the one of
--event. On a grid the trace stays within --device's run: a collective's operands on other
devices are named, not followed.
"""
from __future__ import annotations

import json
import sys

from hlodbg.cli_explain import _seconds
from hlodbg.cli_options import PROGRAM_HELP
from hlodbg.cli_run import add_argument_options
from hlodbg.engine import HlodbgError
from hlodbg.explaining import Deadline


def add_options(cmd) -> None:
    cmd.set_defaults(handler=cmd_trace)
    cmd.add_argument("program", metavar="PROG", help=PROGRAM_HELP)
    which = cmd.add_mutually_exclusive_group()
    which.add_argument("--value", metavar="%V", help="the value to trace: %%loss, %%12, %%5#1")
    which.add_argument("--nan", action="store_const", const="nan", dest="nonfinite",
                       help="trace the first NaN element the run makes, to the op that made it")
    which.add_argument("--inf", action="store_const", const="inf", dest="nonfinite",
                       help="trace the first infinite element the run makes")
    cmd.add_argument("--at", metavar="I,J,...", help="the element of --value, e.g. 3,7 (default: the only element of a "
                     "one-element value)")
    cmd.add_argument("--event", type=int, metavar="N", help="the run of --value's op to trace: event N of the run "
                     "(default: the last run that made it)")
    add_argument_options(cmd, "function to run")
    cmd.add_argument("--device", metavar="R,P", help="on a grid: the device whose run is traced (default 0,0; with --nan/--inf, the device that made it first)")
    cmd.add_argument("--replicas", type=int, metavar="R",
                     help="grid replicas (default: the module's mhlo.num_replicas)")
    cmd.add_argument("--partitions", type=int, metavar="P",
                     help="grid partitions (default: the module's mhlo.num_partitions)")
    cmd.add_argument("--memory", metavar="SIZE", help="budget for the run's recording, values and history (2G, 512M; default "
                     "the arguments' size): older values are dropped and recomputed when the trace reads them")
    from hlodbg.cli_target import add_target_options

    add_target_options(cmd, "runs")
    cmd.add_argument("--json", action="store_true", help="print the trace as JSON")
    cmd.add_argument("--timeout", type=_seconds, default=60.0, metavar="SECONDS",
                     help="stop the run after this long (default 60; inf: no limit)")
    from hlodbg.cli_elided import add_fill_elided_option

    add_fill_elided_option(cmd)
    cmd.add_argument("--chunk", type=int, default=None, help="module to trace in a '// -----' split file")


def cmd_trace(args) -> int:
    from hlodbg.cli_elided import load_program
    from hlodbg.cli_target import backend_from_args
    from hlodbg.engine.debug.lineage import first_nonfinite, trace_element
    from hlodbg.engine.machine.process import ProcessId
    from hlodbg.engine.run.arguments import parse_device
    from hlodbg.engine.run.grid import grid_shape
    from hlodbg.engine.run.interpreter import entry_function
    from hlodbg.execution import gather_arguments

    if args.value is None and args.nonfinite is None:
        raise HlodbgError("trace needs --value %V (with --at I,J for one element), or --nan / --inf")
    if args.nonfinite is not None and (args.at is not None or args.event is not None):
        raise HlodbgError(f"--{args.nonfinite} finds its own element: give --at and --event with --value only")
    program = load_program(args)
    function = entry_function(program.module, args.entry)
    values, _ = gather_arguments(function, args.args, args.arg, args.seed, quiet=args.json,
                                 per_device=args.args_per_device,
                                 grid=grid_shape(program.module, args.replicas, args.partitions))
    focus = parse_device(args.device) if args.device else ProcessId(0, 0)
    timer = Deadline(args.timeout)
    target = None
    try:
        target = program.debug(values, seed=args.seed, entry=args.entry, memory=args.memory, persist=False,
                               focus=focus, replicas=args.replicas, partitions=args.partitions,
                               backend=backend_from_args(args))
        timer.attach(target)
        session = target.session
        late = HlodbgError(f"the run did not get there within {args.timeout:g} s (a loop that never ends?); "
                           "--timeout gives it longer")
        if args.nonfinite is not None:
            try:
                # Without --device every device looks: a NaN made on one device only is found there.
                everywhere = target if target.multi_device and not args.device else None
                name, event, at = first_nonfinite(session, args.nonfinite, lambda: target.move("continue_"),
                                                  target=everywhere)
                session = target.session
            except HlodbgError:
                if timer.fired:
                    raise late from None
                raise
        else:
            name, event, at = args.value.strip(), args.event, None
            if args.at is not None:
                at = _element(args.at)
            stop = target.move("continue_")
            if timer.fired:
                raise late
            if stop.reason == "error" and event is None:
                print(f"note: the run failed ({stop.message}); tracing the value as far as the run got",
                      file=sys.stderr)
        found = trace_element(session, name, at, event)
    finally:
        timer.cancel()
        if target is not None:
            target.close()
    if args.json:
        print(json.dumps(found.to_dict(), ensure_ascii=False, indent=2))
    else:
        sys.stdout.write(found.text())
    return 0


def _element(text: str) -> tuple[int, ...]:
    """`3,7`, `(3, 7)` or `[3, 7]` (`()` for a scalar) as an index; the shape is checked later."""
    inner = text.strip()
    if inner[:1] + inner[-1:] in ("()", "[]"):
        inner = inner[1:-1].strip()
    parts = [p.strip() for p in inner.split(",")] if inner else []
    if not all(p.isdigit() for p in parts):
        raise HlodbgError(f"--at {text!r}: expected comma-separated indices, 0 or more (e.g. 3,7)")
    return tuple(int(p) for p in parts)
