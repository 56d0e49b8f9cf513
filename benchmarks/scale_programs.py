"""Generated programs of any size, shaped like what JAX exports: the inputs of issue 18's figures.

`layered_program(ops, locations=True)` writes one @main of about `ops` operations: a stack of
identical residual layers (a dot against a weight argument, bias, a small layer norm, tanh, a
residual add: 16 ops a layer), each layer reading its own weight arguments as a real model's
parameters are (at most MAX_WEIGHTS of them, reused in turn past that). With locations, every op
carries a JAX-style name stack (`jit(model)/layer_12/mlp/dot_general`) through `#loc` aliases at
the end of the file, as `jax.jit(f).lower(...).as_text()` prints them; without, the file has no
location at all (`as_text(debug_info=False)`). The program runs: `inputs(ops)` gives its arguments.

`loop_program(iterations)` is a scalar while loop of that many iterations (for the recording
figures) and `hex_constant_program` a constant written as hex, as JAX writes large constants.
Run: python benchmarks/scale_programs.py OPS [--no-locations] > prog.mlir
"""
from __future__ import annotations

import sys

import numpy as np

WIDTH = 16
ROWS = 4
MAX_WEIGHTS = 256
OPS_PER_LAYER = 16


def _layer(i: int, x: str, w: str, b: str, names: list, op) -> str:
    """One layer's ops appended through `op(scope, mnemonic, text)`; returns its output value."""
    t, v, s = f"tensor<{ROWS}x{WIDTH}xf32>", f"tensor<{WIDTH}xf32>", f"tensor<{ROWS}xf32>"
    scope = f"layer_{i}"
    d = op(f"{scope}/mlp", "dot_general", f"stablehlo.dot_general {x}, {w}, contracting_dims = [1] x [0] : ({t}, tensor<{WIDTH}x{WIDTH}xf32>) -> {t}")
    bb = op(f"{scope}/mlp", "broadcast_in_dim", f"stablehlo.broadcast_in_dim {b}, dims = [1] : ({v}) -> {t}")
    a = op(f"{scope}/mlp", "add", f"stablehlo.add {d}, {bb} : {t}")
    h = op(f"{scope}/mlp", "tanh", f"stablehlo.tanh {a} : {t}")
    zero = op(f"{scope}/norm", "constant", "stablehlo.constant dense<0.000000e+00> : tensor<f32>")
    total = op(f"{scope}/norm", "reduce", f"stablehlo.reduce({h} init: {zero}) applies stablehlo.add across dimensions = [1] : ({t}, tensor<f32>) -> {s}")
    n = op(f"{scope}/norm", "constant", f"stablehlo.constant dense<{1.0 / WIDTH:e}> : {s}")
    mean = op(f"{scope}/norm", "mul", f"stablehlo.multiply {total}, {n} : {s}")
    mb = op(f"{scope}/norm", "broadcast_in_dim", f"stablehlo.broadcast_in_dim {mean}, dims = [0] : ({s}) -> {t}")
    centred = op(f"{scope}/norm", "sub", f"stablehlo.subtract {h}, {mb} : {t}")
    sq = op(f"{scope}/norm", "mul", f"stablehlo.multiply {centred}, {centred} : {t}")
    var = op(f"{scope}/norm", "reduce", f"stablehlo.reduce({sq} init: {zero}) applies stablehlo.add across dimensions = [1] : ({t}, tensor<f32>) -> {s}")
    eps = op(f"{scope}/norm", "constant", f"stablehlo.constant dense<1.000000e+00> : {s}")
    root = op(f"{scope}/norm", "rsqrt", f"stablehlo.rsqrt {op(f'{scope}/norm', 'add', f'stablehlo.add {var}, {eps} : {s}')} : {s}")
    rb = op(f"{scope}/norm", "broadcast_in_dim", f"stablehlo.broadcast_in_dim {root}, dims = [0] : ({s}) -> {t}")
    normed = op(f"{scope}/norm", "mul", f"stablehlo.multiply {centred}, {rb} : {t}")
    return op(scope, "add", f"stablehlo.add {x}, {normed} : {t}")


