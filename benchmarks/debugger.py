"""Cost of recording: a debugging session that records every value against an unrecorded run.

On ../shared/programs/gpt_tiny.mlir (with gpt_tiny.inputs.npz) and on the compute-bound transformer
that benchmarks/interpreter.py generates with JAX (6 layers, D=512, T=256 by default), prints the
best wall time of
  unrecorded   engine.interpreter.Interpreter.run: warm (one Interpreter reused) and cold (a new
               Interpreter per run, so its step lists are compiled again),
  recorded     Program.session(...) run to the end with continue_(): warm (session.restart(args) on
               the same compiled program) and cold (a new session per run),
with the ratios, the bytes the recording kept, and PASS/FAIL for the target: recorded <= 1.3x
unrecorded (warm). It checks that recorded and unrecorded results agree bit for bit, and that a
session with a 64 KiB budget gives back every event's outputs identical to a normally budgeted one
(recomputing what it dropped); exit status 1 if any value differs.
Run: python benchmarks/debugger.py [--repeats N] [--layers L] [--width D] [--tokens T]
"""
from __future__ import annotations

import argparse
import inspect
import sys
import time
from pathlib import Path

import numpy as np

import hlodbg
from hlodbg.engine.ir.dtypes import Token
from hlodbg.engine.run.interpreter import Interpreter

sys.path.insert(0, str(Path(__file__).resolve().parent))
from interpreter import transformer  # noqa: E402 - the benchmarks directory is put on sys.path above

REPO = Path(__file__).resolve().parents[1]
PROGRAMS = REPO.parent / "shared" / "programs"
TARGET_RATIO = 1.3
TINY_BUDGET = 64 * 1024


def best_of(timed_run, repeats: int, budget: float = 30.0) -> float:
    """Fastest of up to `repeats` calls of `timed_run`, which returns the seconds it measured itself
    (so that setup and teardown, such as closing a session, stay out of the figure)."""
    best = float("inf")
    spent = 0.0
    for _ in range(repeats):
        elapsed = timed_run()
        best = min(best, elapsed)
        spent += elapsed
        if spent > budget:
            break
    return best


def flat_arrays(value) -> list[np.ndarray]:
    """The arrays of a value, tuples flattened in order; tokens carry no data and are left out."""
    if isinstance(value, (tuple, list)):
        return [a for item in value for a in flat_arrays(item)]
    if isinstance(value, Token):
        return []
    return [np.asarray(value)]


def identical(left, right) -> bool:
    """Bit for bit: same dtypes, shapes and bytes (so NaN payloads and -0.0 count)."""
    a, b = flat_arrays(left), flat_arrays(right)
    return len(a) == len(b) and all(
        x.dtype == y.dtype and x.shape == y.shape and x.tobytes() == y.tobytes() for x, y in zip(a, b))


def unrecorded_times(program, args, repeats: int) -> tuple[float, float, list]:
    def cold() -> float:
        start = time.perf_counter()
        Interpreter(program.module).run("main", args)
        return time.perf_counter() - start

    interpreter = Interpreter(program.module)
    results = interpreter.run("main", args)  # compiles the step lists once, for the warm runs

    def warm() -> float:
        start = time.perf_counter()
        interpreter.run("main", args)
        return time.perf_counter() - start

    return best_of(warm, repeats), best_of(cold, repeats), results


def recorded_times(program, args, repeats: int) -> tuple[float, float, list, int]:
    def cold() -> float:
        start = time.perf_counter()
        session = program.session(args, persist=False)
        session.continue_()
        elapsed = time.perf_counter() - start
        session.close()
        return elapsed

    cold_best = best_of(cold, repeats)
    session = program.session(args, persist=False)
    session.continue_()

    def warm() -> float:
        start = time.perf_counter()
        session.restart(args)
        session.continue_()
        return time.perf_counter() - start

    warm_best = best_of(warm, repeats)
    if session.error is not None:
        raise session.error
    results, memory = session.results, session.memory_used
    session.close()
    return warm_best, cold_best, results, memory


