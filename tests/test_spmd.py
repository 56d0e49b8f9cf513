"""Global SPMD programs (JAX's sharded jit / shard_map) run on the emulated grid.

Differential tests: a helper run once per session in a subprocess (JAX with 8 host devices)
lowers shard_map programs in Shardy form and in GSPMD's custom-call form and evaluates them; each
must come out of `run_global` the same. Hand-written programs pin down what JAX does not emit
(uneven tiles, transposed and listed tile assignments, mesh device ids, sub-axes) and the errors.
"""
from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import hlodbg
from hlodbg.engine.ir.errors import ExecutionError
from hlodbg.engine.run.interpreter import Interpreter
from hlodbg.engine.run.spmd import is_global_program, run_global
from .helpers import PROGRAMS


# -- the JAX oracle ------------------------------------------------------------------------------

HELPER = textwrap.dedent('''
    import os
    import sys

    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax.sharding import Mesh, PartitionSpec as P

    try:
        from jax import shard_map
    except ImportError:
        from jax.experimental.shard_map import shard_map

    out_dir = sys.argv[1]
    devices = np.array(jax.devices())
    assert len(devices) == 8, f"XLA_FLAGS gave {len(devices)} devices"
    mesh42 = Mesh(devices.reshape(4, 2), ("x", "y"))
    mesh8 = Mesh(devices, ("i",))
    rng = np.random.default_rng(0)


    def normal(*shape):
        return rng.standard_normal(shape).astype(np.float32)


    def sm(f, mesh, in_specs, out_specs, **kw):
        return shard_map(f, mesh=mesh, in_specs=in_specs, out_specs=out_specs, **kw)


    def nested(a):
        a = a * (jax.lax.axis_index("x") + 1)
        inner = lambda b: jax.lax.psum(b, "y") + jax.lax.axis_index("y")
        return shard_map(inner, in_specs=P(None, "y"), out_specs=P(None, "y"), axis_names={"y"})(a)


    def global_around():
        body = sm(lambda h: jax.lax.psum(h, "y"), mesh42, P("x", "y"), P("x", None))
        return lambda a, b: jnp.tanh(body(jnp.sin(a) @ b)) * 2.0 + 1.0


    PROGRAMS = {
        "psum_y": (lambda: sm(lambda a: jax.lax.psum(a, "y"), mesh42, P("x", "y"), P("x", None)), [normal(8, 4)]),
        "psum_all_int": (lambda: sm(lambda a: jax.lax.psum(a, ("x", "y")), mesh42, P("x", "y"), P()),
                         [rng.integers(-50, 50, (8, 6)).astype(np.int32)]),
        "pmax_x": (lambda: sm(lambda a: jax.lax.pmax(a, "x"), mesh42, P("x", "y"), P(None, "y")), [normal(8, 4)]),
        "all_gather_tiled": (lambda: sm(lambda a: jax.lax.all_gather(a, "i", axis=0, tiled=True), mesh8, P("i"), P(),
                                        check_vma=False), [normal(16, 3)]),
        "all_gather_stacked": (lambda: sm(lambda a: jax.lax.all_gather(a, "x", axis=1), mesh42, P("x", "y"),
                                          P(None, None, "y"), check_vma=False), [normal(8, 4)]),
        "all_to_all": (lambda: sm(lambda a: jax.lax.all_to_all(a, "i", 0, 1, tiled=True), mesh8, P("i"), P("i")),
                       [normal(64, 8)]),
        "psum_scatter": (lambda: sm(lambda a: jax.lax.psum_scatter(a, "x", scatter_dimension=0, tiled=True), mesh42,
                                    P("x", "y"), P("x", "y")), [normal(32, 4)]),
        "ppermute_ring": (lambda: sm(lambda a: jax.lax.ppermute(a, "i", [(k, (k + 1) % 8) for k in range(8)]),
                                     mesh8, P("i"), P("i")), [normal(16, 2)]),
        "ppermute_partial": (lambda: sm(lambda a: jax.lax.ppermute(a, "x", [(0, 1), (1, 2)]), mesh42, P("x", "y"),
                                        P("x", "y")), [normal(8, 4)]),
        "axis_index": (lambda: sm(lambda a: a + 10.0 * jax.lax.axis_index("x") + jax.lax.axis_index("y"), mesh42,
                                  P("x", "y"), P("x", "y")), [normal(8, 4)]),
        "partial_manual": (lambda: sm(lambda a: jax.lax.psum(a, "x") * 2, mesh42, P("x"), P(None, None),
                                      axis_names={"x"}), [normal(8, 8)]),
        "nested": (lambda: sm(nested, mesh42, P("x"), P("x"), axis_names={"x"}), [normal(8, 8)]),
        "global_around": (global_around, [normal(8, 6), normal(6, 4)]),
    }


    def save(name, make, inputs):
        function = jax.jit(make())
        text = function.lower(*inputs).as_text()
        results = function(*inputs)
        results = results if isinstance(results, (tuple, list)) else [results]
        with open(os.path.join(out_dir, name + ".mlir"), "w") as f:
            f.write(text)
        np.savez(os.path.join(out_dir, name + ".inputs.npz"), *[np.asarray(x) for x in inputs])
        np.savez(os.path.join(out_dir, name + ".expected.npz"), *[np.asarray(r) for r in results])


    for name, (make, inputs) in PROGRAMS.items():
        save(name, make, inputs)
    # The same programs in GSPMD's form: custom_call @Sharding / @SPMDFullToShardShape / ...
    jax.config.update("jax_use_shardy_partitioner", False)
    for name in sys.argv[2].split(","):
        make, inputs = PROGRAMS[name]
        save("gspmd_" + name, make, inputs)
''')

