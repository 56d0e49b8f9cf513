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


# XLA's element types as HLO text spells them (pred, s32, u8, f32, bf16, f8e4m3fn, c64, token).
_HLO_ELEMENT = r"(?:pred|token|opaque|[su]\d+|f\d+(?:e\d+m\d+\w*)?|bf16|tf32|c64|c128)"


class HloLexer(RegexLexer):
    """XLA HLO text (`--xla_dump_to` files, `as_text(dialect="hlo")`, `compile().as_text()`):
    instruction names, opcodes, shapes with their layouts, attribute names, computation names;
    metadata, backend configs and frontend attributes dimmed (they say where an op came from, not
    what it does)."""

    name = "HLO"
    aliases = ["hlo"]
    filenames = ["*.hlo"]

    tokens = {
        "root": [
            (r"\s+", Whitespace),
            (r"//.*?$", Comment.Single),
            (r"/\*.*?\*/", Comment.Multiline),
            (r"\b(HloModule|ENTRY|ROOT|FileNames|FunctionNames|FileLocations|StackFrames)\b", Keyword),
            (r"(metadata|backend_config|frontend_attributes|statistics|origin)(=)(\{)",
             bygroups(Comment.Special, Comment.Special, Comment.Special), "dimmed"),
            (r'"(?:[^"\\]|\\.)*"', String),
            # A computation's header (`%fused_computation (p: f32[8]) -> f32[8] {`, `ENTRY main.3 {`).
            (r"(%?[A-Za-z_][\w.\-]*)(\s+)(?=\(|\{)", bygroups(Name.Function, Whitespace)),
            # An instruction's name, where it is defined (`add.2 = f32[8] add(...)`).
            (r"(%?[A-Za-z_][\w.\-]*)(\s+)(=)", bygroups(Name.Variable, Whitespace, Operator)),
            # A shape: element type, dims, and the layout in braces right after them.
            (rf"({_HLO_ELEMENT}\[[^\]]*\])(\{{[^{{}}]*\}})?", bygroups(Keyword.Type, Name.Tag)),
            (rf"{_HLO_ELEMENT}\b(?!\s*=)", Keyword.Type),
            # The opcode: a word right before its operand list (`add(`, `get-tuple-element(`).
            (r"([a-z][a-z0-9\-]*)(\()", bygroups(Name.Builtin, Punctuation)),
            (r"([A-Za-z_][\w.\-]*)(=)", bygroups(Name.Attribute, Operator)),
            (r"%[\w.\-]+", Name.Variable),
            (r"0x[0-9A-Fa-f]+", Number.Hex),
            (r"-?\d+\.\d*(?:[eE][-+]?\d+)?|-?\d+[eE][-+]?\d+|-?inf\b|nan\b", Number.Float),
            (r"-?\d+", Number.Integer),
            (r"->|=|:", Operator),
            (r"[()\[\]{}<>,]", Punctuation),
            (r"[A-Za-z_][\w.\-]*", Name),
            (r".", Text),
        ],
        "dimmed": [
            (r'"(?:[^"\\]|\\.)*"', Comment.Special),
            (r"\{", Comment.Special, "#push"),
            (r"\}", Comment.Special, "#pop"),
            (r'[^{}"]+', Comment.Special),
        ],
    }


# The highlighter for each frontend's language (the frontend's `name`).
LEXERS = {"mlir": StableHLOLexer, "hlo": HloLexer}


def lexer_for(language: str) -> RegexLexer:
    """The lexer for a language name; MLIR's for a language without one of its own."""
    return LEXERS.get(language, StableHLOLexer)()
