"""The public entry point: `hlodbg.load(path_or_text)` -> a verified Program."""
from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Optional, Union

from hlodbg.engine import Function, Module, Operation, ParseError
from hlodbg.engine.machine.files import PROGRAM_BYTES_LIMIT, read_bounded
from hlodbg.engine.syntax import Frontend, frontend_for, looks_like_program
from hlodbg.engine.syntax.frontend import no_module_error, program_text

PathOrText = Union[str, os.PathLike]


class Program:
    """A parsed and verified StableHLO module, independent of any graph or UI."""

    def __init__(self, module: Module, path: Optional[Path] = None, chunk: int = 0, frontend: Optional[Frontend] = None):
        self.module = module
        self.path = path
        self.chunk = chunk
        self.frontend = frontend if frontend is not None else frontend_for("")
        self._backends: dict = {}  # per target: (target, its backend), whose prepared interpreter the runner keeps
        self._runner = None  # engine/run/request.py's Runner, made on the first run
        self._memory: dict = {}  # memory profiles by (target, replicas, partitions, entry)
        self._filled: Optional[tuple[str, int, int]] = None  # (mode, seed, count) of the last fill_elided
        self._op_count: Optional[int] = None
        # Arguments bound to the program (hlodbg.jax.load binds the call it lowered): what run,
        # debug and session use when given none. A list in the entry function's order.
        self.arguments: Optional[list] = None

    def fill_elided(self, mode: str, seed: int = 0) -> int:
        """Give the constants whose elements the text elided (`{...}`) values so the program can
        run: "random" (reproducible from `seed`) or "zeros". Each such constant is marked
        (`hlo.filled`), and views say its values are filled. Returns how many were filled; filling
        again with another mode or seed refills them."""
        if self._filled is not None and self._filled[:2] == (mode, seed):
            return self._filled[2]
        from hlodbg.engine.run.elided import fill_elided

        count = fill_elided(self.module, mode, seed)
        self._filled = (mode, seed, count)
        self._runner = None  # its interpreters keep constants' values
        return count

    @property
    def name(self) -> str:
        if self.path is not None:
            return self.path.name
        return self.module.name or "<program>"

    @property
    def source(self) -> str:
        return self.module.source.text if self.module.source is not None else ""

    @property
    def functions(self) -> dict[str, Function]:
        return self.module.functions

    @property
    def entry(self) -> Optional[Function]:
        return self.module.entry

    def function(self, name: str) -> Function:
        return self.module.function(name)

    @property
    def ops(self) -> list[Operation]:
        """Every op of every function, nested ones included, in textual order."""
        return [op for f in self.functions.values() for op in f.ops]

    @property
    def op_count(self) -> int:
        # Counted once: nothing adds or removes ops after parsing, and the UI's title, its first
        # console line and the CLI each ask (a walk of every op: 0.1 s at 100k ops).
        if self._op_count is None:
            self._op_count = sum(len(f.ops) for f in self.functions.values())
        return self._op_count

    @property
    def num_replicas(self) -> int:
        return self.module.num_replicas

    @property
    def num_partitions(self) -> int:
        return self.module.num_partitions

    def run(self, *args, entry: str = "main", seed: int = 0, target=None, fill_elided: Optional[str] = None,
            per_device: Optional[dict] = None):
        """Run `entry` on numpy arguments and return its results as numpy arrays.

        `target`: the machine every device runs on — "cpu" (default), "tpu-v5e", "tpu-v4",
        "tpu-v5p", "tpu-v6e", "tpu7x" or "tpu", real devices through JAX ("xla:cpu", "xla:gpu",
        "xla:tpu"; their results come to the host here), or a Backend (hlodbg.engine.machine.targets).

        `args` are the arguments in order, or one mapping whose keys name them as `--args` files
        do (the argument's name, argN or arr_N; `run(numpy.load("in.npz"))`); none: the bound
        `arguments`, if any. Missing trailing arguments are filled with reproducible random values from `seed`. The
        program runs on the grid its module asks for (mhlo.num_replicas x mhlo.num_partitions):
        a sharded JAX program (Shardy or GSPMD) returns its global results, checked to agree on
        every device; any other program on several devices returns {ProcessId: results}. The
        prepared interpreter (every op's decoded attributes, folded constants) is kept, so later
        runs skip that work. `fill_elided`: see `fill_elided` (the values from `seed`); without
        it, a program with elided constants stops at the first one it runs. `per_device`:
        {ProcessId or (replica, partition): a sequence of arrays or {position: array}}, a device's
        own arguments on a grid (the others get `args`), so each device can hold different data.
        """
        from hlodbg.engine.machine.xla.device_values import to_host
        from hlodbg.engine.run.arguments import ArgumentNames, device_arguments, given_arguments, parameter_shardings
        from hlodbg.engine.run.grid import grid_shape
        from hlodbg.engine.run.interpreter import entry_function
        from hlodbg.engine.run.request import RunRequest

        if fill_elided is not None:
            self.fill_elided(fill_elided, seed)
        if not args and self.arguments is not None:
            args = tuple(self.arguments)
        if len(args) == 1 and isinstance(args[0], Mapping):  # run(numpy.load("in.npz")): by key
            args = args[0]
        function = entry_function(self.module, entry)
        replicas, partitions = grid_shape(self.module)
        values, _ = device_arguments(function.function_type.inputs,
                                     given_arguments(args, per_device, ArgumentNames(function)),
                                     replicas, partitions, seed=seed, shardings=parameter_shardings(function))
        outcome = self._run_request(RunRequest(self.module, values, entry, self._backend(target), replicas, partitions))
        if outcome.per_device is not None:
            return {process: to_host(results) for process, results in outcome.per_device.items()}
        return to_host(outcome.results)

    def _backend(self, target):
        """The backend runs on `target` compute with, made once per target (so the runner's prepared
        interpreter for it is found again)."""
        from hlodbg.engine.machine.targets import backend_for

        key = target if isinstance(target, (str, type(None))) else id(target)
        held = self._backends.get(key)
        if held is None or held[0] is not target:
            held = self._backends[key] = (target, backend_for(target))
        return held[1]

    def _run_request(self, request, listeners_for=None):
        from hlodbg.engine.run.request import Runner

        if self._runner is None:
            self._runner = Runner()
        return self._runner.run(request, listeners_for)

    def _interpreter(self, target=None, entry: str = "main"):
        """The prepared one-device interpreter runs on `target` use (made now if no run made it)."""
        from hlodbg.engine.run.request import Runner, RunRequest

        if self._runner is None:
            self._runner = Runner()
        return self._runner.interpreter(RunRequest(self.module, [], entry, self._backend(target)))

    def debug(self, args=None, *, seed: int = 0, entry: str = "main", memory=None, persist: bool = True,
              replicas: Optional[int] = None, partitions: Optional[int] = None, focus=None, backend=None,
              target=None, fill_elided: Optional[str] = None, capture=None):
        """A debugging target on one run of `entry` (hlodbg.engine.debug.target): a lazy session on
        one process, or every device of the grid the module asks for (or `replicas` x
        `partitions`), with `focus` (a ProcessId) the device in front.

        `args`: a sequence of arrays, or a dict {position: array} (None: the bound `arguments`,
        if any); on a grid, keys ProcessId (or
        (replica, partition)) give a device its own arguments (a sequence or {position: array});
        missing ones are reproducible random values from `seed`. `memory`: the budget for recorded values in bytes or as text
        ("2G", "512M"; default the arguments' size, at least 256 MiB, at most a quarter of RAM). With `persist`, breakpoints and watches are
        kept in a per-program JSON file (see hlodbg.engine.debug.breakpoints.state_path). `target`
        (a name as for `run`) or `backend` (a Backend): the numerics and storage every device
        computes with (default the CPU's); each device gets its own instance. `fill_elided`:
        as for `run`. `capture`: the path of a capture of a real run of this program
        (`hlodbg capture`): its values in place of computed ones, on its grid, on its inputs
        unless `args` are given (hlodbg.engine.debug.capture_replay).
        """
        from hlodbg.engine.debug.launch import open_target
        from hlodbg.engine.machine.targets import backend_for

        if fill_elided is not None:
            self.fill_elided(fill_elided, seed)
        path = str(self.path) if self.path is not None else None
        if self.path is not None and self.chunk:
            path = f"{path}#{self.chunk}"
        if capture is not None:
            from hlodbg.engine.debug.capture_replay import open_replay

            backend = open_replay(capture, self.module, self.source, path or self.name)
            args = backend.capture.inputs() if args is None else args
            if (replicas, partitions) not in ((None, None), backend.grid):
                from hlodbg.engine.run.capture_format import CaptureError

                raise CaptureError(f"{capture} was captured on a {backend.grid[0]}x{backend.grid[1]} grid, "
                                   f"not {replicas}x{partitions}")
            replicas, partitions = backend.grid
        elif args is None:
            args = self.arguments
        return open_target(self.module, args, entry=entry, seed=seed, memory=memory, persist=persist, path=path,
                           source=self.source, replicas=replicas, partitions=partitions, focus=focus,
                           backend=backend if backend is not None else backend_for(target))

    def session(self, args=None, seed: int = 0, entry: str = "main", memory=None, persist: bool = True, target=None,
                fill_elided: Optional[str] = None):
        """A debugging session on one process (hlodbg.engine.debug.session.Session): the focused
        session of `debug(...)` on a 1x1 grid."""
        return self.debug(args, seed=seed, entry=entry, memory=memory, persist=persist, replicas=1, partitions=1,
                          target=target, fill_elided=fill_elided).session

    def memory(self, target=None, replicas: Optional[int] = None, partitions: Optional[int] = None,
               entry: str = "main"):
        """The static memory profile of a run of `entry` on every device of the grid
        (hlodbg.engine.run.memory_profile.MemoryAnalysis): per device the live bytes at every op,
        the buffers live there, the peak and where it happens, and whether it fits the device's
        memory. `target`: a target name ("tpu-v5e", "cpu", the default; the profile is kept for the next call)
        or a Backend (with options: `hlodbg.engine.machine.targets.backend_for("tpu-v5e", layouts=...)`).
        Nothing runs.

        `analysis.devices[d].entry` (a FunctionMemory) answers per op: `position_of(op)`,
        `bytes_at(position)`, `buffers_at(position)`, and `timeline` (bytes at every position);
        `analysis.devices[d].site([call, ..., op])` the moment `op` runs inside the callees of the
        calls on the way (a debugger's frames), and `peak_site()` the peak's.
        """
        from hlodbg.engine.machine.targets import DEFAULT_TARGET, backend_for, canonical_target
        from hlodbg.engine.run.memory_profile import MemoryAnalysis

        if target is not None and not isinstance(target, str):
            return MemoryAnalysis(self.module, backend_for(target), entry=entry, replicas=replicas, partitions=partitions)
        key = (canonical_target(target or DEFAULT_TARGET), replicas, partitions, entry)
        found = self._memory.get(key)
        if found is None:  # kept: a memory pane asks again at every step
            found = self._memory[key] = MemoryAnalysis(self.module, backend_for(key[0]), entry=entry,
                                                       replicas=replicas, partitions=partitions)
        return found

    def explain(self, op: str, args=None, *, at=None, result: Optional[int] = None, lang: str = "en", seed: int = 0,
                entry: str = "main", device: Optional[tuple[int, int]] = None, timeout: Optional[float] = 20.0):
        """What `op` does, with this op's numbers, as `hlodbg explain` says it: an Explanation
        (hlodbg.engine.debug.explain; `.text()`, `.to_dict()`; in Jupyter it shows itself with
        the op's diagram, hlodbg.notebook).

        `op`: `%12`, `@fn:%12`, an HLO instruction name or a line number. The program runs to the
        op's first execution on `args` (as for `debug`; missing ones are seeded random values from
        `seed`) for its values, on `device` (replica, partition) of a grid; the run stops after
        `timeout` seconds (None: no limit) and the explanation then says why it has none. `at`: an
        element of result `result` (a tuple, or text such as "1,0,2"): where it comes from.
        `lang`: "en", "ja" or "hi"."""
        from hlodbg.engine.ir.phrases import check_language
        from hlodbg.engine.machine.process import ProcessId
        from hlodbg.explaining import explain_in_run, explained_element

        check_language(lang)
        if at is not None and not isinstance(at, str):
            at = ",".join(str(int(i)) for i in at)
        found, element, result = explained_element(self, op, at, result, entry, options=("at", "result"))
        return explain_in_run(self, found, args, at=element, result=result, lang=lang, seed=seed, entry=entry,
                              focus=ProcessId(*device) if device is not None else None, timeout=timeout)

    def to_text(self, generic: bool = False, debug_info: bool = False) -> str:
        return self.frontend.print(self.module, generic=generic, debug_info=debug_info)

    def __repr__(self) -> str:
        return f"<Program {self.name}: {self.op_count} ops, {len(self.functions)} functions>"


