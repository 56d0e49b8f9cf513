"""The recording budget counts what recording holds: arrays a result owns, and the temporaries
a view keeps alive; never the entry arguments (the caller holds them; a memory-mapped one is the
file's pages), nor views of them or of other recorded values."""
from __future__ import annotations

import numpy as np

import hlodbg
from hlodbg.argument_files import load_npy
from hlodbg.engine.debug.budget import ARRAY_OVERHEAD

PROGRAM = """func.func @main(%a: tensor<256x128xf32>, %b: tensor<128x64xf32>) -> tensor<64x256xf32> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<256x128xf32>, tensor<128x64xf32>) -> tensor<256x64xf32>
  %1 = stablehlo.reshape %0 : (tensor<256x64xf32>) -> tensor<64x256xf32>
  %2 = stablehlo.slice %a [0:64, 0:128] : (tensor<256x128xf32>) -> tensor<64x128xf32>
  %c = stablehlo.constant dense<0> : tensor<i32>
  %one = stablehlo.constant dense<1> : tensor<i32>
  %three = stablehlo.constant dense<3> : tensor<i32>
  %w:2 = stablehlo.while(%i = %c, %x = %a) : tensor<i32>, tensor<256x128xf32>
    cond {
      %lt = stablehlo.compare LT, %i, %three : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %lt : tensor<i1>
    } do {
      %next = stablehlo.add %i, %one : tensor<i32>
      stablehlo.return %next, %x : tensor<i32>, tensor<256x128xf32>
    }
  return %1 : tensor<64x256xf32>
}
"""
A = np.random.default_rng(0).standard_normal((256, 128)).astype(np.float32)  # 128 KiB
B = np.random.default_rng(1).standard_normal((128, 64)).astype(np.float32)  # 32 KiB
DOT_BYTES = 256 * 64 * 4 + ARRAY_OVERHEAD  # the product, and its array object


def _recorded(args, memory=None):
    session = hlodbg.load(PROGRAM).session(args, persist=False, memory=memory)
    session.continue_()
    store = session.timeline.main.store
    trace = store.trace
    names = {e: op.name for e, op in enumerate(trace.ops)}
    return session, store, {names[e]: size for e, size in store.sizes.items() if isinstance(e, int)}


def test_a_contraction_result_viewing_its_temporary_is_counted_and_views_of_recorded_values_are_not():
    session, store, sizes = _recorded([A, B])
    assert sizes["stablehlo.dot_general"] == DOT_BYTES  # a transposed view of a temporary: it holds it
    assert "stablehlo.reshape" not in sizes and "stablehlo.slice" not in sizes  # views of a result, of an argument
    session.close()


def test_arguments_cost_no_recorded_bytes_not_even_carried_through_a_loop():
    session, store, sizes = _recorded([A, B])
    assert sizes["stablehlo.dot_general"] == DOT_BYTES
    assert store.bytes - DOT_BYTES < 16 << 10  # a few scalars: neither A (128 KiB) nor B (32 KiB), nor A in each loop frame
    session.close()


def test_a_budget_smaller_than_the_arguments_still_keeps_values():
    # The arguments (160 KiB) used to count against a 100 KiB budget: every value was dropped.
    session, store, _ = _recorded([A, B], memory=100 << 10)
    assert store.evicted == 0 and store.bytes <= store.budget
    session.close()


def test_a_memory_mapped_argument_costs_nothing(tmp_path):
    np.save(tmp_path / "a.npy", A)
    mapped = load_npy(str(tmp_path / "a.npy"))
    session, store, sizes = _recorded([mapped, B])
    assert store.bytes - sizes["stablehlo.dot_general"] < 16 << 10
    np.testing.assert_array_equal(session.results[0], hlodbg.load(PROGRAM).run(A, B)[0])
    session.close()
