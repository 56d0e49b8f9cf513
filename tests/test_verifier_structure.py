"""The verifier on program structure and the ops between processes: control flow, functions and
calls, collectives, random numbers, quantization, and the generic checks taken from op definitions.
Invalid programs fail at the right op with the right constraint, valid ones pass (the tensor op
families are in test_verifier.py, with the same table form).

Each invalid program marks the line of the offending op with `// ERR`; the test checks that the
first VerifyError points at that line and that its message contains the given fragment.
"""
from __future__ import annotations

import pytest

from .helpers import assert_rejected_at_marked_line, assert_verifies

INVALID = [
    # -- control flow ----------------------------------------------------------------------------
    ("while_body_types", """
        func.func @main(%n: tensor<i32>) -> tensor<i32> {
          %0 = stablehlo.while(%i = %n) : tensor<i32>  // ERR
          cond {
            %c = stablehlo.compare LT, %i, %i : (tensor<i32>, tensor<i32>) -> tensor<i1>
            stablehlo.return %c : tensor<i1>
          } do {
            %f = stablehlo.convert %i : (tensor<i32>) -> tensor<f32>
            stablehlo.return %f : tensor<f32>
          }
          return %0 : tensor<i32>
        }""", "body returns (tensor<f32>), expected (tensor<i32>) (C2)"),
    ("while_cond_not_bool", """
        func.func @main(%n: tensor<i32>) -> tensor<i32> {
          %0 = stablehlo.while(%i = %n) : tensor<i32>  // ERR
          cond {
            stablehlo.return %i : tensor<i32>
          } do {
            stablehlo.return %i : tensor<i32>
          }
          return %0 : tensor<i32>
        }""", "cond must return tensor<i1>, returns (tensor<i32>) (C1)"),
    ("if_branch_types", """
        func.func @main(%p: tensor<i1>, %a: tensor<2xf32>, %b: tensor<3xf32>) -> tensor<2xf32> {
          %0 = "stablehlo.if"(%p) ({  // ERR
            stablehlo.return %a : tensor<2xf32>
          }, {
            stablehlo.return %b : tensor<3xf32>
          }) : (tensor<i1>) -> tensor<2xf32>
          return %0 : tensor<2xf32>
        }""", "branch #1 returns (tensor<3xf32>), expected (tensor<2xf32>) (C2)"),
    ("case_result_types", """
        func.func @main(%i: tensor<i32>, %a: tensor<2xf32>) -> tensor<3xf32> {
          %0 = "stablehlo.case"(%i) ({  // ERR
            stablehlo.return %a : tensor<2xf32>
          }) : (tensor<i32>) -> tensor<3xf32>
          return %0 : tensor<3xf32>
        }""", "results have types (tensor<3xf32>), expected (tensor<2xf32>) (C4)"),
    ("if_pred_type", """
        func.func @main(%p: tensor<i32>, %a: tensor<2xf32>) -> tensor<2xf32> {
          %0 = "stablehlo.if"(%p) ({  // ERR
            stablehlo.return %a : tensor<2xf32>
          }, {
            stablehlo.return %a : tensor<2xf32>
          }) : (tensor<i32>) -> tensor<2xf32>
          return %0 : tensor<2xf32>
        }""", "pred must be tensor<i1>, got tensor<i32>"),
    ("sort_dimension", """
        func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
          %0 = "stablehlo.sort"(%a) <{dimension = 1 : i64}> ({  // ERR
          ^bb0(%x: tensor<f32>, %y: tensor<f32>):
            %c = stablehlo.compare LT, %x, %y : (tensor<f32>, tensor<f32>) -> tensor<i1>
            stablehlo.return %c : tensor<i1>
          }) : (tensor<4xf32>) -> tensor<4xf32>
          return %0 : tensor<4xf32>
        }""", "dimension 1 is out of range [-1, 1) (C4)"),
    ("region_terminator", """
        func.func @main(%p: tensor<i1>, %a: tensor<2xf32>) -> tensor<2xf32> {
          %0 = "stablehlo.if"(%p) ({  // ERR
            "func.return"(%a) : (tensor<2xf32>) -> ()
          }, {
            stablehlo.return %a : tensor<2xf32>
          }) : (tensor<i1>) -> tensor<2xf32>
          return %0 : tensor<2xf32>
        }""", "region #0 must end in stablehlo.return, found func.return"),
    ("optimization_barrier_types", """
        func.func @main(%a: tensor<2xf32>) -> tensor<3xf32> {
          %0 = "stablehlo.optimization_barrier"(%a) : (tensor<2xf32>) -> tensor<3xf32>  // ERR
          return %0 : tensor<3xf32>
        }""", "(C1)"),  # the spec at head folds the count and the types into one C1
    # -- collectives, random numbers, quantization -------------------------------------------------
    ("all_gather_result", """
        func.func @main(%a: tensor<2x4xf32>) -> tensor<2x4xf32> {
          %0 = "stablehlo.all_gather"(%a) <{all_gather_dim = 1 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}> : (tensor<2x4xf32>) -> tensor<2x4xf32>  // ERR
          return %0 : tensor<2x4xf32>
        }""", "expected 2x8 (C6)"),
    ("collective_permute_duplicate_source", """
        func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
          %0 = "stablehlo.collective_permute"(%a) <{source_target_pairs = dense<[[0, 1], [0, 2]]> : tensor<2x2xi64>}> : (tensor<2xf32>) -> tensor<2xf32>  // ERR
          return %0 : tensor<2xf32>
        }""", "sources in source_target_pairs must be unique, but 0 appears twice"),
    ("rng_bit_generator_state", """
        func.func @main(%s: tensor<3xui64>) -> tensor<4xui32> {
          %0:2 = stablehlo.rng_bit_generator %s, algorithm = THREE_FRY : (tensor<3xui64>) -> (tensor<3xui64>, tensor<4xui32>)  // ERR
          return %0#1 : tensor<4xui32>
        }""", "initial_state of THREE_FRY must have 2 elements, got 3 (C2)"),
    ("all_to_all_split_count", """
        func.func @main(%a: tensor<2x3xf32>) -> tensor<4x1xf32> {
          %0 = "stablehlo.all_to_all"(%a) <{split_dimension = 1 : i64, concat_dimension = 0 : i64, split_count = 2 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}> : (tensor<2x3xf32>) -> tensor<4x1xf32>  // ERR
          return %0 : tensor<4x1xf32>
        }""", "dim(operand, 1) = 3 is not divisible by split_count 2 (C2)"),
    ("reduce_scatter_result", """
        func.func @main(%a: tensor<2x4xf32>) -> tensor<2x4xf32> {
          %0 = "stablehlo.reduce_scatter"(%a) <{scatter_dimension = 1 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}> ({  // ERR
          ^bb0(%x: tensor<f32>, %y: tensor<f32>):
            %s = stablehlo.add %x, %y : tensor<f32>
            stablehlo.return %s : tensor<f32>
          }) : (tensor<2x4xf32>) -> tensor<2x4xf32>
          return %0 : tensor<2x4xf32>
        }""", "expected 2x2 (C8)"),
    ("all_reduce_computation", """
        func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
          %0 = "stablehlo.all_reduce"(%a) <{replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}> ({  // ERR
          ^bb0(%x: tensor<i32>, %y: tensor<i32>):
            %s = stablehlo.add %x, %y : tensor<i32>
            stablehlo.return %s : tensor<i32>
          }) : (tensor<4xf32>) -> tensor<4xf32>
          return %0 : tensor<4xf32>
        }""", "cannot hold input element type f32 (C5)"),
    ("uniform_dequantize_expressed", """
        func.func @main(%a: tensor<2x!quant.uniform<i8:f32, 0.5>>) -> tensor<2xf16> {
          %0 = stablehlo.uniform_dequantize %a : (tensor<2x!quant.uniform<i8:f32, 0.5>>) -> tensor<2xf16>  // ERR
          return %0 : tensor<2xf16>
        }""", "result element type must be the expressed type f32"),
    ("uniform_quantize_result", """
        func.func @main(%a: tensor<2xf32>) -> tensor<2xi8> {
          %0 = stablehlo.uniform_quantize %a : (tensor<2xf32>) -> tensor<2xi8>  // ERR
          return %0 : tensor<2xi8>
        }""", "result must have a quantized element type"),
    ("constant_type", """
        func.func @main() -> tensor<3xf32> {
          %0 = "stablehlo.constant"() <{value = dense<1.0> : tensor<2xf32>}> : () -> tensor<3xf32>  // ERR
          return %0 : tensor<3xf32>
        }""", "value has type tensor<2xf32> but the output is tensor<3xf32> (C1)"),
    # -- generic checks from the op definitions -----------------------------------------------------
    ("missing_attribute", """
        func.func @main() -> tensor<4xi32> {
          %0 = "stablehlo.iota"() : () -> tensor<4xi32>  // ERR
          return %0 : tensor<4xi32>
        }""", "missing required attribute 'iota_dimension'"),
    ("attribute_kind", """
        func.func @main(%a: tensor<3xf32>) -> tensor<2x3xf32> {
          %0 = "stablehlo.broadcast_in_dim"(%a) <{broadcast_dimensions = "one"}> : (tensor<3xf32>) -> tensor<2x3xf32>  // ERR
          return %0 : tensor<2x3xf32>
        }""", "attribute 'broadcast_dimensions' must be an array<i64: ...>"),
    ("operand_count", """
        func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
          %0 = "stablehlo.add"(%a) : (tensor<2xf32>) -> tensor<2xf32>  // ERR
          return %0 : tensor<2xf32>
        }""", "expects 2 operands, got 1"),
    ("result_count", """
        func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
          %0:2 = "stablehlo.negate"(%a) : (tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>)  // ERR
          return %0#0 : tensor<2xf32>
        }""", "expects 1 result, got 2"),
    # -- functions and calls -----------------------------------------------------------------------
    ("return_type", """
        func.func @main(%a: tensor<2xf32>) -> tensor<2xi32> {
          return %a : tensor<2xf32>  // ERR
        }""", "return value #0 has type tensor<2xf32> but @main declares result type tensor<2xi32>"),
    ("return_count", """
        func.func @main(%a: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
          return %a : tensor<2xf32>  // ERR
        }""", "returns 1 values but @main declares 2 results"),
    ("call_missing_function", """
        func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
          %0 = call @nowhere(%a) : (tensor<2xf32>) -> tensor<2xf32>  // ERR
          return %0 : tensor<2xf32>
        }""", "calls @nowhere, which is not defined in this module"),
    ("call_argument_type", """
        func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
          %0 = call @f(%a) : (tensor<2xf32>) -> tensor<2xf32>  // ERR
          return %0 : tensor<2xf32>
        }
        func.func private @f(%x: tensor<3xf32>) -> tensor<2xf32> {
          %c = stablehlo.constant dense<0.0> : tensor<2xf32>
          return %c : tensor<2xf32>
        }""", "argument #0 has type tensor<2xf32> but @f expects tensor<3xf32>"),
    ("duplicate_function", """
        func.func @f() {
          return
        }
        func.func @f() {  // ERR
          return
        }""", "function @f is defined more than once"),
    ("composite_missing_decomposition", """
        func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
          %0 = stablehlo.composite "my.op" %a {decomposition = @missing} : (tensor<2xf32>) -> tensor<2xf32>  // ERR
          return %0 : tensor<2xf32>
        }""", "decomposition @missing is not defined in this module (C2)"),
]


