"""Running programs from Python and the command line: arguments in, results out.

`Program.run(*args)` lives on the Program; this module gathers arguments from .npz/.npy files and
directories (read, memory-mapped, in hlodbg.argument_files), makes reproducible random ones, and
summarises results for people and for JSON.
"""
from __future__ import annotations

import json
import math
import sys
import threading
from pathlib import Path
from typing import Any, Callable, Optional, Sequence

import numpy as np

from hlodbg.argument_files import (
    ReadAhead,
    add_device_directory,
    add_directory,
    add_npz,
    load_npy,
    note_copies,
    save_npz,
)
from hlodbg.engine import ExecutionError
from hlodbg.engine.debug.summary import count_text
from hlodbg.engine.debug.summary import summarize as summarize_value
from hlodbg.engine.ir.dtypes import Token, compute_dtype, is_float_dtype, widen
from hlodbg.engine.ir.errors import printable
from hlodbg.engine.ir.types import Type
from hlodbg.engine.run.arguments import DeviceArguments, device_arguments, parameter_shardings


# What every command's program argument may be (the frontend is picked from the text).
def gather_arguments(function, npz_path, arg_specs, seed: int, quiet: bool = False, *,
                     per_device: Optional[str] = None, grid: tuple[int, int] = (1, 1), ahead: Optional[ReadAhead] = None):
    """Arguments from `--args IN.npz` or `--args DIR` of NAME.npy files (NAME@R,P for one device),
    `--arg N=FILE.npy` and `--args-per-device DIR`, the rest random from `seed`: a list, or
    {device: list} on a `grid` where some device has its own (engine/run/arguments.py:
    device_arguments). Files are memory-mapped where they can be (hlodbg.argument_files); `ahead`:
    the .npz file's members being read already (ReadAhead)."""
    given = DeviceArguments()
    if npz_path and Path(npz_path).is_dir():
        add_directory(given, npz_path, function)
    elif npz_path:
        add_npz(given, npz_path, function, grid=grid, ahead=ahead)
    for spec in arg_specs:
        index, sep, path = spec.partition("=")
        if not sep or not index.strip().isdigit():
            raise ExecutionError(f"--arg expects N=FILE.npy, got {spec!r}")
        given.give(None, int(index), load_npy(path), f"--arg {spec}")
    if per_device:
        add_device_directory(given, per_device, function)
    values, randomised = device_arguments(function.function_type.inputs, given, *grid, seed=seed,
                                          shardings=parameter_shardings(function))
    if not quiet:
        note_copies(given, values)
    if randomised and not quiet:
        which = ", ".join(str(i) for i in randomised)
        print(f"note: random argument(s) {which} (seed {seed}); pass --args/--arg to choose them", file=sys.stderr)
    return values, randomised


def gather_arguments_in_background(function, npz_path, arg_specs, seed: int, *, per_device: Optional[str] = None,
                                   grid: tuple[int, int] = (1, 1), ahead: Optional[ReadAhead] = None) -> Callable[[], Any]:
    """For the debugger, which opens while its arguments load: an `--args IN.npz`'s keys and
    headers are checked now (a wrong file is refused before anything opens), then
    `gather_arguments` runs on a thread of its own; the result waits for it and returns the
    arguments, or raises what gathering them raised. A member `numpy.savez` left unaligned is
    read, not mapped (365 MB of a GPT-2 step's weights: 0.3 s), and the read lets go of the
    interpreter lock, so it goes on while the screen is built."""
    if npz_path and not Path(npz_path).is_dir():
        add_npz(DeviceArguments(), npz_path, function, grid=grid, read=False)
    outcome: list = []

    def gather() -> None:
        try:
            outcome.append((True, gather_arguments(function, npz_path, arg_specs, seed, quiet=True, per_device=per_device, grid=grid, ahead=ahead)[0]))
        except BaseException as error:  # noqa: BLE001 - handed to whoever asks for the arguments
            outcome.append((False, error))

    reader = threading.Thread(target=gather, name="hlodbg-arguments", daemon=True)  # never keeps a closing app waiting
    reader.start()

    def arguments() -> Any:
        reader.join()
        succeeded, value = outcome[0]
        if not succeeded:
            raise value
        return value

    return arguments


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
    if summary.sampled:  # the mean is estimated from this many elements (engine.debug.summary)
        out["sampled"] = summary.sampled
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
            estimated = "≈" if key == "mean" and s.get("sampled") else ""
            parts.append(f"{key} {estimated}{s[key]:.6g}" if isinstance(s[key], float) else f"{key} {estimated}{s[key]}")
    for key in ("nan", "inf"):
        if s.get(key):
            parts.append(f"{key.upper()} x{s[key]}")
    if s.get("sampled"):
        parts.append(f"(mean ≈ sampled {count_text(s['sampled'])} of {count_text(int(np.prod(s['shape'], dtype=np.int64)))})")
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