SHARDY = ["psum_y", "psum_all_int", "pmax_x", "all_gather_tiled", "all_gather_stacked", "all_to_all", "psum_scatter",
          "ppermute_ring", "ppermute_partial", "axis_index", "partial_manual", "nested", "global_around"]
GSPMD = ["psum_y", "all_gather_tiled", "all_to_all", "axis_index", "partial_manual", "nested", "global_around"]


@pytest.fixture(scope="module")
def jax_programs(tmp_path_factory):
    if importlib.util.find_spec("jax") is None:
        pytest.skip("jax is not installed (it is the oracle of these tests)")
    out = tmp_path_factory.mktemp("spmd_jax")
    script = out / "make_programs.py"
    script.write_text(HELPER)
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=8", JAX_PLATFORMS="cpu")
    done = subprocess.run([sys.executable, str(script), str(out), ",".join(GSPMD)], env=env, capture_output=True,
                          text=True, timeout=300)
    if done.returncode != 0:
        pytest.fail(f"the JAX helper failed:\n{done.stderr[-3000:]}")
    return out


def _check_against(directory, name):
    program = hlodbg.load(directory / f"{name}.mlir")
    inputs = np.load(directory / f"{name}.inputs.npz")
    expected = np.load(directory / f"{name}.expected.npz")
    assert is_global_program(program.module)
    results = run_global(program.module, [inputs[f"arr_{i}"] for i in range(len(inputs.files))])
    assert len(results) == len(expected.files)
    for i, result in enumerate(results):
        want = expected[f"arr_{i}"]
        assert result.shape == want.shape and result.dtype == want.dtype, name
        if want.dtype.kind in "iub":
            np.testing.assert_array_equal(result, want, err_msg=name)
        else:
            np.testing.assert_allclose(result, want, rtol=1e-5, atol=1e-6, err_msg=name)


@pytest.mark.parametrize("name", SHARDY)
def test_shard_map_matches_jax(jax_programs, name):
    assert "sdy.manual_computation" in (jax_programs / f"{name}.mlir").read_text()
    _check_against(jax_programs, name)


@pytest.mark.parametrize("name", GSPMD)
def test_gspmd_form_matches_jax(jax_programs, name):
    text = (jax_programs / f"gspmd_{name}.mlir").read_text()
    assert "@SPMDFullToShardShape" in text and "sdy.manual_computation" not in text
    _check_against(jax_programs, f"gspmd_{name}")


