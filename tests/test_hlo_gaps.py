"""The less common corners of XLA's HLO text: the async syntax sugar (`exponential-start`), execution
threads, instructions written without a shape, and named-mesh shardings placed on the grid."""
from __future__ import annotations

import importlib.util
import re
import textwrap

import numpy as np
import pytest

from hlodbg.engine.ir.core import structural_key
from hlodbg.engine.ir.errors import HlodbgError
from hlodbg.engine.syntax.hlo.printer import print_module

from .test_hlo_lowering import hlo, ops_named, run


def round_trip(text: str) -> str:
    """The module printed, read back and printed again: the same text and the same IR."""
    module = hlo(text)
    printed = print_module(module)
    again = hlo(printed)
    assert structural_key(again) == structural_key(module), printed
    assert print_module(again) == printed
    return printed


# -- async syntax sugar ------------------------------------------------------------------------

SUGAR = """
    HloModule sugar, is_scheduled=true

    ENTRY %main (a: f32[4], i: s32[]) -> (f32[4], f32[2]) {
      %a = f32[4]{0} parameter(0)
      %i = s32[] parameter(1)
      %s = ((f32[4]{0}), f32[4]{0}, s32[]) exponential-start(%a), metadata={op_name="exp"}
      %u = ((f32[4]{0}), f32[4]{0}, s32[]) exponential-update(%s)
      %d = f32[4]{0} exponential-done(%u)
      %ds = ((f32[4]{0}, s32[]), f32[2]{0}, s32[]) dynamic-slice-start(%a, %i), dynamic_slice_sizes={2}
      %dd = f32[2]{0} dynamic-slice-done(%ds)
      ROOT %t = (f32[4]{0}, f32[2]{0}) tuple(%d, %dd)
    }
"""


def test_sugared_async_ops_run_their_wrapped_instruction():
    a = np.array([0, 1, -1, 2], np.float32)
    got_exp, got_slice = run(SUGAR, a, np.int32(1))
    np.testing.assert_allclose(got_exp, np.exp(a), rtol=1e-6)
    np.testing.assert_array_equal(got_slice, a[1:3])


def test_sugared_start_becomes_an_async_start_of_a_built_computation():
    module = hlo(SUGAR)
    starts = ops_named(module, "hlo.async_start")
    assert [str(s.attr("hlo.async_sugar")) for s in starts] == ["exponential", "dynamic-slice"]
    wrapped = module.functions[starts[0].attr("callee").name]
    assert "hlo.async_wrapped" in wrapped.attributes
    assert [op.name for op in wrapped.body.operations][:-1] == ["stablehlo.exponential"]
    (dynamic_slice,) = ops_named(module.functions[starts[1].attr("callee").name], "stablehlo.dynamic_slice")
    assert list(dynamic_slice.attr("slice_sizes")) == [2]
    # The generic attributes stay on the start.
    assert "hlo.metadata" in starts[0].attributes and "hlo.metadata" not in wrapped.body.operations[0].attributes
    assert [str(d.attr("hlo.async_sugar")) for d in ops_named(module, "hlo.async_done")] == ["exponential",
                                                                                                "dynamic-slice"]


def test_sugared_async_ops_print_as_written():
    printed = round_trip(SUGAR)
    assert "exponential-start(%a), metadata={op_name=\"exp\"}" in printed
    assert "dynamic-slice-start(%a, %i), dynamic_slice_sizes={2}" in printed
    assert "exponential-done(%u)" in printed and "async_wrapped" not in printed and "calls=" not in printed


def test_sugared_collective_start_keeps_its_computation_reference():
    text = """
        HloModule m, replica_count=2
        sum {
          x = f32[] parameter(0)
          y = f32[] parameter(1)
          ROOT s = f32[] add(x, y)
        }
        ENTRY e {
          a = f32[4] parameter(0)
          rs = ((f32[4]), f32[2], s32[]) reduce-scatter-start(a), replica_groups={{0,1}}, dimensions={0}, to_apply=sum
          ROOT rd = f32[2] reduce-scatter-done(rs)
        }"""
    a = np.array([1, 2, 3, 4], np.float32)
    results = run(text, a)
    by_replica = {p.replica_id: r for p, r in results.items()}
    np.testing.assert_array_equal(by_replica[0][0], 2 * a[:2])
    np.testing.assert_array_equal(by_replica[1][0], 2 * a[2:])
    assert "reduce-scatter-start(a), replica_groups={{0,1}}, dimensions={0}, to_apply=sum" in print_module(
        hlo(text), short=True)


