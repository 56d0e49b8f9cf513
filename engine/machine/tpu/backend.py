"""TpuBackend: a device that keeps every tensor as the bytes of its TPU buffer and computes with
TPU numerics.

Storage: `store` lays a logical array out in its assigned layout (machine/layout.py: minor-to-major
order, tiles applied in turn, padding, sub-32-bit packing) and keeps only those bytes; `load`
reads the logical array back. Evaluators never see the difference: the interpreter loads every
operand and stores every result (run/interpreter.py's observed loop), so every op is correct on
TPU storage with no per-op code. What the layout of a value is comes from assignment.py.

Numerics (tpu/numerics.py for the arithmetic, tpu/op_numerics.py for what applies to which op):
f32 contractions run as 1, 3 or 6 bf16 MXU passes by precision or dot algorithm, in K-chunks of
the generation's MXU width; ops that compute with floats flush subnormal f32/bf16 operands
and results to signed zero; f64 and complex<f64> are refused at the first op that needs them
unless `allow_f64` (then computed in f64, and noted); 64-bit integers run as on the CPU, noted.
bf16 element-wise ops are computed in f32 and rounded per op (the CPU's evaluators already do),
unless `excess_precision`. Everything else (transcendentals, reduction order) is the CPU's
numerics, labelled approximate by `numerics_notes`.
"""
from __future__ import annotations

import weakref
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Mapping, Optional, Sequence

import numpy as np

from ...ir.core import Function, Operation, Value
from ...ir.dtypes import compute_dtype, element_dtype, is_narrow_float
from ...ir.errors import ExecutionError
from ...ir.opset import is_float_math, is_terminator
from ...ir.types import TensorType
from ..backend import Backend
from ..memory import format_bytes
from . import op_numerics
from .generations import TpuGeneration
from .numerics import F32, flush_subnormals, mxu_matmul

if TYPE_CHECKING:
    from ..layout import Layout, SlotMap
    from .assignment import AssignedLayout


# XLA's memory spaces as TPU HLO uses them: 0 (not printed) is HBM, 1 XLA's "generic fast memory"
# (VMEM on a TPU), 5 host memory (pinned_host); 2 holds the u32 flags of copy-start (SMEM-like).
MEMORY_SPACES = {0: "HBM", 1: "VMEM", 2: "SMEM", 5: "host memory"}


@dataclass
class PhysicalArray:
    """A tensor as a TPU device holds it: the bytes of its buffer in `layout`."""

    buffer: np.ndarray  # uint8, the whole physical buffer, padding included
    layout: Layout
    shape: tuple[int, ...]
    dtype: np.dtype
    # How a small array was stored (layout.store's own way, its look-ups done once), to load it so.
    slot_map: Optional[SlotMap] = field(default=None, repr=False, compare=False)

    @property
    def nbytes(self) -> int:
        return int(self.buffer.nbytes)

    def logical(self) -> np.ndarray:
        if self.slot_map is not None:
            return self.slot_map.load(self.buffer)
        return self.layout.load(self.buffer, self.shape, self.dtype)


