"""What a graph node and edge say: result name, op, the attributes that matter, short types.

Labels are short on purpose (a box should read at a glance on a slide); tooltips carry the rest.
"""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from hlodbg.engine.ir.attributes import (
    ArrayAttr,
    DenseArray,
    DenseElements,
    DotDimensionNumbers,
    EnumAttr,
    IntegerAttr,
    StructAttr,
    SymbolRef,
    UnitAttr,
)
from hlodbg.engine.ir.core import Operation, Value
from hlodbg.engine.ir.types import TensorType, TupleType, Type
from hlodbg.engine.run.elided import filled_note
from hlodbg.engine.syntax.hlo.opcodes import opcode_of
from hlodbg.engine.syntax.mlir.attribute_text import format_attribute

INLINE_CONSTANT_ELEMENTS = 8
MAX_LABEL_CHARS = 40
# Attributes that never help a reader of the graph.
QUIET_ATTRIBUTES = {"result_accuracy", "precision_config", "indices_are_sorted", "unique_indices", "mhlo.sharding", "mhlo.frontend_attributes", "backend_config", "api_version", "has_side_effect", "called_computations", "operand_layouts", "result_layouts", "output_operand_aliases",
                    # What XLA HLO text says beside an instruction's semantics (the inspector and
                    # tooltips show it; edges show layouts): kept for printing the HLO back.
                    "xla_shape", "hlo.metadata", "hlo.backend_config", "hlo.extra", "hlo.control_predecessors", "hlo.computations", "hlo.implicit", "hlo.packs_results"}
# Dialects whose ops read as their mnemonic alone (`add`, `fusion`): every box would repeat them.
UNPREFIXED_DIALECTS = ("stablehlo", "hlo")
# An attribute that completes the op's name in its title: `fusion kLoop`.
TITLE_ATTRIBUTES = {"hlo.fusion": "kind"}


def short_type(t: Type) -> str:
    """`64x128xf32` for `tensor<64x128xf32>`, `(16xf32, s32)` for a tuple of such; other types as
    written."""
    if isinstance(t, TensorType):
        text = str(t)
        return text[len("tensor<"):-1] if text.startswith("tensor<") else text
    if isinstance(t, TupleType):
        return "(" + ", ".join(short_type(element) for element in t.types) + ")"
    return str(t)


def short_dims(values) -> str:
    return "[" + ",".join(str(int(v)) for v in values) + "]"


def short_attribute(attr: Any) -> str:
    """A compact spelling for labels: `[0,2]`, `LT`, `@fn`, `3`."""
    if isinstance(attr, DenseArray):
        return short_dims(attr)
    if isinstance(attr, EnumAttr):
        return str(attr)
    if isinstance(attr, bool):
        return "true" if attr else "false"
    if isinstance(attr, IntegerAttr):
        return str(int(attr))
    if isinstance(attr, SymbolRef):
        return str(attr)
    if isinstance(attr, UnitAttr):
        return "unit"
    if isinstance(attr, DenseElements):
        return constant_text(attr) or f"dense<{short_type(attr.type)}>"
    if isinstance(attr, ArrayAttr) and all(isinstance(a, (int, IntegerAttr)) for a in attr):
        return short_dims(attr)
    if isinstance(attr, StructAttr):
        parts = []
        for name, value in vars(attr).items():
            if value in ((), None, 0, False) and name not in attr.always_print:
                continue
            parts.append(f"{name}={short_attribute(value) if not isinstance(value, tuple) else short_dims(value)}")
        return " ".join(parts)
    if isinstance(attr, str):
        return attr
    return format_attribute(attr)


def constant_text(attr: DenseElements) -> Optional[str]:
    """The value of a small constant (≤8 elements) or a splat, as a label can show it."""
    if attr.resource is not None:  # a blob kept apart, or elided elements: not shown inline
        return None
    array = attr.array
    if array.dtype.kind == "V":
        return None
    if array.size == 0:
        return "[]"
    if array.size > 1 and attr.is_splat:
        return f"splat {_scalar(array.reshape(-1)[0])}"
    if array.size > INLINE_CONSTANT_ELEMENTS:
        return None
    if array.ndim == 0:
        return _scalar(array[()])
    return "[" + ", ".join(_scalar(v) for v in array.reshape(-1)) + "]"


