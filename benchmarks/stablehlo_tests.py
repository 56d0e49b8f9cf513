"""How much of StableHLO's own test suite hlodbg reads as stablehlo-opt does.

    .venv/bin/python benchmarks/stablehlo_tests.py PATH [--failures N] [--only SUBSTRING]

PATH is an openxla/stablehlo checkout: a work tree, or a bare git directory (read through
`git show HEAD:...`). The test files are those under stablehlo/tests/, sorted by what their RUN
lines do with the input:

- **read**: the input goes to `stablehlo-opt %s` (only parse, verify and print flags:
  -verify-diagnostics, -split-input-file, -allow-unregistered-dialect, -emit-bytecode,
  -mlir-print-*, -debug-only) or to `stablehlo-translate --interpret`. These give the headline
  figures: every chunk is either invalid (it carries an `expected-error`, so stablehlo-opt rejects
  it when it parses or verifies it) or valid (it must parse and verify, and round trip).
- **pass input**: a pass runs on the input first (--chlo-legalize-to-stablehlo, --inline,
  canonicalize, the transforms/, the test passes). stablehlo-opt parses and verifies the input
  before any pass runs, so a chunk without expected diagnostics is a valid program too; its
  `expected-error`s come from the pass, not from verifying, so those chunks are not counted.
- **skipped**: VHLO (the versioned serialization dialect, vhlo/ and bytecode `.bc` files) and
  files that are not MLIR.

A file whose RUN lines lack -split-input-file is one chunk; otherwise it is split at `// -----`.
A chunk that uses ops, types or attributes of an MLIR dialect hlodbg does not claim (tensor,
arith, shape, sparse_tensor, ...: stablehlo-opt registers them, hlodbg only passes generic
unregistered ops through), other than the few ops of theirs hlodbg defines (arith.constant,
tensor.cast), is counted apart as **foreign**, with its own figures: hlodbg cannot
verify those ops, so neither success nor failure there says anything about StableHLO.

Round trip: hlodbg's printed text parses and verifies again, prints identically, and is the same
module (engine's `structural_key`: ops, attributes, types, regions and use-def edges; not SSA
names, attribute order or locations, which stablehlo-opt does not print either).
With jaxlib installed, a second round-trip figure asks MLIR itself (jaxlib's C++ parser, whose
StableHLO is older than the head): of the valid chunks it parses, hlodbg's printed text must
parse there too and give the same module, MLIR's generic form of both being equal.
Prints as stablehlo-opt: a valid chunk of a read file whose RUN lines pipe stablehlo-opt's
printed output (pretty form: no -mlir-print-op-generic, -mlir-print-debuginfo) into FileCheck is
printed by hlodbg's printer (what `hlodbg print` writes) and its CHECK lines (with the prefixes
those RUN lines name) are matched against that text by benchmarks/filecheck.py, chunk by chunk.
Chunks without such CHECK lines are not counted; chunks hlodbg does not read count as failures.
A failure's category is the op (or first word) of the CHECK line that did not match. The figure is
given for `hlodbg print` (the program's own SSA names) and `hlodbg print --renumber` (MLIR's).
With jaxlib, "text as MLIR prints it" compares `hlodbg print --renumber` with jaxlib's own print of
each valid chunk it reads, character for character (its category: the first line that differs).
Each failure is listed under a category (the stage and the first words of the message).
"""
from __future__ import annotations

import argparse
import re
import subprocess
import sys
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from filecheck import directives, filecheck  # noqa: E402  (benchmarks/ is not a package)

from hlodbg.engine import HlodbgError, parse_module, print_module, split_chunks, structural_key
from hlodbg.engine.ir import opdefs
from hlodbg.engine.verify import verify

TESTS = "stablehlo/tests"

# Flags of stablehlo-opt that only parse, verify and print (no pass runs).
_READING_FLAGS = re.compile(
    r"^--?(verify-diagnostics|split-input-file|allow-unregistered-dialect|emit-bytecode"
    r"|mlir-print-[\w-]+|debug-only=[\w-]+)$")
