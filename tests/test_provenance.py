"""The provenance contract (engine/ops/provenance.py) and its phrasebook."""
from __future__ import annotations

import numpy as np
import pytest

import hlodbg
from hlodbg.engine.ir.phrases import LANGUAGES, Phrase, language_from_environment, registered_phrases, translations
from hlodbg.engine.ops import load_families
from hlodbg.engine.ops.provenance import ProvenanceError, provenance, reach

from tests.provenance_harness import check_provenance, op_under_test

TRANSPOSE = """
func.func @main(%x: tensor<2x3x4xf32>) -> tensor<4x2x3xf32> {
  %0 = stablehlo.transpose %x, dims = [2, 0, 1] : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
  return %0 : tensor<4x2x3xf32>
}
"""


def test_transpose_provenance_matches_the_evaluator():
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    check_provenance(TRANSPOSE, x)


def test_transpose_element_and_its_arithmetic():
    op = op_under_test(hlodbg.load(TRANSPOSE))
    answer = provenance(op, (3, 1, 2))
    assert [(s.operand, s.index) for s in answer.sources] == [(0, (1, 2, 3))]
    assert answer.lines()[-1] == "result(3, 1, 2) = operand(1, 2, 3)"
    assert [(r.result, r.index) for r in reach(op, 0, (1, 2, 3))] == [(0, (3, 1, 2))]


def test_questions_outside_the_tensor_are_refused_with_the_op_named():
    op = op_under_test(hlodbg.load(TRANSPOSE))
    with pytest.raises(ProvenanceError, match=r"stablehlo.transpose: \[4, 0, 0\] is not an element"):
        provenance(op, (4, 0, 0))
    with pytest.raises(ProvenanceError, match="no operand #1"):
        reach(op, 1, (0, 0, 0))


def test_every_phrase_is_translated_into_every_language():
    load_families()
    missing = {lang: [p.en for p in registered_phrases() if p.en not in translations(lang)]
               for lang in LANGUAGES if lang != "en"}
    assert missing == {"ja": [], "hi": []}


def test_translations_keep_the_fields_of_their_phrase():
    import string

    def fields(template):
        return sorted(name for _, name, _, _ in string.Formatter().parse(template) if name)

    for lang in LANGUAGES[1:]:
        for english, translated in translations(lang).items():
            assert fields(english) == fields(translated), (lang, english)


def test_locale_picks_the_language():
    assert language_from_environment({"LANG": "ja_JP.UTF-8"}) == "ja"
    assert language_from_environment({"LC_ALL": "hi_IN", "LANG": "en_US"}) == "hi"
    assert language_from_environment({"LANG": "fr_FR.UTF-8"}) == "en"
    assert language_from_environment({}) == "en"
    assert Phrase("copied element").say("ja") == "コピーされる要素"
