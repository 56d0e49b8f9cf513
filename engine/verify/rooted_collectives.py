"""Verifier checks: the collectives with a root: collective_broadcast (variadic, optionally with a
dynamic root) and collective_reduce.

collective_broadcast follows the spec's section (C1-C3) with the dynamic root added at
openxla/stablehlo's head: with `has_dynamic_root` the last operand is `root`, one index per broadcast
operand into its process group (C4), each within the group (C5; here when the root is a constant
and the group size is fixed by the program, otherwise at run time).

collective_reduce follows its section at head (C1-C4): an all_reduce whose result lands on each
group's root; with `has_dynamic_root` the last operand holds one root index per data operand
(C3) and the results are the data operands' (rank-1 `si32` root as the C++ verifier has it). The
groups may leave processes out (they get zeros), so their bound, num_replicas or num_partitions
(C2), is the run's to check.
"""
from __future__ import annotations

from ..ir import attributes as A
from ..ir.core import Operation
from ..ir.types import IntegerType
from .collectives import _check_groups, _computation, group_size
from .core import _constant_array, _Context, _register, _same_shape, _same_type, _tensor
from .shape_inference import element_compatible, fail, is_int_e


@_register("stablehlo.collective_broadcast")
def _collective_broadcast(op: Operation, ctx: _Context) -> None:
    _check_groups(op, ctx, "I2", "C1", None, None)
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


@_register("stablehlo.collective_reduce")
def _collective_reduce(op: Operation, ctx: _Context) -> None:
    _check_groups(op, ctx, "I2", "C1", None, "I3")
    dynamic = isinstance(op.attributes.get("has_dynamic_root"), A.UnitAttr)
    data = list(op.operands[:-1] if dynamic else op.operands)
    if not data:
        fail("needs at least one operand to reduce" + (" before the root" if dynamic else ""), "C3")
    if dynamic:
        root = _tensor(op.operands[-1].type, "root", "C3")
        if root.shape is not None and (len(root.shape) != 1 or root.shape[0] not in (None, len(data))):
            fail(f"root must be a 1-dimensional tensor with one index per reduced operand "
                 f"(tensor<{len(data)}xi32>), got {root}", "C3")
        if not (isinstance(root.element, IntegerType) and root.element.width == 32
                and root.element.signedness != "unsigned"):
            fail(f"root must hold si32 indices, got {root}", "C3")
    if len(data) != len(op.results):
        fail(f"has {len(data)} operand(s) to reduce but {len(op.results)} result(s)", "C3")
    inputs = [_tensor(x.type, f"operand #{i}") for i, x in enumerate(data)]
    e = _computation(op, inputs, "C4")
    for i, (x, r) in enumerate(zip(inputs, op.result_types)):
        r = _tensor(r, f"result #{i}")
        _same_shape(x, r, f"result #{i} must have the shape of operand #{i}", "C3")
        if not element_compatible(r.element, e):
            fail(f"result #{i} has type {r} but the computation produces {e}", "C4")