def test_sugared_start_with_calls_names_its_wrapped_computation():
    text = """
        HloModule m
        wrapped_negate {
          p = f32[4] parameter(0)
          ROOT n = f32[4] negate(p)
        }
        ENTRY e {
          a = f32[4] parameter(0)
          s = ((f32[4]), f32[4], s32[]) negate-start(a), calls=wrapped_negate
          ROOT d = f32[4] negate-done(s)
        }"""
    a = np.array([1, -2, 3, 0], np.float32)
    np.testing.assert_array_equal(run(text, a)[0], -a)
    printed = print_module(hlo(text), short=True)
    assert "negate-start(a), calls=wrapped_negate" in printed and "wrapped_negate {" in printed


def test_real_start_opcodes_are_not_sugar():
    module = hlo("""
        HloModule m
        ENTRY e {
          a = f32[4] parameter(0)
          cs = (f32[4], f32[4], u32[]) copy-start(a)
          ROOT cd = f32[4] copy-done(cs)
        }""")
    assert ops_named(module, "hlo.copy_start") and not ops_named(module, "hlo.async_start")


@pytest.mark.parametrize("body, message", [
    ("s = ((f32[4]), f32[4], s32[]) exponential-start(a)\n  ROOT d = f32[4] negate-done(s)",
     "wraps a exponential, not a negate"),
    ("ROOT d = f32[4] exponential-done(a)", "is not an async-start or async-update"),
    ("ROOT s = (f32[4], s32[]) exponential-start(a)", "an async start's shape is ((operands...)"),
    ("s = ((f32[4]), f32[4], s32[]) exponential-start(a), calls=neg\n  ROOT d = f32[4] exponential-done(s)",
     "has a negate root, not a exponential"),
])
def test_sugar_errors_are_located(body, message):
    text = "neg {\n  p = f32[4] parameter(0)\n  ROOT n = f32[4] negate(p)\n}\nENTRY e {\n  a = f32[4] parameter(0)\n  " + body + "\n}\n"
    with pytest.raises(HlodbgError, match=r"test\.hlo:\d+:\d+") as info:
        hlo(text)
    assert message in str(info.value)


# -- execution threads ---------------------------------------------------------------------------


def test_execution_threads_and_async_group_ids_are_kept_and_printed_back():
    text = """\
        HloModule m

        %wrapped (p: f32[4]) -> f32[4] {
          %p = f32[4]{0} parameter(0)
          ROOT %e = f32[4]{0} exponential(%p)
        }, execution_thread="parallel"

        ENTRY %main (a: f32[4]) -> f32[4] {
          %a = f32[4]{0} parameter(0)
          %s = ((f32[4]{0}), f32[4]{0}, s32[]) async-start(%a), async_execution_thread="parallel", calls=%wrapped, async_group_id=3
          %u = ((f32[4]{0}), f32[4]{0}, s32[]) async-update(%s), async_group_id=3
          ROOT %d = f32[4]{0} async-done(%u), async_group_id=3
        }
        """
    module = hlo(text)
    (start,) = ops_named(module, "hlo.async_start")
    assert str(start.attr("execution_thread")) == "parallel"
    assert module.functions["wrapped"].attributes["hlo.computation_attributes"] == {"execution_thread": '"parallel"'}
    assert round_trip(text) == textwrap.dedent(text) + "\n"


# -- instructions written without a shape -----------------------------------------------------

SHAPELESS = """
    HloModule m

    sum {
      x = f32[] parameter(0)
      y = f32[] parameter(1)
      ROOT s = add(x, y)
    }

    double {
      v = f32[2,3] parameter(0)
      ROOT d = add(v, v)
    }

    ENTRY e {
      a = f32[2,3] parameter(0)
      b = f32[3,4] parameter(1)
      n = negate(a)
      c = compare(a, n), direction=GT
      s = select(c, a, n)
      t = transpose(s), dimensions={1,0}
      dt = dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
      zero = f32[] constant(0)
      r = reduce(dt, zero), dimensions={1}, to_apply=sum
      cat = concatenate(a, s), dimensions={0}
      p = pad(a, zero), padding=1_1x0_2_1
      cl = call(a), to_apply=double
      tp = tuple(r, t, cat, p, cl)
      g = get-tuple-element(tp), index=0
      bz = broadcast(zero)
      rw = reduce-window(a, zero), window={size=2x2 stride=1x1}, to_apply=sum
      fin = is-finite(a)
      id = u32[] replica-id()
      ROOT out = tuple(g, t, cat, p, cl, bz, rw, fin, add(g, g))
    }
"""


def _result_types(module) -> dict[str, object]:
    return {r.name: r.type for op in module.walk() for r in op.results if r.name and "#" not in r.name}


