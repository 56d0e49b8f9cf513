"""Graph export speed on a 12-layer transformer that JAX lowers here.

Each layer is a nested `jax.jit`, so the module holds @main with 12 calls of one @block function
(named scopes give ln/attn/mlp groups); expanding every call gives about 1,400 op nodes. Prints:
  export SVG, collapsed calls   `graph_view(collapse="calls")` + layout + SVG, cold cache (target < 3 s)
  export SVG, full expansion    `collapse="none"`: every call expanded in place (must finish)
  second export                 the same export with the layout from the on-disk cache, in a fresh
                                in-memory state (target: at least 5x faster than the first)
  terminal scene                SceneBuilder.neighbourhood() of about 200 nodes, cold (target < 0.3 s)
  layers inlined in @main       the model traced without nested jit: ~1,500 ops in one function,
                                grouped by name stack (target < 3 s as well)
plus, for scale, the time XLA (jax) takes to lower and compile the same model, and PASS/FAIL.
Run: python benchmarks/export.py [--layers L] [--keep DIR]
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

TARGET_COLLAPSED = 3.0
TARGET_CACHE_SPEEDUP = 5.0
TARGET_SCENE = 0.3
SCENE_NODES = 200


def transformer_text(layers: int, nested: bool = True, width: int = 64, tokens: int = 16, heads: int = 4,
                     training: bool = False, compile: bool = True, vocabulary: int = 128,
                     update: str = "adamw") -> tuple[str, float]:
    """(MLIR text with locations, seconds XLA took to compile it, NaN without `compile`) of
    `transformer_lowered`'s program."""
    lowered, _ = transformer_lowered(layers, nested, width, tokens, heads, training, vocabulary, update)
    text = lowered.as_text(debug_info=True)
    if not compile:
        return text, float("nan")
    started = time.perf_counter()
    lowered.compile()
    return text, time.perf_counter() - started


