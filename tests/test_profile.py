"""`hlodbg run --profile` and engine/run/profile.py: real op kinds, figures that sum to the run, top
ops with their lines, peak memory, the JSON schema, grids and targets, clear errors.

No assertion here is about how long anything took: only about how the time is accounted for."""
from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

import hlodbg
from hlodbg.cli import main
from hlodbg.engine.run.interpreter import Interpreter
from hlodbg.engine.run.profile import PROFILE_SCHEMA, Profiler, peak_memory

from .helpers import PROGRAMS

RING = Path(__file__).parent / "data" / "grid_ring.mlir"
ITERATIONS = 5

# A matmul, a reduction with a body, a called function, and a while loop whose body runs 5 times.
PROGRAM = f"""func.func @main(%x: tensor<64x64xf32>, %w: tensor<64x64xf32>) -> (tensor<64x64xf32>, tensor<64xf32>) {{
  %d = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %s = stablehlo.reduce(%d init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<64x64xf32>, tensor<f32>) -> tensor<64xf32>
  %t = func.call @twice(%d) : (tensor<64x64xf32>) -> tensor<64x64xf32>
  %i0 = stablehlo.constant dense<0> : tensor<i64>
  %n = stablehlo.constant dense<{ITERATIONS}> : tensor<i64>
  %one = stablehlo.constant dense<1> : tensor<i64>
  %r:2 = stablehlo.while(%i = %i0, %acc = %t) : tensor<i64>, tensor<64x64xf32>
    cond {{
      %c = stablehlo.compare LT, %i, %n : (tensor<i64>, tensor<i64>) -> tensor<i1>
      stablehlo.return %c : tensor<i1>
    }} do {{
      %next = stablehlo.add %i, %one : tensor<i64>
      %m = stablehlo.multiply %acc, %x : tensor<64x64xf32>
      stablehlo.return %next, %m : tensor<i64>, tensor<64x64xf32>
    }}
  return %r#1, %s : tensor<64x64xf32>, tensor<64xf32>
}}
func.func private @twice(%a: tensor<64x64xf32>) -> tensor<64x64xf32> {{
  %b = stablehlo.add %a, %a : tensor<64x64xf32>
  return %b : tensor<64x64xf32>
}}
"""


@pytest.fixture
def program_file(tmp_path):
    path = tmp_path / "prog.mlir"
    path.write_text(PROGRAM)
    rng = np.random.default_rng(0)
    np.savez(tmp_path / "args.npz", arg0=rng.standard_normal((64, 64)).astype(np.float32),
             arg1=rng.standard_normal((64, 64)).astype(np.float32))
    return path


