"""Op-category colours, shared by the SVG/PNG export and the terminal UI so both read alike.

Fills are light so black labels stay readable on paper and slides; `terminal` styles are Rich
style strings for the UI.
"""
from __future__ import annotations

from dataclasses import dataclass

from hlodbg.engine.ir.opset import category_of


@dataclass(frozen=True)
class CategoryStyle:
    title: str  # as the legend names it
    fill: str
    border: str
    terminal: str


CATEGORIES: dict[str, CategoryStyle] = {
    "elementwise": CategoryStyle("elementwise", "#dcefdc", "#4c8c4c", "green"),
    "data_movement": CategoryStyle("data movement", "#d7ecf4", "#3f7f99", "cyan"),
    "reduction": CategoryStyle("reduction", "#eedcf0", "#8a4c91", "magenta"),
    "contraction": CategoryStyle("contraction", "#fff0b3", "#a08020", "bold yellow"),
    "control_flow": CategoryStyle("control flow", "#f7d4cc", "#b0503c", "bold red"),
    "collective": CategoryStyle("collective", "#d3ddf7", "#3f5fb0", "bold blue"),
    "constant": CategoryStyle("constant", "#efefef", "#909090", "dim"),
    "custom_call": CategoryStyle("custom_call", "#f4c7c7", "#a03a3a", "red"),
    "chlo": CategoryStyle("chlo", "#e4f4c9", "#6b9a2c", "bright_green"),
    "quantization": CategoryStyle("quantization", "#f4e6c6", "#9a7a2c", "yellow"),
    "structural": CategoryStyle("call / return", "#ffffff", "#606060", "white"),
    "argument": CategoryStyle("argument", "#ffffff", "#303030", "bold white"),
    "collapsed": CategoryStyle("collapsed group", "#f3f0e6", "#7a7058", "italic white"),
}

CLUSTER_FILLS = {
    "function": "#fbfbfb",
    "call": "#f6f8fc",
    "op": "#fcf8f4",
    "region": "#ffffff",
    "group": "#f7f7f2",
}


def node_category(op_name: str) -> str:
    """The palette entry for an op; the check dialect and unknown dialects count as structural."""
    category = category_of(op_name)
    return category if category in CATEGORIES else "structural"


def style_of(category: str) -> CategoryStyle:
    return CATEGORIES.get(category, CATEGORIES["structural"])


__all__ = ["CATEGORIES", "CLUSTER_FILLS", "CategoryStyle", "node_category", "style_of"]
