"""The NaN trap's search (hlodbg/jax/trap.py find_origin) on the held-out programs of
../shared/programs (issue 37 part 1): each captured by XLA with one input element made NaN, and
the op instance the search names checked against the capture's own files — it holds the NaN
there, and no value the capture holds from before it (on that device) holds one (the ops that
enclose it, calls and loops, finish after it and are not before it). The programs
carry no JAX source, so the trap's wrapper itself is tested on JAX functions in test_jax_api.py;
this is its search on real programs, loops and an 8-device shard_map grid among them."""
from __future__ import annotations

import numpy as np
import pytest

jax = pytest.importorskip("jax")

import hlodbg  # noqa: E402
from hlodbg.engine.debug.capture_replay import record_context  # noqa: E402
from hlodbg.engine.run.capture.run import capture  # noqa: E402
from hlodbg.engine.run.capture_format import Capture, site  # noqa: E402
from hlodbg.jax.trap import find_origin  # noqa: E402

from .helpers import PROGRAMS, require_shared  # noqa: E402

HELD_OUT = ["mlp", "gpt_tiny", "cnn", "rnn_scan", "sort_topk", "embed_update", "mixed_bf16", "sharded_mlp_4x2"]


def poisoned_arguments(name: str) -> list[np.ndarray]:
    """The program's inputs with the middle element of its first floating argument made NaN."""
    inputs = np.load(PROGRAMS / f"{name}.inputs.npz")
    arguments = [np.array(inputs[f"arg{k}"]) for k in range(len(inputs.files))]
    first = next(a for a in arguments if a.dtype.kind == "f")
    first.reshape(-1)[first.size // 2] = np.nan
    return arguments


def as_float(value: np.ndarray) -> np.ndarray:
    """A captured array as numbers np.isfinite takes (bf16 and the other ml_dtypes widened)."""
    return value if value.dtype.kind in "fc" else np.asarray(value).astype(np.float64)


@pytest.mark.parametrize("name", HELD_OUT)
def test_the_search_names_the_first_op_the_compiled_run_made_nan_in(name, tmp_path):
    require_shared()
    program = hlodbg.load(PROGRAMS / f"{name}.mlir")
    if program.num_replicas * program.num_partitions > len(jax.devices()):
        pytest.skip(f"needs {program.num_replicas * program.num_partitions} devices")
    program.arguments = poisoned_arguments(name)
    directory = tmp_path / f"{name}.hlocap"
    capture(program.source, f"{name}.mlir", program.arguments, directory)
    origin, why = find_origin(program, directory)
    assert origin is not None, why
    assert origin.kind == "nan" and origin.source == "captured"
    captured = Capture.open(directory)
    made = captured.array(origin.context, origin.site, [r.name for r in origin.op.results].index(origin.value),
                          origin.device)
    assert np.isnan(as_float(made)[origin.element])
    # No value the capture holds from before that op instance, on that device, holds a NaN.
    target = program.debug(capture=directory, persist=False)
    try:
        target.set_focus(target.process_of(origin.device))
        session = target.session
        session.continue_()
        trace = session.timeline.main.trace
        origin_event = next(e for e in range(len(trace.ops)) if trace.ops[e] is origin.op
                            and record_context(trace, trace.frames[e]) == origin.context)
        enclosing = {frame.owner for frame in trace.frames[origin_event].chain() if frame.owner is not None}
        for event in range(origin_event):
            if event in enclosing:
                continue
            op = trace.ops[event]
            context = record_context(trace, trace.frames[event])
            for k in range(len(op.results)):
                value = captured.array(context, site(op), k, origin.device)
                if value is not None:  # (JAX's -inf fills are no NaN: the search passes them, as should we)
                    assert not np.isnan(as_float(value)).any(), (op.name, context)
    finally:
        target.close()
