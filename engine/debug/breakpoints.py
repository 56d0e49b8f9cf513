"""Breakpoints and watches: what they are, where they point, and where they are kept.

A breakpoint is written the way people think of a place in a program:

    %12   @decode:%12        the op producing a value (of the entry function, or of @decode)
    42   line 42   prog.mlir:42   the op(s) on a line of the .mlir text (the next line holding
                                  one if that line has none)
    model.py:42               the ops JAX lowered from line 42 of model.py (producer location)
    stablehlo.all_reduce   while   func.call     every op of a kind
    fusion   dot   get-tuple-element   every op an HLO opcode became
    nan   inf   nonfinite     any op whose result holds NaN / ±Inf / either (constants as written,
                              such as JAX's NaN fill values and their broadcasts, excepted)
    diverge [against TARGET]  the first op instance whose results differ on another target
                              (divergence.py; a session of one process only)
    abs(result).max() > 1e3   any op for which the expression holds (see expressions.py)

with an optional ` if CONDITION` (an expression, or `nan` / `inf` / `nonfinite` about the op's
results) and a number of hits to ignore. A breakpoint that looks at results (value breakpoints,
conditions naming `result`/`results`) stops right after its op; the others stop before it.
Breakpoints and watch expressions are saved per program in a small JSON file.
"""
from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional

import numpy as np

from ..ir.core import Module, Operation, function_list
from ..ir.locations import user_frame
from ..ir.opset import is_terminator, lookup
from ..machine.xla.device_values import looked_at_on_device, nonfinite_counts, to_host
from ..run.screen import surely_finite  # noqa: F401 - the debugger's NaN screen is the plain run's
from ..syntax.hlo.opcodes import TABLE as HLO_OPCODES
from ..syntax.hlo.opcodes import ops_of_opcode
from . import breakpoint_file
from .breakpoint_file import BreakpointFileError, Contents, entry_problem
from .expressions import CaretError, Expression, ExpressionError, compile_expression

VALUE_TESTS = ("nan", "inf", "nonfinite")
RESULT_NAMES = frozenset({"result", "results"})
# The plain names a breakpoint expression or condition may use (scope.expression_names gives them).
CONTEXT_NAMES = frozenset({"event", "hit", "iteration", "iterations", "op", "operands"}) | RESULT_NAMES


class BreakpointError(CaretError):
    """A breakpoint that cannot be understood or points nowhere; `text` and `column` (1-based)
    place a problem inside the expression it was given, for a caret under it."""

    def about(self, what: str) -> "BreakpointError":
        """The same problem, said of `what` (e.g. the --break-on option that gave the spec)."""
        return BreakpointError(f"{what}: {self.message}", self.text, self.column)


def _count(value: Any, test: str) -> int:
    if isinstance(value, (list, tuple)):
        return sum(_count(v, test) for v in value)
    if not isinstance(value, np.ndarray):
        if looked_at_on_device(value):  # counted on its accelerator: three numbers come over, not the array
            nan, posinf, neginf = nonfinite_counts(value)
            return {"nan": nan, "inf": posinf + neginf}.get(test, nan + posinf + neginf)
        value = to_host(value)  # an XLA CPU device's array: numpy reads it on the host
    if not isinstance(value, np.ndarray):
        return 0
    dtype = value.dtype
    if dtype.kind in "biu" or dtype == np.bool_:
        return 0
    if dtype.kind not in "fc":
        try:
            value = value.astype(np.float32)  # ml_dtypes floats; narrow ints raise and hold no NaN
        except (TypeError, ValueError):
            return 0
        if value.dtype.kind not in "fc":
            return 0
    if test == "nan":
        return int(np.count_nonzero(np.isnan(value)))
    if test == "inf":
        return int(np.count_nonzero(np.isinf(value)))
    return int(value.size - np.count_nonzero(np.isfinite(value)))


def value_test(name: str) -> Callable[[list], bool]:
    return lambda results: any(_count(r, name) for r in results)


