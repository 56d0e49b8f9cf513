"""Targets: the names users pick a machine by (`--target`, `target=`) and the backend each gives.

One registry holds every target: its name, its aliases, the factory of its backend, the backend
options it takes and its help text. The CLI's `--target` help and option checks
(hlodbg/cli_target.py), `hlodbg capture`'s choices, `Program.run(target=...)`, the status bar and
error messages read it; what a target's machine can do is its Backend's to say, so no code outside
engine/machine/ compares target names (tests/test_architecture_targets.py). A new target is a module
with its Backend subclass and one `register_target` entry (docs/architecture.md, "Adding a target").

`cpu` (the default) is XLA on the CPU; `tpu-v4`, `tpu-v5e`, `tpu-v5p`, `tpu-v6e`, `tpu7x` and plain
`tpu` (= tpu-v5e) emulate one chip of that generation per device of the grid. `xla:cpu`, `xla:gpu`
and `xla:tpu` run the ops on real devices through JAX's XLA runtime (machine/xla/backend.py, the
optional `hlodbg[xla]` extra); they take none of the emulated machines' options.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Optional, Union

from ..ir.errors import HlodbgError
from .backend import CPU, Backend
from .tpu.generations import ALIASES, GENERATIONS, TpuGeneration

DEFAULT_TARGET = "cpu"


class TargetError(HlodbgError):
    """An unknown target name, or an option its target does not take."""


@dataclass(frozen=True)
class TargetOption:
    """A backend option some targets take (a keyword of `backend_for`), and how a refusal of it
    names the targets that do."""

    name: str  # the keyword: "layouts"
    applies_to: str  # "TPU targets"
    instead: str  # a target to name instead: "tpu-v5e (or another TPU)"


OPTIONS: dict[str, TargetOption] = {o.name: o for o in (
    TargetOption("layouts", "TPU targets", "tpu-v5e (or another TPU)"),
    TargetOption("allow_f64", "TPU targets", "tpu-v5e (or another TPU)"),
    TargetOption("excess_precision", "the emulated targets", DEFAULT_TARGET),
)}


@dataclass(frozen=True)
class Target:
    """One entry of the registry: `make(**options)` gives the backend of every device."""

    name: str  # canonical, lower case: what describe() of its backend says
    make: Callable[..., Backend]
    help: str  # one line for `--help` and the docs
    options: frozenset[str] = frozenset()  # the OPTIONS it takes
    aliases: tuple[str, ...] = ()
    # Why it takes none of the options (said when one is given): "XLA decides its own layouts".
    refuses_options_because: str = ""
    # The XLA platform whose real devices it runs on (its backend's xla_platform, known without
    # making one, which needs JAX): `hlodbg capture` offers such targets.
    xla_platform: Optional[str] = None

    def refusal(self, option: str, spelled: str = "", pick: str = "target=") -> str:
        """Why `option` (spelled as the user gave it: `--layout`) does not apply to this target;
        `pick` is how the user names a target (`--target ` on the command line)."""
        spelled = spelled or option
        if option not in OPTIONS:
            return f"{self.name} takes no option {spelled}; its options: {', '.join(sorted(self.options)) or 'none'}"
        if not self.options:
            takers = ", ".join(t.name for t in targets() if t.options)
            because = f": {self.refuses_options_because}" if self.refuses_options_because else ""
            return f"{spelled} applies to the emulated targets ({takers}), not {self.name}{because}"
        wanted = OPTIONS[option]
        return f"{spelled} applies to {wanted.applies_to}, not {self.name}; add {pick}{wanted.instead}"

    def backend(self, **options: Any) -> Backend:
        """The backend with `options`, each one this target takes (else a TargetError)."""
        for option in options:
            if option not in self.options:
                raise TargetError(self.refusal(option))
        return self.make(**options)


_TARGETS: dict[str, Target] = {}  # canonical name -> its entry, in registration order
_NAMES: dict[str, str] = {}  # name or alias -> canonical name


def register_target(target: Target) -> Target:
    """Add `target` to the registry; a name or alias already taken, or an option no one defined,
    is a ValueError (a programming error, found at import)."""
    for name in (target.name, *target.aliases):
        if name != name.strip().lower():
            raise ValueError(f"target name {name!r} must be lower case without spaces around it")
        if name in _NAMES:
            raise ValueError(f"target name {name!r} is taken by {_NAMES[name]}")
    unknown = sorted(set(target.options) - set(OPTIONS))
    if unknown:
        raise ValueError(f"target {target.name} takes unknown option(s) {', '.join(unknown)}; "
                         f"known: {', '.join(OPTIONS)}")
    _TARGETS[target.name] = target
    for name in (target.name, *target.aliases):
        _NAMES[name] = target.name
    return target


def targets() -> list[Target]:
    """Every registered target, in registration order."""
    return list(_TARGETS.values())


def target_names() -> list[str]:
    """Every name a target is picked by: canonical names, then their aliases."""
    return [*(t.name for t in _TARGETS.values()), *(a for t in _TARGETS.values() for a in t.aliases)]


def registered_target(name: str) -> Optional[Target]:
    """The registry's entry for a name or alias (any case, spaces around ignored); None for a
    machine no name picks (a capture being replayed)."""
    key = _NAMES.get(name.strip().lower())
    return _TARGETS[key] if key is not None else None


def find_target(name: str) -> Target:
    """The registry's entry for a name or alias; an unknown name is a TargetError listing them."""
    target = registered_target(name)
    if target is None:
        raise TargetError(f"unknown target {name!r}; choose one of: {', '.join(target_names())}")
    return target


