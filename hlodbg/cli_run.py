"""`hlodbg run` and `hlodbg check`: execute programs from the command line."""
from __future__ import annotations

import argparse
import sys

from hlodbg.cli_elided import add_fill_elided_option, load_program
from hlodbg.cli_grid import grid_size, run_on_grid
from hlodbg.cli_options import PROGRAM_HELP
from hlodbg.cli_profile import ProfiledRun, add_profile_option, check_profile_options
from hlodbg.cli_target import add_target_options, backend_from_args
from hlodbg.engine import ExecutionError
from hlodbg.engine.debug.breakpoints import VALUE_TESTS
from hlodbg.engine.ir.errors import printable
from hlodbg.execution import gather_arguments, npz_output, report_results

EXIT_CHECK_FAILED = 1


class GivenOnce(argparse.Action):
    """An option that takes one value: given twice, argparse would silently keep the last
    (`--break-on nan --break-on inf` never stopped at the NaN); here it is an error."""

    def __call__(self, parser, namespace, values, option_string=None):
        if getattr(namespace, self.dest, None) is not None:
            parser.error(f"{option_string} is given more than once; give it once (one breakpoint for the run)")
        setattr(namespace, self.dest, values)


def seed_value(text: str) -> int:
    """--seed's value: a whole number, 0 or more (numpy's generators take no other)."""
    try:
        seed = int(text)
    except ValueError:
        seed = -1
    if seed < 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a seed: give a whole number, 0 or more")
    return seed


def add_argument_options(cmd, entry_help: str) -> None:
    """--entry, --args, --arg, --seed: which function runs on which arguments (run, open, serve)."""
    cmd.add_argument("--entry", default="main", help=f"{entry_help} (default: main)")
    cmd.add_argument("--args", metavar="IN.npz|DIR", help="arguments in an .npz file keyed by name (the argument's "
                     "name in the program, argN, or numpy.savez's arr_N), or a directory of NAME.npy files; "
                     "memory-mapped where the file allows (on a grid, arg0@R,P is device R,P's own value, and a "
                     "global array for a partitioned parameter is cut by its sharding)")
    cmd.add_argument("--args-per-device", metavar="DIR", help="on a grid: DIR/device_R_P.npz holds device R,P's own "
                     "arguments (all or some; the others come from --args/--arg or are random)")
    cmd.add_argument("--arg", action="append", default=[], metavar="N=FILE.npy", help="argument N from an .npy file (repeatable)")
    cmd.add_argument("--seed", type=seed_value, default=0, help="seed for arguments not given (default: 0)")


def add_run_options(run) -> None:
    run.add_argument("program", metavar="PROG", help=PROGRAM_HELP)
    run.set_defaults(handler=cmd_run)
    add_argument_options(run, "function to run")
    run.add_argument("--out", metavar="OUT.npz", help="save results as result0, result1, ... in an .npz file (in a "
                     "directory that exists); bf16, f8 and int4 results are stored widened to f32/i32, exactly, so "
                     "numpy reads them, and --args reads them back as they were")
    run.add_argument("--json", action="store_true", help="print a JSON summary of the results")
    run.add_argument("--chunk", type=int, default=None, help="module to run in a '// -----' split file")
    run.add_argument("--break-on", action=GivenOnce, metavar="nan|inf|EXPR", help="stop at the first op whose result holds NaN / Inf, "
                     "or meets an expression such as 'abs(result).max() > 1e3', or whose result differs on --against (diverge) "
                     "(or any breakpoint spec); "
                     "prints the op, its locations and its operands' statistics, exit status 3")
    from hlodbg.divergence_report import add_against_option

    add_against_option(run)
    run.add_argument("--probe", metavar="DIR", help="write every value the run produces as DIR/*.npy plus DIR/index.csv "
                     "(DIR new or empty)")
    run.add_argument("--replicas", type=int, metavar="R", help="grid replicas (default: the module's mhlo.num_replicas)")
    run.add_argument("--partitions", type=int, metavar="P", help="grid partitions (default: the module's mhlo.num_partitions)")
    run.add_argument("--device", metavar="R,P", help="with --break-on on a grid: the device to report when several stop at once (default 0,0)")
    run.add_argument("--memory", metavar="SIZE", help="budget for recorded values with --probe/--break-on "
                     "(e.g. 2G, 512M; default the arguments' size, at least 256M); older values are recomputed when needed; "
                     "the history of events counts too, and a run that fills it fails saying so")
    add_target_options(run)
    add_fill_elided_option(run)
    from hlodbg.cli_replay import add_capture_option

    add_capture_option(run)
    add_profile_option(run)


