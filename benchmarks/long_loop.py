"""Cost of recording a long loop: issue 18's "a 1M-iteration loop to its end recorded < 2x the
unrecorded run, with value breakpoints on".

The program is scale_programs.loop_program(N): a scalar while loop of N iterations, two adds per
iteration (5 events: compare, its return, two adds, their return). For N in 10k, 100k, 1M it
prints the CPU time of
  unrecorded        hlodbg.load(p).run()
  recorded          a debugging session run to the end with continue_() (what the TUI's
                    `continue` does), recording every event
  recorded + value  the same with value breakpoints that never fire: `nan` (every result),
                    `%a > 1e12` (an expression, tested where %a is visible) and
                    `%a if result > 1e12` (an op breakpoint whose condition reads its result)
with the ratios to the unrecorded run (PASS/FAIL against the 2x target), and what the recording
holds: events, bytes of values the store keeps (against its budget) and the growth of the
process's resident memory while the session is alive. With --memory the store gets that budget
(say 64M): values past it are dropped and recomputed from the loop checkpoints on demand; the
script then steps back to an early iteration and checks the values it reads there.
CPU time (process_time) is the figure: other programs on a shared machine disturb it less.
Run: python benchmarks/long_loop.py [--sizes 10000,100000,1000000] [--repeats R] [--memory 64M]
"""
from __future__ import annotations

import argparse
import gc
import os
import sys
import time
from pathlib import Path

import numpy as np

import hlodbg

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scale_programs import loop_program  # noqa: E402 - the benchmarks directory is put on sys.path above

TARGET_RATIO = 2.0
VALUE_BREAKPOINTS = ("nan", "%a > 1e12", "%a if result > 1e12")


def resident_bytes() -> int:
    """The process's resident memory now (Linux), or 0 where /proc is not there."""
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def cpu_time(action, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        gc.collect()
        start = time.process_time()
        action()
        best = min(best, time.process_time() - start)
    return best


def recorded(program, breakpoints: tuple, memory) -> tuple[float, object, int]:
    """(CPU seconds to run a session to its end, the session, resident bytes it added)."""
    gc.collect()
    before = resident_bytes()
    session = program.session(persist=False, memory=memory)
    for spec in breakpoints:
        session.break_at(spec, saved=False)
    start = time.process_time()
    stop = session.continue_()
    seconds = time.process_time() - start
    if stop.reason != "end" or session.error is not None:
        raise SystemExit(f"the recorded run stopped early: {stop}")
    return seconds, session, resident_bytes() - before


def check_going_back(session, iterations: int) -> tuple[bool, int]:
    """Step back to an iteration ~1/10 into the loop (off the checkpoints' stride, so dropped values
    are replayed from the nearest checkpoint) and compare the values read there with the loop's
    own arithmetic (%n = i + 1, %a = 0.5 * (i + 1) at iteration i): (right, the iteration)."""
    trace = session.trace
    wanted = iterations // 10 + 3
    event = next(e for e in range(len(trace) - 1, -1, -1)
                 if trace.frames[e].iteration == wanted and trace.frames[e].kind == "while.body"
                 and trace.ops[e].name == "stablehlo.return")
    session.goto(event)
    i = wanted
    return int(session.value("%n")) == i + 1 and float(session.value("%a")) == np.float32(0.5) * (i + 1), i


def run(sizes: list[int], repeats: int, memory) -> bool:
    ok = True
    warm_up = hlodbg.load(loop_program(10))  # imports and first-use caches stay out of the figures
    warm_up.run()
    warm_up.session(persist=False).continue_()
    print(f"{'iterations':>11}{'unrecorded':>12}{'recorded':>12}{'ratio':>7}{'+ value bps':>13}{'ratio':>7}"
          f"{'events':>11}{'kept':>10}{'budget':>10}{'RSS +':>10}  target {TARGET_RATIO}x")
    for n in sizes:
        program = hlodbg.load(loop_program(n))
        times = repeats if n < 1_000_000 else 1
        plain = cpu_time(program.run, times)
        rec, session, _ = recorded(program, (), memory)
        kept = session.memory_used
        session.close()
        del session
        with_bps, session, grown = recorded(program, VALUE_BREAKPOINTS, memory)
        rec_ratio, bps_ratio = rec / plain, with_bps / plain
        verdict = "PASS" if max(rec_ratio, bps_ratio) <= TARGET_RATIO else "FAIL"
        ok = ok and verdict == "PASS"
        print(f"{n:>11,}{plain:>11.2f}s{rec:>11.2f}s{rec_ratio:>6.2f}x{with_bps:>12.2f}s{bps_ratio:>6.2f}x"
              f"{len(session.trace):>11,}{kept / 2**20:>8.1f}MB{session.memory_budget / 2**20:>8.0f}MB"
              f"{grown / 2**20:>8.0f}MB  {verdict}")
        if memory is not None:
            good, iteration = check_going_back(session, n)
            store = session.timeline.main.store
            print(f"{'':>11}back to iteration {iteration:,}: {'values right' if good else 'VALUES WRONG'} "
                  f"({store.evicted:,} values dropped, {store.recomputed:,} recomputed)")
            ok = ok and good
        session.close()
        del session
    return ok


def size(text: str) -> int:
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    text = text.strip().upper().rstrip("B")
    return int(float(text[:-1]) * units[text[-1]]) if text and text[-1] in units else int(text)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="10000,100000,1000000", help="loop iterations, comma-separated")
    parser.add_argument("--repeats", type=int, default=3, help="unrecorded runs below 1M iterations (best kept)")
    parser.add_argument("--memory", type=size, help="the recording's memory budget (e.g. 64M; default: the session's)")
    options = parser.parse_args()
    sizes = [int(s.replace("_", "")) for s in options.sizes.split(",") if s.strip()]
    return 0 if run(sizes, options.repeats, options.memory) else 1


if __name__ == "__main__":
    sys.exit(main())
