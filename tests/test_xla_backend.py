"""The XLA backend on one device (`--target xla:cpu`): ops run as single-op kernels compiled once
per signature, values stay device arrays, and the debugger, summaries and the CLI see them.

Results are compared with the numpy backend's within the contract's tolerances (tests/hlo_oracle.py
`difference`). Everything but the missing-JAX test skips without JAX."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import hlodbg
from hlodbg.cli import main
from hlodbg.engine.ir.errors import ExecutionError
from hlodbg.engine.machine import targets
from hlodbg.engine.machine.xla import runtime as runtime_module
from hlodbg.engine.machine.xla.device_values import is_device_array
from .helpers import CONFORMANCE, PROGRAMS, SAMPLES
from .hlo_oracle import difference

DATA = Path(__file__).parent / "data"
NAN_PROGRAM = DATA / "nan_in_loop.mlir"
HUNDREDS = np.full(4, 100, np.float32)

TWO_ADDS = """
func.func @main(%a: tensor<3xf32>, %b: tensor<3xf32>) -> tensor<3xf32> {
  %x = stablehlo.add %a, %b : tensor<3xf32>
  %y = stablehlo.add %x, %a : tensor<3xf32>
  %z = stablehlo.multiply %y, %b : tensor<3xf32>
  return %z : tensor<3xf32>
}
"""


@pytest.fixture
def jax():
    return pytest.importorskip("jax")


@pytest.fixture(autouse=True)
def state_dir(tmp_path, monkeypatch):
    """Breakpoint files go to a per-test directory, never the user's."""
    monkeypatch.setenv("HLODBG_STATE_DIR", str(tmp_path / "state"))


def _unsharded_programs() -> list:
    if not PROGRAMS.is_dir():
        return [pytest.param(None, marks=pytest.mark.skip(reason=f"{PROGRAMS} is absent"))]
    found = []
    for path in sorted(PROGRAMS.glob("*.mlir")):
        program = hlodbg.load(path)
        if program.num_replicas * program.num_partitions > 1 or any(op.dialect == "sdy" for op in program.module.walk()):
            continue  # sharded: the grid backend's (tests/test_xla_grid.py)
        found.append(pytest.param(path, id=path.stem))
    return found


def _inputs(path: Path) -> list:
    inputs = path.with_suffix(".inputs.npz")
    if not inputs.exists():
        return []
    with np.load(inputs) as archive:
        return [archive[f"arg{i}"] for i in range(len(archive.files))]


def _assert_matches(got: list, want: list) -> None:
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        problem = difference(np.asarray(g), np.asarray(w))
        assert problem is None, f"result {i}: {problem}"


# -- targets ---------------------------------------------------------------------------------


def test_xla_targets_are_named_like_every_other_target():
    for name in ("xla:cpu", "xla:gpu", "xla:tpu"):
        assert name in targets.target_names()
        assert targets.canonical_target(name.upper()) == name
    with pytest.raises(targets.TargetError, match="xla:cpu"):
        targets.canonical_target("xla:npu")


def test_without_jax_the_xla_targets_say_how_to_install_it(monkeypatch, tmp_path, capsys):
    monkeypatch.setitem(sys.modules, "jax", None)  # `import jax` now fails as if it were absent
    monkeypatch.setattr(runtime_module, "_runtimes", {})
    program = tmp_path / "p.mlir"
    program.write_text(TWO_ADDS)
    assert main(["run", str(program), "--target", "xla:cpu"]) == 2
    err = capsys.readouterr().err
    assert "pip install 'hlodbg[xla]'" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
    with pytest.raises(runtime_module.XlaUnavailable, match=r"pip install 'hlodbg\[xla\]'"):
        targets.backend_for("xla:cpu")


def test_emulation_options_are_refused_on_xla_targets(jax, tmp_path, capsys):
    program = tmp_path / "p.mlir"
    program.write_text(TWO_ADDS)
    for option in (["--layout", "arg0=0"], ["--allow-f64"], ["--excess-precision"], ["--per-op-rounding"]):
        assert main(["run", str(program), "--target", "xla:cpu", *option]) == 2
        assert f"{option[0]} applies to the emulated targets" in capsys.readouterr().err


# -- results ---------------------------------------------------------------------------------


@pytest.mark.parametrize("path", _unsharded_programs())
def test_shared_programs_match_the_numpy_backend(jax, path):
    program = hlodbg.load(path)
    args = _inputs(path)
    # xla:cpu compiles and runs each op alone, so no op's result reaches a convert unrounded: it
    # is the emulator with per-op rounding (the cpu target's default, XLA's excess precision over
    # a whole compiled program, is checked against jax.jit in test_programs.py).
    per_op = targets.backend_for("cpu", excess_precision=False)
    _assert_matches(program.run(*args, target="xla:cpu"), program.run(*args, target=per_op))


