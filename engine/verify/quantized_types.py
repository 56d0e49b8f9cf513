"""Quantization rules of the spec that many ops share.

- `baseline_element` / `same_baseline`: the spec's baseline_type, i.e. a quantized element type
  with its scales and zero points left out, so ops may requantize while storage and expressed
  types stay.
- Most ops take "per-tensor quantized tensors" only (their Inputs table says so; the OpDef trait
  `per_tensor_quantized`); the cross-family check rejects per-axis quantized operands and results,
  citing the Inputs row (I1, I2, ...) of the operand's group.
- `check_result_accuracy`: the result_accuracy attribute of the transcendental ops.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from ..ir import attributes as A
from ..ir.core import Operation
from ..ir.opset import OPS
from ..ir.types import QuantizedType, TensorType, Type
from .shape_inference import fail, shape_of, shapes_compatible


def quant(t: Type) -> Optional[QuantizedType]:
    """The quantized element type of a tensor type (None when it is not quantized)."""
    if isinstance(t, TensorType) and isinstance(t.element, QuantizedType):
        return t.element
    return None


def is_per_axis(t: Type) -> bool:
    q = quant(t)
    return q is not None and q.is_per_axis


def baseline_element(e: Type):
    """What baseline_element_type keeps of an element type (scales and zero points dropped)."""
    if isinstance(e, QuantizedType):
        return ("quant", e.storage, e.expressed, e.effective_min, e.effective_max, e.quantized_dimension)
    return e


def same_baseline_element(a: Type, b: Type) -> bool:
    ea = a.element if isinstance(a, TensorType) else a
    eb = b.element if isinstance(b, TensorType) else b
    return baseline_element(ea) == baseline_element(eb)


def same_baseline(a: Type, b: Type, message: str, constraint: str) -> None:
    """baseline_type(a) = baseline_type(b): the same shape and baseline element type."""
    if not shapes_compatible(shape_of(a), shape_of(b)) or not same_baseline_element(a, b):
        fail(f"{message}: {a} vs {b}", constraint)


def input_label(op: Operation, index: int) -> str:
    """The spec's Inputs-table label (I1, I2, ...) of operand #index, from the op's operand groups."""
    opdef = OPS.get(op.name)
    groups = opdef.operand_groups(len(op.operands)) if opdef is not None else None
    if groups:
        for position, (start, count) in enumerate(groups.values()):
            if start <= index < start + count:
                return f"I{position + 1}"
    return f"I{index + 1}"


def check_per_tensor_only(op: Operation) -> None:
    opdef = OPS.get(op.name)
    if opdef is None or not opdef.per_tensor_quantized:
        return
    for i, t in enumerate(op.operand_types):
        if is_per_axis(t):
            fail(f"operand #{i} must be a tensor or a per-tensor quantized tensor, got the per-axis "
                 f"quantized {t}", input_label(op, i))
    for i, t in enumerate(op.result_types):
        if is_per_axis(t):
            fail(f"result #{i} must be a tensor or a per-tensor quantized tensor, got the per-axis "
                 f"quantized {t}", f"O{i + 1}")


def check_result_accuracy(op: Operation, label: str) -> None:
    """Tolerances are non-negative, and all zero unless the mode is TOLERANCE.

    The spec's Inputs table types `result_accuracy` (our label for it is passed in); the rule on
    the tolerances follows the StableHLO C++ verifier (the spec's prose: DEFAULT and HIGHEST
    requests carry no tolerances)."""
    accuracy = op.attributes.get("result_accuracy")
    if not isinstance(accuracy, A.ResultAccuracy):
        return
    mode = str(accuracy.mode) if accuracy.mode is not None else "DEFAULT"
    mode = mode.rsplit(" ", 1)[-1].strip("<>")
    if accuracy.atol < 0 or accuracy.rtol < 0 or accuracy.ulps < 0:
        fail(f"result_accuracy tolerances must be non-negative, got atol = {accuracy.atol}, "
             f"rtol = {accuracy.rtol}, ulps = {accuracy.ulps}", label)
    if mode != "TOLERANCE" and (accuracy.atol or accuracy.rtol or accuracy.ulps):
        fail(f"result_accuracy with mode {mode} must have zero tolerances, got atol = {accuracy.atol}, "
             f"rtol = {accuracy.rtol}, ulps = {accuracy.ulps}", label)


# -- dot_general, convolution, dynamic_conv: their quantized constraints -------------------------------

# Labels of the shared rules: (lhs and result quantized together with rhs, zero points of rhs,
# rhs quantization dimension, result quantization dimension, storage, expressed, per-tensor rhs
# gives per-tensor result, hybrid element types).
_CONTRACTION_LABELS = {
    "stablehlo.dot_general": dict(both="C14", zero_points="C15", rhs_axis="C16", storage="C17",
                                  expressed="C18", per_tensor="C19", hybrid="C20"),
    "stablehlo.convolution": dict(both="C28", rhs_axis="C29", result_axis="C30", storage="C31",
                                  expressed="C32", per_tensor="C33", hybrid="C34"),
    "stablehlo.dynamic_conv": dict(both="C28", rhs_axis="C29", result_axis="C30", storage="C31",
                                   expressed="C32", per_tensor="C33", hybrid="C34"),
}


def check_quantized_contraction(op: Operation) -> None:
    labels = _CONTRACTION_LABELS.get(op.name)
    if labels is None or len(op.operands) < 2 or not op.results:
        return
    lhs, rhs, result = op.operand_types[0], op.operand_types[1], op.result_types[0]
    ql, qr, qo = quant(lhs), quant(rhs), quant(result)
    if ql is None and qr is None and qo is None:
        return  # the non-quantized rules are the op's own check
    if ql is not None and ql.is_per_axis:
        fail(f"lhs must be a tensor or a per-tensor quantized tensor, got {lhs}", "I1")
    if qr is None or (ql is None) != (qo is None):
        fail(f"is_quantized(lhs) = is_quantized(result) and is_quantized(rhs) must hold: {lhs}, {rhs}, "
             f"{result}", labels["both"])
    if "zero_points" in labels and any(zp != 0 for zp in qr.zero_points):
        fail(f"rhs must have zero points 0, got {rhs}", labels["zero_points"])
    if qr.is_per_axis:
        if op.name == "stablehlo.dot_general":
            contracting = op.attributes["dot_dimension_numbers"].rhs_contracting_dimensions
            if qr.quantized_dimension in contracting:
                fail(f"the quantization dimension {qr.quantized_dimension} of rhs must not be a contracting "
                     "dimension", labels["rhs_axis"])
        else:
            kernel_out = op.attributes["dimension_numbers"].kernel_output_feature_dimension
            if qr.quantized_dimension != kernel_out:
                fail(f"the quantization dimension of rhs must be kernel_output_feature_dimension = "
                     f"{kernel_out}, got {qr.quantized_dimension}", labels["rhs_axis"])
    if qo is not None and qo.is_per_axis and "result_axis" in labels:
        out_feature = op.attributes["dimension_numbers"].output_feature_dimension
        if qo.quantized_dimension != out_feature:
            fail(f"the quantization dimension of the result must be output_feature_dimension = "
                 f"{out_feature}, got {qo.quantized_dimension}", labels["result_axis"])
    if ql is not None:
        if ql.storage != qr.storage:
            fail(f"lhs and rhs must have the same storage type: {lhs} vs {rhs}", labels["storage"])
        if not ql.expressed == qr.expressed == qo.expressed:
            fail(f"lhs, rhs and result must have the same expressed type: {lhs}, {rhs}, {result}",
                 labels["expressed"])
        if not qr.is_per_axis and qo.is_per_axis:
            fail(f"a per-tensor quantized rhs gives a per-tensor quantized result, got {result}",
                 labels["per_tensor"])
    else:
        le, re = lhs.element, result.element
        if not le == qr.expressed == re:
            fail(f"a hybrid op needs element_type(lhs) = expressed_type(rhs) = element_type(result): "
                 f"{lhs}, {rhs}, {result}", labels["hybrid"])


# -- the constraints of quantized types themselves (the spec's Types section) ------------------------


def check_quantization(op: Operation) -> None:
    """Every quantization rule that spans op families, in this order; an op that touches no
    quantized type (most ops of most programs) is passed over after one look at its types."""
    if not _touches_quantized(op):
        return
    check_quantized_type_rules(op)
    check_per_tensor_only(op)
    check_quantized_contraction(op)


def _touches_quantized(op: Operation) -> bool:
    """Whether a type these rules look at (operands, results, region arguments, a function's
    signature) is a quantized tensor."""
    for value in op.operands:
        if quant(value.type) is not None:
            return True
    for value in op.results:
        if quant(value.type) is not None:
            return True
    for region in op.regions:
        for block in region.blocks:
            for value in block.arguments:
                if quant(value.type) is not None:
                    return True
    function_type = op.attributes.get("function_type") if op.name == "func.func" else None
    if function_type is not None:
        return any(quant(t) is not None for t in (*function_type.inputs, *function_type.results))
    return False


def check_quantized_type_rules(op: Operation) -> None:
    """Quantized element type constraints C3, C5-C7, C11 and quantized tensor type C12-C13, checked on
    the types an op introduces (its results, its regions' arguments, a function's signature), so a
    bad type is reported once, where it appears first. C1, C2, C4, C8-C10 hold by the syntax."""
    types = list(op.result_types)
    for region in op.regions:
        for block in region.blocks:
            types += [a.type for a in block.arguments]
    function_type = op.attributes.get("function_type") if op.name == "func.func" else None
    if function_type is not None:
        types += list(function_type.inputs) + list(function_type.results)
    for t in types:
        q = quant(t)
        if q is not None:
            _check_quantized_tensor_type(t, q)


def _check_scale_is_expressed(what: str, scale: float, expressed) -> None:
    """type(scales...) = expressed_type: a scale is a value of the expressed type, which one too
    large or too small to be held by it (inf or 0 there) is not."""
    try:
        info = np.finfo(expressed.numpy_dtype)
    except (AttributeError, TypeError, ValueError):
        return  # a float type numpy cannot describe: nothing to compare against
    smallest = float(info.smallest_subnormal)
    if not smallest <= scale <= float(info.max):
        fail(f"{what}: scale {scale:g} is not a value of {expressed}, whose positive values lie in "
             f"[{smallest:g}, {float(info.max):g}] (quantized element type rule)", "C4")


def _check_quantized_tensor_type(t: TensorType, q: QuantizedType) -> None:
    what = f"quantized type {t}"
    low, high = q.storage.min_value, q.storage.max_value
    if not low <= q.effective_min < q.effective_max <= high:
        fail(f"{what}: storage range [{q.effective_min}, {q.effective_max}] must be non-empty and within "
             f"{q.storage}'s [{low}, {high}] (quantized element type rule)", "C3")
    for scale in q.scales:
        if not scale > 0:
            fail(f"{what}: scale {scale} must be positive (quantized element type rule)", "C5")
        if scale == float("inf"):
            fail(f"{what}: scale {scale} must be finite (quantized element type rule)", "C6")
        _check_scale_is_expressed(what, scale, q.expressed)
    for zero_point in q.zero_points:
        if not q.effective_min <= zero_point <= q.effective_max:
            fail(f"{what}: zero point {zero_point} is outside the storage range [{q.effective_min}, "
                 f"{q.effective_max}] (quantized element type rule)", "C7")
    if q.quantized_dimension is None:
        return
    if q.quantized_dimension < 0:
        fail(f"{what}: quantization dimension {q.quantized_dimension} must be non-negative "
             "(quantized element type rule)", "C11")
    if t.shape is None:
        return
    if q.quantized_dimension >= len(t.shape):
        fail(f"{what}: quantization dimension {q.quantized_dimension} must be less than the rank "
             f"{len(t.shape)} (quantized tensor type rule)", "C12")
    size = t.shape[q.quantized_dimension]
    if size is not None and size != len(q.scales):
        fail(f"{what}: dimension {q.quantized_dimension} has size {size} but there are {len(q.scales)} "
             "scales (quantized tensor type rule)", "C13")
