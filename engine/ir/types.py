"""MLIR/StableHLO types as immutable, hashable values that print back to MLIR syntax.

Every type prints exactly as MLIR spells it (`str(t)`), so the printer, error messages and the UI
all share one spelling.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

import numpy as np

from .ml_types import finfo, ml_dtype
from .notation import attribute_text


class Type:
    """Base of all types. Subclasses are frozen dataclasses, so equal types compare and hash equal."""

    __slots__ = ()


# ---------------------------------------------------------------------------------------------
# Element types
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class IntegerType(Type):
    """`iN` (signless), `siN` or `uiN`. Signless integers other than i1 behave as signed."""

    width: int
    signedness: str = "signless"  # "signless" | "signed" | "unsigned"

    def __str__(self) -> str:
        prefix = {"signless": "i", "signed": "si", "unsigned": "ui"}[self.signedness]
        return f"{prefix}{self.width}"

    @property
    def is_bool(self) -> bool:
        return self.width == 1

    @property
    def is_unsigned(self) -> bool:
        return self.signedness == "unsigned"

    @property
    def numpy_dtype(self) -> np.dtype:
        if self.width == 1:
            return np.dtype(np.bool_)
        unsigned = self.signedness == "unsigned"
        table = _UNSIGNED_INTS if unsigned else _SIGNED_INTS
        try:
            return _storage(table, self.width)
        except KeyError:
            raise TypeError(f"no numpy storage for integer type {self}") from None

    @property
    def min_value(self) -> int:
        if self.width == 1 or self.is_unsigned:
            return 0
        return -(1 << (self.width - 1))

    @property
    def max_value(self) -> int:
        if self.width == 1:
            return 1
        if self.is_unsigned:
            return (1 << self.width) - 1
        return (1 << (self.width - 1)) - 1


_SIGNED_INTS: dict[int, np.dtype | str] = {
    2: "int2",
    4: "int4",
    8: np.dtype(np.int8),
    16: np.dtype(np.int16),
    32: np.dtype(np.int32),
    64: np.dtype(np.int64),
}
_UNSIGNED_INTS: dict[int, np.dtype | str] = {
    2: "uint2",
    4: "uint4",
    8: np.dtype(np.uint8),
    16: np.dtype(np.uint16),
    32: np.dtype(np.uint32),
    64: np.dtype(np.uint64),
}

# MLIR spelling -> numpy dtype, or the name of ml_dtypes' (made on first use, ml_types.py).
# tf32 has no numpy type; it is stored as float32.
_FLOAT_DTYPES: dict[str, np.dtype | str] = {
    "f4E2M1FN": "float4_e2m1fn",
    "f6E2M3FN": "float6_e2m3fn",
    "f6E3M2FN": "float6_e3m2fn",
    "f8E3M4": "float8_e3m4",
    "f8E4M3": "float8_e4m3",
    "f8E4M3FN": "float8_e4m3fn",
    "f8E4M3FNUZ": "float8_e4m3fnuz",
    "f8E4M3B11FNUZ": "float8_e4m3b11fnuz",
    "f8E5M2": "float8_e5m2",
    "f8E5M2FNUZ": "float8_e5m2fnuz",
    "f8E8M0FNU": "float8_e8m0fnu",
    "bf16": "bfloat16",
    "f16": np.dtype(np.float16),
    "tf32": np.dtype(np.float32),
    "f32": np.dtype(np.float32),
    "f64": np.dtype(np.float64),
}
FLOAT_TYPE_NAMES = tuple(_FLOAT_DTYPES)


def float_storage_names() -> dict[str, str]:
    """numpy's name of each float type's storage -> the type's MLIR spelling (tf32, stored as
    float32, left out), without making ml_dtypes' dtypes: each one's name is the name listed."""
    return {str(dtype): name for name, dtype in _FLOAT_DTYPES.items() if name != "tf32"}


def _storage(table: dict, key) -> np.dtype:
    """`table[key]` as a dtype, an ml_dtypes name made into its dtype (and kept) on first use."""
    dtype = table[key]
    if isinstance(dtype, str):
        dtype = table[key] = ml_dtype(dtype)
    return dtype


@dataclass(frozen=True, slots=True)
class FloatType(Type):
    name: str

    def __str__(self) -> str:
        return self.name

    @property
    def numpy_dtype(self) -> np.dtype:
        return _storage(_FLOAT_DTYPES, self.name)

    @property
    def bit_width(self) -> int:
        if self.name == "tf32":
            return 19
        return _float_bit_width(self.name)


def _float_bit_width(name: str) -> int:
    if name in ("f16", "bf16", "f32", "f64"):
        return int(name.lstrip("bf"))
    return int(name[1])  # f4E2M1FN, f6E3M2FN, f8E4M3FN, ...: the digit after 'f'


@dataclass(frozen=True, slots=True)
class ComplexType(Type):
    element: FloatType

    def __str__(self) -> str:
        return f"complex<{self.element}>"

    @property
    def numpy_dtype(self) -> np.dtype:
        return np.dtype(np.complex64) if self.element.name == "f32" else np.dtype(np.complex128)


@dataclass(frozen=True, slots=True)
class IndexType(Type):
    def __str__(self) -> str:
        return "index"

    @property
    def numpy_dtype(self) -> np.dtype:
        return np.dtype(np.int64)


@dataclass(frozen=True, slots=True)
class QuantizedType(Type):
    """`!quant.uniform<storage<min:max>:expressed[:axis], scale[:zero_point] | {s:zp, ...}>`."""

    storage: IntegerType
    expressed: FloatType
    scales: tuple[float, ...]
    zero_points: tuple[int, ...]
    quantized_dimension: Optional[int] = None  # None for per-tensor quantization
    storage_min: Optional[int] = None  # None: the storage type's full range
    storage_max: Optional[int] = None

    def __str__(self) -> str:
        # The quant dialect spells unsigned storage `u8` (and signed or signless `i8`).
        storage = f"u{self.storage.width}" if self.storage.signedness == "unsigned" else str(self.storage)
        if self.storage_min is not None or self.storage_max is not None:
            storage += f"<{self.effective_min}:{self.effective_max}>"
        head = f"{storage}:{self.expressed}"
        if self.quantized_dimension is not None:
            head += f":{self.quantized_dimension}"
            params = ",".join(
                _scale_zp(s, z) for s, z in zip(self.scales, self.zero_points)
            )
            return f"!quant.uniform<{head}, {{{params}}}>"
        return f"!quant.uniform<{head}, {_scale_zp(self.scales[0], self.zero_points[0])}>"

    @property
    def is_per_axis(self) -> bool:
        return self.quantized_dimension is not None

    @property
    def effective_min(self) -> int:
        return self.storage.min_value if self.storage_min is None else self.storage_min

    @property
    def effective_max(self) -> int:
        return self.storage.max_value if self.storage_max is None else self.storage_max

    @property
    def numpy_dtype(self) -> np.dtype:
        return self.storage.numpy_dtype


def _scale_zp(scale: float, zero_point: int) -> str:
    text = mlir_float(scale)
    return text if zero_point == 0 else f"{text}:{zero_point}"


def format_float(value: float) -> str:
    """Shortest text that reads back to the same double, always with a '.' or exponent."""
    text = repr(float(value))
    if text in ("inf", "-inf", "nan"):
        return text
    if "e" in text or "." in text:
        return text
    return text + ".0"


def mlir_float(value: float, element: "FloatType | None" = None) -> str:
    """A finite float as MLIR's printer writes it (AsmPrinter's printFloatValue): `1.000000e+01`
    (six decimals of scientific notation) when that reads back to the same value of `element`'s
    type (f64 if none), else APFloat's natural-precision form (`0.100000001`, `9.99999974E-6`),
    and if that has no point (`123456789`), the bit pattern in hexadecimal (`0x419D6F3454000000`)."""
    dtype = np.dtype(np.float64) if element is None else element.numpy_dtype
    if not math.isfinite(value):
        return _hex_bits(value, dtype)
    mantissa_bits = 53 if element is None else _mantissa_bits(element)
    scientific = _apfloat_text(value, 6, 0, mantissa_bits)
    if _reads_back(scientific, value, element):
        return scientific
    natural = _apfloat_text(value, 0, 3, mantissa_bits)
    if "." in natural:
        return natural
    return _hex_bits(value, dtype)


def _hex_bits(value: float, dtype: np.dtype) -> str:
    with np.errstate(over="ignore", invalid="ignore"):
        scalar = np.array(value).astype(dtype)
    bits = scalar.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[scalar.itemsize])
    return f"0x{int(bits):X}"


def _mantissa_bits(element: "FloatType") -> int:
    return int(finfo(element.numpy_dtype).nmant) + 1


def _reads_back(text: str, value: float, element: "FloatType | None") -> bool:
    if element is None:
        return float(text) == value
    dtype = element.numpy_dtype
    with np.errstate(over="ignore"):  # text past the type's range reads back as inf: not the same
        return bool(np.array(float(text)).astype(dtype) == np.array(value).astype(dtype))


def _apfloat_text(value: float, precision: int, max_padding: int, mantissa_bits: int) -> str:
    """LLVM's APFloat::toString(precision, max_padding, truncate_zero = precision == 0)."""
    import decimal

    truncate_zero = precision == 0
    sign = "-" if math.copysign(1.0, value) < 0 else ""
    if value == 0:
        if max_padding:
            return sign + "0"
        return sign + ("0.0E+0" if truncate_zero else "0." + "0" * max(precision, 1) + "e+00")
    if precision == 0:
        precision = 2 + mantissa_bits * 59 // 196
    exact = decimal.Decimal(abs(value))
    # Round the exact decimal expansion half up to `precision` significant digits, then drop
    # trailing zeros: `digits` times 10**`exp`.
    with decimal.localcontext() as context:
        context.prec = precision
        context.rounding = decimal.ROUND_HALF_UP
        rounded = +exact
    sign_bit, digit_tuple, exp = rounded.as_tuple()
    digits = "".join(map(str, digit_tuple)).rstrip("0") or "0"
    exp += len(digit_tuple) - len(digits)
    count = len(digits)
    if not max_padding:
        use_scientific = True
    elif exp >= 0:
        use_scientific = exp > max_padding or count + exp > precision
    else:
        most_significant = exp + count - 1
        use_scientific = most_significant < 0 and -most_significant > max_padding
    if use_scientific:
        exp += count - 1
        text = digits[0] + "." + ("0" if count == 1 and truncate_zero else digits[1:])
        if not truncate_zero and precision > count - 1:
            text += "0" * (precision - count + 1)
        text += ("E" if truncate_zero else "e") + ("+" if exp >= 0 else "-")
        power = str(abs(exp))
        if not truncate_zero and len(power) < 2:
            power = "0" + power
        return sign + text + power
    if exp >= 0:
        return sign + digits + "0" * exp
    whole = exp + count
    if whole > 0:
        return sign + digits[:whole] + "." + digits[whole:]
    return sign + "0." + "0" * (-whole) + digits


