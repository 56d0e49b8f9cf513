"""Record-like attribute values of HLO text: metadata, frontend attributes, backend configs,
statistics, result accuracy, aliasing tables, shapes and the entry computation layout."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...ir import attributes as A
from ...ir.errors import SourcePos
from .attr_basic import read_enum
from .attr_reader import AttrReader, read_whole

# -- metadata --------------------------------------------------------------------------------------

METADATA_STRINGS = ("op_type", "op_name", "source_file", "deduplicated_name", "scheduling_name")
METADATA_INTS = ("source_line", "source_end_line", "source_column", "source_end_column", "stack_frame_id")


def _read_loose_value(r: AttrReader) -> Any:
    """A sub-attribute value hlodbg does not know: a string, a number, a `{...}` blob or a word."""
    head = r.peek()
    if head in ('"', "'"):
        return r.string()
    if head == "{":
        return r.balanced()
    if head == "-" or head.isdigit():
        return r.number()
    return r.word("a value")


def read_metadata(r: AttrReader) -> dict[str, Any]:
    """`{op_type="..." op_name="..." source_line=3 ... profile_type={1}}`, space- or comma-separated.

    Known keys get their XLA types (strings, ints, `profile_type` an int tuple); unknown ones
    (from newer XLA) are kept with their value read loosely."""
    r.expect("{", "'{' to start metadata")
    out: dict[str, Any] = {}
    for _ in r.fields("the metadata"):
        key = r.unique_attribute_name(out, "a metadata field such as op_name=", "metadata field '{name}' appears twice")
        if key in METADATA_STRINGS:
            out[key] = r.string(f"a quoted string for {key}")
        elif key in METADATA_INTS:
            out[key] = r.int(f"an integer for {key}")
        elif key == "profile_type":
            out[key] = r.int_list()
        else:
            out[key] = _read_loose_value(r)
    return out


def decode_metadata(text: str, pos: SourcePos, what: str = "metadata") -> dict[str, Any]:
    return read_whole(text, pos, what, read_metadata)


# -- frontend attributes, backend config, statistics -----------------------------------------------


def decode_frontend_attributes(text: str, pos: SourcePos, what: str = "frontend_attributes") -> dict[str, str]:
    """`{k="v", k2={brace blob}}` → {k: v}; blobs keep their braces (XLA's LexJsonDict)."""
    def read(r: AttrReader) -> dict[str, str]:
        out: dict[str, str] = {}

        def entry() -> None:
            key = r.unique_attribute_name(out, "an attribute name followed by '='",
                                          "frontend attribute '{name}' appears twice")
            out[key] = r.balanced() if r.peek() == "{" else r.string("a quoted string or a {...} value")

        r.list("{", "}", entry)
        return out
    return read_whole(text, pos, what, read)


def decode_backend_config(text: str, pos: SourcePos, what: str = "backend_config") -> str:
    """`"..."` (unescaped) or a `{...}` JSON/MLIR dictionary (kept whole)."""
    return read_whole(text, pos, what, lambda r: r.balanced() if r.peek() == "{"
                      else r.string("a quoted string or a {...} dictionary"))


def decode_statistics(text: str, pos: SourcePos, what: str = "statistics") -> dict[str, float]:
    """`{visualizing_index=0,stat-0=0.5}` → {"visualizing_index": 0, "stat-0": 0.5}."""
    def read(r: AttrReader) -> dict[str, float]:
        r.expect("{")
        out: dict[str, float] = {}
        if r.accept("}"):
            return out
        index_name = r.attribute_name("visualizing_index=")
        out[index_name] = r.int("the index of the statistic to show")
        while r.accept(","):
            name = r.unique_attribute_name(out, "a statistic name followed by '='", "statistic '{name}' appears twice")
            out[name] = r.number("the statistic's value")
        r.expect("}", "',' or '}'")
        return out
    return read_whole(text, pos, what, read)


# -- result accuracy -------------------------------------------------------------------------------

RESULT_ACCURACY_MODES = ("DEFAULT", "HIGHEST")


def _mode(name: str) -> A.EnumAttr:
    return A.EnumAttr(name, ".result_accuracy_mode")


def decode_result_accuracy(text: str, pos: SourcePos, what: str = "result_accuracy") -> A.ResultAccuracy:
    """`{mode=highest}` or `{tolerance={atol=..,rtol=..,ulps=..}}` → the ResultAccuracy the MLIR
    frontend builds for `#stablehlo.result_accuracy<...>` (mode TOLERANCE with the numbers)."""
    def read(r: AttrReader) -> A.ResultAccuracy:
        r.expect("{")
        at = r.mark()
        key = r.attribute_name("mode= or tolerance=")
        if key == "mode":
            accuracy = A.ResultAccuracy(mode=_mode(read_enum(r, RESULT_ACCURACY_MODES, "a result accuracy mode",
                                                             case_sensitive=False)))
        elif key == "tolerance":
            numbers: dict[str, float] = {}

            def entry() -> None:
                name_at = r.mark()
                name = r.attribute_name("atol=, rtol= or ulps=")
                if name not in ("atol", "rtol", "ulps"):
                    r.error(f"unknown tolerance '{name}='; expected atol, rtol or ulps", name_at)
                value_at = r.mark()
                numbers[name] = r.float(f"a number for {name}")
                if name == "ulps" and not float(numbers[name]).is_integer():
                    r.error("ulps must be a whole number", value_at)

            r.list("{", "}", entry)
            accuracy = A.ResultAccuracy(atol=numbers.get("atol", 0.0), rtol=numbers.get("rtol", 0.0),
                                        ulps=int(numbers.get("ulps", 0)), mode=_mode("TOLERANCE"))
        else:
            r.error(f"unknown result_accuracy field '{key}='; expected mode= or tolerance=", at)
        r.expect("}")
        return accuracy
    return read_whole(text, pos, what, read)


# -- aliasing --------------------------------------------------------------------------------------


def decode_output_to_operand_aliasing(text: str, pos: SourcePos,
                                      what: str = "output_to_operand_aliasing") -> list[A.OutputOperandAlias]:
    """`{{0}: (0, {}), {1}: (1, {0})}` → the output_operand_aliases of stablehlo.custom_call."""
    def entry(r: AttrReader) -> A.OutputOperandAlias:
        output = r.int_list()
        r.expect(":")
        r.expect("(")
        operand = r.int("the operand number")
        r.expect(",")
        operand_index = r.int_list()
        r.expect(")")
        return A.OutputOperandAlias(output_tuple_indices=output, operand_index=operand,
                                    operand_tuple_indices=operand_index)
    return read_whole(text, pos, what, lambda r: r.list("{", "}", lambda: entry(r)))


@dataclass(frozen=True)
class InputOutputAlias:
    """One `{output_index}: (parameter, {parameter_index}[, may-alias|must-alias])` of the header."""

    output_index: tuple[int, ...]
    parameter_number: int
    parameter_index: tuple[int, ...]
    kind: str = "may-alias"


def decode_input_output_alias(text: str, pos: SourcePos, what: str = "input_output_alias") -> list[InputOutputAlias]:
    def entry(r: AttrReader) -> InputOutputAlias:
        output = r.int_list()
        r.expect(":")
        r.expect("(")
        parameter = r.int("the parameter number")
        r.expect(",")
        index = r.int_list()
        kind = "may-alias"
        if r.accept(","):
            kind = _alias_kind(r)
        r.expect(")")
        return InputOutputAlias(output, parameter, index, kind)
    return read_whole(text, pos, what, lambda r: r.list("{", "}", lambda: entry(r)))


def _alias_kind(r: AttrReader) -> str:
    r.skip()
    at = r.mark()
    word = r.word("may-alias or must-alias")
    if word not in ("may-alias", "must-alias"):
        r.error(f"expected may-alias or must-alias, found '{word}'", at)
    return word


def decode_buffer_donor(text: str, pos: SourcePos, what: str = "buffer_donor") -> list[tuple[int, tuple[int, ...]]]:
    """`{ (0, {}), (1, {2}) }` → [(parameter, parameter_index), ...]."""
    def entry(r: AttrReader) -> tuple[int, tuple[int, ...]]:
        r.expect("(")
        parameter = r.int("the parameter number")
        r.expect(",")
        index = r.int_list()
        r.expect(")")
        return parameter, index
    return read_whole(text, pos, what, lambda r: r.list("{", "}", lambda: entry(r)))


# -- entry computation layout ----------------------------------------------------------------------


@dataclass(frozen=True)
class EntryLayout:
    """`{(f32[2]{0}, s32[])->(f32[2]{0})}`: each shape's exact text (layout included) and where it
    starts, for the shape reader to parse."""

    parameters: tuple[tuple[str, SourcePos], ...]
    result: tuple[str, SourcePos]


_CLOSERS = {"(": ")", "[": "]", "{": "}"}


def _read_shape_text(r: AttrReader, stops: str) -> tuple[str, SourcePos]:
    """The text of one shape, up to a top-level character of `stops` or `->` (nested (), [], {}
    skipped)."""
    r.skip()
    start = r.mark()
    nesting: list[tuple[str, int]] = []  # the closers awaited, and where their openers are
    text = r.text
    i = start
    while i < len(text):
        ch = text[i]
        if not nesting and (ch in stops or text.startswith("->", i)):
            break
        if ch in _CLOSERS:
            nesting.append((_CLOSERS[ch], i))
        elif ch in ")]}":
            if not nesting or nesting.pop()[0] != ch:
                r.error(f"unbalanced '{ch}' in a shape", i)
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = len(text) if end < 0 else end + 1
        i += 1
    if nesting:
        closer, opened = nesting[-1]
        r.error(f"this '{text[opened]}' in a shape is never closed by '{closer}'", opened)
    r.i = i
    shape = text[start:i].rstrip()
    if not shape:
        r.expected("a shape")
    return shape, r.pos(start)


def decode_shape(text: str, pos: SourcePos, what: str = "shape") -> tuple[str, SourcePos]:
    """A shape-valued attribute (`outfeed_shape=`): its text and where it starts."""
    return read_whole(text, pos, what, lambda r: _read_shape_text(r, ""))


def decode_shape_list(text: str, pos: SourcePos, what: str = "operand_layout_constraints") -> list[tuple[str, SourcePos]]:
    """`{f32[4,4]{0,1}, s32[]}` → each shape's text and where it starts."""
    return read_whole(text, pos, what, lambda r: r.list("{", "}", lambda: _read_shape_text(r, ",}")))


def decode_entry_computation_layout(text: str, pos: SourcePos, what: str = "entry_computation_layout") -> EntryLayout:
    def read(r: AttrReader) -> EntryLayout:
        r.expect("{")
        r.expect("(", "'(' to start the parameter shapes")
        params: list[tuple[str, SourcePos]] = []
        if not r.accept(")"):
            while True:
                params.append(_read_shape_text(r, ",)"))
                if r.accept(")"):
                    break
                r.expect(",", "',' or ')' after a parameter shape")
        r.expect("->")
        result = _read_shape_text(r, "}")
        r.expect("}")
        return EntryLayout(tuple(params), result)
    return read_whole(text, pos, what, read)
