"""The LAPACK custom calls JAX emits on CPU: `lapack_<t><routine>_ffi` (t = s, d, c, z).

jnp.linalg's cholesky, lu, qr, eigh, svd, solve, eig and jax.scipy.linalg's solve_triangular,
schur, hessenberg become one `stablehlo.custom_call` each (typed FFI; HLO: `custom-call` with
`api_version=API_VERSION_TYPED_FFI`). Their options are characters in `mhlo.backend_config`
(`{uplo = 76 : ui8}` is 'L'; in HLO text `backend_config={uplo = 76 : ui8}`), leading dimensions
are batch dimensions, and the last result (where there is one) is LAPACK's `info` per matrix.

The operand and result layouts JAX asks for (column-major matrices) only say where XLA puts the
bytes for the Fortran routine; values here are logical arrays, so a layout never matters. Each
matrix is handed to the same LAPACK routine jaxlib calls (scipy's, which jaxlib's CPU kernels are
bound to), so results match XLA's, sign conventions of eigenvectors and singular vectors included.
Outputs that LAPACK leaves unspecified (the input `a` of gesdd after the call, vectors not asked
for) are the operand's values or zeros.
"""
from __future__ import annotations

import re
from typing import Any, Callable, Optional, Sequence

import numpy as np

from ..ir.dtypes import element_dtype
from .checks import CUSTOM_CALL_TARGETS
from .registry import OpCall

ELEMENT_TYPES = {"s": np.dtype(np.float32), "d": np.dtype(np.float64),
                 "c": np.dtype(np.complex64), "z": np.dtype(np.complex128)}

# One matrix's computation: (the call, the routine's type letter, operands without batch dims)
# -> one value per result of the custom call (None: zeros).
PerMatrix = Callable[..., Sequence[Optional[Any]]]


# -- options (mhlo.backend_config) -----------------------------------------------------------------


def backend_options(call: OpCall) -> dict[str, int]:
    """The custom call's integer options: the `mhlo.backend_config` dictionary, or the same
    `{key = value : type, ...}` text kept as HLO's raw backend_config."""
    cached = call.memo.get("lapack options")
    if cached is not None:
        return cached
    config = call.attr("mhlo.backend_config")
    options: dict[str, int] = {}
    if isinstance(config, dict):
        options = {str(k): int(v) for k, v in config.items()}
    else:
        text = call.attr("hlo.backend_config", call.attr("backend_config", ""))
        options = {k: int(v) for k, v in re.findall(r"(\w+)\s*=\s*(-?\d+)", str(text))}
    call.memo["lapack options"] = options
    return options


def _option(call: OpCall, name: str, default: str, allowed: str) -> str:
    """A one-character option (`uplo`, `mode`, ...): LAPACK's letter."""
    value = backend_options(call).get(name)
    letter = default if value is None else chr(value)
    if letter not in allowed:
        raise call.error(f"backend_config {name} = {value} ('{letter}') is not one of "
                         f"{', '.join(repr(c) for c in allowed)}")
    return letter


# -- the batch driver ----------------------------------------------------------------------------


def _run_batched(call: OpCall, letter: str, per_matrix: PerMatrix, operands: Sequence[np.ndarray],
                 batch_rank: Sequence[int]) -> Any:
    """Apply `per_matrix` to every batch element; operand i has `batch_rank[i]` trailing non-batch dims."""
    want = ELEMENT_TYPES[letter]
    if operands and np.asarray(operands[0]).dtype != want:
        raise call.error(f"@{call.attr('call_target_name')} takes {want.name} operands, got {call.operand_types[0]}")
    arrays = [np.asarray(x) for x in operands]
    batch = arrays[0].shape[:arrays[0].ndim - batch_rank[0]]
    for x, rank in zip(arrays, batch_rank):
        if x.shape[:x.ndim - rank] != batch:
            raise call.error(f"operands disagree on the batch dimensions: {arrays[0].shape} and {x.shape}")
    outs = [np.zeros(t.shape, element_dtype(t)) for t in call.result_types]
    for index in np.ndindex(*batch):
        values = per_matrix(call, letter, *[x[index] for x in arrays])
        for out, value in zip(outs, values):
            if value is not None:
                out[index] = value
    return call.results(outs)


