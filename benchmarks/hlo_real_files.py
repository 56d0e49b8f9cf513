"""Real HLO files: how far hlodbg gets on HLO text it has never seen.

For every `*.hlo` / `*.txt` file under DIR (each `// -----` chunk is a module of its own) it
reports four stages and the first line of the first error:

  parsed   engine/syntax/hlo/parser.py read the text
  lowered  hlodbg.load_all built and verified the IR (needs the HLO frontend)
  ran      Program.run finished on deterministic random inputs of the entry parameters' shapes
  matched  XLA:CPU ran the same text on the same inputs (jaxlib, ../shared/docs/hlo_text.md §10)
           and gave the same results: integers and booleans exactly, floats within a tolerance

A stage that cannot be attempted is "-" with the reason (too large for the harness, several
devices, a token parameter, XLA rejects the text...). Each failure is sorted into a category:
  ours      hlodbg fails where XLA succeeds (or XLA is not asked): a defect to fix or list
  design    hlodbg refuses on purpose (elided constants, GPU/TPU-only custom calls, dynamic shapes)
  xla       XLA's own parser or compiler rejects the text too
  mismatch  both run and the values differ

Files run one at a time in a worker process that is killed and restarted after --timeout seconds,
so a hang or a crash costs one file, not the run.

Run: python benchmarks/hlo_real_files.py DIR [--timeout 120] [--json OUT.json] [--no-xla]
"""
from __future__ import annotations

import argparse
import json
import os
import re
import select
import subprocess
import sys
import time
import zlib
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Optional

import numpy as np

RESULT_MARK = "@@hlo-real-file "
# The largest array (in elements) any instruction of a module may have for the harness to run it:
# the corpus holds shape-only parser tests with 10^8-element gathers.
ELEMENT_CAP = 1 << 22
# Opcodes whose values are random by definition: results are compared by shape and type only.
NONDETERMINISTIC = {"rng"}
# Opcodes XLA:CPU cannot execute from a plain run (host transfers block waiting for a peer).
HOST_TRANSFER = {"infeed", "outfeed", "send", "recv", "send-done", "recv-done"}
# hlodbg errors that are refusals by design, not defects (matched on the message).
BY_DESIGN = (
    re.compile(r"elided|\{\.\.\.\}|xla_dump_large_constants", re.I),
    re.compile(r"GPU|TPU|cublas|cudnn|tpu_custom_call|PadToStatic|triton", re.I),
    re.compile(r"dynamic (shape|dimension)|unbounded|bounded dynamic|<=\d", re.I),
)
STAGES = ("parsed", "lowered", "ran", "matched")


@dataclass
class FileReport:
    path: str
    modules: int = 0
    parsed: Optional[bool] = None
    lowered: Optional[bool] = None
    ran: Optional[bool] = None
    matched: Optional[bool] = None
    category: str = ""  # "", ours, design, xla, mismatch, skipped, timeout
    error: str = ""
    notes: list[str] = field(default_factory=list)


# -- the worker: one file at a time -----------------------------------------------------------------


def first_line(error: BaseException) -> str:
    text = str(error).strip() or type(error).__name__
    return f"{type(error).__name__}: {text.splitlines()[0]}"[:300]


def split_modules(text: str) -> list[str]:
    return [chunk for chunk in re.split(r"(?m)^// -----.*$", text) if chunk.strip()]


def shape_elements(shape) -> int:
    if shape.is_tuple:
        return max((shape_elements(e) for e in shape.elements), default=0)
    return int(np.prod([d or 1 for d in shape.dims], dtype=np.int64))


def largest_array(tree) -> int:
    return max((shape_elements(i.shape) for c in tree.computations for i in c.instructions), default=0)


