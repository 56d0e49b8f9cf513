"""What a user gives a run, read and checked: the arguments of the entry function (given ones by
position, reproducible random ones for the rest; on a grid, per device), memory sizes (`2G`) and
devices (`1,0`).

The CLI, the Python API and the UI all build runs from these, so each reads its input the same
way and fails with the same message.
"""
from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Sequence, Union

import numpy as np

from ..ir.dtypes import as_value, element_dtype, random_value
from ..ir.errors import ExecutionError
from ..ir.locations import located_name
from ..ir.sharding import (
    HloSharding,
    ShardingSyntaxError,
    device_tile,
    pad_tile,
    parse_hlo_sharding,
    tile_bounds,
    tile_shape,
)
from ..ir.types import TensorType, Type
from ..machine.memory import format_bytes, physical_memory
from ..machine.process import ProcessId


class ArgumentError(ExecutionError):
    """A size, device or argument the user wrote that cannot be read."""


def _fit_dtype(array: np.ndarray, t: Type) -> np.ndarray:
    """np.savez stores ml_dtypes arrays (bf16, f8, int4) as raw bytes (`|V2`); view them back."""
    if isinstance(t, TensorType) and array.dtype.type is np.void and array.dtype.names is None:
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


def check_seed(seed: Any) -> int:
    """`seed` as the int random arguments are made from: a whole number, 0 or more."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ArgumentError(f"seed {seed!r}: a seed is a whole number, 0 or more")
    return int(seed)


def _too_big_to_make(t: Type) -> str:
    """Why a random value of type `t` cannot be made (more elements than numpy indexes, more bytes
    than the machine has), or ""."""
    if not isinstance(t, TensorType) or t.shape is None:
        return ""
    count = 1
    for d in t.shape:
        count *= max(d, 0) if d is not None else 1
    size = count * element_dtype(t).itemsize
    memory = physical_memory()
    if count >= 1 << 63:
        return f"{t} holds {count:,} elements, more than an array can"
    if memory is not None and size > memory:
        return f"{t} takes {format_bytes(size)}, more than this machine's memory ({format_bytes(memory)})"
    return ""


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
    seed = check_seed(seed)
    given = dict(given or {})
    extra = sorted(k for k in given if not 0 <= k < len(input_types))
    if extra:
        where = (origins or {}).get(extra[0], "")
        raise ExecutionError(f"{where + ': ' if where and where != f'argument {extra[0]}' else ''}argument {extra[0]} "
                             f"given, but the function takes {len(input_types)} argument(s)")
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
            problem = _too_big_to_make(t)
            try:
                if problem:
                    raise ValueError(problem)
                args.append(random_value(t, np.random.default_rng([seed, i])))
            except (ValueError, MemoryError) as e:
                problem = str(e) if isinstance(e, ValueError) else f"{t} does not fit in memory"
                raise ExecutionError(f"argument {i}: {problem}, so it cannot be made at random; pass it with "
                                     f"--arg {i}=FILE.npy") from None
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


# -- argument names ---------------------------------------------------------------------------------
#
# A value given by key (an .npz member, a file NAME.npy, a dict key in Python) names its argument:
# by the argument's name in the program (`x` for `%x`), the name its location carries (JAX writes
# `%arg0: tensor<2xf32> loc("a")` for a parameter `a`; XLA's HLO keeps it as the op_name), `argN`,
# or `arr_N` (numpy.savez's own name for its N-th positional array). Never by the key's place in
# the file: numpy.savez(w=..., x=...) writes w first.

_POSITIONAL = re.compile(r"^(?:arg|arr_)(\d+)$")


class ArgumentNames:
    """The keys the arguments of one function go by, and which argument each key names."""

    def __init__(self, function: Any):
        self.function = function.sym_name
        self.count = len(function.function_type.inputs)
        self.names: dict[str, list[int]] = {}  # a name -> the positions of the arguments called so
        self.by_position: list[list[str]] = [[] for _ in range(self.count)]
        for i, argument in enumerate(function.body.arguments if not function.is_declaration else ()):
            own = (argument.name or "").lstrip("%")
            located = located_name(argument)
            for name in dict.fromkeys(n for n in (own, located) if n and not n.isdigit()):
                self.names.setdefault(name, []).append(i)
                self.by_position[i].append(name)

    def describe(self, limit: int = 12) -> str:
        """`arg0 (x), arg1 (w)`: every argument with its names, for messages."""
        parts = [f"arg{i}" + (f" ({', '.join(n for n in names if n != f'arg{i}')})"
                              if any(n != f"arg{i}" for n in names) else "")
                 for i, names in enumerate(self.by_position[:limit])]
        more = f", ... ({self.count} in all)" if self.count > limit else ""
        return (", ".join(parts) + more) if parts else "none"

    def position(self, key: str, where: str) -> int:
        """The argument `key` names; an ArgumentError (beginning with `where`, which names the
        key) naming the arguments when it names none or several."""
        named = self.names.get(key)
        if named is not None:  # the program's own name wins over a positional argN spelled the same
            if len(named) > 1:
                raise ArgumentError(f"{where} is the name of arguments {', '.join(map(str, named))} of "
                                    f"@{self.function}: key them by position (arg{named[0]}, ...) instead")
            return named[0]
        match = _POSITIONAL.match(key)
        if match is None:
            raise ArgumentError(f"{where} names no argument of @{self.function} (its arguments: "
                                f"{self.describe()}); key a value by the argument's name, argN or arr_N")
        position = int(match[1])
        if position >= self.count:
            raise ArgumentError(f"{where} is argument {position}, but @{self.function} takes {self.count} "
                                f"argument(s): {self.describe()}")
        return position

    def positions(self, keys: Sequence[str], where: str,
                  label: Optional[Callable[[str], str]] = None) -> dict[str, tuple[int, Optional[ProcessId]]]:
        """{key: (position, device or None)} for keys that may carry `@R,P`; two keys naming the
        same argument (of the same device) are an error that names both. `label(key)` names a key
        in messages (default: `WHERE key 'KEY'`)."""
        label = label or (lambda key: f"{where} key '{key}'")
        found: dict[str, tuple[int, Optional[ProcessId]]] = {}
        taken: dict[tuple[int, Optional[ProcessId]], str] = {}
        for key in keys:
            name, device = split_device_key(key, where)
            place = (self.position(name, label(key)), device)
            if place in taken:
                raise ArgumentError(f"{where}: keys '{taken[place]}' and '{key}' both name argument {place[0]} of "
                                    f"@{self.function} (its arguments: {self.describe()})")
            taken[place] = key
            found[key] = place
        return found


# -- global values of a partitioned program -----------------------------------------------------
#
# XLA's SPMD partitioner leaves each parameter of its module with the shape of one device's tile
# and the sharding that cuts the global value (`sharding={devices=[4,1]<=[4]}`, kept as the
# argument's mhlo.sharding). A global array given for such a parameter is cut the same way, each
# device getting its own tile.

def parameter_shardings(function: Any) -> list[Optional[HloSharding]]:
    """The tiled sharding of each parameter of `function`, None where it has none."""
    shardings: list[Optional[HloSharding]] = []
    for i in range(len(function.function_type.inputs)):
        text = function.arg_attrs(i).get("mhlo.sharding")
        try:
            sharding = parse_hlo_sharding(str(text).strip('"')) if text is not None else None
        except (ShardingSyntaxError, ValueError):
            sharding = None
        shardings.append(sharding if sharding is not None and sharding.kind == "tiled" else None)
    return shardings


def sharded_shape_fits(shape: Sequence[int], t: Type, sharding: Optional[HloSharding]) -> bool:
    """Whether a global array of `shape` cut by `sharding` gives tiles of type `t`'s shape."""
    if sharding is None or not isinstance(t, TensorType) or not t.is_static:
        return False
    tiles = sharding.tiled_dims
    return len(tiles) == len(shape) and tile_shape(tuple(shape), tiles) == tuple(t.shape)


