"""A capture: the values of one real run, kept on disk in the probe layout (`RUN.hlocap/`).

    RUN.hlocap/
      capture.json        the manifest: program, entry, target, devices (id, kind, host), grid,
                          what was asked (`values`), loop capacity, what was left out and why,
                          XLA's memory figures, jax version, timings
      program.mlir        the module as captured (the debugger checks PROG is the same text)
      inputs/argN.npy     the arguments, global values (`--args RUN.hlocap/inputs` reads them)
      index.csv           one row per captured value per device (`index-host<k>.csv` per host
                          while a many-host capture is being written; `merge` joins them)
      values/<n>.npy      the arrays (narrow types such as bf16 stored as their bytes; the
                          index's dtype column views them again)

A captured value is named by where it was computed, the same way by the writer (which knows it
statically, from the program it instrumented) and by the debugger (which knows it from the frames
of the run it replays):
- `site`: `@fn#K`, the K-th op (from 0) of function @fn in textual order, nested regions
  included (Function.ops); `result` picks one of its results;
- `context`: how the run got there, outermost first, `/`-separated: for every call on the way
  the call op's site, for every loop iteration the loop op's site and `[i]` (from 0), for every
  other region it entered (a branch, a manual computation) the owner's site. "" at the entry
  function's top level. E.g. `@main#12[3]/@main#15` is the call at @main#15 inside iteration 3
  of the while at @main#12;
- `device`: the device id in the grid (replica * partitions + partition); 0 on one device.

Values inside reducer bodies (reduce, sort comparators, scatter updates, all_reduce) are never
captured: XLA fuses them into loops over elements. The manifest's `left_out` says what else was
not captured and why (a loop past its capacity, values a --values spec did not select).
"""
from __future__ import annotations

import csv
import json
import os
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Optional, Sequence

import numpy as np

from ..ir.core import Function, Operation
from ..ir.errors import HlodbgError

FORMAT_VERSION = 1
SUFFIX = ".hlocap"
MANIFEST = "capture.json"
PROGRAM = "program.mlir"
INPUTS = "inputs"
INDEX = "index.csv"
VALUES = "values"
COLUMNS = ("context", "site", "result", "device", "function", "op", "value", "type", "shape", "dtype", "file")


class CaptureError(HlodbgError):
    """A capture directory that cannot be read or written."""


# -- naming values ------------------------------------------------------------------------------

_SITES: "OrderedDict[int, tuple[Function, dict[Operation, int]]]" = OrderedDict()
_SITES_KEPT = 4096


def op_index(op: Operation) -> int:
    """K of `op`'s site: its position among the ops of its function (textual order, nested
    regions included), numbered once per function."""
    function = op.function if not isinstance(op, Function) else op
    if function is None:
        raise CaptureError(f"{op.name} is not inside a function")
    key = id(function)
    found = _SITES.get(key)
    if found is None or found[0] is not function:
        found = (function, {o: k for k, o in enumerate(function.ops)})
        _SITES[key] = found
        while len(_SITES) > _SITES_KEPT:
            _SITES.popitem(last=False)
    else:
        _SITES.move_to_end(key)
    return found[1][op]


def site(op: Operation) -> str:
    """`@fn#K`: the op's place in its program, stable for the same program text."""
    return f"@{op.function.sym_name}#{op_index(op)}"


def context_step(owner: Operation, iteration: Optional[int]) -> str:
    """One step of a context: the owner's site, with `[i]` for a loop iteration."""
    text = site(owner)
    return text if iteration is None else f"{text}[{iteration}]"


def join_context(*steps: str) -> str:
    return "/".join(s for s in steps if s)


def frame_context(frame: Any) -> str:
    """The context of values computed in `frame` (engine/run/interpreter.py's Frame): one step per
    frame that has an owner (the call, loop or branch op that opened it), outermost first."""
    steps = []
    while frame is not None:
        if frame.owner is not None:
            steps.append(context_step(frame.owner, frame.iteration))
        frame = frame.parent
    return "/".join(reversed(steps))


