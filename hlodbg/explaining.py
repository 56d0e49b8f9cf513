"""An op explained with the values of a run: what `hlodbg explain` (cli_explain.py),
`Program.explain` and the MCP server's explain share.

The op is found the way a breakpoint is (`%12`, `@fn:%12`, an HLO instruction name such as
`%fusion.3` or `fusion.3`, a source line number). To have values the program runs to the op's
first execution; on a grid, on the chosen device, with the other devices' values for
collectives. An op the run never reaches, or a run that fails or times out first, is still
explained, with a sentence saying why there are no values.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

import numpy as np

from hlodbg.engine import HlodbgError
from hlodbg.engine.debug.breakpoints import BreakpointError, Resolver
from hlodbg.engine.debug.op_values import OpValues, parse_element_index
from hlodbg.engine.ir.core import Function, Operation, symbol_name
from hlodbg.engine.ir.opdefs import is_terminator, lookup
from hlodbg.engine.ir.phrases import Phrase
from hlodbg.engine.ir.types import TensorType, TupleType
from hlodbg.engine.ops.provenance import ProvenanceError

_INSTRUCTION_NAME = re.compile(r"[A-Za-z_][\w-]*\.\d+")

NOT_REACHED = Phrase("the run did not reach this op (its function is not called on this run): no values are shown")
IN_BODY = Phrase("this op is in the body of {owner} (line {line}), which the run does not stop inside op by op: no values are shown")
RUN_FAILED = Phrase("the run stopped with an error before this op ran, so no values are shown: {error}")
OWNER_NOT_REACHED = Phrase("the run did not reach {owner} (line {line}), which holds this op: no values are shown")
NOT_ENTERED = Phrase("{owner} (line {line}) ran without running this op (a loop of no iteration, a branch not taken): "
                     "no values are shown")
IN_LOOP = Phrase("this op is inside the loop of {owner} (line {line}): the values shown are those of its first execution")
CALLED_OFTEN = Phrase("its function @{function} is called from {count} places: the values shown are those of the op's "
                      "first execution")
TIMED_OUT = Phrase("the run did not finish this op within {seconds} s (a loop that never ends?), so no values are shown; "
                   "--timeout gives it longer")
ON_DEVICE = Phrase("the values shown are those of device (replica {replica}, partition {partition}), one of the {count} "
                   "that run this op (--device chooses)")
BATCHED = Phrase("the run evaluates this body for {count} elements at once: the values shown are those of the first")


def explained_element(program, spec: str, at: Optional[str], result: Optional[int], entry: str = "main",
                      options: tuple[str, str] = ("--at", "--result")):
    """(op, element or None, result number) of an explain request: the op `spec` names (find_op),
    the result `result` or, by default, N of a spec written `%5#N`, and `at` read against its shape
    (parse_at; `options` name the two in messages)."""
    path = str(program.path) if program.path is not None else None
    op = find_op(program.module, spec, entry, path)
    if result is None:  # `%0#3` names result 3 of %0
        numbered = re.search(r"#(\d+)$", spec.strip())
        result = int(numbered.group(1)) if numbered else 0
    return op, parse_at(at, op, result, options) if at is not None else None, result


def explain_in_run(program, op: Operation, values, *, at=None, result: int = 0, lang: str = "en", seed: int = 0,
                   entry: str = "main", focus=None, replicas: Optional[int] = None, partitions: Optional[int] = None,
                   timeout: Optional[float] = 20.0):
    """The explanation of `op` with the values of its first execution in a run of `entry` on
    `values` (what `Program.debug` takes), on device `focus` of a grid; the run stops after
    `timeout` seconds (None: no limit), and the explanation then says why it has no values."""
    from hlodbg.engine.debug.explain import explain_op
    from hlodbg.engine.machine.process import ProcessId
    from hlodbg.layouts.labels import hlo_opcode

    run = _values(program, op, values, lang, seed=seed, entry=entry, focus=focus or ProcessId(0, 0),
                  replicas=replicas, partitions=partitions, timeout=timeout)
    return explain_op(op, lang=lang, operands=run.operands, results=run.results, at=at, result=result,
                      process=run.process, peer_values=run.peer_values, values_note=run.note,
                      hlo_opcode=hlo_opcode(op), devices=run.devices or None)


def find_op(module, spec: str, entry: str = "main", path: Optional[str] = None) -> Operation:
    """The one op `spec` names, resolved as a breakpoint is (engine/debug/breakpoints.py); a bare
    HLO instruction name (`fusion.3`) is read as the value `%fusion.3`."""
    resolver = Resolver(module, entry, path)
    text = spec.strip()
    # A bare name is also tried as a value: first when it looks like an HLO instruction's (`fusion.3`).
    if text.startswith(("%", "@")) or text[:1].isdigit():
        attempts = [text]
    elif _INSTRUCTION_NAME.fullmatch(text):
        attempts = ["%" + text, text]
    else:
        attempts = [text, "%" + text]
    unresolved: list[BreakpointError] = []
    for attempt in attempts:
        try:
            kind, ops, _ = resolver.resolve(attempt)
            break
        except BreakpointError as error:
            unresolved.append(error)
    else:
        argument = _argument_named(module, text)
        if argument is not None:
            raise HlodbgError(f"OP {spec!r}: {argument}, not the result of an op: name an op that uses it")
        raise HlodbgError(f"OP {spec!r}: {unresolved[0].message}; expected %N, @fn:%N, an HLO instruction name "
                          "or a line number")
    if kind == "op":  # a name defined in several regions of one function (a while's cond and body) is ambiguous
        ops = list(ops) + [o for op in ops for o in _same_name(op)]
    ops = [op for op in ops if not is_terminator(op.name)] or list(ops)
    # `stablehlo.reduce(...) applies stablehlo.add` writes its body on the op's own line: the line names the reduce.
    ops = [op for op in ops if not any(owner in ops for owner in _owners(op))]
    places: dict = {}
    for op in sorted(ops, key=_order(module)):  # clones of one HLO computation share a place: the first is explained
        places.setdefault(op.pos, op)
    if len(places) > 1:
        named = ", ".join(f"{_label(op)} = {op.name} (line {op.pos.line if op.pos else '?'})" for op in places.values())
        raise HlodbgError(f"OP {spec!r} names {len(places)} ops: {named}; name one of them by its line number")
    return next(iter(places.values()))


def _argument_named(module, text: str) -> Optional[str]:
    """`%x is argument #0 of @main` when `text` (`%x`, `x`, `@main:%x`) names an argument of a
    function or of a region (a loop's state, a reduce body's)."""
    function_name, _, name = text.rpartition(":")
    name = name if name.startswith("%") else "%" + name
    for function in module.functions.values():
        if function_name and function_name.lstrip("@") != function.sym_name:
            continue
        for i, value in enumerate(function.arguments):
            if value.name == name:
                return f"{name} is argument #{i} of @{function.sym_name}"
        for op in function.ops:
            for region in op.regions:
                for block in region.blocks:
                    for i, value in enumerate(block.arguments):
                        if value.name == name:
                            line = op.pos.line if op.pos else "?"
                            return f"{name} is argument #{i} of a region of {op.name} (line {line})"
    return None


def _same_name(op: Operation) -> list[Operation]:
    """The ops of `op`'s function whose results are named as `op`'s (regions reuse names)."""
    function = op.function
    names = {r.name for r in op.results}
    return [o for o in function.ops if o is not op and names & {r.name for r in o.results}] if function else []


def _order(module):
    position = {id(op): i for i, op in enumerate(op for f in module.functions.values() for op in f.ops)}
    return lambda op: position.get(id(op), 0)


def _label(op: Operation) -> str:
    return op.results[0].name if op.results else op.name


def parse_at(text: str, op: Operation, result: int, options: tuple[str, str] = ("--at", "--result")) -> tuple[int, ...]:
    """`1,0,2` as an element of result `result` of `op`; a clear error naming the shape otherwise,
    and the caller's names for the element and the result (`options`: the CLI's, or `at`, `result`)."""
    at, numbered = options
    if not op.results:
        raise HlodbgError(f"{at}: {op.name} has no results, so no result element to ask about")
    if not 0 <= result < len(op.results):
        raise HlodbgError(f"{numbered} {result}: {_label(op)} ({op.name}) has {len(op.results)} result(s), "
                          f"numbered 0 to {len(op.results) - 1}")
    type_ = op.results[result].type
    if not isinstance(type_, TensorType) or not type_.is_static:
        hint = ": explain the get-tuple-element that reads the part you want" if isinstance(type_, TupleType) else ""
        raise HlodbgError(f"{at}: result #{result} of {_label(op)} has type {type_}, not a tensor of static shape{hint}")
    return parse_element_index(text, type_.shape, option=at, subject=f"result #{result} of {_label(op)}",
                               type_text=str(type_))


@dataclass
class PeerValues:
    """A provenance question's `peer_values` on a grid: called with a device, the op's (operands,
    results) there; `grid` and `module` say which grid and module the devices belong to."""

    grid: object
    values: dict
    module: object = None

    def __call__(self, process):
        if process not in self.values:
            raise ProvenanceError(f"device {process} has no values of this op (it has not run it)")
        return self.values[process]


def _values(program, op: Operation, values, lang: str, *, seed: int, entry: str, focus, replicas: Optional[int],
            partitions: Optional[int], timeout: Optional[float]) -> OpValues:
    """The values of the op's first execution on device `focus` (None when it did not run, with a
    note saying why) and, on a grid, every device's (operands, results)."""
    timer = Deadline(timeout)
    try:  # a grid target records every device's whole run as it is made
        target = program.debug(values, seed=seed, entry=entry, persist=False, focus=focus,
                               replicas=replicas, partitions=partitions)
    except _TimedOut:
        timer.cancel()
        return OpValues(op, note=TIMED_OUT.say(lang, seconds=f"{timeout:g}"))
    timer.attach(target)
    try:
        try:
            target.move("run_to", op)
            session = target.session
            if session.position < len(session.trace) and session.trace.ops[session.position] is op:
                target.move("step")
        except HlodbgError as failed:
            return OpValues(op, note=RUN_FAILED.say(lang, error=_first_line(failed)))
        session = target.session
        devices = {dv.process: dv for dv in target.values_of(op)}
        mine = devices.get(target.focus)
        if mine is None or not mine.outputs:
            if timer.fired:
                return OpValues(op, note=TIMED_OUT.say(lang, seconds=f"{timeout:g}"))
            if session.error is not None:
                return OpValues(op, note=RUN_FAILED.say(lang, error=_first_line(session.error)))
            return OpValues(op, note=_why_not_run(op, target, lang))
        table = {p: one_execution(op, dv.inputs, dv.outputs) for p, dv in devices.items() if dv.outputs}
        operands, results, count = table[target.focus]
        note = [BATCHED.say(lang, count=count)] if count > 1 else []
        note += [why.say(lang, **fields) for why, fields in _repeated(op, program.module)]
        if len(devices) == 1:
            return OpValues(op, operands, results, note=note)
        focus = target.focus
        note.append(ON_DEVICE.say(lang, replica=focus.replica_id, partition=focus.partition_id, count=len(devices)))
        table = {p: (ins, outs) for p, (ins, outs, _) in table.items()}
        return OpValues(op, operands, results, target.focus, PeerValues(target.grid, table, program.module), table,
                        note=note)
    finally:
        timer.cancel()
        target.close()


