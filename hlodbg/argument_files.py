"""Argument files: `.npy` files, `.npz` archives and directories of `.npy` files, read without
copying what can be mapped.

A model's weights can be gigabytes, so an argument is memory-mapped from its file wherever the
file's layout allows: an `.npy` file always, an `.npz` member when the archive stores it
uncompressed (`numpy.savez`; a stored member is a plain `.npy` file inside the zip, mapped at its
offset) when its elements are aligned there, never when it is compressed (`numpy.savez_compressed`).
A member that cannot be mapped is read into memory, with a note when it is large. Maps are
read-only: a run never writes its arguments.
"""
from __future__ import annotations

import io
import re
import struct
import sys
import zipfile
from pathlib import Path
from typing import Callable, Optional, Sequence

import numpy as np

from hlodbg.engine import ExecutionError
from hlodbg.engine.machine.process import ProcessId
from hlodbg.engine.run.arguments import DeviceArguments, split_device_key

ZIP_SIGNATURE = b"PK\x03\x04"  # an .npz file is a zip archive of .npy files
NPY_SIGNATURE = b"\x93NUMPY"
NPZ_HOW = ("an .npz file holds the arguments as arg0, arg1, ... (numpy.savez writes one); "
           "arg0@R,P is device R,P's own value on a grid")
DIRECTORY_HOW = ("a directory of arguments holds one NAME.npy per argument, NAME being arg0, arg1, ... or the "
                 "argument's name in the program (NAME@R,P.npy: device R,P's own value on a grid)")

# A member this large that cannot be mapped is worth a note: it is read into memory.
READ_NOTE_BYTES = 64 << 20
MAPPED_HOW = "a directory of .npy files (--args DIR, one numpy.save per argument) is always mapped"
_LOCAL_HEADER = struct.Struct("<4s22xHH")  # signature, (version .. sizes), name length, extra length


def _signature(path: str, option: str) -> bytes:
    """The first bytes of an argument file; a clear error if it cannot be read at all."""
    try:
        with open(path, "rb") as handle:
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
        if not array.flags.aligned:  # numpy pads its headers to 64 bytes; an odd writer may not (see _stored_member)
            return _read_only(np.load(path, allow_pickle=False))
        return array

    return _array(read, path, option, "the array")


def _read_only(array: np.ndarray) -> np.ndarray:
    array.flags.writeable = False
    return array


