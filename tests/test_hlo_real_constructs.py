"""Constructs found in real HLO files (openxla/xla's tests, run through
benchmarks/hlo_real_files.py) that hlodbg mishandled: each re-typed here as a small module of our
own, with the behaviour XLA's parser and XLA:CPU show (../shared/docs/hlo_text.md §10)."""
from __future__ import annotations

import numpy as np
import pytest

import hlodbg
from hlodbg.engine.ir.errors import ExecutionError


def test_all_gather_whose_result_needs_more_processes_than_the_grid_is_a_located_error():
    """An all-gather typed for four replicas in a module of one (replica_groups={}): gathering the
    one process gives a quarter of the typed result, which must not flow on silently."""
    text = """HloModule gather_four
ENTRY main {
  x = f32[2,3] parameter(0)
  ROOT g = f32[2,12] all-gather(x), replica_groups={}, dimensions={1}
}
"""
    with pytest.raises(ExecutionError) as error:
        hlodbg.load(text).run(np.ones((2, 3), np.float32))
    message = str(error.value)
    assert ":4:" in message, message  # the all-gather's line
    assert "tensor<2x12xf32>" in message and "1 process" in message and "4 processes" in message, message
