"""hlodbg.jax (issue 37 part 1): a JAX call lowered as jit lowers it, with its arguments bound and
named by their pytree paths; hlodbg's commands on it; the NaN trap, which finds the op jit's own
run made a NaN in through a capture of the compiled program (on one device and under shard_map
on 8 emulated ones)."""
from __future__ import annotations

import functools

import numpy as np
import pytest

jax = pytest.importorskip("jax")

import jax.numpy as jnp  # noqa: E402

import hlodbg  # noqa: E402
import hlodbg.jax as hj  # noqa: E402
from hlodbg.engine.run.arguments import ArgumentNames  # noqa: E402
from hlodbg.engine.run.capture_format import Capture  # noqa: E402

from .pilot import settle  # noqa: E402


@pytest.fixture(autouse=True)
def users_32_bit_jax():
    """JAX as a user has it by default (no 64-bit types), whatever an earlier test in this
    process did to it (hlodbg's XLA runtime switches them on for its own programs)."""
    before = bool(jax.config.jax_enable_x64)
    jax.config.update("jax_enable_x64", False)
    yield
    jax.config.update("jax_enable_x64", before)


def two_layers(params, x, *, scale=1.0):
    for name in ("layer_0", "layer_1"):
        x = jnp.tanh(x @ params[name]["w"] + params[name]["b"]) * scale
    return {"mean": x.mean(), "out": x}


def make_params(rng):
    return {name: {"w": jnp.asarray(rng.normal(size=(3, 3)), jnp.float32), "b": jnp.asarray(rng.normal(size=3), jnp.float32)}
            for name in ("layer_0", "layer_1")}


def argument_names(program) -> list[list[str]]:
    """Each parameter's names but its position's (argN)."""
    return [[n for n in names if n != f"arg{k}"] for k, names in enumerate(ArgumentNames(program.entry).by_position)]


def test_arguments_are_named_by_their_pytree_paths_and_bound():
    rng = np.random.default_rng(0)
    params, x = make_params(rng), jnp.asarray(rng.normal(size=(2, 3)), jnp.float32)
    program = hj.load(two_layers, params, x, scale=0.5)
    assert isinstance(program, hlodbg.Program)
    # jit's order: the positional arguments' leaves (a dict's keys sorted), then the keyword ones.
    assert argument_names(program) == [["params['layer_0']['b']"], ["params['layer_0']['w']"],
                                       ["params['layer_1']['b']"], ["params['layer_1']['w']"], ["x"], ["scale"]]
    assert all(isinstance(value, np.ndarray) for value in program.arguments)
    np.testing.assert_array_equal(program.arguments[1], np.asarray(params["layer_0"]["w"]))
    assert program.arguments[5].dtype == np.float32 and program.arguments[5] == 0.5  # a Python float as jit typed it
    # The bound arguments are the default of run, and a name keys a value as in an --args file.
    expected = jax.jit(two_layers)(params, x, scale=0.5)
    mean, out = program.run()
    np.testing.assert_allclose(mean, expected["mean"], rtol=1e-5)
    np.testing.assert_allclose(out, expected["out"], rtol=1e-5, atol=1e-6)
    doubled = program.run({"x": np.asarray(x) * 2, **{f"arg{k}": v for k, v in enumerate(program.arguments) if k != 4}})
    np.testing.assert_allclose(doubled[1], jax.jit(two_layers)(params, x * 2, scale=0.5)["out"], rtol=1e-5, atol=1e-6)


def test_the_debugger_labels_an_operand_with_its_pytree_path():
    from hlodbg.engine.debug.op_values import operand_label

    program = hj.load(two_layers, make_params(np.random.default_rng(0)), jnp.ones((2, 3), jnp.float32))
    dot = next(op for op in program.ops if op.name == "stablehlo.dot_general")
    assert [operand_label(i, v) for i, v in enumerate(dot.operands)] == [
        "operand 0: %arg4 (x)", "operand 1: %arg1 (params['layer_0']['w'])"]


def test_run_equals_jax_on_a_jitted_function_with_static_arguments():
    @functools.partial(jax.jit, static_argnums=(1,), static_argnames=("activation",))
    def repeated(x, times, activation="tanh"):
        for _ in range(times):
            x = getattr(jnp, activation)(x) * 1.5
        return x

    x = jnp.linspace(-2, 2, 8, dtype=jnp.float32)
    three = hj.load(repeated, x, 3, activation="sin")
    one = hj.load(repeated, x, 1, activation="sin")
    assert len(three.ops) > len(one.ops)  # the static count was honoured: unrolled three times
    assert {op.name for op in three.ops} >= {"stablehlo.sine"}
    assert argument_names(three) == [["x"]]  # static arguments are no parameters
    np.testing.assert_allclose(hj.run(repeated, x, 3, activation="sin")[0], repeated(x, 3, activation="sin"), rtol=1e-6)