def test_the_sample_program_matches_the_numpy_backend(jax):
    program = hlodbg.load(SAMPLES / "tiny_model.mlir")
    _assert_matches(program.run(seed=3, target="xla:cpu"), program.run(seed=3, target="cpu"))


def test_values_stay_on_the_device_between_ops(jax):
    from hlodbg.engine.machine.targets import backend_for
    from hlodbg.engine.run.interpreter import Interpreter

    program = hlodbg.load(NAN_PROGRAM)
    results = Interpreter(program.module, backend=backend_for("xla:cpu")).run("main", [HUNDREDS])
    assert all(is_device_array(r) for r in results)


def test_conformance_files_pass_through_check_on_xla(jax, capsys):
    if not CONFORMANCE.is_dir():
        pytest.skip(f"{CONFORMANCE} is absent")
    names = ["sort_float32_5_7.mlir", "top_k_float32_5_chlo.mlir", "fft_complex64_14_15_16_17.mlir",
             "cumlogsumexp_float32_8_9.mlir", "cummax_bfloat16_8_9.mlir", "erfc_float32_20_20_chlo.mlir",
             "lgamma_float32_20_20_chlo.mlir"]
    files = [CONFORMANCE / n for n in names if (CONFORMANCE / n).exists()]
    files += sorted(CONFORMANCE.glob("dynamic_update_slice_*.mlir"))[:2] + sorted(CONFORMANCE.glob("scatter_*.mlir"))[:3]
    assert len(files) >= 5
    assert main(["check", *map(str, files), "--target", "xla:cpu"]) == 0
    assert f"{len(files)} passed, 0 failed" in capsys.readouterr().out


def test_lapack_custom_calls_run_through_xla(jax):
    import jax.numpy as jnp

    matrix = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]], np.float32)
    text = jax.jit(jnp.linalg.cholesky).lower(matrix).as_text()
    assert "lapack_spotrf" in text
    program = hlodbg.load(text)
    custom_call = next(op for op in program.module.walk() if op.name == "stablehlo.custom_call")
    from hlodbg.engine.machine.xla.backend import how_xla_backend_runs

    assert how_xla_backend_runs(custom_call) == "kernel"
    _assert_matches(program.run(matrix, target="xla:cpu"), program.run(matrix, target="cpu"))


def test_an_op_xla_refuses_fails_with_its_line(jax):
    program = hlodbg.load("""
func.func @main(%a: tensor<4x3xf32>) -> tensor<3x4xf32> {
  %0 = "stablehlo.unary_einsum"(%a) {einsum_config = "ab->ba"} : (tensor<4x3xf32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}""")
    with pytest.raises(ExecutionError) as caught:
        program.run(np.ones((4, 3), np.float32), target="xla:cpu")
    assert caught.value.line == 3 and "stablehlo.unary_einsum" in caught.value.message
    assert "can't be translated" in caught.value.message


# -- kernels ---------------------------------------------------------------------------------


def test_an_op_signature_is_compiled_once(jax):
    from hlodbg.engine.machine.xla.kernels import KERNELS

    program = hlodbg.load(TWO_ADDS)
    a, b = np.arange(3, dtype=np.float32), np.ones(3, np.float32)
    before = KERNELS.compiles
    program.run(a, b, target="xla:cpu")
    first = KERNELS.compiles - before
    program.run(a * 2, b, target="xla:cpu")
    hlodbg.load(TWO_ADDS).run(a, b, target="xla:cpu")  # another program, the same signatures
    assert first <= 2  # the two adds share one kernel; the multiply has its own (unless compiled earlier)
    assert KERNELS.compiles - before == first