_TOOL = re.compile(r"\b(stablehlo-opt|stablehlo-translate)\b([^|]*)")

# Dialects stablehlo-opt registers and hlodbg does not claim (it accepts their ops only as
# unregistered, unverified ops); `builtin` types and `quant` types hlodbg reads itself.
_FOREIGN_DIALECTS = ("tensor", "arith", "shape", "sparse_tensor", "math", "scf", "cf", "memref",
                     "linalg", "vector", "bufferization", "index", "complex", "ub")
_FOREIGN = re.compile(
    r'(?<![\w.$%@#!"])"?((' + "|".join(_FOREIGN_DIALECTS) + r')\.[a-z_]+)\b'
    r'|[#!](' + "|".join(_FOREIGN_DIALECTS) + r')\.')


# An op's name where an op starts: `"dialect.op"(` (generic) or `= dialect.op` / a line's first word.
_OP_NAME = re.compile(r'"([a-z_][\w$]*\.[\w.$]+)"\s*\(|(?:=|^)\s*([a-z_][\w$]*\.[a-z_][\w.$]*)\b', re.M)


class Source:
    """The files of a checkout: a work tree or a bare git directory."""

    def __init__(self, path: Path):
        self.path = path
        self.bare = not (path / TESTS).is_dir()
        if self.bare:
            self._git("rev-parse", "--verify", "HEAD")

    def _git(self, *args: str) -> str:
        done = subprocess.run(["git", f"--git-dir={self.path}", *args], capture_output=True,
                              text=True, errors="replace")
        if done.returncode != 0:
            raise SystemExit(f"{self.path}: neither a work tree with {TESTS}/ nor a git directory:"
                             f" {done.stderr.strip()}")
        return done.stdout

    def files(self) -> list[str]:
        if self.bare:
            return sorted(self._git("ls-tree", "-r", "--name-only", "HEAD", TESTS + "/").split())
        return sorted(str(p.relative_to(self.path)) for p in (self.path / TESTS).rglob("*")
                      if p.is_file())

    def read(self, name: str) -> str:
        if self.bare:
            return self._git("show", f"HEAD:{name}")
        return (self.path / name).read_text(errors="replace")

    def commit(self) -> str:
        if self.bare:
            return self._git("log", "-1", "--format=%h %cs").strip()
        done = subprocess.run(["git", "-C", str(self.path), "log", "-1", "--format=%h %cs"],
                              capture_output=True, text=True)
        return done.stdout.strip() or "(not a git checkout)"


def run_lines(text: str) -> list[str]:
    """The RUN commands, continuation lines joined."""
    commands, current = [], ""
    for line in text.splitlines():
        m = re.match(r"\s*//\s*RUN:(.*)$", line)
        if not m:
            continue
        part = m.group(1).strip()
        if part.endswith("\\"):
            current += part[:-1] + " "
            continue
        commands.append(current + part)
        current = ""
    return commands


def classify_file(name: str, text: str) -> tuple[str, str]:
    """("read" | "pass input" | "skipped", why)."""
    if "/vhlo/" in name:
        return "skipped", "VHLO: the versioned serialization dialect, not StableHLO"
    if not name.endswith(".mlir"):
        return "skipped", "not MLIR text (bytecode, C++, build files)"
    commands = run_lines(text)
    if not commands:
        return "skipped", "no RUN line"
    passes = []
    for command in commands:
        if "%s" not in command:
            continue
        command = re.sub(r"'[^']*'|\"[^\"]*\"", "Q", command)  # a quoted value is one word
        for m in _TOOL.finditer(command):
            tool, rest = m.group(1), m.group(2)
            for word in rest.split():
                if word in ("%s", "%if", "asserts", "%{", "%}", "2>&1", ">", "<") or word.startswith("%t"):
                    continue
                if tool == "stablehlo-translate" and word in ("--interpret", "-interpret"):
                    continue
                if word.startswith("--args=") or word.startswith("--probe-output-dir"):
                    continue
                if not _READING_FLAGS.match(word):
                    passes.append(word)
    if passes:
        return "pass input", "runs " + " ".join(sorted(set(passes))[:3])
    return "read", ""


