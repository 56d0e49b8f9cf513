"""Custom pieces of pretty syntax that a format string names with `%name`.

Each entry parses into the attributes it owns and prints them back:
  %slice         ` [1:3, 0:8:2]`                    start_indices, limit_indices, strides
  %dot_dims      `batching_dims = [0] x [0], contracting_dims = [2] x [1]`
  %precision     `, precision = [DEFAULT, DEFAULT]` (optional) and `, algorithm = <...>` (optional)
  %conv_dims     `[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]`
  %window        `stride = [..], pad = [[l, h], ..], lhs_dilate = [..], rhs_dilate = [..], reverse = [..]`
  %expmant       `e8m10`                             exponent_bits, mantissa_bits
  %call_target   `@name` or `@"odd-name"`           call_target_name
"""
from __future__ import annotations

import re

import numpy as np

from ...ir import attributes as A
from ...ir.types import IntegerType, TensorType
from . import attribute_text as T
from .dialect_attrs import format_conv_dims, parse_conv_dims, parse_params
from .format import CUSTOM_DIRECTIVES, format_int_list, parse_bool_list, parse_int_list

I32 = IntegerType(32)


def directive(name: str, owns: tuple[str, ...]):
    def register(pair):
        parse, print_ = pair
        CUSTOM_DIRECTIVES[name] = (parse, print_, owns)
        return pair

    return register


# -- slice ------------------------------------------------------------------------------------


def _parse_slice(state) -> None:
    p = state.p
    p.expect("[", "to start the slice ranges [start:limit:stride, ...]")
    starts, limits, strides = [], [], []
    if not p.accept("]"):
        while True:
            starts.append(p.integer("a start index"))
            p.expect(":", "between start and limit")
            limits.append(p.integer("a limit index"))
            strides.append(p.integer("a stride") if p.accept(":") else 1)
            if not p.accept(","):
                break
        p.expect("]", "to close the slice ranges")
    state.attrs["start_indices"] = A.DenseArray(starts, "i64")
    state.attrs["limit_indices"] = A.DenseArray(limits, "i64")
    state.attrs["strides"] = A.DenseArray(strides, "i64")


def _print_slice(op) -> str:
    parts = []
    for s, l, st in zip(op.attributes["start_indices"], op.attributes["limit_indices"], op.attributes["strides"]):
        parts.append(f"{s}:{l}" if st == 1 else f"{s}:{l}:{st}")
    return "[" + ", ".join(parts) + "]"


directive("slice", ("start_indices", "limit_indices", "strides"))((_parse_slice, _print_slice))


# -- dot_general dimension numbers --------------------------------------------------------------


def _dims_pair(p) -> tuple[list[int], list[int]]:
    lhs = parse_int_list(p)
    p.expect_keyword("x", "between lhs and rhs dimensions")
    rhs = parse_int_list(p)
    return lhs, rhs


def _parse_dot_dims(state) -> None:
    p = state.p
    lb, rb = [], []
    if p.accept_keyword("batching_dims"):
        p.expect("=")
        lb, rb = _dims_pair(p)
        p.expect(",")
    p.expect_keyword("contracting_dims", "in stablehlo.dot_general")
    p.expect("=")
    lc, rc = _dims_pair(p)
    state.attrs["dot_dimension_numbers"] = A.DotDimensionNumbers(tuple(lb), tuple(rb), tuple(lc), tuple(rc))


def _print_dot_dims(op) -> str:
    d = op.attributes["dot_dimension_numbers"]
    text = ""
    if d.lhs_batching_dimensions or d.rhs_batching_dimensions:
        text = (
            f"batching_dims = {format_int_list(d.lhs_batching_dimensions)} x "
            f"{format_int_list(d.rhs_batching_dimensions)}, "
        )
    return (
        text
        + f"contracting_dims = {format_int_list(d.lhs_contracting_dimensions)} x "
        + format_int_list(d.rhs_contracting_dimensions)
    )


directive("dot_dims", ("dot_dimension_numbers",))((_parse_dot_dims, _print_dot_dims))


# -- precision config and dot algorithm -----------------------------------------------------------


def _peek_comma_keyword(p, word: str) -> bool:
    save = p.pos
    found = p.accept(",") and p.peek_keyword(word)
    p.pos = save
    return found


