"""HLO text lowered and run: tuples, control flow, calls, fusions stepped into, async pairs,
collectives on a grid, shard_map's round-trip form, and programs JAX prints as HLO run by hlodbg
against jax.jit (test_hlo_lowering.py checks the IR the lowering builds)."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

import hlodbg

from .test_hlo_lowering import hlo, ops_named, run

# -- running: tuples, control flow, calls, collectives ------------------------------------------


ARGMAX = """
    HloModule argmax
    pick {
      v0 = f32[] parameter(0)
      i0 = s32[] parameter(1)
      v1 = f32[] parameter(2)
      i1 = s32[] parameter(3)
      gt = pred[] compare(v0, v1), direction=GT
      v = f32[] select(gt, v0, v1)
      i = s32[] select(gt, i0, i1)
      ROOT t = (f32[], s32[]) tuple(v, i)
    }
    ENTRY e {
      x = f32[6] parameter(0)
      iota = s32[6] iota(), iota_dimension=0
      lo = f32[] constant(-inf)
      zero = s32[] constant(0)
      r = (f32[], s32[]) reduce(x, iota, lo, zero), dimensions={0}, to_apply=pick
      ROOT idx = s32[] get-tuple-element(r), index=1
    }"""


def test_two_operand_reduce_runs_with_its_tuple_region():
    x = np.array([3, 9, -1, 9.5, 2, 0], np.float32)
    (idx,) = run(ARGMAX, x)
    assert int(idx) == 3


WHILE = """
    HloModule loop
    cond {
      s = (s32[], f32[3]) parameter(0)
      i = s32[] get-tuple-element(s), index=0
      n = s32[] constant(4)
      ROOT lt = pred[] compare(i, n), direction=LT
    }
    body {
      s = (s32[], f32[3]) parameter(0)
      i = s32[] get-tuple-element(s), index=0
      v = f32[3] get-tuple-element(s), index=1
      one = s32[] constant(1)
      i2 = s32[] add(i, one)
      v2 = f32[3] add(v, v)
      ROOT t = (s32[], f32[3]) tuple(i2, v2)
    }
    double {
      p = f32[3] parameter(0)
      ROOT d = f32[3] multiply(p, p)
    }
    ENTRY e {
      x = f32[3] parameter(0)
      z = s32[] constant(0)
      init = (s32[], f32[3]) tuple(z, x)
      w = (s32[], f32[3]) while(init), condition=cond, body=body
      v = f32[3] get-tuple-element(w), index=1
      sq = f32[3] call(v), to_apply=double
      ROOT out = (f32[3], s32[]) tuple(sq, z)
    }"""


def test_while_with_tuple_state_and_a_call():
    x = np.array([1, 2, 3], np.float32)
    got = run(WHILE, x)
    np.testing.assert_allclose(got[0], (x * 16) ** 2)
    assert int(got[1]) == 0
    module = hlo(WHILE)
    (loop,) = ops_named(module, "stablehlo.while")
    assert len(loop.operands) == 1 and [str(n) for n in loop.attr("hlo.computations")] == ["cond", "body"]
    assert set(module.functions) == {"e", "double"}
    assert module.functions["double"].visibility == "private"


def test_legacy_vector_index_of_dynamic_slice_runs():
    text = """
        ENTRY e {
          a = f32[4,4] parameter(0)
          i = s32[2] parameter(1)
          ROOT s = f32[2,2] dynamic-slice(a, i), dynamic_slice_sizes={2,2}
        }"""
    a = np.arange(16, dtype=np.float32).reshape(4, 4)
    (got,) = run(text, a, np.array([1, 2], np.int32))
    np.testing.assert_array_equal(got, a[1:3, 2:4])


def test_check_runs_a_self_checking_hlo_file(tmp_path):
    from hlodbg.engine.run.checking import check_path

    path = tmp_path / "selfcheck.hlo"
    path.write_text(textwrap.dedent("""
        HloModule selfcheck
        ENTRY e {
          a = f32[2] constant({1, 2})
          b = f32[2] add(a, a)
          want = f32[2] constant({2, 4})
          ROOT c = () custom-call(b, want), custom_call_target="check.expect_eq", custom_call_has_side_effect=true
        }"""))
    (outcome,) = check_path(str(path))
    assert outcome.passed, outcome.error
    path.write_text(path.read_text().replace("{2, 4}", "{2, 5}"))
    (outcome,) = check_path(str(path))
    assert not outcome.passed


def test_tuple_form_all_to_all_exchanges_one_operand_per_process():
    # operand j of process p is a + p + 10 j; result j of process p came from process j: a + j + 10 p
    text = """
        HloModule m, replica_count=2
        ENTRY e {
          a = f32[2] parameter(0)
          r = u32[] replica-id()
          rf = f32[] convert(r)
          rb = f32[2] broadcast(rf), dimensions={}
          x0 = f32[2] add(a, rb)
          ten = f32[] constant(10)
          tb = f32[2] broadcast(ten), dimensions={}
          x1 = f32[2] add(x0, tb)
          t = (f32[2], f32[2]) all-to-all(x0, x1), replica_groups={{0,1}}
          g0 = f32[2] get-tuple-element(t), index=0
          g1 = f32[2] get-tuple-element(t), index=1
          ROOT out = (f32[2], f32[2]) tuple(g0, g1)
        }"""
    a = np.array([1, 2], np.float32)
    results = run(text, a)
    by_replica = {p.replica_id: r for p, r in results.items()}
    for p in (0, 1):
        for j in (0, 1):
            np.testing.assert_array_equal(by_replica[p][j], a + j + 10 * p)
    (exchange,) = ops_named(hlo(text), "stablehlo.all_to_all")
    assert "hlo.tuple_form" in exchange.attributes and int(exchange.attr("split_count")) == 2


SHARD_MAP = r"""
    HloModule jit_f, frontend_attributes={xla.sdy.meshes={mesh = #sdy.mesh<["i"=2]>}}

    add {
      x = f32[] parameter(0)
      y = f32[] parameter(1)
      ROOT s = f32[] add(x, y)
    }

    xla.sdy.manual_computation_body.1 {
      local = f32[2]{0} parameter(0)
      total = f32[2]{0} all-reduce(local), channel_id=1, replica_groups={{0,1}}, use_global_device_ids=true, to_apply=add
      ROOT out = (f32[2]{0}) tuple(total)
    }

    ENTRY main.1 {
      x = f32[4]{0} parameter(0)
      enter = (f32[2]{0}) custom-call(x), custom_call_target="xla.sdy.GlobalToLocalShape", custom_call_has_side_effect=true, frontend_attributes={xla.sdy.in_shardings="#sdy.sharding_per_value<[<@mesh, [{\"i\"}]>]>",xla.sdy.manual_axes="#sdy<manual_axes{\"i\"}>"}
      shard = f32[2]{0} get-tuple-element(enter), index=0
      body = (f32[2]{0}) call(shard), to_apply=xla.sdy.manual_computation_body.1
      piece = f32[2]{0} get-tuple-element(body), index=0
      exit = (f32[4]{0}) custom-call(piece), custom_call_target="xla.sdy.LocalToGlobalShape", custom_call_has_side_effect=true, frontend_attributes={xla.sdy.manual_axes="#sdy<manual_axes{\"i\"}>",xla.sdy.out_shardings="#sdy.sharding_per_value<[<@mesh, [{\"i\"}]>]>"}
      ROOT y = f32[4]{0} get-tuple-element(exit), index=0
    }"""


def test_shard_map_round_trip_form_becomes_a_manual_computation():
    module = hlo(SHARD_MAP)
    (manual,) = ops_named(module, "sdy.manual_computation")
    assert [str(n) for n in manual.attr("hlo.computations")] == ["xla.sdy.manual_computation_body.1"]
    assert manual.regions[0].block.terminator.name == "sdy.return"
    assert [op.name for op in module.operations][0] == "sdy.mesh" and module.num_partitions == 2
    assert set(module.functions) == {"main.1"}  # the body is the op's region, not a function too
    x = np.array([1, 2, 3, 4], np.float32)
    (y,) = hlodbg.load(textwrap.dedent(SHARD_MAP)).run(x)
    np.testing.assert_array_equal(y, [4, 6, 4, 6])  # each device's half summed over the two devices


def test_sort_comparator_with_a_scalar_bitcast():
    # XLA:CPU compares float keys through their bits (s32[] bitcast(f32[])) after optimization
    text = """
        cmp {
          a = f32[] parameter(0)
          b = f32[] parameter(1)
          ai = s32[] bitcast(a)
          bi = s32[] bitcast(b)
          ROOT lt = pred[] compare(ai, bi), direction=LT
        }
        ENTRY e {
          x = f32[6] parameter(0)
          ROOT s = f32[6] sort(x), dimensions={0}, to_apply=cmp
        }"""
    x = np.array([3, 0.5, 9, 1, 2.5, 7], np.float32)
    (got,) = run(text, x)
    np.testing.assert_array_equal(got, np.sort(x))


CONDITIONALS = """
    neg {
      p = f32[2] parameter(0)
      ROOT n = f32[2] negate(p)
    }
    twice {
      p = f32[2] parameter(0)
      ROOT t = f32[2] add(p, p)
    }
    plus_one {
      p = (f32[2], f32[]) parameter(0)
      v = f32[2] get-tuple-element(p), index=0
      s = f32[] get-tuple-element(p), index=1
      b = f32[2] broadcast(s), dimensions={}
      ROOT r = f32[2] add(v, b)
    }
    ENTRY e {
      b = pred[] parameter(0)
      i = s32[] parameter(1)
      x = f32[2] parameter(2)
      one = f32[] constant(1)
      packed = (f32[2], f32[]) tuple(x, one)
      by_pred = f32[2] conditional(b, x, x), true_computation=neg, false_computation=twice
      by_index = f32[2] conditional(i, x, x, packed), branch_computations={neg, twice, plus_one}
      ROOT out = (f32[2], f32[2]) tuple(by_pred, by_index)
    }"""


@pytest.mark.parametrize("pred, index, want_pred, want_index", [
    (True, 0, "neg", "neg"), (False, 1, "twice", "twice"), (True, 2, "neg", "plus_one"),
    (False, 7, "twice", "plus_one"), (False, -1, "twice", "plus_one"),  # out of range: the last branch
])
def test_conditional_by_pred_and_by_index_runs_each_branch_on_its_operand(pred, index, want_pred, want_index):
    x = np.array([1.5, -2], np.float32)
    expected = {"neg": -x, "twice": x + x, "plus_one": x + 1}
    got = run(CONDITIONALS, np.bool_(pred), np.int32(index), x)
    np.testing.assert_array_equal(got[0], expected[want_pred])
    np.testing.assert_array_equal(got[1], expected[want_index])


FUSED = """
    HloModule fused_module, is_scheduled=true
    fused_computation {
      p0 = f32[4]{0} parameter(0)
      p1 = f32[4]{0} parameter(1)
      m = f32[4]{0} multiply(p0, p1)
      ROOT t = f32[4]{0} tanh(m)
    }
    ENTRY main.1 {
      a = f32[4]{0} parameter(0)
      f = f32[4]{0} fusion(a, a), kind=kLoop, calls=fused_computation
      ROOT n = f32[4]{0} negate(f)
    }"""


def test_debugger_steps_into_a_fusion():
    program = hlodbg.load(textwrap.dedent(FUSED))
    a = np.array([0.1, 0.2, -0.5, 1], np.float32)
    np.testing.assert_allclose(program.run(a)[0], -np.tanh(a * a), rtol=1e-6)
    session = program.session([a], persist=False)
    assert session.op.name == "hlo.fusion"
    session.step_in()
    assert session.op.name == "stablehlo.multiply" and session.op.function.sym_name == "fused_computation"
    assert len(session.stack) == 2  # main.1, then the fusion's frame
    session.step()
    session.step()
    session.step()  # the return, then back in main.1
    while session.op is not None and session.op.name != "stablehlo.negate":
        session.step()
    assert session.op.name == "stablehlo.negate"
    np.testing.assert_allclose(session.value("f"), np.tanh(a * a), rtol=1e-6)


def test_async_wrapper_and_copy_pairs_run():
    text = """
        negate_async {
          p = f32[4] parameter(0)
          ROOT n = f32[4] negate(p)
        }
        ENTRY e {
          a = f32[4]{0} parameter(0)
          s = ((f32[4]), f32[4], s32[]) async-start(a), calls=negate_async
          u = ((f32[4]), f32[4], s32[]) async-update(s)
          d = f32[4] async-done(u)
          cs = (f32[4]{0}, f32[4]{0}, u32[]) copy-start(d), cross_program_prefetch_index=0
          cd = f32[4]{0} copy-done(cs)
          ROOT r = f32[4]{0} copy(cd)
        }"""
    a = np.array([1, -2, 3, 0.5], np.float32)
    (got,) = run(text, a)
    np.testing.assert_array_equal(got, -a)
    module = hlo(text)
    (start,) = ops_named(module, "hlo.async_start")
    assert str(start.attr("callee")) == "@negate_async" and "negate_async" in module.functions
    (copy_start,) = ops_named(module, "hlo.copy_start")
    assert int(copy_start.attr("cross_program_prefetch_index")) == 0


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint8])
def test_topk_smallest_by_order_reversal(dtype):
    element = {np.float32: "f32", np.int32: "s32", np.uint8: "u8"}[dtype]
    text = f"""
        ENTRY e {{
          a = {element}[6] parameter(0)
          ROOT t = ({element}[3], s32[3]) topk(a), k=3, largest=false
        }}"""
    a = np.array([5, 0, 250, 3, 7, 1] if dtype is np.uint8 else [5, -128, 2, 3, -7, 1], dtype)
    values, indices = run(text, a)
    order = np.argsort(a, kind="stable")[:3]
    np.testing.assert_array_equal(values, a[order])
    np.testing.assert_array_equal(indices, order)


# -- JAX: as_text(dialect="hlo") runs like jax.jit ---------------------------------------------------


def _jax_cases():
    import jax
    import jax.numpy as jnp

    rng = np.random.default_rng(0)
    m = rng.standard_normal((4, 4)).astype(np.float32)
    v = rng.standard_normal(8).astype(np.float32)
    return {
        "mlp": (lambda x, w: jax.nn.relu(x @ w).sum(0), (m, m)),
        "fori_loop": (lambda x: jax.lax.fori_loop(0, 3, lambda i, c: c * 2 + i, x), (v,)),
        "sort_argsort": (lambda x: (jnp.sort(x), jnp.argsort(x)), (v,)),
        "top_k": (lambda x: jax.lax.top_k(x, 3), (v,)),
        "gather_scatter": (lambda x, i: x.at[i].add(x[i]), (v, np.array([0, 3, 3], np.int32))),
        "conv": (lambda x, w: jax.lax.conv_general_dilated(x, w, (1, 1), "SAME"),
                 (rng.standard_normal((1, 2, 5, 5)).astype(np.float32),
                  rng.standard_normal((3, 2, 3, 3)).astype(np.float32))),
        "max_pool": (lambda x: jax.lax.reduce_window(x, -jnp.inf, jax.lax.max, (2, 2), (1, 1), "VALID"), (m,)),
        "fft": (lambda x: jnp.fft.fft(x), (v,)),
        "pad_slice_dynamic": (lambda x, i: jax.lax.dynamic_update_slice(jnp.pad(x, (1, 2))[1:7:2], jnp.ones(1), (i,)),
                              (v, np.int32(1))),
        "erf_cumsum": (lambda x: jnp.cumsum(jax.scipy.special.erf(x)), (v,)),
        "integer_shifts": (lambda a, b: (a << 3, a >> 1, a // b, a % b),
                           (np.array([1, -7, 100], np.int32), np.array([3, 2, -9], np.int32))),
        "argmax": (lambda x: jnp.argmax(x), (v,)),
    }


@pytest.mark.parametrize("case", sorted(
    ["mlp", "fori_loop", "sort_argsort", "top_k", "gather_scatter", "conv", "max_pool", "fft",
     "pad_slice_dynamic", "erf_cumsum", "integer_shifts", "argmax"]))
def test_jax_hlo_text_runs_like_jax(case):
    jax = pytest.importorskip("jax")
    f, args = _jax_cases()[case]
    # Other test modules switch 64-bit mode on for the whole session; these programs are 32-bit.
    with jax.enable_x64(False):
        text = jax.jit(f).lower(*args).as_text(dialect="hlo")
        want = [np.asarray(w) for w in jax.tree_util.tree_leaves(jax.jit(f)(*args))]
    got = hlodbg.load(text).run(*args)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), w, rtol=2e-5, atol=2e-5)


def test_dynamic_reshape_takes_its_sizes_as_one_shape_vector():
    text = """
        ENTRY e {
          a = f32[6] parameter(0)
          two = s32[] constant(2)
          three = s32[] constant(3)
          ROOT r = f32[2,3] dynamic-reshape(a, two, three)
        }"""
    a = np.arange(6, dtype=np.float32)
    (got,) = run(text, a)
    np.testing.assert_array_equal(got, a.reshape(2, 3))
    (op,) = ops_named(hlo(text), "stablehlo.dynamic_reshape")
    assert [str(v.type) for v in op.operands] == ["tensor<6xf32>", "tensor<2xi32>"]
