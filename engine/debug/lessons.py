"""Lessons: a small annotated program per op family, with questions hlodbg itself can answer.

A lesson is `NAME.mlir` (comments say what to look at) beside `NAME.toml`, its sidecar:

    title = "Gather: rows by index"
    order = 6                     # place in the lesson list (teaching order)
    family = "gather"
    about = "what the lesson teaches, a few sentences"
    [inputs]                      # the entry function's arguments, as small inline arrays
    arg0 = [[0.0, 1.0], [2.0, 3.0]]
    "arg0@1,0" = [[...]]          # on a grid: the argument of device (replica 1, partition 0)
    [[questions]]
    kind = "shape"                # shape | provenance | value | runs
    op = "%0"                     # the op the question is about (%name or @fn:%name)
    result = 0                    # which result of the op (default 0)
    at = [2, 1]                   # provenance/value: the result element
    operand = 0                   # provenance: which operand's elements to name
    device = [1, 0]               # on a grid: the device (replica, partition) asked about
    ask = "Which element of %arg0 lands at %0[2, 1]?"
    answer = "[4, 1]"             # what the lesson's author wrote; the tests check hlodbg agrees
    hints = ["first hint", "second hint"]

`LessonRun(lesson, module)` runs the program on the lesson's inputs (on every device of its grid),
keeping the operands and results of each op a question names (their last execution), and answers
every question from hlodbg's own engine: shapes from the op's types, provenance from
engine/ops/provenance.py, values and run counts from the run. `check(question, typed)` reads a
student's typed answer tolerantly ("2x3", "[2, 3]", "(2,3)") and says whether it is right.
"""
from __future__ import annotations

import math
import re
import tomllib
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

import numpy as np

from ..ir.core import Module, Operation
from ..ir.errors import HlodbgError
from ..ir.phrases import Phrase
from ..machine.process import Grid, ProcessId
from ..ops.collectives_provenance import GridValues
from ..ops.provenance import provenance
from ..run.arguments import device_arguments, given_arguments, split_device_key
from ..run.grid import GridScheduler, ScheduledGrid, grid_shape
from ..run.interpreter import Interpreter, Listener, entry_function
from .breakpoints import BreakpointError, Resolver

KINDS = ("shape", "provenance", "value", "runs")

CORRECT = Phrase("Correct.")
WRONG = Phrase("Not quite. Try again, or ask for a hint.")
UNREADABLE = Phrase("Cannot read '{text}' as {expected}.")
TOO_LONG = Phrase("An answer is at most {limit} characters long; this one has {length}.")
EXPECT_SHAPE = Phrase("a shape, such as 2x3 or [2, 3] (scalar for a scalar)")
EXPECT_INDICES = Phrase("one or more indices, such as [1, 0] or (1, 0) (1, 2); add @r,p for a device's element")
EXPECT_VALUE = Phrase("a number such as 3 or -1.5 (true/false for booleans), or a list such as [1, 2]")
EXPECT_COUNT = Phrase("a whole number, such as 3")
RANK_NUDGE = Phrase("The result has {rank} dimension(s); you gave {given}.")
COUNT_NUDGE = Phrase("{count} element(s) of this operand make it; you named {given}.")
DEVICE_NUDGE = Phrase("Right elements. Now say on which device they are, with @r,p (replica, partition).")
ANSWER_IS = Phrase("The answer: {answer}")
NO_MORE_HINTS = Phrase("No more hints for this question.")
PADDING_ONLY = Phrase("none (only padding or init values)")


class LessonError(HlodbgError):
    """A lesson that cannot be read or asks what hlodbg cannot answer."""


@dataclass(frozen=True)
class Question:
    number: int  # 1-based, in the lesson's order
    kind: str
    op: str
    ask: str
    answer: str
    hints: tuple[str, ...] = ()
    result: int = 0
    at: Optional[tuple[int, ...]] = None
    operand: int = 0
    device: Optional[ProcessId] = None


@dataclass(frozen=True)
class Lesson:
    name: str
    path: Path  # the program
    title: str
    family: str
    about: str
    order: int
    inputs: dict  # {position: array} for every device
    device_inputs: dict  # {ProcessId: {position: array}}: per-device arguments on a grid
    questions: tuple[Question, ...]


@dataclass(frozen=True)
class Verdict:
    correct: bool
    message: str


# -- reading lessons -----------------------------------------------------------------------------

_ARG_NAME = re.compile(r"^arg(\d+)$")


