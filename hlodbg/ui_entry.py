"""Wires a loaded Program into the Textual app (hlodbg is the only layer that sees both)."""
from __future__ import annotations


def run_ui(program) -> int:
    from hlodbg.ui.app import ProgramApp

    ProgramApp(program).run()
    return 0
