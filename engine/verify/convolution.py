"""Verifier checks: convolution and dynamic_conv.

Both ops share one list of constraints in docs/spec.md (openxla/stablehlo head), numbered alike;
dynamic_conv only takes its padding as an operand. Its result's spatial sizes depend on the padding
values, so they are checked when the padding comes from a constant and left alone otherwise.
"""
from __future__ import annotations

from typing import Optional, Sequence

from ..ir.core import Operation
from ..ir.types import TensorType
from .contractions import check_precision_count, uses_quantization
from .core import _constant_array, _Context, _expect_shape, _int, _ints, _padding, _register, _tensor
from .shape_inference import Dim, check_range, check_unique, check_window_lists, fail, fmt_shape, shape_of, window_count


def _check_window(strides: Sequence[int], lhs_dil: Sequence[int], rhs_dil: Sequence[int],
                  reversal: Optional[Sequence[bool]], spatial: int) -> None:
    check_window_lists((("window_strides", strides, "C2", "C3"),
                        ("lhs_dilation", lhs_dil, "C5", "C6"),
                        ("rhs_dilation", rhs_dil, "C7", "C8")),
                       spatial, f"there are {spatial} spatial dimensions")
    if reversal is not None and len(reversal) != spatial:
        fail(f"window_reversal has {len(reversal)} entries but there are {spatial} spatial dimensions", "C9")


def _check_layouts(dn, n: int) -> None:
    spatial = n - 2
    layouts = (
        ("input", [dn.input_batch_dimension, *dn.input_spatial_dimensions, dn.input_feature_dimension],
         dn.input_spatial_dimensions, "C12", "C13"),
        ("kernel", [*dn.kernel_spatial_dimensions, dn.kernel_input_feature_dimension,
                    dn.kernel_output_feature_dimension], dn.kernel_spatial_dimensions, "C17", "C18"),
        ("output", [dn.output_batch_dimension, *dn.output_spatial_dimensions, dn.output_feature_dimension],
         dn.output_spatial_dimensions, "C19", "C20"),
    )
    for what, dims, spatial_dims, c_size, c_dims in layouts:
        if len(spatial_dims) != spatial:
            fail(f"{what}_spatial_dimensions has {len(spatial_dims)} entries, expected {spatial}", c_size)
        check_unique(dims, f"{what} dimension numbers", c_dims)
        check_range(dims, n, f"{what} dimension", c_dims)


def _check_groups(lhs: tuple, rhs: tuple, dn, feature_groups: int, batch_groups: int) -> None:
    if feature_groups <= 0:
        fail(f"feature_group_count = {feature_groups} must be positive", "C21")
    if batch_groups <= 0:
        fail(f"batch_group_count = {batch_groups} must be positive", "C22")
    if feature_groups != 1 and batch_groups != 1:
        fail(f"feature_group_count = {feature_groups} and batch_group_count = {batch_groups} cannot both "
             "exceed 1", "C23")
    in_batch = lhs[dn.input_batch_dimension]
    in_feature = lhs[dn.input_feature_dimension]
    k_in = rhs[dn.kernel_input_feature_dimension]
    k_out = rhs[dn.kernel_output_feature_dimension]
    if in_batch is not None and in_batch % batch_groups:
        fail(f"input batch size {in_batch} is not divisible by batch_group_count {batch_groups}", "C10")
    if in_feature is not None and in_feature % feature_groups:
        fail(f"input feature size {in_feature} is not divisible by feature_group_count {feature_groups}", "C11")
    if in_feature is not None and k_in is not None and k_in != in_feature // feature_groups:
        fail(f"kernel input feature size {k_in} must equal input feature size {in_feature} / "
             f"feature_group_count {feature_groups}", "C14")
    if k_out is not None and k_out % batch_groups:
        fail(f"kernel output feature size {k_out} is not divisible by batch_group_count {batch_groups}", "C15")
    if k_out is not None and k_out % feature_groups:
        fail(f"kernel output feature size {k_out} is not divisible by feature_group_count {feature_groups}",
             "C16")


