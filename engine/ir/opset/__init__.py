"""Every op hlodbg knows, one module per dialect; importing this package registers them all.

Ask about ops through this package (`from ..ir.opset import lookup, is_collective, ...`): it is
the one place that guarantees every definition has been read.
"""
from __future__ import annotations

from ..opdefs import (
    CATEGORIES,
    ELEMENT_TYPES,
    FAMILIES,
    NO_HLO,
    NO_TYPE_RULE,
    OPS,
    OWN_TYPE_RULE,
    AttrSpec,
    OpDef,
    callee_attribute,
    category_of,
    effect_of,
    family_of,
    has_aliasing_regions,
    has_expandable_body,
    is_collective,
    is_commutative,
    is_float_math,
    is_foldable,
    is_replayable,
    is_terminator,
    is_transcendental,
    lookup,
    may_run_async,
    owns_callee,
    process_groups_of,
    results_from,
    when_defined,
)
from . import check, chlo, hlo, interpreter, stablehlo, structural  # noqa: F401  (each registers its ops)

# Dialects whose every op hlodbg defines: an op name of theirs it does not know is a typo or an op
# of a newer spec, never something to pass through (other dialects' unknown ops are kept as they are).
CLOSED_DIALECTS = ("stablehlo", "chlo", "hlo")

__all__ = [
    "AttrSpec", "CATEGORIES", "CLOSED_DIALECTS", "ELEMENT_TYPES", "FAMILIES", "NO_HLO", "NO_TYPE_RULE", "OPS",
    "OWN_TYPE_RULE", "OpDef", "callee_attribute", "category_of", "effect_of", "family_of", "has_aliasing_regions",
    "has_expandable_body", "is_collective", "is_commutative", "is_float_math", "is_foldable", "is_replayable",
    "is_terminator", "is_transcendental", "lookup", "may_run_async", "owns_callee", "process_groups_of",
    "results_from", "when_defined",
]
