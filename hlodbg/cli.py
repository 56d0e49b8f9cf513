"""The `hlodbg` command: `hlodbg [PROG]` opens the debugger; `hlodbg --help` lists the other
commands. The subparsers are the one list of commands: each names its handler (`handler=`).

Bad input never shows a Python traceback: it prints `file:line:col: error: ...` with the source
line and a caret, and exits with status 2.
"""
from __future__ import annotations

import argparse
import importlib
import os
import sys
import warnings
from typing import Optional, Sequence

from hlodbg import __version__
from hlodbg.cli_options import PROGRAM_HELP
from hlodbg.engine.ir.errors import HlodbgError, printable

# numpy's words for a floating-point exception ("overflow encountered in multiply"): hlodbg
# computes on the program's values on purpose, and an Inf or NaN there is a result it shows
# (statistics, --break-on nan/inf), never a RuntimeWarning for stderr.
NUMPY_FLOATING_POINT_NEWS = r"(overflow|underflow|invalid value|divide by zero) encountered in"

EXIT_OK = 0
EXIT_INTERNAL = 1
EXIT_BAD_INPUT = 2

# Every command in `hlodbg --help`'s order: its line there, and the function that adds its options
# and handler ("module:function"). Only the command being run has its options built, so `hlodbg
# --help`, `--version` and each command import no other command's code (nor numpy, ml_dtypes or
# the UI unless that command needs them).
COMMANDS = {
    "open": ("open a program in the debugger (the default command)", "hlodbg.cli:_open_options"),
    "serve": ("serve the debugger in a web browser (textual-serve), e.g. for workshops", "hlodbg.cli:_serve_options"),
    "verify": ("parse and verify programs", "hlodbg.cli:_verify_options"),
    "print": ("print a program (pretty form unless --generic)", "hlodbg.cli:_print_options"),
    "run": ("run a program and print or save its results", "hlodbg.cli_run:add_run_options"),
    "check": ("run self-checking programs (check dialect, @check.* custom calls)", "hlodbg.cli_run:add_check_options"),
    "export": ("export the dataflow graph as SVG, PNG, DOT or JSON", "hlodbg.cli_export:add_options"),
    "memory": ("peak memory per device, the buffers live there and whether it fits "
               "(static: from types and layouts, nothing runs)", "hlodbg.cli_memory:add_options"),
    "diff": ("run a program on two targets and name the first op whose result diverges", "hlodbg.cli_diff:add_options"),
    "explain": ("explain one op: what it does, its attributes decoded, its result shape "
                "derived, and with --at where an element comes from (en, ja, hi)", "hlodbg.cli_explain:add_options"),
    "trace": ("where one element of a value came from, op by op through the run, to the arguments and constants "
              "it depends on; --nan / --inf: to the op that first made it", "hlodbg.cli_trace:add_options"),
    "lesson": ("list the lessons, or open one in the debugger with its questions", "hlodbg.cli_lesson:add_options"),
    "dap": ("serve the Debug Adapter Protocol (stdio, or --port) for editors: VS Code, neovim's nvim-dap, ...",
            "hlodbg.cli:_dap_options"),
    "mcp": ("serve the Model Context Protocol (stdio) for agents: load, run to a NaN, read, explain, trace, "
            "memory, diff", "hlodbg.cli:_mcp_options"),
    "capture": ("run a program compiled by XLA (jax) on real devices and keep its values "
                "(RUN.hlocap, for the debugger's --capture)", "hlodbg.cli_capture:add_options"),
}


