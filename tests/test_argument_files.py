"""What a user hands hlodbg as arguments, read by name and checked: .npz keys name arguments
(never their place in the file), values that are not numbers are refused, an empty .npz is a
set of no arguments, a global array is cut for a partitioned module, a member's header is
checked before its data is inflated, and numpy's own words never reach the user."""
from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import numpy as np
import pytest

import hlodbg
from hlodbg.cli import main
from hlodbg.engine.machine.process import ProcessId

DATA = Path(__file__).parent / "data"
SUBTRACT = """func.func @main(%x: tensor<2xf32>, %w: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.subtract %x, %w : tensor<2xf32>
  return %0 : tensor<2xf32>
}
"""
# As jax.jit(lambda a, b: a - b).lower(...).as_text() names its parameters: by location.
SUBTRACT_JAX = """module @jit_f {
  func.func public @main(%arg0: tensor<2xf32> loc("a"), %arg1: tensor<2xf32> loc("b")) -> (tensor<2xf32>) {
    %0 = stablehlo.subtract %arg0, %arg1 : tensor<2xf32>
    return %0 : tensor<2xf32>
  }
}
"""
X = np.array([10, 20], np.float32)
W = np.array([1, 2], np.float32)


@pytest.fixture
def subtract(tmp_path):
    path = tmp_path / "xw.mlir"
    path.write_text(SUBTRACT)
    return path


def _run_json(program, capsys, *options) -> dict:
    assert main(["run", str(program), *options, "--json"]) == 0, capsys.readouterr().err
    return json.loads(capsys.readouterr().out)


