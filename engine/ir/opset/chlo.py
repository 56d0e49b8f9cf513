"""CHLO ops (docs/generated/chlo.md): JAX emits these for erf, lgamma, top_k, ... ."""
from __future__ import annotations

from ..opdefs import NO_HLO, NO_TYPE_RULE, define

# Every CHLO op is drawn in CHLO's colour; its family says what it does. The pretty formats:
_UNARY = "$operand attr-dict : %operands_arrow"
_BROADCAST = "$lhs, $rhs attr-dict : %functional"


def _chlo(name: str, operands: str, attrs: str = "", family: str = "elementwise", **facts) -> None:
    define(f"chlo.{name}", operands, attrs, family=family, colour="chlo", **facts)


# One-operand functions (the few that are HLO opcodes too say which). conj flips a sign bit and the
# is_* tests read bits; square is one IEEE multiplication (exact); the rest are approximated.
for _name, _hlo in (
    ("acos", "acos"), ("acosh", "acosh"), ("asin", "asin"), ("asinh", "asinh"), ("atan", "atan"),
    ("atanh", "atanh"), ("bessel_i1e", NO_HLO), ("cosh", "cosh"), ("sinh", "sinh"), ("tan", NO_HLO),
    ("digamma", NO_HLO), ("erf", "erf"), ("erf_inv", NO_HLO), ("erfc", NO_HLO), ("lgamma", NO_HLO),
    ("_asin_acos_kernel", NO_HLO),
):
    _chlo(_name, "operand", syntax=_UNARY, hlo=_hlo, float_math=True, transcendental=True)
_chlo("square", "operand", syntax=_UNARY, hlo=NO_HLO, float_math=True, exact=True)
for _name in ("conj", "is_inf", "is_neg_inf", "is_pos_inf"):
    _chlo(_name, "operand", syntax=_UNARY, hlo=NO_HLO)

_chlo("next_after", "x y", syntax="$x, $y attr-dict : %operands_arrow", hlo=NO_HLO)  # steps bit patterns
_chlo("polygamma", "n x", syntax="$n, $x attr-dict : %operands_arrow", hlo=NO_HLO, float_math=True,
      transcendental=True)
_chlo("zeta", "x q", syntax="$x, $q attr-dict : %operands_arrow", hlo=NO_HLO, float_math=True, transcendental=True)

# The broadcasting binary ops: numpy-style, or placed by broadcast_dimensions.
_BROADCAST_DIMS = "broadcast_dimensions:i64s?"
for _name in ("add", "divide", "maximum", "minimum", "multiply", "remainder", "subtract"):
    _chlo(f"broadcast_{_name}", "lhs rhs", _BROADCAST_DIMS, syntax=_BROADCAST, hlo=NO_HLO, float_math=True,
          exact=True)
for _name in ("atan2", "polygamma", "power", "zeta"):
    _chlo(f"broadcast_{_name}", "lhs rhs", _BROADCAST_DIMS, syntax=_BROADCAST, hlo=NO_HLO, float_math=True,
          transcendental=True)
for _name in ("next_after", "shift_left", "shift_right_arithmetic", "shift_right_logical", "and", "or", "xor",
              "complex"):
    _chlo(f"broadcast_{_name}", "lhs rhs", _BROADCAST_DIMS, syntax=_BROADCAST, hlo=NO_HLO)

_chlo(
    "broadcast_compare",
    "lhs rhs",
    "broadcast_dimensions:i64s? comparison_direction:any compare_type:any?",
    syntax=_BROADCAST, hlo=NO_HLO, float_math=True, exact=True,
)
_chlo("broadcast_select", "pred on_true on_false", syntax="$pred, $on_true, $on_false attr-dict : %functional",
      hlo=NO_HLO)
_chlo("constant", "", "value:elements", family="constant", hlo=NO_HLO)  # its syntax: custom_ops.ConstantSyntax
_chlo("constant_like", "operand", "value:any", family="constant", hlo=NO_HLO)
_chlo("top_k", "operand", "k:i64 is_stable:bool?", family="reduction", results="2", result_names="values indices",
      syntax="($operand, k = $k{?, is_stable = $is_stable?}) attr-dict : %operands_arrow", hlo="topk")
_chlo(
    "ragged_dot",
    "lhs rhs group_sizes",
    "ragged_dot_dimension_numbers:any precision_config:any?",
    family="contraction", hlo="ragged-dot", float_math=True,
)
_chlo("mulhi", "lhs rhs", syntax="$lhs, $rhs attr-dict : %operands_arrow", hlo=NO_HLO)
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
    family="control_flow", colour="chlo", hlo="scan",
    entry_argument_names="input carry",
)  # its syntax: syntax/mlir/chlo_ops.ScanSyntax
define("chlo.return", "results*", results="0", family="structural", terminator=True, types=NO_TYPE_RULE, hlo=NO_HLO)


def scan_groups(op) -> tuple[int, int]:
    """(inputs, inits) of a chlo.scan, from its operand segment sizes (nothing else tells them
    apart); ValueError when they are missing or do not add up to its operands."""
    sizes = op.attributes.get("operandSegmentSizes")
    values = tuple(int(v) for v in sizes) if isinstance(sizes, tuple) else ()
    if len(values) != 2 or sum(values) != len(op.operands):
        raise ValueError("chlo.scan needs operandSegmentSizes = array<i32: inputs, inits> matching its operands")
    return values

