"""Issue 35 part 1: the debugger's first frame with the graph drawn, as a user's `hlodbg PROG
--args IN.npz` gives it, from the process's start (imports included) to the graph pane showing
boxes; then opening a folded box, steps, and the process's peak memory.

Each program runs in a fresh process (`hlodbg.cli`'s parser and `ui_entry.build_app`, the app in
Textual's headless `run_test`). Programs: a generated 100k-op program (benchmarks/scale_programs.py,
with name-stack locations) with its arguments in an .npz written by numpy.savez, and the
GPT-2-shaped training step of gpt2_step.py (4,676 ops, its 365 MB of weights in an .npz written
by numpy.savez: members unaligned, so read rather than mapped). Printed per program, each as
`first_frame <program> <figure> <value> <unit> [target ...]`:
  imports         `import hlodbg.ui.app` and the CLI (wall);
  args            loading the program and its arguments (build_app; wall);
  graph_after_load  from the app's start (program and arguments loaded) to the graph drawn: what
                  benchmarks/ui.py --ops calls first_frame (wall);
  first_frame     from the process's start to the graph pane showing boxes (wall, and CPU of the
                  process: a quiet machine's wall time; targets 1.5 s at 100k ops, 2 s GPT-2 step);
  open_cluster    opening a folded box of the first scene until its scene is shown, the median of
                  seven boxes spread over the scene, each opened from it (target 100 ms);
  step_median     key press (`n`, `s` in turn) to every pane updated (target 30 ms);
  rss_peak        the process's peak resident memory (VmHWM; target 1 GB at 100k ops).
and, for the 100k-op program and the 12-layer transformer training step of scale.py
(export.transformer_text(12, nested=False, training=True), about 12,500 ops; JAX writes it once),
the folded SVG export `hlodbg export PROG -o X.svg --collapse groups` in a fresh process, median
of 3 (wall and CPU; targets 2 s at 100k, 1 s for the transformer), as `export <program> ...`.
Run: python benchmarks/first_frame.py [--only 100k,gpt2,export] [--quick] [--steps N]
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gpt2_step  # noqa: E402 - the benchmarks directory is put on sys.path above
from scale_programs import inputs, layered_program  # noqa: E402

TARGETS = {("100k", "first_frame"): 1.5, ("gpt2", "first_frame"): 2.0, ("100k", "rss_peak"): 1024.0,
           (None, "open_cluster"): 0.100, (None, "step_median"): 0.030}
TIMEOUT = 600
EXPORT_TARGETS = {"100k": 2.0, "transformer": 1.0}

MEASURE = r"""
import time
started = time.perf_counter()
cpu_started = time.process_time()
import asyncio, json, statistics, sys
from hlodbg.cli import _parser
from hlodbg.ui_entry import build_app
from hlodbg.ui.screens.main import MainScreen
from hlodbg.ui.widgets.graph_canvas import GraphCanvas
from hlodbg.layouts.scene_views import SceneRequest
figures = {"imports": time.perf_counter() - started}
argv = sys.argv[2:]
steps = int(sys.argv[1])
OPENS = 7
args = _parser("open").parse_args(["open", *argv])
app = build_app(args)
assert app.error is None, app.error
figures["args"] = time.perf_counter() - started - figures["imports"]
applied = []
original = MainScreen._apply

async def timed_apply(self, collected):
    await original(self, collected)
    applied.append(time.perf_counter())

MainScreen._apply = timed_apply

async def wait_for(condition):
    while not condition():
        await asyncio.sleep(0.002)

