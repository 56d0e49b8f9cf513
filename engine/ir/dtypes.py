"""numpy dtypes for StableHLO element types, and the rules evaluators share for using them.

Storage: every tensor is a numpy array whose dtype is exactly its element type's (ml_dtypes for
bf16, the f8/f6/f4 family and int2/int4/uint2/uint4; quantized tensors hold their storage
integers). Arithmetic: floats narrower than f32 are computed in f32 and rounded once to the
result type, as XLA's CPU backend does; 2- and 4-bit integers are computed in a wide integer type
and wrapped back to their width.
"""
from __future__ import annotations

import math
from typing import Any, Optional

import numpy as np

from .ml_types import finfo, is_bfloat16, ml_dtype
from .types import (
    ComplexType,
    FloatType,
    FutureType,
    IndexType,
    IntegerType,
    QuantizedType,
    TensorType,
    TokenType,
    TupleType,
    Type,
)

F32 = np.dtype(np.float32)
BOOL = np.dtype(np.bool_)

_NARROW_INTS: dict[np.dtype, tuple[int, bool]] = {}  # filled on first use: ml_dtypes loads late (ml_types.py)


def _narrow_int(dtype: Any) -> Optional[tuple[int, bool]]:
    """(width, signed) of ml_dtypes' int2/int4/uint2/uint4, None for any other dtype (only a
    dtype of kind V can be one: ml_dtypes is not imported for the others)."""
    if getattr(dtype, "kind", None) != "V":
        return None
    if not _NARROW_INTS:
        _NARROW_INTS.update({ml_dtype("int2"): (2, True), ml_dtype("int4"): (4, True),
                             ml_dtype("uint2"): (2, False), ml_dtype("uint4"): (4, False)})
    return _NARROW_INTS.get(dtype)


class Token:
    """The value of `!stablehlo.token`: carries no data, only ordering."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "token"


TOKEN = Token()


class Future(tuple):
    """The value of `!stablehlo.future<T...>`: the values its asynchronous op produced. The
    interpreter completes the op at `async_start` (the spec lets a backend run it synchronously),
    so `async_done` only unwraps them."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"future{tuple.__repr__(self)}"


def element_dtype(t: Type) -> np.dtype:
    """The numpy dtype a tensor of type `t` is stored in (storage type for quantized)."""
    if isinstance(t, TensorType):
        t = t.element
    if isinstance(t, QuantizedType):
        return t.storage.numpy_dtype
    return t.numpy_dtype


def is_float_dtype(dtype: np.dtype) -> bool:
    return dtype.kind == "f" or (dtype.kind == "V" and _narrow_int(dtype) is None and _is_ml_float(dtype))


def _is_ml_float(dtype: np.dtype) -> bool:
    try:
        finfo(dtype)
        return True
    except (ValueError, TypeError):
        return False


def is_narrow_float(dtype: np.dtype) -> bool:
    """bf16, f16 and the f8/f6/f4 types: computed in f32, rounded once to their own type."""
    return dtype.itemsize < 4 and _narrow_int(dtype) is None and dtype.kind not in "iub" and dtype != BOOL


def is_narrow_int(dtype: np.dtype) -> bool:
    return _narrow_int(dtype) is not None


def compute_dtype(dtype: np.dtype) -> np.dtype:
    """The dtype arithmetic on `dtype` values is carried out in (remembered per dtype: every
    evaluator asks, a program has few dtypes, and small ops pay the question in full)."""
    try:
        return _COMPUTE_DTYPES[dtype]
    except (KeyError, TypeError):  # TypeError: something unhashable passed as a dtype
        pass
    if _narrow_int(dtype) is not None:
        computed = np.dtype(np.int32)
    elif is_narrow_float(dtype):
        computed = F32
    else:
        computed = dtype
    if isinstance(dtype, np.dtype):
        _COMPUTE_DTYPES[dtype] = computed
    return computed


_COMPUTE_DTYPES: dict[np.dtype, np.dtype] = {}


def widen(array: np.ndarray) -> np.ndarray:
    """`array` in its compute dtype (a no-op view for f32/f64/i32/... arrays)."""
    target = compute_dtype(array.dtype)
    return array if target == array.dtype else array.astype(target)


