"""The files `hlodbg run` writes: --out says the file it wrote, never creates a missing directory,
and stores types numpy does not know (bf16, f8, int4) so numpy reads their values and hlodbg
reads them back as they were; --probe never writes over an earlier probe."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from hlodbg.cli import main

# Every bf16 bit pattern (both zeros, the infinities, every NaN payload), every int4 and every f8.
BF16 = np.arange(1 << 16, dtype=np.uint16).view(ml_dtypes.bfloat16)
INT4 = np.arange(-8, 8).astype(ml_dtypes.int4)
F8 = np.arange(256, dtype=np.uint8).view(ml_dtypes.float8_e4m3fn)
IDENTITY = """func.func @main(%result0: tensor<{n}xbf16>, %result1: tensor<16xi4>, %result2: tensor<256xf8E4M3FN>)
    -> (tensor<{n}xbf16>, tensor<16xi4>, tensor<256xf8E4M3FN>) {{
  return %result0, %result1, %result2 : tensor<{n}xbf16>, tensor<16xi4>, tensor<256xf8E4M3FN>
}}
"""


@pytest.fixture
def identity(tmp_path):
    path = tmp_path / "identity.mlir"
    path.write_text(IDENTITY.format(n=BF16.size))
    return path


def test_narrow_results_are_numbers_to_numpy_and_read_back_exactly(identity, tmp_path, capsys):
    given = tmp_path / "in.npz"
    np.savez(given, result0=BF16, result1=INT4, result2=F8)  # numpy stores these as raw bytes
    out, again = tmp_path / "out.npz", tmp_path / "again.npz"
    assert main(["run", str(identity), "--args", str(given), "--out", str(out)]) == 0
    said = capsys.readouterr().out
    assert f"saved 3 result(s) to {out}" in said
    assert "result0: bfloat16 as float32; result1: int4 as int32; result2: float8_e4m3fn as float32" in said
    saved = np.load(out)  # numpy alone, no ml_dtypes: numbers of its own types
    assert saved["result0"].dtype == np.float32 and saved["result1"].dtype == np.int32
    np.testing.assert_array_equal(saved["result0"], BF16.astype(np.float32))
    np.testing.assert_array_equal(saved["result1"], np.arange(-8, 8))
    # hlodbg reads its own file back as the program's types: every bf16 bit as it was.
    assert main(["run", str(identity), "--args", str(out), "--out", str(again)]) == 0
    capsys.readouterr()
    back = np.load(again)
    np.testing.assert_array_equal(back["result0"].view(np.uint32), saved["result0"].view(np.uint32))
    np.testing.assert_array_equal((back["result0"].view(np.uint32) >> 16).astype(np.uint16), BF16.view(np.uint16))
    np.testing.assert_array_equal(back["result1"], saved["result1"])
    np.testing.assert_array_equal(back["result2"].view(np.uint32), saved["result2"].view(np.uint32))


def test_out_says_the_file_it_wrote(tmp_path, capsys, identity):
    (tmp_path / "results").mkdir()
    name = tmp_path / "results"
    assert main(["run", str(identity), "--out", str(name)]) == 0
    assert f"saved 3 result(s) to {name}.npz" in capsys.readouterr().out
    assert (tmp_path / "results.npz").is_file()


def test_out_never_creates_a_missing_directory(tmp_path, capsys, identity):
    missing = tmp_path / "nowhere" / "deeper" / "x.npz"
    assert main(["run", str(identity), "--out", str(missing)]) == 2
    err = capsys.readouterr().err
    assert f"the directory {missing.parent} does not exist; create it first" in err
    assert not (tmp_path / "nowhere").exists()


def test_probe_never_writes_over_an_earlier_probe(tmp_path, capsys, identity):
    probe = tmp_path / "probe"
    assert main(["run", str(identity), "--probe", str(probe)]) == 0
    before = (probe / "index.csv").read_bytes()
    capsys.readouterr()
    assert main(["run", str(identity), "--probe", str(probe), "--seed", "1"]) == 2
    assert f"--probe {probe} already holds files (" in capsys.readouterr().err
    assert (probe / "index.csv").read_bytes() == before
    (tmp_path / "empty").mkdir()
    assert main(["run", str(identity), "--probe", str(tmp_path / "empty")]) == 0
