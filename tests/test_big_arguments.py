"""Big arguments stay in their files: .npy and stored .npz members are memory-mapped (read-only,
never copied on the way to the interpreter), a directory of NAME.npy files is an argument set,
and a run never writes its arguments."""
from __future__ import annotations

import zipfile

import numpy as np
import pytest

import hlodbg
from hlodbg.argument_files import load_npy, read_npz, save_npz
from hlodbg.cli import main
from hlodbg.engine import ExecutionError
from hlodbg.engine.run.interpreter import entry_function
from hlodbg.execution import gather_arguments

# Ops that could be tempted to update an operand in place: each must leave the argument as it was.
PROGRAM = """func.func @main(%w: tensor<8x6xf32>, %i: tensor<i32>) -> (tensor<f32>, tensor<8x6xf32>, tensor<8x6xf32>) {
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %s = stablehlo.reduce(%w init: %z) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x6xf32>, tensor<f32>) -> tensor<f32>
  %row = stablehlo.constant dense<7.0> : tensor<1x6xf32>
  %u = stablehlo.dynamic_update_slice %w, %row, %i, %i : (tensor<8x6xf32>, tensor<1x6xf32>, tensor<i32>, tensor<i32>) -> tensor<8x6xf32>
  %sorted = "stablehlo.sort"(%w) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %lt = stablehlo.compare LT, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  }) {dimension = 1 : i64, is_stable = true} : (tensor<8x6xf32>) -> tensor<8x6xf32>
  return %s, %u, %sorted : tensor<f32>, tensor<8x6xf32>, tensor<8x6xf32>
}
"""
WEIGHTS = np.random.default_rng(1).standard_normal((8, 6)).astype(np.float32)
INDEX = np.array(2, np.int32)


@pytest.fixture()
def program(tmp_path):
    path = tmp_path / "big.mlir"
    path.write_text(PROGRAM)
    return path


def _mapped_from(array: np.ndarray, path) -> bool:
    """`array` reads the file at `path` itself: a view whose base chain ends in a map of it."""
    while array is not None and not isinstance(array, np.memmap):
        array = array.base if isinstance(array.base, np.ndarray) else None
    return array is not None and str(array.filename) == str(path)


def _arguments(program_path, npz_path=None, specs=()):
    function = entry_function(hlodbg.load(program_path).module, "main")
    values, _ = gather_arguments(function, npz_path, list(specs), 0, quiet=True)
    return values


def test_an_npy_argument_is_mapped_read_only_and_reaches_the_interpreter_uncopied(program, tmp_path):
    path = tmp_path / "w.npy"
    np.save(path, WEIGHTS)
    loaded = load_npy(str(path))
    assert isinstance(loaded, np.memmap) and not loaded.flags.writeable
    values = _arguments(program, specs=[f"0={path}"])
    assert _mapped_from(values[0], path)
    session = hlodbg.load(program).session(values, persist=False)
    assert _mapped_from(session.args[0], path) and not session.args[0].flags.writeable
    session.close()


def test_stored_npz_members_are_mapped_where_aligned_and_read_otherwise(tmp_path):
    aligned = tmp_path / "aligned.npz"
    save_npz(str(aligned), {"arg0": WEIGHTS, "arg1": INDEX})
    arrays = read_npz(str(aligned))
    assert all(isinstance(a, np.memmap) and not a.flags.writeable for a in arrays.values())
    np.testing.assert_array_equal(arrays["arg0"], WEIGHTS)
    # numpy.savez puts members wherever their names end: an unaligned one is read (never mapped
    # unaligned: numpy would sum it through buffers, in another order).
    plain, packed = tmp_path / "plain.npz", tmp_path / "packed.npz"
    np.savez(plain, arg0=WEIGHTS, arg1=INDEX)
    np.savez_compressed(packed, arg0=WEIGHTS, arg1=INDEX)
    for path in (plain, packed):
        for key, array in read_npz(str(path)).items():
            assert array.flags.aligned and not array.flags.writeable
            np.testing.assert_array_equal(array, {"arg0": WEIGHTS, "arg1": INDEX}[key])
    assert not any(isinstance(a, np.memmap) for a in read_npz(str(packed)).values())