def canonical_target(name: str) -> str:
    return find_target(name).name


def is_default_target(name: str) -> bool:
    """Whether `name` picks the default target (the CPU)."""
    return find_target(name).name == DEFAULT_TARGET


def backend_for(target: Union[str, Backend, None] = None, **options: Any) -> Backend:
    """The backend of a target name (a Backend is returned as it is; None is the CPU).

    `options` are the backend options the target takes (its registry entry: a TPU takes `layouts`,
    `allow_f64` and `excess_precision`, the CPU `excess_precision` only, the XLA targets none);
    others are a TargetError. Without JAX the XLA targets raise XlaUnavailable (an HlodbgError)
    with the command that installs it."""
    if isinstance(target, Backend):
        return target
    return find_target(target or DEFAULT_TARGET).backend(**options)


# -- the built-in targets -------------------------------------------------------------------------
def _cpu(**options: Any) -> Backend:
    return CPU.configured(**options) if options else CPU


def _tpu(generation: TpuGeneration) -> Callable[..., Backend]:
    def make(**options: Any) -> Backend:
        from .tpu.backend import TpuBackend

        return TpuBackend(generation, **options)

    return make


def _xla(platform: str) -> Callable[..., Backend]:
    def make() -> Backend:
        from .xla.backend import XlaBackend  # JAX only when an XLA target is picked

        return XlaBackend(platform)

    return make


register_target(Target(DEFAULT_TARGET, _cpu, "XLA on the CPU, emulated with numpy (the default)",
                       frozenset({"excess_precision"})))
for _generation in GENERATIONS.values():
    register_target(Target(_generation.name, _tpu(_generation),
                           f"one emulated {_generation.device_kind} chip per device",
                           frozenset({"layouts", "allow_f64", "excess_precision"}),
                           tuple(alias for alias, name in ALIASES.items() if name == _generation.name)))
for _platform in ("cpu", "gpu", "tpu"):  # runtime.PLATFORMS, spelled here to keep JAX unimported
    register_target(Target(f"xla:{_platform}", _xla(_platform),
                           f"real {_platform.upper()} devices through JAX's XLA runtime (the hlodbg[xla] extra)",
                           refuses_options_because="XLA decides its own layouts and numerics", xla_platform=_platform))

__all__ = ["DEFAULT_TARGET", "OPTIONS", "Target", "TargetError", "TargetOption", "backend_for", "canonical_target",
           "find_target", "is_default_target", "register_target", "registered_target", "target_names", "targets"]
