"""The command line: `break %12 if nan`, `print %5[0, :3]`, `watch`, `goto`, `export graph.svg`...

Commands run in the session's thread (they read values and may move the run) and return what the
console should say, and, for moves, the new state.
"""
from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence

import numpy as np

from hlodbg.engine.debug.op_values import ElementIndexError, parse_element_index
from hlodbg.engine.ir.core import Operation
from hlodbg.engine.ir.dtypes import Token, widen
from hlodbg.engine.ir.errors import HlodbgError
from hlodbg.engine.ir.phrases import LANGUAGE_NAMES, LANGUAGES
from hlodbg.engine.run.arguments import parse_device

from .controller import CommandError, SessionController
from .session_files import SessionFiles
from .state import SessionState


@dataclass
class CommandResult:
    output: str = ""
    state: Optional[SessionState] = None
    select: Optional[Operation] = None
    breakpoints_changed: bool = False
    error: bool = False
    overlay: Optional[dict] = None  # graph node -> (level, fill, badge) to colour the graph with; {} clears it
    explain: Optional["ExplainRequest"] = None  # open the explain pane on this
    trace: Optional[Any] = None  # a Lineage (engine/debug/lineage.py) to show as steps to walk
    language: str = ""  # the language the explain pane and the provenance view speak from now on
    deliver: str = ""  # a file the session wrote, to offer to a served session's browser as a download
    quit: bool = False  # leave hlodbg


@dataclass(frozen=True)
class ExplainRequest:
    op: Optional[Operation]  # None: the op in view
    at: Optional[tuple[int, ...]] = None  # an element of its result