def _scalar(value) -> str:
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if isinstance(value, (np.integer, int)):
        return str(int(value))
    if isinstance(value, (np.complexfloating, complex)):
        return f"({_scalar(value.real)},{_scalar(value.imag)})"
    number = float(value)
    if np.isnan(number):
        return "nan"
    if np.isinf(number):
        return "inf" if number > 0 else "-inf"
    return f"{number:.6g}"


def _dot_numbers(attr: DotDimensionNumbers) -> list[str]:
    out = []
    if attr.lhs_batching_dimensions or attr.rhs_batching_dimensions:
        out.append(f"batch={short_dims(attr.lhs_batching_dimensions)}x{short_dims(attr.rhs_batching_dimensions)}")
    out.append(f"contract={short_dims(attr.lhs_contracting_dimensions)}x{short_dims(attr.rhs_contracting_dimensions)}")
    return out


def _slice(op: Operation) -> list[str]:
    starts, limits, strides = (op.attr(k, ()) for k in ("start_indices", "limit_indices", "strides"))
    parts = []
    for start, limit, stride in zip(starts, limits, strides or [1] * len(starts)):
        parts.append(f"{start}:{limit}" + (f":{stride}" if stride != 1 else ""))
    return ["[" + ",".join(parts) + "]"]


def _replica_groups(op: Operation) -> list[str]:
    groups = op.attr("replica_groups")
    if isinstance(groups, DenseElements):
        array = groups.array
        text = "[" + ",".join(short_dims(row) for row in array.reshape(array.shape[0], -1)) + "]" if array.ndim else "[]"
        return [f"groups={text}" if len(text) <= 28 else f"groups={array.shape[0]}x{array.shape[-1] if array.ndim > 1 else 1}"]
    return [f"groups={short_attribute(groups)}"] if groups is not None else []


# Per-op choice of what to show; the value is a function of the op giving label lines.
KEY_ATTRIBUTES = {
    "stablehlo.broadcast_in_dim": lambda op: [f"dims={short_attribute(op.attr('broadcast_dimensions', ()))}"],
    "stablehlo.transpose": lambda op: [f"perm={short_attribute(op.attr('permutation', ()))}"],
    "stablehlo.reduce": lambda op: [f"dims={short_attribute(op.attr('dimensions', ()))}"],
    "stablehlo.reverse": lambda op: [f"dims={short_attribute(op.attr('dimensions', ()))}"],
    "stablehlo.dot_general": lambda op: _dot_numbers(op.attr("dot_dimension_numbers")) if op.attr("dot_dimension_numbers") else [],
    "stablehlo.compare": lambda op: [str(op.attr("comparison_direction", ""))],
    "stablehlo.slice": _slice,
    "stablehlo.concatenate": lambda op: [f"dim={short_attribute(op.attr('dimension'))}"],
    "stablehlo.iota": lambda op: [f"dim={short_attribute(op.attr('iota_dimension'))}"],
    "stablehlo.sort": lambda op: [f"dim={short_attribute(op.attr('dimension'))}"],
    "stablehlo.dynamic_slice": lambda op: [f"sizes={short_attribute(op.attr('slice_sizes', ()))}"],
    "stablehlo.gather": lambda op: [f"slice={short_attribute(op.attr('slice_sizes', ()))}"],
    "stablehlo.pad": lambda op: [f"lo={short_attribute(op.attr('edge_padding_low', ()))} hi={short_attribute(op.attr('edge_padding_high', ()))}"],
    "stablehlo.reduce_window": lambda op: [f"window={short_attribute(op.attr('window_dimensions', ()))}", *([f"strides={short_attribute(op.attr('window_strides'))}"] if op.attr("window_strides") else [])],
    "stablehlo.convolution": lambda op: [*([f"strides={short_attribute(op.attr('window_strides'))}"] if op.attr("window_strides") else []), *([f"groups={int(op.attr('feature_group_count'))}"] if op.attr("feature_group_count", 1) != 1 else [])],
    "stablehlo.custom_call": lambda op: [f"@{op.attr('call_target_name', '?')}"],
    "func.call": lambda op: [str(op.attr("callee"))],
    "stablehlo.all_reduce": _replica_groups,
    "stablehlo.all_gather": lambda op: [f"dim={short_attribute(op.attr('all_gather_dim'))}", *_replica_groups(op)],
    "stablehlo.reduce_scatter": lambda op: [f"dim={short_attribute(op.attr('scatter_dimension'))}", *_replica_groups(op)],
    "stablehlo.all_to_all": lambda op: [f"split={short_attribute(op.attr('split_dimension'))} concat={short_attribute(op.attr('concat_dimension'))}", *_replica_groups(op)],
    "stablehlo.collective_permute": lambda op: [f"pairs={short_attribute(op.attr('source_target_pairs'))}"],
    "stablehlo.rng_bit_generator": lambda op: [str(op.attr("rng_algorithm", ""))],
    "stablehlo.rng": lambda op: [str(op.attr("rng_distribution", ""))],
    "stablehlo.get_tuple_element": lambda op: [f"index={short_attribute(op.attr('index'))}"],
    "stablehlo.reduce_precision": lambda op: [f"e{short_attribute(op.attr('exponent_bits'))}m{short_attribute(op.attr('mantissa_bits'))}"],
    "chlo.top_k": lambda op: [f"k={short_attribute(op.attr('k'))}"],
    "hlo.fusion": lambda op: [str(op.attr("callee"))],
    "hlo.async_start": lambda op: [str(op.attr("callee"))],
}