def tiny_budget_check(program, args) -> bool:
    """Run with a 64 KiB budget, read every event's outputs, compare with an unconstrained session."""
    reference = program.session(args, persist=False)
    reference.continue_()
    expected = [event.outputs for event in reference.events]
    reference.close()

    small = program.session(args, persist=False, memory=TINY_BUDGET)
    small.continue_()
    start = time.perf_counter()
    got = [event.outputs for event in small.events]
    read_seconds = time.perf_counter() - start
    store = small.timeline.main.store
    differing = [i for i, (g, e) in enumerate(zip(got, expected)) if not identical(g, e)]
    if len(got) != len(expected):
        print(f"  tiny budget: {len(got)} events recorded, {len(expected)} expected")
        differing.append(min(len(got), len(expected)))
    print(f"  tiny budget (64 KiB) on gpt_tiny: {len(got)} events, kept {small.memory_used / 1024:.1f} KiB, "
          f"evicted {store.evicted}, recomputed {store.recomputed}, reading every output took "
          f"{read_seconds * 1e3:.1f} ms: {'identical' if not differing else f'{len(differing)} DIFFER'}")
    for i in differing[:5]:
        print(f"    event {i} differs: {small.events[i].describe() if i < len(got) else 'missing'}")
    small.close()
    return not differing


def cases(options):
    path = PROGRAMS / "gpt_tiny.mlir"
    inputs = np.load(PROGRAMS / "gpt_tiny.inputs.npz")
    yield "gpt_tiny", path.read_text(), [inputs[name] for name in inputs.files]
    accepted = inspect.signature(transformer).parameters
    shape = {k: getattr(options, k) for k in ("layers", "width", "tokens") if k in accepted and getattr(options, k)}
    text, args, _ = transformer(**shape)
    full = {k: accepted[k].default for k in ("layers", "width", "tokens") if k in accepted} | shape
    yield f"transformer_{full['layers']}x{full['width']}x{full['tokens']}", text, args


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=10, help="timed runs per figure (best is kept)")
    parser.add_argument("--layers", type=int, help="transformer layers (default: benchmarks/interpreter.py's)")
    parser.add_argument("--width", type=int, help="transformer model width")
    parser.add_argument("--tokens", type=int, help="transformer sequence length")
    options = parser.parse_args()

    all_good = True
    rows = []
    gpt_tiny = None
    for name, text, args in cases(options):
        program = hlodbg.load(text)
        plain_warm, plain_cold, plain_results = unrecorded_times(program, args, options.repeats)
        rec_warm, rec_cold, rec_results, memory = recorded_times(program, args, options.repeats)
        if not identical(rec_results, plain_results):
            print(f"  {name}: recorded results differ from the unrecorded ones")
            all_good = False
        rows.append((name, plain_warm, plain_cold, rec_warm, rec_cold, memory))
        if name == "gpt_tiny":
            gpt_tiny = program, args

    print(f"{'program':<26}{'unrec warm':>12}{'unrec cold':>12}{'rec warm':>12}{'rec cold':>12}"
          f"{'warm x':>8}{'cold x':>8}{'recorded':>11}  target {TARGET_RATIO}x (warm)")
    for name, plain_warm, plain_cold, rec_warm, rec_cold, memory in rows:
        warm_ratio, cold_ratio = rec_warm / plain_warm, rec_cold / plain_cold
        verdict = "PASS" if warm_ratio <= TARGET_RATIO else "FAIL"
        print(f"{name:<26}{plain_warm * 1e3:>10.2f}ms{plain_cold * 1e3:>10.2f}ms{rec_warm * 1e3:>10.2f}ms"
              f"{rec_cold * 1e3:>10.2f}ms{warm_ratio:>7.2f}x{cold_ratio:>7.2f}x{memory / 2**20:>8.1f} MB  {verdict}")
    if gpt_tiny is not None:
        all_good &= tiny_budget_check(*gpt_tiny)
    return 0 if all_good else 1


if __name__ == "__main__":
    sys.exit(main())
