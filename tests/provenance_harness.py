"""Checks an op family's element provenance against its evaluator, by perturbation.

`check_provenance(text, *args)` takes a program whose `main` applies the op under test to its
arguments (other ops may prepare operands; those operands are then not perturbed) and checks,
for every result element, the contract of engine/ops/provenance.py:

- perturbing any operand element NOT reported as a source leaves the result element unchanged;
- perturbing each reported source element (of a perturbed operand) changes it, under at least one
  of the perturbations tried (a large step up and down for numbers, a flip for booleans);
- `reach` (the inverse) agrees with the forward answer for every operand element.

Operands listed in `held` (index operands of gather/scatter, sort's keys...) are not perturbed:
the question for data-dependent ops is asked with the indices fixed. Each perturbation is one
run of the whole program, so keep operands small (a few hundred elements in all).
"""
from __future__ import annotations

from typing import Iterable, Optional, Sequence

import numpy as np

import hlodbg
from hlodbg.engine.ir.dtypes import widen
from hlodbg.engine.ops.provenance import provenance, reach


def op_under_test(program, name: Optional[str] = None):
    """The op `main` applies (the last non-terminator, or the first op called `name`)."""
    body = program.module.function("main").body.operations
    candidates = [o for o in body[:-1] if name is None or o.name == name]
    assert candidates, f"no {name or 'op'} in main"
    return candidates[0] if name is not None else candidates[-1]


def perturbations(value, dtype: np.dtype, scale: float) -> list:
    """Replacements for one element that a function of it would notice."""
    if dtype == np.bool_:
        return [not bool(value)]
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return [v for v in (info.max, info.min) if v != value] or [value ^ 1]
    if dtype.kind == "c":
        step = 1000.0 * scale + 1.0
        return [value + step, value - step, value + 1j * step]
    step = 1000.0 * scale + 1.0
    return [float(value) + step, float(value) - step]


def _as_array(value):
    return np.asarray(value)


def check_provenance(text: str, *args, op_name: Optional[str] = None, held: Iterable[int] = (),
                     results: Optional[Sequence[int]] = None) -> dict:
    """Check the op's provenance for every element of its results; returns counts for the test to show."""
    program = hlodbg.load(text)
    op = op_under_test(program, op_name)
    main_args = list(program.module.function("main").body.arguments)
    args = [np.asarray(a) for a in args]
    outputs = program.run(*args)
    outputs = list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]
    # The op's own operand and result values, when the op reads main's arguments and main returns it.
    operand_values = [args[main_args.index(v)] if v in main_args else None for v in op.operands]
    returned = list(program.module.function("main").body.operations[-1].operands)
    result_values = [outputs[returned.index(r)] if r in returned else None for r in op.results]
    assert all(r is not None for r in result_values), "main must return the op's results"
    known_operands = operand_values if all(v is not None for v in operand_values) else None
    checked = [r for r in range(len(op.results)) if results is None or r in results]

    answers = {}
    for r in checked:
        for at in np.ndindex(*result_values[r].shape):
            answers[(r, at)] = provenance(op, at, result=r, operands=known_operands, results=result_values)

    held = set(held)
    perturbed_operands = [i for i, v in enumerate(operand_values) if v is not None and i not in held]
    changed: dict[tuple, set] = {}  # (operand, index) -> result elements some perturbation changed
    for i in perturbed_operands:
        position = main_args.index(op.operands[i])
        base = args[position]
        scale = float(np.max(np.abs(widen(base)))) if base.size and base.dtype.kind in "fc" else 1.0
        for at in np.ndindex(*base.shape):
            hit = set()
            for replacement in perturbations(base[at], base.dtype, scale):
                trial = list(args)
                trial[position] = base.copy()
                trial[position][at] = replacement
                got = program.run(*trial)
                got = list(got) if isinstance(got, (list, tuple)) else [got]
                for r in checked:
                    before, after = _as_array(result_values[r]), _as_array(got[returned.index(op.results[r])])
                    differs = ~((before == after) | (np.isnan(widen(before)) & np.isnan(widen(after)))
                                if before.dtype.kind in "fc" else before == after)
                    hit.update((r, tuple(int(k) for k in where)) for where in np.argwhere(differs))
            changed[(i, at)] = hit

    for (r, at), answer in answers.items():
        reported = {(s.operand, s.index) for s in answer.sources}
        for i in perturbed_operands:
            for element in np.ndindex(*operand_values[i].shape):
                moves = (r, at) in changed[(i, element)]
                if (i, element) in reported:
                    assert moves, (f"{op.name} result#{r}{list(at)}: reported source operand#{i}{list(element)} "
                                   f"changes nothing under perturbation")
                else:
                    assert not moves, (f"{op.name} result#{r}{list(at)}: operand#{i}{list(element)} changes it "
                                       f"but is not reported (reported: {sorted(reported)})")

    # The inverse agrees with the forward answers, for every element of every operand.
    for i, value in enumerate(op.operands):
        shape = tuple(value.type.shape)
        for element in np.ndindex(*shape):
            want = {(r, at) for (r, at), answer in answers.items()
                    if any(s.operand == i and s.index == element for s in answer.sources)}
            got = {(x.result, x.index) for x in reach(op, i, element, operands=known_operands, results=result_values)
                   if x.result in checked}
            assert got == want, f"{op.name} reach(operand#{i}{list(element)}): {sorted(got)} != forward {sorted(want)}"
    return {"results": len(answers), "perturbed": sum(len(changed) for _ in [0])}
