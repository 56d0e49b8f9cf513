"""`hlodbg diff PROG --against TARGET`: run a program on two targets and name the first op whose
result differs beyond the tolerance (shown by divergence_report.py). `hlodbg diff PROG --capture
RUN.hlocap [--against cpu|tpu-v5e]`: the capture of a real run is the first side (its values in
place of computed ones, engine/debug/capture_replay.py), the emulator the second.

Exit status: 0 nothing diverges, 1 something does (as diff(1)), 2 bad input.
"""
from __future__ import annotations

import json

from hlodbg.cli_options import PROGRAM_HELP
from hlodbg.engine import ExecutionError
from hlodbg.engine.debug.difference import DEFAULT_ATOL, DEFAULT_RTOL

EXIT_DIVERGED = 1


def add_options(diff) -> None:
    from hlodbg.cli_run import add_argument_options
    from hlodbg.cli_target import add_target_options

    diff.description = (
        "Run PROG on --target and on --against in lockstep and name the first op instance whose "
        "result differs beyond the tolerance: both values' summaries, the largest absolute and relative errors and "
        "where, whether the op's operands still agreed (then this op is where the targets part) and the numerics "
        "reason the targets give. With --capture RUN.hlocap the first run is the captured real run (on its "
        "inputs and grid) and --against (default cpu) the emulator. "
        "Exit status 0: nothing diverges; 1: something does; 2: bad input.")
    diff.add_argument("program", metavar="PROG", help=PROGRAM_HELP)
    diff.set_defaults(handler=cmd_diff)
    add_argument_options(diff, "function to run")
    add_target_options(diff, "of the first run runs")
    from hlodbg.cli_elided import add_fill_elided_option

    add_fill_elided_option(diff)
    diff.add_argument("--against", metavar="TARGET", help="the target of the second run, e.g. tpu-v5e (with "
                      "--capture: the emulator the capture is compared with, default cpu)")
    from hlodbg.cli_replay import add_capture_option

    add_capture_option(diff)
    diff.add_argument("--rtol", type=float, default=None, metavar="R",
                      help=f"relative tolerance (default {DEFAULT_RTOL:g}): elements agree when "
                           "|a-b| <= atol + rtol*max(|a|,|b|); integers and booleans must be equal. A capture or an "
                           "xla:* target is compared with XLA's tolerances unless --rtol/--atol are given: per element type (f32 2e-5, "
                           "f64 1e-9, 16/8-bit floats 2e-2) of each value's largest magnitude")
    diff.add_argument("--atol", type=float, default=None, metavar="A",
                      help=f"absolute tolerance (default {DEFAULT_ATOL:g})")
    diff.add_argument("--chunk", type=int, default=None, help="module to run in a '// -----' split file")
    diff.add_argument("--replicas", type=int, metavar="R", help="grid replicas (default: the module's mhlo.num_replicas)")
    diff.add_argument("--partitions", type=int, metavar="P", help="grid partitions (default: the module's mhlo.num_partitions)")
    diff.add_argument("--json", action="store_true", help="print the comparison as JSON")


def cmd_diff(args) -> int:
    from hlodbg.cli_elided import load_program
    from hlodbg.cli_grid import grid_size
    from hlodbg.cli_replay import capture_arguments, capture_backend, emulator_backend
    from hlodbg.divergence_report import backends, report_json, report_text
    from hlodbg.engine.debug.divergence import DivergeSpec, compare_runs
    from hlodbg.engine.run.interpreter import entry_function
    from hlodbg.execution import gather_arguments

    for flag, value in (("--rtol", args.rtol), ("--atol", args.atol)):
        if value is not None and not value >= 0:
            raise ExecutionError(f"{flag} must be a number, 0 or more (got {value})")
    program = load_program(args)
    replay = capture_backend(args, program)  # --capture: the real run is the first side
    if replay is None and not args.against:
        raise ExecutionError("diff compares two runs: name the second with --against TARGET (e.g. tpu-v5e), or "
                             "compare a capture of a real run with the emulator: --capture RUN.hlocap")
    function = entry_function(program.module, args.entry)
    grid = grid_size(program.module, args)
    values = capture_arguments(args, replay, function) if replay is not None else None
    if values is None:
        values, _ = gather_arguments(function, args.args, args.arg, args.seed, quiet=args.json,
                                     per_device=args.args_per_device, grid=grid)
    if replay is not None:
        target, against = replay, emulator_backend(args)
    else:
        target, against = backends(args)
    rtol, atol = DivergeSpec(rtol=args.rtol, atol=args.atol).tolerances(target, against)
    report = compare_runs(program.module, values, target, against, entry=args.entry, rtol=rtol, atol=atol,
                          grid=grid)
    if args.json:
        print(json.dumps(report_json(report), indent=1))
    else:
        print(report_text(report, args.program))
    return EXIT_DIVERGED if report.diverged or report.parted else 0


__all__ = ["EXIT_DIVERGED", "add_options", "cmd_diff"]