def _refused(program, capsys, *options) -> str:
    assert main(["run", str(program), *options]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and "internal error" not in err, err
    return err


# -- keys are names -----------------------------------------------------------------------------

def test_npz_keys_name_arguments_whatever_their_order_in_the_file(subtract, tmp_path, capsys):
    named = tmp_path / "xw.npz"
    np.savez(named, w=W, x=X)  # numpy writes w first
    assert _run_json(subtract, capsys, "--args", str(named))["results"][0]["values"] == [9, 18]
    positional = tmp_path / "positional.npz"
    np.savez(positional, X, W)  # arr_0, arr_1
    assert _run_json(subtract, capsys, "--args", str(positional))["results"][0]["values"] == [9, 18]
    numbered = tmp_path / "numbered.npz"
    np.savez(numbered, arg1=W, arg0=X)
    assert _run_json(subtract, capsys, "--args", str(numbered))["results"][0]["values"] == [9, 18]
    # The Python API reads the same keys from a mapping.
    np.testing.assert_array_equal(hlodbg.load(subtract).run(np.load(named))[0], [9, 18])
    np.testing.assert_array_equal(hlodbg.load(subtract).run({"w": W, "x": X})[0], [9, 18])


def test_npz_keys_name_jax_arguments_by_their_locations(tmp_path, capsys):
    program = tmp_path / "jax.mlir"
    program.write_text(SUBTRACT_JAX)
    swapped = tmp_path / "ba.npz"
    np.savez(swapped, b=W, a=X)
    assert _run_json(program, capsys, "--args", str(swapped))["results"][0]["values"] == [9, 18]


def test_every_command_reading_args_reads_keys_by_name(subtract, tmp_path, capsys):
    named = tmp_path / "xw.npz"
    np.savez(named, w=W, x=X)
    out = tmp_path / "graph.json"
    assert main(["export", str(subtract), "-o", str(out), "--values", str(named), "--engine", "layered"]) == 0
    assert main(["explain", str(subtract), "%0", "--args", str(named), "--json"]) == 0
    assert "9" in capsys.readouterr().out
    assert main(["diff", str(subtract), "--args", str(named), "--against", "tpu-v5e", "--json"]) == 0
    from hlodbg.engine.run.interpreter import entry_function
    from hlodbg.execution import gather_arguments

    values, _ = gather_arguments(entry_function(hlodbg.load(subtract).module, "main"), str(named), [], 0)
    np.testing.assert_array_equal(values[0], X)
    np.testing.assert_array_equal(values[1], W)


@pytest.mark.parametrize("arrays, expected", [
    ({"inputs": X}, "key 'inputs' names no argument of @main (its arguments: arg0 (x), arg1 (w))"),
    ({"x": X, "arg0": W}, "keys 'x' and 'arg0' both name argument 0 of @main"),
    ({"arg5": X}, "key 'arg5' is argument 5, but @main takes 2 argument(s)"),
    ({"arr_0": X, "x": W}, "keys 'arr_0' and 'x' both name argument 0"),
])
def test_unknown_or_ambiguous_keys_are_refused_naming_keys_and_arguments(subtract, tmp_path, capsys, arrays,
                                                                         expected):
    path = tmp_path / "bad.npz"
    np.savez(path, **arrays)
    assert expected in _refused(subtract, capsys, "--args", str(path))


def test_a_name_two_arguments_share_is_refused(tmp_path, capsys):
    program = tmp_path / "twice.mlir"
    program.write_text(SUBTRACT_JAX.replace('loc("b")', 'loc("a")'))
    path = tmp_path / "a.npz"
    np.savez(path, a=X)
    assert "key 'a' is the name of arguments 0, 1 of @main" in _refused(program, capsys, "--args", str(path))


# -- not numbers --------------------------------------------------------------------------------

@pytest.mark.parametrize("value, expected", [
    (np.zeros(2, dtype=[("a", "f4"), ("b", "f4")]), "a structured array (fields a, b)"),
    (np.zeros(2, dtype=[("a", "f4")]), "a structured array (fields a)"),
    (np.array(["1", "2"]), "strings (<U1)"),
    (np.array([b"1", b"2"]), "byte strings (|S1)"),
])
def test_records_and_text_are_refused_not_converted(subtract, tmp_path, capsys, value, expected):
    npz, npy = tmp_path / "in.npz", tmp_path / "x.npy"
    np.savez(npz, x=value, w=W)
    np.save(npy, value)
    for options in (("--args", str(npz)), ("--arg", f"0={npy}")):
        err = _refused(subtract, capsys, *options)
        assert f"expected tensor<2xf32> but got {expected}; hlodbg takes arrays of numbers" in err
    with pytest.raises(hlodbg.HlodbgError, match="hlodbg takes arrays of numbers"):
        hlodbg.load(subtract).run(value, W)


def test_ragged_python_data_is_refused_in_words(subtract):
    with pytest.raises(hlodbg.HlodbgError) as caught:
        hlodbg.load(subtract).run([[1.0], [2.0, 3.0]], W)
    assert "not one rectangular array of numbers" in str(caught.value)


# -- an empty .npz ------------------------------------------------------------------------------

def test_an_empty_npz_is_the_arguments_of_a_program_that_takes_none(tmp_path, capsys):
    program = tmp_path / "none.mlir"
    program.write_text("func.func @main() -> tensor<f32> {\n  %0 = stablehlo.constant dense<1.0> : tensor<f32>\n"
                       "  return %0 : tensor<f32>\n}\n")
    empty = tmp_path / "empty.npz"
    np.savez(empty)
    assert _run_json(program, capsys, "--args", str(empty))["results"][0]["values"] == [1.0]


def test_an_empty_npz_for_a_program_with_arguments_says_what_it_takes(subtract, tmp_path, capsys):
    empty = tmp_path / "empty.npz"
    np.savez(empty)
    err = _refused(subtract, capsys, "--args", str(empty))
    assert "holds no arrays, but @main takes 2 argument(s): arg0 (x), arg1 (w)" in err


# -- our words, not numpy's ---------------------------------------------------------------------

def test_a_negative_seed_is_said_to_be_one(subtract, capsys):
    with pytest.raises(SystemExit) as exit_status:
        main(["run", str(subtract), "--seed", "-1"])
    assert exit_status.value.code == 2
    err = capsys.readouterr().err
    assert "argument --seed: '-1' is not a seed: give a whole number, 0 or more" in err and "argument 0" not in err
    with pytest.raises(hlodbg.HlodbgError, match="a seed is a whole number, 0 or more"):
        hlodbg.load(subtract).run(seed=-1)


@pytest.mark.parametrize("shape", ["99999999999999999999", "9223372036854775807", "100000x100000x100000"])
def test_an_argument_too_large_to_make_at_random_is_said_so(tmp_path, capsys, shape):
    program = tmp_path / "huge.mlir"
    program.write_text(f"func.func @main(%x: tensor<{shape}xf32>) -> tensor<{shape}xf32> {{\n"
                       f"  return %x : tensor<{shape}xf32>\n}}\n")
    err = _refused(program, capsys)
    assert "argument 0: tensor<" in err and "so it cannot be made at random; pass it with --arg 0=FILE.npy" in err
    assert "Maximum allowed dimension" not in err and "arr.size" not in err
    scalar = tmp_path / "scalar.npy"
    np.save(scalar, np.float32(1))
    assert f"argument 0: expected tensor<{shape}xf32> but got shape scalar" in _refused(program, capsys, "--arg",
                                                                                       f"0={scalar}")


# -- a compressed member is checked before it is inflated ---------------------------------------

def _header_only_member(path: Path, key: str, shape: tuple[int, ...]) -> None:
    """A compressed .npz member whose header claims `shape` of f32 but whose data is a few bytes:
    reading it inflates it to its end and finds it cut short; its header alone says it is wrong."""
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, {"descr": "<f4", "fortran_order": False, "shape": shape})
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(f"{key}.npy", header.getvalue() + bytes(64))


