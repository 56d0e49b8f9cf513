"""`hlodbg run` and `hlodbg check`: execute programs from the command line."""
from __future__ import annotations

import json
import sys

from hlodbg.engine import ExecutionError

EXIT_CHECK_FAILED = 1


def add_parsers(sub) -> None:
    run = sub.add_parser("run", help="run a program and print or save its results")
    run.add_argument("program", metavar="PROG", help=".mlir file")
    run.add_argument("--entry", default="main", help="function to run (default: main)")
    run.add_argument("--args", metavar="IN.npz", help="arguments as arg0, arg1, ... in an .npz file")
    run.add_argument("--arg", action="append", default=[], metavar="N=FILE.npy", help="argument N from an .npy file (repeatable)")
    run.add_argument("--seed", type=int, default=0, help="seed for arguments not given (default: 0)")
    run.add_argument("--out", metavar="OUT.npz", help="save results as result0, result1, ... in an .npz file")
    run.add_argument("--json", action="store_true", help="print a JSON summary of the results")
    run.add_argument("--chunk", type=int, default=None, help="module to run in a '// -----' split file")

    check = sub.add_parser("check", help="run self-checking programs (check dialect, @check.* custom calls)")
    check.add_argument("files", nargs="+", metavar="FILE", help=".mlir files; '// -----' modules run separately")
    check.add_argument("-v", "--verbose", action="store_true", help="also list the modules that pass")


def cmd_run(args) -> int:
    from hlodbg.engine.interpreter import Interpreter
    from hlodbg.execution import build_arguments, format_result, load_npy, load_npz, save_results, summarize
    from hlodbg.program import load

    program = load(args.program, chunk=args.chunk)
    interpreter = Interpreter(program.module)
    function = interpreter.entry_function(args.entry)
    given = load_npz(args.args) if args.args else {}
    for spec in args.arg:
        index, sep, path = spec.partition("=")
        if not sep or not index.strip().isdigit():
            raise ExecutionError(f"--arg expects N=FILE.npy, got {spec!r}")
        given[int(index)] = load_npy(path)
    inputs = function.function_type.inputs
    values, randomised = build_arguments(inputs, given, args.seed)
    if randomised and not args.json:
        which = ", ".join(str(i) for i in randomised)
        print(f"note: random argument(s) {which} (seed {args.seed}); pass --args/--arg to choose them", file=sys.stderr)
    results = interpreter.run(args.entry, values)
    for line in interpreter.printed:
        print(line, file=sys.stderr if args.json else sys.stdout)
    if args.out:
        save_results(args.out, results)
    result_types = function.function_type.results
    if args.json:
        payload = {
            "program": program.name,
            "entry": args.entry,
            "random_arguments": randomised,
            "seed": args.seed,
            "results": [dict(name=f"result{i}", type=str(t), **summarize(v)) for i, (v, t) in enumerate(zip(results, result_types))],
        }
        print(json.dumps(payload, indent=2))
    elif not args.out:
        for i, (value, t) in enumerate(zip(results, result_types)):
            print(format_result(i, value, t))
    else:
        print(f"saved {len(results)} result(s) to {args.out}")
    return 0


def cmd_check(args) -> int:
    from hlodbg.engine.checking import check_files

    _, failed = check_files(args.files, verbose=args.verbose)
    return EXIT_CHECK_FAILED if failed else 0
