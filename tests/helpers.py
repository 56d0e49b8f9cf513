"""Helpers more than one test module uses: where the shared corpus lives, running hlodbg on text,
and comparing its results with XLA's (exactly, in ULPs, or within a tolerance).

JAX is imported lazily by the tests that need it (they skip without it); the helpers that call
it are only reached from those tests.
"""
from __future__ import annotations

import textwrap
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import hlodbg
from hlodbg.engine import VerifyError, parse_module
from hlodbg.engine.ops.sorting import total_order_key
from hlodbg.engine.run.interpreter import Interpreter
from hlodbg.engine.verify import verify, verify_all

try:
    import jax
except ImportError:  # the tests that compare with XLA skip themselves
    jax = None


# -- where the shared corpus lives (tests skip cleanly without it) -------------------------------

REPO = Path(__file__).resolve().parents[1]

SHARED = REPO.parent / "shared"

PROGRAMS = SHARED / "programs"

CONFORMANCE = SHARED / "conformance" / "stablehlo_testdata"

SAMPLES = REPO / "sample_programs"


def count_calls(monkeypatch, module, name: str) -> list:
    """Replace `module.name` (for the test's duration) by a wrapper recording each call: a list
    that grows by one per call. Tests of complexity count the work done instead of timing it."""
    original = getattr(module, name)
    calls: list = []

    def counted(*args, **kwargs):
        calls.append(None)
        return original(*args, **kwargs)

    monkeypatch.setattr(module, name, counted)
    return calls


def corpus_files() -> list[Path]:
    """Every .mlir of the shared corpus (empty when ../shared is absent)."""
    files: list[Path] = []
    if CONFORMANCE.is_dir():
        files += sorted(CONFORMANCE.rglob("*.mlir"))
    if PROGRAMS.is_dir():
        files += sorted(PROGRAMS.glob("*.mlir"))
    return files


def require_shared() -> None:
    if not SHARED.is_dir():
        pytest.skip("../shared is not present")


def sample_array(shape, dtype, rng, limit: int = 20):
    """Random test data of any dtype: integers in [-limit, limit], normal floats, complex, bool."""
    import numpy as np

    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(max(info.min, -limit), min(info.max, limit) + 1, size=shape).astype(dtype)
    if dtype.kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    return rng.standard_normal(shape).astype(np.float32).astype(dtype)


# -- running hlodbg on text, comparing exactly (data movement, gather/scatter, reductions) -------


def sample(shape, dtype, rng: np.random.Generator) -> np.ndarray:
    return sample_array(shape, dtype, rng, limit=50)


def interpret(text: str, *args):
    program = hlodbg.load(text)
    return Interpreter(program.module).run("main", [np.asarray(a) for a in args])


def comparable(array) -> np.ndarray:
    """Exact comparison form: narrow floats widen losslessly to f64."""
    array = np.asarray(array)
    if array.dtype.kind == "V" or array.dtype == np.float16:
        return array.astype(np.float64)
    return array


def assert_same(got, want, rtol: float = 0.0) -> None:
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    if rtol:
        np.testing.assert_allclose(comparable(got), comparable(want), rtol=rtol)
    else:
        np.testing.assert_array_equal(comparable(got), comparable(want))


def check_against_jax(f, *args, rtol: float = 0.0) -> list:
    """Lower `f`, run the text with hlodbg, and compare every result with XLA's."""
    jitted = jax.jit(f)
    got = interpret(jitted.lower(*args).as_text(), *args)
    want = jax.tree_util.tree_leaves(jitted(*args))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert_same(g, np.asarray(w), rtol)
    return got


def run_mlir(body: str, *args):
    return interpret(f"module {{\n{body}\n}}", *args)


# -- comparing in ULPs (reductions, sorting) --------------------------------------------------


