"""Every attribute of an op, decoded with its meaning.

Each attribute gets one line: its value printed readably and, from the plain words, what it is
for. Values that need reading get decoded lines under it, chosen by what the value is (a gather's
dimension numbers, a convolution's layout, an enum) or by the attribute's name where the value is
a plain list whose meaning is its name's (permutation, broadcast_dimensions, replica_groups,
windows). Gather and scatter fields are shown with XLA's names beside StableHLO's, and the names
XLA used before its 2018 rename (../shared/seeds/gather_fields_rename_patch.txt), because the
XLA operation-semantics pages students read use those.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ...ir.attributes import (
    ArrayAttr,
    ChannelHandle,
    ConvDimensionNumbers,
    DenseArray,
    DenseElements,
    DotDimensionNumbers,
    ElidedElements,
    EnumAttr,
    GatherDimensionNumbers,
    IntegerAttr,
    ScatterDimensionNumbers,
    UnitAttr,
)
from ...ir.core import Operation
from ...ir.opdefs import lookup
from ...ir.phrases import Phrase
from ...ir.sharding import parse_hlo_sharding
from ...ir.types import TensorType
from ...ops.collectives import reduction_strategy, split_strategy
from ...syntax.hlo.adapters import dim_labels_text
from ...syntax.mlir.attribute_text import format_attribute
from ...syntax.mlir.dialect_attrs import format_conv_dims
from .shapes import window_dims
from .text import say

ATTRIBUTE = Phrase("{name} = {value}")
ATTRIBUTE_MEANING = Phrase("{name} = {value}: {meaning}")

GATHER_OFFSET_DIMS = Phrase("offset_dims = {dims} (XLA: offset_dims, called output_window_dims before 2018): the result dimensions that index inside each slice")
GATHER_BATCH_DIMS = Phrase("the other result dimensions {dims} are what XLA calls batch_dims: they choose which start index is used")
GATHER_COLLAPSED = Phrase("collapsed_slice_dims = {dims} (XLA: collapsed_slice_dims, called elided_window_dims before 2018): operand dimensions sliced with size 1 and left out of the result")
GATHER_BATCHING = Phrase("operand_batching_dims = {operand} with start_indices_batching_dims = {indices} (XLA: the same names): operand dimension and start_indices dimension go together, pair by pair")
GATHER_START_MAP = Phrase("start_index_map = {dims} (XLA: start_index_map, called gather_dims_to_operand_dims before 2018): {mapping}")
START_COMPONENT = Phrase("start index component {k} → operand dimension {dim}")
SCATTER_COMPONENT = Phrase("scatter index component {k} → operand dimension {dim}")
INDEX_VECTOR_DIM = Phrase("index_vector_dim = {dim} (XLA: index_vector_dim): dimension {dim} of the indices (size {size}) holds each index vector")
INDEX_VECTOR_DIM_SCALAR = Phrase("index_vector_dim = {dim} (XLA: index_vector_dim) equals the rank of the indices: each index is one number, as if the indices had a trailing dimension of size 1")
GATHER_SLICE_SIZES = Phrase("slice_sizes = {sizes} (XLA: slice_sizes, called window_bounds before 2018): the size of the slice cut from the operand at each start")
GATHER_OFFSET_MAP = Phrase("offset dimensions reach the operand (XLA's remapped_offset_dims): {mapping}")
RESULT_TO_OPERAND = Phrase("result dimension {dim} → operand dimension {source}")
GATHER_INDICES_NAME = Phrase("start_indices is the operand XLA called gather_indices before 2018")
SCATTER_WINDOW_DIMS = Phrase("update_window_dims = {dims} (XLA: update_window_dims): the updates dimensions that index inside each window")
SCATTER_SCATTER_DIMS = Phrase("the other updates dimensions {dims} are what XLA calls update_scatter_dims: they choose which scatter index is used")
SCATTER_INSERTED = Phrase("inserted_window_dims = {dims} (XLA: inserted_window_dims): operand dimensions where the window has size 1 and the updates have no dimension")
SCATTER_BATCHING = Phrase("input_batching_dims = {operand} with scatter_indices_batching_dims = {indices} (XLA: the same names): input dimension and scatter_indices dimension go together, pair by pair")
SCATTER_TO_OPERAND = Phrase("scatter_dims_to_operand_dims = {dims} (XLA: scatter_dims_to_operand_dims): {mapping}")
DOT_SIDE = Phrase("{side} {shape}: batch dimensions {batch}, contracting dimensions {contracting}, free dimensions {free}")
DOT_PAIR = Phrase("lhs dimension {lhs} (size {lhs_size}) is multiplied along rhs dimension {rhs} (size {rhs_size}) and summed")
DOT_BATCH_PAIR = Phrase("lhs dimension {lhs} and rhs dimension {rhs} (size {size}) are a batch: each batch element has its own product")
DOT_XLA = Phrase("XLA writes them lhs_batch_dims={lhs_batch}, lhs_contracting_dims={lhs_contracting}, rhs_batch_dims={rhs_batch}, rhs_contracting_dims={rhs_contracting}")
CONV_LAYOUT = Phrase("StableHLO writes the layout {stablehlo}; XLA's dim_labels are {xla}")
CONV_LEGEND = Phrase("b = batch, f = feature, i and o = the kernel's input and output feature, 0, 1, ... = the spatial dimensions in order")
CONV_INPUT = Phrase("input: batch dimension {batch}, feature dimension {feature}, spatial dimensions {spatial}")
CONV_KERNEL = Phrase("kernel: input feature dimension {input}, output feature dimension {output}, spatial dimensions {spatial}")
CONV_OUTPUT = Phrase("output: batch dimension {batch}, feature dimension {feature}, spatial dimensions {spatial}")
WINDOW_HEADING = Phrase("the window, dimension by dimension")
WINDOW = Phrase("window on operand dimension {dim} (size {size}): size {window}, stride {stride}, padding ({low}, {high}), base dilation {base}, window dilation {window_dilation}")
BROADCAST_DIM = Phrase("operand dimension {dim} (size {size}) → result dimension {target} (size {target_size})")
BROADCAST_STRETCH = Phrase("operand dimension {dim} has size 1: it is repeated {target_size} times along result dimension {target}")
PERMUTATION_DIM = Phrase("result dimension {dim} is operand dimension {source} (size {size})")
COMPARE = Phrase("{direction}: the result is lhs {symbol} rhs, element by element")
COMPARE_TYPES = {
    "FLOAT": Phrase("FLOAT: IEEE comparison of floats (NaN is unordered: only NE holds for it)"),
    "TOTALORDER": Phrase("TOTALORDER: floats in a total order (-NaN < -Inf < ... < -0 < +0 < ... < +Inf < +NaN)"),
    "SIGNED": Phrase("SIGNED: integers compared as signed numbers"),
    "UNSIGNED": Phrase("UNSIGNED: integers (or booleans) compared as unsigned numbers"),
}
PRECISIONS = {
    "DEFAULT": Phrase("{side}: DEFAULT, the fastest (on a TPU one bfloat16 pass)"),
    "HIGH": Phrase("{side}: HIGH, more precise (on a TPU three bfloat16 passes)"),
    "HIGHEST": Phrase("{side}: HIGHEST, the most precise (on a TPU six bfloat16 passes, about float32)"),
}
GROUP = Phrase("group {k}: {members}")
GROUPS_ALL = Phrase("no groups written: one group of every process")
STRATEGIES = {
    "cross_replica": Phrase("the ids are replica ids: each group works within every partition (cross_replica)"),
    "cross_partition": Phrase("the ids are partition ids: each group works within every replica (cross_partition)"),
    "cross_replica_and_partition": Phrase("the ids are replica ids, each with all its partitions (cross_replica_and_partition)"),
    "flattened_ids": Phrase("the ids are device ids, replica × partitions + partition (flattened_ids)"),
}
CHANNEL = Phrase("channel handle {handle} (type {type}): a positive handle lets the op reach across partitions")
PAIR = Phrase("process {source} sends to process {target}")
SHARDING = Phrase("how the value is split over the devices (XLA's sharding notation)")
SHARDING_KINDS = {
    "replicated": Phrase("every device holds the whole value (replicated)"),
    "manual": Phrase("the program itself splits the value among the devices (manual)"),
    "unknown": Phrase("the sharding is left for the partitioner to choose (unknown)"),
    "unreduced": Phrase("each device holds a partial value still to be summed (unreduced)"),
}
SHARDING_MAXIMAL = Phrase("device {device} alone holds the whole value (maximal)")
SHARDING_TILED = Phrase("split into {tiles} tiles along the value's dimensions")
SHARDING_TILE = Phrase("tile {tile} → devices {devices}")
SHARDING_TUPLE = Phrase("one sharding per tuple element: {count}")
SHARDING_MORE = Phrase("... and {count} more tiles")

Decoder = Callable[[Operation, str, Any, str], list[str]]


def attribute_lines(op: Operation, lang: str, meanings: dict[str, str]) -> list[tuple[str, list[str]]]:
    """(the attribute's line, its decoded lines) for every attribute of `op`, in order."""
    out = []
    for name, value in op.attributes.items():
        meaning = meanings.get(name, "")
        if not meaning and "sharding" in name:
            meaning = say(SHARDING, lang)
        text = readable(value)
        line = (say(ATTRIBUTE_MEANING, lang, name=name, value=text, meaning=meaning) if meaning
                else say(ATTRIBUTE, lang, name=name, value=text))
        decoder = DECODERS_BY_TYPE.get(type(value)) or DECODERS_BY_NAME.get(name)
        decoded = decoder(op, name, value, lang) if decoder is not None else []
        out.append((line, decoded))
    window = window_lines(op, lang)
    if window:
        out.append((say(WINDOW_HEADING, lang), window))
    return out


def readable(value: Any) -> str:
    """An attribute value as a student reads it: lists as [1, 2], numbers bare, enums by name."""
    if value is True or value is False:
        return "true" if value else "false"
    if isinstance(value, EnumAttr):
        return str(value)
    if isinstance(value, (IntegerAttr, int, np.integer)):
        return str(int(value))
    if isinstance(value, UnitAttr):
        return "true"
    if isinstance(value, DenseArray):
        return "[" + ", ".join(readable(v) for v in value) + "]"
    if isinstance(value, ArrayAttr) and all(isinstance(v, EnumAttr) for v in value):
        return "[" + ", ".join(str(v) for v in value) + "]"
    if isinstance(value, DenseElements) and not isinstance(value, ElidedElements) and value.array.size <= 64:
        return str(np.asarray(value.array).tolist())
    try:
        return format_attribute(value)
    except TypeError:
        return repr(value)


# -- decoders by the value's kind ---------------------------------------------------------------


def _shape(op: Operation, i: int) -> tuple:
    t = op.operands[i].type if i < len(op.operands) else None
    return tuple(t.shape) if isinstance(t, TensorType) and t.shape is not None else ()


def _index_vector_line(dim: int, indices: tuple, lang: str) -> str:
    if dim < len(indices):
        return say(INDEX_VECTOR_DIM, lang, dim=dim, size=indices[dim])
    return say(INDEX_VECTOR_DIM_SCALAR, lang, dim=dim)


def _mapping(pairs, phrase: Phrase, lang: str, **names) -> str:
    return ", ".join(phrase.say(lang, **{names["a"]: a, names["b"]: b}) for a, b in pairs)


def _gather(op: Operation, name: str, dn: GatherDimensionNumbers, lang: str) -> list[str]:
    operand_rank = len(_shape(op, 0))
    indices = _shape(op, 1)
    result_rank = len(op.results[0].type.shape) if op.results and isinstance(op.results[0].type, TensorType) \
        and op.results[0].type.shape is not None else len(dn.offset_dims)
    lines = [say(GATHER_OFFSET_DIMS, lang, dims=list(dn.offset_dims)),
             say(GATHER_BATCH_DIMS, lang, dims=[d for d in range(result_rank) if d not in dn.offset_dims]),
             say(GATHER_COLLAPSED, lang, dims=list(dn.collapsed_slice_dims))]
    if dn.operand_batching_dims or dn.start_indices_batching_dims:
        lines.append(say(GATHER_BATCHING, lang, operand=list(dn.operand_batching_dims),
                                         indices=list(dn.start_indices_batching_dims)))
    lines.append(say(GATHER_START_MAP, lang, dims=list(dn.start_index_map), mapping=_mapping(
        enumerate(dn.start_index_map), START_COMPONENT, lang, a="k", b="dim")))
    lines.append(_index_vector_line(dn.index_vector_dim, indices, lang))
    sizes = op.attributes.get("slice_sizes")
    if sizes is not None:
        lines.append(say(GATHER_SLICE_SIZES, lang, sizes=[int(s) for s in sizes]))
    kept = [d for d in range(operand_rank) if d not in dn.collapsed_slice_dims and d not in dn.operand_batching_dims]
    lines.append(say(GATHER_OFFSET_MAP, lang, mapping=_mapping(zip(dn.offset_dims, kept), RESULT_TO_OPERAND, lang,
                                                              a="dim", b="source")))
    lines.append(say(GATHER_INDICES_NAME, lang))
    return lines


def _scatter(op: Operation, name: str, dn: ScatterDimensionNumbers, lang: str) -> list[str]:
    count = max(len(op.results), 1)
    indices = _shape(op, count)
    updates = _shape(op, count + 1)
    lines = [say(SCATTER_WINDOW_DIMS, lang, dims=list(dn.update_window_dims)),
             say(SCATTER_SCATTER_DIMS, lang, dims=[d for d in range(len(updates)) if d not in dn.update_window_dims]),
             say(SCATTER_INSERTED, lang, dims=list(dn.inserted_window_dims))]
    if dn.input_batching_dims or dn.scatter_indices_batching_dims:
        lines.append(say(SCATTER_BATCHING, lang, operand=list(dn.input_batching_dims),
                                          indices=list(dn.scatter_indices_batching_dims)))
    lines.append(say(SCATTER_TO_OPERAND, lang, dims=list(dn.scatter_dims_to_operand_dims), mapping=_mapping(
        enumerate(dn.scatter_dims_to_operand_dims), SCATTER_COMPONENT, lang, a="k", b="dim")))
    lines.append(_index_vector_line(dn.index_vector_dim, indices, lang))
    return lines


def _dot(op: Operation, name: str, dn: DotDimensionNumbers, lang: str) -> list[str]:
    lines = []
    for side, shape, batch, contracting in (
            ("lhs", _shape(op, 0), dn.lhs_batching_dimensions, dn.lhs_contracting_dimensions),
            ("rhs", _shape(op, 1), dn.rhs_batching_dimensions, dn.rhs_contracting_dimensions)):
        free = [d for d in range(len(shape)) if d not in batch and d not in contracting]
        lines.append(say(DOT_SIDE, lang, side=side, shape=list(shape), batch=list(batch), contracting=list(contracting),
                                  free=free))
    lhs, rhs = _shape(op, 0), _shape(op, 1)
    for a, b in zip(dn.lhs_batching_dimensions, dn.rhs_batching_dimensions):
        lines.append(say(DOT_BATCH_PAIR, lang, lhs=a, rhs=b, size=_size(lhs, a)))
    for a, b in zip(dn.lhs_contracting_dimensions, dn.rhs_contracting_dimensions):
        lines.append(say(DOT_PAIR, lang, lhs=a, lhs_size=_size(lhs, a), rhs=b, rhs_size=_size(rhs, b)))
    lines.append(say(DOT_XLA, lang, lhs_batch=_braces(dn.lhs_batching_dimensions),
                             lhs_contracting=_braces(dn.lhs_contracting_dimensions),
                             rhs_batch=_braces(dn.rhs_batching_dimensions),
                             rhs_contracting=_braces(dn.rhs_contracting_dimensions)))
    return lines


def _size(shape: tuple, dim: int) -> Any:
    return shape[dim] if dim < len(shape) else "?"


def _braces(dims) -> str:
    return "{" + ",".join(str(d) for d in dims) + "}"


def _convolution(op: Operation, name: str, dn: ConvDimensionNumbers, lang: str) -> list[str]:
    return [say(CONV_LAYOUT, lang, stablehlo=format_conv_dims(dn), xla=dim_labels_text(dn)),
            say(CONV_LEGEND, lang),
            say(CONV_INPUT, lang, batch=dn.input_batch_dimension, feature=dn.input_feature_dimension,
                           spatial=list(dn.input_spatial_dimensions)),
            say(CONV_KERNEL, lang, input=dn.kernel_input_feature_dimension, output=dn.kernel_output_feature_dimension,
                            spatial=list(dn.kernel_spatial_dimensions)),
            say(CONV_OUTPUT, lang, batch=dn.output_batch_dimension, feature=dn.output_feature_dimension,
                            spatial=list(dn.output_spatial_dimensions))]


def _enum(op: Operation, name: str, value: EnumAttr, lang: str) -> list[str]:
    if value.kind == "comparison_direction":
        symbol = {"EQ": "==", "NE": "!=", "LT": "<", "LE": "<=", "GT": ">", "GE": ">="}.get(str(value), str(value))
        return [say(COMPARE, lang, direction=str(value), symbol=symbol)]
    if value.kind == "comparison_type" and str(value) in COMPARE_TYPES:
        return [say(COMPARE_TYPES[str(value)], lang)]
    return []


def _precision(op: Operation, name: str, value: Any, lang: str) -> list[str]:
    return [say(PRECISIONS[str(p)], lang, side=side) for side, p in zip(("lhs", "rhs"), value) if str(p) in PRECISIONS]


def _channel(op: Operation, name: str, value: ChannelHandle, lang: str) -> list[str]:
    return [say(CHANNEL, lang, handle=value.handle, type=value.type)]


# -- decoders by the attribute's name -----------------------------------------------------------


def _broadcast_dimensions(op: Operation, name: str, value: Any, lang: str) -> list[str]:
    operand = _shape(op, 0)
    result = tuple(op.results[0].type.shape or ()) if op.results and isinstance(op.results[0].type, TensorType) else ()
    if len(operand) != len(value) or op.name.startswith("chlo."):
        return []
    lines = []
    for dim, target in enumerate(int(v) for v in value):
        size, target_size = operand[dim], _size(result, target)
        phrase = BROADCAST_STRETCH if size == 1 and target_size != 1 else BROADCAST_DIM
        lines.append(phrase.say(lang, dim=dim, size=size, target=target, target_size=target_size))
    return lines


def _permutation(op: Operation, name: str, value: Any, lang: str) -> list[str]:
    operand = _shape(op, 0)
    return [say(PERMUTATION_DIM, lang, dim=d, source=int(p), size=_size(operand, int(p))) for d, p in enumerate(value)]


def _replica_groups(op: Operation, name: str, value: Any, lang: str) -> list[str]:
    lines = []
    if isinstance(value, DenseElements):
        array = np.asarray(value.array)
        rows = [[int(i) for i in row if int(i) >= 0] for row in array.reshape(array.shape[0] if array.ndim else 0, -1)] \
            if array.size else []
        rows = [row for row in rows if row]
        lines += [say(GROUP, lang, k=k, members=row) for k, row in enumerate(rows)] or [say(GROUPS_ALL, lang)]
    return lines + _strategy(op, lang)


def _strategy(op: Operation, lang: str) -> list[str]:
    """Which ids a collective's groups or pairs name (the spec's process-group strategies)."""
    definition = lookup(op.name)
    form = definition.process_groups if definition is not None else None
    try:
        strategy = reduction_strategy(op.attributes) if form == "reduction" else split_strategy(op.attributes) if form else None
    except ValueError:
        return []  # use_global_device_ids without a channel: the verifier says so
    return [say(STRATEGIES[strategy], lang)] if strategy in STRATEGIES else []


def _pairs(op: Operation, name: str, value: Any, lang: str) -> list[str]:
    if not isinstance(value, DenseElements):
        return []
    pairs = [say(PAIR, lang, source=int(a), target=int(b)) for a, b in np.asarray(value.array).reshape(-1, 2)]
    return pairs + _strategy(op, lang)


SHOWN_TILES = 16


def _sharding(op: Operation, name: str, value: Any, lang: str) -> list[str]:
    """An HloSharding string read: who holds what (engine/ir/sharding.py decodes it)."""
    if not isinstance(value, str):
        return []
    try:
        sharding = parse_hlo_sharding(value)
    except ValueError:
        return []  # not an HloSharding string (the verifier and the runs say what is wrong)
    if sharding.kind in SHARDING_KINDS:
        return [say(SHARDING_KINDS[sharding.kind], lang)]
    if sharding.kind == "maximal":
        return [say(SHARDING_MAXIMAL, lang, device=sharding.device)]
    if sharding.kind == "tuple":
        return [say(SHARDING_TUPLE, lang, count=len(sharding.elements))]
    if sharding.kind != "tiled" or sharding.tile_assignment is None:
        return []
    tiles = list(np.ndindex(*sharding.tiled_dims))
    lines = [say(SHARDING_TILED, lang, tiles=list(sharding.tiled_dims))]
    for tile in tiles[:SHOWN_TILES]:
        devices = np.asarray(sharding.tile_assignment[tile]).reshape(-1).tolist()
        lines.append(say(SHARDING_TILE, lang, tile=tile, devices=devices))
    if len(tiles) > SHOWN_TILES:
        lines.append(say(SHARDING_MORE, lang, count=len(tiles) - SHOWN_TILES))
    return lines


def window_lines(op: Operation, lang: str) -> list[str]:
    """One line per windowed dimension of a convolution, reduce_window or select_and_scatter."""
    a = op.attributes
    windowed = "window_dimensions" in a or isinstance(a.get("dimension_numbers"), ConvDimensionNumbers)
    if not windowed or not op.operands or not isinstance(op.operands[0].type, TensorType) \
            or not op.operands[0].type.is_static:
        return []
    try:
        dims = window_dims(op)
    except (IndexError, ValueError, TypeError):
        return []  # the attributes do not fit the operand; the verifier says how
    return [say(WINDOW, lang, dim=w.operand_dim, size=w.size, window=w.window, stride=w.stride, low=w.low, high=w.high,
                       base=w.base_dilation, window_dilation=w.window_dilation) for w in dims]


DECODERS_BY_TYPE: dict[type, Decoder] = {
    GatherDimensionNumbers: _gather,
    ScatterDimensionNumbers: _scatter,
    DotDimensionNumbers: _dot,
    ConvDimensionNumbers: _convolution,
    EnumAttr: _enum,
    ChannelHandle: _channel,
}
DECODERS_BY_NAME: dict[str, Decoder] = {
    "broadcast_dimensions": _broadcast_dimensions,
    "permutation": _permutation,
    "precision_config": _precision,
    "replica_groups": _replica_groups,
    "source_target_pairs": _pairs,
    "mhlo.sharding": _sharding,
}
