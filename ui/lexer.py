"""A pygments lexer for StableHLO/MLIR text (pygments ships none)."""
from __future__ import annotations

from pygments.lexer import RegexLexer, bygroups, words
from pygments.token import Comment, Keyword, Name, Number, Operator, Punctuation, String, Text, Whitespace


class StableHLOLexer(RegexLexer):
    name = "StableHLO"
    aliases = ["stablehlo", "mlir"]
    filenames = ["*.mlir"]

    tokens = {
        "root": [
            (r"\s+", Whitespace),
            (r"//.*?$", Comment.Single),
            (r'"(?:[^"\\]|\\.)*"', String),
            (r"%[A-Za-z0-9_$.\-]+(?:#\d+)?", Name.Variable),
            (r"\^[A-Za-z0-9_$.\-]+", Name.Label),
            (r"@[A-Za-z_][A-Za-z0-9_$.\-]*", Name.Function),
            (r"#[A-Za-z_][A-Za-z0-9_$.\-]*", Name.Decorator),
            (r"![A-Za-z_][A-Za-z0-9_$.\-]*", Keyword.Type),
            (r"(tensor|tuple|complex|array|dense|dense_resource)(<)", bygroups(Keyword.Type, Punctuation)),
            (r"\b(?:[su]?i\d+|f\d+|bf16|tf32|f8E\w+|f4E\w+|f6E\w+|index)\b", Keyword.Type),
            (r"\b[a-z_]+\.[a-z_][a-z_0-9.\-]*\b", Name.Builtin),
            (
                words(
                    ("module", "attributes", "cond", "do", "applies", "across", "dimensions", "init",
                     "reducer", "loc", "call", "return", "public", "private", "true", "false", "x"),
                    suffix=r"\b",
                ),
                Keyword,
            ),
            (r"0x[0-9A-Fa-f]+", Number.Hex),
            (r"-?\d+\.\d*(?:[eE][-+]?\d+)?", Number.Float),
            (r"-?\d+", Number.Integer),
            (r"->|=|:", Operator),
            (r"[()\[\]{}<>,]", Punctuation),
            (r"[A-Za-z_][\w.$\-]*", Name),
            (r".", Text),
        ]
    }
