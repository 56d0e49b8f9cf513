"""`hlodbg check` over the StableHLO conformance corpus (JAX-generated self-checking programs).

Every file must pass, except those listed in tests/known_failures.txt with a reason; a listed
file that starts passing fails the suite too, so the list always says exactly what is broken.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from hlodbg.engine.run.checking import check_path
from .helpers import CONFORMANCE


KNOWN_FAILURES_FILE = Path(__file__).with_name("known_failures.txt")


def known_failures() -> dict[str, str]:
    """`relative/path.mlir  # reason` lines of known_failures.txt."""
    entries = {}
    for line in KNOWN_FAILURES_FILE.read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        name, _, reason = line.partition("#")
        entries[name.strip()] = reason.strip()
    return entries


def conformance_files() -> list[str]:
    if not CONFORMANCE.is_dir():
        return []
    return sorted(str(p.relative_to(CONFORMANCE)) for p in CONFORMANCE.rglob("*.mlir"))


FILES = conformance_files()
KNOWN = known_failures()


def test_known_failures_have_reasons_and_exist():
    for name, reason in KNOWN.items():
        assert reason, f"{name}: a known failure needs a reason"
    if FILES:
        missing = sorted(set(KNOWN) - set(FILES))
        assert not missing, f"known_failures.txt lists files that do not exist: {missing}"


@pytest.mark.skipif(not FILES, reason="../shared/conformance is not present")
@pytest.mark.parametrize("name", FILES or ["<none>"])
def test_conformance_file(name):
    outcomes = check_path(str(CONFORMANCE / name))
    failures = []
    for outcome in outcomes:
        if outcome.error is not None:
            failures.append(outcome.error.render())
        failures += [f"{c.where}: check.{c.kind}: {c.message}" for c in outcome.failures]
    checks = sum(len(o.checks) for o in outcomes)
    if name in KNOWN:
        assert failures, f"{name} passes now: remove it from known_failures.txt ({KNOWN[name]})"
        return
    assert not failures, "\n".join(failures)
    assert checks > 0, f"{name} ran no check at all"
