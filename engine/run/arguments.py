"""What a user gives a run, read and checked: the arguments of the entry function (given ones by
position, reproducible random ones for the rest), memory sizes (`2G`) and devices (`1,0`).

The CLI, the Python API and the UI all build runs from these, so each reads its input the same
way and fails with the same message.
"""
from __future__ import annotations

import re
from typing import Any, Optional, Sequence

import numpy as np

from ..ir.dtypes import as_value, element_dtype, random_value
from ..ir.errors import ExecutionError
from ..ir.types import TensorType, Type
from ..machine.process import ProcessId


class ArgumentError(ExecutionError):
    """A size, device or argument the user wrote that cannot be read."""


def _fit_dtype(array: np.ndarray, t: Type) -> np.ndarray:
    """np.savez stores ml_dtypes arrays (bf16, f8, int4) as raw bytes (`|V2`); view them back."""
    if isinstance(t, TensorType) and array.dtype.kind == "V":
        dtype = element_dtype(t)
        if dtype.itemsize == array.dtype.itemsize:
            return array.view(dtype)
    return array


def build_arguments(
    input_types: Sequence[Type],
    given: Optional[dict[int, Any]] = None,
    seed: int = 0,
) -> tuple[list[Any], list[int]]:
    """Arguments for a function: the given ones (by position) and random ones for the rest.

    Returns (arguments, positions that were filled at random). Random values depend only on the
    seed and the position, so adding one argument does not change the others.
    """
    given = dict(given or {})
    extra = sorted(k for k in given if not 0 <= k < len(input_types))
    if extra:
        raise ExecutionError(f"argument {extra[0]} given, but the function takes {len(input_types)} argument(s)")
    args, randomised = [], []
    for i, t in enumerate(input_types):
        if i in given:
            data = given[i]
            if isinstance(data, np.ndarray):
                data = _fit_dtype(data, t)
            try:
                args.append(as_value(data, t))
            except ValueError as e:
                raise ExecutionError(f"argument {i}: {e}") from None
        else:
            try:
                args.append(random_value(t, np.random.default_rng([seed, i])))
            except ValueError as e:
                raise ExecutionError(f"argument {i}: {e}; pass it with --arg {i}=FILE.npy") from None
            randomised.append(i)
    return args, randomised


_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(i?b?)?\s*$", re.IGNORECASE)


def parse_size(text: str) -> int:
    """`2G`, `512M`, `1.5GiB`, `100000` (bytes) -> bytes; ArgumentError with the accepted forms."""
    match = _SIZE.match(str(text))
    if not match:
        raise ArgumentError(f"cannot read {text!r} as a size; use bytes or a number with K, M, G or T (e.g. 2G, 512M)")
    number, unit = float(match.group(1)), match.group(2).lower()
    return int(number * {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}[unit])


def parse_device(text: str) -> ProcessId:
    """`r,p`: the device of replica r and partition p."""
    parts = [p.strip() for p in text.split(",")]
    if len(parts) == 2 and all(p.isdigit() for p in parts):
        return ProcessId(int(parts[0]), int(parts[1]))
    raise ArgumentError(f"--device expects REPLICA,PARTITION such as 0,1, not '{text}'")


__all__ = ["ArgumentError", "build_arguments", "parse_device", "parse_size"]
