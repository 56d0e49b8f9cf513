"""The check and interpreter dialects of StableHLO's test suite (CheckOps.td, InterpreterOps.td):
the checks and the probes/prints of self-checking programs."""
from __future__ import annotations

from ..opdefs import NO_HLO, NO_TYPE_RULE, define

_CHECK = "check"
_RECORDS = "impure"  # a check records its outcome: never folded away, harmless to run again

define("check.expect_eq", "lhs rhs", results="0", family=_CHECK, effect=_RECORDS, hlo=NO_HLO, types=NO_TYPE_RULE)
define("check.expect_eq_const", "lhs", "value:elements", results="0", family=_CHECK, effect=_RECORDS, hlo=NO_HLO,
       types=NO_TYPE_RULE)
define("check.expect_almost_eq", "lhs rhs", "tolerance:f64?", results="0", family=_CHECK, effect=_RECORDS, hlo=NO_HLO,
       types=NO_TYPE_RULE)
define("check.expect_almost_eq_const", "lhs", "value:elements tolerance:f64?", results="0", family=_CHECK,
       effect=_RECORDS, hlo=NO_HLO, types=NO_TYPE_RULE)
define(
    "check.expect_close",
    "actual expected",
    "max_ulp_difference:i64 min_ulp_difference:i64?",
    results="0",
    family=_CHECK, effect=_RECORDS,
    hlo=NO_HLO, types=NO_TYPE_RULE,
)
define("check.expect_serialized_eq", "expected", "probe_id:str iteration:i64?", results="0", family=_CHECK,
       effect=_RECORDS, hlo=NO_HLO, types=NO_TYPE_RULE)
define("check.eq", "lhs", "value:elements", results="0", family=_CHECK, effect=_RECORDS, hlo=NO_HLO, types=NO_TYPE_RULE)
define("check.almost_eq", "lhs", "value:elements", results="0", family=_CHECK, effect=_RECORDS, hlo=NO_HLO,
       types=NO_TYPE_RULE)

define("interpreter.probe", "operand", "probe_id:str", family=_CHECK, effect="not_replayable", hlo=NO_HLO,
       types=NO_TYPE_RULE)
define("interpreter.print", "operand", results="0", family=_CHECK, effect="not_replayable", hlo=NO_HLO,
       types=NO_TYPE_RULE)