class _TimedOut(KeyboardInterrupt):
    """Raised into a run that has no target to interrupt yet (a grid target records as it is made);
    a KeyboardInterrupt, so the greenlets of the grid's devices give up as they do on Ctrl-C."""


class Deadline:
    """After `seconds`: interrupts every device's run of the attached target (the runs stop before
    their next op), or raises _TimedOut into the target being made. The alarm is a signal where
    there is one (the main thread of a POSIX process), a timer thread otherwise (interrupt only)."""

    REFIRE = 0.05

    def __init__(self, seconds: Optional[float]):
        import signal
        import threading

        self.fired = False
        self._target = None
        self._signal = None
        self._timer = None
        if seconds is None:  # --timeout inf: no alarm at all
            return
        if hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread():
            self._signal = signal
            self._previous = signal.signal(signal.SIGALRM, lambda *_: self._fire(raising=True))
            # It fires again every REFIRE seconds until cancelled: a raise that lands where Python
            # cannot deliver it (a finalizer, a garbage-collector callback) is only ignored once.
            signal.setitimer(signal.ITIMER_REAL, seconds, self.REFIRE)
        else:
            self._timer = threading.Timer(seconds, self._fire)
            self._timer.daemon = True
            self._timer.start()

    def attach(self, target) -> None:
        self._target = target
        if self.fired:
            self._fire()

    def _fire(self, raising: bool = False) -> None:
        self.fired = True
        if self._target is not None:
            for session in self._target.sessions.values():
                session.interrupt()
        elif raising:
            raise _TimedOut()

    def cancel(self) -> None:
        if self._signal is not None:
            self._signal.setitimer(self._signal.ITIMER_REAL, 0)
            self._signal.signal(self._signal.SIGALRM, self._previous if self._previous is not None else self._signal.SIG_DFL)
            self._signal = None
        elif self._timer is not None:
            self._timer.cancel()


