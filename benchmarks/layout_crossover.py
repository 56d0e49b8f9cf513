"""The layered layout against Graphviz: both engines' time against node count.

For real-ish views — generated JAX-shaped programs (benchmarks/scale_programs.py; /tmp/scale/p*.mlir
when present) folded to their top groups, expanded, and cut to the first N nodes in program order;
gpt_tiny from the shared corpus; the 12-layer transformer of benchmarks/export.py when JAX is
here — prints nodes, clusters, and each engine's CPU seconds (Graphviz's is its child process's, so
a busy machine does not skew the comparison) and wall seconds. These figures chose the layered
layout for large views first; it now draws every view (its edges run in lanes and through cluster
ports, layout.py), and they show it costs nothing there.
Run: python benchmarks/layout_crossover.py [--timeout S] [--sizes 100,200,...] [--no-transformer]
"""
from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def child_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def measure(view, engine: str, timeout: float) -> tuple[str, str]:
    """(CPU seconds, wall seconds) of one cold layout, or why it did not finish."""
    from hlodbg.layouts.graphviz import LayoutLimitError
    from hlodbg.layouts.layout import compute_layout

    cpu = child_cpu() if engine == "graphviz" else time.process_time()
    wall = time.perf_counter()
    try:
        compute_layout(view, use_cache=False, timeout=timeout, engine=engine)
    except LayoutLimitError as e:
        return "-", f"({e.message.split(' and ')[0][:40]})"
    spent = (child_cpu() if engine == "graphviz" else time.process_time()) - cpu
    return f"{spent:.2f}", f"{time.perf_counter() - wall:.2f}"


def program_paths(workdir: Path) -> list[Path]:
    from scale_programs import layered_program

    paths = []
    for ops in (1000, 10000):
        path = Path(f"/tmp/scale/p{ops}.mlir")
        if not path.exists():
            path = workdir / f"p{ops}.mlir"
            path.write_text(layered_program(ops))
        paths.append(path)
    return paths


def fold_groups(view):
    """Every group directly inside a function folded: a function shows its top groups as boxes."""
    return view.collapse(*(cid for cid, c in view.clusters.items() if c.kind == "group" and c.parent in view.clusters and view.clusters[c.parent].kind == "function"))


def views(args, workdir: Path):
    from hlodbg.layouts.export import graph_view
    from hlodbg.program import load

    shared = HERE.parent.parent / "shared" / "programs" / "gpt_tiny.mlir"
    if shared.exists():
        module = load(str(shared)).module
        yield "gpt_tiny calls", graph_view(module)
        yield "gpt_tiny inlined", graph_view(module, collapse="none")
    if args.transformer:
        try:
            from export import transformer_text
        except ImportError:
            transformer_text = None
        if transformer_text is not None:
            source = workdir / "transformer.mlir"
            source.write_text(transformer_text(12, nested=False)[0])
            module = load(str(source)).module
            yield "transformer-12 folded", fold_groups(graph_view(module))
            yield "transformer-12", graph_view(module)
    for path in program_paths(workdir):
        module = load(str(path)).module
        view = graph_view(module, collapse="regions")
        yield f"{path.stem} folded", fold_groups(view)
        nodes = list(view.graph.nodes)
        for size in args.sizes:
            if size < len(nodes):
                yield f"{path.stem} first {size}", view.restrict(nodes[:size])
        if view.node_count <= max(args.sizes):
            yield f"{path.stem}", view


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds Graphviz may take per view (default 60)")
    parser.add_argument("--sizes", default="100,200,400,800,1600,3200", help="node counts of program-order cuts")
    parser.add_argument("--no-transformer", dest="transformer", action="store_false", help="skip the JAX-lowered transformer")
    args = parser.parse_args()
    args.sizes = [int(s) for s in args.sizes.split(",")]
    workdir = Path(tempfile.mkdtemp(prefix="hlodbg-crossover-"))
    os.environ["HLODBG_CACHE_DIR"] = str(workdir / "cache")
    print(f"{'view':32} {'nodes':>7} {'clusters':>8} | {'graphviz cpu':>12} {'wall':>8} | {'layered cpu':>11} {'wall':>6}")
    for name, view in views(args, workdir):
        gv_cpu, gv_wall = measure(view, "graphviz", args.timeout)
        ly_cpu, ly_wall = measure(view, "layered", args.timeout)
        print(f"{name:32} {view.node_count:7,} {len(view.clusters):8,} | {gv_cpu:>12} {gv_wall:>8} | {ly_cpu:>11} {ly_wall:>6}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
