"""Where a run's time goes: wall time per op kind and per op, and the run's peak memory.

How it times: a timing listener on the run users run, the interpreter's plain loop (fused groups,
values freed at their last use; its compiled form aside, whose steps cannot be told apart), told
of every step of every block, region bodies and called functions included; where a run is
observed anyway (a backend keeping values in a form of its own, a TPU's), of every event of the
observed loop instead. One clock is shared by every listener of a run; each event (a step or op
starting, finishing, a block returning) reads it once and charges the time since the previous
event to one place:
  - an op finishing: to that op (its own work: the evaluator, plus the timing's own bookkeeping);
  - an op starting or a block returning: to the op whose region or callee is running (a while's
    own share is its loop machinery between the ops of its body), or, at the top, to the run's
    time outside ops (the step loop, frames, argument checks).
So the op times and the outside time partition the run exactly: the shares sum to the run, and an
op holding a region (while, call, reduce with a body) counts only its own time, never its body's.
On a grid the devices run one at a time on this machine (engine/run/grid.py), so the same rule
charges each interval to the device whose event ends it, and the figures are summed over the
devices (a collective's time is its own completion work; the waiting is other devices' ops).
A fused group of elementwise ops (engine/run/fusion.py) is one step: its time is shared evenly by
its ops, each counted once.

Peak memory is measured apart, on a plain run under tracemalloc (which sees numpy's allocations):
the most bytes allocated at once during the run, on top of what existed before (the arguments).
On `xla:*` targets it is the host's side only (device memory is XLA's).
"""
from __future__ import annotations

import time
import tracemalloc
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Optional

import numpy as np

from ..ir.core import Operation
from ..machine.memory import format_bytes
from .interpreter import Listener

PROFILE_SCHEMA = 1  # the `profile` object of `hlodbg run --profile --json`; bump when a field changes meaning


class _Clock:
    """The one clock every listener of a run reads: the time of the last event, and the time
    charged outside ops."""

    __slots__ = ("last", "last_by", "started", "stopped")

    def __init__(self) -> None:
        self.last = self.started = self.stopped = 0.0
        self.last_by: Optional["TimingListener"] = None  # the listener of the last event


class TimingListener(Listener):
    """Times the ops of one process (see the module docstring for the rule)."""

    def __init__(self, clock: _Clock, device: Any = None):
        self.clock = clock
        self.device = device
        self.open: list[Operation] = []  # ops started and not finished, innermost last
        self.times: dict[Operation, list] = {}  # op -> [times finished, seconds]
        self.outside = 0.0  # this device's share of the time outside ops

    def _charge_enclosing(self, seconds: float) -> None:
        if self.open:
            entry = self.times.get(self.open[-1])
            if entry is None:
                entry = self.times[self.open[-1]] = [0, 0.0]
            entry[1] += seconds
        else:
            self.outside += seconds

    times_steps = True

    def step_started(self, step) -> None:
        self._started(step.op)

    def step_finished(self, step) -> None:
        members = getattr(step, "members", None)
        self._finished([member.op for member in members] if members else [step.op])

    def before_op(self, event, frame, op, operands) -> None:
        self._started(op)

    def after_op(self, event, frame, op, operands, results) -> None:
        self._finished([op])

    def _started(self, op) -> None:
        clock = self.clock
        t = time.perf_counter()
        self._charge_enclosing(t - clock.last)
        clock.last = t
        clock.last_by = self
        self.open.append(op)

    def _finished(self, ops: list) -> None:
        """The op (or fused ops) that started last is done: its time, shared evenly."""
        clock = self.clock
        t = time.perf_counter()
        self.open.pop()
        share = (t - clock.last) / len(ops)
        for op in ops:
            entry = self.times.get(op)
            if entry is None:
                entry = self.times[op] = [0, 0.0]
            entry[0] += 1
            entry[1] += share
        clock.last = t
        clock.last_by = self

    def returning(self, event, frame, op, values) -> None:
        clock = self.clock
        t = time.perf_counter()
        self._charge_enclosing(t - clock.last)
        clock.last = t
        clock.last_by = self


@dataclass
class KindTime:
    kind: str  # the op's name, `stablehlo.dot_general`
    count: int  # times ops of this kind ran (summed over devices)
    seconds: float
    share: float  # of the run


