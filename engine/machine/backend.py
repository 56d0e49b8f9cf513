"""Backends: what a machine decides about values — how it stores them and how it computes with them.

A backend owns
- value storage: `store`/`load` between the logical numpy array an evaluator sees and what the
  machine keeps (the identity on the CPU; a TPU keeps tiled, padded physical buffers);
- contractions: evaluators never multiply matrices themselves; dot_general, convolution and
  friends bring their operands into a canonical batched-matmul form and call `matmul`, which
  decides accumulation types and passes (precision config, dot algorithms);
- the numerics policy every evaluator reaches through `call.backend`: the precision
  transcendental functions are evaluated in (`precise`), how a result is rounded to its type
  (`rounded`, the one place results are rounded, so also where a backend that flushes
  subnormals does so), the type each step of a multi-step expansion rounds to (`stage_dtype`,
  `staged`), and the reduction schedule (`tree_window`, `vectorized_reduction_size`).

`Backend` is XLA on the CPU, which the spec leaves implementation-defined choices to ("match XLA
on the CPU"); `CpuBackend` names it. A TPU backend overrides what differs without touching any
evaluator. "Device" means a member of the grid (machine/process.py), never this object.

Per op, a backend may wrap the evaluator the interpreter runs (`wrap_evaluator`, called once per
op when its block is compiled: a TPU flushes subnormals and refuses f64 there) and explain why an
op's result may differ on it (`numerics_notes`).

What the machine is, the rest of hlodbg asks the backend and never probes for (CPU defaults here,
overridden by the TPU, XLA and capture backends): the memory of a device (`device_memory`,
`fast_memory_bytes`), the layout it assigns a value (`layout_for`), the TPU generation it emulates
(`generation`), the target a run on it is compared with by default (`default_against`), whether its
values are XLA's own (`from_xla`), the XLA platform whose devices hold them (`xla_platform`), and
whether it replays a capture and which values came from it (`replays_capture`, `value_source`).
Which targets there are, and the options each takes, is machine/targets.py's registry.

Excess precision (`excess_precision`, on by default; CLI `--per-op-rounding` turns it off): XLA
allows itself more precision than an op's type (flag `xla_allow_excess_precision`, on by default),
and on the CPU that means a bf16/f8 result converted straight to f32 is not rounded first
(machine/excess_precision.py). The CPU target is "XLA on the CPU", so by default it does the same
and matches `jax.jit` bit for bit where that rule decides; off, every op's result is rounded to its
type, as StableHLO specifies (`numerics_mode` names the one in force).
"""
from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any, Callable, Optional, Sequence

import numpy as np

from ..ir.core import Value
from ..ir.dtypes import compute_dtype, is_narrow_float, narrow
from ..ir.ml_types import is_bfloat16
from ..ir.types import TensorType, Type
from . import blas
from .memory import MemoryCapacity, host_memory

if TYPE_CHECKING:
    from .tpu.assignment import AssignedLayout
    from .tpu.generations import TpuGeneration

# The two numerics modes of the emulated machines (Backend.numerics_mode).
EXCESS_PRECISION = "excess precision"  # XLA's default
PER_OP_ROUNDING = "per-op rounding"  # the StableHLO spec's

# Complex contractions at most this long are summed in order, one rounded product at a time.
_SEQUENTIAL_COMPLEX_K = 8


F32 = np.dtype(np.float32)
F64 = np.dtype(np.float64)
C128 = np.dtype(np.complex128)
# Floats XLA CPU computes in their own width; bf16 and the f8 family compute in f32.
_NATIVE_FLOATS = frozenset(np.dtype(t) for t in (np.float16, np.float32, np.float64, np.complex64, np.complex128))