def add_check_options(check) -> None:
    check.set_defaults(handler=cmd_check)
    check.add_argument("files", nargs="+", metavar="FILE", help=f"{PROGRAM_HELP}; '// -----' modules run separately")
    check.add_argument("-v", "--verbose", action="store_true", help="also list the modules that pass")
    check.add_argument("--probe", metavar="DIR", help="keep the values interpreter.probe records: module N of "
                       "FILE writes DIR/FILE.N/probe*.npy plus index.csv (default: a temporary directory per module)")
    add_target_options(check)
    add_fill_elided_option(check)


def cmd_run(args) -> int:
    from hlodbg.cli_session import check_memory, check_probe_directory
    from hlodbg.engine.debug.divergence import parse_diverge_spec
    from hlodbg.engine.run.interpreter import entry_function
    from hlodbg.engine.run.request import Runner, RunRequest

    check_memory(args.memory)  # refused even when nothing is recorded: a typo is not ignored
    if args.out:
        npz_output(args.out)  # before the run, which may be long: nowhere to save is said at once
    if args.probe:
        check_probe_directory(args.probe)
    check_profile_options(args)
    profiling = ProfiledRun() if args.profile else None
    backend = backend_from_args(args)
    program = load_program(args)
    from hlodbg.cli_replay import capture_arguments, capture_backend

    replay = capture_backend(args, program)  # --capture: the captured values, on the capture's grid
    backend = replay if replay is not None else backend
    function = entry_function(program.module, args.entry)  # a session builds its own interpreter
    grid = grid_size(program.module, args)
    values = capture_arguments(args, replay, function) if replay is not None else None
    randomised: list = []
    if values is None:
        values, randomised = gather_arguments(function, args.args, args.arg, args.seed, quiet=args.json,
                                              per_device=args.args_per_device, grid=grid)

    diverge = parse_diverge_spec(args.break_on) if args.break_on else None
    if args.against and diverge is None:
        raise ExecutionError("--against is the target --break-on diverge compares with; add --break-on diverge")
    if args.against and diverge.against is None:
        args.break_on = f"{args.break_on.strip()} against {args.against}"  # the spec a session reads
    if diverge is not None and not args.probe:
        from hlodbg.divergence_report import run_to_divergence

        # Both targets in lockstep, unrecorded, to the first op instance that differs.
        status, results, printed = run_to_divergence(program, args.entry, values, args.break_on, args, grid,
                                                     target=replay)
        if status:
            return status
        if grid != (1, 1):
            args.break_on = None  # nothing diverged: the grid's results, as a run without --break-on
            return run_on_grid(args, program, function, values, randomised, backend)
    elif grid != (1, 1):
        return run_on_grid(args, program, function, values, randomised, backend, profiling)
    elif args.break_on and not args.probe and args.break_on.strip().lower() in VALUE_TESTS:
        from hlodbg.cli_session import scan_break_on

        # Where the first NaN/Inf appears needs no recording: a plain run that screens outputs.
        status, results, printed = scan_break_on(program, args.entry, values, args.break_on, args.program, args.memory,
                                                 backend)
        if status:
            return status
    elif args.break_on or args.probe:
        from hlodbg.cli_session import break_on, continue_within_memory, open_session, probe

        session = open_session(program, args.entry, values, args.memory, backend)
        try:
            if args.break_on:
                status = break_on(session, args.break_on, args.program)
                if status:
                    return status
            if args.probe:
                count = probe(session, args.probe)
                print(f"wrote {count} value(s) to {printable(args.probe)}/ (index.csv lists them)", file=sys.stderr)
            else:
                continue_within_memory(session)
            if session.error is not None:
                raise session.error
            results = session.results
        finally:
            session.close()
        printed = session.printed
    else:
        request, runner = RunRequest(program.module, values, args.entry, backend), Runner()
        if profiling is not None:
            outcome = profiling.run(lambda listeners_for: runner.run(request, listeners_for), values)
        else:
            outcome = runner.run(request)
        results, printed = outcome.results, outcome.printed
    for line in printed:
        print(line, file=sys.stderr if args.json else sys.stdout)
    for note in backend.run_notes(program.module):
        print(f"note: {note}", file=sys.stderr)
    report_results(args, program, results, function.function_type.results, randomised,
                   {"numerics": backend.numerics_mode(), **(profiling.json() if profiling is not None else {})})
    if profiling is not None:
        profiling.print(args)
    return 0


def cmd_check(args) -> int:
    from hlodbg.engine.run.checking import check_files

    _, failed = check_files(args.files, verbose=args.verbose, probe_root=args.probe, backend=backend_from_args(args),
                            fill_elided=args.fill_elided)
    return EXIT_CHECK_FAILED if failed else 0
