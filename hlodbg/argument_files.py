"""Argument files: `.npy` files, `.npz` archives and directories of `.npy` files, read without
copying what can be mapped.

A model's weights can be gigabytes, so an argument is memory-mapped from its file wherever the
file's layout allows: an `.npy` file always, an `.npz` member when the archive stores it
uncompressed (`numpy.savez`; a stored member is a plain `.npy` file inside the zip, mapped at its
offset) when its elements are aligned there, never when it is compressed (`numpy.savez_compressed`).
A member that cannot be mapped is read into memory, with a note when it is large. Maps are
read-only: a run never writes its arguments.

A member's key, or a file's NAME, names its argument (engine/run/arguments.py: ArgumentNames),
never its place in the file; every member's .npy header is checked against its argument's type
before its data is mapped, read or inflated. Only regular files are opened (engine/machine/files.py).
"""
from __future__ import annotations

import io
import math
import os
import re
import struct
import sys
import threading
import zipfile
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Callable, Optional

import numpy as np

from hlodbg.engine import ExecutionError
from hlodbg.engine.ir.dtypes import element_dtype, not_numbers
from hlodbg.engine.ir.types import TensorType
from hlodbg.engine.machine.files import open_regular
from hlodbg.engine.machine.memory import physical_memory
from hlodbg.engine.machine.process import ProcessId
from hlodbg.engine.run.arguments import ArgumentNames, DeviceArguments, parameter_shardings, per_device_hint, shape_fits

ZIP_SIGNATURE = b"PK\x03\x04"  # an .npz file is a zip archive of .npy files
EMPTY_ZIP_SIGNATURE = b"PK\x05\x06"  # a zip of nothing (numpy.savez(path) with no arrays) is its end record alone
NPY_SIGNATURE = b"\x93NUMPY"
NPZ_HOW = ("an .npz file holds the arguments as arg0, arg1, ..., by their names in the program, or as numpy.savez's "
           "positional arr_0, arr_1, ... (numpy.savez writes one); NAME@R,P is device R,P's own value on a grid")
DIRECTORY_HOW = ("a directory of arguments holds one NAME.npy per argument, NAME being arg0, arg1, ... or the "
                 "argument's name in the program (NAME@R,P.npy: device R,P's own value on a grid)")

# A member this large that cannot be mapped is worth a note: it is read into memory.
READ_NOTE_BYTES = 64 << 20
MAPPED_HOW = "a directory of .npy files (--args DIR, one numpy.save per argument) is always mapped"
_LOCAL_HEADER = struct.Struct("<4s22xHH")  # signature, (version .. sizes), name length, extra length


def _signature(path: str, option: str) -> bytes:
    """The first bytes of an argument file; a clear error if it cannot be read at all."""
    try:
        with open_regular(path) as handle:  # a FIFO or a device is refused, not waited on
            return handle.read(8)
    except FileNotFoundError:
        raise ExecutionError(f"{option}: no such file: {path}") from None
    except IsADirectoryError:
        raise ExecutionError(f"{option}: {path} is a directory, not a file") from None
    except OSError as e:
        raise ExecutionError(f"{option}: cannot read {path}: {e.strerror}") from None


def _array(read: Callable[[], np.ndarray], path: str, option: str, what: str) -> np.ndarray:
    """`read()`'s array, or a clear error: hlodbg reads numeric arrays only, never pickles."""
    try:
        return read()
    except ValueError as e:
        if "allow_pickle" in str(e) or "pickled" in str(e) or "Python objects" in str(e):
            raise ExecutionError(f"{option}: {path}: {what} holds Python objects, not numbers; "
                                 "hlodbg reads numeric arrays only") from None
        raise ExecutionError(f"{option}: {path}: {what} is damaged or truncated") from None
    except (OSError, EOFError, zipfile.BadZipFile, KeyError, struct.error):
        raise ExecutionError(f"{option}: {path}: {what} is damaged or truncated") from None


def _refuse_objects(dtype: np.dtype) -> None:
    if dtype.hasobject:
        raise ValueError("Python objects cannot be mapped")  # _array words it for people


