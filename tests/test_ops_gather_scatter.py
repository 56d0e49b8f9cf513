"""gather, scatter and torch_index_select against JAX/XLA on CPU and against a literal, per-element
transcription of the spec (a slow loop, only used on small tensors here)."""
from __future__ import annotations

import itertools

import ml_dtypes
import numpy as np
import pytest
from .helpers import assert_same, check_against_jax, run_mlir, sample


jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
lax = pytest.importorskip("jax.lax")

GDN = lax.GatherDimensionNumbers
SDN = lax.ScatterDimensionNumbers
PROMISE = lax.GatherScatterMode.PROMISE_IN_BOUNDS  # plain gather/scatter: XLA's own clamping/dropping


# -- the spec, element by element ----------------------------------------------------------------


def spec_gather(operand, indices, offset_dims, collapsed, operand_batching, indices_batching, start_index_map,
                index_vector_dim, slice_sizes):
    batch_shape = [n for d, n in enumerate(indices.shape) if d != index_vector_dim]
    window_dims = [d for d in range(operand.ndim) if d not in collapsed and d not in operand_batching]
    out_rank = len(batch_shape) + len(offset_dims)
    batch_axes = [a for a in range(out_rank) if a not in offset_dims]
    out_shape = [0] * out_rank
    for a, n in zip(batch_axes, batch_shape):
        out_shape[a] = n
    for a, d in zip(offset_dims, window_dims):
        out_shape[a] = slice_sizes[d]
    result = np.zeros(out_shape, operand.dtype)
    for out_index in itertools.product(*map(range, out_shape)):
        batch_index = [out_index[a] for a in batch_axes]
        if index_vector_dim < indices.ndim:
            where = batch_index[:index_vector_dim] + [slice(None)] + batch_index[index_vector_dim:]
            start = list(indices[tuple(where)])
        else:
            start = [indices[tuple(batch_index)]]
        full = [0] * operand.ndim
        for k, d in enumerate(start_index_map):
            full[d] = min(max(int(start[k]), 0), operand.shape[d] - slice_sizes[d])
        for d, sd in zip(operand_batching, indices_batching):
            full[d] += batch_index[sd - (0 if sd < index_vector_dim else 1)]
        for a, d in zip(offset_dims, window_dims):
            full[d] += out_index[a]
        result[out_index] = operand[tuple(full)]
    return result


def spec_scatter(inputs, indices, updates, update_window_dims, inserted, input_batching, indices_batching,
                 scatter_dims_to_operand_dims, index_vector_dim, combine):
    """Sequential scatter in update order (scatter dims major); whole windows out of bounds skipped."""
    results = [x.copy() for x in inputs]
    shape = inputs[0].shape
    scatter_axes = [a for a in range(updates[0].ndim) if a not in update_window_dims]
    window_dims = [d for d in range(len(shape)) if d not in inserted and d not in input_batching]
    window_size = [1] * len(shape)
    for a, d in zip(update_window_dims, window_dims):
        window_size[d] = updates[0].shape[a]
    for scatter_index in itertools.product(*(range(updates[0].shape[a]) for a in scatter_axes)):
        scatter_index = list(scatter_index)
        if index_vector_dim < indices.ndim:
            where = scatter_index[:index_vector_dim] + [slice(None)] + scatter_index[index_vector_dim:]
            start = list(indices[tuple(where)])
        else:
            start = [indices[tuple(scatter_index)]]
        full = [0] * len(shape)
        for k, d in enumerate(scatter_dims_to_operand_dims):
            full[d] = int(start[k])
        if any(not 0 <= full[d] <= shape[d] - window_size[d] for d in range(len(shape))):
            continue
        for d, sd in zip(input_batching, indices_batching):
            full[d] += scatter_index[sd - (0 if sd < index_vector_dim else 1)]
        for window_index in itertools.product(*(range(updates[0].shape[a]) for a in update_window_dims)):
            update_index = [0] * updates[0].ndim
            for a, i in zip(scatter_axes, scatter_index):
                update_index[a] = i
            for a, i in zip(update_window_dims, window_index):
                update_index[a] = i
            target = list(full)
            for d, i in zip(window_dims, window_index):
                target[d] += i
            target = tuple(target)
            new = combine(*[r[target] for r in results], *[u[tuple(update_index)] for u in updates])
            for r, v in zip(results, new):
                r[target] = v
    return results


