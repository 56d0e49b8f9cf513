"""Start-up cost of the `hlodbg` command (issue 32): how long a user waits for `hlodbg --version`,
`--help`, `verify` and `run` on the embedded sample (tiny_model.mlir), beside a bare
`python -c pass` (the floor no command can go under).

Each command runs --repeats times in a fresh process; the figures are the median wall time and
the median CPU time (user + system of the child: less disturbed by other work on a shared machine).
`--version` and `--help` import no command's code, numpy or ml_dtypes (tests/test_startup.py
checks what they import); what they cost over bare Python is Python's own start plus argparse.
Run: python benchmarks/startup.py [--repeats 7]
"""
from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from hlodbg.samples import default_sample_path


def measure(argv: list[str], repeats: int) -> tuple[float, float]:
    """Median wall and CPU seconds of running `argv` to its end, `repeats` times."""
    walls, cpus = [], []
    for _ in range(repeats):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        walls.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime))
    return statistics.median(walls), statistics.median(cpus)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=7, help="runs per command (default 7)")
    options = parser.parse_args()

    hlodbg = [sys.executable, "-m", "hlodbg"]
    sample = str(default_sample_path())
    with tempfile.TemporaryDirectory() as scratch:
        commands = {
            "python -c pass": [sys.executable, "-c", "pass"],
            "hlodbg --version": [*hlodbg, "--version"],
            "hlodbg --help": [*hlodbg, "--help"],
            "hlodbg verify SAMPLE": [*hlodbg, "verify", sample],
            "hlodbg run SAMPLE": [*hlodbg, "run", sample, "--out", os.path.join(scratch, "out.npz")],
        }
        print(f"start-up of hlodbg, median of {options.repeats} runs ({os.cpu_count()} cores, "
              f"load average {os.getloadavg()[0]:.1f}); SAMPLE = {Path(sample).name}")
        print(f"{'command':<24} {'wall s':>8} {'CPU s':>8}")
        for label, argv in commands.items():
            wall, cpu = measure(argv, options.repeats)
            print(f"{label:<24} {wall:>8.3f} {cpu:>8.3f}")


if __name__ == "__main__":
    main()
