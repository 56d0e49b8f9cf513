"""Verifier checks: Reductions and windows."""
from __future__ import annotations

from ..ir.core import Operation
from ..ir.types import IntegerType, TensorType
from .core import (
    _block,
    _check_reducer,
    _Context,
    _expect_shape,
    _int,
    _ints,
    _is_scalar_of,
    _padding,
    _register,
    _returned,
    _same_elem,
    _same_shape,
    _same_type,
    _tensor,
)
from .shape_inference import (
    check_range,
    check_unique,
    check_window_lists,
    dim_eq,
    element_compatible,
    fail,
    fmt_types,
    rank_of,
    window_count,
)


def _paired_reduction_types(op: Operation, constraint: str):
    """reduce and reduce_window take N inputs, then N init values, and give N results."""
    n = len(op.operands) // 2
    if n < 1 or len(op.results) != n:
        fail(f"needs N >= 1 inputs, N init values and N results, got {len(op.operands)} operands and "
             f"{len(op.results)} results", constraint)
    inputs = [_tensor(t, f"input #{i}") for i, t in enumerate(op.operand_types[:n])]
    inits = [_tensor(t, f"init value #{i}") for i, t in enumerate(op.operand_types[n:])]
    results = [_tensor(t, f"result #{i}") for i, t in enumerate(op.result_types)]
    return n, inputs, inits, results


@_register("stablehlo.reduce")
def _reduce(op: Operation, ctx: _Context) -> None:
    n, inputs, inits, results = _paired_reduction_types(op, "C3")
    for i, t in enumerate(inputs):
        _same_shape(inputs[0], t, f"input #{i} must have the shape of input #0", "C1")
        if rank_of(inits[i]) not in (None, 0):
            fail(f"init value #{i} must be a 0-dimensional tensor, got {inits[i]}", "I2")
        # The spec converts init values to the body's types, so they keep the inputs' type even
        # when the body accumulates in a wider one (the C++ verifier wants the body's type here).
        _same_elem(t, inits[i], f"input #{i} and init value #{i} must have the same element type", "C2")
    dims = _ints(op, "dimensions")
    rank = rank_of(inputs[0])
    check_range(dims, rank, "dimension", "C4")
    check_unique(dims, "dimensions", "C5")
    elems = _check_reducer(op, 0, [t.element for t in inputs], inits, "C6")
    for i, (t, res) in enumerate(zip(inputs, results)):
        if t.shape is not None:
            _expect_shape(res, tuple(d for k, d in enumerate(t.shape) if k not in dims), "C7", f"result #{i}")
        if not element_compatible(res.element, elems[i]):
            fail(f"result #{i} has type {res} but the body produces {elems[i]}", "C8")


def _window_attrs(op: Operation, rank: int, dims_name: str = "window_dimensions"):
    window = _ints(op, dims_name, [1] * rank)
    strides = _ints(op, "window_strides", [1] * rank)
    base = _ints(op, "base_dilations", [1] * rank)
    wdil = _ints(op, "window_dilations", [1] * rank)
    return window, strides, base, wdil


@_register("stablehlo.reduce_window")
def _reduce_window(op: Operation, ctx: _Context) -> None:
    n, inputs, inits, results = _paired_reduction_types(op, "C1")
    for i in range(n):
        _same_shape(inputs[0], inputs[i], f"input #{i} must have the shape of input #0", "C2")
        _same_elem(inputs[i], inits[i], f"input #{i} and init value #{i} must have the same element type", "C3")
        if rank_of(inits[i]) not in (None, 0):
            fail(f"init value #{i} must be a 0-dimensional tensor, got {inits[i]}", "I2")
        _same_shape(results[0], results[i], f"result #{i} must have the shape of result #0", "C14")
    elems = _check_reducer(op, 0, [t.element for t in inputs], inits, "C13")
    for i, res in enumerate(results):
        if not element_compatible(res.element, elems[i]):
            fail(f"result #{i} has type {res} but the body produces {elems[i]}", "C16")
    shape = inputs[0].shape
    if shape is None:
        return
    rank = len(shape)
    window, strides, base, wdil = _window_attrs(op, rank)
    check_window_lists((("window_dimensions", window, "C4", "C5"),
                        ("window_strides", strides, "C6", "C7"),
                        ("base_dilations", base, "C8", "C9"),
                        ("window_dilations", wdil, "C10", "C11")),
                       rank, f"the inputs have rank {rank}")
    padding = _padding(op, "padding", rank, "C12")
    inferred = tuple(window_count(shape[i], window[i], strides[i], base[i], wdil[i], *padding[i])
                     for i in range(rank))
    _expect_shape(results[0], inferred, "C15", "result #0")


