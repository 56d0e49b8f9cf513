"""Real HLO files: how far hlodbg gets on HLO text it has never seen.

For every `*.hlo` / `*.txt` file under DIR (each `// -----` chunk is a module of its own) it
reports four stages and the first line of the first error:

  parsed   engine/syntax/hlo/parser.py read the text
  lowered  hlodbg.load_all built and verified the IR (needs the HLO frontend)
  ran      Program.run finished on deterministic random inputs of the entry parameters' shapes
  matched  XLA:CPU ran the same text on the same inputs (jaxlib, ../shared/docs/hlo_text.md §10)
           and gave the same results: integers and booleans exactly, floats within a tolerance
  printed  hlodbg printed the module back as HLO text that hlodbg and XLA's parser both read

A stage that cannot be attempted is "-" with the reason (too large for the harness, several
devices, a token parameter, XLA rejects the text...). Each failure is sorted into a category:
  ours      hlodbg fails where XLA succeeds (or XLA is not asked): a defect to fix or list
  design    hlodbg refuses on purpose (elided constants, GPU/TPU-only custom calls, dynamic shapes)
  xla       XLA's own parser or compiler rejects the text too
  mismatch  both run and the values differ
  crash     the worker process died; timeout: no answer within --timeout seconds

Files run one at a time in a worker process that is killed and restarted after --timeout seconds,
so a hang or a crash costs one file, not the run.

Run: python benchmarks/hlo_real_files.py DIR [--timeout 120] [--json OUT.json] [--no-xla]

The corpus this was built for is not in the repository (other projects' files): HLO text of
openxla/xla, one module per file (or `// -----` split files as XLA has them), CHECK lines dropped —
the modules of xla/hlo/parser/hlo_parser_test.cc (the round-trip, short-form and non-round-trip
cases), of xla/tests/gather_operation_test.cc, the *.hlo files of xla/backends/{cpu,gpu}/codegen,
xla/service/gpu/tests, xla/hlo/translate/hlo_to_mhlo/tests, xla/hlo/transforms/tests and xla/tools;
plus the JAX programs tests/hlo_corpus.py writes (pre/post-optimization, elided). Inputs are
random, so compare runs on one corpus, not figures across corpora.

benchmarks/xla_test_modules.py writes the larger held-out corpus of issue 38 from an openxla/xla
git directory: every *.hlo test file and the HLO strings of xla/tests/*.cc, kept only where XLA's
own parser accepts them, so the totals here read "of what XLA's parser accepts". The last line of
the totals is the match rate of what XLA:CPU ran (compared files, and files XLA ran where hlodbg
failed to).
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

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.hlo_oracle import (  # noqa: E402
    NotSampled, XlaRejects, compile_xla, difference, first_line, leaves, parameter_inputs, run_xla)

RESULT_MARK = "@@hlo-real-file "
# Printed just before XLA runs a module: if the worker then dies, XLA:CPU crashed (this report is
# what hlodbg achieved on the file).
BEFORE_XLA_MARK = "@@hlo-real-file-before-xla "
# The largest array (in elements) any instruction of a module may have for the harness to run it:
# the corpus holds shape-only parser tests with 10^8-element gathers.
ELEMENT_CAP = 1 << 23
# Opcodes whose values are random by definition: results are compared by shape and type only.
NONDETERMINISTIC = {"rng", "rng-get-and-update-state"}
# Opcodes XLA:CPU cannot execute from a plain run (host transfers block waiting for a peer).
HOST_TRANSFER = {"infeed", "outfeed", "send", "recv", "send-done", "recv-done"}
# hlodbg errors that are refusals by design, not defects (matched on the message).
BY_DESIGN = (
    re.compile(r"unknown custom_call target"),  # a target only its own backend registers
    re.compile(r"HEAD-only"),  # opcodes newer than the XLA hlodbg follows (scan, shuffle, ...)
    # collectives whose groups need more devices than the module's header declares (XLA:CPU
    # runs them on one device anyway and returns a value of the wrong size or garbage)
    re.compile(r"run on a grid with more processes"),
    re.compile(r"infeed queue is empty|nothing was sent on channel"),  # a host or peer program is needed
    re.compile(r"elided|\{\.\.\.\}|xla_dump_large_constants", re.I),
    re.compile(r"GPU|TPU|cublas|cudnn|tpu_custom_call|PadToStatic|triton", re.I),
    re.compile(r"dynamic (shape|dimension)|unbounded|bounded dynamic|<=\d", re.I),
)
STAGES = ("parsed", "lowered", "ran", "matched", "printed")
# hlodbg is pure Python: a worker that dies took a native crash (XLA:CPU's constant folder dies of
# SIGFPE on a constant integer division by zero), or the kernel's out-of-memory killer.
WORKER_DIED = "the worker process died (a native crash or out of memory)"


@dataclass
class FileReport:
    path: str
    modules: int = 0
    parsed: Optional[bool] = None
    lowered: Optional[bool] = None
    ran: Optional[bool] = None
    matched: Optional[bool] = None
    printed: Optional[bool] = None
    category: str = ""  # "", ours, design, xla, mismatch, skipped, timeout
    xla_ran: Optional[bool] = None  # XLA:CPU ran every module of the file that was run
    error: str = ""
    notes: list[str] = field(default_factory=list)


# -- the worker: one file at a time -----------------------------------------------------------------


def split_modules(text: str) -> list[str]:
    return [chunk for chunk in re.split(r"(?m)^// -----.*$", text) if chunk.strip()]


def shape_elements(shape) -> int:
    if shape is None:  # written without a shape (the lowering infers it): its operands are counted
        return 0
    if shape.is_tuple:
        return max((shape_elements(e) for e in shape.elements), default=0)
    return int(np.prod([d or 1 for d in shape.dims], dtype=np.int64))


def has_dynamic_shape(tree) -> bool:
    def dynamic(shape) -> bool:
        if shape is None:
            return False
        if shape.is_tuple:
            return any(dynamic(e) for e in shape.elements)
        return any(shape.bounded or ()) or any(d is None for d in shape.dims)
    return any(dynamic(i.shape) for c in tree.computations for i in c.instructions)


def has_token(shape) -> bool:
    if shape is None:
        return False
    if shape.is_tuple:
        return any(has_token(e) for e in shape.elements)
    return shape.element == "token"


def within_bounds(dims: tuple, bounds: tuple) -> bool:
    return len(dims) == len(bounds) and all(d <= b for d, b in zip(dims, bounds))


def largest_array(tree) -> int:
    return max((shape_elements(i.shape) for c in tree.computations for i in c.instructions), default=0)


def categorize(message: str, xla_ok: Optional[bool]) -> str:
    reason = message.split("error:", 1)[-1]  # not the file name (a path may say "gpu")
    if any(pattern.search(reason) for pattern in BY_DESIGN):
        return "design"
    return "xla" if xla_ok is False else "ours"


def examine(path: Path, use_xla: bool) -> FileReport:
    from hlodbg.engine.syntax import hlo as hlo_syntax
    from hlodbg.engine.syntax.hlo.parser import parse_hlo_modules

    report = FileReport(str(path))
    text = path.read_bytes().decode("utf-8", errors="replace")  # as hlodbg.load reads it: line endings kept
    try:
        trees = parse_hlo_modules(text, str(path))
        report.parsed, report.modules = True, len(trees)
    except Exception as error:
        report.parsed, report.error = False, first_line(error)
        report.category = categorize(report.error, _xla_accepts(text) if use_xla else None)
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
        report.category = categorize(report.error, _xla_accepts(text) if use_xla else None)
        return report
    # Printed first: running the module on XLA:CPU below may crash the process.
    report.printed = _combine([_reprinted(program, use_xla, where, report)
                               for where, program in _labelled(programs)])
    ran, matched = [], []
    for index, (tree, program, module_text) in enumerate(zip(trees, programs, texts)):
        where = f"module {index}: " if len(trees) > 1 else ""
        outcome = _run_one(tree, program, module_text, use_xla, where, report)
        ran.append(outcome[0])
        matched.append(outcome[1])
    report.ran = _combine(ran)
    report.matched = _combine(matched)
    return report


def _labelled(programs: list) -> list:
    return [(f"module {i}: " if len(programs) > 1 else "", p) for i, p in enumerate(programs)]


def _reprinted(program, use_xla: bool, where: str, report: FileReport) -> bool:
    """hlodbg prints the module back as HLO text, and both hlodbg and XLA's parser read it."""
    import hlodbg

    try:
        printed = program.to_text()
        hlodbg.load(printed)
        if use_xla:
            from jaxlib import _hlo

            _hlo.hlo_module_from_text(printed)
        return True
    except Exception as error:
        report.notes.append(f"{where}printed text not read back: {first_line(error)}")
        return False


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
    try:
        inputs = parameter_inputs(tree, zlib.crc32(module_text.encode()))
    except NotSampled as skip:
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
            checkpoint(report, ran=False)
            try:
                run_xla(module_text, inputs)
                xla_ok = True
            except Exception:
                xla_ok = False
            report.xla_ran = xla_ok if report.xla_ran is not False else False
        report.category = report.category or categorize(message, xla_ok)
        return False, None
    if not use_xla:
        return True, None
    if opcodes & HOST_TRANSFER:
        report.notes.append(f"{where}not compared: host transfers ({', '.join(sorted(opcodes & HOST_TRANSFER))})")
        return True, None
    if has_token(tree.entry.root.shape):  # XLA's runtime has no array for a token to hand back
        report.notes.append(f"{where}not compared: a token result")
        return True, None
    if program.num_replicas * program.num_partitions > 1:
        report.notes.append(f"{where}not compared: {program.num_replicas}x{program.num_partitions} devices")
        return True, None
    checkpoint(report, ran=True)
    try:
        theirs = run_xla(module_text, inputs)
    except XlaRejects as rejected:
        report.notes.append(where + str(rejected))
        return True, None
    report.xla_ran = report.xla_ran is not False
    if len(ours) != len(theirs):
        report.error = report.error or f"{where}{len(ours)} results, XLA gives {len(theirs)}"
        report.category = report.category or "mismatch"
        return True, False
    shapes_only = bool(opcodes & NONDETERMINISTIC)
    if shapes_only:
        report.notes.append(f"{where}values not compared: {', '.join(sorted(opcodes & NONDETERMINISTIC))} is random")
    elif has_dynamic_shape(tree):  # past a dynamic size XLA leaves whatever its buffer held
        shapes_only = True
        report.notes.append(f"{where}values not compared: bounded dynamic shapes (padding is undefined)")
    dynamic = has_dynamic_shape(tree)
    for i, (got, want) in enumerate(zip(ours, theirs)):
        if dynamic and within_bounds(np.shape(got), np.shape(want)):
            # XLA hands back a bounded dynamic result's whole padded buffer; hlodbg's value has
            # the run-time size, at most the bound.
            want = np.zeros(np.shape(got), np.asarray(want).dtype)
        differs = difference(got, want, values=not shapes_only)
        if differs:
            report.error = report.error or f"{where}result {i}: {differs}"
            report.category = report.category or "mismatch"
            return True, False
    return True, True


