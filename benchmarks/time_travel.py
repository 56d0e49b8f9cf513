"""Issue 33's numbers: what time travel costs against a plain run.

Programs (files written once into --workdir, default /tmp/hlodbg-time-travel; the GPT-2 step's into
/tmp/hlodbg-gpt2):
  gpt_tiny      ../shared/programs/gpt_tiny.mlir with its inputs (skipped when absent)
  transformer   a 12-layer transformer training step with every layer inlined into @main, AdamW
                (export.transformer_text(12, nested=False, training=True), as scale.py measures it)
  loop_1M       a 1M-iteration scalar while loop (scale_programs.loop_program)
  grid          ../shared/programs/sharded_mlp_4x2.mlir on its 4x2 grid (skipped when absent)
  gpt2          the GPT-2-small-shaped training step of gpt2_step.py (--quick: its small shape)
For each, through the public API only (hlodbg.load, Program.run, Program.debug and the target's
moves, which the UI and `Program.session` use), so the script measures whatever engine is installed:
  plain         `program.run(args)`: the first run, and the best of --repeats warm runs (wall, CPU)
  recorded      a new debugging session (`program.debug(args)`, one process or the grid) run to its
                end with `continue`: the first one and the best of --repeats; x = recorded / plain.
                Plain runs, sessions and break-on sessions are timed in turns, so that each kind
                sees the same load of a shared machine (and the CLI's two runs likewise)
  memory        what the sessions say they hold (`memory_used`, summed over devices) and the growth of
                the process's resident set around the first session (VmHWM after, reset through
                /proc/self/clear_refs, less VmRSS before), against the arguments + results
  back          one step back from the end, then one more, each reading the op's outputs as the UI does
  goto          to the middle event and to event 1, reading the outputs there; restart
  budgeted      the session, its resident-set growth and the moves again within 1.5x the arguments +
                results (at least 64 KiB): what the GPT-2 step's session may hold, so the moves reach
                values it dropped; the first thing a second subprocess runs, so its heap is fresh
                (and its time, which includes preparing the program, is not judged)
  break-on      a session with a `nan` value breakpoint on every device, its hits ignored (so it
                tests every value to the end: JAX programs hold NaN and -inf constants), against the
                plain run; and `hlodbg run --args IN --break-on nan` (the CLI's scan path) against
                `hlodbg run --args IN`, both called in this process (each parses the program and
                prepares a new interpreter); the CLI stops at the first NaN, a constant in JAX's
                take_along_axis: such a run is printed with its stop and not judged
Targets (issue 33): recorded <= 1.2x plain; break-on <= 1.2x; step back <= 50 ms; goto and restart
<= 1 s on the GPT-2 step; the GPT-2 step's session memory (and resident-set growth) <= 1.5x its
arguments + results. Ratios are judged on CPU time, which other work on a shared machine disturbs
less than wall time, unless the plain run used several threads (its CPU time > 1.1x its wall time:
numpy's BLAS on the big programs), then on wall time; both are printed and saved.

Every program is measured in its own subprocess with a time limit (--timeout; the GPT-2 step gets
--gpt2-timeout): a hang is `timeout`, a killed process (out of memory) `killed`, and the figures it
printed before stay. `--baseline-out FILE` saves the figures with the machine's facts and the
commit; `--baseline FILE` prints a saved run beside this one.
Run: python benchmarks/time_travel.py [--only gpt_tiny,transformer,loop_1M,grid,gpt2] [--quick]
     [--repeats N] [--baseline FILE] [--baseline-out FILE]
"""
from __future__ import annotations

import argparse
import contextlib
import ctypes
import datetime
import gc
import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

BENCHMARKS = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCHMARKS))
import gpt2_step  # noqa: E402 - the benchmarks directory is put on sys.path above

PROGRAMS = BENCHMARKS.parents[1] / "shared" / "programs"
WORKDIR = Path("/tmp/hlodbg-time-travel")
CASES = ("gpt_tiny", "transformer", "loop_1M", "grid", "gpt2")
LOOP_ITERATIONS = 1_000_000
TIMEOUT, GPT2_TIMEOUT = 900.0, 1800.0
RATIO, STEP_BACK, GOTO, MEMORY_FACTOR = 1.2, 0.05, 1.0, 1.5
# `nan`, not `inf`: JAX's reductions start from an -inf constant, where an `inf` breakpoint stops
# (and take_along_axis fills from a NaN constant: the session ignores its hits, the CLI stops there).
VALUE_TEST = "nan"
SMALLEST_BUDGET = 64 * 1024  # the budgeted session's, for programs of a few bytes (the loop)
IGNORE_HITS = 10**12
THREADED = 1.1  # a plain run whose CPU time passes its wall time this much ran on several threads
ROUNDS_BUDGET = 240.0  # seconds of timed runs in turns, past which fewer than --repeats rounds are taken


