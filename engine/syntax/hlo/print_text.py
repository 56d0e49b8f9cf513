"""Text pieces of XLA's HLO printing that the printer (printer.py) puts together: names, quoted
strings, frontend attributes, tuple shapes and lists with XLA's index comments, XLA's attribute
order, and the check that a written attribute still says what the IR says."""
from __future__ import annotations

import re

from ...ir.errors import HlodbgError, SourcePos, SourceText
from ...ir.xla_shape_text import tuple_shape_elements


def hlo_name(name: str) -> str:
    """A name as an HLO identifier `[a-zA-Z_][a-zA-Z0-9_.-]*` (MLIR names may be `0` or `x#1`)."""
    cleaned = "".join(c if c.isalnum() or c in "_.-" else "." for c in name.lstrip("%"))
    return cleaned if cleaned[:1].isalpha() or cleaned[:1] == "_" else "v" + cleaned


def same_value(name: str, raised: str, written: str) -> bool:
    """Whether an attribute as XLA wrote it still says what the IR says (then the written form,
    e.g. replica groups as an iota or mesh axes, is printed rather than the raised list)."""
    from .attr_values import DECODERS

    decoder = DECODERS[_SPELLING_DECODERS[name]]

    def decoded(text: str):
        return decoder(text, SourcePos(SourceText(text, "<printer>"), 0), name)

    try:
        return decoded(raised) == decoded(written)
    except HlodbgError:
        return False


_SPELLING_DECODERS = {"replica_groups": "replica_groups"}


# The element shapes of a tuple shape's text, `(f32[2]{0}, (s32[], u32[]))` -> two texts.
tuple_element_texts = tuple_shape_elements


def strip_layouts(shape: str) -> str:
    return re.sub(r"\{[^{}]*\}", "", shape)


def quoted(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def frontend_attributes_text(values: dict) -> str:
    """`{k="v",k2={brace blob}}`: values XLA wrote as brace blobs go back unquoted."""
    items = []
    for key, value in dict(values).items():
        value = str(value)
        items.append(f"{key}={value}" if value.startswith("{") and value.endswith("}") else f"{key}={quoted(value)}")
    return "{" + ",".join(items) + "}"


# XLA's order of an instruction's own attributes where the opcode table raises them in another
# (each HloInstruction subclass prints its own: collectives their channel and groups first).
_COLLECTIVE = ("channel_id", "replica_groups")
_XLA_ORDER = {
    "convolution": ("window", "dim_labels", "feature_group_count", "batch_group_count", "operand_precision"),
    "gather": ("offset_dims", "collapsed_slice_dims", "start_index_map", "operand_batching_dims",
               "start_indices_batching_dims", "index_vector_dim", "slice_sizes", "indices_are_sorted"),
    "scatter": ("update_window_dims", "inserted_window_dims", "scatter_dims_to_operand_dims", "input_batching_dims",
                "scatter_indices_batching_dims", "index_vector_dim", "indices_are_sorted", "unique_indices"),
    "all-gather": _COLLECTIVE + ("dimensions", "use_global_device_ids"),
    "all-reduce": _COLLECTIVE + ("use_global_device_ids",),
    "reduce-scatter": _COLLECTIVE + ("use_global_device_ids", "dimensions"),
    "all-to-all": _COLLECTIVE + ("dimensions",),
    "collective-permute": ("channel_id", "source_target_pairs"),
}


def xla_order(opcode: str, attrs: dict[str, str]) -> dict[str, str]:
    order = _XLA_ORDER.get(opcode.removesuffix("-start"))
    if order is None:
        return attrs
    rank = {name: i for i, name in enumerate(order)}
    return dict(sorted(attrs.items(), key=lambda item: rank.get(item[0], len(order))))


def indexed(items: list[str]) -> str:
    """XLA's list printing: `a, b, c, d, e, /*index=5*/f` (a comment every five items)."""
    return ", ".join(f"/*index={i}*/{item}" if i and i % 5 == 0 else item for i, item in enumerate(items))


def indexed_shape(shape: str) -> str:
    """A shape with XLA's index comments in its tuples (at every nesting level)."""
    if not shape.startswith("("):
        return shape
    return "(" + indexed([indexed_shape(e) for e in tuple_element_texts(shape)]) + ")"


__all__ = ["frontend_attributes_text", "hlo_name", "indexed", "indexed_shape", "quoted", "same_value", "strip_layouts",
           "tuple_element_texts", "xla_order"]