@dataclass
class Breakpoint:
    """One breakpoint; `ops` is empty for value breakpoints (they apply to every op)."""

    id: int
    spec: str
    condition: Optional[str] = None
    ignore: int = 0
    enabled: bool = True
    kind: str = "op"  # op | line | location | kind | value
    ops: frozenset = frozenset()
    after: bool = False  # stops right after its op (it looks at results) instead of before
    note: str = ""  # how the spec was resolved (e.g. "line 41 has no op: using line 43")
    nonfinite_only: bool = False  # its test can only hold where a result holds NaN or Inf
    saved: bool = True  # kept with the program; False: for this session only (--break-on, serve)
    failure: str = ""  # why its test or condition failed to evaluate, once it did (said once: see Timeline)
    test: Optional[Callable] = field(default=None, repr=False)  # value test or expression
    expression: Optional[Expression] = field(default=None, repr=False)  # the test, when an expression
    condition_test: Optional[Callable] = field(default=None, repr=False)

    def describe(self) -> str:
        text = f"#{self.id} {self.spec}"
        if self.condition:
            text += f" if {self.condition}"
        if self.ignore:
            text += f" (ignore {self.ignore})"
        if not self.enabled:
            text += " [disabled]"
        return text

    def to_json(self) -> dict:
        return {"spec": self.spec, "condition": self.condition, "ignore": self.ignore, "enabled": self.enabled}

    def same_place(self, spec: str, condition: Optional[str], ignore: int) -> bool:
        return (self.spec, self.condition, self.ignore) == (spec, condition, ignore)


@dataclass
class UnresolvedBreakpoint:
    """A saved breakpoint that points nowhere in the program as it is now (a value renamed, a line
    moved): kept in the file, as it was, for the program it was set on; shown, and deletable."""

    id: int
    entry: dict  # as the file holds it
    reason: str
    # Read like a Breakpoint by whoever lists breakpoints: never enabled, on no op.
    enabled = False
    ops = frozenset()
    note = ""

    def describe(self) -> str:
        condition = self.entry.get("condition")
        return f"#{self.id} {self.entry['spec']}" + (f" if {condition}" if condition else "") + f" [unresolved: {self.reason}]"


def _compile_test(text: str, what: str) -> tuple[Callable, bool]:
    """(test(names, lookup) -> bool, whether it needs the op's results)."""
    word = text.strip().lower()
    if word in VALUE_TESTS:
        check = value_test(word)
        return (lambda names, lookup: check(names["results"])), True
    try:
        expression = compile_expression(text)
        expression.check_names(CONTEXT_NAMES)
    except ExpressionError as e:
        raise BreakpointError(f"{what} {text!r}: {e.message}", e.text, e.column) from None
    return expression.truth, bool(expression.names & RESULT_NAMES)


def compile_condition(text: str) -> Callable:
    """A breakpoint condition's test (names, lookup) -> bool."""
    return _compile_test(text, "condition")[0]


_LINE = re.compile(r"^(?:line\s+)?(\d+)$")
_FILE_LINE = re.compile(r"^(.+?):(\d+)(?::\d+)?$")
_VALUE_REF = re.compile(r"^(?:@([\w.$-]+):)?(%[\w.$#-]+)$")
_KIND = re.compile(r"^[a-z_][\w-]*(\.[a-z_][\w-]*)?$")  # HLO opcodes have hyphens: get-tuple-element


