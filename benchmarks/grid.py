"""Grid emulation cost: time per collective against the number of devices.

For N = 2 ... 64 devices (replicas), runs a program of K chained collectives of one kind
(all_reduce over all devices, all_gather, collective_permute around a ring, all_to_all) on a
tensor of S float32 elements per device with `run_grid`, and prints the best wall time per
collective (the whole step: every device's evaluator plus the rendezvous), per collective and
device, and the rendezvous count. Run: python benchmarks/grid.py [--size S] [--chain K]
"""
from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from hlodbg.engine.run.grid import GridScheduler, ScheduledGrid
from hlodbg.engine.run.interpreter import Interpreter
from hlodbg.program import load

DEVICES = (2, 4, 8, 16, 32, 64)


def program(kind: str, devices: int, size: int, chain: int) -> str:
    everyone = "[[" + ", ".join(map(str, range(devices))) + "]]"
    t = f"tensor<{size}xf32>"
    lines = [f"module attributes {{mhlo.num_replicas = {devices} : i32, mhlo.num_partitions = 1 : i32}} {{",
             f"func.func @main(%x0: {t}) -> {t} {{"]
    for i in range(chain):
        a, b = f"%x{i}", f"%x{i + 1}"
        if kind == "all_reduce":
            lines.append(f'{b} = "stablehlo.all_reduce"({a}) ({{\n ^bb0(%p: tensor<f32>, %q: tensor<f32>):\n  %s = stablehlo.add %p, %q : tensor<f32>\n  stablehlo.return %s : tensor<f32>\n}}) {{replica_groups = dense<{everyone}> : tensor<1x{devices}xi64>}} : ({t}) -> {t}')
        elif kind == "all_gather":
            part = f"tensor<{size // devices}xf32>"
            lines.append(f"%s{i} = stablehlo.slice {a} [0:{size // devices}] : ({t}) -> {part}")
            lines.append(f'{b} = "stablehlo.all_gather"(%s{i}) {{all_gather_dim = 0 : i64, replica_groups = dense<{everyone}> : tensor<1x{devices}xi64>}} : ({part}) -> {t}')
        elif kind == "collective_permute":
            pairs = "[" + ", ".join(f"[{d}, {(d + 1) % devices}]" for d in range(devices)) + "]"
            lines.append(f'{b} = "stablehlo.collective_permute"({a}) {{source_target_pairs = dense<{pairs}> : tensor<{devices}x2xi64>}} : ({t}) -> {t}')
        elif kind == "all_to_all":
            lines.append(f'{b} = "stablehlo.all_to_all"({a}) {{split_dimension = 0 : i64, concat_dimension = 0 : i64, split_count = {devices} : i64, replica_groups = dense<{everyone}> : tensor<1x{devices}xi64>}} : ({t}) -> {t}')
    lines += [f"return %x{chain} : {t}", "}", "}"]
    return "\n".join(lines)


def run_once(module, devices: int, x: np.ndarray) -> tuple[float, int]:
    grid = ScheduledGrid(devices, 1)
    interpreters = {p: Interpreter(module, process=p, grid=grid) for p in grid.processes()}
    tasks = {p: (lambda i=i: i.run("main", [x])) for p, i in interpreters.items()}
    scheduler = GridScheduler(grid, tasks)
    started = time.perf_counter()
    scheduler.run()
    return time.perf_counter() - started, scheduler.collectives


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=4096, help="float32 elements per device (default 4096)")
    parser.add_argument("--chain", type=int, default=20, help="collectives per program (default 20)")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    x = np.random.default_rng(0).standard_normal(args.size).astype(np.float32) * 1e-3
    print(f"{args.chain} chained collectives on {args.size} float32 per device; best of {args.repeats}")
    print(f"{'collective':<20}{'devices':>8}{'per collective':>16}{'per device':>14}{'rendezvous':>12}")
    for kind in ("all_reduce", "all_gather", "collective_permute", "all_to_all"):
        for devices in DEVICES:
            module = load(program(kind, devices, args.size, args.chain)).module
            best, meetings = min(run_once(module, devices, x) for _ in range(args.repeats))
            per = best / args.chain
            print(f"{kind:<20}{devices:>8}{per * 1e3:>13.3f} ms{per / devices * 1e6:>11.1f} µs{meetings:>12}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