def run_json(capsys, *argv) -> dict:
    assert main(["run", *map(str, argv), "--profile", "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def assert_sums_to_the_run(profile: dict) -> None:
    total = profile["run_seconds"]
    parts = sum(k["seconds"] for k in profile["kinds"]) + profile["outside_ops_seconds"]
    assert parts == pytest.approx(total, rel=1e-9, abs=1e-12)
    shares = sum(k["share"] for k in profile["kinds"]) + profile["outside_ops_share"]
    assert shares == pytest.approx(1.0, abs=1e-9)


def test_profile_names_real_op_kinds_and_counts_every_execution(program_file, capsys):
    payload = run_json(capsys, program_file, "--args", program_file.parent / "args.npz")
    profile = payload["profile"]
    assert profile["schema"] == PROFILE_SCHEMA
    module_ops = {op.name for op in hlodbg.load(program_file).module.walk()}
    counts = {k["kind"]: k["count"] for k in profile["kinds"]}
    assert set(counts) <= module_ops
    assert counts["stablehlo.dot_general"] == 1 and counts["func.call"] == 1 and counts["stablehlo.while"] == 1
    assert counts["stablehlo.multiply"] == ITERATIONS  # the loop body's ops, once per iteration
    assert counts["stablehlo.compare"] == ITERATIONS + 1
    assert counts["stablehlo.add"] == ITERATIONS + 1  # the body's counter and @twice's add
    assert profile["ops_executed"] == sum(counts.values())
    assert profile["plain_run_seconds"] > 0
    assert_sums_to_the_run(profile)


def test_top_ops_are_real_ops_with_their_lines(program_file, capsys):
    profile = run_json(capsys, program_file, "--args", program_file.parent / "args.npz")["profile"]
    lines = PROGRAM.splitlines()
    assert profile["top_ops"]
    for top in profile["top_ops"]:
        source = lines[top["line"] - 1]
        assert top["location"].endswith(f"prog.mlir:{top['line']}:{top['location'].rsplit(':', 1)[1]}")
        short = top["op"].split(".", 1)[1]
        assert short in source, (top, source)
        for name in top["results"]:
            assert source.strip().startswith(name.split("#")[0]) or name in source
    shares = [top["share"] for top in profile["top_ops"]]
    assert shares == sorted(shares, reverse=True)


def test_peak_memory_holds_the_largest_result_and_counts_the_arguments(program_file, capsys):
    memory = run_json(capsys, program_file, "--args", program_file.parent / "args.npz")["profile"]["memory"]
    assert memory["measured_by"] == "tracemalloc"
    assert memory["arguments_bytes"] == 2 * 64 * 64 * 4
    assert memory["results_bytes"] == 64 * 64 * 4 + 64 * 4
    assert memory["peak_bytes"] >= 64 * 64 * 4  # the largest result was allocated during the run
    assert memory["peak_beyond_results_bytes"] == memory["peak_bytes"] - memory["results_bytes"]


def test_text_output_after_the_results_shares_sum_to_the_run(program_file, capsys):
    assert main(["run", str(program_file), "--args", str(program_file.parent / "args.npz"), "--profile"]) == 0
    out = capsys.readouterr().out
    results_end = out.index("result1:")
    profile_start = out.index("profile:")
    assert results_end < profile_start
    table = out[profile_start:out.index("  top ops")]
    shares = [float(s) for s in re.findall(r"(\d+\.\d)%", table)]
    rows = len(shares)
    assert sum(shares) == pytest.approx(100.0, abs=0.05 * rows + 1e-9)  # each share rounded to 0.1%
    assert "stablehlo.dot_general" in table and "outside ops" in table
    assert re.search(r"%d = stablehlo\.dot_general\s+\S*prog\.mlir:2:\d+ +1 ", out)
    assert "memory: a plain run allocated at most" in out and "beside arguments of 32.0 KiB" in out


def test_profile_results_are_the_plain_runs(program_file, capsys, tmp_path):
    args = program_file.parent / "args.npz"
    assert main(["run", str(program_file), "--args", str(args), "--profile", "--out", str(tmp_path / "p.npz")]) == 0
    assert main(["run", str(program_file), "--args", str(args), "--out", str(tmp_path / "q.npz")]) == 0
    profiled, plain = np.load(tmp_path / "p.npz"), np.load(tmp_path / "q.npz")
    for name in plain.files:
        np.testing.assert_array_equal(profiled[name], plain[name])


def test_op_with_a_region_counts_only_its_own_time():
    program = hlodbg.load(PROGRAM)
    x = np.ones((64, 64), np.float32)
    profiler = Profiler()
    interpreter = Interpreter(program.module, listeners=[profiler.listener()])
    profiler.start()
    interpreter.run("main", [x, x])
    profiler.stop()
    profile = profiler.profile()
    by_kind = {k.kind: k for k in profile.kinds}
    # The while's time and its body's are apart: every op's own time, and they partition the run.
    assert sum(k.seconds for k in profile.kinds) + profile.outside_seconds == pytest.approx(profile.run_seconds)
    assert by_kind["stablehlo.while"].count == 1 and by_kind["stablehlo.multiply"].count == ITERATIONS
    assert all(o.seconds >= 0 for o in profile.ops)


def test_peak_memory_helper_sees_allocations_during_the_run_only():
    before = np.ones(1 << 20, np.uint8)  # allocated before: not the run's
    results, memory = peak_memory(lambda: [np.zeros(1 << 16, np.uint8)], [before])
    assert memory.arguments_bytes == 1 << 20 and memory.results_bytes == 1 << 16
    assert 1 << 16 <= memory.peak_bytes < 1 << 20


def test_profile_on_a_grid_is_summed_over_the_devices(tmp_path, capsys):
    args = tmp_path / "x.npz"
    np.savez(args, arg0=np.array([1.0, 2.0], np.float32))
    payload = run_json(capsys, RING, "--args", args)
    profile = payload["profile"]
    assert profile["devices"] == 4 and profile["summed_over_devices"] is True
    counts = {k["kind"]: k["count"] for k in profile["kinds"]}
    assert counts["stablehlo.all_reduce"] == 4 and counts["stablehlo.replica_id"] == 4
    assert_sums_to_the_run(profile)
    assert len(payload["devices"]) == 4  # the per-device results are still there
    devices = profile["device_seconds"]
    assert [d["device"] for d in devices] == ["0,0", "1,0", "2,0", "3,0"]
    assert sum(d["seconds"] for d in devices) == pytest.approx(profile["run_seconds"], rel=1e-9)
    assert main(["run", str(RING), "--args", str(args), "--profile"]) == 0
    out = capsys.readouterr().out
    assert "summed over 4 devices" in out and out.index("device 3") < out.index("profile:")


def test_profile_on_an_emulated_tpu(program_file, capsys):
    profile = run_json(capsys, program_file, "--args", program_file.parent / "args.npz",
                       "--target", "tpu-v5e")["profile"]
    assert {k["kind"] for k in profile["kinds"]} >= {"stablehlo.dot_general", "stablehlo.while"}
    assert_sums_to_the_run(profile)


def test_profile_on_xla_cpu(tmp_path, capsys):
    pytest.importorskip("jax")
    path = tmp_path / "small.mlir"
    path.write_text("""func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.multiply %a, %a : tensor<4xf32>
  %1 = stablehlo.add %0, %a : tensor<4xf32>
  return %1 : tensor<4xf32>
}
""")
    profile = run_json(capsys, path, "--target", "xla:cpu")["profile"]
    assert {k["kind"]: k["count"] for k in profile["kinds"]} == {"stablehlo.multiply": 1, "stablehlo.add": 1}
    assert_sums_to_the_run(profile)


@pytest.mark.parametrize("extra, option", [(["--break-on", "nan"], "--break-on"), (["--probe", "DIR"], "--probe"),
                                           (["--break-on", "diverge", "--against", "tpu-v5e"], "--break-on")])
def test_profile_with_options_that_stop_or_record_is_refused(program_file, capsys, extra, option):
    assert main(["run", str(program_file), "--profile", *extra]) == 2
    err = capsys.readouterr().err
    assert f"--profile times one whole run; it cannot be combined with {option}" in err


def test_profile_of_gpt_tiny_names_its_heaviest_kinds(capsys):
    program = PROGRAMS / "gpt_tiny.mlir"
    if not program.exists():
        pytest.skip("the shared programs are not here")
    profile = run_json(capsys, program, "--args", PROGRAMS / "gpt_tiny.inputs.npz")["profile"]
    kinds = {k["kind"] for k in profile["kinds"]}
    assert {"stablehlo.dot_general", "stablehlo.reduce", "stablehlo.broadcast_in_dim"} <= kinds
    assert_sums_to_the_run(profile)
    assert profile["memory"]["peak_bytes"] >= 16 * 128 * 4  # its result, tensor<16x128xf32>


def test_the_profile_times_the_plain_loop_with_its_fused_groups(monkeypatch):
    """`--profile` times the run users run: the plain loop (no observed loop), where a fused group
    of elementwise ops is one step whose time its ops share, each counted once per run."""
    from hlodbg.engine.run import fusion

    monkeypatch.setattr(fusion, "FUSE_FROM_ELEMENTS", 1)
    text = """func.func @main(%x: tensor<256xf32>, %y: tensor<256xf32>) -> tensor<256xf32> {
  %a = stablehlo.add %x, %y : tensor<256xf32>
  %b = stablehlo.multiply %a, %x : tensor<256xf32>
  %c = stablehlo.subtract %b, %y : tensor<256xf32>
  return %c : tensor<256xf32>
}"""
    program = hlodbg.load(text)
    profiler = Profiler()
    interpreter = Interpreter(program.module, listeners=[profiler.listener()])
    assert interpreter.plain  # a timing listener leaves the run plain
    steps = interpreter.plan.fast_steps(program.module.function("main").body)
    assert len(steps) == 1 and len(steps[0].members) == 3  # fused into one step
    x = np.linspace(0, 1, 256, dtype=np.float32)
    profiler.start()
    interpreter.run("main", [x, x])
    profiler.stop()
    by_kind = {k.kind: k for k in profiler.profile().kinds}
    assert {kind: k.count for kind, k in by_kind.items()} == {"stablehlo.add": 1, "stablehlo.multiply": 1, "stablehlo.subtract": 1}
    shares = {k.seconds for k in by_kind.values()}
    assert len(shares) == 1  # the group's time, shared evenly
