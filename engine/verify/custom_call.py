"""Verifier checks: custom_call.

The spec numbers no constraint for custom_call; its Inputs table fixes the kinds of
`backend_config` (I4: a string, or a dictionary) and `api_version` (I5). The rest is what the
StableHLO dialect checks and the spec leaves to it: operand/result layouts (`layouts`) and
output_operand_aliases (`aliases`). Each error names its label in parentheses like a constraint.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from ..ir import attributes as A
from ..ir.core import Operation
from ..ir.types import TensorType, TupleType, Type
from .core import _Context, _register
from .shape_inference import fail, is_token, types_compatible

# The CustomCallApiVersion enum of the StableHLO dialect, by value.
API_VERSIONS = {
    0: "API_VERSION_UNSPECIFIED",
    1: "API_VERSION_ORIGINAL",
    2: "API_VERSION_STATUS_RETURNING",
    3: "API_VERSION_STATUS_RETURNING_UNIFIED",
    4: "API_VERSION_TYPED_FFI",
}
_TYPED_FFI = 4


def api_version(op: Operation) -> int:
    """The op's api_version as a number, from `api_version = 4 : i32` or the enum spelling
    `#stablehlo<custom_call_api_version API_VERSION_TYPED_FFI>`; fails (I5) for anything else."""
    value = op.attributes.get("api_version", 1)
    if isinstance(value, A.EnumAttr):
        by_name = {name: number for number, name in API_VERSIONS.items()}
        if value.kind == "custom_call_api_version" and str(value) in by_name:
            return by_name[str(value)]
    elif isinstance(value, int) and not isinstance(value, bool) and int(value) in API_VERSIONS:
        return int(value)
    known = ", ".join(f"{n} ({name})" for n, name in API_VERSIONS.items())
    fail(f"api_version {value} is not one of {known}", "I5")


@_register("stablehlo.custom_call")
def _custom_call(op: Operation, ctx: _Context) -> None:
    version = api_version(op)
    config = op.attributes.get("backend_config")
    if config is not None:
        if version == _TYPED_FFI and not isinstance(config, dict):
            fail(f"backend_config must be a dictionary with api_version {API_VERSIONS[version]}", "I4")
        if version != _TYPED_FFI and not (isinstance(config, str) and not isinstance(config, A.EnumAttr)):
            fail(f"backend_config must be a string with api_version {API_VERSIONS[version]} "
                 f"(a dictionary needs API_VERSION_TYPED_FFI)", "I4")
    _check_layouts(op)
    _check_aliases(op)


def _check_layouts(op: Operation) -> None:
    operand_layouts = op.attributes.get("operand_layouts")
    result_layouts = op.attributes.get("result_layouts")
    if operand_layouts is None and result_layouts is None:
        return
    if operand_layouts is None or result_layouts is None:
        fail("operand_layouts and result_layouts go together: give both or neither", "layouts")
    results = op.result_types
    if len(results) == 1 and isinstance(results[0], TupleType):
        results = results[0].types  # the layouts of a tuple result are those of its elements
    _check_layout_list(op.operand_types, operand_layouts, "operand")
    _check_layout_list(results, result_layouts, "result")


def _check_layout_list(types: Sequence[Type], layouts, what: str) -> None:
    if len(types) != len(layouts):
        fail(f"{len(layouts)} {what} layouts for {len(types)} {what}s", "layouts")
    for i, (t, layout) in enumerate(zip(types, layouts)):
        dims = [int(v) for v in np.asarray(layout.array).reshape(-1)] if isinstance(layout, A.DenseElements) else None
        if dims is None:
            fail(f"{what} layout #{i} must be a dense array of dimensions, got {layout}", "layouts")
        if isinstance(t, TupleType):
            fail(f"{what} #{i} is a tuple; layouts of tuple {what}s are not supported", "layouts")
        if is_token(t):
            if dims:
                fail(f"{what} #{i} is a token, so its layout must be empty, got {dims}", "layouts")
        elif isinstance(t, TensorType) and t.shape is not None and sorted(dims) != list(range(len(t.shape))):
            fail(f"{what} layout #{i} {dims} is not a permutation of the {len(t.shape)} dimensions of {t}",
                 "layouts")


def _check_aliases(op: Operation) -> None:
    aliases = op.attributes.get("output_operand_aliases") or ()
    output = op.result_types[0] if len(op.results) == 1 else TupleType(tuple(op.result_types))
    for alias in aliases:
        if not isinstance(alias, A.OutputOperandAlias):
            fail(f"output_operand_aliases must hold #stablehlo.output_operand_alias<...>, got {alias}", "aliases")
        index = alias.operand_index
        if not 0 <= index < len(op.operands):
            fail(f"output_operand_alias operand_index {index} is out of range [0, {len(op.operands)})", "aliases")
        operand_part = _tuple_part(op.operand_types[index], alias.operand_tuple_indices, "operand_tuple_indices")
        output_part = _tuple_part(output, alias.output_tuple_indices, "output_tuple_indices")
        if not types_compatible(operand_part, output_part):
            fail(f"output_operand_alias pairs output part {output_part} with operand #{index} part "
                 f"{operand_part}; an output aliasing an operand must have its type", "aliases")


def _tuple_part(t: Type, indices: Sequence[int], what: str) -> Type:
    for i in indices:
        if not isinstance(t, TupleType) or not 0 <= i < len(t.types):
            fail(f"{what} {list(indices)} does not name an element of {t}", "aliases")
        t = t.types[i]
    return t
