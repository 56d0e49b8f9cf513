"""Plain words for the explain tests while the words part's loader is not on this branch.

engine/debug/explain/words.py (owned by the "words" part) provides `words_for(op_name, lang)`.
When it is missing, `install()` puts a minimal reader of the same schema in its place, reading
tests/data/explain_words/<lang>/*.toml; when it is present, the real loader is used.
"""
from __future__ import annotations

import importlib
import sys
import tomllib
import types
from dataclasses import dataclass, field
from pathlib import Path

FIXTURE = Path(__file__).parent / "data" / "explain_words"
MODULE = "hlodbg.engine.debug.explain.words"


@dataclass
class OpWords:
    what: str = ""
    operands: dict = field(default_factory=dict)
    attributes: dict = field(default_factory=dict)
    results: str = ""


def _table(lang: str) -> dict:
    table: dict = {}
    for path in sorted((FIXTURE / lang).glob("*.toml")):
        table.update(tomllib.loads(path.read_text(encoding="utf-8")))
    return table


def words_for(op_name: str, lang: str) -> OpWords:
    entry = _table(lang).get(op_name) or _table("en").get(op_name)
    if entry is None:
        raise LookupError(f"no plain words for {op_name}")
    return OpWords(entry.get("what", ""), dict(entry.get("operands", {})), dict(entry.get("attributes", {})),
                   entry.get("results", ""))


def install() -> bool:
    """Use the real loader when it exists; else this reader. True when the fixture is in use."""
    try:
        importlib.import_module(MODULE)
        return False
    except ModuleNotFoundError:
        module = types.ModuleType(MODULE)
        module.words_for = words_for
        module.OpWords = OpWords
        sys.modules[MODULE] = module
        return True