@dataclass
class OpTime:
    op: Operation
    count: int
    seconds: float
    share: float

    @property
    def location(self) -> str:
        pos = self.op.pos
        return f"{pos.filename}:{pos.line}:{pos.col}" if pos is not None else ""

    def describe(self) -> str:
        names = ", ".join(v.name for v in self.op.results)
        return f"{names} = {self.op.name}" if names else self.op.name


@dataclass
class MemoryPeak:
    peak_bytes: int  # most bytes allocated at once during a plain run, beyond what existed before it
    arguments_bytes: int
    results_bytes: int
    measured_by: str = "tracemalloc"

    @property
    def beyond_results(self) -> int:
        return max(0, self.peak_bytes - self.results_bytes)


@dataclass
class RunProfile:
    run_seconds: float  # wall time of the profiled run
    outside_seconds: float  # of it, outside every op
    kinds: list[KindTime]  # every kind, most time first
    ops: list[OpTime]  # every op, most time first
    devices: int = 1  # figures summed over this many devices
    memory: Optional[MemoryPeak] = None
    per_device_seconds: dict = field(default_factory=dict)  # device -> its charged seconds
    plain_run_seconds: Optional[float] = None  # the same run without timing, when measured

    @property
    def ops_executed(self) -> int:
        return sum(k.count for k in self.kinds)

    def to_json(self, top: int = 10) -> dict:
        """The stable schema of `hlodbg run --profile --json` (PROFILE_SCHEMA)."""
        memory = None
        if self.memory is not None:
            m = self.memory
            memory = {"peak_bytes": m.peak_bytes, "peak_beyond_results_bytes": m.beyond_results,
                      "arguments_bytes": m.arguments_bytes, "results_bytes": m.results_bytes,
                      "measured_by": m.measured_by}
        return {
            "schema": PROFILE_SCHEMA,
            "timing": "plain loop with a timing listener (a fused group's time shared by its ops); a run after a plain one",
            "run_seconds": self.run_seconds,
            "outside_ops_seconds": self.outside_seconds,
            "outside_ops_share": _share(self.outside_seconds, self.run_seconds),
            "plain_run_seconds": self.plain_run_seconds,
            "ops_executed": self.ops_executed,
            "devices": self.devices,
            "summed_over_devices": self.devices > 1,
            "device_seconds": [{"device": _device_name(d), "seconds": s} for d, s in self.per_device_seconds.items()],
            "kinds": [{"kind": k.kind, "count": k.count, "seconds": k.seconds, "share": k.share} for k in self.kinds],
            "top_ops": [{"op": o.op.name, "results": [v.name for v in o.op.results], "location": o.location,
                         "line": o.op.pos.line if o.op.pos is not None else None,
                         "count": o.count, "seconds": o.seconds, "share": o.share} for o in self.ops[:top]],
            "memory": memory,
        }


class Profiler:
    """Times one run: `listener()` for each process's interpreter, the run between `start()` and
    `stop()`, then `profile()`."""

    def __init__(self) -> None:
        self.clock = _Clock()
        self.listeners: list[TimingListener] = []

    def listener(self, device: Any = None) -> TimingListener:
        listener = TimingListener(self.clock, device)
        self.listeners.append(listener)
        return listener

    def start(self) -> None:
        self.clock.last = self.clock.started = time.perf_counter()

    def stop(self) -> None:
        t = self.clock.stopped = time.perf_counter()
        # The time after the last event: outside ops, on the device whose event was last.
        last = self.clock.last_by or (self.listeners[-1] if self.listeners else None)
        if last is not None:
            last.outside += t - self.clock.last
        self.clock.last = t

    def profile(self, memory: Optional[MemoryPeak] = None) -> RunProfile:
        total = self.clock.stopped - self.clock.started
        op_times: dict[Operation, list] = {}
        for listener in self.listeners:
            for op, (count, seconds) in listener.times.items():
                entry = op_times.setdefault(op, [0, 0.0])
                entry[0] += count
                entry[1] += seconds
        kinds: dict[str, list] = {}
        for op, (count, seconds) in op_times.items():
            entry = kinds.setdefault(op.name, [0, 0.0])
            entry[0] += count
            entry[1] += seconds
        outside = sum(listener.outside for listener in self.listeners) if self.listeners else total
        return RunProfile(
            run_seconds=total,
            outside_seconds=outside,
            kinds=sorted((KindTime(k, c, s, _share(s, total)) for k, (c, s) in kinds.items()), key=lambda k: -k.seconds),
            ops=sorted((OpTime(op, c, s, _share(s, total)) for op, (c, s) in op_times.items()), key=lambda o: -o.seconds),
            devices=max(1, len(self.listeners)),
            memory=memory,
            per_device_seconds={l.device: l.outside + sum(s for _, s in l.times.values()) for l in self.listeners},
        )