def load_npy(path: str, option: str = "--arg") -> np.ndarray:
    """The array of an .npy file, memory-mapped read-only."""
    head = _signature(path, option)
    if not head.startswith(NPY_SIGNATURE):
        kind = "is empty" if not head else ("is an .npz archive of several arrays: give it with --args"
                                            if head.startswith(ZIP_SIGNATURE) else "is not an .npy file")
        raise ExecutionError(f"{option}: {path} {kind}; --arg N=FILE takes one array in an .npy file (numpy.save writes one)")


    def read() -> np.ndarray:
        array = np.load(path, mmap_mode="r", allow_pickle=False)
        if not array.flags.aligned:  # numpy pads its headers to 64 bytes; an odd writer may not (see _mapped_member)
            return _read_only(np.load(path, allow_pickle=False))
        return array

    return _array(read, path, option, "the array")


def _read_only(array: np.ndarray) -> np.ndarray:
    array.flags.writeable = False
    return array


@dataclass(frozen=True)
class Member:
    """One array of an .npz file, known from its .npy header before its data is read."""

    key: str
    info: zipfile.ZipInfo
    shape: tuple[int, ...]
    dtype: np.dtype
    fortran: bool
    data_offset: Optional[int]  # where a stored member's data starts in the file; None when compressed

    @property
    def nbytes(self) -> int:
        return math.prod(self.shape) * self.dtype.itemsize  # Python ints: a header may claim past int64


def _read_header(handle) -> tuple[tuple[int, ...], bool, np.dtype]:
    version = np.lib.format.read_magic(handle)
    if version == (1, 0):
        shape, fortran, dtype = np.lib.format.read_array_header_1_0(handle)
    elif version == (2, 0):
        shape, fortran, dtype = np.lib.format.read_array_header_2_0(handle)
    else:  # 3.0 is for field names beyond latin-1: a structured array, never an argument
        raise ValueError(f".npy format {version[0]}.{version[1]}")
    _refuse_objects(dtype)
    return tuple(int(d) for d in shape), bool(fortran), dtype


