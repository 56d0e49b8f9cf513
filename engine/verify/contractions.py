"""Verifier checks: dot_general and dot, and what convolutions share with them (precision_config,
quantized operands).

Constraint labels follow the `dot_general` section of docs/spec.md at openxla/stablehlo's head.
`dot` is one of the spec's deprecated ops and has no numbered constraints there.
"""
from __future__ import annotations

from typing import Optional, Sequence

from ..ir.core import Operation
from ..ir.types import TensorType
from .core import _Context, _expect_shape, _register, _tensor
from .shape_inference import check_range, check_unique, dim_eq, fail, is_quant_e, rank_of

# ---------------------------------------------------------------------------------------------
# Shared with convolution and dynamic_conv
# ---------------------------------------------------------------------------------------------


def precision_config(op: Operation) -> list:
    return list(op.attributes.get("precision_config") or ())


def check_precision_count(op: Operation, constraint: Optional[str]) -> None:
    """`size(precision_config) = 2` when the attribute is given (absent or empty means DEFAULT)."""
    precision = precision_config(op)
    if precision and len(precision) != 2:
        fail(f"precision_config has {len(precision)} entries; it must have one per operand (2)", constraint)


def uses_quantization(*types: TensorType) -> bool:
    return any(is_quant_e(t.element) for t in types)


# ---------------------------------------------------------------------------------------------
# dot_general
# ---------------------------------------------------------------------------------------------


def check_dimension_lists(lhs_rank: Optional[int], rhs_rank: Optional[int], lb: Sequence[int],
                          rb: Sequence[int], lc: Sequence[int], rc: Sequence[int]) -> None:
    """C1-C8 of dot_general: they need no dimension sizes, and with an unranked operand its
    dimension numbers must still pair up, be unique and be non-negative."""
    if len(lb) != len(rb):
        fail(f"lhs_batching_dimensions {list(lb)} and rhs_batching_dimensions {list(rb)} "
             "have different sizes", "C1")
    if len(lc) != len(rc):
        fail(f"lhs_contracting_dimensions {list(lc)} and rhs_contracting_dimensions {list(rc)} "
             "have different sizes", "C2")
    check_unique(list(lb) + list(lc), "lhs batching and contracting dimensions", "C3")
    check_unique(list(rb) + list(rc), "rhs batching and contracting dimensions", "C4")
    check_range(lb, lhs_rank, "lhs batching dimension", "C5")
    check_range(lc, lhs_rank, "lhs contracting dimension", "C6")
    check_range(rb, rhs_rank, "rhs batching dimension", "C7")
    check_range(rc, rhs_rank, "rhs contracting dimension", "C8")


def infer_dot_general(lhs: tuple, rhs: tuple, lb: Sequence[int], rb: Sequence[int],
                      lc: Sequence[int], rc: Sequence[int]) -> tuple:
    check_dimension_lists(len(lhs), len(rhs), lb, rb, lc, rc)
    for a, b in zip(lb, rb):
        if not dim_eq(lhs[a], rhs[b]):
            fail(f"batching dimension sizes differ: dim(lhs, {a}) = {lhs[a]} but dim(rhs, {b}) = {rhs[b]}", "C9")
    for a, b in zip(lc, rc):
        if not dim_eq(lhs[a], rhs[b]):
            fail(f"contracting dimension sizes differ: dim(lhs, {a}) = {lhs[a]} but dim(rhs, {b}) = {rhs[b]}",
                 "C10")
    batch = [lhs[a] if lhs[a] is not None else rhs[b] for a, b in zip(lb, rb)]
    lhs_free = [lhs[d] for d in range(len(lhs)) if d not in lb and d not in lc]
    rhs_free = [rhs[d] for d in range(len(rhs)) if d not in rb and d not in rc]
    return tuple(batch + lhs_free + rhs_free)


@_register("stablehlo.dot_general")
def _dot_general(op: Operation, ctx: _Context) -> None:
    lhs = _tensor(op.operand_types[0], "lhs")
    rhs = _tensor(op.operand_types[1], "rhs")
    r = _tensor(op.result_types[0], "result")
    dn = op.attributes["dot_dimension_numbers"]
    if lhs.shape is not None and rhs.shape is not None:
        inferred = infer_dot_general(lhs.shape, rhs.shape, dn.lhs_batching_dimensions, dn.rhs_batching_dimensions,
                                     dn.lhs_contracting_dimensions, dn.rhs_contracting_dimensions)
    else:
        check_dimension_lists(rank_of(lhs), rank_of(rhs), dn.lhs_batching_dimensions, dn.rhs_batching_dimensions,
                              dn.lhs_contracting_dimensions, dn.rhs_contracting_dimensions)
        inferred = None
    check_precision_count(op, "C11")
    _expect_shape(r, inferred, "C12")
    # Quantized operands follow the rules quantized_types.py checks for every contraction (C14-C20).
    if not uses_quantization(lhs, rhs, r) and lhs.element != rhs.element:
        fail(f"lhs and rhs must have the same element type: {lhs} vs {rhs}", "C13")
    _check_algorithm(op)