class TpuBackend(Backend):
    """One emulated TPU chip of generation `generation`."""

    transparent_storage = False

    def __init__(self, generation: TpuGeneration, layouts: Optional[Mapping[str, str]] = None,
                 allow_f64: bool = False, excess_precision: bool = True, physical_storage: bool = True):
        self.generation = generation
        self.name = generation.name
        self.layout_options = dict(layouts or {})  # --layout NAME=SPEC
        self.allow_f64 = allow_f64
        # On by default as on the CPU: xla_allow_excess_precision is XLA's default on every
        # platform (tpu.md §4.6), and inside a TPU fusion it skips at least the rounding the CPU
        # skips; which further roundings a TPU fusion skips is not public, so the CPU's rule is
        # the emulation's (approximate, like every fusion-dependent choice here).
        self.excess_precision = excess_precision
        self.physical_storage = physical_storage
        self._module: Any = None
        self._prepared: Optional[_Prepared] = None

    def for_device(self, process: Any, grid: Any = None) -> "TpuBackend":
        return TpuBackend(self.generation, self.layout_options, self.allow_f64, self.excess_precision,
                          self.physical_storage)

    def describe(self) -> str:
        return self.generation.name

    # -- layouts ------------------------------------------------------------------------------
    def prepare(self, module: Any) -> None:
        """Work out the layout of every value of `module` on this generation (once per module and
        options, shared by every device and session; without physical storage only when a layout
        is first asked for)."""
        self._module = module
        self._prepared = _prepared_for(module, self._sharing_key())
        if self.physical_storage:
            self._assignment()

    def _sharing_key(self) -> tuple:
        return (self.generation.name, tuple(sorted(self.layout_options.items())), self.allow_f64)

    def _assignment(self) -> Any:
        """The prepared module's LayoutAssignment (made on first use)."""
        prepared = self._prepared
        if prepared is None:
            raise RuntimeError("TpuBackend.layout_for before prepare(module)")
        if prepared.assignment is None:
            from .assignment import LayoutAssignment

            prepared.assignment = LayoutAssignment(self._module, self.generation, self.layout_options)
        return prepared.assignment

    def layout_for(self, ir_value: Value) -> AssignedLayout:
        """The AssignedLayout (layout, source "given" / "option" / "default") of a tensor value of
        the prepared module."""
        return self._assignment().layout_for(ir_value)

    def buffer_bytes(self, ir_value: Value) -> tuple[int, int]:
        logical, _ = super().buffer_bytes(ir_value)
        type = ir_value.type
        if not isinstance(type, TensorType) or not type.is_static:
            return logical, logical
        assigned = self.layout_for(ir_value)
        return logical, assigned.layout.physical_bytes(type.shape, type.element.numpy_dtype)

    def memory_space(self, ir_value: Value) -> int:
        type = ir_value.type
        if not isinstance(type, TensorType) or not type.is_static:
            return 0
        return self.layout_for(ir_value).layout.memory_space

    def memory_space_label(self, space: int) -> str:
        """XLA's memory spaces on a TPU (../shared/docs/tpu.md §1.6): S(1) is VMEM, the fast memory
        memory-space assignment prefetches into; S(5) host memory; S(2) holds scalar sync flags."""
        known = MEMORY_SPACES.get(space)
        return f"{known} S({space})" if known else f"memory space S({space})"

    # -- storage ------------------------------------------------------------------------------
    def store(self, value: Any, ir_value: Value) -> Any:
        if not self.physical_storage or not isinstance(value, np.ndarray):
            return value
        prepared = self._prepared
        if prepared is None:
            raise RuntimeError("TpuBackend.store before prepare(module)")
        try:
            layout, shape, slot_map = prepared.storage[ir_value]
        except KeyError:
            layout, shape, slot_map = prepared.storage[ir_value] = self._storage_of(ir_value)
        if layout is None or shape != value.shape:
            return value  # tokens, tuples, and bodies run vectorised over extra dimensions
        if slot_map is not None and value.dtype == slot_map.dtype:
            return PhysicalArray(slot_map.store(value), layout, shape, value.dtype, slot_map)
        try:
            buffer = layout.store(value)
        except MemoryError:
            raise _beyond_memory(ir_value, layout) from None
        return PhysicalArray(buffer, layout, shape, value.dtype)

    def _storage_of(self, ir_value: Value) -> tuple[Optional[Layout], Optional[tuple[int, ...]], Optional[SlotMap]]:
        """(layout, shape, the layout's SlotMap for small arrays or None) of a statically shaped
        tensor value; (None, None, None) for anything else."""
        type = ir_value.type
        if not isinstance(type, TensorType) or not type.is_static:
            return None, None, None
        layout = self.layout_for(ir_value).layout
        shape = tuple(type.shape)
        return layout, shape, layout.slot_map(shape, element_dtype(type))

    def load(self, stored: Any, ir_value: Value) -> Any:
        if type(stored) is PhysicalArray:
            return stored.logical()
        return stored

    # -- numerics -----------------------------------------------------------------------------
    def matmul(self, lhs: np.ndarray, rhs: np.ndarray, result_dtype: np.dtype, precision: tuple = (),
               accumulation_dtype: Optional[np.dtype] = None, algorithm: Any = None) -> np.ndarray:
        """Float contractions on the MXU (tpu/numerics.py): f32 and f16 operands in 1, 3 or 6 bf16
        passes by `precision` or `algorithm`, bf16 and 8-bit float operands in one exact-product
        pass, f32 accumulation in K-chunks of the MXU width, one rounding to `result_dtype`.
        Integer dots are exact in s32 and complex and f64 (allow_f64) ones as on the CPU
        (approximate for complex). An algorithm a TPU does not run raises ValueError."""
        passes = op_numerics.mxu_passes(precision, algorithm)
        result_dtype = np.dtype(result_dtype)
        # f32 and narrower float operands (compute dtype f32) with a real float result.
        on_mxu = all(compute_dtype(x.dtype) == F32 for x in (lhs, rhs)) and (
            result_dtype.kind == "f" or is_narrow_float(result_dtype))
        if not on_mxu:
            return super().matmul(lhs, rhs, result_dtype, precision, accumulation_dtype, algorithm)
        if all(op_numerics.is_bf16_exact(x.dtype) for x in (lhs, rhs)):
            passes = 1  # already bf16 values: the split's lower parts are zero
        product = mxu_matmul(lhs.astype(F32, copy=False), rhs.astype(F32, copy=False), passes,
                             self.generation.mxu_width)
        return self.rounded(product, result_dtype)

    def wrap_evaluator(self, op: Operation, evaluator: Callable) -> Callable:
        """The CPU's wrapping (excess precision), then: f64 refused (unless allow_f64), an
        unsupported dot algorithm refused, and subnormals flushed around ops computing with floats."""
        evaluator = super().wrap_evaluator(op, evaluator)
        prepared = self._prepared if self._prepared is not None else _Prepared()
        try:
            refusal, flushed = prepared.wrapping[op]
        except KeyError:
            refusal, flushed = prepared.wrapping[op] = self._wrapping_of(op)
        if refusal is not None:
            return op_numerics.refusing(op, refusal)
        if flushed is not None:
            return op_numerics.flushing(op, evaluator, flushed)
        return evaluator

    def _wrapping_of(self, op: Operation) -> tuple[Optional[str], Optional[tuple[bool, ...]]]:
        """(why `op` is refused or None, the operands it flushes when it flushes, else None)."""
        refusal = None if self.allow_f64 else op_numerics.f64_refusal(op, self.name)
        algorithm = op.attributes.get("algorithm")
        if refusal is None and algorithm is not None:
            try:
                op_numerics.mxu_passes((), algorithm)
            except op_numerics.UnsupportedOnTpu as e:
                refusal = str(e)
        if refusal is not None:
            return refusal, None
        if op_numerics.flushes_around(op):
            return None, op_numerics.flushed_operands(op)
        return None, None

    def run_notes(self, module: Any) -> list[str]:
        """The rounding in force (as on the CPU), and `--allow-f64` said once per run when the
        program does use 64-bit floats."""
        notes = super().run_notes(module)
        if not self.allow_f64:
            return notes
        # The ops a TPU would refuse without the option (not the terminators, calls and loops
        # that only hand the values on; a function is not a step).
        wide = [op for op in module.walk() if not isinstance(op, Function) and not is_terminator(op.name)
                and op_numerics.f64_refusal(op, self.name) is not None]
        if not wide:
            return notes
        first = wide[0]
        where = f" (first: {first.name} at line {first.pos.line})" if first.pos is not None else ""
        return notes + [f"{len(wide)} op(s) computed in f64 because of --allow-f64{where}: {self.name} has no 64-bit "
                        "floating point, a real TPU refuses them"]

    def numerics_notes(self, op: Operation, values: Optional[Sequence[Any]] = None) -> list[str]:
        """Why `op`'s results may differ on this TPU from XLA on the CPU (with `values`, the
        operands and results of one run of it: only the reasons those values meet)."""
        notes = list(super().numerics_notes(op, values))
        wide_float, wide_int = op_numerics.sixty_four_bit(op)
        if wide_float is not None and self.allow_f64:
            notes.append(f"{wide_float} computed in f64 (--allow-f64): a TPU has no 64-bit floating point")
        if wide_int is not None:
            notes.append(f"{wide_int}: a TPU emulates 64-bit integers with 32-bit halves (results as on the CPU)")
        contraction = op_numerics.contraction_note(op, self.generation.mxu_width)
        if contraction is not None:
            notes.append(contraction)
        computes = op_numerics.computes_with_floats(op)
        if op_numerics.flushes_around(op) and (values is None or any(_has_subnormals(v) for v in values)):
            notes.append("subnormal inputs/results flushed to zero")
        if op_numerics.transcendental(op):
            notes.append(f"{op.name.partition('.')[2]}: numpy in f32 here, the TPU's own polynomial differs "
                         "(approximate, a few ULP)")
        if op.regions and computes and not is_float_math(op.name):
            notes.append("reduction order: the TPU's is not public; XLA CPU's order here (approximate)")
        narrow = [str(v.type.element) for v in op.results if isinstance(v.type, TensorType)
                  and str(v.type.element) == "bf16"]
        if narrow and is_float_math(op.name):
            # Said in both modes: excess precision here skips only the rounding the CPU skips.
            notes.append("bf16 computed in f32 and rounded after the op; inside a TPU fusion XLA may skip that "
                         "rounding (emulated only before a convert to f32, unless --per-op-rounding)")
        return notes