# -- the shared corpus -----------------------------------------------------------------------------


@pytest.mark.skipif(not (PROGRAMS / "sharded_mlp_4x2.mlir").exists(), reason="../shared/programs is not present")
def test_sharded_mlp_reproduces_xla():
    program = hlodbg.load(PROGRAMS / "sharded_mlp_4x2.mlir")
    inputs = np.load(PROGRAMS / "sharded_mlp_4x2.inputs.npz")
    expected = np.load(PROGRAMS / "sharded_mlp_4x2.expected.npz")
    assert is_global_program(program.module)
    (result,) = run_global(program.module, [inputs["arg0"], inputs["arg1"]])
    np.testing.assert_allclose(result, expected["result0"], rtol=1e-5, atol=1e-5)


@pytest.mark.skipif(not (PROGRAMS / "sharded_mlp_4x2.mlir").exists(), reason="../shared/programs is not present")
def test_sharded_mlp_on_one_device_says_which_grid():
    program = hlodbg.load(PROGRAMS / "sharded_mlp_4x2.mlir")
    inputs = np.load(PROGRAMS / "sharded_mlp_4x2.inputs.npz")
    with pytest.raises(ExecutionError) as info:
        Interpreter(program.module).run("main", [inputs["arg0"], inputs["arg1"]])
    message = str(info.value)
    assert "sdy.manual_computation" in message and "run on a grid of 8 devices: hlodbg run --partitions 8" in message


# -- hand-written programs -------------------------------------------------------------------------


def _load(text: str):
    return hlodbg.load(textwrap.dedent(text)).module


def test_plain_program_is_not_global():
    module = _load("""
        func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
          %0 = stablehlo.custom_call @Sharding(%a) {mhlo.sharding = "{replicated}"} : (tensor<2xf32>) -> tensor<2xf32>
          return %0 : tensor<2xf32>
        }""")
    assert not is_global_program(module)
    np.testing.assert_array_equal(run_global(module, [np.array([1, 2], np.float32)], num_partitions=2)[0], [1, 2])


def _gspmd(shape: str, tile: str, sharding: str, partitions: int, body: str, out_sharding: str = "", out: str = ""):
    out_sharding = out_sharding or sharding
    out = out or shape
    return _load(f"""
        module attributes {{mhlo.num_partitions = {partitions} : i32}} {{
          func.func @main(%a: tensor<{shape}xf32>) -> tensor<{out}xf32> {{
            %0 = stablehlo.custom_call @Sharding(%a) {{mhlo.sharding = "{sharding}"}} : (tensor<{shape}xf32>) -> tensor<{shape}xf32>
            %1 = stablehlo.custom_call @SPMDFullToShardShape(%0) {{mhlo.sharding = "{{manual}}"}} : (tensor<{shape}xf32>) -> tensor<{tile}xf32>
            %2 = call @body(%1) : (tensor<{tile}xf32>) -> tensor<{tile}xf32>
            %3 = stablehlo.custom_call @Sharding(%2) {{mhlo.sharding = "{{manual}}"}} : (tensor<{tile}xf32>) -> tensor<{tile}xf32>
            %4 = stablehlo.custom_call @SPMDShardToFullShape(%3) {{mhlo.sharding = "{out_sharding}"}} : (tensor<{tile}xf32>) -> tensor<{out}xf32>
            return %4 : tensor<{out}xf32>
          }}
          func.func private @body(%t: tensor<{tile}xf32>) -> tensor<{tile}xf32> {{
            {body}
          }}
        }}""")


# Multiplies each tile by (partition id + 1).
SCALE_BY_DEVICE = """%p = stablehlo.partition_id : tensor<ui32>
            %f = stablehlo.convert %p : (tensor<ui32>) -> tensor<f32>
            %one = stablehlo.constant dense<1.0> : tensor<f32>
            %g = stablehlo.add %f, %one : tensor<f32>
            %b = stablehlo.broadcast_in_dim %g, dims = [] : (tensor<f32>) -> tensor<TILExf32>
            %r = stablehlo.multiply %t, %b : tensor<TILExf32>
            return %r : tensor<TILExf32>"""


