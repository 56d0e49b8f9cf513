"""`hlodbg export PROG -o OUT.{svg,png,dot,json}`: the dataflow graph as a picture or as data."""
from __future__ import annotations

import sys

from hlodbg.cli_options import PROGRAM_HELP
from hlodbg.cli_run import seed_value

OVERLAYS = ("nan", "range", "divergence", "padding")


def add_options(export) -> None:
    export.description = ("Draw PROG's dataflow graph: laid out in layers with edges in lanes (horizontal and vertical runs, "
                          "into clusters through ports), or by Graphviz with --engine graphviz. "
                          "SVG, PNG and JSON reuse cached layouts, so a re-export (or a recoloured one) costs no layout.")
    export.add_argument("program", metavar="PROG", help=PROGRAM_HELP)
    export.set_defaults(handler=cmd_export)
    export.add_argument("-o", "--output", required=True, metavar="OUT", help="OUT.svg, OUT.png, OUT.dot or OUT.json ('-' with --format: standard output)")
    export.add_argument("--format", choices=("svg", "png", "dot", "json"), help="output format when OUT's suffix does not say")
    export.add_argument("--function", metavar="NAME", help="draw this function and what it calls (with --collapse none: this function expanded)")
    export.add_argument("--collapse", choices=("calls", "regions", "groups", "repeats", "none"), default="calls", help="calls: each function once, calls as nodes, fusions open unless the graph is over 500 nodes (default); "
                        "regions: also fold while/if/reduce bodies and fusions into their op; groups: fold every group (JAX name stacks, repeated layers, chunks of a long function), "
                        "so each function shows its top groups as boxes (the way to draw a 100k-op program); repeats: fold each repeated layer (layer_3 (4 of 12), repeat 4 of 12) to one box, the rest open; "
                        "none: expand every call in place")
    export.add_argument("--focus", metavar="%N", help="only the neighbourhood of this op or argument (%%12, @fn:%%12), inside its own function (no hop through a call)")
    export.add_argument("--radius", type=int, default=2, metavar="K", help="hops around --focus (default: 2)")
    export.add_argument("--values", metavar="IN.npz|DIR", help="run the program on these arguments (arg0, arg1, ... in an .npz, or a directory of NAME.npy files) and put value summaries in the tooltips")
    export.add_argument("--overlay", choices=OVERLAYS, help="colour ops by NaN/Inf in their values, by magnitude (range), by difference from an --against run, "
                        "or by how much the --target's layouts pad their results (padding: physical / logical bytes; no run)")
    export.add_argument("--against", metavar="TARGET|REF.npz", help="for --overlay divergence: another target "
                        "(e.g. tpu-v5e: the same arguments run there) or the arguments of a reference run")
    export.add_argument("--seed", type=seed_value, default=0, help="seed for arguments --values does not give (default: 0)")
    export.add_argument("--entry", default="main", help="function the run for --values/--overlay starts at (default: main)")
    export.add_argument("--title", help="a title line above the drawing (SVG)")
    export.add_argument("--chunk", type=int, default=None, help="module to export in a '// -----' split file")
    export.add_argument("--no-cache", action="store_true", help="lay out again instead of reusing a cached layout")
    export.add_argument("--engine", choices=("auto", "graphviz", "layered"), default="auto", help="layout: the layered layout (linear in the graph's size, edges in lanes; auto, the default, is it; HLODBG_LAYOUT_ENGINE sets it too) "
                        "or Graphviz (its splines; its PNG is Graphviz's own drawing). A PNG of the layered layout is its SVG converted by rsvg-convert")
    from hlodbg.cli_target import add_target_options

    add_target_options(export, "runs on for --values/--overlay")
    from hlodbg.cli_elided import add_fill_elided_option

    add_fill_elided_option(export)


