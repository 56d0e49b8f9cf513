"""A JAX call lowered the way jit compiles it, with its arguments: `load(f, *args, **kwargs)`.

jit flattens the call's dynamic arguments — the positional ones but the static ones, then the
keyword ones but the static names, in pytree order (a dict's keys sorted) — into the parameters
of the program it lowers, and drops the ones the function never reads (`keep_unused=False`, its
default). The program is lowered with debug info, so every op's `loc` carries its JAX source
line and name stack, and every parameter's its pytree path (`params['layer_0']['w']`): hlodbg's
argument names (engine/run/arguments.py ArgumentNames) read it from there. The values are
copied to the host once, as numpy arrays (a sharded jax.Array as its global value, which a
sharded program's run cuts again by the parameters' shardings).
"""
from __future__ import annotations

import contextlib
import functools
import operator
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import jax
import numpy as np

from hlodbg.engine import HlodbgError
from hlodbg.program import Program
from hlodbg.program import load as load_program


class JaxCallError(HlodbgError):
    """A JAX function or call hlodbg.jax cannot lower as given."""


def _hide_own_frames() -> None:
    """JAX writes the Python call stack of every op into its `loc` (a chain of callsites) and
    leaves out frames of files it was told are a library's own: without this, hlodbg.jax's own
    calls (`load` -> lowering) would sit in every op's chain beside the user's lines. The hook
    is JAX's private one (libraries such as Flax use it); without it nothing changes but that."""
    import os

    try:
        from jax._src import source_info_util
    except ImportError:
        return
    register = getattr(source_info_util, "register_exclusion", None)
    if register is not None:
        register(os.path.dirname(os.path.abspath(__file__)))


_hide_own_frames()


@contextlib.contextmanager
def users_jax_settings():
    """The caller's JAX settings as they were, after hlodbg's work: hlodbg's XLA runtime switches
    64-bit types on for its own programs (engine/machine/xla/runtime.py), which in the user's own
    process would silently turn their Python floats into f64 from then on."""
    x64 = bool(jax.config.jax_enable_x64)
    try:
        yield
    finally:
        if bool(jax.config.jax_enable_x64) != x64:
            jax.config.update("jax_enable_x64", x64)


def keeps_users_jax_settings(function: Callable) -> Callable:
    """`function` run under users_jax_settings."""
    @functools.wraps(function)
    def kept(*args, **kwargs):
        with users_jax_settings():
            return function(*args, **kwargs)
    return kept


@dataclass
class LoweredCall:
    """One call of a jit-compiled function: the function as jit wraps it, the lowered program
    (its arguments bound), and which of jit's flat arguments the program kept."""

    jitted: Callable
    program: Program
    dynamic: Callable[[tuple, dict], tuple]  # (args, kwargs) -> the dynamic part jit flattens
    kept: list[int]  # positions, among jit's flat arguments, of the program's parameters

    def flat_arguments(self, args: tuple, kwargs: dict) -> list:
        """The program's parameters of the call (args, kwargs), as the caller's leaves."""
        leaves = jax.tree_util.tree_leaves(self.dynamic(args, kwargs))
        return [leaves[k] for k in self.kept]


def is_jitted(f: Any) -> bool:
    """Whether `f` is a jit-wrapped function (`jax.jit(f)`, `@jax.jit`)."""
    return callable(f) and hasattr(f, "lower") and hasattr(f, "trace")


def jitted_function(f: Callable, static_argnums=None, static_argnames=None) -> Callable:
    """`f` as jit wraps it: itself when jit-wrapped (its own static arguments and shardings hold),
    else jax.jit(f, static_argnums=..., static_argnames=...)."""
    if not callable(f):
        raise JaxCallError(f"hlodbg.jax expects a function (plain or jax.jit-wrapped), not {type(f).__name__}")
    if is_jitted(f):
        if static_argnums is not None or static_argnames is not None:
            raise JaxCallError("the function is jit-wrapped already: give static_argnums/static_argnames to its "
                               "jax.jit, not to hlodbg.jax")
        return f
    return jax.jit(f, static_argnums=static_argnums, static_argnames=static_argnames)