def test_kernels_name_the_mesh_and_combiner_bodies_the_interpreter_runs_stay_there(jax):
    from hlodbg.engine.machine.xla.backend import how_xla_backend_runs
    from hlodbg.engine.machine.xla.kernels import captured_values, single_op_module

    program = hlodbg.load("""
module {
  sdy.mesh @mesh = <["x"=1]>
  func.func @main(%a: tensor<16x8xf32>, %s: tensor<f32>) -> tensor<8xf32> {
    %zero = stablehlo.constant dense<0.0> : tensor<f32>
    %b = stablehlo.add %a, %a {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}]>]>} : tensor<16x8xf32>
    %r = stablehlo.reduce(%b init: %zero) across dimensions = [0] : (tensor<16x8xf32>, tensor<f32>) -> tensor<8xf32>
      reducer(%x: tensor<f32>, %y: tensor<f32>) {
        %t = stablehlo.add %x, %y : tensor<f32>
        %u = stablehlo.multiply %t, %s : tensor<f32>
        stablehlo.return %u : tensor<f32>
      }
    return %r : tensor<8xf32>
  }
}""")
    add = next(op for op in program.module.walk() if op.name == "stablehlo.add")
    reduce = next(op for op in program.module.walk() if op.name == "stablehlo.reduce")
    assert how_xla_backend_runs(add) == "kernel"
    text = single_op_module(add, program.module)
    assert '"sdy.mesh"() <{mesh = #sdy.mesh<["x"=1]>, sym_name = "mesh"}>' in text and "func.func public @main(%arg0: tensor<16x8xf32>, %arg1: tensor<16x8xf32>)" in text
    (captured,) = captured_values(reduce)
    assert captured is program.module.function("main").arguments[1]
    assert how_xla_backend_runs(reduce) == "host"  # XLA refuses to export such a body
    # ... and its body's ops, which the interpreter then applies to whole rows at once, too
    assert {how_xla_backend_runs(op) for op in reduce.regions[0].blocks[0].operations} == {"host", "passes"}
    a = np.linspace(-1, 1, 128, dtype=np.float32).reshape(16, 8)
    _assert_matches(program.run(a, np.float32(2), target="xla:cpu"), program.run(a, np.float32(2), target="cpu"))


# -- the debugger ------------------------------------------------------------------------------


def _session_walk(target: str) -> dict:
    """What a session sees on `target`: stepping in, going back, stopping at the first NaN."""
    session = hlodbg.load(NAN_PROGRAM).session([HUNDREDS], target=target)
    try:
        session.step()
        for _ in range(3):
            session.step_in()
        forward = (session.position, session.op.name, {k: np.asarray(v) for k, v in session.values().items()})
        session.back()
        back = (session.position, session.op.name)
        session.break_at("nan")
        stop = session.continue_()
        hit = session.event(stop.hits[0].event)
        seen = dict(forward=forward, back=back, reason=stop.reason, op=hit.op.name, iterations=hit.iterations,
                    inputs=[np.asarray(v) for v in hit.inputs], outputs=[np.asarray(v) for v in hit.outputs],
                    summary=session.summary(stop.hits[0].event).describe(), difference=np.asarray(session.evaluate("%d")))
        session.breakpoints.clear()
        session.continue_()
        seen["results"] = [np.asarray(r) for r in session.results]
        seen["recorded"] = session.memory_used
        return seen
    finally:
        session.close()


def test_a_debugger_session_on_xla_sees_what_it_sees_on_cpu(jax):
    cpu, xla = _session_walk("cpu"), _session_walk("xla:cpu")
    assert xla["op"] == "stablehlo.sqrt" and xla["iterations"] == (3,) and xla["reason"] == "breakpoint"
    for key in ("back", "reason", "op", "iterations", "summary"):
        assert xla[key] == cpu[key], key
    assert xla["forward"][:2] == cpu["forward"][:2]
    assert xla["forward"][2].keys() == cpu["forward"][2].keys()
    for name, value in cpu["forward"][2].items():
        np.testing.assert_array_equal(xla["forward"][2][name], value)
    for key in ("inputs", "outputs", "results"):
        for got, want in zip(xla[key], cpu[key]):
            np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(xla["difference"], cpu["difference"])
    assert xla["recorded"] > 0  # device buffers are counted too


def test_stepping_into_a_reduce_shows_its_body_evaluated_as_on_cpu(jax):
    seen = {}
    for target in ("cpu", "xla:cpu"):
        session = hlodbg.load(NAN_PROGRAM).session([HUNDREDS], target=target)
        try:
            session.run_to("stablehlo.reduce")
            stop = session.step_in()
            seen[target] = (stop.reason, session.expanded, session.op.name, len(session.trace),
                            [np.asarray(v) for v in session.outputs()])
        finally:
            session.close()
    assert seen["xla:cpu"][:4] == seen["cpu"][:4] and seen["cpu"][2] == "stablehlo.add"
    for got, want in zip(seen["xla:cpu"][4], seen["cpu"][4]):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("platform", ["cpu", "tpu"])
