"""Running programs from Python and the command line: arguments in, results out.

`Program.run(*args)` lives on the Program; this module reads arguments from .npz/.npy files,
makes reproducible random ones, and summarises results for people and for JSON.
"""
from __future__ import annotations

import json
import math
import re
import sys
import zipfile
from pathlib import Path
from typing import Any, Optional, Sequence

import numpy as np

from hlodbg.engine import ExecutionError
from hlodbg.engine.ir.dtypes import Token, is_float_dtype, widen
from hlodbg.engine.machine.process import ProcessId
from hlodbg.engine.run.arguments import DeviceArguments, device_arguments, split_device_key
from hlodbg.engine.debug.summary import summarize as summarize_value
from hlodbg.engine.ir.types import TensorType, Type


ZIP_SIGNATURE = b"PK\x03\x04"  # an .npz file is a zip archive of .npy files
NPY_SIGNATURE = b"\x93NUMPY"
NPZ_HOW = ("an .npz file holds the arguments as arg0, arg1, ... (numpy.savez writes one); "
           "arg0@R,P is device R,P's own value on a grid")

# What every command's program argument may be (the frontend is picked from the text).
PROGRAM_HELP = "StableHLO MLIR (.mlir) or XLA HLO text (.hlo, .txt; dumps and as_text() output)"


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


def _array(read, path: str, option: str, what: str) -> np.ndarray:
    """`read()`'s array, or a clear error: hlodbg reads numeric arrays only, never pickles."""
    try:
        return read()
    except ValueError as e:
        if "allow_pickle" in str(e) or "pickled" in str(e):
            raise ExecutionError(f"{option}: {path}: {what} holds Python objects, not numbers; "
                                 "hlodbg reads numeric arrays only") from None
        raise ExecutionError(f"{option}: {path}: {what} is damaged or truncated") from None
    except (OSError, EOFError, zipfile.BadZipFile, KeyError):
        raise ExecutionError(f"{option}: {path}: {what} is damaged or truncated") from None


def read_npz(path: str, option: str = "--args") -> dict[str, np.ndarray]:
    """The arrays of an .npz file by key, in file order; a clear error for anything else."""
    head = _signature(path, option)
    if head.startswith(NPY_SIGNATURE):
        raise ExecutionError(f"{option}: {path} holds a single array (.npy): give it with --arg N={path}; {NPZ_HOW}")
    if not head.startswith(ZIP_SIGNATURE):
        kind = "is empty" if not head else "is not an .npz file"
        raise ExecutionError(f"{option}: {path} {kind}; {NPZ_HOW}")
    data = _array(lambda: np.load(path, allow_pickle=False), path, option, "the archive")
    names = list(data.files)
    if not names:
        raise ExecutionError(f"{option}: {path} holds no arrays; {NPZ_HOW}")
    arrays = {n: _array(lambda n=n: data[n], path, option, n) for n in names}
    for name, value in arrays.items():
        if not isinstance(value, np.ndarray):
            raise ExecutionError(f"{option}: {path}: {name} is not an array (.npy) but some other file; {NPZ_HOW}")
    return arrays


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


def load_npz(path: str) -> dict[int, np.ndarray]:
    """Arguments of an .npz file by position: keys arg0, arg1, ... (or any names, in file order)."""
    arrays = read_npz(path)
    positions = _positions(list(arrays))
    return {positions[name]: value for name, value in arrays.items()}


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


def load_npy(path: str, option: str = "--arg") -> np.ndarray:
    head = _signature(path, option)
    if not head.startswith(NPY_SIGNATURE):
        kind = "is empty" if not head else ("is an .npz archive of several arrays: give it with --args"
                                            if head.startswith(ZIP_SIGNATURE) else "is not an .npy file")
        raise ExecutionError(f"{option}: {path} {kind}; --arg N=FILE takes one array in an .npy file (numpy.save writes one)")
    return _array(lambda: np.load(path, allow_pickle=False), path, option, "the array")


def gather_arguments(function, npz_path, arg_specs, seed: int, quiet: bool = False, *,
                     per_device: Optional[str] = None, grid: tuple[int, int] = (1, 1)):
    """Arguments from `--args IN.npz` (keys `NAME@R,P` for one device), `--arg N=FILE.npy` and
    `--args-per-device DIR`, the rest random from `seed`: a list, or {device: list} on a `grid`
    where some device has its own (engine/run/arguments.py: device_arguments)."""
    given = DeviceArguments()
    if npz_path:
        add_npz(given, npz_path)
    for spec in arg_specs:
        index, sep, path = spec.partition("=")
        if not sep or not index.strip().isdigit():
            raise ExecutionError(f"--arg expects N=FILE.npy, got {spec!r}")
        given.give(None, int(index), load_npy(path), f"--arg {spec}")
    if per_device:
        add_device_directory(given, per_device)
    values, randomised = device_arguments(function.function_type.inputs, given, *grid, seed=seed)
    if randomised and not quiet:
        which = ", ".join(str(i) for i in randomised)
        print(f"note: random argument(s) {which} (seed {seed}); pass --args/--arg to choose them", file=sys.stderr)
    return values, randomised