def sample_input(shape, rng: np.random.Generator):
    """Deterministic random values of an HLO parameter shape (tuples as Python tuples)."""
    from hlodbg.engine.syntax.hlo.literals import literal_dtype

    if shape.is_tuple:
        return tuple(sample_input(e, rng) for e in shape.elements)
    if shape.element == "token":
        raise _Skip("a token parameter (the harness cannot make one)")
    if any(d is None for d in shape.dims) or any(shape.bounded or ()):
        raise _Skip("a dynamic-shaped parameter")
    dtype = literal_dtype(shape.element)
    dims = tuple(shape.dims)
    if dtype == np.bool_:
        return rng.random(dims) < 0.5
    if dtype.kind == "c":
        part = np.float32 if dtype == np.complex64 else np.float64
        return (rng.standard_normal(dims).astype(part) + 1j * rng.standard_normal(dims).astype(part)).astype(dtype)
    if dtype.kind in "iu" or "int" in dtype.name:  # small values: valid for int2 and as indices
        unsigned = dtype.kind == "u" or dtype.name.startswith("uint")
        return rng.integers(0, 4, dims).astype(dtype) if unsigned else rng.integers(-2, 2, dims).astype(dtype)
    return rng.standard_normal(dims).astype(np.float32).astype(dtype)


class _Skip(Exception):
    """A stage the harness does not attempt, with the reason."""


def leaves(value) -> list[np.ndarray]:
    if isinstance(value, dict):  # {ProcessId: results} of a multi-device run
        return [a for key in sorted(value) for a in leaves(value[key])]
    if isinstance(value, (list, tuple)):
        return [a for v in value for a in leaves(v)]
    elements = getattr(value, "elements", None)  # a TupleValue
    if elements is not None and not isinstance(value, np.ndarray):
        return [a for v in elements for a in leaves(v)]
    return [np.asarray(value)]


def run_xla(module_text: str, inputs: list) -> list[np.ndarray]:
    import jax
    from jax._src import xla_bridge
    from jax._src.lib import xla_client as xc
    from jaxlib import _hlo

    try:
        module = _hlo.hlo_module_from_text(module_text)
    except Exception as error:  # XLA's parser: "was parsing L:C: error: ..."
        raise _XlaRejects("parser", error) from None
    try:
        computation = xc.XlaComputation(module.as_serialized_hlo_module_proto())
        mlir = xc._xla.mlir.xla_computation_to_mlir_module(computation)
        backend = xla_bridge.get_backend("cpu")
        devices = backend.devices()[:1]
        executable = backend.compile_and_load(mlir, xc.DeviceList(tuple(devices)), xc.CompileOptions())
    except Exception as error:
        raise _XlaRejects("compiler", error) from None
    flat = [a for value in inputs for a in leaves(value)]
    outputs = executable.execute([jax.device_put(a, devices[0]) for a in flat])
    return [np.asarray(o) for o in outputs]


class _XlaRejects(Exception):
    def __init__(self, stage: str, error: BaseException):
        super().__init__(f"XLA's {stage} rejects it: {first_line(error)}")


def tolerance(dtype: np.dtype) -> float:
    if dtype.kind in "iub" or "int" in dtype.name:
        return 0.0
    if dtype.itemsize <= 2 or dtype.name.startswith(("bfloat", "float8", "float4")):
        return 2e-2
    return 1e-9 if dtype in (np.float64, np.complex128) else 2e-5


def differs(got: np.ndarray, want: np.ndarray, shapes_only: bool) -> Optional[str]:
    """None when `got` reproduces `want`; else what differs."""
    if got.shape != want.shape or got.dtype != want.dtype:
        return f"{got.dtype}{list(got.shape)} vs XLA's {want.dtype}{list(want.shape)}"
    if shapes_only:
        return None
    tol = tolerance(want.dtype)
    if tol == 0.0:
        bad = np.flatnonzero(got.reshape(-1) != want.reshape(-1))
        return None if bad.size == 0 else f"{bad.size} elements differ (first at flat index {bad[0]})"
    wide = np.complex128 if want.dtype.kind == "c" else np.float64
    g, w = got.astype(wide).reshape(-1), want.astype(wide).reshape(-1)
    finite = np.isfinite(w)
    scale = float(np.max(np.abs(w[finite]), initial=1.0))
    same = (np.abs(g - w) <= tol * scale + tol * np.abs(w)) | (np.isnan(g) & np.isnan(w)) | (g == w)
    bad = np.flatnonzero(~same)
    if bad.size == 0:
        return None
    i = bad[0]
    return f"{bad.size} elements differ beyond rtol {tol:g} (flat index {i}: {g[i]} vs XLA's {w[i]})"


