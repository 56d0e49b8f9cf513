"""Run self-checking programs (check dialect, `custom_call @check.*`) and collect the outcomes."""
from __future__ import annotations

import os
import shutil
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Iterator, Optional

from ..ir.core import Module
from ..ir.errors import HlodbgError
from ..machine.backend import CPU, Backend
from .interpreter import Interpreter


@dataclass
class ModuleOutcome:
    """The result of running one module (one `// -----` chunk) of a check file."""

    name: str
    chunk: int
    checks: list = field(default_factory=list)  # CheckOutcome
    error: Optional[HlodbgError] = None
    printed: list = field(default_factory=list)

    @property
    def failures(self) -> list:
        return [c for c in self.checks if not c.passed]

    @property
    def passed(self) -> bool:
        return self.error is None and not self.failures


def entry_points(module: Module) -> list[str]:
    """Functions a check file runs: @main if present, else every public function without arguments."""
    functions = module.functions
    if "main" in functions:
        return ["main"]
    names = []
    for name, function in functions.items():
        if function.is_declaration or function.visibility == "private":
            continue
        if function.function_type.inputs:
            continue
        names.append(name)
    return names


def _no_entry_message(module: Module) -> str:
    message = "no function to run: expected @main or a public function without arguments"
    entry = module.entry
    if entry is not None and entry.function_type.inputs:
        count = len(entry.function_type.inputs)
        message += (f"; @{entry.sym_name} takes {count} argument(s), so it is not a self-checking program: "
                    f"run it with 'hlodbg run' (random arguments, or --args IN.npz)")
    return message


def check_module(module: Module, name: str = "", chunk: int = 0, probe_dir: Optional[str] = None,
                 backend: Backend = CPU) -> ModuleOutcome:
    outcome = ModuleOutcome(name, chunk)
    interpreter = Interpreter(module, backend=backend)
    interpreter.probe_dir = probe_dir
    try:
        entries = entry_points(module)
        if not entries:
            raise HlodbgError(_no_entry_message(module))
        for entry in entries:
            interpreter.run(entry, [])
    except HlodbgError as e:
        outcome.error = e
    outcome.checks = list(interpreter.checks)
    outcome.printed = list(interpreter.printed)
    return outcome


def check_path(path: str, probe_root: Optional[str] = None, backend: Backend = CPU,
               fill_elided: Optional[str] = None) -> list[ModuleOutcome]:
    """Run every module of a file; a file that does not load is one failed outcome. With
    `fill_elided` ("random" or "zeros"), elided constants get such values first (run/elided.py).

    Every module gets a probe directory of its own (interpreter.probe writes there and
    check.expect_serialized_eq reads back): a temporary one, removed after the module ran, or
    `probe_root/<file name>.<module number>` kept for the user when `probe_root` is given.
    """
    from ..syntax import frontend_for
    from ..syntax.frontend import no_module_error, program_text
    from ..verify import verify

    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        return [ModuleOutcome(str(path), 0, error=HlodbgError(f"cannot read {path}: {e}"))]
    try:
        text = program_text(data, str(path))
        modules = frontend_for(text, str(path)).parse_all(text, str(path))
    except HlodbgError as e:
        return [ModuleOutcome(str(path), 0, error=e)]
    if not modules:
        return [ModuleOutcome(str(path), 0, error=no_module_error(str(path)))]
    outcomes = []
    for chunk, module in enumerate(modules):
        try:
            verify(module)
        except HlodbgError as e:
            outcomes.append(ModuleOutcome(str(path), chunk, error=e))
            continue
        if fill_elided is not None:
            from .elided import fill_elided as fill

            fill(module, fill_elided)
        with _probe_directory(probe_root, path, chunk) as probe_dir:
            outcomes.append(check_module(module, str(path), chunk, probe_dir, backend))
    return outcomes


@contextmanager
def _probe_directory(probe_root: Optional[str], path: str, chunk: int) -> Iterator[str]:
    if probe_root is None:
        with tempfile.TemporaryDirectory(prefix="hlodbg-probes-") as directory:
            yield directory
        return
    directory = os.path.join(probe_root, f"{os.path.basename(str(path))}.{chunk}")
    # A kept directory starts empty: probes of an earlier check run must not answer this one.
    shutil.rmtree(directory, ignore_errors=True)
    yield directory


def check_files(paths, out=None, verbose: bool = False, probe_root: Optional[str] = None,
                backend: Backend = CPU, fill_elided: Optional[str] = None) -> tuple[int, int]:
    """Run and report every module of every file; returns (passed, failed) module counts.

    Each failing check is reported at its location; modules that stop with an error report it.
    """
    import sys

    out = out or sys.stdout
    passed = failed = 0
    for path in paths:
        outcomes = check_path(path, probe_root, backend, fill_elided)
        for outcome in outcomes:
            label = str(path) if len(outcomes) == 1 else f"{path}#{outcome.chunk}"
            if outcome.passed:
                passed += 1
                if verbose:
                    print(f"{label}: ok ({len(outcome.checks)} checks)", file=out)
                continue
            failed += 1
            print(f"{label}: FAILED", file=out)
            for check in outcome.failures:
                print(f"{check.where}: error: check.{check.kind} failed: {check.message}", file=out)
            if outcome.error is not None:
                print(outcome.error.render(), file=out)
    print(f"{passed} passed, {failed} failed", file=out)
    return passed, failed


if __name__ == "__main__":
    import sys

    files = [a for a in sys.argv[1:] if a != "-v"]
    check_files(files, verbose="-v" in sys.argv)
