"""`--target` and the options that shape a target's machine, shared by every command that runs a
program (run, open, serve, export, check, memory, diff)."""
from __future__ import annotations

from hlodbg.engine.machine.targets import DEFAULT_TARGET, TargetError, backend_for, find_target, targets


def target_help(what: str = "runs") -> str:
    """`--target`'s help: every target of the registry, with its aliases and what it is."""
    described = []
    for target in targets():
        also = f" (or {', '.join(target.aliases)})" if target.aliases else ""
        described.append(f"{target.name}{also}: {target.help}")
    return f"the machine every device {what} on (default: {DEFAULT_TARGET}): {'; '.join(described)}".replace("%", "%%")


def add_target_options(cmd, what: str = "runs") -> None:
    cmd.add_argument("--target", default=DEFAULT_TARGET, metavar="NAME", help=target_help(what))
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


# The flag that sets each backend option (engine/machine/targets.py's OPTIONS).
OPTION_FLAGS = {"layouts": "--layout", "allow_f64": "--allow-f64", "excess_precision": "--excess-precision"}
# The options that shape a machine's storage and types (a TPU's), and their flags: in a comparison
# they go to each side that takes them, where the numerics option stays with --target.
TPU_ONLY_OPTIONS = {option: OPTION_FLAGS[option] for option in ("layouts", "allow_f64")}
# The flag that sets an option to each of its values, where two flags set one option.
_FLAGS_BY_VALUE = {"excess_precision": {True: "--excess-precision", False: "--per-op-rounding"}}


def option_flag(option: str, value) -> str:
    """The flag the command line set backend option `option` to `value` with."""
    flags = _FLAGS_BY_VALUE.get(option)
    return flags[value] if flags is not None else OPTION_FLAGS[option]


def check_target_options(name: str, options: dict) -> None:
    """A TargetError, naming its flag and who takes it, for the first of `options` target `name`
    does not take (its registry entry says which it takes)."""
    target = find_target(name)
    for option, value in options.items():
        if option not in target.options:
            raise TargetError(target.refusal(option, option_flag(option, value), pick="--target "))


def backend_from_args(args):
    """The Backend `--target` and its options name; an option the target does not take is an
    error saying which targets take it."""
    name = getattr(args, "target", None) or DEFAULT_TARGET
    options = target_options(args)
    check_target_options(name, options)
    return backend_for(name, **options)


__all__ = ["OPTION_FLAGS", "TPU_ONLY_OPTIONS", "add_target_options", "backend_from_args",
           "check_target_options", "option_flag", "target_help", "target_options"]
