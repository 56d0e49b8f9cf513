"""Wires the command line into the Textual app (hlodbg is the only layer that sees both)."""
from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path
from typing import Any, NamedTuple, Optional

from hlodbg.engine import HlodbgError


def build_app(args):
    """The app for `hlodbg [open] PROG ...`: the debugger, or the error screen for a bad program
    or bad arguments (a terminal user sees the diagnostic there, never a traceback)."""
    from hlodbg.samples import default_sample_path
    from hlodbg.ui.app import HlodbgApp

    try:
        plan = launch_plan(args, args.program or str(default_sample_path()), arguments_in_background=True)
    except HlodbgError as e:
        return HlodbgApp(error=e)
    return HlodbgApp(plan.program, args=plan.values, seed=args.seed, entry=args.entry, break_on=plan.break_on,
                     memory=args.memory, persist=not args.no_save, replicas=args.replicas, partitions=args.partitions,
                     device=plan.device, backend=plan.backend)


class LaunchPlan(NamedTuple):
    """What a debugging session is opened on, read from `hlodbg open`'s options: the debugger's
    app and the DAP server (hlodbg/dap) open the same target from the same options."""

    program: Any
    values: Any  # the arguments given (None: all random from --seed), or a function waiting for them
    backend: Any
    device: Any  # the ProcessId in focus (None: device 0)
    break_on: Optional[str]


def launch_plan(args, path: str, arguments_in_background: bool = False) -> LaunchPlan:
    """The program at `path` and what `args` (the options of `hlodbg open`) say to debug it with;
    an HlodbgError for a bad program or bad options. With `arguments_in_background`, the values
    are a function that waits for them: the argument files are checked now and read on a thread
    (from before the program is parsed: ReadAhead), as the debugger's app starts meanwhile."""
    from hlodbg.cli_elided import load_program
    from hlodbg.cli_session import check_memory

    check_memory(args.memory)  # named as the option, before a run would report it as the file's fault
    ahead = _read_ahead(args.args) if arguments_in_background else None
    program = load_program(args, path)
    values = None
    if args.args or args.arg or args.args_per_device:
        from hlodbg.engine.run.grid import grid_shape
        from hlodbg.engine.run.interpreter import entry_function
        from hlodbg.execution import gather_arguments, gather_arguments_in_background

        function = entry_function(program.module, args.entry)
        grid = grid_shape(program.module, args.replicas, args.partitions)
        if arguments_in_background:
            values = gather_arguments_in_background(function, args.args, args.arg, args.seed,
                                                    per_device=args.args_per_device, grid=grid, ahead=ahead)
        else:
            values, _ = gather_arguments(function, args.args, args.arg, args.seed, quiet=True,
                                         per_device=args.args_per_device, grid=grid)
    from hlodbg.cli_target import backend_from_args

    backend = backend_from_args(args)
    from hlodbg.cli_replay import capture_arguments, capture_backend

    replay = capture_backend(args, program)  # --capture: the captured values, on the capture's grid
    if replay is not None:
        backend = replay
        if values is None:
            from hlodbg.engine.run.interpreter import entry_function

            values = capture_arguments(args, replay, entry_function(program.module, args.entry))
    backend.prepare(program.module)  # --layout names and the program's own layouts, checked now
    device = None
    if args.device:
        from hlodbg.engine.run.arguments import parse_device

        device = parse_device(args.device)
    return LaunchPlan(program, values, backend, device, launch_break_spec(args))


def _read_ahead(arguments: str | None):
    """An --args .npz file's members read while the program is parsed (hlodbg.argument_files:
    ReadAhead); None for anything else, which the checks after parsing report or map."""
    if not arguments or not os.path.isfile(arguments):
        return None
    from hlodbg.argument_files import ReadAhead

    return ReadAhead(arguments)


def launch_break_spec(args):
    """--break-on as the session reads it: `diverge` names the --against target in its spec
    (`diverge against cpu`), checked now so a wrong name shows on the error screen."""
    from hlodbg.engine.debug.divergence import parse_diverge_spec

    spec = args.break_on
    against = getattr(args, "against", None)
    wanted = parse_diverge_spec(spec) if spec else None
    if wanted is None:
        if against:
            raise CliError("--against is the target --break-on diverge compares with; add --break-on diverge")
        return spec
    from hlodbg.engine.machine.targets import canonical_target

    if wanted.against is None and against:
        wanted.against = against
        spec = f"{spec.strip()} against {against}"
    if wanted.against is not None:
        canonical_target(wanted.against)
    return spec


def run_ui(args) -> int:
    return run_app(build_app(args))


def run_app(app) -> int:
    """Run the app; without a terminal an error is printed instead of drawn. A session `hlodbg
    serve` started writes its files only into the folder the server made for it."""
    from hlodbg.ui.session_files import SESSION_FOLDER

    folder = os.environ.get(SESSION_FOLDER)
    if folder:
        from hlodbg.ui.session_files import SessionFiles

        app.files = SessionFiles(Path(folder))
        app.run()
        return 0 if app.error is None else 2
    if not sys.stdout.isatty() and app.error is not None:
        print(app.error.render(), file=sys.stderr)  # no terminal to draw the error screen on
        return 2
    app.run()
    return 0 if app.error is None else 2


class CliError(HlodbgError):
    """A command-line option that cannot be used as given."""


ANY_ADDRESS = ("0.0.0.0", "::", "")