@_register("stablehlo.select_and_scatter")
def _select_and_scatter(op: Operation, ctx: _Context) -> None:
    x = _tensor(op.operand_types[0], "operand")
    source = _tensor(op.operand_types[1], "source")
    init = _tensor(op.operand_types[2], "init_value")
    r = _tensor(op.result_types[0], "result")
    _same_elem(x, source, "operand and source must have the same element type", "C1")
    if rank_of(init) not in (None, 0):
        fail(f"init_value must be a 0-dimensional tensor, got {init}", "I3")
    _same_elem(x, init, "init_value must have the operand's element type", "C3")
    e = x.element
    args = [a.type for a in _block(op, 0).arguments]
    if len(args) != 2 or not all(_is_scalar_of(a, e) for a in args):
        fail(f"select must take (tensor<{e}>, tensor<{e}>), takes {fmt_types(args)}", "C9")
    returned = _returned(op, 0)
    if len(returned) != 1 or not _is_scalar_of(returned[0], IntegerType(1)):
        fail(f"select must return tensor<i1>, returns {fmt_types(returned)}", "C9")
    # The scatter body may accumulate in a wider type than the operand's, and the result follows it.
    scatter_e = _check_reducer(op, 1, [e], [init], "C10", "scatter")[0]
    _same_shape(x, r, "result must have the operand's shape", "C11")
    if not element_compatible(r.element, scatter_e):
        fail(f"result has type {r} but the scatter body produces {scatter_e}", "C12")
    if x.shape is None:
        return
    rank = len(x.shape)
    window, strides, _, _ = _window_attrs(op, rank)
    if "window_dimensions" not in op.attributes:
        # The dialect lets the attribute be left out, but it has no default (spec I4): an absent
        # window is an empty one, as for the StableHLO C++ verifier.
        window = []
    check_window_lists((("window_dimensions", window, "C4", "C5"),
                        ("window_strides", strides, "C6", "C7")),
                       rank, f"the operand has rank {rank}")
    padding = _padding(op, "padding", rank, "C8")
    inferred = tuple(window_count(x.shape[i], window[i], strides[i], 1, 1, *padding[i]) for i in range(rank))
    _expect_shape(source, inferred, "C2", "source")


@_register("stablehlo.sort")
def _sort(op: Operation, ctx: _Context) -> None:
    if not op.operands:
        fail("needs at least one input", "C1")
    inputs = [_tensor(t, f"input #{i}") for i, t in enumerate(op.operand_types)]
    if len(op.results) != len(inputs):
        fail(f"has {len(inputs)} inputs but {len(op.results)} results", "C2")
    for i, (t, res) in enumerate(zip(inputs, op.result_types)):
        _same_type(t, res, f"result #{i} must have the type of input #{i}", "C2")
        _same_shape(inputs[0], t, f"input #{i} must have the shape of input #0", "C3")
    rank = rank_of(inputs[0])
    d = _int(op, "dimension", -1)
    if rank is not None and not -rank <= d < rank:
        fail(f"dimension {d} is out of range [{-rank}, {rank})", "C4")
    args = [a.type for a in _block(op, 0).arguments]
    if len(args) != 2 * len(inputs):
        fail(f"comparator must take {2 * len(inputs)} arguments, got {len(args)}", "C5")
    for i, t in enumerate(inputs):
        for a in args[2 * i:2 * i + 2]:
            if not _is_scalar_of(a, t.element):
                fail(f"comparator arguments #{2 * i} and #{2 * i + 1} must be tensor<{t.element}>, got {a}", "C5")
    returned = _returned(op, 0)
    if len(returned) != 1 or not _is_scalar_of(returned[0], IntegerType(1)):
        fail(f"comparator must return tensor<i1>, returns {fmt_types(returned)}", "C5")