# -- rows ----------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Row:
    """One captured array: a result of one op instance on one device."""

    context: str
    site: str
    result: int
    device: int
    function: str
    op: str
    value: str  # the SSA name, for people
    type: str
    shape: tuple[int, ...]
    dtype: str
    file: str  # relative to the capture directory

    @property
    def key(self) -> tuple[str, str, int, int]:
        return (self.context, self.site, self.result, self.device)

    def as_csv(self) -> dict:
        return {"context": self.context, "site": self.site, "result": self.result, "device": self.device,
                "function": self.function, "op": self.op, "value": self.value, "type": self.type,
                "shape": "x".join(map(str, self.shape)), "dtype": self.dtype, "file": self.file}

    @classmethod
    def from_csv(cls, record: dict) -> "Row":
        shape = tuple(int(d) for d in record["shape"].split("x")) if record["shape"] else ()
        return cls(record["context"], record["site"], int(record["result"]), int(record["device"]), record["function"],
                   record["op"], record["value"], record["type"], shape, record["dtype"], record["file"])


def index_name(host: Optional[int]) -> str:
    return INDEX if host is None else f"index-host{host}.csv"


def earlier_capture(directory: os.PathLike | str, host: Optional[int] = None) -> list[str]:
    """The files of an earlier capture in `directory` that a new one written there by `host` would
    mix with (its values, its index, and for host 0 or a single host the manifest, program and
    inputs); a writer must not start over them. Other hosts' files are no obstacle: on a shared
    disk the hosts of one run write into the same directory at the same time."""
    directory = Path(directory)
    if not directory.is_dir():
        return []
    prefix = "" if host is None else f"h{host}-"
    values = sorted(p.name for p in directory.glob(f"{VALUES}/{prefix}*.npy"))
    names = [index_name(host)]
    if host in (None, 0):
        names += [MANIFEST, INDEX, PROGRAM, INPUTS]
    found = sorted({name for name in names if (directory / name).exists()})
    return found + [f"{VALUES}/{name}" for name in values[:2]] + ([f"{len(values) - 2} more values"] if len(values) > 2 else [])


class CaptureWriter:
    """Writes a capture directory: `add` each array as it comes, then `finish(manifest)`.

    On many hosts every host writes its own devices' arrays (file names carry the host) and its
    own `index-host<k>.csv`; host 0 writes the manifest, program and inputs, and `merge` joins
    the indexes once every host is done."""

    def __init__(self, directory: os.PathLike | str, host: Optional[int] = None):
        self.directory = Path(directory)
        self.host = host
        self.rows: list[Row] = []
        self.created = not self.directory.exists()  # discard() removes only a directory it made
        try:
            (self.directory / VALUES).mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise CaptureError(f"cannot create the capture directory {self.directory}: {e.strerror or e}") from None

    def add(self, op: Operation, result: int, context: str, device: int, array: Any) -> Row:
        array = np.asarray(array)
        prefix = "" if self.host is None else f"h{self.host}-"
        file = f"{VALUES}/{prefix}{len(self.rows)}.npy"
        value = op.results[result]
        try:
            np.save(self.directory / file, array)
        except OSError as e:
            raise CaptureError(f"cannot write {self.directory / file}: {e.strerror or e}") from None
        row = Row(context, site(op), result, int(device), op.function.sym_name, op.name, value.name,
                  str(value.type), tuple(array.shape), array.dtype.name, file)
        self.rows.append(row)
        return row

    def discard(self) -> None:
        """Remove what this writer wrote (its values, the one it was writing, its index, and for
        host 0 the manifest, program and inputs), and the directory it made when that leaves it empty."""
        prefix = "" if self.host is None else f"h{self.host}-"
        files = [row.file for row in self.rows] + [f"{VALUES}/{prefix}{len(self.rows)}.npy", index_name(self.host)]
        if self.host in (None, 0):
            files += [MANIFEST, PROGRAM] + [f"{INPUTS}/{p.name}" for p in (self.directory / INPUTS).glob("arg*.npy")]
        for name in files:
            try:
                (self.directory / name).unlink()
            except OSError:
                pass
        for empty in (self.directory / INPUTS, self.directory / VALUES) + ((self.directory,) if self.created else ()):
            try:
                empty.rmdir()
            except OSError:  # not empty (another host's files, the user's), or not there
                pass

    def finish(self, manifest: Optional[dict] = None, program_text: Optional[str] = None,
               inputs: Optional[Sequence[np.ndarray]] = None) -> None:
        """Write this host's index and, when given (host 0), the manifest, program and inputs."""
        try:
            with open(self.directory / index_name(self.host), "w", newline="") as handle:
                writer = csv.DictWriter(handle, fieldnames=COLUMNS)
                writer.writeheader()
                writer.writerows(row.as_csv() for row in self.rows)
            if program_text is not None:
                (self.directory / PROGRAM).write_text(program_text)
            if inputs is not None:
                (self.directory / INPUTS).mkdir(exist_ok=True)
                for i, array in enumerate(inputs):
                    np.save(self.directory / INPUTS / f"arg{i}.npy", np.asarray(array))
                manifest = {**(manifest or {}), "input_dtypes": [np.asarray(a).dtype.name for a in inputs]}
            if manifest is not None:
                (self.directory / MANIFEST).write_text(json.dumps({"format": FORMAT_VERSION, **manifest}, indent=1, default=str))
        except OSError as e:
            raise CaptureError(f"cannot write the capture {self.directory}: {e.strerror or e}") from None


