"""Issue 37 part 1: hlodbg.jax's costs on a gpt_tiny-sized function (the 2-layer transformer of
../shared/programs/gpt_tiny: width 64, 4 heads, 16 tokens, vocabulary 128), written in JAX here,
and for the trap also on a "small" one (4 layers, width 256, 8 heads, 128 tokens, vocabulary 1024).

Printed, each as `jax_api <figure> <value> <unit> [target ...]`:
  trap_overhead   the NaN trap's cost while every output is finite: a trapped call against the
                  plain jitted call, both waited for (`block_until_ready`: a training loop waits
                  for its step sooner or later), median of many calls, for the forward pass and
                  for a training step (value_and_grad + SGD), per size; as a ratio and in
                  microseconds per call (the trap's cost is about the same in microseconds
                  whatever the step's size: one more dispatch, a reduction per output). For comparison, the same check made
                  by copying every output to the host (`np.isfinite(np.asarray(out))`), which
                  the trap avoids.
  first_frame     from `hlodbg.jax.debug(f, tokens)` being called (hlodbg.jax imported, JAX
                  warmed up, as in a user's session) to the debugger's graph pane showing boxes,
                  in a fresh process, Textual headless (`run_test`) as benchmarks/first_frame.py
                  times it; the lowering and parsing (`load`) part of it apart (the rest is
                  importing the debugger's modules and drawing); and from before `import
                  hlodbg.jax` (target: 2 s from the call).
Run: python benchmarks/jax_api.py [--calls N] [--repeats R]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

TARGETS = {"first_frame": 2.0}
TIMEOUT = 600

MODEL = r'''
import json, os
import jax, jax.numpy as jnp, numpy as np

SIZES = {"gpt_tiny": (64, 4, 16, 128, 2), "small": (256, 8, 128, 1024, 4)}
WIDTH, HEADS, TOKENS, VOCAB, LAYERS = SIZES[os.environ.get("JAX_API_SIZE", "gpt_tiny")]


def layer_norm(x, g, b):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) * jax.lax.rsqrt(var + 1e-5) * g + b


def attention(x, p):
    split = lambda t: t.reshape(TOKENS, HEADS, WIDTH // HEADS).transpose(1, 0, 2)
    q, k, v = (split(x @ p[name]) for name in ("wq", "wk", "wv"))
    scores = q @ k.transpose(0, 2, 1) / np.sqrt(WIDTH // HEADS)
    scores = jnp.where(jnp.tril(jnp.ones((TOKENS, TOKENS), bool)), scores, -1e9)
    return (jax.nn.softmax(scores, axis=-1) @ v).transpose(1, 0, 2).reshape(TOKENS, WIDTH) @ p["wo"]


def block(x, p):
    x = x + attention(layer_norm(x, p["g1"], p["b1"]), p)
    return x + jax.nn.gelu(layer_norm(x, p["g2"], p["b2"]) @ p["w1"]) @ p["w2"]


def gpt(params, tokens):
    x = params["embed"][tokens]
    for i, p in enumerate(params["layers"]):
        with jax.named_scope(f"layer_{i}"):
            x = block(x, p)
    return layer_norm(x, 1.0, 0.0) @ params["embed"].T


def loss(params, tokens, targets):
    log_probs = jax.nn.log_softmax(gpt(params, tokens))
    return -jnp.take_along_axis(log_probs, targets[:, None], axis=-1).mean()


def train_step(params, tokens, targets):
    value, grads = jax.value_and_grad(loss)(params, tokens, targets)
    return jax.tree.map(lambda p, g: p - 1e-2 * g, params, grads), value


def make_params(seed=0):
    rng = np.random.default_rng(seed)
    normal = lambda *shape: jnp.asarray(rng.normal(size=shape) * 0.05, jnp.float32)
    layer = lambda: {"wq": normal(WIDTH, WIDTH), "wk": normal(WIDTH, WIDTH), "wv": normal(WIDTH, WIDTH),
                     "wo": normal(WIDTH, WIDTH), "g1": jnp.ones(WIDTH), "b1": jnp.zeros(WIDTH),
                     "g2": jnp.ones(WIDTH), "b2": jnp.zeros(WIDTH), "w1": normal(WIDTH, 4 * WIDTH),
                     "w2": normal(4 * WIDTH, WIDTH)}
    return {"embed": normal(VOCAB, WIDTH), "layers": [layer() for _ in range(LAYERS)]}


params = make_params()
tokens = jnp.asarray(np.arange(TOKENS) % VOCAB, jnp.int32)
targets = jnp.asarray((np.arange(TOKENS) + 1) % VOCAB, jnp.int32)
'''

FIRST_FRAME = MODEL + r'''
import asyncio, sys, time
from functools import partial
forward = jax.jit(partial(gpt, params))
forward(tokens).block_until_ready()  # JAX warmed up, as in a user's session
before_import = time.perf_counter()
import hlodbg.jax
called = time.perf_counter()
program = hlodbg.jax.load(gpt, params, tokens)
loaded = time.perf_counter()
from hlodbg.jax.tools import debug_app  # the debugger's modules, imported by hlodbg.jax.debug
from hlodbg.ui.screens.main import MainScreen
from hlodbg.ui.widgets.graph_canvas import GraphCanvas
app = debug_app(program)  # what hlodbg.jax.debug runs, headless here
applied = []
original = MainScreen._apply

async def timed_apply(self, collected):
    await original(self, collected)
    applied.append(time.perf_counter())

MainScreen._apply = timed_apply

async def wait_for(condition):
    while not condition():
        await asyncio.sleep(0.002)

figures = {}

async def main():
    async with app.run_test(size=(200, 60)) as pilot:
        await wait_for(lambda: applied)
        canvas = app.screen.query_one(GraphCanvas)
        await wait_for(lambda: canvas.shown_scene is not None and canvas.shown_scene.boxes and not canvas.laying_out)
        await pilot.pause()
        now = time.perf_counter()
        figures["first_frame"] = now - called
        figures["load"] = loaded - called
        figures["first_frame_with_import"] = now - before_import
        figures["ops"] = program.op_count

asyncio.run(main())
print("FIGURES " + json.dumps(figures))
'''

OVERHEAD = MODEL + r'''
import statistics, sys, time
from functools import partial
import hlodbg.jax

calls, repeats = int(sys.argv[1]), int(sys.argv[2])


def timed(fn, args):
    """The mean time of `calls` calls of fn(*args), each waited for."""
    start = time.perf_counter()
    for _ in range(calls):
        jax.block_until_ready(fn(*args))
    return (time.perf_counter() - start) / calls


def host_checked(fn):
    def checked(*args):
        out = fn(*args)
        assert all(np.isfinite(np.asarray(leaf)).all() for leaf in jax.tree.leaves(out))
        return out
    return checked


figures = {}
for name, fn, args in (("forward", jax.jit(gpt), (params, tokens)),
                       ("train_step", jax.jit(train_step), (params, tokens, targets))):
    ways = {"plain": fn, "trapped": hlodbg.jax.trap_nans(fn, interactive=False), "host_check": host_checked(fn)}
    for way in ways.values():
        jax.block_until_ready(way(*args))
    # Interleaved, so a machine slowing down (two cores shared) weighs on every way alike.
    times = {key: [] for key in ways}
    for _ in range(repeats):
        for key, way in ways.items():
            times[key].append(timed(way, args))
    medians = {key: statistics.median(values) for key, values in times.items()}
    figures[name] = {"plain_us": medians["plain"] * 1e6, "trapped_us": medians["trapped"] * 1e6,
                     "host_check_us": medians["host_check"] * 1e6, "ratio": medians["trapped"] / medians["plain"],
                     "host_ratio": medians["host_check"] / medians["plain"]}
print("FIGURES " + json.dumps(figures))
'''


def run_script(script: str, *argv: str, size: str = "gpt_tiny") -> dict:
    env = {**os.environ, "JAX_PLATFORMS": os.environ.get("JAX_PLATFORMS", "cpu"), "JAX_API_SIZE": size}
    done = subprocess.run([sys.executable, "-c", script, *argv], capture_output=True, text=True, timeout=TIMEOUT,
                          env=env, cwd=Path(__file__).resolve().parents[1])
    line = next((l for l in done.stdout.splitlines() if l.startswith("FIGURES ")), None)
    if done.returncode != 0 or line is None:
        raise SystemExit(f"the measuring process failed:\n{done.stderr[-3000:]}")
    return json.loads(line[len("FIGURES "):])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=200, help="calls per measurement of the trap's overhead")
    parser.add_argument("--repeats", type=int, default=5, help="measurements (the median is printed)")
    parser.add_argument("--frames", type=int, default=3, help="fresh processes timing the first frame")
    options = parser.parse_args()

    for size, calls in (("gpt_tiny", options.calls), ("small", max(options.calls // 20, 5))):
        overhead = run_script(OVERHEAD, str(calls), str(options.repeats), size=size)
        for name, f in overhead.items():
            print(f"jax_api trap_overhead {size} {name} ratio {f['ratio']:.3f} x ({f['plain_us']:.0f} us plain, "
                  f"{f['trapped_us']:.0f} us trapped; a host copy of the outputs instead: {f['host_ratio']:.3f} x, "
                  f"{f['host_check_us']:.0f} us)")
    runs = [run_script(FIRST_FRAME) for _ in range(options.frames)]
    for figure in ("load", "first_frame", "first_frame_with_import"):
        value = statistics.median(run[figure] for run in runs)
        target = (f" target {TARGETS[figure]:g} {'PASS' if value <= TARGETS[figure] else 'FAIL'}"
                  if figure in TARGETS else "")
        print(f"jax_api {figure} gpt_tiny_sized {value:.3f} s{target} (median of {len(runs)}, {runs[0]['ops']} ops)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
