"""The `hlodbg` command: verify, print, --help/--version, and clean errors with exit status 2."""
from __future__ import annotations

import subprocess
import sys

import pytest

from hlodbg import __version__
from hlodbg.cli import main
from .helpers import PROGRAMS, SAMPLES



def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "hlodbg", *args], capture_output=True, text=True, timeout=120)


def test_version_and_help():
    done = run("--version")
    assert done.returncode == 0 and __version__ in done.stdout
    done = run("--help")
    assert done.returncode == 0
    for word in ("verify", "print", "PROG"):
        assert word in done.stdout


def test_verify_reports_ops_and_functions(capsys):
    sample = SAMPLES / "tiny_model.mlir"
    assert main(["verify", str(sample)]) == 0
    out = capsys.readouterr().out
    assert out.strip() == f"{sample}: ok (38 ops, 2 functions)"


def test_verify_counts_in_words(tmp_path, capsys):
    one = tmp_path / "one.mlir"
    one.write_text("func.func @main(%a: tensor<f32>) -> tensor<f32> {\n  return %a : tensor<f32>\n}\n")
    assert main(["verify", str(one)]) == 0
    assert capsys.readouterr().out.strip() == f"{one}: ok (1 op, 1 function)"


@pytest.mark.skipif(not PROGRAMS.is_dir(), reason="../shared/programs is not present")
def test_verify_many_programs(capsys):
    files = sorted(str(p) for p in PROGRAMS.glob("*.mlir"))
    assert main(["verify", *files]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == len(files) and all(": ok (" in line for line in lines)


def test_bad_input_exits_2_without_traceback(tmp_path):
    bad = tmp_path / "bad.mlir"
    bad.write_text("func.func @main(%a: tensor<2xf32>) {\n  %0 = stablehlo.add %a, %zz : tensor<2xf32>\n}\n")
    done = run("verify", str(bad))
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert f"{bad}:2:26: error: use of undefined SSA value %zz" in done.stderr
    assert done.stderr.splitlines()[2].index("^") == 25
    done = run("print", str(tmp_path / "missing.mlir"))
    assert done.returncode == 2 and "no such file" in done.stderr and "Traceback" not in done.stderr
    done = run(str(bad))
    assert done.returncode == 2 and "Traceback" not in done.stderr


def test_print_pretty_and_generic_round_trip(tmp_path, capsys):
    sample = SAMPLES / "tiny_model.mlir"
    assert main(["print", "--generic", str(sample)]) == 0
    generic = capsys.readouterr().out
    assert '"stablehlo.while"' in generic
    path = tmp_path / "generic.mlir"
    path.write_text(generic)
    assert main(["print", str(path)]) == 0
    pretty = capsys.readouterr().out
    assert "stablehlo.while(%iterArg" in pretty and "applies stablehlo.maximum" in pretty
    assert main(["print", "--debug-info", str(sample)]) == 0
    assert 'loc("jit(model)/while"' in capsys.readouterr().out