@pytest.mark.parametrize("sharding", ["{devices=[2,2]<=[2,2]T(1,0)}", "{devices=[2,2]0,2,1,3}"])
def test_gspmd_tile_assignment_places_tiles(sharding):
    module = _gspmd("4x6", "2x3", sharding, 4, SCALE_BY_DEVICE.replace("TILE", "2x3"))
    a = np.arange(24, dtype=np.float32).reshape(4, 6)
    (result,) = run_global(module, [a])
    # Tile (i, j) lives on device 2j + i: [[0, 2], [1, 3]].
    factor = np.repeat(np.repeat(np.array([[1, 3], [2, 4]], np.float32), 2, axis=0), 3, axis=1)
    np.testing.assert_array_equal(result, a * factor)


def test_gspmd_uneven_tiles_are_zero_padded_and_cut():
    # 5 rows over 2 devices: tiles of 3 rows, the second holds rows 3..4 and a row of zeros.
    total = """%s = "stablehlo.all_reduce"(%t) <{replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>, channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, use_global_device_ids}> ({
            ^bb0(%x: tensor<f32>, %y: tensor<f32>):
              %z = stablehlo.add %x, %y : tensor<f32>
              stablehlo.return %z : tensor<f32>
            }) : (tensor<3x2xf32>) -> tensor<3x2xf32>
            return %s : tensor<3x2xf32>"""
    module = _gspmd("5x2", "3x2", "{devices=[2,1]<=[2]}", 2, total, out_sharding="{replicated}", out="3x2")
    a = np.arange(10, dtype=np.float32).reshape(5, 2)
    (summed,) = run_global(module, [a])
    np.testing.assert_array_equal(summed, a[:3] + np.vstack([a[3:], np.zeros((1, 2), np.float32)]))

    module = _gspmd("5x2", "3x2", "{devices=[2,1]<=[2]}", 2, SCALE_BY_DEVICE.replace("TILE", "3x2"))
    (scaled,) = run_global(module, [a])
    np.testing.assert_array_equal(scaled, a * np.array([[1], [1], [1], [2], [2]], np.float32))


def test_gspmd_replicated_over_a_subgroup_takes_the_first_device():
    # Rows split in 2, each half held by two devices ({0, 1} and {2, 3}): devices 0 and 2 count.
    module = _gspmd("4x2", "2x2", "{devices=[2,1,2]<=[4] last_tile_dim_replicate}", 4,
                    SCALE_BY_DEVICE.replace("TILE", "2x2"))
    a = np.ones((4, 2), np.float32)
    np.testing.assert_array_equal(run_global(module, [a])[0], [[1, 1], [1, 1], [3, 3], [3, 3]])


def test_gspmd_on_one_device_says_which_grid():
    module = _gspmd("4x6", "2x3", "{devices=[2,2]<=[4]}", 4, SCALE_BY_DEVICE.replace("TILE", "2x3"))
    with pytest.raises(ExecutionError, match="run on a grid of 4 devices: hlodbg run --partitions 4"):
        Interpreter(module).run("main", [np.zeros((4, 6), np.float32)])


def _manual(mesh: str, in_sharding: str, out_sharding: str, manual_axes: str, shape: str, tile: str,
            partitions: int, body_tile: str = ""):
    body_tile = body_tile or tile
    return _load(f"""
        module attributes {{mhlo.num_partitions = {partitions} : i32}} {{
          sdy.mesh @mesh = {mesh}
          func.func @main(%a: tensor<{shape}xf32>) -> tensor<{shape}xf32> {{
            %0 = sdy.manual_computation(%a) in_shardings=[<@mesh, {in_sharding}>] out_shardings=[<@mesh, {out_sharding}>] manual_axes={manual_axes} (%t: tensor<{body_tile}xf32>) {{
              {SCALE_BY_DEVICE.replace("TILE", body_tile).replace("return", "sdy.return")}
            }} : (tensor<{shape}xf32>) -> tensor<{shape}xf32>
            return %0 : tensor<{shape}xf32>
          }}
        }}""")


