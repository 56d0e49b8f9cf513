"""`hlodbg run` on a grid of devices: per-device results for SPMD programs (`result0@r,p`), global
results for Shardy/GSPMD programs, and `--break-on` across every device."""
from __future__ import annotations

import json
import sys

from hlodbg.engine import ExecutionError
from hlodbg.engine.machine.targets import backend_for
from hlodbg.engine.run.arguments import parse_device
from hlodbg.engine.run.grid import grid_shape
from hlodbg.engine.run.request import Runner, RunRequest
from hlodbg.engine.run.spmd import is_global_program
from hlodbg.execution import (
    format_result,
    report_results,
    result_arrays,
    save_arrays,
    saved_text,
    summarize,
    target_name,
)


def grid_size(module, args) -> tuple[int, int]:
    return grid_shape(module, args.replicas, args.partitions)


def run_on_grid(args, program, function, values, randomised, backend=None, profiling=None) -> int:
    """Run on the grid and report the results; `profiling` (cli_profile.ProfiledRun) times the run
    and adds its profile after the results."""
    module = program.module
    replicas, partitions = grid_size(module, args)
    request, runner = RunRequest(module, values, args.entry, backend_for(backend), replicas, partitions), Runner()

    def run_with_listeners(listeners_for):
        return runner.run(request, listeners_for)

    outcome = (profiling.run if profiling is not None else lambda run, arguments: run(None))
    if args.probe:
        raise ExecutionError(f"--probe records one process; on a {replicas}x{partitions} grid open the program in the debugger (hlodbg PROG) or run with --replicas 1 --partitions 1")
    result_types = function.function_type.results
    if is_global_program(module):
        if args.break_on:
            return _break_on_grid(args, program, values, replicas, partitions, backend)
        results = outcome(run_with_listeners, values).results
        print(f"note: global results of a sharded program run on {replicas * partitions} emulated devices", file=sys.stderr)
        report_results(args, program, results, result_types, randomised,
                       {"devices": replicas * partitions, "numerics": backend_for(backend).numerics_mode(),
                        **(profiling.json() if profiling is not None else {})})
        if profiling is not None:
            profiling.print(args)
        return 0
    if args.break_on:
        return _break_on_grid(args, program, values, replicas, partitions, backend)
    per_device = outcome(run_with_listeners, values).per_device
    order = sorted(per_device, key=lambda p: (p.replica_id, p.partition_id))
    saved = None
    if args.out:
        arrays = {}
        for process in order:
            arrays.update(result_arrays(per_device[process], f"@{process.replica_id},{process.partition_id}"))
        saved = save_arrays(args.out, arrays)
    if args.json:
        devices = [{"replica": p.replica_id, "partition": p.partition_id,
                    "results": [dict(name=f"result{i}@{p.replica_id},{p.partition_id}", type=str(t), **summarize(v)) for i, (v, t) in enumerate(zip(per_device[p], result_types))]}
                   for p in order]
        print(json.dumps({"program": program.name, "entry": args.entry, "grid": [replicas, partitions],
                          "target": target_name(args), "numerics": backend_for(backend).numerics_mode(),
                          "random_arguments": randomised, "devices": devices,
                          **(profiling.json() if profiling is not None else {})}, indent=2))
    elif not args.out:
        for process in order:
            print(f"device {process.replica_id * partitions + process.partition_id} (replica {process.replica_id}, partition {process.partition_id}):")
            for i, (value, t) in enumerate(zip(per_device[process], result_types)):
                print("  " + format_result(i, value, t).replace(f"result{i}:", f"result{i}@{process.replica_id},{process.partition_id}:", 1))
    else:
        print(saved_text(f"the results of {len(order)} devices (result0@r,p, ...)", *saved))
    if profiling is not None:
        profiling.print(args)
    return 0


def _break_on_grid(args, program, values, replicas: int, partitions: int, backend=None) -> int:
    from hlodbg.cli_session import EXIT_BREAK, check_evaluated, report
    from hlodbg.engine.debug.breakpoints import BreakpointError

    focus = parse_device(args.device) if args.device else None
    grid = program.debug(values, entry=args.entry, memory=args.memory, persist=False, replicas=replicas,
                         partitions=partitions, focus=focus, backend=backend)
    try:
        try:
            grid.break_at(args.break_on)
        except BreakpointError as e:
            raise e.about("--break-on") from None
        stop = grid.continue_()
        if stop.reason != "breakpoint":
            if grid.error is not None:
                raise grid.error
            return 0
        device = grid.device_id(grid.focus)
        check_evaluated(grid.session, stop.hits[0], args.break_on, args.program)
        print(f"device {device} {grid.focus} of {replicas}x{partitions}:")
        print(report(grid.session, stop.hits[0], args.break_on, args.program))
        return EXIT_BREAK
    finally:
        grid.close()
