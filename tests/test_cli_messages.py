"""Messages people read say what is wrong in their words: argument files that are not what
--args/--arg expect, split files, moves. No Python names (load_all, allow_pickle, continue_)."""
from __future__ import annotations

import pickle
import zipfile
from pathlib import Path

import numpy as np
import pytest

from hlodbg.cli import main
from hlodbg.engine.debug.target import MOVES, move_words

NAN_PROGRAM = Path(__file__).parent / "data" / "nan_in_loop.mlir"
PYTHON_WORDS = ("allow_pickle", "pickle.load", "load_all", "Error:", "Traceback", "np.bytes_", "keyword argument")


def _write(kind: str, path: Path) -> Path:
    """An argument file of one of the kinds people hand to --args/--arg by mistake."""
    four = np.full(4, 100, np.float32)
    if kind == "text":
        path.write_text("arg0 = [1, 2, 3, 4]\n")
    elif kind == "empty":
        path.write_bytes(b"")
    elif kind == "npy":
        with open(path, "wb") as handle:
            np.save(handle, four)
    elif kind == "npz":
        with open(path, "wb") as handle:
            np.savez(handle, arg0=four)
    elif kind == "truncated npz":
        with open(path, "wb") as handle:
            np.savez(handle, arg0=four)
        path.write_bytes(path.read_bytes()[:60])
    elif kind == "truncated npy":
        with open(path, "wb") as handle:
            np.save(handle, four)
        path.write_bytes(path.read_bytes()[:20])
    elif kind == "pickle":
        path.write_bytes(pickle.dumps([1.0, 2.0]))
    elif kind == "object npz":
        with open(path, "wb") as handle:
            np.savez(handle, arg0=np.array([{"a": 1}], dtype=object))
    elif kind == "object npy":
        with open(path, "wb") as handle:
            np.save(handle, np.array([{"a": 1}], dtype=object), allow_pickle=True)
    elif kind == "other zip":
        with zipfile.ZipFile(path, "w") as archive:
            archive.writestr("readme.txt", "hello")
    elif kind == "directory":
        path.mkdir()
    return path


def _assert_refused_in_words(capsys, option: str, value: str, expected: str) -> None:
    """`hlodbg run` given `option value` stops with exit code 2 and a message that says `expected`,
    names the option, and holds no Python names."""
    assert main(["run", str(NAN_PROGRAM), option, value]) == 2
    err = capsys.readouterr().err
    assert expected in err and option in err
    assert not any(word in err for word in PYTHON_WORDS), err


@pytest.mark.parametrize("kind,expected", [
    ("text", "is not an .npz file; an .npz file holds the arguments as arg0, arg1, ..."),
    ("empty", "is empty; an .npz file holds the arguments as arg0, arg1, ..."),
    ("npy", "holds a single array (.npy): give it with --arg N="),
    ("pickle", "is not an .npz file"),
    ("truncated npz", "the archive is damaged or truncated"),
    ("object npz", "arg0 holds Python objects, not numbers; hlodbg reads numeric arrays only"),
    ("other zip", "readme.txt is not an array (.npy) but some other file"),
    ("directory", "holds no .npy files; a directory of arguments holds one NAME.npy per argument"),
    ("missing", "--args: no such file:"),
])
def test_args_files_that_are_not_npz_are_said_so(tmp_path, capsys, kind, expected):
    path = _write(kind, tmp_path / "in.npz")
    _assert_refused_in_words(capsys, "--args", str(path), expected)


@pytest.mark.parametrize("kind,expected", [
    ("text", "is not an .npy file; --arg N=FILE takes one array in an .npy file"),
    ("npz", "is an .npz archive of several arrays: give it with --args"),
    ("truncated npy", "the array is damaged or truncated"),
    ("pickle", "is not an .npy file"),
    ("object npy", "the array holds Python objects, not numbers"),
    ("empty", "is empty"),
])
def test_arg_files_that_are_not_npy_are_said_so(tmp_path, capsys, kind, expected):
    path = _write(kind, tmp_path / "x.npy")
    _assert_refused_in_words(capsys, "--arg", f"0={path}", expected)


def test_good_argument_files_still_run(tmp_path, capsys):
    npz, npy = _write("npz", tmp_path / "in.npz"), _write("npy", tmp_path / "x.npy")
    assert main(["run", str(NAN_PROGRAM), "--args", str(npz)]) == 0
    assert main(["run", str(NAN_PROGRAM), "--arg", f"0={npy}"]) == 0


def test_a_split_file_names_the_option_to_pick_a_module(tmp_path, capsys):
    path = tmp_path / "split.mlir"
    path.write_text("func.func @a() {\n  return\n}\n// -----\nfunc.func @b() {\n  return\n}\n")
    assert main(["run", str(path)]) == 2
    err = capsys.readouterr().err
    assert "choose one with --chunk K (K from 0 to 1" in err and "load_all" not in err


def test_moves_are_named_as_people_say_them():
    assert move_words("continue_") == "continue" and move_words("step_in") == "step in"
    assert all("_" not in move_words(name) for name in MOVES)


def test_an_option_of_open_first_opens_as_the_program_would(tmp_path, capsys):
    """`hlodbg --no-save prog.mlir` is `hlodbg open --no-save prog.mlir`, as `hlodbg prog.mlir` is
    `hlodbg open prog.mlir`; hlodbg's own --version and --help stay its own."""
    missing = tmp_path / "missing.mlir"
    assert main(["--no-save", str(missing)]) == 2
    err = capsys.readouterr().err
    assert "missing.mlir" in err and "unrecognized arguments" not in err
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0 and "hlodbg" in capsys.readouterr().out