def test_a_member_claiming_another_shape_is_refused_from_its_header(subtract, tmp_path, capsys):
    bomb = tmp_path / "bomb.npz"
    _header_only_member(bomb, "x", (750000, 1000))
    err = _refused(subtract, capsys, "--args", str(bomb))
    assert "key 'x': argument 0: expected tensor<2xf32> but got shape 750000x1000 (2,861 MiB, left unread)" in err


# -- a global array for a partitioned module ----------------------------------------------------

def test_a_global_array_is_cut_by_the_parameter_sharding(tmp_path, capsys):
    """XLA's post-optimization SPMD module (jax.jit(lambda a, b: tanh(a) * 2 + b, in_shardings=
    (P('x', None), P())) on 4 devices): parameter 0 is each device's 2x16 tile of an 8x16 value."""
    a = np.arange(128, dtype=np.float32).reshape(8, 16) / 100
    b = np.ones((8, 16), np.float32)
    args = tmp_path / "global.npz"
    np.savez(args, arg0=a, arg1=b)
    out = tmp_path / "out.npz"
    assert main(["run", str(DATA / "shard_post.hlo"), "--args", str(args), "--out", str(out)]) == 0
    saved = np.load(out)
    for partition in range(4):
        rows = slice(2 * partition, 2 * partition + 2)
        np.testing.assert_allclose(saved[f"result0@0,{partition}"], np.tanh(a[rows]) * 2 + b[:2], rtol=1e-6)
    results = hlodbg.load(DATA / "shard_post.hlo").run(a, b)
    np.testing.assert_allclose(results[ProcessId(0, 3)][0], np.tanh(a[6:]) * 2 + b[:2], rtol=1e-6)


def test_a_global_array_the_sharding_does_not_explain_says_how_to_give_tiles(tmp_path, capsys):
    args = tmp_path / "wrong.npz"
    np.savez(args, arg0=np.zeros((5, 5), np.float32))
    err = _refused(DATA / "shard_post.hlo", capsys, "--args", str(args))
    assert "expected tensor<2x16xf32> but got shape 5x5" in err
    assert "arg0@R,P" in err and "--args-per-device" in err


def test_an_arg_past_the_last_argument_names_the_option(subtract, tmp_path, capsys):
    np.save(tmp_path / "x.npy", X)
    err = _refused(subtract, capsys, "--arg", f"5={tmp_path / 'x.npy'}")
    assert f"--arg 5={tmp_path / 'x.npy'}: argument 5 given, but the function takes 2 argument(s)" in err
