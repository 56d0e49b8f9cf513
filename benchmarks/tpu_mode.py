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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("programs", nargs="*", help="program names (default: every shared program)")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--target", default="tpu-v5e")
    options = parser.parse_args()
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
