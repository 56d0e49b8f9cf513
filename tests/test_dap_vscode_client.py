"""VS Code's own DAP test client drives `hlodbg dap` through whole sessions (tests/dap_vscode/
full_session.js): a line breakpoint, continue, variables, step back and reverse continue on a shared
program; breakpoints in an HLO file; a NaN stop over a TCP port.

The client is the npm package @vscode/debugadapter-testsupport, installed into
tests/dap_vscode/node_modules by `make test` (npm ci, from the project's package-lock.json). Without
Node, or before it is installed, the test skips and says why.
"""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from .helpers import PROGRAMS, require_shared

CLIENT = Path(__file__).parent / "dap_vscode"
DATA = Path(__file__).parent / "data"
WAIT_SECONDS = 600  # a bound so a stuck session fails instead of hanging (no speed requirement)


def _node() -> str:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: the VS Code DAP client test needs Node.js 18 or later")
    if not (CLIENT / "node_modules" / "@vscode" / "debugadapter-testsupport").is_dir():
        pytest.skip("VS Code's DAP test client is not installed: run `make test`, or `npm ci` in tests/dap_vscode")
    return node


def test_vscode_debug_client_full_sessions(tmp_path):
    node = _node()
    require_shared()
    nan_inputs = tmp_path / "nan_inputs.npz"
    np.savez(nan_inputs, x=np.full(4, 100, np.float32))  # sqrt of a negative on iteration 3
    hlodbg = Path(sys.executable).with_name("hlodbg")
    runtime, executable = (str(hlodbg), "dap") if hlodbg.is_file() else (sys.executable, str(_dap_entry(tmp_path)))
    server = subprocess.Popen([sys.executable, "-m", "hlodbg", "dap", "--port", "0"], stdin=subprocess.DEVNULL,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        line = server.stderr.readline()
        assert line.startswith("hlodbg dap: listening on"), line
        config = {"runtime": runtime, "executable": executable, "port": int(line.rsplit(":", 1)[1]),
                  "mlp": str(PROGRAMS / "mlp.mlir"), "mlpInputs": str(PROGRAMS / "mlp.inputs.npz"),
                  "hlo": str(DATA / "hlo_printer" / "control_flow.hlo"),
                  "nan": str(DATA / "nan_in_loop.mlir"), "nanInputs": str(nan_inputs)}
        (tmp_path / "config.json").write_text(json.dumps(config))
        result = subprocess.run([node, str(CLIENT / "full_session.js"), str(tmp_path / "config.json")],
                                capture_output=True, text=True, timeout=WAIT_SECONDS, cwd=CLIENT)
    finally:
        server.kill()
        server.wait(WAIT_SECONDS)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.splitlines()[:3] == ["ok lineBreakpointSession", "ok hloSession", "ok nanSession"]


def _dap_entry(tmp_path: Path) -> Path:
    """A script running `hlodbg dap` (the DebugClient starts its server as RUNTIME EXECUTABLE, one
    argument), for an environment without the `hlodbg` command on the interpreter's path."""
    script = tmp_path / "hlodbg_dap.py"
    script.write_text("import sys\nfrom hlodbg.cli import main\nsys.exit(main(['dap']))\n")
    return script