def format_value(value: Any, limit: int = 2000) -> str:
    if isinstance(value, Token):
        return "token"
    if isinstance(value, (tuple, list)):
        # Items until the text is long enough: a list of a million lists of a million is shown
        # by its first few, not formatted whole.
        parts, length = [], 0
        for index, item in enumerate(value):
            if length > limit:
                parts.append(f"… {len(value) - index:,} more")
                break
            parts.append(format_value(item, max(16, limit // max(1, len(value)))))
            length += len(parts[-1]) + 2
        text = "(" + ", ".join(parts) + ")"
        return text if len(text) <= limit else text[: limit - 1] + "…"
    if isinstance(value, np.ndarray):
        shown = widen(value) if value.dtype.kind == "V" or value.dtype.name in ("bfloat16",) or "float8" in value.dtype.name or value.dtype.name in ("int4", "uint4", "int2", "uint2") else value
        with np.printoptions(threshold=200, edgeitems=4, linewidth=100, precision=6):
            text = f"{np.array2string(shown)}  ({value.dtype.name}{list(value.shape)})"
        return text if len(text) <= limit else text[: limit - 1] + "…"
    text = str(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"  # a long string fills no console


class CommandRunner:
    """Parses and runs one command line. Called in the session thread."""

    def __init__(self, controller: SessionController, program_name: str, files: Optional[SessionFiles] = None):
        self.controller = controller
        self.program_name = program_name
        self.files = files or SessionFiles()
        self.find_ops = controller.find_ops
        self._search: tuple[str, list[Operation], int] = ("", [], -1)
        self.last_trace = None  # the Lineage :trace showed last, for `trace` alone to show again
        self._traced_session = None  # the session it is of (on a grid, one device's)
        self.last_trace_step = 0  # the step of it the user went to last

    def run(self, line: str) -> CommandResult:
        line = line.strip()
        if not line:
            return CommandResult()
        if line.startswith("/"):
            return self.search(line[1:].strip())
        name, _, rest = line.partition(" ")
        command = COMMAND_NAMED.get(name)
        if command is None:
            return CommandResult(f"unknown command '{name}' (help lists them)", error=True)
        try:
            return command.run(self, rest.strip())
        except HlodbgError as e:  # the user's input: anything else is a bug and reported as one
            return CommandResult(f"{name}: {e.message}", error=True)
    def move(self, name: str, *args) -> CommandResult:
        return CommandResult(state=self.controller.move(name, *args))

    @property
    def session(self):
        return self.controller.session

    def launch_break(self, spec: str) -> CommandResult:
        """The --break-on breakpoint: like `break SPEC`, but for this session only (not saved)."""
        try:
            return self.cmd_break(spec.strip(), saved=False)
        except HlodbgError as e:
            return CommandResult(f"--break-on: {e.message}", error=True)

    def cmd_break(self, rest: str, saved: bool = True) -> CommandResult:
        if not rest:
            raise CommandError("break needs a place: %12, @fn:%12, a line, model.py:42, an op kind, nan, inf or an expression")
        target = self.controller.target
        device = None
        if " on " in rest:
            rest, _, where = rest.rpartition(" on ")
            device = parse_device(where.strip())
            if not target.multi_device:
                raise CommandError("'on R,P' names a device of a grid; this program runs on one process")
        spec, sep, condition = rest.partition(" if ")
        condition = condition.strip() if sep else None
        bps = target.break_at(spec.strip(), condition, device=device, saved=saved)
        bp = bps[0]
        where = ""
        if target.multi_device:
            where = f" on device {target.device_id(device)}" if device is not None else f" on all {len(bps)} devices"
        return CommandResult(f"breakpoint {bp.describe()}{where}" + (f" ({bp.note})" if bp.note else ""), breakpoints_changed=True)

    def cmd_quit(self, rest: str) -> CommandResult:
        if rest:
            raise CommandError(f"quit takes nothing after it, not '{rest}'")
        return CommandResult(quit=True)

    def cmd_device(self, rest: str) -> CommandResult:
        target = self.controller.target
        if not target.multi_device:
            raise CommandError("this program runs on one process")
        # a device off the grid is refused by the target, with the grid's range or shape
        process = target.process_of(int(rest)) if rest.isdigit() else parse_device(rest)
        state = self.controller.set_focus(process)
        return CommandResult(f"focus on device {target.device_id(process)}", state=state)

    def _id(self, rest: str) -> int:
        if not rest.lstrip("#").isdigit():
            raise CommandError(f"expected a breakpoint number, got '{rest}'")
        return int(rest.lstrip("#"))

    def cmd_delete(self, rest: str) -> CommandResult:
        self.session.breakpoints.remove(self._id(rest))
        return CommandResult(f"deleted breakpoint #{self._id(rest)}", breakpoints_changed=True)

    def cmd_disable(self, rest: str) -> CommandResult:
        self.session.breakpoints.enable(self._id(rest), False)
        return CommandResult(f"disabled breakpoint #{self._id(rest)}", breakpoints_changed=True)

    def cmd_enable(self, rest: str) -> CommandResult:
        self.session.breakpoints.enable(self._id(rest), True)
        return CommandResult(f"enabled breakpoint #{self._id(rest)}", breakpoints_changed=True)

    def cmd_watch(self, rest: str) -> CommandResult:
        if not rest:
            raise CommandError("watch needs an expression, e.g. watch %acc.sum()")
        self.session.watch(rest)
        return CommandResult(f"watching {rest}", breakpoints_changed=True)

    def cmd_unwatch(self, rest: str) -> CommandResult:
        self.session.unwatch(self._id(rest))
        return CommandResult(f"removed watch {rest}", breakpoints_changed=True)

    def cmd_pin(self, rest: str) -> CommandResult:
        if not rest.startswith("%"):
            raise CommandError("pin takes the name of a value computed here, e.g. pin %acc")
        event = self.session.pin(rest)
        return CommandResult(f"pinned {rest} (event {event}): kept however far the run goes "
                             f"(it counts against --memory; unpin {event} lets it go)")

    def cmd_unpin(self, rest: str) -> CommandResult:
        if not rest.isdigit():
            pinned = ", ".join(map(str, self.session.pinned)) or "none"
            raise CommandError(f"unpin takes the event number pin gave (pinned: {pinned})")
        event = int(rest)
        if event not in self.session.pinned:
            raise CommandError(f"event {event} is not pinned (pinned: {', '.join(map(str, self.session.pinned)) or 'none'})")
        self.session.unpin(event)
        return CommandResult(f"unpinned event {event}")

    def cmd_print(self, rest: str) -> CommandResult:
        if not rest:
            raise CommandError("print needs an expression, e.g. print %5[0, :3]")
        return CommandResult(f"{rest} = {format_value(self.session.evaluate(rest))}")

    def cmd_goto(self, rest: str) -> CommandResult:
        if rest.isdigit():
            return self.move("goto", int(rest))
        if not rest.startswith(("%", "@")):
            raise CommandError("goto takes an event number or a value name (%12, @fn:%12)")
        ops = self.find_ops(rest)
        if not ops:
            raise CommandError(f"no op makes {rest}")
        events = [e for e in self.controller.events_of(ops[0]) if e < self.session.position]
        result = self.move("goto", events[-1]) if events else self.move("run_to", ops[0])
        result.select = ops[0]
        return result

    def cmd_export(self, rest: str) -> CommandResult:
        words = split_words(rest)
        if not words:
            raise CommandError("export needs a file name, e.g. export graph.svg")
        path, options = words[0], words[1:]
        overlay, collapse = None, "calls"
        while options:
            flag = options.pop(0)
            if flag == "--overlay" and options:
                overlay = options.pop(0)
            elif flag == "--collapse" and options:
                collapse = options.pop(0)
            else:
                raise CommandError(f"unknown export option '{flag}' (--overlay nan|range|padding, --collapse calls|regions|none)")
        path = self.files.place(path)
        report = self.controller.export(path, overlay, collapse, self.program_name)
        if self.files.served:
            return CommandResult(f"{report}; your browser downloads it", deliver=path)
        return CommandResult(report)

    def cmd_overlay(self, rest: str) -> CommandResult:
        if rest == "none":
            return CommandResult("graph overlay off", overlay={})
        if rest != "padding":
            raise CommandError("overlay takes padding (waste of the results' layouts per op) or none")
        marks = self.controller.padding_marks()
        worst = max((level for level, _, _ in marks.values()), default=0)
        from hlodbg.layouts.overlay import PADDING

        legend = "  ".join(f"{label}" for label, _, _ in PADDING[:worst + 1])
        target = self.controller.target_name
        return CommandResult(f"graph coloured by padding waste on {target} (physical / logical bytes): {legend}; "
                             f"worst {PADDING[worst][0]}; :overlay none clears it", overlay=marks)

    def cmd_explain(self, rest: str) -> CommandResult:
        words = rest.replace("--at=", "--at ").split()
        op, at = None, None
        while words:
            word = words.pop(0)
            if word == "--at":
                if not words:
                    raise CommandError("--at needs an element of the result, e.g. --at 1,0,2")
                at = parse_element(words.pop(0))
            elif word.startswith(("%", "@")) and op is None:
                ops = self.find_ops(word)
                if not ops:
                    raise CommandError(f"no op makes {word}")
                op = ops[0]
            else:
                raise CommandError(f"explain takes [%op] [--at i,j,k], not '{word}'")
        return CommandResult(explain=ExplainRequest(op, at), select=op)

    def cmd_trace(self, rest: str) -> CommandResult:
        """`trace %v[i,j]` (the value as the cursor sees it), or `trace nan|inf`: the first NaN/Inf
        from the cursor on (the run moves there)."""
        from hlodbg.engine.debug.lineage import first_nonfinite, trace_element
        from hlodbg.engine.debug.lineage_answer import element_index_text

        text = rest.strip()
        state = None
        if self.session.in_replay:  # its steps are events of the run, which `goto` inside a replay does not reach
            raise CommandError("trace follows the run itself: leave the replayed body first (f steps out)")
        if not text:
            if self.last_trace is None or self._traced_session is not self.session:
                raise CommandError("trace takes a value and an element, %12[1,0] (or %loss for one element), or nan / "
                                   "inf; alone, it shows the last trace (of this device's run) again")
            return CommandResult(trace=self.last_trace)
        if text in ("nan", "inf"):
            before = self.session.position
            name, event, at = first_nonfinite(self.session, text, lambda: self.controller.target.move("continue_"))
            state = self.controller.state("breakpoint", before)
        elif text.startswith("%"):
            name, bracket, element = text.partition("[")
            if bracket and not element.endswith("]"):
                raise CommandError(f"trace: write the element in brackets, %v[1,0], not '{text}'")
            name, event, at = name.strip(), None, parse_element(element[:-1]) if bracket else None
        else:
            raise CommandError("trace takes a value and an element, %12[1,0] (or %loss for one element), or nan / inf")
        found = trace_element(self.session, name, at, event)
        self.last_trace, self.last_trace_step, self._traced_session = found, 0, self.session
        origin = f"; origin: step {found.origin + 1}" if found.origin is not None else ""
        return CommandResult(f"trace of {found.value}{element_index_text(found.index)}: {len(found.steps)} step(s)"
                             f"{origin}", state=state, trace=found)

    def cmd_lang(self, rest: str) -> CommandResult:
        if rest not in LANGUAGES:
            raise CommandError(f"lang takes one of {', '.join(LANGUAGES)}" + (f", not '{rest}'" if rest else ""))
        return CommandResult(f"explanations in {LANGUAGE_NAMES[rest]}", language=rest)

    def search(self, text: str) -> CommandResult:
        query, matches, index = self._search
        if not text or text == query:
            if not matches:
                return CommandResult("search: type /TEXT (op name, kind, %name or file:line)", error=not text)
            index = (index + 1) % len(matches)
        else:
            matches = self.find_ops(text)
            if not matches:
                self._search = (text, [], -1)
                return CommandResult(f"search: nothing matches '{text}'", error=True)
            query, index = text, 0
        self._search = (query, matches, index)
        op = matches[index]
        from hlodbg.layouts.labels import op_display as op_label

        return CommandResult(f"match {index + 1} of {len(matches)}: {op_label(op)}" + (f"  line {op.pos.line}" if op.pos else ""), select=op)


@dataclass(frozen=True)
class Command:
    """One command of the command line, declared once: the dispatcher and the help read it."""

    name: str
    usage: str  # how it is written, for the help: "goto N | goto %12"
    help: str  # what it does (lines of the help)
    run: Callable[[CommandRunner, str], CommandResult]  # (the runner, the rest of the line)
    aliases: tuple[str, ...] = ()  # its abbreviations
    joins: bool = False  # listed on the help row of the command before it ("watch EXPR | unwatch N")


def _moving(name: str) -> Callable[[CommandRunner, str], CommandResult]:
    return lambda runner, rest: runner.move(name)


COMMANDS: tuple[Command, ...] = (
    Command("break", "break SPEC [if COND] [on R,P]", "%12, @fn:%12, 42, model.py:42, while, nan, inf, or an expression;\n"
            "on a grid: every device, or only device R,P", CommandRunner.cmd_break, ("b",)),
    Command("device", "device N | device R,P", "on a grid: focus that device (D: the next one)", CommandRunner.cmd_device),
    Command("delete", "delete N", "a breakpoint by number", CommandRunner.cmd_delete, ("d",)),
    Command("disable", "disable N", "", CommandRunner.cmd_disable, joins=True),
    Command("enable", "enable N", "", CommandRunner.cmd_enable, joins=True),
    Command("watch", "watch EXPR", "expressions shown at every stop; pins kept",
            CommandRunner.cmd_watch),
    Command("unwatch", "unwatch N", "", CommandRunner.cmd_unwatch, joins=True),
    Command("pin", "pin %x", "", CommandRunner.cmd_pin, joins=True),
    Command("unpin", "unpin N", "", CommandRunner.cmd_unpin, joins=True),
    Command("print", "print EXPR", "numpy over values: %5, %5[0, :3], abs(%x).max(), iteration", CommandRunner.cmd_print, ("p",)),
    Command("goto", "goto N | goto %12", "jump to event N, or to the last (else next) run of the op making %12", CommandRunner.cmd_goto),
    Command("step", "step", "the same moves as the keys", _moving("step_in"), ("s",)),
    Command("next", "next", "", _moving("step"), ("n",), joins=True),
    Command("finish", "finish", "", _moving("step_out"), ("f",), joins=True),
    Command("continue", "continue", "", _moving("continue_"), ("c",), joins=True),
    Command("back", "back", "", _moving("back"), joins=True),
    Command("restart", "restart", "", _moving("restart"), joins=True),
    Command("export", "export FILE.svg [--overlay nan|range|padding] [--collapse calls|regions|none]",
            "the graph, coloured by this run", CommandRunner.cmd_export),
    Command("overlay", "overlay padding | overlay none", "colour the graph's ops by how much their results' layouts pad them",
            CommandRunner.cmd_overlay),
    Command("search", "search TEXT [/TEXT]", "ops by name, kind or location; again for the next match",
            lambda runner, rest: runner.search(rest)),
    Command("note", "note", "the full note of a replayed or vectorised body's frame",
            lambda runner, rest: CommandResult(runner.controller.notes() or "no frame here has a note")),
    Command("explain", "explain [%12] [--at 1,0,2]", "the explain pane on an op (the one in view) and an element of its result",
            CommandRunner.cmd_explain),
    Command("trace", "trace %12[1,0] | nan | inf", "where the element came from, op by op through the run (Enter goes to a "
            "step);\nnan/inf: from the first NaN/Inf to the op that made it; alone: the last trace", CommandRunner.cmd_trace),
    Command("lang", "lang en|ja|hi", "the language of the explain pane and the provenance view", CommandRunner.cmd_lang),
    Command("help", "help", "this list; leave hlodbg (the q key too)", lambda runner, rest: CommandResult(HELP), ("h",)),
    Command("quit", "quit", "", CommandRunner.cmd_quit, ("q",), joins=True),
)
COMMAND_NAMED = {word: command for command in COMMANDS for word in (command.name, *command.aliases)}
QUIT_WORDS = ("quit", *COMMAND_NAMED["quit"].aliases)
USAGE_WIDTH = 26  # the help's first column; longer usages push their text along


def help_text(commands: Sequence[Command] = COMMANDS) -> str:
    """The `help` command's list (the help screen shows it too): a row per command, or per run of
    commands joined on one row, with their abbreviations in brackets."""
    rows: list[tuple[list[str], list[str], str]] = []  # (usages, aliases, help)
    for command in commands:
        if command.joins and rows:
            rows[-1][0].append(command.usage)
            rows[-1][1].extend(command.aliases)
        else:
            rows.append(([command.usage], list(command.aliases), command.help))
    lines = ["commands (abbreviations in brackets):"]
    for usages, aliases, text in rows:
        usage = " | ".join(usages) + (f" [{' '.join(aliases)}]" if aliases else "")
        first, *more = text.splitlines()
        lines.append(f"  {usage:<{USAGE_WIDTH}} {first}" if len(usage) <= USAGE_WIDTH else f"  {usage}   {first}")
        lines += [f"  {'':<{USAGE_WIDTH}} {line}" for line in more]
    return "\n".join(lines)


HELP: str = help_text()


def split_words(text: str) -> list[str]:
    """A command's words as a shell splits them ("my graph.svg" is one word)."""
    try:
        return shlex.split(text)
    except ValueError as e:  # shlex says "No closing quotation" / "No escaped character"
        raise CommandError(f"{str(e)[0].lower()}{str(e)[1:]} in {text!r}: close the quote, or write \\ for a backslash") from None


def quits(line: str) -> bool:
    """Whether the command line asks to leave (`quit`, `q`): done at once, even while a move runs."""
    word, _, rest = line.strip().partition(" ")
    return word in QUIT_WORDS and not rest.strip()


def parse_element(text: str) -> tuple[int, ...]:
    """`1,0,2` (or `[1, 0, 2]`, `()` for a scalar) as an element index; its shape is checked where
    the value is known (the inspector's cursor, the trace)."""
    try:
        return parse_element_index(text)
    except ElementIndexError as e:
        raise CommandError(e.message) from None


__all__ = ["COMMANDS", "Command", "CommandRunner", "CommandResult", "ExplainRequest", "HELP", "help_text", "format_value", "parse_element", "quits"]
