"""The HLO parser on text JAX and XLA really print: pre-optimization (`as_text(dialect="hlo")`),
post-optimization (`compile().as_text()`), the full-constant re-print, and a `--xla_dump_to`
directory. XLA's own parser (jaxlib._hlo, private, test-only) is the oracle for which
instructions each computation holds. Skips without jax."""
from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from hlodbg.engine.syntax.hlo.literals import ElidedLiteral, parse_literal
from hlodbg.engine.syntax.hlo.parser import parse_hlo_modules

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
_hlo = pytest.importorskip("jaxlib._hlo")

_HEADER = re.compile(r"^(?:ENTRY )?%?([\w.\-]+)(?: \(.*\) -> .*)? \{$")
_INSTRUCTION = re.compile(r"^\s+(?:ROOT )?%?([\w.\-]+) = ")


def xla_structure(text: str) -> dict[str, set[str]]:
    """Computation -> instruction names, as XLA's parser reads `text` and prints it back."""
    printed = _hlo.hlo_module_from_text(text).to_string()
    structure: dict[str, set[str]] = {}
    current = None
    for line in printed.splitlines():
        if m := _HEADER.match(line):
            current = structure.setdefault(m.group(1), set())
        elif (m := _INSTRUCTION.match(line)) and current is not None:
            current.add(m.group(1))
    return structure


def our_structure(text: str) -> dict[str, set[str]]:
    (module,) = parse_hlo_modules(text, "jax.hlo")
    return {c.name: {i.name for i in c.instructions} for c in module.computations}


def decode_constants(text: str) -> int:
    """Decodes every constant's literal; returns how many were elided."""
    elided = 0
    for module in parse_hlo_modules(text, "jax.hlo"):
        for computation in module.computations:
            for instruction in computation.instructions:
                if instruction.opcode == "constant":
                    value = parse_literal(instruction.literal, instruction.literal_pos,
                                          instruction.shape)
                    elided += isinstance(value, ElidedLiteral)
    return elided


def _mlp(x, w):
    h = jnp.tanh(x @ w + jnp.arange(w.shape[1], dtype=x.dtype))
    return jax.nn.softmax(h).sum(0), h.max()


def _loop_and_cond(x, w):
    def body(i, carry):
        return jax.lax.cond(i % 2 == 0, lambda c: c * 1.5, lambda c: c - w[0, :4].sum(), carry)
    y = jax.lax.fori_loop(0, 5, body, x[:, :4])
    return jnp.sort(y, axis=0), jnp.argsort(y[:, 0])


_TABLE = np.random.default_rng(0).standard_normal((2, 12)).astype(np.float32)


def _mixed(x, w):
    idx = jnp.array([0, 2, 2, 1], dtype=jnp.int32)
    scattered = jnp.zeros((4, 8), jnp.bfloat16).at[idx].add(x.astype(jnp.bfloat16))
    spectrum = jnp.fft.fft(x[0].astype(jnp.complex64))
    table = _TABLE  # a constant over 10 elements: post-optimization text elides it
    return scattered, spectrum, table * w[0, 0], jnp.uint8(200) + x.astype(jnp.uint8)


def _conv_scan_random(x, w):
    image = x.reshape(1, 4, 8, 1)
    kernel = w[:3, :3].reshape(3, 3, 1, 1)
    conv = jax.lax.conv_general_dilated(image, kernel, (1, 1), "SAME",
                                        dimension_numbers=("NHWC", "HWIO", "NHWC"))
    pooled = jax.lax.reduce_window(conv, -jnp.inf, jax.lax.max, (1, 2, 2, 1), (1, 2, 2, 1),
                                   "VALID")
    _, states = jax.lax.scan(lambda h, row: (jnp.tanh(h + row), h), jnp.zeros(8), x)
    noise = jax.random.uniform(jax.random.PRNGKey(3), (4,))
    top, where = jax.lax.top_k(x.ravel(), 3)
    return pooled, states, noise, top, where, jnp.left_shift(x.astype(jnp.int32), 2)


FUNCTIONS = [_mlp, _loop_and_cond, _mixed, _conv_scan_random]
ARGS = (np.linspace(-2, 2, 32, dtype=np.float32).reshape(4, 8),
        np.linspace(1, -1, 128, dtype=np.float32).reshape(8, 16))


@pytest.fixture(scope="module", params=FUNCTIONS, ids=lambda f: f.__name__)
def lowered(request):
    return jax.jit(request.param).lower(*ARGS)


def test_pre_optimization_text_parses_like_xla_reads_it(lowered):
    text = lowered.as_text(dialect="hlo")
    assert our_structure(text) == xla_structure(text)
    assert decode_constants(text) == 0