def ulps(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """Distance in units in the last place (0 for equal values, NaN vs NaN, or equal integers)."""
    got, want = np.asarray(got), np.asarray(want)
    if got.dtype.kind in "iub":
        return (got != want).astype(np.int64)
    if got.dtype.kind == "c":
        return np.maximum(ulps(got.real, want.real), ulps(got.imag, want.imag))
    distance = np.abs(total_order_key(got).astype(np.int64) - total_order_key(want).astype(np.int64))
    # Narrow floats are compared through f32, whose ulp is finer: scale back to the type's ulp.
    if got.dtype.itemsize < 4:
        distance = distance >> (23 - ml_dtypes.finfo(got.dtype).nmant)
    nan = np.isnan(got.astype(np.float64)) & np.isnan(want.astype(np.float64))
    return np.where(nan, 0, distance)


def check_ulps(f, *args, max_ulps: int = 0, rtol: float = 0.0) -> None:
    """Lower `f`, run it with hlodbg and compare every result with XLA's (same dtype and shape).

    64-bit types stay 64-bit (x64 on), whatever other test modules set.
    """
    with jax.enable_x64(True):
        jitted = jax.jit(f)
        got = interpret(jitted.lower(*args).as_text(), *args)
        want = [np.asarray(w) for w in jax.tree_util.tree_leaves(jitted(*args))]
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape, (g.dtype, w.dtype, g.shape, w.shape)
        if rtol:
            np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64), rtol=rtol, atol=rtol)
        else:
            distance = ulps(g, w)
            assert distance.size == 0 or distance.max() <= max_ulps, (g, w)


# -- contractions, compared within a tolerance (dot, convolution, linalg) ----------------------


_TYPE_NAMES = {
    np.dtype(np.float32): "f32", np.dtype(np.float64): "f64", np.dtype(np.float16): "f16",
    np.dtype(ml_dtypes.bfloat16): "bf16", np.dtype(np.complex64): "complex<f32>",
    np.dtype(np.complex128): "complex<f64>", np.dtype(np.int8): "i8", np.dtype(np.int32): "i32",
    np.dtype(np.int64): "i64", np.dtype(np.uint8): "ui8", np.dtype(np.bool_): "i1",
}


def tensor_type(shape, dtype) -> str:
    dims = "".join(f"{d}x" for d in shape)
    return f"tensor<{dims}{_TYPE_NAMES[np.dtype(dtype)]}>"


def contraction_sample(shape, dtype, rng: np.random.Generator) -> np.ndarray:
    return sample_array(shape, dtype, rng, limit=20)


def xla_run(text: str, *args) -> list:
    """Compile hand-written StableHLO with XLA's CPU backend and run it (JAX's internals)."""
    try:
        from jax._src import xla_bridge
        from jax._src.lib import xla_client as xc
    except ImportError:  # pragma: no cover - depends on the installed jaxlib
        pytest.skip("this jaxlib does not expose its compiler")
    backend = xla_bridge.get_backend("cpu")
    executable = backend.compile_and_load(text, xc.DeviceList(tuple(backend.local_devices()[:1])), xc.CompileOptions())
    return [np.asarray(r) for r in executable.execute([jax.device_put(np.asarray(a)) for a in args])]


def tolerance(dtype) -> float:
    dtype = np.dtype(dtype)
    if dtype.kind in "iub":
        return 0.0
    if dtype.itemsize <= 2 or dtype == np.dtype(ml_dtypes.bfloat16):
        return 1e-2
    return 1e-12 if dtype in (np.float64, np.complex128) else 2e-6