def _statics(jitted: Callable, positional: int) -> tuple[set[int], set[str]]:
    """The static argument positions and names of `jitted` (as jit resolved them from each other
    through the function's signature)."""
    info = getattr(jitted, "_jit_info", None)
    if info is None:
        raise JaxCallError("this version of JAX does not say which arguments of a jitted function are static; "
                           "pass the plain function with static_argnums/static_argnames to hlodbg.jax")
    numbers = {n if n >= 0 else n + positional for n in map(operator.index, info.static_argnums)}
    return numbers, set(info.static_argnames)


def lower_call(f: Callable, args: Sequence[Any], kwargs: dict, static_argnums=None, static_argnames=None) -> LoweredCall:
    """Lower f(*args, **kwargs) as jit does, with debug info; see the module docstring."""
    jitted = jitted_function(f, static_argnums, static_argnames)
    args = tuple(args)
    try:
        lowered = jitted.lower(*args, **kwargs)
    except (TypeError, ValueError) as error:  # a wrong call: JAX says what, in its words
        raise JaxCallError(f"JAX could not lower the call: {error}") from None
    numbers, names = _statics(jitted, len(args))

    def dynamic(call_args: tuple, call_kwargs: dict) -> tuple:
        return (tuple(a for i, a in enumerate(call_args) if i not in numbers),
                {k: v for k, v in call_kwargs.items() if k not in names})

    leaves, tree = jax.tree_util.tree_flatten(dynamic(args, kwargs))
    if tree != lowered.in_tree:
        raise JaxCallError(f"the call's dynamic arguments {tree} are not the ones jit lowered ({lowered.in_tree})")
    kept = sorted(_kept_arguments(lowered, len(leaves)))
    infos = jax.tree_util.tree_leaves(lowered.args_info)
    program = load_program(lowered.as_text(debug_info=True))
    parameters = len(program.entry.function_type.inputs)
    if parameters != len(kept):
        raise JaxCallError(f"jit lowered {parameters} parameter(s) but kept {len(kept)} of the call's "
                           f"{len(leaves)} argument(s)")
    program.arguments = [host_value(leaves[k], infos[k]) for k in kept]
    return LoweredCall(jitted, program, dynamic, kept)


def _kept_arguments(lowered: Any, count: int) -> set[int]:
    """Which of jit's flat arguments the lowered program takes: all but those the function
    never reads (jit's `keep_unused=False`)."""
    compile_args = getattr(getattr(lowered, "_lowering", None), "compile_args", None) or {}
    kept = compile_args.get("kept_var_idx")
    return set(range(count)) if kept is None else {int(k) for k in kept}


def host_value(leaf: Any, info: Any = None) -> np.ndarray:
    """One argument on the host, once: a jax.Array's global value (gathered from its shards), a
    Python number in the type jit gave it."""
    dtype = getattr(info, "dtype", None) if not hasattr(leaf, "dtype") else None
    try:
        return np.asarray(leaf, dtype=dtype)
    except TypeError as error:  # a typed PRNG key, an object numpy cannot hold
        raise JaxCallError(f"argument of type {type(leaf).__name__} cannot be copied to the host as an array "
                           f"({error}); pass jax.random.key_data(key) for a typed key") from None


def load(f: Callable, *args: Any, static_argnums=None, static_argnames=None, **kwargs: Any) -> Program:
    """The Program jit compiles for f(*args, **kwargs), with debug info (every op's JAX source line)
    and the call's arguments bound: `program.run()`, `program.session()` and `program.debug()` use
    them, and its arguments go by their pytree paths (`params['layer_0']['w']`).

    `f` is a plain function or a jax.jit-wrapped one (whose own static arguments and shardings
    hold); for a plain one, `static_argnums`/`static_argnames` are jax.jit's."""
    return lower_call(f, args, kwargs, static_argnums, static_argnames).program


__all__ = ["JaxCallError", "LoweredCall", "host_value", "is_jitted", "jitted_function", "keeps_users_jax_settings", "load",
           "lower_call", "users_jax_settings"]
