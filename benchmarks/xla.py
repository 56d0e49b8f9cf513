"""Real devices through XLA (issue 19): the XLA backend, capture and replay, per shared program.

For each program of ../shared/programs (with its .inputs.npz) on the CPU's XLA devices, prints
  cpu          Program.run(*args) on hlodbg's numpy backend, best of the warm runs,
  xla:cpu 1st  Program.run(*args, target="xla:cpu") in a fresh kernel cache: every op signature's
               single-op module compiled (count and seconds of those compiles beside it),
  xla:cpu warm the same, every kernel compiled already (best of the later runs),
  whole XLA    the whole program compiled once by XLA and run (best of the runs): the floor,
  capture      `hlodbg capture` (engine/run/capture/run.py) into a fresh directory: instrumenting,
               XLA compile, run, writing the values; value instances (rows) and bytes written,
  memory       XLA's temp and output buffers per device for the instrumented program against the
               program as it is (the capture's `--baseline`): captured values are outputs, so what
               was temp memory inside fusions often moves to the outputs,
  replay       Program.run on the capture's inputs with the capture's values in place of
               computed ones (engine/debug/capture_replay.py), best of the warm runs, against cpu.
No targets: the figures say what each way of running costs. A program a way cannot run gets its
one-line reason and the report goes on.
Run: XLA_FLAGS=--xla_force_host_platform_device_count=8 python benchmarks/xla.py [--repeats N] [PROGRAM ...]
(the script sets that flag itself when it is not set: the sharded program needs 8 devices).
"""
from __future__ import annotations

import os

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")  # before JAX starts

import argparse  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

import hlodbg  # noqa: E402
from hlodbg.engine.machine.memory import format_bytes  # noqa: E402

try:  # run as `python benchmarks/xla.py` or imported as benchmarks.xla
    from interpreter import PROGRAMS, best_time
except ImportError:  # pragma: no cover
    from benchmarks.interpreter import PROGRAMS, best_time


def shared_cases(names: list[str]) -> list[tuple[Path, list[np.ndarray]]]:
    cases = []
    for path in sorted(PROGRAMS.glob("*.mlir")) if PROGRAMS.is_dir() else []:
        if names and path.stem not in names:
            continue
        inputs = np.load(path.with_suffix("").with_suffix(".inputs.npz"))
        cases.append((path, [inputs[f"arg{i}"] for i in range(len(inputs.files))]))
    return cases


def warm_time(program, args, target, repeats: int) -> float:
    program.run(*args, target=target)
    return best_time(lambda: program.run(*args, target=target), repeats=repeats)


def per_op_xla(text: str, args, repeats: int) -> dict:
    """The XLA backend: a first run in a fresh kernel cache, then warm runs."""
    from hlodbg.engine.machine.xla.kernels import KERNELS

    KERNELS.clear()
    program = hlodbg.load(text)
    start = time.perf_counter()
    program.run(*args, target="xla:cpu")
    first = time.perf_counter() - start
    compiles, seconds = KERNELS.compiles, KERNELS.seconds
    warm = best_time(lambda: program.run(*args, target="xla:cpu"), repeats=repeats)
    return {"first": first, "warm": warm, "compiles": compiles, "compile_seconds": seconds}


def whole_program_xla(program, args, repeats: int) -> float:
    """The whole program compiled by XLA for its grid and run: the time of one run."""
    from hlodbg.engine.machine.xla.runtime import runtime

    rt = runtime("cpu")
    module = program.module
    replicas, partitions = module.num_replicas, module.num_partitions
    devices = rt.require(replicas * partitions)
    executable = rt.compile(program.source, devices, replicas, partitions, what=str(program.path))
    if partitions > 1:
        shapes = [t.shape for t in module.function("main").function_type.results]
        global_args = executable.put_global(list(args))
        run = lambda: executable.run_global(global_args, shapes)  # noqa: E731
    elif replicas > 1:
        run = lambda: executable.run_spmd([list(args)] * len(devices))  # noqa: E731
    else:
        device_args = [rt.put(a, devices[0]) for a in args]
        run = lambda: executable.run(device_args)  # noqa: E731

    def run_and_wait():
        results = run()
        for result in (r for group in results for r in group) if replicas > 1 else results:
            result.block_until_ready()

    return best_time(run_and_wait, repeats=repeats)