def tensor_type(shape, element) -> str:
    return "tensor<" + "".join(f"{n}x" for n in shape) + element + ">"


def ints(values) -> str:
    return "[" + ", ".join(str(v) for v in values) + "]"


# -- gather ------------------------------------------------------------------------------------

# (operand shape, indices shape, dimension numbers, slice sizes); indices' last dim is the vector.
GATHERS = [
    ((5, 4), (3, 1), GDN((1,), (0,), (0,)), (1, 4)),
    ((5, 4), (2, 3, 1), GDN((0,), (1,), (1,)), (5, 1)),
    ((4, 5, 6), (3, 2), GDN((1,), (0, 2), (2, 0)), (1, 3, 1)),
    ((6, 7), (4, 2), GDN((1, 2), (), (0, 1)), (2, 3)),
    ((6, 7), (2, 3, 2), GDN((0, 2), (), (1, 0)), (2, 3)),
    ((2, 3, 4, 2), (2, 2, 3, 2), GDN((3, 4), (1,), (2, 1), (0,), (1,)), (1, 1, 2, 2)),
    ((3, 5, 4), (3, 2, 1), GDN((2,), (1,), (1,), (0,), (0,)), (1, 1, 3)),
    ((5, 6), (3, 0), GDN((1, 2), (), ()), (2, 3)),
]


@pytest.mark.parametrize("case", range(len(GATHERS)))
@pytest.mark.parametrize("dtype", [np.float32, ml_dtypes.bfloat16, np.int8, np.uint32, np.bool_, np.complex64])
def test_gather_against_xla(case, dtype):
    operand_shape, indices_shape, dn, slice_sizes = GATHERS[case]
    rng = np.random.default_rng(case)
    operand = sample(operand_shape, dtype, rng)
    # Out-of-range and negative starts included: gather clamps them so the slice stays inside.
    indices = rng.integers(-3, 9, size=indices_shape).astype(np.int32)
    (got,) = check_against_jax(lambda x, i: lax.gather(x, i, dn, slice_sizes, mode=PROMISE), operand, indices)
    want = spec_gather(operand, indices, dn.offset_dims, dn.collapsed_slice_dims, dn.operand_batching_dims,
                       dn.start_indices_batching_dims, dn.start_index_map, len(indices_shape) - 1, slice_sizes)
    assert_same(got, want)


def _gather_text(operand, indices, dn, slice_sizes, result_shape, name="stablehlo.gather", extra_operand=""):
    element = {np.dtype(np.float32): "f32", np.dtype(np.int32): "i32"}[operand.dtype]
    index_element = {np.dtype(np.int32): "i32", np.dtype(np.int64): "i64", np.dtype(np.uint8): "ui8",
                     np.dtype(np.int8): "i8"}[indices.dtype]
    (offset, collapsed, ob, ib, sim, ivd) = dn
    attrs = (f"dimension_numbers = #stablehlo.gather<offset_dims = {ints(offset)}, collapsed_slice_dims = {ints(collapsed)}, "
             f"operand_batching_dims = {ints(ob)}, start_indices_batching_dims = {ints(ib)}, "
             f"start_index_map = {ints(sim)}, index_vector_dim = {ivd}>")
    operand_type = tensor_type(operand.shape, element)
    indices_type = tensor_type(indices.shape, index_element)
    result_type = tensor_type(result_shape, element)
    if extra_operand:
        signature = f"({operand_type}, {indices_type}, tensor<{len(slice_sizes)}xi64>) -> {result_type}"
        body = f'%0 = "{name}"(%x, %i, %s) {{{attrs}}} : {signature}'
        params = f"%x: {operand_type}, %i: {indices_type}, %s: tensor<{len(slice_sizes)}xi64>"
    else:
        signature = f"({operand_type}, {indices_type}) -> {result_type}"
        body = f'%0 = "{name}"(%x, %i) {{{attrs}, slice_sizes = array<i64: {", ".join(map(str, slice_sizes))}>}} : {signature}'
        params = f"%x: {operand_type}, %i: {indices_type}"
    return f"func.func @main({params}) -> {result_type} {{\n  {body}\n  return %0 : {result_type}\n}}"


