"""CHLO ops (docs/generated/chlo.md): JAX emits these for erf, lgamma, top_k, ... ."""
from __future__ import annotations

from ..opdefs import define

for _name in (
    "acos", "acosh", "asin", "asinh", "atan", "atanh", "bessel_i1e", "conj", "cosh", "sinh", "tan",
    "digamma", "erf", "erf_inv", "erfc", "lgamma", "is_inf", "is_neg_inf", "is_pos_inf", "square",
    "_asin_acos_kernel",
):
    # conj flips a sign bit and the is_* tests read bits; the rest compute with float values.
    define(f"chlo.{_name}", "operand", category="chlo",
           float_math=_name not in ("conj", "is_inf", "is_neg_inf", "is_pos_inf"))

define("chlo.next_after", "x y", category="chlo")  # steps bit patterns
define("chlo.polygamma", "n x", category="chlo", float_math=True)
define("chlo.zeta", "x q", category="chlo", float_math=True)

for _name in (
    "add", "atan2", "divide", "maximum", "minimum", "multiply", "next_after", "polygamma", "power",
    "remainder", "shift_left", "shift_right_arithmetic", "shift_right_logical", "subtract", "zeta",
    "and", "or", "xor", "complex",
):
    define(f"chlo.broadcast_{_name}", "lhs rhs", "broadcast_dimensions:i64s?", category="chlo",
           float_math=_name in ("add", "atan2", "divide", "maximum", "minimum", "multiply", "polygamma", "power",
                                "remainder", "subtract", "zeta"))

define(
    "chlo.broadcast_compare",
    "lhs rhs",
    "broadcast_dimensions:i64s? comparison_direction:any compare_type:any?",
    category="chlo", float_math=True,
)
define("chlo.broadcast_select", "pred on_true on_false", category="chlo")
define("chlo.constant", "", "value:elements", category="chlo")
define("chlo.constant_like", "operand", "value:any", category="chlo")
define("chlo.top_k", "operand", "k:i64 is_stable:bool?", results="2", category="chlo", result_names="values indices")
define(
    "chlo.ragged_dot",
    "lhs rhs group_sizes",
    "ragged_dot_dimension_numbers:any precision_config:any?",
    category="chlo", float_math=True,
)
define("chlo.mulhi", "lhs rhs", category="chlo")
# scan: `inputs` are sliced along `dimension`, `inits` are the carries; the body maps (slices...,
# carries...) to (outputs..., carries...), one step per index, so the debugger steps it as a loop.
# `scan_dim_size` gives the number of steps (what a scan without inputs has no other way to say).
define(
    "chlo.scan",
    "inputs* inits*",
    "dimension:i64 scan_dim_size:i64? is_reverse:bool? is_associative:bool? operandSegmentSizes:any? "
    "resultSegmentSizes:any?",
    regions="body",
    results="*",
    category="chlo",
    entry_argument_names="input carry",
)
define("chlo.return", "results*", results="0", category="structural", terminator=True)


def scan_groups(op) -> tuple[int, int]:
    """(inputs, inits) of a chlo.scan, from its operand segment sizes (nothing else tells them
    apart); ValueError when they are missing or do not add up to its operands."""
    sizes = op.attributes.get("operandSegmentSizes")
    values = tuple(int(v) for v in sizes) if isinstance(sizes, tuple) else ()
    if len(values) != 2 or sum(values) != len(op.operands):
        raise ValueError("chlo.scan needs operandSegmentSizes = array<i32: inputs, inits> matching its operands")
    return values

