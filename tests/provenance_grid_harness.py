"""Checks a collective's element provenance against the grid run, by perturbation per device.

`check_grid_provenance(text, inputs, replicas, partitions)` runs a program whose `main` applies
one collective to its arguments on every device of a replicas x partitions grid (`inputs`:
{ProcessId: [arguments]}, different on every device), and checks, for every result element of
every device, the contract of engine/ops/provenance.py on the grid:

- perturbing one element of one device's operand (not `held`) and running the grid again changes
  exactly the result elements, on whichever devices, whose provenance reports that element of
  that device (a big step up and down; reported ones must change under at least one);
- `reach` of each operand element of each device (with `device=`) names exactly the result
  elements of every device whose forward answer reports it.

Each perturbation is one grid run: keep the grid and the operands small.
"""
from __future__ import annotations

from typing import Iterable

import numpy as np

import hlodbg
from hlodbg.engine.ir.dtypes import widen
from hlodbg.engine.machine.process import Grid, ProcessId
from hlodbg.engine.ops.collectives_provenance import GridValues
from hlodbg.engine.ops.provenance import provenance, reach
from hlodbg.engine.run.spmd import run_grid

from tests.provenance_harness import op_under_test, perturbations


def _differs(before, after) -> np.ndarray:
    before, after = np.asarray(before), np.asarray(after)
    same = before == after
    if before.dtype.kind in "fc":
        same |= np.isnan(widen(before)) & np.isnan(widen(after))
    return ~same


def check_grid_provenance(text: str, inputs: dict, replicas: int, partitions: int, *, held: Iterable[int] = ()) -> dict:
    program = hlodbg.load(text)
    module = program.module
    op = op_under_test(program)
    main = module.function("main").body
    main_args = list(main.arguments)
    returned = list(main.operations[-1].operands)
    inputs = {p: [np.asarray(a) for a in args] for p, args in inputs.items()}

    def run(per_device):
        got = run_grid(module, per_device, num_replicas=replicas, num_partitions=partitions)
        return {p: (list(v) if isinstance(v, (list, tuple)) else [v]) for p, v in got.items()}

    base = run(inputs)
    grid = Grid(replicas, partitions)
    values = {p: ([inputs[p][main_args.index(v)] for v in op.operands], [base[p][returned.index(r)] for r in op.results])
              for p in grid.processes()}
    peers = GridValues(grid, values, module)
    answers = {}
    for p in grid.processes():
        for r, value in enumerate(values[p][1]):
            for at in np.ndindex(*np.shape(value)):
                answer = provenance(op, at, result=r, operands=values[p][0], results=values[p][1], process=p,
                                    peer_values=peers)
                answers[(p, r, at)] = {(s.device or p, s.operand, s.index) for s in answer.sources}

    held = set(held)
    checked = 0
    for owner in grid.processes():
        for i, operand in enumerate(op.operands):
            position = main_args.index(operand)
            base_value = inputs[owner][position]
            scale = float(np.max(np.abs(widen(base_value)))) if base_value.dtype.kind in "fc" and base_value.size else 1.0
            for element in np.ndindex(*base_value.shape):
                reporting = {key for key, sources in answers.items() if (owner, i, element) in sources}
                reached = {(x.device, x.result, x.index) for x in reach(
                    op, i, element, operands=values[owner][0], results=values[owner][1], process=owner,
                    peer_values=peers, device=owner)}
                assert reached == reporting, (f"{op.name} reach(device {owner}, operand#{i}{list(element)}): "
                                              f"{sorted(reached)} != forward {sorted(reporting)}")
                if i in held:
                    continue
                changed = set()
                for replacement in perturbations(base_value[element], base_value.dtype, scale):
                    trial = {p: list(args) for p, args in inputs.items()}
                    trial[owner][position] = base_value.copy()
                    trial[owner][position][element] = replacement
                    got = run(trial)
                    for p in grid.processes():
                        for r, result in enumerate(op.results):
                            k = returned.index(result)
                            changed.update((p, r, tuple(int(x) for x in at))
                                           for at in np.argwhere(_differs(base[p][k], got[p][k])))
                checked += 1
                assert changed <= reporting, (f"{op.name}: device {owner} operand#{i}{list(element)} changes "
                                              f"{sorted(changed - reporting)}, which do not report it")
                assert reporting <= changed, (f"{op.name}: {sorted(reporting - changed)} report device {owner} "
                                              f"operand#{i}{list(element)}, but perturbing it changes nothing there")
    return {"results": len(answers), "perturbed": checked}
