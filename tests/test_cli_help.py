"""Every command's --help prints (argparse reads `%` in help texts as formats: a stray one crashes)."""
from __future__ import annotations

import pytest

from hlodbg.cli import _parser as build_parser


def _subcommands():
    parser = build_parser()
    for action in parser._subparsers._group_actions:
        yield from action.choices


@pytest.mark.parametrize("command", sorted(set(_subcommands())))
def test_help_prints(command, capsys):
    with pytest.raises(SystemExit) as exit_:
        build_parser().parse_args([command, "--help"])
    assert exit_.value.code == 0
    assert "usage:" in capsys.readouterr().out
