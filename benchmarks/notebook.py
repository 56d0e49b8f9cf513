"""Issue 37 part 3: how long a notebook waits for hlodbg's displays (hlodbg/notebook.py).

Per program, in one process and in the order a notebook asks: loading it (not a display), the
Program's display the first time (the graph view, its layout and SVG; cold: the layout cache is
a new folder, unless --warm-cache keeps the user's) and again (the layout kept in memory),
a session's display at its first op and after each of a few steps (the ops around the current op
laid out, both pictures drawn), the memory profile's display on tpu-v5e, and the size of each
output. Programs: the shared gpt_tiny, the GPT-2-shaped training step of gpt2_step.py, nested (its
layers calls of one function) and inlined (every layer in @main; both written by JAX the first
time, skipped without JAX) and a generated program of --ops ops (scale_programs.py).
Target: every display of the GPT-2 steps <= 2 s, and a step's display <= 0.5 s.

Run: .venv/bin/python benchmarks/notebook.py [--ops N] [--steps K] [--quick] [--warm-cache]
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gpt2_step  # noqa: E402 - the benchmarks directory is put on sys.path above
import scale_programs  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared" / "programs"
TARGET_SECONDS = 2.0
TARGET_STEP_SECONDS = 0.5


def programs(workdir: Path, ops: int, quick: bool) -> list[tuple[str, Path]]:
    found = []
    if (SHARED / "gpt_tiny.mlir").is_file():
        found.append(("gpt_tiny", SHARED / "gpt_tiny.mlir"))
    try:
        program, _ = gpt2_step.files(gpt2_step.QUICK if quick else gpt2_step.Shape())
        found.append(("GPT-2-shaped step" + (" (quick shape)" if quick else ""), program))
        shape = gpt2_step.QUICK if quick else gpt2_step.Shape()
        inlined, _ = gpt2_step.write_once(gpt2_step.WORKDIR / f"{shape.name}_inlined.mlir", lambda: _inlined(shape))
        found.append(("GPT-2-shaped step, layers inlined" + (" (quick shape)" if quick else ""), inlined))
    except ImportError as missing:
        print(f"skipped the GPT-2-shaped steps: {missing} (JAX writes them the first time)")
    generated = workdir / f"layered_{ops}.mlir"
    generated.write_text(scale_programs.layered_program(ops))
    found.append((f"generated, {ops:,} ops", generated))
    return found


def _inlined(shape: gpt2_step.Shape) -> tuple[str, dict]:
    """The training step of `shape` with every layer traced into @main (no nested jit): about
    11,000 ops in one function, grouped by JAX's name stacks."""
    lowered, arguments = gpt2_step.transformer_lowered(shape.layers, nested=False, width=shape.width,
                                                       tokens=shape.tokens, heads=shape.heads, training=True,
                                                       vocabulary=shape.vocab, update="sgd")
    return lowered.as_text(debug_info=True), {f"arg{i}": a for i, a in enumerate(arguments)}


def timed(work):
    started = time.perf_counter()
    value = work()
    return value, time.perf_counter() - started


def measure(label: str, path: Path, steps: int) -> list[tuple[str, float]]:
    import hlodbg
    from hlodbg.notebook import memory_html, program_html, session_html

    program, seconds = timed(lambda: hlodbg.load(str(path)))
    print(f"{label}: {program.op_count:,} ops, loaded in {seconds:.2f} s")
    figures = []

    def show(what: str, display, subject) -> None:
        shown, took = timed(lambda: display(subject))
        figures.append((what, took))
        print(f"  {what:<34} {took:6.2f} s  {len(shown) / 1024:8.0f} KiB")

    show("program, first display", program_html, program)
    show("program, again", program_html, program)
    session = program.session(persist=False)
    show("session at its first op", session_html, session)
    for k in range(steps):
        session.step()
        show(f"session after step {k + 1}", session_html, session)
    session.close()
    show("memory on tpu-v5e", memory_html, program.memory("tpu-v5e"))
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ops", type=int, default=100_000, help="ops of the generated program (default 100,000)")
    parser.add_argument("--steps", type=int, default=3, help="session steps shown (default 3)")
    parser.add_argument("--quick", action="store_true", help="the GPT-2 step's quick shape and a 10k-op program")
    parser.add_argument("--warm-cache", action="store_true", help="lay out from the user's layout cache")
    options = parser.parse_args()
    ops = 10_000 if options.quick else options.ops
    verdicts = []
    with tempfile.TemporaryDirectory() as workdir:
        if not options.warm_cache:
            os.environ["HLODBG_CACHE_DIR"] = str(Path(workdir) / "cache")
        for label, path in programs(Path(workdir), ops, options.quick):
            figures = measure(label, path, options.steps)
            if label.startswith("GPT-2"):
                worst = max(seconds for _, seconds in figures)
                steps = max(seconds for what, seconds in figures if what.startswith("session after"))
                verdicts.append(f"{label}: slowest display {worst:.2f} s (target <= {TARGET_SECONDS:g} s), "
                                f"slowest step {steps:.2f} s (target <= {TARGET_STEP_SECONDS:g} s): "
                                + ("PASS" if worst <= TARGET_SECONDS and steps <= TARGET_STEP_SECONDS else "FAIL"))
    for line in verdicts:
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
