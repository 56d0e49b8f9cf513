"""What a user gives a run, read and checked: the arguments of the entry function (given ones by
position, reproducible random ones for the rest; on a grid, per device), memory sizes (`2G`) and
devices (`1,0`).

The CLI, the Python API and the UI all build runs from these, so each reads its input the same
way and fails with the same message.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Optional, Sequence, Union

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


def read_only(value: Any) -> Any:
    """A run's view of an argument: arrays become read-only views, so no op ever writes into the
    caller's data (or into a memory-mapped file); tuples element by element; the rest as is."""
    if isinstance(value, np.ndarray):
        if not value.flags.writeable:
            return value
        view = value.view()
        view.flags.writeable = False
        return view
    if type(value) is tuple:
        return tuple(read_only(element) for element in value)
    return value


def build_arguments(
    input_types: Sequence[Type],
    given: Optional[dict[int, Any]] = None,
    seed: int = 0,
    origins: Optional[dict[int, str]] = None,
) -> tuple[list[Any], list[int]]:
    """Arguments for a function: the given ones (by position) and random ones for the rest.

    Returns (arguments, positions that were filled at random). Random values depend only on the
    seed and the position, so adding one argument does not change the others. `origins` names
    where a given value came from (a file), for messages.
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
                where = f"argument {i}"
                if origins and origins.get(i, where) != where:  # a file's value: named by its file
                    where = f"{origins[i]}: {where}"
                raise ExecutionError(f"{where}: {e}") from None
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


# -- per-device arguments -------------------------------------------------------------------------
#
# On a grid every device runs the entry function on its own arguments. A value given for one
# device (an .npz key `arg0@1,0`, or a file `device_1_0.npz` of --args-per-device) is that
# device's; a plain value (`arg0`, --arg 0=FILE) is every other device's; the rest are random.

_DEVICE_KEY = re.compile(r"^(?P<name>[^@]+)@(?P<replica>\d+),(?P<partition>\d+)$")


def split_device_key(key: str, where: str) -> tuple[str, Optional[ProcessId]]:
    """`arg0@1,0` -> ("arg0", device (1, 0)); `arg0` -> ("arg0", None); anything else with an @ is refused."""
    if "@" not in key:
        return key, None
    match = _DEVICE_KEY.match(key)
    if match is None:
        raise ArgumentError(f"{where}: key '{key}' does not name a device: write NAME@REPLICA,PARTITION, such as arg0@1,0")
    return match["name"], ProcessId(int(match["replica"]), int(match["partition"]))


@dataclass
class DeviceArguments:
    """Arguments given for a grid: `shared` {position: value} for every device without its own
    value, `own` {device: {position: value}}, and where each own value came from (for messages)."""

    shared: dict[int, Any] = field(default_factory=dict)
    own: dict[ProcessId, dict[int, Any]] = field(default_factory=dict)
    origin: dict[tuple[ProcessId, int], str] = field(default_factory=dict)
    shared_origin: dict[int, str] = field(default_factory=dict)

    def give(self, device: Optional[ProcessId], position: int, value: Any, where: str) -> None:
        if device is None:
            self.shared[position] = value
            self.shared_origin[position] = where
        else:
            self.own.setdefault(device, {})[position] = value
            self.origin[(device, position)] = where


def given_arguments(args: Any = None, per_device: Optional[dict] = None) -> DeviceArguments:
    """What the Python API gives: `args` a sequence of arrays or {position: array} (every device),
    and in `per_device` or among `args`'s keys, {ProcessId or (replica, partition): a sequence of
    arrays or {position: array}} (that device's own)."""
    given = DeviceArguments()
    devices = dict(per_device or {})
    if isinstance(args, dict):
        for key, value in args.items():
            if isinstance(key, (ProcessId, tuple)):
                devices[key] = value
            else:
                given.give(None, int(key), value, f"argument {key}")
    else:
        for position, value in enumerate(args or ()):
            given.give(None, position, value, f"argument {position}")
    for key, values in devices.items():
        if isinstance(key, tuple) and not isinstance(key, ProcessId):
            if len(key) != 2 or not all(isinstance(i, (int, np.integer)) for i in key):
                raise ArgumentError(f"per-device arguments are keyed by ProcessId(replica, partition) or (replica, "
                                    f"partition), not {key!r}")
            key = ProcessId(int(key[0]), int(key[1]))
        items = values.items() if isinstance(values, dict) else enumerate(values)
        for position, value in items:
            given.give(key, int(position), value,
                       f"argument {position} of device {key.replica_id},{key.partition_id}")
    return given


def _devices_text(replicas: int, partitions: int) -> str:
    names = [f"{r},{p}" for r in range(replicas) for p in range(partitions)]
    shown = " ".join(names[:16]) + (f" ... ({len(names)} devices)" if len(names) > 16 else "")
    return f"the grid is {replicas}x{partitions}: devices {shown}"


def device_arguments(input_types: Sequence[Type], given: DeviceArguments, replicas: int = 1, partitions: int = 1,
                     seed: int = 0) -> tuple[Union[list[Any], dict[ProcessId, list[Any]]], list[int]]:
    """Arguments for every device: a list (the same on every device) when no device has its own,
    else {device: list}; the 1x1 grid always gets its device's list. Returns (arguments, positions
    filled at random). Errors name the key or file and the devices that exist."""
    for (device, position), where in given.origin.items():
        if not (0 <= device.replica_id < replicas and 0 <= device.partition_id < partitions):
            raise ArgumentError(f"{where} is for device {device.replica_id},{device.partition_id}, but "
                                f"{_devices_text(replicas, partitions)}")
        if not 0 <= position < len(input_types):
            raise ArgumentError(f"{where} is argument {position}, but the function takes {len(input_types)} argument(s)")
    shared, randomised = build_arguments(input_types, given.shared, seed, given.shared_origin)
    if not given.own:
        return shared, randomised
    per_device: dict[ProcessId, list[Any]] = {}
    filled: set[int] = set()
    for device in (ProcessId(r, p) for r in range(replicas) for p in range(partitions)):
        own = given.own.get(device, {})
        values = list(shared)
        for position, data in own.items():
            t = input_types[position]
            try:
                values[position] = as_value(_fit_dtype(data, t) if isinstance(data, np.ndarray) else data, t)
            except ValueError as e:
                raise ArgumentError(f"{given.origin[(device, position)]} (argument {position} of device "
                                    f"{device.replica_id},{device.partition_id}): {e}") from None
        filled.update(i for i in randomised if i not in own)
        per_device[device] = values
    if (replicas, partitions) == (1, 1):
        return per_device[ProcessId(0, 0)], sorted(filled)
    return per_device, sorted(filled)


__all__ = ["ArgumentError", "DeviceArguments", "build_arguments", "device_arguments", "given_arguments", "parse_device",
           "parse_size", "read_only", "split_device_key"]
