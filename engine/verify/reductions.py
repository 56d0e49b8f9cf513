"""Verifier checks: Reductions and windows."""
from __future__ import annotations

from typing import Optional, Sequence

from ..ir.core import Operation
from .shape_inference import (
    check_range,
    check_unique,
    dim_eq,
    element_compatible,
    fail,
    fmt_types,
    rank_of,
    window_count,
)
from ..ir.types import IntegerType, TensorType, Type
from .core import (
    _Context,
    _block,
    _check_reducer,
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
            fail(f"init value #{i} must be a 0-dimensional tensor, got {inits[i]}")
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
            fail(f"init value #{i} must be a 0-dimensional tensor, got {inits[i]}")
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
    for name, values, c_size, c_pos in (("window_dimensions", window, "C4", "C5"),
                                        ("window_strides", strides, "C6", "C7"),
                                        ("base_dilations", base, "C8", "C9"),
                                        ("window_dilations", wdil, "C10", "C11")):
        if len(values) != rank:
            fail(f"{name} has {len(values)} entries but the inputs have rank {rank}", c_size)
        for i, v in enumerate(values):
            if v <= 0:
                fail(f"{name}[{i}] = {v} must be positive", c_pos)
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
    _same_elem(x, source, "operand and source must have the same element type", "C2")
    if rank_of(init) not in (None, 0):
        fail(f"init_value must be a 0-dimensional tensor, got {init}")
    _same_elem(x, init, "init_value must have the operand's element type", "C4")
    _same_type(x, r, "result must have the operand's type", "C12")
    e = x.element
    args = [a.type for a in _block(op, 0).arguments]
    if len(args) != 2 or not all(_is_scalar_of(a, e) for a in args):
        fail(f"select must take (tensor<{e}>, tensor<{e}>), takes {fmt_types(args)}", "C10")
    returned = _returned(op, 0)
    if len(returned) != 1 or not _is_scalar_of(returned[0], IntegerType(1)):
        fail(f"select must return tensor<i1>, returns {fmt_types(returned)}", "C10")
    _check_reducer(op, 1, [e], [init], "C11", "scatter")
    if x.shape is None:
        return
    rank = len(x.shape)
    window, strides, _, _ = _window_attrs(op, rank)
    for name, values, c_size, c_pos in (("window_dimensions", window, "C5", "C6"),
                                        ("window_strides", strides, "C7", "C8")):
        if len(values) != rank:
            fail(f"{name} has {len(values)} entries but the operand has rank {rank}", c_size)
        for i, v in enumerate(values):
            if v <= 0:
                fail(f"{name}[{i}] = {v} must be positive", c_pos)
    padding = _padding(op, "padding", rank, "C9")
    inferred = tuple(window_count(x.shape[i], window[i], strides[i], 1, 1, *padding[i]) for i in range(rank))
    _expect_shape(source, inferred, "C3", "source")


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


def _feature_index(op: Operation, x: TensorType) -> Optional[int]:
    f = _int(op, "feature_index")
    if x.shape is not None and not 0 <= f < len(x.shape):
        fail(f"feature_index {f} is out of range [0, {len(x.shape)})", "C1")
    return None if x.shape is None else x.shape[f]


def _check_features(types: Sequence[tuple[str, Type]], x: TensorType, size, elem_c: str, size_c: str) -> None:
    for name, t in types:
        t = _tensor(t, name)
        _same_elem(x, t, f"{name} must have the operand's element type", elem_c)
        if rank_of(t) not in (None, 1):
            fail(f"{name} must be 1-dimensional, got {t}")
        if t.shape is not None and not dim_eq(t.shape[0], size):
            fail(f"{name} has size {t.shape[0]} but dim(operand, feature_index) = {size}", size_c)


@_register("stablehlo.batch_norm_inference")
def _batch_norm_inference(op: Operation, ctx: _Context) -> None:
    x = _tensor(op.operand_types[0], "operand")
    size = _feature_index(op, x)
    names = ("scale", "offset", "mean", "variance")
    _check_features(list(zip(names, op.operand_types[1:])), x, size, "C2", "C3")
    _same_type(x, op.result_types[0], "result must have the operand's type", "C7")


@_register("stablehlo.batch_norm_training")
def _batch_norm_training(op: Operation, ctx: _Context) -> None:
    x = _tensor(op.operand_types[0], "operand")
    size = _feature_index(op, x)
    _check_features([("scale", op.operand_types[1]), ("offset", op.operand_types[2])], x, size, "C2", "C3")
    _same_type(x, op.result_types[0], "output must have the operand's type", "C7")
    _check_features([("batch_mean", op.result_types[1]), ("batch_var", op.result_types[2])], x, size, "C2", "C5")


@_register("stablehlo.batch_norm_grad")
def _batch_norm_grad(op: Operation, ctx: _Context) -> None:
    x = _tensor(op.operand_types[0], "operand")
    size = _feature_index(op, x)
    names = ("scale", "mean", "variance")
    _check_features(list(zip(names, op.operand_types[1:4])), x, size, "C2", "C5")
    _same_type(x, op.operand_types[4], "grad_output must have the operand's type", "C3")
    _same_type(x, op.result_types[0], "grad_operand must have the operand's type", "C3")
    _check_features([("grad_scale", op.result_types[1]), ("grad_offset", op.result_types[2])], x, size, "C2", "C4")
