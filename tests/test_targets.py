"""`--target` and `target=`: which machine every device runs on, from the CLI and the Python API.

The layouts (test_layouts.py), numerics (test_tpu_numerics.py) and memory (test_memory.py) of the
TPU target are tested on their own; here: that every entry point reaches the target it names, that
each device gets a backend instance of its own, and that bad target options are clear errors.
"""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import hlodbg
from hlodbg.cli import main
from hlodbg.engine.machine.backend import CPU
from hlodbg.engine.machine.targets import TargetError, backend_for, canonical_target, target_names
from hlodbg.engine.machine.tpu.backend import PhysicalArray, TpuBackend
from hlodbg.engine.run.interpreter import Interpreter, Listener
from hlodbg.engine.run.spmd import run_grid

# Data movement and integer arithmetic only: exact on every target.
MOVES = """
func.func @main(%a: tensor<3x5xbf16>, %b: tensor<4xi32>) -> (tensor<5x3xbf16>, tensor<4xi32>) {
  %0 = stablehlo.transpose %a, dims = [1, 0] : (tensor<3x5xbf16>) -> tensor<5x3xbf16>
  %1 = stablehlo.add %b, %b : tensor<4xi32>
  return %0, %1 : tensor<5x3xbf16>, tensor<4xi32>
}
"""

ON_TWO_DEVICES = """
module attributes {mhlo.num_partitions = 2 : i32} {
  func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
    %0 = stablehlo.negate %a : tensor<2xf32>
    return %0 : tensor<2xf32>
  }
}
"""


def _args():
    a = (np.arange(15, dtype=np.float32).reshape(3, 5) - 7).astype(ml_dtypes.bfloat16)
    return [a, np.array([1, -2, 3, 2**30], np.int32)]


def test_target_names_and_aliases():
    assert canonical_target("tpu") == "tpu-v5e"
    assert canonical_target(" TPU-V6E ") == "tpu-v6e"
    assert {"cpu", "tpu-v4", "tpu-v5e", "tpu-v5p", "tpu-v6e", "tpu7x", "tpu", "xla:cpu", "xla:gpu", "xla:tpu"} == set(target_names())
    assert backend_for(None) is CPU
    assert backend_for("tpu7x").describe() == "tpu7x"
    with pytest.raises(TargetError, match="unknown target 'tpu-v9'.*tpu-v5e"):
        backend_for("tpu-v9")


def test_program_run_on_a_tpu_stores_physical_buffers_and_gives_the_cpu_answer_for_data_movement():
    program = hlodbg.load(MOVES)
    expected = program.run(*_args())
    got = program.run(*_args(), target="tpu-v5e")
    for e, g in zip(expected, got):
        assert e.dtype == g.dtype and e.tobytes() == g.tobytes()
    assert isinstance(program._interpreter("tpu-v5e").backend, TpuBackend)
    stored = []

    class Keep(Listener):  # a listener sees logical operands; the frame's env holds what the device keeps
        def before_op(self, event, frame, op, operands):
            stored.extend(frame.env[v] for v in op.operands)

    Interpreter(program.module, backend=backend_for("tpu-v5e"), listeners=[Keep()]).run("main", _args())
    assert len(stored) == 3 and all(isinstance(s, PhysicalArray) for s in stored)  # add %b, %b: twice
    # bf16[3,5] in the default tiling: one (4,128)(2,1) tile of 2-byte elements
    assert stored[0].nbytes == 4 * 128 * 2


def test_every_device_of_a_grid_gets_its_own_backend_instance():
    program = hlodbg.load(ON_TWO_DEVICES)
    results = run_grid(program.module, [np.ones(2, np.float32)], backend=backend_for("tpu-v5e"))
    assert all(np.array_equal(r[0], -np.ones(2, np.float32)) for r in results.values())
    debug = program.debug([np.ones(2, np.float32)], target="tpu-v5e", persist=False)
    try:
        backends = [s.backend for s in debug.sessions.values()]
        assert len(backends) == 2 and backends[0] is not backends[1]
        assert all(b.describe() == "tpu-v5e" for b in backends)
    finally:
        debug.close()


