"""Which layout each value gets on a TPU (tpu/assignment.py): given in the program (JAX's
mhlo.layout_mode, LayoutConstraint custom calls), by --layout option, or by default; and programs
run on TPU storage give the CPU's results."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import hlodbg
from hlodbg.engine.ir.errors import HlodbgError
from hlodbg.engine.machine.layout import Layout, LayoutError
from hlodbg.engine.machine.targets import backend_for
from hlodbg.engine.machine.tpu.assignment import AssignedLayout, LayoutAssignment, LayoutOptionError
from hlodbg.engine.machine.tpu.backend import PhysicalArray
from hlodbg.engine.machine.tpu.generations import GENERATIONS
from hlodbg.engine.run.interpreter import Interpreter

from .helpers import PROGRAMS, require_shared

V5E = GENERATIONS["tpu-v5e"]

PROGRAM = """
module @m {
  func.func public @main(%arg0: tensor<8x4xf32> {mhlo.layout_mode = "{0,1:T(8,128)}"},
                         %arg1: tensor<4xf32> {mhlo.layout_mode = "default"},
                         %arg2: tensor<16x256xbf16> {mhlo.layout_mode = "{0,1}"},
                         %arg3: tensor<3xi32>)
      -> (tensor<8x4xf32> {jax.result_info = "result", mhlo.layout_mode = "{1,0:T(2,128)}"},
          tensor<16x256xbf16> {mhlo.layout_mode = "auto"}) {
    %0 = stablehlo.broadcast_in_dim %arg1, dims = [1] : (tensor<4xf32>) -> tensor<8x4xf32>
    %1 = stablehlo.multiply %arg0, %0 : tensor<8x4xf32>
    %2 = stablehlo.custom_call @LayoutConstraint(%1) {backend_config = "", operand_layouts = [dense<[1, 0]> : tensor<2xindex>], result_layouts = [dense<[0, 1]> : tensor<2xindex>]} : (tensor<8x4xf32>) -> tensor<8x4xf32>
    %3 = stablehlo.add %2, %0 : tensor<8x4xf32>
    return %3, %arg2 : tensor<8x4xf32>, tensor<16x256xbf16>
  }
}
"""


def assignment(text: str = PROGRAM, options=None, generation=V5E) -> tuple[LayoutAssignment, dict]:
    module = hlodbg.load(text).module
    values = {v.name: v for v in module.entry.arguments}
    for op in module.entry.ops:
        for result in op.results:
            values[result.name] = result
    return LayoutAssignment(module, generation, options or {}), values


def shown(assigned: AssignedLayout) -> tuple[str, str]:
    return str(assigned.layout), assigned.source


def test_given_default_and_constrained_layouts():
    layouts, values = assignment()
    assert shown(layouts.layout_for(values["%arg0"])) == ("{0,1:T(8,128)}", "given")  # verbatim
    assert shown(layouts.layout_for(values["%arg1"])) == ("{0:T(128)}", "default")  # "default"
    # a dim order without tiles is tiled as the compiler would for that order
    assert shown(layouts.layout_for(values["%arg2"])) == ("{0,1:T(8,128)(2,1)}", "given")
    assert shown(layouts.layout_for(values["%arg3"])) == ("{0:T(128)}", "default")
    assert shown(layouts.layout_for(values["%1"])) == ("{0,1:T(4,128)}", "default")
    assert shown(layouts.layout_for(values["%2"])) == ("{0,1:T(4,128)}", "given")  # LayoutConstraint
    assert shown(layouts.layout_for(values["%3"])) == ("{1,0:T(2,128)}", "given")  # result 0
    assert layouts.layout_for(values["%1"]).approximate and not layouts.layout_for(values["%3"]).approximate
    assert layouts.module is hlodbg.load(PROGRAM).module or layouts.generation is V5E


def test_layout_for_is_cached():
    layouts, values = assignment()
    first = layouts.layout_for(values["%1"])
    assert layouts.layout_for(values["%1"]) is first


def test_layouts_follow_the_generation():
    layouts, values = assignment(generation=GENERATIONS["tpu7x"])
    assert shown(layouts.layout_for(values["%arg2"])) == ("{0,1:T(16,128)(2,1)}", "given")


@pytest.mark.parametrize("name", ["arg0", "%arg0", " arg0 "])
def test_option_names_an_argument(name):
    layouts, values = assignment(options={name: "1,0:T(8,128)"})
    assert shown(layouts.layout_for(values["%arg0"])) == ("{1,0:T(8,128)}", "option")  # beats "given"


@pytest.mark.parametrize("name", ["%points", "points"])
def test_option_names_an_argument_by_its_own_name(name):
    # The name hlodbg memory and the debugger show (%points), not only its position (arg0).
    layouts, values = assignment("""