# --- the measured subprocess -------------------------------------------------------------------
def emit(**figures) -> None:
    print(json.dumps(figures), flush=True)


def proc_status(key: str) -> int:
    """A /proc/self/status figure in bytes (VmRSS, VmHWM)."""
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) * 1024 for line in f if line.startswith(key + ":"))


def reset_peak() -> None:
    """Start VmHWM again from the current resident set (Linux's clear_refs, value 5)."""
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")


def array_bytes(value) -> int:
    if isinstance(value, dict):
        return sum(array_bytes(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return sum(array_bytes(v) for v in value)
    return int(getattr(value, "nbytes", 0))


def materialised(value) -> None:
    """Turn every array of what a pane would show into numpy, so lazily kept values are computed."""
    if isinstance(value, (list, tuple)):
        for item in value:
            materialised(item)
    elif hasattr(value, "nbytes"):
        np.asarray(value)


def closed(target) -> None:
    """Close a target and give its memory back to the system: glibc keeps freed heap memory, and
    what a GPT-2 step's sessions left behind piled up to 21 GB over a few sessions and plain runs
    between them (a shared machine's other work needs it; the next session's growth is then
    measured from a trimmed heap)."""
    target.close()
    gc.collect()
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)


def clocked(action):
    """(wall seconds, CPU seconds of this process, action's result)."""
    wall, cpu = time.perf_counter(), time.process_time()
    result = action()
    return time.perf_counter() - wall, time.process_time() - cpu, result


def move(target, name: str, *args):
    """(wall seconds of the move and of reading the focused session's current outputs, the stop)."""
    wall = time.perf_counter()
    stop = target.move(name, *args)
    materialised(target.session.outputs())
    return time.perf_counter() - wall, stop


def loaded(path: str, inputs: str | None):
    """(the Program, its arguments in order)."""
    import hlodbg

    program = hlodbg.load(path)
    arguments = []
    if inputs:
        stored = np.load(inputs)
        arguments = [stored[f"arg{i}"] for i in range(len(stored.files))]
    return program, arguments


def session_run(program, arguments, breakpoint: str | None = None, memory: int | None = None):
    """(the target, wall and CPU seconds from opening it to its first stop, the stop): opening is
    timed too, as a grid session may run there. `memory`: its budget (default the engine's)."""
    def run():
        target = program.debug(arguments, persist=False, memory=memory)
        if breakpoint:  # on every device, each hit ignored: the values are tested to the end
            for session in target.sessions.values():
                session.break_at(breakpoint, ignore=IGNORE_HITS, saved=False)
        return target, target.move("continue_")

    wall, cpu, (target, stop) = clocked(run)
    return target, wall, cpu, stop


def measure_child(path: str, inputs: str | None, repeats: int) -> None:
    from hlodbg.cli import main as cli_main

    program, arguments = loaded(path, inputs)
    emit(ops=program.op_count, functions=len(program.functions), arguments_bytes=array_bytes(arguments))

    wall, cpu, results = clocked(lambda: program.run(*arguments))
    emit(plain_first_s=wall, results_bytes=array_bytes(results))

    resident = proc_status("VmRSS")
    reset_peak()
    target, first_wall, first_cpu, stop = session_run(program, arguments)
    emit(recorded_first_s=first_wall, recorded_first_cpu_s=first_cpu, events=target.session.position, recorded_stop=stop.reason,
         session_memory_bytes=sum(s.memory_used for s in target.sessions.values()),
         rss_growth_bytes=proc_status("VmHWM") - resident)
    moves(target)
    closed(target)
    del target

    def plain():
        return clocked(lambda: program.run(*arguments))[:2]

    def recorded(breakpoint: str | None = None):
        target, wall, cpu, stop = session_run(program, arguments, breakpoint)
        where = f"{stop.reason} at event {target.session.position}"
        closed(target)
        return wall, cpu, where

    # In turns, so that each kind of run sees the same load of a shared machine; the best of each.
    plains, sessions, breaks = in_turns([plain, recorded, lambda: recorded(VALUE_TEST)], repeats)
    emit(plain_s=min(r[0] for r in plains), plain_cpu_s=min(r[1] for r in plains),
         recorded_s=min(r[0] for r in sessions), recorded_cpu_s=min(r[1] for r in sessions),
         break_session_s=min(r[0] for r in breaks), break_session_cpu_s=min(r[1] for r in breaks),
         break_session_stop=breaks[0][2], rounds=len(plains),
         samples={"plain": plains, "recorded": [r[:2] for r in sessions], "break_session": [r[:2] for r in breaks]})

    # The CLI's own paths, as `hlodbg run` takes them (scan_break_on for a value test on one process).
    def cli(*extra: str):
        command = ["run", path, "--json", *(["--args", inputs] if inputs else []), *extra]
        sink = io.StringIO()
        with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
            wall, cpu, status = clocked(lambda: cli_main(command))
        return wall, cpu, status

    cli_plain, cli_break = in_turns([cli, lambda: cli("--break-on", VALUE_TEST)], min(repeats, 3))
    emit(cli_plain_s=min(r[0] for r in cli_plain), cli_plain_cpu_s=min(r[1] for r in cli_plain),
         cli_plain_status=cli_plain[0][2], cli_break_s=min(r[0] for r in cli_break),
         cli_break_cpu_s=min(r[1] for r in cli_break), cli_break_status=cli_break[0][2],
         peak_rss_bytes=proc_status("VmHWM"))


def in_turns(measures: list, rounds: int) -> list[list]:
    """Each measure's results -> (wall, CPU, ...), the measures called in turn for up to `rounds`
    rounds (at least one) while they take less than ROUNDS_BUDGET seconds."""
    results: list[list] = [[] for _ in measures]
    started = time.perf_counter()
    for _ in range(max(1, rounds)):
        for measure, kept in zip(measures, results):
            kept.append(measure())
        if time.perf_counter() - started > ROUNDS_BUDGET:
            break
    return results


def measure_budgeted_child(path: str, inputs: str | None, budget: int) -> None:
    """A session within `budget` bytes, where the moves must reach values it no longer holds; the
    first thing a process of its own runs, so that its resident set grows from a fresh heap."""
    program, arguments = loaded(path, inputs)
    emit(budget_bytes=budget)
    resident = proc_status("VmRSS")
    reset_peak()
    target, wall, cpu, stop = session_run(program, arguments, memory=budget)
    emit(budgeted_s=wall, budgeted_cpu_s=cpu, budgeted_stop=stop.reason,
         budgeted_memory_bytes=sum(s.memory_used for s in target.sessions.values()),
         budgeted_rss_growth_bytes=proc_status("VmHWM") - resident)
    moves(target, "budgeted_")
    target.close()


def moves(target, prefix: str = "") -> None:
    """Time the moves a user makes on a session run to its end (as after `c`), each figure printed
    as soon as it is known (a later move may run past the time limit)."""
    end = target.session.position
    for figure, name, *where in (("back_s", "back"), ("back_again_s", "back"), ("goto_middle_s", "goto", end // 2),
                                 ("goto_first_s", "goto", 1), ("restart_s", "restart")):
        emit(**{prefix + figure: move(target, name, *where)[0]})


# --- the cases and the parent ---------------------------------------------------------------------
def case_files(name: str, workdir: Path, shape: gpt2_step.Shape) -> tuple[str, str | None] | str:
    """(program path, inputs path or None) of a case, or why it is skipped."""
    if name in ("gpt_tiny", "grid"):
        stem = "gpt_tiny" if name == "gpt_tiny" else "sharded_mlp_4x2"
        program = PROGRAMS / f"{stem}.mlir"
        if not program.is_file():
            return f"skipped: {program} is absent"
        return str(program), str(PROGRAMS / f"{stem}.inputs.npz")
    if name == "loop_1M":
        from scale_programs import loop_program

        program = workdir / "loop_1M.mlir"
        workdir.mkdir(parents=True, exist_ok=True)
        if not program.is_file():
            program.write_text(loop_program(LOOP_ITERATIONS))
        return str(program), None
    try:
        if name == "transformer":
            from export import transformer_lowered

            def make():
                lowered, arguments = transformer_lowered(12, nested=False, training=True)
                return lowered.as_text(debug_info=True), {f"arg{i}": a for i, a in enumerate(arguments)}

            program, inputs = gpt2_step.write_once(workdir / "transformer_12_training.mlir", make)
        else:
            program, inputs = gpt2_step.files(shape)
    except ImportError as e:
        return f"skipped: generating it needs JAX ({e})"
    return str(program), str(inputs)


def run_case(name: str, files: tuple[str, str | None], repeats: int, timeout: float) -> dict:
    """The figures of both subprocesses of a case (the second's keys start with "budget")."""
    figures = run_child(files, ["--child", files[0], "--repeats", str(repeats)], timeout)
    if "results_bytes" not in figures:
        return figures
    # What the issue allows the GPT-2 step's session to hold: 1.5x its arguments + results.
    budget = max(SMALLEST_BUDGET, int(MEMORY_FACTOR * (figures["arguments_bytes"] + figures["results_bytes"])))
    budgeted = run_child(files, ["--child-budgeted", files[0], "--child-budget", str(budget)], timeout)
    outcome = figures["outcome"] if figures["outcome"] != "ok" else budgeted["outcome"]
    return {**budgeted, **figures, "case_s": figures["case_s"] + budgeted["case_s"], "outcome": outcome}


def run_child(files: tuple[str, str | None], options: list[str], timeout: float) -> dict:
    command = [sys.executable, __file__, *options]
    if files[1]:
        command += ["--child-inputs", files[1]]
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        stdout, stderr = process.communicate(timeout=timeout)
        outcome = "ok" if process.returncode == 0 else "killed" if process.returncode == -signal.SIGKILL else "failed"
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        stdout, stderr = process.communicate()
        outcome = "timeout"
    figures = {"case_s": time.perf_counter() - started, "outcome": outcome}
    for line in stdout.splitlines():
        with contextlib.suppress(json.JSONDecodeError):
            figures.update(json.loads(line))
    if outcome == "failed":
        figures["error"] = (stderr.strip().splitlines() or ["?"])[-1][:200]
    return figures


def ratio(f: dict, numerator: str, denominator: str):
    a, b = f.get(numerator), f.get(denominator)
    return a / b if isinstance(a, (int, float)) and isinstance(b, (int, float)) and b > 0 else None


def seconds(value: float) -> str:
    return f"{value * 1e3:.2f} ms" if value < 1 else f"{value:.2f} s" if value < 10 else f"{value:.1f} s"


def early(judged: tuple[str, str, bool], stopped_early: bool, why: str = "stopped early") -> tuple[str, str, object]:
    """A ratio of a run that stopped at a hit before the end (or is not comparable, `why`):
    printed, not judged."""
    text, target, verdict = judged
    return (f"{text.replace(', judged', '')}, {why}", target, None) if stopped_early else judged


def rows(f: dict, name: str) -> list[tuple[str, str, str | None, object]]:
    """(figure, its printed value, target text or None, verdict True/False/None) of one case."""
    if "skipped" in f:
        return [("skipped", f["skipped"], None, None)]
    MB = 2**20
    gpt2 = name == "gpt2"
    # A figure the subprocess never printed: what happened to it (timeout, killed, failed).
    missing = f.get("outcome", "?") if f.get("outcome") != "ok" else "not measured"

    def s(key: str, cpu: str | None = None) -> str:
        if not isinstance(f.get(key), (int, float)):
            return missing
        return seconds(f[key]) + (f" (CPU {seconds(f[cpu])})" if cpu and isinstance(f.get(cpu), (int, float)) else "")

    def x(num: str, den: str, num_cpu: str, den_cpu: str) -> tuple[str, str, bool]:
        """A ratio judged on CPU time, or on wall time when the plain run used several threads
        (numpy's BLAS): CPU time then no longer stands for a quiet machine's wall time."""
        wall, cpu = ratio(f, num, den), ratio(f, num_cpu, den_cpu)
        if cpu is None or wall is None:
            return missing, f"<= {RATIO}x", False
        if ratio(f, den_cpu, den) > THREADED:
            return f"{wall:.2f}x wall, judged ({cpu:.2f}x CPU; threaded)", f"<= {RATIO}x", wall <= RATIO
        return f"{cpu:.2f}x CPU, judged ({wall:.2f}x wall)", f"<= {RATIO}x", cpu <= RATIO

    def within(key: str, limit: float, judged: bool = True):
        value = f.get(key)
        return (value <= limit if isinstance(value, (int, float)) else False) if judged else None

    budget = (f.get("arguments_bytes", 0) + f.get("results_bytes", 0)) * MEMORY_FACTOR
    out = [("ops, events", f"{f.get('ops', '?')} ops in {f.get('functions', '?')} functions, {f.get('events', '?')} events", None, None),
           ("arguments + results", f"{(f.get('arguments_bytes', 0) + f.get('results_bytes', 0)) / MB:.1f} MB", None, None),
           ("plain first run", s("plain_first_s"), None, None),
           ("plain run (best)", s("plain_s", "plain_cpu_s"), None, None),
           ("recorded first", s("recorded_first_s", "recorded_first_cpu_s") + f" ({f.get('recorded_stop', '?')})", None, None),
           ("recorded (best)", s("recorded_s", "recorded_cpu_s"), None, None),
           ("recorded / plain", *x("recorded_s", "plain_s", "recorded_cpu_s", "plain_cpu_s")),
           ("session memory_used", f"{f['session_memory_bytes'] / MB:.1f} MB" if "session_memory_bytes" in f else missing,
            f"<= {MEMORY_FACTOR}x args+results" if gpt2 else None,
            within("session_memory_bytes", budget, gpt2)),
           ("RSS growth, session", f"{f['rss_growth_bytes'] / MB:.1f} MB" if "rss_growth_bytes" in f else missing,
            f"<= {MEMORY_FACTOR}x args+results" if gpt2 else None, within("rss_growth_bytes", budget, gpt2))]
    for label, key in (("step back from the end", "back_s"), ("step back again", "back_again_s")):
        out.append((label, s(key), f"<= {STEP_BACK * 1e3:.0f} ms", within(key, STEP_BACK)))
    for label, key in (("goto middle", "goto_middle_s"), ("goto event 1", "goto_first_s"), ("restart", "restart_s")):
        out.append((label, s(key), f"<= {GOTO:g} s" if gpt2 else None, within(key, GOTO, gpt2)))
    # The same within 1.5x arguments + results (what the GPT-2 step's session may hold).
    out += [("budgeted session", (f"{f['budget_bytes'] / MB:.1f} MB budget, first of its process: " if "budget_bytes" in f else "")
             + s("budgeted_s", "budgeted_cpu_s") + f" ({f.get('budgeted_stop', '?')}), holds "
             + (f"{f['budgeted_memory_bytes'] / MB:.1f} MB" if "budgeted_memory_bytes" in f else missing), None, None),
            ("  RSS growth", f"{f['budgeted_rss_growth_bytes'] / MB:.1f} MB" if "budgeted_rss_growth_bytes" in f else missing,
             f"<= {MEMORY_FACTOR}x args+results" if gpt2 else None, within("budgeted_rss_growth_bytes", budget, gpt2)),
            ("budgeted / plain", *early(x("budgeted_s", "plain_s", "budgeted_cpu_s", "plain_cpu_s"), True, "not judged: a first session"))]
    for label, key in (("  step back from the end", "budgeted_back_s"), ("  step back again", "budgeted_back_again_s")):
        out.append((label, s(key), f"<= {STEP_BACK * 1e3:.0f} ms", within(key, STEP_BACK)))
    for label, key in (("  goto middle", "budgeted_goto_middle_s"), ("  goto event 1", "budgeted_goto_first_s"),
                       ("  restart", "budgeted_restart_s")):
        out.append((label, s(key), f"<= {GOTO:g} s" if gpt2 else None, within(key, GOTO, gpt2)))
    session_hit = not str(f.get("break_session_stop", "end")).startswith("end")
    cli_hit = f.get("cli_break_status", 0) != 0
    out += [(f"break-on {VALUE_TEST} session", s("break_session_s", "break_session_cpu_s") + f" ({f.get('break_session_stop', '?')})", None, None),
            ("break-on session / plain", *early(x("break_session_s", "plain_s", "break_session_cpu_s", "plain_cpu_s"), session_hit)),
            ("CLI run", s("cli_plain_s", "cli_plain_cpu_s"), None, None),
            (f"CLI run --break-on {VALUE_TEST}", s("cli_break_s", "cli_break_cpu_s") + f" (exit {f.get('cli_break_status', '?')})", None, None),
            ("CLI break-on / CLI run", *early(x("cli_break_s", "cli_plain_s", "cli_break_cpu_s", "cli_plain_cpu_s"), cli_hit)),
            ("whole case", f"{f.get('case_s', 0):.0f} s, {f.get('outcome', '?')}"
             + (f": {f['error']}" if "error" in f else ""), None, None)]
    return [(label, value, target if verdict is not None else None, verdict) for label, value, target, verdict in out]


def print_table(results: dict, baseline: dict | None) -> int:
    failures = 0
    for name, figures in results.items():
        before = (baseline or {}).get("results", {}).get(name)
        old = {label: value for label, value, _, _ in rows(before, name)} if before else {}
        print(f"\n{name}")
        for label, value, target, verdict in rows(figures, name):
            mark = "" if verdict is None else "PASS" if verdict else "FAIL"
            failures += verdict is False
            beside = f"   baseline: {old.get(label, '—')}" if baseline else ""
            print(f"  {mark:<5}{label:<26}{value:<46}{target or '':<22}{beside}")
    return failures


def machine_facts() -> dict:
    import hlodbg

    tree = Path(hlodbg.__file__).resolve().parent
    commit = subprocess.run(["git", "-C", str(tree), "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    memory = next((int(line.split()[1]) * 1024 for line in open("/proc/meminfo") if line.startswith("MemTotal:")), 0)
    return {"cores": os.cpu_count(), "ram_gib": round(memory / 2**30, 1), "python": sys.version.split()[0],
            "numpy": np.__version__, "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "hlodbg": str(tree), "commit": commit or "unknown", "load_average_before": os.getloadavg()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", help=f"comma-separated cases of {', '.join(CASES)}")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs per figure, the best kept (default 3)")
    parser.add_argument("--quick", action="store_true", help=f"the GPT-2 step in its small shape ({gpt2_step.QUICK})")
    parser.add_argument("--workdir", type=Path, default=WORKDIR)
    parser.add_argument("--timeout", type=float, default=TIMEOUT, help=f"seconds per case (default {TIMEOUT:g})")
    parser.add_argument("--gpt2-timeout", type=float, default=GPT2_TIMEOUT, help=f"for the GPT-2 step (default {GPT2_TIMEOUT:g})")
    parser.add_argument("--baseline", type=Path, help="a saved run to print beside this one")
    parser.add_argument("--baseline-out", type=Path, help="save this run's figures and the machine's facts here")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--child-budgeted", help=argparse.SUPPRESS)
    parser.add_argument("--child-inputs", help=argparse.SUPPRESS)
    parser.add_argument("--child-budget", type=int, help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.child:
        measure_child(options.child, options.child_inputs, options.repeats)
        return 0
    if options.child_budgeted:
        measure_budgeted_child(options.child_budgeted, options.child_inputs, options.child_budget)
        return 0

    only = [n.strip() for n in options.only.split(",")] if options.only else list(CASES)
    unknown = [n for n in only if n not in CASES]
    if unknown:
        parser.error(f"--only: no case {', '.join(unknown)} (cases: {', '.join(CASES)})")
    baseline = json.loads(options.baseline.read_text()) if options.baseline else None
    facts = machine_facts()
    shape = gpt2_step.QUICK if options.quick else gpt2_step.Shape()
    print(f"{facts['cores']} cores, {facts['ram_gib']} GiB, commit {facts['commit']}, load average {facts['load_average_before'][0]:.1f}; "
          f"best of {options.repeats}", flush=True)
    results = {}
    for name in only:
        files = case_files(name, options.workdir, shape)
        if isinstance(files, str):
            results[name] = {"skipped": files}
        else:
            timeout = options.gpt2_timeout if name == "gpt2" else options.timeout
            print(f"{name}: {files[0]} (time limit {timeout:g} s)", flush=True)
            results[name] = run_case(name, files, options.repeats, timeout)
            results[name]["program"] = files[0]
    if baseline and "gpt2" in only and baseline.get("gpt2_shape") != shape.__dict__:
        print(f"note: the baseline's GPT-2 step has another shape, {baseline.get('gpt2_shape')}")
    failures = print_table(results, baseline)
    facts["load_average_after"] = os.getloadavg()
    if options.baseline_out:
        options.baseline_out.write_text(json.dumps({"facts": facts, "gpt2_shape": shape.__dict__, "repeats": options.repeats,
                                                    "results": results}, indent=1) + "\n")
        print(f"saved {options.baseline_out}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