def categorize(message: str, xla_ok: Optional[bool]) -> str:
    if any(pattern.search(message) for pattern in BY_DESIGN):
        return "design"
    return "xla" if xla_ok is False else "ours"


def examine(path: Path, use_xla: bool) -> FileReport:
    from hlodbg.engine.syntax import hlo as hlo_syntax
    from hlodbg.engine.syntax.hlo.parser import parse_hlo_modules

    report = FileReport(str(path))
    text = path.read_text(errors="replace")
    try:
        trees = parse_hlo_modules(text, str(path))
        report.parsed, report.modules = True, len(trees)
    except Exception as error:
        report.parsed, report.error = False, first_line(error)
        report.category = categorize(report.error, _xla_parses(text) if use_xla else None)
        return report
    texts = split_modules(text) if len(trees) > 1 else [text]
    if not hasattr(hlo_syntax, "HLO"):
        report.notes.append("lowering not available (no HLO frontend on this branch)")
        return report
    import hlodbg

    try:
        programs = hlodbg.load_all(path)
        report.lowered = True
    except Exception as error:
        report.lowered, report.error = False, first_line(error)
        report.category = categorize(report.error, _xla_parses(text) if use_xla else None)
        return report
    ran, matched = [], []
    for index, (tree, program, module_text) in enumerate(zip(trees, programs, texts)):
        where = f"module {index}: " if len(trees) > 1 else ""
        outcome = _run_one(tree, program, module_text, use_xla, where, report)
        ran.append(outcome[0])
        matched.append(outcome[1])
    report.ran = _combine(ran)
    report.matched = _combine(matched)
    return report


def _combine(flags: list) -> Optional[bool]:
    if any(f is False for f in flags):
        return False
    if flags and all(f is True for f in flags):
        return True
    return None


def _run_one(tree, program, module_text: str, use_xla: bool, where: str, report: FileReport):
    """(ran, matched) of one module; notes and errors go into `report`."""
    size = largest_array(tree)
    if size > ELEMENT_CAP:
        report.notes.append(f"{where}not run: an array of {size} elements (harness cap {ELEMENT_CAP})")
        return None, None
    opcodes = {i.opcode for c in tree.computations for i in c.instructions}
    rng = np.random.default_rng(zlib.crc32(module_text.encode()))
    try:
        inputs = [sample_input(p.shape, rng) for p in tree.entry.parameters()]
    except _Skip as skip:
        report.notes.append(f"{where}not run: {skip}")
        return None, None
    try:
        with np.errstate(all="ignore"):
            ours = leaves(program.run(*inputs))
    except Exception as error:
        message = where + first_line(error)
        report.error = report.error or message
        xla_ok = None
        if use_xla and not (opcodes & HOST_TRANSFER):
            try:
                run_xla(module_text, inputs)
                xla_ok = True
            except Exception:
                xla_ok = False
        report.category = report.category or categorize(message, xla_ok)
        return False, None
    if not use_xla:
        return True, None
    if opcodes & HOST_TRANSFER:
        report.notes.append(f"{where}not compared: host transfers ({', '.join(sorted(opcodes & HOST_TRANSFER))})")
        return True, None
    if program.num_replicas * program.num_partitions > 1:
        report.notes.append(f"{where}not compared: {program.num_replicas}x{program.num_partitions} devices")
        return True, None
    try:
        theirs = run_xla(module_text, inputs)
    except _XlaRejects as rejected:
        report.notes.append(where + str(rejected))
        return True, None
    if len(ours) != len(theirs):
        report.error = report.error or f"{where}{len(ours)} results, XLA gives {len(theirs)}"
        report.category = report.category or "mismatch"
        return True, False
    shapes_only = bool(opcodes & NONDETERMINISTIC)
    if shapes_only:
        report.notes.append(f"{where}values not compared: {', '.join(sorted(opcodes & NONDETERMINISTIC))} is random")
    for i, (got, want) in enumerate(zip(ours, theirs)):
        difference = differs(got, want, shapes_only)
        if difference:
            report.error = report.error or f"{where}result {i}: {difference}"
            report.category = report.category or "mismatch"
            return True, False
    return True, True


def _xla_parses(text: str) -> Optional[bool]:
    try:
        from jaxlib import _hlo
    except ImportError:
        return None
    try:
        for chunk in split_modules(text):
            _hlo.hlo_module_from_text(chunk)
        return True
    except Exception:
        return False