async def main():
    async with app.run_test(size=(200, 60)) as pilot:
        await wait_for(lambda: applied)
        canvas = app.screen.query_one(GraphCanvas)
        await wait_for(lambda: canvas.shown_scene is not None and canvas.shown_scene.boxes and not canvas.laying_out)
        await pilot.pause()
        figures["first_frame"] = time.perf_counter() - started
        figures["first_frame_cpu"] = time.process_time() - cpu_started
        figures["graph_after_load"] = figures["first_frame"] - figures["imports"] - figures["args"]
        latencies = []
        for i in range(steps):
            count = len(applied)
            pressed = time.perf_counter()
            await pilot.press("n" if i % 2 == 0 else "s")
            await wait_for(lambda: len(applied) > count)
            latencies.append(applied[-1] - pressed)
            await pilot.pause()
        if latencies:
            figures["step_median"] = statistics.median(latencies)
        first = canvas._view  # the first scene's view (the current op's clusters open)
        folded = [b.node for b in canvas.shown_scene.boxes.values() if b.cluster is not None]
        opens = []
        for k in range(min(OPENS, len(folded))):  # folded boxes spread over the first scene, each from it
            if canvas._view != first:
                canvas._request(SceneRequest(first))
                await wait_for(lambda: canvas._view == first and not canvas.laying_out)
                await pilot.pause()
            box = folded[(k * len(folded)) // OPENS]
            opened = time.perf_counter()
            canvas.select(box)
            canvas.open_selected()
            cluster = canvas.shown_scene.boxes[box].cluster
            await wait_for(lambda: canvas.scene is not None and canvas.scene.root == cluster and not canvas.laying_out)
            await pilot.pause()
            opens.append(time.perf_counter() - opened)
        if opens:
            figures["open_cluster"] = statistics.median(opens)

asyncio.run(main())
hwm = next(line for line in open("/proc/self/status") if line.startswith("VmHWM:"))
figures["rss_peak"] = int(hwm.split()[1]) / 1024
print("FIGURES " + json.dumps(figures))
"""


def program_files(name: str, workdir: Path, quick: bool) -> tuple[Path, Path]:
    if name == "gpt2":
        return gpt2_step.files(gpt2_step.QUICK if quick else gpt2_step.Shape())
    ops = 10_000 if quick else 100_000
    program = workdir / f"layered_{ops}.mlir"
    return gpt2_step.write_once(program, lambda: (layered_program(ops), inputs(ops)))


def measure(program: Path, arguments: Path, steps: int, workdir: Path) -> dict:
    environment = {**os.environ, "HLODBG_CACHE_DIR": tempfile.mkdtemp(prefix="cache-", dir=workdir)}  # a cold layout cache
    done = subprocess.run([sys.executable, "-c", MEASURE, str(steps), str(program), "--args", str(arguments), "--no-save"],
                          capture_output=True, text=True, timeout=TIMEOUT, env=environment)
    lines = [line for line in done.stdout.splitlines() if line.startswith("FIGURES ")]
    if done.returncode or not lines:
        raise RuntimeError(f"{program.name}: exit {done.returncode}\n{done.stderr[-3000:]}")
    return json.loads(lines[-1][len("FIGURES "):])


def transformer_file(workdir: Path) -> Path:
    program = workdir / "transformer_12_training.mlir"
    if not program.is_file():
        from export import transformer_text

        program.write_text(transformer_text(12, nested=False, training=True, compile=False)[0])
    return program


def measure_export(program: Path, workdir: Path, repeats: int = 3) -> tuple[float, float]:
    """Median (wall, CPU) seconds of the folded SVG export of `program` in a fresh process."""
    walls, cpus = [], []
    for _ in range(repeats):
        environment = {**os.environ, "HLODBG_CACHE_DIR": tempfile.mkdtemp(prefix="cache-", dir=workdir)}
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        subprocess.run([sys.executable, "-m", "hlodbg", "export", str(program), "-o", str(workdir / "folded.svg"),
                        "--collapse", "groups"], check=True, capture_output=True, timeout=TIMEOUT, env=environment)
        walls.append(time.perf_counter() - started)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return statistics.median(walls), statistics.median(cpus)


def report(name: str, figures: dict) -> None:
    units = {"rss_peak": "MB", "step_median": "ms", "open_cluster": "ms"}
    for figure in ("imports", "args", "graph_after_load", "first_frame", "first_frame_cpu", "open_cluster", "step_median", "rss_peak"):
        if figure not in figures:
            print(f"first_frame {name} {figure} - none", flush=True)
            continue
        unit = units.get(figure, "s")
        scale = 1000 if unit == "ms" else 1
        line = f"first_frame {name} {figure} {figures[figure] * scale:.3f} {unit}"
        target = TARGETS.get((name, figure.removesuffix("_cpu")), TARGETS.get((None, figure)))
        if target is not None:
            line += f" target<={target * scale:g}"
        print(line, flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", default="100k,gpt2,export", help="what to measure, comma-separated (default 100k,gpt2,export)")
    parser.add_argument("--quick", action="store_true", help="10k ops and the GPT-2 step's quick shape")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/hlodbg-first-frame"))
    options = parser.parse_args()
    options.workdir.mkdir(parents=True, exist_ok=True)
    print(f"first frame, {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}", flush=True)
    for name in options.only.split(","):
        if name == "export":
            programs = {"100k": program_files("100k", options.workdir, options.quick)[0],
                        "transformer": transformer_file(options.workdir)}
            for label, program in programs.items():
                wall, cpu = measure_export(program, options.workdir)
                target = f" target<={EXPORT_TARGETS[label]:g}"
                print(f"export {label} folded_svg {wall:.3f} s{target}\nexport {label} folded_svg_cpu {cpu:.3f} s{target}", flush=True)
            continue
        program, arguments = program_files(name, options.workdir, options.quick)
        label = ("10k" if name == "100k" else f"{name}-quick") if options.quick else name
        report(label, measure(program, arguments, options.steps, options.workdir))
    return 0


if __name__ == "__main__":
    sys.exit(main())