def test_a_plain_function_takes_its_static_arguments_through_load():
    def power(x, n):
        return x ** n

    x = jnp.arange(4.0, dtype=jnp.float32)
    program = hj.load(power, x, 3, static_argnums=(1,))
    assert argument_names(program) == [["x"]]
    np.testing.assert_allclose(program.run()[0], x ** 3)
    with pytest.raises(hj.JaxCallError, match="jit-wrapped already"):
        hj.load(jax.jit(power, static_argnums=1), x, 3, static_argnums=(1,))


def test_keyword_arguments_and_unused_ones_are_flattened_as_jit_does():
    def f(a, unused, *, z, b):
        return a * z["k"] - b

    a, b = jnp.ones(2, jnp.float32), jnp.full(2, 3.0, jnp.float32)
    program = hj.load(f, a, jnp.zeros(7), z={"k": jnp.float32(2.0)}, b=b)
    # `unused` is dropped by jit (keep_unused=False); keyword arguments come sorted by name.
    assert argument_names(program) == [["a"], ["b"], ["z['k']"]]
    np.testing.assert_allclose(program.run()[0], f(a, None, z={"k": 2.0}, b=b))


needs_8_devices = pytest.mark.skipif(len(jax.devices()) < 8,
                                     reason="needs 8 devices (XLA_FLAGS=--xla_force_host_platform_device_count=8)")


@needs_8_devices
def test_the_shardings_of_the_arguments_are_kept():
    from jax.sharding import Mesh, NamedSharding
    from jax.sharding import PartitionSpec as P

    mesh = Mesh(np.array(jax.devices()[:8]).reshape(4, 2), ("data", "model"))
    mlp = jax.jit(lambda w, x: jnp.tanh(x @ w).sum(axis=0))
    w = jax.device_put(np.arange(128, dtype=np.float32).reshape(16, 8) / 100, NamedSharding(mesh, P(None, "model")))
    x = jax.device_put(np.ones((8, 16), np.float32), NamedSharding(mesh, P("data", None)))
    program = hj.load(mlp, w, x)
    assert (program.num_replicas, program.num_partitions) == (1, 8)
    assert [a.shape for a in program.arguments] == [(16, 8), (8, 16)]  # global values, gathered once
    np.testing.assert_allclose(program.run()[0], mlp(w, x), rtol=1e-5)


def test_session_is_the_engines_session_on_the_bound_arguments():
    from hlodbg.engine.debug.session import Session

    x = jnp.asarray([1.0, -2.0, 3.0], jnp.float32)
    s = hj.session(lambda v: jnp.exp(v).sum(), x)
    assert type(s) is Session
    s.continue_()
    np.testing.assert_allclose(s.results[0], np.exp(np.asarray(x)).sum(), rtol=1e-6)
    s.close()


def test_export_memory_and_diff_work_on_the_call(tmp_path):
    rng = np.random.default_rng(1)
    params, x = make_params(rng), jnp.asarray(rng.normal(size=(2, 3)), jnp.float32)
    report = hj.export(two_layers, params, x, output=str(tmp_path / "graph.svg"), overlay="range")
    assert report.nodes > 0 and (tmp_path / "graph.svg").read_text().startswith("<")
    analysis = hj.memory(two_layers, params, x, target="tpu-v5e")
    assert analysis.devices[0].peak_bytes > 0
    compared = hj.diff(two_layers, params, x, against="tpu-v5e")
    assert compared.compared > 0


def test_debug_runs_the_debuggers_app_with_its_options(monkeypatch):
    import hlodbg.ui_entry

    opened = []
    monkeypatch.setattr(hlodbg.ui_entry, "run_app", lambda app: opened.append(app) or 0)
    assert hj.debug(lambda v: jnp.log(v), jnp.asarray([1.0, -1.0]), break_on="nan", target="tpu-v5e") == 0
    app = opened[0]
    assert app.break_on == "nan" and app.options["backend"].describe().startswith("tpu")
    assert [a.tolist() for a in app.options["args"]] == [[1.0, -1.0]]


async def test_debug_opens_the_debugger_on_the_call(private_hlodbg_dirs):
    from hlodbg.jax.tools import debug_app

    rng = np.random.default_rng(2)
    program = hj.load(two_layers, make_params(rng), jnp.ones((2, 3), jnp.float32))
    app = debug_app(program)
    assert app.error is None
    async with app.run_test(size=(140, 44)) as pilot:
        await settle(app, pilot)
        assert app.screen.state.position == 0
        assert app.controller is not None


