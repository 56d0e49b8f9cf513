"""`--fill-elided random|zeros`, shared by every command that loads a program to run, draw or
analyse it (run, open, serve, check, export, diff, memory), and loading a program with it."""
from __future__ import annotations

import sys

from hlodbg.engine.run.elided import FILL_MODES


def add_fill_elided_option(cmd) -> None:
    cmd.add_argument("--fill-elided", choices=FILL_MODES, metavar="random|zeros",
                     help="give constants whose elements the HLO text elided ({...}) random values (seeded by --seed) "
                          "or zeros, so the program can run; marked as filled wherever they are shown "
                          "(default: such a program opens, draws and exports, but running them stops)")


def load_program(args, path=None):
    """The program `args` name (`path` instead of args.program when given), with its elided
    constants filled when --fill-elided asks; says on stderr how many were."""
    from hlodbg.program import load

    program = load(path if path is not None else args.program, chunk=getattr(args, "chunk", None))
    mode = getattr(args, "fill_elided", None)
    if mode is not None:
        seed = getattr(args, "seed", 0)
        count = program.fill_elided(mode, seed)
        if count:
            how = f"random values (seed {seed})" if mode == "random" else "zeros"
            print(f"warning: {count} elided constant(s) filled with {how} by --fill-elided {mode}: results computed "
                  "from them are not the program's", file=sys.stderr)
    return program


__all__ = ["add_fill_elided_option", "load_program"]
