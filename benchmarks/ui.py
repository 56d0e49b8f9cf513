"""The debugger UI's responsiveness, measured with a headless Textual pilot.

On the 12-layer transformer benchmarks/export.py lowers with JAX (with locations), prints:
  first frame       from loading the .mlir to the main screen showing its first state: program
                    parsed, graph built, session started, every pane filled (target < 1 s);
  graph laid out    until the graph canvas has its first Graphviz scene (laid out in a thread);
  step latency      median and 90th percentile over N presses of `n` (step over) and `s` (step
                    in): key press to every pane updated (target: median < 20 ms);
and the same figures for ../shared/programs/gpt_tiny.mlir when present, and for a grid program
(64 devices, 20 chained all_reduces, benchmarks/grid.py's generator) where the first frame includes
recording every device. PASS/FAIL at the end (the targets apply to the single-process programs).
Run: python benchmarks/ui.py [--steps N] [--layers L]
"""
from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

TARGET_FIRST_FRAME = 1.0
TARGET_STEP = 0.020
SIZE = (200, 60)

sys.path.insert(0, str(Path(__file__).resolve().parent))
from export import transformer_text  # noqa: E402 - the benchmarks directory is put on sys.path above


async def measure(path: Path, steps: int) -> dict:
    import hlodbg
    from hlodbg.ui.app import HlodbgApp
    from hlodbg.ui.screens.main import MainScreen
    from hlodbg.ui.widgets.graph_canvas import GraphCanvas

    started = time.perf_counter()
    program = hlodbg.load(str(path))
    app = HlodbgApp(program, memory="1G", persist=False)
    applied: list[float] = []
    original = MainScreen._apply

    async def timed_apply(self, collected):
        await original(self, collected)
        applied.append(time.perf_counter())

    MainScreen._apply = timed_apply
    try:
        async with app.run_test(size=SIZE) as pilot:
            while not applied:
                await asyncio.sleep(0.001)
            await pilot.pause()
            first_frame = time.perf_counter() - started
            canvas = app.screen.query_one(GraphCanvas)
            while canvas.scene is None:
                await asyncio.sleep(0.005)
            laid_out = time.perf_counter() - started
            latencies = []
            for i in range(steps):
                key = "n" if i % 2 == 0 else "s"
                count = len(applied)
                pressed = time.perf_counter()
                await pilot.press(key)
                while len(applied) == count:
                    await asyncio.sleep(0.0005)
                latencies.append(applied[-1] - pressed)
                await pilot.pause()
            position = app.screen.state.position
    finally:
        MainScreen._apply = original
    latencies.sort()
    return {"ops": program.op_count, "first_frame": first_frame, "laid_out": laid_out, "median": statistics.median(latencies),
            "p90": latencies[int(len(latencies) * 0.9) - 1], "position": position}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--layers", type=int, default=12)
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="hlodbg-ui-bench-"))
    os.environ["HLODBG_CACHE_DIR"] = str(workdir / "cache")  # a cold layout cache, as on first use
    source = workdir / "transformer.mlir"
    source.write_text(transformer_text(args.layers)[0])
    programs = [(f"{args.layers}-layer transformer", source)]
    shared = Path(__file__).resolve().parents[2] / "shared" / "programs" / "gpt_tiny.mlir"
    if shared.exists():
        programs.append(("gpt_tiny", shared))
    from grid import program as grid_program

    grid_source = workdir / "grid64.mlir"
    grid_source.write_text(grid_program("all_reduce", 64, 4096, 20))
    programs.append(("64-device grid", grid_source))
    ok = True
    for name, path in programs:
        figures = asyncio.run(measure(path, args.steps))
        print(f"{name} ({figures['ops']} ops), terminal {SIZE[0]}x{SIZE[1]}:")
        grid = name.endswith("grid")
        first_target = "" if grid else f"   (target < {TARGET_FIRST_FRAME * 1000:.0f} ms)"
        step_target = "" if grid else f" (target median < {TARGET_STEP * 1000:.0f} ms)"
        print(f"  first frame      {figures['first_frame'] * 1000:7.0f} ms{first_target}")
        print(f"  graph laid out   {figures['laid_out'] * 1000:7.0f} ms")
        print(f"  step latency     median {figures['median'] * 1000:.1f} ms, p90 {figures['p90'] * 1000:.1f} ms over {args.steps} steps{step_target}")
        if grid:
            continue  # no target: a grid run records every device before its first frame
        passed = figures["first_frame"] < TARGET_FIRST_FRAME and figures["median"] < TARGET_STEP
        ok &= passed
        print(f"  {'PASS' if passed else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
