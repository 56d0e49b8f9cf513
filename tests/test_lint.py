"""The checks a linter does, run by the suite so a regression shows up in `make test` too:
ruff over the code that ships (its rules and the reasons for them are in pyproject.toml; mypy,
slower, runs in `make lint` and CI), and every file a comment, docstring or document names
exists, so the words do not go stale when a module is renamed or split.
"""
from __future__ import annotations

import importlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LINTED = ["engine", "layouts", "hlodbg", "ui"]  # as the Makefile's LINT_PATHS

# A `.py` word preceded by the start, a space, a quote or an opening mark: `*_ops.py` (a pattern)
# is not the name of a file, nor is `benchmarks/NAME.py` (a placeholder: its name in capitals).
_PY_NAME = re.compile(r"(?:(?<=^)|(?<=[\s`'\"(\[]))([A-Za-z_][A-Za-z0-9_]*(?:/[A-Za-z0-9_]+)*\.py)\b")
# Files named as examples of a user's program or of another project's, never of this tree.
NOT_OURS = {
    "model.py", "train.py", "mlp.py", "file.py",  # a user's JAX program in examples of source locations
    "f.py",  # the file of an example XLA stack-frame table
    "tpu_info.py",  # the TPU runtime's own tool, a source of the chip figures
    "toy_target.py",  # the module docs/architecture.md's "Adding a target" has the reader write
}


def _ruff() -> str:
    found = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
    if found is None:
        pytest.skip("ruff is not installed (pip install -e '.[lint]')")
    return found


def test_ruff_finds_nothing():
    done = subprocess.run([_ruff(), "check", "--no-cache", *LINTED], cwd=ROOT, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr


def _tree_files() -> set[str]:
    out = set()
    for folder, dirs, files in os.walk(ROOT):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d not in ("build", "__pycache__")
                   and not d.endswith(".egg-info")]
        out.update(str(Path(folder, f).relative_to(ROOT)) for f in files)
    return out


def _named_files(text: str) -> set[str]:
    named = {m.group(1) for m in _PY_NAME.finditer(text)}
    return {n for n in named if not Path(n).stem.isupper()} - NOT_OURS


def _missing(named: set[str], files: set[str]) -> list[str]:
    basenames = {Path(f).name for f in files}
    return sorted(n for n in named
                  if not (n in basenames if "/" not in n else any(f == n or f.endswith("/" + n) for f in files)))


def test_the_file_name_check_sees_a_missing_file_and_passes_the_examples():
    files = {"engine/verify/core.py", "engine/run/plan.py"}
    text = 'used by the verifier (verifier.py); see run/plan.py, "model.py:88", *_ops.py and NAME.py'
    assert _missing(_named_files(text), files) == ["verifier.py"]


def test_every_python_file_the_code_and_docs_name_exists():
    files = _tree_files()
    sources = [f for f in files if f.endswith(".py") and f.split("/")[0] in LINTED]
    documents = ["README.md", "benchmarks/README.md"] + [f for f in files if f.startswith("docs/") and f.endswith(".md")]
    stale = {}
    for name in sorted(sources + documents):
        missing = _missing(_named_files((ROOT / name).read_text(encoding="utf-8")), files)
        if missing:
            stale[name] = missing
    assert not stale, f"files named that do not exist: {stale}"


def _module_names() -> list[str]:
    """The import name of every module of the linted folders, as pyproject.toml's package-dir maps them."""
    names = []
    for path in sorted(_tree_files()):
        parts = Path(path).with_suffix("").parts
        if path.endswith(".py") and parts[0] in LINTED and path != "hlodbg/__main__.py":
            parts = parts[:-1] if parts[-1] == "__init__" else parts
            names.append(".".join(parts if parts[0] == "hlodbg" else ("hlodbg", *parts)))
    return names


def test_every_name_a_module_exports_exists():
    """`from hlodbg.cli_diff import *` once failed: its __all__ named a function it does not have."""
    missing = {}
    for name in _module_names():
        module = importlib.import_module(name)
        absent = [n for n in getattr(module, "__all__", ()) if not hasattr(module, n)]
        if absent:
            missing[name] = absent
    assert not missing, missing


def test_mypy_finds_nothing():
    """`make typecheck`, the mypy half of `make lint`: about 35 s on 2 cores the first time, under
    a second once its cache (.venv/mypy-cache) is warm, as it is in CI after `make lint`."""
    tools = Path(sys.executable).parent
    if shutil.which("make") is None or not (tools / "mypy").exists():
        pytest.skip("make or mypy is not installed (pip install -e '.[lint]')")
    done = subprocess.run(["make", "-s", "typecheck", f"BIN={tools}"], cwd=ROOT, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