def _parse_precision(state) -> None:
    p = state.p
    if _peek_comma_keyword(p, "precision"):
        p.accept(",")
        p.accept_keyword("precision")
        p.expect("=")
        p.expect("[")
        values = []
        if not p.accept("]"):
            from .dialect_attrs import ENUMS

            while True:
                p.skip_ws()
                offset = p.pos
                word = p.bare_id("DEFAULT, HIGH or HIGHEST")
                if word not in ENUMS["precision"]:
                    p.error(f"'{word}' is not a precision; expected DEFAULT, HIGH or HIGHEST", offset)
                values.append(A.EnumAttr(word, "precision"))
                if not p.accept(","):
                    break
            p.expect("]")
        state.attrs["precision_config"] = A.ArrayAttr(values)
    if "algorithm" in state.opdef.attrs and _peek_comma_keyword(p, "algorithm"):
        p.accept(",")
        p.accept_keyword("algorithm")
        p.expect("=")
        p.skip_ws()
        offset = p.pos
        p.expect("<")
        try:
            state.attrs["algorithm"] = A.DotAlgorithm.from_params(parse_params(p))
        except (KeyError, TypeError) as e:
            p.error(f"dot algorithm has no parameter {e}", offset)


def _print_precision(op) -> str:
    text = ""
    precision = op.attributes.get("precision_config")
    if precision is not None:
        text += ", precision = [" + ", ".join(str(v) for v in precision) + "]"
    algorithm = op.attributes.get("algorithm")
    if algorithm is not None:
        text += f", algorithm = <{T.format_struct_params(algorithm)}>"
    return text


directive("precision", ("precision_config", "algorithm"))((_parse_precision, _print_precision))


# -- convolution ----------------------------------------------------------------------------------


def _parse_conv_dims(state) -> None:
    state.attrs["dimension_numbers"] = parse_conv_dims(state.p)


def _print_conv_dims(op) -> str:
    return format_conv_dims(op.attributes["dimension_numbers"])


directive("conv_dims", ("dimension_numbers",))((_parse_conv_dims, _print_conv_dims))

_WINDOW_KEYS = {
    "stride": "window_strides",
    "pad": "padding",
    "lhs_dilate": "lhs_dilation",
    "rhs_dilate": "rhs_dilation",
    "reverse": "window_reversal",
}


def _parse_window(state) -> None:
    p = state.p
    if p.peek("}"):
        return
    while True:
        p.skip_ws()
        offset = p.pos
        key = p.bare_id("stride, pad, lhs_dilate, rhs_dilate or reverse")
        if key not in _WINDOW_KEYS:
            p.error(f"unknown window attribute '{key}'; expected one of {', '.join(_WINDOW_KEYS)}", offset)
        attr = _WINDOW_KEYS[key]
        if attr in state.attrs:
            p.error(f"window attribute '{key}' given twice", offset)
        p.expect("=")
        if key == "pad":
            p.expect("[")
            rows = []
            if not p.accept("]"):
                while True:
                    pair = parse_int_list(p)
                    if len(pair) != 2:
                        p.error("each padding entry is [low, high]", offset)
                    rows.append(pair)
                    if not p.accept(","):
                        break
                p.expect("]")
            array = np.array(rows, dtype=np.int64).reshape(len(rows), 2)
            state.attrs[attr] = A.DenseElements(TensorType((len(rows), 2), IntegerType(64)), array)
        elif key == "reverse":
            state.attrs[attr] = A.DenseArray(parse_bool_list(p), "i1")
        else:
            state.attrs[attr] = A.DenseArray(parse_int_list(p), "i64")
        if not p.accept(","):
            break


def _print_window(op) -> str:
    parts = []
    for key, attr in _WINDOW_KEYS.items():
        value = op.attributes.get(attr)
        if value is None:
            continue
        if key == "pad":
            rows = np.asarray(value.array).reshape(-1, 2)
            parts.append("pad = [" + ", ".join(f"[{int(a)}, {int(b)}]" for a, b in rows) + "]")
        else:
            parts.append(f"{key} = {format_int_list(value)}")
    return ", ".join(parts)


directive("window", tuple(_WINDOW_KEYS.values()))((_parse_window, _print_window))


# -- reduce_precision -----------------------------------------------------------------------------

_EXPMANT = re.compile(r"e(\d+)m(\d+)")


def _parse_expmant(state) -> None:
    p = state.p
    p.skip_ws()
    offset = p.pos
    word = p.bare_id("a format such as e8m7")
    m = _EXPMANT.fullmatch(word)
    if m is None:
        p.error(f"'{word}' is not a format such as e8m7 (exponent and mantissa bits)", offset)
    state.attrs["exponent_bits"] = A.IntegerAttr(int(m.group(1)), I32)
    state.attrs["mantissa_bits"] = A.IntegerAttr(int(m.group(2)), I32)


def _print_expmant(op) -> str:
    return f"e{int(op.attributes['exponent_bits'])}m{int(op.attributes['mantissa_bits'])}"


directive("expmant", ("exponent_bits", "mantissa_bits"))((_parse_expmant, _print_expmant))


# -- custom_call target ---------------------------------------------------------------------------


def _parse_call_target(state) -> None:
    state.attrs["call_target_name"] = state.p.symbol("a call target such as @my_kernel")


def _print_call_target(op) -> str:
    return str(A.SymbolRef(op.attributes["call_target_name"]))


directive("call_target", ("call_target_name",))((_parse_call_target, _print_call_target))