def test_mapped_npy_and_npz_arguments_give_the_results_of_in_memory_ones(program, tmp_path, capsys):
    expected = hlodbg.load(program).run(WEIGHTS.copy(), INDEX.copy())
    npy, npz = tmp_path / "w.npy", tmp_path / "in.npz"
    np.save(npy, WEIGHTS)
    np.save(tmp_path / "i.npy", INDEX)
    save_npz(str(npz), {"arg0": WEIGHTS, "arg1": INDEX})
    before = npy.read_bytes(), npz.read_bytes()
    for values in (_arguments(program, specs=[f"0={npy}", f"1={tmp_path / 'i.npy'}"]), _arguments(program, str(npz))):
        assert _mapped_from(values[0], npy) or _mapped_from(values[0], npz)
        for got, want in zip(hlodbg.load(program).run(*values), expected):
            np.testing.assert_array_equal(got, want)
        session = hlodbg.load(program).session(values, persist=False)  # the recording interpreter too
        session.continue_()
        for got, want in zip(session.results, expected):
            np.testing.assert_array_equal(got, want)
        session.close()
    assert (npy.read_bytes(), npz.read_bytes()) == before  # arguments are never written
    np.testing.assert_array_equal(expected[1][2], np.full(6, 7.0, np.float32))  # the update happened, on a copy


def test_a_run_never_writes_an_argument_given_from_python(program):
    weights = WEIGHTS.copy()
    hlodbg.load(program).run(weights, INDEX)
    np.testing.assert_array_equal(weights, WEIGHTS)
    assert weights.flags.writeable  # the caller's array is left as it was given


def test_a_directory_of_npy_files_names_arguments_by_position_or_name(program, tmp_path, capsys):
    folder = tmp_path / "args"
    folder.mkdir()
    np.save(folder / "w.npy", WEIGHTS)  # the argument's name in the program
    np.save(folder / "arg1.npy", INDEX)  # its position
    values = _arguments(program, str(folder))
    assert _mapped_from(values[0], folder / "w.npy")
    np.testing.assert_array_equal(values[1], INDEX)
    out = tmp_path / "out.npz"
    assert main(["run", str(program), "--args", str(folder), "--out", str(out)]) == 0
    assert "random" not in capsys.readouterr().err
    np.testing.assert_array_equal(np.load(out)["result1"][2], np.full(6, 7.0, np.float32))


def test_args_directory_errors_name_the_file(program, tmp_path, capsys):
    folder = tmp_path / "args"
    folder.mkdir()
    assert main(["run", str(program), "--args", str(folder)]) == 2
    assert "holds no .npy files" in capsys.readouterr().err
    np.save(folder / "weights.npy", WEIGHTS)
    assert main(["run", str(program), "--args", str(folder)]) == 2
    err = capsys.readouterr().err
    assert "weights.npy names no argument of @main (its arguments: arg0 (w), arg1 (i))" in err
    (folder / "weights.npy").unlink()
    np.save(folder / "w.npy", np.zeros((3, 3), np.float32))
    assert main(["run", str(program), "--args", str(folder)]) == 2
    err = capsys.readouterr().err
    assert "w.npy" in err and "expected tensor<8x6xf32> but got shape 3x3" in err


def test_results_saved_by_run_map_when_given_back(program, tmp_path, capsys):
    out = tmp_path / "out.npz"
    assert main(["run", str(program), "--out", str(out)]) == 0
    assert all(isinstance(a, np.memmap) for a in read_npz(str(out)).values())
    with zipfile.ZipFile(out) as archive:  # still a plain .npz for numpy
        assert [i.filename for i in archive.infolist()] == ["result0.npy", "result1.npy", "result2.npy"]
    assert set(np.load(out).files) == {"result0", "result1", "result2"}


def test_a_damaged_mapped_member_is_a_clear_error(program, tmp_path, capsys):
    path = tmp_path / "in.npz"
    save_npz(str(path), {"arg0": WEIGHTS})
    data = bytearray(path.read_bytes())
    at = data.index(b"\x93NUMPY")
    data[at:at + 6] = b"XXXXXX"  # the member's own header
    path.write_bytes(bytes(data))
    with pytest.raises(ExecutionError, match="arg0 is damaged or truncated"):
        read_npz(str(path))


def test_a_large_member_that_cannot_be_mapped_says_why(tmp_path, capsys, monkeypatch):
    import hlodbg.argument_files as argument_files

    monkeypatch.setattr(argument_files, "READ_NOTE_BYTES", 0)  # every member counts as large
    packed, plain = tmp_path / "packed.npz", tmp_path / "plain.npz"
    np.savez_compressed(packed, arg0=WEIGHTS)
    read_npz(str(packed))
    err = capsys.readouterr().err
    assert "arg0 is read into memory" in err and "not mapped from the file: it is compressed" in err
    with open(plain, "wb") as handle:
        np.savez(handle, arg0=WEIGHTS)  # arg0's data lands at byte 186: not a multiple of 4
    read_npz(str(plain))
    assert "its float32 elements start at byte 186, not a multiple of 4" in capsys.readouterr().err
    save_npz(str(plain), {"arg0": WEIGHTS})
    read_npz(str(plain))
    assert capsys.readouterr().err == ""  # mapped: nothing to say


