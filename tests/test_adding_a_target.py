"""docs/architecture.md's walkthrough "Adding a target", done: its module, taken from the document
itself, is written to a temporary module and imported (which registers it); the target is then
picked through the CLI entry and `Program.run`, listed by `--help` and by an unknown target's
error, its options checked from its registry entry, and its capabilities used (its memory, the
target it is compared with). Afterwards the registry is as it was."""
from __future__ import annotations

import importlib
import re
import sys
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest

import hlodbg
from hlodbg.cli import _parser, main
from hlodbg.divergence_report import backends
from hlodbg.engine.machine import targets

ROOT = Path(__file__).resolve().parent.parent
MODULE = "toy_target"

ADDS = """
func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.add %a, %a : tensor<4xf32>
  %1 = stablehlo.multiply %0, %a : tensor<4xf32>
  return %1 : tensor<4xf32>
}
"""
# Three f32[128,128] live at once (two arguments and a result, 64 KiB each): more than the toy's 64 KiB.
TOO_BIG = """
func.func @main(%a: tensor<128x128xf32>, %b: tensor<128x128xf32>) -> tensor<128x128xf32> {
  %0 = stablehlo.add %a, %b : tensor<128x128xf32>
  return %0 : tensor<128x128xf32>
}
"""


def walkthrough_module() -> str:
    """The one Python block of the walkthrough's paragraph in docs/architecture.md."""
    text = (ROOT / "docs" / "architecture.md").read_text()
    section = text[text.index("**Adding a target**"):]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


@contextmanager
def toy_target(tmp_path):
    """The walkthrough's module imported from `tmp_path`; on leaving, the module and its
    registry entry are gone again."""
    registry, names = dict(targets._TARGETS), dict(targets._NAMES)
    (tmp_path / f"{MODULE}.py").write_text(walkthrough_module())
    sys.path.insert(0, str(tmp_path))
    try:
        yield importlib.import_module(MODULE)
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop(MODULE, None)
        targets._TARGETS.clear()
        targets._TARGETS.update(registry)
        targets._NAMES.clear()
        targets._NAMES.update(names)


def test_a_target_is_one_module_and_one_registry_entry(tmp_path, capsys):
    prog = tmp_path / "adds.mlir"
    prog.write_text(ADDS)
    big = tmp_path / "big.mlir"
    big.write_text(TOO_BIG)
    x = np.array([1, -2, 3.5, 0], np.float32)
    np.savez(tmp_path / "in.npz", arg0=x)
    assert "toy" not in targets.target_names()
    with toy_target(tmp_path) as toy:
        ToyBackend = toy.ToyBackend
        # picked by its alias on the command line: the run is the toy's
        assert main(["run", str(prog), "--args", str(tmp_path / "in.npz"), "--target", "toy-1",
                     "--out", str(tmp_path / "out.npz")]) == 0
        assert ToyBackend.ops_run >= 2
        np.testing.assert_array_equal(np.load(tmp_path / "out.npz")["result0"], (x + x) * x)
        # ... and through the Python API
        before = ToyBackend.ops_run
        program = hlodbg.load(ADDS)
        [got] = program.run(x, target="toy")
        np.testing.assert_array_equal(got, (x + x) * x)
        assert ToyBackend.ops_run > before and isinstance(program._interpreter("toy").backend, ToyBackend)
        capsys.readouterr()

        # --help lists it with its help; an unknown name lists it among the choices
        with pytest.raises(SystemExit):
            main(["run", "--help"])
        assert "toy (or toy-1): a toy machine with 64 KiB of SRAM per device" in " ".join(capsys.readouterr().out.split())
        assert main(["run", str(prog), "--target", "toy-2"]) == 2
        err = capsys.readouterr().err
        assert "unknown target 'toy-2'" in err
        assert {"toy", "toy-1", "cpu"} <= set(err.split("choose one of: ")[1].strip().split(", "))
        # options: the one it takes is passed on, the others refused naming who takes them
        assert main(["run", str(prog), "--args", str(tmp_path / "in.npz"), "--target", "toy", "--per-op-rounding"]) == 0
        assert not targets.backend_for("toy", excess_precision=False).excess_precision
        capsys.readouterr()
        assert main(["run", str(prog), "--target", "toy", "--allow-f64"]) == 2
        assert "--allow-f64 applies to TPU targets, not toy" in capsys.readouterr().err

        # its memory is what `memory` checks a run against
        assert main(["memory", str(big), "--target", "toy"]) != 0
        out = capsys.readouterr().out
        assert "does not fit in 64 KiB SRAM of toy" in out
        assert main(["memory", str(prog), "--target", "toy"]) == 0
        assert "fits in 64 KiB SRAM of toy" in capsys.readouterr().out
        # and the target `--break-on diverge` compares it with by default (Backend.default_against: the CPU)
        args = _parser().parse_args(["run", str(prog), "--target", "toy", "--break-on", "diverge"])
        target, against = backends(args)
        assert (type(target), against.describe()) == (ToyBackend, "cpu")
        assert main(["diff", str(prog), "--target", "toy", "--against", "cpu"]) == 0
        assert "between toy and cpu" in capsys.readouterr().out
    assert "toy" not in targets.target_names() and MODULE not in sys.modules
    with pytest.raises(targets.TargetError, match="unknown target 'toy'"):
        targets.backend_for("toy")