def _feature_size(op: Operation, x: TensorType):
    """dim(operand, feature_index), after checking that feature_index names a dimension (C1)."""
    f = _int(op, "feature_index")
    if x.shape is not None and not 0 <= f < len(x.shape):
        fail(f"feature_index {f} is out of range [0, {len(x.shape)})", "C1")
    return None if x.shape is None else x.shape[f]


def _batch_norm_types(op: Operation, elem_c: str) -> list[tuple[str, TensorType]]:
    """Every operand and result, named as the spec names them, sharing one element type."""
    names = _BATCH_NORM_NAMES[op.name]
    typed = [(name, _tensor(t, name)) for name, t in zip(names, [*op.operand_types, *op.result_types])]
    x = typed[0][1]
    for name, t in typed[1:]:
        _same_elem(x, t, f"{name} must have the operand's element type", elem_c)
    return typed


_BATCH_NORM_NAMES = {
    "stablehlo.batch_norm_grad": ("operand", "scale", "mean", "variance", "grad_output",
                                  "grad_operand", "grad_scale", "grad_offset"),
    "stablehlo.batch_norm_inference": ("operand", "scale", "offset", "mean", "variance", "result"),
    "stablehlo.batch_norm_training": ("operand", "scale", "offset", "output", "batch_mean", "batch_var"),
}


def _check_feature_vector(name: str, t: TensorType, size, constraint: str) -> None:
    if rank_of(t) not in (None, 1):
        fail(f"{name} must be 1-dimensional, got {t}")
    if t.shape is not None and not dim_eq(t.shape[0], size):
        fail(f"{name} has size {t.shape[0]} but dim(operand, feature_index) = {size}", constraint)


@_register("stablehlo.batch_norm_inference", "stablehlo.batch_norm_training")
def _batch_norm_forward(op: Operation, ctx: _Context) -> None:
    typed = dict(_batch_norm_types(op, "C2"))
    x = typed["operand"]
    size = _feature_size(op, x)
    if op.name == "stablehlo.batch_norm_inference":
        vectors, output = (("scale", "C3"), ("offset", "C4"), ("mean", "C5"), ("variance", "C6")), "result"
    else:
        vectors, output = (("scale", "C3"), ("offset", "C4"), ("batch_mean", "C5"), ("batch_var", "C6")), "output"
    for name, constraint in vectors:
        _check_feature_vector(name, typed[name], size, constraint)
    _same_shape(x, typed[output], f"{output} must have the operand's shape", "C7")


@_register("stablehlo.batch_norm_grad")
def _batch_norm_grad(op: Operation, ctx: _Context) -> None:
    typed = dict(_batch_norm_types(op, "C2"))
    x = typed["operand"]
    size = _feature_size(op, x)
    for name in ("grad_output", "grad_operand"):
        _same_shape(x, typed[name], f"{name} must have the operand's shape", "C3")
    _check_feature_vector("scale", typed["scale"], size, "C5")
    for name in ("mean", "variance", "grad_scale", "grad_offset"):
        if rank_of(typed[name]) not in (None, 1):
            fail(f"{name} must be 1-dimensional, got {typed[name]}")
        _same_shape(typed["scale"], typed[name], f"{name} must have the shape of scale", "C4")
