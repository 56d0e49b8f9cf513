"""Issue 18's figures: programs of any size, against the baseline ("today's") and the targets.

Programs: benchmarks/scale_programs.py's generated JAX-shaped programs of 1k, 10k, 50k and 100k
ops, with and without locations; a real 12-layer transformer *training step* lowered by JAX with
every layer inlined into @main (benchmarks/export.py's `transformer_text(training=True)`, about
11,000 ops); a 2048x2048 f32 hex constant (the hex parse rate); a 1M-iteration scalar loop.

Every measurement runs in its own subprocess with a time limit (--timeout, 120 s), so a hang or a
runaway layout only costs that figure ("timeout"); a layout hlodbg refuses is "refused". While a
subprocess runs, every process under it is sampled from /proc for its peak resident memory
(VmHWM): the measured process's own peak and the peak of any layout process (Graphviz) it
starts; a wrapper's getrusage(RUSAGE_CHILDREN) gives the peak over the whole tree as a check.
Figures, per program:
  file MB, ops                  size of the .mlir and Program.op_count
  parse, verify, parse+verify   hlodbg.load(check=False), then engine.verify.verify, in seconds
  build_graph                   layouts.graph.build_graph(module), as the debugger builds it
  first folded scene            SceneBuilder(graph).scene(<@main's cluster>): what the graph pane
                                lays out first (Graphviz or the layered engine), seconds and boxes
  load peak MiB                 peak memory of the process that did all of the above
  export folded / expanded      `hlodbg export PROG -o X.svg --collapse groups` (or `calls` where
                                the tree has no `groups`) and `--collapse none`: wall seconds of
                                the command, its peak memory, and its layout process's peak
  UI ...                        benchmarks/ui.py --ops N (when ui.py has that mode): first full
                                frame, step median, opening a folded cluster, memory
  hex MB/s                      parse rate of the hex constant program
  loop recorded / unrecorded    a 1M-iteration loop run by the interpreter, and in a recorded
                                debugging session with a value breakpoint (nan) on, to its end
Prints a table: figure | today (baseline) | now | target | PASS/FAIL.
Run:  python benchmarks/scale.py [--sizes 1000,10000] [--quick] [--timeout S]
          [--baseline benchmarks/baseline_issue18.json] [--baseline-out FILE] [--only load,export,ui,...]
          [--brief] [--update] [--commit REV] [--workdir DIR]
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import scale_programs  # noqa: E402 - the benchmarks directory is put on sys.path above

SIZES = (1000, 10000, 50000, 100000)
QUICK_SIZES = (1000, 10000)
TIMEOUT = 120.0
LOOP_TIMEOUT = 300.0  # a 1M-iteration loop runs about a minute unrecorded in today's interpreter
LOOP_ITERATIONS = 1_000_000
TRANSFORMER_LAYERS = 12
PARTS = ("load", "export", "ui", "hex", "loop")
SKIPPED = "skipped"

# figure: (target, whether a value meets it: True, False or None for not judged). The issue's
# numbers, applied at every size (they are the 100k-op targets: smaller programs must meet them too).
TARGETS = {
    # judged on files of 1 MB or more only: below that a fixed cost (imports aside) dominates
    "parse+verify s": ("< 0.5 s per 1.8 MB", lambda v, p: v < 0.5 * p["file MB"] / 1.8 if p.get("file MB", 0) >= 1 else None),
    "first folded scene s": ("< 1 s", lambda v, p: v < 1.0),
    "export folded s": ("< 5 s", lambda v, p: v < 5.0),
    "export expanded s": ("< 60 s", lambda v, p: v < 60.0),
    "export folded layout MiB": ("<= 2048", lambda v, p: v <= 2048),
    "export expanded layout MiB": ("<= 2048", lambda v, p: v <= 2048),
    "scene layout MiB": ("<= 2048", lambda v, p: v <= 2048),
    "UI first frame s": ("< 1.5 s", lambda v, p: v < 1.5),
    "UI step median ms": ("< 30 ms", lambda v, p: v < 30),
    "UI open cluster ms": ("< 300 ms", lambda v, p: v < 300),
    "UI peak MiB": ("< 2048", lambda v, p: v < 2048),
    "hex MB/s": (">= 200", lambda v, p: v >= 200),
    "loop recorded / unrecorded": ("< 2x", lambda v, p: v < 2.0),
}

# --- the measured subprocesses -------------------------------------------------------------------
LOAD = r"""
import json, resource, sys, time
def emit(**figures):
    print(json.dumps(figures), flush=True)
