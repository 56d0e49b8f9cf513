"""`hlodbg run PROG --profile`: where the run's time goes and its peak memory, after the results.

The program runs first plainly: its results are the ones reported, and it prepares the interpreter
(steps, folded constants, kept for later runs). Then it runs again on the same interpreter with a timing listener on every step of the plain
loop (engine/run/profile.py), up to
TIMED_RUNS times while that stays under a second, and the fastest of those is the profile; last,
as many plain runs, untimed step by step, whose fastest is shown beside the profile (what the
timing itself cost, the compiled blocks of a warm plain run aside); last, one more
plain run under tracemalloc gives the memory figure: what a warm run allocates (the prepared plan
compiles a block's code on its second plain run, allocating once). On a grid each run builds its devices'
interpreters anew, so the timed run includes that preparation; its figures are summed over the
devices.
"""
from __future__ import annotations

import time
from typing import Any, Callable, Optional

from hlodbg.engine import ExecutionError
from hlodbg.engine.run.profile import Profiler, RunProfile, format_profile, peak_memory

# The profile is the fastest of up to TIMED_RUNS timed runs (while they take under the budget in
# all): on a machine shared with other work one run can lose milliseconds to another process.
TIMED_RUNS = 5
TIMED_BUDGET_SECONDS = 1.0

# Options that stop, record or compare a run: a profile times one whole plain run.
CONFLICTING = (("break_on", "--break-on"), ("against", "--against"), ("probe", "--probe"))


def add_profile_option(run) -> None:
    run.add_argument("--profile", action="store_true",
                     help="after the results, where the time went (op kinds and single ops: count, time, share of "
                          "the run; the time outside ops) and the run's peak memory beside its arguments' size "
                          "(the program runs several times: a plain run for the results, timed runs, a traced run for memory)")


def check_profile_options(args) -> None:
    """A clear error for --profile with an option that does not run the program once, plainly."""
    if not getattr(args, "profile", False):
        return
    for attribute, option in CONFLICTING:
        if getattr(args, attribute, None):
            raise ExecutionError(f"--profile times one whole run; it cannot be combined with {option} "
                                 f"(drop {option}, or profile without it)")


class ProfiledRun:
    """Runs a program for `--profile` and keeps its profile."""

    def __init__(self) -> None:
        self.profile: Optional[RunProfile] = None

    def run(self, run: Callable[[Optional[Callable]], Any], arguments: Any) -> Any:
        """`run(listeners_for)` runs the program once (a Runner's RunOutcome, engine/run/request.py),
        giving each process's interpreter the listeners `listeners_for(process)` (none for None).
        Returns the plain run's outcome."""
        results = run(None)  # prepares the interpreter: its steps, folded constants (kept, not the run's)
        spent = 0.0
        for _ in range(TIMED_RUNS):
            profiler = Profiler()
            profiler.start()
            run(lambda process: [profiler.listener(process)])  # noqa: B023 - run() calls it before the loop goes on
            profiler.stop()
            profile = profiler.profile()
            if self.profile is None or profile.run_seconds < self.profile.run_seconds:
                self.profile = profile
            spent += profile.run_seconds
            if spent > TIMED_BUDGET_SECONDS:
                break
        plain = []
        for _ in range(TIMED_RUNS):  # the same run untimed, for comparison: the timing's own cost
            start = time.perf_counter()
            run(None)
            plain.append(time.perf_counter() - start)
            if sum(plain) > TIMED_BUDGET_SECONDS:
                break
        self.profile.plain_run_seconds = min(plain)
        # Last, warm: a plan compiles a block's code on its second plain run, which allocates once.
        _, self.profile.memory = peak_memory(lambda: _values(run(None)), arguments)
        return results

    def json(self) -> dict:
        return {"profile": self.profile.to_json()} if self.profile is not None else {}

    def print(self, args) -> None:
        if self.profile is None or args.json:
            return  # with --json the profile is in the JSON payload
        print()
        for line in format_profile(self.profile):
            print(line)


def _values(outcome: Any) -> Any:
    """The arrays a run's outcome holds: its results, or every device's."""
    return outcome.results if outcome.results is not None else outcome.per_device


__all__ = ["ProfiledRun", "add_profile_option", "check_profile_options"]
