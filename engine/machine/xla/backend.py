"""The XLA backend (`xla:cpu`, `xla:gpu`, `xla:tpu`): every op XLA can run alone runs on a real
device as a single-op module (kernels.py), compiled once per op signature and device; values stay
device arrays (jax Arrays) from op to op, and only what the user looks at comes to the host
(device_values.py).

Which ops XLA runs is decided per op from its definition's traits (engine/ir/opdefs.py) and its
types, never from its name (`how_xla_backend_runs`):

- "kernel": XLA compiles and runs the op. It must be of a dialect XLA reads (StableHLO, CHLO), be
  pure (or a custom call XLA implements itself: any target but a side-effecting one or one of
  hlodbg's check/interpreter ops, e.g. LAPACK on the CPU), have operands, and take and give only
  statically shaped, unquantized tensors. Its regions (reduce bodies, comparators) go with it,
  unless they read values from outside the op, which XLA refuses to export.
- "passes": the interpreter runs the op on the device arrays as they are, because it only hands
  values on: calls, loops and branches (their frames see device arrays; a loop's condition comes
  to the host as one scalar), tuples, tokens and futures.
- "grid": the op says how a global value is laid out over the grid (the `grid_layout` trait:
  Shardy's manual computations and sharding annotations; GSPMD's partitioner custom calls,
  PARTITIONER_CUSTOM_CALLS): engine/ops/spmd.py gets the device arrays as they are, cuts this
  device's tile on the device, and gathers the devices' tiles on the host into a full value.
- "collective": the op's evaluator gets the device arrays as they are; the group meeting there runs
  the op as ONE XLA execution over the group's devices (collectives.py, through
  `group_collective`), each member keeping its result on its device. What XLA does not run on the
  platform the evaluator computes from host copies (`numerics_notes` says so for the op).
- "host": the interpreter computes the op with numpy on host copies of its operands: hlodbg's own
  ops (hlo.*, check.*, interpreter.*), effects (random numbers, replica ids),
  quantized and dynamically shaped values, bodies reading enclosing values, and every op of a
  combiner body (`expandable_body`: the interpreter applies it to whole arrays at once, when it
  runs the owner itself or the debugger shows the body evaluated). Their numpy results are put on
  the device by the next kernel that reads them.
- "put": an op without operands or regions (constants, iota, replica_id) is computed on the host
  and its result put on the device at once; constants are constant steps, so once per run.

An op XLA refuses to compile or run fails with the interpreter's located error naming the op.
Outside a grid run the process runs on device 0; on a grid of R x P processes, process (r, p) runs
on device r * P + p (`for_device`), and a grid larger than the platform's devices is refused with
the runtime's message (how to get more devices on the CPU).
"""
from __future__ import annotations

import copy
from typing import Any, Callable, Optional, Sequence

from ...ir.errors import ExecutionError
from ...ir.opdefs import (
    callee_attribute,
    effect_of,
    has_aliasing_regions,
    has_expandable_body,
    is_collective,
    is_terminator,
    lays_out_on_grid,
)
from ...ir.sharding import PARTITIONER_CUSTOM_CALLS
from ...ir.types import QuantizedType, TensorType
from ..backend import Backend
from .collectives import group_collectives
from .device_values import to_host
from .kernels import captured_values, compiled, single_op_module
from .runtime import XlaError, runtime

# The dialects of XLA's StableHLO input; hlodbg's own (hlo, check, interpreter) are not.
XLA_DIALECTS = ("stablehlo", "chlo")
# A custom call XLA runs itself: one that does not name an op of these (hlodbg's test dialects).
_HLODBG_ONLY_CUSTOM_CALLS = ("check.", "interpreter.")


def how_xla_backend_runs(op: Any) -> str:
    """"kernel", "passes", "grid", "collective", "host" or "put" (see the module docstring)."""
    name = op.name
    if is_terminator(name) or callee_attribute(name) is not None or has_aliasing_regions(name):
        return "passes"
    values = [*op.operands, *op.results]
    if any(not isinstance(v.type, TensorType) for v in values):
        return "passes"  # tuples, tokens, futures: packed and unpacked, never computed with
    if any(not v.type.is_static or isinstance(v.type.element, QuantizedType) for v in values):
        return "host"
    if lays_out_on_grid(name) or _partitioner_custom_call(op):
        return "grid"
    if is_collective(name):
        return "collective"
    if not op.operands and not op.regions:
        return "put"
    if op.dialect not in XLA_DIALECTS or _in_combiner_body(op):
        return "host"
    if effect_of(name) != "pure" and not _xla_custom_call(op):
        return "host"
    if op.regions and captured_values(op):
        return "host"
    return "kernel"


def _in_combiner_body(op: Any) -> bool:
    owner = op.parent_op
    while owner is not None and owner.name != "func.func":
        if has_expandable_body(owner.name):
            return True
        owner = owner.parent_op
    return False


def _xla_custom_call(op: Any) -> bool:
    if op.name != "stablehlo.custom_call" or _is_true(op.attributes.get("has_side_effect")):
        return False
    target = str(op.attributes.get("call_target_name", "")).strip('"')
    return not target.startswith(_HLODBG_ONLY_CUSTOM_CALLS)


def _partitioner_custom_call(op: Any) -> bool:
    return op.name == "stablehlo.custom_call" and str(op.attributes.get("call_target_name", "")).strip('"') in PARTITIONER_CUSTOM_CALLS