def checkpoint(report: FileReport, ran: bool) -> None:
    """Tell the parent what hlodbg achieved before XLA runs (XLA:CPU may crash the process)."""
    print(BEFORE_XLA_MARK + json.dumps(dict(asdict(report), ran=ran)), flush=True)


def _xla_accepts(text: str) -> Optional[bool]:
    """Do XLA's parser and compiler accept every module of `text`? None without jaxlib."""
    try:
        import jaxlib  # noqa: F401
    except ImportError:
        return None
    try:
        for chunk in split_modules(text):
            compile_xla(chunk)
        return True
    except XlaRejects:
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
        self.pending = b""  # bytes read from the worker past the last whole line

    def readline(self, deadline: float) -> Optional[str]:
        """The worker's next line; "" when it died; None at the deadline. Reads the pipe's file
        descriptor itself: a buffered readline could hold a line select() then never reports."""
        fd = self.process.stdout.fileno()
        while b"\n" not in self.pending:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                return None
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                return ""
            self.pending += chunk
        line, self.pending = self.pending.split(b"\n", 1)
        return line.decode(errors="replace") + "\n"

    def examine(self, path: Path, timeout: float) -> Optional[dict]:
        self.process.stdin.write(f"{path}\n")
        self.process.stdin.flush()
        deadline = time.monotonic() + timeout
        before_xla = None
        while True:
            line = self.readline(deadline)
            if line is None:
                return None
            if not line:  # the worker died (a crash in native code, out of memory)
                if before_xla is not None:
                    before_xla["notes"].append("XLA:CPU crashed running it (the process died)")
                    if before_xla.get("ran") is False:  # hlodbg failed, and XLA cannot run it either
                        before_xla["category"] = before_xla["category"] or "xla"
                    return dict(before_xla, worker_died=True)
                return {"path": str(path), "error": WORKER_DIED, "category": "crash", "worker_died": True}
            if line.startswith(BEFORE_XLA_MARK):
                before_xla = json.loads(line[len(BEFORE_XLA_MARK):])
            elif line.startswith(RESULT_MARK):
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
        elif result.pop("worker_died", False):
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
    # The match rate of what XLA:CPU ran: modules compared, and modules XLA ran where hlodbg failed.
    compared = sum(1 for r in reports if r.get("xla_ran"))
    if compared:
        matched = sum(1 for r in reports if r.get("xla_ran") and r.get("matched") is True)
        print(f"  of the {compared} files XLA:CPU ran, hlodbg matched {matched} ({100 * matched / compared:5.1f}%)")
    categories: dict[str, int] = {}
    for r in reports:
        if r.get("category"):
            categories[r["category"]] = categories.get(r["category"], 0) + 1
    if categories:
        print("  failures by category: " + ", ".join(f"{k} {v}" for k, v in sorted(categories.items())))


if __name__ == "__main__":
    sys.exit(main())
