"""Attribute values, decoded into Python and numpy values that still print back exactly.

Plain Python values stand for the plain attributes: `bool` (true/false), `str` (strings), `dict`
(dictionaries), `Type` objects (type attributes). Integers and floats are `int`/`float` subclasses
that remember their MLIR type, so evaluators use them as numbers and the printer writes `2 : i32`.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, fields
from typing import Any, Optional

import numpy as np

from .quoting import quote_string
from .sdy_attributes import (  # noqa: F401  (Shardy's attributes, read from here too)
    SdyAxisRef,
    SdyDimSharding,
    SdyManualAxes,
    SdyMesh,
    SdySharding,
    SdyShardingPerValue,
)
from .types import ComplexType, FloatType, IntegerType, QuantizedType, TensorType, Type, format_float, mlir_float

I64 = IntegerType(64)
F64 = FloatType("f64")


class IntegerAttr(int):
    """An integer attribute: an `int` that remembers its type (`i64` when the text gave none)."""

    type: Type

    def __new__(cls, value: int, type: Type = I64):
        self = super().__new__(cls, value)
        self.type = type
        return self

    def __repr__(self) -> str:
        return f"{int(self)} : {self.type}"

    def __reduce__(self):
        return (IntegerAttr, (int(self), self.type))


class FloatAttr(float):
    """A float attribute: a `float` that remembers its type (`f64` when the text gave none)."""

    type: Type

    def __new__(cls, value: float, type: Type = F64):
        self = super().__new__(cls, value)
        self.type = type
        return self

    def __repr__(self) -> str:
        return f"{mlir_float(float(self), self.type if isinstance(self.type, FloatType) else None) if math.isfinite(self) else format_float(self)} : {self.type}"

    def __reduce__(self):
        return (FloatAttr, (float(self), self.type))


class UnitAttr:
    """The `unit` attribute: present or absent, no value (e.g. `use_global_device_ids`)."""

    _instance = None

    def __new__(cls):
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "unit"

    def __reduce__(self):
        return (UnitAttr, ())


UNIT = UnitAttr()


class ArrayAttr(tuple):
    """`[a, b, ...]`: an array of attributes."""

    def __repr__(self) -> str:
        return f"ArrayAttr({list(self)!r})"


class DenseArray(tuple):
    """`array<i64: 1, 2>`: a tuple of Python numbers that remembers its element type."""

    element: str

    def __new__(cls, values, element: str = "i64"):
        self = super().__new__(cls, values)
        self.element = element
        return self

    def __repr__(self) -> str:
        return f"array<{self.element}: {', '.join(map(str, self))}>"

    def __reduce__(self):
        return (DenseArray, (tuple(self), self.element))


class EnumAttr(str):
    """An enum case such as `GE` of `#stablehlo<comparison_direction GE>`; compares as its name."""

    dialect: str
    kind: str

    def __new__(cls, value: str, kind: str, dialect: str = "stablehlo"):
        self = super().__new__(cls, value)
        self.kind = kind
        self.dialect = dialect
        return self

    def __repr__(self) -> str:
        return f"#{self.dialect}<{self.kind} {self!s}>"

    def __reduce__(self):
        return (EnumAttr, (str(self), self.kind, self.dialect))


@dataclass(frozen=True)
class SymbolRef:
    """`@name` or `@root::@nested`."""

    name: str
    nested: tuple[str, ...] = ()

    def __str__(self) -> str:
        return "".join(["@" + _symbol_text(self.name), *("::@" + _symbol_text(n) for n in self.nested)])


def _symbol_text(name: str) -> str:
    import re

    return name if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_$.]*", name) else quote_string(name)


@dataclass(frozen=True, eq=False)
class DenseElements:
    """`dense<...> : tensor<...>` (or `dense_resource<...>`), decoded into a numpy array.

    For quantized element types `array` holds the storage integers. `resource` names the blob of
    a `dense_resource` so the printer can write the same form back.
    """

    type: TensorType
    array: np.ndarray
    resource: Optional[str] = None

    @property
    def is_splat(self) -> bool:
        a = self.array
        if a.size <= 1 or not any(a.strides):  # a splat as parsed: one value broadcast (strides 0)
            return True
        flat = a.reshape(-1)
        first = flat[0]
        if a.dtype.kind == "f" or a.dtype.kind == "c" or a.dtype.kind == "V":
            return bool(np.all(flat.view(np.uint8).reshape(a.size, -1) == flat[:1].view(np.uint8)))
        return bool(np.all(flat == first))

    def __repr__(self) -> str:
        return f"DenseElements({self.type}, shape={self.array.shape})"


class ElidedElements(DenseElements):
    """A constant whose elements the text left out (XLA prints large literals as `{...}`).

    It has a type like any dense constant, so printing, graph labels and memory analysis work;
    its elements are unknown, so `.array` refuses with a message saying which constant it is and
    how to get a module with full constants. MLIR text spells it `dense_resource<__elided__>`,
    MLIR's own spelling for a blob left out of the text.
    """

    RESOURCE = "__elided__"

    def __init__(self, type: TensorType, pos: Any = None, name: str = ""):
        object.__setattr__(self, "type", type)
        object.__setattr__(self, "resource", self.RESOURCE)
        object.__setattr__(self, "pos", pos)
        object.__setattr__(self, "name", name)

    @property
    def array(self) -> np.ndarray:
        from .errors import ExecutionError

        which = f"constant {self.name}" if self.name else "this constant"
        raise ExecutionError(
            f"the elements of {which} ({self.type}) were elided from the text ({{...}}), so it cannot be run",
            self.pos,
            ("get a module with full constants: dump it with XLA_FLAGS=--xla_dump_large_constants, or print "
             "it with HloPrintOptions.short_parsable(); or run with --fill-elided random to use random values",))

    @property
    def is_splat(self) -> bool:
        return False

    def __repr__(self) -> str:
        return f"ElidedElements({self.type}, name={self.name!r})"


@dataclass(frozen=True)
class OpaqueAttr:
    """An attribute of a dialect hlodbg does not model, kept as text (e.g. `#foo.bar<...>`), its
    layout whitespace made MLIR's (one space, none inside brackets), as MLIR reprints it."""

    text: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "text", compact_attribute_text(self.text))

    def __str__(self) -> str:
        return self.text


