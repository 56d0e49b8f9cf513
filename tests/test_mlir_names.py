"""`print --renumber`: SSA names as MLIR's printer (stablehlo-opt) gives them; the default print
keeps the program's own names. Expected texts are what jaxlib's MLIR prints for the same input."""
import pytest

from hlodbg.engine import parse_module, print_module, structural_key
from hlodbg.engine.verify import verify

PROGRAM = """func.func @f(%s: tensor<2xui64>, %x: tensor<4xf32>, %b: tensor<i1>) -> tensor<4xf32> {
  %o:2 = stablehlo.rng_bit_generator %s, algorithm = DEFAULT : (tensor<2xui64>) -> (tensor<2xui64>, tensor<4xf32>)
  %w:2 = stablehlo.while(%i = %x, %j = %x) : tensor<4xf32>, tensor<4xf32>
   cond {
    %t = stablehlo.constant dense<true> : tensor<i1>
    %q = stablehlo.constant dense<1.0> : tensor<4xf32>
    stablehlo.return %t : tensor<i1>
  } do {
    %t = stablehlo.constant dense<1.0> : tensor<4xf32>
    stablehlo.return %i, %j : tensor<4xf32>, tensor<4xf32>
  }
  %c = stablehlo.constant dense<1> : tensor<i32>
  %z = stablehlo.constant dense<(1.0, 2.0)> : tensor<complex<f32>>
  %e = "stablehlo.case"(%c) ({
    %k = stablehlo.constant dense<2.0> : tensor<4xf32>
    stablehlo.return %k : tensor<4xf32>
  }, {
    stablehlo.return %x : tensor<4xf32>
  }) : (tensor<i32>) -> tensor<4xf32>
  return %w#1 : tensor<4xf32>
}
"""

# jaxlib's MLIR prints PROGRAM so (regions numbered after their parent region, sibling regions
# from the same point, `_N` suffixes from one counter, named results of rng_bit_generator).
AS_MLIR_PRINTS_IT = """module {
  func.func @f(%arg0: tensor<2xui64>, %arg1: tensor<4xf32>, %arg2: tensor<i1>) -> tensor<4xf32> {
    %output_state, %output = stablehlo.rng_bit_generator %arg0, algorithm = DEFAULT : (tensor<2xui64>) -> (tensor<2xui64>, tensor<4xf32>)
    %0:2 = stablehlo.while(%iterArg = %arg1, %iterArg_0 = %arg1) : tensor<4xf32>, tensor<4xf32>
    cond {
      %c_1 = stablehlo.constant dense<true> : tensor<i1>
      %cst_2 = stablehlo.constant dense<1.000000e+00> : tensor<4xf32>
      stablehlo.return %c_1 : tensor<i1>
    } do {
      %cst_1 = stablehlo.constant dense<1.000000e+00> : tensor<4xf32>
      stablehlo.return %iterArg, %iterArg_0 : tensor<4xf32>, tensor<4xf32>
    }
    %c = stablehlo.constant dense<1> : tensor<i32>
    %cst = stablehlo.constant dense<(1.000000e+00,2.000000e+00)> : tensor<complex<f32>>
    %1 = "stablehlo.case"(%c) ({
      %cst_0 = stablehlo.constant dense<2.000000e+00> : tensor<4xf32>
      stablehlo.return %cst_0 : tensor<4xf32>
    }, {
      stablehlo.return %arg1 : tensor<4xf32>
    }) : (tensor<i32>) -> tensor<4xf32>
    return %0#1 : tensor<4xf32>
  }
}
"""

TOP_K = """func.func @top(%arg : tensor<16x16xi32>) -> (tensor<16x8xi32>, tensor<16x8xi32>) {
  %1:2 = chlo.top_k(%arg, k=8) : tensor<16x16xi32> -> (tensor<16x8xi32>, tensor<16x8xi32>)
  %c = stablehlo.constant dense<0> : tensor<i32>
  %r = "stablehlo.reduce"(%1#0, %c) ({
  ^bb0(%a: tensor<i32>, %b: tensor<i32>):
    %s = stablehlo.maximum %a, %b : tensor<i32>
    %m = stablehlo.minimum %s, %b : tensor<i32>
    stablehlo.return %m : tensor<i32>
  }) {dimensions = array<i64: 1>} : (tensor<16x8xi32>, tensor<i32>) -> tensor<16xi32>
  return %1#0, %1#1 : tensor<16x8xi32>, tensor<16x8xi32>
}
"""

CALLS = """func.func @g(%x: tensor<i32>) -> tensor<i32> { return %x : tensor<i32> }
func.func @f(%x: tensor<i32>) -> tensor<i32> {
  %a = func.call @g(%x) : (tensor<i32>) -> tensor<i32>
  %z = stablehlo.after_all : !stablehlo.token
  %d = arith.constant dense<3> : tensor<i32>
  %w = stablehlo.while(%i = %x) : tensor<i32>
   cond {
    %t = stablehlo.compare LT, %i, %i : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %t : tensor<i1>
  } do {
    %b = func.call @g(%i) : (tensor<i32>) -> tensor<i32>
    stablehlo.return %b : tensor<i32>
  }
  return %a : tensor<i32>
}
"""