# Flags that change how stablehlo-opt prints. `-mlir-print-debuginfo -mlir-print-local-scope` (locations
# written inline) is what `hlodbg print --debug-info` writes; the others have no hlodbg counterpart.
_DEBUG_INFO = {"-mlir-print-debuginfo", "--mlir-print-debuginfo"}
_LOCAL_SCOPE = {"-mlir-print-local-scope", "--mlir-print-local-scope"}
_OTHER_PRINTING = re.compile(r"^--?(mlir-print-op-generic|mlir-print-assume-verified|debug-only=[\w-]+)$")


@dataclass(frozen=True)
class PrintedCheck:
    prefixes: tuple[str, ...]
    debug_info: bool    # the output carries locations (inline)


def printed_check_prefixes(text: str) -> list[PrintedCheck]:
    """Each RUN line's CHECK prefixes that pipe stablehlo-opt's pretty print into FileCheck."""
    found = []
    for command in run_lines(text):
        if "%if" in command or "2>&1" in command:
            continue  # these check diagnostics on stderr
        stages = [stage.split() for stage in command.split("|")]
        if len(stages) < 2 or not stages[-1] or stages[-1][0] != "FileCheck":
            continue
        readers = stages[:-1]
        if any(not words or words[0] != "stablehlo-opt" for words in readers) or "%s" not in readers[0]:
            continue
        flags = [w for words in readers for w in words[1:] if w != "%s"]
        if not all(_READING_FLAGS.match(w) and not _OTHER_PRINTING.match(w) for w in flags):
            continue
        # What the last stage prints; locations survive only if every stage prints them.
        printing = [set(words[1:]) for words in readers]
        debug_info = bool(printing[-1] & _DEBUG_INFO)
        if debug_info and (not printing[-1] & _LOCAL_SCOPE or not all(p & _DEBUG_INFO for p in printing)):
            continue  # location aliases (`#loc1 = ...`), which hlodbg does not print
        prefixes: tuple[str, ...] = ("CHECK",)
        for word in stages[-1][1:]:
            m = re.match(r"--?check-prefix(?:es)?=(\S+)", word)
            if m:
                prefixes = tuple(m.group(1).split(","))
        check = PrintedCheck(prefixes, debug_info)
        if check not in found:
            found.append(check)
    return found


@dataclass
class Chunk:
    where: str          # file:line of the chunk's first line
    text: str           # padded so that line numbers are the file's
    invalid: bool
    foreign: str        # the foreign dialect it uses, or ""


def chunks_of(name: str, text: str) -> list[Chunk]:
    split = any("split-input-file" in c for c in run_lines(text))
    pieces = split_chunks(text) if split else [(0, text)]
    found = []
    for offset, piece in pieces:
        body = "\n".join(line for line in piece.splitlines() if not line.lstrip().startswith("//"))
        if not body.strip():
            continue
        dialect = next((m.group(2) or m.group(3) for m in _FOREIGN.finditer(body)
                        if m.group(1) not in opdefs.OPS), "")
        found.append(Chunk(f"{name}:{offset + 1}", "\n" * offset + piece,
                           "expected-error" in piece, dialect))
    return found


def _category(stage: str, error: BaseException) -> str:
    if not isinstance(error, HlodbgError):
        return f"{stage}: internal error {type(error).__name__}"
    message = getattr(error, "message", str(error)).splitlines()[0]
    message = re.sub(r"%[\w.$#-]+|@[\w.$-]+|\b\d+\b|tensor<[^>]*>|'[^']*'|\"[^\"]*\"", "_", message)
    return f"{stage}: " + " ".join(message.split()[:7])


