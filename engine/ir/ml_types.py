"""ml_dtypes, imported when a program first needs one of its element types.

numpy has no dtype for bf16, the f8/f6/f4 family or the 1-, 2- and 4-bit integers; ml_dtypes
adds them. Importing it costs about a second of start-up (0.9-1.4 s measured on a busy 2-core
machine, issue 35), and a program of f32, i32, ... never needs it: the type tables name its types
and `ml_dtype` makes them on first use. Every ml_dtypes dtype has kind "V" (numpy's void), so a
dtype of another kind is never one of them, which lets checks on hot paths skip the import.
"""
from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

import numpy as np

_loaded: list[ModuleType] = []


def ml_dtypes() -> ModuleType:
    """The ml_dtypes module, imported on the first call."""
    if not _loaded:
        _loaded.append(importlib.import_module("ml_dtypes"))
    return _loaded[0]


def ml_dtype(name: str) -> np.dtype:
    """ml_dtypes' dtype `name` (bfloat16, int4, float8_e4m3fn, ...)."""
    return np.dtype(getattr(ml_dtypes(), name))


def finfo(dtype: Any) -> np.finfo:
    """The float facts of a float dtype: numpy's own floats from numpy, the others from ml_dtypes
    (which raises ValueError or TypeError for a dtype that is no float, as numpy does)."""
    dtype = np.dtype(dtype)
    if dtype.kind != "V":
        return np.finfo(dtype)
    return ml_dtypes().finfo(dtype)


def is_bfloat16(dtype: np.dtype) -> bool:
    return dtype.kind == "V" and dtype == ml_dtype("bfloat16")


__all__ = ["finfo", "is_bfloat16", "ml_dtype", "ml_dtypes"]