def test_session_target_is_reachable_from_the_api():
    session = hlodbg.load(MOVES).session(_args(), persist=False, target="tpu")
    try:
        assert session.backend.describe() == "tpu-v5e"
        session.continue_()
        assert session.results[1].tolist() == [2, -4, 6, -2**31]
    finally:
        session.close()


def test_cli_run_and_check_on_a_tpu(tmp_path, capsys):
    prog = tmp_path / "moves.mlir"
    prog.write_text(MOVES)
    np.savez(tmp_path / "in.npz", arg0=_args()[0], arg1=_args()[1])
    assert main(["run", str(prog), "--args", str(tmp_path / "in.npz"), "--target", "tpu-v5e",
                 "--out", str(tmp_path / "out.npz")]) == 0
    out = np.load(tmp_path / "out.npz")
    assert out["result1"].tolist() == [2, -4, 6, -2**31]
    checks = tmp_path / "checks.mlir"
    checks.write_text("""
func.func @main() {
  %a = stablehlo.constant dense<[1, 2]> : tensor<2xi32>
  %b = stablehlo.add %a, %a : tensor<2xi32>
  "check.expect_eq_const"(%b) {value = dense<[2, 4]> : tensor<2xi32>} : (tensor<2xi32>) -> ()
  return
}
""")
    assert main(["check", str(checks), "--target", "tpu-v4"]) == 0
    assert "1 passed" in capsys.readouterr().out