# -- the NaN trap -------------------------------------------------------------------------------

def squared_error(w, x, y):
    return jnp.mean((x @ w - y) ** 2)


def train(w, x, y, lr):
    """Gradient descent with a step too large: |w| grows by a constant factor a step until the
    squared error overflows."""
    def step(w, _):
        loss, grad = jax.value_and_grad(squared_error)(w, x, y)
        return w - lr * grad, loss

    return jax.lax.scan(step, w, None, length=60)


def diverging_problem():
    rng = np.random.default_rng(0)
    x = jnp.asarray(rng.normal(size=(8, 4)), jnp.float32)
    return jnp.zeros(4, jnp.float32), x, jnp.ones(8, jnp.float32), 3.0


def first_bad_step(w, x, y, lr) -> int:
    """The step at which the loop, run one jitted step at a time, first makes a non-finite value."""
    one_step = jax.jit(lambda w: (w - lr * jax.grad(squared_error)(w, x, y), squared_error(w, x, y)))
    for k in range(60):
        w, loss = one_step(w)
        if not (np.isfinite(np.asarray(w)).all() and np.isfinite(float(loss))):
            return k
    raise AssertionError("the loop never diverged")


def test_a_finite_call_returns_jits_outputs_and_writes_nothing(tmp_path):
    w, x, y, _ = diverging_problem()
    trapped = hj.trap_nans(train, capture_dir=tmp_path / "caps", interactive=False)
    w_end, losses = trapped(w, x, y, 0.01)
    expected = jax.jit(train)(w, x, y, 0.01)
    np.testing.assert_array_equal(np.asarray(w_end), np.asarray(expected[0]))
    np.testing.assert_array_equal(np.asarray(losses), np.asarray(expected[1]))
    assert not (tmp_path / "caps").exists()


def test_the_check_tells_finite_extremes_from_nan_and_inf(tmp_path):
    trapped = hj.trap_nans(lambda x, k: {"scaled": x * 3e38, "half": (x * k).astype(jnp.bfloat16), "count": k},
                           capture_dir=tmp_path, interactive=False)
    out = trapped(jnp.ones(4, jnp.float32), jnp.int32(2))  # 3e38 and 65504-sized values: finite
    assert float(out["scaled"][0]) == pytest.approx(3e38)
    for bad, kind in ((np.nan, "NaN"), (np.inf, "Inf"), (-np.inf, "Inf")):
        with pytest.raises(hj.NonFiniteError, match=rf"argument x holds {kind} at \[1\], so the call brought it in"):
            trapped(jnp.asarray([1, bad, 1, 1], jnp.float32), jnp.int32(2))


def test_the_trap_names_the_op_and_step_jits_run_diverged_at(tmp_path):
    w, x, y, lr = diverging_problem()
    known = first_bad_step(w, x, y, lr)
    trapped = hj.trap_nans(train, capture_dir=tmp_path / "caps", interactive=False)
    with pytest.raises(hj.NonFiniteError) as caught:
        trapped(w, x, y, lr)
    error = caught.value
    assert isinstance(error, hlodbg.HlodbgError)
    origin = error.origin
    assert origin is not None and origin.iterations == (known,)
    assert origin.jax_line.startswith("test_jax_api.py:") and origin.source == "captured"
    # Checked against the capture: the instance named holds the non-finite element, and no
    # captured value of any earlier iteration holds one.
    capture = Capture.open(error.capture)
    named = capture.array(origin.context, origin.site, 0, origin.device)
    assert named is not None and not np.isfinite(named[origin.element])
    loop_site = origin.context.split("[")[0]
    for row in capture:
        if row.context.startswith(loop_site + "["):
            iteration = int(row.context[len(loop_site) + 1:].split("]")[0])
            if iteration < known:
                assert np.isfinite(capture.load(row)).all(), row
    # The message names all of it: op, JAX line, iteration, capture.
    message = str(error)
    for part in (origin.op.name, origin.jax_line, f"iteration {known} of the while", str(error.capture)):
        assert part in message
    # The user's JAX is as it was (hlodbg's XLA runtime switched 64-bit types on for the capture),
    # so the call lowers again to the very program captured: `diff` compares the real run the
    # capture holds with the emulator.
    assert not jax.config.jax_enable_x64
    report = hj.diff(train, w, x, y, lr, capture=str(error.capture))
    assert report.compared > 0


def test_when_the_capture_makes_no_nan_the_error_says_so(tmp_path):
    w, x, y, _ = diverging_problem()
    trapped = hj.trap_nans(train, capture_dir=tmp_path, interactive=False)
    finite = trapped(w, x, y, 0.01)  # as though jit's run had returned a NaN its capture does not make
    error = trapped.explain((w, x, y, 0.01), {}, finite)
    assert error.origin is None and error.capture.is_dir()
    assert "but the capture of its compiled program did not make it again (the run made no NaN or Inf element)" in str(error)


