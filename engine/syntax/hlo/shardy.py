"""Shardy's round-trip form in HLO → the Shardy IR the StableHLO form of the same program has.

JAX prints a sharded program's pre-optimization HLO with its Shardy facts folded into HLO
(XLA's "sdy round trip" export), which has no ops for them:
- the meshes as the module's frontend attribute `xla.sdy.meshes={mesh = #sdy.mesh<["x"=4]>}`;
- each `shard_map` body as a computation `xla.sdy.manual_computation_body.N` called between two
  custom calls: `xla.sdy.GlobalToLocalShape` (the global operands in, their local tiles out, with
  `xla.sdy.in_shardings` and `xla.sdy.manual_axes`) and `xla.sdy.LocalToGlobalShape` (the body's
  local results in, the global results out, with `xla.sdy.out_shardings`);
- argument shardings as a parameter's frontend attribute `xla.sdy.sharding`, result shardings as a
  `xla.sdy.FuncResultSharding` custom call on the returned value, and sharding constraints as
  `custom_call @Sharding` with `xla.sdy.sharding`.
The `#sdy...` values are MLIR attribute text in strings. `import_shardy(module)` rebuilds from them
what the StableHLO form holds and what engine/ops/spmd.py runs: `sdy.mesh` ops, one
`sdy.manual_computation` per custom call / call / custom call triple (its region the body, moved or
cloned in), and `sdy.sharding` argument and result attributes. The HLO facts stay where the printer
gives them back: sharding constraints remain `custom_call @Sharding` with their `mhlo.sharding`
(what the engine and the devices pane read; they get `sdy.sharding` beside it), result markers
remain identity custom calls, frontend attributes remain. A module with meshes and no grid of its
own gets `mhlo.num_partitions` from its largest mesh, as JAX's StableHLO says. The `#sdy` strings
are read by the MLIR frontend's attribute reader; an error in one points at the character inside
the HLO text.
"""
from __future__ import annotations

import re
from typing import Mapping, Optional

from ...ir.attributes import UNIT, ArrayAttr, IntegerAttr, SdyMesh, SdySharding, SdyShardingPerValue
from ...ir.core import Function, Module, Operation
from ...ir.errors import ParseError
from .ir_edit import instruction_name, unpacked, value_name
from .sdy_text import check_meshes, frontend_attributes, mesh_size, parse_sdy_value, read_meshes
from .shardy_manual import GLOBAL_TO_LOCAL, LOCAL_TO_GLOBAL, MANUAL_BODY, InstructionOf, import_manual_computations

FUNC_RESULT_SHARDING = "xla.sdy.FuncResultSharding"
SHARDING = "Sharding"
SHARDING_KEY = "xla.sdy.sharding"
HANDLED_TARGETS = (GLOBAL_TO_LOCAL, LOCAL_TO_GLOBAL, FUNC_RESULT_SHARDING)
# Marks a module whose grid (mhlo.num_partitions) came from its meshes, not its header: the HLO
# printer leaves it out again, as XLA's text did.
GRID_FROM_MESHES = "hlo.grid_from_meshes"
# The counts ("mhlo.num_replicas", ...) the lowering took from the collectives' groups (the header
# gives none).
GRID_FROM_GROUPS = "hlo.grid_from_groups"


def import_shardy(module: Module, instruction_of: Optional[InstructionOf] = None) -> None:
    """Rewrite `module` in place from Shardy's round-trip form to Shardy ops and attributes.
    Raises ParseError at the offending instruction (or the character in its `#sdy` text).
    `instruction_of(op)`: the HLO instruction an op came from (the lowering's), so a manual
    computation keeps what the printer needs to write its instructions back."""
    meshes = _import_meshes(module)
    for function in list(module.functions.values()):
        _import_argument_shardings(function, meshes)
    for op in list(module.walk()):
        if op.name == "stablehlo.custom_call":
            target = str(op.attributes.get("call_target_name", ""))
            if target == FUNC_RESULT_SHARDING:
                _import_result_sharding(op, meshes)
            elif target == SHARDING and SHARDING_KEY in frontend_attributes(op):
                op.attributes["sdy.sharding"] = SdyShardingPerValue((_constraint_sharding(op, meshes),))
    import_manual_computations(module, meshes, instruction_of)
    for op in module.walk():
        target = str(op.attributes.get("call_target_name", "")) if op.name == "stablehlo.custom_call" else ""
        if target.startswith(("xla.sdy.", "local_xla.sdy.")) and target != FUNC_RESULT_SHARDING:
            raise ParseError(f"custom-call target '{target}' is a Shardy round-trip form hlodbg does not read "
                             f"(it reads {', '.join(HANDLED_TARGETS)} around a call of an "
                             f"{MANUAL_BODY} computation, and Sharding)", op.pos)


# -- meshes ----------------------------------------------------------------------------------------


