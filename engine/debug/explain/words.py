"""The plain words of every op: what it does, what each operand and attribute means, what its
result holds, in every language hlodbg speaks.

The words are data, not code: `words/<lang>/<family>.toml`, one table per op (schema below), the
same files and ops in every language (tests/test_explain_words.py holds them to that and to the op
definitions of engine/ir/opset). A field a translation lacks falls back to its English text, so a
half-translated op still explains itself; an op with no words at all is a clear error.

    ["stablehlo.slice"]
    what = "Plain words: what the op computes, 2-6 sentences."
    results = "what the result holds"
    ["stablehlo.slice".operands]
    operand = "..."
    ["stablehlo.slice".attributes]
    start_indices = "..."
"""
from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from ...ir.phrases import LANGUAGES, check_language

WORDS_FOLDER = Path(__file__).with_name("words")


class WordsError(LookupError):
    """An op without plain words, or a words file that cannot be read."""


@dataclass(frozen=True)
class OpWords:
    what: str
    operands: dict[str, str] = field(default_factory=dict)
    attributes: dict[str, str] = field(default_factory=dict)
    results: str = ""


@lru_cache(maxsize=None)
def _entries(lang: str) -> dict[str, dict[str, Any]]:
    """Op name -> its raw table, from every words file of `lang` (read once)."""
    check_language(lang)
    entries: dict[str, dict[str, Any]] = {}
    where: dict[str, Path] = {}
    for path in sorted((WORDS_FOLDER / lang).glob("*.toml")):
        try:
            with path.open("rb") as f:
                tables = tomllib.load(f)
        except tomllib.TOMLDecodeError as err:
            raise WordsError(f"{path}: not valid TOML: {err}") from None
        for op_name, entry in tables.items():
            if op_name in entries:
                raise WordsError(f"{path}: {op_name} already has words in {where[op_name]}")
            if not isinstance(entry, dict):
                raise WordsError(f"{path}: {op_name} must be a table with what/results/operands/attributes")
            entries[op_name] = entry
            where[op_name] = path
    return entries


def _named_texts(own: dict[str, Any], english: dict[str, Any], group: str) -> dict[str, str]:
    """One text per name of `group` (operands or attributes), the translation's where it has one."""
    own_texts = own.get(group, {})
    english_texts = english.get(group, {})
    names = list(english_texts) + [name for name in own_texts if name not in english_texts]
    return {name: own_texts.get(name) or english_texts.get(name, "") for name in names}


def words_for(op_name: str, lang: str = "en") -> OpWords:
    """What `op_name` does in plain words, in `lang`, each missing field in English."""
    own = _entries(lang).get(op_name, {})
    english = _entries("en").get(op_name, {})
    what = own.get("what") or english.get("what")
    if not what:
        raise WordsError(f"no plain words for op {op_name!r} (engine/debug/explain/words/en/*.toml has none)")
    return OpWords(
        what=what.strip(),
        operands=_named_texts(own, english, "operands"),
        attributes=_named_texts(own, english, "attributes"),
        results=own.get("results") or english.get("results", ""),
    )


def ops_with_words(lang: str = "en") -> frozenset[str]:
    """Every op that has its own words in `lang` (not counting the English fallback)."""
    return frozenset(name for name, entry in _entries(lang).items() if entry.get("what"))


__all__ = ["LANGUAGES", "OpWords", "WordsError", "WORDS_FOLDER", "ops_with_words", "words_for"]
