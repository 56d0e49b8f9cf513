"""What each command imports before it answers (issue 32: `hlodbg --version` took 3.5 s importing
ml_dtypes and the engine). Each check runs the command in a fresh interpreter and lists which
heavy packages ended up in sys.modules; benchmarks/startup.py prints the times."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from hlodbg.samples import default_sample_path

HEAVY = ("numpy", "ml_dtypes", "scipy", "networkx", "textual", "graphviz", "jax")

_REPORT_IMPORTS = f"""
import contextlib, io, json, sys
from hlodbg.cli import main
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
    try:
        status = main(sys.argv[1:])
    except SystemExit as exit_:
        status = exit_.code
print(json.dumps({{"status": status, "imported": [m for m in {HEAVY!r} if m in sys.modules]}}))
"""


def imported_by(*argv: str) -> set[str]:
    """The heavy packages `hlodbg ARGV` imports (it must succeed)."""
    done = subprocess.run([sys.executable, "-c", _REPORT_IMPORTS, *argv], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["status"] in (0, None), report
    return set(report["imported"])


@pytest.mark.parametrize("argv", [["--version"], ["--help"], ["-h"]])
def test_version_and_help_import_nothing_heavy(argv):
    assert imported_by(*argv) == set()


def test_import_hlodbg_is_light_and_its_api_loads_on_use():
    code = ("import sys, hlodbg; light = not {'numpy', 'ml_dtypes'} & set(sys.modules); "
            "assert hlodbg.engine.ExecutionError.__name__ == 'ExecutionError'; "  # a subpackage on first use too
            "from hlodbg import ParseError, load; import hlodbg.engine as e; "
            "print(light, e.ParseError is ParseError is hlodbg.ParseError, load is hlodbg.load, "
            "hlodbg.VerifyError.__name__, e.Module.__name__)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.stdout.split() == ["True", "True", "True", "VerifyError", "Module"], done.stderr
    with pytest.raises(AttributeError, match="no attribute 'nonesuch'"):
        import hlodbg

        hlodbg.nonesuch  # noqa: B018 - the lookup is the test


def test_verify_imports_no_ui_graph_or_scipy():
    assert not imported_by("verify", str(default_sample_path())) & {"textual", "networkx", "scipy", "graphviz", "jax"}


def test_run_imports_no_ui_or_graph(tmp_path):
    imported = imported_by("run", str(default_sample_path()), "--out", str(tmp_path / "out.npz"))
    assert "numpy" in imported  # it did run
    assert not imported & {"textual", "networkx", "graphviz", "jax"}


def test_a_program_of_wide_types_never_imports_ml_dtypes(tmp_path):
    """ml_dtypes (about a second of start-up) is imported when a program first needs one of its
    types (engine/ir/ml_types.py): the f32 sample is verified and run without it."""
    assert "ml_dtypes" not in imported_by("verify", str(default_sample_path()))
    imported = imported_by("run", str(default_sample_path()), "--out", str(tmp_path / "out.npz"))
    assert "numpy" in imported and "ml_dtypes" not in imported


def test_a_bf16_program_imports_ml_dtypes_when_it_needs_it(tmp_path):
    program = tmp_path / "bf16.mlir"
    program.write_text("func.func @main(%x: tensor<2xbf16>, %y: tensor<2xi4>) -> (tensor<2xbf16>, tensor<2xi4>) {\n"
                       "  %0 = stablehlo.add %x, %x : tensor<2xbf16>\n"
                       "  %1 = stablehlo.add %y, %y : tensor<2xi4>\n"
                       "  return %0, %1 : tensor<2xbf16>, tensor<2xi4>\n}\n")
    out = tmp_path / "out.npz"
    assert "ml_dtypes" in imported_by("run", str(program), "--out", str(out))
    from hlodbg.argument_files import read_npz

    results = read_npz(str(out))  # written widened: f32 and i32
    assert [a.shape for a in results.values()] == [(2,), (2,)], results