def _member(path: str, archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> Member:
    """A member's header: from the file where it is stored (uncompressed), else from the first
    inflated bytes only, so a member claiming gigabytes is checked before it is inflated."""
    key = info.filename[:-len(".npy")]
    if info.compress_type == zipfile.ZIP_STORED and not info.flag_bits & 0x1:  # stored, not encrypted
        with open_regular(path) as handle:
            handle.seek(info.header_offset)
            signature, name_length, extra_length = _LOCAL_HEADER.unpack(handle.read(_LOCAL_HEADER.size))
            if signature != ZIP_SIGNATURE:
                raise zipfile.BadZipFile("no local header")
            start = info.header_offset + _LOCAL_HEADER.size + name_length + extra_length
            handle.seek(start)
            shape, fortran, dtype = _read_header(handle)
            data = handle.tell()
        member = Member(key, info, shape, dtype, fortran, data)
        if data - start + member.nbytes != info.file_size:
            raise zipfile.BadZipFile("member size does not match its header")
        return member
    with archive.open(info) as stream:
        shape, fortran, dtype = _read_header(stream)
    return Member(key, info, shape, dtype, fortran, None)


def _maps_aligned(member: Member) -> bool:
    """Whether a stored member's elements start aligned in the file (so it is mapped, not read)."""
    return member.data_offset is not None and member.data_offset % member.dtype.alignment == 0


def _mapped_member(path: str, member: Member) -> tuple[Optional[np.ndarray], str]:
    """A stored member memory-mapped where it lies in the file, and why not when it cannot be:
    (array or None, reason). Elements must be aligned in the file as in memory: numpy computes on
    unaligned data through buffers, which changes the order of a sum's additions and so its
    rounding, and a run must not depend on where a file put its bytes. An unaligned member is read
    straight from the file into an aligned array (one copy); None when zipfile must read it (an
    empty array, a compressed member)."""
    if member.data_offset is None:
        return None, "it is compressed"
    size, dtype, data = member.nbytes, member.dtype, member.data_offset
    if size == 0:
        return None, "empty"
    order = "F" if member.fortran else "C"
    if _maps_aligned(member):
        return np.memmap(path, dtype=dtype, mode="r", offset=data, shape=member.shape, order=order), ""
    raw = np.empty(size, np.uint8)  # numpy allocates aligned for every dtype
    with open_regular(path) as handle:
        handle.seek(data)
        if handle.readinto(memoryview(raw)) != size:
            raise EOFError("member cut short")
    array = raw.view(dtype).reshape(member.shape, order=order)
    return _read_only(array), f"its {dtype} elements start at byte {data}, not a multiple of {dtype.alignment}"


def _read_member(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> np.ndarray:
    with archive.open(info) as member:
        return _read_only(np.lib.format.read_array(member, allow_pickle=False))


def _open_npz(path: str, option: str) -> Optional[zipfile.ZipFile]:
    """The archive of an .npz file, None when it holds nothing (numpy.savez(path) of no arrays);
    a clear error for a file of another kind."""
    head = _signature(path, option)
    if head.startswith(NPY_SIGNATURE):
        raise ExecutionError(f"{option}: {path} holds a single array (.npy): give it with --arg N={path}; {NPZ_HOW}")
    if not head.startswith((ZIP_SIGNATURE, EMPTY_ZIP_SIGNATURE)):
        kind = "is empty" if not head else "is not an .npz file"
        raise ExecutionError(f"{option}: {path} {kind}; {NPZ_HOW}")
    archive = _array(lambda: zipfile.ZipFile(path), path, option, "the archive")
    return archive


def npz_members(path: str, archive: zipfile.ZipFile, option: str = "--args") -> list[Member]:
    """The arrays of an open .npz file as their headers tell them, in file order."""
    members = []
    for info in archive.infolist():
        if not info.filename.endswith(".npy"):
            raise ExecutionError(f"{option}: {path}: {info.filename} is not an array (.npy) but some other file; {NPZ_HOW}")
        key = info.filename[:-len(".npy")]
        members.append(_array(partial(_member, path, archive, info), path, option, key))
    return members


class ReadAhead:
    """The members of an .npz file that must be read (stored, but unaligned: what numpy.savez
    writes) read on a thread of their own from the moment the file is named, while the program
    is parsed: the read lets go of the interpreter lock. `read_member` takes each array from here
    once; what this thread did not read (a rewritten file, a member past the limit, a file with
    something wrong, which the checks that follow report) is read as before. It reads at most a
    quarter of the machine's memory: the checks of each member against the program come later."""

    def __init__(self, path: str):
        self.path = path
        self._arrays: dict[str, tuple[tuple, np.ndarray]] = {}  # key -> (the file's stamp, array)
        self._done = threading.Event()
        threading.Thread(target=self._read, name="hlodbg-read-ahead", daemon=True).start()

    def _read(self) -> None:
        try:
            room = (physical_memory() or 0) // 4  # nothing read ahead where the system does not say
            stamp = _stamp(self.path)
            with zipfile.ZipFile(self.path) as archive:
                for info in archive.infolist():
                    member = _member(self.path, archive, info)
                    if member.data_offset is None or _maps_aligned(member) or member.nbytes == 0 or member.nbytes > room:
                        continue
                    room -= member.nbytes
                    self._arrays[member.key] = (stamp, _mapped_member(self.path, member)[0])
        except Exception:  # noqa: BLE001 - the reading that follows reports what is wrong with the file
            pass
        finally:
            self._done.set()

    def take(self, member: Member) -> Optional[np.ndarray]:
        """The member's array as read ahead, if it was and the file has not changed since."""
        self._done.wait()
        stamp, array = self._arrays.pop(member.key, (None, None))
        return array if array is not None and stamp == _stamp(self.path) else None


def _stamp(path: str) -> tuple:
    status = os.stat(path)
    return status.st_size, status.st_mtime_ns, status.st_ino


def read_member(path: str, archive: zipfile.ZipFile, member: Member, option: str = "--args",
                ahead: Optional[ReadAhead] = None) -> np.ndarray:
    """A member's array: a stored one memory-mapped, a compressed one read (with a note when large);
    taken from `ahead` when that read it already."""
    early = ahead.take(member) if ahead is not None and ahead.path == path else None
    if early is not None:
        return _read_only(early)
    array, why = _array(lambda: _mapped_member(path, member), path, option, member.key)
    if why and member.info.file_size >= READ_NOTE_BYTES:
        print(f"note: {option}: {path}: {member.key} is read into memory ({member.info.file_size / 2**20:,.0f} MiB), "
              f"not mapped from the file: {why}; {MAPPED_HOW}", file=sys.stderr)
    if array is None:
        array = _array(lambda: _read_member(archive, member.info), path, option, member.key)
    return array


def read_npz(path: str, option: str = "--args") -> dict[str, np.ndarray]:
    """The arrays of an .npz file by key, in file order; stored members memory-mapped, compressed
    ones read (with a note when large); a clear error for anything else."""
    with _open_npz(path, option) as archive:
        return {member.key: read_member(path, archive, member, option) for member in npz_members(path, archive, option)}


# An extra field readers skip (zip's "unknown id" rule), whose padding puts a member's data on a
# 64-byte boundary of the file, so it maps aligned for every dtype.
_PADDING_FIELD = 0x6868
_ZIP64_LOCAL_EXTRA = 20  # what zipfile adds to a local header written with force_zip64
_ALIGN = 64


def save_npz(path: str, arrays: dict[str, np.ndarray]) -> None:
    """`numpy.savez`, but every member stored with its data 64-byte aligned in the file, so that
    `--args` maps it instead of reading it (numpy.load reads the file as any other .npz). As
    numpy.savez does, `.npz` is added to a path without it."""
    path = str(path) if str(path).endswith(".npz") else f"{path}.npz"
    with open(path, "wb") as handle, zipfile.ZipFile(handle, "w", zipfile.ZIP_STORED, allowZip64=True) as archive:
        for key, value in arrays.items():
            array = np.asanyarray(value)
            header = io.BytesIO()
            fields = np.lib.format.header_data_from_array_1_0(array)
            try:
                np.lib.format.write_array_header_1_0(header, fields)
            except ValueError:  # a header too long for format 1.0
                header = io.BytesIO()
                np.lib.format.write_array_header_2_0(header, fields)
            info = zipfile.ZipInfo(f"{key}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            name_length = len(info.filename.encode("utf-8"))
            before_data = handle.tell() + _LOCAL_HEADER.size + name_length + 4 + _ZIP64_LOCAL_EXTRA + len(header.getvalue())
            info.extra = struct.pack("<HH", _PADDING_FIELD, -before_data % _ALIGN) + bytes(-before_data % _ALIGN)
            info.file_size = len(header.getvalue()) + array.nbytes
            order = "F" if fields["fortran_order"] else "C"
            with archive.open(info, "w", force_zip64=True) as member:
                member.write(header.getvalue())
                if array.size:
                    for chunk in np.nditer(array, flags=["external_loop", "buffered", "zerosize_ok"],
                                           buffersize=max((16 << 20) // max(array.itemsize, 1), 1), order=order):
                        member.write(chunk.tobytes("C"))


def _dtype_problem(member: Member, t) -> str:
    """Why a member's elements cannot be an argument of type `t`, from its header, or ""."""
    if not isinstance(t, TensorType):
        return ""
    raw_of_its_type = member.dtype.type is np.void and member.dtype.names is None and \
        member.dtype.itemsize == element_dtype(t).itemsize  # numpy.savez of bf16 and the like: its bytes
    unusable = "" if raw_of_its_type else not_numbers(member.dtype)
    return f"expected {t} but got {unusable}; hlodbg takes arrays of numbers" if unusable else ""


def _shape_problem(member: Member, t, sharding, grid: tuple[int, int]) -> str:
    """Why a member's shape cannot be an argument of type `t` (or, cut by the parameter's
    `sharding`, every device's on `grid`), from its header, or ""."""
    if shape_fits(member.shape, t, sharding):
        return ""
    shape = "x".join(map(str, member.shape)) or "scalar"
    size = f" ({member.nbytes / 2**20:,.0f} MiB, left unread)" if member.nbytes >= READ_NOTE_BYTES else ""
    return f"expected {t} but got shape {shape}{size}" + (per_device_hint(*grid) if grid != (1, 1) else "")


def add_npz(given: DeviceArguments, path: str, function, option: str = "--args",
            device: Optional[ProcessId] = None, grid: tuple[int, int] = (1, 1), read: bool = True,
            ahead: Optional[ReadAhead] = None) -> None:
    """The arguments of an .npz file into `given`, each member keyed by its argument's name, argN
    or arr_N (ArgumentNames), never by its place in the file; `KEY@R,P` is device R,P's own value.
    With `device`, the file is that device's own (plain keys only). Every key and every member's
    header is checked before any data is read (a global array for a partitioned parameter is one
    its sharding cuts into the parameter's tiles on the `grid`); `read=False` stops there. `ahead`:
    the file's members being read already (ReadAhead)."""
    names = ArgumentNames(function)
    inputs = function.function_type.inputs
    shardings = parameter_shardings(function)
    archive = _open_npz(path, option)
    with archive:
        members = npz_members(path, archive, option)
        if not members and names.count:
            raise ExecutionError(f"{option}: {path} holds no arrays, but @{names.function} takes {names.count} "
                                 f"argument(s): {names.describe()}; {NPZ_HOW}")
        places = names.positions([m.key for m in members], f"{option} {path}")
        for member in members:
            position, named = places[member.key]
            if device is not None and named is not None:
                raise ExecutionError(f"{option}: {path}: key '{member.key}' names a device, but the file is device "
                                     f"{device.replica_id},{device.partition_id}'s own: write plain keys (arg0, arg1, ...)")
            owner = device if device is not None else named
            t = inputs[position]
            problem = _dtype_problem(member, t) or (
                _shape_problem(member, t, shardings[position], grid) if owner is None else
                _shape_problem(member, t, None, (1, 1)))  # a device's own value is its tile already
            if problem:
                which = (f"argument {position}" if owner is None else
                         f"(argument {position} of device {owner.replica_id},{owner.partition_id})")
                raise ExecutionError(f"{option} {path} key '{member.key}'{':' if owner is None else ''} {which}: {problem}")
        if not read:
            return
        for member in members:
            position, named = places[member.key]
            given.give(device if device is not None else named, position, read_member(path, archive, member, option, ahead),
                       f"{option} {path} key '{member.key}'")


def add_directory(given: DeviceArguments, directory: str, function, option: str = "--args") -> None:
    """Every `DIR/NAME.npy` as an argument (memory-mapped): NAME is the argument's name, `argN` or
    `arr_N`; `NAME@R,P.npy` is device R,P's own value. A file naming no argument is refused by name."""
    folder = Path(directory)
    files = sorted(p for p in folder.iterdir() if p.suffix == ".npy")
    if not files:
        raise ExecutionError(f"{option}: {directory} holds no .npy files; {DIRECTORY_HOW}")
    places = ArgumentNames(function).positions([path.stem for path in files], f"{option} {directory}",
                                               lambda stem: f"{option} {folder / stem}.npy")
    for path in files:
        position, device = places[path.stem]
        given.give(device, position, load_npy(str(path), option), f"{option} {path}")


def note_copies(given: DeviceArguments, values) -> None:
    """A note for each large argument that the run holds as a copy of its file after all: its
    dtype or byte order differs from the program's (`f64` data for an `f32` argument) and so it
    was converted in memory."""
    per_device = values if isinstance(values, dict) else {None: values}
    for device, arrays in per_device.items():
        own = given.own.get(device, {}) if device is not None else {}
        for position, data in {**given.shared, **own}.items():
            value = arrays[position]
            if (isinstance(data, np.ndarray) and isinstance(value, np.ndarray) and data.nbytes >= READ_NOTE_BYTES
                    and not np.may_share_memory(data, value)):
                where = given.origin.get((device, position)) or given.shared_origin.get(position, f"argument {position}")
                print(f"note: {where}: its {data.dtype} data is converted to {value.dtype} in memory "
                      f"({value.nbytes / 2**20:,.0f} MiB), not read from the file; save it as {value.dtype} to "
                      "have it mapped", file=sys.stderr)
                return  # once is enough to say why memory grows


_DEVICE_FILE = re.compile(r"^device_(\d+)_(\d+)\.npz$")
DEVICE_FILES_HOW = "it holds one device_R_P.npz per device (device_1_0.npz: replica 1, partition 0)"


def add_device_directory(given: DeviceArguments, directory: str, function, option: str = "--args-per-device") -> None:
    """Every `DIR/device_R_P.npz` as device R,P's own arguments (each may hold all or some of them)."""
    folder = Path(directory)
    if not folder.is_dir():
        what = "does not exist" if not folder.exists() else "is a file, not a directory"
        raise ExecutionError(f"{option}: {directory} {what}; {DEVICE_FILES_HOW}")
    found = 0
    for path in sorted(folder.iterdir()):
        if path.suffix != ".npz":
            continue
        match = _DEVICE_FILE.match(path.name)
        if match is None:
            raise ExecutionError(f"{option}: {path} is not named device_R_P.npz; {DEVICE_FILES_HOW}")
        add_npz(given, str(path), function, option, ProcessId(int(match[1]), int(match[2])))
        found += 1
    if not found:
        raise ExecutionError(f"{option}: {directory} holds no .npz files; {DEVICE_FILES_HOW}")
