"""The check and interpreter dialects of StableHLO's test suite (CheckOps.td, InterpreterOps.td).

`hlodbg check` runs the reference's own tests, which spell these ops in their pretty forms:
`check.expect_eq %a, %b : tensor<2xi32>`, `check.expect_close %a, %b, max_ulp_difference = 3 :
tensor<2xf32>, tensor<2xf32>`, `interpreter.probe %x, probe_id = "x" : tensor<2xf32>`, ...
"""
from __future__ import annotations

from .format import Format, mlir_syntax

mlir_syntax("check.expect_eq", Format("$lhs, $rhs attr-dict : %operands_same"))
mlir_syntax("check.expect_eq_const", Format("$lhs, $value attr-dict %no_results"))
mlir_syntax(
    "check.expect_almost_eq",
    Format("$lhs, $rhs{?, tolerance = $tolerance ?} attr-dict : %operands_same"),
)
mlir_syntax(
    "check.expect_almost_eq_const",
    Format("$lhs, $value{?, tolerance = $tolerance ?} attr-dict %no_results"),
)
mlir_syntax(
    "check.expect_close",
    Format("$actual, $expected, max_ulp_difference = $max_ulp_difference"
                     "{?, min_ulp_difference = $min_ulp_difference ?} : attr-dict %operand_list"),
)
mlir_syntax(
    "check.expect_serialized_eq",
    Format("$expected, probe_id = $probe_id{?, iter = $iteration ?} attr-dict : %operands_same"),
)
mlir_syntax("check.eq", Format("$lhs, $value attr-dict %no_results"))
mlir_syntax("check.almost_eq", Format("$lhs, $value attr-dict %no_results"))

mlir_syntax("interpreter.probe", Format("$operand, probe_id = $probe_id attr-dict : %same"))
mlir_syntax("interpreter.print", Format("$operand attr-dict : %operands_same"))