ElementType = IntegerType | FloatType | ComplexType | IndexType | QuantizedType


# ---------------------------------------------------------------------------------------------
# Container types
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TensorType(Type):
    """`tensor<2x?x3xf32>`; shape None means unranked (`tensor<*xf32>`), a dim None means `?`.

    `encoding` keeps an attribute such as `#stablehlo.type_extensions<bounds = [4, ?]>`.
    """

    shape: Optional[tuple[Optional[int], ...]]
    element: Type
    encoding: object = None

    def __str__(self) -> str:
        return _tensor_text(self)

    @property
    def rank(self) -> int:
        if self.shape is None:
            raise TypeError(f"{self} is unranked")
        return len(self.shape)

    @property
    def is_static(self) -> bool:
        return self.shape is not None and all(d is not None for d in self.shape)

    @property
    def num_elements(self) -> int:
        if not self.is_static:
            raise TypeError(f"{self} has no static number of elements")
        n = 1
        for d in self.shape:
            n *= d
        return n

    @property
    def numpy_dtype(self) -> np.dtype:
        return self.element.numpy_dtype

    def with_shape(self, shape) -> "TensorType":
        return TensorType(tuple(shape), self.element, None)

    def with_element(self, element: Type) -> "TensorType":
        return TensorType(self.shape, element, self.encoding)