def _register(routines: dict[str, str], per_matrix: PerMatrix, batch_rank: Sequence[int] = (2,)) -> None:
    """Register `lapack_<t><name>_ffi` for each type letter t -> routine name."""
    for letter, name in routines.items():
        def handler(call: OpCall, *operands: Any, letter: str = letter) -> Any:
            if len(operands) != len(batch_rank):
                raise call.error(f"@{call.attr('call_target_name')} takes {len(batch_rank)} operand(s), "
                                 f"got {len(operands)}")
            return _run_batched(call, letter, per_matrix, operands, batch_rank)
        CUSTOM_CALL_TARGETS[f"lapack_{letter}{name}_ffi"] = handler


def _every_type(name: str, complex_name: Optional[str] = None) -> dict[str, str]:
    return {"s": name, "d": name, "c": complex_name or name, "z": complex_name or name}


def _routine(letter: str, name: str) -> Callable:
    from scipy.linalg import lapack  # imported on first use, as scipy's other modules (chlo.py)

    return getattr(lapack, letter + name)


def _info(value: int) -> np.ndarray:
    return np.asarray(value, np.int32)


# -- factorizations ----------------------------------------------------------------------------------


def _potrf(call: OpCall, letter: str, a: np.ndarray):
    # Only the `uplo` triangle is factored; the other keeps the operand's values (JAX masks it).
    lower = _option(call, "uplo", "L", "LU") == "L"
    factor, info = _routine(letter, "potrf")(a, lower=lower, clean=0)
    return [factor, _info(info)]


def _getrf(call: OpCall, letter: str, a: np.ndarray):
    lu, pivots, info = _routine(letter, "getrf")(a)
    return [lu, pivots + 1, _info(info)]  # scipy counts rows from 0, LAPACK (and JAX's ipiv) from 1


def _geqrf(call: OpCall, letter: str, a: np.ndarray):
    qr, tau, _work, _info_ = _routine(letter, "geqrf")(a)
    return [qr, tau]


def _orgqr(call: OpCall, letter: str, a: np.ndarray, tau: np.ndarray):
    name = "ungqr" if letter in "cz" else "orgqr"
    q, _work, _info_ = _routine(letter, name)(a, tau)
    return [q]


def _syevd(call: OpCall, letter: str, a: np.ndarray):
    vectors = _option(call, "mode", "V", "VN") == "V"
    lower = _option(call, "uplo", "L", "LU") == "L"
    name = "heevd" if letter in "cz" else "syevd"
    w, v, info = _routine(letter, name)(a, compute_v=int(vectors), lower=int(lower))
    return [v if vectors else a, w, _info(info)]


def _svd(name: str) -> PerMatrix:
    def per_matrix(call: OpCall, letter: str, a: np.ndarray):
        # A: all of u and vt; S: the min(m, n) leading ones; N: singular values only.
        mode = _option(call, "mode", "A", "ASN")
        if mode == "N":
            _u, s, _vt, info = _routine(letter, name)(a, compute_uv=0)
            return [a, s, None, None, _info(info)]
        u, s, vt, info = _routine(letter, name)(a, compute_uv=1, full_matrices=int(mode == "A"))
        return [a, s, u, vt, _info(info)]
    return per_matrix


def _trsm(call: OpCall, letter: str, a: np.ndarray, b: np.ndarray):
    side = _option(call, "side", "L", "LR")
    lower = _option(call, "uplo", "L", "LU") == "L"
    transpose = _option(call, "trans_x", "N", "NTC")
    unit = _option(call, "diag", "N", "NU") == "U"
    from scipy.linalg import blas

    solve = getattr(blas, letter + "trsm")
    x = solve(1.0, a, b, side=int(side == "R"), lower=int(lower), trans_a="NTC".index(transpose), diag=int(unit))
    return [x]


