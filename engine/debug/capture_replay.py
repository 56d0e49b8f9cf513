"""Running a program "from a capture": the values of a real run (engine/run/capture_format.py) in
place of computed ones, so the debugger, `hlodbg run --break-on` and `hlodbg diff` look at what
the device did (`hlodbg PROG --capture RUN.hlocap`).

The seam is the backend (machine/backend.py): `CaptureBackend.wrap_evaluator` wraps the evaluator
of every op the capture holds values of, once per op when its block is compiled, and the wrapped
evaluator names the op instance it runs for from the interpreter's frames (`call.interpreter.frame`
through capture_format.frame_context, the very naming the capture was written with) and yields
the captured arrays instead of computing. A backend rather than a listener because a listener sees
an op's results only after its evaluator made them: it could not keep the evaluator from running,
nor hand the captured arrays to the ops after it without a second copy of every value. Being a
backend, a capture goes wherever a target goes — a session (steps, back, breakpoints, the
inspector, overlays), the grid (`for_device` binds each emulated device to the capture's device
of the same id), `run --break-on`'s scan and the lock-step comparison of `hlodbg diff` — with no
change to any of them.

Which ops still run their evaluator (decided once per op, from its traits): those whose results
are not all captured (computed on the numpy backend from their, captured, operands: "computed"),
and those that must run for the run to go on — ops whose regions are frames of the run (loops,
branches, calls, manual computations: their inner ops are op instances of their own), collectives
and every op that is not pure (the grid meets at a collective, whatever the capture holds) — whose
captured results then replace the computed ones. A loop's condition is such an inner op, so
control flow follows the real run: a loop takes as many iterations as it did on the device.

On a grid, a value the capture holds for several devices is per-device (inside a manual
computation) and each device reads its own row; a value held at device 0 only is a global value
of a sharded program ("device 0 holds the global array"), which every device of hlodbg's grid
holds whole, so it serves them all.
"""
from __future__ import annotations

import copy
import difflib
from pathlib import Path
from typing import Any, Callable, Optional, Sequence

import numpy as np

from ..ir.core import Module, Operation
from ..ir.opset import callee_attribute, effect_of, has_aliasing_regions, is_collective
from ..ir.types import TensorType
from ..machine.backend import CPU, Backend
from ..machine.excess_precision import excess_producer
from ..run.capture_format import PROGRAM, Capture, CaptureError, Row, context_step, frame_context, join_context, site

CAPTURED = "captured"
COMPUTED = "computed"
# Captured arrays smaller than this are read into memory; larger ones are memory-mapped. Each
# mapping holds a file descriptor as long as the value lives, and a recording keeps values up to
# its budget (a quarter of RAM): 64 MiB keeps that to a few hundred descriptors.
MAP_FROM_BYTES = 64 << 20


def open_capture(path: Any) -> Capture:
    """The capture at `path`, or a CaptureError saying what is wrong with it."""
    directory = Path(path)
    if not directory.exists():
        raise CaptureError(f"no capture at {directory} (make one with `hlodbg capture PROG -o {directory.name}`)")
    if not directory.is_dir():
        raise CaptureError(f"{directory} is not a capture: a capture is a directory (RUN.hlocap/) holding capture.json")
    return Capture.open(directory)


def open_replay(path: Any, module: Module, program_text: str, program_path: str, base: Backend = CPU) -> "CaptureBackend":
    """The backend replaying the capture at `path` on `module` (read from `program_path`, whose
    text is `program_text`), after checking it is the program captured."""
    capture = open_capture(path)
    check_program(capture, module, program_text, program_path)
    return CaptureBackend(capture, base)


def check_program(capture: Capture, module: Module, program_text: str, program_path: str) -> None:
    """Refuse to replay a capture on a program other than the one captured: the same text, or
    the same module once both are printed by hlodbg (a capture's program.mlir is the MLIR the run
    compiled; PROG may be its HLO text or a differently spaced copy). Sites are positions of ops
    in their functions, so any other program would read values at the wrong ops."""
    captured_text = capture.program_text
    if captured_text == program_text:
        return
    from ..syntax import MLIR

    captured_path = capture.directory / PROGRAM
    try:
        captured_modules = MLIR.parse_all(captured_text, str(captured_path))
    except Exception as e:  # noqa: BLE001 - a corrupt program.mlir is the capture's fault, said plainly
        raise CaptureError(f"cannot read the captured program {captured_path}: {getattr(e, 'message', e)}") from None
    ours = MLIR.print(module).splitlines()
    theirs = MLIR.print(captured_modules[0]).splitlines() if len(captured_modules) == 1 else []
    if ours == theirs:
        return
    where = ""
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, theirs, ours, autojunk=False).get_opcodes():
        if tag != "equal":
            captured_line = theirs[i1].strip() if i1 < i2 else "(nothing)"
            program_line = ours[j1].strip() if j1 < j2 else "(nothing)"
            where = f"; first difference: the capture has `{captured_line[:100]}` where PROG has `{program_line[:100]}`"
            break
    raise CaptureError(f"{program_path} is not the program captured in {capture.directory} (its text differs from "
                       f"{captured_path}){where}; replay the capture with the program it was made from")