def _tensor_text(t: TensorType) -> str:
    if t.shape is None:
        body = f"*x{t.element}"
    else:
        dims = "".join(("?" if d is None else str(d)) + "x" for d in t.shape)
        body = f"{dims}{t.element}"
    if t.encoding is not None:
        body += f", {attribute_text(t.encoding)}"
    return f"tensor<{body}>"


@dataclass(frozen=True, slots=True)
class TokenType(Type):
    def __str__(self) -> str:
        return "!stablehlo.token"


@dataclass(frozen=True, slots=True)
class FutureType(Type):
    """`!stablehlo.future<T1, ...>`: what `stablehlo.async_start` returns and `async_done` unwraps
    (spec "Types": FutureType ::= 'future' '<' TensorType {',' TensorType} '>')."""

    types: tuple[Type, ...]

    def __str__(self) -> str:
        return f"!stablehlo.future<{', '.join(map(str, self.types))}>"


@dataclass(frozen=True, slots=True)
class TupleType(Type):
    types: tuple[Type, ...]

    def __str__(self) -> str:
        return f"tuple<{', '.join(map(str, self.types))}>"


@dataclass(frozen=True, slots=True)
class FunctionType(Type):
    inputs: tuple[Type, ...]
    results: tuple[Type, ...]

    def __str__(self) -> str:
        return f"({', '.join(map(str, self.inputs))}) -> {format_result_types(self.results)}"