@pytest.mark.skipif(importlib.util.find_spec("jax") is None, reason="XLA's parser is the oracle")
def test_shapes_left_out_are_inferred_as_xla_infers_them():
    from jaxlib import _hlo

    xla_text = _hlo.hlo_module_from_text(textwrap.dedent(SHAPELESS)).to_string(_hlo.HloPrintOptions.short_parsable())
    ours, xla = _result_types(hlo(SHAPELESS)), _result_types(hlo(xla_text))
    written = [n for n in ours if n in xla]
    assert len(written) >= 15
    assert {n: ours[n] for n in written} == {n: xla[n] for n in written}


def test_shapeless_module_runs_and_prints_its_shapes():
    a = np.arange(6, dtype=np.float32).reshape(2, 3) - 2
    b = np.ones((3, 4), np.float32)
    results = run(SHAPELESS, a, b)
    np.testing.assert_allclose(results[0], (a @ b).sum(axis=1))
    np.testing.assert_array_equal(results[4], 2 * a)
    printed = print_module(hlo(SHAPELESS), short=True)
    assert "r = f32[2] reduce(dt, zero)" in printed and "p = f32[4,7] pad(a, zero)" in printed


@pytest.mark.parametrize("line, message", [
    ("ROOT c = constant(1)", "constant 'c' has no shape, and XLA cannot infer it either"),
    ("ROOT r = reshape(a)", "reshape 'r' has no shape, and XLA cannot infer it either"),
    ("ROOT f = fft(a), fft_type=FFT, fft_length={4}", "hlodbg does not infer it (XLA does)"),
    ("ROOT g = get-tuple-element(a), index=0", "cannot infer it: index 0 is not an element of"),
])
def test_shapes_that_cannot_be_inferred_are_located_errors(line, message):
    text = f"ENTRY e {{\n  a = f32[4] parameter(0)\n  {line}\n}}\n"
    with pytest.raises(HlodbgError, match=r"test\.hlo:3:\d+") as info:
        hlo(text)
    assert message in str(info.value)


def test_a_parameter_needs_its_shape():
    with pytest.raises(HlodbgError, match=r"test\.hlo:2:\d+: error: parameter 'a' has no shape"):
        hlo("ENTRY e {\n  a = parameter(0)\n  ROOT n = negate(a)\n}\n")


def test_shape_of_an_instruction_over_nested_parameters_is_inferred():
    (got,) = run("ENTRY e {\n  ROOT r = add(f32[2] parameter(0), f32[2] parameter(1))\n}\n",
                 np.float32([1, 2]), np.float32([3, 4]))
    np.testing.assert_array_equal(got, [4, 6])


# -- named-mesh shardings ------------------------------------------------------------------------

# Each named sharding and the device-list one it stands for. Mesh devices are row-major over the
# axes (x major): device = 2x + y on a 2x2 mesh; a sub-axis 'x':(pre)size of x=4 is the factor of
# size `size` after the leading `pre`, so x:(1)2 is x's major half and x:(2)2 its minor one.
NAMED = [
    ("{mesh['x'=2,'y'=2], [{'x'}, {'y'}]}", "{devices=[2,2]0,1,2,3}"),
    # dim 0 over y: tile i = devices with y = i; the manual subgroup dim runs over x.
    ("{mesh['x'=2,'y'=2], [{'y'}, {}], manual={'x'}}", "{devices=[2,1,2]0,2,1,3 last_tile_dims={manual}}"),
    ("{mesh[x=2,y=2], [{y}, {}], replicated={x}}", "{devices=[2,1,2]0,2,1,3 last_tile_dim_replicate}"),
    # An axis no dimension uses is replicated too, named or not.
    ("{mesh['x'=2,'y'=2], [{'x'}]}", "{devices=[2,2]0,1,2,3 last_tile_dim_replicate}"),
    ("{mesh['x'=2,'y'=2], [{'y','x'}]}", "{devices=[4]0,2,1,3}"),
    ("{mesh['x'=4], [{'x':(2)2}, {'x':(1)2}]}", "{devices=[2,2]0,2,1,3}"),
    ("{mesh['x'=4], device_ids=(3,2,1,0), [{'x'}]}", "{devices=[4]3,2,1,0}"),
    ("{mesh['x'=2,'y'=2], [{'x', ?}, {?}], metadata={op_name=\"a\"}}", "{devices=[2,1,2]0,1,2,3 last_tile_dim_replicate}"),
    ("{maximal_mesh[device_id=3]}", "{maximal device=3}"),
    ("{mesh['x'=2], replicated}", "{replicated}"),
    ("{mesh[x=2], manual, metadata={op_name=\"a\"}}", "{manual}"),
    ("{{mesh['x'=2], [{'x'}]}, {maximal_mesh[device_id=1]}}", "{{devices=[2]0,1}, {maximal device=1}}"),
]


