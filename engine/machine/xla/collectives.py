"""Real collectives: a group of the grid that meets at a collective runs it as ONE XLA execution.

On the emulated grid the scheduler hands every member of a group the list of the members'
contributions and each member computes its own result in numpy (engine/ops/collectives.py). On
real devices the group instead runs one group-local executable over its devices: a module holding
the op alone, compiled for a grid of G replicas (G = the group's size, device k = the group's k-th
member), with the op's groups rewritten to the local ids (`replica_groups = [[0, ..., G-1]]`;
`source_target_pairs` already are local: a permute meets every process of its axis, whose k-th
member has id k along it), and run with every member's operands on its own device
(`Executable.run_spmd`). Each member then takes its own result, a device array on its device.

Why replicas rather than partitions: a one-op module over replicas goes through no SPMD
partitioner, which refuses side-effecting ops without a sharding and would otherwise be asked to
partition values that are already per device. The channel id and `use_global_device_ids`, which
only choose how the original program's groups are formed, are dropped with those groups.

The module is kernels.py's single-op module with the local attributes; it is compiled once per
(module text, group devices) in kernels.py's cache: the text holds the op's attributes and operand
types, so groups of the same op on other devices, or the same op in the next loop iteration,
reuse theirs. What XLA refuses to compile for the platform (on the CPU:
`collective_broadcast`, all_reduce bodies that are not one reduction XLA recognises (sum, product,
min, max), variadic all_to_all, and ops outside StableHLO such as `collective_reduce` or HLO's
`ragged_all_to_all`),
and a body reading values from outside the op (they are not among the exchanged operands), is
remembered, and the op's evaluator then computes the group's result from the contributions as on
the emulated grid (`notes` says so, per op).
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Sequence

import numpy as np

from ...ir.attributes import DenseElements, IntegerAttr
from ...ir.errors import ExecutionError
from ...ir.opset import OPS
from ...ir.types import IntegerType, TensorType
from .kernels import KERNELS, captured_values, single_op_module
from .runtime import Executable, Runtime, XlaError

I32 = IntegerType(32)
I64 = IntegerType(64)
# Attributes that say how the original program's groups are formed; the local module has one group.
_GROUP_CHOICE = ("channel_handle", "use_global_device_ids")


def group_module_text(op: Any, group_size: int, module: Any = None) -> str:
    """The module running `op` once over a group of `group_size` replicas (see the module docstring).
    `module`, when given, is where symbols the op names are found (a collective's groups, which
    may name a mesh, are replaced by local ids, so none is needed for them)."""
    grid = {"mhlo.num_partitions": IntegerAttr(1, I32), "mhlo.num_replicas": IntegerAttr(group_size, I32)}
    return single_op_module(op, module, attributes=local_attributes(op, group_size), module_attributes=grid)


def local_attributes(op: Any, group_size: int) -> dict:
    """`op`'s own attributes (discardable ones left out: XLA needs none of them) for one group of
    `group_size` local ids."""
    opdef = OPS.get(op.name)
    own = {k: v for k, v in op.attributes.items() if opdef is None or k in opdef.attrs}
    for name in _GROUP_CHOICE:
        own.pop(name, None)
    if "replica_groups" in own:
        ids = np.arange(group_size, dtype=np.int64).reshape(1, group_size)
        own["replica_groups"] = DenseElements(TensorType((1, group_size), I64), ids)
    return own


@dataclass
class GroupCollectives:
    """The group-local executables of one runtime, and how often they were compiled and run."""

    runtime: Runtime
    compiles: int = 0  # group-local executables compiled
    executions: int = 0  # group executions (one per group meeting)
    refused: dict = field(default_factory=dict)  # module text -> why XLA does not run it
    _texts: dict = field(default_factory=dict, repr=False)
    _left_to_evaluator: dict = field(default_factory=dict, repr=False)  # id(op) -> (op, why)

    def text(self, op: Any, group_size: int) -> Optional[str]:
        """The group-local module of `op`, made once per (op, group size); None for an op whose
        regions read values from outside it."""
        key = (id(op), group_size)
        found = self._texts.get(key)
        if found is None or found[0] is not op:
            text = None if captured_values(op) else group_module_text(op, group_size)
            found = self._texts[key] = (op, text)
        return found[1]

    def executable(self, op: Any, device_ids: Sequence[int]) -> Optional[Executable]:
        """The executable of `op` over the devices `device_ids` (in group order), compiled on first
        use; None when XLA does not run the op on this platform (remembered: asked once)."""
        text = self.text(op, len(device_ids))
        if text is None:
            self._left(op, "its body reads values from outside the op")
            return None
        if text in self.refused:
            self._left(op, f"not as an XLA collective: {self.refused[text]}")
            return None
        devices = [self.runtime.device(i) for i in device_ids]
        before = KERNELS.compiles
        try:
            found = KERNELS.compiled(text, devices, replicas=len(devices), platform=self.runtime.platform,
                                     what=f"{op.name} over devices {list(device_ids)}")
        except XlaError as error:
            self.refused[text] = error.message
            self._left(op, f"not as an XLA collective: {error.message}")
            return None
        self.compiles += KERNELS.compiles - before
        return found

    def _left(self, op: Any, why: str) -> None:
        self._left_to_evaluator[id(op)] = (op, why)

    def runner(self, op: Any, device_ids: Sequence[int]) -> Optional[Callable[[Sequence[Sequence[Any]]], list]]:
        """A function from the members' contributions (each a sequence of operands, in group
        order) to their results (`results[member]`, a list per member of device arrays on the
        member's device); None when XLA does not run the op here (the evaluator computes it)."""
        executable = self.executable(op, device_ids)
        if executable is None:
            return None

        def run(contributions: Sequence[Sequence[Any]]) -> list:
            self.executions += 1
            try:
                return executable.run_spmd([list(c) for c in contributions])
            except XlaError as error:
                raise ExecutionError(error.message, op.pos) from None

        return run

    def notes(self, op: Any) -> list[str]:
        """Why `op` did not run as an XLA collective (empty when it did, or has not run)."""
        found = self._left_to_evaluator.get(id(op))
        if found is None or found[0] is not op:
            return []
        return [f"{op.name} runs in hlodbg's interpreter on the group's values brought to the host, {found[1]}"]


_lock = threading.Lock()
_per_runtime: dict[int, GroupCollectives] = {}


def group_collectives(runtime: Runtime) -> GroupCollectives:
    """The one GroupCollectives of `runtime` (every device's backend shares its executables)."""
    with _lock:
        found = _per_runtime.get(id(runtime))
        if found is None or found.runtime is not runtime:
            found = _per_runtime[id(runtime)] = GroupCollectives(runtime)
        return found


__all__ = ["GroupCollectives", "group_collectives", "group_module_text", "local_attributes"]