def _is_true(attribute: Any) -> bool:
    return attribute is not None and str(getattr(attribute, "value", attribute)).lower() in ("true", "unit")


class XlaBackend(Backend):
    """Ops on a real device through XLA; `platform` is "cpu", "gpu" or "tpu"."""

    from_xla = True  # its values are XLA's: compared with XLA's tolerances by default (engine/debug/difference.py)
    # Each op is compiled and run alone, so every result is rounded to its type before the next op
    # sees it; the emulators' excess-precision switch has nothing to change here.
    excess_precision = False

    def __init__(self, platform: str = "cpu", device_index: int = 0):
        self.platform = platform
        self.xla_platform = platform
        self.name = f"xla:{platform}"
        self.device_index = device_index
        self.runtime = runtime(platform)  # XlaUnavailable now, not at the first op
        self.device = self.runtime.device(device_index)
        # op -> its kernel on this device, so interpreters made again for the same program (the
        # debugger's replays) neither print nor look up its module again
        self._executables: dict = {}

    def configured(self, **options: Any) -> "Backend":
        if options:
            raise TypeError(f"{self.name} takes no options ({', '.join(sorted(options))}): XLA decides its own numerics")
        return self

    def for_device(self, process: Any, grid: Any = None) -> "XlaBackend":
        """The backend of one process: device `grid.device_id(process)` (replica * P + partition)
        of a grid run, device 0 otherwise; XlaUnavailable when the platform has fewer devices
        than the grid."""
        if grid is None:
            return self
        self.runtime.require(grid.size)
        return self.bound_to(grid.device_id(process))

    def bound_to(self, device_index: int) -> "XlaBackend":
        """This backend running on device `device_index` of the platform (the seam a grid's
        per-process binding uses)."""
        bound = copy.copy(self)
        bound.device_index = device_index
        bound.device = self.runtime.device(device_index)
        bound._executables = {}
        return bound

    def describe(self) -> str:
        return self.name

    def numerics_mode(self) -> str:
        return "XLA, op by op"

    # -- collectives ----------------------------------------------------------------------------
    runs_collectives = True

    def group_collective(self, op: Any, device_ids: Sequence[int]) -> Optional[Callable]:
        return group_collectives(self.runtime).runner(op, device_ids)

    def numerics_notes(self, op: Any, values: Optional[Sequence[Any]] = None) -> list[str]:
        return group_collectives(self.runtime).notes(op) if is_collective(op.name) else []

    def run_notes(self, module: Any) -> list[str]:
        return [f"ops run on {self.runtime.device_kind(self.device)} device {self.device_index} through XLA "
                f"({self.runtime.describe()}), each compiled once per op signature"]

    # -- per op ---------------------------------------------------------------------------------
    def wrap_evaluator(self, op: Any, evaluator: Callable) -> Callable:
        how = how_xla_backend_runs(op)
        if how == "kernel" and has_expandable_body(op.name):
            return _unless_expanding(self._kernel(op), _on_host(evaluator))
        if how == "kernel":
            return self._kernel(op)
        if how in ("passes", "grid", "collective"):
            return evaluator
        if how == "put":
            return self._put_result(evaluator)
        return _on_host(evaluator)

    def _kernel(self, op: Any) -> Callable:
        """An evaluator running `op` as a single-op module on this backend's device."""
        state: dict[str, Any] = {}
        executables = self._executables

        def kernel(call: Any, *operands: Any) -> Any:
            executable = state.get("executable")
            if executable is None:
                executable = executables.get(op)
                if executable is None:
                    executable = executables[op] = self._compile(call)
                state["executable"] = executable
            try:
                results = executable.run(operands)
            except XlaError as error:
                raise ExecutionError(error.message, op.pos) from None
            return results[0] if len(op.results) == 1 else results

        return kernel

    def _compile(self, call: Any) -> Any:
        op = call.op
        text = single_op_module(op, call.interpreter.module)
        try:
            return compiled(text, [self.device], platform=self.platform, what=op.name)
        except XlaError as error:
            raise ExecutionError(error.message, op.pos, (f"hlodbg's own interpreter runs {op.name}: "
                                                         f"use --target cpu for this program",)) from None

    def _put_result(self, evaluator: Callable) -> Callable:
        device, put = self.device, self.runtime.put

        def evaluate_and_put(call: Any, *operands: Any) -> Any:
            out = evaluator(call, *operands)
            if isinstance(out, list):
                return [put(o, device) for o in out]
            return put(out, device)

        return evaluate_and_put


def _unless_expanding(kernel: Callable, interpreted: Callable) -> Callable:
    """`kernel`, except while the interpreter expands bodies (the debugger showing a combiner body
    evaluated, step by step): then the interpreter's own evaluator, which runs the body as a region."""

    def kernel_unless_expanding(call: Any, *operands: Any) -> Any:
        if call.interpreter.expand_bodies:
            return interpreted(call, *operands)
        return kernel(call, *operands)

    return kernel_unless_expanding


def _on_host(evaluator: Callable) -> Callable:
    """`evaluator` given host copies of its operands (device arrays brought over)."""

    def on_host(call: Any, *operands: Any) -> Any:
        return evaluator(call, *(to_host(o) for o in operands))

    return on_host


__all__ = ["XLA_DIALECTS", "XlaBackend", "how_xla_backend_runs"]
