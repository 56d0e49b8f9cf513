"""A GPT-2-small-shaped training step, lowered by JAX, for issue 33's numbers.

12 layers, D=768, 12 heads, 256 tokens, vocabulary 8192, MLP 4*D, a tied embedding head,
cross-entropy loss, `jax.value_and_grad` and an SGD update (params - lr * grad): benchmarks/export.py's
`transformer_lowered(training=True, update="sgd")` with every layer a nested `jax.jit` (so the
module holds calls), as `jax.jit(train_step).lower(...).as_text(debug_info=True)` prints it. The
weights are arguments (about 91M parameters; with the tokens and targets, 123 arguments).

Writes PROG.mlir and PROG.inputs.npz (keys arg0, arg1, ..., as `hlodbg run --args` reads them)
into a work directory (default /tmp/hlodbg-gpt2), once: files already there are reused.
JAX is needed only to generate them. `--layers/--width/--tokens/--vocab/--heads` give a smaller
shape for quick runs (its files are named after it); `--quick` is 2 layers, D=128, 64 tokens,
vocabulary 512, 4 heads.
Run: python benchmarks/gpt2_step.py [--workdir DIR] [--quick] [--layers L] [--width D] ...
Import: `gpt2_step.generate(shape)` -> (MLIR text, {argN: array}); `gpt2_step.files(shape, workdir)` -> the paths.
"""
from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from export import transformer_lowered  # noqa: E402 - the benchmarks directory is put on sys.path above

WORKDIR = Path("/tmp/hlodbg-gpt2")


@dataclass(frozen=True)
class Shape:
    layers: int = 12
    width: int = 768
    tokens: int = 256
    vocab: int = 8192
    heads: int = 12

    @property
    def name(self) -> str:
        if self == Shape():
            return "gpt2_step"
        return f"gpt2_step_{self.layers}x{self.width}x{self.tokens}_v{self.vocab}_h{self.heads}"


QUICK = Shape(layers=2, width=128, tokens=64, vocab=512, heads=4)


def generate(shape: Shape = Shape()) -> tuple[str, dict[str, np.ndarray]]:
    """(MLIR text with locations, {"argN": array}) of the training step of `shape`."""
    lowered, arguments = transformer_lowered(shape.layers, nested=True, width=shape.width, tokens=shape.tokens,
                                             heads=shape.heads, training=True, vocabulary=shape.vocab, update="sgd")
    return lowered.as_text(debug_info=True), {f"arg{i}": a for i, a in enumerate(arguments)}


def files(shape: Shape = Shape(), workdir: Path = WORKDIR) -> tuple[Path, Path]:
    """(PROG.mlir, PROG.inputs.npz) of `shape` in `workdir`, generated on the first call."""
    return write_once(workdir / f"{shape.name}.mlir", lambda: generate(shape))


def write_once(program: Path, make) -> tuple[Path, Path]:
    """(program, its .inputs.npz beside it), written from `make()` -> (text, {argN: array}) unless
    both are there already."""
    inputs = program.with_suffix(".inputs.npz")
    if not (program.is_file() and inputs.is_file()):
        program.parent.mkdir(parents=True, exist_ok=True)
        text, arguments = make()
        # Written under temporary names and renamed: an interrupted run leaves no half file to reuse.
        partial_inputs = inputs.with_name(inputs.name + ".partial.npz")
        np.savez(partial_inputs, **arguments)
        partial_program = program.with_name(program.name + ".partial")
        partial_program.write_text(text)
        partial_inputs.replace(inputs)
        partial_program.replace(program)
    return program, inputs


def shape_from(options) -> Shape:
    base = QUICK if options.quick else Shape()
    given = {k: getattr(options, k) for k in ("layers", "width", "tokens", "vocab", "heads") if getattr(options, k)}
    return Shape(**{**base.__dict__, **given})


def add_shape_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--quick", action="store_true", help=f"a small shape: {QUICK}")
    for name in ("layers", "width", "tokens", "vocab", "heads"):
        parser.add_argument(f"--{name}", type=int, help=f"(default {getattr(Shape(), name)})")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workdir", type=Path, default=WORKDIR, help=f"where the files go (default {WORKDIR})")
    add_shape_options(parser)
    options = parser.parse_args()
    shape = shape_from(options)
    if shape.width % shape.heads:
        parser.error(f"--width {shape.width} is not a multiple of --heads {shape.heads}")
    program, inputs = files(shape, options.workdir)
    import hlodbg

    loaded = hlodbg.load(str(program))
    count = sum(a.size for a in np.load(inputs).values())
    print(f"{program}: {loaded.op_count:,} ops in {len(loaded.functions)} functions, "
          f"{len(loaded.entry.arguments)} arguments, "
          f"{count / 1e6:.1f}M input elements; inputs {inputs}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