def _placement(sharding):
    assignment = None if sharding.tile_assignment is None else sharding.tile_assignment.tolist()
    return (sharding.kind, assignment, sharding.last_tile_dims, sharding.device,
            tuple(_placement(e) for e in sharding.elements))


@pytest.mark.parametrize("named, devices", NAMED)
def test_named_mesh_sharding_places_like_its_device_list(named, devices):
    from hlodbg.engine.ir.sharding import parse_hlo_sharding

    assert _placement(parse_hlo_sharding(named)) == _placement(parse_hlo_sharding(devices))


def test_named_sharding_says_what_it_cannot_place():
    from hlodbg.engine.ir.sharding import ShardingSyntaxError, parse_hlo_sharding

    with pytest.raises(ShardingSyntaxError, match="axis 'x' twice"):
        parse_hlo_sharding("{mesh['x'=2], [{'x'}, {'x'}]}")


def test_devices_pane_reads_a_named_sharding():
    from hlodbg.layouts.op_facts import device_shard

    module = hlo("""
        HloModule m, num_partitions=4
        ENTRY e {
          a = f32[4,6] parameter(0)
          ROOT s = f32[4,6] custom-call(a), custom_call_target="Sharding", sharding={mesh['x'=2,'y'=2], [{'y'}, {'x'}]}
        }""")
    (op,) = ops_named(module, "stablehlo.custom_call")
    # Device 2x + y holds rows by y and columns by x.
    assert [device_shard(op, d) for d in range(4)] == ["[0:2, 0:3]", "[2:4, 0:3]", "[0:2, 3:6]", "[2:4, 3:6]"]


def test_spmd_custom_calls_place_tiles_by_a_named_sharding():
    from hlodbg.engine.run.spmd import run_global

    text = """
        HloModule m, num_partitions=4
        body {
          t = f32[2,3] parameter(0)
          p = u32[] partition-id()
          f = f32[] convert(p)
          one = f32[] constant(1)
          g = f32[] add(f, one)
          b = f32[2,3] broadcast(g), dimensions={}
          ROOT r = f32[2,3] multiply(t, b)
        }
        ENTRY e {
          a = f32[4,6] parameter(0)
          s = f32[4,6] custom-call(a), custom_call_target="Sharding", sharding={mesh['x'=2,'y'=2], [{'y'}, {'x'}]}
          m = f32[2,3] custom-call(s), custom_call_target="SPMDFullToShardShape", sharding={manual}
          c = f32[2,3] call(m), to_apply=body
          cm = f32[2,3] custom-call(c), custom_call_target="Sharding", sharding={manual}
          ROOT out = f32[4,6] custom-call(cm), custom_call_target="SPMDShardToFullShape", sharding={mesh['x'=2,'y'=2], [{'y'}, {'x'}]}
        }"""
    a = np.arange(24, dtype=np.float32).reshape(4, 6)
    (result,) = run_global(hlo(text), [a])
    # Tile (i, j) lives on device 2j + i: [[0, 2], [1, 3]], scaled by device + 1.
    factor = np.repeat(np.repeat(np.array([[1, 3], [2, 4]], np.float32), 2, axis=0), 3, axis=1)
    np.testing.assert_array_equal(result, a * factor)


# -- XLA HEAD's newest opcodes ----------------------------------------------------------------------


def test_shuffle_rotates_each_dimension_left_by_its_shift():
    text = """
        HloModule m
        ENTRY e {
          p = f32[3,4] parameter(0)
          ROOT s = f32[3,4] shuffle(p), dimensions={1,0}, mode=rotate, shifts={1,-1}
        }"""
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    (got,) = run(text, a)
    # result[i, j] = a[(i - 1) mod 3, (j + 1) mod 4]
    np.testing.assert_array_equal(got, np.roll(np.roll(a, -1, axis=1), 1, axis=0))
    assert "shuffle(p), dimensions={1,0}, mode=rotate, shifts={1,-1}" in print_module(hlo(text), short=True)


@pytest.mark.parametrize("line, message", [
    ("ROOT s = f32[4] shuffle(p), dimensions={0}, mode=permute, shifts={1}", "expected a shuffle mode hlodbg runs"),
    ("ROOT s = f32[4] scaled-dot(p, p, p, p), lhs_contracting_dims={0}, rhs_contracting_dims={0}",
     "HLO opcode 'scaled-dot' is not supported by hlodbg"),
    ("ROOT s = b(f32[4]) copy(p)", "buffer shapes 'b(...)'"),
])
def test_newest_forms_hlodbg_does_not_run_are_located_errors(line, message):
    with pytest.raises(HlodbgError, match=r"test\.hlo:3:\d+") as info:
        hlo(f"ENTRY e {{\n  p = f32[4] parameter(0)\n  {line}\n}}\n")
    assert message in str(info.value)


