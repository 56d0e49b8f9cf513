"""Constants whose elements the text left out (XLA prints literals over 10 elements as `{...}`),
and the user's opt-in to run them anyway: `--fill-elided random|zeros` / `fill_elided=`.

Nothing evaluates a constant before a step runs it, so a module with elided constants opens,
draws, exports and has its memory analysed as it is; running one refuses with ElidedElements'
message. Filling replaces each elided constant's value by a DenseElements of its type and marks
the op `hlo.filled = "random"` (or "zeros") so every view can say its values are made up.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from ..ir.attributes import DenseElements, ElidedElements
from ..ir.core import Module, Operation
from ..ir.dtypes import element_dtype, integer_bounds
from ..ir.errors import HlodbgError
from ..ir.types import ComplexType, FloatType, IntegerType, TensorType

FILL_MODES = ("random", "zeros")
FILLED = "hlo.filled"  # the op attribute saying how an elided constant's values were made
# Random values are drawn from this stream (apart from the arguments', which use [seed, position]).
_STREAM = 0xE11DED


def is_elided(op: Operation) -> bool:
    return isinstance(op.attributes.get("value"), ElidedElements)


def filled_mode(op: Operation) -> Optional[str]:
    """"random" or "zeros" for a constant `--fill-elided` filled, else None."""
    mode = op.attributes.get(FILLED)
    return str(mode) if mode is not None else None


def filled_note(op: Operation) -> Optional[str]:
    """`filled: random (elided {...} constant)` for a filled constant, else None: what views show."""
    mode = filled_mode(op)
    return f"filled: {mode} (elided {{...}} constant)" if mode is not None else None


def fill_elided(module: Module, mode: str, seed: int = 0) -> int:
    """Give every elided constant of `module` values (`mode` "random": reproducible from `seed`;
    "zeros") and mark it; returns how many constants were filled. Filling again (another mode or
    seed) refills the constants filled before."""
    if mode not in FILL_MODES:
        raise HlodbgError(f"--fill-elided {mode!r}: expected one of {', '.join(FILL_MODES)}")
    count = 0
    for op in module.walk():
        value = op.attributes.get("value")
        if not (isinstance(value, ElidedElements) or (filled_mode(op) is not None and isinstance(value, DenseElements))):
            continue
        array = _values(value.type, mode, np.random.default_rng([seed, _STREAM, count]))
        op.attributes["value"] = DenseElements(value.type, array)
        op.attributes[FILLED] = mode
        count += 1
    return count


def _values(type: TensorType, mode: str, rng: np.random.Generator) -> np.ndarray:
    """Values of `type`: zeros, or random ones — floats uniform in [-1, 1), integers over the
    type's whole range, booleans fair."""
    dtype = element_dtype(type)
    shape = tuple(type.shape)
    if mode == "zeros":
        return np.zeros(shape, dtype)
    element = type.element
    if isinstance(element, IntegerType) and element.width == 1:
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    if isinstance(element, IntegerType):
        low, high = integer_bounds(dtype)
        return rng.integers(low, high, size=shape, endpoint=True, dtype=np.int64 if low < 0 else np.uint64).astype(dtype)
    if isinstance(element, ComplexType):
        return (rng.uniform(-1, 1, shape) + 1j * rng.uniform(-1, 1, shape)).astype(dtype)
    if isinstance(element, FloatType):
        return rng.uniform(-1, 1, shape).astype(np.float32).astype(dtype)
    raise HlodbgError(f"cannot make values of {type} for an elided constant")


__all__ = ["FILLED", "FILL_MODES", "fill_elided", "filled_mode", "filled_note", "is_elided"]
