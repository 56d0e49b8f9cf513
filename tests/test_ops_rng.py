"""rng_bit_generator bit for bit against XLA's CPU backend, and the implementation-defined rng."""
from __future__ import annotations

import numpy as np
import pytest

import hlodbg
from hlodbg.engine import ExecutionError
from hlodbg.engine.run.interpreter import Interpreter


def run(text: str, *args):
    return Interpreter(hlodbg.load(text).module).run("main", list(args))


def generator_program(algorithm: str, state_words: int, shape: str, element: str) -> str:
    state = f"tensor<{state_words}xui64>"
    out = f"tensor<{shape}{element}>"
    return f"""
func.func @main(%s: {state}) -> ({state}, {out}) {{
  %new, %bits = stablehlo.rng_bit_generator %s, algorithm = {algorithm} : ({state}) -> ({state}, {out})
  return %new, %bits : {state}, {out}
}}"""


# -- rng_bit_generator: fixed values ----------------------------------------------------------


def test_threefry_matches_the_spec_example():
    new, bits = run(generator_program("THREE_FRY", 2, "2x2x", "ui64"), np.array([1, 2], np.uint64))
    assert new.tolist() == [1, 6]
    assert bits.tolist() == [[9236835810183407956, 16087790271692313299],
                             [18212823393184779219, 2658481902456610144]]


def test_default_is_philox_on_cpu():
    key = np.array([7, 9], np.uint64)
    default = run(generator_program("DEFAULT", 2, "5x3x", "ui32"), key)
    philox = run(generator_program("PHILOX", 2, "5x3x", "ui32"), key)
    for a, b in zip(default, philox):
        np.testing.assert_array_equal(a, b)


def test_output_types_reinterpret_the_bits():
    key = np.array([3, 4], np.uint64)
    (_, unsigned), (_, signed), (_, floats) = (
        run(generator_program("PHILOX", 2, "6x", t), key) for t in ("ui32", "i32", "f32"))
    assert signed.dtype == np.int32 and floats.dtype == np.float32
    np.testing.assert_array_equal(unsigned.view(np.int32), signed)
    np.testing.assert_array_equal(unsigned.view(np.float32).view(np.uint32), floats.view(np.uint32))


@pytest.mark.parametrize("algorithm,words,message", [
    ("THREE_FRY", 3, "THREE_FRY needs a state of 2"),
    ("PHILOX", 4, "PHILOX needs a state of 2 or 3"),
])
def test_bad_state_sizes_are_errors(algorithm, words, message):
    # The verifier rejects these statically; unverified programs get the same message at run time.
    program = hlodbg.load(generator_program(algorithm, words, "4x", "ui32"), check=False)
    with pytest.raises(ExecutionError, match=message):
        Interpreter(program.module).run("main", [np.zeros(words, np.uint64)])


# -- rng_bit_generator: differential against JAX / XLA CPU -------------------------------------

# Scalars, odd and even sizes (Threefry splits the first even dimension, else the largest one),
# sizes that are not a multiple of Philox's 4-word blocks, and empty outputs.
SHAPES = [(), (5,), (2, 3), (3, 5), (7, 1, 3), (5, 2, 3), (2, 0, 3)]


@pytest.mark.parametrize("algorithm,dtype", [
    (algorithm, dtype)
    for algorithm in ("RNG_THREE_FRY", "RNG_PHILOX")
    for dtype in ("uint8", "uint16", "uint32", "uint64")
] + [("RNG_DEFAULT", "uint32")])
def test_rng_bit_generator_matches_jax(algorithm, dtype):
    jax = pytest.importorskip("jax")
    from jax import lax

    alg = getattr(lax.RandomAlgorithm, algorithm)
    key = np.array([0xDEADBEEFCAFEBABE, 0xFFFFFFFFFFFFFFFE], np.uint64)
    with jax.enable_x64(True):
        for shape in SHAPES:
            def f(k, shape=shape):
                return lax.rng_bit_generator(k, shape, np.dtype(dtype), algorithm=alg)

            expected = jax.jit(f)(key)
            got = run(jax.jit(f).lower(key).as_text(), key)
            for e, g in zip(expected, got):
                e = np.asarray(e)
                assert g.dtype == e.dtype and g.shape == e.shape, (shape, e.dtype, g.dtype)
                np.testing.assert_array_equal(g, e, err_msg=f"{algorithm} {dtype} {shape}")