def summarize(value: Any) -> dict:
    """A JSON-friendly summary: dtype, shape, and min/max/mean/NaN/Inf counts; values if small.

    Built on engine.summary.ValueSummary; min/max/mean are over finite elements and left out for
    complex tensors (whose summary statistics are of magnitudes).
    """
    if isinstance(value, Token):
        return {"kind": "token"}
    if isinstance(value, tuple):
        return {"kind": "tuple", "elements": [summarize(v) for v in value]}
    array = np.asarray(value)
    summary = summarize_value(array)
    out: dict = {"dtype": summary.dtype, "shape": list(summary.shape)}
    if summary.size == 0:
        return out
    complex_valued = array.dtype.kind == "c"
    if complex_valued or is_float_dtype(array.dtype):
        out["nan"] = summary.nan
        out["inf"] = summary.inf
    if summary.min is not None and not complex_valued:
        out.update(min=_num(summary.min), max=_num(summary.max), mean=_num(summary.mean))
    if summary.size <= 16:
        out["values"] = _to_list(widen(array))
    return out


def _num(x: Any) -> Any:
    x = x.item() if hasattr(x, "item") else x
    if isinstance(x, float) and not math.isfinite(x):
        return str(x)
    return x


def _to_list(array: np.ndarray) -> Any:
    if array.dtype.kind == "c":
        return [[_num(z.real), _num(z.imag)] for z in array.reshape(-1)]
    return [_num(v) for v in array.reshape(-1)]


def format_result(index: int, value: Any, t: Type) -> str:
    """`result0: tensor<2x3xf32>  min -1.2  max 3.4  mean 0.5` and, if small, the values."""
    head = f"result{index}: {t}"
    if isinstance(value, (Token, tuple)):
        return f"{head}  {value!r}"
    s = summarize(value)
    parts = [head]
    for key in ("min", "max", "mean"):
        if key in s:
            parts.append(f"{key} {s[key]:.6g}" if isinstance(s[key], float) else f"{key} {s[key]}")
    for key in ("nan", "inf"):
        if s.get(key):
            parts.append(f"{key.upper()} x{s[key]}")
    line = "  ".join(parts)
    array = np.asarray(value)
    if array.size <= 64:
        with np.printoptions(precision=6, suppress=False, threshold=64, linewidth=100):
            line += "\n  " + np.array2string(array, separator=", ").replace("\n", "\n  ")
    return line


def result_arrays(results: Sequence[Any], suffix: str = "") -> dict:
    """`result0`, `result1_0` (tuple elements), ... with `suffix` (e.g. `@0,1` for a device)."""
    arrays = {}
    for i, value in enumerate(results):
        if isinstance(value, Token):
            continue
        if isinstance(value, tuple):
            for j, element in enumerate(value):
                arrays[f"result{i}_{j}{suffix}"] = np.asarray(element)
            continue
        arrays[f"result{i}{suffix}"] = np.asarray(value)
    return arrays


def save_arrays(path: str, arrays: dict) -> None:
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    np.savez(path, **arrays)


def save_results(path: str, results: Sequence[Any]) -> None:
    save_arrays(path, result_arrays(results))


def target_name(args) -> str:
    """The canonical name of the command line's --target (`tpu` is `tpu-v5e`)."""
    from hlodbg.engine.machine.targets import DEFAULT_TARGET, canonical_target

    return canonical_target(getattr(args, "target", None) or DEFAULT_TARGET)


def report_results(args, program, results, result_types, randomised, extra: dict | None = None) -> None:
    """Results as --out (npz), --json, or one summary line each."""
    if args.out:
        save_results(args.out, results)
    if args.json:
        from hlodbg.engine.run.interpreter import entry_function

        payload = {
            "program": program.name,
            "entry": entry_function(program.module, args.entry).sym_name,  # `main` may stand for `main.68`
            "target": target_name(args),
            "random_arguments": randomised,
            "seed": args.seed,
            **(extra or {}),
            "results": [dict(name=f"result{i}", type=str(t), **summarize(v)) for i, (v, t) in enumerate(zip(results, result_types))],
        }
        print(json.dumps(payload, indent=2))
    elif not args.out:
        for i, (value, t) in enumerate(zip(results, result_types)):
            print(format_result(i, value, t))
    else:
        print(f"saved {len(results)} result(s) to {args.out}")