class Resolver:
    """Finds the ops a breakpoint spec points at in one module."""

    def __init__(self, module: Module, entry: str = "main", path: Optional[str] = None):
        self.module = module
        self.entry = entry
        self.path = path
        self._every_op: Optional[list[Operation]] = None

    @property
    def _ops(self) -> list[Operation]:
        """Every op of the module, listed when a spec is first resolved (a session starts
        without a walk of every op)."""
        if self._every_op is None:
            self._every_op = [op for f in self.module.functions.values() for op in f.ops]
        return self._every_op

    def resolve(self, spec: str) -> tuple[str, frozenset, str]:
        """(kind, ops, note) for a spec; BreakpointError if it points nowhere."""
        text = spec.strip()
        if not text:
            raise BreakpointError("empty breakpoint")
        match = _VALUE_REF.match(text)
        if match:
            return "op", self._value_ops(match.group(1), match.group(2)), ""
        match = _LINE.match(text)
        if match:
            return self._line(int(match.group(1)))
        match = _FILE_LINE.match(text)
        if match and not text.startswith(("%", "@")):
            name, line = match.group(1), int(match.group(2))
            if name.endswith(".mlir") or (self.path and Path(name).name == Path(self.path).name):
                return self._line(line)
            return self._location(name, line)
        if _KIND.match(text) and text not in VALUE_TESTS:
            ops = self._kind(text)
            if ops:
                return "kind", ops, ""
            if _names_op_kind(text):
                raise BreakpointError(f"the program has no {text} op")
        raise BreakpointError(f"cannot read {spec!r} as a breakpoint")

    def _value_ops(self, function: Optional[str], name: str) -> frozenset:
        functions = self.module.functions
        if function is not None:
            if function not in functions:
                raise BreakpointError(f"no function @{function} (functions: {function_list(functions, function)})")
            candidates = [functions[function]]
        else:
            main = functions.get(self.entry)
            candidates = ([main] if main is not None else []) + [f for n, f in functions.items() if n != self.entry]
        found = []
        for f in candidates:
            ops = _ops_producing(f, name)
            if ops:
                found.append((f, ops))
                if function is None and f.sym_name == self.entry:
                    break
        if not found:
            where = f"@{function}" if function else "any function"
            raise BreakpointError(f"no value {name} in {where}")
        if len(found) > 1:
            names = ", ".join(f"@{f.sym_name}:{name}" for f, _ in found)
            raise BreakpointError(f"{name} is defined in several functions; say which: {names}")
        return frozenset(found[0][1])

    def _line(self, line: int) -> tuple[str, frozenset, str]:
        by_line: dict[int, list[Operation]] = {}
        written = {op.pos for op in self._ops if op.pos is not None and not is_terminator(op.name)}
        for op in self._ops:
            # An HLO computation's return is implicit: it takes its ROOT's position, and a line
            # breakpoint there means the ROOT (else it would stop twice per run of the line).
            if op.pos is not None and not (is_terminator(op.name) and op.pos in written):
                by_line.setdefault(op.pos.line, []).append(op)
        if line in by_line:
            return "line", frozenset(by_line[line]), ""
        later = [n for n in by_line if n > line]
        if not later:
            raise BreakpointError(f"no op on line {line} or after it")
        nearest = min(later)
        return "line", frozenset(by_line[nearest]), f"line {line} has no op: using line {nearest}"

    def _location(self, name: str, line: int) -> tuple[str, frozenset, str]:
        ops = []
        for op in self._ops:
            frame = user_frame(op.location)
            if frame is not None and frame.line == line and _same_file(frame.filename, name):
                ops.append(op)
        if not ops:
            raise BreakpointError(f"no op comes from {name}:{line} (the program's locations name no such line)")
        return "location", frozenset(ops), ""

    def _kind(self, text: str) -> frozenset:
        names = _kind_names(text)
        ops = frozenset(op for op in self._ops if op.name in names)
        # Else the opcode as HLO text spells it (fusion, dot, broadcast, get-tuple-element).
        return ops or frozenset(ops_of_opcode(self._ops, text))


def _kind_names(text: str) -> set[str]:
    """The op names a kind spec stands for: itself, or a short name in the usual dialects."""
    return {text} if "." in text else {f"stablehlo.{text}", f"chlo.{text}", f"func.{text}", text}


def _names_op_kind(text: str) -> bool:
    """Whether `text` names a kind of op hlodbg knows (an op name, short or full, or an HLO opcode)."""
    return text in HLO_OPCODES or any(lookup(name) is not None for name in _kind_names(text))


def _same_file(filename: str, wanted: str) -> bool:
    return filename == wanted or filename.endswith("/" + wanted) or Path(filename).name == wanted


def _ops_producing(function, name: str) -> list[Operation]:
    """The op of `function` producing the value `name`, with its copies: an HLO computation used
    as a region at several places (a reducer, a branch) is cloned into each, and every clone comes
    from the same text position."""
    wanted = {name, name + "#0"}
    found = [op for op in function.ops if any(v.name in wanted for v in op.results)]
    return [op for op in found if op.pos is not None and op.pos == found[0].pos] or found[:1]


