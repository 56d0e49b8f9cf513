"""The MLIR spelling of attribute values: what `attr-dict`s, op formats and `str(type)` print.

The IR (engine/ir) does not know any notation; this module registers itself as the IR's
notation for attributes (ir/notation.py), so `str()` of a type with an encoding or of a location
with metadata prints MLIR wherever it is asked for.
"""
from __future__ import annotations

import math
import re
from typing import Any

from ...ir import notation
from ...ir.attributes import (
    ArrayAttr,
    ConvDimensionNumbers,
    DenseArray,
    DenseElements,
    EnumAttr,
    FloatAttr,
    IntegerAttr,
    OpaqueAttr,
    SdyManualAxes,
    SdyMesh,
    SdySharding,
    SdyShardingPerValue,
    StructAttr,
    SymbolRef,
    TypeExtensions,
    UnitAttr,
    quote_string,
)
from ...ir.types import FloatType, IntegerType, Type, mlir_float
from .dense import format_dense, format_float_element
from .dialect_attrs import format_conv_dims


def format_attribute(attr: Any) -> str:
    """MLIR spelling of an attribute value, as it stands in an attribute dictionary."""
    if attr is True:
        return "true"
    if attr is False:
        return "false"
    if isinstance(attr, IntegerAttr):
        if isinstance(attr.type, IntegerType) and attr.type.width == 1:
            return "true" if attr else "false"
        return f"{int(attr)} : {attr.type}"
    if isinstance(attr, FloatAttr):
        return f"{_float_attr_text(attr)} : {attr.type}"
    if isinstance(attr, str):
        if isinstance(attr, EnumAttr):
            return format_enum(attr)
        return quote_string(attr)
    if isinstance(attr, UnitAttr):
        return "unit"
    if isinstance(attr, DenseArray):
        if not attr:
            return f"array<{attr.element}>"
        return f"array<{attr.element}: {', '.join(_dense_array_item(v, attr.element) for v in attr)}>"
    if isinstance(attr, ArrayAttr):
        return "[" + ", ".join(_array_element(a) for a in attr) + "]"
    if isinstance(attr, dict):
        return format_attr_dict(attr)
    if isinstance(attr, DenseElements):
        return format_dense(attr)
    if isinstance(attr, StructAttr):
        return format_struct(attr)
    if isinstance(attr, (SymbolRef, Type, OpaqueAttr, SdySharding, SdyMesh, SdyShardingPerValue, SdyManualAxes)):
        return str(attr)
    if isinstance(attr, int):
        return f"{attr} : i64"
    if isinstance(attr, float):
        return f"{mlir_float(attr)} : f64"
    if isinstance(attr, (tuple, list)):
        return "[" + ", ".join(_array_element(a) for a in attr) + "]"
    raise TypeError(f"cannot print attribute {attr!r}")


def _array_element(attr: Any) -> str:
    """An array element: MLIR leaves out the type of an i64 integer or f64 float there (`[0, 1]`),
    the types a bare number reads as."""
    if isinstance(attr, bool) or (isinstance(attr, IntegerAttr) and str(attr.type) != "i64"):
        return format_attribute(attr)
    if isinstance(attr, int):
        return str(int(attr))
    if isinstance(attr, FloatAttr) and str(attr.type) != "f64":
        return format_attribute(attr)
    if isinstance(attr, float):
        return _float_text(float(attr), None) if math.isfinite(attr) else format_attribute(attr).split(" : ")[0]
    return format_attribute(attr)


def _float_attr_text(attr: FloatAttr) -> str:
    return _float_text(float(attr), attr.type if isinstance(attr.type, FloatType) else None)


def _float_text(value: float, element) -> str:
    return format_float_element(value, element) if element is not None else mlir_float(value)


def _dense_array_item(value, element: str) -> str:
    if element == "i1":
        return "true" if value else "false"
    if element.startswith("f") or element == "bf16":
        return _float_text(float(value), FloatType(element))
    return str(int(value))


def format_enum(attr: EnumAttr) -> str:
    if attr.kind.startswith("."):
        # Attributes such as #stablehlo.result_accuracy_mode<DEFAULT> spell the kind after a dot.
        return f"#{attr.dialect}{attr.kind}<{attr!s}>"
    return f"#{attr.dialect}<{attr.kind} {attr!s}>"


def format_struct(attr: StructAttr) -> str:
    if isinstance(attr, TypeExtensions):
        return "#stablehlo.bounds<" + ", ".join("?" if b is None else str(b) for b in attr.bounds) + ">"
    if isinstance(attr, ConvDimensionNumbers):
        return f"#stablehlo.conv<{format_conv_dims(attr)}>"
    return f"#{attr.dialect}.{attr.mnemonic}<{format_struct_params(attr)}>"


def format_struct_params(attr: StructAttr) -> str:
    parts = []
    for name, value in attr.params():
        parts.append(f"{name} = {_format_param(value)}")
    return ", ".join(parts)


def _format_param(value: Any) -> str:
    if value is None:
        return "?"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, tuple):
        return "[" + ", ".join(_format_param(v) for v in value) + "]"
    if isinstance(value, EnumAttr):
        return format_enum(value)
    if isinstance(value, float) and not isinstance(value, FloatAttr):
        return mlir_float(value)
    if isinstance(value, FloatAttr):
        return _float_attr_text(value)
    if isinstance(value, IntegerAttr):
        return str(int(value))
    if isinstance(value, int):
        return str(value)
    return format_attribute(value)


_BARE_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_$.]*")


def format_attr_key(name: str) -> str:
    return name if _BARE_KEY.fullmatch(name) else quote_string(name)


def format_attr_dict(attrs: dict) -> str:
    """`{a = 1, b}`, sorted by name as MLIR keeps (and prints) every attribute dictionary."""
    parts = []
    for name, value in sorted(attrs.items()):
        if isinstance(value, UnitAttr):
            parts.append(format_attr_key(name))
        else:
            parts.append(f"{format_attr_key(name)} = {format_attribute(value)}")
    return "{" + ", ".join(parts) + "}"


notation.use_attribute_printer(format_attribute)

__all__ = ["format_attr_dict", "format_attr_key", "format_attribute", "format_enum", "format_struct", "format_struct_params"]