def convolution_result_shape(lhs: tuple, rhs: tuple, dn, strides, padding: Optional[list], lhs_dil, rhs_dil,
                             batch_groups: int) -> tuple:
    """C25's result shape; spatial sizes are unknown (None) when the padding is."""
    out: list[Dim] = [None] * len(lhs)
    in_batch = lhs[dn.input_batch_dimension]
    out[dn.output_batch_dimension] = None if in_batch is None else in_batch // batch_groups
    out[dn.output_feature_dimension] = rhs[dn.kernel_output_feature_dimension]
    if padding is not None:
        for s in range(len(lhs) - 2):
            out[dn.output_spatial_dimensions[s]] = window_count(
                lhs[dn.input_spatial_dimensions[s]], rhs[dn.kernel_spatial_dimensions[s]], strides[s],
                lhs_dil[s], rhs_dil[s], padding[s][0], padding[s][1])
    return tuple(out)


def _check_element_types(op: Operation, lhs: TensorType, rhs: TensorType, r: TensorType) -> None:
    """C27 for float and integer operands; quantized ones follow the rules quantized_types.py
    checks for every contraction (C28-C34)."""
    if uses_quantization(lhs, rhs, r):
        return
    # C27 also names the result, but a wider result is how JAX lowers preferred_element_type
    # (f16 x f16 -> f32, i8 x i8 -> i32), the StableHLO verifier leaves the result's element
    # type unchecked (openxla/stablehlo#1896) and its interpreter accumulates in it (#2953):
    # only the operands must agree, as dot_general's C13 asks.
    if lhs.element != rhs.element:
        fail(f"lhs and rhs must have the same element type, got {lhs} and {rhs}", "C27")


def _check_convolution(op: Operation, padding_of) -> None:
    """`padding_of(spatial)` gives the (low, high) pairs, or None when they are not known statically."""
    lhs = _tensor(op.operand_types[0], "lhs")
    rhs = _tensor(op.operand_types[1], "rhs")
    r = _tensor(op.result_types[0], "result")
    if lhs.shape is not None and rhs.shape is not None:
        n = len(lhs.shape)
        if len(rhs.shape) != n:
            fail(f"lhs has rank {n} but rhs has rank {len(rhs.shape)}", "C1")
        if n < 2:
            fail(f"lhs and rhs must have rank at least 2 (batch and feature dimensions), got {lhs}", "C12")
        spatial = n - 2
        strides = _ints(op, "window_strides", [1] * spatial)
        lhs_dil = _ints(op, "lhs_dilation", [1] * spatial)
        rhs_dil = _ints(op, "rhs_dilation", [1] * spatial)
        _check_window(strides, lhs_dil, rhs_dil, op.attributes.get("window_reversal"), spatial)
        padding = padding_of(spatial)
        dn = op.attributes["dimension_numbers"]
        _check_layouts(dn, n)
        feature_groups, batch_groups = _int(op, "feature_group_count", 1), _int(op, "batch_group_count", 1)
        _check_groups(lhs.shape, rhs.shape, dn, feature_groups, batch_groups)
        check_precision_count(op, "C24")
        if r.shape is not None and len(r.shape) != n:
            fail(f"result has rank {len(r.shape)} but lhs has rank {n}", "C26")
        inferred = convolution_result_shape(lhs.shape, rhs.shape, dn, strides, padding, lhs_dil, rhs_dil, batch_groups)
        _expect_shape(r, inferred, "C25")
    else:
        check_precision_count(op, "C24")
    _check_element_types(op, lhs, rhs, r)


@_register("stablehlo.convolution")
def _convolution(op: Operation, ctx: _Context) -> None:
    _check_convolution(op, lambda spatial: _padding(op, "padding", spatial, "C4"))


@_register("stablehlo.dynamic_conv")
def _dynamic_conv(op: Operation, ctx: _Context) -> None:
    padding = _tensor(op.operand_types[2], "padding")
    if "padding" in op.attributes:
        # convolution's pretty form accepts `pad = [...]` in the window; here it would be ignored.
        fail("dynamic_conv takes its padding as the third operand, not as a padding attribute "
             "(no `pad` in its window)", "I3")

    def padding_of(spatial: int) -> Optional[list]:
        shape = shape_of(padding)
        if shape is not None and (len(shape) != 2 or shape[0] not in (None, spatial) or shape[1] not in (None, 2)):
            fail(f"padding must have shape {spatial}x2, got {fmt_shape(shape)}", "C4")
        return _constant_padding(op, spatial)

    _check_convolution(op, padding_of)


def _constant_padding(op: Operation, spatial: int) -> Optional[list]:
    """The padding operand's values when a stablehlo.constant gives them, else None."""
    array = _constant_array(op.operands[2])
    if array is None or array.shape != (spatial, 2):
        return None
    return [(int(lo), int(hi)) for lo, hi in array.tolist()]
