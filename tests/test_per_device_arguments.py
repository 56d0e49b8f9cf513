"""Per-device arguments on a grid: `NAME@R,P` keys in --args, --args-per-device DIR, and the API's
per_device / {ProcessId: args}, so an all_reduce demo holds different data on every device."""
from __future__ import annotations

import numpy as np
import pytest

import hlodbg
from hlodbg.cli import main
from hlodbg.engine.machine.process import ProcessId
from hlodbg.engine.run.arguments import ArgumentError

# A 2x1 grid: every device sums its operand with the other's (all_reduce) and keeps its own too.
SUM = """
module attributes {mhlo.num_replicas = 2 : i32, mhlo.num_partitions = 1 : i32} {
  func.func @main(%x: tensor<2xf32>, %y: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
    %s = "stablehlo.all_reduce"(%x) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %c = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %c : tensor<f32>
    }) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<2xf32>) -> tensor<2xf32>
    %t = stablehlo.add %x, %y : tensor<2xf32>
    return %s, %t : tensor<2xf32>, tensor<2xf32>
  }
}
"""
A = np.array([1.0, 2.0], np.float32)
B = np.array([10.0, 20.0], np.float32)
Y = np.array([100.0, 100.0], np.float32)


@pytest.fixture
def program_file(tmp_path):
    path = tmp_path / "sum.mlir"
    path.write_text(SUM)
    return path


def run_saved(program_file, tmp_path, *options):
    out = tmp_path / "out.npz"
    assert main(["run", str(program_file), *options, "--out", str(out)]) == 0
    return np.load(out)


def test_device_keys_give_each_device_its_own_value(program_file, tmp_path):
    args = tmp_path / "in.npz"
    np.savez(args, **{"arg0@0,0": A, "arg0@1,0": B, "arg1": Y})
    data = run_saved(program_file, tmp_path, "--args", str(args))
    np.testing.assert_array_equal(data["result0@0,0"], A + B)
    np.testing.assert_array_equal(data["result0@1,0"], A + B)
    np.testing.assert_array_equal(data["result1@0,0"], A + Y)
    np.testing.assert_array_equal(data["result1@1,0"], B + Y)


def test_a_plain_key_is_every_other_devices_value(program_file, tmp_path):
    args = tmp_path / "in.npz"
    np.savez(args, **{"arg0": A, "arg0@1,0": B, "arg1": Y})
    data = run_saved(program_file, tmp_path, "--args", str(args))
    np.testing.assert_array_equal(data["result1@0,0"], A + Y)
    np.testing.assert_array_equal(data["result1@1,0"], B + Y)


def test_args_per_device_directory_falls_back_to_args(program_file, tmp_path):
    folder = tmp_path / "devices"
    folder.mkdir()
    np.savez(folder / "device_1_0.npz", arg0=B)  # device 0,0 has no file: it takes --args
    shared = tmp_path / "shared.npz"
    np.savez(shared, arg0=A, arg1=Y)
    data = run_saved(program_file, tmp_path, "--args", str(shared), "--args-per-device", str(folder))
    np.testing.assert_array_equal(data["result0@0,0"], A + B)
    np.testing.assert_array_equal(data["result1@1,0"], B + Y)


