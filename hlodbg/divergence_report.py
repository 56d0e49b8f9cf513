"""How the command line shows a comparison of two targets (engine/debug/divergence.py): the text
and JSON of `hlodbg diff`, the stop of `hlodbg run --break-on diverge`, and the --against option
and backends they share with `open` and `export`."""
from __future__ import annotations

from typing import Optional

EXIT_BREAK = 3  # as every --break-on stop (cli_session.EXIT_BREAK)


def add_against_option(cmd) -> None:
    """--against for `run`/`open`/`serve`: the target `--break-on diverge` compares with."""
    cmd.add_argument("--against", metavar="TARGET", help="with --break-on diverge: the target the run is compared "
                     "with (default: cpu for a TPU target, tpu-v5e for the CPU)")


def backends(args, default_against: Optional[str] = None):
    """(target backend, against backend) the command line names; --against defaults by target.
    The options that shape a TPU (--layout, --allow-f64) go to each side whose target takes them
    (its registry entry): `diff PROG --against tpu-v5e --allow-f64` compares the CPU with a TPU
    emulating f64. --per-op-rounding stays with --target."""
    from hlodbg.cli_target import TPU_ONLY_OPTIONS, check_target_options, target_options
    from hlodbg.engine.debug.divergence import default_against as fallback
    from hlodbg.engine.machine.targets import DEFAULT_TARGET, backend_for, find_target

    options = target_options(args)
    target = find_target(getattr(args, "target", None) or DEFAULT_TARGET)
    against = find_target(getattr(args, "against", None) or default_against or fallback(target.backend()))
    to_against = {key: value for key, value in options.items() if key in TPU_ONLY_OPTIONS and key in against.options}
    # The target takes the rest, and a shaping option neither side takes (refused as the target's).
    to_target = {key: value for key, value in options.items() if key in target.options or key not in to_against}
    check_target_options(target.name, to_target)
    return backend_for(target.name, **to_target), backend_for(against.name, **to_against)


# -- text -------------------------------------------------------------------------------------------
def report_text(report, program_name: str) -> str:
    from hlodbg.engine.debug.difference import tolerance_text

    lines = []
    if report.first is not None:
        lines += divergence_lines(report.first, report, program_name, f"first divergence: {_at(report.first.place)}")
    others = [found for found in report.first_by_device.values() if found is not report.first]
    if others:
        lines.append("first divergence on the other devices:")
        for found in others:
            lines.append(f"  {_at(found.place)}: {_one_line(found)}")
    devices = f" on each of {report.devices} devices" if report.devices > 1 else ""
    summary = (f"summary: {report.compared} op instance(s) of {len(report.ops)} op(s) compared between {report.target} "
               f"and {report.against}{devices} ({tolerance_text(report.rtol, report.atol)}); ")
    if report.diverged:
        summary += f"{report.diverged} diverged ({report.diverged_ops} op(s))"
    else:
        summary += "none diverged"
    lines.append(summary)
    worst = report.worst
    if worst is not None and worst is not report.first:
        lines.append(f"worst: {_at(worst.place)}, {_one_line(worst)}")
    elif worst is not None:
        lines.append("worst: the first divergence is also the largest")
    if report.parted:
        lines.append(report.parted)
    return "\n".join(lines)


def _at(place) -> str:
    """`event 12` or `event 12 on device 3 (replica 1, partition 1)`."""
    device = place.describe_device()
    return f"event {place.event}" + (f" on {device}" if device else "")


def _one_line(found) -> str:
    place = found.place
    at = f" at line {place.line}" if place.line is not None else ""
    return f"{place.label}{at} in {place.describe_frames()}: {found.total.describe()}"


def divergence_lines(found, report, program_name: str, head: str) -> list[str]:
    """The op, its places, its results on both targets and how far apart, its operands, why."""
    place = found.place
    op = place.op
    run = f" (run {place.instance})" if place.instance > 1 else ""
    lines = [f"{head}: {place.label}{run}"]
    if op.pos is not None:
        lines.append(f"  at {program_name}:{op.pos.line}:{op.pos.col}")
    if place.producer:
        lines.append(f"  producer: {place.producer}")
    lines.append(f"  in: {place.describe_frames()}")
    width = max(len(report.target), len(report.against)) + 1
    for value, difference, ours, theirs in zip(op.results, found.results, found.target_summaries, found.against_summaries):
        lines.append(f"  result {value.name}: {difference.describe()}")
        lines.append(f"    {report.target + ':':<{width}} {_summary_text(ours)}")
        lines.append(f"    {report.against + ':':<{width}} {_summary_text(theirs)}")
    lines.append(f"  operands (on {report.target}; then how far {report.against}'s were from them):")
    if not op.operands:
        lines.append("    (none)")
    for value, difference, summary in zip(op.operands, found.operands, found.operand_summaries):
        lines.append(f"    {value.name}: {_summary_text(summary)} — {difference.describe()}")
    lines.append("  " + verdict(found))
    notes = found.notes or [f"neither {report.target} nor {report.against} notes how it computes {op.name} differently"]
    for note in notes:
        lines.append(f"  why: {note}")
    return lines


