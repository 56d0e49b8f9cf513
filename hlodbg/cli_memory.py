"""`hlodbg memory PROG`: what each device holds at its peak, and whether that fits its memory.

Static, from the types and the target's layouts (engine/run/memory_profile.py); nothing runs and
no tensor is allocated. Exit status 0 when every device fits (or the machine's memory is unknown),
EXIT_DOES_NOT_FIT when one does not, 2 for bad input.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Optional

from hlodbg.cli_elided import add_fill_elided_option, load_program
from hlodbg.cli_options import PROGRAM_HELP
from hlodbg.cli_target import add_target_options, backend_from_args
from hlodbg.engine.ir.core import Operation
from hlodbg.engine.ir.errors import HlodbgError, printable
from hlodbg.engine.machine.memory import format_bytes
from hlodbg.engine.run.memory_profile import MODULE_LAYOUT
from hlodbg.layouts.memory_svg import device_label, op_name, op_sources

VMEM = 1  # XLA's generic fast memory space, S(1): a TPU's VMEM

EXIT_DOES_NOT_FIT = 4
DEFAULT_TOP = 10


def add_options(cmd) -> None:
    cmd.epilog = f"exit status: 0 when every device fits, {EXIT_DOES_NOT_FIT} when one does not, 2 for bad input"
    cmd.set_defaults(handler=cmd_memory)
    cmd.add_argument("program", metavar="PROG", help=PROGRAM_HELP)
    cmd.add_argument("--entry", default="main", help="function to analyse (default: main)")
    cmd.add_argument("--chunk", type=int, default=None, help="module to analyse in a '// -----' split file")
    cmd.add_argument("--replicas", type=int, metavar="R", help="grid replicas (default: the module's mhlo.num_replicas)")
    cmd.add_argument("--partitions", type=int, metavar="P", help="grid partitions (default: the module's mhlo.num_partitions)")
    cmd.add_argument("--top", type=_count, default=DEFAULT_TOP, metavar="N",
                     help=f"list the N largest buffers live at the peak (default: {DEFAULT_TOP}; 0: all of them)")
    cmd.add_argument("--json", action="store_true", help="print the profile as JSON")
    cmd.add_argument("--svg", metavar="OUT.svg", help="also draw it: bytes live in program order per device, the peak, "
                     "the buffers live there by size (their padding hatched); hover for names, layouts, sources")
    cmd.add_argument("--png", metavar="OUT.png", help="the same picture as PNG (made from the SVG by rsvg-convert)")
    add_target_options(cmd, "holds its buffers")
    add_fill_elided_option(cmd)


def _count(text: str) -> int:
    import argparse

    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of buffers, not {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected 0 or more buffers, not {value}")
    return value


def cmd_memory(args) -> int:
    pictures = _picture_paths(args)  # checked before the program is read: a typo costs nothing
    program = load_program(args)
    backend = backend_from_args(args)
    analysis = program.memory(backend, replicas=args.replicas, partitions=args.partitions, entry=args.entry)
    if pictures:
        _write_pictures(program.name, analysis, args.top, pictures)
    compiled = _xla_compiled(program, backend, args.entry)
    if args.json:
        report = memory_json(program.name, analysis, args.top)
        if compiled is not None:
            report["xla_compiled"] = compiled
        print(json.dumps(report, indent=2))
    else:
        print(memory_text(program.name, analysis, args.top))
        if compiled is not None:
            print(_xla_compiled_text(compiled))
    return EXIT_DOES_NOT_FIT if analysis.fits is False else 0


def _xla_compiled(program, backend, entry: str) -> Optional[dict]:
    """On a real-device target (`xla:*`, Backend.xla_platform), XLA's own figures for the whole
    program compiled as it is (fusions, XLA's buffer assignment), beside the per-op run's profile
    above; else None."""
    if backend.xla_platform is None:
        return None
    from hlodbg.engine.run.capture.run import compiled_memory

    return compiled_memory(program.source, program.module, program.name, backend.xla_platform, entry)


def _xla_compiled_text(compiled: dict) -> str:
    memory = compiled["xla_memory"]
    parts = [f"{name} {format_bytes(memory[key])}" for key, name in
             (("argument", "arguments"), ("output", "outputs"), ("temp", "temp"), ("alias", "aliased"))
             if memory.get(key)]
    return ("XLA's compiled program (whole, fused; per device): " + (", ".join(parts) or "no buffers") +
            f" (compiled in {compiled['compile_seconds']:.2f} s); the profile above is the op-by-op run's")


def _picture_paths(args) -> dict[str, Path]:
    """{"svg": path, "png": path} of --svg/--png, each a name with its format's suffix in a
    directory that exists."""
    paths = {}
    for fmt in ("svg", "png"):
        given = getattr(args, fmt)
        if given is None:
            continue
        path = Path(given)
        if path.is_dir():
            raise HlodbgError(f"--{fmt} {printable(given)} is a directory: expected a file name ending in .{fmt}")
        if path.suffix.lower() != f".{fmt}":
            other = "png" if fmt == "svg" else "svg"
            raise HlodbgError(f"--{fmt} {printable(given)}: expected a file name ending in .{fmt}"
                              + (f" (for a .{other} file use --{other})" if path.suffix.lower() == f".{other}" else ""))
        if not path.parent.is_dir():
            raise HlodbgError(f"--{fmt} {printable(given)}: no directory {printable(str(path.parent))} to write it in")
        paths[fmt] = path
    if "png" in paths:
        from hlodbg.layouts.svg_png import find_converter

        find_converter()
    return paths


def _write_pictures(name: str, analysis, top: int, paths: dict[str, Path]) -> None:
    from hlodbg.layouts.memory_svg import memory_svg

    svg = memory_svg(analysis, name, top)
    outputs = {"svg": svg.encode("utf-8")}
    if "png" in paths:
        from hlodbg.layouts.svg_png import svg_to_png

        outputs["png"] = svg_to_png(svg)
    panels = len(analysis.groups())
    for fmt, path in paths.items():
        try:
            path.write_bytes(outputs[fmt])
        except OSError as e:
            raise HlodbgError(f"cannot write {printable(str(path))}: {e.strerror or e}") from None
        print(f"wrote {printable(str(path))}: {panels} panel{'s' if panels != 1 else ''} "
              f"for {len(analysis.devices)} device{'s' if len(analysis.devices) != 1 else ''}", file=sys.stderr)


# -- what the command prints -----------------------------------------------------------------------


def op_location(op: Operation) -> Optional[str]:
    """`model.py:88` (the producer's line, for JAX the user's Python), else the op's line in the
    program file, else None."""
    sources = op_sources(op)
    return sources[0] if sources else None


def op_reference(op: Operation) -> str:
    """`%1234 (model.py:88)`: the op and where it comes from."""
    label = op_name(op)
    where = op_location(op)
    return f"{label} ({where})" if where else label


def _where(op: Operation) -> str:
    where = op_location(op)
    return f" ({where})" if where else ""


def verdict(device) -> str:
    """`fits in 16 GiB HBM of tpu-v5e (peak 1.2 MiB, 0.0%)` or `needs 17.2 GiB: over by 1.2 GiB at
    %1234 (model.py:88)`."""
    peak, capacity = device.peak_bytes, device.capacity_bytes
    if capacity is None:
        return f"peak {format_bytes(peak)}; {device.capacity_label} is unknown"
    if peak <= capacity:
        return f"fits in {device.capacity_label} (peak {format_bytes(peak)}, {100 * peak / capacity:.1f}%)"
    op = device.peak_site().op
    return (f"does not fit in {device.capacity_label}: needs {format_bytes(peak)}: over by "
            f"{format_bytes(peak - capacity)} at {op_reference(op)}")


def _top(buffers: list, top: int) -> list:
    return buffers if top == 0 else buffers[:top]


def memory_text(name: str, analysis, top: int = DEFAULT_TOP) -> str:
    count = len(analysis.devices)
    lines = [f"{name} @{analysis.entry} on {analysis.target}, "
             f"{count} device{'s' if count != 1 else ''} ({analysis.replicas}x{analysis.partitions})"]
    for group in analysis.groups():
        device = group[0]
        site = device.peak_site()
        buffers = site.buffers()
        logical = sum(b.logical_bytes for b in buffers if b.in_main_memory)
        inside = f" in @{site.function.sym_name}" if site.function is not device.entry.function else ""
        padding = f", padding {100 * (1 - logical / device.peak_bytes):.0f}%" if logical < device.peak_bytes else ""
        lines.append(f"{device_label(group)}: peak {format_bytes(device.peak_bytes)} (logical {format_bytes(logical)}{padding}) "
                     f"at {op_name(site.op)} = {site.op.name}{inside}{_where(site.op)}")
        lines.append(f"  arguments {format_bytes(device.entry.argument_bytes)}, "
                     f"outputs {format_bytes(device.entry.output_bytes)}, {len(buffers)} buffers live at the peak")
        other = _other_memories(device, site.other_bytes())
        if other:
            lines.append(f"  also live at the peak, not counted against {device.capacity_label}: {other}")
        shown = _top(buffers, top)
        if shown:
            lines.append(f"  {'largest ' + str(len(shown)) if len(shown) < len(buffers) else 'all'} buffers at the peak:")
            lines.extend("    " + row for row in _table(shown, device.entry.function.sym_name, device.backend))
        dynamic = len(device.entry.dynamic)
        if dynamic:
            lines.append(f"  note: {dynamic} value(s) of dynamic shape are not counted")
        lines.append("  " + verdict(device))
    if analysis.global_program:
        lines.append("note: a sharded program: inside manual computations each device holds its local tiles; "
                     "elsewhere values are whole on every device, as hlodbg runs them (XLA's SPMD partitioner "
                     "would keep only each device's shard: these figures are an upper bound there)")
    if any(b.layout_source == MODULE_LAYOUT for device in analysis.devices for b in device.peak_site().buffers()):
        lines.append(f"note: the layouts shown are the module's; {analysis.target} keeps every array row-major and "
                     "unpadded, so sizes are logical (a TPU target, e.g. --target tpu-v5e, uses them)")
    lines.append("note: op by op, every result in its own buffer (no fusion): an upper bound on what XLA needs")
    return "\n".join(lines)


def _other_memories(device, other: dict) -> str:
    """`VMEM S(1) 4.0 KiB (of 128 MiB)`, for each memory space beside the main one."""
    backend = device.backend
    parts = []
    for space, count in sorted(other.items()):
        vmem = backend.fast_memory_bytes() if space == VMEM else None
        of = f" (of {format_bytes(vmem)})" if vmem else ""
        parts.append(f"{backend.memory_space_label(space)} {format_bytes(count)}{of}")
    return ", ".join(parts)


def _table(buffers: list, entry: str, backend) -> list[str]:
    rows = [("value", "type", "layout", "logical", "physical", "waste")]
    for b in buffers:
        origin = b.layout_origin or b.layout_source
        if not b.in_main_memory:
            origin += f", in {backend.memory_space_label(b.memory_space)}"
        layout = f"{b.layout} ({origin})" if b.layout is not None else "-"
        name = b.name if b.function == entry else f"{b.name} in @{b.function}"
        rows.append((name, b.type, layout, format_bytes(b.logical_bytes), format_bytes(b.physical_bytes),
                     f"{b.waste:.1f}x"))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    right = {3, 4, 5}
    return ["  ".join(cell.rjust(w) if i in right else cell.ljust(w) for i, (cell, w) in enumerate(zip(row, widths))).rstrip()
            for row in rows]


def memory_json(name: str, analysis, top: int = DEFAULT_TOP) -> dict:
    devices = []
    for device in analysis.devices:
        site = device.peak_site()
        buffers = site.buffers()
        devices.append({
            "device": device.device,
            "replica": device.process.replica_id,
            "partition": device.process.partition_id,
            "peak_bytes": device.peak_bytes,
            "peak_logical_bytes": sum(b.logical_bytes for b in buffers),
            "peak_op": op_name(site.op),
            "peak_op_name": site.op.name,
            "peak_function": site.function.sym_name,
            "peak_location": op_location(site.op),
            "hbm_bytes": device.capacity_bytes,
            "capacity": device.capacity_label,
            "fits": device.fits,
            "argument_bytes": device.entry.argument_bytes,
            "output_bytes": device.entry.output_bytes,
            "buffer_count": len(buffers),
            "uncounted_dynamic_values": len(device.entry.dynamic),  # the text's "not counted" note
            "other_memory_bytes": {str(space): count for space, count in sorted(site.other_bytes().items())},
            "buffers": [{"name": b.name, "function": b.function, "type": b.type, "layout": b.layout, "layout_source": b.layout_source,
                         "memory_space": b.memory_space, "logical_bytes": b.logical_bytes, "physical_bytes": b.physical_bytes}
                        for b in _top(buffers, top)],
        })
    return {
        "program": name,
        "entry": analysis.entry,
        "target": analysis.target,
        "grid": [analysis.replicas, analysis.partitions],
        "global_program": analysis.global_program,
        "devices": devices,
        "totals": {
            "devices": len(devices),
            "peak_bytes": analysis.peak_bytes,
            "sum_peak_bytes": sum(d["peak_bytes"] for d in devices),
            "fits": analysis.fits,
        },
    }


__all__ = ["EXIT_DOES_NOT_FIT", "add_options", "cmd_memory", "memory_json", "memory_text", "op_location",
           "op_reference", "verdict"]
