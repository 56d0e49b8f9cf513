"""Big inputs: time and peak memory of `hlodbg verify` on huge constants.

Each case runs in a fresh process that reports its own peak resident memory, so the figures are
what a user's shell would see. Cases: a 2048x2048 f32 hex constant (33 MB of text), a
4096x4096 one (134 MB), and a splat of a 78 GiB tensor type (must not allocate it).
Run: python benchmarks/big_inputs.py
"""
from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

# The peak is the process's own high-water mark (VmHWM, reset by exec), not ru_maxrss, which
# Linux carries over from the parent that forked it (this script, holding the generated text).
MEASURE = """
import json, resource, sys, time
from hlodbg.cli import main
start = time.perf_counter()
status = main(["verify", sys.argv[1]])
seconds = time.perf_counter() - start
try:
    hwm = next(l for l in open("/proc/self/status") if l.startswith("VmHWM:"))
    peak_mib = int(hwm.split()[1]) / 1024
except OSError:
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"status": status, "seconds": seconds, "peak_mib": peak_mib}))
"""


def hex_constant_program(rows: int, cols: int) -> str:
    data = np.random.default_rng(0).standard_normal(rows * cols).astype(np.float32)
    t = f"tensor<{rows}x{cols}xf32>"
    return (f'func.func @main() -> {t} {{\n  %0 = stablehlo.constant dense<"0x{data.tobytes().hex().upper()}"> : {t}\n'
            f"  return %0 : {t}\n}}\n")


def splat_program() -> str:
    t = "tensor<512x1x6400x6400xf32>"
    return f"func.func @main() -> {t} {{\n  %0 = stablehlo.constant dense<0.0> : {t}\n  return %0 : {t}\n}}\n"


def measure(path: Path) -> dict:
    done = subprocess.run([sys.executable, "-c", MEASURE, str(path)], capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    cases = {"hex 2048x2048 f32": lambda: hex_constant_program(2048, 2048),
             "hex 4096x4096 f32": lambda: hex_constant_program(4096, 4096),
             "splat 512x1x6400x6400 f32": splat_program,
             "empty module (baseline)": lambda: "module {}\n"}
    with tempfile.TemporaryDirectory() as tmp:
        print(f"{'case':28} {'file MB':>8} {'verify s':>9} {'peak MiB':>9}")
        for name, make in cases.items():
            path = Path(tmp) / "case.mlir"
            path.write_text(make())
            figures = measure(path)
            size = path.stat().st_size / 1e6
            print(f"{name:28} {size:8.1f} {figures['seconds']:9.2f} {figures['peak_mib']:9.0f}")


if __name__ == "__main__":
    main()