def transformer_lowered(layers: int, nested: bool = True, width: int = 64, tokens: int = 16, heads: int = 4,
                        training: bool = False, vocabulary: int = 128, update: str = "adamw") -> tuple[object, list]:
    """(JAX's lowered program, its arguments flattened in parameter order, seeded) of a decoder-only
    transformer; `nested` jits each layer (calls of one @block), else every layer is inlined into
    @main.

    `training` lowers a whole training step instead of the forward pass, as a real one is written:
    token embedding (`vocabulary` rows), the layers (each rematerialised with jax.checkpoint), a
    tied output head and cross-entropy loss, `jax.value_and_grad` of it, then the `update`:
    "adamw" clips by global norm and updates every parameter with AdamW (arguments: weights, both
    moments, the step number, tokens, targets); "sgd" is params - lr * grad (arguments: weights,
    tokens, targets). Unrolled (nested=False) 12 layers with AdamW are about 11,000 ops / 1.4 MB;
    backward ops carry JAX's name stacks (`transpose(jvp(layer_3))/attn/...`)."""
    import jax
    import jax.numpy as jnp

    def layer_norm(x, g, b):
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        return (x - mean) * jax.lax.rsqrt(var + 1e-5) * g + b

    def attention(x, p):
        split = lambda t: t.reshape(tokens, heads, width // heads).transpose(1, 0, 2)
        q, k, v = (split(x @ p[name]) for name in ("wq", "wk", "wv"))
        scores = q @ k.transpose(0, 2, 1) / np.sqrt(width // heads)
        scores = jnp.where(jnp.tril(jnp.ones((tokens, tokens), bool)), scores, -1e9)
        return (jax.nn.softmax(scores, axis=-1) @ v).transpose(1, 0, 2).reshape(tokens, width) @ p["wo"]

    def block(x, p):
        with jax.named_scope("ln1"):
            h = layer_norm(x, p["g1"], p["b1"])
        with jax.named_scope("attn"):
            x = x + attention(h, p)
        with jax.named_scope("ln2"):
            h = layer_norm(x, p["g2"], p["b2"])
        with jax.named_scope("mlp"):
            return x + jax.nn.gelu(h @ p["w1"]) @ p["w2"]

    layer = jax.checkpoint(block) if training else block

    def model(x, params):
        for i, p in enumerate(params):
            with jax.named_scope(f"layer_{i}"):
                x = jax.jit(layer)(x, p) if nested else layer(x, p)
        return x

    def loss(params, tokens_in, targets):
        with jax.named_scope("embed"):
            x = params["embed"][tokens_in]
        x = model(x, params["layers"])
        with jax.named_scope("head"):
            log_probs = jax.nn.log_softmax(layer_norm(x, 1.0, 0.0) @ params["embed"].T)
            return -jnp.take_along_axis(log_probs, targets[:, None], axis=-1).mean()

    def train_step(params, m, v, step, tokens_in, targets):
        value, grads = jax.value_and_grad(loss)(params, tokens_in, targets)
        with jax.named_scope("clip"):
            norm = jnp.sqrt(sum(jnp.sum(g * g) for g in jax.tree.leaves(grads)))
            grads = jax.tree.map(lambda g: g * jnp.minimum(1.0, 1.0 / (norm + 1e-6)), grads)
        with jax.named_scope("adamw"):
            b1, b2, rate, decay = 0.9, 0.999, 1e-3, 0.01
            m = jax.tree.map(lambda m, g: b1 * m + (1 - b1) * g, m, grads)
            v = jax.tree.map(lambda v, g: b2 * v + (1 - b2) * g * g, v, grads)
            update = lambda p, m, v: p - rate * ((m / (1 - b1 ** step)) / (jnp.sqrt(v / (1 - b2 ** step)) + 1e-8) + decay * p)
            return value, jax.tree.map(update, params, m, v), m, v

    def sgd_step(params, tokens_in, targets):
        value, grads = jax.value_and_grad(loss)(params, tokens_in, targets)
        with jax.named_scope("sgd"):
            return value, jax.tree.map(lambda p, g: p - 1e-3 * g, params, grads)

    rng = np.random.default_rng(0)
    normal = lambda *shape: (rng.standard_normal(shape) * 0.05).astype(np.float32)
    params = [
        dict(wq=normal(width, width), wk=normal(width, width), wv=normal(width, width), wo=normal(width, width),
             w1=normal(width, 4 * width), w2=normal(4 * width, width), g1=np.ones(width, np.float32),
             b1=np.zeros(width, np.float32), g2=np.ones(width, np.float32), b2=np.zeros(width, np.float32))
        for _ in range(layers)
    ]
    if training:
        weights = {"embed": normal(vocabulary, width), "layers": params}
        token_ids = np.arange(tokens, dtype=np.int32) % vocabulary
        if update == "sgd":
            arguments = (weights, token_ids, np.roll(token_ids, -1))
            step = sgd_step
        elif update == "adamw":
            zeros = jax.tree.map(np.zeros_like, weights)
            arguments = (weights, zeros, zeros, np.float32(1), token_ids, np.roll(token_ids, -1))
            step = train_step
        else:
            raise ValueError(f"update is 'adamw' or 'sgd', not {update!r}")
    else:
        arguments, step = (normal(tokens, width), params), model
    # The program's parameters are the leaves of its arguments in JAX's order (dict keys sorted).
    return jax.jit(step).lower(*arguments), [np.asarray(leaf) for leaf in jax.tree.leaves(arguments)]


def timed(action):
    started = time.perf_counter()
    result = action()
    return time.perf_counter() - started, result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--layers", type=int, default=12)
    parser.add_argument("--keep", metavar="DIR", help="keep the .mlir and the SVGs in DIR")
    args = parser.parse_args()

    workdir = Path(args.keep or tempfile.mkdtemp(prefix="hlodbg-export-bench-"))
    workdir.mkdir(parents=True, exist_ok=True)
    os.environ["HLODBG_CACHE_DIR"] = str(workdir / "cache")  # cold cache for the first exports

    from hlodbg.layouts.export import export_graph, graph_view
    from hlodbg.layouts.graphviz import find_graphviz, graphviz_version
    from hlodbg.layouts.layout import clear_memory_cache
    from hlodbg.layouts.scene import SceneBuilder
    from hlodbg.program import load

    text, xla_compile = transformer_text(args.layers)
    source = workdir / "transformer.mlir"
    source.write_text(text)
    program = load(str(source))
    print(f"graphviz: {graphviz_version(find_graphviz())}")
    print(f"program: {args.layers}-layer transformer, {program.op_count} ops in {len(program.functions)} functions (XLA compiles it in {xla_compile:.2f} s)")

    def export(mode: str, name: str):
        view = graph_view(program.module, collapse=mode)
        return view, export_graph(view, str(workdir / name))

    first, (view, report) = timed(lambda: export("calls", "collapsed.svg"))
    print(f"export SVG, collapsed calls: {first:.2f} s  ({len(view.op_nodes())} op nodes, {report.edges} edges, {report.clusters} clusters)")
    full, (full_view, full_report) = timed(lambda: export("none", "expanded.svg"))
    print(f"export SVG, full expansion:  {full:.2f} s  ({len(full_view.op_nodes())} op nodes, {full_report.edges} edges, {full_report.clusters} clusters)")

    clear_memory_cache()  # as a new process would start: only the on-disk cache is warm
    second, (_, again) = timed(lambda: export("calls", "collapsed-again.svg"))
    assert again.layout_cached, "the second export did not find its layout in the cache"
    clear_memory_cache()
    second_full, (_, again_full) = timed(lambda: export("none", "expanded-again.svg"))
    speedup, speedup_full = first / second, full / second_full
    print(f"second export (cached layout): collapsed {second:.3f} s = {speedup:.1f}x faster; full {second_full:.3f} s = {speedup_full:.1f}x faster")

    # The terminal scene: a neighbourhood of about SCENE_NODES nodes in the expanded graph.
    centre = next(n for n, d in full_view.graph.nodes(data=True) if d["kind"] == "op" and d["mnemonic"] == "stablehlo.dot_general")
    radius = 1
    while len(full_view.neighbourhood(centre, radius + 1)) <= SCENE_NODES:
        radius += 1
    clear_memory_cache()
    os.environ["HLODBG_CACHE_DIR"] = str(workdir / "scene-cache")
    builder = SceneBuilder(full_view)
    scene_time, scene = timed(lambda: builder.neighbourhood(centre, radius))
    print(f"terminal scene: {len(scene.boxes)} nodes (radius {radius}) in {scene_time:.3f} s, {scene.width}x{scene.height} cells")

    # The same model traced without nested jit: one @main of ~1,500 ops grouped by name stack.
    inlined = load(transformer_text(args.layers, nested=False)[0])
    flat, (flat_view, flat_report) = timed(lambda: (lambda v: (v, export_graph(v, str(workdir / "inlined.svg"))))(graph_view(inlined.module)))
    print(f"export SVG, layers inlined in @main: {flat:.2f} s  ({len(flat_view.op_nodes())} op nodes, {flat_report.clusters} clusters)")

    checks = [
        (f"collapsed-calls export < {TARGET_COLLAPSED:g} s", first < TARGET_COLLAPSED),
        (f"inlined-layers export < {TARGET_COLLAPSED:g} s", flat < TARGET_COLLAPSED),
        ("full expansion finishes", full_report.nodes > 0),
        (f"cached re-export >= {TARGET_CACHE_SPEEDUP:g}x faster", min(speedup, speedup_full) >= TARGET_CACHE_SPEEDUP),
        (f"{SCENE_NODES}-node scene < {TARGET_SCENE:g} s", scene_time < TARGET_SCENE),
    ]
    for label, ok in checks:
        print(f"  {'PASS' if ok else 'FAIL'}  {label}")
    if args.keep:
        print(f"files kept in {workdir}")
    return 0 if all(ok for _, ok in checks) else 1


if __name__ == "__main__":
    sys.exit(main())
