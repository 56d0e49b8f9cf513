"""The custom calls JAX emits on CPU (engine/ops/lapack.py, xla_custom_calls.py): every LAPACK
target run on the StableHLO JAX lowers, against JAX's own results, batched and unbatched; the
options read from HLO's raw backend_config; TopK, PadToStatic, SliceToDynamic; and the refusal of
GPU/TPU-only targets."""
from __future__ import annotations

import numpy as np
import pytest

from hlodbg.engine import ExecutionError

from .helpers import interpret, jax, run_mlir

needs_jax = pytest.mark.skipif(jax is None, reason="jax is not installed")

RNG = np.random.default_rng(16)


def _general(dtype, shape):
    a = RNG.normal(size=shape)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * RNG.normal(size=shape)
    return a.astype(dtype)


def _positive_definite(dtype, shape):
    a = _general(dtype, shape)
    n = shape[-1]
    return (a @ np.conj(np.swapaxes(a, -1, -2)) + n * np.eye(n)).astype(dtype)


def _functions():
    import jax.numpy as jnp
    import jax.scipy.linalg as jsl
    from jax import lax

    return {
        "cholesky": (jnp.linalg.cholesky, _positive_definite, (2, 4, 4)),
        "lu": (lax.linalg.lu, _general, (2, 4, 4)),
        "lu_wide": (lax.linalg.lu, _general, (3, 5)),
        "qr": (jnp.linalg.qr, _general, (2, 5, 3)),
        "qr_complete": (lambda a: jnp.linalg.qr(a, mode="complete"), _general, (2, 5, 3)),
        "eigh": (jnp.linalg.eigh, _positive_definite, (2, 4, 4)),
        "eigvalsh": (jnp.linalg.eigvalsh, _positive_definite, (4, 4)),
        "svd": (jnp.linalg.svd, _general, (2, 4, 4)),
        "svd_reduced": (lambda a: jnp.linalg.svd(a, full_matrices=False), _general, (2, 5, 3)),
        "svdvals": (lambda a: jnp.linalg.svd(a, compute_uv=False), _general, (4, 3)),
        "solve": (lambda a: jnp.linalg.solve(a, a[..., :2]), _general, (2, 4, 4)),
        "solve_triangular": (lambda a: jsl.solve_triangular(a, a[..., :2], lower=True, trans=1),
                             _general, (2, 4, 4)),
        "triangular_right": (lambda a: lax.linalg.triangular_solve(a, a[..., :3, :], left_side=False,
                                                                   lower=False, unit_diagonal=True),
                             _general, (2, 4, 4)),
        "inv": (jnp.linalg.inv, _general, (4, 4)),
        "schur": (jsl.schur, _general, (4, 4)),
        "hessenberg": (lambda a: jsl.hessenberg(a, calc_q=True), _general, (4, 4)),
        "tridiagonal": (lax.linalg.tridiagonal, _positive_definite, (2, 4, 4)),
    }


FUNCTIONS = ["cholesky", "lu", "lu_wide", "qr", "qr_complete", "eigh", "eigvalsh", "svd", "svd_reduced",
             "svdvals", "solve", "solve_triangular", "triangular_right", "inv", "schur", "hessenberg",
             "tridiagonal"]


def _against_jax(f, x, exact: bool = True):
    jitted = jax.jit(f)
    text = jitted.lower(x).as_text()
    assert "lapack_" in text  # the program really goes through a LAPACK custom call
    got = interpret(text, x)
    want = [np.asarray(w) for w in jax.tree_util.tree_leaves(jitted(x))]
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        if exact:
            np.testing.assert_array_equal(g, w)
        else:
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5 * float(np.max(np.abs(w))))


@needs_jax
@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
@pytest.mark.parametrize("name", FUNCTIONS)
def test_lapack_targets_give_what_jax_gives(name, dtype):
    # The same LAPACK routines XLA:CPU calls: results agree bit for bit, vector signs included.
    f, make, shape = _functions()[name]
    _against_jax(f, make(dtype, shape))


@needs_jax
@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_lapack_targets_in_double_precision(dtype):
    with jax.enable_x64(True):
        for name in ("cholesky", "lu", "qr", "eigh", "svd", "solve_triangular"):
            f, make, shape = _functions()[name]
            _against_jax(f, make(dtype, shape))


@needs_jax
@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
def test_eig_matches_jax_within_rounding(dtype):
    # geev's vectors come back through jnp's own normalisation ops, which round in their order.
    import jax.numpy as jnp

    _against_jax(jnp.linalg.eig, _general(dtype, (2, 4, 4)), exact=False)


@needs_jax
def test_cholesky_of_a_matrix_that_is_not_positive_definite_gives_nans_like_jax():
    import jax.numpy as jnp

    x = np.stack([_positive_definite(np.float32, (3, 3)), -np.eye(3, dtype=np.float32)])
    _against_jax(jnp.linalg.cholesky, x)


@needs_jax
def test_lu_of_a_singular_matrix_matches_jax():
    from jax import lax

    x = np.array([[1, 2, 3], [2, 4, 6], [1, 1, 1]], np.float32)
    _against_jax(lax.linalg.lu, x)


