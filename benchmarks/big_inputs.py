"""Big inputs: time and peak memory of `hlodbg verify` on huge constants, and of opening a
20,000-op program in the debugger.

Each case runs in a fresh process that reports its own peak resident memory, so the figures are
what a user's shell would see. Cases: a 2048x2048 f32 hex constant (33 MB of text), a
4096x4096 one (134 MB), and a splat of a 78 GiB tensor type (must not allocate it); then a
4,000-layer MLP (JAX-lowered without locations when JAX is installed, else the same shape written
out), opened headless: seconds until the graph pane shows a scene and the pane's note; then
`hlodbg run` of a reduction over a 1 GiB (16384x16384 f32) argument given as an .npy file, as an
.npz written by hlodbg (members aligned: mapped), and as an .npz written by numpy.savez (members
unaligned: read once): peak resident memory and the peak of anonymous memory (a private copy;
mapped pages of the file are not one).
Run: python benchmarks/big_inputs.py [--skip-ui] [--skip-args] [--args-only]
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


# `hlodbg run` with a thread sampling RssAnon: VmHWM counts the file's mapped pages the run reads,
# which are the page cache's, not a copy; anonymous memory is what a copy would show in.
RUN_ARGS = """
import json, sys, threading, time
peak = [0]
def poll():
    while True:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("RssAnon:"):
                    peak[0] = max(peak[0], int(line.split()[1]))
        time.sleep(0.005)
threading.Thread(target=poll, daemon=True).start()
from hlodbg.cli import main
start = time.perf_counter()
status = main(["run", *sys.argv[1:]])
seconds = time.perf_counter() - start
hwm = next(l for l in open("/proc/self/status") if l.startswith("VmHWM:"))
print(json.dumps({"status": status, "seconds": seconds, "peak_mib": int(hwm.split()[1]) / 1024,
                  "anon_mib": peak[0] / 1024}))
"""

ARG_ROWS = ARG_COLS = 16384  # 1 GiB of float32
REDUCE_PROGRAM = f"""func.func @main(%w: tensor<{ARG_ROWS}x{ARG_COLS}xf32>) -> tensor<f32> {{
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %s = stablehlo.reduce(%w init: %z) applies stablehlo.add across dimensions = [0, 1] : (tensor<{ARG_ROWS}x{ARG_COLS}xf32>, tensor<f32>) -> tensor<f32>
  return %s : tensor<f32>
}}
"""
SLICE_PROGRAM = f"""func.func @main(%w: tensor<{ARG_ROWS}x{ARG_COLS}xf32>) -> tensor<4x{ARG_COLS}xf32> {{
  %s = stablehlo.slice %w [100:104, 0:{ARG_COLS}] : (tensor<{ARG_ROWS}x{ARG_COLS}xf32>) -> tensor<4x{ARG_COLS}xf32>
  return %s : tensor<4x{ARG_COLS}xf32>
}}
"""


def write_big_arguments(folder: Path) -> dict[str, list[str]]:
    """The 1 GiB argument as .npy (written in slabs, never whole in memory) and as two .npz files;
    returns {case: `hlodbg run` options}."""
    from hlodbg.argument_files import save_npz

    npy = folder / "w.npy"
    weights = np.lib.format.open_memmap(npy, mode="w+", dtype=np.float32, shape=(ARG_ROWS, ARG_COLS))
    rng = np.random.default_rng(0)
    for row in range(0, ARG_ROWS, 1024):
        weights[row:row + 1024] = rng.standard_normal((1024, ARG_COLS), dtype=np.float32)
    weights.flush()
    del weights
    mapped = np.load(npy, mmap_mode="r")
    save_npz(str(folder / "aligned.npz"), {"arg0": mapped})
    with open(folder / "savez.npz", "wb") as handle:  # numpy.savez's layout: the member lands unaligned
        np.savez(handle, arg0=mapped)
    return {"1 GiB .npy (--arg)": ["--arg", f"0={npy}"],
            "1 GiB .npz, hlodbg save_npz": ["--args", str(folder / "aligned.npz")],
            "1 GiB .npz, numpy.savez": ["--args", str(folder / "savez.npz")]}


def measure_big_arguments() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        program, sliced = folder / "reduce.mlir", folder / "slice.mlir"
        program.write_text(REDUCE_PROGRAM)
        sliced.write_text(SLICE_PROGRAM)
        cases = {name: (program, options) for name, options in write_big_arguments(folder).items()}
        cases["1 GiB .npy, slice 4 rows of it"] = (sliced, cases["1 GiB .npy (--arg)"][1])
        print(f"\n{'run: reduce a 1 GiB argument':32} {'file MiB':>9} {'run s':>7} {'peak MiB':>9} {'anon MiB':>9}")
        for name, (path, options) in cases.items():
            size = Path(options[1].split("=")[-1]).stat().st_size / 2**20
            done = subprocess.run([sys.executable, "-c", RUN_ARGS, str(path), *options], capture_output=True,
                                  text=True, check=True)
            figures = json.loads(done.stdout.strip().splitlines()[-1])
            print(f"{name:32} {size:9.0f} {figures['seconds']:7.2f} {figures['peak_mib']:9.0f} {figures['anon_mib']:9.0f}")


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
    if "--args-only" in sys.argv:
        measure_big_arguments()
        return
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
        if "--skip-args" not in sys.argv:
            measure_big_arguments()
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