def test_per_device_files_are_mapped_too(program, tmp_path):
    from hlodbg.argument_files import add_device_directory
    from hlodbg.engine.machine.process import ProcessId
    from hlodbg.engine.run.arguments import DeviceArguments

    folder = tmp_path / "devices"
    folder.mkdir()
    save_npz(str(folder / "device_0_1.npz"), {"arg0": WEIGHTS})
    given = DeviceArguments()
    add_device_directory(given, str(folder), entry_function(hlodbg.load(program).module, "main"))
    own = given.own[ProcessId(0, 1)][0]
    assert _mapped_from(own, folder / "device_0_1.npz") and not own.flags.writeable


def test_unaligned_stored_members_of_any_layout_read_back_exactly(tmp_path):
    import ml_dtypes

    arrays = {"f": np.asfortranarray(WEIGHTS.astype(np.complex128)), "b": WEIGHTS.astype(ml_dtypes.bfloat16),
              "s": np.array(3.5, np.float64), "e": np.zeros((0, 4), np.float32)}
    path = tmp_path / "plain.npz"
    np.savez(path, **arrays)
    for key, array in read_npz(str(path)).items():
        want = arrays[key]
        assert array.shape == want.shape and array.flags.aligned and not array.flags.writeable
        np.testing.assert_array_equal(array.view(want.dtype) if array.dtype.kind == "V" else array, want)


def test_run_says_when_a_results_mean_is_sampled(program, capsys, monkeypatch):
    import json

    from hlodbg.engine.debug import summary

    monkeypatch.setattr(summary, "SAMPLE_ABOVE", 10)  # 48-element results count as big
    assert main(["run", str(program), "--json"]) == 0
    results = json.loads(capsys.readouterr().out)["results"]
    assert [r.get("sampled") for r in results] == [None, 10, 10]
    assert main(["run", str(program)]) == 0
    out = capsys.readouterr().out
    assert "mean ≈" in out and "(mean ≈ sampled 10 of 48)" in out


def test_an_argument_converted_in_memory_is_said_to_be_a_copy(program, tmp_path, capsys, monkeypatch):
    import hlodbg.argument_files as argument_files

    monkeypatch.setattr(argument_files, "READ_NOTE_BYTES", 0)
    np.save(tmp_path / "w64.npy", WEIGHTS.astype(np.float64))  # the program takes f32
    np.save(tmp_path / "w32.npy", WEIGHTS)
    assert main(["run", str(program), "--arg", f"0={tmp_path / 'w32.npy'}"]) == 0
    assert "converted" not in capsys.readouterr().err
    assert main(["run", str(program), "--arg", f"0={tmp_path / 'w64.npy'}"]) == 0
    assert "w64.npy: its float64 data is converted to float32 in memory" in capsys.readouterr().err


def _unaligned_npz(path) -> None:
    """An .npz as numpy.savez writes it, whose f32 member starts off a 4-byte boundary."""
    from hlodbg.argument_files import npz_members

    np.savez(path, arg0=WEIGHTS, arg1=INDEX)
    with zipfile.ZipFile(path) as archive:
        member = next(m for m in npz_members(str(path), archive) if m.key == "arg0")
    if member.data_offset % 4 == 0:
        pytest.skip("this numpy.savez aligned the member")


def test_members_read_ahead_are_the_members_read_once_and_only_from_the_same_file(program, tmp_path):
    """The debugger reads an .npz's unaligned members while the program is parsed: each is the
    member as read after, taken once; a file rewritten since is read again, not taken stale."""
    from hlodbg.argument_files import ReadAhead, npz_members

    path = tmp_path / "plain.npz"
    _unaligned_npz(path)
    function = entry_function(hlodbg.load(program).module, "main")
    ahead = ReadAhead(str(path))
    values, _ = gather_arguments(function, str(path), [], 0, quiet=True, ahead=ahead)
    np.testing.assert_array_equal(values[0], WEIGHTS)
    assert values[0].flags.aligned and not values[0].flags.writeable
    with zipfile.ZipFile(path) as archive:
        member = next(m for m in npz_members(str(path), archive) if m.key == "arg0")
    assert ahead.take(member) is None  # handed out once
    stale = ReadAhead(str(path))
    stale._done.wait()
    assert "arg0" in stale._arrays
    np.savez(path, arg0=WEIGHTS + 1, arg1=INDEX)
    values, _ = gather_arguments(function, str(path), [], 0, quiet=True, ahead=stale)
    np.testing.assert_array_equal(values[0], WEIGHTS + 1)
