"""The host boundary: values the XLA backend keeps on a device (jax Arrays), seen from the host.

Only what the user looks at comes to the host. Everything here can be imported without JAX (a
value is recognised as a device array by what it offers, not by importing jax), so the debugger's
summaries, value breakpoints and byte accounting (engine/debug) call it on every value whatever
the target:

- `is_device_array(x)`, `to_host(x)` (tuples and lists element by element; anything else as it is);
- `device_bytes(x)`: the bytes a device array's buffer holds (recording's accounting);
- `nonfinite_counts(x)` and `float_statistics(x)`: computed ON the device by a small reduction
  compiled once per (shape, dtype), so a summary or a NaN test of a big array copies a few
  numbers, not the array. Statistics are in f64 (min/max/mean/std over the finite elements, two
  passes: the mean, then the squared deviations from it), as summary.py's host statistics are.

Where a value is looked at (`looked_at_on_device`, `summarised_on_device`): on an accelerator
(GPU, TPU), on the device, since copying a big array crosses the PCIe bus; summaries only for float
arrays of at least DEVICE_STATISTICS_FROM elements (smaller ones cost less to copy than to launch
a reduction; integers, booleans and complex values keep the host's exact statistics after one
copy). On the CPU the device's memory is the host's: the copy is a memcpy (6 ms for 16 MB) and
numpy's statistics beat a launched reduction (40 ms against 200 ms for 4M f32, measured), so the
value comes to the host and summary.py / breakpoints.py look at it there.
"""
from __future__ import annotations

import threading
from typing import Any

import numpy as np

from ...ir.dtypes import is_float_dtype

# Float arrays with at least this many elements are summarised on their device.
DEVICE_STATISTICS_FROM = 1 << 16

_lock = threading.Lock()
_reductions: dict[str, Any] = {}


def is_device_array(value: Any) -> bool:
    """Whether `value` is a jax Array (a value the XLA backend keeps on a device)."""
    return not isinstance(value, np.ndarray) and hasattr(value, "addressable_shards")


def to_host(value: Any) -> Any:
    """`value` with every device array in it brought to the host as a numpy array."""
    if is_device_array(value):
        return np.asarray(value)
    if isinstance(value, tuple):
        return tuple(to_host(v) for v in value)
    if isinstance(value, list):
        return [to_host(v) for v in value]
    return value


def device_bytes(value: Any) -> int:
    """Bytes of a device array's buffer (0 for anything else)."""
    return int(value.nbytes) if is_device_array(value) else 0


def looked_at_on_device(value: Any) -> bool:
    """Whether tests of `value` (NaN/Inf counts) should run on its device: a device array on an
    accelerator (see the module docstring)."""
    return is_device_array(value) and _platform(value) != "cpu"


def summarised_on_device(value: Any) -> bool:
    """Whether `float_statistics` should summarise `value` where it is (see the module docstring)."""
    if not looked_at_on_device(value) or value.size < DEVICE_STATISTICS_FROM:
        return False
    return is_float_dtype(np.dtype(value.dtype))


def _platform(value: Any) -> str:
    return str(next(iter(value.devices())).platform)


def float_statistics(value: Any) -> dict:
    """nan, posinf, neginf, zeros, min, max, mean and std of a real float device array, computed
    on its device (min/max/mean/std None when no element is finite)."""
    nan, posinf, neginf, zeros, finite, low, high, mean, std = (
        np.asarray(x).item() for x in _reduction("statistics")(value))
    out = dict(nan=int(nan), posinf=int(posinf), neginf=int(neginf), zeros=int(zeros))
    if finite:
        out.update(min=float(low), max=float(high), mean=float(mean), std=float(std))
    return out


def nonfinite_counts(value: Any) -> tuple[int, int, int]:
    """(NaN, +Inf, -Inf) element counts of a float or complex device array, counted on its device
    (a complex element counts as NaN when either part is; each infinite part counts by its sign)."""
    dtype = np.dtype(value.dtype)
    if dtype.kind != "c" and not is_float_dtype(dtype):
        return 0, 0, 0
    nan, posinf, neginf = (int(np.asarray(x)) for x in _reduction("nonfinite")(value))
    return nan, posinf, neginf


def _reduction(name: str) -> Any:
    """The jitted reduction `name` (jax traces and compiles it once per shape and dtype)."""
    with _lock:
        found = _reductions.get(name)
        if found is None:
            from .runtime import jax_modules

            jax, _ = jax_modules()
            found = _reductions[name] = jax.jit(_STATISTICS[name](jax.numpy))
        return found


def _statistics(jnp: Any) -> Any:
    def statistics(x: Any) -> tuple:
        x = x.astype(jnp.float64)
        finite = jnp.isfinite(x)
        count = finite.sum()
        safe = jnp.where(finite, x, 0.0)
        mean = safe.sum() / jnp.maximum(count, 1)
        deviation = jnp.where(finite, x - mean, 0.0)
        std = jnp.sqrt((deviation * deviation).sum() / jnp.maximum(count, 1))
        return (jnp.isnan(x).sum(), (x == jnp.inf).sum(), (x == -jnp.inf).sum(), (x == 0).sum(), count,
                jnp.where(finite, x, jnp.inf).min(), jnp.where(finite, x, -jnp.inf).max(), mean, std)

    return statistics


def _nonfinite(jnp: Any) -> Any:
    def nonfinite(x: Any) -> tuple:
        if jnp.iscomplexobj(x):
            parts = (x.real, x.imag)
            nan = (jnp.isnan(x.real) | jnp.isnan(x.imag)).sum()
        else:
            x = x.astype(jnp.float32) if x.dtype.itemsize < 4 else x
            parts = (x,)
            nan = jnp.isnan(x).sum()
        posinf = sum((part == jnp.inf).sum() for part in parts)
        neginf = sum((part == -jnp.inf).sum() for part in parts)
        return nan, posinf, neginf

    return nonfinite


_STATISTICS = {"statistics": _statistics, "nonfinite": _nonfinite}

__all__ = ["DEVICE_STATISTICS_FROM", "device_bytes", "float_statistics", "is_device_array", "looked_at_on_device",
           "nonfinite_counts", "summarised_on_device", "to_host"]