def _read(path_or_text: PathOrText) -> tuple[str, str, Optional[Path]]:
    """(text, name for messages, path or None).

    A PathLike is a path; a string is program text when it spans lines or, on one line, when it
    names no existing file and a frontend recognizes it (`module {}`); otherwise it is a path."""
    if isinstance(path_or_text, os.PathLike) or (
        isinstance(path_or_text, str)
        and "\n" not in path_or_text
        and (os.path.exists(path_or_text) or not looks_like_program(path_or_text))
    ):
        path = Path(path_or_text)
        try:
            data = read_bounded(path, PROGRAM_BYTES_LIMIT, "a program")
        except FileNotFoundError:
            raise ParseError(f"no such file: {path}") from None
        except IsADirectoryError:
            raise _directory_error(path) from None
        except OSError as e:
            raise ParseError(f"cannot read {path}: {e.strerror}") from None
        return program_text(data, str(path)), str(path), path
    if not isinstance(path_or_text, str):
        raise TypeError(f"load() takes a path or MLIR text, not {type(path_or_text).__name__}")
    return path_or_text, "<string>", None


def _directory_error(path: Path) -> ParseError:
    """What to open instead of a directory; an `--xla_dump_to` directory's modules are named."""
    modules = [p for p in path.glob("*_optimizations.txt") if p.is_file()]  # before_/cpu_after_optimizations
    if not modules:
        return ParseError(f"{path} is a directory, not a program file (.mlir, .hlo or .txt)")
    largest = max(modules, key=lambda p: p.stat().st_size)
    return ParseError(f"{path} is a directory of XLA dumps ({len(modules)} module files): open one of them, "
                      f"e.g. the largest, {largest}")