def shape_fits(shape: Sequence[int], t: Type, sharding: Optional[HloSharding] = None) -> bool:
    """Whether an array of `shape` can be the argument of type `t` (as_value's shape rule), or
    cut by the parameter's `sharding`, every device's: checked from a file's header before its
    data is read."""
    if not isinstance(t, TensorType) or t.shape is None:
        return True
    shape, wanted = tuple(shape), tuple(t.shape)
    if any(d is None or d < 0 for d in wanted):
        return len(shape) == len(wanted) and all(d is None or d < 0 or d == a for d, a in zip(wanted, shape))
    if shape == wanted or (shape == () and math.prod(wanted) == 1):
        return True
    return sharded_shape_fits(shape, t, sharding)


def _device_of_tile(sharding: HloSharding, replicas: int, partitions: int, device: ProcessId) -> Optional[int]:
    """The number `device` has in the sharding's tile assignment: its partition when the sharding
    spans the partitions (XLA's SPMD partitioning within a replica), its device id when it spans
    the grid; None when it spans neither."""
    count = int(sharding.tile_assignment.size)
    if count == partitions:
        return device.partition_id
    if count == replicas * partitions:
        return device.replica_id * partitions + device.partition_id
    return None


def device_tiles(data: Any, t: Type, sharding: Optional[HloSharding], replicas: int,
                 partitions: int) -> Optional[dict[ProcessId, np.ndarray]]:
    """Every device's tile of the global array `data` given for a parameter of tile type `t` cut
    by `sharding` (uneven tiles padded with zeros, as XLA pads them); None when `data` is not
    such a global array or the sharding does not span the grid."""
    if not isinstance(data, np.ndarray) or tuple(getattr(t, "shape", None) or ()) == data.shape:
        return None
    if not sharded_shape_fits(data.shape, t, sharding):
        return None
    tiles = sharding.tiled_dims
    wanted = tuple(t.shape)
    out: dict[ProcessId, np.ndarray] = {}
    for device in (ProcessId(r, p) for r in range(replicas) for p in range(partitions)):
        number = _device_of_tile(sharding, replicas, partitions, device)
        if number is None:
            return None
        try:
            tile = device_tile(sharding, number)
        except ValueError:
            return None
        piece = data[tuple(slice(*tile_bounds(size, count, i)) for size, count, i in zip(data.shape, tiles, tile))]
        out[device] = pad_tile(piece, wanted)
    return out


