"""Attribute adapters: how an HLO instruction's attributes become an IR op's attributes, and back.

Each adapter names the HLO attributes it consumes and has two halves: `lower(values, info)` takes
the decoded values (attr_values.py decoded each attribute's text; absent ones are missing from
`values`) and returns IR attributes; `raise_(attributes, info)` takes an IR op's attributes and
returns HLO attribute texts, for the printer. `info` tells the few adapters that need it about the
instruction: operand and result types, the group size of a collective.

`Field` is the common case, one HLO attribute to one IR attribute through a `Kind`; the classes
below it are the attributes that combine or split (dot dimensions, convolution windows and
dim_labels, gather/scatter dimension numbers, pad and slice configs).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Callable, Optional

import numpy as np

from ...ir.attributes import (
    UNIT,
    ArrayAttr,
    ChannelHandle,
    ConvDimensionNumbers,
    DenseArray,
    DenseElements,
    DotAlgorithm,
    DotDimensionNumbers,
    EnumAttr,
    FloatAttr,
    GatherDimensionNumbers,
    IntegerAttr,
    OpaqueAttr,
    ScatterDimensionNumbers,
    UnitAttr,
    ragged_dot_dimension_numbers,
)
from ...ir.types import ComplexType, FloatType, IntegerType, TensorType, TupleType, Type, element_type

I32 = IntegerType(32)
I64 = IntegerType(64)


def ints_text(values) -> str:
    return "{" + ",".join(str(int(v)) for v in values) + "}"


def i64_elements(rows: list[list[int]], width: int) -> DenseElements:
    """A 2-D i64 DenseElements (padding, replica groups, source-target pairs)."""
    array = np.asarray(rows, dtype=np.int64).reshape(len(rows), width if rows else 0)
    return DenseElements(TensorType(array.shape, I64), array)


@dataclass(frozen=True)
class Kind:
    """One attribute syntax: the attr_values decoder reading it, and the IR form both ways."""

    decoder: str
    lower: Callable[[Any], Any]
    raise_: Callable[[Any], str]


INTS = Kind("int_list", lambda v: DenseArray(tuple(int(x) for x in v)), ints_text)
INT = Kind("int", lambda v: IntegerAttr(int(v), I64), lambda a: str(int(a)))
INT32 = Kind("int", lambda v: IntegerAttr(int(v), I32), lambda a: str(int(a)))
ONE_OF_INTS = Kind("int_list", lambda v: IntegerAttr(int(_single(v)), I64), lambda a: "{" + str(int(a)) + "}")
BOOL = Kind("bool", bool, lambda b: "true" if b else "false")
F32 = Kind("float", lambda v: FloatAttr(float(v), FloatType("f32")), lambda a: repr(float(a)))
STRING = Kind("string", str, lambda s: '"' + str(s).replace("\\", "\\\\").replace('"', '\\"') + '"')
WORD = Kind("fusion_kind", str, str)

SHUFFLE_MODE = Kind("shuffle_mode", str, str)


def _single(values) -> int:
    values = list(values)
    if len(values) != 1:
        raise ValueError(f"expected one dimension, got {len(values)}")
    return values[0]


def _same_value(v: Any) -> Any:
    return v


def decoded_enum(decoder: str, words: Optional[dict[str, str]] = None) -> Kind:
    """An enum attr_values already decodes into the StableHLO EnumAttr; `words` maps cases whose
    HLO spelling differs (`UNIFORM` is written `rng_uniform`) for the printer."""
    words = words or {}
    return Kind(decoder, _same_value, lambda a: words.get(str(a), str(a)))


DIRECTION = decoded_enum("comparison_direction")
COMPARE_TYPE = decoded_enum("comparison_type")
FFT_TYPE = decoded_enum("fft_type")
TRANSPOSE = decoded_enum("transpose")
DISTRIBUTION = decoded_enum("rng_distribution", {"UNIFORM": "rng_uniform", "NORMAL": "rng_normal"})
RNG_ALGORITHM = decoded_enum("rng_algorithm", {"DEFAULT": "rng_default", "THREE_FRY": "rng_three_fry",
                                               "PHILOX": "rng_philox"})
def _accuracy_text(accuracy: Any) -> str:
    mode = str(accuracy.mode)
    if mode == "TOLERANCE":
        return f"{{tolerance={{atol={accuracy.atol},rtol={accuracy.rtol},ulps={accuracy.ulps}}}}}"
    return f"{{mode={mode.lower()}}}"


RESULT_ACCURACY = Kind("result_accuracy", _same_value, _accuracy_text)
PRECISIONS = Kind("precision_list", _same_value, lambda a: "{" + ",".join(str(p).lower() for p in a) + "}")


@dataclass(frozen=True)
class Field:
    """One HLO attribute as one IR attribute; `default` is the IR value when the text omits it
    (None: the IR attribute is left out too), and is not printed back."""

    hlo: str
    ir: str
    kind: Kind
    default: Any = None
    always_printed: bool = False  # XLA prints it even when it has the default value

    @property
    def consumes(self) -> tuple[str, ...]:
        return (self.hlo,)

    def lower(self, values: dict, info: "Info") -> dict:
        if self.hlo in values:
            value = self.kind.lower(values[self.hlo])
        else:
            value = self.default
        return {} if value is None else {self.ir: value}

    def raise_(self, attributes: dict, info: "Info") -> dict:
        value = attributes.get(self.ir)
        if value is None or (self.default is not None and _same(value, self.default) and not self.always_printed):
            return {}
        return {self.hlo: self.kind.raise_(value)}


def _same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b


@dataclass
class Info:
    """What an adapter may need to know besides attributes."""

    operand_types: list[Type]
    result_type: Optional[Type] = None
    group_size: Optional[int] = None  # of a collective, when its replica groups are empty


# -- compare: the type defaults by the operands' element type (hlo_text.md §6) ---------------------


def default_compare_type(t: Type) -> str:
    e = element_type(t)
    if isinstance(e, (FloatType, ComplexType)):
        return "FLOAT"
    if isinstance(e, IntegerType) and not e.is_unsigned and not e.is_bool:
        return "SIGNED"
    return "UNSIGNED"


class CompareAdapter:
    consumes = ("direction", "type")

    def lower(self, values: dict, info: Info) -> dict:
        kind = values.get("type") or EnumAttr(default_compare_type(info.operand_types[0]), "comparison_type")
        return {"comparison_direction": values["direction"], "compare_type": kind}

    def raise_(self, attributes: dict, info: Info) -> dict:
        out = {"direction": DIRECTION.raise_(attributes["comparison_direction"])}
        kind = attributes.get("compare_type")
        if kind is not None and str(kind) != default_compare_type(info.operand_types[0]):
            out["type"] = COMPARE_TYPE.raise_(kind)
        return out


# -- dot ------------------------------------------------------------------------------------------

_DOT_FIELDS = (("lhs_batch_dims", "lhs_batching_dimensions"), ("rhs_batch_dims", "rhs_batching_dimensions"),
               ("lhs_contracting_dims", "lhs_contracting_dimensions"),
               ("rhs_contracting_dims", "rhs_contracting_dimensions"))


class DotAdapter:
    """`lhs/rhs_batch_dims`, `lhs/rhs_contracting_dims` → dot_dimension_numbers."""

    consumes = tuple(h for h, _ in _DOT_FIELDS)

    def lower(self, values: dict, info: Info) -> dict:
        dims = {ir: tuple(int(d) for d in values.get(h, ())) for h, ir in _DOT_FIELDS}
        return {"dot_dimension_numbers": DotDimensionNumbers(**dims)}

    def raise_(self, attributes: dict, info: Info) -> dict:
        dims = attributes["dot_dimension_numbers"]
        return {h: ints_text(getattr(dims, ir)) for h, ir in _DOT_FIELDS if getattr(dims, ir)}


_RAGGED_FIELDS = _DOT_FIELDS + (("lhs_ragged_dims", "lhs_ragged_dimensions"), ("rhs_group_dims", "rhs_group_dimensions"))


class RaggedDotAdapter:
    """ragged-dot's dims → chlo.ragged_dot's `#chlo.ragged_dot<...>` (kept as text, as the MLIR
    frontend keeps it) and operand_precision → its precision_config."""

    consumes = tuple(h for h, _ in _RAGGED_FIELDS) + ("operand_precision",)

    def lower(self, values: dict, info: Info) -> dict:
        fields = ", ".join(f"{ir} = [{', '.join(str(int(d)) for d in values.get(h, ()))}]" for h, ir in _RAGGED_FIELDS)
        out = {"ragged_dot_dimension_numbers": OpaqueAttr(f"#chlo.ragged_dot<{fields}>")}
        if "operand_precision" in values:
            out["precision_config"] = ArrayAttr(EnumAttr(str(p), "precision", "chlo") for p in values["operand_precision"])
        return out

    def raise_(self, attributes: dict, info: Info) -> dict:
        dims = ragged_dot_dimension_numbers(attributes["ragged_dot_dimension_numbers"])
        out = {h: ints_text(dims[ir]) for h, ir in _RAGGED_FIELDS if dims[ir]}
        if attributes.get("precision_config") is not None:
            out["operand_precision"] = PRECISIONS.raise_(attributes["precision_config"])
        return out


# `dot_bf16_bf16_f32_x3`: lhs, rhs, accumulation types and the number of primitive dots.
_ALGORITHM_NAMES = {"bf16": "bf16", "f16": "f16", "f32": "f32", "f64": "f64", "tf32": "tf32", "f8E5M2": "any_f8"}


def _algorithm_raise(alg: DotAlgorithm) -> str:
    names = [_ALGORITHM_NAMES.get(str(t), str(t).lower())
             for t in (alg.lhs_precision_type, alg.rhs_precision_type, alg.accumulation_type)]
    suffix = f"_x{alg.num_primitive_operations}" if alg.num_primitive_operations != 1 else ""
    fast = "_fast_accum" if alg.allow_imprecise_accumulation else ""
    return "dot_" + "_".join(names) + suffix + fast


ALGORITHM = Kind("dot_algorithm", _same_value, _algorithm_raise)


# -- windows: convolution, reduce-window, select-and-scatter ---------------------------------------


def window_parts(window: Optional[dict], rank: int) -> dict[str, tuple]:
    """The decoded `window={size=.. stride=.. pad=..}` (attr_values fills XLA's defaults in), or a
    window of `rank` dimensions at those defaults when the instruction has none."""
    if window:
        return {**window, "pad": [tuple(p)[:2] for p in window["pad"]]}
    return {"size": (), "stride": (1,) * rank, "pad": [(0, 0)] * rank, "lhs_dilate": (1,) * rank,
            "rhs_dilate": (1,) * rank, "rhs_reversal": (False,) * rank}


def window_text(parts: dict[str, tuple]) -> str:
    """`{size=3x3 stride=2x2 pad=1_1x0_0 ...}`, leaving out what has its default value."""
    n = len(parts["size"])
    out = [f"size={'x'.join(map(str, parts['size']))}"]
    if parts["stride"] != (1,) * n:
        out.append(f"stride={'x'.join(map(str, parts['stride']))}")
    if any(lo or hi for lo, hi in parts["pad"]):
        out.append("pad=" + "x".join(f"{lo}_{hi}" for lo, hi in parts["pad"]))
    for key in ("lhs_dilate", "rhs_dilate"):
        if parts[key] != (1,) * n:
            out.append(f"{key}={'x'.join(map(str, parts[key]))}")
    if any(parts["rhs_reversal"]):
        out.append("rhs_reversal=" + "x".join(str(int(r)) for r in parts["rhs_reversal"]))
    return "{" + " ".join(out) + "}"


def _padding_rows(attr: Any) -> list[tuple[int, int]]:
    if attr is None:
        return []
    return [(int(lo), int(hi)) for lo, hi in np.asarray(attr.array).reshape(-1, 2)]


class ConvolutionAdapter:
    """window + dim_labels + group counts + operand_precision → StableHLO's convolution attributes
    (the window's `size` is the kernel's spatial size, so it is not kept)."""

    consumes = ("window", "dim_labels", "feature_group_count", "batch_group_count", "operand_precision")

    def lower(self, values: dict, info: Info) -> dict:
        numbers: ConvDimensionNumbers = values["dim_labels"]
        spatial = len(numbers.input_spatial_dimensions)
        w = window_parts(values.get("window"), spatial)
        out = {
            "dimension_numbers": numbers,
            "feature_group_count": IntegerAttr(int(values.get("feature_group_count", 1)), I64),
            "batch_group_count": IntegerAttr(int(values.get("batch_group_count", 1)), I64),
        }
        if spatial:
            out.update({
                "window_strides": DenseArray(w["stride"]),
                "padding": i64_elements([list(p) for p in w["pad"]], 2),
                "lhs_dilation": DenseArray(w["lhs_dilate"]),
                "rhs_dilation": DenseArray(w["rhs_dilate"]),
            })
            if any(w["rhs_reversal"]):
                out["window_reversal"] = DenseArray(w["rhs_reversal"], "i1")
        if "operand_precision" in values:
            out["precision_config"] = PRECISIONS.lower(values["operand_precision"])
        return out

    def raise_(self, attributes: dict, info: Info) -> dict:
        numbers: ConvDimensionNumbers = attributes["dimension_numbers"]
        n = len(numbers.input_spatial_dimensions)
        kernel = info.operand_types[1]
        out = {"dim_labels": dim_labels_text(numbers)}
        if n:
            size = tuple(kernel.shape[d] for d in numbers.kernel_spatial_dimensions)
            out["window"] = window_text({
                "size": size,
                "stride": tuple(attributes.get("window_strides") or (1,) * n),
                "pad": _padding_rows(attributes.get("padding")) or [(0, 0)] * n,
                "lhs_dilate": tuple(attributes.get("lhs_dilation") or (1,) * n),
                "rhs_dilate": tuple(attributes.get("rhs_dilation") or (1,) * n),
                "rhs_reversal": tuple(bool(r) for r in (attributes.get("window_reversal") or (False,) * n)),
            })
        for key in ("feature_group_count", "batch_group_count"):
            if int(attributes.get(key, 1)) != 1:
                out[key] = str(int(attributes[key]))
        if attributes.get("precision_config") is not None:
            out["operand_precision"] = PRECISIONS.raise_(attributes["precision_config"])
        return out


def dim_labels_text(n: ConvDimensionNumbers) -> str:
    """`b01f_01io->b01f` from the dimension numbers."""

    def labels(rank_dims: dict[int, str]) -> str:
        return "".join(rank_dims[i] for i in range(len(rank_dims)))

    lhs = {n.input_batch_dimension: "b", n.input_feature_dimension: "f",
           **{d: str(i) for i, d in enumerate(n.input_spatial_dimensions)}}
    rhs = {n.kernel_input_feature_dimension: "i", n.kernel_output_feature_dimension: "o",
           **{d: str(i) for i, d in enumerate(n.kernel_spatial_dimensions)}}
    out = {n.output_batch_dimension: "b", n.output_feature_dimension: "f",
           **{d: str(i) for i, d in enumerate(n.output_spatial_dimensions)}}
    return f"{labels(lhs)}_{labels(rhs)}->{labels(out)}"


class ReduceWindowAdapter:
    """`window` → window_dimensions, window_strides, base_dilations, window_dilations, padding."""

    consumes = ("window",)

    def __init__(self, ir_names: dict[str, str]):
        self.ir_names = ir_names  # window part -> IR attribute

    def lower(self, values: dict, info: Info) -> dict:
        w = window_parts(values.get("window"), 0)
        out = {}
        for key, ir in self.ir_names.items():
            out[ir] = i64_elements([list(p) for p in w["pad"]], 2) if key == "pad" else DenseArray(w[key])
        return out

    def raise_(self, attributes: dict, info: Info) -> dict:
        size = tuple(attributes[self.ir_names["size"]])
        n = len(size)
        if not n:  # a scalar's window: XLA writes none (`window={size=}` is not HLO)
            return {}
        parts = {"size": size, "stride": (1,) * n, "pad": [(0, 0)] * n, "lhs_dilate": (1,) * n,
                 "rhs_dilate": (1,) * n, "rhs_reversal": (False,) * n}
        for key, ir in self.ir_names.items():
            if attributes.get(ir) is not None and key != "size":
                parts[key] = _padding_rows(attributes[ir]) if key == "pad" else tuple(attributes[ir])
        return {"window": window_text(parts)}


REDUCE_WINDOW = ReduceWindowAdapter({"size": "window_dimensions", "stride": "window_strides",
                                     "lhs_dilate": "base_dilations", "rhs_dilate": "window_dilations",
                                     "pad": "padding"})
SELECT_AND_SCATTER = ReduceWindowAdapter({"size": "window_dimensions", "stride": "window_strides",
                                          "pad": "padding"})


# -- gather and scatter: the field names are StableHLO's ------------------------------------------


class DimensionNumbersAdapter:
    """XLA's per-field attributes (`offset_dims={1}`, `index_vector_dim=1`, ...) ↔ one StableHLO
    dimension-numbers struct, plus the op's plain fields."""

    def __init__(self, ir: str, struct: type, scalar_fields: tuple[str, ...]):
        self.ir = ir
        self.struct = struct
        self.scalar_fields = scalar_fields
        self.fields = tuple(f for f in struct.__dataclass_fields__)
        self.consumes = self.fields

    def lower(self, values: dict, info: Info) -> dict:
        params = {}
        for name in self.fields:
            if name in values:
                v = values[name]
                params[name] = int(v) if name in self.scalar_fields else tuple(int(x) for x in v)
        return {self.ir: self.struct(**params)}

    def raise_(self, attributes: dict, info: Info) -> dict:
        numbers = attributes[self.ir]
        out = {}
        for name in self.fields:
            v = getattr(numbers, name)
            if name in self.scalar_fields:
                out[name] = str(int(v))
            elif v or name not in ("operand_batching_dims", "start_indices_batching_dims",
                                   "input_batching_dims", "scatter_indices_batching_dims"):
                out[name] = ints_text(v)
        return out


GATHER_DIMS = DimensionNumbersAdapter("dimension_numbers", GatherDimensionNumbers, ("index_vector_dim",))
SCATTER_DIMS = DimensionNumbersAdapter("scatter_dimension_numbers", ScatterDimensionNumbers, ("index_vector_dim",))


# -- pad and slice configs -------------------------------------------------------------------------


class PadAdapter:
    """`padding=1_2x0_1_0` → edge_padding_low/high, interior_padding."""

    consumes = ("padding",)

    def lower(self, values: dict, info: Info) -> dict:
        dims = [tuple(int(x) for x in d) + (0,) * (3 - len(d)) for d in values["padding"]]
        return {"edge_padding_low": DenseArray(tuple(d[0] for d in dims)),
                "edge_padding_high": DenseArray(tuple(d[1] for d in dims)),
                "interior_padding": DenseArray(tuple(d[2] for d in dims))}

    def raise_(self, attributes: dict, info: Info) -> dict:
        dims = zip(attributes["edge_padding_low"], attributes["edge_padding_high"], attributes["interior_padding"])
        return {"padding": "x".join(f"{lo}_{hi}" + (f"_{i}" if i else "") for lo, hi, i in dims)}


class SliceAdapter:
    """`slice={[0:8:2], [1:7]}` → start_indices, limit_indices, strides."""

    consumes = ("slice",)

    def lower(self, values: dict, info: Info) -> dict:
        ranges = values["slice"]
        return {"start_indices": DenseArray(tuple(ranges.starts)), "limit_indices": DenseArray(tuple(ranges.limits)),
                "strides": DenseArray(tuple(ranges.strides))}

    def raise_(self, attributes: dict, info: Info) -> dict:
        dims = zip(attributes["start_indices"], attributes["limit_indices"], attributes["strides"])
        return {"slice": "{" + ", ".join(f"[{s}:{l}" + (f":{st}]" if st != 1 else "]") for s, l, st in dims) + "}"}


class MapDimensionsAdapter:
    """map's `dimensions`, which XLA's parser leaves optional (map_test.cc writes none): every
    dimension then, the only map XLA has; StableHLO's map always names them."""

    consumes = ("dimensions",)

    def lower(self, values: dict, info: Info) -> dict:
        if "dimensions" in values:
            return {"dimensions": INTS.lower(values["dimensions"])}
        shape = getattr(info.operand_types[0], "shape", None) if info.operand_types else None
        return {"dimensions": DenseArray(tuple(range(len(shape or ()))))}

    def raise_(self, attributes: dict, info: Info) -> dict:
        return {"dimensions": INTS.raise_(attributes["dimensions"])}


# -- collectives -----------------------------------------------------------------------------------


class GroupsAdapter:
    """replica_groups, channel_id and use_global_device_ids → StableHLO's replica_groups,
    channel_handle and use_global_device_ids, which select the same process-grouping strategy
    (hlo_text.md §6; engine/ops/collectives.py reads them). `global_ids` is False for the ops
    StableHLO gives no such flag."""

    def __init__(self, global_ids: bool = True, groups: bool = True, written_out: bool = False,
                 channel_zero: bool = False):
        self.global_ids = global_ids
        # send/recv always name their channel, and XLA's tests use channel_id=0 for one; for the
        # collectives 0 means "no channel" (XLA prints none then).
        self.channel_zero = channel_zero
        self.groups = groups  # collective_permute has pairs instead
        # StableHLO's all_to_all takes no empty groups (all_to_all_c8 sizes them against
        # split_count): XLA's "no groups" (one group of every process) is written out.
        self.written_out = written_out
        self.consumes = (("replica_groups",) if groups else ()) + ("channel_id",) + \
            (("use_global_device_ids",) if global_ids else ())

    def lower(self, values: dict, info: Info) -> dict:
        out = {}
        if self.groups:
            # Groups of unequal size are padded with -1, as StableHLO writes them.
            groups = [list(g) for g in values.get("replica_groups", [])]
            if not groups and self.written_out and info.group_size:
                groups = [list(range(info.group_size))]
                out["hlo.all_processes"] = UNIT  # printed back without groups, as written
            width = max((len(g) for g in groups), default=0)
            out["replica_groups"] = i64_elements([g + [-1] * (width - len(g)) for g in groups], width)
        channel = int(values.get("channel_id", 0))
        if channel > 0 or (self.channel_zero and "channel_id" in values):
            out["channel_handle"] = ChannelHandle(handle=channel, type=1)
        if self.global_ids and values.get("use_global_device_ids"):
            out["use_global_device_ids"] = UNIT
        return out

    def raise_(self, attributes: dict, info: Info) -> dict:
        out = {}
        if self.groups and "hlo.all_processes" in attributes:
            if "replica_groups" in dict(attributes.get("hlo.spellings") or {}):
                out["replica_groups"] = "{}"  # written empty, not left out
        elif self.groups:
            groups = np.asarray(attributes["replica_groups"].array).tolist()
            out["replica_groups"] = "{" + ",".join(ints_text([i for i in g if i >= 0]) for g in groups) + "}"
        handle = attributes.get("channel_handle")
        if isinstance(handle, ChannelHandle) and (handle.handle > 0 or self.channel_zero):
            out["channel_id"] = str(handle.handle)
        if isinstance(attributes.get("use_global_device_ids"), UnitAttr):
            out["use_global_device_ids"] = "true"
        return out


class AllToAllAdapter:
    """Array-form all-to-all: `dimensions={d}` is both the split and the concat dimension, and the
    split count is the group size."""

    consumes = ("dimensions",)

    def lower(self, values: dict, info: Info) -> dict:
        # The tuple form (no dimensions=: operand j goes to the group's j-th process) is lowered on
        # the operands stacked along a new leading dimension (forms.py), so it splits dimension 0.
        d = IntegerAttr(int(_single(values["dimensions"])) if "dimensions" in values else 0, I64)
        return {"split_dimension": d, "concat_dimension": d,
                "split_count": IntegerAttr(int(info.group_size or 1), I64)}

    def raise_(self, attributes: dict, info: Info) -> dict:
        if "hlo.tuple_form" in attributes:
            return {}
        return {"dimensions": "{" + str(int(attributes["split_dimension"])) + "}"}


class PairsAdapter:
    """source_target_pairs={{0,1},{1,2}} → an Nx2 i64 DenseElements."""

    consumes = ("source_target_pairs",)

    def lower(self, values: dict, info: Info) -> dict:
        return {"source_target_pairs": i64_elements([list(p) for p in values.get("source_target_pairs", [])], 2)}

    def raise_(self, attributes: dict, info: Info) -> dict:
        pairs = np.asarray(attributes["source_target_pairs"].array).tolist()
        return {"source_target_pairs": "{" + ",".join(ints_text(p) for p in pairs) + "}"}


class AliasesAdapter:
    """`output_to_operand_aliasing={{0}: (0, {})}` → output_operand_aliases; always present, as
    the MLIR frontend fills it for custom_call."""

    consumes = ("output_to_operand_aliasing",)

    def lower(self, values: dict, info: Info) -> dict:
        aliases = tuple(values.get("output_to_operand_aliasing", ()))
        one_tuple = isinstance(info.result_type, TupleType) and len(info.result_type.types) == 1
        if one_tuple and aliases and all(a.output_tuple_indices[:1] == (0,) for a in aliases):
            # A one-element tuple result is unpacked into the op's one result, so {0, ...} of the
            # tuple (import_emit_stablehlo.hlo writes `(f32[2,3]) custom-call`, {0}) is {...} of it.
            return {"output_operand_aliases": ArrayAttr(
                dataclasses.replace(a, output_tuple_indices=a.output_tuple_indices[1:]) for a in aliases),
                "hlo.one_tuple_aliases": UNIT}
        return {"output_operand_aliases": ArrayAttr(aliases)}

    def raise_(self, attributes: dict, info: Info) -> dict:
        aliases = attributes.get("output_operand_aliases") or ()
        if not aliases:
            return {}
        if "hlo.one_tuple_aliases" in attributes:
            aliases = [dataclasses.replace(a, output_tuple_indices=(0, *a.output_tuple_indices)) for a in aliases]
        items = [f"{ints_text(a.output_tuple_indices)}: ({a.operand_index}, {ints_text(a.operand_tuple_indices)})"
                 for a in aliases]
        return {"output_to_operand_aliasing": "{" + ", ".join(items) + "}"}


_API_VERSIONS = {1: "API_VERSION_ORIGINAL", 2: "API_VERSION_STATUS_RETURNING",
                 3: "API_VERSION_STATUS_RETURNING_UNIFIED", 4: "API_VERSION_TYPED_FFI"}
API_VERSION = Kind("api_version", _same_value, lambda a: _API_VERSIONS[int(a)])
