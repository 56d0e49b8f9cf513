"""The HLO differential corpus: small JAX programs, and a generator writing each in every form XLA
prints it in, with its inputs and XLA's outputs (tests/test_hlo_differential.py runs them).

Importing this module needs no JAX: `CORPUS` describes every program (name, mesh, how exactly
hlodbg must reproduce it and why); the JAX functions are built only inside the generator, which
runs in a subprocess with `XLA_FLAGS=--xla_force_host_platform_device_count=8` set before JAX is
imported (the flag is read once, when JAX's CPU backend starts).

For each program NAME the generator writes into the cache directory:
- `NAME.pre.hlo`          `jax.jit(f).lower(*args).as_text(dialect="hlo")` (pre-optimization, global)
- `NAME.post.hlo`         the compiled module printed with full constants and metadata
- `NAME.post_parsable.hlo` the same in XLA's short parsable form (no `%`, signatures or metadata)
- `NAME.post_elided.hlo`  `compiled.as_text()` (constants over 10 elements printed as `{...}`)
- `NAME.stablehlo.mlir`   `jax.jit(f).lower(*args).as_text()`
- `NAME.npz`              `arg{i}` / `out{i}` (global values); for SPMD programs also the local
                          shards per partition `arg{i}.dev{p}` / `out{i}.dev{p}`, and `partitions`
and `dump/` (the MLP compiled with `xla_dump_to` and full constants: XLA's own dump files).

Run it by hand: `python tests/hlo_corpus.py DIR`.
"""
from __future__ import annotations

import os
import subprocess
import sys
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

DEVICE_COUNT = 8
_DEVICE_FLAG = f"--xla_force_host_platform_device_count={DEVICE_COUNT}"

# The program compiled a second time with XLA's dump flags (its files land in `dump/`).
DUMPED = "mlp"


@dataclass(frozen=True)
class Tolerance:
    """How closely hlodbg must reproduce XLA: `rtol` relative to the largest magnitude of each
    output (0 = bit-exact values, NaN meeting NaN), and why the program needs that much."""

    rtol: float
    why: str


EXACT = Tolerance(0.0, "integer, data-movement and comparison ops only, or float ops on values they represent "
                       "exactly: XLA and hlodbg must agree bit for bit")


@dataclass(frozen=True)
class CorpusProgram:
    name: str
    build: Callable  # (jax, jnp, np, rng, meshes) -> (function or jitted function, [inputs])
    tolerance: Tolerance
    mesh: Optional[tuple[int, ...]] = None  # sharded programs: the mesh shape on the 8 devices
    elides_constants: bool = False  # compile().as_text() prints one of its constants as {...}

    @property
    def spmd(self) -> bool:
        return self.mesh is not None


# -- the programs (each builder imports nothing: the generator hands it jax, jnp and numpy) --------


