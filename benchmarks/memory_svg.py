"""Issue 35: `hlodbg memory PROG --svg OUT.svg`, the memory picture, on the largest programs at hand.

Per program: the command as a user runs it (a fresh process: start-up, parse, analysis, drawing,
writing; median of --repeats), then in one process where the time goes: loading the program, the
static analysis (`program.memory`), drawing the SVG (layouts/memory_svg.py) and, when rsvg-convert
is installed, the PNG made from it. Programs: the GPT-2-shaped training step of gpt2_step.py
(written into its work directory by JAX the first time; skipped without JAX), a generated
100k-op program (scale_programs.py) and the shared 4x2 grid program on tpu-v5e.
Target: `memory --svg` of the GPT-2-shaped step <= 2 s.

Run: .venv/bin/python benchmarks/memory_svg.py [--repeats N] [--quick]   (--quick: a 10k-op program
instead of 100k, and the GPT-2 step's quick shape)
"""
from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gpt2_step  # noqa: E402 - the benchmarks directory is put on sys.path above
import scale_programs  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared" / "programs"
HLODBG = Path(sys.executable).parent / "hlodbg"
GPT2_TARGET_SECONDS = 2.0


def programs(workdir: Path, quick: bool) -> list[tuple[str, Path, str]]:
    """(label, path, target) of every program measured."""
    found = []
    try:
        program, _ = gpt2_step.files(gpt2_step.QUICK if quick else gpt2_step.Shape())
        found.append(("GPT-2-shaped step" + (" (quick shape)" if quick else ""), program, "tpu-v5e"))
    except ImportError as e:
        print(f"(no GPT-2-shaped step: writing it needs JAX: {e})")
    ops = 10_000 if quick else 100_000
    generated = workdir / f"layered_{ops}.mlir"
    generated.write_text(scale_programs.layered_program(ops))
    found.append((f"generated {ops // 1000}k ops", generated, "tpu-v5e"))
    if (SHARED / "sharded_mlp_4x2.mlir").is_file():
        found.append(("sharded_mlp_4x2 (8 devices)", SHARED / "sharded_mlp_4x2.mlir", "tpu-v5e"))
    return found


def command_seconds(program: Path, target: str, out: Path, repeats: int) -> float:
    """Median wall time of `hlodbg memory PROG --target T --svg OUT` in a fresh process."""
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        done = subprocess.run([str(HLODBG), "memory", str(program), "--target", target, "--svg", str(out)],
                              capture_output=True, text=True)
        times.append(time.perf_counter() - started)
        if done.returncode not in (0, 4):
            raise SystemExit(f"hlodbg memory failed on {program}: {done.stderr.strip()}")
    return statistics.median(times)


def import_seconds(repeats: int) -> float:
    """Median wall time of a fresh process importing what the command needs: its start-up cost."""
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import hlodbg.cli, hlodbg.cli_memory"], check=True)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def stages(program: Path, target: str) -> dict[str, float]:
    """Seconds of each stage in this process, and the SVG's size."""
    import hlodbg
    from hlodbg.layouts.memory_svg import memory_svg

    figures = {}
    started = time.perf_counter()
    loaded = hlodbg.load(str(program))
    figures["load"] = time.perf_counter() - started
    started = time.perf_counter()
    analysis = loaded.memory(target)
    figures["analysis"] = time.perf_counter() - started
    started = time.perf_counter()
    svg = memory_svg(analysis, loaded.name)
    figures["draw"] = time.perf_counter() - started
    figures["kB"] = len(svg.encode("utf-8")) / 1000
    figures["ops"] = loaded.op_count
    if shutil.which("rsvg-convert"):
        from hlodbg.layouts.svg_png import svg_to_png

        started = time.perf_counter()
        svg_to_png(svg)
        figures["png"] = time.perf_counter() - started
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--quick", action="store_true")
    options = parser.parse_args()
    verdicts = []
    print(f"start-up (a fresh process importing the command's modules): {import_seconds(options.repeats):.2f} s")
    with tempfile.TemporaryDirectory() as work:
        workdir = Path(work)
        print(f"{'program':<30}{'ops':>9}{'command':>10}{'load':>8}{'analysis':>10}{'draw':>8}{'png':>8}{'svg':>9}")
        for label, program, target in programs(workdir, options.quick):
            wall = command_seconds(program, target, workdir / "m.svg", options.repeats)
            f = stages(program, target)
            png = f"{f['png']:.2f}s" if "png" in f else "-"
            print(f"{label:<30}{f['ops']:>9,}{wall:>9.2f}s{f['load']:>7.2f}s{f['analysis']:>9.2f}s{f['draw']:>7.2f}s"
                  f"{png:>8}{f['kB']:>7.0f}kB")
            if label.startswith("GPT-2") and not options.quick:
                verdicts.append(wall <= GPT2_TARGET_SECONDS)
                print(f"  memory --svg of the GPT-2-shaped step: {wall:.2f} s (target <= {GPT2_TARGET_SECONDS:g} s): "
                      f"{'PASS' if verdicts[-1] else 'FAIL'}")
    return 0 if all(verdicts) else 1


if __name__ == "__main__":
    sys.exit(main())
