"""Phrases: the sentences hlodbg teaches with, written once in English and translated.

A `Phrase` is an English template with named fields (`"clamp({value}) → {clamped}"`), created
once at module level where it is used. Creating it registers it, so a test can ask that every
phrase the program can say has a Japanese and a Hindi translation. Translations live in the
phrasebook (`engine/ir/phrasebook/<lang>/*.toml`, one file per area so that each area keeps its
own): the English template is the key, the translated template the value, with the same fields:

    "clamp({value}) → {clamped}" = "clamp({value}) → {clamped}"

`phrase.say(lang, **fields)` renders it; a template missing from a language falls back to
English (the tests make sure that never ships). Fields are formatted by `field_text`: index
tuples as `(1, 0, 2)`, floats short.

The languages are those the project's founding documents were written in: English, Japanese
and Hindi (see ../shared/seeds/). `language_from_environment()` picks one from the locale.
"""
from __future__ import annotations

import os
import tomllib
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterator

LANGUAGES = ("en", "ja", "hi")
LANGUAGE_NAMES = {"en": "English", "ja": "日本語", "hi": "हिन्दी"}

PHRASEBOOK = Path(__file__).with_name("phrasebook")

_REGISTERED: dict[str, "Phrase"] = {}


class Phrase:
    """One English sentence template; equal phrases are the same object (one registry entry)."""

    __slots__ = ("en",)

    def __new__(cls, en: str) -> "Phrase":
        existing = _REGISTERED.get(en)
        if existing is not None:
            return existing
        phrase = super().__new__(cls)
        phrase.en = en
        _REGISTERED[en] = phrase
        return phrase

    def say(self, lang: str = "en", **fields: Any) -> str:
        template = self.en if lang == "en" else translations(lang).get(self.en, self.en)
        return template.format(**{name: field_text(value) for name, value in fields.items()})

    def __str__(self) -> str:
        return self.en

    def __repr__(self) -> str:
        return f"Phrase({self.en!r})"


def registered_phrases() -> Iterator[Phrase]:
    """Every phrase created so far (import the modules that create them first)."""
    return iter(list(_REGISTERED.values()))


def field_text(value: Any) -> str:
    """How a field reads in a sentence: indices as (1, 0, 2), whole floats without '.0'."""
    if isinstance(value, Phrase):
        return value.en
    if isinstance(value, (tuple, list)):
        return "(" + ", ".join(field_text(v) for v in value) + ")"
    if isinstance(value, float):
        return f"{value:g}"
    if hasattr(value, "item") and getattr(value, "ndim", None) == 0:  # a numpy scalar
        return field_text(value.item())
    return str(value)


@lru_cache(maxsize=None)
def translations(lang: str) -> dict[str, str]:
    """English template -> translated template, from every phrasebook file of `lang`."""
    if lang not in LANGUAGES:
        raise ValueError(f"unknown language {lang!r}: expected one of {', '.join(LANGUAGES)}")
    table: dict[str, str] = {}
    folder = PHRASEBOOK / lang
    if folder.is_dir():
        for path in sorted(folder.glob("*.toml")):
            with path.open("rb") as f:
                table.update(tomllib.load(f))
    return table


def language_from_environment(environ: dict[str, str] | None = None) -> str:
    """The language the user's locale asks for (LC_ALL, LC_MESSAGES, LANG, LANGUAGE), else English."""
    environ = os.environ if environ is None else environ
    for variable in ("LC_ALL", "LC_MESSAGES", "LANG", "LANGUAGE"):
        value = environ.get(variable, "")
        if value:
            code = value.split(":")[0].split("_")[0].split(".")[0].lower()
            return code if code in LANGUAGES else "en"
    return "en"


def check_language(lang: str) -> str:
    """`lang` if hlodbg speaks it; a ValueError naming the choices otherwise."""
    if lang not in LANGUAGES:
        raise ValueError(f"unknown language {lang!r}: expected one of {', '.join(LANGUAGES)}")
    return lang
