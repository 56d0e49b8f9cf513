"""The issue-19 features as a user meets them from the command line: programs lowered elsewhere (no
JAX lowering in the process), run and captured on `xla:cpu`, bad options and paths. Commands that
could crash the interpreter run in a subprocess with a time limit, so a crash fails one test."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from hlodbg.cli import main

# A Cholesky factorisation as JAX lowers jnp.linalg.cholesky on the CPU: a LAPACK custom call.
CHOLESKY = """
func.func @main(%a: tensor<3x3xf32>) -> (tensor<3x3xf32>, tensor<i32>) {
  %0:2 = stablehlo.custom_call @lapack_spotrf_ffi(%a) {mhlo.backend_config = {uplo = 76 : ui8}, operand_layouts = [dense<[0, 1]> : tensor<2xindex>], result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<> : tensor<0xindex>]} : (tensor<3x3xf32>) -> (tensor<3x3xf32>, tensor<i32>)
  return %0#0, %0#1 : tensor<3x3xf32>, tensor<i32>
}
"""
SPD = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]], np.float32)


@pytest.fixture
def jax():
    return pytest.importorskip("jax")


def hlodbg_process(*args: str, timeout: float = 240) -> subprocess.CompletedProcess:
    """`hlodbg ARGS` in a fresh process (its own JAX, 8 CPU devices)."""
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=8", JAX_PLATFORMS="cpu")
    return subprocess.run([sys.executable, "-m", "hlodbg", *args], capture_output=True, text=True,
                          timeout=timeout, env=env)


def _cholesky_files(tmp_path: Path) -> tuple[Path, Path]:
    program = tmp_path / "cholesky.mlir"
    program.write_text(CHOLESKY)
    inputs = tmp_path / "in.npz"
    np.savez(inputs, SPD)
    return program, inputs


def test_lapack_call_runs_on_xla_cpu_in_a_process_that_never_lowered_one(jax, tmp_path):
    program, inputs = _cholesky_files(tmp_path)
    out = tmp_path / "out.npz"
    done = hlodbg_process("run", str(program), "--args", str(inputs), "--target", "xla:cpu", "--out", str(out))
    assert done.returncode == 0, done.stderr[-2000:]
    factor = np.tril(np.load(out)["result0"])  # potrf leaves the upper triangle as it was
    np.testing.assert_allclose(factor, np.linalg.cholesky(SPD), rtol=2e-5)


def test_lapack_call_is_captured_in_a_process_that_never_lowered_one(jax, tmp_path):
    program, inputs = _cholesky_files(tmp_path)
    done = hlodbg_process("capture", str(program), "--args", str(inputs), "--target", "xla:cpu",
                          "-o", str(tmp_path / "run.hlocap"))
    assert done.returncode == 0, done.stderr[-2000:]
    assert (tmp_path / "run.hlocap" / "index.csv").exists()


FORI = """
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %c1 = stablehlo.constant dense<1> : tensor<i32>
  %n = stablehlo.constant dense<5> : tensor<i32>
  %half = stablehlo.constant dense<0.5> : tensor<4xf32>
  %r:2 = stablehlo.while(%i = %c0, %v = %x) : tensor<i32>, tensor<4xf32>
    cond {
      %lt = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %lt : tensor<i1>
    } do {
      %i1 = stablehlo.add %i, %c1 : tensor<i32>
      %v1 = stablehlo.multiply %v, %half : tensor<4xf32>
      stablehlo.return %i1, %v1 : tensor<i32>, tensor<4xf32>
    }
  return %r#1 : tensor<4xf32>
}
"""


def test_capture_into_a_directory_holding_a_capture_is_refused_and_leaves_it_whole(jax, tmp_path, capsys):
    program = tmp_path / "p.mlir"
    program.write_text(FORI)
    np.savez(tmp_path / "in.npz", np.arange(4, dtype=np.float32))
    np.savez(tmp_path / "small.npz", np.zeros(4, np.float32))
    out = tmp_path / "run.hlocap"
    assert main(["capture", str(program), "--args", str(tmp_path / "in.npz"), "-o", str(out)]) == 0
    before = sorted(p.relative_to(out) for p in out.rglob("*"))
    index = (out / "index.csv").read_text()
    capsys.readouterr()
    assert main(["capture", str(program), "--args", str(tmp_path / "small.npz"), "--values", "%v1", "-o", str(out)]) != 0
    err = capsys.readouterr().err
    assert "already holds a capture" in err and "capture.json" in err and "Traceback" not in err
    assert sorted(p.relative_to(out) for p in out.rglob("*")) == before
    assert (out / "index.csv").read_text() == index


def test_capture_into_an_empty_existing_directory_or_a_new_nested_one_is_fine(jax, tmp_path):
    program = tmp_path / "p.mlir"
    program.write_text(FORI)
    (tmp_path / "empty.hlocap").mkdir()
    for out in (tmp_path / "empty.hlocap", tmp_path / "a" / "b" / "run.hlocap"):
        assert main(["capture", str(program), "--seed", "1", "-o", str(out)]) == 0
        assert (out / "capture.json").exists()


def test_each_host_checks_only_its_own_files_of_an_earlier_capture(tmp_path):
    from hlodbg.engine.run.capture_format import earlier_capture

    (tmp_path / "values").mkdir()
    (tmp_path / "values" / "h1-0.npy").write_bytes(b"")
    (tmp_path / "index-host1.csv").write_text("")
    assert earlier_capture(tmp_path, host=0) == []  # host 1 of the same run got there first
    assert earlier_capture(tmp_path, host=1) == ["index-host1.csv", "values/h1-0.npy"]
    assert "values/h1-0.npy" in earlier_capture(tmp_path, host=None)


@pytest.mark.parametrize("spec, said", [("bogus", "error: --values 'bogus': cannot read 'bogus' as a breakpoint"),
                                        ("%999", "error: --values '%999': no value %999 in any function")])
def test_values_spec_errors_say_error_once_and_name_the_spec(jax, tmp_path, capsys, spec, said):
    program = tmp_path / "p.mlir"
    program.write_text(FORI)
    assert main(["capture", str(program), "--seed", "1", "--values", spec, "-o", str(tmp_path / "r.hlocap")]) != 0
    err = capsys.readouterr().err
    assert said in err and err.count("error:") == 1


def test_loop_capacity_zero_is_refused_not_taken_as_the_default(jax, tmp_path, capsys):
    program = tmp_path / "p.mlir"
    program.write_text(FORI)
    assert main(["capture", str(program), "--seed", "1", "--loop-capacity", "0", "-o", str(tmp_path / "r.hlocap")]) != 0
    assert "the loop capacity must be at least 1, not 0" in capsys.readouterr().err
    assert not (tmp_path / "r.hlocap" / "capture.json").exists()


@pytest.fixture
def fori_capture(jax, tmp_path):
    program = tmp_path / "p.mlir"
    program.write_text(FORI)
    out = tmp_path / "run.hlocap"
    assert main(["capture", str(program), "--seed", "1", "-o", str(out)]) == 0
    return program, out


def test_an_index_cut_short_names_its_line(fori_capture, capsys):
    program, out = fori_capture
    lines = (out / "index.csv").read_text().splitlines()
    (out / "index.csv").write_text("\n".join(lines[:4] + [lines[4][:30]]) + "\n")
    capsys.readouterr()
    assert main(["run", str(program), "--capture", str(out)]) != 0
    err = capsys.readouterr().err
    assert f"{out / 'index.csv'}:5: a row of 11 columns" in err and "cut short" in err
    assert "NoneType" not in err


@pytest.mark.parametrize("damaged", ["values/2.npy", "inputs/arg0.npy"])
def test_a_file_that_is_no_array_is_called_damaged_not_a_pickle(fori_capture, capsys, damaged):
    program, out = fori_capture
    (out / damaged).write_text("junk\n")
    capsys.readouterr()
    assert main(["run", str(program), "--capture", str(out)]) != 0
    err = capsys.readouterr().err
    assert f"cannot read {out / damaged}: not a .npy array file (the capture is damaged)" in err
    assert "pickle" not in err


def test_capture_help_offers_no_option_it_refuses(capsys):
    with pytest.raises(SystemExit):
        main(["capture", "--help"])
    assert "--args-per-device" not in capsys.readouterr().out


BF16_TANH = """
func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = stablehlo.convert %x : (tensor<4x8xf32>) -> tensor<4x8xbf16>
  %1 = stablehlo.tanh %0 : tensor<4x8xbf16>
  %2 = stablehlo.convert %1 : (tensor<4x8xbf16>) -> tensor<4x8xf32>
  return %2 : tensor<4x8xf32>
}
"""


def test_diff_of_a_bf16_capture_says_why_it_parts_and_how_to_emulate_it(jax, tmp_path, capsys):
    program = tmp_path / "bf16.mlir"
    program.write_text(BF16_TANH)
    np.savez(tmp_path / "in.npz", np.linspace(0.1, 2.0, 32, dtype=np.float32).reshape(4, 8))
    out = tmp_path / "run.hlocap"
    assert main(["capture", str(program), "--args", str(tmp_path / "in.npz"), "-o", str(out)]) == 0
    capsys.readouterr()
    if main(["diff", str(program), "--capture", str(out), "--per-op-rounding"]) == 0:
        pytest.skip("XLA rounded the bf16 tanh before converting it: nothing parts")
    report = capsys.readouterr().out
    assert "why: excess precision: XLA's compiled run may convert stablehlo.tanh's value" in report
    assert "the emulator does the same unless --per-op-rounding" in report
    assert main(["diff", str(program), "--capture", str(out)]) == 0  # the default emulates it


def test_the_capture_summary_says_what_the_loop_buffers_cost_in_xla_outputs(jax, tmp_path, capsys):
    program = tmp_path / "p.mlir"
    program.write_text(FORI)
    assert main(["capture", str(program), "--seed", "1", "--baseline", "-o", str(tmp_path / "r.hlocap")]) == 0
    line = capsys.readouterr().out
    manifest = __import__("json").loads((tmp_path / "r.hlocap" / "capture.json").read_text())
    from hlodbg.engine.machine.memory import format_bytes

    outputs = manifest["xla_memory"]["output"]
    assert outputs > manifest["baseline"]["xla_memory"]["output"]  # 5 iterations of 4 floats, and more
    assert f"outputs {format_bytes(outputs)} (uncaptured: temp " in line


def test_capture_of_an_entry_that_is_not_there_lists_the_functions(jax, tmp_path, capsys):
    program = tmp_path / "p.mlir"
    program.write_text(FORI)
    assert main(["capture", str(program), "--entry", "nope", "-o", str(tmp_path / "r.hlocap")]) == 2
    err = capsys.readouterr().err
    assert f"error: no function @nope in {program} (functions: @main)" in err and "internal error" not in err


# An HLO module printed as StableHLO (`hlodbg print --to stablehlo m.hlo`) names its entry main.<N>.
ENTRY_MAIN_4 = """
module @m {
  func.func private @twice(%a: tensor<3xf32>) -> tensor<3xf32> {
    %0 = stablehlo.add %a, %a : tensor<3xf32>
    return %0 : tensor<3xf32>
  }
  func.func @main.4(%x: tensor<3xf32>) -> tensor<3xf32> {
    %0 = func.call @twice(%x) : (tensor<3xf32>) -> tensor<3xf32>
    %1 = stablehlo.sine %0 : tensor<3xf32>
    return %1 : tensor<3xf32>
  }
}
"""


def test_a_module_whose_entry_is_main_dot_n_is_captured_and_replayed(jax, tmp_path, capsys):
    program = tmp_path / "m.mlir"
    program.write_text(ENTRY_MAIN_4)
    out = tmp_path / "r.hlocap"
    assert main(["capture", str(program), "--seed", "1", "--baseline", "-o", str(out)]) == 0
    assert "baseline" in __import__("json").loads((out / "capture.json").read_text())
    assert main(["diff", str(program), "--capture", str(out)]) == 0
    assert "none diverged" in capsys.readouterr().out


def test_capturing_a_function_that_is_not_the_module_main_is_refused_clearly(jax, tmp_path, capsys):
    program = tmp_path / "m.mlir"
    program.write_text(ENTRY_MAIN_4.replace("@main.4", "@main").replace("func.func private @twice", "func.func @twice"))
    assert main(["capture", str(program), "--seed", "1", "--entry", "twice", "-o", str(tmp_path / "r.hlocap")]) == 2
    assert "XLA runs a module's @main; this module has one besides @twice" in capsys.readouterr().err


def test_diff_of_xla_cpu_against_cpu_uses_xla_tolerances_on_either_side(jax, capsys):
    from hlodbg.engine.debug.divergence import default_tolerances
    from hlodbg.engine.debug.difference import XLA_TOLERANCE
    from hlodbg.engine.machine.backend import CPU
    from hlodbg.engine.machine.targets import backend_for
    from .helpers import PROGRAMS, require_shared

    xla = backend_for("xla:cpu")
    assert default_tolerances(xla, CPU) == default_tolerances(CPU, xla) == (XLA_TOLERANCE, 0.0)
    require_shared()
    program, inputs = PROGRAMS / "gpt_tiny.mlir", PROGRAMS / "gpt_tiny.inputs.npz"
    # XLA's f32 dot_general differs from numpy's by ~1e-8 on elements near zero: not a divergence
    assert main(["diff", str(program), "--args", str(inputs), "--target", "xla:cpu", "--against", "cpu"]) == 0
    assert "compared between xla:cpu and cpu (XLA's tolerances" in capsys.readouterr().out


@pytest.mark.parametrize("made_by_user", [False, True])
def test_a_capture_interrupted_while_writing_leaves_no_half_capture(jax, tmp_path, monkeypatch, made_by_user):
    from hlodbg.engine.run import capture_format

    program = tmp_path / "p.mlir"
    program.write_text(FORI)
    out = tmp_path / "run.hlocap"
    if made_by_user:
        out.mkdir()
    real_add = capture_format.CaptureWriter.add

    def add_then_interrupt(self, *args):
        if len(self.rows) == 3:
            raise KeyboardInterrupt  # Ctrl-C while the values are written
        return real_add(self, *args)

    monkeypatch.setattr(capture_format.CaptureWriter, "add", add_then_interrupt)
    assert main(["capture", str(program), "--seed", "1", "-o", str(out)]) == 130
    assert out.exists() == made_by_user and (not made_by_user or not any(out.iterdir()))
    monkeypatch.setattr(capture_format.CaptureWriter, "add", real_add)
    assert main(["capture", str(program), "--seed", "1", "-o", str(out)]) == 0  # the directory is free again


LONG_LOOP = """
func.func @main(%x: tensor<1000xf32>, %n: tensor<i32>) -> tensor<1000xf32> {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %c1 = stablehlo.constant dense<1> : tensor<i32>
  %r:2 = stablehlo.while(%i = %c0, %v = %x) : tensor<i32>, tensor<1000xf32>
    cond {
      %lt = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %lt : tensor<i1>
    } do {
      %i1 = stablehlo.add %i, %c1 : tensor<i32>
      %v1 = stablehlo.sine %v : tensor<1000xf32>
      stablehlo.return %i1, %v1 : tensor<i32>, tensor<1000xf32>
    }
  return %r#1 : tensor<1000xf32>
}
"""


def test_loop_buffers_too_large_for_the_device_are_a_clear_error(jax, tmp_path):
    program = tmp_path / "p.mlir"
    program.write_text(LONG_LOOP)
    np.savez(tmp_path / "in.npz", np.ones(1000, np.float32), np.int32(3))
    done = hlodbg_process("capture", str(program), "--args", str(tmp_path / "in.npz"), "--loop-capacity", "100000000",
                          "-o", str(tmp_path / "r.hlocap"))  # 100M iterations of 4 KB: 400 GB of loop buffers
    assert done.returncode == 2, done.stderr[-2000:]
    assert "RESOURCE_EXHAUSTED" in done.stderr and "lower --loop-capacity" in done.stderr
    assert "internal error" not in done.stderr and not (tmp_path / "r.hlocap").exists()


def test_loop_buffers_too_large_found_only_when_the_run_is_awaited_are_a_clear_error(jax, tmp_path):
    from jax import lax

    def loop(x):  # as JAX lowers it, XLA reports the failed allocation when the results are awaited
        return lax.while_loop(lambda c: c[1] < 3 + (c[0][0] > 1e9), lambda c: (c[0] * 1.5, c[1] + 1), (x, 0))

    x = np.ones(1000, np.float32)
    program = tmp_path / "p.mlir"
    program.write_text(jax.jit(loop).lower(x).as_text())
    np.savez(tmp_path / "in.npz", x)
    done = hlodbg_process("capture", str(program), "--args", str(tmp_path / "in.npz"), "--loop-capacity", "100000000",
                          "-o", str(tmp_path / "r.hlocap"))
    assert done.returncode == 2, done.stderr[-2000:]
    assert "RESOURCE_EXHAUSTED" in done.stderr and "lower --loop-capacity" in done.stderr


def test_memory_on_an_xla_target_adds_xlas_own_figures_for_the_compiled_program(tmp_path, capsys):
    """`hlodbg memory --target xla:cpu`: beside the op-by-op profile, what XLA's buffer assignment
    needs for the whole fused program (temp shrinks when XLA fuses: the mlp's temporaries vanish)."""
    pytest.importorskip("jax")
    import json

    program = tmp_path / "mlp.mlir"
    program.write_text("""
func.func @main(%x: tensor<64x128xf32>, %w: tensor<128x128xf32>) -> tensor<64x128xf32> {
  %0 = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<64x128xf32>, tensor<128x128xf32>) -> tensor<64x128xf32>
  %1 = stablehlo.tanh %0 : tensor<64x128xf32>
  %2 = stablehlo.multiply %1, %1 : tensor<64x128xf32>
  return %2 : tensor<64x128xf32>
}""")
    assert main(["memory", str(program), "--target", "xla:cpu"]) == 0
    text = capsys.readouterr().out
    assert "XLA's compiled program (whole, fused; per device): arguments 96.0 KiB, outputs 32.0 KiB" in text
    assert main(["memory", str(program), "--target", "xla:cpu", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    memory = report["xla_compiled"]["xla_memory"]
    assert memory["argument"] == (64 * 128 + 128 * 128) * 4 and memory["output"] == 64 * 128 * 4
    assert main(["memory", str(program)]) == 0
    assert "XLA's compiled program" not in capsys.readouterr().out  # the emulated cpu has no compiled program