@needs_8_devices
def test_the_trap_finds_the_device_that_made_the_nan_under_shard_map(tmp_path):
    from jax.sharding import Mesh, NamedSharding
    from jax.sharding import PartitionSpec as P

    shard_map = getattr(jax, "shard_map", None)
    if shard_map is None:
        from jax.experimental.shard_map import shard_map

    mesh = Mesh(np.array(jax.devices()[:8]), ("d",))

    @jax.jit
    @functools.partial(shard_map, mesh=mesh, in_specs=(P("d"),), out_specs=P())
    def log_sum(x):
        y = jnp.log(x)  # NaN where x < 0: on one device only
        return jax.lax.psum(jnp.sum(y), "d")  # then on every device

    values = np.ones(16, np.float32)
    values[7] = -1.0  # element 1 of device 3's shard
    x = jax.device_put(values, NamedSharding(mesh, P("d")))
    with pytest.raises(hj.NonFiniteError) as caught:
        hj.trap_nans(log_sum, capture_dir=tmp_path, interactive=False)(x)
    origin = caught.value.origin
    assert (origin.op.name, origin.device, origin.devices, origin.element) == ("stablehlo.log", 3, 8, (1,))
    capture = Capture.open(caught.value.capture)
    assert capture.grid == (1, 8)
    assert np.isnan(capture.array(origin.context, origin.site, 0, 3)[1])
    assert np.isfinite(capture.array(origin.context, origin.site, 0, 2)).all()
    assert "on device 3 of 8" in str(caught.value)


def test_the_trap_takes_static_arguments_for_a_plain_function(tmp_path):
    def normalise(x, mode):
        return x / x.sum() if mode == "sum" else x / jnp.abs(x).max()

    trapped = hj.trap_nans(normalise, static_argnames="mode", capture_dir=tmp_path, interactive=False)
    np.testing.assert_allclose(trapped(jnp.asarray([1.0, 3.0]), mode="sum"), [0.25, 0.75])
    with pytest.raises(hj.NonFiniteError) as caught:
        trapped(jnp.asarray([1.0, -1.0]), mode="sum")  # 1 / 0: Inf made by the divide
    assert caught.value.origin.op.name == "stablehlo.divide" and caught.value.origin.kind == "inf"
    report = hj.diff(caught.value.program, capture=str(caught.value.capture))
    assert report.compared > 0


def test_a_donating_function_is_refused_with_a_reason():
    with pytest.raises(hj.JaxCallError, match="donat"):
        hj.trap_nans(jax.jit(lambda x: x * 2, donate_argnums=0))


def test_interactive_the_trap_opens_the_debugger_at_the_op_then_raises(tmp_path, monkeypatch, private_hlodbg_dirs):
    import asyncio

    import hlodbg.ui_entry

    shown = {}

    async def look(app):
        async with app.run_test(size=(140, 44)) as pilot:
            await settle(app, pilot)
            state = app.screen.state
            shown.update(reason=state.stop_reason, op=state.shown_op, status=str(app.screen.query_one("#status").render()))

    def headless(app):  # the terminal the debugger would take, headless here
        asyncio.run(look(app))
        return 0

    monkeypatch.setattr(hlodbg.ui_entry, "run_app", headless)
    w, x, y, lr = diverging_problem()
    with pytest.raises(hj.NonFiniteError) as caught:
        hj.trap_nans(train, capture_dir=tmp_path / "caps", interactive=True)(w, x, y, lr)
    origin = caught.value.origin
    assert shown["reason"] == "breakpoint" and shown["op"] is not None
    assert (shown["op"].name, shown["op"].pos.line) == (origin.op.name, origin.op.pos.line)
    assert "capture" in shown["status"]


def test_bad_calls_say_what_is_wrong():
    with pytest.raises(hj.JaxCallError, match=r"expects a function .* not int"):
        hj.load(42, jnp.ones(2))
    with pytest.raises(hj.JaxCallError, match=r"JAX could not lower the call: .*dot_general"):
        hj.load(lambda a, b: a @ b, jnp.ones((2, 3)), jnp.ones((2, 3)))
    program = hj.load(lambda a: a + 1, jnp.ones(2))
    with pytest.raises(hj.JaxCallError, match="a Program carries its arguments already"):
        hj.run(program, jnp.ones(2))
    np.testing.assert_array_equal(hj.run(program)[0], [2, 2])
    with pytest.raises(hj.JaxCallError, match="diff compares two runs"):
        hj.diff(program)