# Index vectors along a middle dimension, or implicit (index_vector_dim == rank of the indices).
RAW_GATHERS = [
    ((2, 3, 4, 2), (2, 2, 3, 2), ((3, 4), (1,), (0,), (1,), (2, 1), 3), (1, 1, 2, 2), np.int64),
    ((2, 3, 4, 2), (2, 2, 2, 3), ((3, 4), (1,), (0,), (1,), (2, 1), 2), (1, 1, 2, 2), np.int32),
    ((7, 3), (2, 4), ((2,), (0,), (), (), (0,), 2), (1, 3), np.uint8),
    ((7, 3), (2, 4), ((0,), (1,), (), (), (1,), 2), (7, 1), np.int8),
    ((4, 3, 5), (4, 2), ((1,), (2,), (0,), (0,), (2,), 2), (1, 2, 1), np.int32),
    ((6, 5), (2, 3), ((0, 2), (), (), (), (1, 0), 0), (3, 2), np.int32),
]


@pytest.mark.parametrize("case", range(len(RAW_GATHERS)))
def test_gather_index_vector_dim_and_batching(case):
    operand_shape, indices_shape, dn, slice_sizes, index_dtype = RAW_GATHERS[case]
    rng = np.random.default_rng(10 + case)
    operand = sample(operand_shape, np.float32, rng)
    indices = rng.integers(0 if index_dtype == np.uint8 else -2, 8, size=indices_shape).astype(index_dtype)
    want = spec_gather(operand, indices, *dn, slice_sizes)
    text = _gather_text(operand, indices, dn, slice_sizes, want.shape)
    (got,) = run_mlir(text, operand, indices)
    assert_same(got, want)
    # dynamic_gather takes the same slice sizes as a runtime tensor.
    text = _gather_text(operand, indices, dn, slice_sizes, want.shape, "stablehlo.dynamic_gather", "s")
    (got,) = run_mlir(text, operand, indices, np.array(slice_sizes, np.int64))
    assert_same(got, want)


def test_gather_spec_example():
    operand = np.arange(1, 49, dtype=np.int32).reshape(2, 3, 4, 2)
    indices = np.array([[[[0, 0], [1, 0], [2, 1]], [[0, 1], [1, 1], [0, 9]]],
                        [[[0, 0], [2, 1], [2, 2]], [[1, 2], [0, 1], [1, 0]]]], dtype=np.int64)
    dn = ((3, 4), (1,), (0,), (1,), (2, 1), 3)
    text = _gather_text(operand, indices, dn, (1, 1, 2, 2), (2, 2, 3, 2, 2))
    (got,) = run_mlir(text, operand, indices)
    assert got[0, 0, 0].tolist() == [[1, 2], [3, 4]]
    assert got[0, 1, 2].tolist() == [[41, 42], [43, 44]]  # start (0, 9) clamped to (0, 2)
    assert got[1, 1, 0].tolist() == [[43, 44], [45, 46]]
    assert_same(got, spec_gather(operand, indices, *dn, (1, 1, 2, 2)))


@pytest.mark.parametrize("mode", ["clip", "fill", "wrap"])
@pytest.mark.parametrize("axis", [0, 1, 2])
def test_take(mode, axis):
    rng = np.random.default_rng(axis)
    x = sample((4, 5, 3), np.float32, rng)
    idx = np.array([[0, -1, 2], [7, -9, 1]], np.int32)
    check_against_jax(lambda x, i: jnp.take(x, i, axis=axis, mode=mode), x, idx)