def compact_attribute_text(text: str) -> str:
    """`#x<\n  a = [1, 2],\n  b = 3\n>` -> `#x<a = [1, 2], b = 3>`; string literals untouched."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            end = i + 1
            while end < n and text[end] != '"':
                end += 2 if text[end] == "\\" else 1
            out.append(text[i:end + 1])
            i = end + 1
            continue
        if c.isspace():
            end = i
            while end < n and text[end].isspace():
                end += 1
            before = out[-1][-1] if out and out[-1] else ""
            after = text[end] if end < n else ""
            if before and after and before not in "<[({" and after not in ">]),}":
                out.append(" ")
            i = end
            continue
        out.append(c)
        i += 1
    return "".join(out)


# ---------------------------------------------------------------------------------------------
# Structured StableHLO attributes: one dataclass per `#stablehlo.name<key = value, ...>`.
# Fields hold tuples of ints (or nested structured values); an empty tuple is not printed.
# ---------------------------------------------------------------------------------------------


class StructAttr:
    """Base for `#dialect.mnemonic<k = v, ...>` attributes; subclasses list their fields in order."""

    mnemonic: str = ""
    dialect: str = "stablehlo"
    always_print: tuple[str, ...] = ()
    omitted_when_zero: tuple[str, ...] = ()

    @classmethod
    def from_params(cls, params: dict[str, Any]) -> "StructAttr":
        names = {f.name for f in fields(cls)}
        unknown = set(params) - names
        if unknown:
            raise KeyError(", ".join(sorted(unknown)))
        kwargs = {}
        for f in fields(cls):
            if f.name in params:
                value = params[f.name]
                if isinstance(value, (ArrayAttr, list)):
                    value = tuple(value)
                if isinstance(value, tuple) and all(isinstance(v, int) for v in value):
                    value = tuple(int(v) for v in value)
                elif isinstance(value, IntegerAttr) and not isinstance(value, bool):
                    value = int(value)
                kwargs[f.name] = value
        return cls(**kwargs)

    def params(self) -> list[tuple[str, Any]]:
        out = []
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name not in self.always_print and (value == () or value is None):
                continue
            if f.name in self.omitted_when_zero and value == 0:
                continue
            out.append((f.name, value))
        return out


@dataclass(frozen=True)
class GatherDimensionNumbers(StructAttr):
    mnemonic = "gather"
    offset_dims: tuple[int, ...] = ()
    collapsed_slice_dims: tuple[int, ...] = ()
    operand_batching_dims: tuple[int, ...] = ()
    start_indices_batching_dims: tuple[int, ...] = ()
    start_index_map: tuple[int, ...] = ()
    index_vector_dim: int = 0
    omitted_when_zero = ("index_vector_dim",)  # as StableHLO's printStruct prints it


@dataclass(frozen=True)
class ScatterDimensionNumbers(StructAttr):
    mnemonic = "scatter"
    update_window_dims: tuple[int, ...] = ()
    inserted_window_dims: tuple[int, ...] = ()
    input_batching_dims: tuple[int, ...] = ()
    scatter_indices_batching_dims: tuple[int, ...] = ()
    scatter_dims_to_operand_dims: tuple[int, ...] = ()
    index_vector_dim: int = 0
    omitted_when_zero = ("index_vector_dim",)  # as StableHLO's printStruct prints it


@dataclass(frozen=True)
class DotDimensionNumbers(StructAttr):
    mnemonic = "dot"
    lhs_batching_dimensions: tuple[int, ...] = ()
    rhs_batching_dimensions: tuple[int, ...] = ()
    lhs_contracting_dimensions: tuple[int, ...] = ()
    rhs_contracting_dimensions: tuple[int, ...] = ()


@dataclass(frozen=True)
class ConvDimensionNumbers(StructAttr):
    """Convolution layout: which dimension of each tensor is batch, feature and spatial."""

    mnemonic = "conv"
    input_batch_dimension: int = 0
    input_feature_dimension: int = 1
    input_spatial_dimensions: tuple[int, ...] = ()
    kernel_input_feature_dimension: int = 0
    kernel_output_feature_dimension: int = 1
    kernel_spatial_dimensions: tuple[int, ...] = ()
    output_batch_dimension: int = 0
    output_feature_dimension: int = 1
    output_spatial_dimensions: tuple[int, ...] = ()
    always_print = (
        "input_batch_dimension",
        "input_feature_dimension",
        "input_spatial_dimensions",
        "kernel_input_feature_dimension",
        "kernel_output_feature_dimension",
        "kernel_spatial_dimensions",
        "output_batch_dimension",
        "output_feature_dimension",
        "output_spatial_dimensions",
    )


@dataclass(frozen=True)
class ChannelHandle(StructAttr):
    mnemonic = "channel_handle"
    handle: int = 0
    type: int = 0
    always_print = ("handle", "type")


@dataclass(frozen=True)
class OutputOperandAlias(StructAttr):
    mnemonic = "output_operand_alias"
    output_tuple_indices: tuple[int, ...] = ()
    operand_index: int = 0
    operand_tuple_indices: tuple[int, ...] = ()
    always_print = ("output_tuple_indices", "operand_index", "operand_tuple_indices")


@dataclass(frozen=True)
class DotAlgorithm(StructAttr):
    mnemonic = "dot_algorithm"
    lhs_precision_type: Any = None
    rhs_precision_type: Any = None
    accumulation_type: Any = None
    lhs_component_count: int = 1
    rhs_component_count: int = 1
    num_primitive_operations: int = 1
    allow_imprecise_accumulation: bool = False
    always_print = (
        "lhs_precision_type",
        "rhs_precision_type",
        "accumulation_type",
        "lhs_component_count",
        "rhs_component_count",
        "num_primitive_operations",
        "allow_imprecise_accumulation",
    )


@dataclass(frozen=True)
class ResultAccuracy(StructAttr):
    """Requested accuracy of a transcendental op: tolerances and a mode (DEFAULT, HIGHEST, TOLERANCE)."""

    mnemonic = "result_accuracy"
    atol: float = 0.0
    rtol: float = 0.0
    ulps: int = 0
    mode: Any = None
    always_print = ("atol", "rtol", "ulps", "mode")


@dataclass(frozen=True)
class TypeExtensions(StructAttr):
    """Bounds of dynamic dimensions: `#stablehlo.type_extensions<bounds = [4, ?]>` (None is `?`)."""

    mnemonic = "type_extensions"
    bounds: tuple[Optional[int], ...] = ()
    always_print = ("bounds",)


@dataclass(frozen=True)
class ReplicaGroupMeshAxes(StructAttr):
    """Replica groups named by mesh axes rather than listed device by device."""

    mnemonic = "replica_group_mesh_axes"
    mesh_name: Any = None  # the RFC's spelling
    axes: tuple = ()
    mesh: Any = None  # StableHLO's own tests spell it `mesh = @m`
    always_print = ("axes",)

    def params(self) -> list[tuple[str, Any]]:
        # StableHLO declares `mesh` before `axes` and prints them in that order.
        found = super().params()
        return sorted(found, key=lambda item: item[0] != "mesh")


STRUCT_ATTRS: dict[str, type[StructAttr]] = {
    f"{cls.dialect}.{cls.mnemonic}": cls
    for cls in (
        GatherDimensionNumbers,
        ScatterDimensionNumbers,
        DotDimensionNumbers,
        ConvDimensionNumbers,
        ChannelHandle,
        OutputOperandAlias,
        DotAlgorithm,
        ResultAccuracy,
        TypeExtensions,
        ReplicaGroupMeshAxes,
    )
}


# ---------------------------------------------------------------------------------------------
# Printing
# ---------------------------------------------------------------------------------------------


def attribute_key(attr: Any):
    """A hashable key that is equal exactly when two attributes are the same MLIR attribute."""
    if isinstance(attr, bool):
        return ("bool", attr)
    if isinstance(attr, IntegerAttr):
        return ("int", int(attr), attr.type)
    if isinstance(attr, FloatAttr):
        return ("float", np.float64(attr).tobytes(), attr.type)
    if isinstance(attr, EnumAttr):
        return ("enum", attr.dialect, attr.kind, str(attr))
    if isinstance(attr, str):
        return ("str", attr)
    if isinstance(attr, DenseArray):
        return ("darray", attr.element, tuple(attr))
    if isinstance(attr, ElidedElements):
        return ("elided", attr.type, attr.name)
    if isinstance(attr, DenseElements):
        if attr.is_splat:  # without materialising a broadcast splat
            return ("dense", attr.type, attr.array.shape, "splat", attr.array.reshape(-1)[:1].tobytes())
        a = np.ascontiguousarray(attr.array)
        return ("dense", attr.type, a.shape, a.tobytes())
    if isinstance(attr, dict):
        return ("dict", tuple((k, attribute_key(v)) for k, v in attr.items()))
    if isinstance(attr, (tuple, list)):
        return (type(attr).__name__, tuple(attribute_key(a) for a in attr))
    return ("other", type(attr).__name__, attr)


def element_type_of(t: Type) -> Type:
    return t.element if isinstance(t, TensorType) else t


__all__ = [
    "ArrayAttr",
    "ChannelHandle",
    "ComplexType",
    "ConvDimensionNumbers",
    "DenseArray",
    "DenseElements",
    "DotAlgorithm",
    "DotDimensionNumbers",
    "ElidedElements",
    "EnumAttr",
    "FloatAttr",
    "GatherDimensionNumbers",
    "IntegerAttr",
    "OpaqueAttr",
    "OutputOperandAlias",
    "QuantizedType",
    "ResultAccuracy",
    "ScatterDimensionNumbers",
    "SymbolRef",
    "TypeExtensions",
    "UNIT",
    "UnitAttr",
    "quote_string",
]


# `#chlo.ragged_dot<lhs_batching_dimensions = [0], ...>`: the fields of chlo.ragged_dot's
# dimension numbers. The attribute is kept opaque; this reads its lists of dimensions.
RAGGED_DOT_FIELDS = (
    "lhs_batching_dimensions",
    "rhs_batching_dimensions",
    "lhs_contracting_dimensions",
    "rhs_contracting_dimensions",
    "lhs_ragged_dimensions",
    "rhs_group_dimensions",
)


def ragged_dot_dimension_numbers(attr: Any) -> dict[str, tuple[int, ...]]:
    """Every field of RAGGED_DOT_FIELDS (absent ones empty), from the opaque attribute, a
    dictionary or an object with those fields."""
    if isinstance(attr, OpaqueAttr):
        fields = {
            name: tuple(int(v) for v in values.replace(" ", "").split(",") if v)
            for name, values in re.findall(r"(\w+)\s*=\s*\[([-\d,\s]*)\]", attr.text)
        }
    elif isinstance(attr, dict):
        fields = {k: tuple(int(v) for v in attr[k]) for k in attr}
    else:
        fields = {k: tuple(getattr(attr, k, ()) or ()) for k in RAGGED_DOT_FIELDS}
    return {k: fields.get(k, ()) for k in RAGGED_DOT_FIELDS}