def _normal(np, rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


def _integers(np, rng, *shape, dtype="float32"):
    """Small integer values (exact in f32, so sums in any order give the same bits)."""
    return rng.integers(-8, 9, size=shape).astype(dtype)


def _mlp(jax, jnp, np, rng, meshes):
    # A constant of 32 elements closed over: compile().as_text() elides it (more than 10 elements).
    bias_shift = np.linspace(-1.0, 1.0, 32).astype(np.float32)

    def mlp(x, w1, b1, w2, b2):
        h = jax.nn.relu(x @ w1 + b1 + bias_shift)
        logits = h @ w2 + b2
        return logits, jax.nn.log_softmax(logits).mean()

    return mlp, [_normal(np, rng, 8, 16), _normal(np, rng, 16, 32), _normal(np, rng, 32),
                 _normal(np, rng, 32, 4), _normal(np, rng, 4)]


def _layer_norm(jnp, x, gamma, beta):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / jnp.sqrt(var + 1e-5) * gamma + beta


def _transformer_block(jax, jnp, np, rng, meshes):
    def block(x, wq, wk, wv, wo, w1, w2, gamma, beta):
        h = _layer_norm(jnp, x, gamma, beta)
        q, k, v = h @ wq, h @ wk, h @ wv
        scores = (q @ k.T) / np.float32(4.0)
        causal = jnp.tril(jnp.ones((8, 8), bool))
        attention = jax.nn.softmax(jnp.where(causal, scores, -1e9), axis=-1)
        x = x + (attention @ v) @ wo
        h = _layer_norm(jnp, x, gamma, beta)
        return x + jax.nn.gelu(h @ w1, approximate=False) @ w2  # exact gelu: erf

    d = 16
    weights = [_normal(np, rng, d, d) * 0.3 for _ in range(4)]
    return block, [_normal(np, rng, 8, d), *weights, _normal(np, rng, d, 32) * 0.3, _normal(np, rng, 32, d) * 0.3,
                   1.0 + 0.1 * _normal(np, rng, d), 0.1 * _normal(np, rng, d)]


def _cnn(jax, jnp, np, rng, meshes):
    lax = jax.lax

    def cnn(images, kernel, dense):
        y = lax.conv_general_dilated(images, kernel, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))
        y = jax.nn.relu(y)
        pooled_max = lax.reduce_window(y, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
        pooled_avg = lax.reduce_window(y, 0.0, lax.add, (1, 2, 2, 1), (1, 2, 2, 1), "VALID") / 4.0
        features = (pooled_max + pooled_avg).reshape(images.shape[0], -1)
        return features @ dense, pooled_max

    return cnn, [_normal(np, rng, 2, 8, 8, 3), _normal(np, rng, 3, 3, 3, 4), _normal(np, rng, 64, 5)]


def _scan_rnn(jax, jnp, np, rng, meshes):
    def rnn(h0, xs, wx, wh):
        def cell(h, x):
            h = jnp.tanh(x @ wx + h @ wh)
            return h, h.sum(-1)

        return jax.lax.scan(cell, h0, xs)

    return rnn, [_normal(np, rng, 4, 8), _normal(np, rng, 6, 4, 3), _normal(np, rng, 3, 8) * 0.5,
                 _normal(np, rng, 8, 8) * 0.3]


def _cond_switch(jax, jnp, np, rng, meshes):
    lax = jax.lax
    branches = [lambda x: x * 2.0, lambda x: x - 1.0, lambda x: -x, lambda x: x * x]

    def cond_switch(x, index, far_index):
        by_sign = lax.cond(x.sum() > 0, lambda v: v + 1.0, lambda v: v * 3.0, x)
        by_negated_sign = lax.cond(x.sum() <= 0, lambda v: v + 1.0, lambda v: v * 3.0, x)
        # lax.switch clamps the index: far_index (out of range) takes the last branch.
        return by_sign, by_negated_sign, lax.switch(index, branches, x), lax.switch(far_index, branches, x)

    return cond_switch, [_integers(np, rng, 3, 4), np.int32(1), np.int32(7)]


def _sort_topk(jax, jnp, np, rng, meshes):
    def sort_topk(x, keys):
        values, indices = jax.lax.top_k(x, 3)
        by_key = jax.lax.sort((keys, x), dimension=1, num_keys=1, is_stable=True)
        return jnp.sort(x, axis=1), jnp.argsort(x, axis=1, stable=True), values, indices, by_key[1]

    # Ties on purpose: stable sorts and top_k must keep the first occurrence first.
    return sort_topk, [_integers(np, rng, 4, 10), rng.integers(0, 3, size=(4, 10)).astype(np.int32)]


def _gather_scatter(jax, jnp, np, rng, meshes):
    def gather_scatter(table, updates, idx, counts, along):
        added = table.at[idx].add(updates)  # idx repeats rows: the duplicates accumulate
        counted = counts.at[idx].add(1)
        largest = table.at[idx].max(updates)
        taken = jnp.take_along_axis(table, along, axis=1)
        return added, counted, largest, taken, table[idx]

    idx = np.array([0, 2, 2, 5, 0, 2], np.int32)
    return gather_scatter, [_integers(np, rng, 6, 4), _integers(np, rng, 6, 4), idx, np.zeros(6, np.int32),
                            rng.integers(0, 4, size=(6, 3)).astype(np.int32)]


def _fft(jax, jnp, np, rng, meshes):
    def fft(signal, real):
        spectrum = jnp.fft.rfft(real)
        return jnp.fft.fft(signal), spectrum, jnp.fft.irfft(spectrum * 0.5, n=16), jnp.fft.ifft2(signal.reshape(2, 4))

    signal = (_normal(np, rng, 8) + 1j * _normal(np, rng, 8)).astype(np.complex64)
    return fft, [signal, _normal(np, rng, 16)]


def _random_bits(jax, jnp, np, rng, meshes):
    def random_bits(key):
        first, second = jax.random.split(key)
        return (jax.random.bits(first, (4, 8), jnp.uint32), jax.random.normal(second, (16,)),
                jax.random.uniform(second, (3, 5)), jax.random.randint(first, (6,), 0, 100))

    return random_bits, [np.asarray(jax.random.key_data(jax.random.PRNGKey(42)))]


def _bf16_mixed(jax, jnp, np, rng, meshes):
    bf16 = jnp.bfloat16

    def mixed(x, w, gamma):
        wide = jnp.dot(x, w, preferred_element_type=jnp.float32)  # bf16 inputs, f32 accumulation
        normed = _layer_norm(jnp, wide, gamma[:8].astype(jnp.float32), 0.0)
        return normed.astype(bf16), wide, (x * gamma).sum(0)

    return mixed, [_normal(np, rng, 8, 16).astype(bf16), _normal(np, rng, 16, 8).astype(bf16),
                   _normal(np, rng, 16).astype(bf16)]


def _int_overflow_shifts(jax, jnp, np, rng, meshes):
    lax = jax.lax

    def int_ops(a, b, shifts, u):
        return (a * b, a + np.int32(2**31 - 1), -a, lax.shift_left(a, shifts), lax.shift_right_arithmetic(a, shifts),
                lax.shift_right_logical(a, shifts), lax.shift_left(u, shifts.astype(jnp.uint32)),
                u - np.uint32(3), u * np.uint32(0x9E3779B9), lax.div(a, b), lax.rem(a, b),
                lax.population_count(a), lax.clz(u), u // np.uint32(7))

    a = np.array([2**31 - 1, -2**31, -7, 65536, 123456789, -1, 0, 46341], np.int32)
    b = np.array([2, -1, 2, 65536, 0, -1, 0, -46341], np.int32)  # INT_MIN / -1 and division by zero on purpose
    shifts = np.array([0, 1, 31, 32, 33, 40, -1, 5], np.int32)  # shift counts at and over the width
    u = np.array([0, 1, 2, 0xFFFFFFFF, 0x80000000, 12345, 7, 0x7FFFFFFF], np.uint32)
    return int_ops, [a, b, shifts, u]


def _complex_math(jax, jnp, np, rng, meshes):
    def complex_math(z, w):
        return jnp.exp(z), jnp.log(z), jnp.sqrt(z), jnp.abs(z), z * w, z / w

    z = np.array([1 + 1j, -2 + 0.5j, 0.25 - 3j, -1 - 1j, 3 + 0j, -4 + 0j, 0.5j, 1e-3 + 2j], np.complex64)
    return complex_math, [z, (_normal(np, rng, 8) + 1j * _normal(np, rng, 8)).astype(np.complex64)]


def _nan_loop(jax, jnp, np, rng, meshes):
    def nan_loop(x):
        # x grows a thousandfold a step until it overflows to inf; inf - inf makes the carry NaN, which
        # ends the loop: the iteration count says when it happened.
        def cond(carry):
            i, _, difference = carry
            return (i < 40) & ~jnp.isnan(difference).any()

        def body(carry):
            i, value, _ = carry
            value = value * 1000.0
            return i + 1, value, value - value

        return jax.lax.while_loop(cond, body, (jnp.int32(0), x, jnp.zeros_like(x)))

    return nan_loop, [np.array([1.0, -2.0, 0.5, 3.0], np.float32)]


def _shard_map(jax, function, mesh, in_specs, out_specs):
    try:
        from jax import shard_map
    except ImportError:  # older JAX
        from jax.experimental.shard_map import shard_map
    # The outputs declared replicated are (psum, all_gather): no need for JAX's static check.
    return shard_map(function, mesh=mesh, in_specs=in_specs, out_specs=out_specs, check_vma=False)


def _spmd_4x2(jax, jnp, np, rng, meshes):
    from jax.sharding import PartitionSpec as P

    lax = jax.lax

    def body(a, b):
        summed = lax.psum(a * (lax.axis_index("x") + 1.0), "y")
        gathered = lax.all_gather(b, "x", axis=0, tiled=True)
        return summed, gathered + lax.axis_index("y").astype(jnp.float32) * 100.0

    function = _shard_map(jax, body, meshes[(4, 2)], (P("x", "y"), P("x", "y")), (P("x", None), P(None, "y")))
    return function, [_integers(np, rng, 8, 4), _integers(np, rng, 8, 6)]


def _spmd_8(jax, jnp, np, rng, meshes):
    from jax.sharding import PartitionSpec as P

    lax = jax.lax

    def body(a, b, c):
        ring = lax.ppermute(a, "i", [(k, (k + 1) % 8) for k in range(8)])
        exchanged = lax.all_to_all(b, "i", 1, 0, tiled=True)
        scattered = lax.psum_scatter(c, "i", scatter_dimension=0, tiled=True)
        return ring + lax.axis_index("i").astype(jnp.float32), exchanged, scattered, lax.psum(a.sum(), "i")

    function = _shard_map(jax, body, meshes[(8,)], (P("i"), P("i"), P()), (P("i"), P("i"), P("i"), P()))
    return function, [_integers(np, rng, 16, 3), _integers(np, rng, 16, 8), _integers(np, rng, 16, 2)]


def _sharded_mlp(jax, jnp, np, rng, meshes):
    """No shard_map: jit with sharded arguments, partitioned by XLA (its post-optimization module
    holds the collectives and partition-id arithmetic the partitioner inserted)."""
    from jax.sharding import NamedSharding, PartitionSpec as P

    mesh = meshes[(4, 2)]

    def sharded_mlp(x, w1, w2):
        h = jax.nn.relu(x @ w1)
        return h @ w2, h.sum(0)

    shardings = (NamedSharding(mesh, P("x", None)), NamedSharding(mesh, P(None, "y")), NamedSharding(mesh, P("y", None)))
    function = jax.jit(sharded_mlp, in_shardings=shardings)
    return function, [_integers(np, rng, 8, 16), _integers(np, rng, 16, 8), _integers(np, rng, 8, 4)]


FLOAT_SUMS = ("f32 contractions and reductions: XLA's CPU kernels (Eigen/YNNPACK) sum in another order and "
              "with FMA; relu/exp/log/tanh/erf differ by a few ulps between XLA's polynomials and numpy")

CORPUS: list[CorpusProgram] = [
    CorpusProgram("mlp", _mlp, Tolerance(1e-5, FLOAT_SUMS), elides_constants=True),
    CorpusProgram("transformer_block", _transformer_block, Tolerance(1e-5, FLOAT_SUMS + "; softmax, layernorm")),
    CorpusProgram("cnn", _cnn, Tolerance(1e-5, FLOAT_SUMS + "; convolution is a contraction")),
    CorpusProgram("scan_rnn", _scan_rnn, Tolerance(1e-5, FLOAT_SUMS + "; six steps of tanh feed back")),
    CorpusProgram("cond_switch", _cond_switch, EXACT),
    CorpusProgram("sort_topk", _sort_topk, EXACT),
    CorpusProgram("gather_scatter", _gather_scatter, EXACT),
    CorpusProgram("fft", _fft, Tolerance(1e-5, "XLA's FFT (DUCC) and numpy's pocketfft order the butterflies "
                                               "differently")),
    CorpusProgram("random_bits", _random_bits, Tolerance(
        1e-6, "threefry bits are integers (exact); normal() goes through erf_inv, a polynomial XLA may fuse "
              "with FMA, so the floats may differ in the last bits")),
    CorpusProgram("bf16_mixed", _bf16_mixed, Tolerance(
        1e-2, "bf16 results: XLA may skip rounding a bf16 intermediate (excess precision) and an f32 sum "
              "order change moves a bf16 rounding by one bf16 ulp (2^-8)")),
    CorpusProgram("int_overflow_shifts", _int_overflow_shifts, EXACT),
    CorpusProgram("complex_math", _complex_math, Tolerance(
        1e-5, "complex exp/log/sqrt/abs/div: XLA's own formulas (hypot, scaled division) round differently")),
    CorpusProgram("nan_loop", _nan_loop, EXACT),
    CorpusProgram("spmd_4x2", _spmd_4x2, EXACT, mesh=(4, 2)),
    CorpusProgram("spmd_8", _spmd_8, EXACT, mesh=(8,)),
    CorpusProgram("sharded_mlp", _sharded_mlp, Tolerance(0.0, "small integer values: every product and partial "
                                                              "sum is exact in f32, in any order"), mesh=(4, 2)),
]

BY_NAME = {program.name: program for program in CORPUS}


# -- the generator -----------------------------------------------------------------------------------


def generate(cache_dir: Path, timeout: float = 600) -> None:
    """Write every program's forms into `cache_dir`, in a subprocess JAX starts in with 8 host
    devices. Raises RuntimeError with the subprocess's error output when it fails."""
    cache_dir.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, XLA_FLAGS=_DEVICE_FLAG, JAX_PLATFORMS="cpu")
    done = subprocess.run([sys.executable, str(Path(__file__).resolve()), str(cache_dir)], env=env,
                          capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        raise RuntimeError(f"the HLO corpus generator failed:\n{done.stderr[-4000:]}")


def _post_optimization_texts(compiled) -> tuple[str, str]:
    """The compiled module with every constant printed (compile().as_text() elides those over 10
    elements): with its metadata and signatures (XLA's default options), and in XLA's short
    parsable form (no `%`, no signatures, no metadata)."""
    from jaxlib import _hlo

    modules = compiled.runtime_executable().hlo_modules()
    assert len(modules) == 1, f"{len(modules)} compiled modules"
    options = _hlo.HloPrintOptions()
    options.print_large_constants = True
    return modules[0].to_string(options), modules[0].to_string(_hlo.HloPrintOptions.short_parsable())


def _write_program(program: CorpusProgram, out: Path, jax, jnp, np, meshes) -> None:
    from jaxlib import _hlo

    rng = np.random.default_rng(zlib.crc32(program.name.encode()))  # the same inputs every session
    function, inputs = program.build(jax, jnp, np, rng, meshes)
    jitted = function if hasattr(function, "lower") else jax.jit(function)
    lowered = jitted.lower(*inputs)
    compiled = lowered.compile()
    (post, parsable), elided = _post_optimization_texts(compiled), compiled.as_text()
    forms = {"pre": lowered.as_text(dialect="hlo"), "post": post, "post_parsable": parsable, "post_elided": elided}
    for form, text in forms.items():
        _hlo.hlo_module_from_text(text)  # XLA's own parser takes every form: a failure here is the corpus's
        (out / f"{program.name}.{form}.hlo").write_text(text)
    (out / f"{program.name}.stablehlo.mlir").write_text(lowered.as_text())
    if program.elides_constants:
        assert "{...}" in elided and "{...}" not in post, f"{program.name}: expected an elided constant"
    outputs = jax.tree_util.tree_leaves(compiled(*inputs))
    arrays = {f"arg{i}": np.asarray(a) for i, a in enumerate(inputs)}
    arrays.update({f"out{i}": np.asarray(o) for i, o in enumerate(outputs)})
    if program.spmd:
        # The post-optimization module is the program of one partition: it takes the partition's
        # local shards and returns its local results. Partition p runs on the p-th device of the
        # executable's device assignment.
        devices = list(compiled.runtime_executable().local_devices())
        assert len(devices) == DEVICE_COUNT
        partition = {device: p for p, device in enumerate(devices)}
        for i, (value, sharding) in enumerate(zip(inputs, compiled.input_shardings[0])):
            for shard in jax.device_put(value, sharding).addressable_shards:
                arrays[f"arg{i}.dev{partition[shard.device]}"] = np.asarray(shard.data)
        for i, output in enumerate(outputs):
            for shard in output.addressable_shards:
                arrays[f"out{i}.dev{partition[shard.device]}"] = np.asarray(shard.data)
        arrays["partitions"] = np.int64(len(devices))
        arrays["device_ids"] = np.array([d.id for d in devices], np.int64)
    np.savez(out / f"{program.name}.npz", **_encoded(arrays, np))
    if program.name == DUMPED:
        _dump(jitted, inputs, out / "dump")


# npz keeps numpy's own dtypes only: other ones (bfloat16) are stored as their bits plus the dtype's name.
_DTYPE_SUFFIX = ".dtype"


def _encoded(arrays: dict, np) -> dict:
    encoded = {}
    for key, array in arrays.items():
        if array.dtype.kind == "V":
            encoded[key + _DTYPE_SUFFIX] = np.str_(array.dtype.name)
            array = array.view(f"u{array.dtype.itemsize}")
        encoded[key] = array
    return encoded


def load_arrays(path: Path) -> dict:
    """A program's `.npz` as {key: array}, bfloat16 and the other ml_dtypes restored."""
    import ml_dtypes
    import numpy as np

    with np.load(path) as data:
        arrays = {key: data[key] for key in data.files if not key.endswith(_DTYPE_SUFFIX)}
        for key in data.files:
            if key.endswith(_DTYPE_SUFFIX):
                name = key[: -len(_DTYPE_SUFFIX)]
                arrays[name] = arrays[name].view(getattr(ml_dtypes, str(data[key])))
    return arrays


def _dump(jitted, inputs, directory: Path) -> None:
    """XLA's own dump files of one compilation, with full constants (--xla_dump_to,
    --xla_dump_large_constants given as compiler options: the flags of this one compile)."""
    jitted.lower(*inputs).compile(compiler_options={"xla_dump_to": str(directory), "xla_dump_large_constants": True})


def _main(out: Path) -> None:
    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax.sharding import Mesh

    devices = np.array(jax.devices())
    assert len(devices) == DEVICE_COUNT, f"XLA_FLAGS gave {len(devices)} devices, not {DEVICE_COUNT}"
    meshes = {(4, 2): Mesh(devices.reshape(4, 2), ("x", "y")), (8,): Mesh(devices, ("i",))}
    out.mkdir(parents=True, exist_ok=True)
    for program in CORPUS:
        _write_program(program, out, jax, jnp, np, meshes)


if __name__ == "__main__":
    if _DEVICE_FLAG in os.environ.get("XLA_FLAGS", ""):
        _main(Path(sys.argv[1]))
    else:  # by hand: start again with the flag set before JAX is imported
        generate(Path(sys.argv[1]))
