"""Wires the command line into the Textual app (hlodbg is the only layer that sees both)."""
from __future__ import annotations

import shlex
import sys

from hlodbg.engine import HlodbgError


def build_app(args):
    """The app for `hlodbg [open] PROG ...`: the debugger, or the error screen for a bad program
    or bad arguments (a terminal user sees the diagnostic there, never a traceback)."""
    from hlodbg.program import load
    from hlodbg.samples import default_sample_path
    from hlodbg.ui.app import HlodbgApp

    path = args.program or str(default_sample_path())
    try:
        program = load(path, chunk=args.chunk)
        values = None
        if args.args or args.arg:
            from hlodbg.execution import gather_arguments
            from hlodbg.engine.run.interpreter import entry_function

            function = entry_function(program.module, args.entry)
            values, _ = gather_arguments(function, args.args, args.arg, args.seed, quiet=True)
        device = None
        if args.device:
            from hlodbg.engine.run.arguments import parse_device

            device = parse_device(args.device)
    except HlodbgError as e:
        return HlodbgApp(error=e)
    return HlodbgApp(program, args=values, seed=args.seed, entry=args.entry, break_on=args.break_on, memory=args.memory,
                     replicas=args.replicas, partitions=args.partitions, device=device)


def run_ui(args) -> int:
    app = build_app(args)
    if not sys.stdout.isatty() and app.error is not None:
        print(app.error.render(), file=sys.stderr)  # no terminal to draw the error screen on
        return 2
    app.run()
    return 0 if app.error is None else 2


def serve_ui(args) -> int:
    """`hlodbg serve PROG`: each browser tab runs `hlodbg open PROG ...` through textual-serve."""
    from textual_serve.server import Server

    command = [sys.executable, "-m", "hlodbg", "open"]
    if args.program:
        command.append(args.program)
    for flag, value in (("--chunk", args.chunk), ("--args", args.args), ("--break-on", args.break_on), ("--memory", args.memory),
                        ("--replicas", args.replicas), ("--partitions", args.partitions), ("--device", args.device)):
        if value is not None:
            command += [flag, str(value)]
    for spec in args.arg:
        command += ["--arg", spec]
    command += ["--entry", args.entry, "--seed", str(args.seed)]
    print(f"serving hlodbg on http://{args.host}:{args.port} (Ctrl-C stops)", file=sys.stderr)
    Server(shlex.join(command), host=args.host, port=args.port, title="hlodbg").serve()
    return 0