def assert_close(got, want, tol: float) -> None:
    """Integers exactly; floats within `tol` of the result's magnitude (sums reorder freely)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    if got.dtype.kind in "iub" or tol == 0:
        np.testing.assert_array_equal(got, want)
        return
    wide = np.complex128 if got.dtype.kind == "c" else np.float64
    g, w = got.astype(wide), want.astype(wide)
    scale = float(np.max(np.abs(w[np.isfinite(w)]), initial=1.0))
    np.testing.assert_allclose(g, w, rtol=tol, atol=tol * scale, equal_nan=True)


def check_close_to_jax(f, *args, tol=None) -> list:
    jitted = jax.jit(f)
    got = interpret(jitted.lower(*args).as_text(), *args)
    want = jax.tree_util.tree_leaves(jitted(*args))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert_close(g, w, tolerance(np.asarray(w).dtype) if tol is None else tol)
    return got


# -- element-wise ops as single StableHLO ops compiled by XLA (element-wise, chlo) -------------


BF16 = np.dtype(ml_dtypes.bfloat16)
I4, U4, I2, U2 = (np.dtype(t) for t in (ml_dtypes.int4, ml_dtypes.uint4, ml_dtypes.int2, ml_dtypes.uint2))
F8E4M3, F8E5M2 = np.dtype(ml_dtypes.float8_e4m3fn), np.dtype(ml_dtypes.float8_e5m2)
FLOATS = [np.dtype(np.float16), BF16, np.dtype(np.float32), np.dtype(np.float64)]
INTS = [np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64)]
NARROW_INTS = [I4, U4, I2, U2]
COMPLEX = [np.dtype(np.complex64), np.dtype(np.complex128)]
_MLIR = {
    np.dtype(np.float16): "f16", BF16: "bf16", np.dtype(np.float32): "f32", np.dtype(np.float64): "f64",
    np.dtype(np.int8): "i8", np.dtype(np.int16): "i16", np.dtype(np.int32): "i32", np.dtype(np.int64): "i64",
    np.dtype(np.uint8): "ui8", np.dtype(np.uint16): "ui16", np.dtype(np.uint32): "ui32", np.dtype(np.uint64): "ui64",
    np.dtype(np.bool_): "i1", np.dtype(np.complex64): "complex<f32>", np.dtype(np.complex128): "complex<f64>",
    I4: "i4", U4: "ui4", I2: "i2", U2: "ui2", F8E4M3: "f8E4M3FN", F8E5M2: "f8E5M2",
}


def tensor(shape, dtype) -> str:
    return "tensor<" + "".join(f"{d}x" for d in shape) + _MLIR[np.dtype(dtype)] + ">"


def module(args, ops) -> str:
    """A @main taking `args` and returning one result per (op text, result type) of `ops`.

    Op texts name the arguments %a0, %a1, ...; `{T0}`, `{T1}` stand for their tensor types.
    """
    types = [tensor(a.shape, a.dtype) for a in args]
    signature = ", ".join(f"%a{i}: {t}" for i, t in enumerate(types))
    lines = []
    for k, (text, _) in enumerate(ops):
        for i, t in enumerate(types):
            text = text.replace(f"{{T{i}}}", t)
        lines.append(f"  %r{k} = {text}")
    results = ", ".join(t for _, t in ops)
    names = ", ".join(f"%r{k}" for k in range(len(ops)))
    body = "\n".join(lines)
    return f"func.func public @main({signature}) -> ({results}) {{\n{body}\n  return {names} : {results}\n}}"


def unary(name, arg, out_dtype=None, attrs="") -> tuple[str, str]:
    out = tensor(arg.shape, out_dtype if out_dtype is not None else arg.dtype)
    return f'"{name}"(%a0) {attrs} : ({{T0}}) -> {out}', out


def binary(name, lhs, out_dtype=None, attrs="") -> tuple[str, str]:
    out = tensor(lhs.shape, out_dtype if out_dtype is not None else lhs.dtype)
    return f'"{name}"(%a0, %a1) {attrs} : ({{T0}}, {{T1}}) -> {out}', out


@pytest.fixture(autouse=True)
def quiet_numpy():
    # Inputs hold NaN, infinities and overflowing values on purpose.
    with np.errstate(all="ignore"):
        yield


def run_xla(text: str, args) -> list[np.ndarray]:
    try:
        from jax._src.lib import xla_client
    except ImportError:  # pragma: no cover - a jaxlib without the private client
        pytest.skip("jaxlib's XLA client is not importable")
    device = jax.devices("cpu")[0]
    with jax.enable_x64(True):
        executable = device.client.compile_and_load(text, [device], xla_client.CompileOptions())
        outputs = executable.execute([jax.device_put(np.asarray(a), device) for a in args])
    return [np.asarray(o) for o in outputs]


def run_ours(text: str, args) -> list[np.ndarray]:
    return Interpreter(hlodbg.load(text).module).run("main", [np.asarray(a) for a in args])


def flushed(x: np.ndarray) -> np.ndarray:
    """Subnormals as (signed) zeros: XLA's CPU runtime flushes them."""
    if x.dtype.kind == "c":
        return flushed(x.real) + 1j * flushed(x.imag)
    wide = x.astype(np.float64)
    tiny = float(ml_dtypes.finfo(x.dtype).smallest_normal)
    return np.where(np.abs(wide) < tiny, np.copysign(0.0, wide), wide).astype(x.dtype)