def worker(use_xla: bool) -> None:
    """Read file paths from stdin, print one marked JSON report per file."""
    if use_xla:
        try:
            import jax  # noqa: F401  (imported once, before the first file)
        except ImportError:
            use_xla = False
    for line in sys.stdin:
        path = Path(line.strip())
        try:
            report = examine(path, use_xla)
        except Exception as error:  # a harness-level failure still reports the file
            report = FileReport(str(path), error="harness: " + first_line(error), category="ours")
        print(RESULT_MARK + json.dumps(asdict(report)), flush=True)


# -- the parent: schedule files, enforce the timeout, print the table ------------------------------


class Worker:
    def __init__(self, use_xla: bool):
        command = [sys.executable, "-u", __file__, "--worker"] + ([] if use_xla else ["--no-xla"])
        env = dict(os.environ, JAX_PLATFORMS="cpu", JAX_ENABLE_X64="1")
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL, text=True, env=env)

    def examine(self, path: Path, timeout: float) -> Optional[dict]:
        self.process.stdin.write(f"{path}\n")
        self.process.stdin.flush()
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            ready, _, _ = select.select([self.process.stdout], [], [], left)
            if not ready:
                return None
            line = self.process.stdout.readline()
            if not line:  # the worker died (a crash in native code, out of memory)
                return {"path": str(path), "error": "the worker process died", "category": "ours"}
            if line.startswith(RESULT_MARK):
                return json.loads(line[len(RESULT_MARK):])

    def stop(self) -> None:
        self.process.kill()  # only this worker, by its own handle
        self.process.wait()


def hlo_files(directory: Path) -> list[Path]:
    return sorted(p for p in directory.rglob("*") if p.is_file() and p.suffix in (".hlo", ".txt"))


def mark(flag: Optional[bool]) -> str:
    return {True: "yes", False: "NO", None: "-"}[flag]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory", type=Path, nargs="?")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per file (default 120)")
    parser.add_argument("--json", type=Path, help="also write every report to this file")
    parser.add_argument("--no-xla", action="store_true", help="do not run XLA:CPU as the oracle")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        worker(not args.no_xla)
        return 0
    if args.directory is None or not args.directory.is_dir():
        parser.error("give a directory of HLO files")
    files = hlo_files(args.directory)
    reports, current = [], None
    for path in files:
        current = current or Worker(not args.no_xla)
        result = current.examine(path, args.timeout)
        if result is None:
            current.stop()
            current = None
            result = asdict(FileReport(str(path), category="timeout", error=f"no answer within {args.timeout:g} s"))
        elif result.get("error") == "the worker process died":
            current.stop()
            current = None
        reports.append(result)
        print_row(result, args.directory)
    if current is not None:
        current.stop()
    print_totals(reports)
    if args.json:
        args.json.write_text(json.dumps(reports, indent=1))
    return 0


def print_row(report: dict, root: Path) -> None:
    name = os.path.relpath(report["path"], root)
    flags = " ".join(f"{mark(report.get(stage)):>3}" for stage in STAGES)
    category = report.get("category") or ""
    line = f"{name:<56} {flags}  {category:<8} {report.get('error', '')}"
    print(line.rstrip(), flush=True)
    for note in report.get("notes") or []:
        print(f"{'':<58}. {note}", flush=True)


def print_totals(reports: list[dict]) -> None:
    n = len(reports)
    if not n:
        print("no HLO files")
        return
    print(f"\n{n} files")
    for stage in STAGES:
        yes = sum(1 for r in reports if r.get(stage) is True)
        no = sum(1 for r in reports if r.get(stage) is False)
        print(f"  {stage:<8} {yes:>4} ({100 * yes / n:5.1f}%)   failed {no:>3}   not attempted {n - yes - no:>3}")
    categories: dict[str, int] = {}
    for r in reports:
        if r.get("category"):
            categories[r["category"]] = categories.get(r["category"], 0) + 1
    if categories:
        print("  failures by category: " + ", ".join(f"{k} {v}" for k, v in sorted(categories.items())))


if __name__ == "__main__":
    sys.exit(main())