def _device_name(device: Any) -> str:
    """`r,p` for a ProcessId, as --device and the grid's results name devices."""
    if hasattr(device, "replica_id"):
        return f"{device.replica_id},{device.partition_id}"
    return str(device)


def _share(seconds: float, total: float) -> float:
    return seconds / total if total > 0 else 0.0


def array_bytes(values: Iterable[Any]) -> int:
    """Bytes of the arrays in `values` (nested lists and tuples of arrays, a {device: results} dict)."""
    total = 0
    for value in values.values() if isinstance(values, dict) else values:
        if isinstance(value, (list, tuple, dict)):
            total += array_bytes(value)
        elif isinstance(value, np.ndarray):
            total += value.nbytes
        elif hasattr(value, "nbytes"):
            total += int(value.nbytes)
    return total


def peak_memory(run: Callable[[], Any], arguments: Iterable[Any]) -> tuple[Any, MemoryPeak]:
    """(what `run()` returns, its peak) measured by tracemalloc: the most bytes allocated at once
    during the run beyond those allocated before it. Tracing slows allocation: time runs apart."""
    started_here = not tracemalloc.is_tracing()
    if started_here:
        tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        results = run()
        peak = tracemalloc.get_traced_memory()[1] - before
    finally:
        if started_here:
            tracemalloc.stop()
    return results, MemoryPeak(max(0, peak), array_bytes(arguments), array_bytes(results))


def format_profile(profile: RunProfile, top_kinds: int = 12, top_ops: int = 10) -> list[str]:
    """The lines `hlodbg run --profile` prints after the results."""
    total = profile.run_seconds
    where = f", summed over {profile.devices} devices" if profile.devices > 1 else ""
    plain = f"; untimed, a plain run takes {_ms(profile.plain_run_seconds)}" if profile.plain_run_seconds else ""
    lines = [f"profile: {_ms(total)} in {profile.ops_executed:,} op runs (a warm plain run, every step timed{where}{plain})"]
    lines.append(f"  {'op kind':<34}{'count':>9}{'time':>12}{'share':>8}")
    shown = profile.kinds[:top_kinds]
    for k in shown:
        lines.append(f"  {k.kind:<34}{k.count:>9,}{_ms(k.seconds):>12}{_pct(k.share):>8}")
    rest = profile.kinds[top_kinds:]
    if rest:
        seconds = sum(k.seconds for k in rest)
        lines.append(f"  {f'{len(rest)} other kinds':<34}{sum(k.count for k in rest):>9,}{_ms(seconds):>12}"
                     f"{_pct(_share(seconds, total)):>8}")
    lines.append(f"  {'outside ops (loop, frames, timing)':<34}{'':>9}{_ms(profile.outside_seconds):>12}"
                 f"{_pct(_share(profile.outside_seconds, total)):>8}")
    if profile.ops:
        shown_ops = profile.ops[:top_ops]
        described = [o.describe()[:48] for o in shown_ops]
        width = max(len(text) for text in described)
        place = max(len(o.location) for o in shown_ops)
        lines.append(f"  {'top ops':<{width}}  {'location':<{place}}{'count':>7}{'time':>11}{'share':>8}")
        for o, text in zip(shown_ops, described):
            lines.append(f"  {text:<{width}}  {o.location:<{place}}{o.count:>7,}{_ms(o.seconds):>11}{_pct(o.share):>8}")
    m = profile.memory
    if m is not None:
        lines.append(f"memory: a plain run allocated at most {format_bytes(m.peak_bytes)} at once ({m.measured_by}; "
                     f"{format_bytes(m.beyond_results)} beyond its results of {format_bytes(m.results_bytes)}), "
                     f"beside arguments of {format_bytes(m.arguments_bytes)}")
    return lines


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.2f} ms" if seconds < 10 else f"{seconds:.2f} s"


def _pct(share: float) -> str:
    return f"{share * 100:.1f}%"
