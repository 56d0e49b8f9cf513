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

With --ops N (repeatable) it measures generated programs instead (benchmarks/scale_programs.py,
with name-stack locations and, with --no-locations too, without), printing one figure per line as
`ui <program> <figure> <value> <unit> [target ...] [PASS|FAIL]`:
  load            hlodbg.load (parse + verify) of the .mlir;
  panes           from the app's start (the program loaded) to every pane but the graph drawn;
  first_frame     from the app's start to the graph pane showing boxes too (target < 1.5 s);
  load_to_frame   load + first_frame;
  step_median, step_p90   key press (`n`, `s` in turn) to every pane updated (target median < 30 ms);
  open_cluster    opening a folded box of the first scene until its scene is shown (target < 300 ms);
  rss_peak        the process's peak resident memory so far (target < 2 GB): with several --ops
                  in one run the later programs inherit the earlier peaks; rss_now is the
                  resident memory after the program's figures.
Run: python benchmarks/ui.py --ops 100000 [--ops 10000] [--no-locations] [--steps N]
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
SCALE_TARGETS = {"first_frame": 1.5, "step_median": 0.030, "open_cluster": 0.300, "rss_peak": 2048.0}  # s, s, s, MB
WAIT_LIMIT = 600.0  # seconds a generated program's UI may take to show its graph before the run gives up
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


async def _wait_for(condition, what: str, limit: float = WAIT_LIMIT) -> None:
    deadline = time.perf_counter() + limit
    while not condition():
        if time.perf_counter() > deadline:
            raise TimeoutError(f"gave up after {limit:.0f} s waiting for {what}")
        await asyncio.sleep(0.002)


def _rss_now_mb() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024  # kB
    return float("nan")


def _peak_rss_mb() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


async def measure_scale(path: Path, arguments: list, steps: int) -> dict:
    """The --ops figures of one generated program (see the module docstring)."""
    import hlodbg
    from hlodbg.ui.app import HlodbgApp
    from hlodbg.ui.screens.main import MainScreen
    from hlodbg.ui.widgets.graph_canvas import GraphCanvas

    started = time.perf_counter()
    program = hlodbg.load(str(path))
    loaded = time.perf_counter()
    app = HlodbgApp(program, args=arguments, memory="1G", persist=False)
    applied: list[float] = []
    original = MainScreen._apply

    async def timed_apply(self, collected):
        await original(self, collected)
        applied.append(time.perf_counter())

    MainScreen._apply = timed_apply
    figures = {"ops": program.op_count, "load": loaded - started}
    try:
        async with app.run_test(size=SIZE) as pilot:
            await _wait_for(lambda: applied, "the first state")
            await pilot.pause()
            figures["panes"] = time.perf_counter() - loaded
            canvas = app.screen.query_one(GraphCanvas)
            await _wait_for(lambda: canvas.shown_scene is not None and canvas.shown_scene.boxes and not canvas.laying_out, "the graph")
            await pilot.pause()
            figures["first_frame"] = time.perf_counter() - loaded
            figures["load_to_frame"] = figures["load"] + figures["first_frame"]
            latencies = []
            for i in range(steps):
                count = len(applied)
                pressed = time.perf_counter()
                await pilot.press("n" if i % 2 == 0 else "s")
                await _wait_for(lambda: len(applied) > count, "a step")
                latencies.append(applied[-1] - pressed)
                await pilot.pause()
            latencies.sort()
            figures["step_median"] = statistics.median(latencies)
            figures["step_p90"] = latencies[max(0, int(len(latencies) * 0.9) - 1)]
            folded = [b.node for b in canvas.shown_scene.boxes.values() if b.cluster is not None]
            if folded:
                box = folded[len(folded) // 2]
                await _wait_for(lambda: not canvas.laying_out, "the graph to settle")
                opened = time.perf_counter()
                canvas.select(box)
                canvas.open_selected()
                cluster = canvas.shown_scene.boxes[box].cluster
                await _wait_for(lambda: canvas.scene is not None and canvas.scene.root == cluster and not canvas.laying_out, "the opened cluster")
                await pilot.pause()
                figures["open_cluster"] = time.perf_counter() - opened
    finally:
        MainScreen._apply = original
    figures["rss_peak"] = _peak_rss_mb()
    figures["rss_now"] = _rss_now_mb()
    return figures


def _print_scale(name: str, figures: dict) -> bool:
    """One line per figure; True when every figure with a target meets it."""
    ok = True
    units = {"rss_peak": "MB", "rss_now": "MB", "step_median": "ms", "step_p90": "ms", "open_cluster": "ms"}
    for figure in ("load", "panes", "first_frame", "load_to_frame", "step_median", "step_p90", "open_cluster", "rss_peak", "rss_now"):
        if figure not in figures:
            print(f"ui {name} {figure} - none (no folded box to open)" if figure == "open_cluster" else f"ui {name} {figure} - none")
            continue
        unit = units.get(figure, "s")
        scale = 1000 if unit == "ms" else 1
        line = f"ui {name} {figure} {figures[figure] * scale:.3f} {unit}"
        target = SCALE_TARGETS.get(figure)
        if target is not None:
            passed = figures[figure] < target
            ok &= passed
            line += f" target<{target * scale:g} {'PASS' if passed else 'FAIL'}"
        print(line, flush=True)
    return ok


def main_scale(sizes: list[int], locations: list[bool], steps: int) -> int:
    import numpy as np

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from scale_programs import inputs, layered_program

    workdir = Path(tempfile.mkdtemp(prefix="hlodbg-ui-scale-"))
    os.environ["HLODBG_CACHE_DIR"] = str(workdir / "cache")  # a cold layout cache, as on first use
    ok = True
    for ops in sizes:
        arguments = inputs(ops)
        values = [np.asarray(arguments[f"arg{k}"]) for k in range(len(arguments))]
        for with_locations in locations:
            name = f"{'p' if with_locations else 'n'}{ops}"
            path = workdir / f"{name}.mlir"
            path.write_text(layered_program(ops, locations=with_locations))
            print(f"ui {name} ops {ops} count", flush=True)
            ok &= _print_scale(name, asyncio.run(measure_scale(path, values, steps)))
    return 0 if ok else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--layers", type=int, default=12)
    parser.add_argument("--ops", type=int, action="append", help="measure a generated program of about this many ops (repeatable)")
    parser.add_argument("--no-locations", action="store_true", help="with --ops: also the programs without locations")
    parser.add_argument("--only-no-locations", action="store_true", help="with --ops: only the programs without locations")
    args = parser.parse_args()
    if args.ops:
        locations = [False] if args.only_no_locations else [True, False] if args.no_locations else [True]
        return main_scale(args.ops, locations, args.steps)
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
