"""Files that are not what they claim: a capture whose index or links lead out of it, damaged
manifests, and named pipes or devices given as a program, an argument or a captured value. Each
is refused with a message, never read, waited on or looped over."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import hlodbg
from hlodbg.cli import main
from hlodbg.engine.run.capture_format import INDEX, MANIFEST

from .capture_helpers import write_capture

DATA = Path(__file__).resolve().parent / "data"
LOOP = DATA / "capture_loop.mlir"
X = np.array([1.0, -2.0, 3.0, 0.5], np.float32)
SUBTRACT = """func.func @main(%x: tensor<2xf32>, %w: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.subtract %x, %w : tensor<2xf32>
  return %0 : tensor<2xf32>
}
"""
# A hung read is a failure, not a stuck test run: the CLI runs in a process given this long.
HANG_GUARD_SECONDS = 120


def _capture(tmp_path: Path) -> Path:
    return write_capture(hlodbg.load(LOOP).module, LOOP.read_text(), [X], tmp_path / "run.hlocap")


def _refused(capsys, *argv) -> str:
    assert main([str(a) for a in argv]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and "internal error" not in err, err
    return err


def _cli(*argv, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "hlodbg", *map(str, argv)], capture_output=True, text=True,
                          timeout=HANG_GUARD_SECONDS, cwd=cwd)


def _first_value(directory: Path) -> tuple[str, str]:
    """(file, the index line naming it) of the capture's first float32 4-element value."""
    for line in (directory / INDEX).read_text().splitlines()[1:]:
        if ",4,float32," in line:
            return line.rsplit(",", 1)[1], line
    raise AssertionError("no 4-element value in the capture")


# -- a capture's files stay inside it -----------------------------------------------------------

@pytest.mark.parametrize("outside", ["../outside.npy", "ABSOLUTE"])
def test_an_index_naming_a_file_outside_the_capture_is_refused(tmp_path, capsys, outside):
    directory = _capture(tmp_path)
    np.save(tmp_path / "outside.npy", X)
    name = str(tmp_path / "outside.npy") if outside == "ABSOLUTE" else outside
    file, line = _first_value(directory)
    index = directory / INDEX
    index.write_text(index.read_text().replace(line, line.replace(file, name)))
    err = _refused(capsys, "run", LOOP, "--capture", directory)
    assert f"the file {name!r} lies outside the capture" in err


def test_a_captured_value_linked_to_a_file_outside_the_capture_is_refused(tmp_path, capsys):
    directory = _capture(tmp_path)
    np.save(tmp_path / "outside.npy", X)
    file, _ = _first_value(directory)
    (directory / file).unlink()
    (directory / file).symlink_to(tmp_path / "outside.npy")
    err = _refused(capsys, "run", LOOP, "--capture", directory)
    assert f"{file!r} lies outside the capture" in err


def test_a_manifest_linked_outside_the_capture_is_refused(tmp_path, capsys):
    directory = _capture(tmp_path)
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text((directory / MANIFEST).read_text())
    (directory / MANIFEST).unlink()
    (directory / MANIFEST).symlink_to(elsewhere)
    assert "'capture.json' lies outside the capture" in _refused(capsys, "run", LOOP, "--capture", directory)


# -- damaged manifests --------------------------------------------------------------------------

@pytest.mark.parametrize("field, value, expected", [
    ("grid", "ab", '"grid" is "ab"; it is [replicas, partitions]'),
    ("grid", [0, 1], '"grid" is [0, 1]'),
    ("grid", [100000, 100000], "at most 65,536 devices"),
    ("input_dtypes", ["float99"], "'float99' is no dtype hlodbg knows"),
    ("input_dtypes", "float32", '"input_dtypes" is "float32"'),
    ("devices", [{"kind": "cpu"}], '"devices" is [{"kind": "cpu"}]'),
    ("hosts", 1e9, '"hosts" is 1000000000.0'),
])
def test_a_damaged_manifest_is_said_to_be(tmp_path, capsys, field, value, expected):
    directory = _capture(tmp_path)
    manifest = json.loads((directory / MANIFEST).read_text())
    manifest[field] = value
    (directory / MANIFEST).write_text(json.dumps(manifest))
    err = _refused(capsys, "run", LOOP, "--capture", directory)
    assert expected in err and "the capture is damaged" in err


def test_merge_checks_the_host_count_before_looking_for_indexes(tmp_path, capsys):
    directory = _capture(tmp_path)
    manifest = json.loads((directory / MANIFEST).read_text())
    for hosts, expected in ((10**9, '"hosts" is 1000000000; it is how many hosts wrote the capture'),
                            (40, "host(s) 0, 1, 2, 3, 4, 5, 6, 7 and 32 more of 40 wrote no index yet")):
        (directory / MANIFEST).write_text(json.dumps({**manifest, "hosts": hosts}))
        assert expected in _refused(capsys, "capture", "--merge", directory)


def test_merge_joins_checked_rows(tmp_path, capsys):
    directory = _capture(tmp_path)
    (directory / INDEX).rename(directory / "index-host0.csv")
    rows = (directory / "index-host0.csv").read_text().splitlines()
    assert main(["capture", "--merge", str(directory)]) == 0
    assert sorted((directory / INDEX).read_text().splitlines()[1:]) == sorted(rows[1:])
    index = directory / "index-host0.csv"
    _, line = _first_value(directory)
    index.write_text(index.read_text().replace(line, line.replace(",float32,", ",object,")))
    assert "'object' is no dtype hlodbg knows" in _refused(capsys, "capture", "--merge", directory)


# -- pipes and devices --------------------------------------------------------------------------

@pytest.fixture
def fifo(tmp_path) -> Path:
    path = tmp_path / "pipe"
    os.mkfifo(path)
    return path


def test_a_fifo_or_a_device_as_the_program_is_refused(tmp_path, fifo):
    for program, kind in ((fifo, "a named pipe (FIFO)"), ("/dev/zero", "a character device")):
        link = tmp_path / f"link{len(kind)}.mlir"
        link.symlink_to(program)
        for path in (program, link):
            done = _cli("run", path)
            assert done.returncode == 2 and f"it is {kind}, not a regular file" in done.stderr, done.stderr


def test_a_fifo_as_an_argument_file_is_refused(tmp_path, fifo):
    program = tmp_path / "xw.mlir"
    program.write_text(SUBTRACT)
    folder = tmp_path / "args"
    folder.mkdir()
    os.mkfifo(folder / "x.npy")
    for options in (("--args", fifo), ("--arg", f"0={fifo}"), ("--args", folder)):
        done = _cli("run", program, *options)
        assert done.returncode == 2 and "it is a named pipe (FIFO), not a regular file" in done.stderr, done.stderr


def test_a_fifo_as_a_captured_value_is_refused(tmp_path):
    directory = _capture(tmp_path)
    file, _ = _first_value(directory)
    (directory / file).unlink()
    os.mkfifo(directory / file)
    done = _cli("run", LOOP, "--capture", directory)
    assert done.returncode == 2 and "it is a named pipe (FIFO), not a regular file" in done.stderr, done.stderr


def test_a_program_past_the_size_hlodbg_reads_is_refused(tmp_path, monkeypatch):
    import hlodbg.program

    program = tmp_path / "big.mlir"
    program.write_text(SUBTRACT)
    monkeypatch.setattr(hlodbg.program, "PROGRAM_BYTES_LIMIT", 64)
    with pytest.raises(hlodbg.ParseError, match="it is larger than 64 B, the most hlodbg reads of a program"):
        hlodbg.load(program)
