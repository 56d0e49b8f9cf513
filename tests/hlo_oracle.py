"""XLA:CPU as the oracle for HLO text (../shared/docs/hlo_text.md §10), shared by
tests/test_hlo_xla_oracle.py and benchmarks/hlo_real_files.py.

- `parameter_inputs(tree, seed)`: deterministic random values for an entry computation's
  parameters, built from the HLO parse tree's shapes (tuples as Python tuples);
- `run_xla(text, inputs)`: XLA's own parser, then XLA:CPU, on the same inputs (flattened);
  `compile_xla(text)` stops after XLA's compiler (does XLA accept the text at all?);
- `leaves(results)`: hlodbg's results flattened like XLA's outputs;
- `difference(got, want)`: None when `got` reproduces XLA's `want` (integers and booleans
  exactly, floats within a per-type tolerance of the result's magnitude, NaN meeting NaN).

Importing this module needs no JAX; `run_xla` imports it when called.
"""
from __future__ import annotations

from typing import Optional

import numpy as np


class NotSampled(Exception):
    """A parameter the oracle cannot make a value for (a token, a dynamic shape)."""


class XlaRejects(Exception):
    """XLA's parser or compiler refuses the text: the first line of its message."""

    def __init__(self, stage: str, error: BaseException):
        located = [line.strip() for line in str(error).splitlines() if "error:" in line]
        super().__init__(f"XLA's {stage} rejects it: {located[0] if located else first_line(error)}")


def first_line(error: BaseException) -> str:
    text = str(error).strip() or type(error).__name__
    return f"{type(error).__name__}: {text.splitlines()[0]}"[:300]


def parameter_inputs(tree, seed: int) -> list:
    """Values for `tree.entry`'s parameters in parameter-number order."""
    rng = np.random.default_rng(seed)
    return [sample_input(p.shape, rng) for p in tree.entry.parameters()]


def sample_input(shape, rng: np.random.Generator):
    """Values of one HLO shape: floats standard normal, signed integers in [-2, 2) and unsigned in
    [0, 4) (valid for 2-bit types and, clamped, as indices), booleans fair coins."""
    from hlodbg.engine.syntax.hlo.literals import literal_dtype

    if shape.is_tuple:
        return tuple(sample_input(e, rng) for e in shape.elements)
    if shape.element == "token":
        raise NotSampled("a token parameter")
    if any(d is None for d in shape.dims) or any(shape.bounded or ()):
        raise NotSampled("a dynamic-shaped parameter")
    dtype = literal_dtype(shape.element)
    dims = tuple(shape.dims)
    if dtype == np.bool_:
        return rng.random(dims) < 0.5
    if dtype.kind == "c":
        part = np.float32 if dtype == np.complex64 else np.float64
        return (rng.standard_normal(dims).astype(part) + 1j * rng.standard_normal(dims).astype(part)).astype(dtype)
    if dtype.kind in "iu" or "int" in dtype.name:
        unsigned = dtype.kind == "u" or dtype.name.startswith("uint")
        return (rng.integers(0, 4, dims) if unsigned else rng.integers(-2, 2, dims)).astype(dtype)
    return rng.standard_normal(dims).astype(np.float32).astype(dtype)


def leaves(value) -> list[np.ndarray]:
    """Arrays of a result in order: lists, tuples and tuple values flattened, recursively."""
    if isinstance(value, dict):  # {ProcessId: results} of a multi-device run, in grid order
        return [a for results in value.values() for a in leaves(results)]
    if isinstance(value, (list, tuple)):
        return [a for v in value for a in leaves(v)]
    elements = getattr(value, "elements", None)  # a TupleValue
    if elements is not None and not isinstance(value, np.ndarray):
        return [a for v in elements for a in leaves(v)]
    return [np.asarray(value)]


def compile_xla(module_text: str):
    """XLA's parser, then XLA:CPU's compiler: (executable, device). Raises XlaRejects."""
    from jax._src import xla_bridge
    from jax._src.lib import xla_client as xc
    from jaxlib import _hlo

    try:
        module = _hlo.hlo_module_from_text(module_text)
    except Exception as error:  # "was parsing L:C: error: ..."
        raise XlaRejects("parser", error) from None
    try:
        computation = xc.XlaComputation(module.as_serialized_hlo_module_proto())
        mlir = xc._xla.mlir.xla_computation_to_mlir_module(computation)
        backend = xla_bridge.get_backend("cpu")
        device = backend.devices()[0]
        return backend.compile_and_load(mlir, xc.DeviceList((device,)), xc.CompileOptions()), device
    except Exception as error:
        raise XlaRejects("compiler", error) from None


def run_xla(module_text: str, inputs: list) -> list[np.ndarray]:
    """Parse `module_text` with XLA's parser and run it on XLA:CPU (one device)."""
    import jax

    executable, device = compile_xla(module_text)
    with jax.enable_x64(True):
        flat = [jax.device_put(a, device) for value in inputs for a in leaves(value)]
        outputs = executable.execute(flat)
    return [np.asarray(o) for o in outputs]


def tolerance(dtype: np.dtype) -> float:
    """Relative tolerance (of the result's largest finite magnitude) per element type: XLA:CPU
    vectorises and reorders float arithmetic and uses its own transcendental approximations."""
    if dtype.kind in "iub" or "int" in dtype.name:
        return 0.0
    if dtype.itemsize <= 2 or dtype.name.startswith(("bfloat", "float8", "float4")):
        return 2e-2
    return 1e-9 if dtype in (np.float64, np.complex128) else 2e-5


def difference(got: np.ndarray, want: np.ndarray, values: bool = True) -> Optional[str]:
    """None when `got` reproduces XLA's `want`; else what differs. `values=False` compares type
    and shape only (random ops)."""
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape or got.dtype != want.dtype:
        return f"{got.dtype}{list(got.shape)} vs XLA's {want.dtype}{list(want.shape)}"
    if not values:
        return None
    tol = tolerance(want.dtype)
    if tol == 0.0:
        bad = np.flatnonzero(got.reshape(-1) != want.reshape(-1))
        if bad.size == 0:
            return None
        i = bad[0]
        return f"{bad.size} elements differ (flat index {i}: {got.reshape(-1)[i]} vs XLA's {want.reshape(-1)[i]})"
    wide = np.complex128 if want.dtype.kind == "c" else np.float64
    g, w = got.astype(wide).reshape(-1), want.astype(wide).reshape(-1)
    scale = float(np.max(np.abs(w[np.isfinite(w)]), initial=1.0))
    with np.errstate(invalid="ignore"):
        same = (g == w) | (np.isnan(g) & np.isnan(w)) | (np.abs(g - w) <= tol * scale)
    bad = np.flatnonzero(~same)
    if bad.size == 0:
        return None
    i = bad[0]
    return f"{bad.size} elements differ beyond rtol {tol:g} (flat index {i}: {g[i]} vs XLA's {w[i]})"