def per_device_hint(replicas: int, partitions: int) -> str:
    return (f"; on this {replicas}x{partitions} grid each device's own value can be given instead (an .npz key "
            "arg0@R,P, or --args-per-device DIR)")



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


def given_arguments(args: Any = None, per_device: Optional[dict] = None,
                    names: Optional[ArgumentNames] = None) -> DeviceArguments:
    """What the Python API gives: `args` a sequence of arrays or a mapping {position or key:
    array} (every device; a key is an argument's name, argN or arr_N as `names` reads it, and
    may end in @R,P for one device: `dict(numpy.load("in.npz"))` is such a mapping), and in
    `per_device` or among `args`'s keys, {ProcessId or (replica, partition): a sequence of
    arrays or {position: array}} (that device's own)."""
    given = DeviceArguments()
    devices = dict(per_device or {})
    if isinstance(args, Mapping):
        keys = [key for key in args if isinstance(key, str) and not key.isdigit()]
        if keys and names is None:
            raise ArgumentError(f"argument '{keys[0]}': arguments given by name need the function they are for")
        places = names.positions(keys, "arguments") if keys else {}
        for key, value in args.items():
            if isinstance(key, (ProcessId, tuple)):
                devices[key] = value
            elif key in places:
                position, device = places[key]
                given.give(device, position, value, f"argument '{key}'")
            elif isinstance(key, (int, np.integer, str)):
                given.give(None, int(key), value, f"argument {key}")
            else:
                raise ArgumentError(f"arguments are keyed by position, name or device, not {key!r}")
    else:
        for position, value in enumerate(args or ()):
            given.give(None, position, value, f"argument {position}")
    for key, values in devices.items():
        if isinstance(key, tuple) and not isinstance(key, ProcessId):
            if len(key) != 2 or not all(isinstance(i, (int, np.integer)) for i in key):
                raise ArgumentError(f"per-device arguments are keyed by ProcessId(replica, partition) or (replica, "
                                    f"partition), not {key!r}")
            key = ProcessId(int(key[0]), int(key[1]))
        items = values.items() if isinstance(values, Mapping) else enumerate(values)
        for position, value in items:
            given.give(key, int(position), value,
                       f"argument {position} of device {key.replica_id},{key.partition_id}")
    return given


