"""hlodbg from a JAX function (needs the `xla` extra: `pip install 'hlodbg[xla]'`).

    import hlodbg.jax
    program = hlodbg.jax.load(train_step, params, batch)   # the Program jit compiles, arguments bound
    program.run()                                            # on the bound arguments
    hlodbg.jax.debug(train_step, params, batch)              # the debugger on that call
    step = hlodbg.jax.trap_nans(train_step)                  # NaN/Inf in the outputs: the op jit made it in

`load`, `run`, `session`, `debug`, `export`, `memory` and `diff` lower the call as jit does
(lowering.py); `trap_nans` is trap.py. The rest of hlodbg never imports this package, nor JAX.
"""
from __future__ import annotations

try:
    import jax  # noqa: F401 - absolute: the real JAX, not this package
except ImportError:
    raise ModuleNotFoundError("hlodbg.jax needs JAX, which is not installed: pip install 'hlodbg[xla]'",
                              name="jax") from None

from .lowering import JaxCallError, load
from .tools import debug, diff, export, memory, run, session
from .trap import NonFiniteError, NonFiniteOrigin, trap_nans

__all__ = ["JaxCallError", "NonFiniteError", "NonFiniteOrigin", "debug", "diff", "export", "load", "memory", "run",
           "session", "trap_nans"]
