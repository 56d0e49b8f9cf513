"""Verifier checks: the collectives with a root: collective_broadcast (variadic, optionally with a
dynamic root) and collective_reduce.

collective_broadcast follows the spec's section (C1-C3) with the dynamic root added at
openxla/stablehlo's head: with `has_dynamic_root` the last operand is `root`, one index per broadcast
operand into its process group (C4), each within the group (C5; here when the root is a constant
and the group size is fixed by the program, otherwise at run time).

collective_reduce's operands, body and results follow all_reduce's rules (stablehlo's reference
tests and its C++ verifier treat it as an all_reduce whose result lands on each group's root), so
it is checked by all_reduce's check and its errors carry all_reduce's constraint numbers.
"""
from __future__ import annotations

from ..ir import attributes as A
from ..ir.core import Operation
from .collectives import _check_groups, group_size
from .core import CHECKS, _Context, _constant_array, _register, _same_type, _tensor
from .shape_inference import fail, is_int_e


@_register("stablehlo.collective_broadcast")
def _collective_broadcast(op: Operation, ctx: _Context) -> None:
    _check_groups(op, "I2", "C1", None, None)
    dynamic = isinstance(op.attributes.get("has_dynamic_root"), A.UnitAttr)
    data = list(op.operands[:-1] if dynamic else op.operands)
    if not data:
        fail("needs at least one operand to broadcast" + (" before the root" if dynamic else ""), "C3")
    if len(data) != len(op.results):
        fail(f"has {len(data)} operand(s) to broadcast but {len(op.results)} result(s)", "C3")
    for i, (x, r) in enumerate(zip(data, op.result_types)):
        _same_type(x.type, r, f"result #{i} must have the type of operand #{i}", "C3")
    if dynamic:
        _check_root(op, len(data))


def _check_root(op: Operation, count: int) -> None:
    root = _tensor(op.operands[-1].type, "root", "C4")
    if root.shape is not None and (len(root.shape) != 1 or root.shape[0] not in (None, count)):
        fail(f"root must be a 1-dimensional tensor with one index per broadcast operand (tensor<{count}xi32>), "
             f"got {root}", "C4")
    if not is_int_e(root.element):
        fail(f"root must hold integer indices, got {root}", "C4")
    size = group_size(op)
    roots = _constant_array(op.operands[-1])
    if size is None or roots is None:
        return
    for k, index in enumerate(roots.reshape(-1).tolist()):
        if not 0 <= int(index) < size:
            fail(f"root[{k}] = {index} is not an index into a process group of {size} processes", "C5")


CHECKS["stablehlo.collective_reduce"] = CHECKS["stablehlo.all_reduce"]