# -- eigenvalues of general matrices, Schur and Hessenberg forms ----------------------------------


def _complex_vectors(values_imag: np.ndarray, packed: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Real geev's eigenvectors as complex columns: a complex pair (wi[j] > 0) is stored as
    columns j (real part) and j+1 (imaginary part) of the pair's first vector."""
    vectors = packed.astype(dtype)
    j = 0
    n = len(values_imag)
    while j < n:
        if values_imag[j] > 0 and j + 1 < n:
            first = packed[:, j] + 1j * packed[:, j + 1]
            vectors[:, j], vectors[:, j + 1] = first, np.conj(first)
            j += 2
        else:
            j += 1
    return vectors


def _geev(call: OpCall, letter: str, a: np.ndarray):
    left = _option(call, "compute_left", "N", "NV") == "V"
    right = _option(call, "compute_right", "V", "NV") == "V"
    results = _routine(letter, "geev")(a, compute_vl=int(left), compute_vr=int(right))
    if letter in "cz":
        w, vl, vr, info = results
        return [w, vl if left else None, vr if right else None, _info(info)]
    wr, wi, vl, vr, info = results
    complex_dtype = np.dtype(np.complex64 if letter == "s" else np.complex128)
    return [wr, wi, _complex_vectors(wi, vl, complex_dtype) if left else None,
            _complex_vectors(wi, vr, complex_dtype) if right else None, _info(info)]


def _no_selection(*_args: Any) -> int:
    return 0


def _gees(call: OpCall, letter: str, a: np.ndarray):
    vectors = _option(call, "mode", "V", "VN") == "V"
    if _option(call, "sort", "N", "NS") == "S":
        raise call.error("sorted Schur forms (sort = 'S') need a selection function, which the custom call "
                         "cannot pass; only sort = 'N' runs")
    results = _routine(letter, "gees")(_no_selection, a, compute_v=int(vectors), sort_t=0)
    if letter in "cz":
        t, sdim, w, vs, _work, info = results
        return [t, vs if vectors else None, w, _info(sdim), _info(info)]
    t, sdim, wr, wi, vs, _work, info = results
    return [t, vs if vectors else None, wr, wi, _info(sdim), _info(info)]


def _gehrd(call: OpCall, letter: str, a: np.ndarray):
    n = a.shape[-1]
    options = backend_options(call)
    low, high = int(options.get("low", 1)), int(options.get("high", n))
    if not 1 <= low <= max(high, 1) <= max(n, 1):
        raise call.error(f"backend_config low = {low}, high = {high} must satisfy 1 <= low <= high <= {n}")
    h, tau, info = _routine(letter, "gehrd")(a, lo=low - 1, hi=high - 1)
    return [h, tau, _info(info)]


def _sytrd(call: OpCall, letter: str, a: np.ndarray):
    lower = _option(call, "uplo", "L", "LU") == "L"
    name = "hetrd" if letter in "cz" else "sytrd"
    c, d, e, tau, info = _routine(letter, name)(a, lower=int(lower))
    return [c, d, e, tau, _info(info)]


_register(_every_type("potrf"), _potrf)
_register(_every_type("getrf"), _getrf)
_register(_every_type("geqrf"), _geqrf)
_register({"s": "orgqr", "d": "orgqr"}, _orgqr, (2, 1))
_register({"c": "ungqr", "z": "ungqr"}, _orgqr, (2, 1))
_register(_every_type("syevd", "heevd"), _syevd)
_register(_every_type("gesdd"), _svd("gesdd"))
_register(_every_type("gesvd"), _svd("gesvd"))
_register(_every_type("trsm"), _trsm, (2, 2))
_register(_every_type("geev"), _geev)
_register(_every_type("gees"), _gees)
_register(_every_type("gehrd"), _gehrd)
_register(_every_type("sytrd", "hetrd"), _sytrd)