def narrow(array: Any, dtype: np.dtype) -> np.ndarray:
    """Round or wrap a computed array back to `dtype` (once), keeping 0-d results as arrays."""
    array = np.asarray(array)
    if array.dtype == dtype:
        return array
    info = _narrow_int(dtype)
    if info is not None and array.dtype.kind in "iu":
        array = wrap_integer(array.astype(np.int64), *info)
    return array.astype(dtype)


def wrap_integer(values: np.ndarray, width: int, signed: bool) -> np.ndarray:
    """Two's complement wrap-around of int64 `values` to `width` bits."""
    mask = (1 << width) - 1
    values = values & mask
    if signed:
        values = np.where(values >= (1 << (width - 1)), values - (1 << width), values)
    return values


def integer_bounds(dtype: np.dtype) -> tuple[int, int]:
    info = _narrow_int(dtype)
    if info is not None:
        width, signed = info
        return (-(1 << (width - 1)), (1 << (width - 1)) - 1) if signed else (0, (1 << width) - 1)
    i = np.iinfo(dtype)
    return int(i.min), int(i.max)


def bit_width(dtype: np.dtype) -> int:
    info = _narrow_int(dtype)
    if info is not None:
        return info[0]
    if dtype == BOOL:
        return 1
    if dtype.itemsize == 1 and dtype.kind not in "iu":
        try:
            return int(finfo(dtype).bits)
        except (ValueError, TypeError):
            pass
    return dtype.itemsize * 8


def as_value(data: Any, t: Type) -> Any:
    """Coerce user data (a numpy array, list or scalar) to a value of type `t`, or raise ValueError."""
    if data.__class__ is np.ndarray and t.__class__ is TensorType and t.shape is not None \
            and not isinstance(t.element, QuantizedType) and data.dtype == t.element.numpy_dtype \
            and data.shape == tuple(t.shape):
        return data  # the usual argument: an array of the very dtype and static shape (checked below otherwise)
    if isinstance(t, TokenType):
        return TOKEN
    if isinstance(t, FutureType):
        if not isinstance(data, (tuple, list)) or len(data) != len(t.types):
            raise ValueError(f"expected a tuple of {len(t.types)} values for {t}")
        return Future(as_value(d, et) for d, et in zip(data, t.types))
    if isinstance(t, TupleType):
        if not isinstance(data, (tuple, list)) or len(data) != len(t.types):
            raise ValueError(f"expected a tuple of {len(t.types)} values for {t}")
        return tuple(as_value(d, et) for d, et in zip(data, t.types))
    if not isinstance(t, TensorType):
        raise ValueError(f"cannot build a value of type {t}")
    dtype = element_dtype(t)
    try:
        array = np.asarray(data)
    except (ValueError, TypeError):  # ragged nesting, objects numpy cannot hold in one array
        raise ValueError(f"expected {t} but got {type(data).__name__} data that is not one rectangular array "
                         "of numbers") from None
    unusable = not_numbers(array.dtype)
    if unusable:
        raise ValueError(f"expected {t} but got {unusable}; hlodbg takes arrays of numbers")
    if array.dtype != dtype:
        if array.dtype.kind == "f" and dtype.kind in "iub" and not isinstance(t.element, QuantizedType):
            raise ValueError(f"expected {t} but got floating-point data ({array.dtype})")
        if array.dtype.kind == "c" and dtype.kind != "c":
            raise ValueError(f"expected {t} but got complex data ({array.dtype})")
        array = _cast_fitting(array, dtype, t)
    if t.shape is not None:
        shape = tuple(t.shape)
        if any(d is None or d < 0 for d in shape):
            if array.ndim != len(shape) or any(d is not None and d >= 0 and d != a for d, a in zip(shape, array.shape)):
                raise ValueError(f"expected {t} but got shape {_shape_text(array.shape)}")
        elif array.shape != shape:
            if array.ndim == 0 and math.prod(shape) == 1:  # Python ints: a dimension may pass int64
                array = array.reshape(shape)
            else:
                raise ValueError(f"expected {t} but got shape {_shape_text(array.shape)}")
    return array