def _import_meshes(module: Module) -> dict[str, SdyMesh]:
    """`sdy.mesh` ops, first in the module, from `xla.sdy.meshes`; the grid from the largest mesh."""
    meshes = read_meshes(module)
    ops = [Operation("sdy.mesh", [], [], {"sym_name": name, "mesh": mesh}, pos=module.pos)
           for name, mesh in meshes.items()]
    module.operations[:0] = ops
    sizes = [mesh_size(mesh) for mesh in meshes.values()]
    if sizes and module.num_replicas * module.num_partitions == 1 and max(sizes) > 1:
        module.attributes["mhlo.num_partitions"] = IntegerAttr(max(sizes))
        module.attributes[GRID_FROM_MESHES] = UNIT
    return meshes


# -- argument and result shardings, sharding constraints -------------------------------------------


def _import_argument_shardings(function: Function, meshes: Mapping[str, SdyMesh]) -> None:
    """A parameter's `xla.sdy.sharding` frontend attribute → its `sdy.sharding` argument attribute."""
    arg_attrs = function.attributes.get("arg_attrs")
    if not arg_attrs or function.is_declaration:
        return
    if not any(SHARDING_KEY in (attrs.get("mhlo.frontend_attributes") or {}) for attrs in arg_attrs):
        return
    updated = []
    for argument, attrs in zip(function.arguments, arg_attrs):
        attrs = dict(attrs)
        front = attrs.get("mhlo.frontend_attributes") or {}
        if SHARDING_KEY in front:
            where, pos = f"parameter '{value_name(argument)}'", argument.pos or function.pos
            sharding = parse_sdy_value(front[SHARDING_KEY], SdySharding, "a #sdy.sharding<...>", pos,
                                       SHARDING_KEY, where)
            check_meshes((sharding,), meshes, where, pos)
            attrs["sdy.sharding"] = sharding
        updated.append(attrs)
    function.attributes["arg_attrs"] = ArrayAttr(updated)


def _one_sharding(op: Operation, meshes: Mapping[str, SdyMesh]) -> SdySharding:
    """The single sharding of a one-value custom call's `xla.sdy.sharding`."""
    where = f"custom-call '{instruction_name(op)}'"
    per_value = parse_sdy_value(frontend_attributes(op)[SHARDING_KEY], SdyShardingPerValue,
                                "a #sdy.sharding_per_value<[...]>", op.pos, SHARDING_KEY, where)
    if len(per_value.shardings) != 1 or len(op.operands) != 1 or len(op.results) != 1:
        raise ParseError(f"{where} ({op.attributes.get('call_target_name')}) must take one value and give one, "
                         f"with one sharding; it has {len(op.operands)} operand(s), {len(op.results)} result(s) "
                         f"and {len(per_value.shardings)} sharding(s)", op.pos)
    check_meshes(per_value.shardings, meshes, where, op.pos)
    return per_value.shardings[0]


def _import_result_sharding(op: Operation, meshes: Mapping[str, SdyMesh]) -> None:
    """`xla.sdy.FuncResultSharding` marks a returned value: its sharding goes onto the function
    result(s) it is returned as. The custom call stays, an identity (engine/ops/spmd.py), so the
    HLO printer gives it back."""
    sharding = _one_sharding(op, meshes)
    function = op.function
    result = op.results[0]
    if function is not None and not function.is_declaration:
        returned = function.body.terminator
        res_attrs = [function.res_attrs(i) for i in range(len(function.function_type.results))]
        marked = False
        for index, value in enumerate(returned.operands if returned is not None else ()):
            if unpacked(value) is result:
                res_attrs[index]["sdy.sharding"] = sharding
                marked = True
        if marked:
            function.attributes["res_attrs"] = ArrayAttr(res_attrs)


def _constraint_sharding(op: Operation, meshes: Mapping[str, SdyMesh]) -> SdySharding:
    """A sharding constraint's Shardy sharding: `custom_call @Sharding` keeps its `mhlo.sharding`
    (what engine/ops/spmd.py and the devices pane read) and gets `sdy.sharding` beside it, as XLA's
    import does before it makes the call an sdy.sharding_constraint."""
    return _open_unspecified_dims(_one_sharding(op, meshes), op)


_UNSPECIFIED_DIMS = re.compile(r"unspecified_dims=\[([\d,\s]*)\]")


def _open_unspecified_dims(sharding: SdySharding, op: Operation) -> SdySharding:
    """XLA's Sharding custom call names the dimensions the partitioner may still shard in its
    backend_config (`unspecified_dims=[0,2]`): those dimensions are open (`{?}`)."""
    from dataclasses import replace

    match = _UNSPECIFIED_DIMS.search(str(op.attributes.get("backend_config", "")))
    if match is None:
        return sharding
    open_dims = {int(d) for d in match.group(1).replace(" ", "").split(",") if d}
    dims = tuple(replace(dim, is_closed=False) if i in open_dims else dim for i, dim in enumerate(sharding.dims))
    return replace(sharding, dims=dims)


__all__ = ["GRID_FROM_GROUPS", "GRID_FROM_MESHES", "import_shardy"]