def serve_command(args) -> list[str]:
    """What textual-serve runs for each browser session: `hlodbg open PROG ...` with the serve
    command's options and --no-save, so every browser session keeps its own breakpoints and
    watches instead of sharing (and growing) the program's saved ones."""
    if getattr(args, "lessons", False):  # the workshop: every tab picks its own lesson
        if args.program:
            raise CliError(f"serve --lessons serves the lesson picker, not a program: leave out '{args.program}'")
        folder = [] if args.lessons is True else ["--folder", str(Path(args.lessons).resolve())]
        return [sys.executable, "-m", "hlodbg", "lesson", "--pick", *folder]
    command = [sys.executable, "-m", "hlodbg", "open"]
    if args.program:
        command.append(args.program)
    memory = args.memory or session_memory(getattr(args, "max_sessions", 1))
    for flag, value in (("--chunk", args.chunk), ("--args", args.args), ("--args-per-device", args.args_per_device),
                        ("--break-on", args.break_on),
                        ("--against", args.against), ("--memory", memory), ("--replicas", args.replicas),
                        ("--partitions", args.partitions), ("--device", args.device), ("--target", args.target),
                        ("--capture", getattr(args, "capture", None)),
                        ("--fill-elided", getattr(args, "fill_elided", None))):
        if value is not None:
            command += [flag, str(value)]
    for spec in args.arg:
        command += ["--arg", spec]
    for spec in args.layout:
        command += ["--layout", spec]
    if args.allow_f64:
        command.append("--allow-f64")
    if args.excess_precision is not None:
        command.append("--excess-precision" if args.excess_precision else "--per-op-rounding")
    return command + ["--entry", args.entry, "--seed", str(args.seed), "--no-save"]


def session_memory(sessions: int) -> str:
    """Each served session's budget for recorded values unless --memory says otherwise: half this
    machine's memory shared by the sessions it may run at once (a session alone may take up to a
    quarter of it, and forty of them ten times the machine)."""
    total = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    return f"{max(64, total // 2 // max(sessions, 1) // 2**20)}M"


def machine_address() -> str:
    """This machine's address as others on its network likely see it: the one its default route
    leaves from (a UDP socket's connect sends nothing), else its host name."""
    import socket

    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            probe.connect(("192.0.2.1", 9))  # TEST-NET-1: never contacted, only routed
            address = probe.getsockname()[0]
        if address and not address.startswith("0."):
            return address
    except OSError:
        pass
    return socket.gethostname()


def server_options(args, address=machine_address) -> tuple[dict, list[str]]:
    """(the keyword arguments of textual-serve's Server, the lines to tell the user). The
    browser builds every URL of the page from `public_url`, so a server listening on all
    addresses must name one that others can reach: --public-url, else this machine's address."""
    public_url = args.public_url
    notes = []
    if public_url is not None:
        public_url = public_url.rstrip("/")
        if not public_url.startswith(("http://", "https://")):
            raise CliError(f"--public-url must start with http:// or https://, got '{args.public_url}'")
    elif args.host in ANY_ADDRESS:
        public_url = f"http://{address()}:{args.port}"
        notes.append(f"listening on all addresses; others connect to {public_url}")
        notes.append("if they reach this machine by another name (a proxy, a tunnel), pass --public-url URL")
    else:
        host = f"[{args.host}]" if ":" in args.host else args.host
        public_url = f"http://{host}:{args.port}"
    options = dict(command=shlex.join(serve_command(args)), host=args.host, port=args.port, title="hlodbg",
                   public_url=public_url)
    return options, [f"serving hlodbg on {public_url} (Ctrl-C stops)", *notes]


def _check_lesson_folder(lessons) -> None:
    """serve --lessons DIR: a folder that holds lessons, checked once here rather than in every tab."""
    if lessons is True:
        return
    from hlodbg.engine.debug.lessons import lesson_catalog

    folder = Path(lessons)
    if not folder.is_dir():
        raise CliError(f"serve --lessons {lessons}: no such folder")
    if not lesson_catalog(folder):
        raise CliError(f"serve --lessons {lessons}: the folder holds no lesson (a lesson is NAME.mlir with its NAME.toml)")


def serve_ui(args, run_command) -> int:
    """`hlodbg serve PROG`: each browser session runs `hlodbg open PROG ...` (see hlodbg/serve.py),
    through `run_command(argv)` (the command line's main) in a process forked for it."""
    from hlodbg.serve import WorkshopServer, new_token
    from hlodbg.serve_zygote import Zygote

    # What every browser session would open, checked once now: a missing program, bad arguments
    # or a wrong --target/--layout is an error here (exit 2), not in every browser.
    if args.lessons:
        _check_lesson_folder(args.lessons)
    error = None if args.lessons else build_app(args).error
    if error is not None:
        raise error
    if args.max_sessions < 1:
        raise CliError(f"--max-sessions must be at least 1, got {args.max_sessions}")
    options, lines = server_options(args)
    token = None if args.no_token else new_token()
    session_argv = shlex.split(options["command"])[3:]  # after `python -m hlodbg`
    zygote = Zygote.start(lambda: warm_session(args), lambda: run_command(session_argv))
    server = WorkshopServer(token=token, max_sessions=args.max_sessions, zygote=zygote, **options)
    lines[0] = f"serving hlodbg on {server.link} (Ctrl-C stops)"
    if token is None:
        lines.append("--no-token: anyone who reaches this address can use the debugger")
    for line in lines:
        print(line, file=sys.stderr)
    try:
        server.serve()
    finally:
        zygote.close()
    return 0


def warm_session(args) -> None:
    """What every session needs before its first frame, done once in the zygote (serve_zygote.py):
    the app's modules imported and the served program loaded and checked."""
    import hlodbg.ui.screens.main
    import hlodbg.ui.served_driver  # noqa: F401

    if not args.lessons:
        build_app(args)