def test_numpy_style_indexing():
    rng = np.random.default_rng(5)
    x = sample((6, 5, 4), ml_dtypes.bfloat16, rng)
    i = np.array([0, -1, 3, 3], np.int32)
    j = np.array([[1], [2]], np.int32)
    check_against_jax(lambda x, i, j: (x[i], x[i, :, 2], x[j, 1:3, i], x[:, i[:2]]), x, i, j)


def test_torch_index_select():
    rng = np.random.default_rng(6)
    x = sample((2, 3, 4, 5), np.float32, rng)
    index = np.array([[3, 0, 9], [-1, 2, 2]], np.int32)
    (got,) = run_mlir("""
func.func @main(%x: tensor<2x3x4x5xf32>, %i: tensor<2x3xi32>) -> tensor<2x3x3x5xf32> {
  %0 = "stablehlo.torch_index_select"(%x, %i) {dim = 2 : i64, batch_dims = 1 : i64} : (tensor<2x3x4x5xf32>, tensor<2x3xi32>) -> tensor<2x3x3x5xf32>
  return %0 : tensor<2x3x3x5xf32>
}""", x, index)
    clipped = np.clip(index, 0, 3)
    want = np.stack([x[b][:, clipped[b], :] for b in range(2)])
    assert_same(got, want)
    (got,) = run_mlir("""
func.func @main(%x: tensor<2x3x4x5xf32>, %i: tensor<2x3xi32>) -> tensor<2x3x3x4x5xf32> {
  %0 = "stablehlo.torch_index_select"(%x, %i) {dim = 0 : i64, batch_dims = 0 : i64} : (tensor<2x3x4x5xf32>, tensor<2x3xi32>) -> tensor<2x3x3x4x5xf32>
  return %0 : tensor<2x3x3x4x5xf32>
}""", x, index)
    assert_same(got, x[np.clip(index, 0, 1)])


# -- scatter -----------------------------------------------------------------------------------

SCATTER_DTYPES = [np.float32, ml_dtypes.bfloat16, np.float16, np.int32, np.uint8, np.int8]


@pytest.mark.parametrize("dtype", SCATTER_DTYPES)
@pytest.mark.parametrize("mode", ["drop", "clip", "promise_in_bounds"])
def test_at_updates_with_duplicates_and_out_of_bounds(dtype, mode):
    rng = np.random.default_rng(7)
    x = sample((8, 3), dtype, rng)
    idx = np.array([1, 1, 5, -1, 9, 1, -12, 5, 0, 7, 7, 7], np.int32)
    u = sample((12, 3), dtype, rng)
    small = (u % 3).astype(dtype) if np.dtype(dtype).kind in "iu" else u

    def f(x, i, u, small):
        out = []
        for method in ("add", "multiply", "min", "max", "set"):
            v = small if method == "multiply" else u
            out += [getattr(x.at[i], method)(v, mode=mode), getattr(x.at[:, i[:2]], method)(v[:8, :2], mode=mode)]
        return out

    check_against_jax(f, x, idx, u, small)


def test_bool_scatter_combiners():
    rng = np.random.default_rng(8)
    x = sample((10,), np.bool_, rng)
    idx = np.array([[1], [1], [3], [3], [3], [12], [0]], np.int32)
    u = sample((7,), np.bool_, rng)
    dn = SDN((), (0,), (0,))
    for fn in (lax.scatter_max, lax.scatter_min, lax.scatter):  # JAX refuses add/mul on bool
        check_against_jax(lambda x, i, u: fn(x, i, u, dn, mode=PROMISE), x, idx, u)
    # i1 add/multiply are or/and, like the logical ops themselves.
    for name, logical in [("add", np.logical_or), ("multiply", np.logical_and), ("and", np.logical_and),
                          ("or", np.logical_or), ("xor", np.logical_xor), ("maximum", np.logical_or)]:
        body = f"    %s = stablehlo.{name} %a0, %b0 : tensor<i1>\n    stablehlo.return %s : tensor<i1>"
        text = _scatter_text(body, 1, x.shape, ["i1"], idx.shape, u.shape, ((), (0,), (), (), (0,), 1))
        (got,) = run_mlir(text, x, idx, u)
        (want,) = spec_scatter([x], idx, [u], (), (0,), (), (), (0,), 1, lambda a, b: (logical(a, b),))
        assert_same(got, want)


