"""Inputs at the edges never crash hlodbg nor eat the machine: files with no module, splat
constants too big to hold, huge hex constants."""
from __future__ import annotations

import pytest

from hlodbg.cli import EXIT_BAD_INPUT, main

pytestmark = pytest.mark.usefixtures("private_hlodbg_dirs")

NO_MODULE_FILES = {"empty.mlir": "", "blank.mlir": "\n  \n", "comment.mlir": "// only a comment\n// and another\n"}


@pytest.mark.parametrize("name", sorted(NO_MODULE_FILES))
@pytest.mark.parametrize("command", [["verify"], ["print"], ["run"], ["export", "-o", "{tmp}/out.svg"], ["check"]])
def test_every_command_reports_a_file_without_a_module(tmp_path, capsys, command, name):
    path = tmp_path / name
    path.write_text(NO_MODULE_FILES[name])
    args = [arg.format(tmp=tmp_path) for arg in command]
    status = main([args[0], str(path), *args[1:]])
    out, err = capsys.readouterr()
    message = f"{path} holds no module (the file is empty or only comments)"
    if command == ["check"]:  # check reports each file as one outcome and counts it as failed
        assert status == 1 and message in out and out.strip().endswith("0 passed, 1 failed")
    else:
        assert status == EXIT_BAD_INPUT and message in err and out == ""
