"""hlodbg without JAX (issue 37 part 1): `import hlodbg.jax` says to install the `xla` extra, and
the rest of hlodbg loads and runs a program with JAX unimportable."""
from __future__ import annotations

import subprocess
import sys

from .helpers import REPO

NO_JAX = "import sys; sys.modules['jax'] = None; sys.modules['jaxlib'] = None\n"  # `import jax` fails


def run_python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", NO_JAX + code], cwd=REPO, capture_output=True, text=True, timeout=120)


def test_importing_hlodbg_jax_without_jax_says_what_to_install():
    done = run_python("import hlodbg.jax")
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert last == "ModuleNotFoundError: hlodbg.jax needs JAX, which is not installed: pip install 'hlodbg[xla]'"


def test_hlodbg_runs_a_program_without_jax():
    done = run_python("import hlodbg\n"
                      "from hlodbg.samples import default_sample_path\n"
                      "program = hlodbg.load(default_sample_path())\n"
                      "program.run()\n"
                      "session = program.session(persist=False)\n"
                      "session.continue_()\n"
                      "print('ran', 'jax' in sys.modules and sys.modules['jax'] is not None)")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ran False"