# (input shape, indices shape, updates shape, dimension numbers); windows may hang over the edge.
SCATTERS = [
    ((5,), (3, 1), (3, 2), SDN((1,), (), (0,))),
    ((6, 4), (5, 1), (5, 4), SDN((1,), (0,), (0,))),
    ((6, 4), (5, 1), (4, 5), SDN((0,), (1,), (1,))),
    ((5, 6), (2, 3, 2), (2, 2, 3, 2), SDN((1, 3), (), (0, 1))),
    ((5, 6), (4, 2), (2, 4, 3), SDN((0, 2), (), (1, 0))),
    ((2, 3, 4, 2), (2, 2, 3, 2), (2, 2, 3, 2, 2), SDN((3, 4), (1,), (2, 1), (0,), (1,))),
    ((3, 5, 4), (3, 2, 1), (3, 2, 3), SDN((2,), (1,), (1,), (0,), (0,))),
]


@pytest.mark.parametrize("case", range(len(SCATTERS)))
@pytest.mark.parametrize("dtype", [np.float32, ml_dtypes.bfloat16, np.int16])
def test_scatter_windows_and_batching_against_xla(case, dtype):
    input_shape, indices_shape, updates_shape, dn = SCATTERS[case]
    rng = np.random.default_rng(20 + case)
    x = sample(input_shape, dtype, rng)
    indices = rng.integers(-2, 7, size=indices_shape).astype(np.int32)
    u = sample(updates_shape, dtype, rng)
    fns = (lax.scatter_add, lax.scatter_max, lax.scatter)
    got = check_against_jax(lambda x, i, u: [fn(x, i, u, dn, mode=PROMISE) for fn in fns], x, indices, u)
    if dtype == np.float32:
        (want,) = spec_scatter([x], indices, [u], dn.update_window_dims, dn.inserted_window_dims,
                               dn.operand_batching_dims, dn.scatter_indices_batching_dims,
                               dn.scatter_dims_to_operand_dims, len(indices_shape) - 1, lambda a, b: (a + b,))
        np.testing.assert_allclose(got[0], want, rtol=1e-6)


def test_partial_window_is_dropped_whole():
    x = np.zeros(5, np.float32)
    u = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    i = np.array([[4], [2]], np.int32)
    check_against_jax(lambda x, i, u: lax.scatter_add(x, i, u, SCATTERS[0][3], mode=PROMISE), x, i, u)


def test_narrow_float_add_rounds_after_every_update():
    # 1 + 16 * 2^-9 is 1.03125 in exact arithmetic, but each bf16 add of 2^-9 to 1 rounds back to 1.
    x = np.zeros(2, ml_dtypes.bfloat16)
    u = np.array([1.0] + [2 ** -9] * 16 + [3.0], ml_dtypes.bfloat16)
    i = np.array([0] * 17 + [1], np.int32)
    check_against_jax(lambda x, i, u: x.at[i].add(u), x, i, u)


def test_general_body_from_apply():
    # `.at[].apply` scatters a body that ignores the update: duplicates apply it several times.
    x = np.arange(6, dtype=np.float32)
    i = np.array([1, 1, 1, 4, 0, 4, 9], np.int32)
    check_against_jax(lambda x, i: x.at[i].apply(lambda v: v * 2 + 1, mode="drop"), x, i)