def _stored_member(path: str, info: zipfile.ZipInfo) -> tuple[Optional[np.ndarray], str]:
    """A stored (uncompressed) .npy member of a zip, memory-mapped where it lies in the file, and
    why not when it cannot be: (array or None, reason). Elements must be aligned in the file as in
    memory: numpy computes on unaligned data through buffers, which changes the order of a sum's
    additions and so its rounding, and a run must not depend on where a file put its bytes. An
    unaligned member is read straight from the file into an aligned array (one copy); None when
    zipfile must read it (an empty array, an .npy format version numpy reads no other way)."""
    with open(path, "rb") as handle:
        handle.seek(info.header_offset)
        signature, name_length, extra_length = _LOCAL_HEADER.unpack(handle.read(_LOCAL_HEADER.size))
        if signature != ZIP_SIGNATURE:
            raise zipfile.BadZipFile("no local header")
        start = info.header_offset + _LOCAL_HEADER.size + name_length + extra_length
        handle.seek(start)
        version = np.lib.format.read_magic(handle)
        if version == (1, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_1_0(handle)
        elif version == (2, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_2_0(handle)
        else:
            return None, f".npy format {version[0]}.{version[1]}"
        _refuse_objects(dtype)
        data = handle.tell()
        size = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        if data - start + size != info.file_size:
            raise zipfile.BadZipFile("member size does not match its header")
        if size == 0:
            return None, "empty"
        order = "F" if fortran else "C"
        if data % dtype.alignment == 0:
            return np.memmap(path, dtype=dtype, mode="r", offset=data, shape=shape, order=order), ""
        raw = np.empty(size, np.uint8)  # numpy allocates aligned for every dtype
        if handle.readinto(memoryview(raw)) != size:
            raise EOFError("member cut short")
    array = raw.view(dtype).reshape(shape, order=order)
    return _read_only(array), f"its {dtype} elements start at byte {data}, not a multiple of {dtype.alignment}"


def _read_member(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> np.ndarray:
    with archive.open(info) as member:
        return _read_only(np.lib.format.read_array(member, allow_pickle=False))


def read_npz(path: str, option: str = "--args") -> dict[str, np.ndarray]:
    """The arrays of an .npz file by key, in file order; stored members memory-mapped, compressed
    ones read (with a note when large); a clear error for anything else."""
    head = _signature(path, option)
    if head.startswith(NPY_SIGNATURE):
        raise ExecutionError(f"{option}: {path} holds a single array (.npy): give it with --arg N={path}; {NPZ_HOW}")
    if not head.startswith(ZIP_SIGNATURE):
        kind = "is empty" if not head else "is not an .npz file"
        raise ExecutionError(f"{option}: {path} {kind}; {NPZ_HOW}")
    archive = _array(lambda: zipfile.ZipFile(path), path, option, "the archive")
    arrays: dict[str, np.ndarray] = {}
    with archive:
        for info in archive.infolist():
            name = info.filename
            if not name.endswith(".npy"):
                raise ExecutionError(f"{option}: {path}: {name} is not an array (.npy) but some other file; {NPZ_HOW}")
            key = name[:-len(".npy")]
            array, why = None, "it is compressed"
            if info.compress_type == zipfile.ZIP_STORED and not info.flag_bits & 0x1:  # stored, not encrypted
                array, why = _array(lambda: _stored_member(path, info), path, option, key)
            if why and info.file_size >= READ_NOTE_BYTES:
                print(f"note: {option}: {path}: {key} is read into memory ({info.file_size / 2**20:,.0f} MiB), "
                      f"not mapped from the file: {why}; {MAPPED_HOW}", file=sys.stderr)
            if array is None:
                array = _array(lambda: _read_member(archive, info), path, option, key)
            arrays[key] = array
    if not arrays:
        raise ExecutionError(f"{option}: {path} holds no arrays; {NPZ_HOW}")
    return arrays


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


def _positions(names: Sequence[str]) -> dict[str, int]:
    """Argument positions of .npz names: arg0, arg1, ... by number; any other names in file order."""
    distinct = list(dict.fromkeys(names))
    if all(n.startswith("arg") and n[3:].isdigit() for n in distinct):
        return {n: int(n[3:]) for n in distinct}
    return {n: i for i, n in enumerate(distinct)}


def add_npz(given: DeviceArguments, path: str, option: str = "--args", device: Optional[ProcessId] = None) -> None:
    """The arguments of an .npz file into `given`: `NAME` for every device, `NAME@R,P` for device R,P;
    with `device`, the file is that device's own (plain keys only)."""
    arrays = read_npz(path, option)
    keys = [split_device_key(key, f"{option}: {path}") for key in arrays]
    if device is not None:
        for key, (_, named) in zip(arrays, keys):
            if named is not None:
                raise ExecutionError(f"{option}: {path}: key '{key}' names a device, but the file is device "
                                     f"{device.replica_id},{device.partition_id}'s own: write plain keys (arg0, arg1, ...)")
    positions = _positions([name for name, _ in keys])
    for (key, value), (name, named) in zip(arrays.items(), keys):
        given.give(device if device is not None else named, positions[name], value, f"{option} {path} key '{key}'")


def argument_names(function) -> dict[str, int]:
    """What a file in an arguments directory may be called, by position: `argN` and the argument's
    own name in the program text (`w` for `%w`)."""
    names = {f"arg{i}": i for i in range(len(function.function_type.inputs))}
    for i, argument in enumerate(function.body.arguments if not function.is_declaration else ()):
        own = (argument.name or "").lstrip("%")
        if own and not own.isdigit():
            names[own] = i  # the program's own name wins over a positional argN spelled the same
    return names


def add_directory(given: DeviceArguments, directory: str, function, option: str = "--args") -> None:
    """Every `DIR/NAME.npy` as an argument (memory-mapped): NAME is `argN` or the argument's name;
    `NAME@R,P.npy` is device R,P's own value. A file naming no argument is refused by name."""
    folder = Path(directory)
    files = sorted(p for p in folder.iterdir() if p.suffix == ".npy")
    if not files:
        raise ExecutionError(f"{option}: {directory} holds no .npy files; {DIRECTORY_HOW}")
    names = argument_names(function)
    for path in files:
        name, device = split_device_key(path.stem, f"{option}: {path}")
        if name not in names:
            known = ", ".join(list(names)[:12]) + (", ..." if len(names) > 12 else "")
            raise ExecutionError(f"{option}: {path} names no argument of @{function.sym_name} (its arguments: "
                                 f"{known}); {DIRECTORY_HOW}")
        given.give(device, names[name], load_npy(str(path), option), f"{option} {path}")


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


def add_device_directory(given: DeviceArguments, directory: str, option: str = "--args-per-device") -> None:
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
        add_npz(given, str(path), option, ProcessId(int(match[1]), int(match[2])))
        found += 1
    if not found:
        raise ExecutionError(f"{option}: {directory} holds no .npz files; {DEVICE_FILES_HOW}")