func.func @main(%points: tensor<64x3xf32>, %center: tensor<3xf32>) -> tensor<64x3xf32> {
  return %points : tensor<64x3xf32>
}""", options={name: "0,1"})
    assert shown(layouts.layout_for(values["%points"])) == ("{0,1:T(4,128)}", "option")
    assert layouts.layout_for(values["%center"]).source == "default"


def test_option_on_a_result_and_without_tiles():
    layouts, values = assignment(options={"result0": "{0,1:T(8,128)S(1)}", "arg3": "{0}"})
    assert shown(layouts.layout_for(values["%3"])) == ("{0,1:T(8,128)S(1)}", "option")
    assert shown(layouts.layout_for(values["%arg3"])) == ("{0:T(128)}", "option")


@pytest.mark.parametrize("options, message", [
    ({"arg4": "{0}"}, "--layout arg4={0}: @main has 4 arguments (arg0..arg3)"),
    ({"result2": "{0}"}, "--layout result2={0}: @main has 2 results (result0..result1)"),
    ({"x": "{0}"}, "--layout x={0}: name an entry argument or result as arg0, %arg0, the argument's name (%x) or "
                   "result0"),
    ({"arg0": "{0}"}, "--layout arg0={0}: layout {0}: minor_to_major must be a permutation of 0..1 for a "
                      "rank-2 array, got (0) (arg0 is tensor<8x4xf32>)"),
    ({"arg0": "{1,0:T(8,128"}, "expected ',' or ')' in a tile at column 13"),
    ({"arg0": "{1,0:T(8,128)(3,1)}"}, "sub-tiles add no padding"),
    ({"arg1": "{0:T(8,128)}"}, "tile (8,128) has 2 dims, more than a rank-1 array"),
    ({"arg0": "{1,0:E(4)}"}, "E(4) does not fit f32"),
])
def test_bad_options_are_clear_errors(options, message):
    with pytest.raises(LayoutOptionError) as caught:
        assignment(options=options)
    assert message in str(caught.value)
    assert isinstance(caught.value, HlodbgError)


def test_bad_layout_in_the_program_names_where():
    text = PROGRAM.replace('"{0,1:T(8,128)}"', '"{0,1:T(8,128)(3,1)}"', 1)
    with pytest.raises(LayoutError) as caught:
        assignment(text)
    message = str(caught.value)
    assert "mhlo.layout_mode of argument 0 of @main" in message and "sub-tiles" in message
    assert ":3:" in message  # the line of @main


def test_backend_stores_values_in_their_layouts():
    program = hlodbg.load(PROGRAM)
    backend = backend_for("tpu-v5e")
    backend.prepare(program.module)
    arg2 = program.module.entry.arguments[2]
    x = (np.arange(16 * 256) % 251).astype(ml_dtypes.bfloat16).reshape(16, 256)
    stored = backend.store(x, arg2)
    assert isinstance(stored, PhysicalArray) and str(stored.layout) == "{0,1:T(8,128)(2,1)}"
    assert np.array_equal(stored.buffer, Layout.parse("{0,1:T(8,128)(2,1)}").store(x))
    assert np.array_equal(backend.load(stored, arg2), x)
    assert backend.buffer_bytes(arg2) == (16 * 256 * 2, 256 * 128 * 2)  # {0,1}: the 16 pads to 128
    assert backend.buffer_bytes(program.module.entry.arguments[3]) == (12, 512)
    arg0 = program.module.entry.arguments[0]  # small: kept with the slot map the layout stores it by
    y = np.arange(32, dtype=np.float32).reshape(8, 4)
    small = backend.store(y, arg0)
    assert small.slot_map is not None and np.array_equal(small.buffer, small.layout.store(y))
    assert np.array_equal(backend.load(small, arg0), y) and small.layout.load(small.buffer, (8, 4), y.dtype).tolist() == y.tolist()
    assert backend.store(y.astype(np.float64), arg0).slot_map is None  # another dtype: the layout's own way


def test_backends_of_one_module_share_its_assignment_while_it_lives():
    import gc
    import weakref

    from hlodbg.engine.machine.tpu import backend as tpu_backend

    program = hlodbg.load(PROGRAM)
    first, second, other = backend_for("tpu-v5e"), backend_for("tpu-v5e"), backend_for("tpu-v4")
    for backend in (first, second.for_device(None), other):
        backend.prepare(program.module)
    first.prepare(program.module)
    second = second.for_device(None)
    second.prepare(program.module)
    assert second._assignment() is first._assignment()  # sessions and devices of one program
    assert other._assignment() is not first._assignment()  # another generation lays out otherwise
    option = backend_for("tpu-v5e", layouts={"arg1": "{0:T(256)}"})
    option.prepare(program.module)
    assert str(option.layout_for(program.module.entry.arguments[1]).layout) == "{0:T(256)}"
    assert str(first.layout_for(program.module.entry.arguments[1]).layout) == "{0:T(128)}"
    alive = weakref.ref(program.module)
    assert alive() in tpu_backend._PREPARED
    del program, first, second, other, option, backend
    gc.collect()
    assert alive() is None  # what the backends shared does not keep the module alive


@pytest.mark.parametrize("target", ["cpu", "tpu-v5e"])
def test_a_program_with_layouts_in_it_runs(target):
    # LayoutConstraint only says where the bytes go: on any target its result is its operand.
    program = hlodbg.load(PROGRAM)
    args = [np.arange(32, dtype=np.float32).reshape(8, 4), np.array([1, 2, 3, 4], np.float32),
            np.ones((16, 256), ml_dtypes.bfloat16), np.array([1, 2, 3], np.int32)]
    first, second = program.run(*args, target=target)
    assert np.array_equal(first, args[0] * args[1] + args[1]) and np.array_equal(second, args[2])


DATA_MOVEMENT = """
module @m {
  func.func public @main(%arg0: tensor<5x7xbf16>, %arg1: tensor<3x130xi8>, %arg2: tensor<2x3x4xi1>,
                         %arg3: tensor<9x5xi4>, %arg4: tensor<2xi32>, %arg5: tensor<3x2xcomplex<f32>>)
      -> (tensor<7x5xbf16>, tensor<130x3xi8>, tensor<4x3x2xi1>, tensor<5x9xi4>, tensor<2x3xbf16>,
          tensor<10x7xbf16>, tensor<3x2xcomplex<f32>>, tensor<i8>) {
    %0 = stablehlo.transpose %arg0, dims = [1, 0] : (tensor<5x7xbf16>) -> tensor<7x5xbf16>
    %1 = stablehlo.transpose %arg1, dims = [1, 0] : (tensor<3x130xi8>) -> tensor<130x3xi8>
    %2 = stablehlo.transpose %arg2, dims = [2, 1, 0] : (tensor<2x3x4xi1>) -> tensor<4x3x2xi1>
    %3 = stablehlo.reverse %arg3, dims = [0] : tensor<9x5xi4>
    %4 = stablehlo.transpose %3, dims = [1, 0] : (tensor<9x5xi4>) -> tensor<5x9xi4>
    %5 = stablehlo.slice %arg0 [1:5:2, 2:5] : (tensor<5x7xbf16>) -> tensor<2x3xbf16>
    %6 = stablehlo.concatenate %arg0, %arg0, dim = 0 : (tensor<5x7xbf16>, tensor<5x7xbf16>) -> tensor<10x7xbf16>
    %c0 = stablehlo.constant dense<0> : tensor<i32>
    %7 = stablehlo.dynamic_update_slice %6, %5, %c0, %c0 : (tensor<10x7xbf16>, tensor<2x3xbf16>, tensor<i32>, tensor<i32>) -> tensor<10x7xbf16>
    %8 = stablehlo.reverse %arg5, dims = [0, 1] : tensor<3x2xcomplex<f32>>
    %9 = stablehlo.reshape %1 : (tensor<130x3xi8>) -> tensor<390xi8>
    %10 = stablehlo.slice %9 [17:18] : (tensor<390xi8>) -> tensor<1xi8>
    %11 = stablehlo.reshape %10 : (tensor<1xi8>) -> tensor<i8>
    return %0, %1, %2, %4, %5, %7, %8, %11 : tensor<7x5xbf16>, tensor<130x3xi8>, tensor<4x3x2xi1>, tensor<5x9xi4>, tensor<2x3xbf16>, tensor<10x7xbf16>, tensor<3x2xcomplex<f32>>, tensor<i8>
  }
}
"""


def same_bits(a, b) -> bool:
    a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a.view(np.uint8), b.view(np.uint8))


@pytest.mark.parametrize("target", ["tpu-v5e", "tpu7x", "tpu-v4"])
def test_data_movement_on_tpu_storage_is_exact(target):
    rng = np.random.default_rng(7)
    program = hlodbg.load(DATA_MOVEMENT)
    bf16 = rng.integers(0, 1 << 16, size=(5, 7), dtype=np.uint16).view(ml_dtypes.bfloat16)  # NaNs too
    args = [bf16, rng.integers(-128, 128, size=(3, 130), dtype=np.int8), rng.integers(0, 2, size=(2, 3, 4)) == 1,
            rng.integers(-8, 8, size=(9, 5)).astype(ml_dtypes.int4), np.array([1, 2], np.int32),
            (rng.standard_normal((3, 2)) + 1j * rng.standard_normal((3, 2))).astype(np.complex64)]
    cpu = Interpreter(program.module).run("main", args)
    tpu = Interpreter(program.module, backend=backend_for(target)).run("main", args)
    assert len(cpu) == len(tpu) == 8
    for want, got in zip(cpu, tpu):
        assert same_bits(got, want)


# Programs that only move data (and integer/boolean results) must match exactly; arithmetic is
# the TPU numerics' business, so floats get a tolerance loose enough for bf16 MXU passes.
SHARED_PROGRAMS = ["mlp", "gpt_tiny", "cnn", "rnn_scan", "sort_topk", "embed_update", "mixed_bf16"]


@pytest.mark.parametrize("name", SHARED_PROGRAMS)
def test_shared_programs_on_tpu_storage(name):
    require_shared()
    program = hlodbg.load((PROGRAMS / f"{name}.mlir").read_text())
    inputs = np.load(PROGRAMS / f"{name}.inputs.npz")
    args = [inputs[f"arg{i}"] for i in range(len(inputs.files))]
    cpu = Interpreter(program.module).run("main", args)
    tpu = Interpreter(program.module, backend=backend_for("tpu-v5e")).run("main", args)
    for want, got in zip(cpu, tpu):
        want, got = np.asarray(want), np.asarray(got)
        assert got.dtype == want.dtype and got.shape == want.shape
        if want.dtype.kind in "biu":
            assert np.array_equal(got, want)
        else:
            np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=5e-2, atol=5e-2)


def test_every_device_of_a_grid_stores_in_tpu_layouts():
    require_shared()
    name = "sharded_mlp_4x2"
    program = hlodbg.load((PROGRAMS / f"{name}.mlir").read_text())
    inputs = np.load(PROGRAMS / f"{name}.inputs.npz")
    expected = np.load(PROGRAMS / f"{name}.expected.npz")
    args = [inputs[f"arg{i}"] for i in range(len(inputs.files))]
    target = program.debug(args, backend=backend_for("tpu-v5e"), persist=False)
    try:
        assert target.continue_().reason == "end"
        assert len(target.sessions) == 8
        for session in target.sessions.values():
            (result,) = session.results
            np.testing.assert_allclose(np.asarray(result, np.float64), expected["result0"], rtol=5e-2, atol=5e-2)
    finally:
        target.close()
