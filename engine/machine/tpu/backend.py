"""TpuBackend: a device that keeps every tensor as the bytes of its TPU buffer and computes with
TPU numerics.

Storage: `store` lays a logical array out in its assigned layout (machine/layout.py: minor-to-major
order, tiles applied in turn, padding, sub-32-bit packing) and keeps only those bytes; `load`
reads the logical array back. Evaluators never see the difference: the interpreter loads every
operand and stores every result (run/interpreter.py's observed loop), so every op is correct on
TPU storage with no per-op code. What the layout of a value is comes from assignment.py.

Numerics: tpu/numerics.py (contractions as bf16 MXU passes, subnormals flushed, f64 refused).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Optional

import numpy as np

from ...ir.core import Value
from ...ir.types import TensorType
from ..backend import Backend
from ..layout import Layout
from .generations import TpuGeneration


@dataclass
class PhysicalArray:
    """A tensor as a TPU device holds it: the bytes of its buffer in `layout`."""

    buffer: np.ndarray  # uint8, the whole physical buffer, padding included
    layout: Layout
    shape: tuple[int, ...]
    dtype: np.dtype

    @property
    def nbytes(self) -> int:
        return int(self.buffer.nbytes)

    def logical(self) -> np.ndarray:
        return self.layout.load(self.buffer, self.shape, self.dtype)


class TpuBackend(Backend):
    """One emulated TPU chip of generation `generation`."""

    transparent_storage = False

    def __init__(self, generation: TpuGeneration, layouts: Optional[Mapping[str, str]] = None,
                 allow_f64: bool = False, excess_precision: bool = False, physical_storage: bool = True):
        self.generation = generation
        self.name = generation.name
        self.layout_options = dict(layouts or {})  # --layout NAME=SPEC
        self.allow_f64 = allow_f64
        self.excess_precision = excess_precision
        self.physical_storage = physical_storage
        self._assignment: Any = None  # the LayoutAssignment of the prepared module

    def for_device(self, process: Any) -> "TpuBackend":
        return TpuBackend(self.generation, self.layout_options, self.allow_f64, self.excess_precision,
                          self.physical_storage)

    def describe(self) -> str:
        return self.generation.name

    # -- layouts ------------------------------------------------------------------------------
    def prepare(self, module: Any) -> None:
        """Work out the layout of every value of `module` on this generation (once per module)."""
        if self._assignment is None or self._assignment.module is not module:
            from .assignment import LayoutAssignment

            self._assignment = LayoutAssignment(module, self.generation, self.layout_options)

    def layout_for(self, ir_value: Value):
        """The AssignedLayout (layout, source "given" / "option" / "default") of a tensor value of
        the prepared module."""
        if self._assignment is None:
            raise RuntimeError("TpuBackend.layout_for before prepare(module)")
        return self._assignment.layout_for(ir_value)

    def buffer_bytes(self, ir_value: Value) -> tuple[int, int]:
        logical, _ = super().buffer_bytes(ir_value)
        type = ir_value.type
        if not isinstance(type, TensorType) or not type.is_static:
            return logical, logical
        assigned = self.layout_for(ir_value)
        return logical, assigned.layout.physical_bytes(type.shape, type.element.numpy_dtype)

    # -- storage ------------------------------------------------------------------------------
    def store(self, value: Any, ir_value: Value) -> Any:
        if not self.physical_storage or not isinstance(value, np.ndarray):
            return value
        type = ir_value.type
        if not isinstance(type, TensorType) or tuple(type.shape or ()) != value.shape:
            return value  # tokens, tuples, and bodies run vectorised over extra dimensions
        layout = self.layout_for(ir_value).layout
        return PhysicalArray(layout.store(value), layout, value.shape, value.dtype)

    def load(self, stored: Any, ir_value: Value) -> Any:
        if isinstance(stored, PhysicalArray):
            return stored.logical()
        return stored


__all__ = ["PhysicalArray", "TpuBackend"]
