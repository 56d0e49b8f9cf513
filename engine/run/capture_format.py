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
import io
import json
import os
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Optional, Sequence

import numpy as np

from ..ir.core import Function, Operation
from ..ir.errors import HlodbgError
from ..machine.files import PROGRAM_BYTES_LIMIT, inside, open_regular, read_bounded

FORMAT_VERSION = 1
SUFFIX = ".hlocap"
MANIFEST = "capture.json"
PROGRAM = "program.mlir"
INPUTS = "inputs"
INDEX = "index.csv"
VALUES = "values"
COLUMNS = ("context", "site", "result", "device", "function", "op", "value", "type", "shape", "dtype", "file")
# Bounds on what a manifest may claim, so a damaged one drives no endless loop: more devices than
# any machine has (a TPU v5p pod has 8,960 chips), more hosts than devices.
MOST_DEVICES = 1 << 16


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
    hosts = manifest.get("hosts", 1)
    missing = [host for host in range(hosts) if not (directory / index_name(host)).exists()]
    if missing:
        shown = missing[:8]
        more = f" and {len(missing) - len(shown)} more" if len(missing) > len(shown) else ""
        raise CaptureError(f"{directory}: host(s) {', '.join(map(str, shown))}{more} of {hosts} wrote no index yet "
                           f"(expected {', '.join(index_name(h) for h in shown)}{more})")
    rows: list[Row] = []
    for host in range(hosts):
        rows.extend(_read_index(directory, index_name(host)))
    rows.sort(key=lambda r: (r.device, r.context, r.site, r.result))
    with open(directory / INDEX, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(row.as_csv() for row in rows)
    return len(rows)


def capture_file(directory: os.PathLike | str, name: str) -> Path:
    """The real path of file `name` of a capture, which must lie inside it: an index naming
    `../x.npy` or an absolute path, or a symlink out of the capture, is refused."""
    try:
        return inside(directory, name)
    except ValueError:
        raise CaptureError(f"{directory}: {name!r} lies outside the capture; a capture's files are inside its "
                           "directory (the capture is damaged or was made to read other files)") from None


def _read_bytes(directory: os.PathLike | str, name: str, limit: int = PROGRAM_BYTES_LIMIT) -> bytes:
    path = capture_file(directory, name)
    try:
        return read_bounded(path, limit, f"a capture's {name}")
    except OSError as e:
        if isinstance(e, FileNotFoundError):
            raise
        raise CaptureError(f"cannot read {Path(directory) / name}: {e.strerror or e}") from None


def read_manifest(directory: os.PathLike | str) -> dict:
    path = Path(directory) / MANIFEST
    try:
        manifest = json.loads(_read_bytes(directory, MANIFEST, 64 << 20))
    except FileNotFoundError:
        raise CaptureError(f"{directory} is not a capture: it has no {MANIFEST} (make one with `hlodbg capture`)") from None
    except (ValueError, RecursionError) as e:
        raise CaptureError(f"cannot read {path}: it is not JSON ({e})") from None
    if not isinstance(manifest, dict):
        raise CaptureError(f"cannot read {path}: a manifest is a JSON object, not {type(manifest).__name__}")
    if manifest.get("format") != FORMAT_VERSION:
        raise CaptureError(f"{path}: capture format {manifest.get('format')!r}; this hlodbg reads format {FORMAT_VERSION}")
    _check_manifest(manifest, path)
    return manifest


def _count(value: Any, low: int, high: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high


def _check_manifest(manifest: dict, path: Path) -> None:
    """Every field a reader acts on has the form `hlodbg capture` writes, or a CaptureError says
    which does not."""
    def bad(field: str, wanted: str) -> CaptureError:
        shown = json.dumps(manifest[field])
        shown = shown if len(shown) <= 60 else shown[:57] + "..."
        return CaptureError(f"{path}: \"{field}\" is {shown}; {wanted} (the capture is damaged)")

    grid = manifest.get("grid", [1, 1])
    if not (isinstance(grid, list) and len(grid) == 2 and all(_count(n, 1, MOST_DEVICES) for n in grid)
            and grid[0] * grid[1] <= MOST_DEVICES):
        raise bad("grid", f"it is [replicas, partitions], whole numbers from 1 (at most {MOST_DEVICES:,} devices)")
    if not _count(manifest.get("hosts", 1), 1, MOST_DEVICES):
        raise bad("hosts", f"it is how many hosts wrote the capture, a whole number from 1 to {MOST_DEVICES:,}")
    dtypes = manifest.get("input_dtypes", [])
    if not (isinstance(dtypes, list) and len(dtypes) <= MOST_DEVICES and all(isinstance(d, str) for d in dtypes)):
        raise bad("input_dtypes", "it is a list of dtype names such as \"float32\", one per input")
    for name in dtypes:
        if _known_dtype(name) is None:
            raise bad("input_dtypes", f"{name!r} is no dtype hlodbg knows")
    devices = manifest.get("devices", [])
    if not (isinstance(devices, list) and len(devices) <= MOST_DEVICES
            and all(isinstance(d, dict) and _count(d.get("id"), 0, MOST_DEVICES) for d in devices)):
        raise bad("devices", "it is a list of {\"id\": N, \"kind\": ..., \"host\": N}, one per device")
    for field in ("program", "entry", "target", "platform"):
        if field in manifest and not isinstance(manifest[field], str):
            raise bad(field, "it is text")


def _read_index(directory: Path, name: str) -> list[Row]:
    """The rows of index `name` of a capture, each checked: its columns, numbers, dtype, and a
    file inside the capture."""
    index = directory / name
    try:
        with open_regular(capture_file(directory, name)) as raw:
            handle = io.TextIOWrapper(raw, encoding="utf-8", newline="")
            reader = csv.DictReader(handle)
            rows = []
            known: set[str] = set()
            for record in reader:
                where = f"{index}:{reader.line_num}"
                if None in record.values() or None in record:  # too few or too many columns
                    raise CaptureError(f"{where}: a row of {len(COLUMNS)} columns ({', '.join(COLUMNS)}) was expected; "
                                       "the index is damaged or cut short")
                try:
                    row = Row.from_csv(record)
                except (KeyError, ValueError):
                    raise CaptureError(f"{where}: result, device and shape are whole numbers (shape as 2x3); "
                                       "the index is damaged") from None
                if row.result < 0 or row.device < 0 or any(d < 0 for d in row.shape):
                    raise CaptureError(f"{where}: result, device and shape are never negative; the index is damaged")
                if row.dtype not in known:
                    if _known_dtype(row.dtype) is None:
                        raise CaptureError(f"{where}: {row.dtype!r} is no dtype hlodbg knows; the index is damaged")
                    known.add(row.dtype)
                if not row.file or os.path.isabs(row.file) or ".." in row.file.replace("\\", "/").split("/"):
                    raise CaptureError(f"{where}: the file {row.file!r} lies outside the capture; a capture's files "
                                       "are inside its directory (the capture is damaged or was made to read other files)")
                rows.append(row)
    except FileNotFoundError:
        raise CaptureError(f"{directory}: no {name}") from None
    except UnicodeDecodeError:
        raise CaptureError(f"cannot read {index}: it is not UTF-8 text") from None
    except (OSError, csv.Error) as e:
        raise CaptureError(f"cannot read {index}: {getattr(e, 'strerror', None) or e}") from None
    return rows


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
        if not (directory / INDEX).exists():
            if any(directory.glob("index-host*.csv")):
                raise CaptureError(f"{directory}: the hosts' indexes are not merged yet; run `hlodbg capture --merge {directory}`")
            raise CaptureError(f"{directory}: no {INDEX}")
        return cls(directory, manifest, _read_index(directory, INDEX))

    # -- what is there ------------------------------------------------------------------------
    @property
    def program_text(self) -> str:
        try:
            return _read_bytes(self.directory, PROGRAM).decode("utf-8")
        except FileNotFoundError:
            raise CaptureError(f"cannot read {self.directory / PROGRAM}: it is not there") from None
        except UnicodeDecodeError:
            raise CaptureError(f"cannot read {self.directory / PROGRAM}: it is not UTF-8 text") from None

    def _array(self, name: str, dtype: str, mapped: bool = True) -> np.ndarray:
        """Array file `name` of the capture, read-only, viewed as `dtype` (narrow types are stored as
        their bytes); only a regular file inside the capture is opened."""
        path = self.directory / name
        try:
            real = capture_file(self.directory, name)
            open_regular(real).close()  # a FIFO would block numpy's open; a device never ends
            array = np.load(real, mmap_mode="r" if mapped else None, allow_pickle=False)
        except (OSError, ValueError, EOFError) as e:
            raise CaptureError(f"cannot read {path}: {_npy_problem(path, e)}") from None
        if array.dtype.name == dtype:
            return array
        wanted = _known_dtype(dtype)
        if wanted is None or wanted.itemsize != array.dtype.itemsize or array.dtype.names is not None:
            raise CaptureError(f"{path}: cannot read it as {dtype} (it holds {array.dtype}); the capture is damaged")
        return array.view(wanted)

    def inputs(self) -> list[np.ndarray]:
        """The run's arguments (memory-mapped, read-only), in order."""
        return [self._array(f"{INPUTS}/arg{i}.npy", dtype) for i, dtype in enumerate(self.manifest.get("input_dtypes", []))]

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
        return self._array(row.file, row.dtype, mapped)

    def __iter__(self) -> Iterator[Row]:
        return iter(self.rows)


def _npy_problem(path: Path, error: Exception) -> str:
    """What is wrong with an array file numpy would not load. numpy takes a file without the .npy
    magic for a pickle and talks of `allow_pickle`, which would only mislead here."""
    if isinstance(error, OSError):
        return error.strerror or str(error)
    try:
        with open_regular(path) as handle:
            magic = handle.read(6)
    except OSError as e:
        return e.strerror or str(e)
    if magic != b"\x93NUMPY":
        return "not a .npy array file (the capture is damaged)"
    return "a damaged .npy array file (the capture is damaged)"


def _known_dtype(name: str) -> Optional[np.dtype]:
    """The dtype an index or manifest names (numpy's names, and ml_dtypes' for bf16 and the
    narrow types), or None for anything else (records, objects and text are not values)."""
    import ml_dtypes

    found = getattr(ml_dtypes, name, None) if name.isidentifier() else None
    try:
        dtype = np.dtype(found if found is not None else name)
    except (TypeError, ValueError, SyntaxError):
        return None
    return dtype if dtype.kind in "biufcV" and dtype.names is None and dtype.type is not np.void else None


__all__ = ["COLUMNS", "Capture", "CaptureError", "CaptureWriter", "FORMAT_VERSION", "Row", "SUFFIX", "context_step",
           "frame_context", "join_context", "merge", "op_index", "read_manifest", "site"]