def _message(error: BaseException) -> str:
    text = getattr(error, "message", None) or str(error) or type(error).__name__
    return text.splitlines()[0][:200]


@dataclass
class Tally:
    total: int = 0
    passed: int = 0
    failures: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))

    def fail(self, category: str, where: str, message: str) -> None:
        self.failures[category].append(f"{where}: {message}")

    def percent(self) -> str:
        share = 100.0 * self.passed / self.total if self.total else 100.0
        return f"{share:5.1f}% ({self.passed}/{self.total})"


def check_valid(chunk: Chunk, accepted: Tally, round_trip: Tally) -> None:
    accepted.total += 1
    stage = "parse"
    try:
        module = parse_module(chunk.text, chunk.where.split(":")[0])
        stage = "verify"
        verify(module)
    except Exception as error:  # noqa: BLE001 - every failure is counted and listed
        accepted.fail(_category(stage, error), chunk.where, _message(error))
        return
    accepted.passed += 1
    round_trip.total += 1
    stage = "print"
    try:
        printed = print_module(module)
        stage = "reparse"
        again = parse_module(printed, "printed.mlir")
        stage = "reverify"
        verify(again)
        stage = "print"
        if print_module(again) != printed:
            round_trip.fail("printed text prints differently once parsed", chunk.where, "")
            return
        if structural_key(again) != structural_key(module):
            round_trip.fail("printed text means another module", chunk.where, "")
            return
    except Exception as error:  # noqa: BLE001
        round_trip.fail(_category(stage, error), chunk.where, _message(error))
        return
    round_trip.passed += 1


class MlirOracle:
    """jaxlib's MLIR (StableHLO, CHLO, func; unregistered dialects allowed), when installed."""

    def __init__(self):
        try:
            from jax._src.interpreters import mlir as jax_mlir
            from jaxlib.mlir import ir
        except ImportError:
            self.ir = None
            return
        self.ir = ir
        self.context = jax_mlir.make_ir_context()
        self.context.allow_unregistered_dialects = True

    def generic(self, text: str, through_pretty: bool = False):
        """MLIR's generic form of `text`, or None if MLIR does not parse it. `through_pretty`: of
        MLIR's own pretty print of it, read again (which drops attributes at their default value,
        as any printer of the pretty form does)."""
        try:
            with self.context:
                module = self.ir.Module.parse(text)
                if through_pretty:
                    module = self.ir.Module.parse(module.operation.get_asm())
                return module.operation.get_asm(print_generic_op_form=True)
        except Exception:  # noqa: BLE001 - MLIR reports every parse failure as some exception
            return None

    def registers_every_op_of(self, text: str) -> bool:
        """Whether jaxlib knows each op `text` names: an op of a dialect it does not register keeps
        its inherent attributes as plain ones, so its generic form says nothing about hlodbg's."""
        names = {generic or pretty for generic, pretty in _OP_NAME.findall(text)}
        with self.context:
            return all(self.context.is_registered_operation(name) for name in names)


def check_text_with_mlir(chunk: Chunk, oracle: MlirOracle, tally: Tally) -> None:
    """Whether `hlodbg print --renumber` writes, character for character, what MLIR prints."""
    if not oracle.registers_every_op_of(chunk.text):
        return
    try:
        with oracle.context:
            expected = str(oracle.ir.Module.parse(chunk.text))
    except Exception:  # noqa: BLE001 - a construct jaxlib's older StableHLO does not read
        return
    tally.total += 1
    try:
        printed = print_module(parse_module(chunk.text, chunk.where.split(":")[0]), renumber=True)
    except Exception as error:  # noqa: BLE001
        tally.fail("not read: " + _category("parse", error), chunk.where, _message(error))
        return
    if printed == expected:
        tally.passed += 1
        return
    ours, theirs = printed.splitlines(), expected.splitlines()
    line = next((i for i, (a, b) in enumerate(zip(ours, theirs)) if a != b), min(len(ours), len(theirs)))
    mine = ours[line].strip() if line < len(ours) else "(end)"
    other = theirs[line].strip() if line < len(theirs) else "(end)"
    tally.fail(_print_category("x: " + other), chunk.where, f"hlodbg: {mine[:150]} | MLIR: {other[:150]}")