def bad_run(program_file, capsys, *options) -> str:
    assert main(["run", str(program_file), *options]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return err


def test_bad_per_device_input_gets_a_clear_message(program_file, tmp_path, capsys):
    cases = {
        "unknown": ({"arg0@2,0": A}, "key 'arg0@2,0' is for device 2,0, but the grid is 2x1: devices 0,0 1,0"),
        "syntax": ({"arg0@1": A}, "key 'arg0@1' does not name a device: write NAME@REPLICA,PARTITION"),
        "shape": ({"arg0@1,0": np.zeros(3, np.float32)},
                  "key 'arg0@1,0' (argument 0 of device 1,0)"),
        "position": ({"arg5@1,0": A}, "key 'arg5@1,0' is argument 5, but @main takes 2 argument(s)"),
    }
    for name, (arrays, message) in cases.items():
        path = tmp_path / f"{name}.npz"
        np.savez(path, **arrays)
        err = bad_run(program_file, capsys, "--args", str(path))
        assert message in err, (name, err)
    folder = tmp_path / "devices"
    folder.mkdir()
    assert "holds no .npz files" in bad_run(program_file, capsys, "--args-per-device", str(folder))
    np.savez(folder / "device_3_0.npz", arg0=A)
    assert "device_3_0.npz key 'arg0' is for device 3,0, but the grid is 2x1" in bad_run(
        program_file, capsys, "--args-per-device", str(folder))
    (folder / "device_3_0.npz").unlink()
    np.savez(folder / "replica1.npz", arg0=A)
    assert "replica1.npz is not named device_R_P.npz" in bad_run(program_file, capsys, "--args-per-device", str(folder))
    (folder / "replica1.npz").unlink()
    np.savez(folder / "device_1_0.npz", **{"arg0@0,0": A})
    assert "names a device, but the file is device 1,0's own" in bad_run(program_file, capsys, "--args-per-device", str(folder))
    assert "does not exist" in bad_run(program_file, capsys, "--args-per-device", str(tmp_path / "nowhere"))


def test_open_reads_per_device_arguments_into_the_grid_session(program_file, tmp_path):
    from hlodbg.ui_entry import build_app, serve_command
    from hlodbg.cli import _parser

    args_file = tmp_path / "in.npz"
    np.savez(args_file, **{"arg0@0,0": A, "arg0@1,0": B})
    args = _parser().parse_args(["open", str(program_file), "--args", str(args_file), "--no-save"])
    app = build_app(args)
    assert app.error is None
    given = app.options["args"]()  # read on a thread while the app starts
    np.testing.assert_array_equal(given[ProcessId(1, 0)][0], B)
    serve = _parser().parse_args(["serve", str(program_file), "--args-per-device", str(tmp_path)])
    command = serve_command(serve)
    assert command[command.index("--args-per-device") + 1] == str(tmp_path)


def test_api_run_and_debug_take_per_device_arguments():
    program = hlodbg.load(SUM)
    results = program.run(A, Y, per_device={(1, 0): [B]})
    np.testing.assert_array_equal(results[ProcessId(1, 0)][0], A + B)
    np.testing.assert_array_equal(results[ProcessId(1, 0)][1], B + Y)
    np.testing.assert_array_equal(results[ProcessId(0, 0)][1], A + Y)
    target = program.debug({0: A, 1: Y, ProcessId(1, 0): {0: B}}, persist=False)
    target.continue_()
    all_reduce = program.module.function("main").body.operations[0]
    seen = {v.process: (np.asarray(v.inputs[0]), np.asarray(v.outputs[0])) for v in target.values_of(all_reduce)}
    np.testing.assert_array_equal(seen[ProcessId(0, 0)][0], A)
    np.testing.assert_array_equal(seen[ProcessId(1, 0)][0], B)
    np.testing.assert_array_equal(seen[ProcessId(0, 0)][1], A + B)
    with pytest.raises(ArgumentError, match="is for device 5,0, but the grid is 2x1"):
        program.run(A, Y, per_device={ProcessId(5, 0): [B]})
    with pytest.raises(ArgumentError, match="keyed by ProcessId"):
        program.run(A, Y, per_device={(1,): [B]})


def test_a_grid_target_answers_provenance_questions_with_each_devices_data():
    from hlodbg.engine.ops.provenance import provenance, reach

    program = hlodbg.load(SUM)
    target = program.debug({0: A, 1: Y, ProcessId(1, 0): {0: B}}, persist=False)
    target.continue_()
    all_reduce = program.module.function("main").body.operations[0]
    peers = target.peer_values(all_reduce)
    operands, results = peers(ProcessId(1, 0))
    answer = provenance(all_reduce, (1,), operands=operands, results=results, process=ProcessId(1, 0), peer_values=peers)
    assert [(s.device, s.index) for s in answer.sources] == [(ProcessId(0, 0), (1,)), (ProcessId(1, 0), (1,))]
    assert [float(peers(s.device)[0][0][s.index]) for s in answer.sources] == [2.0, 20.0]
    reached = reach(all_reduce, 0, (0,), operands=operands, results=results, process=ProcessId(1, 0),
                    peer_values=peers, device=ProcessId(1, 0))
    assert sorted((x.device.replica_id, x.index) for x in reached) == [(0, (0,)), (1, (0,))]
