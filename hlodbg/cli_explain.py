"""`hlodbg explain PROG OP`: what one op does, with this op's numbers and, with --at, where one
element of its result comes from.

OP is found the way a breakpoint is (`%12`, `@fn:%12`, an HLO instruction name such as
`%fusion.3` or `fusion.3`, a source line number). To show values the program runs to the op's
first execution, on --args/--arg or seeded random inputs as `run` does; on a grid, on --device
with the other devices' values for collectives. An op the run never reaches, or a run that fails
first, is still explained, with a sentence saying why there are no values.
"""
from __future__ import annotations

import json
import sys
from typing import Optional

from hlodbg.cli_options import PROGRAM_HELP
from hlodbg.cli_run import add_argument_options
from hlodbg.engine import HlodbgError
from hlodbg.engine.ir.errors import printable
from hlodbg.engine.ir.phrases import LANGUAGES, check_language, language_from_environment
from hlodbg.explaining import explain_in_run, explained_element


def add_options(cmd) -> None:
    cmd.set_defaults(handler=cmd_explain)
    cmd.add_argument("program", metavar="PROG", help=PROGRAM_HELP)
    cmd.add_argument("op", metavar="OP", help="the op: %%12, @fn:%%12, an HLO instruction name (%%fusion.3 or "
                     "fusion.3), or a line number of PROG")
    cmd.add_argument("--at", metavar="I,J,...", help="an element of the result, e.g. 1,0,2 or (1, 0, 2); () or '' for "
                     "a scalar: show where it comes from")
    cmd.add_argument("--result", type=int, default=None, metavar="N",
                     help="which result --at is in (default: N of an OP written %%5#N, else 0)")
    cmd.add_argument("--svg", metavar="OUT.svg", help="also draw the op and the element's provenance as an SVG diagram")
    cmd.add_argument("--lang", metavar="LANG", help=f"language: {', '.join(LANGUAGES)} (default: from the locale)")
    add_argument_options(cmd, "function to run")
    cmd.add_argument("--device", metavar="R,P", help="on a grid: the device whose values are shown (default 0,0)")
    cmd.add_argument("--replicas", type=int, metavar="R", help="grid replicas (default: the module's mhlo.num_replicas)")
    cmd.add_argument("--partitions", type=int, metavar="P", help="grid partitions (default: the module's mhlo.num_partitions)")
    cmd.add_argument("--json", action="store_true", help="print the explanation as JSON")
    cmd.add_argument("--width", type=_width, default=100, help="wrap plain text at this width (default 100)")
    cmd.add_argument("--timeout", type=_seconds, default=20.0, metavar="SECONDS",
                     help="stop the run that gathers the op's values after this long (default 20; inf: no limit): a "
                          "loop that never ends is still explained, without values")
    from hlodbg.cli_elided import add_fill_elided_option

    add_fill_elided_option(cmd)
    cmd.add_argument("--chunk", type=int, default=None, help="module to explain in a '// -----' split file")


def cmd_explain(args) -> int:
    from hlodbg.cli_elided import load_program
    from hlodbg.engine.machine.process import ProcessId
    from hlodbg.engine.run.arguments import parse_device
    from hlodbg.engine.run.grid import grid_shape
    from hlodbg.engine.run.interpreter import entry_function
    from hlodbg.execution import gather_arguments

    lang = _language(args.lang)
    program = load_program(args)
    op, at, result = explained_element(program, args.op, args.at, args.result, args.entry)
    function = entry_function(program.module, args.entry)
    # On a grid each device may have its own arguments (`arg0@R,P` keys, --args-per-device).
    values, _ = gather_arguments(function, args.args, args.arg, args.seed, quiet=args.json,
                                 per_device=args.args_per_device,
                                 grid=grid_shape(program.module, args.replicas, args.partitions))
    explanation = explain_in_run(program, op, values, at=at, result=result, lang=lang, seed=args.seed,
                                 entry=args.entry, focus=parse_device(args.device) if args.device else ProcessId(0, 0),
                                 replicas=args.replicas, partitions=args.partitions, timeout=args.timeout)
    if args.svg:
        _write_svg(args.svg, explanation)
    if args.json:
        print(json.dumps(explanation.to_dict(), ensure_ascii=False, indent=2, default=str))
    else:
        sys.stdout.write(explanation.text(args.width))
    return 0


def _language(given: Optional[str]) -> str:
    lang = given if given is not None else language_from_environment()
    try:
        return check_language(lang)
    except ValueError as unknown:
        raise HlodbgError(f"--lang: {unknown}") from None


# Longer than a timer counts (setitimer's range ends near 1e9-1e10 s): as good as no limit.
_NO_LIMIT_FROM = 1e9


def _seconds(text: str) -> Optional[float]:
    """--timeout's value: seconds above 0, or None (no limit) for inf or anything past a timer's range."""
    import argparse
    import math

    try:
        seconds = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, or inf for no limit (got {text!r})") from None
    if math.isnan(seconds) or seconds <= 0:
        raise argparse.ArgumentTypeError(f"expected a number of seconds above 0, or inf for no limit (got {text!r})")
    return None if seconds >= _NO_LIMIT_FROM else seconds


def _width(text: str) -> int:
    import argparse

    try:
        width = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of columns (got {text!r})") from None
    if width < 1:
        raise argparse.ArgumentTypeError(f"expected a number of columns, 1 or more (got {text!r})")
    return width


def _write_svg(path: str, explanation) -> None:
    try:
        from hlodbg.layouts.op_diagram import explanation_svg
    except ImportError:
        raise HlodbgError("--svg: this hlodbg has no op diagrams (hlodbg.layouts.op_diagram is missing)") from None
    svg = explanation_svg(explanation)
    try:
        with open(path, "w", encoding="utf-8") as out:
            out.write(svg)
    except OSError as e:
        raise HlodbgError(f"--svg: cannot write {path}: {e.strerror}") from None
    print(f"wrote {printable(path)}", file=sys.stderr)