def describe_capture(capture: Capture) -> str:
    """`capture run.hlocap (xla:cpu, 8 x cpu)`: the name, the run's target and device kinds."""
    kinds: dict[str, int] = {}
    for device in capture.devices:
        kind = str(device.get("kind", "?"))
        kinds[kind] = kinds.get(kind, 0) + 1
    devices = ", ".join(f"{count} x {kind}" if count > 1 else kind for kind, count in kinds.items())
    target = capture.manifest.get("target", "?")
    return f"capture {capture.directory.name} ({target}, {devices})"


class CaptureBackend(Backend):
    """A backend that yields a capture's arrays for the op instances it holds and computes the
    rest with `base` (the numpy backend's numerics). One instance per device of the grid."""

    name = "capture"
    from_xla = True  # compared with XLA's tolerances by default (difference.py)
    replays_capture = True
    reads_frames = True  # a captured value is found by its op instance's loop iterations

    def __init__(self, capture: Capture, base: Backend = CPU, device: int = 0):
        self.capture = capture
        self.base = base
        self.device = device
        self.label = describe_capture(capture)
        devices: dict[str, set] = {}
        for row in capture.rows:
            devices.setdefault(row.site, set()).add(row.device)
        # site -> the devices holding values of it (a site at device 0 alone is a global value)
        self._devices_of = {text: frozenset(held) for text, held in devices.items()}
        self.replayed = 0  # op instances that yielded captured values (figures, tests)
        self.computed = 0  # op instances of captured sites that had to compute a result

    # -- the grid --------------------------------------------------------------------------------
    @property
    def grid(self) -> tuple[int, int]:
        return self.capture.grid

    def for_device(self, process: Any, grid: Any = None) -> "CaptureBackend":
        device = process.replica_id * self.capture.grid[1] + process.partition_id
        other = copy.copy(self)
        other.base = self.base.for_device(process, grid)
        other.device = device
        return other

    def describe(self) -> str:
        return self.label

    # The ops it computes, it computes as its base does: the setting is the base's, read here and
    # set through configured() (a read-only property where Backend has a plain attribute).
    @property
    def excess_precision(self) -> bool:  # type: ignore[override]
        return self.base.excess_precision

    def configured(self, **options: Any) -> "CaptureBackend":
        other = copy.copy(self)
        other.base = self.base.configured(**options)
        return other

    def numerics_mode(self) -> str:
        return f"captured values; computed ones with {self.base.numerics_mode()}"

    def prepare(self, module: Any) -> None:
        self.base.prepare(module)

    def run_notes(self, module: Any) -> list[str]:
        return [f"values from {self.label}; ops it did not capture are computed on {self.base.describe()}"]

    def numerics_notes(self, op: Any, values: Optional[Sequence[Any]] = None) -> list[str]:
        """The base's notes, and for an op the capture holds no value of, that its values here
        are not the device's (a diff that parts there parts on the emulator's own arithmetic)."""
        notes = list(self.base.numerics_notes(op, values))
        producer = excess_producer(op)
        if producer is not None:  # about the captured value, whatever the base does when it computes one
            notes.append(f"excess precision: XLA's compiled run may convert {producer.name}'s value as computed in "
                         f"f32, not rounded to {op.operands[0].type.element} first (inside a fusion); the emulator "
                         f"does the same unless --per-op-rounding")
        if op.results and op.function is not None and site(op) not in self._devices_of:
            notes.append(f"{self.label} holds no value of this op: its results here are computed on "
                         f"{self.base.describe()} from the captured operands")
        return notes

    # -- which values there are ------------------------------------------------------------------
    def row(self, context: str, site_text: str, result: int) -> Optional[Row]:
        """The capture's row of one result of one op instance on this device (a global value's
        row at device 0 serves every device)."""
        devices = self._devices_of.get(site_text)
        if devices is None:
            return None
        device = self.device if self.device in devices or devices != {0} else 0
        return self.capture.row(context, site_text, result, device)

    def value_source(self, context: str, op: Operation) -> str:
        """CAPTURED when every result of this op instance came from the capture, else COMPUTED."""
        if not op.results:
            return COMPUTED
        text = site(op)
        if text not in self._devices_of:
            return COMPUTED
        return CAPTURED if all(self.row(context, text, k) is not None for k in range(len(op.results))) else COMPUTED

    def read(self, row: Row, op: Operation, result: int) -> np.ndarray:
        """A captured array as the op's result: checked against the result's type, memory-mapped
        when large, read-only (an evaluator never writes its operands)."""
        nbytes = int(np.prod(row.shape, dtype=np.int64)) * max(1, _itemsize(row.dtype))
        try:
            array = self.capture.load(row, mapped=nbytes >= MAP_FROM_BYTES)
        except (TypeError, AttributeError, ValueError) as e:  # an index naming a dtype no one knows
            raise CaptureError(f"{self.capture.directory / row.file}: cannot read it as {row.dtype} ({e})") from None
        array = np.asarray(array)  # a plain ndarray (a memmap's subclass spreads to every result)
        t = op.results[result].type
        if isinstance(t, TensorType) and t.is_static:
            if tuple(array.shape) != tuple(t.shape) or array.dtype != _numpy_dtype(t, array.dtype):
                raise CaptureError(f"{self.capture.directory / row.file}: captured as {row.value} of {row.site} "
                                   f"(context {row.context or 'top level'!r}, device {row.device}), holds "
                                   f"{array.dtype}{list(array.shape)} where the program has {t}")
        array.flags.writeable = False
        return array

    # -- per op ----------------------------------------------------------------------------------
    def wrap_evaluator(self, op: Any, evaluator: Callable) -> Callable:
        inner = self.base.wrap_evaluator(op, evaluator)
        if not op.results or op.function is None:
            return inner
        text = site(op)
        if text not in self._devices_of:
            return inner  # never captured (a reducer body's op, or left out): always computed
        count = len(op.results)
        must_run = _must_run(op)
        row, read = self.row, self.read

        def replayed(call: Any, *operands: Any) -> Any:
            context = frame_context(call.interpreter.frame)
            rows = [row(context, text, k) for k in range(count)]
            if not must_run and all(r is not None for r in rows):
                self.replayed += 1
                arrays = [read(r, op, k) for k, r in enumerate(rows)]
                return arrays[0] if count == 1 else arrays
            out = inner(call, *operands)
            if not any(r is not None for r in rows):
                self.computed += 1
                return out
            outputs = [out] if count == 1 else list(out)
            for k, r in enumerate(rows):
                if r is not None:
                    outputs[k] = read(r, op, k)
            if all(r is not None for r in rows):
                self.replayed += 1
            else:
                self.computed += 1
            return outputs[0] if count == 1 else outputs

        return replayed