def one_execution(op: Operation, inputs, outputs) -> tuple[list, list, int]:
    """(operands, results, count): the values of one execution of `op`. A reduce's or sort's body
    is run on whole arrays at once (engine/ops/reduction.py: run_body), so an op inside it sees
    `count` executions stacked in leading dimensions; the first of them is returned."""
    count = 1

    def first(value, type_):
        nonlocal count
        if not isinstance(type_, TensorType) or not type_.is_static or not hasattr(value, "ndim"):
            return value
        extra = value.ndim - len(type_.shape)
        if extra <= 0:
            return value
        count = max(count, int(np.prod(value.shape[:extra])))
        return value[(0,) * extra]

    operands = [first(v, o.type) for v, o in zip(inputs, op.operands)] + list(inputs[len(op.operands):])
    results = [first(v, r.type) for v, r in zip(outputs, op.results)] + list(outputs[len(op.results):])
    return operands, results, count


def _repeated(op: Operation, module, seen: frozenset = frozenset()) -> list[tuple[Phrase, dict]]:
    """Why `op` may run more than once on a run (a loop around it, its function called from several
    places, at any depth of calls): the explanation then shows its first execution and says so."""
    for owner in _owners(op):
        if owner.name == "stablehlo.while":
            return [(IN_LOOP, dict(owner=owner.results[0].name.split("#")[0] if owner.results else owner.name,
                                   line=owner.pos.line if owner.pos else "?"))]
    function = op.function
    if function is None or function.sym_name in seen:
        return []
    calls = [o for f in module.functions.values() for o in f.ops
             if o.attributes.get("callee") is not None and symbol_name(o.attributes.get("callee")) == function.sym_name]
    if len(calls) > 1:
        return [(CALLED_OFTEN, dict(function=function.sym_name, count=len(calls)))]
    return _repeated(calls[0], module, seen | {function.sym_name}) if calls else []


def _why_not_run(op: Operation, target, lang: str) -> str:
    """Why a run that ended (without an error) has no values of `op`."""
    owner = next(_owners(op), None)
    if owner is None:
        return NOT_REACHED.say(lang)
    where = dict(owner=owner.name, line=owner.pos.line if owner.pos else "?")
    if not any(dv.outputs for dv in target.values_of(owner)):
        return OWNER_NOT_REACHED.say(lang, **where)
    definition = lookup(owner.name)
    if definition is not None and definition.family == "control_flow":
        return NOT_ENTERED.say(lang, **where)  # a loop of no iteration, a branch not taken
    return IN_BODY.say(lang, **where)


def _owners(op: Operation):
    """The ops whose regions hold `op` (a reduce's body, a while's), innermost first; not its function."""
    owner = op.parent_op
    while owner is not None and not isinstance(owner, Function):
        yield owner
        owner = owner.parent_op


def _first_line(error: BaseException) -> str:
    return (str(error).strip().splitlines() or [type(error).__name__])[0]