def read_lesson(program: Path) -> Lesson:
    """The lesson of `program` (a .mlir) from its sidecar NAME.toml."""
    program = Path(program)
    sidecar = program.with_suffix(".toml")
    try:
        with sidecar.open("rb") as f:
            data = tomllib.load(f)
    except FileNotFoundError:
        raise LessonError(f"{program}: a lesson needs its sidecar {sidecar.name} (title, family, inputs, questions)") from None
    except tomllib.TOMLDecodeError as e:
        raise LessonError(f"{sidecar}: {e}") from None
    for key in ("title", "family", "questions"):
        if key not in data:
            raise LessonError(f"{sidecar}: missing '{key}'")
    inputs, device_inputs = {}, {}
    for key, value in data.get("inputs", {}).items():
        name, device = split_device_key(key, str(sidecar))  # the form of --args' keys: arg0, arg0@1,0
        match = _ARG_NAME.match(name)
        if not match:
            raise LessonError(f"{sidecar}: input '{key}' should be argN or argN@R,P")
        target = inputs if device is None else device_inputs.setdefault(device, {})
        target[int(match.group(1))] = np.asarray(value)
    questions = tuple(_question(sidecar, n, q) for n, q in enumerate(data["questions"], start=1))
    about = re.sub(r"(?<!\n)\n(?!\n)", " ", data.get("about", "").strip())  # paragraphs rewrap to the pane
    return Lesson(program.stem, program, data["title"], data["family"], about, int(data.get("order", 0)), inputs,
                  device_inputs, questions)


def _question(sidecar: Path, number: int, raw: dict) -> Question:
    where = f"{sidecar}: question {number}"
    kind = raw.get("kind")
    if kind not in KINDS:
        raise LessonError(f"{where}: kind must be one of {', '.join(KINDS)}, not {kind!r}")
    for key in ("op", "ask", "answer"):
        if key not in raw:
            raise LessonError(f"{where}: missing '{key}'")
    at = raw.get("at")
    if kind in ("provenance",) and at is None:
        raise LessonError(f"{where}: a provenance question names the result element with at = [...]")
    device = raw.get("device")
    if at is not None and not (isinstance(at, list) and all(isinstance(i, int) for i in at)):
        raise LessonError(f"{where}: at must be a list of whole numbers such as [1, 0], not {at!r}")
    if device is not None and not (isinstance(device, list) and len(device) == 2 and all(isinstance(i, int) for i in device)):
        raise LessonError(f"{where}: device must be [replica, partition], such as [1, 0], not {device!r}")
    return Question(number, kind, raw["op"], raw["ask"], str(raw["answer"]), tuple(raw.get("hints", ())),
                    int(raw.get("result", 0)), tuple(at) if at is not None else None, int(raw.get("operand", 0)),
                    ProcessId(*device) if device is not None else None)


def lesson_catalog(folder: Path) -> list[Lesson]:
    """Every lesson in `folder` (each .mlir with a sidecar), in teaching order (`order`, then name)."""
    lessons = [read_lesson(p) for p in Path(folder).glob("*.mlir") if p.with_suffix(".toml").exists()]
    return sorted(lessons, key=lambda l: (l.order, l.name))


# -- reading typed answers -----------------------------------------------------------------------

_BRACKETED = re.compile(r"[(\[]([^()\[\]]*)[)\]]\s*(?:@\s*(\d+)(?:\s*,\s*(\d+))?)?")
_NUMBER = r"[-+]?(?:\d+\.?\d*(?:e[-+]?\d+)?|\.\d+(?:e[-+]?\d+)?|inf|nan)"


# Typed answers are read in one pass each (no pattern here backtracks over what it has read), and
# no longer than this: hlodbg's own lessons' answers are under 60 characters.
ANSWER_LIMIT = 1000
ECHOED = 60  # characters of an unreadable answer repeated back to the student
_ELEMENT_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_.!:<>, -")
_ELEMENT_TYPE = re.compile(r"[a-z!][a-z0-9_.!:<>, -]*")
_TRAILING_ELEMENT_TYPE = re.compile(r"(?<=\d)\s*x\s*[a-z!][a-z0-9_.!:<>, -]*$")


def parse_shape(text: str) -> tuple[int, ...]:
    """'2x3', '[2, 3]', '(2,3)', '2 3', 'tensor<2x3xf32>' -> (2, 3); 'scalar', '()', '[]' -> ()."""
    t = text.strip().lower()
    inner = re.fullmatch(r"tensor<(.*)>", t)
    if inner:
        t = inner.group(1).strip()
        if _ELEMENT_TYPE.fullmatch(t):  # tensor<f32>: a scalar
            return ()
    if t in ("scalar", "()", "[]"):
        return ()
    t = _without_element_type(t)  # 2x3xf32 -> 2x3
    t = re.sub(r"(?<=\d)\s*x\s*(?=\d)", " ", t)  # 2x3 -> 2 3
    if re.search(r"[^\d\s,()\[\]]", t) or not re.search(r"\d", t):
        raise ValueError(text)
    return tuple(int(n) for n in re.findall(r"\d+", t))