def check_with_mlir(chunk: Chunk, oracle: MlirOracle, tally: Tally) -> None:
    original = oracle.generic(chunk.text, through_pretty=True)
    if original is None or not oracle.registers_every_op_of(chunk.text):
        return  # a construct jaxlib's StableHLO predates, one MLIR rejects, or an unregistered op
    tally.total += 1
    try:
        printed = print_module(parse_module(chunk.text, chunk.where.split(":")[0]))
    except Exception as error:  # noqa: BLE001
        tally.fail(_category("parse", error), chunk.where, _message(error))
        return
    again = oracle.generic(printed)
    if again is None:
        tally.fail("MLIR does not parse hlodbg's printed text", chunk.where, "")
    elif again != original:
        tally.fail("MLIR reads another module from hlodbg's printed text", chunk.where, "")
    else:
        tally.passed += 1


def check_printed(chunk: Chunk, checks_run: list[PrintedCheck], tally: Tally, renumber: bool = False) -> None:
    """Whether hlodbg prints the chunk as its CHECK lines say stablehlo-opt prints it."""
    checks = "\n".join(line for line in chunk.text.splitlines() if line.lstrip().startswith("//"))
    checks_run = [run for run in checks_run if directives(checks, run.prefixes)]
    if not checks_run:
        return
    tally.total += 1
    try:
        module = parse_module(chunk.text, chunk.where.split(":")[0])
    except Exception as error:  # noqa: BLE001
        tally.fail("not read: " + _category("parse", error), chunk.where, _message(error))
        return
    for run in checks_run:
        printed = print_module(module, debug_info=run.debug_info, renumber=renumber)
        mismatch = filecheck(checks, printed, run.prefixes)
        if mismatch:
            tally.fail(_print_category(mismatch), chunk.where, mismatch[:200])
            return
    tally.passed += 1


def _print_category(mismatch: str) -> str:
    """The op (or the first word) of the CHECK line that did not match."""
    pattern = mismatch.split(": ", 2)[-1]
    op = re.search(r"\b((?:stablehlo|chlo|func|quant|tensor)\.[a-z_]+)", pattern)
    if op:
        return "prints differently: " + op.group(1)
    word = re.sub(r"\{\{.*?\}\}|\[\[.*?\]\]", "_", pattern).split()
    return "prints differently: " + (" ".join(word[:2]) if word else "(empty)")


def check_invalid(chunk: Chunk, caught: Tally) -> None:
    caught.total += 1
    try:
        module = parse_module(chunk.text, chunk.where.split(":")[0])
        verify(module)
    except HlodbgError:
        caught.passed += 1
        return
    except Exception as error:  # noqa: BLE001
        caught.fail(_category("check", error), chunk.where, _message(error))
        return
    expected = re.search(r"expected-error[^{]*\{\{(.*?)\}\}", chunk.text)
    caught.fail("accepted", chunk.where, "expected: " + (expected.group(1) if expected else "?"))


