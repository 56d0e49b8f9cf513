"""How explain's sentences fill their fields."""
from __future__ import annotations

from typing import Any

from ...ir.phrases import Phrase


def say(phrase: Phrase, lang: str, **fields: Any) -> str:
    """`phrase` in `lang`, with lists of dimensions and sizes written as [1, 2], the notation of
    MLIR and of the spec (a Phrase's own fields would read (1, 2), as indices do)."""
    return phrase.say(lang, **{k: brackets(v) for k, v in fields.items()})


def brackets(value: Any) -> Any:
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(str(brackets(v)) for v in value) + "]"
    return value
