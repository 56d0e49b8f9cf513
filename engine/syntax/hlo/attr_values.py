"""Decoders for the attribute values of XLA HLO text (../shared/docs/hlo_text.md §6).

One function per value syntax. Each takes the value's exact text and the SourcePos where it
starts (tree.HloAttr.text / .pos) and returns a Python value; malformed text raises ParseError at
the offending character, naming what was expected. `decode(attr, kind)` picks one by kind name.

The forms follow XLA's own parser (openxla/xla: xla/hlo/parser/hlo_parser.cc). Where XLA decodes
into something StableHLO also has (comparison directions, precisions, convolution dimension
numbers, dot algorithms, result accuracy, output-operand aliases), the result is the IR attribute
the MLIR frontend builds for the equivalent StableHLO text, so the lowering puts it on the op
unchanged. Case follows XLA: enum words parsed from protos by name (fft_type, transpose_a,
direction, type, kind) are exact; precision, dot and rng algorithms, distributions,
api_version, schedule and result-accuracy modes are case-insensitive.

The decoders live by idea in attr_basic.py (scalars, lists, window, padding, slice, dim_labels,
enums), attr_groups.py (replica groups, source-target pairs, shardings, domains) and
attr_records.py (metadata, frontend attributes, backend config, statistics, result accuracy,
aliasing, entry computation layout); this module gathers them.
"""
from __future__ import annotations

from typing import Any, Callable

from ...ir.errors import SourcePos
from ...ir.sharding import is_named_sharding
from .attr_basic import (
    COLLECTIVE_MODES,
    COMPARISON_DIRECTIONS,
    COMPARISON_TYPES,
    CUSTOM_CALL_API_VERSIONS,
    DOT_ALGORITHMS,
    FUSION_KINDS,
    PRECISIONS,
    WINDOW_FIELDS,
    SliceRanges,
    decode_api_version,
    decode_bool,
    decode_bool_list,
    decode_bool_or_bool_list,
    decode_collective_mode,
    decode_comparison_direction,
    decode_comparison_type,
    decode_computation,
    decode_computation_list,
    decode_conv_kind,
    decode_custom_call_schedule,
    decode_dim_labels,
    decode_dot_algorithm,
    decode_enum,
    decode_fft_type,
    decode_float,
    decode_fusion_kind,
    decode_instruction_names,
    decode_int,
    decode_int_list,
    decode_int_list_list,
    decode_padding,
    decode_padding_type,
    decode_precision_list,
    decode_rng_algorithm,
    decode_rng_distribution,
    decode_shuffle_mode,
    decode_slice,
    decode_string,
    decode_transpose,
    decode_window,
    default_comparison_type,
)
from .attr_groups import (
    Mesh,
    decode_domain,
    decode_replica_groups,
    decode_sharding,
    decode_source_target_pairs,
)
from .attr_records import (
    EntryLayout,
    InputOutputAlias,
    decode_backend_config,
    decode_buffer_donor,
    decode_entry_computation_layout,
    decode_frontend_attributes,
    decode_input_output_alias,
    decode_metadata,
    decode_output_to_operand_aliasing,
    decode_result_accuracy,
    decode_shape,
    decode_shape_list,
    decode_statistics,
)
from .tree import HloAttr


def decode_raw(text: str, pos: SourcePos, what: str = "attribute") -> str:
    """Values hlodbg shows and prints back but does not interpret (`sparsity=L.0@2:4`, `origin=`)."""
    return text.strip()


Decoder = Callable[[str, SourcePos, str], Any]

DECODERS: dict[str, Decoder] = {
    "int": decode_int,
    "float": decode_float,
    "bool": decode_bool,
    "bool_list": decode_bool_list,
    "bool_or_bool_list": decode_bool_or_bool_list,
    "string": decode_string,
    "int_list": decode_int_list,
    "int_list_list": decode_int_list_list,
    "computation": decode_computation,
    "computation_list": decode_computation_list,
    "instruction_names": decode_instruction_names,
    "window": decode_window,
    "padding": decode_padding,
    "slice": decode_slice,
    "dim_labels": decode_dim_labels,
    "comparison_direction": decode_comparison_direction,
    "comparison_type": decode_comparison_type,
    "precision_list": decode_precision_list,
    "dot_algorithm": decode_dot_algorithm,
    "fft_type": decode_fft_type,
    "rng_distribution": decode_rng_distribution,
    "rng_algorithm": decode_rng_algorithm,
    "transpose": decode_transpose,
    "api_version": decode_api_version,
    "custom_call_schedule": decode_custom_call_schedule,
    "fusion_kind": decode_fusion_kind,
    "shuffle_mode": decode_shuffle_mode,
    "conv_kind": decode_conv_kind,
    "collective_mode": decode_collective_mode,
    "padding_type": decode_padding_type,
    "replica_groups": decode_replica_groups,
    "source_target_pairs": decode_source_target_pairs,
    "sharding": decode_sharding,
    "metadata": decode_metadata,
    "frontend_attributes": decode_frontend_attributes,
    "backend_config": decode_backend_config,
    "statistics": decode_statistics,
    "domain": decode_domain,
    "result_accuracy": decode_result_accuracy,
    "output_to_operand_aliasing": decode_output_to_operand_aliasing,
    "input_output_alias": decode_input_output_alias,
    "buffer_donor": decode_buffer_donor,
    "entry_computation_layout": decode_entry_computation_layout,
    "shape": decode_shape,
    "shape_list": decode_shape_list,
    "raw": decode_raw,
}


def decode(attr: HloAttr, kind: str) -> Any:
    """`attr`'s value decoded as `kind` (a key of DECODERS); errors name the attribute."""
    try:
        decoder = DECODERS[kind]
    except KeyError:
        raise ValueError(f"no HLO attribute decoder '{kind}' (known: {', '.join(DECODERS)})") from None
    return decoder(attr.text, attr.pos, attr.name)


__all__ = [
    "COLLECTIVE_MODES", "COMPARISON_DIRECTIONS", "COMPARISON_TYPES", "CUSTOM_CALL_API_VERSIONS", "DECODERS", "DOT_ALGORITHMS",
    "EntryLayout", "FUSION_KINDS", "InputOutputAlias", "Mesh", "PRECISIONS", "SliceRanges", "WINDOW_FIELDS",
    "decode", "decode_enum", "default_comparison_type", "is_named_sharding",
    *(f.__name__ for f in DECODERS.values()),
]