def test_shuffle_with_a_shift_per_dimension_is_checked():
    from hlodbg.engine.verify import verify_all

    module = hlo("ENTRY e {\n  p = f32[4] parameter(0)\n  ROOT s = f32[4] shuffle(p), dimensions={0}, mode=rotate, "
                 "shifts={1,2}\n}\n")
    assert any("one shift per shuffled dimension" in str(e) for e in verify_all(module))


def test_collective_reduce_delivers_the_reduction_to_each_groups_root():
    text = """
        HloModule m, replica_count=2
        sum {
          x = f32[] parameter(0)
          y = f32[] parameter(1)
          ROOT s = f32[] add(x, y)
        }
        ENTRY e {
          a = f32[2] parameter(0)
          r = u32[] replica-id()
          rf = f32[] convert(r)
          rb = f32[2] broadcast(rf), dimensions={}
          x = f32[2] add(a, rb)
          ROOT c = f32[2] collective-reduce(x), replica_groups={{0,1}}, to_apply=sum
        }"""
    a = np.float32([1, 2])
    by_replica = {p.replica_id: r for p, r in run(text, a).items()}
    np.testing.assert_array_equal(by_replica[0][0], 2 * a + 1)
    np.testing.assert_array_equal(by_replica[1][0], [0, 0])


def test_sugar_and_shuffle_convert_to_stablehlo_only():
    import hlodbg
    from hlodbg.engine.syntax import MLIR
    from hlodbg.engine.syntax.hlo.to_stablehlo import convert_to_stablehlo

    text = SUGAR.replace("ROOT %t = (f32[4]{0}, f32[2]{0}) tuple(%d, %dd)",
                         "%r = f32[4]{0} shuffle(%d), dimensions={0}, mode=rotate, shifts={-3}\n"
                         "      ROOT %t = (f32[4]{0}, f32[2]{0}) tuple(%r, %dd)")
    converted, notes = convert_to_stablehlo(hlo(text))
    mlir_text = MLIR.print(converted)
    assert not notes and not re.search(r"\bhlo\.", mlir_text)
    a = np.array([0, 1, -1, 2], np.float32)
    got = hlodbg.load(mlir_text).run(a, np.int32(1))
    np.testing.assert_allclose(got[0], np.roll(np.exp(a), 3), rtol=1e-6)
    np.testing.assert_array_equal(got[1], a[1:3])


WRAPPED_CALLS = """\
HloModule m

%fused (p: f32[4]) -> f32[4] {
  %p = f32[4]{0} parameter(0)
  ROOT %n = f32[4]{0} negate(%p)
}

%twice (q: f32[4]) -> f32[4] {
  %q = f32[4]{0} parameter(0)
  ROOT %a = f32[4]{0} add(%q, %q)
}

ENTRY %main (x: f32[4]) -> f32[4] {
  %x = f32[4]{0} parameter(0)
  %fs = ((f32[4]{0}), f32[4]{0}, u32[]) fusion-start(%x), kind=kLoop, calls=%fused
  %fd = f32[4]{0} fusion-done(%fs)
  %cs = ((f32[4]{0}), f32[4]{0}, u32[]) call-start(%fd), async_execution_thread="host", to_apply=%twice
  ROOT %cd = f32[4]{0} call-done(%cs)
}
"""


def test_sugared_fusion_and_call_keep_their_own_computations():
    np.testing.assert_array_equal(run(WRAPPED_CALLS, np.float32([1, 2, 3, 4]))[0], [-2, -4, -6, -8])
    assert round_trip(WRAPPED_CALLS) == WRAPPED_CALLS + "\n"


@pytest.mark.skipif(importlib.util.find_spec("jax") is None, reason="XLA's printer is the oracle")
@pytest.mark.parametrize("text", [SUGAR, WRAPPED_CALLS], ids=["sugar", "wrapped_calls"])
def test_xla_printing_of_sugared_modules_is_ours(text):
    from jaxlib import _hlo

    for options, short in ((_hlo.HloPrintOptions(), False), (_hlo.HloPrintOptions.short_parsable(), True)):
        xla_text = _hlo.hlo_module_from_text(textwrap.dedent(text)).to_string(options)
        assert print_module(hlo(xla_text), short=short) == xla_text