def layers_for(ops: int) -> int:
    return max(1, round(ops / (OPS_PER_LAYER + 1)))


def weight_count(ops: int) -> int:
    return min(layers_for(ops), MAX_WEIGHTS)


def layered_program(ops: int, locations: bool = True) -> str:
    layers, weights = layers_for(ops), weight_count(ops)
    t = f"tensor<{ROWS}x{WIDTH}xf32>"
    lines: list[str] = []
    locs: dict[str, int] = {}
    counter = [0]

    def op(scope: str, mnemonic: str, text: str) -> str:
        name = f"%{counter[0]}"
        counter[0] += 1
        suffix = ""
        if locations:
            path = f"jit(model)/{scope}/{mnemonic}"
            alias = locs.setdefault(path, len(locs) + 1)
            suffix = f" loc(#loc{alias})"
        lines.append(f"    {name} = {text}{suffix}")
        return name

    x = "%arg0"
    for i in range(layers):
        k = i % weights
        x = _layer(i, x, f"%arg{1 + 2 * k}", f"%arg{2 + 2 * k}", lines, op)
    params = [f"%arg0: {t}"]
    for k in range(weights):
        params += [f"%arg{1 + 2 * k}: tensor<{WIDTH}x{WIDTH}xf32>", f"%arg{2 + 2 * k}: tensor<{WIDTH}xf32>"]
    head = "module @jit_model attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {"
    func = f"  func.func public @main({', '.join(params)}) -> ({t}) {{"
    tail = [f"    return {x} : {t}", "  }", "}"]
    text = "\n".join([head, func] + lines + tail) + "\n"
    if locations:
        text += '#loc = loc("model.py":1:0)\n' + "".join(f'#loc{n} = loc("{path}"(#loc))\n' for path, n in locs.items())
    return text


def inputs(ops: int, seed: int = 0) -> dict[str, np.ndarray]:
    """Arguments for `layered_program(ops)`, small enough that tanh keeps the values finite."""
    rng = np.random.default_rng(seed)
    args = {"arg0": rng.standard_normal((ROWS, WIDTH)).astype(np.float32)}
    for k in range(weight_count(ops)):
        args[f"arg{1 + 2 * k}"] = (rng.standard_normal((WIDTH, WIDTH)) / WIDTH).astype(np.float32)
        args[f"arg{2 + 2 * k}"] = (rng.standard_normal(WIDTH) / 10).astype(np.float32)
    return args


def loop_program(iterations: int) -> str:
    """A scalar while loop counting to `iterations`, summing as it goes."""
    return f"""func.func @main() -> tensor<f32> {{
  %zero = stablehlo.constant dense<0> : tensor<i64>
  %fzero = stablehlo.constant dense<0.0> : tensor<f32>
  %limit = stablehlo.constant dense<{iterations}> : tensor<i64>
  %one = stablehlo.constant dense<1> : tensor<i64>
  %half = stablehlo.constant dense<0.5> : tensor<f32>
  %r:2 = stablehlo.while(%i = %zero, %acc = %fzero) : tensor<i64>, tensor<f32>
    cond {{
      %c = stablehlo.compare LT, %i, %limit : (tensor<i64>, tensor<i64>) -> tensor<i1>
      stablehlo.return %c : tensor<i1>
    }} do {{
      %n = stablehlo.add %i, %one : tensor<i64>
      %a = stablehlo.add %acc, %half : tensor<f32>
      stablehlo.return %n, %a : tensor<i64>, tensor<f32>
    }}
  return %r#1 : tensor<f32>
}}
"""


def hex_constant_program(rows: int, cols: int) -> str:
    data = np.random.default_rng(0).standard_normal(rows * cols).astype(np.float32)
    t = f"tensor<{rows}x{cols}xf32>"
    return (f'func.func @main() -> {t} {{\n  %0 = stablehlo.constant dense<"0x{data.tobytes().hex().upper()}"> : {t}\n'
            f"  return %0 : {t}\n}}\n")


if __name__ == "__main__":
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    sys.stdout.write(layered_program(count, locations="--no-locations" not in sys.argv))