def _xla_cpu():
    """Compile raw StableHLO text with XLA's CPU backend (jaxlib internals; skip when they move)."""
    jax = pytest.importorskip("jax")
    try:
        from jax._src import xla_bridge
        from jax._src.lib import xla_client

        backend = xla_bridge.get_backend("cpu")
        devices = xla_client.DeviceList(tuple(backend.devices()[:1]))

        def run_xla(text, args):
            executable = backend.compile_and_load(text, devices, xla_client.CompileOptions())
            with jax.enable_x64(True):
                out = executable.execute_sharded([jax.device_put(a) for a in args])
                return [np.asarray(a[0]) for a in out.disassemble_into_single_device_arrays()]

        run_xla(generator_program("PHILOX", 2, "", "ui32"), [np.zeros(2, np.uint64)])
    except Exception as e:  # noqa: BLE001 - private API: any change means "cannot compare here"
        pytest.skip(f"cannot compile StableHLO with jaxlib directly: {e}")
    return run_xla


XLA_TYPES = ["i8", "ui8", "i16", "f16", "bf16", "i32", "f32", "i64", "f64", "i4", "ui4", "f8E4M3FN"]


@pytest.mark.parametrize("algorithm,words", [("THREE_FRY", 2), ("PHILOX", 2), ("PHILOX", 3)])
def test_rng_bit_generator_matches_xla_for_every_state_and_type(algorithm, words):
    run_xla = _xla_cpu()
    # All-ones counter words make Philox's 128-bit counter carry into its high word.
    key = np.array([0x0123456789ABCDEF, 0xFFFFFFFFFFFFFFFF, 0xFFFFFFFFFFFFFFFF][:words], np.uint64)
    for i, element in enumerate(XLA_TYPES):
        for shape in (["", "2x3x"] if i % 2 else ["5x", "3x5x"]):
            text = generator_program(algorithm, words, shape, element)
            expected = run_xla(text, [key])
            got = run(text, key)
            for e, g in zip(expected, got):
                # XLA hands back the bits in an unsigned buffer; compare the bits.
                assert e.shape == g.shape and e.dtype.itemsize == g.dtype.itemsize
                assert e.tobytes() == np.ascontiguousarray(g).tobytes(), (algorithm, words, element, shape)


# -- rng ------------------------------------------------------------------------------------------

RNG = """
func.func @main(%a: tensor<{t}>, %b: tensor<{t}>) -> (tensor<1000x{t}>, tensor<1000x{t}>) {{
  %shape = stablehlo.constant dense<[1000]> : tensor<1xi64>
  %x = stablehlo.rng %a, %b, %shape, distribution = {d} : (tensor<{t}>, tensor<{t}>, tensor<1xi64>) -> tensor<1000x{t}>
  %y = stablehlo.rng %a, %b, %shape, distribution = {d} : (tensor<{t}>, tensor<{t}>, tensor<1xi64>) -> tensor<1000x{t}>
  return %x, %y : tensor<1000x{t}>, tensor<1000x{t}>
}}"""


@pytest.mark.parametrize("element,dtype", [("f32", np.float32), ("bf16", None), ("f64", np.float64)])
def test_uniform_floats_stay_in_the_half_open_interval(element, dtype):
    program = hlodbg.load(RNG.format(t=element, d="UNIFORM"))
    x, y = Interpreter(program.module).run("main", [np.array(-1.0), np.array(1.0)])
    for values in (x, y):
        v = values.astype(np.float64)
        assert v.min() >= -1.0 and v.max() < 1.0
        assert abs(v.mean()) < 0.15
    assert not np.array_equal(x, y)  # two ops draw different numbers


def test_uniform_integers_and_reproducibility():
    program = hlodbg.load(RNG.format(t="i32", d="UNIFORM"))
    first = Interpreter(program.module).run("main", [np.int32(3), np.int32(7)])
    second = Interpreter(program.module).run("main", [np.int32(3), np.int32(7)])
    for a, b in zip(first, second):
        np.testing.assert_array_equal(a, b)
        assert a.dtype == np.int32 and set(np.unique(a)) == {3, 4, 5, 6}


def test_each_execution_draws_fresh_numbers():
    program = hlodbg.load(RNG.format(t="f32", d="NORMAL"))
    interpreter = Interpreter(program.module)
    x1, _ = interpreter.run("main", [np.float32(10.0), np.float32(2.0)])
    x2, _ = interpreter.run("main", [np.float32(10.0), np.float32(2.0)])
    assert not np.array_equal(x1, x2)
    assert abs(x1.mean() - 10.0) < 0.5 and abs(x1.std() - 2.0) < 0.3


@pytest.mark.parametrize("t,d,a,b,message", [
    ("i32", "UNIFORM", 5, 5, "a < b"),
    ("f32", "UNIFORM", 2.0, 1.0, "a < b"),
    ("f32", "NORMAL", 0.0, -1.0, "standard deviation"),
])
def test_rng_invalid_parameters(t, d, a, b, message):
    dtype = np.int32 if t == "i32" else np.float32
    with pytest.raises(ExecutionError, match=message):
        run(RNG.format(t=t, d=d), dtype(a), dtype(b))