def verdict(found) -> str:
    if not found.operands_agree:
        return "operands already differ beyond the tolerance: the divergence starts upstream of this op"
    if found.collective:
        return ("operands agree on this device, but this collective also reads the other devices' values: "
                "the divergence may come from one of them (see their first divergences)")
    if found.operands_identical:
        return "operands agree (identical): this op is where the targets part"
    return "operands agree within the tolerance: this op is where the targets part"


def _summary_text(summary) -> str:
    if summary is None:
        return "(no summary)"
    return f"{'finite' if summary.finite else 'NOT finite'}: {summary.describe()}"


# -- JSON -------------------------------------------------------------------------------------------
def report_json(report) -> dict:
    """The comparison as data (schema in the README): counts, the first and the worst divergence."""
    return {
        "target": report.target, "against": report.against, "rtol": report.rtol, "atol": report.atol,
        "tolerance": "xla" if report.rtol is None else "elementwise",
        "compared": report.compared, "ops": len(report.ops), "diverged": report.diverged,
        "diverged_ops": report.diverged_ops, "finished": report.finished, "parted": report.parted or None,
        "devices": report.devices, "first": divergence_json(report.first), "worst": divergence_json(report.worst),
        "first_by_device": [divergence_json(found) for found in report.first_by_device.values()],
    }


def divergence_json(found) -> Optional[dict]:
    if found is None:
        return None
    place, op = found.place, found.place.op
    total = found.total
    data = {
        "device": place.device, "replica": place.process.replica_id, "partition": place.process.partition_id,
        "op": op.name, "label": place.label, "event": place.event, "instance": place.instance,
        "line": op.pos.line if op.pos is not None else None, "column": op.pos.col if op.pos is not None else None,
        "producer": place.producer, "frames": place.describe_frames(),
        **total.to_json(),
        "results": [{"name": value.name, "difference": d.to_json(), "target": _summary_json(a), "against": _summary_json(b)}
                    for value, d, a, b in zip(op.results, found.results, found.target_summaries, found.against_summaries)],
        "collective": found.collective, "notes": list(found.notes),
    }
    if found.operands is not None:
        data["operands"] = [{"name": value.name, "difference": d.to_json(), "target": _summary_json(summary)}
                            for value, d, summary in zip(op.operands, found.operands, found.operand_summaries)]
        data["operands_agree"] = found.operands_agree
    return data


def _summary_json(summary) -> Optional[dict]:
    return summary.to_json() if summary is not None else None


# -- hlodbg run --break-on diverge --------------------------------------------------------------------
def run_to_divergence(program, entry: str, values: list, spec: str, args, grid: tuple = (1, 1), target=None):
    """`hlodbg run --break-on diverge`: (exit status, the target run's results, what it printed).
    Both runs go in lockstep, unrecorded, on one process or every device of `grid`, and stop at
    the first divergence, reported as every --break-on stop is (exit 3). `target`: the backend
    of the first run instead of --target's (a capture's)."""
    from hlodbg.engine.debug.breakpoints import BreakpointError
    from hlodbg.engine.debug.divergence import compare_runs, parse_diverge_spec

    try:
        wanted = parse_diverge_spec(spec)
    except BreakpointError as e:
        raise e.about("--break-on") from None
    if target is not None:  # a capture's values against the emulator
        from hlodbg.cli_replay import emulator_backend

        against = emulator_backend(args, wanted.against)
    else:
        target, against = backends(args, wanted.against)
    rtol, atol = wanted.tolerances(target, against)
    report = compare_runs(program.module, values, target, against, entry=entry, rtol=rtol, atol=atol,
                          stop_at_first=True, grid=grid)
    if report.first is not None:
        head = f"stopped at breakpoint {spec!r} after {_at(report.first.place)}"
        print("\n".join(divergence_lines(report.first, report, args.program, head)))
        return EXIT_BREAK, None, report.printed
    if report.parted:
        print(f"stopped at breakpoint {spec!r}: {report.parted}")
        return EXIT_BREAK, None, report.printed
    return 0, report.results, report.printed


__all__ = ["EXIT_BREAK", "add_against_option", "backends", "divergence_lines", "report_json", "report_text",
           "run_to_divergence"]