def merge(directory: os.PathLike | str) -> int:
    """Join every host's `index-host<k>.csv` into `index.csv` (a many-host capture, once all hosts
    are done); returns the number of rows. Checks every host the manifest names wrote its index."""
    directory = Path(directory)
    manifest = read_manifest(directory)
    hosts = int(manifest.get("hosts", 1))
    rows: list[dict] = []
    missing = []
    for host in range(hosts):
        path = directory / index_name(host)
        if not path.exists():
            missing.append(host)
            continue
        with open(path, newline="") as handle:
            rows.extend(csv.DictReader(handle))
    if missing:
        raise CaptureError(f"{directory}: host(s) {', '.join(map(str, missing))} of {hosts} wrote no index yet "
                           f"(expected {', '.join(index_name(h) for h in missing)})")
    rows.sort(key=lambda r: (int(r["device"]), r["context"], r["site"], int(r["result"])))
    with open(directory / INDEX, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    return len(rows)


def read_manifest(directory: os.PathLike | str) -> dict:
    path = Path(directory) / MANIFEST
    try:
        manifest = json.loads(path.read_text())
    except FileNotFoundError:
        raise CaptureError(f"{directory} is not a capture: it has no {MANIFEST} (make one with `hlodbg capture`)") from None
    except (OSError, ValueError) as e:
        raise CaptureError(f"cannot read {path}: {e}") from None
    if manifest.get("format") != FORMAT_VERSION:
        raise CaptureError(f"{path}: capture format {manifest.get('format')!r}; this hlodbg reads format {FORMAT_VERSION}")
    return manifest


class Capture:
    """A capture opened for reading: `Capture.open(path)`, then `array(context, site, result,
    device)` (memory-mapped, read-only) or None when that value was not captured."""

    def __init__(self, directory: Path, manifest: dict, rows: list[Row]):
        self.directory = directory
        self.manifest = manifest
        self.rows = rows
        self._by_key = {row.key: row for row in rows}
        self._sites = {row.site for row in rows}

    @classmethod
    def open(cls, directory: os.PathLike | str) -> "Capture":
        directory = Path(directory)
        manifest = read_manifest(directory)
        index = directory / INDEX
        if not index.exists():
            if any(directory.glob("index-host*.csv")):
                raise CaptureError(f"{directory}: the hosts' indexes are not merged yet; run `hlodbg capture --merge {directory}`")
            raise CaptureError(f"{directory}: no {INDEX}")
        try:
            with open(index, newline="") as handle:
                reader = csv.DictReader(handle)
                rows = []
                for record in reader:
                    if None in record.values() or None in record:  # too few or too many columns
                        raise CaptureError(f"{index}:{reader.line_num}: a row of {len(COLUMNS)} columns "
                                           f"({', '.join(COLUMNS)}) was expected; the index is damaged or cut short")
                    rows.append(Row.from_csv(record))
        except (OSError, KeyError, ValueError) as e:
            raise CaptureError(f"cannot read {index}: {e}") from None
        return cls(directory, manifest, rows)

    # -- what is there ------------------------------------------------------------------------
    @property
    def program_text(self) -> str:
        try:
            return (self.directory / PROGRAM).read_text()
        except OSError as e:
            raise CaptureError(f"cannot read {self.directory / PROGRAM}: {e.strerror or e}") from None

    def inputs(self) -> list[np.ndarray]:
        """The run's arguments (memory-mapped, read-only), in order."""
        dtypes = self.manifest.get("input_dtypes", [])
        arrays = []
        for i, dtype in enumerate(dtypes):
            path = self.directory / INPUTS / f"arg{i}.npy"
            try:
                array = np.load(path, mmap_mode="r", allow_pickle=False)
            except (OSError, ValueError) as e:
                raise CaptureError(f"cannot read {path}: {_npy_problem(path, e)}") from None
            arrays.append(array if array.dtype.name == dtype else array.view(_dtype_named(dtype)))
        return arrays

    @property
    def devices(self) -> list[dict]:
        """[{id, kind, host}] of the devices the run used, by id."""
        return list(self.manifest.get("devices", [{"id": 0, "kind": self.manifest.get("platform", "?"), "host": 0}]))

    @property
    def grid(self) -> tuple[int, int]:
        replicas, partitions = self.manifest.get("grid", (1, 1))
        return int(replicas), int(partitions)

    def has_site(self, site_text: str) -> bool:
        return site_text in self._sites

    def row(self, context: str, site_text: str, result: int = 0, device: int = 0) -> Optional[Row]:
        return self._by_key.get((context, site_text, result, device))

    def array(self, context: str, site_text: str, result: int = 0, device: int = 0) -> Optional[np.ndarray]:
        row = self.row(context, site_text, result, device)
        return None if row is None else self.load(row)

    def load(self, row: Row, mapped: bool = True) -> np.ndarray:
        """`row`'s array, memory-mapped read-only (or read into memory: `mapped=False`, for small
        arrays a reader keeps many of, as each mapping holds a file descriptor)."""
        path = self.directory / row.file
        try:
            array = np.load(path, mmap_mode="r" if mapped else None, allow_pickle=False)
        except (OSError, ValueError) as e:
            raise CaptureError(f"cannot read {path}: {_npy_problem(path, e)}") from None
        if array.dtype.name != row.dtype:
            array = array.view(_dtype_named(row.dtype))
        return array

    def __iter__(self) -> Iterator[Row]:
        return iter(self.rows)


def _npy_problem(path: Path, error: Exception) -> str:
    """What is wrong with an array file numpy would not load. numpy takes a file without the .npy
    magic for a pickle and talks of `allow_pickle`, which would only mislead here."""
    try:
        with open(path, "rb") as handle:
            magic = handle.read(6)
    except OSError as e:
        return e.strerror or str(e)
    if magic != b"\x93NUMPY":
        return "not a .npy array file (the capture is damaged)"
    return str(error)


def _dtype_named(name: str) -> np.dtype:
    try:
        return np.dtype(name)
    except TypeError:
        import ml_dtypes

        return np.dtype(getattr(ml_dtypes, name))


__all__ = ["COLUMNS", "Capture", "CaptureError", "CaptureWriter", "FORMAT_VERSION", "Row", "SUFFIX", "context_step",
           "frame_context", "join_context", "merge", "op_index", "read_manifest", "site"]