def clocks():  # wall seconds, and CPU seconds of this process and the layout processes it waited for
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.perf_counter(), own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime
def since(start):
    now = clocks()
    return now[0] - start[0], now[1] - start[1]
import hlodbg
from hlodbg.engine.ir.errors import HlodbgError
from hlodbg.program import load
from hlodbg.engine.verify import verify
from hlodbg.layouts.graph import build_graph
from hlodbg.layouts.scene import SceneBuilder
path = sys.argv[1]
try:
    start = clocks(); program = load(path, check=False)
    emit(parse=since(start), ops=program.op_count)
    start = clocks(); verify(program.module)
    emit(verify=since(start))
    start = clocks(); graph = build_graph(program.module)
    emit(build_graph=since(start), nodes=graph.node_count, clusters=len(graph.clusters))
    builder = SceneBuilder(graph)
    entry = next(cid for cid, c in graph.clusters.items() if c.kind == "function" and c.function == "main")
    start = clocks()
    try:
        scene = builder.scene(entry)
        emit(scene=since(start), boxes=len(scene.boxes))
    except HlodbgError as e:
        emit(scene_error=e.message, scene_seconds=since(start)[0])
except HlodbgError as e:
    emit(error=e.message)
"""

LOOP = r"""
import json, sys, time
import hlodbg
from hlodbg.engine.run.interpreter import Interpreter
program = hlodbg.load(sys.argv[1])
start = time.perf_counter()
if sys.argv[2] == "plain":
    Interpreter(program.module).run("main", [])
else:
    session = program.session(persist=False)
    session.breakpoints.add("nan")
    session.continue_()
print(json.dumps({"seconds": time.perf_counter() - start, "cpu": time.process_time()}), flush=True)
"""

# Runs a command and writes the peak memory of its whole process tree, as the kernel counts it.
WRAPPER = r"""
import json, resource, subprocess, sys
status = subprocess.call(sys.argv[2:])
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
with open(sys.argv[1], "w") as out:
    json.dump({"status": status, "tree_peak_mib": usage.ru_maxrss / 1024, "tree_cpu_s": usage.ru_utime + usage.ru_stime}, out)
