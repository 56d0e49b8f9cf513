"""Differential tests across op families: JAX lowers each case, XLA on the CPU is the oracle.

One table of (family, function) × dtypes; hypothesis draws the shapes. Each case is lowered with
`jax.jit(f).lower(...).as_text()`, run by hlodbg and compared with `jax.jit(f)(...)`: integers and
booleans exactly, floats within a few ULP of the result type (bf16/f16 within one rounding).
The per-family test files go deeper into each op's corners; this table checks that the families
compose the way real programs use them.
"""
from __future__ import annotations

import numpy as np
import pytest

import hlodbg

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


FLOATS = ["float32", "bfloat16", "float16", "float64"]
INTS = ["int32", "int8", "uint32", "int64"]


def _softmax(x):
    return jax.nn.softmax(x, axis=-1)


def _layer_norm(x):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) * jax.lax.rsqrt(var + 1e-5)


def _attention(x):
    scores = x @ x.swapaxes(-1, -2) / float(x.shape[-1]) ** 0.5
    return jax.nn.softmax(scores, axis=-1) @ x


def _scan_cumsum(x):
    def step(carry, row):
        carry = carry + row
        return carry, carry * 2

    return jax.lax.scan(step, jnp.zeros_like(x[0]), x)


def _sort_and_rank(x):
    order = jnp.argsort(x, axis=-1)
    return jnp.sort(x, axis=-1), order, jnp.take_along_axis(x, order, axis=-1)


def _top_k(x):
    return jax.lax.top_k(x, min(3, x.shape[-1]))


def _pooling(x):
    window = (1,) * (x.ndim - 1) + (min(2, x.shape[-1]),)
    return jax.lax.reduce_window(x, -jnp.inf, jax.lax.max, window, window, "VALID")


def _gather_scatter(x):
    idx = jnp.arange(x.shape[0]) % max(1, x.shape[0] // 2)
    return x[idx], jnp.zeros_like(x).at[idx].add(x), x.at[idx].max(x * 2)


def _conv(x):
    img = x.reshape((-1, 1) + x.shape[-2:])
    kernel = jnp.ones((2, 1, 1, 1), x.dtype)
    return jax.lax.conv_general_dilated(img, kernel, (1, 1), "SAME")


def _int_mix(x):
    y = (x * 3 + 7) // jnp.where(x == 0, 1, x)
    return y, x % 5, jnp.clip(x, -3, 3), (x >> 1) ^ (x << 2), x.sum(axis=-1), x.max(axis=0)


def _float_mix(x):
    return jnp.exp(x) - jnp.log1p(jnp.abs(x)), jnp.tanh(x) * jnp.sin(x), jnp.where(x > 0, jnp.sqrt(x), -x), x.mean(0)


def _control_flow(x):
    def body(i, acc):
        return jax.lax.cond(i % 2 == 0, lambda a: a * 2, lambda a: a - 1, acc)

    return jax.lax.fori_loop(0, 5, body, x)


def _convert_chain(x):
    return x.astype(jnp.float32).astype(jnp.bfloat16).astype(jnp.int32), jnp.round(x), jnp.floor(x), jnp.sign(x)


CASES = {
    "softmax": (_softmax, FLOATS, 1),
    "layer_norm": (_layer_norm, FLOATS, 1),
    "attention": (_attention, ["float32", "bfloat16", "float64"], 2),
    "scan": (_scan_cumsum, FLOATS + INTS, 1),
    "sort": (_sort_and_rank, ["float32", "bfloat16", "int32", "uint32"], 1),
    "top_k": (_top_k, ["float32", "int32"], 1),
    "pooling": (_pooling, ["float32", "bfloat16"], 1),
    "gather_scatter": (_gather_scatter, ["float32", "int32", "bfloat16"], 1),
    "conv": (_conv, ["float32", "float16"], 2),
    "int_mix": (_int_mix, INTS, 1),
    "float_mix": (_float_mix, FLOATS, 1),
    "control_flow": (_control_flow, ["float32", "int32"], 1),
    "convert": (_convert_chain, ["float32", "float16", "float64"], 1),
}

TABLE = [(name, dtype) for name, (_, dtypes, _) in CASES.items() for dtype in dtypes]


def _random_input(rng: np.random.Generator, shape, dtype: str) -> np.ndarray:
    if dtype.startswith(("int", "uint")):
        info = np.iinfo(dtype)
        return rng.integers(max(info.min, -50), min(info.max, 50) + 1, size=shape).astype(dtype)
    values = rng.standard_normal(shape) * 2
    return np.asarray(jnp.asarray(values, dtype=dtype))


def _tolerance(dtype) -> float:
    name = str(dtype)
    return {"bfloat16": 2e-2, "float16": 2e-3, "float32": 2e-5, "float64": 1e-10}.get(name, 0.0)


def _compare(actual, expected, label):
    expected = np.asarray(expected)
    actual = np.asarray(actual)
    assert actual.shape == expected.shape, f"{label}: shape {actual.shape} vs {expected.shape}"
    assert str(actual.dtype) == str(expected.dtype), f"{label}: dtype {actual.dtype} vs {expected.dtype}"
    if expected.dtype.kind in "iub":
        np.testing.assert_array_equal(actual, expected, err_msg=label)
        return
    tol = _tolerance(expected.dtype)
    a = actual.astype(np.float64)
    e = expected.astype(np.float64)
    np.testing.assert_allclose(a, e, rtol=tol, atol=tol, equal_nan=True, err_msg=label)


@pytest.mark.parametrize("name,dtype", TABLE, ids=[f"{n}-{d}" for n, d in TABLE])
@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_family_against_xla(name, dtype, data):
    fn, _, min_rank = CASES[name]
    rank = data.draw(st.integers(min_rank, 3), label="rank")
    shape = tuple(data.draw(st.lists(st.integers(1, 6), min_size=rank, max_size=rank), label="shape"))
    seed = data.draw(st.integers(0, 2**16), label="seed")
    # 64-bit types need JAX's x64 mode; switched on for this case only, never globally.
    with jax.enable_x64(True):
        x = _random_input(np.random.default_rng(seed), shape, dtype)
        jitted = jax.jit(fn)
        text = jitted.lower(x).as_text()
        expected = jax.tree_util.tree_leaves(jitted(x))
    actual = hlodbg.load(text).run(x)
    assert len(actual) == len(expected)
    for i, (a, e) in enumerate(zip(actual, expected)):
        _compare(a, e, f"{name}[{dtype}] {shape} result{i}")
