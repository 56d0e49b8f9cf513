"""Malformed input gets `file:line:col: error: <what was expected>`, a source line and a caret."""
from __future__ import annotations

import pytest

import hlodbg
from hlodbg.engine import ParseError, parse_module

HEAD = "func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n"

# (text, line, col, fragment of the message)
BAD = [
    (HEAD + "  %0 = stablehlo.add %a, %b : tensor<2xf32>\n", 2, 26, "use of undefined SSA value %b"),
    (HEAD + "  %0 = stablehlo.add %a %a : tensor<2xf32>\n", 2, 25, "expected ','"),
    (HEAD + "  %0 = stablehlo.ad %a, %a : tensor<2xf32>\n", 2, 8, "stablehlo.ad"),
    (HEAD + "  %0 = stablehlo.add %a, %a : tensor<2xf33>\n", 2, 40, "expected an element type"),
    (HEAD + "  %0 = stablehlo.add %a, %a : tensor<3xf32>\n", 2, 22, "has type tensor<2xf32>"),
    (HEAD + "  %0 = stablehlo.add %a, %a : tensor<2xf32>\n  %0 = stablehlo.add %a, %a : tensor<2xf32>\n", 3, 3,
     "redefinition of SSA value %0"),
    (HEAD + "  %0 = stablehlo.compare XX, %a, %a : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xi1>\n", 2, 26,
     "'XX' is not a comparison_direction"),
    (HEAD + "  %c = stablehlo.constant dense<[1.0, 2.0, 3.0]> : tensor<2xf32>\n", 2, 33, "does not match tensor<2xf32>"),
    (HEAD + "  %c = stablehlo.constant dense<300> : tensor<i8>\n", 2, 33, "does not fit i8"),
    (HEAD + '  %c = stablehlo.constant dense<"0xZZ"> : tensor<f32>\n', 2, 36, "malformed hex"),
    (HEAD + "  %0 = stablehlo.slice %a [0:1 : (tensor<2xf32>) -> tensor<1xf32>\n", 2, 34, "expected a stride"),
    (HEAD + "  %0 = stablehlo.add %a, %a : tensor<2xf32>\n", 3, 1, "end of input inside a region"),
    (HEAD + '  %0 = "stablehlo.add"(%a, %a) : (tensor<2xf32>) -> tensor<2xf32>\n', 2, 34, "has 2 operands but its type lists 1"),
    (HEAD + "  %0:2 = stablehlo.add %a, %a : tensor<2xf32>\n", 2, 3, "has 1 results but 2 names were given"),
    (HEAD + '  %0 = "stablehlo.add"(%a, %a) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32> loc(#nope)\n'
     "  return %0 : tensor<2xf32>\n}\n", 2, 86, "undefined location alias #nope"),
    # The second of two identical lines (an op template's copy) names its own undefined alias.
    (HEAD + "  %0 = stablehlo.add %a, %a : tensor<2xf32> loc(#loc1)\n  %1 = stablehlo.add %a, %a : tensor<2xf32> loc(#loc9)\n"
     '  return %1 : tensor<2xf32>\n}\n#loc1 = loc("a")\n', 3, 49, "undefined location alias #loc9"),
    (HEAD + "  return %a : tensor<2xf32> loc(#loc1)\n}\n#loc1 = loc(\"a\"(#loc7))\n", 4, 17, "undefined location alias #loc7"),
    (HEAD + "  return %a : tensor<2xf32> loc(#loc1)\n}\n#loc1 = loc(callsite(#loc1 at #loc1))\n", 4, 22, "location alias #loc1 refers to itself"),
    (HEAD + '  %s = stablehlo.constant dense<"unterminated : tensor<f32>\n', 2, 33, "unterminated string"),
    ("module {\n  func.func @f() {\n    return\n  }\n}\nmodule {}\n", 6, 1, "only one module"),
    (HEAD + "  %0 = stablehlo.dot_general %a, %a, contracting = [0] x [0] : (tensor<2xf32>, tensor<2xf32>) -> tensor<f32>\n",
     2, 38, "expected 'contracting_dims'"),
]


@pytest.mark.parametrize("text,line,col,fragment", BAD, ids=[b[3][:40] for b in BAD])
def test_parse_errors_point_at_the_problem(text, line, col, fragment):
    with pytest.raises(ParseError) as info:
        parse_module(text, "bad.mlir")
    error = info.value
    assert fragment in error.message, error.render()
    if line is not None:
        assert (error.line, error.col) == (line, col), error.render()
        rendered = error.render().splitlines()
        assert rendered[0].startswith(f"bad.mlir:{line}:{col}: error: ")
        assert rendered[2].index("^") == col - 1 or len(rendered[1]) > 160


def test_load_raises_only_hlodbg_errors(tmp_path):
    with pytest.raises(hlodbg.ParseError, match="no such file"):
        hlodbg.load(tmp_path / "missing.mlir")
    binary = tmp_path / "model.mlirbc"
    binary.write_bytes(b"ML\xefR\x00\x01\xff\xfe")
    with pytest.raises(hlodbg.ParseError, match="not UTF-8"):
        hlodbg.load(binary)
    with pytest.raises(hlodbg.ParseError, match="is a directory"):
        hlodbg.load(tmp_path)
    empty = tmp_path / "empty.mlir"
    empty.write_text("// nothing here\n")
    with pytest.raises(hlodbg.ParseError, match="holds no module"):
        hlodbg.load(empty)


def test_verify_error_names_op_and_location():
    text = (
        "func.func @main(%a: tensor<2xf32>, %b: tensor<3xf32>) -> tensor<2xf32> {\n"
        "  %0 = stablehlo.add %a, %b : (tensor<2xf32>, tensor<3xf32>) -> tensor<2xf32>\n"
        "  return %0 : tensor<2xf32>\n}\n"
    )
    with pytest.raises(hlodbg.VerifyError) as info:
        hlodbg.load(text)
    assert info.value.line == 2
    assert "stablehlo.add" in info.value.message


def test_split_files_need_a_chunk(tmp_path):
    path = tmp_path / "split.mlir"
    path.write_text("func.func @a() {\n  return\n}\n// -----\nfunc.func @b() {\n  return\n}\n")
    with pytest.raises(hlodbg.ParseError, match="2 modules"):
        hlodbg.load(path)
    assert "b" in hlodbg.load(path, chunk=1).functions
    assert len(hlodbg.load_all(path)) == 2
