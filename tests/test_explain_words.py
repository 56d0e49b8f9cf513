"""The plain words of engine/debug/explain/words: every op of the checked dialects has them in every
language, in the right script, naming exactly the operands and attributes of its definition; the
files parse and agree with each other; the loader falls back to English per field.

Checked dialects (every op definition of each): stablehlo, chlo, hlo, check, interpreter, func, sdy,
mhlo, arith and tensor (the two ops StableHLO's own tests use) — every dialect engine/ir/opset defines ops of.
"""
from __future__ import annotations

import re
import tomllib

import pytest

import hlodbg.engine.ir.opset  # noqa: F401  (registers every op definition)
from hlodbg.engine.debug.explain import words as words_module
from hlodbg.engine.debug.explain.words import (
    WORDS_FOLDER, OpWords, WordsError, ops_with_words, words_for,
)
from hlodbg.engine.ir.opdefs import OPS
from hlodbg.engine.ir.phrases import LANGUAGES

CHECKED_DIALECTS = ("stablehlo", "chlo", "hlo", "check", "interpreter", "func", "sdy", "mhlo", "arith", "tensor")
CHECKED_OPS = sorted(name for name in OPS if name.split(".")[0] in CHECKED_DIALECTS)

# What each language's prose must contain: kana or kanji for Japanese, Devanagari for Hindi.
SCRIPT = {
    "ja": re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]"),
    "hi": re.compile(r"[\u0900-\u097f]"),
    "en": re.compile(r"[A-Za-z]"),
}


def raw_tables(lang: str) -> dict[str, dict]:
    tables = {}
    for path in sorted((WORDS_FOLDER / lang).glob("*.toml")):
        with path.open("rb") as f:
            tables[path.name] = tomllib.load(f)
    return tables


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_file_parses_and_each_language_has_the_same_files_and_ops(lang):
    english = {name: sorted(ops) for name, ops in raw_tables("en").items()}
    own = {name: sorted(ops) for name, ops in raw_tables(lang).items()}
    assert own == english


def test_the_checked_dialects_are_every_dialect_with_op_definitions():
    # Guards the checked list itself: an empty OPS or a new dialect would leave ops unchecked.
    assert {name.split(".")[0] for name in OPS} == set(CHECKED_DIALECTS)
    assert {"stablehlo.gather", "stablehlo.scatter", "chlo.top_k", "chlo.broadcast_add"} <= set(CHECKED_OPS)
    assert len(CHECKED_OPS) >= 200


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_checked_op_has_its_own_words_in_the_right_script(lang):
    missing = [name for name in CHECKED_OPS if name not in ops_with_words(lang)]
    assert not missing, f"no {lang} words for {missing}"
    for name in CHECKED_OPS:
        words = words_for(name, lang)
        for text in (words.what, words.results, *words.operands.values(), *words.attributes.values()):
            assert text.strip(), f"{name} ({lang}): an empty text"
        assert SCRIPT[lang].search(words.what), f"{name} ({lang}): 'what' is not in the {lang} script"
        assert SCRIPT[lang].search(words.results), f"{name} ({lang}): 'results' is not in the {lang} script"


@pytest.mark.parametrize("lang", LANGUAGES)
def test_operand_and_attribute_names_are_exactly_those_of_the_definition_in_its_order(lang):
    entries = {op: entry for tables in raw_tables(lang).values() for op, entry in tables.items()}
    for name in CHECKED_OPS:
        entry = entries[name]
        definition = OPS[name]
        assert set(entry) <= {"what", "results", "operands", "attributes"}, name
        # Same names, in the definition's order (explain lists them as the definition does).
        assert list(entry.get("operands", {})) == [operand for operand, _ in definition.operands], name
        assert list(entry.get("attributes", {})) == list(definition.attrs), name


def test_every_op_with_words_is_a_defined_op():
    for lang in LANGUAGES:
        assert not ops_with_words(lang) - set(OPS), lang


def test_translations_keep_the_op_and_attribute_names_of_the_english_text():
    # A name such as offset_dims written in Latin script in English stays so in every translation.
    for name in CHECKED_OPS:
        english = words_for(name, "en").what
        names = set(re.findall(r"\b[a-z]+(?:_[a-z]+)+\b", english)) & (
            set(OPS[name].attrs) | {operand for operand, _ in OPS[name].operands})
        for lang in ("ja", "hi"):
            text = words_for(name, lang).what + " ".join(words_for(name, lang).attributes.values())
            for attribute in names:
                assert attribute in text, f"{name} ({lang}) does not name {attribute}"


def test_missing_translated_fields_fall_back_to_english(tmp_path, monkeypatch):
    for lang in ("en", "ja"):
        (tmp_path / lang).mkdir()
    (tmp_path / "en" / "ops.toml").write_text(
        '["x.op"]\nwhat = "English what."\nresults = "English results"\n'
        '["x.op".operands]\nlhs = "English lhs"\nrhs = "English rhs"\n'
        '["x.op".attributes]\nmode = "English mode"\n'
        '["x.only_english"]\nwhat = "Only in English."\nresults = "r"\n', encoding="utf-8")
    (tmp_path / "ja" / "ops.toml").write_text(
        '["x.op"]\nwhat = "日本語の説明。"\n["x.op".operands]\nlhs = "左のオペランド"\n', encoding="utf-8")
    monkeypatch.setattr(words_module, "WORDS_FOLDER", tmp_path)
    words_module._entries.cache_clear()
    try:
        assert words_for("x.op", "ja") == OpWords(
            what="日本語の説明。", operands={"lhs": "左のオペランド", "rhs": "English rhs"},
            attributes={"mode": "English mode"}, results="English results")
        assert words_for("x.only_english", "ja").what == "Only in English."
        assert ops_with_words("ja") == {"x.op"}
        with pytest.raises(WordsError, match="no plain words for op 'x.unknown'"):
            words_for("x.unknown", "ja")
        with pytest.raises(ValueError, match="unknown language 'fr'"):
            words_for("x.op", "fr")
    finally:
        words_module._entries.cache_clear()


def test_a_broken_words_file_is_a_clear_error(tmp_path, monkeypatch):
    (tmp_path / "en").mkdir()
    (tmp_path / "en" / "bad.toml").write_text('["x.op"]\nwhat = "unterminated\n', encoding="utf-8")
    monkeypatch.setattr(words_module, "WORDS_FOLDER", tmp_path)
    words_module._entries.cache_clear()
    try:
        with pytest.raises(WordsError, match=r"bad\.toml: not valid TOML"):
            words_for("x.op")
    finally:
        words_module._entries.cache_clear()


def test_an_op_with_words_in_two_files_is_a_clear_error(tmp_path, monkeypatch):
    (tmp_path / "en").mkdir()
    for file in ("a.toml", "b.toml"):
        (tmp_path / "en" / file).write_text('["x.op"]\nwhat = "w"\nresults = "r"\n', encoding="utf-8")
    monkeypatch.setattr(words_module, "WORDS_FOLDER", tmp_path)
    words_module._entries.cache_clear()
    try:
        with pytest.raises(WordsError, match=r"b\.toml: x\.op already has words in .*a\.toml"):
            words_for("x.op")
    finally:
        words_module._entries.cache_clear()