@dataclass(frozen=True, slots=True)
class NoneType(Type):
    def __str__(self) -> str:
        return "none"


@dataclass(frozen=True, slots=True)
class OpaqueType(Type):
    """A type of another dialect that hlodbg keeps verbatim (e.g. `!sdy.something<...>`)."""

    text: str

    def __str__(self) -> str:
        return self.text


def format_result_types(types) -> str:
    """Result types as MLIR prints them after `->`: a lone non-function type goes unparenthesised."""
    types = tuple(types)
    if len(types) == 1 and not isinstance(types[0], FunctionType):
        return str(types[0])
    return f"({', '.join(map(str, types))})"


def element_type(t: Type) -> Type:
    return t.element if isinstance(t, TensorType) else t


def is_float(t: Type) -> bool:
    return isinstance(element_type(t), FloatType)


def is_complex(t: Type) -> bool:
    return isinstance(element_type(t), ComplexType)


def is_integer(t: Type) -> bool:
    e = element_type(t)
    return isinstance(e, IntegerType) and e.width != 1


def is_bool(t: Type) -> bool:
    e = element_type(t)
    return isinstance(e, IntegerType) and e.width == 1


def is_quantized(t: Type) -> bool:
    return isinstance(element_type(t), QuantizedType)


# Parsed element types are shared, so the hot parse path builds each spelling once.
_ELEMENT_CACHE: dict[str, Type] = {}


def builtin_element_type(name: str) -> Optional[Type]:
    """Element type for a bare spelling such as `f32`, `ui8`, `index`, or None if it is not one."""
    cached = _ELEMENT_CACHE.get(name)
    if cached is not None:
        return cached
    result: Optional[Type] = None
    if name in _FLOAT_DTYPES:
        result = FloatType(name)
    elif name == "index":
        result = IndexType()
    elif name == "none":
        result = NoneType()
    else:
        for prefix, signedness in (("si", "signed"), ("ui", "unsigned"), ("i", "signless")):
            if name.startswith(prefix) and name[len(prefix):].isdigit():
                result = IntegerType(int(name[len(prefix):]), signedness)
                break
    if result is not None:
        _ELEMENT_CACHE[name] = result
    return result