def load_all(path_or_text: PathOrText, check: bool = True) -> list[Program]:
    """Every module of a file, including `// -----` separated ones, each parsed and verified.

    A file with no module at all (empty, or only comments) is a ParseError: every command reports
    it the same way."""
    text, name, path = _read(path_or_text)
    frontend = frontend_for(text, name)
    programs = []
    for index, module in enumerate(frontend.parse_all(text, name)):
        if check:
            from hlodbg.engine.verify import verify

            verify(module)
        programs.append(Program(module, path, index, frontend))
    if not programs:
        raise no_module_error(name)
    return programs


def load(path_or_text: PathOrText, chunk: Optional[int] = None, check: bool = True,
         fill_elided: Optional[str] = None) -> Program:
    """Parse and verify one program. Raises only ParseError or VerifyError for bad input.

    A file split with `// -----` holds several modules: pick one with `chunk=K` (0-based).
    `fill_elided` ("random" or "zeros"): give constants the text elided (`{...}`) such values
    (Program.fill_elided, seed 0), so the program can run.
    """
    program = _load_one(path_or_text, chunk, check)
    if fill_elided is not None:
        program.fill_elided(fill_elided)
    return program


def _load_one(path_or_text: PathOrText, chunk: Optional[int], check: bool) -> Program:
    programs = load_all(path_or_text, check=check)
    if chunk is None:
        if len(programs) > 1:
            raise ParseError(
                f"{programs[0].name} holds {len(programs)} modules separated by '// -----'; "
                f"choose one with --chunk K (K from 0 to {len(programs) - 1}; in Python, chunk=K)"
            )
        return programs[0]
    if not 0 <= chunk < len(programs):
        raise ParseError(f"chunk {chunk} does not exist; the file holds {len(programs)} modules (0..{len(programs) - 1})")
    return programs[chunk]