VALID = [
    ("control_flow", """
        func.func @main(%n: tensor<i32>, %p: tensor<i1>) -> (tensor<i32>, tensor<i32>) {
          %one = stablehlo.constant dense<1> : tensor<i32>
          %0 = stablehlo.while(%i = %n) : tensor<i32>
          cond {
            %c = stablehlo.compare LT, %i, %one, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
            stablehlo.return %c : tensor<i1>
          } do {
            %s = stablehlo.add %i, %one : tensor<i32>
            stablehlo.return %s : tensor<i32>
          }
          %1 = "stablehlo.if"(%p) ({
            stablehlo.return %0 : tensor<i32>
          }, {
            stablehlo.return %one : tensor<i32>
          }) : (tensor<i1>) -> tensor<i32>
          %2 = "stablehlo.case"(%1) ({
            stablehlo.return %0 : tensor<i32>
          }, {
            stablehlo.return %n : tensor<i32>
          }) : (tensor<i32>) -> tensor<i32>
          return %1, %2 : tensor<i32>, tensor<i32>
        }"""),
    ("calls_tuples_and_composite", """
        func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
          %0 = call @f(%a) : (tensor<2xf32>) -> tensor<2xf32>
          %1 = "stablehlo.tuple"(%0, %a) : (tensor<2xf32>, tensor<2xf32>) -> tuple<tensor<2xf32>, tensor<2xf32>>
          %2 = stablehlo.get_tuple_element %1[1] : (tuple<tensor<2xf32>, tensor<2xf32>>) -> tensor<2xf32>
          %3 = stablehlo.composite "my.double" %2 {decomposition = @f} : (tensor<2xf32>) -> tensor<2xf32>
          %4 = stablehlo.custom_call @anything(%3) : (tensor<2xf32>) -> tensor<7xi8>
          return %3 : tensor<2xf32>
        }
        func.func private @f(%x: tensor<2xf32>) -> tensor<2xf32> {
          %0 = stablehlo.add %x, %x : tensor<2xf32>
          return %0 : tensor<2xf32>
        }"""),
    ("quantized", """
        func.func @main(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<2x4xf32> {
          %0 = stablehlo.uniform_quantize %a : (tensor<2x3xf32>) -> tensor<2x3x!quant.uniform<i8:f32, 0.5:-3>>
          %1 = stablehlo.uniform_quantize %b : (tensor<3x4xf32>) -> tensor<3x4x!quant.uniform<i8:f32, 0.25>>
          %2 = stablehlo.dot_general %0, %1, contracting_dims = [1] x [0] : (tensor<2x3x!quant.uniform<i8:f32, 0.5:-3>>, tensor<3x4x!quant.uniform<i8:f32, 0.25>>) -> tensor<2x4x!quant.uniform<i32:f32, 0.125>>
          %3 = stablehlo.uniform_quantize %2 : (tensor<2x4x!quant.uniform<i32:f32, 0.125>>) -> tensor<2x4x!quant.uniform<i8:f32, 0.1>>
          %4 = stablehlo.add %3, %3 : (tensor<2x4x!quant.uniform<i8:f32, 0.1>>, tensor<2x4x!quant.uniform<i8:f32, 0.1>>) -> tensor<2x4x!quant.uniform<i8:f32, 0.2>>
          %5 = stablehlo.uniform_dequantize %4 : (tensor<2x4x!quant.uniform<i8:f32, 0.2>>) -> tensor<2x4xf32>
          return %5 : tensor<2x4xf32>
        }"""),
    ("collectives_and_rng", """
        module attributes {mhlo.num_replicas = 2 : i32} {
          func.func @main(%a: tensor<2x4xf32>, %s: tensor<2xui64>) -> (tensor<2x8xf32>, tensor<4x2xf32>, tensor<2x4xf32>, tensor<3xui32>) {
            %0 = "stablehlo.all_gather"(%a) <{all_gather_dim = 1 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}> : (tensor<2x4xf32>) -> tensor<2x8xf32>
            %1 = "stablehlo.all_to_all"(%a) <{split_dimension = 1 : i64, concat_dimension = 0 : i64, split_count = 2 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}> : (tensor<2x4xf32>) -> tensor<4x2xf32>
            %2 = "stablehlo.all_reduce"(%a) <{replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}> ({
            ^bb0(%x: tensor<f32>, %y: tensor<f32>):
              %m = stablehlo.add %x, %y : tensor<f32>
              stablehlo.return %m : tensor<f32>
            }) : (tensor<2x4xf32>) -> tensor<2x4xf32>
            %3:2 = stablehlo.rng_bit_generator %s, algorithm = THREE_FRY : (tensor<2xui64>) -> (tensor<2xui64>, tensor<3xui32>)
            return %0, %1, %2, %3#1 : tensor<2x8xf32>, tensor<4x2xf32>, tensor<2x4xf32>, tensor<3xui32>
          }
        }"""),
    ("unknown_ops_are_accepted", """
        func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
          %0 = "mydialect.frobnicate"(%a) {anything = 3 : i64} : (tensor<2xf32>) -> tensor<9x9xi1>
          return %a : tensor<2xf32>
        }"""),
]


@pytest.mark.parametrize("name,text,fragment", INVALID, ids=[c[0] for c in INVALID])
def test_invalid_program_is_rejected(name, text, fragment):
    assert_rejected_at_marked_line(text, fragment)


@pytest.mark.parametrize("name,text", VALID, ids=[c[0] for c in VALID])
def test_valid_program_passes(name, text):
    assert_verifies(text)