def result_names(op: Operation) -> str:
    """`%0:4` for a result group, else the names: how the op's results read in the source."""
    names = [v.name for v in op.results]
    bases = {n.split("#")[0] for n in names}
    if len(names) > 1 and len(bases) == 1 and all("#" in n for n in names):
        return f"{bases.pop()}:{len(names)}"
    return ", ".join(names)


def hlo_opcode(op: Operation) -> Optional[str]:
    """The XLA HLO opcode an op was written as (`broadcast` for a broadcast_in_dim), for an op
    carrying what HLO text gives (its `xla_shape`, or `hlo.*` facts) or in a function read from HLO
    text; None for other ops."""
    if "xla_shape" not in op.attributes and not any(name.startswith("hlo.") for name in op.attributes):
        function = op.function  # a scalar instruction carries no facts; its computation says it is HLO
        if function is None or "hlo.language" not in function.attributes:
            return None
    entry = opcode_of(op.name, op.attributes.get("hlo.opcode"))
    return entry.hlo if entry is not None else None


def op_display(op: Operation) -> str:
    """`%5 = stablehlo.add`, as the engine's reports name an op, but `%fusion.2 = fusion` for an op
    written in XLA HLO: what the debugger's panes call the op the user is looking at."""
    names = ", ".join(v.name for v in op.results)
    name = hlo_opcode(op) or op.name
    return f"{names} = {name}" if names else name


def op_title(op: Operation) -> str:
    """`%5 = add`, `fusion.2 = fusion kLoop`: stablehlo and hlo ops lose the dialect (it is on
    every box), others keep it; an op written in XLA HLO reads as its HLO opcode."""
    mnemonic = hlo_opcode(op) or (op.mnemonic if op.dialect in UNPREFIXED_DIALECTS else op.name)
    completing = TITLE_ATTRIBUTES.get(op.name)
    if completing is not None and isinstance(op.attr(completing), str):
        mnemonic = f"{mnemonic} {op.attr(completing)}"
    names = result_names(op)
    return f"{names} = {mnemonic}" if names else mnemonic


