"""Parse speed: hlodbg's parser against MLIR's C++ parser (jaxlib) on the same text.

Prints, per file: size, ops, hlodbg parse time, MB/s, MLIR parse time and the ratio. The main
figure is a transformer lowered by JAX (about 128 KB / 1,400 ops); target: under 10x MLIR.
Run: python benchmarks/parse.py [FILES...]   (JAX optional: without it only hlodbg is timed).
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

from hlodbg.engine import parse_module

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "programs"


def best_time(fn, repeats: int = 7) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def transformer_text(layers: int = 12, width: int = 64) -> str:
    """A decoder-only transformer lowered by JAX, with locations like jax.export writes."""
    import jax
    import jax.numpy as jnp

    def layer_norm(x, g, b):
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        return (x - mean) / jnp.sqrt(var + 1e-5) * g + b

    def block(x, p):
        h = layer_norm(x, p["g1"], p["b1"])
        q, k, v = jnp.split(h @ p["qkv"], 3, axis=-1)
        heads = lambda t: t.reshape(t.shape[0], 4, -1).transpose(1, 0, 2)
        att = jax.nn.softmax(heads(q) @ heads(k).transpose(0, 2, 1) / 4.0, axis=-1)
        x = x + (att @ heads(v)).transpose(1, 0, 2).reshape(x.shape) @ p["proj"]
        h = layer_norm(x, p["g2"], p["b2"])
        return x + jax.nn.gelu(h @ p["up"]) @ p["down"]

    def model(tokens, embed, params):
        x = embed[tokens]
        for p in params:
            x = block(x, p)
        return x @ embed.T

    f32 = jnp.float32
    shape = jax.ShapeDtypeStruct
    p = {
        "g1": shape((width,), f32), "b1": shape((width,), f32), "g2": shape((width,), f32),
        "b2": shape((width,), f32), "qkv": shape((width, 3 * width), f32),
        "proj": shape((width, width), f32), "up": shape((width, 4 * width), f32),
        "down": shape((4 * width, width), f32),
    }
    lowered = jax.jit(model).lower(shape((16,), jnp.int32), shape((128, width), f32), [p] * layers)
    return lowered.as_text(debug_info=True)


def mlir_parser():
    try:
        from jax._src.interpreters import mlir as jax_mlir
        from jaxlib.mlir import ir
    except ImportError:
        return None
    context = jax_mlir.make_ir_context()
    context.allow_unregistered_dialects = True

    def parse(text: str) -> None:
        with context:
            ir.Module.parse(text)

    return parse


def report(name: str, text: str, mlir) -> tuple[float, float]:
    module = parse_module(text, name)
    ops = module.op_count
    ours = best_time(lambda: parse_module(text, name))
    size = len(text.encode())
    line = f"{name:32} {size / 1024:8.1f} KB {ops:6} ops  hlodbg {ours * 1e3:8.2f} ms {size / ours / 1e6:6.2f} MB/s"
    theirs = float("nan")
    if mlir is not None:
        theirs = best_time(lambda: mlir(text))
        line += f"  MLIR {theirs * 1e3:7.2f} ms  ratio {ours / theirs:5.1f}x"
    print(line)
    return ours, theirs


def main(argv: list[str]) -> int:
    mlir = mlir_parser()
    if mlir is None:
        print("(jaxlib not installed: timing hlodbg only)")
    files = [Path(a) for a in argv] or (sorted(SHARED.glob("*.mlir")) if SHARED.is_dir() else [])
    for path in files:
        report(path.name, path.read_text(), mlir)
    if not argv:
        try:
            text = transformer_text()
        except ImportError:
            return 0
        ours, theirs = report("jax transformer (12 layers)", text, mlir)
        if theirs == theirs:
            verdict = "meets" if ours / theirs < 10 else "MISSES"
            print(f"\ntransformer: hlodbg/MLIR = {ours / theirs:.1f}x — {verdict} the <10x target")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