def ulp_distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Distance in representable values between same-typed floats; NaN meets NaN at 0."""
    if a.dtype.kind == "c":
        return np.maximum(ulp_distance(a.real, b.real), ulp_distance(a.imag, b.imag))
    width = 8 * a.dtype.itemsize
    unsigned = np.dtype(f"u{a.dtype.itemsize}")

    def ordinal(x):
        bits = x.view(unsigned).astype(np.int64) & ((1 << (width - 1)) - 1) if width < 64 else \
            (x.view(np.int64) & np.int64(0x7FFFFFFFFFFFFFFF))
        return np.where(np.signbit(x.astype(np.float64)), -bits, bits)

    nan_a, nan_b = np.isnan(a.astype(np.float64)), np.isnan(b.astype(np.float64))
    distance = np.abs(ordinal(a).astype(np.float64) - ordinal(b).astype(np.float64))
    return np.where(nan_a & nan_b, 0, np.where(nan_a | nan_b, np.inf, distance))


def float_values(dtype, rng, n: int = 48) -> np.ndarray:
    """Corner cases and random normals of `dtype`, without subnormals."""
    info = ml_dtypes.finfo(dtype)
    specials = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, 2.5, -2.5, 3.0, np.inf, -np.inf, np.nan,
                float(info.max), -float(info.max), float(info.smallest_normal), 0.49999997, 100.25, -7.75]
    random = rng.standard_normal(n) * np.where(rng.random(n) < 0.3, 30.0, 2.0)
    return np.concatenate([np.array(specials), random]).astype(np.float32 if dtype != np.float64 else np.float64).astype(dtype)


def complex_values(dtype, rng, n: int = 40) -> np.ndarray:
    parts = rng.standard_normal((2, n)) * 2
    specials = [0j, 1 + 0j, -1 + 0j, 1j, -1j, 2 + 3j, -0.5 - 0.25j]
    return np.concatenate([np.array(specials), parts[0] + 1j * parts[1]]).astype(dtype)


# -- verifier rejections -------------------------------------------------------------------------


def assert_rejected_at(text: str, fragment: str, constraint: str, marker: str) -> None:
    """Verifying `text` fails with `fragment` and `(constraint)` in the message, at the line of the
    first row that holds `marker` (the op the constraint is about)."""
    module = parse_module(text, "prog.mlir")
    with pytest.raises(VerifyError) as info:
        verify(module)
    message = str(info.value)
    assert fragment in message and f"({constraint})" in message, message
    line = next(i for i, row in enumerate(text.splitlines(), 1) if marker in row)
    assert info.value.pos.line == line


def parse_marked(text: str):
    """Parse an indented test program (as written in a test table) as the file test.mlir."""
    return parse_module(textwrap.dedent(text).strip("\n") + "\n", "test.mlir")


def marked_line(text: str) -> int:
    """The line of `text` marked `// ERR` (the op an invalid program must be rejected at)."""
    lines = textwrap.dedent(text).strip("\n").splitlines()
    marked = [i + 1 for i, line in enumerate(lines) if "// ERR" in line]
    assert len(marked) == 1, "each invalid program marks exactly one line with // ERR"
    return marked[0]


def assert_rejected_at_marked_line(text: str, fragment: str) -> None:
    """verify and verify_all both reject `text` first at its `// ERR` line, with `fragment` in the
    message, and the error names test.mlir and that line."""
    module = parse_marked(text)
    with pytest.raises(VerifyError) as info:
        verify(module)
    error = info.value
    assert fragment in error.message, error.message
    assert error.line == marked_line(text), f"{error.message} reported at line {error.line}"
    assert error.filename == "test.mlir"
    assert str(error).startswith(f"test.mlir:{error.line}:")
    # verify_all finds the same first error.
    errors = verify_all(module)
    assert errors and errors[0].message == error.message


def assert_verifies(text: str) -> None:
    module = parse_marked(text)
    verify(module)
    assert verify_all(module) == []
