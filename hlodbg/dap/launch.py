"""A `launch` request's arguments read as `hlodbg open`'s options, so the editor opens the same
target the debugger's window would: the program, its arguments file, target, grid, entry, ...

Each option of `hlodbg open` is a launch attribute in camelCase (`--args-per-device DIR` is
`"argsPerDevice": "DIR"`, `--allow-f64` is `"allowF64": true`, `--arg` and `--layout` take a
list); relative paths are read from `cwd` when it is given. Attributes of the DAP server itself:
`program` (the .mlir or .hlo file, required), `stopOnEntry` (stop before the first op instead of
running to a breakpoint) and `stopAtEnd` (default true: a run that finishes stops past its last op,
so the editor can still step back; false ends the session there). Attributes the editor adds
(`type`, `request`, `name`, `__sessionId`, ...) are passed over; any other is refused by name.
"""
from __future__ import annotations

import argparse
import os
import re
from typing import Any, NamedTuple, Optional

from hlodbg.engine.debug.target import DebugTarget
from hlodbg.engine.ir.errors import HlodbgError

# What clients put in every launch request beside the configuration's own attributes.
CLIENT_ATTRIBUTES = frozenset({"type", "request", "name", "noDebug", "presentation", "internalConsoleOptions",
                               "preLaunchTask", "postDebugTask", "debugServer", "console", "env", "envFile",
                               "serverReadyAction", "suppressMultipleSessionWarning"})
SERVER_ATTRIBUTES = frozenset({"program", "cwd", "stopOnEntry", "stopAtEnd"})
PATH_OPTIONS = frozenset({"args", "args_per_device", "capture"})
# Options of `hlodbg open` a launch does not take: the editor keeps its breakpoints itself.
NOT_LAUNCH_OPTIONS = frozenset({"no_save", "help"})


class LaunchError(HlodbgError):
    """A launch request that cannot be followed: a missing program, an attribute of a wrong type."""


class Launched(NamedTuple):
    program: Any  # hlodbg.program.Program
    target: DebugTarget
    stop_on_entry: bool
    stop_at_end: bool
    break_on: Optional[str]  # `breakOn`: a session breakpoint the first run goes to
    cwd: Optional[str]  # where relative paths are read from: the launch's, else the program's folder


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # argparse would print usage and exit the server
        raise LaunchError(f"launch: {_in_camel_case(message)}")


def _in_camel_case(message: str) -> str:
    return re.sub(r"--([a-z0-9-]+)", lambda m: f"'{_camel(m.group(1))}'", message)


def _camel(flag: str) -> str:
    head, *rest = flag.split("-")
    return head + "".join(word[:1].upper() + word[1:] for word in rest)


def _option_parser() -> tuple[_Parser, dict[str, argparse.Action]]:
    from hlodbg.cli_open_options import add_session_options

    parser = _Parser(prog="launch", add_help=False)
    add_session_options(parser)
    actions = {}
    for action in parser._actions:
        for flag in action.option_strings:
            if flag.startswith("--") and action.dest not in NOT_LAUNCH_OPTIONS:
                actions[_camel(flag[2:])] = action
    return parser, actions


def launch_attributes() -> list[str]:
    """Every attribute a launch takes (for the README and the refusal of unknown ones)."""
    _, actions = _option_parser()
    return sorted(SERVER_ATTRIBUTES | set(actions))


def read_launch(arguments: Any) -> Launched:
    """The program and target a launch request names (LaunchError / HlodbgError when it cannot)."""
    from hlodbg.ui_entry import launch_plan

    if not isinstance(arguments, dict):
        raise LaunchError("launch: the arguments must be an object with at least 'program'")
    cwd = arguments.get("cwd")
    if cwd is not None and (not isinstance(cwd, str) or not os.path.isdir(cwd)):
        raise LaunchError(f"launch: 'cwd' must name a directory, not {cwd!r}")
    program = arguments.get("program")
    if not isinstance(program, str) or not program.strip():
        raise LaunchError("launch: 'program' must name the .mlir or .hlo file to debug")
    parser, actions = _option_parser()
    argv: list[str] = []
    for key, value in arguments.items():
        if key in SERVER_ATTRIBUTES or key in CLIENT_ATTRIBUTES or key.startswith("__"):
            continue
        action = actions.get(key)
        if action is None:
            raise LaunchError(f"launch: unknown attribute '{key}' (known: {', '.join(launch_attributes())})")
        argv += _option_words(key, value, action, cwd)
    args = parser.parse_args(argv)
    args.no_save = True
    for flag in ("stopOnEntry", "stopAtEnd"):
        if flag in arguments and not isinstance(arguments[flag], bool):
            raise LaunchError(f"launch: '{flag}' is true or false, not {arguments[flag]!r}")
    plan = launch_plan(args, _resolved(program, cwd))
    target = plan.program.debug(plan.values, seed=args.seed, entry=args.entry, memory=args.memory, persist=False,
                                replicas=args.replicas, partitions=args.partitions, focus=plan.device,
                                backend=plan.backend)
    folder = cwd or os.path.dirname(os.path.abspath(_resolved(program, cwd)))
    return Launched(plan.program, target, arguments.get("stopOnEntry", False), arguments.get("stopAtEnd", True),
                    plan.break_on, folder)


def _option_words(key: str, value: Any, action: argparse.Action, cwd: Optional[str]) -> list[str]:
    flag = next(f for f in action.option_strings if _camel(f[2:]) == key)
    takes_value = action.nargs != 0
    if not takes_value:
        if not isinstance(value, bool):
            raise LaunchError(f"launch: '{key}' is true or false, not {value!r}")
        return [flag] if value else []
    values = value if isinstance(action, argparse._AppendAction) and isinstance(value, list) else [value]
    words = []
    for item in values:
        if isinstance(item, bool) or not isinstance(item, (str, int, float)):
            raise LaunchError(f"launch: '{key}' takes "
                              f"{'a list of strings' if isinstance(action, argparse._AppendAction) else 'a string or a number'}, "
                              f"not {item!r}")
        text = str(item)
        if action.dest in PATH_OPTIONS:
            text = _resolved(text, cwd)
        elif action.dest == "arg":
            index, sep, path = text.partition("=")
            text = f"{index}={_resolved(path, cwd)}" if sep else text
        words += [flag, text]
    return words


def _resolved(path: str, cwd: Optional[str]) -> str:
    path = os.path.expanduser(path)
    return os.path.join(cwd, path) if cwd and not os.path.isabs(path) else path


__all__ = ["LaunchError", "Launched", "launch_attributes", "read_launch"]
