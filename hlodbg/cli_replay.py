"""`--capture RUN.hlocap` on `open`, `serve`, `run` and `diff`: the program runs from a capture of a
real run (engine/debug/capture_replay.py) — captured values in place of computed ones, on a grid
of the capture's shape, on the capture's arguments unless others are given."""
from __future__ import annotations

from hlodbg.engine import HlodbgError

CAPTURE_HELP = ("a capture of a real run (`hlodbg capture ... -o RUN.hlocap`): every op instance it holds yields "
                "the captured values instead of computing (ops it left out are computed from their operands on the "
                "numpy backend); arguments default to the capture's inputs, the grid to its devices")


class CaptureOptionError(HlodbgError):
    """An option that does not go with --capture."""


def add_capture_option(cmd) -> None:
    cmd.add_argument("--capture", metavar="RUN.hlocap", help=CAPTURE_HELP)


def capture_backend(args, program):
    """The capture backend --capture names, checked against PROG, or None without --capture.
    The capture's grid becomes the run's (--replicas/--partitions must agree with it)."""
    path = getattr(args, "capture", None)
    if not path:
        return None
    from hlodbg.engine.debug.capture_replay import open_replay
    from hlodbg.engine.machine.targets import DEFAULT_TARGET, is_default_target

    if not is_default_target(getattr(args, "target", None) or DEFAULT_TARGET):
        raise CaptureOptionError(f"--capture replays {path}'s values (ops it left out are computed on the numpy "
                                 f"backend); leave out --target {args.target} (diff --against names the emulator)")
    backend = open_replay(path, program.module, program.source, args.program)
    replicas, partitions = backend.grid
    for flag, given, wanted in (("--replicas", getattr(args, "replicas", None), replicas),
                                ("--partitions", getattr(args, "partitions", None), partitions)):
        if given is not None and given != wanted:
            raise CaptureOptionError(f"{flag} {given}: {path} was captured on a {replicas}x{partitions} grid")
    args.replicas, args.partitions = replicas, partitions
    return backend


def emulator_backend(args, against=None):
    """The emulator a capture is compared with: --against (default cpu) shaped by the target
    options the command line gives (--per-op-rounding; --layout and --allow-f64 for a TPU),
    which with --capture apply to it, the capture's own values being fixed."""
    from argparse import Namespace

    from hlodbg.cli_target import TPU_ONLY_OPTIONS, backend_from_args, target_options
    from hlodbg.engine.machine.targets import DEFAULT_TARGET, OPTIONS, find_target

    emulator = find_target(against or getattr(args, "against", None) or DEFAULT_TARGET)
    for option, flag in TPU_ONLY_OPTIONS.items():
        if option in target_options(args) and option not in emulator.options:
            raise CaptureOptionError(f"{flag} shapes a TPU emulator; with --capture add --against "
                                     f"{OPTIONS[option].instead}")
    return backend_from_args(Namespace(**{**vars(args), "target": emulator.name}))


def capture_arguments(args, backend, function):
    """The capture's inputs as the run's arguments, unless the command line gives its own (then
    those: the values captured still come from the capture)."""
    if args.args or args.arg or getattr(args, "args_per_device", None):
        return None
    inputs = backend.capture.inputs()
    count = len(function.function_type.inputs)
    if len(inputs) != count:
        from hlodbg.engine.run.capture_format import CaptureError

        raise CaptureError(f"{backend.capture.directory}: holds {len(inputs)} input(s) where @{function.sym_name} "
                           f"takes {count}; pass the arguments with --args")
    return inputs


__all__ = ["CaptureOptionError", "add_capture_option", "capture_arguments", "capture_backend", "emulator_backend"]
