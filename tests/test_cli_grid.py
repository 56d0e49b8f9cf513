"""`hlodbg run` on a grid: per-device results, --break-on across devices, clear errors."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from hlodbg.cli import main

DATA = Path(__file__).parent / "data"
RING = DATA / "grid_ring.mlir"


def test_per_device_results_printed_and_saved(tmp_path, capsys):
    args = tmp_path / "x.npz"
    np.savez(args, arg0=np.array([1.0, 2.0], np.float32))
    assert main(["run", str(RING), "--args", str(args)]) == 0
    out = capsys.readouterr().out
    assert "device 3 (replica 3, partition 0):" in out and "result2@3,0: tensor<8xf32>" in out
    saved = tmp_path / "out.npz"
    assert main(["run", str(RING), "--args", str(args), "--out", str(saved)]) == 0
    data = np.load(saved)
    assert sorted(data.files) == sorted(f"result{i}@{r},0" for i in range(3) for r in range(4))
    np.testing.assert_array_equal(data["result0@2,0"], [7.0, 9.0])  # (x+2) + (x+3)
    np.testing.assert_array_equal(data["result1@0,0"], [4.0, 5.0])  # from device 3 around the ring
    np.testing.assert_array_equal(data["result2@1,0"], [1, 2, 2, 3, 3, 4, 4, 5])


def test_break_on_across_the_grid_reports_the_device(tmp_path, capsys):
    args = tmp_path / "x.npz"
    np.savez(args, arg0=np.array([1.0, 2.0], np.float32))
    assert main(["run", str(RING), "--args", str(args), "--break-on", "abs(result).max() > 5"]) == 3
    out = capsys.readouterr().out
    assert out.startswith("device 2 (replica 2, partition 0) of 4x1:") and "%sum = stablehlo.all_reduce" in out


def test_grid_errors_are_clear(tmp_path, capsys):
    assert main(["run", str(RING), "--replicas", "3"]) == 2
    err = capsys.readouterr().err
    assert "error" in err and "Traceback" not in err
    assert main(["run", str(RING), "--probe", str(tmp_path / "p")]) == 2
    assert "--probe records one process" in capsys.readouterr().err
    assert main(["run", str(RING), "--replicas", "0"]) == 2
    assert "at least one replica" in capsys.readouterr().err