def npz_output(path: str, option: str = "--out") -> str:
    """The file `--out PATH` writes (PATH.npz when PATH does not end in .npz, as numpy.savez
    does), checked before the run: its directory must exist (a typo must not create one) and
    the file be one that can be replaced."""
    real = Path(path if str(path).endswith(".npz") else f"{path}.npz")
    parent = real.parent
    if not parent.is_dir():
        what = "does not exist" if not parent.exists() else "is not a directory"
        raise ExecutionError(f"{option} {path}: the directory {parent} {what}; create it first or save elsewhere")
    if real.is_dir():
        raise ExecutionError(f"{option} {path}: {real} is a directory; name a file to save the results in")
    if real.exists() and not real.is_file():
        raise ExecutionError(f"{option} {path}: {real} is not a regular file; name a file to save the results in")
    return str(real)


def _numpy_reads_back(dtype: np.dtype) -> bool:
    """Whether numpy alone reads an .npy of `dtype` back as `dtype`: bf16, the f8/f6/f4 family and
    int2/int4 (ml_dtypes) are stored by their bytes (`|V2`), which numpy cannot tell apart."""
    try:
        return np.dtype(np.lib.format.dtype_to_descr(dtype)) == dtype
    except (TypeError, ValueError):
        return False


def save_arrays(path: str, arrays: dict, option: str = "--out") -> tuple[str, str]:
    """`arrays` in an .npz whose members `--args` maps when it is given back
    (argument_files.save_npz), every one readable by numpy alone: an array of a type numpy does
    not know (bf16, f8, int4) is stored widened to the type it is computed in (f32, i32), which
    holds every one of its values exactly, and `--args` narrows it back to the argument's type.
    Returns the file written and a sentence on what was widened ("" when nothing was)."""
    real = npz_output(path, option)
    stored, widened = {}, {}
    for key, array in arrays.items():
        array = np.asarray(array)
        if not _numpy_reads_back(array.dtype):
            widened.setdefault(f"{array.dtype} as {compute_dtype(array.dtype)}", []).append(key)
            array = widen(array)
        stored[key] = array
    try:
        save_npz(real, stored)
    except OSError as e:
        raise ExecutionError(f"{option}: cannot write {real}: {e.strerror or e}") from None
    if not widened:
        return real, ""
    kinds = "; ".join(f"{', '.join(keys[:4])}{', ...' if len(keys) > 4 else ''}: {kind}" for kind, keys in widened.items())
    return real, (f"stored widened, exactly, so numpy reads them ({kinds}); --args reads them back as they were, "
                  "and numpy's astype(ml_dtypes.<type>) narrows them again")


def save_results(path: str, results: Sequence[Any]) -> tuple[str, str]:
    return save_arrays(path, result_arrays(results))


def target_name(args) -> str:
    """The canonical name of the command line's --target (`tpu` is `tpu-v5e`)."""
    from hlodbg.engine.machine.targets import DEFAULT_TARGET, canonical_target

    return canonical_target(getattr(args, "target", None) or DEFAULT_TARGET)


def report_results(args, program, results, result_types, randomised, extra: dict | None = None) -> None:
    """Results as --out (npz), --json, or one summary line each."""
    saved = save_results(args.out, results) if args.out else None
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
        print(saved_text(f"{len(results)} result(s)", *saved))


def saved_text(what: str, path: str, widened: str) -> str:
    """`saved 2 result(s) to out.npz`, and what was stored widened."""
    return f"saved {what} to {printable(str(path))}" + (f"; {widened}" if widened else "")