SCAN = """func.func @scan(%arg0: tensor<2x3xf32>, %arg1: tensor<3xf32>, %arg2: tensor<2x3xi32>, %arg3: tensor<3xi32>) -> (tensor<2x3xf32>, tensor<2x3xi32>) {
  %0:4 = chlo.scan(%arg0, %arg2) inits (%arg1, %arg3) dimension = 0 {
  ^bb0(%arg4: tensor<3xf32>, %arg5: tensor<3xi32>, %arg6: tensor<3xf32>, %arg7: tensor<3xi32>):
    %1 = stablehlo.add %arg4, %arg6 : tensor<3xf32>
    %2 = stablehlo.add %arg5, %arg7 : tensor<3xi32>
    stablehlo.return %1, %2, %1, %2 : tensor<3xf32>, tensor<3xi32>, tensor<3xf32>, tensor<3xi32>
  } : (tensor<2x3xf32>, tensor<2x3xi32>, tensor<3xf32>, tensor<3xi32>) -> (tensor<2x3xf32>, tensor<2x3xi32>, tensor<3xf32>, tensor<3xi32>)
  func.return %0#0, %0#1 : tensor<2x3xf32>, tensor<2x3xi32>
}
"""


def test_scan_arguments_are_named_input_and_carry_by_operand_segment():
    printed = print_module(parse_module(SCAN), renumber=True)
    assert "^bb0(%input: tensor<3xf32>, %input_0: tensor<3xi32>, %carry: tensor<3xf32>, %carry_1: tensor<3xi32>):" in printed
    assert "chlo.scan(%arg0, %arg2) inits (%arg1, %arg3) dimension=0  {" in printed

OPAQUE = """func.func @f(%x: tensor<4xi32>) -> tensor<?xi32> {
  %0 = tensor.cast %x : tensor<4xi32> to tensor<?xi32>
  %1 = "stablehlo.custom_call"(%0) {call_target_name = "t", other = #foo.bar<
      a = [0],
      b = "two  spaces"
    >} : (tensor<?xi32>) -> tensor<?xi32>
  return %1 : tensor<?xi32>
}
"""


def test_attributes_hlodbg_does_not_model_print_compact_as_mlir_reprints_them():
    printed = print_module(parse_module(OPAQUE), renumber=True)
    assert 'other = #foo.bar<a = [0], b = "two  spaces">' in printed
    assert "%cast = tensor.cast %arg0 : tensor<4xi32> to tensor<?xi32>" in printed


def test_calls_and_empty_operand_lists_print_as_mlir_does():
    printed = print_module(parse_module(CALLS), renumber=True)
    # `call` directly in a function body (func is the default dialect there), `func.call` deeper;
    # an empty operand list keeps the space before it.
    assert "    %0 = call @g(%arg0) : (tensor<i32>) -> tensor<i32>\n" in printed
    assert "      %3 = func.call @g(%iterArg) : (tensor<i32>) -> tensor<i32>\n" in printed
    assert "    %1 = stablehlo.after_all  : !stablehlo.token\n" in printed
    assert "    %cst = arith.constant dense<3> : tensor<i32>\n" in printed


def test_renumbered_names_are_mlirs():
    assert print_module(parse_module(PROGRAM), renumber=True) == AS_MLIR_PRINTS_IT


def test_default_print_keeps_the_programs_names():
    printed = print_module(parse_module(PROGRAM))
    assert "%o:2 = stablehlo.rng_bit_generator %s" in printed and "%w:2 = stablehlo.while(%i = %x, %j = %x)" in printed


@pytest.mark.parametrize("text", [PROGRAM, TOP_K, CALLS, SCAN])
def test_renumbered_text_reads_back_to_the_same_module_and_prints_the_same(text):
    module = parse_module(text)
    printed = print_module(module, renumber=True)
    again = parse_module(printed)
    verify(again)
    assert structural_key(again) == structural_key(module)
    assert print_module(again, renumber=True) == printed


@pytest.mark.parametrize("text", [PROGRAM, TOP_K, CALLS, SCAN])
def test_renumbered_print_equals_jaxlibs_mlir(text):
    jax_mlir = pytest.importorskip("jax._src.interpreters.mlir")
    from jaxlib.mlir import ir

    with jax_mlir.make_ir_context():
        expected = str(ir.Module.parse(text))
    assert print_module(parse_module(text), renumber=True) == expected


def test_strings_are_escaped_as_mlir_escapes_them():
    # llvm::printEscapedString: `"` and control characters as two hex digits, `\` doubled.
    text = 'func.func @f() attributes {x = "a\\"b\\\\c\\nd"} {\n  return\n}\n'
    printed = print_module(parse_module(text))
    assert 'attributes {x = "a\\22b\\\\c\\0Ad"}' in printed
    assert parse_module(printed).operations[0].attributes["x"] == 'a"b\\c\nd'


ARRAYS = """func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "stablehlo.custom_call"(%x) {call_target_name = "t", a = [[0, 1], [0]], b = [1 : i32, 2.5, 2.5 : f32, true]} : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
"""


def test_array_elements_leave_out_the_i64_and_f64_types_as_mlir_does():
    printed = print_module(parse_module(ARRAYS), renumber=True)
    assert "{a = [[0, 1], [0]], b = [1 : i32, 2.500000e+00, 2.500000e+00 : f32, true]}" in printed
    assert structural_key(parse_module(printed)) == structural_key(parse_module(ARRAYS))


def test_array_elements_print_as_jaxlibs_mlir():
    jax_mlir = pytest.importorskip("jax._src.interpreters.mlir")
    from jaxlib.mlir import ir

    with jax_mlir.make_ir_context():
        expected = str(ir.Module.parse(ARRAYS))
    assert print_module(parse_module(ARRAYS), renumber=True) == expected