def capture_and_replay(path: Path, program, args, directory: Path, repeats: int) -> dict:
    from hlodbg.engine.debug.capture_replay import open_replay
    from hlodbg.engine.run.capture.run import capture

    summary = capture(program.source, str(path), args, directory, baseline=True)
    backend = open_replay(directory, program.module, program.source, str(path))
    inputs = backend.capture.inputs()
    replay = warm_time(program, inputs, backend, repeats)
    return {"seconds": summary.seconds, "rows": summary.values, "bytes": summary.bytes,
            "memory": summary.manifest["xla_memory"], "baseline_memory": summary.manifest["baseline"]["xla_memory"],
            "replay": replay}


def ms(seconds: float) -> str:
    if seconds != seconds:
        return "—"
    return f"{seconds * 1e6:.0f} µs" if seconds < 1e-3 else f"{seconds * 1e3:.1f} ms"


def measure(path: Path, args, repeats: int, workdir: Path) -> None:
    text = path.read_text()
    program = hlodbg.load(path)
    name = path.stem
    print(f"\n{name} ({program.op_count} ops)")
    cpu = warm_time(program, args, "cpu", repeats)
    print(f"  cpu (numpy backend)      {ms(cpu):>11}")
    try:
        xla = per_op_xla(text, args, repeats)
        print(f"  xla:cpu per op, 1st run  {ms(xla['first']):>11}   ({xla['compiles']} single-op compiles, "
              f"{xla['compile_seconds']:.2f} s)")
        print(f"  xla:cpu per op, warm     {ms(xla['warm']):>11}   ({xla['warm'] / cpu:.1f}x cpu)")
    except Exception as e:  # noqa: BLE001 - report and go on
        print(f"  xla:cpu per op           cannot run: {type(e).__name__}: {str(e).splitlines()[0][:100]}")
    try:
        whole = whole_program_xla(program, args, repeats)
        print(f"  whole program on XLA     {ms(whole):>11}   (cpu is {cpu / whole:.0f}x that)")
    except Exception as e:  # noqa: BLE001
        print(f"  whole program on XLA     cannot run: {type(e).__name__}: {str(e).splitlines()[0][:100]}")
    try:
        c = capture_and_replay(path, program, args, workdir / f"{name}.hlocap", repeats)
    except Exception as e:  # noqa: BLE001
        print(f"  capture                  cannot run: {type(e).__name__}: {str(e).splitlines()[0][:100]}")
        return
    s = c["seconds"]
    total = sum(s.values())
    print(f"  capture                  {ms(total):>11}   (instrument {ms(s['instrument'])}, compile {ms(s['compile'])}, "
          f"run {ms(s['run'])}, write {ms(s['write'])})")
    print(f"  captured                 {c['rows']:>8,} value instances, {format_bytes(c['bytes'])}")
    for kind in ("temp", "output"):
        print(f"  {'XLA ' + kind + ' memory':<25}{format_bytes(c['memory'].get(kind, 0)):>11}   with capture, "
              f"{format_bytes(c['baseline_memory'].get(kind, 0))} without")
    print(f"  replay from the capture  {ms(c['replay']):>11}   ({c['replay'] / cpu:.2f}x a plain cpu run)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("programs", nargs="*", metavar="PROGRAM", help="names of shared programs (default: all)")
    parser.add_argument("--repeats", type=int, default=5, help="warm runs to take the best of (default: 5)")
    options = parser.parse_args()
    from hlodbg.engine.machine.xla.runtime import XlaUnavailable, runtime

    try:
        print(f"XLA: {runtime('cpu').describe()}")
    except XlaUnavailable as e:
        print(f"skipped: {e}")
        return
    cases = shared_cases(options.programs)
    if not cases:
        print(f"no programs: {PROGRAMS} is missing or has none of {options.programs}")
        return
    with tempfile.TemporaryDirectory(prefix="hlodbg-xla-bench-") as workdir:
        for path, args in cases:
            measure(path, args, options.repeats, Path(workdir))


if __name__ == "__main__":
    main()
