"""docs/architecture.md's walkthrough "Adding an elementwise op", done: a toy `stablehlo.double`
(x + x) is its definition, its evaluator and its words, nothing more (its types follow a shared
rule, so it needs no verifier rule of its own). The definition and evaluator live in a temporary
module and the words in a temporary copy of the words folder; the test parses, verifies, runs,
fuses, explains and traces a program using the op, and then removes every trace of it.

It also pins what the definitions promise the verifier: an op whose definition says it has a rule
of its own, and that has none, fails verification instead of passing unchecked."""
from __future__ import annotations

import importlib.util
import shutil
import sys
import textwrap

import numpy as np
import pytest

import hlodbg
from hlodbg.engine.debug.explain import explain_op
from hlodbg.engine.debug.explain import words as words_module
from hlodbg.engine.ir.errors import VerifyError
from hlodbg.engine.ir.opset import OPS
from hlodbg.engine.ops import load_families
from hlodbg.engine.ops.provenance import provenance
from hlodbg.engine.ops.registry import EVALUATORS
from hlodbg.engine.run.fusion import is_fusible
from hlodbg.engine.run.interpreter import Interpreter
from hlodbg.engine.syntax.mlir.op_syntax import FORMATS, PRETTY_PARSERS
from hlodbg.engine.verify import CHECKS

# The two files the walkthrough adds (their text as the docs give it).
DEFINITION_AND_EVALUATOR = '''
"""A toy element-wise op: double(x) = x + x."""
import numpy as np

from hlodbg.engine.ir.dtypes import narrow, widen
from hlodbg.engine.ir.opdefs import NO_HLO, define
from hlodbg.engine.ops.registry import OpCall, op

# In engine/ir/opset/stablehlo.py: its operands, its type rule, its pretty form, its HLO opcode
# (none) and its numerics (one IEEE addition: exact).
define("stablehlo.double", "operand", types="int_float_complex_quantized", syntax="$operand attr-dict : %same",
       hlo=NO_HLO, float_math=True, exact=True)


# In engine/ops/elementwise.py: what it computes.
@op("stablehlo.double")
def double(call: OpCall, operand: np.ndarray) -> np.ndarray:
    x = widen(operand)
    return narrow(np.add(x, x), call.result_dtype)
'''

WORDS = {
    "en": 'what = "Adds every element to itself: double(3) = 6."\n'
          'results = "a tensor of the operand\'s shape and type"\n',
    "ja": 'what = "各要素をそれ自身に足します: double(3) = 6。"\nresults = "オペランドと同じ形と型のテンソル"\n',
    "hi": 'what = "हर तत्व को ख़ुद में जोड़ता है: double(3) = 6।"\nresults = "ऑपरेंड के आकार और प्रकार का टेंसर"\n',
}
OPERAND_WORDS = {"en": "the input tensor", "ja": "入力テンソル", "hi": "इनपुट टेंसर"}

PROGRAM = """
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.double %x : tensor<4xf32>
  %1 = stablehlo.double %0 : tensor<4xf32>
  return %1 : tensor<4xf32>
}"""


@pytest.fixture
def toy_op(tmp_path, monkeypatch):
    """Adds stablehlo.double as the walkthrough says; takes every trace of it away afterwards."""
    load_families()
    tables = (OPS, FORMATS, PRETTY_PARSERS, EVALUATORS, CHECKS)
    saved = [dict(table) for table in tables]
    words = tmp_path / "words"
    shutil.copytree(words_module.WORDS_FOLDER, words)
    for lang, text in WORDS.items():
        with (words / lang / "elementwise.toml").open("a", encoding="utf-8") as f:
            f.write(f'\n["stablehlo.double"]\n{text}["stablehlo.double".operands]\noperand = "{OPERAND_WORDS[lang]}"\n')
    monkeypatch.setattr(words_module, "WORDS_FOLDER", words)
    words_module._entries.cache_clear()
    path = tmp_path / "toy_double.py"
    path.write_text(textwrap.dedent(DEFINITION_AND_EVALUATOR), encoding="utf-8")
    spec = importlib.util.spec_from_file_location("toy_double", path)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
        yield
    finally:
        for table, before in zip(tables, saved):
            table.clear()
            table.update(before)
        sys.modules.pop("toy_double", None)
        words_module._entries.cache_clear()


def test_a_new_elementwise_op_is_its_definition_evaluator_and_words(toy_op):
    program = hlodbg.load(PROGRAM)  # parses its pretty form and verifies it
    (got,) = Interpreter(program.module).run("main", [np.array([1, -2.5, 0, 3], np.float32)])
    np.testing.assert_array_equal(got, np.array([4, -10, 0, 12], np.float32))
    assert "stablehlo.double %x : tensor<4xf32>" in program.to_text()  # printed in its pretty form
    # Its family makes it fusible with its neighbours in a plain run.
    interpreter = Interpreter(program.module)
    assert all(is_fusible(interpreter.step_for(op)) for op in program.module.walk() if op.name == "stablehlo.double")

    # The shared type rule of its definition checks it: no verifier code was written.
    with pytest.raises(VerifyError, match="operand must have integer, floating-point, complex or quantized element"):
        hlodbg.load(PROGRAM.replace("f32", "i1"))

    # It explains itself, in every language, and traces an element back as every element-wise op does.
    double = next(op for op in program.module.walk() if op.name == "stablehlo.double")
    x = np.array([1, -2.5, 0, 3], np.float32)
    assert "Adds every element to itself" in explain_op(double).text()
    assert "各要素をそれ自身に足します" in explain_op(double, lang="ja").text()
    assert "हर तत्व को ख़ुद में जोड़ता है" in explain_op(double, lang="hi").text()
    found = provenance(double, (2,), operands=[x], results=[x + x])
    assert [source.index for source in found.sources] == [(2,)]


def test_after_the_walkthrough_the_op_is_gone(toy_op):
    assert "stablehlo.double" in OPS
    # (the fixture's clean-up runs after this test; the next test sees none of it)


def test_the_toy_op_left_nothing_behind():
    assert "stablehlo.double" not in OPS and "stablehlo.double" not in EVALUATORS
    assert "stablehlo.double" not in PRETTY_PARSERS and "stablehlo.double" not in CHECKS
    with pytest.raises(Exception, match="double"):
        hlodbg.load(PROGRAM)


def test_an_op_whose_own_verifier_rule_is_missing_fails_verification():
    from hlodbg.engine.ir.opdefs import NO_HLO, define

    saved = dict(OPS)
    try:
        define("stablehlo.unruled", "operand", hlo=NO_HLO)  # types="own" by default, and no rule registered
        text = """
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "stablehlo.unruled"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}"""
        with pytest.raises(VerifyError, match="stablehlo.unruled: hlodbg defines this op with a type rule of its own "
                                              "but registers none"):
            hlodbg.load(text)
    finally:
        OPS.clear()
        OPS.update(saved)