def _parser(command: Optional[str] = None) -> argparse.ArgumentParser:
    """The command line's parser: with `command`, only that command's options are built (what
    `main` parses with); without, every command's (for tests and documentation)."""
    parser = argparse.ArgumentParser(
        prog="hlodbg",
        description="Visual graph inspector and step-through debugger for StableHLO and XLA HLO programs. "
        "'hlodbg PROG' opens PROG (default: the embedded sample) in the debugger.",
        epilog="Run 'hlodbg COMMAND --help' for the options of a command.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"hlodbg {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (line, options) in COMMANDS.items():
        cmd = sub.add_parser(name, help=line)
        if command is None or command == name:
            module, function = options.split(":")
            getattr(importlib.import_module(module), function)(cmd)
    return parser


def _open_options(cmd) -> None:
    cmd.set_defaults(handler=_cmd_open)
    cmd.add_argument("program", nargs="?", help=f"{PROGRAM_HELP} (default: the embedded sample)")
    from hlodbg.cli_open_options import add_session_options

    add_session_options(cmd)


def _serve_options(serve_cmd) -> None:
    serve_cmd.set_defaults(handler=_cmd_serve)
    serve_cmd.add_argument("program", nargs="?", help=f"{PROGRAM_HELP} (default: the embedded sample)")
    serve_cmd.add_argument("--host", default="localhost", help="address to listen on (default: localhost)")
    serve_cmd.add_argument("--port", type=int, default=8000, help="port (default: 8000)")
    serve_cmd.add_argument("--public-url", metavar="URL", help="the address browsers reach the server at, e.g. "
                           "http://workshop.example.org:8000 (default: http://HOST:PORT; with --host 0.0.0.0, this machine's address)")
    serve_cmd.add_argument("--lessons", nargs="?", const=True, default=False, metavar="DIR",
                           help="serve the lesson picker instead of PROG: each browser tab picks and works through its own "
                                "lesson (hlodbg's own, or the lessons in DIR: NAME.mlir + NAME.toml)")
    serve_cmd.add_argument("--no-token", action="store_true", help="serve without the secret token in the link: only on a "
                           "network where everyone who can reach the server may use it")
    serve_cmd.add_argument("--max-sessions", type=int, default=40, metavar="N",
                           help="browser sessions at once; more are turned away (default: 40)")
    from hlodbg.cli_open_options import add_session_options

    add_session_options(serve_cmd)


def _dap_options(cmd) -> None:
    cmd.set_defaults(handler=_cmd_dap)
    cmd.add_argument("--port", type=int, metavar="N", help="listen on TCP port N (0: a free one, printed on stderr) and "
                     "serve each editor that connects; default: one editor on stdin/stdout")
    cmd.add_argument("--host", default="127.0.0.1", help="with --port: the address to listen on (default: 127.0.0.1)")


def _cmd_dap(args) -> int:
    from hlodbg.dap import serve_port, serve_stdio

    if args.port is None:
        return serve_stdio()
    if not 0 <= args.port <= 65535:
        raise HlodbgError(f"--port {args.port}: a port is a number from 0 to 65535")

    def ready(port: int) -> None:
        print(f"hlodbg dap: listening on {args.host}:{port}", file=sys.stderr, flush=True)

    try:
        return serve_port(args.port, args.host, ready)
    except OSError as e:
        raise HlodbgError(f"--port {args.port}: cannot listen on {args.host}:{args.port}: {e.strerror or e}") from None


def _mcp_options(cmd) -> None:
    cmd.set_defaults(handler=_cmd_mcp)
    cmd.description = ("Serve the Model Context Protocol on stdin/stdout for an agent. It reads programs and "
                       "arguments only under --root folders and its --workdir, and writes only in --workdir.")
    cmd.add_argument("--workdir", metavar="DIR", help="the folder the server may write in (made if missing; "
                     "default: a new temporary folder)")
    cmd.add_argument("--root", action="append", default=[], metavar="DIR",
                     help="a folder the server may read programs and arguments from (repeatable; default: the "
                          "current folder, unless that is / or the home folder)")
    cmd.add_argument("--max-output", type=int, default=None, metavar="CHARS",
                     help="characters in one tool's answer; a longer one is cut and says how to read on (default 8000)")
    cmd.add_argument("--max-open", type=int, default=None, metavar="N", help="programs open at once (default 4)")


def _cmd_mcp(args) -> int:
    from hlodbg.mcp import serve_stdio
    from hlodbg.mcp.folders import DEFAULT_LIMIT
    from hlodbg.mcp.sessions import DEFAULT_MAX_OPEN

    return serve_stdio(args.workdir, args.root, DEFAULT_LIMIT if args.max_output is None else args.max_output,
                       DEFAULT_MAX_OPEN if args.max_open is None else args.max_open)


def _verify_options(verify_cmd) -> None:
    verify_cmd.set_defaults(handler=_cmd_verify)
    verify_cmd.add_argument("programs", nargs="+", metavar="PROG", help=PROGRAM_HELP)


def _print_options(print_cmd) -> None:
    print_cmd.set_defaults(handler=_cmd_print)
    print_cmd.add_argument("program", metavar="PROG", help=PROGRAM_HELP)
    print_cmd.add_argument("--to", choices=PRINT_TARGETS, default=None,
                           help="language to print in (default: the program's own): mlir (the IR as MLIR), "
                                "stablehlo (an HLO program as StableHLO-only MLIR), hlo (XLA HLO text)")
    print_cmd.add_argument("--short", action="store_true",
                           help="HLO text in XLA's short parsable form (no %%, signatures or metadata)")
    print_cmd.add_argument("--generic", action="store_true", help='print every op in generic form ("op"(...))')
    print_cmd.add_argument("--debug-info", action="store_true", help="print loc(...) locations")
    print_cmd.add_argument("--renumber", action="store_true",
                           help="name values as stablehlo-opt does (%%arg0, %%0, %%c, %%cst, ...) instead of "
                                "keeping the program's names, which breakpoints and the debugger use")
    print_cmd.add_argument("--chunk", type=int, default=None, help="module to print in a '// -----' split file")


def _cmd_verify(args) -> int:
    from hlodbg.program import load_all

    status = EXIT_OK
    for path in args.programs:
        try:
            programs = load_all(path)
        except HlodbgError as e:
            print(e.render(), file=sys.stderr)
            status = EXIT_BAD_INPUT
            continue
        for program in programs:
            label = path if len(programs) == 1 else f"{path}#{program.chunk}"
            print(f"{printable(label)}: ok ({_count(program.op_count, 'op')}, {_count(len(program.functions), 'function')})")
    return status


PRINT_TARGETS = ("mlir", "stablehlo", "hlo")


def _cmd_print(args) -> int:
    from hlodbg.program import load

    program = load(args.program, chunk=args.chunk)
    target = args.to or program.frontend.name
    if args.short and target != "hlo":
        raise HlodbgError(f"--short is XLA's short HLO printing; it goes with --to hlo, not {target}")
    if target == "hlo":
        if args.generic or args.debug_info or args.renumber:
            raise HlodbgError("--generic, --debug-info and --renumber are MLIR printing options; HLO text has none of them")
        from hlodbg.engine.syntax.hlo.printer import print_module as print_hlo_module

        sys.stdout.write(print_hlo_module(program.module, short=args.short))
        return EXIT_OK
    from hlodbg.engine.syntax.mlir.printer import print_module

    module, notes = program.module, []
    if target == "stablehlo":
        from hlodbg.engine.syntax.hlo.to_stablehlo import convert_to_stablehlo

        module, notes = convert_to_stablehlo(module)
    sys.stdout.write("".join(f"// {note}\n" for note in notes))
    sys.stdout.write(print_module(module, generic=args.generic, debug_info=args.debug_info, renumber=args.renumber))
    return EXIT_OK


def _cmd_open(args) -> int:
    from hlodbg.ui_entry import run_ui

    return run_ui(args)


def _cmd_serve(args) -> int:
    from hlodbg.ui_entry import serve_ui

    return serve_ui(args, main)  # each session runs its own command line through main()


def main(argv: Optional[Sequence[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    # `hlodbg prog.mlir` means `hlodbg open prog.mlir`, and `hlodbg --no-save` (an option of `open`,
    # not one of hlodbg's own: --help, --version) `hlodbg open --no-save`.
    if not argv or (argv[0] not in COMMANDS and argv[0] not in ("-h", "--help", "--version")):
        argv = ["open", *argv]
    args = _parser(argv[0]).parse_args(argv)
    if args.command is None:
        args = _parser("open").parse_args(["open", *argv])
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", NUMPY_FLOATING_POINT_NEWS, RuntimeWarning)
            return args.handler(args)
    except HlodbgError as e:
        print(e.render(), file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return EXIT_OK
    except Exception as e:  # an hlodbg bug, not the user's input
        if os.environ.get("HLODBG_DEBUG"):
            raise
        print(
            f"hlodbg: internal error: {type(e).__name__}: {printable(str(e))}\n"
            "This is a bug in hlodbg; rerun with HLODBG_DEBUG=1 for the traceback and report it.",
            file=sys.stderr,
        )
        return EXIT_INTERNAL


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())


def _count(n: int, noun: str) -> str:
    """`1 function`, `2 functions`."""
    return f"{n:,} {noun}{'' if n == 1 else 's'}"