def _scatter_text(body_ops, n_inputs, shapes, elements, indices_shape, updates_shape, dn, index_element="i32"):
    (uwd, iwd, ib, sb, sdod, ivd) = dn
    attrs = (f"scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = {ints(uwd)}, inserted_window_dims = {ints(iwd)}, "
             f"input_batching_dims = {ints(ib)}, scatter_indices_batching_dims = {ints(sb)}, "
             f"scatter_dims_to_operand_dims = {ints(sdod)}, index_vector_dim = {ivd}>")
    in_types = [tensor_type(shapes, e) for e in elements]
    up_types = [tensor_type(updates_shape, e) for e in elements]
    idx_type = tensor_type(indices_shape, index_element)
    params = [f"%x{k}: {t}" for k, t in enumerate(in_types)] + [f"%i: {idx_type}"] + [f"%u{k}: {t}" for k, t in enumerate(up_types)]
    operands = [f"%x{k}" for k in range(n_inputs)] + ["%i"] + [f"%u{k}" for k in range(n_inputs)]
    block_args = [f"%a{k}: tensor<{e}>" for k, e in enumerate(elements)] + [f"%b{k}: tensor<{e}>" for k, e in enumerate(elements)]
    results = ", ".join(in_types)
    name = f"%r:{n_inputs}" if n_inputs > 1 else "%r"
    returned = ", ".join(f"%r#{k}" for k in range(n_inputs)) if n_inputs > 1 else "%r"
    return f"""
func.func @main({", ".join(params)}) -> ({results}) {{
  {name} = "stablehlo.scatter"({", ".join(operands)}) ({{
  ^bb0({", ".join(block_args)}):
{body_ops}
  }}) {{{attrs}}} : ({", ".join(in_types + [idx_type] + up_types)}) -> ({results})
  return {returned} : {results}
}}"""


def test_general_body_subtract_in_update_order():
    rng = np.random.default_rng(9)
    x = sample((4, 3), np.float32, rng)
    indices = np.array([[2, 0, 2, 2, 7], [0, 1, 0, 0, 0]], np.int32)  # index_vector_dim 0
    u = sample((5,), np.float32, rng)
    dn = ((), (0, 1), (), (), (0, 1), 0)
    body = "    %d = stablehlo.subtract %b0, %a0 : tensor<f32>\n    stablehlo.return %d : tensor<f32>"
    text = _scatter_text(body, 1, x.shape, ["f32"], indices.shape, u.shape, dn)
    (got,) = run_mlir(text, x, indices, u)
    (want,) = spec_scatter([x], indices, [u], (), (0, 1), (), (), (0, 1), 0, lambda a, b: (b - a,))
    assert_same(got, want)


def test_variadic_scatter_with_implicit_index_vector():
    # Two results updated together by an argmax-like body; index_vector_dim == rank(indices).
    rng = np.random.default_rng(11)
    values = sample((6,), np.float32, rng)
    positions = np.arange(6, dtype=np.int32)
    indices = np.array([[1, 1, 3], [5, 1, 0]], np.int64)
    u_values = sample((2, 3), np.float32, rng)
    u_positions = np.arange(10, 16, dtype=np.int32).reshape(2, 3)
    body = """    %gt = stablehlo.compare GT, %b0, %a0 : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %v = stablehlo.select %gt, %b0, %a0 : tensor<i1>, tensor<f32>
    %p = stablehlo.select %gt, %b1, %a1 : tensor<i1>, tensor<i32>
    stablehlo.return %v, %p : tensor<f32>, tensor<i32>"""
    dn = ((), (0,), (), (), (0,), 2)
    text = _scatter_text(body, 2, values.shape, ["f32", "i32"], indices.shape, u_values.shape, dn, "i64")
    got = run_mlir(text, values, positions, indices, u_values, u_positions)

    def combine(a0, a1, b0, b1):
        return (b0, b1) if b0 > a0 else (a0, a1)

    want = spec_scatter([values, positions], indices, [u_values, u_positions], (), (0,), (), (), (0,), 2, combine)
    for g, w in zip(got, want):
        assert_same(g, w)