@pytest.mark.parametrize("argv, message", [
    (["--target", "gpu"], "unknown target 'gpu'"),
    (["--layout", "arg0=1,0"], "--layout applies to TPU targets"),
    (["--target", "tpu", "--layout", "arg0"], "expected NAME=SPEC"),
])
def test_bad_target_options_are_clear_errors(tmp_path, capsys, argv, message):
    prog = tmp_path / "moves.mlir"
    prog.write_text(MOVES)
    assert main(["run", str(prog), *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_serve_passes_the_target_to_every_browser_session():
    from hlodbg.cli import _parser
    from hlodbg.ui_entry import serve_command

    args = _parser().parse_args(["serve", "p.mlir", "--target", "tpu-v6e", "--layout", "arg0=0,1:T(8,128)", "--allow-f64"])
    command = serve_command(args)
    assert command[command.index("--target") + 1] == "tpu-v6e"
    assert command[command.index("--layout") + 1] == "arg0=0,1:T(8,128)"
    assert "--allow-f64" in command


F64_PROGRAM = """
func.func @main(%a: tensor<3xf64>) -> tensor<3xf64> {
  %0 = stablehlo.add %a, %a : tensor<3xf64>
  return %0 : tensor<3xf64>
}
"""


def test_f64_on_a_tpu_exits_2_and_allow_f64_runs_it_and_says_so(tmp_path, capsys):
    prog = tmp_path / "f64.mlir"
    prog.write_text(F64_PROGRAM)
    assert main(["run", str(prog), "--target", "tpu-v5e"]) == 2
    err = capsys.readouterr().err
    assert f"{prog}:3:3: error: stablehlo.add: f64 is not supported on tpu-v5e" in err and "--allow-f64" in err
    assert main(["run", str(prog), "--target", "tpu-v5e", "--allow-f64"]) == 0
    err = capsys.readouterr().err
    assert "note: 1 op(s) computed in f64 because of --allow-f64 (first: stablehlo.add at line 3)" in err


def test_the_padding_lesson_pads_43x_and_its_fix_1_3x():
    from .helpers import SAMPLES

    padded = hlodbg.load(SAMPLES / "tpu_padding.mlir")
    fixed = hlodbg.load(SAMPLES / "tpu_padding_fixed.mlir")
    points = {b.name: b for b in padded.memory(target="tpu-v5e").devices[0].peak_site().buffers()}["%points"]
    assert str(points.layout) == "{1,0:T(8,128)}" and points.physical_bytes == 32 << 20
    assert points.logical_bytes == 65536 * 3 * 4
    fixed_points = {b.name: b for b in fixed.memory(target="tpu-v5e").devices[0].peak_site().buffers()}["%points"]
    assert str(fixed_points.layout) == "{1,0:T(4,128)}" and fixed_points.physical_bytes == 1 << 20
    rng = np.random.default_rng(0)
    xyz = rng.standard_normal((65536, 3)).astype(np.float32)
    center = np.array([0.5, -1.0, 2.0], np.float32)
    a = padded.run(xyz, center, target="tpu-v5e")[0]
    b = fixed.run(np.ascontiguousarray(xyz.T), center, target="tpu-v5e")[0]
    np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(a, ((xyz - center) ** 2).sum(axis=1), rtol=1e-5)


def test_f64_is_refused_where_it_is_computed_not_where_a_call_passes_it_on(tmp_path, capsys):
    prog = tmp_path / "call.mlir"
    prog.write_text("""
func.func @main(%a: tensor<3xf64>) -> tensor<3xf64> {
  %0 = func.call @twice(%a) : (tensor<3xf64>) -> tensor<3xf64>
  return %0 : tensor<3xf64>
}
func.func private @twice(%x: tensor<3xf64>) -> tensor<3xf64> {
  %0 = stablehlo.multiply %x, %x : tensor<3xf64>
  return %0 : tensor<3xf64>
}
""")
    assert main(["run", str(prog), "--target", "tpu-v5e"]) == 2
    assert f"{prog}:7:3: error: stablehlo.multiply: f64 is not supported on tpu-v5e" in capsys.readouterr().err
    assert main(["run", str(prog), "--target", "tpu-v5e", "--allow-f64"]) == 0
    assert "note: 1 op(s) computed in f64 because of --allow-f64 (first: stablehlo.multiply at line 7)" in capsys.readouterr().err


@pytest.mark.parametrize("layout, message", [
    # An argument's buffer: no allocator gives 4 EiB.
    ("arg1=0:T(1152921504606846976)", "%b (tensor<4xi32>) in layout {0:T(1152921504606846976)} takes"),
    # A result's: refused before the run, its size known from its type and layout.
    ("result1=0:T(1152921504606846976)", "needs 4.0 EiB in its tpu-v5e layout, more than the"),
])
def test_a_layout_that_pads_past_the_machines_memory_is_a_clear_error(tmp_path, capsys, layout, message):
    prog = tmp_path / "moves.mlir"
    prog.write_text(MOVES)
    assert main(["run", str(prog), "--target", "tpu-v5e", "--layout", layout]) == 2
    err = capsys.readouterr().err
    assert message in err and "internal error" not in err and "Traceback" not in err


def test_run_json_names_the_target(tmp_path, capsys):
    import json

    prog = tmp_path / "moves.mlir"
    prog.write_text(MOVES)
    assert main(["run", str(prog), "--target", "tpu", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["target"] == "tpu-v5e"
    assert main(["run", str(prog), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["target"] == "cpu"
    grid = tmp_path / "grid.mlir"
    grid.write_text(ON_TWO_DEVICES)
    assert main(["run", str(grid), "--target", "tpu-v6e", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["target"] == "tpu-v6e"


def test_an_option_a_target_does_not_take_is_refused_from_its_registry_entry():
    with pytest.raises(TargetError, match=r"layouts applies to TPU targets, not cpu; add target=tpu-v5e"):
        backend_for("cpu", layouts={"arg0": "0"})
    # checked before the backend is made: no JAX needed to hear it
    with pytest.raises(TargetError, match=r"allow_f64 applies to the emulated targets \(cpu, tpu-v4, .*\), not xla:gpu: "
                                          r"XLA decides its own layouts and numerics"):
        backend_for("xla:gpu", allow_f64=True)
    with pytest.raises(TargetError, match="tpu-v5e takes no option nonesuch; its options: allow_f64, excess_precision, layouts"):
        backend_for("tpu", nonesuch=1)
    assert backend_for("tpu-v4", allow_f64=True).allow_f64


def test_every_target_option_has_its_flag_and_every_target_its_help():
    from hlodbg.cli_target import OPTION_FLAGS, target_help
    from hlodbg.engine.machine.targets import OPTIONS, targets

    assert set(OPTION_FLAGS) == set(OPTIONS)
    text = target_help()
    assert all(t.help and f"{t.name}" in text for t in targets())
    assert "tpu-v5e (or tpu): one emulated TPU v5 lite chip per device" in text