"""


def _children_map() -> dict[int, list[int]]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(entry))
    return children


def descendants(pid: int) -> list[int]:
    children, found, stack = _children_map(), [], [pid]
    while stack:
        for child in children.get(stack.pop(), []):
            found.append(child)
            stack.append(child)
    return found


def _peak_mib(pid: int) -> tuple[str, float] | None:
    try:
        with open(f"/proc/{pid}/status") as f:
            lines = f.read().splitlines()
    except OSError:
        return None
    name = next((line.split()[1] for line in lines if line.startswith("Name:")), "?")
    peak = next((int(line.split()[1]) / 1024 for line in lines if line.startswith("VmHWM:")), None)
    return None if peak is None else (name, peak)


class Measured:
    """A command run under WRAPPER with a time limit, every process under it sampled for its peak
    memory. `peaks`: the main process's peak (the wrapper's first child) and the largest peak of
    any process it started (`layout`, e.g. Graphviz's dot), in MiB."""

    def __init__(self, command: list[str], timeout: float, env: dict):
        self.timed_out = False
        self.main_peak = 0.0
        self.layout_peak = 0.0
        with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as handle:
            report = handle.name
        started = time.perf_counter()
        process = subprocess.Popen([sys.executable, "-c", WRAPPER, report, *command], stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True, env=env, start_new_session=True)
        done = threading.Event()
        sampler = threading.Thread(target=self._sample, args=(process.pid, done), daemon=True)
        sampler.start()
        try:
            self.stdout, self.stderr = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.timed_out = True
            for pid in [process.pid, *descendants(process.pid)]:  # Graphviz runs in its own session
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            self.stdout, self.stderr = process.communicate()
        self.seconds = time.perf_counter() - started
        done.set()
        sampler.join()
        try:
            self.tree = json.loads(Path(report).read_text() or "{}")
        except (OSError, ValueError):
            self.tree = {}
        Path(report).unlink(missing_ok=True)
        self.status = self.tree.get("status", process.returncode)

    def _sample(self, wrapper: int, done: threading.Event) -> None:
        main = None
        while not done.wait(0.05):
            tree = descendants(wrapper)
            if tree and main is None:
                main = tree[0]
            for pid in tree:
                found = _peak_mib(pid)
                if found is None:
                    continue
                if pid == main:
                    self.main_peak = max(self.main_peak, found[1])
                else:
                    self.layout_peak = max(self.layout_peak, found[1])

    def json_lines(self) -> list[dict]:
        out = []
        for line in self.stdout.splitlines():
            try:
                out.append(json.loads(line))
            except ValueError:
                continue
        return [item for item in out if isinstance(item, dict)]

    def error(self) -> str:
        lines = [line for line in self.stderr.strip().splitlines() if line.strip()]
        errors = [line for line in lines if line.startswith("error")]
        return (errors or lines or [f"exit status {self.status}"])[-1]


# --- the programs --------------------------------------------------------------------------------
def short(ops: int) -> str:
    return f"{ops // 1000}k" if ops % 1000 == 0 else str(ops)


def programs(sizes, workdir: Path, parts) -> list[dict]:
    """Writes (once) and lists the programs: name, path, kind and its generator's op count."""
    out = []
    for ops in sizes:
        for locations in (True, False):
            path = workdir / f"{'p' if locations else 'n'}{ops}.mlir"
            if not path.exists():
                path.write_text(scale_programs.layered_program(ops, locations=locations))
            name = f"{short(ops)} ops" + ("" if locations else ", no locations")
            out.append({"name": name, "path": path, "kind": "generated", "ops": ops, "locations": locations})
    path = workdir / f"transformer_train{TRANSFORMER_LAYERS}.mlir"
    if not path.exists():
        from export import transformer_text

        path.write_text(transformer_text(TRANSFORMER_LAYERS, nested=False, training=True, compile=False)[0])
    out.append({"name": f"transformer training step, {TRANSFORMER_LAYERS} layers unrolled", "path": path, "kind": "transformer"})
    if "hex" in parts:
        path = workdir / "hex2048.mlir"
        if not path.exists():
            path.write_text(scale_programs.hex_constant_program(2048, 2048))
        out.append({"name": "hex constant 2048x2048 f32", "path": path, "kind": "hex"})
    if "loop" in parts:
        path = workdir / f"loop{LOOP_ITERATIONS}.mlir"
        if not path.exists():
            path.write_text(scale_programs.loop_program(LOOP_ITERATIONS))
        out.append({"name": f"{LOOP_ITERATIONS:,}-iteration loop", "path": path, "kind": "loop"})
    return out


# --- measurements --------------------------------------------------------------------------------
def fresh_env(workdir: Path) -> dict:
    env = dict(os.environ)
    env["HLODBG_CACHE_DIR"] = tempfile.mkdtemp(prefix="cache-", dir=workdir)  # a cold layout cache
    return env


def measure_load(program: dict, workdir: Path, timeout: float) -> dict:
    run = Measured([sys.executable, "-c", LOAD, str(program["path"])], timeout, fresh_env(workdir))
    got: dict = {}
    for item in run.json_lines():
        got.update(item)
    figures = {"ops": got.get("ops", "timeout" if run.timed_out else "failed")}
    if "error" in got:
        return {**figures, "parse s": f"error: {got['error']}"}
    missing = "timeout" if run.timed_out else "failed"
    for figure, key in (("parse", "parse"), ("verify", "verify"), ("build_graph", "build_graph")):
        figures[f"{figure} s"], figures[f"{figure} cpu s"] = got.get(key, (missing, missing))
    for suffix in (" s", " cpu s"):
        parse, verify = figures["parse" + suffix], figures["verify" + suffix]
        figures["parse+verify" + suffix] = parse + verify if isinstance(parse, float) and isinstance(verify, float) else missing
    figures["graph nodes / clusters"] = f"{got['nodes']:,} / {got['clusters']:,}" if "nodes" in got else missing
    if "scene" in got:
        figures["first folded scene s"], figures["first folded scene cpu s"] = got["scene"]
        figures["first folded scene boxes"] = got["boxes"]
    elif "scene_error" in got:
        message = got["scene_error"]
        figures["first folded scene s"] = ("refused" if "more than" in message else "gave up") + f" after {got['scene_seconds']:.1f} s"
        figures["first folded scene boxes"] = message[:90]
    else:
        figures["first folded scene s"] = missing
    figures["load peak MiB"] = run.main_peak
    if run.layout_peak:
        figures["scene layout MiB"] = run.layout_peak
    if program["kind"] == "hex" and isinstance(figures["parse s"], float):
        figures["hex MB/s"] = program["path"].stat().st_size / 1e6 / figures["parse s"]
        figures["hex MB/s (cpu)"] = program["path"].stat().st_size / 1e6 / figures["parse cpu s"]
    return figures


def collapse_modes() -> tuple[str, ...]:
    done = subprocess.run([sys.executable, "-c", "from hlodbg.layouts.export import COLLAPSE_MODES; print(' '.join(COLLAPSE_MODES))"],
                          capture_output=True, text=True)
    return tuple(done.stdout.split())


def measure_export(program: dict, workdir: Path, timeout: float, folded_mode: str) -> dict:
    figures = {}
    for label, mode in (("folded", folded_mode), ("expanded", "none")):
        out = workdir / f"{program['path'].stem}-{mode}.svg"
        out.unlink(missing_ok=True)
        command = [sys.executable, "-m", "hlodbg", "export", str(program["path"]), "-o", str(out), "--collapse", mode]
        run = Measured(command, timeout, fresh_env(workdir))
        if run.timed_out:
            figures[f"export {label} s"] = "timeout"
        elif run.status != 0:
            message = run.error()
            figures[f"export {label} s"] = "refused" if re.search(r"more than|cannot be laid out|limit", message) else "failed"
            figures[f"export {label} note"] = message[:120]
        else:
            figures[f"export {label} s"] = run.seconds
            figures[f"export {label} SVG MB"] = out.stat().st_size / 1e6 if out.exists() else "missing"
            wrote = re.search(r"(\d+) nodes, (\d+) edges, (\d+) clusters", run.stderr)
            if wrote:
                figures[f"export {label} nodes / clusters"] = f"{int(wrote.group(1)):,} / {int(wrote.group(3)):,}"
        if "tree_cpu_s" in run.tree:
            figures[f"export {label} cpu s"] = run.tree["tree_cpu_s"]
        figures[f"export {label} peak MiB"] = run.main_peak
        if run.layout_peak:  # no row when no layout process ran (refused, or laid out in-process)
            figures[f"export {label} layout MiB"] = run.layout_peak
        if "tree_peak_mib" in run.tree:
            figures[f"export {label} tree MiB (getrusage)"] = run.tree["tree_peak_mib"]
        out.unlink(missing_ok=True)
    figures["export folded mode"] = f"--collapse {folded_mode}"
    return figures


UI_STEPS = 30
# ui.py --ops prints `ui <program> <figure> <value> <unit> ...`; its figures and ours:
UI_FIGURES = {"first_frame": "UI first frame s", "load_to_frame": "UI load to frame s", "step_median": "UI step median ms",
              "open_cluster": "UI open cluster ms", "rss_peak": "UI peak MiB (its own)"}
UI_LINE = re.compile(r"^ui \S+ (\w+) ([\d.]+) (ms|s|MB)\b", re.MULTILINE)


def ui_supports(option: str) -> bool:
    return option in (HERE / "ui.py").read_text()


def measure_ui(program: dict, workdir: Path, timeout: float) -> dict:
    if not ui_supports("--ops"):
        return {"UI first frame s": f"{SKIPPED}: ui.py has no --ops"}
    command = [sys.executable, str(HERE / "ui.py"), "--ops", str(program["ops"]), "--steps", str(UI_STEPS)]
    if not program["locations"]:
        if not ui_supports("--only-no-locations"):
            return {"UI first frame s": f"{SKIPPED}: ui.py has no --only-no-locations"}
        command.append("--only-no-locations")
    run = Measured(command, timeout, fresh_env(workdir))
    reported = {figure: (float(value), unit) for figure, value, unit in UI_LINE.findall(run.stdout)}
    missing = "timeout" if run.timed_out else "not reported" if reported or run.status == 0 else "failed"
    figures: dict = {}
    for figure, ours in UI_FIGURES.items():
        if figure in reported:
            value, unit = reported[figure]
            wanted = ours.split()[-1]  # "s" or "ms" (MB is MiB here: ui.py divides KiB by 1024)
            figures[ours] = value / 1000 if (unit, wanted) == ("ms", "s") else value * 1000 if (unit, wanted) == ("s", "ms") else value
        else:
            figures[ours] = missing
    # a run stopped at the time limit has no peak, only a lower bound on it
    figures["UI peak MiB until the time limit" if run.timed_out else "UI peak MiB"] = run.main_peak
    if run.stderr.strip() and not reported:  # ui.py exits 1 when a figure misses its target: no error
        figures["UI note"] = run.error()[:120]
    return figures


def measure_loop(program: dict, workdir: Path, timeout: float) -> dict:
    timeout = max(timeout, LOOP_TIMEOUT)
    figures = {}
    for label, mode in (("loop unrecorded s", "plain"), ("loop recorded s", "recorded")):
        run = Measured([sys.executable, "-c", LOOP, str(program["path"]), mode], timeout, fresh_env(workdir))
        lines = run.json_lines()
        figures[label] = "timeout" if run.timed_out else lines[-1]["seconds"] if lines else "failed"
        if lines:
            figures[label.replace(" s", " cpu s")] = lines[-1]["cpu"]
        figures[label.replace(" s", " peak MiB")] = run.main_peak
        if not lines and not run.timed_out:
            figures[label.replace(" s", " note")] = run.error()[:120]
    plain, recorded = figures["loop unrecorded s"], figures["loop recorded s"]
    if isinstance(plain, float) and isinstance(recorded, float):
        figures["loop recorded / unrecorded"] = recorded / plain
        figures["loop recorded / unrecorded (cpu)"] = figures["loop recorded cpu s"] / figures["loop unrecorded cpu s"]
    else:
        figures["loop recorded / unrecorded"] = recorded if isinstance(plain, float) else plain
    return figures


def measure(program: dict, workdir: Path, timeout: float, parts, folded_mode: str) -> dict:
    figures: dict = {"file MB": program["path"].stat().st_size / 1e6}
    if program["kind"] == "loop":
        return {**figures, **measure_loop(program, workdir, timeout)} if "loop" in parts else figures
    if "load" in parts:
        figures.update(measure_load(program, workdir, timeout))
    if program["kind"] == "hex":
        return figures
    if "export" in parts:
        figures.update(measure_export(program, workdir, timeout, folded_mode))
    if "ui" in parts and program["kind"] == "generated":
        figures.update(measure_ui(program, workdir, timeout))
    return figures


# --- the report ----------------------------------------------------------------------------------
def machine_facts(commit: str | None) -> dict:
    memory = next((int(line.split()[1]) * 1024 for line in open("/proc/meminfo") if line.startswith("MemTotal:")), 0)
    import hlodbg

    tree = Path(hlodbg.__file__).resolve().parent
    if commit is None:
        commit = subprocess.run(["git", "-C", str(tree), "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    from hlodbg.layouts.graphviz import find_graphviz, graphviz_version

    return {"cores": os.cpu_count(), "ram_gib": round(memory / 2**30, 1), "python": sys.version.split()[0],
            "graphviz": graphviz_version(find_graphviz()), "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "hlodbg": str(tree), "commit": commit or "unknown", "load_average": os.getloadavg()[0]}


def cell(value) -> str:
    if isinstance(value, float):
        return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.3g}" if abs(value) < 1 else f"{value:.2f}"
    if isinstance(value, int):
        return f"{value:,}"
    return "—" if value is None else str(value)


def cpu_twin(figure: str) -> str:
    """The CPU-time row of a wall-time figure ("parse s" -> "parse cpu s")."""
    return figure[:-2] + " cpu s" if figure.endswith(" s") else figure + " (cpu)"


def wall_of(figure: str):
    """The wall-time figure whose CPU-time twin `figure` is (None if it is none)."""
    return next((wall for wall in TARGETS if cpu_twin(wall) == figure), None)


def target_of(figure: str):
    return TARGETS.get(figure) or TARGETS.get(wall_of(figure))


def verdict(figure: str, value, program: dict) -> str:
    """PASS/FAIL of a figure. A wall time is judged on its CPU-time twin (the process's and its
    layout processes') where that is measured: on a 2-core machine shared with other work the wall
    time of one run varies 3x, and its CPU time is what a quiet machine's wall time would be
    (breakpoints.py judges the same way). A wall figure that is no number (timeout, refused) fails
    on its own row, whatever CPU time it spent."""
    target = target_of(figure)
    if target is None:
        return ""
    wall = wall_of(figure)
    if wall is not None and not isinstance(program.get(wall), (int, float)):
        return ""
    if wall is None and isinstance(value, (int, float)) and isinstance(program.get(cpu_twin(figure)), (int, float)):
        return ""
    if isinstance(value, (int, float)):
        met = target[1](value, program)
        return "" if met is None else "PASS" if met else "FAIL"
    return "" if value is None or str(value).startswith(SKIPPED) else "FAIL"


def print_table(results: dict, baseline: dict | None, brief: bool = False) -> int:
    failures = 0
    rows = [("figure", "today (baseline)", "now", "target", "")]
    for name, figures in results.items():
        before = (baseline or {}).get("programs", {}).get(name, {})
        rows.append((f"== {name}", "", "", "", ""))
        for figure in dict.fromkeys([*figures, *before]):
            if brief and target_of(figure) is None:
                continue
            value = figures.get(figure)
            judged = verdict(figure, value, figures)
            failures += judged == "FAIL"
            target = (target_of(figure) or ("",))[0]
            rows.append((f"  {figure}", cell(before.get(figure)) if baseline else "—", cell(value), target, judged))
    widths = [min(max(len(row[i]) for row in rows), 60) for i in range(5)]
    for row in rows:
        print(" | ".join(text[:60].ljust(width) for text, width in zip(row, widths)).rstrip())
    return failures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", help=f"comma-separated op counts (default: {','.join(map(str, SIZES))})")
    parser.add_argument("--quick", action="store_true", help=f"only {' and '.join(map(short, QUICK_SIZES))} ops (and the transformer)")
    parser.add_argument("--timeout", type=float, default=TIMEOUT, help=f"seconds each measurement may take (default: {TIMEOUT:g})")
    parser.add_argument("--only", help=f"comma-separated parts to measure, of: {','.join(PARTS)} (default: all)")
    parser.add_argument("--baseline", metavar="FILE", help="figures of a previous run (e.g. benchmarks/baseline_issue18.json) for the 'today' column")
    parser.add_argument("--baseline-out", metavar="FILE", help="write this run's figures (and the machine's facts) to FILE")
    parser.add_argument("--workdir", default=os.path.join(tempfile.gettempdir(), "hlodbg-scale"), help="where the generated programs are written and kept")
    parser.add_argument("--brief", action="store_true", help="print only the figures that have a target")
    parser.add_argument("--update", action="store_true", help="with --baseline-out: keep that file's other figures, replace only those measured now")
    parser.add_argument("--commit", help="the commit the measured hlodbg tree is at, when it is no git checkout (default: git's answer)")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")] if args.sizes else list(QUICK_SIZES if args.quick else SIZES)
    parts = tuple(args.only.split(",")) if args.only else PARTS
    unknown = set(parts) - set(PARTS)
    if unknown:
        parser.error(f"--only: unknown part {', '.join(sorted(unknown))} (parts: {', '.join(PARTS)})")
    workdir = Path(args.workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    baseline = json.loads(Path(args.baseline).read_text()) if args.baseline else None
    facts = machine_facts(args.commit)
    modes = collapse_modes()
    folded_mode = "groups" if "groups" in modes else "calls"
    print(f"hlodbg {facts['commit']} at {facts['hlodbg']}; {facts['cores']} cores, {facts['ram_gib']} GiB; {facts['graphviz']}; "
          f"time limit {args.timeout:g} s per measurement", flush=True)
    results: dict = {}
    for program in programs(sizes, workdir, parts):
        started = time.perf_counter()
        results[program["name"]] = measure(program, workdir, args.timeout, parts, folded_mode)
        print(f"measured {program['name']} in {time.perf_counter() - started:.0f} s", flush=True)
    facts["load_average_end"] = os.getloadavg()[0]
    if args.baseline_out:
        record = {"machine": facts, "timeout_s": args.timeout, "sizes": sizes, "parts": list(parts), "programs": results}
        out = Path(args.baseline_out)
        if args.update and out.exists():
            previous = json.loads(out.read_text())
            for name, figures in results.items():
                previous["programs"].setdefault(name, {}).update(figures)
            previous.setdefault("updates", []).append({"machine": facts, "parts": list(parts), "sizes": sizes})
            record = previous
        Path(args.baseline_out).write_text(json.dumps(record, indent=1) + "\n")
    if baseline:
        print(f"baseline: hlodbg {baseline['machine']['commit']} on {baseline['machine']['date']}")
    failures = print_table(results, baseline, args.brief)
    print(f"{failures} figure(s) miss their target")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
