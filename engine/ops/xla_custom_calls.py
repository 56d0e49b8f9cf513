"""Custom-call targets of XLA itself that appear in modules JAX compiles for the CPU, and a clear
refusal for the targets only a GPU or TPU runtime provides.

- `TopK`: the post-optimization form of top_k (XLA's TopkRewriter turns a sort whose comparator is
  a NaN-safe greater-than, followed by a slice, into it): the k largest elements along the last
  dimension and their indices, k being the result's last dimension. Its `called_computations`
  comparator is always that greater-than, so it is not run.
- `PadToStatic` / `SliceToDynamic`: between a dynamically sized array and its padded static form
  plus one s32 size per dimension.
- `MoveToHost` / `MoveToDevice`: memory-space annotations of host offloading; values never change.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..ir.dtypes import element_dtype
from ..ir.types import TensorType
from .checks import CUSTOM_CALL_PROVENANCE, CUSTOM_CALL_REFUSALS, CUSTOM_CALL_TARGETS, annotation_provenance
from .registry import OpCall
from .sorting import top_k_of, top_k_provenance


def _top_k(call: OpCall, operand: np.ndarray) -> list[np.ndarray]:
    if len(call.result_types) != 2 or not isinstance(call.result_types[0], TensorType):
        raise call.error(f"@TopK returns (values, indices), got {len(call.result_types)} result(s)")
    return top_k_of(call, np.asarray(operand), int(call.result_types[0].shape[-1]))


def _pad_to_static(call: OpCall, operand: np.ndarray) -> list[np.ndarray]:
    # The padded static array (padding zero: XLA leaves it unspecified) and the true size of each dim.
    operand = np.asarray(operand)
    padded_type = call.result_types[0]
    if len(call.result_types) != 1 + operand.ndim:
        raise call.error(f"@PadToStatic returns the padded array and {operand.ndim} sizes, "
                         f"got {len(call.result_types)} results")
    bound = tuple(padded_type.shape)
    if len(bound) != operand.ndim or any(s > b for s, b in zip(operand.shape, bound)):
        raise call.error(f"the operand's shape {operand.shape} does not fit the static result {padded_type}")
    padded = np.zeros(bound, element_dtype(padded_type))
    padded[tuple(slice(0, s) for s in operand.shape)] = operand
    sizes = [np.asarray(s, element_dtype(t)) for s, t in zip(operand.shape, call.result_types[1:])]
    return [padded, *sizes]


def _slice_to_dynamic(call: OpCall, operand: np.ndarray, *sizes: np.ndarray) -> np.ndarray:
    operand = np.asarray(operand)
    if len(sizes) != operand.ndim:
        raise call.error(f"@SliceToDynamic takes the array and {operand.ndim} sizes, got {len(sizes)} sizes")
    counts = [int(np.asarray(s)) for s in sizes]
    for dim, (count, bound) in enumerate(zip(counts, operand.shape)):
        if not 0 <= count <= bound:
            raise call.error(f"size {count} of dimension {dim} is outside 0..{bound}")
    result = call.result_types[0]
    if isinstance(result, TensorType) and result.is_static and tuple(result.shape) != tuple(counts):
        raise call.error(f"the result {result} is static, so the sizes must be {list(result.shape)}, got {counts}")
    return np.array(operand[tuple(slice(0, c) for c in counts)])


def _memory_space_annotation(call: OpCall, operand: Any) -> Any:
    return operand


CUSTOM_CALL_TARGETS.update({
    "TopK": _top_k,
    "PadToStatic": _pad_to_static,
    "SliceToDynamic": _slice_to_dynamic,
    "MoveToHost": _memory_space_annotation,
    "MoveToDevice": _memory_space_annotation,
})
CUSTOM_CALL_PROVENANCE.update({
    "TopK": top_k_provenance,  # (values, indices) of the last dimension, as chlo.top_k
    "MoveToHost": annotation_provenance,
    "MoveToDevice": annotation_provenance,
})

# Prefixes of targets that call into a GPU or TPU library or runtime.
CUSTOM_CALL_REFUSALS.extend([
    ("__cublas$", "a cuBLAS call of XLA:GPU"),
    ("__cublasLt$", "a cuBLASLt call of XLA:GPU"),
    ("__cudnn$", "a cuDNN call of XLA:GPU"),
    ("__cusolver", "a cuSOLVER call of XLA:GPU"),
    ("cusolver_", "a cuSOLVER call of jaxlib's GPU kernels"),
    ("hipsolver_", "a hipSOLVER call of jaxlib's ROCm kernels"),
    ("__hipblas", "a hipBLAS call of XLA:ROCm"),
    ("__gpu$", "an XLA:GPU runtime call"),
    ("xla.gpu.", "an XLA:GPU runtime call"),
    ("__triton", "a Triton kernel (jax.experimental.pallas on GPU)"),
    ("triton_kernel_call", "a Triton kernel (jax.experimental.pallas on GPU)"),
    ("mosaic_gpu", "a Mosaic GPU kernel (Pallas)"),
    ("tpu_custom_call", "a Mosaic TPU kernel (Pallas on TPU)"),
    ("xla_builder.", "a library routine XLA's builder leaves for a GPU or TPU backend to provide"),
])
