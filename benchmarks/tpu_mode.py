"""Cost of TPU emulation: every shared program run on `cpu` and on `tpu-v5e`, plain and recorded.

For each program of ../shared/programs (with its .inputs.npz), prints the best wall time of
  plain      Program.run(*args, target=T), the second and later calls (prepared interpreter kept),
  recorded   Program.debug(args, target=T) run to its end with continue_() (every value recorded;
             on a grid, every device),
on both targets, and the ratio tpu/cpu of each. The TPU run stores every value as the bytes of its
tiled, padded buffer (machine/layout.py) and computes with TPU numerics (machine/tpu/numerics.py).
Goal (issue 15): recorded TPU mode <= 3x recorded CPU mode; PASS/FAIL per program.
Run: python benchmarks/tpu_mode.py [--repeats N] [--target tpu-v5e] [PROGRAM ...]
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

import hlodbg

REPO = Path(__file__).resolve().parents[1]
PROGRAMS = REPO.parent / "shared" / "programs"
GOAL = 3.0


def best_of(run, repeats: int, budget: float = 20.0) -> float:
    best, spent = float("inf"), 0.0
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        elapsed = time.perf_counter() - start
        best, spent = min(best, elapsed), spent + elapsed
        if spent > budget:
            break
    return best


def recorded(program, args, target):
    def run():
        debug = program.debug(args, target=target, persist=False)
        try:
            debug.move("continue_")  # a grid records every device when it opens; one process records now
            error = debug.error or debug.session.error
            if error is not None:
                raise error
        finally:
            debug.close()
    return run


def gpt2_plain(target: str, repeats: int) -> None:
    import sys

    from threadpoolctl import threadpool_limits

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import gpt2_step

    path, inputs = gpt2_step.files()
    arrays = np.load(inputs)
    args = [arrays[f"arg{i}"] for i in range(len(arrays.files))]
    program = hlodbg.load(path)
    seconds = {}
    with threadpool_limits(1, user_api="blas"):
        for name in ("cpu", target):
            program.run(*args, target=name)
            best = float("inf")
            for _ in range(max(1, min(repeats, 2))):
                start = time.process_time()
                program.run(*args, target=name)
                best = min(best, time.process_time() - start)
            seconds[name] = best
    ratio = seconds[target] / seconds["cpu"]
    print(f"gpt2_step plain, CPU time, 1 BLAS thread: cpu {seconds['cpu']:.2f} s, {target} {seconds[target]:.2f} s, "
          f"ratio {ratio:.1f}x (goal {GOAL:g}x) {'PASS' if ratio <= GOAL else 'FAIL'}", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("programs", nargs="*", help="program names (default: every shared program)")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--target", default="tpu-v5e")
    parser.add_argument("--gpt2", action="store_true",
                        help="also issue 36's GPT-2-shaped training step (benchmarks/gpt2_step.py), plain runs only "
                             "(CPU time with one BLAS thread, so that both modes see the same machine)")
    options = parser.parse_args()
    if options.gpt2:
        gpt2_plain(options.target, options.repeats)
    if not PROGRAMS.is_dir():
        print(f"{PROGRAMS} is not present: nothing to measure")
        return 0
    names = options.programs or sorted(p.stem for p in PROGRAMS.glob("*.mlir"))
    print(f"{'program':<18} {'plain cpu':>10} {'plain tpu':>10} {'ratio':>6}   {'recorded cpu':>12} {'recorded tpu':>12} {'ratio':>6}")
    failed = 0
    for name in names:
        program = hlodbg.load(PROGRAMS / f"{name}.mlir")
        inputs = np.load(PROGRAMS / f"{name}.inputs.npz")
        args = [inputs[f"arg{i}"] for i in range(len(inputs.files))]
        row = []
        for mode in ("plain", "recorded"):
            times = []
            for target in ("cpu", options.target):
                if mode == "plain":
                    program.run(*args, target=target)  # prepares the interpreter kept for the timed runs
                    times.append(best_of(lambda: program.run(*args, target=target), options.repeats))
                else:
                    times.append(best_of(recorded(program, args, target), options.repeats))
            row.append(times)
        (pc, pt), (rc, rt) = row
        verdict = "PASS" if rt <= GOAL * rc else "FAIL"
        failed += verdict == "FAIL"
        print(f"{name:<18} {pc * 1e3:>8.1f}ms {pt * 1e3:>8.1f}ms {pt / pc:>5.1f}x   {rc * 1e3:>10.1f}ms {rt * 1e3:>10.1f}ms "
              f"{rt / rc:>5.1f}x  {verdict} (goal <= {GOAL:g}x recorded)")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
