"""Cost of value breakpoints: `hlodbg run PROG --break-on nan|inf` against a plain `hlodbg run PROG`.

PROG is a while loop of N iterations of small ops (a counter, a compare, a multiply-add on a
tensor<4xf32>, a square root) that this script writes to a temporary file; in the "late NaN"
variant the square root turns NaN on the last iteration, so the breakpoint stops there and its
hit is numbered. Prints the best wall and CPU time of each command (run in-process through
hlodbg.cli.main, output discarded) and their ratios to the plain run, with PASS/FAIL for the
target: --break-on costs at most 2x the plain run (judged on CPU time, which other programs
running on a shared machine disturb less than wall time).
Run: python benchmarks/breakpoints.py [--iterations N] [--repeats R]
"""
from __future__ import annotations

import argparse
import contextlib
import io
import tempfile
import time
from pathlib import Path

from hlodbg.cli import main

TARGET_RATIO = 2.0


def loop_program(iterations: int, nan_on_last: bool) -> str:
    """A loop whose body's square root takes sqrt(limit - i): NaN once i passes `limit`."""
    limit = iterations - 2 if nan_on_last else iterations
    return f"""func.func @main(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {{
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %zero = stablehlo.constant dense<0.0> : tensor<4xf32>
  %r:3 = stablehlo.while(%i = %c0, %acc = %x, %root = %zero) : tensor<i32>, tensor<4xf32>, tensor<4xf32>
    cond {{
      %n = stablehlo.constant dense<{iterations}> : tensor<i32>
      %lt = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %lt : tensor<i1>
    }} do {{
      %one = stablehlo.constant dense<1> : tensor<i32>
      %next = stablehlo.add %i, %one : tensor<i32>
      %half = stablehlo.constant dense<0.5> : tensor<4xf32>
      %scaled = stablehlo.multiply %acc, %half : tensor<4xf32>
      %y = stablehlo.add %scaled, %half : tensor<4xf32>
      %limit = stablehlo.constant dense<{limit}.0> : tensor<4xf32>
      %f = stablehlo.convert %i : (tensor<i32>) -> tensor<f32>
      %fb = stablehlo.broadcast_in_dim %f, dims = [] : (tensor<f32>) -> tensor<4xf32>
      %d = stablehlo.subtract %limit, %fb : tensor<4xf32>
      %s = stablehlo.sqrt %d : tensor<4xf32>
      stablehlo.return %next, %y, %s : tensor<i32>, tensor<4xf32>, tensor<4xf32>
    }}
  return %r#1, %r#2 : tensor<4xf32>, tensor<4xf32>
}}
"""


def best_time(argv: list[str], repeats: int) -> tuple[float, float, int]:
    """(fastest wall time, fastest CPU time, exit status) of `hlodbg ARGV` run in this process."""
    wall = cpu = float("inf")
    status = 0
    for _ in range(repeats):
        sink = io.StringIO()
        start, start_cpu = time.perf_counter(), time.process_time()
        with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
            status = main(argv)
        wall = min(wall, time.perf_counter() - start)
        cpu = min(cpu, time.process_time() - start_cpu)
    return wall, cpu, status


def run(iterations: int, repeats: int) -> bool:
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        for nan_on_last in (False, True):
            path = Path(tmp) / f"loop{'_late_nan' if nan_on_last else ''}.mlir"
            path.write_text(loop_program(iterations, nan_on_last))
            label = "late NaN" if nan_on_last else "all finite"
            plain, plain_cpu, _ = best_time(["run", str(path)], repeats)
            print(f"{label}, {iterations:,} iterations: plain run {plain:.2f} s wall, {plain_cpu:.2f} s CPU")
            for spec in ("nan", "inf"):
                wall, cpu, status = best_time(["run", str(path), "--break-on", spec], repeats)
                ratio = cpu / plain_cpu
                verdict = "PASS" if ratio <= TARGET_RATIO else "FAIL"
                stopped = "stopped" if status == 3 else "ran to the end"
                print(f"  --break-on {spec:<4} {wall:.2f} s wall {wall / plain:.2f}x, {cpu:.2f} s CPU {ratio:.2f}x "
                      f"({stopped})  {verdict} (<= {TARGET_RATIO}x)")
                ok = ok and ratio <= TARGET_RATIO
    return ok


def main_cli() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=100_000, help="loop iterations (default 100000)")
    parser.add_argument("--repeats", type=int, default=2, help="runs per command; the fastest counts (default 2)")
    options = parser.parse_args()
    return 0 if run(options.iterations, options.repeats) else 1


if __name__ == "__main__":
    raise SystemExit(main_cli())
