"""Scalar, list, window/padding/slice, dimension-label and enum attribute values of HLO text.

See attr_values.py for the conventions every decoder follows.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional, Sequence

from ...ir import attributes as A
from ...ir.errors import SourcePos
from ...ir.types import FloatType
from .attr_reader import AttrReader, read_whole

# -- scalars and lists -----------------------------------------------------------------------------


def decode_int(text: str, pos: SourcePos, what: str = "integer attribute") -> int:
    return read_whole(text, pos, what, lambda r: r.int())


def decode_float(text: str, pos: SourcePos, what: str = "float attribute") -> float:
    return read_whole(text, pos, what, lambda r: r.float())


def read_bool(r: AttrReader) -> bool:
    word = r.match(re.compile(r"(true|false)(?![A-Za-z0-9_])"))
    if word is None:
        r.expected("true or false")
    return word == "true"


def decode_bool(text: str, pos: SourcePos, what: str = "boolean attribute") -> bool:
    return read_whole(text, pos, what, read_bool)


def decode_bool_list(text: str, pos: SourcePos, what: str = "boolean list") -> tuple[bool, ...]:
    """`{true,false}` (parameter_replication, ...)."""
    return read_whole(text, pos, what, lambda r: tuple(r.list("{", "}", lambda: read_bool(r))))


def decode_bool_or_bool_list(text: str, pos: SourcePos, what: str = "boolean attribute") -> tuple[bool, ...]:
    """`true` or `{true,false}` (allow_spmd_sharding_propagation_to_output, ...)."""
    def read(r: AttrReader) -> tuple[bool, ...]:
        if r.peek() == "{":
            return tuple(r.list("{", "}", lambda: read_bool(r)))
        return (read_bool(r),)
    return read_whole(text, pos, what, read)


def decode_string(text: str, pos: SourcePos, what: str = "string attribute") -> str:
    """`"..."` with C escapes."""
    return read_whole(text, pos, what, lambda r: r.string())


def decode_int_list(text: str, pos: SourcePos, what: str = "integer list") -> tuple[int, ...]:
    """`{0,2}` or `{}`."""
    return read_whole(text, pos, what, lambda r: r.int_list())


def read_int_list_list(r: AttrReader) -> list[list[int]]:
    return r.list("{", "}", lambda: list(r.int_list()))


def decode_int_list_list(text: str, pos: SourcePos, what: str = "list of integer lists") -> list[list[int]]:
    """`{{0,1},{2,3}}` or `{}`."""
    return read_whole(text, pos, what, read_int_list_list)


def read_enum(r: AttrReader, allowed: Sequence[str], what: str, case_sensitive: bool = True) -> str:
    """One of `allowed`, returned as spelled in `allowed`."""
    start = r.mark()
    word = r.match(re.compile(r"[A-Za-z_][A-Za-z0-9_]*"))
    if word is not None:
        for name in allowed:
            if word == name or (not case_sensitive and word.lower() == name.lower()):
                return name
    r.i = start
    r.expected(f"{what} ({', '.join(allowed)})")


def decode_enum(text: str, pos: SourcePos, allowed: Sequence[str], description: str,
                what: str = "attribute", case_sensitive: bool = True) -> str:
    """One word of `allowed` (`description` says what it is, `what` names the attribute)."""
    return read_whole(text, pos, what, lambda r: read_enum(r, allowed, description, case_sensitive))


# -- computations and instruction names ------------------------------------------------------------


def decode_computation(text: str, pos: SourcePos, what: str = "computation reference") -> str:
    """`%name` or `name` of a called computation."""
    return read_whole(text, pos, what, lambda r: r.name("a computation name"))


def decode_computation_list(text: str, pos: SourcePos, what: str = "computation list") -> list[str]:
    """`{%a, %b}` (branch_computations, called_computations)."""
    return read_whole(text, pos, what, lambda r: r.list("{", "}", lambda: r.name("a computation name")))


def decode_instruction_names(text: str, pos: SourcePos, what: str = "control-predecessors") -> list[str]:
    """`{%a, b}` (control-predecessors); XLA requires at least one name."""
    def read(r: AttrReader) -> list[str]:
        r.expect("{")
        names = [r.name("an instruction name")]
        while r.accept(","):
            names.append(r.name("an instruction name"))
        r.expect("}", "',' or '}'")
        return names
    return read_whole(text, pos, what, read)


# -- window, padding, slices -----------------------------------------------------------------------

WINDOW_FIELDS = ("size", "stride", "pad", "lhs_dilate", "rhs_dilate", "rhs_reversal")
_DXD = re.compile(r"-?\d+(?:x-?\d+)*(?![A-Za-z0-9_])")
_PAD = re.compile(r"-?\d+_-?\d+(?:_-?\d+)?(?:x-?\d+_-?\d+(?:_-?\d+)?)*(?![A-Za-z0-9_])")


def _read_dxd(r: AttrReader, what: str) -> tuple[int, ...]:
    token = r.match(_DXD)
    if token is None:
        r.expected(f"{what} as N or NxMx...")
    return tuple(int(v) for v in token.split("x"))


def _read_pad(r: AttrReader, what: str, interior: bool) -> list[tuple[int, ...]]:
    """`low_high[_interior]` per dim, `x`-separated."""
    r.skip()
    start = r.mark()
    token = r.match(_PAD)
    if token is None:
        r.expected(f"{what} as low_high{'[_interior]' if interior else ''} per dimension, e.g. 1_1x0_0")
    dims = []
    for part in token.split("x"):
        dim = tuple(int(v) for v in part.split("_"))
        if not interior and len(dim) != 2:
            r.error(f"expected low_high (two numbers) per dimension of the {what}, found '{part}'", start)
        dims.append(dim)
        start += len(part) + 1
    return dims


def decode_window(text: str, pos: SourcePos, what: str = "window") -> dict[str, tuple]:
    """`{size=3x3 stride=2x2 pad=1_1x0_0 lhs_dilate=1x2 rhs_dilate=2x1 rhs_reversal=0x1}`.

    Sub-attributes in any order, space- or comma-separated; 1-D windows use plain ints. Returns
    one tuple per field with one entry per window dimension, absent fields at XLA's defaults:
    stride 1, pad (0, 0), dilations 1, rhs_reversal False. `{}` is a window of no dimensions.
    """
    r = AttrReader(text, pos, what)
    r.expect("{")
    found: dict[str, tuple] = {}
    where: dict[str, int] = {}
    while not r.accept("}"):
        if r.at_end():
            r.expected("'}' to end the window")
        r.accept(",")
        start = r.mark()
        name = r.attribute_name(f"a window field ({', '.join(WINDOW_FIELDS)})")
        if name not in WINDOW_FIELDS:
            r.error(f"unknown window field '{name}'; expected one of {', '.join(WINDOW_FIELDS)}", start)
        if name in found:
            r.error(f"window field '{name}=' given twice", start)
        where[name] = r.mark()
        if name == "pad":
            found[name] = tuple((low, high) for low, high in _read_pad(r, "pad", interior=False))
        else:
            found[name] = _read_dxd(r, name)
            if name == "rhs_reversal" and any(v not in (0, 1) for v in found[name]):
                r.error("rhs_reversal takes 0 or 1 per dimension", where[name])
    r.end()
    rank = len(found.get("size", ()))
    for name, values in found.items():
        if len(values) != rank:
            r.error(f"window field '{name}=' has {len(values)} dimensions but size= has {rank}",
                    where[name])
    defaults = {"size": 0, "stride": 1, "pad": (0, 0), "lhs_dilate": 1, "rhs_dilate": 1, "rhs_reversal": 0}
    window = {name: found.get(name, (defaults[name],) * rank) for name in WINDOW_FIELDS}
    window["rhs_reversal"] = tuple(bool(v) for v in window["rhs_reversal"])
    return window


def decode_padding(text: str, pos: SourcePos, what: str = "padding") -> list[tuple[int, int, int]]:
    """`1_2x0_1_0`: per dimension (low, high, interior); interior defaults to 0, negatives allowed."""
    dims = read_whole(text, pos, what, lambda r: _read_pad(r, what, interior=True))
    return [(d[0], d[1], d[2] if len(d) == 3 else 0) for d in dims]


@dataclass(frozen=True)
class SliceRanges:
    starts: tuple[int, ...]
    limits: tuple[int, ...]
    strides: tuple[int, ...]


def decode_slice(text: str, pos: SourcePos, what: str = "slice") -> SliceRanges:
    """`{[0:8:2], [1:7]}`: start:limit[:stride] per dimension (stride defaults to 1)."""
    def range_(r: AttrReader) -> tuple[int, int, int]:
        start = r.mark()
        values = r.int_list("[", "]", ":")
        if len(values) not in (2, 3):
            r.error(f"expected [start:limit] or [start:limit:stride], found {len(values)} numbers", start)
        return values[0], values[1], values[2] if len(values) == 3 else 1

    ranges = read_whole(text, pos, what, lambda r: r.list("{", "}", lambda: range_(r)))
    return SliceRanges(*(tuple(col) for col in zip(*ranges))) if ranges else SliceRanges((), (), ())


# -- convolution dimension labels ------------------------------------------------------------------

_DIM_LABELS = re.compile(r"([0-9bf?]+)_([0-9io?]+)->([0-9bf?]+)")


def decode_dim_labels(text: str, pos: SourcePos, what: str = "dim_labels") -> A.ConvDimensionNumbers:
    """`b01f_01io->b01f`: which dimension of input, kernel and output is batch/feature/spatial.

    A digit d at position i says spatial dimension d is dimension i; `?` marks a dimension the
    numbers do not mention (XLA allows several).
    """
    r = AttrReader(text, pos, what)
    r.skip()
    base = r.mark()
    m = _DIM_LABELS.match(text, base)
    if m is None:
        r.expected("dimension labels like b01f_01io->b01f")
    r.i = m.end()
    r.end()

    def part(group: int, letters: str, role: str) -> tuple[dict[str, int], tuple[int, ...]]:
        labels, start = m.group(group), m.start(group)
        named: dict[str, int] = {}
        spatial_count = sum(1 for c in labels if c not in letters + "?")
        spatial: list[Optional[int]] = [None] * spatial_count
        for i, c in enumerate(labels):
            if c == "?":
                continue
            if c in letters:
                if c in named:
                    r.error(f"'{c}' appears twice in the {role} labels", start + i)
                named[c] = i
                continue
            if c not in "0123456789":
                r.error(f"expected [0-9{letters}?] in the {role} labels, found '{c}'", start + i)
            d = int(c)
            if d >= spatial_count:
                r.error(f"spatial dimension {d} in the {role} labels, which have {spatial_count}", start + i)
            if spatial[d] is not None:
                r.error(f"spatial dimension {d} appears twice in the {role} labels", start + i)
            spatial[d] = i
        for c in letters:
            if c not in named:
                r.error(f"the {role} labels '{labels}' have no '{c}'", start)
        return named, tuple(spatial)

    lhs, lhs_spatial = part(1, "bf", "input")
    rhs, rhs_spatial = part(2, "io", "kernel")
    out, out_spatial = part(3, "bf", "output")
    if not len(lhs_spatial) == len(rhs_spatial) == len(out_spatial):
        r.error(f"input, kernel and output must have the same number of spatial dimensions, found "
                f"{len(lhs_spatial)}, {len(rhs_spatial)}, {len(out_spatial)}", base)
    return A.ConvDimensionNumbers(
        input_batch_dimension=lhs["b"], input_feature_dimension=lhs["f"],
        input_spatial_dimensions=lhs_spatial,
        kernel_input_feature_dimension=rhs["i"], kernel_output_feature_dimension=rhs["o"],
        kernel_spatial_dimensions=rhs_spatial,
        output_batch_dimension=out["b"], output_feature_dimension=out["f"],
        output_spatial_dimensions=out_spatial)


# -- enums that become StableHLO enum attributes ---------------------------------------------------

COMPARISON_DIRECTIONS = ("EQ", "NE", "GE", "GT", "LE", "LT")
COMPARISON_TYPES = ("FLOAT", "TOTALORDER", "SIGNED", "UNSIGNED")


def decode_comparison_direction(text: str, pos: SourcePos, what: str = "direction") -> A.EnumAttr:
    """`direction=LT` (upper case only, as XLA)."""
    direction = decode_enum(text, pos, COMPARISON_DIRECTIONS, "a comparison direction", what)
    return A.EnumAttr(direction, "comparison_direction")


def decode_comparison_type(text: str, pos: SourcePos, what: str = "type") -> A.EnumAttr:
    """`type=TOTALORDER` (upper case only, as XLA)."""
    return A.EnumAttr(decode_enum(text, pos, COMPARISON_TYPES, "a comparison type", what), "comparison_type")


def default_comparison_type(element: str) -> A.EnumAttr:
    """The compare type XLA assumes when `type=` is absent, from the operands' HLO element type
    (xla/comparison_util.cc): floats and complex → FLOAT, signed → SIGNED, unsigned/pred → UNSIGNED."""
    if element.startswith(("f", "bf", "c")):
        kind = "FLOAT"
    elif element.startswith("s"):
        kind = "SIGNED"
    elif element.startswith("u") or element == "pred":
        kind = "UNSIGNED"
    else:
        raise ValueError(f"no comparison type for element type {element}")
    return A.EnumAttr(kind, "comparison_type")


PRECISIONS = ("DEFAULT", "HIGH", "HIGHEST")


def decode_precision_list(text: str, pos: SourcePos, what: str = "operand_precision") -> A.ArrayAttr:
    """`{highest,default}` → the precision_config the MLIR frontend builds (case-insensitive, as XLA)."""
    names = read_whole(text, pos, what,
                       lambda r: r.list("{", "}", lambda: read_enum(r, PRECISIONS, "a precision", False)))
    return A.ArrayAttr(A.EnumAttr(name, "precision") for name in names)


# XLA's PrecisionConfig.Algorithm names → StableHLO's dot_algorithm fields, as XLA's own HLO →
# StableHLO translation spells them (checked with jaxlib 0.10.2's hlo_to_stablehlo): the `_xN`
# suffix is num_primitive_operations, and `any_f8` becomes f8E5M2.
_ALGORITHM = re.compile(r"dot_(any_f8|[a-z0-9]+)_(any_f8|[a-z0-9]+)_([a-z0-9]+)(?:_x(\d+))?(_fast_accum)?")
_ALGORITHM_TYPES = {"bf16": "bf16", "f16": "f16", "f32": "f32", "f64": "f64", "tf32": "tf32", "any_f8": "f8E5M2"}
DOT_ALGORITHMS = (
    "dot_any_f8_any_f8_f32", "dot_any_f8_any_f8_f32_fast_accum", "dot_f16_f16_f16", "dot_f16_f16_f32",
    "dot_bf16_bf16_bf16", "dot_bf16_bf16_f32", "dot_bf16_bf16_f32_x3", "dot_bf16_bf16_f32_x6",
    "dot_bf16_bf16_f32_x9", "dot_tf32_tf32_f32", "dot_tf32_tf32_f32_x3", "dot_f32_f32_f32",
    "dot_f64_f64_f64",
)


def decode_dot_algorithm(text: str, pos: SourcePos, what: str = "algorithm") -> A.DotAlgorithm:
    """`algorithm=dot_bf16_bf16_f32` (case-insensitive, as XLA) → DotAlgorithm."""
    name = decode_enum(text, pos, DOT_ALGORITHMS, "a dot algorithm", what, case_sensitive=False)
    lhs, rhs, acc, ops, fast = _ALGORITHM.fullmatch(name).groups()
    return A.DotAlgorithm(
        lhs_precision_type=FloatType(_ALGORITHM_TYPES[lhs]), rhs_precision_type=FloatType(_ALGORITHM_TYPES[rhs]),
        accumulation_type=FloatType(_ALGORITHM_TYPES[acc]), lhs_component_count=1, rhs_component_count=1,
        num_primitive_operations=int(ops or 1), allow_imprecise_accumulation=bool(fast))


def decode_fft_type(text: str, pos: SourcePos, what: str = "fft_type") -> A.EnumAttr:
    return A.EnumAttr(decode_enum(text, pos, ("FFT", "IFFT", "RFFT", "IRFFT"), "an fft type", what), "fft_type")


def decode_rng_distribution(text: str, pos: SourcePos, what: str = "distribution") -> A.EnumAttr:
    """`rng_uniform` / `rng_normal` → rng_distribution UNIFORM / NORMAL."""
    name = decode_enum(text, pos, ("rng_uniform", "rng_normal"), "an rng distribution", what, case_sensitive=False)
    return A.EnumAttr(name[4:].upper(), "rng_distribution")


def decode_rng_algorithm(text: str, pos: SourcePos, what: str = "algorithm") -> A.EnumAttr:
    """`rng_default` / `rng_three_fry` / `rng_philox` → rng_algorithm DEFAULT / THREE_FRY / PHILOX."""
    name = decode_enum(text, pos, ("rng_default", "rng_three_fry", "rng_philox"), "an rng algorithm",
                       what, case_sensitive=False)
    return A.EnumAttr(name[4:].upper(), "rng_algorithm")


def decode_transpose(text: str, pos: SourcePos, what: str = "transpose_a") -> A.EnumAttr:
    """triangular-solve `transpose_a=NO_TRANSPOSE|TRANSPOSE|ADJOINT` (the proto's names, exact)."""
    return A.EnumAttr(decode_enum(text, pos, ("NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"), "a transpose kind", what),
                      "transpose")


CUSTOM_CALL_API_VERSIONS = {"API_VERSION_ORIGINAL": 1, "API_VERSION_STATUS_RETURNING": 2,
                            "API_VERSION_STATUS_RETURNING_UNIFIED": 3, "API_VERSION_TYPED_FFI": 4}


def decode_api_version(text: str, pos: SourcePos, what: str = "api_version") -> A.IntegerAttr:
    """custom-call `api_version=API_VERSION_TYPED_FFI` → `4 : i32` as stablehlo.custom_call holds it."""
    name = decode_enum(text, pos, tuple(CUSTOM_CALL_API_VERSIONS), "a custom-call API version", what,
                       case_sensitive=False)
    return A.IntegerAttr(CUSTOM_CALL_API_VERSIONS[name], A.IntegerType(32))


def decode_custom_call_schedule(text: str, pos: SourcePos, what: str = "schedule") -> str:
    return decode_enum(text, pos, ("SCHEDULE_NONE", "SCHEDULE_LATEST", "SCHEDULE_EARLIEST"),
                       "a custom-call schedule", what, case_sensitive=False)


FUSION_KINDS = ("kLoop", "kInput", "kOutput", "kCustom")


def decode_fusion_kind(text: str, pos: SourcePos, what: str = "kind") -> str:
    return decode_enum(text, pos, FUSION_KINDS, "a fusion kind", what)


def decode_shuffle_mode(text: str, pos: SourcePos, what: str = "mode") -> str:
    # XLA HEAD's shuffle also has permute and multi-rotate modes, whose index attributes have no
    # settled text spelling yet; rotate is the mode hlodbg reads and runs.
    return decode_enum(text, pos, ("rotate",), "a shuffle mode hlodbg runs", what)


def decode_conv_kind(text: str, pos: SourcePos, what: str = "conv_kind") -> str:
    return decode_enum(text, pos, ("fprop", "wgrad", "dgrad", "unset"), "a convolution kind", what)


COLLECTIVE_MODES = ("cross_replica", "cross_partition", "cross_replica_and_partition", "flattened_id")


def decode_collective_mode(text: str, pos: SourcePos, what: str = "mode") -> str:
    """Collectives' `mode=` (the group mode; XLA parses it and then ignores it)."""
    return decode_enum(text, pos, COLLECTIVE_MODES, "a collective group mode", what)


def decode_padding_type(text: str, pos: SourcePos, what: str = "padding_type") -> str:
    """custom-call `padding_type=PADDING_VALID|PADDING_SAME` (the proto's names, exact)."""
    return decode_enum(text, pos, ("PADDING_INVALID", "PADDING_VALID", "PADDING_SAME"), "a padding type", what)