# The algorithms XLA supports on some hardware (the spec's verifier rejects the others "best
# effort"); the same table as the StableHLO C++ verifier's, which the spec points to: (lhs, rhs,
# accumulation, num_primitive_operations), all with one component per operand.
_KNOWN_DOT_ALGORITHMS = {
    ("f16", "f16", "f16", 1), ("f16", "f16", "f32", 1),
    ("bf16", "bf16", "bf16", 1), ("bf16", "bf16", "f32", 1), ("bf16", "bf16", "f32", 3),
    ("bf16", "bf16", "f32", 6),
    ("tf32", "tf32", "f32", 1), ("tf32", "tf32", "f32", 3),
    ("f32", "f32", "f32", 1), ("f64", "f64", "f64", 1),
}
# Any pair of these, accumulated in f32 in one operation, with or without imprecise accumulation.
_FP8 = {"f8E3M4", "f8E4M3", "f8E4M3FN", "f8E5M2", "f8E4M3FNUZ", "f8E4M3B11FNUZ", "f8E5M2FNUZ"}


def _is_known_algorithm(alg) -> bool:
    if alg.lhs_component_count != 1 or alg.rhs_component_count != 1:
        return False
    lhs, rhs, acc = str(alg.lhs_precision_type), str(alg.rhs_precision_type), str(alg.accumulation_type)
    if lhs in _FP8 and rhs in _FP8 and acc == "f32" and alg.num_primitive_operations == 1:
        return True
    if alg.allow_imprecise_accumulation:
        return False
    return (lhs, rhs, acc, alg.num_primitive_operations) in _KNOWN_DOT_ALGORITHMS


def _check_algorithm(op: Operation) -> None:
    alg = op.attributes.get("algorithm")
    if alg is None or (alg.lhs_precision_type is None and alg.rhs_precision_type is None
                       and alg.accumulation_type is None):
        return  # an empty algorithm: precision_config decides
    modes = [str(p) for p in precision_config(op)]
    if any(m != "DEFAULT" for m in modes):
        fail(f"precision_config must be DEFAULT when an algorithm is given, got [{', '.join(modes)}]", "C21")
    for name, constraint in (("lhs_component_count", "C22"), ("rhs_component_count", "C23"),
                             ("num_primitive_operations", "C24")):
        value = getattr(alg, name)
        if value <= 0:
            fail(f"algorithm {name} = {value} must be positive", constraint)
    if not _is_known_algorithm(alg):
        fail(f"algorithm <lhs {alg.lhs_precision_type}, rhs {alg.rhs_precision_type}, accumulation "
             f"{alg.accumulation_type}, components {alg.lhs_component_count}x{alg.rhs_component_count}, "
             f"{alg.num_primitive_operations} operations, imprecise accumulation "
             f"{str(alg.allow_imprecise_accumulation).lower()}> is not known to be supported on any "
             "hardware; the spec lets verifiers reject it")


# ---------------------------------------------------------------------------------------------
# dot (deprecated; the checks follow what dot_general would require of the same product)
# ---------------------------------------------------------------------------------------------


@_register("stablehlo.dot")
def _dot(op: Operation, ctx: _Context) -> None:
    lhs = _tensor(op.operand_types[0], "lhs")
    rhs = _tensor(op.operand_types[1], "rhs")
    r = _tensor(op.result_types[0], "result")
    if not uses_quantization(lhs, rhs) and lhs.element != rhs.element:
        fail(f"lhs and rhs must have the same element type: {lhs} vs {rhs}")
    if len(precision_config(op)) > 2:
        fail(f"precision_config has {len(precision_config(op))} entries; at most 2 are allowed")
    if lhs.shape is None or rhs.shape is None:
        return
    if len(lhs.shape) not in (1, 2) or len(rhs.shape) not in (1, 2):
        fail(f"operands must be vectors or matrices, got {lhs} and {rhs}")
    if not dim_eq(lhs.shape[-1], rhs.shape[0]):
        fail(f"contracting dimensions differ: {lhs.shape[-1]} (last of lhs) vs {rhs.shape[0]} (first of rhs)")
    _expect_shape(r, lhs.shape[:-1] + rhs.shape[1:], None)