def _without_element_type(t: str) -> str:
    """`t` without the `x<element type>` that ends it. The element type lies in the run of its
    characters that ends the text, so the pattern is tried there only: tried from every digit of a
    long answer, it would read the rest of the text again from each (40k characters: 10 s)."""
    start = len(t)
    while start and t[start - 1] in _ELEMENT_CHARS:
        start -= 1
    found = _TRAILING_ELEMENT_TYPE.search(t, start)
    return t[:found.start()] if found else t


def parse_indices(text: str) -> frozenset:
    """'[1, 0]', '(1,0) (1,2)', '1,0', '() ' (a scalar's index), '[1] @2,0' -> {((1,), ProcessId(2, 0))}."""
    t = re.sub(r"%[\w.#]+", " ", text.strip().lower())  # "%arg0[1, 2]" names the operand: the index is what counts
    if t.strip() in ("none", "-", "nothing"):
        return frozenset()
    found = []
    for match in _BRACKETED.finditer(t):
        numbers = match.group(1).replace(",", " ").split()
        if not all(re.fullmatch(r"\d+", n) for n in numbers):
            raise ValueError(text)
        device = None
        if match.group(2) is not None:
            device = ProcessId(int(match.group(2)), int(match.group(3) or 0))
        found.append((tuple(int(n) for n in numbers), device))
    rest = _BRACKETED.sub(" ", t).replace(";", " ").strip()
    if not found:
        head, _, device_text = t.partition("@")
        if re.fullmatch(r"\d+(?:\s*,\s*\d+|\s+\d+)*", head.strip()):  # one way to read each separator
            device = None
            if device_text:
                parts = re.findall(r"\d+", device_text)
                device = ProcessId(int(parts[0]), int(parts[1]) if len(parts) > 1 else 0)
            return frozenset({(tuple(int(n) for n in re.findall(r"\d+", head)), device)})
        raise ValueError(text)
    if re.sub(r"\b(and|operand|device)\b|[,\s]", "", rest):
        raise ValueError(text)
    return frozenset(found)


def parse_value(text: str) -> Any:
    """'3', '-1.5', 'true', '[1, 2]' -> a number, a bool, or a list of numbers."""
    t = text.strip().lower()
    if t in ("true", "false"):
        return t == "true"
    if t.startswith(("[", "(")):
        numbers = re.findall(_NUMBER + r"|true|false", t)
        if not numbers or re.sub(_NUMBER + r"|true|false|[,\s()\[\]]", "", t):
            raise ValueError(text)
        return [(n == "true") if n in ("true", "false") else float(n) for n in numbers]
    if not re.fullmatch(_NUMBER, t):
        raise ValueError(text)
    return float(t)


def parse_count(text: str) -> int:
    t = text.strip()
    if not re.fullmatch(r"\d+", t):
        raise ValueError(text)
    return int(t)


# -- answering -----------------------------------------------------------------------------------


class _Recorder(Listener):
    """Keeps the operands and results of the watched ops' last execution, and counts executions."""

    def __init__(self, watched: set, process: ProcessId, store: dict, counts: dict):
        self.watched, self.process, self.store, self.counts = watched, process, store, counts

    def after_op(self, event, frame, op, operands, results) -> None:
        if op in self.watched:
            self.store[(op, self.process)] = (list(operands), list(results))
            self.counts[(op, self.process)] = self.counts.get((op, self.process), 0) + 1


