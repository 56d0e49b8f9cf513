"""`hlodbg capture`: run a program as XLA compiles it, keeping its values (engine/run/capture/).

    hlodbg capture PROG --args IN.npz --target xla:cpu [--values SPEC] [--loop-capacity N] -o RUN.hlocap
    hlodbg capture PROG ... --coordinator HOST:PORT --num-processes N --process-id K   (on every host)
    hlodbg capture PROG ... --distributed   (on every host of a TPU pod slice / SLURM / MPI job)
    hlodbg capture --merge RUN.hlocap   (the hosts' indexes, copied into one directory, joined)

`--values` takes breakpoint specs (engine/debug/breakpoints.py), comma-separated: `%12`,
`@decode:%12`, an op kind (`stablehlo.dot_general`, `dot_general`), a line (`line:40`, `40`);
only the values of the ops they point at become outputs. Every extra output is a value XLA must
keep in memory and may stop it fusing an op into its user, so fewer outputs perturb the compiled
program less (and cost less memory and time).
"""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from hlodbg.engine import HlodbgError


def add_options(cmd) -> None:
    cmd.set_defaults(handler=cmd_capture)
    cmd.add_argument("program", nargs="?", metavar="PROG", help="StableHLO MLIR (.mlir), as jax.jit(f).lower(...).as_text() prints it")
    from hlodbg.cli_run import add_argument_options

    add_argument_options(cmd, "function to run")
    for action in cmd._actions:  # the emulated grid's per-device arguments: refused by a capture, so not offered
        if action.dest == "args_per_device":
            action.help = argparse.SUPPRESS
    from hlodbg.engine.machine.targets import targets

    real = [target.name for target in targets() if target.xla_platform is not None]  # the registry's real devices
    cmd.add_argument("--target", default="xla:cpu", choices=real, help="the devices XLA runs on (default: xla:cpu)")
    cmd.add_argument("--values", default="all", metavar="SPEC",
                     help="which values to keep: all (default: every value but constants) or comma-separated breakpoint "
                          "specs (%%12, @fn:%%12, stablehlo.dot_general, line:40); fewer values change XLA's fusion less")
    cmd.add_argument("--loop-capacity", type=int, default=None, metavar="N",
                     help="iterations kept per while loop whose trip count is not a constant (default: 1000); counted "
                          "loops (scan, fori_loop) keep every iteration")
    cmd.add_argument("-o", "--out", metavar="RUN.hlocap", help="the capture directory to write")
    cmd.add_argument("--baseline", action="store_true",
                     help="also compile the program as it is, to record what capturing costs (compile time, XLA memory)")
    cmd.add_argument("--coordinator", metavar="HOST:PORT", help="many hosts: process 0's address (jax.distributed)")
    cmd.add_argument("--num-processes", type=int, metavar="N", help="many hosts: how many processes take part")
    cmd.add_argument("--process-id", type=int, metavar="K", help="many hosts: this process's number (0..N-1)")
    cmd.add_argument("--distributed", action="store_true",
                     help="many hosts, found by JAX in the cluster's environment (every host of a Cloud TPU pod "
                          "slice, a SLURM or Open MPI job runs the same command)")
    cmd.add_argument("--merge", metavar="RUN.hlocap", help="join the indexes every host wrote into RUN.hlocap (after "
                     "copying the hosts' files into one directory) and stop")


def cmd_capture(args) -> int:
    from hlodbg.engine.run.capture_format import merge

    if args.merge:
        if args.program:
            raise HlodbgError("--merge joins a capture's indexes; give it without PROG")
        rows = merge(args.merge)
        print(f"merged {rows:,} value instance(s) into {Path(args.merge) / 'index.csv'}")
        return 0
    if not args.program:
        raise HlodbgError("hlodbg capture needs PROG (or --merge RUN.hlocap)")
    if not args.out:
        raise HlodbgError("hlodbg capture needs -o RUN.hlocap, the directory to write")
    _join_hosts(args)

    from hlodbg.engine.run.capture.run import capture
    from hlodbg.engine.run.capture.transform import DEFAULT_LOOP_CAPACITY
    from hlodbg.execution import gather_arguments
    from hlodbg.program import load

    program = load(args.program)
    if program.frontend.name != "mlir":
        raise HlodbgError(f"{args.program}: capture compiles StableHLO MLIR; convert it first with "
                          f"hlodbg print --to stablehlo {args.program}")
    from hlodbg.engine.machine.targets import find_target
    from hlodbg.engine.run.interpreter import entry_function

    function = entry_function(program.module, args.entry)
    if getattr(args, "args_per_device", None):
        raise HlodbgError("--args-per-device is for the emulated grid; a capture's arguments are global arrays")
    values, _ = gather_arguments(function, args.args, args.arg, args.seed)
    sites = selected_sites(program, args.values, args.entry)
    summary = capture(program.source, str(args.program), values, args.out, platform=find_target(args.target).xla_platform,
                      entry=args.entry, selected=None if sites is None else _selection(sites), values=args.values,
                      loop_capacity=DEFAULT_LOOP_CAPACITY if args.loop_capacity is None else args.loop_capacity, baseline=args.baseline)
    print(summary.describe())
    return 0


def _join_hosts(args) -> None:
    given = [args.coordinator is not None, args.num_processes is not None, args.process_id is not None]
    if args.distributed:
        if any(given):
            raise HlodbgError("--distributed lets JAX find the hosts; give either it or --coordinator, --num-processes "
                              "and --process-id")
        from hlodbg.engine.machine.xla.runtime import initialize_distributed

        initialize_distributed()
        return
    if not any(given):
        return
    if not all(given):
        raise HlodbgError("a capture on many hosts needs all of --coordinator HOST:PORT, --num-processes N and --process-id K")
    if not 0 <= args.process_id < args.num_processes:
        raise HlodbgError(f"--process-id {args.process_id} is not one of 0..{args.num_processes - 1}")
    from hlodbg.engine.machine.xla.runtime import initialize_distributed

    initialize_distributed(args.coordinator, args.num_processes, args.process_id)


def selected_sites(program, spec: str, entry: str = "main"):
    """The sites (`@fn#K`) of the ops `spec` points at, or None for `all`."""
    if spec.strip() == "all":
        return None
    from hlodbg.engine.debug.breakpoints import BreakpointError, Resolver
    from hlodbg.engine.run.capture_format import site

    resolver = Resolver(program.module, entry, str(program.path) if program.path else None)
    sites = set()
    for part in (p.strip() for p in spec.split(",")):
        if not part:
            continue
        text = re.sub(r"^line:\s*(\d+)$", r"line \1", part)
        try:
            _, ops, note = resolver.resolve(text)
        except BreakpointError as e:
            raise e.about(f"--values {part!r}") from None
        if note:
            print(f"note: --values {part}: {note}", file=sys.stderr)
        sites.update(site(op) for op in ops)
    if not sites:
        raise HlodbgError(f"--values {spec!r} selects no value")
    return sites


def _selection(sites: set[str]):
    from hlodbg.engine.run.capture_format import site

    return lambda op: site(op) in sites
