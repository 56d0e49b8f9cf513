"""Value overlays: colour graph nodes by what a run computed (NaN/Inf, magnitude, divergence).

An Overlay is plain data for renderers: a fill per node, a short badge per node, extra tooltip
lines and a legend. Builders here turn a session's per-op statistics into one.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from hlodbg.engine.ir.opset import has_expandable_body


@dataclass
class LegendEntry:
    label: str
    fill: str


@dataclass
class Overlay:
    title: str  # the legend's heading, e.g. "NaN / Inf"
    fills: dict[str, str] = field(default_factory=dict)  # node id -> fill colour
    badges: dict[str, str] = field(default_factory=dict)  # node id -> short text, e.g. "NaN 3/64"
    tooltips: dict[str, list[str]] = field(default_factory=dict)  # node id -> extra tooltip lines
    legend: list[LegendEntry] = field(default_factory=list)


__all__ = ["LegendEntry", "Overlay"]


# --- builders --------------------------------------------------------------------------------
# Severity orders what a collapsed node shows: the worst of the ops inside it.
NOT_RUN = "#f2f2f2"
FINITE = "#dcefdc"
INF = "#ffc97a"
NAN = "#ff9c9c"
FIRST_BAD = "#e8504a"
RAMP = ("#f7fbff", "#deebf7", "#c6dbef", "#9ecae1", "#74b3d8", "#5a9fd0", "#fdd0a2", "#fdae6b")
DIVERGENCE = (("identical", "#dcefdc"), ("< 1e-6", "#eef6d5"), ("< 1e-3", "#fff0b3"), ("< 1e-1", "#ffc97a"), ("≥ 1e-1", "#ff9c9c"))


@dataclass
class _Mark:
    severity: float
    fill: str
    badge: str = ""


def _apply(view, marks: dict, tooltips: dict, overlay: Overlay) -> Overlay:
    """Marks per op -> fills/badges per node of the view; collapsed nodes take their worst op."""
    for node, data in view.graph.nodes(data=True):
        if data["kind"] == "collapsed" or data.get("collapsed"):
            members = [view.base.graph.nodes[n].get("op") for n in view.base.cluster_nodes(data["collapsed"])]
            found = [marks[id(op)] for op in members if op is not None and id(op) in marks]
            if not found:
                continue
            mark = max(found, key=lambda m: m.severity)
        else:
            # An op node, or an argument node (marked by its value, e.g. by the padding overlay).
            owner = data.get("op") if data.get("op") is not None else data.get("value")
            if owner is None or id(owner) not in marks:
                continue
            mark = marks[id(owner)]
            if id(owner) in tooltips:
                overlay.tooltips[node] = tooltips[id(owner)]
        overlay.fills[node] = mark.fill
        if mark.badge:
            overlay.badges[node] = mark.badge
    return overlay


def _summary_lines(summaries) -> list[str]:
    if len(summaries) == 1:
        return ["value: " + summaries[0].describe()]
    return [f"result {k}: {s.describe()}" for k, s in enumerate(summaries)]


def nan_overlay(view, statistics: dict) -> Overlay:
    """Red where an op's last value holds NaN, orange for ±Inf only, darkest red for the first op
    (in execution order) that produced either; grey for ops the run did not reach.

    `statistics` is `session.op_statistics()`: op -> OpStatistics."""
    marks: dict[int, _Mark] = {}
    tooltips: dict[int, list[str]] = {}
    for op, stats in statistics.items():
        summaries = stats.summaries
        nan = sum(_count(s, "nan") for s in summaries)
        inf = sum(_count(s, "posinf") + _count(s, "neginf") for s in summaries)
        size = sum(_size(s) for s in summaries)
        tooltips[id(op)] = _summary_lines(summaries) + [f"ran {stats.count} time(s)"]
        if nan:
            marks[id(op)] = _Mark(3, NAN, f"NaN {nan}/{size}")
        elif inf:
            marks[id(op)] = _Mark(2, INF, f"Inf {inf}/{size}")
        else:
            marks[id(op)] = _Mark(1, FINITE)
    if any(mark.severity > 1 for mark in marks.values()):
        first = _first_nonfinite(statistics)
        if first is not None:
            event, op = first
            mark = marks[id(op)]
            marks[id(op)] = _Mark(4, FIRST_BAD, "first " + (mark.badge or "non-finite"))
            tooltips[id(op)] = [f"first non-finite value of the run (event {event})", *tooltips[id(op)]]
    _mark_not_run(view, marks)
    legend = [LegendEntry("first NaN/Inf", FIRST_BAD), LegendEntry("NaN", NAN), LegendEntry("±Inf, no NaN", INF), LegendEntry("finite", FINITE), LegendEntry("not run", NOT_RUN)]
    return _apply(view, marks, tooltips, Overlay("NaN / Inf", legend=legend))


def _first_nonfinite(statistics: dict):
    """(event, op) of the first op run, in order of completion, whose value held NaN or Inf (a loop
    finishes after the op inside it that went bad)."""
    run = next(iter(statistics.values()))  # every op's statistics read the same run
    events = [run.event(e) for stats in statistics.values() for e in stats.events]
    for event in sorted(events, key=lambda ev: ev.completion_key):
        e = event.id
        if any(not run.summary(e, k).finite for k in range(len(event.outputs))):
            return e, event.op
    return None


def range_overlay(view, statistics: dict) -> Overlay:
    """Colour by the largest finite magnitude of an op's last value, one shade per decade seen."""
    magnitudes: dict[int, float] = {}
    tooltips: dict[int, list[str]] = {}
    for op, stats in statistics.items():
        summaries = stats.summaries
        tooltips[id(op)] = _summary_lines(summaries) + [f"ran {stats.count} time(s)"]
        largest = _largest(summaries)
        if largest is not None:
            magnitudes[id(op)] = largest
    marks: dict[int, _Mark] = {}
    legend: list[LegendEntry] = []
    zero_fill, shades_ramp = RAMP[0], RAMP[1:]
    if any(v == 0 for v in magnitudes.values()):
        legend.append(LegendEntry("all zero", zero_fill))
    decades = {k: _decade(v) for k, v in magnitudes.items() if v > 0}
    if decades:
        low, high = min(decades.values()), max(decades.values())
        step = max(1, -(-(high - low + 1) // len(shades_ramp)))
        for d in range(low, high + 1, step):
            fill = shades_ramp[(d - low) // step]
            legend.append(LegendEntry(f"1e{d} … 1e{min(high, d + step - 1) + 1}", fill))
    for k, v in magnitudes.items():
        if v == 0:
            marks[k] = _Mark(1, zero_fill, "|x|=0")
        else:
            d = decades[k]
            marks[k] = _Mark(2 + d - low, shades_ramp[(d - low) // step], f"|x|≤{v:.2g}")
    _mark_not_run(view, marks)
    legend.append(LegendEntry("not run / no numbers", NOT_RUN))
    return _apply(view, marks, tooltips, Overlay("max |value| (last run)", legend=legend))


def _decade(value: float) -> int:
    import math

    return math.floor(math.log10(value))


def _largest(summaries) -> "float | None":
    best = None
    for s in summaries:
        if s.kind == "tuple":
            inner = _largest(s.elements)
            best = inner if best is None or (inner is not None and inner > best) else best
            continue
        for number in (s.min, s.max):
            if number is None or isinstance(number, bool):
                continue
            magnitude = abs(float(number))
            best = magnitude if best is None or magnitude > best else best
    return best


def _count(summary, field_name: str) -> int:
    if summary.kind == "tuple":
        return sum(_count(s, field_name) for s in summary.elements)
    return getattr(summary, field_name)


def _size(summary) -> int:
    if summary.kind == "tuple":
        return sum(_size(s) for s in summary.elements)
    return summary.size


def _mark_not_run(view, marks: dict) -> None:
    """Grey for ops the run never reached. A reducer body (reduce, sort, scatter ...) that ran
    as one vectorised numpy call has no runs of its own but did run: it stays uncoloured."""
    for _, data in view.graph.nodes(data=True):
        op = data.get("op")
        if data["kind"] != "op" or op is None or not op.results or id(op) in marks:
            continue
        owner = op.parent_op
        if owner is not None and has_expandable_body(owner.name) and id(owner) in marks and marks[id(owner)].fill != NOT_RUN:
            continue
        marks[id(op)] = _Mark(0, NOT_RUN)


def divergence_overlay(view, session, reference) -> Overlay:
    """Colour by how far each op's last value in `session` is from the same op's in `reference`
    (max |a - b| / max |b|): where two runs (other inputs, other numerics) part ways."""
    import numpy as np

    from hlodbg.engine.ir.dtypes import widen

    ours = session.op_statistics()
    theirs = reference.op_statistics()
    marks: dict[int, _Mark] = {}
    tooltips: dict[int, list[str]] = {}
    for op, stats in ours.items():
        other = theirs.get(op)
        if other is None:
            continue
        a_values = session.event(stats.last).outputs
        b_values = reference.event(other.last).outputs
        worst = 0.0
        for a, b in zip(a_values, b_values):
            if not isinstance(a, np.ndarray) or not isinstance(b, np.ndarray) or a.shape != b.shape:
                continue
            a64 = widen(a).astype(np.complex128 if np.iscomplexobj(widen(a)) else np.float64)
            b64 = widen(b).astype(a64.dtype)
            both_nan = np.isnan(a64) & np.isnan(b64)
            diff = np.where(both_nan, 0.0, np.abs(a64 - b64))
            diff = np.where(np.isnan(diff) | np.isinf(diff), np.inf, diff)
            scale = float(np.max(np.abs(b64[np.isfinite(b64)]), initial=0.0))
            top = float(np.max(diff, initial=0.0))
            worst = max(worst, top / scale if scale > 0 else (0.0 if top == 0 else np.inf))
        marks[id(op)] = _divergence_mark(worst)
        tooltips[id(op)] = [f"relative difference: {worst:.3g}", "this run: " + "; ".join(s.describe() for s in stats.summaries), "reference: " + "; ".join(s.describe() for s in other.summaries)]
    _mark_not_run(view, marks)
    legend = [LegendEntry(label, fill) for label, fill in DIVERGENCE] + [LegendEntry("not run", NOT_RUN)]
    return _apply(view, marks, tooltips, Overlay("relative difference vs reference", legend=legend))


def _divergence_mark(worst: float) -> _Mark:
    """The DIVERGENCE shade of a relative difference, with its badge."""
    level = 0 if worst == 0 else 1 if worst < 1e-6 else 2 if worst < 1e-3 else 3 if worst < 1e-1 else 4
    return _Mark(level + 1, DIVERGENCE[level][1], f"Δ{worst:.1e}" if worst else "")


def target_divergence_overlay(view, report) -> Overlay:
    """Colour by each op's largest relative divergence between two targets over all its runs
    (engine/debug/divergence.py's DiffReport: the engine compares, this only draws); the first
    op instance beyond the tolerance is marked as such."""
    marks: dict[int, _Mark] = {}
    tooltips: dict[int, list[str]] = {}
    pair = f"{report.target} vs {report.against}"
    for op, tally in report.ops.items():
        marks[id(op)] = _divergence_mark(tally.max_rel)
        tooltips[id(op)] = [f"{pair}: max rel {tally.max_rel:.3g}, max abs {tally.max_abs:.3g}",
                            f"beyond tolerance in {tally.diverged} of {tally.runs} run(s)"]
    first = report.first
    if first is not None:
        op = first.place.op
        marks[id(op)] = _Mark(len(DIVERGENCE) + 1, FIRST_BAD, "first " + (marks[id(op)].badge or "divergence"))
        tooltips[id(op)] = [f"first divergence of the run (event {first.place.event}, run {first.place.instance})",
                            *first.notes, *tooltips[id(op)]]
    _mark_not_run(view, marks)
    legend = [LegendEntry("first divergence", FIRST_BAD)] + [LegendEntry(label, fill) for label, fill in DIVERGENCE]
    legend.append(LegendEntry("not run / not compared", NOT_RUN))
    return _apply(view, marks, tooltips, Overlay(f"max relative divergence, {pair}", legend=legend))

PADDING = (("1x: no padding", "#dcefdc", 1.0), ("< 1.5x", "#eef6d5", 1.5), ("< 2x", "#fff0b3", 2.0),
           ("< 4x", "#ffc97a", 4.0), ("< 16x", "#ff9c9c", 16.0), ("≥ 16x", "#e8504a", float("inf")))


def padding_level(waste: float) -> int:
    """The PADDING row of a waste factor (physical / logical bytes)."""
    if waste <= 1.0:
        return 0
    return next(level for level, (_, _, below) in enumerate(PADDING) if level and waste < below)


def op_padding(op, backend) -> "tuple[int, int, list[str]] | None":
    """(logical, physical bytes, a line per result) of `op`'s static tensor results on `backend`
    (prepared for the op's module), or None when it has none."""
    return _buffers_padding(op.results, backend)


def _buffers_padding(values, backend) -> "tuple[int, int, list[str]] | None":
    from hlodbg.engine.ir.types import TensorType

    logical = physical = 0
    lines = []
    for result in values:
        type_ = result.type
        if not isinstance(type_, TensorType) or not type_.is_static:
            continue
        low, high = backend.buffer_bytes(result)
        logical, physical = logical + low, physical + high
        assigned = backend.layout_for(result)
        layout = f" {assigned.layout} ({assigned.source})" if assigned is not None else ""
        lines.append(f"{result.name or 'result'}: {type_}{layout}: {low:,} B logical, {high:,} B physical")
    return (logical, physical, lines) if lines else None


def padding_marks(module, backend) -> dict:
    """op or function argument -> (level, fill, badge, tooltip lines): how much the layouts of its
    results pad them on `backend` (the CPU never pads: every op is 1x). Ops of a reducer body
    (reduce, sort, scatter...) are left out: they combine elements, they hold no device buffers.
    Shared by the SVG overlay and the terminal's."""
    from hlodbg.engine.ir.core import Function
    from hlodbg.engine.ir.opset import has_expandable_body

    backend.prepare(module)
    marks = {}
    for op in module.walk():
        owner = op.parent_op
        if owner is not None and has_expandable_body(owner.name):
            continue
        for argument in _argument_buffers(op):
            found = _buffers_padding([argument], backend)
            if found is not None:
                marks[argument] = _padding_mark(found, backend)
        if isinstance(op, Function):
            continue
        found = op_padding(op, backend)
        if found is not None:
            marks[op] = _padding_mark(found, backend)
    return marks


def _argument_buffers(op) -> list:
    """The region arguments of `op` that are buffers of their own: a function's, and those of a
    body that gets new values (a manual_computation's local shards); not the arguments of loop and
    branch regions (their operands' or carried buffers) nor those of a reducer body."""
    from hlodbg.engine.ir.core import Function
    from hlodbg.engine.ir.opset import has_aliasing_regions, has_expandable_body

    if not isinstance(op, Function) and (has_aliasing_regions(op.name) or has_expandable_body(op.name)):
        return []
    return [argument for region in op.regions for block in region.blocks for argument in block.arguments]


def _padding_mark(found, backend) -> tuple:
    logical, physical, lines = found
    waste = physical / logical if logical else 1.0
    level = padding_level(waste)
    badge = f"×{waste:.1f}" if level else ""
    return level, PADDING[level][1], badge, [f"padding waste {waste:.2f}x on {backend.describe()}", *lines]


def padding_overlay(view, backend) -> Overlay:
    """Colour each op (and function argument) by the waste factor of its buffers on `backend`
    (physical bytes in their layouts / logical bytes): where a TPU's tiles pad an array (an
    f32[N,3] to [N,128]: 43x)."""
    marks: dict[int, _Mark] = {}
    tooltips: dict[int, list[str]] = {}
    for owner, (level, fill, badge, lines) in padding_marks(view.module, backend).items():
        marks[id(owner)] = _Mark(level + 1, fill, badge)
        tooltips[id(owner)] = lines
    legend = [LegendEntry(label, fill) for label, fill, _ in PADDING]
    return _apply(view, marks, tooltips, Overlay(f"padding waste on {backend.describe()} (physical / logical bytes)", legend=legend))


def summary_tooltips(view, statistics: dict) -> Overlay:
    """No colours: value summaries in the tooltips only (`--values` without `--overlay`)."""
    tooltips = {id(op): _summary_lines(stats.summaries) + [f"ran {stats.count} time(s)"] for op, stats in statistics.items()}
    overlay = Overlay("values")
    for node, data in view.graph.nodes(data=True):
        op = data.get("op")
        if op is not None and id(op) in tooltips and data["kind"] != "collapsed":
            overlay.tooltips[node] = tooltips[id(op)]
    return overlay


__all__ += ["nan_overlay", "range_overlay", "divergence_overlay", "target_divergence_overlay", "padding_marks",
            "padding_overlay", "summary_tooltips"]