def test_summaries_and_nan_tests_of_device_values(jax, monkeypatch, platform):
    """On an accelerator a big float value is summarised and NaN-tested on its device (simulated
    here: the CPU device said to be a TPU); on the CPU it comes to the host. Same answers."""
    from hlodbg.engine.debug.breakpoints import surely_finite, value_test
    from hlodbg.engine.debug.summary import summarize
    from hlodbg.engine.machine.xla import device_values

    monkeypatch.setattr(device_values, "_platform", lambda value: platform)
    values = np.linspace(-3, 5, device_values.DEVICE_STATISTICS_FROM * 2, dtype=np.float32)
    values[7], values[9], values[11], values[13] = np.nan, np.inf, -np.inf, 0
    on_device = jax.device_put(values)
    assert device_values.summarised_on_device(on_device) == (platform != "cpu")
    got, want = summarize(on_device), summarize(values, exact=True)
    assert (got.nan, got.posinf, got.neginf, got.zeros, got.min, got.max) == \
        (want.nan, want.posinf, want.neginf, want.zeros, want.min, want.max)
    assert got.mean == pytest.approx(want.mean, rel=1e-9) and got.std == pytest.approx(want.std, rel=1e-9)
    assert value_test("nan")([on_device]) and value_test("inf")([on_device])
    assert not value_test("nan")([jax.device_put(np.array([1.0, np.inf]))])
    assert not surely_finite(on_device) and surely_finite(jax.device_put(np.ones(5, np.float32)))
    complex_value = jax.device_put(np.array([1 + 1j, complex(np.nan, 0), complex(0, -np.inf)], np.complex64))
    assert value_test("nan")([complex_value]) and value_test("inf")([complex_value])


# -- the CLI -----------------------------------------------------------------------------------


def test_run_on_xla_prints_and_writes_the_results(jax, tmp_path, capsys):
    program = tmp_path / "p.mlir"
    program.write_text(TWO_ADDS)
    out = tmp_path / "out.npz"
    assert main(["run", str(program), "--target", "xla:cpu", "--seed", "1"]) == 0
    printed = capsys.readouterr().out
    assert "result0: tensor<3xf32>" in printed and "[" in printed
    assert main(["run", str(program), "--target", "xla:cpu", "--seed", "1", "--json"]) == 0
    assert '"target": "xla:cpu"' in capsys.readouterr().out
    assert main(["run", str(program), "--target", "xla:cpu", "--seed", "1", "--out", str(out)]) == 0
    want = hlodbg.load(TWO_ADDS).run(seed=1)
    with np.load(out) as written:
        _assert_matches([written["result0"]], want)


async def test_the_inspector_shows_a_device_value_where_a_nan_breakpoint_stops(jax, private_hlodbg_dirs):
    from hlodbg.engine.machine.targets import backend_for
    from hlodbg.ui.app import HlodbgApp
    from hlodbg.ui.widgets.inspector import TensorInspector
    from .pilot import settle

    app = HlodbgApp(hlodbg.load(NAN_PROGRAM), args=[HUNDREDS], memory="1G", persist=False, break_on="nan",
                    backend=backend_for("xla:cpu"))
    async with app.run_test(size=(140, 44)) as pilot:
        await settle(app, pilot)
        assert app.screen.state.stop_reason == "breakpoint"
        text = app.screen.query_one(TensorInspector).render_text()
        assert "%s" in text and "NaN" in text and "iteration 3" in text


def test_a_single_op_module_takes_other_attributes_and_module_attributes():
    from hlodbg.engine.ir import attributes as A
    from hlodbg.engine.machine.xla.kernels import single_op_module

    program = hlodbg.load(TWO_ADDS)
    first, second = program.module.function("main").ops[:2]
    plain = single_op_module(first, program.module)
    assert plain == single_op_module(second, program.module)  # same signature, same text: one compile
    assert '%result0 = "stablehlo.add"(%arg0, %arg1)' in plain
    marked = single_op_module(first, program.module, attributes={"xla.marked": A.UNIT},
                              module_attributes={"mhlo.num_partitions": A.IntegerAttr(4, A.IntegerType(32))})
    assert marked.startswith("module @kernel attributes {mhlo.num_partitions = 4 : i32}")
    assert "xla.marked" in marked and "xla.marked" not in plain and not first.attributes


def test_two_sites_of_a_multi_result_op_share_one_kernel(jax):
    """A sort of two operands twice, with other SSA names: one module text, so one compile."""
    from jax import lax

    from hlodbg.engine.machine.xla.kernels import KERNELS, single_op_module

    def two_sorts(a, b):
        p, q = lax.sort((a, b), num_keys=1)
        return lax.sort((q, p), num_keys=1)

    a, b = np.array([3, 1, 2], np.float32), np.array([1, 2, 3], np.float32)
    program = hlodbg.load(jax.jit(two_sorts).lower(a, b).as_text())
    first, second = (single_op_module(op, program.module) for op in program.module.walk() if op.name == "stablehlo.sort")
    assert first == second and "%result0, %result1 = " in first
    KERNELS.clear()
    _assert_matches(program.run(a, b, target="xla:cpu"), program.run(a, b, target="cpu"))
    assert KERNELS.compiles == 1