class Backend:
    """XLA-on-CPU numerics: values stored as given, contractions exact, results rounded once."""

    name = "backend"
    # XLA CPU's TreeReductionRewriter window: longer reduced dimensions are reduced in blocks of this.
    tree_window = 32
    # XLA CPU emits f32/f64 sums and products over inputs this large as vectorised loops instead.
    vectorized_reduction_size = 4096
    # True when store/load are the identity, so the interpreter may skip calling them.
    transparent_storage = True
    # Whether evaluators it wraps read the interpreter's frames (which loop iteration an op runs
    # in): runs on such a backend keep a Frame for every region run (the observed loop).
    reads_frames = False
    # Skip the rounding of a narrow-float result that is converted straight to a wider float, as
    # XLA does by default (see the module docstring); off: round every result, as the spec says.
    excess_precision = True

    # -- what the machine is --------------------------------------------------------------------
    # The TPU generation it emulates (tpu/generations.py); None for a machine that emulates none.
    generation: Optional[TpuGeneration] = None
    # Whether its values are XLA's own (a real device's, a capture of a real run): a comparison
    # with it uses XLA's tolerances by default (engine/debug/difference.py).
    from_xla = False
    # The XLA platform ("cpu", "gpu", "tpu") whose real devices hold its values between ops; None
    # for a machine hlodbg emulates, whose values are numpy arrays on this host.
    xla_platform: Optional[str] = None

    def device_memory(self) -> MemoryCapacity:
        """The main memory of one device, which a run's peak is checked against: the HBM of the
        generation it emulates, else (the CPU) this machine's memory."""
        generation = self.generation
        if generation is None:
            return host_memory()
        return MemoryCapacity(generation.hbm_bytes, generation.hbm_label, "HBM", on_accelerator=True)

    def fast_memory_bytes(self) -> Optional[int]:
        """The fast memory of one core beside the main one (memory space S(1): a TPU's VMEM), which
        reports give values kept there against; None for a machine without one (the CPU)."""
        return self.generation.vmem_bytes if self.generation is not None else None

    def layout_for(self, ir_value: Value) -> Optional[AssignedLayout]:
        """The layout the machine assigned to tensor value `ir_value` of the prepared module, with
        where it came from; None on a machine that keeps every value row-major and unpadded (the CPU)."""
        return None

    def default_against(self) -> str:
        """The target a run on this machine is compared with when none is named (`:break diverge`,
        `--break-on diverge`): the CPU, the reference every other machine is checked against."""
        return "cpu"

    # Whether it replays a capture's values (engine/debug/capture_replay.py): then `value_source`
    # says where each op instance's values came from.
    replays_capture = False

    def value_source(self, context: str, op: Any) -> Optional[str]:
        """Where the values of one instance of `op` (run in capture context `context`) come from
        when the machine replays a capture: CAPTURED or COMPUTED; None for a machine that computes
        every value."""
        return None

    def configured(self, **options: Any) -> "Backend":
        """A copy of this backend with `options` (`excess_precision`) set; unknown options are
        refused with a TypeError naming them."""
        unknown = sorted(set(options) - {"excess_precision"})
        if unknown:
            raise TypeError(f"{self.name} takes no option {', '.join(unknown)}")
        configured = copy.copy(self)
        for name, value in options.items():
            setattr(configured, name, value)
        return configured

    # -- per op -------------------------------------------------------------------------------
    def wrap_evaluator(self, op: Any, evaluator: Callable) -> Callable:
        """The evaluator the interpreter runs for `op` (called once per op at compile time):
        `evaluator` itself unless excess precision is on and `op` is a conversion it changes."""
        if not self.excess_precision:
            return evaluator
        from .excess_precision import keep_excess_precision

        return keep_excess_precision(op, evaluator, self)

    def numerics_notes(self, op: Any, values: Optional[Sequence[Any]] = None) -> list[str]:
        """Why `op`'s results may differ on this backend from XLA on the CPU (none on the CPU,
        one for a conversion excess precision changes). `values`, when given, are the operands and
        results seen at one run of `op` (on either target): notes that do not apply to them are left out."""
        if self.excess_precision:
            from .excess_precision import excess_producer

            producer = excess_producer(op)
            if producer is not None:
                return [f"excess precision: converts {producer.name}'s f32 value, not rounded to "
                        f"{op.operands[0].type.element} first (as XLA does)"]
        return []

    def numerics_mode(self) -> str:
        """Which rounding is in force, as the status bar, `run` and reports say it."""
        return EXCESS_PRECISION if self.excess_precision else PER_OP_ROUNDING

    def store(self, value: Any, ir_value: Value) -> Any:
        """The representation kept for `value`, the run-time value of SSA value `ir_value`
        (identity on the CPU). `value` may be a token, tuple or future, and a region body run
        vectorised sees arrays with extra leading dimensions: a backend keeps those as they are.

        A backend that overrides store/load must set `transparent_storage = False`.
        """
        return value

    def load(self, stored: Any, ir_value: Value) -> Any:
        """The logical numpy array of a stored value."""
        return stored

    # -- collectives --------------------------------------------------------------------------
    # A machine with real devices (XLA) runs a group's collective itself, as one execution over the
    # group's devices; the collective evaluators ask it first (engine/ops/collectives.py).
    runs_collectives = False

    def group_collective(self, op: Any, device_ids: Sequence[int]) -> Optional[Callable]:
        """How the machine runs collective `op` over the grid devices `device_ids` (in group order):
        a function from the members' contributions (each member's operands, in group order) to
        every member's results (`results[member]`); None when the evaluator computes them (the
        CPU, an emulated TPU, or a machine that cannot run this op)."""
        return None

    # -- one machine per device --------------------------------------------------------------
    def prepare(self, module: Any) -> None:
        """Called once by every interpreter of `module` before it runs: a backend that decides
        something per value (a TPU's layouts) works it out here. Nothing to do on the CPU."""

    def for_device(self, process: Any, grid: Any = None) -> "Backend":
        """The backend instance of one device of the grid. The CPU's is stateless and shared;
        an emulated accelerator gets an instance per device (its own storage and accounting); a
        machine with real devices binds the process to the grid's device `grid.device_id(process)`
        (`grid` is the run's machine/process.py Grid; None outside a grid run)."""
        return self

    def run_notes(self, module: Any) -> list[str]:
        """What a user should know about running `module` on this machine as a whole (printed
        once per run, e.g. types the machine only emulates): on the CPU, the rounding in force
        when the module has a conversion it decides."""
        from .excess_precision import mode_note

        return mode_note(module, self.excess_precision)

    def describe(self) -> str:
        """The target as the status bar and reports name it: `cpu`, `tpu-v5e`."""
        return self.name

    def buffer_bytes(self, ir_value: Value) -> tuple[int, int]:
        """(logical bytes, bytes the device's buffer takes) of a tensor value; equal on the CPU."""
        logical = _logical_bytes(ir_value.type)
        return logical, logical

    def memory_space(self, ir_value: Value) -> int:
        """The memory a tensor value's buffer lives in: 0, the device's main memory (the CPU's RAM,
        a TPU's HBM), which is what `buffer_bytes` are counted against; others are not."""
        return 0

    def memory_space_label(self, space: int) -> str:
        """How reports name memory space `space` (XLA's `S(n)`)."""
        return "memory" if space == 0 else f"memory space S({space})"

    def matmul(
        self,
        lhs: np.ndarray,
        rhs: np.ndarray,
        result_dtype: np.dtype,
        precision: tuple = (),
        accumulation_dtype: Optional[np.dtype] = None,
        algorithm: Any = None,
    ) -> np.ndarray:
        """`[B, M, K] x [B, K, N] -> [B, M, N]` rounded once to `result_dtype`.

        Integer products wrap in the result width; narrow floats accumulate in f32, and float
        results narrower than their operands at the operands' width. `accumulation_dtype` (a
        dot algorithm's) only ever widens the accumulator on the CPU; `precision` and the rest of
        the `algorithm` attribute (#stablehlo.dot_algorithm) do not change the CPU's arithmetic.
        """
        acc = _accumulation_dtype(lhs.dtype, rhs.dtype, result_dtype)
        if accumulation_dtype is not None and acc.kind == "f":
            # XLA CPU ignores a dot algorithm's narrower accumulator (F16_F16_F16 still sums in
            # f32); only a wider one (F64_F64_F64) changes the arithmetic.
            requested = compute_dtype(np.dtype(accumulation_dtype))
            if requested.kind == "f" and requested.itemsize > acc.itemsize:
                acc = requested
        if lhs.dtype != acc:
            lhs = lhs.astype(acc)
        if rhs.dtype != acc:
            rhs = rhs.astype(acc)
        if acc.kind == "c" and lhs.shape[-1] <= _SEQUENTIAL_COMPLEX_K:
            # Short complex dots as XLA CPU evaluates them: each complex product rounded, then
            # added in K order (jax.jit reproduces the conformance suite's complex dot_general
            # files bit for bit this way; BLAS's kernels land several ulps away when the sum
            # cancels). Real dots need no such loop: BLAS and XLA both chain fused multiply-adds
            # in K order. For such K the loop costs about what BLAS does.
            total = np.zeros((*lhs.shape[:-1], rhs.shape[-1]), acc)
            for k in range(lhs.shape[-1]):
                total += lhs[..., :, k, None] * rhs[..., None, k, :]
            return narrow(total, result_dtype)
        # Integer products wrap in the accumulator and again when narrowed, as XLA's do.
        return narrow(blas.matmul(lhs, rhs), result_dtype)


    # -- the numerics policy ----------------------------------------------------------------------
    @staticmethod
    def precise(x: np.ndarray) -> np.ndarray:
        """`x` in the precision transcendental functions are evaluated in.

        f32 and narrower floats are evaluated in f32 with numpy's vectorised kernels (within a few
        ULP, like XLA's own f32 approximations, and several times faster than going through f64);
        complex64 goes through complex128, whose numpy kernels are the accurate ones.
        """
        dtype = x.dtype
        if dtype == F64 or dtype == C128 or dtype == F32:
            return x
        if dtype.kind != "c" and dtype.itemsize < 4:
            return x.astype(F32)
        return x.astype(C128 if dtype.kind == "c" else F64)

    @staticmethod
    def rounded(value: Any, dtype: np.dtype) -> np.ndarray:
        """Round a float or complex result to `dtype`; narrow floats go through f32 first.

        XLA computes narrow-float ops in f32 and rounds that f32 result, so a value computed in f64
        is rounded to f32 before it is rounded to the narrow type (both roundings, as XLA does).
        Subnormal results are kept, as IEEE and the spec say (XLA's CPU runtime flushes them).
        """
        value = np.asarray(value)
        if value.dtype == dtype:
            return value
        if is_narrow_float(dtype) and value.dtype != F32:
            value = value.astype(F32)
        return value.astype(dtype)

    @classmethod
    def converted(cls, value: Any, dtype: np.dtype) -> np.ndarray:
        """A float `value` converted to the float `dtype` as XLA's convert does it.

        Implementation-defined in the spec; XLA on the CPU (jaxlib 0.10) rounds an f64 operand
        straight to f16 and to every f8/f4 type (1 + 2^-11 + 2^-40 becomes f16's 1.001), but takes
        bf16 through f32, rounding twice (1 + 2^-8 + 2^-30 becomes bf16's 1.0). Every other
        source is exact in f32 first, so `rounded`'s path gives the same bits.
        """
        value = np.asarray(value)
        if value.dtype == F64 and is_narrow_float(dtype) and not is_bfloat16(dtype):
            return value.astype(dtype)
        return cls.rounded(value, dtype)

    @staticmethod
    def stage_dtype(dtype: np.dtype) -> np.dtype:
        """The type each step of a multi-step XLA expansion is rounded to.

        XLA CPU emits f16 arithmetic as f16 (every step rounded) but upcasts bf16 and the f8 family
        to f32 for a whole expression; f32 and f64 steps round to themselves.
        """
        return dtype if dtype in _NATIVE_FLOATS else F32

    def staged(self, fn: Any, *args: np.ndarray) -> np.ndarray:
        """`fn` evaluated precisely and rounded to the dtype of its first argument (one XLA step)."""
        return np.asarray(fn(*(self.precise(np.asarray(a)) for a in args))).astype(np.asarray(args[0]).dtype)