class BreakpointTable:
    """The breakpoints and watch expressions of one program, saved to `path` on every change.

    Only what the user sets in a session is saved: a breakpoint added with `saved=False` (one
    given on the command line, or set in a browser session of `hlodbg serve`) lives as long as
    the session, and one the table already holds is not added twice.
    """

    def __init__(self, resolver: Resolver, path: Optional[Path] = None):
        self.resolver = resolver
        self.path = path
        self.breakpoints: list[Breakpoint] = []
        self.watches: list[str] = []
        self.unresolved: list[UnresolvedBreakpoint] = []  # saved ones this program no longer has a place for
        self.messages: list[str] = []  # problems met loading or saving the file, in order
        self._next_id = 1
        self._unreadable = Contents()  # entries of the file that are no breakpoint or watch: kept as they are
        self._read_as: dict[int, tuple[dict, dict]] = {}  # breakpoint id -> (the entry it was read from, its to_json then)
        self._file = Contents()  # this session's part of the file, as last read or written (breakpoint_file.merged)
        self._said_shared = False
        if path is not None:
            self._load()

    # -- editing ------------------------------------------------------------------------------
    def add(self, spec: str, condition: Optional[str] = None, ignore: int = 0, enabled: bool = True,
            save: bool = True, saved: bool = True) -> Breakpoint:
        """A new breakpoint, or the enabled one already set at the same place (a session-only
        one becomes saved when the user sets it again with `saved`). `save`: write the file now."""
        spec = spec.strip()
        if condition is None:
            head, sep, tail = spec.partition(" if ")
            if sep:
                spec, condition = head.strip(), tail.strip()
        if ignore < 0:
            raise BreakpointError("ignore count must be 0 or more")
        condition = condition.strip() if condition and condition.strip() else None
        for existing in self.breakpoints:
            if existing.enabled and enabled and existing.same_place(spec, condition, int(ignore)):
                if saved and not existing.saved:
                    existing.saved = True
                    if save:
                        self.save()
                return existing
        bp = Breakpoint(self._next_id, spec, condition, int(ignore), enabled, saved=saved)
        word = spec.lower()
        if word in VALUE_TESTS:
            bp.kind, bp.after, bp.nonfinite_only = "value", True, True
            bp.test, _ = _compile_test(word, "breakpoint")
        else:
            try:
                bp.kind, bp.ops, bp.note = self.resolver.resolve(spec)
            except BreakpointError as unresolved:
                if not _looks_like_expression(spec):
                    raise
                try:
                    bp.test, _ = _compile_test(spec, "breakpoint expression")
                    bp.expression = compile_expression(spec)
                except BreakpointError:
                    if _KIND.match(spec):  # `dynamic-slice` meant an op kind, not a subtraction
                        raise unresolved from None
                    raise
                bp.kind = "value"
                bp.after = True
        if bp.condition:
            bp.condition_test, needs_results = _compile_test(bp.condition, "condition")
            bp.after = bp.after or needs_results
        self._next_id += 1
        self.breakpoints.append(bp)
        if save:
            self.save()
        return bp

    def add_found(self, spec: str, kind: str, ops: frozenset, condition: Optional[str] = None, after: bool = False,
                  note: str = "") -> Breakpoint:
        """A session-only breakpoint on ops found by other means than resolving `spec` (`diverge`:
        by comparing two runs); never saved, since the spec alone would not find them again."""
        bp = Breakpoint(self._next_id, spec.strip(), condition, 0, True, kind=kind, ops=ops, after=after,
                        note=note, saved=False)
        if condition:
            bp.condition_test = compile_condition(condition)
        self._next_id += 1
        self.breakpoints.append(bp)
        return bp

    def get(self, id: int) -> Breakpoint:
        for bp in self.breakpoints:
            if bp.id == id:
                return bp
        for unresolved in self.unresolved:
            if unresolved.id == id:
                raise BreakpointError(f"breakpoint #{id} ({unresolved.entry['spec']}) points nowhere in this program "
                                      f"({unresolved.reason}): delete it, or set it again")
        known = ", ".join(f"#{b.id}" for b in [*self.breakpoints, *self.unresolved]) or "none"
        raise BreakpointError(f"no breakpoint #{id} (breakpoints: {known})")

    def remove(self, id: int) -> None:
        unresolved = [u for u in self.unresolved if u.id == id]
        if unresolved:
            self.unresolved.remove(unresolved[0])
        else:
            self.breakpoints.remove(self.get(id))
        self.save()

    def clear(self) -> None:
        self.breakpoints.clear()
        self.unresolved.clear()
        self.save()

    def enable(self, id: int, enabled: bool = True) -> None:
        self.get(id).enabled = enabled
        self.save()

    def set_ignore(self, id: int, ignore: int) -> None:
        if ignore < 0:
            raise BreakpointError("ignore count must be 0 or more")
        self.get(id).ignore = int(ignore)
        self.save()

    def add_watch(self, text: str) -> None:
        try:
            compile_expression(text)
        except ExpressionError as e:
            raise BreakpointError(f"watch {text!r}: {e.message}", e.text, e.column) from None
        self.watches.append(text)
        self.save()

    def remove_watch(self, index: int) -> None:
        if not 0 <= index < len(self.watches):
            raise BreakpointError(f"no watch {index} (there are {len(self.watches)})")
        del self.watches[index]
        self.save()

    @property
    def active(self) -> list[Breakpoint]:
        return [bp for bp in self.breakpoints if bp.enabled]

    # -- persistence --------------------------------------------------------------------------
    def save(self) -> None:
        """Merge this session's changes into the file (breakpoint_file.save): another session's
        breakpoints stay; a failure is added to `messages`, and the next change tries again."""
        if self.path is None:
            return
        ours = self._ours()
        try:
            _, shared = breakpoint_file.save(self.path, self._file, ours)
        except BreakpointFileError as e:
            self.messages.append(f"did not save breakpoints to {self.path}: it is no longer a breakpoint file ({e}); "
                                 "it is left as it is")
            return
        except OSError as e:
            self.messages.append(f"could not save breakpoints to {self.path}: {e.strerror or e}")
            return
        self._file = ours
        if shared and not self._said_shared:
            self._said_shared = True
            self.messages.append(f"another session changed {self.path} too: its breakpoints and watches stay in the "
                                 "file beside this session's")

    def _ours(self) -> Contents:
        """This session's part of the file: its saved breakpoints (as they were read, when unchanged),
        the saved ones that no longer resolve and the entries it could not read, as they were."""
        breakpoints = []
        for bp in self.breakpoints:
            if bp.saved:
                read_as, as_read = self._read_as.get(bp.id, (None, None))
                breakpoints.append(read_as if as_read == bp.to_json() else bp.to_json())
        breakpoints += [u.entry for u in self.unresolved] + self._unreadable.breakpoints
        return Contents(breakpoints, self.watches + self._unreadable.watches)

    def _load(self) -> None:
        try:
            contents = breakpoint_file.read(self.path)
        except BreakpointFileError as e:
            self.messages.append(f"ignored {self.path}: not a breakpoint file ({e}); it is left as it is")
            self.path = None  # keep the user's file as it is
            return
        if contents is None:
            return
        # Files written before launch breakpoints were kept apart hold one copy per launch:
        # identical entries load once (add() returns the one already there).
        for entry in contents.breakpoints:
            problem = entry_problem(entry)
            if problem:
                self._unreadable.breakpoints.append(entry)
                self.messages.append(f"kept an unreadable entry of {self.path} as it is: {problem}")
                continue
            try:
                bp = self.add(entry["spec"], entry.get("condition"), entry.get("ignore", 0), entry.get("enabled", True), save=False)
                self._read_as.setdefault(bp.id, (entry, bp.to_json()))
            except BreakpointError as e:
                self.unresolved.append(UnresolvedBreakpoint(self._next_id, entry, e.message))
                self.messages.append(f"saved breakpoint '{entry['spec']}' no longer applies: {e.message} "
                                     f"(kept in the file as #{self._next_id}, unresolved)")
                self._next_id += 1
        for text in contents.watches:
            if not isinstance(text, str):
                self._unreadable.watches.append(text)
                self.messages.append(f"kept an unreadable watch of {self.path} as it is: a watch is an expression in a string")
                continue
            try:
                compile_expression(text)
            except ExpressionError as e:
                self._unreadable.watches.append(text)
                self.messages.append(f"saved watch '{text}' no longer applies: {e.message} (kept in the file)")
                continue
            if text not in self.watches:
                self.watches.append(text)
        self._file = contents  # every entry in it is this session's: what it removes leaves the file


def _looks_like_expression(spec: str) -> bool:
    return any(ch in spec for ch in "()<>=!+-*/[]") or spec.split(".")[0] in RESULT_NAMES


def state_path(program_path: Optional[str], text: str) -> Path:
    """Where a program's breakpoints live: $HLODBG_STATE_DIR, else $XDG_STATE_HOME/hlodbg, else
    ~/.local/state/hlodbg; one file per program, named after it and a hash of its path (or of
    its text when it has no file)."""
    root = os.environ.get("HLODBG_STATE_DIR")
    if not root:
        base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
        root = os.path.join(base, "hlodbg")
    if program_path:
        key = os.path.abspath(program_path)
        stem = Path(program_path).stem
    else:
        key = text
        stem = "program"
    digest = hashlib.sha256(key.encode("utf-8", "replace")).hexdigest()[:12]
    return Path(root) / "breakpoints" / f"{stem}-{digest}.json"