POTRF = """
func.func @main(%a: tensor<3x3xf32>) -> (tensor<3x3xf32>, tensor<i32>) {{
  %0:2 = stablehlo.custom_call @lapack_spotrf_ffi(%a) {{{config}}} : (tensor<3x3xf32>) -> (tensor<3x3xf32>, tensor<i32>)
  return %0#0, %0#1 : tensor<3x3xf32>, tensor<i32>
}}"""


@pytest.mark.parametrize("config", ['mhlo.backend_config = {uplo = 85 : ui8}',
                                    'hlo.backend_config = "{uplo = 85 : ui8}"'])
def test_potrf_reads_uplo_from_the_dictionary_or_hlo_raw_backend_config(config):
    a = _positive_definite(np.float32, (3, 3))
    factor, info = run_mlir(POTRF.format(config=config), a)
    upper = np.triu(factor)
    np.testing.assert_allclose(np.conj(upper.T) @ upper, a, rtol=1e-5)
    np.testing.assert_array_equal(np.tril(factor, -1), np.tril(a, -1))  # the other triangle is kept
    assert info == 0


def test_potrf_with_an_unknown_uplo_letter_is_refused():
    with pytest.raises(ExecutionError, match="backend_config uplo = 88 \\('X'\\) is not one of 'L', 'U'"):
        run_mlir(POTRF.format(config="mhlo.backend_config = {uplo = 88 : ui8}"), np.eye(3, dtype=np.float32))


def test_a_lapack_target_of_the_wrong_element_type_is_refused():
    text = POTRF.format(config="").replace("lapack_spotrf_ffi", "lapack_dpotrf_ffi")
    with pytest.raises(ExecutionError, match="@lapack_dpotrf_ffi takes float64 operands, got tensor<3x3xf32>"):
        run_mlir(text, np.eye(3, dtype=np.float32))


# -- XLA's own targets ------------------------------------------------------------------------------

TOPK = """
func.func @main(%x: tensor<2x5xf32>) -> (tensor<2x3xf32>, tensor<2x3xi32>) {
  %0:2 = stablehlo.custom_call @TopK(%x) : (tensor<2x5xf32>) -> (tensor<2x3xf32>, tensor<2x3xi32>)
  return %0#0, %0#1 : tensor<2x3xf32>, tensor<2x3xi32>
}"""


def test_topk_takes_the_largest_first_and_the_lower_index_on_ties():
    x = np.array([[1, 5, 3, 5, -2], [np.nan, 0, -np.inf, 7, 7]], np.float32)
    values, indices = run_mlir(TOPK, x)
    np.testing.assert_array_equal(indices, [[1, 3, 2], [0, 3, 4]])
    np.testing.assert_array_equal(values, [[5, 5, 3], [np.nan, 7, 7]])


def test_pad_to_static_and_slice_to_dynamic_round_trip():
    text = """
func.func @main(%x: tensor<2x3xf32>) -> (tensor<4x3xf32>, tensor<i32>, tensor<i32>, tensor<?x3xf32>) {
  %0:3 = stablehlo.custom_call @PadToStatic(%x) : (tensor<2x3xf32>) -> (tensor<4x3xf32>, tensor<i32>, tensor<i32>)
  %1 = stablehlo.custom_call @SliceToDynamic(%0#0, %0#1, %0#2) : (tensor<4x3xf32>, tensor<i32>, tensor<i32>) -> tensor<?x3xf32>
  return %0#0, %0#1, %0#2, %1 : tensor<4x3xf32>, tensor<i32>, tensor<i32>, tensor<?x3xf32>
}"""
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    padded, rows, columns, back = run_mlir(text, x)
    np.testing.assert_array_equal(padded[:2], x)
    assert (int(rows), int(columns)) == (2, 3)
    np.testing.assert_array_equal(back, x)


@pytest.mark.parametrize("target, what", [("__cublas$gemm", "a cuBLAS call of XLA:GPU"),
                                          ("__cudnn$convForward", "a cuDNN call of XLA:GPU"),
                                          ("tpu_custom_call", "a Mosaic TPU kernel")])
def test_gpu_and_tpu_targets_are_refused_with_where_they_run(target, what):
    text = f"""
func.func @main(%a: tensor<3xf32>) -> tensor<3xf32> {{
  %0 = stablehlo.custom_call @{target}(%a) : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}}"""
    with pytest.raises(ExecutionError) as info:
        run_mlir(text, np.ones(3, np.float32))
    assert what in info.value.message and info.value.line == 4
    assert any("JAX_PLATFORMS=cpu" in note for note in info.value.notes)


def test_an_unknown_target_lists_each_lapack_routine_once_with_its_types():
    text = """
func.func @main(%a: tensor<3xf32>) -> tensor<3xf32> {
  %0 = stablehlo.custom_call @no_such_target(%a) : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}"""
    with pytest.raises(ExecutionError) as info:
        run_mlir(text, np.ones(3, np.float32))
    message = info.value.message
    assert "unknown custom_call target @no_such_target" in message
    assert "lapack_{s,d,c,z}potrf_ffi" in message and "lapack_{c,z}heevd_ffi" in message
    assert "lapack_spotrf_ffi" not in message and "TopK" in message
