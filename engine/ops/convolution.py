"""convolution and dynamic_conv, lowered to batched matmuls on the device (im2col); and the
provenance of a convolution's result element (its window, pairs and feature groups).

The input is brought to `[batch, spatial..., feature]`, dilated and padded once, and every window
is read through a strided view; one `device.matmul` per call then multiplies the windows (one
row per output position) with the kernel (batched over feature or batch groups). Window
reversal flips the kernel, which is the same as reversing every window.
"""
from __future__ import annotations

import itertools
from math import prod
from typing import Optional

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from ..ir.phrases import Phrase
from .contraction import matmul_numerics
from .provenance import ProvenanceQuery, Source, explains
from .registry import OpCall, op
from .shape_provenance import PADDING_AMOUNT


@op("stablehlo.convolution")
def convolution(call: OpCall, lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    padding = call.attr("padding")
    return _convolve(call, lhs, rhs, None if padding is None else padding.array)


@op("stablehlo.dynamic_conv")
def dynamic_conv(call: OpCall, lhs: np.ndarray, rhs: np.ndarray, padding: np.ndarray) -> np.ndarray:
    spatial = len(call.attr("dimension_numbers").input_spatial_dimensions)
    padding = np.asarray(padding)
    if padding.shape != (spatial, 2):
        raise call.error(f"padding has shape {padding.shape}; expected ({spatial}, 2)")
    return _convolve(call, lhs, rhs, padding.astype(np.int64))


class _Window:
    """The window attributes of a convolution, with their defaults filled in."""

    def __init__(self, call: OpCall):
        dn = call.attr("dimension_numbers")
        s = len(dn.input_spatial_dimensions)
        self.dn = dn
        self.strides = tuple(call.attr("window_strides") or (1,) * s)
        self.lhs_dilation = tuple(call.attr("lhs_dilation") or (1,) * s)
        self.rhs_dilation = tuple(call.attr("rhs_dilation") or (1,) * s)
        self.reversal = tuple(bool(r) for r in (call.attr("window_reversal") or (False,) * s))
        self.feature_groups = int(call.attr("feature_group_count", 1))
        self.batch_groups = int(call.attr("batch_group_count", 1))
        for name in ("strides", "lhs_dilation", "rhs_dilation", "reversal"):
            if len(getattr(self, name)) != s:
                raise call.error(f"{name} has {len(getattr(self, name))} entries for {s} spatial dimensions")
        if min((*self.strides, *self.lhs_dilation, *self.rhs_dilation), default=1) < 1:
            raise call.error("window strides and dilations must be positive")
        if self.feature_groups < 1 or self.batch_groups < 1:
            raise call.error("feature_group_count and batch_group_count must be positive")
        if self.feature_groups > 1 and self.batch_groups > 1:
            raise call.error("feature_group_count and batch_group_count cannot both exceed 1")


def _convolve(call: OpCall, lhs: np.ndarray, rhs: np.ndarray, padding: Optional[np.ndarray]) -> np.ndarray:
    w = call.cached("window", lambda: _Window(call))
    dn = w.dn
    s = len(dn.input_spatial_dimensions)
    pads = [(0, 0)] * s if padding is None else [(int(lo), int(hi)) for lo, hi in np.asarray(padding).reshape(s, 2)]

    # Canonical layouts: input [N, spatial..., C], kernel [spatial..., I, O].
    x = lhs.transpose((dn.input_batch_dimension, *dn.input_spatial_dimensions, dn.input_feature_dimension))
    kernel = rhs.transpose((*dn.kernel_spatial_dimensions, dn.kernel_input_feature_dimension,
                            dn.kernel_output_feature_dimension))
    if any(w.reversal):
        kernel = kernel[tuple(slice(None, None, -1) if r else slice(None) for r in w.reversal)]
    n, c = x.shape[0], x.shape[-1]
    window, (i_features, o_features) = kernel.shape[:-2], kernel.shape[-2:]
    fg, bg = w.feature_groups, w.batch_groups
    if c % fg or i_features * fg != c:
        raise call.error(f"input features ({c}) must be kernel input features ({i_features}) x feature_group_count ({fg})")
    if o_features % fg or o_features % bg:
        raise call.error(f"kernel output features ({o_features}) must be divisible by the group counts ({fg}, {bg})")
    if n % bg:
        raise call.error(f"batch size ({n}) must be divisible by batch_group_count ({bg})")

    x = _dilate_and_pad(x, w.lhs_dilation, pads)
    extents = [(k - 1) * d + 1 if k > 0 else 0 for k, d in zip(window, w.rhs_dilation)]
    out_sizes = [
        (p - e) // st + 1 if p >= e and e > 0 else 0 for p, e, st in zip(x.shape[1:-1], extents, w.strides)
    ]
    out_batch = n // bg
    dtype = call.result_dtype
    if min((*out_sizes, out_batch, o_features, c, prod(window)), default=1) == 0:
        # Nothing to multiply: the result has no elements or is a sum over an empty window.
        canonical = np.zeros((out_batch, *out_sizes, o_features), dtype)
        return _to_output_layout(canonical, dn)

    # Windows as [N, out spatial..., C, window...] (a strided view: no copy yet).
    view = sliding_window_view(x, extents, axis=tuple(range(1, s + 1)))
    view = view[(slice(None), *(slice(None, None, st) for st in w.strides), slice(None),
                 *(slice(None, None, d) for d in w.rhs_dilation))]
    groups = fg * bg
    # Kernel: [group, group features x window, group outputs], in the rows' (feature, window) order.
    cols = np.moveaxis(kernel, -2, 0).reshape(i_features * prod(window), groups, o_features // groups)
    cols = cols.transpose(1, 0, 2)
    # The im2col copy holds every window of every output position: past IM2COL_BYTES, the leading
    # output spatial dimensions are walked one index at a time (a large dilated window over a
    # long dimension would otherwise need tens of gigabytes at once).
    per_position = n * c * prod(window) * x.dtype.itemsize
    walked = 0
    while walked < s and per_position * prod(out_sizes[walked:]) > IM2COL_BYTES:
        walked += 1
    if walked == 0:
        return _to_output_layout(_windows_times_kernel(call, view, cols, w, out_batch, out_sizes, dtype), dn)
    canonical = np.empty((out_batch, *out_sizes, o_features), dtype)
    for at in itertools.product(*(range(size) for size in out_sizes[:walked])):
        part = view[(slice(None), *(slice(i, i + 1) for i in at))]
        chunk = _windows_times_kernel(call, part, cols, w, out_batch, [1] * walked + list(out_sizes[walked:]), dtype)
        canonical[(slice(None), *(slice(i, i + 1) for i in at))] = chunk
    return _to_output_layout(canonical, dn)


# The most bytes one im2col copy (every window of the output positions multiplied at once) takes.
IM2COL_BYTES = 256 << 20


def _windows_times_kernel(call: OpCall, view: np.ndarray, cols: np.ndarray, w: _Window, out_batch: int,
                          out_sizes: list, dtype) -> np.ndarray:
    """The canonical [batch, out spatial..., outputs] result for the windows `view` holds."""
    n, c = view.shape[0], view.shape[len(out_sizes) + 1]
    window_size = prod(view.shape[len(out_sizes) + 2:])
    fg, bg = w.feature_groups, w.batch_groups
    groups, positions, o_features = fg * bg, prod(out_sizes), cols.shape[0] * cols.shape[2]
    cg = c // fg
    # Rows: [group, batch x positions, group features x window]; the reshape is the im2col copy.
    if bg > 1:
        rows = view.reshape(bg, out_batch * positions, c * window_size)
    else:
        rows = view.reshape(n, *out_sizes, fg, cg * window_size)
        rows = np.moveaxis(rows, -2, 0).reshape(fg, n * positions, cg * window_size)
    product = call.backend.matmul(rows, cols, dtype, **matmul_numerics(call))
    # [group, batch, positions, group outputs] -> [batch, positions, group, group outputs]
    product = product.reshape(groups, out_batch, *out_sizes, o_features // groups)
    return np.moveaxis(product, 0, -2).reshape(out_batch, *out_sizes, o_features)


def _dilate_and_pad(x: np.ndarray, dilation: tuple[int, ...], pads: list[tuple[int, int]]) -> np.ndarray:
    """Insert `dilation - 1` zeros between elements of each spatial dim, then pad (negative crops)."""
    if all(d == 1 for d in dilation) and all(lo == 0 and hi == 0 for lo, hi in pads):
        return x
    sizes = x.shape[1:-1]
    dilated = [(size - 1) * d + 1 if size > 0 else 0 for size, d in zip(sizes, dilation)]
    padded = [max(dl + lo + hi, 0) for dl, (lo, hi) in zip(dilated, pads)]
    out = np.zeros((x.shape[0], *padded, x.shape[-1]), x.dtype)
    src, dst = [slice(None)], [slice(None)]
    for size, d, (lo, _), length in zip(sizes, dilation, pads, padded):
        # Element i lands at lo + i*d; keep the ones inside [0, length).
        first = 0 if lo >= 0 else (-lo + d - 1) // d
        last = min(size - 1, (length - 1 - lo) // d) if length > 0 else -1
        if last < first:
            return out
        src.append(slice(first, last + 1))
        dst.append(slice(lo + first * d, lo + last * d + 1, d))
    src.append(slice(None))
    dst.append(slice(None))
    out[tuple(dst)] = x[tuple(src)]
    return out


def _to_output_layout(canonical: np.ndarray, dn) -> np.ndarray:
    """`[batch, spatial..., feature]` to the dimension order the result type names."""
    axes = [0] * canonical.ndim
    axes[dn.output_batch_dimension] = 0
    for i, d in enumerate(dn.output_spatial_dimensions):
        axes[d] = i + 1
    axes[dn.output_feature_dimension] = canonical.ndim - 1
    return canonical.transpose(axes)


# -- element provenance ------------------------------------------------------------------------

INPUT_ELEMENT = Phrase("input element")
KERNEL_ELEMENT = Phrase("kernel element")
CONV_OUTPUT = Phrase("result{index}: batch {batch}, output feature {feature}, window at output position {position}")
CONV_FEATURE_GROUP = Phrase(
    "feature_group_count = {groups}: output feature {feature} is in group {group}, which reads input features "
    "{first}..{last} with kernel input features 0..{kernel_last}")
CONV_BATCH_GROUP = Phrase(
    "batch_group_count = {groups}: output feature {feature} is in batch group {group}, "
    "so it reads input batch {group}·{batches}+{batch} = {input_batch}")
CONV_PAIR = Phrase("window position {window}: input[{input}] · kernel[{kernel}] for each input feature")
CONV_PADDING = Phrase("window position {window}: spatial dimension {dim} lands on padding at {position}: no input element")
CONV_HOLE = Phrase(
    "window position {window}: spatial dimension {dim} lands at {position}, between input elements "
    "(lhs_dilation {dilation}): no input element")
CONV_SUM = Phrase("result{index} = Σ of {count} products input · kernel")


@explains("stablehlo.convolution", "stablehlo.dynamic_conv")
def convolution_provenance(q: ProvenanceQuery):
    """result[b, o..., of] = Σ over the window and the group's input features of input · kernel.

    Window position k of spatial dimension d reads the dilated, padded input at
    `o·stride + k·rhs_dilation`; minus the low padding that is a position in the dilated input,
    which holds input element `position / lhs_dilation` when lhs_dilation divides it, and nothing
    (a zero) otherwise or outside. The kernel element paired with it is k, or `size-1-k` where
    window_reversal flips the dimension.
    """
    w = q.memo.get("window") or q.memo.setdefault("window", _Window(q))
    dn = w.dn
    s = len(dn.input_spatial_dimensions)
    dynamic = q.op.name == "stablehlo.dynamic_conv"  # its padding is operand 2, read at run time
    padding = q.operand_value(2) if dynamic else q.attr("padding")
    pads = [(0, 0)] * s if padding is None else [
        (int(lo), int(hi)) for lo, hi in np.asarray(padding if dynamic else padding.array).reshape(s, 2)]
    lhs_shape, rhs_shape = q.operand_shape(0), q.operand_shape(1)
    sizes = [lhs_shape[d] for d in dn.input_spatial_dimensions]
    window = [rhs_shape[d] for d in dn.kernel_spatial_dimensions]
    features, i_features = lhs_shape[dn.input_feature_dimension], rhs_shape[dn.kernel_input_feature_dimension]
    o_features = rhs_shape[dn.kernel_output_feature_dimension]
    batch, feature = q.index[dn.output_batch_dimension], q.index[dn.output_feature_dimension]
    out = [q.index[d] for d in dn.output_spatial_dimensions]
    steps: list = [(CONV_OUTPUT, {"index": q.index, "batch": batch, "feature": feature, "position": out})]

    input_batch, first_feature = batch, 0
    if w.batch_groups > 1:
        group = feature // (o_features // w.batch_groups)
        out_batch = lhs_shape[dn.input_batch_dimension] // w.batch_groups
        input_batch = group * out_batch + batch
        steps.append((CONV_BATCH_GROUP, {"groups": w.batch_groups, "feature": feature, "group": group,
                                         "batches": out_batch, "batch": batch, "input_batch": input_batch}))
    if w.feature_groups > 1:
        group = feature // (o_features // w.feature_groups)
        first_feature = group * (features // w.feature_groups)
        steps.append((CONV_FEATURE_GROUP, {"groups": w.feature_groups, "feature": feature, "group": group,
                                           "first": first_feature, "last": first_feature + i_features - 1,
                                           "kernel_last": i_features - 1}))

    names = _spatial_names(s)
    pairs = []  # (input spatial position, kernel spatial position)
    for k in itertools.product(*(range(n) for n in window)):
        inputs, kernels, texts, missing = [], [], [], None
        for d in range(s):
            padded = out[d] * w.strides[d] + k[d] * w.rhs_dilation[d]
            dilated = padded - pads[d][0]
            arithmetic = f"{out[d]}·{w.strides[d]}+{k[d]}·{w.rhs_dilation[d]}{-pads[d][0]:+d}={dilated}"
            if not 0 <= dilated <= (sizes[d] - 1) * w.lhs_dilation[d]:
                missing = (CONV_PADDING, {"window": k, "dim": d, "position": arithmetic})
                break
            if dilated % w.lhs_dilation[d]:
                missing = (CONV_HOLE, {"window": k, "dim": d, "position": arithmetic, "dilation": w.lhs_dilation[d]})
                break
            inputs.append(dilated // w.lhs_dilation[d])
            if w.lhs_dilation[d] > 1:
                arithmetic += f"/{w.lhs_dilation[d]}={inputs[-1]}"
            texts.append(f"{names[d]}={arithmetic}")
            kernels.append(window[d] - 1 - k[d] if w.reversal[d] else k[d])
        if missing is not None:
            steps.append(missing)
            continue
        pairs.append((inputs, kernels))
        kernel_text = ", ".join(f"{names[d]}={'%d-1-%d=' % (window[d], k[d]) if w.reversal[d] else ''}{kernels[d]}"
                                for d in range(s))
        steps.append((CONV_PAIR, {"window": k, "input": ", ".join([f"b={input_batch}", *texts, "f"]),
                                  "kernel": ", ".join([*filter(None, [kernel_text]), "i", f"o={feature}"])}))

    sources = []
    for f in range(i_features):
        for inputs, kernels in pairs:
            lhs = [0] * len(lhs_shape)
            lhs[dn.input_batch_dimension], lhs[dn.input_feature_dimension] = input_batch, first_feature + f
            rhs = [0] * len(rhs_shape)
            rhs[dn.kernel_input_feature_dimension], rhs[dn.kernel_output_feature_dimension] = f, feature
            for d in range(s):
                lhs[dn.input_spatial_dimensions[d]] = inputs[d]
                rhs[dn.kernel_spatial_dimensions[d]] = kernels[d]
            sources += [Source(0, tuple(lhs), INPUT_ELEMENT), Source(1, tuple(rhs), KERNEL_ELEMENT)]
    steps.append((CONV_SUM, {"index": q.index, "count": len(sources) // 2}))
    if dynamic:  # the low padding places the window; the high padding only fixes the shape
        sources += [Source(2, (d, 0), PADDING_AMOUNT) for d in range(s)]
    return q.answer(sources, steps)


def _spatial_names(count: int) -> list[str]:
    """Names for spatial dimensions in the steps: x; y, x; z, y, x; then s0, s1, ..."""
    return ["z", "y", "x"][3 - count:] if count <= 3 else [f"s{d}" for d in range(count)]