def test_mesh_device_ids_say_which_device_holds_which_tile():
    module = _manual('<["x"=2], device_ids=[1, 0]>', '[{"x"}, {}]', '[{"x"}, {}]', '{"x"}', "4x2", "2x2", 2)
    a = np.ones((4, 2), np.float32)
    # Mesh position 0 (the first rows) is device 1.
    np.testing.assert_array_equal(run_global(module, [a])[0], [[2, 2], [2, 2], [1, 1], [1, 1]])


def test_sub_axis_splits_over_the_major_part_of_an_axis():
    # "x":(1)2 is the major half of x=4: devices 0, 1 hold tile 0, devices 2, 3 tile 1; the
    # result takes each tile from the first of its devices (0 and 2).
    module = _manual('<["x"=4]>', '[{"x":(1)2}, {}]', '[{"x":(1)2}, {}]', '{"x"}', "4x2", "2x2", 4)
    a = np.ones((4, 2), np.float32)
    np.testing.assert_array_equal(run_global(module, [a])[0], [[1, 1], [1, 1], [3, 3], [3, 3]])


def test_manual_computation_needs_divisible_dimensions():
    module = _manual('<["x"=4]>', '[{"x"}, {}]', '[{"x"}, {}]', '{"x"}', "6x2", "2x2", 4)
    with pytest.raises(ExecutionError) as info:
        run_global(module, [np.zeros((6, 2), np.float32)])
    message = str(info.value)
    assert "sdy.manual_computation" in message
    assert 'dimension 0 of size 6 does not split evenly over mesh axes "x" (4 tiles)' in message


def test_manual_computation_on_one_device_says_which_grid():
    module = _manual('<["x"=4, "y"=2]>', '[{"x"}, {"y"}]', '[{"x"}, {"y"}]', '{"x", "y"}', "8x4", "2x2", 8)
    with pytest.raises(ExecutionError) as info:
        Interpreter(module).run("main", [np.zeros((8, 4), np.float32)])
    message = str(info.value)
    assert "mesh @mesh spans 8 devices but this run's grid has 1" in message
    assert "run on a grid of 8 devices: hlodbg run --partitions 8, or the module's mhlo.num_partitions" in message


def test_devices_that_disagree_are_named():
    module = _load("""
        module attributes {mhlo.num_partitions = 4 : i32} {
          func.func @main() -> (tensor<ui32>, tensor<ui32>) {
            %p = stablehlo.partition_id : tensor<ui32>
            %c = stablehlo.constant dense<2> : tensor<ui32>
            %q = stablehlo.divide %p, %c : tensor<ui32>
            return %c, %q : tensor<ui32>, tensor<ui32>
          }
        }""")
    with pytest.raises(ExecutionError) as info:
        run_global(module)
    message = str(info.value)
    assert "device(s) 2, 3 differ from device 0" in message and "result 1 differs (1 of 1 elements)" in message


def test_sharded_jit_without_manual_computation_runs_as_a_global_program():
    """jax.jit with sharded arguments: Shardy shardings on the arguments, nothing manual; XLA would
    partition it, so it is a global program and Program.run gives its global results."""
    program = hlodbg.load(textwrap.dedent("""
        module attributes {mhlo.num_partitions = 4 : i32} {
          sdy.mesh @mesh = <["x"=2, "y"=2]>
          func.func @main(%a: tensor<4x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> tensor<2xf32> {
            %z = stablehlo.constant dense<0.0> : tensor<f32>
            %0 = stablehlo.reduce(%a init: %z) applies stablehlo.add across dimensions = [0] : (tensor<4x2xf32>, tensor<f32>) -> tensor<2xf32>
            return %0 : tensor<2xf32>
          }
        }"""))
    assert is_global_program(program.module)
    (summed,) = program.run(np.arange(8, dtype=np.float32).reshape(4, 2))
    np.testing.assert_array_equal(summed, [12, 16])
