"""Execution speed: hlodbg against the StableHLO reference interpreter and XLA on the CPU.

For every program of ../shared/programs (except the sharded one) and a compute-bound transformer
this script generates with JAX (6 layers, D=512, T=256), prints the wall time of
  hlodbg       engine.interpreter (no listeners),
  reference    jaxlib.mlir.dialects.stablehlo.eval_module (skipped where it cannot run the program
               or would take longer than --reference-budget seconds),
  XLA          jax.jit on the CPU (compiled once, then timed),
with the ratios, and Program.run's first and later runs on gpt_tiny. Targets: >= 500x faster than the reference on gpt_tiny; <= 20x XLA there;
<= 2x XLA on the compute-bound transformer.
Run: python benchmarks/interpreter.py [--reference-budget SECONDS]
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

import hlodbg
from hlodbg.engine.run.interpreter import Interpreter

REPO = Path(__file__).resolve().parents[1]
PROGRAMS = REPO.parent / "shared" / "programs"


def best_time(fn, repeats: int = 5, budget: float = 20.0) -> float:
    best = float("inf")
    spent = 0.0
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        elapsed = time.perf_counter() - start
        best = min(best, elapsed)
        spent += elapsed
        if spent > budget:
            break
    return best


def transformer(layers: int = 6, width: int = 512, tokens: int = 256, heads: int = 8, vocab: int = 512):
    """(MLIR text, arguments, jitted function) of a decoder-only transformer forward pass."""
    import jax
    import jax.numpy as jnp

    def layer_norm(x, g, b):
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        return (x - mean) * jax.lax.rsqrt(var + 1e-5) * g + b

    def block(x, p):
        h = layer_norm(x, p["g1"], p["b1"])
        q, k, v = jnp.split(h @ p["qkv"], 3, axis=-1)
        split = lambda t: t.reshape(tokens, heads, width // heads).transpose(1, 0, 2)
        q, k, v = split(q), split(k), split(v)
        scores = q @ k.transpose(0, 2, 1) / np.sqrt(width // heads)
        mask = jnp.tril(jnp.ones((tokens, tokens), bool))
        scores = jnp.where(mask, scores, -1e9)
        attn = jax.nn.softmax(scores, axis=-1) @ v
        x = x + attn.transpose(1, 0, 2).reshape(tokens, width) @ p["proj"]
        h = layer_norm(x, p["g2"], p["b2"])
        return x + jax.nn.gelu(h @ p["up"]) @ p["down"]

    def forward(ids, embed, params):
        x = embed[ids]
        for p in params:
            x = block(x, p)
        return x @ embed.T

    rng = np.random.default_rng(0)
    normal = lambda *shape: (rng.standard_normal(shape) * 0.02).astype(np.float32)
    params = [
        dict(g1=np.ones(width, np.float32), b1=np.zeros(width, np.float32), qkv=normal(width, 3 * width),
             proj=normal(width, width), g2=np.ones(width, np.float32), b2=np.zeros(width, np.float32),
             up=normal(width, 4 * width), down=normal(4 * width, width))
        for _ in range(layers)
    ]
    ids = rng.integers(0, vocab, tokens).astype(np.int32)
    embed = normal(vocab, width)
    jitted = jax.jit(forward)
    text = jitted.lower(ids, embed, params).as_text()
    flat = [ids, embed] + [p[k] for p in params for k in sorted(p)]
    # JAX flattens dict leaves in sorted key order, matching `flat`.
    return text, flat, lambda: jax.block_until_ready(jitted(ids, embed, params))


def shared_programs():
    if not PROGRAMS.is_dir():
        return []
    cases = []
    for path in sorted(PROGRAMS.glob("*.mlir")):
        if "sharded" in path.stem:
            continue
        inputs = np.load(path.with_suffix("").with_suffix(".inputs.npz"))
        args = [inputs[f"arg{i}"] for i in range(len(inputs.files))]
        cases.append((path.stem, path.read_text(), args))
    return cases


def xla_runner(text: str, args):
    """Compile the MLIR text with XLA on one CPU device and return a timed callable."""
    import jax
    from jax._src.lib import xla_client as xc

    devices = jax.devices("cpu")[:1]
    executable = devices[0].client.compile_and_load(text, xc.DeviceList(tuple(devices)), xc.CompileOptions())
    device_args = [jax.device_put(a, devices[0]) for a in args]

    def run():
        for output in executable.execute(device_args):
            output.block_until_ready()

    return run


def reference_runner(text: str, args):
    """The StableHLO reference interpreter on the same text and arguments."""
    from jax._src.interpreters import mlir as jax_mlir
    from jaxlib.mlir.dialects import stablehlo

    ctx = jax_mlir.make_ir_context()
    with ctx, jax_mlir.ir.Location.unknown():
        module = jax_mlir.ir.Module.parse(text)
        attrs = [jax_mlir.ir.DenseElementsAttr.get(np.ascontiguousarray(a)) for a in args]

    def run():
        with ctx:
            stablehlo.eval_module(module, attrs)

    return run


def reference_time(text: str, args, budget: float) -> tuple[float, str]:
    """Time the reference interpreter in a child process: it aborts the process on ops it lacks."""
    import subprocess
    import sys
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        program = Path(tmp) / "program.mlir"
        inputs = Path(tmp) / "inputs.npz"
        program.write_text(text)
        np.savez(inputs, *args)
        try:
            done = subprocess.run(
                [sys.executable, __file__, "--reference-worker", str(program), str(inputs), str(budget)],
                capture_output=True, text=True, timeout=budget * 3 + 60,
            )
        except subprocess.TimeoutExpired:
            return float("nan"), f"over {budget * 3 + 60:.0f} s"
    if done.returncode != 0:
        lines = [line for line in (done.stderr + done.stdout).splitlines() if line.strip()]
        return float("nan"), lines[0][:110] if lines else f"exit {done.returncode}"
    return float(done.stdout.split()[-1]), ""


def _reference_worker(program: str, inputs: str, budget: float) -> None:
    data = np.load(inputs)
    args = [data[f"arr_{i}"] for i in range(len(data.files))]
    runner = reference_runner(Path(program).read_text(), args)
    start = time.perf_counter()
    runner()
    first = time.perf_counter() - start
    best = first if first > budget / 3 else min(first, best_time(runner, repeats=3, budget=budget))
    print(best)


def main() -> None:
    import sys

    if len(sys.argv) == 5 and sys.argv[1] == "--reference-worker":
        _reference_worker(sys.argv[2], sys.argv[3], float(sys.argv[4]))
        return
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reference-budget", type=float, default=60.0,
                        help="skip the reference interpreter on programs it would run longer than this")
    parser.add_argument("--skip-transformer", action="store_true")
    options = parser.parse_args()

    cases = shared_programs()
    jitted = {}
    if not options.skip_transformer:
        text, args, run_jax = transformer()
        cases.append(("transformer_6x512x256", text, args))
        jitted["transformer_6x512x256"] = run_jax

    print(f"{'program':<24}{'ops':>6}{'hlodbg':>12}{'reference':>12}{'XLA':>11}{'ref/hlodbg':>12}{'hlodbg/XLA':>12}")
    for name, text, args in cases:
        program = hlodbg.load(text)
        interpreter = Interpreter(program.module)
        interpreter.run("main", args)  # warm: compiles each block's step list once
        ours = best_time(lambda: interpreter.run("main", args), repeats=30)
        try:
            xla = best_time(xla_runner(text, args), repeats=20)
        except Exception as e:  # noqa: BLE001 - report and go on
            xla = float("nan")
            print(f"  (XLA could not run {name}: {type(e).__name__}: {e})")
        reference, why = reference_time(text, args, options.reference_budget)
        if why:
            print(f"  (reference interpreter cannot run {name}: {why})")
        ratio_ref = reference / ours if reference == reference else float("nan")
        ratio_xla = ours / xla if xla == xla else float("nan")
        print(f"{name:<24}{program.op_count:>6}{ours * 1e3:>10.2f}ms{reference * 1e3:>10.1f}ms{xla * 1e3:>9.3f}ms"
              f"{ratio_ref:>11.0f}x{ratio_xla:>11.1f}x")
    named = {case[0]: case for case in cases}
    if cases:
        program_runs(named.get("gpt_tiny", cases[0]))


def program_runs(case) -> None:
    """`hlodbg.load(p).run(*args)` twice on a fresh Program: the first run prepares the interpreter
    (every op's context, folded constants), later ones reuse it. Target: the second >= 2x faster."""
    name, text, args = case
    firsts, seconds = [], []
    for _ in range(5):
        program = hlodbg.load(text)
        start = time.perf_counter()
        program.run(*args)
        firsts.append(time.perf_counter() - start)
        seconds.append(best_time(lambda: program.run(*args), repeats=10))
    first, second = min(firsts), min(seconds)
    verdict = "PASS" if first >= 2 * second else "FAIL"
    print(f"Program.run on {name}: first {first * 1e3:.2f} ms, then {second * 1e3:.2f} ms "
          f"({first / second:.1f}x; target >= 2x) {verdict}")


if __name__ == "__main__":
    main()