class _Prepared:
    """What every TpuBackend of one generation and set of options works out the same way for one
    module: its layout assignment, each value's (layout, shape) and each op's numerics wrapping.
    The sessions and grid devices running the module share it (decisions only, never values)."""

    __slots__ = ("assignment", "storage", "wrapping", "__weakref__")

    def __init__(self) -> None:
        self.assignment: Any = None
        self.storage: dict[Value, tuple] = {}
        self.wrapping: dict[Operation, tuple] = {}


# module -> sharing key -> _Prepared; an entry goes with its module (nothing here refers to the
# module itself: the assignment holds it weakly, values and ops do not point back to it).
_PREPARED: "weakref.WeakKeyDictionary[Any, dict[tuple, _Prepared]]" = weakref.WeakKeyDictionary()


def _prepared_for(module: Any, key: tuple) -> _Prepared:
    try:
        per_module = _PREPARED[module]
    except KeyError:
        per_module = _PREPARED[module] = {}
    except TypeError:  # not weakly referable: nothing shared
        return _Prepared()
    prepared = per_module.get(key)
    if prepared is None:
        prepared = per_module[key] = _Prepared()
    return prepared


def _beyond_memory(ir_value: Value, layout: "Layout") -> ExecutionError:
    """The error of a buffer this machine cannot hold (tiles that pad a small array a millionfold),
    at the op that makes the value or the function that takes it."""
    type = ir_value.type
    owner = ir_value.owner
    if not isinstance(owner, Operation):  # a block argument: its function or region's op
        owner = owner.parent.parent if owner is not None and owner.parent is not None else None
    size = format_bytes(layout.physical_bytes(type.shape, type.element.numpy_dtype))
    return ExecutionError(f"{ir_value.name or 'a value'} ({type}) in layout {layout} takes {size}, more memory "
                          "than this machine can give", getattr(owner, "pos", None))


def _has_subnormals(value: Any) -> bool:
    return isinstance(value, np.ndarray) and flush_subnormals(value) is not value


__all__ = ["PhysicalArray", "TpuBackend"]