@dataclass
class LessonRun:
    """One run of a lesson's program, and hlodbg's answers to its questions."""

    lesson: Lesson
    module: Module
    entry: str = "main"
    values: dict = field(default_factory=dict)  # (op, process) -> (operands, results)
    counts: dict = field(default_factory=dict)  # (op, process) -> executions
    grid: Grid = field(default_factory=Grid)  # the devices the program ran on
    ops: dict = field(default_factory=dict)  # question number -> op

    def __post_init__(self) -> None:
        resolver = Resolver(self.module, self.entry)
        for q in self.lesson.questions:
            try:
                _, found, _ = resolver.resolve(q.op)
            except BreakpointError as e:
                raise LessonError(f"{self.lesson.path}: question {q.number}: {e}") from None
            if len(found) != 1:
                raise LessonError(f"{self.lesson.path}: question {q.number}: {q.op} names {len(found)} ops; name one")
            op = self.ops[q.number] = next(iter(found))
            self._check_element(q, op)
        self._run()

    def _check_element(self, q: Question, op: Operation) -> None:
        """The result and element a question names exist (a clear message, not an IndexError later)."""
        where = f"{self.lesson.path.with_suffix('.toml')}: question {q.number}"
        if not 0 <= q.result < len(op.results):
            raise LessonError(f"{where}: {q.op} has {len(op.results)} result(s); there is no result {q.result}")
        shape = getattr(op.results[q.result].type, "shape", None)
        if q.at is not None and (shape is None or len(q.at) != len(shape)
                                 or any(not 0 <= i < n for i, n in zip(q.at, shape))):
            raise LessonError(f"{where}: at = {list(q.at)} is not an element of {q.op} (shape {list(shape or [])})")
        if q.device is not None and q.device not in self.devices:
            raise LessonError(f"{where}: device {q.device.replica_id},{q.device.partition_id} is not on the "
                              f"{len(self.devices)}-device grid of the program")

    @property
    def devices(self) -> list[ProcessId]:
        replicas, partitions = grid_shape(self.module)
        return [ProcessId(r, p) for r in range(replicas) for p in range(partitions)]

    def arguments(self) -> Any:
        """Every device's arguments: a list (the same on every device) or {device: list}."""
        function = entry_function(self.module, self.entry)
        replicas, partitions = grid_shape(self.module)
        given = given_arguments(self.lesson.inputs, self.lesson.device_inputs)
        try:
            values, randomised = device_arguments(function.function_type.inputs, given, replicas, partitions)
        except HlodbgError as e:
            raise LessonError(f"{self.lesson.path.with_suffix('.toml')}: {e.message}") from None
        if randomised:
            raise LessonError(f"{self.lesson.path}: the lesson gives no input for argument(s) "
                              f"{', '.join(map(str, randomised))}; add them to [inputs] of its sidecar")
        return values

    def _run(self) -> None:
        watched = set(self.ops.values())
        replicas, partitions = grid_shape(self.module)
        arguments = self.arguments()
        if (replicas, partitions) == (1, 1):
            process = ProcessId(0, 0)
            recorder = _Recorder(watched, process, self.values, self.counts)
            Interpreter(self.module, listeners=[recorder]).run(self.entry, arguments)
            return
        grid = self.grid = ScheduledGrid(replicas, partitions, infeed=deque())
        tasks = {}
        for process in grid.processes():
            recorder = _Recorder(watched, process, self.values, self.counts)
            interpreter = Interpreter(self.module, process=process, grid=grid, listeners=[recorder])
            own = arguments[process] if isinstance(arguments, dict) else arguments
            tasks[process] = (lambda i=interpreter, a=own: i.run(self.entry, a))
        GridScheduler(grid, tasks).run()

    def _device(self, q: Question) -> ProcessId:
        return q.device if q.device is not None else ProcessId(0, 0)

    def _values_of(self, q: Question) -> tuple[list, list]:
        op = self.ops[q.number]
        found = self.values.get((op, self._device(q)))
        if found is None:
            raise LessonError(f"{self.lesson.path}: question {q.number}: {q.op} never ran on device "
                              f"{self._device(q)}, so hlodbg has no values to answer from", op.pos)
        return found

    def op_of(self, q: Question) -> Operation:
        return self.ops[q.number]

    def truth(self, q: Question) -> Any:
        """hlodbg's own answer to `q`, in the form `parse_answer` gives a typed one."""
        op = self.ops[q.number]
        if q.kind == "shape":
            shape = op.results[q.result].type.shape
            return tuple(int(d) for d in shape)
        if q.kind == "runs":
            return self.counts.get((op, self._device(q)), 0)
        operands, results = self._values_of(q)
        if q.kind == "value":
            value = np.asarray(results[q.result])
            return value[q.at].item() if q.at is not None else value.tolist()
        process = self._device(q)
        peers = GridValues(self.grid, {p: v for (o, p), v in self.values.items() if o is op}, self.module)
        answer = provenance(op, q.at, result=q.result, operands=operands, results=results, process=process,
                            peer_values=peers)
        return frozenset((s.index, s.device) for s in answer.sources if s.operand == q.operand)

    def show(self, q: Question) -> str:
        """hlodbg's answer to `q` as a student would type it."""
        return format_answer(q.kind, self.truth(q))

    def check(self, q: Question, typed: str, lang: str = "en") -> Verdict:
        """Whether the typed answer to `q` is right, with a nudge when it is not."""
        try:
            given = parse_answer(q.kind, typed)
        except AnswerTooLong:
            return Verdict(False, TOO_LONG.say(lang, limit=f"{ANSWER_LIMIT:,}", length=f"{len(typed):,}"))
        except ValueError:
            return Verdict(False, UNREADABLE.say(lang, text=echo(typed), expected=EXPECTED[q.kind].say(lang)))
        truth = self.truth(q)
        if answers_agree(q.kind, given, truth, self._device(q) if q.device is not None else None):
            return Verdict(True, CORRECT.say(lang))
        return Verdict(False, _nudge(q.kind, given, truth, lang))

    def hint(self, q: Question, shown: int, lang: str = "en") -> str:
        """Hint number `shown` (0-based) of `q`; after the last, that there are no more."""
        return q.hints[shown] if shown < len(q.hints) else NO_MORE_HINTS.say(lang)

    def reveal(self, q: Question, lang: str = "en") -> str:
        return ANSWER_IS.say(lang, answer=self.show(q))