def _devices_text(replicas: int, partitions: int) -> str:
    names = [f"{r},{p}" for r in range(replicas) for p in range(partitions)]
    shown = " ".join(names[:16]) + (f" ... ({len(names)} devices)" if len(names) > 16 else "")
    return f"the grid is {replicas}x{partitions}: devices {shown}"


def _cut_global_values(input_types: Sequence[Type], given: DeviceArguments, replicas: int, partitions: int,
                       shardings: Sequence[Optional[HloSharding]]) -> DeviceArguments:
    """`given` with every global array given for a partitioned parameter (of a grid) cut into
    each device's tile (a device's own value stays its own); an array the parameter's shape
    does not fit is refused, saying how to give each device its value."""
    if (replicas, partitions) == (1, 1):
        return given
    cut = DeviceArguments(dict(given.shared), {d: dict(v) for d, v in given.own.items()}, dict(given.origin),
                          dict(given.shared_origin))
    for position, data in given.shared.items():
        if not (0 <= position < len(input_types) and isinstance(data, np.ndarray)):
            continue
        t = input_types[position]
        sharding = shardings[position] if position < len(shardings) else None
        tiles = device_tiles(data, t, sharding, replicas, partitions)
        where = given.shared_origin.get(position, f"argument {position}")
        if tiles is None:
            if not shape_fits(data.shape, t):
                shape = "x".join(map(str, data.shape)) or "scalar"
                raise ArgumentError(f"{where}: argument {position}: expected {t} but got shape {shape}"
                                    + per_device_hint(replicas, partitions))
            continue
        for device, tile in tiles.items():
            if position not in cut.own.setdefault(device, {}):
                cut.give(device, position, tile, f"{where} (device {device.replica_id},{device.partition_id}'s tile)")
        cut.shared[position] = next(iter(tiles.values()))  # every device has its own: no random value made
    return cut


def device_arguments(input_types: Sequence[Type], given: DeviceArguments, replicas: int = 1, partitions: int = 1,
                     seed: int = 0, shardings: Sequence[Optional[HloSharding]] = ()
                     ) -> tuple[Union[list[Any], dict[ProcessId, list[Any]]], list[int]]:
    """Arguments for every device: a list (the same on every device) when no device has its own,
    else {device: list}; the 1x1 grid always gets its device's list. Returns (arguments, positions
    filled at random). Errors name the key or file and the devices that exist. `shardings`: the
    parameters' (parameter_shardings): a global array given for a partitioned parameter is cut
    into each device's tile."""
    given = _cut_global_values(input_types, given, replicas, partitions, shardings)
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


__all__ = ["ArgumentError", "ArgumentNames", "DeviceArguments", "build_arguments", "check_seed", "device_arguments",
           "device_tiles", "given_arguments", "parameter_shardings", "per_device_hint", "parse_device", "parse_size", "read_only",
           "shape_fits", "split_device_key"]
