"""Big inputs: time and peak memory of `hlodbg verify` on huge constants, and of opening a
20,000-op program in the debugger.

Each case runs in a fresh process that reports its own peak resident memory, so the figures are
what a user's shell would see. Cases: a 2048x2048 f32 hex constant (33 MB of text), a
4096x4096 one (134 MB), and a splat of a 78 GiB tensor type (must not allocate it); then a
4,000-layer MLP (JAX-lowered without locations when JAX is installed, else the same shape written
out), opened headless: seconds until the graph pane shows a scene and the pane's note.
Run: python benchmarks/big_inputs.py [--skip-ui]
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


OPEN_UI = """
import asyncio, json, sys, time
import hlodbg
from hlodbg.ui.app import HlodbgApp
from hlodbg.ui.widgets.graph_canvas import GraphCanvas

async def main(path):
    start = time.perf_counter()
    app = HlodbgApp(hlodbg.load(path), memory="1G", persist=False)
    async with app.run_test(size=(160, 48)) as pilot:
        while True:
            await asyncio.sleep(0.1)
            canvas = next(iter(app.screen.query(GraphCanvas)), None)
            if canvas is not None and canvas.shown_scene is not None and not canvas.laying_out:
                break
        seconds = time.perf_counter() - start
        step_start = time.perf_counter()
        await pilot.press("n")
        await app.workers.wait_for_complete()
        await pilot.pause()
        step = time.perf_counter() - step_start
        hwm = next(l for l in open("/proc/self/status") if l.startswith("VmHWM:"))
        print(json.dumps({"seconds": seconds, "step": step, "peak_mib": int(hwm.split()[1]) / 1024,
                          "boxes": len(canvas.shown_scene.boxes), "note": canvas.border_subtitle}))

asyncio.run(main(sys.argv[1]))
"""


def mlp_program(layers: int) -> str:
    """A `layers`-layer MLP lowered by JAX without locations (5 ops a layer), or written out."""
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        t, w = "tensor<2x8xf32>", "tensor<8x8xf32>"
        lines = [f"func.func @main(%x: {t}, " + ", ".join(f"%w{i}: {w}" for i in range(layers)) + f") -> {t} {{"]
        previous = "%x"
        for i in range(layers):
            lines += [f"  %c{i} = stablehlo.constant dense<1.0> : tensor<f32>",
                      f"  %d{i} = stablehlo.dot_general {previous}, %w{i}, contracting_dims = [1] x [0] : ({t}, {w}) -> {t}",
                      f"  %b{i} = stablehlo.broadcast_in_dim %c{i}, dims = [] : (tensor<f32>) -> {t}",
                      f"  %a{i} = stablehlo.add %d{i}, %b{i} : {t}", f"  %h{i} = stablehlo.tanh %a{i} : {t}"]
            previous = f"%h{i}"
        return "\n".join(lines + [f"  return {previous} : {t}", "}"]) + "\n"

    def mlp(x, weights):
        for w in weights:
            x = jnp.tanh(x @ w + 1.0)
        return x

    weights = [jnp.zeros((8, 8), jnp.float32)] * layers
    return jax.jit(mlp).lower(jnp.zeros((2, 8), jnp.float32), weights).as_text(debug_info=False)


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


def measure_ui_open(path: Path) -> dict:
    done = subprocess.run([sys.executable, "-c", OPEN_UI, str(path)], capture_output=True, text=True, check=True)
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
        if "--skip-ui" in sys.argv:
            return
        path = Path(tmp) / "mlp.mlir"
        path.write_text(mlp_program(4000))
        figures = measure_ui_open(path)
        print(f"\nopen a 4,000-layer MLP ({path.stat().st_size / 1e6:.1f} MB): graph shown after {figures['seconds']:.1f} s "
              f"({figures['boxes']} boxes), a step {figures['step']:.2f} s, peak {figures['peak_mib']:.0f} MiB")
        print(f"  graph pane: {figures['note']}")


if __name__ == "__main__":
    main()