def report(title: str, tally: Tally, failures: int) -> None:
    print(f"  {title:<22} {tally.percent()}")
    ranked = sorted(tally.failures.items(), key=lambda kv: (-len(kv[1]), kv[0]))
    for category, places in ranked[:failures]:
        print(f"      {len(places):4}  {category}")
        for place in places[:3]:
            print(f"              {place}")
    if len(ranked) > failures > 0:
        print(f"      ... {len(ranked) - failures} more categories")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("path", type=Path, help="openxla/stablehlo work tree or bare git directory")
    parser.add_argument("--failures", type=int, default=25, help="failure categories listed per figure")
    parser.add_argument("--only", default="", help="only files whose name contains this")
    parser.add_argument("--targets", action="store_true",
                        help="exit 1 unless accepted >= 98%%, round trip >= 99%%, caught >= 97%%")
    args = parser.parse_args()
    source = Source(args.path)
    started = time.perf_counter()
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10000))
    kinds: dict[str, list[tuple[str, str]]] = defaultdict(list)
    tallies = {group: (Tally(), Tally(), Tally()) for group in ("read", "pass input", "foreign", "read+foreign")}
    oracle = MlirOracle()
    mlir_round_trip = Tally()
    printed_as_opt, renumbered_as_opt, text_as_mlir = Tally(), Tally(), Tally()
    for name in source.files():
        if args.only not in name:
            continue
        text = source.read(name) if name.endswith(".mlir") else ""
        kind, why = classify_file(name, text)
        kinds[kind].append((name, why))
        if kind == "skipped":
            continue
        prefix_sets = printed_check_prefixes(text) if kind == "read" else []
        for chunk in chunks_of(name, text):
            group = "foreign" if chunk.foreign else kind
            # Each chunk counts in its group and, from a read file, in the read files' total.
            groups = [group] + (["read+foreign"] if kind == "read" else [])
            for name_ in groups:
                accepted, round_trip, caught = tallies[name_]
                if chunk.invalid:
                    if kind == "read":
                        check_invalid(chunk, caught)
                    continue  # a pass's expected-error says nothing about verifying
                check_valid(chunk, accepted, round_trip)
            # Valid chunks only: jaxlib's verifiers can crash the process (SIGFPE) on invalid ones.
            if group == "read" and not chunk.invalid and oracle.ir is not None:
                check_with_mlir(chunk, oracle, mlir_round_trip)
                check_text_with_mlir(chunk, oracle, text_as_mlir)
            if group == "read" and not chunk.invalid and prefix_sets:
                check_printed(chunk, prefix_sets, printed_as_opt)
                check_printed(chunk, prefix_sets, renumbered_as_opt, renumber=True)
    print(f"StableHLO's tests at {source.commit()} ({args.path}); "
          f"{time.perf_counter() - started:.1f} s; dialects hlodbg defines: "
          + ", ".join(sorted({n.split('.')[0] for n in opdefs.OPS})))
    for kind in ("read", "pass input", "skipped"):
        reasons = Counter(why for _, why in kinds[kind])
        print(f"{kind}: {len(kinds[kind])} files" + ("" if kind == "read" else
              "; " + "; ".join(f"{n} x {why}" for why, n in reasons.most_common(8))))
    accepted, round_trip, caught = tallies["read"]
    print("\nfiles read by stablehlo-opt / --interpret (the headline):")
    report("valid accepted", accepted, args.failures)
    report("round trip", round_trip, args.failures)
    report("invalid caught", caught, args.failures)
    if oracle.ir is not None:
        report("round trip (MLIR)", mlir_round_trip, args.failures)
    report("prints as stablehlo-opt", printed_as_opt, args.failures)
    report("  the same, --renumber", renumbered_as_opt, args.failures)
    if oracle.ir is not None:
        report("text as MLIR prints it", text_as_mlir, args.failures)
    print("\nthe same files, chunks of other dialects included:")
    for title, tally in zip(("valid accepted", "round trip", "invalid caught"), tallies["read+foreign"]):
        report(title, tally, 0)
    print("\ninputs of passes (valid programs only):")
    report("valid accepted", tallies["pass input"][0], args.failures)
    report("round trip", tallies["pass input"][1], args.failures)
    print("\nchunks using dialects hlodbg does not claim (" + ", ".join(_FOREIGN_DIALECTS) + "):")
    for title, tally in zip(("valid accepted", "round trip", "invalid caught"), tallies["foreign"]):
        report(title, tally, args.failures)
    if args.targets:
        met = (accepted.passed >= 0.98 * accepted.total and round_trip.passed >= 0.99 * round_trip.total
               and caught.passed >= 0.97 * caught.total)
        print("targets (98% / 99% / 97%):", "PASS" if met else "FAIL")
        return 0 if met else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
