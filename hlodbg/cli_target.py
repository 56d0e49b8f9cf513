"""`--target` and the options that shape a target's machine, shared by every command that runs a
program (run, open, serve, export, check, memory, diff)."""
from __future__ import annotations

from hlodbg.engine.machine.targets import DEFAULT_TARGET, backend_for, canonical_target, is_xla_target, target_names


def add_target_options(cmd, what: str = "runs") -> None:
    cmd.add_argument("--target", default=DEFAULT_TARGET, metavar="NAME",
                     help=f"the machine every device {what} on: {', '.join(target_names())} "
                          f"(default: {DEFAULT_TARGET}; tpu = tpu-v5e; xla:* run on real devices through JAX)")
    cmd.add_argument("--layout", action="append", default=[], metavar="NAME=SPEC",
                     help="TPU: the layout of an argument (arg0, or its name: %%x) or result (result0) in XLA's "
                          "syntax, braces optional (the shell expands unquoted ones): arg0=1,0:T(8,128) or "
                          "result0=0,1:T(4,128) (repeatable)")
    cmd.add_argument("--allow-f64", action="store_true",
                     help="TPU: emulate f64/c128 in 64 bits instead of refusing them (TPUs have no 64-bit floats)")
    numerics = cmd.add_mutually_exclusive_group()
    numerics.add_argument("--per-op-rounding", dest="excess_precision", action="store_const", const=False,
                          default=None,
                          help="round every op's result to its type, as the StableHLO spec says (default: excess "
                               "precision, as XLA: a bf16/f8 result converted straight to f32 is not rounded first)")
    numerics.add_argument("--excess-precision", dest="excess_precision", action="store_const", const=True,
                          help="XLA's excess precision (the default of cpu and tpu-*; kept for older command lines)")


def target_options(args) -> dict:
    """The backend options the command line gave (only those that were set)."""
    options: dict = {}
    layouts = {}
    for item in getattr(args, "layout", None) or []:
        name, sep, spec = item.partition("=")
        if not sep or not name.strip() or not spec.strip():
            from hlodbg.engine.machine.targets import TargetError

            raise TargetError(f"--layout {item!r}: expected NAME=SPEC, e.g. arg0=1,0:T(8,128)")
        layouts[name.strip()] = spec.strip()
    if layouts:
        options["layouts"] = layouts
    if getattr(args, "allow_f64", False):
        options["allow_f64"] = True
    excess_precision = getattr(args, "excess_precision", None)
    if excess_precision is not None:
        options["excess_precision"] = excess_precision
    return options


# The backend options only a TPU takes, and their flags.
TPU_ONLY_OPTIONS = {"layouts": "--layout", "allow_f64": "--allow-f64"}
# The options of the emulated machines (the XLA targets compute as XLA does and take none).
EMULATION_OPTIONS = {**TPU_ONLY_OPTIONS, "excess_precision": "--excess-precision"}
# The flag that sets an option to each of its values, where two flags set one option.
_FLAGS_BY_VALUE = {"excess_precision": {True: "--excess-precision", False: "--per-op-rounding"}}


def backend_from_args(args):
    """The Backend `--target` and its options name. TPU-only options on the CPU, and any emulation
    option on an XLA target, are an error."""
    name = canonical_target(getattr(args, "target", None) or DEFAULT_TARGET)
    options = target_options(args)
    if is_xla_target(name):
        for option, flag in EMULATION_OPTIONS.items():
            if option in options:
                flags = _FLAGS_BY_VALUE.get(option)
                if flags is not None:
                    flag = flags[options[option]]
                from hlodbg.engine.machine.targets import TargetError

                raise TargetError(f"{flag} applies to the emulated targets (cpu, tpu-*), not {name}: "
                                  f"XLA decides its own layouts and numerics")
    if name == "cpu":
        for tpu_only, flag in TPU_ONLY_OPTIONS.items():
            if tpu_only in options:
                from hlodbg.engine.machine.targets import TargetError

                raise TargetError(f"{flag} applies to TPU targets; add --target tpu-v5e (or another TPU)")
    return backend_for(name, **options)


__all__ = ["EMULATION_OPTIONS", "TPU_ONLY_OPTIONS", "add_target_options", "backend_from_args", "target_options"]