def test_post_optimization_text_parses_like_xla_reads_it(lowered):
    text = lowered.compile().as_text()
    assert our_structure(text) == xla_structure(text)
    (module,) = parse_hlo_modules(text, "post.hlo")
    assert module.attrs["is_scheduled"].text == "true"
    decode_constants(text)


def test_full_constant_reprint_decodes_every_constant(lowered):
    module = _hlo.hlo_module_from_text(lowered.compile().as_text())
    text = module.to_string(_hlo.HloPrintOptions.short_parsable())
    assert our_structure(text) == xla_structure(text)
    assert decode_constants(text) == 0


def test_the_elided_constant_of_post_optimization_text_is_marked():
    text = jax.jit(_mixed).lower(*ARGS).compile().as_text()
    assert "{...}" in text
    assert decode_constants(text) >= 1


def test_constant_values_match_what_jax_computed():
    table = np.arange(-6, 6, dtype=np.float32).reshape(3, 4) / 4
    text = jax.jit(lambda x: x + table).lower(np.zeros((3, 4), np.float32)).as_text(
        dialect="hlo")
    (module,) = parse_hlo_modules(text, "c.hlo")
    constants = [i for i in module.entry.instructions if i.opcode == "constant"]
    values = [parse_literal(c.literal, c.literal_pos, c.shape) for c in constants]
    assert any(v.shape == (3, 4) and np.array_equal(v, table) for v in values)


_DUMP_SCRIPT = textwrap.dedent("""
    import jax, jax.numpy as jnp
    def f(x, y):
        return jnp.tanh(x @ y).sum(0), jax.lax.fori_loop(0, 3, lambda i, c: c * 2.0, x).max()
    jax.jit(f)(jnp.ones((4, 8)), jnp.ones((8, 16))).__repr__()
""")
_NOT_MODULES = ("buffer-assignment", "memory-usage-report", "live-range", "debug_options")


def test_every_module_of_a_dump_directory_parses(tmp_path):
    env = dict(os.environ, XLA_FLAGS=f"--xla_dump_to={tmp_path} --xla_dump_hlo_pass_re=.*",
               JAX_PLATFORMS="cpu")
    subprocess.run([sys.executable, "-c", _DUMP_SCRIPT], env=env, check=True, timeout=300)
    files = [p for p in sorted(tmp_path.glob("*.txt"))
             if not any(marker in p.name for marker in _NOT_MODULES)]
    assert len(files) > 10
    for path in files:
        text = path.read_text()
        modules = parse_hlo_modules(text, str(path))
        assert modules and all(m.entry is not None for m in modules)
        decode_constants(text)
    after = [p for p in files if p.name.endswith("after_optimizations.txt")]
    assert after and our_structure(after[0].read_text()) == xla_structure(after[0].read_text())


_SPMD_SCRIPT = textwrap.dedent("""
    import sys
    import jax, jax.numpy as jnp, numpy as np
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
    mesh = Mesh(np.array(jax.devices()).reshape(2, 4), ("x", "y"))
    def per_device(a):
        total = jax.lax.psum(a, "x")
        gathered = jax.lax.all_gather(total, "y")
        shifted = jax.lax.ppermute(a, "y", [(i, (i + 1) % 4) for i in range(4)])
        return gathered.sum(0) + shifted
    programs = {
        "shard_map": jax.jit(jax.shard_map(per_device, mesh=mesh, in_specs=P("x", "y"),
                                           out_specs=P("x", "y"))),
        "gspmd": jax.jit(lambda a: (a @ a.T).sum(1),
                         in_shardings=NamedSharding(mesh, P("x", "y"))),
    }
    x = jnp.arange(64.0).reshape(8, 8)
    for name, program in programs.items():
        lowered = program.lower(x)
        open(f"{sys.argv[1]}/{name}.pre.txt", "w").write(lowered.as_text(dialect="hlo"))
        open(f"{sys.argv[1]}/{name}.post.txt", "w").write(lowered.compile().as_text())
""")


def test_spmd_programs_on_eight_devices_parse_like_xla_reads_them(tmp_path):
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=8",
               JAX_PLATFORMS="cpu")
    subprocess.run([sys.executable, "-c", _SPMD_SCRIPT, str(tmp_path)], env=env, check=True,
                   timeout=300)
    files = sorted(tmp_path.glob("*.txt"))
    assert len(files) == 4
    for path in files:
        text = path.read_text()
        assert our_structure(text) == xla_structure(text), path.name
    post = parse_hlo_modules((tmp_path / "shard_map.post.txt").read_text(), "spmd.hlo")[0]
    assert post.attrs["num_partitions"].text == "8"
    groups = [i.attrs["replica_groups"].text for c in post.computations
              for i in c.instructions if "replica_groups" in i.attrs]
    assert groups and all(g.startswith(("{", "[", "mesh")) for g in groups)