def not_numbers(dtype: np.dtype) -> str:
    """What an array of `dtype` holds when it is not numbers an argument can be made of (records,
    text, Python objects, dates, raw bytes), in words; "" for numbers. numpy would turn text into
    floats where it parses and a record into its first field: an argument never is either."""
    if dtype.names is not None:
        return f"a structured array (fields {', '.join(dtype.names)})"
    words = {"S": "byte strings", "U": "strings", "O": "Python objects", "M": "dates", "m": "time spans"}
    if dtype.kind in words:
        return f"{words[dtype.kind]} ({dtype})"
    if dtype.type is np.void:  # plain bytes; the ml_dtypes types (bf16 ...) have their own scalar type
        return f"raw bytes ({dtype.str})"
    return ""


def _cast_fitting(array: np.ndarray, dtype: np.dtype, t: Type) -> np.ndarray:
    """`array` cast to `dtype`, or a ValueError naming a value the cast would change beyond
    rounding: an integer outside the element type's range (it would wrap around) or a finite
    number too large for it (it would become inf or nan), so a float64 or int64 file given for
    an f16 or i8 argument never runs on silently different values."""
    integer = dtype.kind in "iu" or _narrow_int(dtype) is not None
    if integer and array.dtype.kind in "iu" and array.size:
        low, high = integer_bounds(dtype)
        smallest, largest = int(array.min()), int(array.max())
        if smallest < low or largest > high:
            value = smallest if smallest < low else largest
            raise ValueError(f"expected {t} but got {array.dtype} data holding {value}, outside {t.element}'s range {low}..{high}")
    if is_bfloat16(dtype) and array.dtype == F32:
        bits = array.view(np.uint32)
        if not (bits & 0xFFFF).any():
            # Every element is a bf16 exactly (a bf16 widened, as `run --out` stores one): its top
            # half is the bf16, NaN payloads included, which a rounding cast would not keep.
            return (bits >> 16).astype(np.uint16).view(dtype)
    with np.errstate(over="ignore", invalid="ignore"):
        cast = array.astype(dtype)
    if dtype.kind in "fV" and not integer and array.dtype.kind in "iuf" and array.size:
        broken = ~np.isfinite(cast) & np.isfinite(array)
        if broken.any():
            value = array[np.unravel_index(int(np.argmax(broken)), array.shape)]
            raise ValueError(f"expected {t} but got {array.dtype} data holding {value:g}, too large for {t.element}")
    return cast


def _shape_text(shape: tuple[int, ...]) -> str:
    return "x".join(str(d) for d in shape) if shape else "scalar"


def random_value(t: Type, rng: np.random.Generator) -> Any:
    """A reproducible argument of type `t`: normal floats, small integers, fair booleans."""
    if isinstance(t, TokenType):
        return TOKEN
    if isinstance(t, TupleType):
        return tuple(random_value(et, rng) for et in t.types)
    if isinstance(t, FutureType):
        return Future(random_value(et, rng) for et in t.types)
    if not isinstance(t, TensorType) or t.shape is None:
        raise ValueError(f"cannot make a random value of type {t}")
    shape = tuple(max(d, 0) if d is not None else 1 for d in t.shape)
    element = t.element
    dtype = element_dtype(t)
    if isinstance(element, QuantizedType):
        lo, hi = element.effective_min, element.effective_max
        return rng.integers(lo, hi + 1, size=shape).astype(dtype)
    if isinstance(element, IntegerType) and element.width == 1:
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    if isinstance(element, (IntegerType, IndexType)):
        lo, hi = integer_bounds(dtype)
        return rng.integers(max(lo, -8), min(hi, 8) + 1, size=shape).astype(dtype)
    if isinstance(element, ComplexType):
        real = rng.standard_normal(shape)
        imag = rng.standard_normal(shape)
        return (real + 1j * imag).astype(dtype)
    if isinstance(element, FloatType):
        return rng.standard_normal(shape).astype(np.float32).astype(dtype)
    raise ValueError(f"cannot make a random value of type {t}")
