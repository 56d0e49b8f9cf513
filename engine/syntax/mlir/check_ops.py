"""The check and interpreter dialects of StableHLO's test suite (CheckOps.td, InterpreterOps.td).

`hlodbg check` runs the reference's own tests, which spell these ops in their pretty forms:
`check.expect_eq %a, %b : tensor<2xi32>`, `check.expect_close %a, %b, max_ulp_difference = 3 :
tensor<2xf32>, tensor<2xf32>`, `interpreter.probe %x, probe_id = "x" : tensor<2xf32>`, ...
"""
from __future__ import annotations

from ...ir.opdefs import define
from .format import Format

_CHECK = "check"

define("check.expect_eq", "lhs rhs", results="0", category=_CHECK,
       syntax=Format("$lhs, $rhs attr-dict : %operands_same"))
define("check.expect_eq_const", "lhs", "value:elements", results="0", category=_CHECK,
       syntax=Format("$lhs, $value attr-dict %no_results"))
define("check.expect_almost_eq", "lhs rhs", "tolerance:f64?", results="0", category=_CHECK,
       syntax=Format("$lhs, $rhs{?, tolerance = $tolerance ?} attr-dict : %operands_same"))
define("check.expect_almost_eq_const", "lhs", "value:elements tolerance:f64?", results="0", category=_CHECK,
       syntax=Format("$lhs, $value{?, tolerance = $tolerance ?} attr-dict %no_results"))
define("check.expect_close", "actual expected", "max_ulp_difference:i64 min_ulp_difference:i64?", results="0",
       category=_CHECK,
       syntax=Format("$actual, $expected, max_ulp_difference = $max_ulp_difference"
                     "{?, min_ulp_difference = $min_ulp_difference ?} : attr-dict %operand_list"))
define("check.expect_serialized_eq", "expected", "probe_id:str iteration:i64?", results="0", category=_CHECK,
       syntax=Format("$expected, probe_id = $probe_id{?, iter = $iteration ?} attr-dict : %operands_same"))
define("check.eq", "lhs", "value:elements", results="0", category=_CHECK,
       syntax=Format("$lhs, $value attr-dict %no_results"))
define("check.almost_eq", "lhs", "value:elements", results="0", category=_CHECK,
       syntax=Format("$lhs, $value attr-dict %no_results"))

define("interpreter.probe", "operand", "probe_id:str", category=_CHECK,
       syntax=Format("$operand, probe_id = $probe_id attr-dict : %same"))
define("interpreter.print", "operand", results="0", category=_CHECK,
       syntax=Format("$operand attr-dict : %operands_same"))
