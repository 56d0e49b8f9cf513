"""How long `trace` takes to answer for a NaN element (engine/debug/lineage.py).

For each program of ../shared/programs, one element of its first floating-point argument (the
embedding row of a token the input uses, for gpt_tiny) is made NaN; the run is recorded to its
end, then two questions are timed: the first NaN the run makes (`hlodbg trace --nan`: the
breakpoint run to it, then the trace) and a NaN element of a result of the entry function traced
back to its origin (the path, the leaves within their bounds). A generated loop of N iterations
whose state turns NaN on iteration 3 shows the loop's "last change" search. Target: <= 2 s each.
Run: python benchmarks/trace_nan.py [--iterations N]
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

import hlodbg
from hlodbg.engine.debug.lineage import first_nonfinite, trace_element

SHARED = Path(__file__).resolve().parents[1] / ".." / "shared" / "programs"
TARGET_SECONDS = 2.0


def poisoned(name: str, args: list) -> list:
    args = [np.array(a) for a in args]
    if name == "gpt_tiny":  # the token ids are integers: poison the embedding row of one used token
        args[1][int(args[0].reshape(-1)[3]), 5] = np.nan
        return args
    for a in args:
        if a.dtype.kind == "f" and a.size:
            a.reshape(-1)[a.size // 2] = np.nan
            return args
    return args


def loop_program(iterations: int) -> str:
    return f"""func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {{
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %r:2 = stablehlo.while(%i = %c0, %acc = %x) : tensor<i32>, tensor<4xf32>
    cond {{
      %n = stablehlo.constant dense<{iterations}> : tensor<i32>
      %lt = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %lt : tensor<i1>
    }} do {{
      %one = stablehlo.constant dense<1> : tensor<i32>
      %next = stablehlo.add %i, %one : tensor<i32>
      %f = stablehlo.convert %i : (tensor<i32>) -> tensor<f32>
      %b = stablehlo.broadcast_in_dim %f, dims = [] : (tensor<f32>) -> tensor<4xf32>
      %three = stablehlo.constant dense<3.0> : tensor<4xf32>
      %d = stablehlo.subtract %three, %b : tensor<4xf32>
      %s = stablehlo.sqrt %d : tensor<4xf32>
      %y = stablehlo.add %acc, %s : tensor<4xf32>
      stablehlo.return %next, %y : tensor<i32>, tensor<4xf32>
    }}
  return %r#1 : tensor<4xf32>
}}"""


def nan_result(session):
    """(name, index) of a NaN element of the entry function's results, or None."""
    trace = session.trace
    returned = trace.frame_records[0].last
    for k, value in enumerate(trace.ops[returned].operands):
        array = np.asarray(session.timeline.main.store.value(trace.operand_ref(returned, k)))
        if array.dtype.kind == "f" and np.isnan(array).any():
            return value.name, tuple(int(i) for i in np.argwhere(np.isnan(array))[0])
    return None


def measure(label: str, program, args) -> None:
    session = program.session(args, persist=False)
    start = time.perf_counter()
    try:
        name, event, at = first_nonfinite(session, "nan")
    except hlodbg.HlodbgError as none:
        print(f"{label:<22} no NaN: {none.message}")
        return
    found = trace_element(session, name, at, event)
    first = time.perf_counter() - start
    session.continue_()
    result = nan_result(session)
    line = f"{label:<22} --nan {first:6.2f} s ({len(found.steps)} steps)"
    if result is not None:
        start = time.perf_counter()
        traced = trace_element(session, *result)
        seconds = time.perf_counter() - start
        origin = traced.steps[traced.origin].op if traced.origin is not None else traced.steps[-1].kind
        line += (f"   result {result[0]}{list(result[1])}: {seconds:6.2f} s ({len(traced.steps)} steps to {origin}, "
                 f"{traced.elements_visited:,} elements{'' if traced.complete else ', bounded'})")
        first = max(first, seconds)
    print(line + ("   PASS" if first <= TARGET_SECONDS else "   FAIL"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=100_000, help="iterations of the generated loop")
    options = parser.parse_args()
    if SHARED.exists():
        for path in sorted(SHARED.glob("*.mlir")):
            inputs = np.load(path.with_suffix(".inputs.npz"))
            if path.stem.startswith("sharded"):
                continue  # a grid program: trace stays within one device (see the README)
            args = [inputs[f"arg{i}"] for i in range(len(inputs.files))]
            measure(path.stem, hlodbg.load(path), poisoned(path.stem, args))
    else:
        print(f"{SHARED} is not here: the shared programs are skipped")
    measure(f"loop x{options.iterations:,}", hlodbg.load(loop_program(options.iterations)), [np.zeros(4, np.float32)])


if __name__ == "__main__":
    main()