def _logical_bytes(type: Type) -> int:
    """Bytes of a static tensor's elements at their natural width, packed (an s4[3] is 2 bytes,
    a pred one byte per element, as XLA counts them); 0 for tokens and other non-tensors."""
    if not isinstance(type, TensorType) or not type.is_static:
        return 0
    from ..ir.dtypes import bit_width

    dtype = type.element.numpy_dtype
    bits = bit_width(dtype) if dtype.kind != "b" else 8
    return -(-type.num_elements * bits // 8)


def _accumulation_dtype(lhs: np.dtype, rhs: np.dtype, result: np.dtype) -> np.dtype:
    if result.kind == "c" or lhs.kind == "c" or rhs.kind == "c":
        return np.result_type(np.complex64, result) if result.kind == "c" else np.dtype(np.complex128)
    if result.kind == "b":
        return np.dtype(np.int32)
    wide = compute_dtype(result)
    if wide.kind in "iu":
        return np.dtype(np.int64) if wide.itemsize <= 8 and wide.kind == "i" else np.dtype(np.uint64)
    # A float result narrower than its operands (f64 x f64 -> f32) is still computed at the
    # operands' width and rounded once.
    for operand in (lhs, rhs):
        operand = compute_dtype(operand)
        if operand.kind == "f" and operand.itemsize > wide.itemsize:
            wide = operand
    return wide


class CpuBackend(Backend):
    """XLA on the CPU with plain numpy storage: the default backend."""

    name = "cpu"

    def default_against(self) -> str:
        """The default TPU: a run on the reference itself is compared with the machine it is
        most often ported to."""
        return "tpu-v5e"


CPU = CpuBackend()

__all__ = ["Backend", "CPU", "CpuBackend", "EXCESS_PRECISION", "PER_OP_ROUNDING"]