def test_variadic_add_and_overwrite_bodies():
    rng = np.random.default_rng(12)
    a, b = sample((5,), np.int32, rng), sample((5,), np.float32, rng)
    indices = np.array([[0], [3], [3], [0], [4]], np.int32)
    ua, ub = sample((5,), np.int32, rng), sample((5,), np.float32, rng)
    dn = ((), (0,), (), (), (0,), 1)
    adds = ("    %s0 = stablehlo.add %a0, %b0 : tensor<i32>\n    %s1 = stablehlo.add %b1, %a1 : tensor<f32>\n"
            "    stablehlo.return %s0, %s1 : tensor<i32>, tensor<f32>")
    got = run_mlir(_scatter_text(adds, 2, (5,), ["i32", "f32"], indices.shape, (5,), dn), a, b, indices, ua, ub)
    want = spec_scatter([a, b], indices, [ua, ub], (), (0,), (), (), (0,), 1, lambda p, q, r, s: (p + r, q + s))
    for g, w in zip(got, want):
        assert_same(g, w)
    sets = "    stablehlo.return %b0, %b1 : tensor<i32>, tensor<f32>"
    got = run_mlir(_scatter_text(sets, 2, (5,), ["i32", "f32"], indices.shape, (5,), dn), a, b, indices, ua, ub)
    want = spec_scatter([a, b], indices, [ua, ub], (), (0,), (), (), (0,), 1, lambda p, q, r, s: (r, s))
    for g, w in zip(got, want):
        assert_same(g, w)


def test_scatter_spec_example():
    x = np.arange(1, 49, dtype=np.int64).reshape(2, 3, 4, 2)
    indices = np.array([[[[0, 0], [1, 0], [2, 1]], [[0, 1], [1, 1], [0, 9]]],
                        [[[0, 0], [2, 1], [2, 2]], [[1, 2], [0, 1], [1, 0]]]], dtype=np.int64)
    u = np.ones((2, 2, 3, 2, 2), np.int64)
    body = "    %s = stablehlo.add %a0, %b0 : tensor<i64>\n    stablehlo.return %s : tensor<i64>"
    dn = ((3, 4), (1,), (0,), (1,), (2, 1), 3)
    (got,) = run_mlir(_scatter_text(body, 1, x.shape, ["i64"], indices.shape, u.shape, dn, "i64"), x, indices, u)
    assert got[0].tolist() == [[[3, 4], [6, 7], [6, 7], [7, 8]], [[9, 10], [11, 12], [15, 16], [17, 18]],
                               [[17, 18], [19, 20], [22, 23], [24, 25]]]
    assert got[1].tolist() == [[[25, 26], [28, 29], [30, 31], [31, 32]], [[35, 36], [38, 39], [38, 39], [39, 40]],
                               [[41, 42], [44, 45], [46, 47], [47, 48]]]


# -- scale: a looped implementation would take minutes here ---------------------------------------


def test_million_element_scatter_add_and_gather():
    rng = np.random.default_rng(13)
    n = 1_000_000
    x = np.zeros(1000, np.float32)
    idx = rng.integers(0, 1000, size=(n, 1)).astype(np.int32)
    u = rng.standard_normal(n).astype(np.float32)
    dn = SDN((), (0,), (0,))
    check_against_jax(lambda x, i, u: lax.scatter_add(x, i, u, dn, mode=PROMISE), x, idx, u, rtol=1e-6)
    table = rng.standard_normal((1000, 4)).astype(np.float32)
    gdn = GDN((1,), (0,), (0,))
    check_against_jax(lambda t, i: lax.gather(t, i, gdn, (1, 4), mode=PROMISE), table, idx)
    # A general body on many duplicates runs in rounds, one whole-array region call per round.
    check_against_jax(lambda x, i: x.at[i[:20000, 0] % 100].apply(lambda v: v * 0.5 + 1), x, idx)