def _must_run(op: Operation) -> bool:
    """Whether `op`'s evaluator runs even when all its results were captured: its regions are
    frames of the run (their ops are instances of their own), it meets other devices, or it does
    more than compute its results from its operands."""
    name = op.name
    return (has_aliasing_regions(name) or callee_attribute(name) is not None or is_collective(name)
            or effect_of(name) != "pure")


def _numpy_dtype(t: TensorType, otherwise: np.dtype) -> np.dtype:
    """The numpy dtype of a tensor type's elements (`otherwise` for those without one: quantized)."""
    try:
        return t.numpy_dtype
    except (TypeError, AttributeError, NotImplementedError):
        return otherwise


def _itemsize(dtype: str) -> int:
    try:
        return np.dtype(dtype).itemsize
    except TypeError:
        return 2  # the narrow floats numpy does not name (bf16 and the f8 family): 2 bytes at most


def frames_context(frames: Sequence[Any]) -> str:
    """The context of values computed in the innermost of `frames` (outermost first; anything
    with `owner` and `iteration`: the interpreter's frames, divergence's FrameSteps)."""
    return join_context(*(context_step(f.owner, f.iteration) for f in frames if f.owner is not None))


def source_in(backend: Any, frames: Sequence[Any], op: Operation) -> Optional[str]:
    """CAPTURED or COMPUTED for an op instance run in `frames` by `backend`; None when the backend
    does not replay a capture."""
    if not backend.replays_capture:
        return None
    return backend.value_source(frames_context(frames), op)


def record_context(trace: Any, record: Any) -> str:
    """The capture context of values computed in a recorded frame (engine/debug/trace.py's
    FrameRecord), the same as frame_context gives for the interpreter's frame it records."""
    steps = []
    while record is not None:
        if record.owner is not None:
            steps.append(context_step(trace.ops[record.owner], record.iteration))
        record = record.parent
    return join_context(*reversed(steps))


def value_source(session: Any, event: int) -> Optional[str]:
    """CAPTURED or COMPUTED for an op instance of a session replaying a capture; None for a
    session that is not."""
    if not session.backend.replays_capture:
        return None
    trace = session.trace
    return session.backend.value_source(record_context(trace, trace.frames[event]), trace.ops[event])


__all__ = ["CAPTURED", "COMPUTED", "CaptureBackend", "check_program", "describe_capture", "open_capture", "open_replay",
           "frames_context", "record_context", "source_in", "value_source"]