def cmd_export(args) -> int:
    from hlodbg.cli_elided import load_program
    from hlodbg.layouts.export import export_graph, format_of, graph_view

    program = load_program(args)
    if args.output == "-" and not args.format:
        from hlodbg.layouts.graph import GraphError

        raise GraphError("-o - writes to standard output: say which format with --format")
    fmt = format_of(args.output, args.format)
    view = graph_view(program.module, function=args.function, collapse=args.collapse, focus=args.focus, radius=args.radius)
    overlay = _overlay(program, view, args)
    report = export_graph(view, args.output, fmt, overlay=overlay, title=args.title, use_cache=not args.no_cache, engine=args.engine)
    if args.output != "-":
        layout = " (cached layout)" if report.layout_cached else ""
        print(f"wrote {report.path}: {report.nodes} nodes, {report.edges} edges, {report.clusters} clusters in {report.seconds:.2f} s{layout}", file=sys.stderr)
        if report.note:
            print(f"note: {report.note}", file=sys.stderr)
    return 0


def _overlay(program, view, args):
    from hlodbg.engine import ExecutionError

    if args.against and args.overlay != "divergence":
        raise ExecutionError("--against is the reference run of --overlay divergence")
    if args.overlay == "divergence" and not args.against:
        raise ExecutionError("--overlay divergence compares with another run: name its target with --against TARGET "
                             "(e.g. tpu-v5e), or give its arguments with --against REF.npz")
    if not args.values and not args.overlay:
        return None
    from hlodbg.layouts import overlay as overlays

    if args.overlay == "divergence" and _names_target(args.against):
        return overlays.target_divergence_overlay(view, _target_divergence(program, args))

    from hlodbg.cli_target import backend_from_args

    backend = backend_from_args(args)
    if args.overlay == "padding":  # from the types and layouts alone: nothing runs
        if args.values:
            raise ExecutionError("--overlay padding comes from the layouts, not from a run: drop --values")
        return overlays.padding_overlay(view, backend)
    session = _finished_session(program, args.entry, args.values, args.seed, backend)
    try:
        statistics = session.op_statistics()
        if args.overlay == "nan":
            return overlays.nan_overlay(view, statistics)
        if args.overlay == "range":
            return overlays.range_overlay(view, statistics)
        if args.overlay == "divergence":
            reference = _finished_session(program, args.entry, args.against, args.seed, backend)
            try:
                return overlays.divergence_overlay(view, session, reference)
            finally:
                reference.close()
        return overlays.summary_tooltips(view, statistics)
    finally:
        session.close()


def _finished_session(program, entry: str, npz_path, seed: int, backend=None):
    """A session run to its end (an error stops it where it happened: values so far still count)."""
    from hlodbg.cli_session import continue_within_memory, open_session
    from hlodbg.engine.run.interpreter import entry_function
    from hlodbg.execution import gather_arguments

    function = entry_function(program.module, entry)
    values, _ = gather_arguments(function, npz_path, [], seed)
    session = open_session(program, entry, values, None, backend)
    continue_within_memory(session)
    if session.error is not None:
        print(f"note: the run stopped early: {session.error}", file=sys.stderr)
    return session


def _names_target(against: str) -> bool:
    """Whether --against names a target rather than a reference run's .npz."""
    from hlodbg.engine.machine.targets import TargetError, canonical_target

    try:
        canonical_target(against)
    except TargetError as e:
        if against.endswith(".npz"):
            return False
        raise TargetError(f"--against: {e.message}; or give a reference run's arguments as REF.npz") from None
    return True


def _target_divergence(program, args):
    """The DiffReport of the --values arguments run on --target and on --against (all of it, on
    every device of the program's grid)."""
    from hlodbg.divergence_report import backends
    from hlodbg.engine.debug.divergence import compare_runs
    from hlodbg.engine.run.grid import grid_shape
    from hlodbg.engine.run.interpreter import entry_function
    from hlodbg.execution import gather_arguments

    function = entry_function(program.module, args.entry)
    values, _ = gather_arguments(function, args.values, [], args.seed, grid=grid_shape(program.module))
    target, against = backends(args)
    # Every device of the program's grid: an op's colour is its largest divergence on any of them.
    report = compare_runs(program.module, values, target, against, entry=args.entry, grid=grid_shape(program.module))
    if report.parted:
        print(f"note: {report.parted}; ops after that are not compared", file=sys.stderr)
    return report