def key_attributes(op: Operation) -> list[str]:
    if op.name == "stablehlo.constant":
        value = op.attr("value")
        text = constant_text(value) if isinstance(value, DenseElements) else None
        filled = filled_note(op)  # made-up values (--fill-elided) never pass for the program's
        return [line for line in (filled, text) if line]
    if op.name in ("stablehlo.convert", "stablehlo.bitcast_convert") and op.results:
        result = op.results[0].type
        return [f"→ {result.element}"] if isinstance(result, TensorType) else []
    chooser = KEY_ATTRIBUTES.get(op.name)
    if chooser is not None:
        try:
            return [line for line in chooser(op) if line]
        except (TypeError, ValueError, AttributeError):
            pass  # a malformed attribute still gets a generic label below
    lines = []
    for name, attr in op.attributes.items():
        if name in QUIET_ATTRIBUTES or (isinstance(attr, DenseElements) and attr.type.num_elements > INLINE_CONSTANT_ELEMENTS):
            continue
        text = f"{name}={short_attribute(attr)}"
        if len(text) <= 28:
            lines.append(text)
        if len(lines) == 2:
            break
    return lines


def clip(text: str, limit: int = MAX_LABEL_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def clip_group_label(text: str, limit: int = MAX_LABEL_CHARS) -> str:
    """A group's label clipped in its name, never in a trailing "(i of n)": of twelve clipped
    `transpose(jvp(layer_11))/jvp(layer_11) (1 of 12)` labels, the count is what tells them apart."""
    if len(text) <= limit or not text.endswith(")") or " (" not in text:
        return clip(text, limit)
    name, _, count = text.rpartition(" (")
    suffix = " (" + count
    if len(suffix) > limit // 2:
        return clip(text, limit)
    return clip(name, limit - len(suffix)) + suffix


def op_label(op: Operation) -> list[str]:
    return [clip(op_title(op)), *(clip(line) for line in key_attributes(op))]


def argument_label(value: Value) -> list[str]:
    return [value.name, short_type(value.type)]


def tooltip_lines(op: Operation) -> list[str]:
    """Everything a hover should tell: op, types, every attribute, locations."""
    from hlodbg.engine.ir.locations import describe

    title = op_title(op)
    lines = [title if title.endswith(op.name) else f"{title} ({op.name})"]
    if op.operands:
        lines.append("operands: " + ", ".join(f"{v.name}: {short_type(v.type)}" for v in op.operands))
    if op.results:
        lines.append("results: " + ", ".join(short_type(v.type) for v in op.results))
    for name, attr in op.attributes.items():
        try:
            text = format_attribute(attr)
        except TypeError:
            text = repr(attr)
        lines.append(f"{name} = {clip(text, 160)}")
    if op.pos is not None:
        lines.append(f"at {op.pos.filename}:{op.pos.line}:{op.pos.col}")
    where = describe(op.location)
    if where:
        lines.append(f"from {where}")
    return lines


def node_tooltip(view, node: str, extra=()) -> list[str]:
    """What hovering a node of a graph view tells: the op in full, an argument's type and origin
    (which region of which op), what a collapsed box holds; then `extra` lines (value overlays)."""
    data = view.graph.nodes[node]
    kind = data["kind"]
    if kind in ("op", "return") and data.get("op") is not None:
        lines = tooltip_lines(data["op"])
        if data.get("collapsed"):
            lines.append(f"collapsed: {data.get('count', 1) - 1} ops inside")
    elif kind == "argument":
        value = data["value"]
        owner = view.clusters.get(data.get("cluster"))
        where = f"@{data['function']}"
        if owner is not None and owner.kind == "region" and owner.parent in view.clusters:
            where = f"{owner.label} of {view.clusters[owner.parent].label}"
        lines = [f"{value.name}: {short_type(value.type)} (argument of {where})"]
        if data.get("location"):
            lines.append(f"from {data['location']}")
        if data.get("line") is not None:
            lines.append(f"line {data['line']}")
    else:
        lines = [data["label"][0], f"{data.get('count', 0)} ops inside"]
        cluster = view.base.clusters.get(data.get("collapsed"))
        op = data.get("op")
        if op is not None and cluster is not None and cluster.kind == "call":
            lines += tooltip_lines(op)[1:]
        elif op is not None and cluster is not None and cluster.kind == "region":
            lines.append(f"a region of {op_title(op)}")
    return [*lines, *extra]


__all__ = [
    "op_display",
    "node_tooltip",
    "short_type",
    "short_attribute",
    "constant_text",
    "result_names",
    "hlo_opcode",
    "op_title",
    "op_label",
    "argument_label",
    "key_attributes",
    "tooltip_lines",
    "clip",
]