EXPECTED = {"shape": EXPECT_SHAPE, "provenance": EXPECT_INDICES, "value": EXPECT_VALUE, "runs": EXPECT_COUNT}
_PARSERS = {"shape": parse_shape, "provenance": parse_indices, "value": parse_value, "runs": parse_count}


def parse_answer(kind: str, text: str) -> Any:
    """A typed answer of a question of `kind`; ValueError when it cannot be read (AnswerTooLong
    past ANSWER_LIMIT characters)."""
    if len(text) > ANSWER_LIMIT:
        raise AnswerTooLong(text)
    return _PARSERS[kind](text)


class AnswerTooLong(ValueError):
    """A typed answer longer than any answer (ANSWER_LIMIT): not read at all."""


def echo(typed: str) -> str:
    """What the student typed, as repeated back in a message: its start when it is long."""
    typed = typed.strip()
    return typed if len(typed) <= ECHOED else typed[:ECHOED - 1] + "…"


def answers_agree(kind: str, given: Any, truth: Any, device: Optional[ProcessId] = None) -> bool:
    if kind == "provenance":
        if given == truth:
            return True
        # An answer without devices names elements of the asked device's own operand.
        if all(d is None for _, d in given):
            return {(i, d if d is not None else device) for i, d in truth} == {(i, device) for i, _ in given}
        return False
    if kind == "value":
        return _values_agree(given, truth)
    return given == truth


def _values_agree(given: Any, truth: Any) -> bool:
    if isinstance(truth, list) or isinstance(given, list):
        flat = np.asarray(truth, dtype=np.float64).ravel() if not isinstance(truth, bool) else None
        if flat is None or not isinstance(given, list) or len(given) != flat.size:
            return False
        return all(_values_agree(g, t) for g, t in zip(given, flat.tolist()))
    if isinstance(truth, bool) or isinstance(given, bool):
        return bool(given) == bool(truth) and isinstance(given, bool) == isinstance(truth, (bool, np.bool_))
    g, t = float(given), float(truth)
    if math.isnan(t):
        return math.isnan(g)
    return math.isclose(g, t, rel_tol=1e-5, abs_tol=1e-6)


def _nudge(kind: str, given: Any, truth: Any, lang: str) -> str:
    if kind == "shape" and len(given) != len(truth):
        return RANK_NUDGE.say(lang, rank=len(truth), given=len(given))
    if kind == "provenance":
        if len(given) != len(truth):
            return COUNT_NUDGE.say(lang, count=len(truth), given=len(given))
        if {i for i, _ in given} == {i for i, _ in truth}:
            return DEVICE_NUDGE.say(lang)
    return WRONG.say(lang)


def format_answer(kind: str, answer: Any, lang: str = "en") -> str:
    """An answer as a student would type it: 2x3, [1, 0] (1, 2) @1,0, 3.5, [1, 2]."""
    if kind == "shape":
        return "x".join(map(str, answer)) if answer else "scalar"
    if kind == "provenance":
        if not answer:
            return PADDING_ONLY.say(lang)
        items = sorted(answer, key=lambda item: (item[1].replica_id if item[1] else -1,
                                                 item[1].partition_id if item[1] else -1, item[0]))
        return " ".join(f"[{', '.join(map(str, i))}]" + (f" @{d.replica_id},{d.partition_id}" if d is not None else "")
                        for i, d in items)
    if kind == "value":
        return _format_value(answer)
    return str(answer)


def _format_value(value: Any) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(_format_value(v) for v in value) + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return f"{value:g}" if isinstance(value, float) else str(value)
