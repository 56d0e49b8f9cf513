"""Forms of HLO that openxla/xla's own tests write (its `.hlo` test files and the HLO strings of
xla/tests/*.cc at a recent head) and that XLA's parser reads: each re-typed here as a small module
of our own, with what XLA's parser and XLA:CPU make of it (issue 38)."""
from __future__ import annotations

import zlib

import numpy as np
import pytest

import hlodbg
from hlodbg.engine.ir.errors import ExecutionError, ParseError
from hlodbg.engine.syntax import MLIR
from hlodbg.engine.syntax.hlo.parser import parse_hlo_modules
from hlodbg.engine.syntax.hlo.to_stablehlo import convert_to_stablehlo

from .hlo_oracle import difference, leaves, parameter_inputs, run_xla


def test_rng_written_with_a_shape_operand_reads_only_its_bounds():
    """XLA's rng expander tests write `rng(min, max, shape)`: XLA's parser takes the extra operand
    and its rng expander reads operands 0 and 1 only, the result shape being the declared one."""
    text = """HloModule uniform_with_shape
ENTRY e {
  low = f32[] constant(2)
  high = f32[] constant(3)
  shape = u64[3] constant({2, 4, 8})
  ROOT r = f32[5] rng(low, high, shape), distribution=rng_uniform
}
"""
    program = hlodbg.load(text)
    (values,) = program.run()
    assert values.shape == (5,) and ((2 <= values) & (values < 3)).all(), values


def test_all_to_all_without_replica_groups_is_one_group_of_every_process():
    """collective_ops_test.cc's all-to-all tests write no replica_groups: one group of every
    replica, as many as the module has (one here), whose all-to-all hands each its own value."""
    text = """HloModule exchange
ENTRY e {
  id = u32[] replica-id()
  ids = u32[2] broadcast(id), dimensions={}
  base = u32[2] constant({10, 15})
  sum = u32[2] add(ids, base)
  ROOT exchanged = u32[2] all-to-all(sum), dimensions={0}
}
"""
    (values,) = hlodbg.load(text).run()
    assert values.tolist() == [10, 15]


def test_send_and_recv_on_channel_zero():
    """collective_ops_test.cc's send/recv tests use channel_id=0, a channel like any other (XLA's
    parser requires a channel_id on send and recv; 0 is not "none" there)."""
    text = """HloModule loopback
ENTRY e {
  data = f32[2] parameter(0)
  start = token[] after-all()
  recv = (f32[2], u32[], token[]) recv(start), channel_id=0
  send = (f32[2], u32[], token[]) send(data, start), channel_id=0, control-predecessors={recv}
  recv-done = (f32[2], token[]) recv-done(recv), channel_id=0
  send-done = token[] send-done(send), channel_id=0, control-predecessors={recv}
  ROOT received = f32[2] get-tuple-element(recv-done), index=0
}
"""
    program = hlodbg.load(text)
    assert "channel_id=0" in program.to_text().split("ROOT")[0].split("recv(")[1]


def test_a_quoted_attribute_value_on_the_next_line():
    """custom_call_test.cc breaks `custom_call_target=` and its quoted value over two lines; XLA's
    lexer skips the line break. (An unquoted word on the next line stays an error: it would be the
    next instruction's name.)"""
    text = """HloModule broken_line
ENTRY e {
  x = f32[2] parameter(0)
  ROOT r = f32[2] custom-call(x), custom_call_target=
    "Sharding", sharding={replicated}
}
"""
    program = hlodbg.load(text)
    (call,) = [op for op in program.entry.ops if op.name == "stablehlo.custom_call"]
    assert str(call.attr("call_target_name")).strip('"') == "Sharding"
    with pytest.raises(ParseError, match="expected a value for attribute 'custom_call_target'"):
        hlodbg.load(text.replace('"Sharding"', "Sharding"))


MIXED_OPERANDS = {
    # dot_operation_test.cc's WiderIntegralAccumulation and MixedPrecisionDotLowPrecisionOutput
    "integers": """HloModule wider
ENTRY e {
  a = s8[5,5] parameter(0)
  b = s16[5,1] parameter(1)
  ROOT d = s32[5,1] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
""",
    "narrow_result": """HloModule narrow
ENTRY e {
  a = f16[5,5] parameter(0)
  b = f32[5,1] parameter(1)
  ROOT d = f16[5,1] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
""",
    # operand_convert_for_convolution.hlo: a pred kernel
    "pred_kernel": """HloModule pred_kernel
ENTRY e {
  x = f32[1,28,1] parameter(0)
  k = pred[28,1,1] parameter(1)
  ROOT c = f32[1,28,1] convolution(x, k), window={size=28 pad=13_14}, dim_labels=b0f_0io->b0f
}
""",
}


@pytest.mark.parametrize("name", sorted(MIXED_OPERANDS))
def test_dot_and_convolution_of_mixed_element_types_match_xla(name):
    """XLA takes dot/convolution operands of two element types; hlodbg converts them to the more
    precise one (as XLA's HLO importer does) and matches XLA:CPU."""
    pytest.importorskip("jax")
    text = MIXED_OPERANDS[name]
    (tree,) = parse_hlo_modules(text, f"{name}.hlo")
    inputs = parameter_inputs(tree, zlib.crc32(name.encode()))
    expected = run_xla(text, inputs)
    program = hlodbg.load(text)
    got = leaves(program.run(*inputs))
    assert not difference(got[0], expected[0]), difference(got[0], expected[0])
    assert "convert" not in program.to_text()  # the conversions are the lowering's, not the module's


def test_a_shaped_constant_written_as_one_number_is_that_number_then_zeros():
    """XLA's builder tests write `f32[3] constant(1)`: XLA's parser fills the elements in order
    from the text and leaves the rest zero (it prints the constant back as {1, 0, 0})."""
    text = """HloModule first_then_zeros
ENTRY e {
  c = f32[2,2] constant(5)
  p = pred[3] constant(true)
  ROOT t = (f32[2,2], pred[3]) tuple(c, p)
}
"""
    (matrix, flags) = leaves(hlodbg.load(text).run())
    assert matrix.tolist() == [[5, 0], [0, 0]] and flags.tolist() == [True, False, False]


def test_convolution_written_without_a_shape_is_inferred_like_xla():
    """conv_depthwise_backprop_filter_test.cc writes its convolution without a shape (XLA's parser
    infers it): batch groups, dilations and padding all enter the inferred shape."""
    pytest.importorskip("jax")
    text = """HloModule shapeless_convolution
ENTRY e {
  x = f32[2,5,6,4] parameter(0)
  k = f32[2,2,3,2] parameter(1)
  ROOT c = convolution(x, k), window={size=2x3 pad=1_1x0_0 lhs_dilate=1x3 rhs_dilate=1x2}, dim_labels=f01b_i01o->01fb, batch_group_count=2
}
"""
    (tree,) = parse_hlo_modules(text, "shapeless.hlo")
    inputs = parameter_inputs(tree, 38)
    (expected,) = run_xla(text, inputs)
    (got,) = leaves(hlodbg.load(text).run(*inputs))
    assert got.shape == expected.shape and not difference(got, expected), difference(got, expected)


def test_map_without_dimensions_maps_every_dimension():
    """map_test.cc's MapMixedInputTypes writes no `dimensions` (XLA's parser leaves it optional)."""
    text = """HloModule mixed_map
add_converted {
  a = f32[] parameter(0)
  b = s32[] parameter(1)
  b_f32 = f32[] convert(b)
  ROOT sum = f32[] add(a, b_f32)
}

ENTRY e {
  x = f32[2,3] parameter(0)
  y = s32[2,3] parameter(1)
  ROOT m = f32[2,3] map(x, y), to_apply=add_converted
}
"""
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    y = np.full((2, 3), 10, np.int32)
    program = hlodbg.load(text)
    (got,) = leaves(program.run(x, y))
    assert got.tolist() == (x + 10).tolist()
    assert "dimensions={0,1}" in program.to_text()  # as XLA prints every map


def test_async_collective_whose_start_returns_the_result_itself():
    """XLA at head prints some async collectives with a start that returns the result, not a
    (operand, result) tuple (import_async.hlo): `all-gather-done(f32[4,2] %start)`."""
    text = """HloModule gather_start_returns_result
ENTRY e {
  x = f32[4,2] parameter(0)
  start = f32[4,2] all-gather-start(x), replica_groups={{0}}, dimensions={1}
  ROOT done = f32[4,2] all-gather-done(start)
}
"""
    x = np.arange(8, dtype=np.float32).reshape(4, 2)
    program = hlodbg.load(text)
    (got,) = leaves(program.run(x))
    assert got.tolist() == x.tolist()
    assert "all-gather-done(" in program.to_text()
    converted, notes = convert_to_stablehlo(program.module)
    (again,) = leaves(hlodbg.load(MLIR.print(converted)).run(x))
    assert again.tolist() == x.tolist()


def test_all_reduce_start_of_several_operands():
    """collective_ops_test.cc writes all-reduce-start of two operands: its value is a tuple of
    two reductions, and all-reduce-done passes that tuple on."""
    text = """HloModule reduce_two
add {
  x = u32[] parameter(0)
  y = u32[] parameter(1)
  ROOT s = u32[] add(x, y)
}

ENTRY e {
  a = u32[] parameter(0)
  b = u32[2] parameter(1)
  start = (u32[], u32[2]) all-reduce-start(a, b), replica_groups={}, to_apply=add
  ROOT done = (u32[], u32[2]) all-reduce-done(start)
}
"""
    program = hlodbg.load(text)
    (total, pair) = leaves(program.run(np.uint32(3), np.array([4, 5], np.uint32)))
    assert int(total) == 3 and pair.tolist() == [4, 5]


def test_a_module_without_a_replica_count_runs_on_the_replicas_its_groups_name():
    """collective_ops_test.cc's modules leave the replica count to the test (XLA's test runner
    sets it): hlodbg takes the grid the replica groups name, four replicas here."""
    text = """HloModule sum_pairs
add {
  x = u32[] parameter(0)
  y = u32[] parameter(1)
  ROOT s = u32[] add(x, y)
}

ENTRY e {
  id = u32[] replica-id()
  ROOT total = u32[] all-reduce(id), replica_groups={{0,1},{2,3}}, to_apply=add
}
"""
    program = hlodbg.load(text)
    assert (program.num_replicas, program.num_partitions) == (4, 1)
    by_replica = {process.replica_id: int(results[0]) for process, results in program.run().items()}
    assert by_replica == {0: 1, 1: 1, 2: 5, 3: 5}
    written = text.replace("HloModule sum_pairs", "HloModule sum_pairs, replica_count=8")
    assert hlodbg.load(written).num_replicas == 8  # a count the header gives is kept
    assert "replica_count" not in program.to_text()  # as written: XLA's text leaves it out too


def test_empty_groups_take_the_group_size_the_types_imply():
    """collective_ops_test.cc's reduce-scatter of u32[16] into u32[8] over replica_groups={}: one
    group of every replica, two of them as the types say (XLA's test runs it on two)."""
    text = """HloModule scatter_halves
add {
  a = u32[] parameter(0)
  b = u32[] parameter(1)
  ROOT s = u32[] add(a, b)
}

ENTRY e {
  x = u32[4] parameter(0)
  ROOT half = u32[2] reduce-scatter(x), replica_groups={}, to_apply=add, dimensions={0}
}
"""
    program = hlodbg.load(text)
    assert program.num_replicas == 2
    results = program.run(np.array([1, 2, 3, 4], np.uint32))
    assert [r[0].tolist() for r in results.values()] == [[2, 4], [6, 8]]


def test_partition_ids_of_an_unsharded_module_size_its_partitions():
    """A split collective with a channel_id names partition ids; in a module with no shardings (an
    XLA test's, not JAX's SPMD text) they give the partition count."""
    text = """HloModule permute_partitions
ENTRY e {
  x = f32[2] parameter(0)
  ROOT p = f32[2] collective-permute(x), channel_id=1, source_target_pairs={{0,1},{1,2},{2,0}}
}
"""
    program = hlodbg.load(text)
    assert (program.num_replicas, program.num_partitions) == (1, 3)
    sharded = text.replace("ROOT p = f32[2] collective-permute(x)",
                           "ROOT p = f32[2] collective-permute(x), sharding={replicated}")
    assert hlodbg.load(sharded).num_partitions == 1  # JAX's SPMD text: the header or meshes decide


def test_tuple_shaped_constants():
    """custom_call_test.cc writes tuple-shaped constants, nested too; XLA's parser reads them."""
    text = """HloModule nested_constant
ENTRY e {
  c = ((f32[], s32[2]), f32[]) constant(((7, {1, 2}), 42))
  inner = (f32[], s32[2]) get-tuple-element(c), index=0
  ROOT pair = s32[2] get-tuple-element(inner), index=1
}
"""
    program = hlodbg.load(text)
    (got,) = leaves(program.run())
    assert got.tolist() == [1, 2]
    assert "constant(((7, {1, 2}), 42))" in program.to_text()


def test_pipelined_send_and_recv_go_between_the_pairs_their_frontend_attributes_name():
    """collective_ops_test.cc's send/recv name their peers in _xla_send_recv_source_target_pairs:
    replica 1 sends to replica 0 (two replicas, from the pairs); replica 1, which no pair targets,
    receives zeros, as the test expects."""
    text = """HloModule one_way
ENTRY e {
  id = u32[] replica-id()
  ten = u32[] constant(10)
  sum = u32[] add(id, ten)
  data = u32[2] broadcast(sum), dimensions={}
  start = token[] after-all()
  recv = (u32[2], u32[], token[]) recv(start), channel_id=0, frontend_attributes={_xla_send_recv_source_target_pairs="{{1,0}}"}
  send = (u32[2], u32[], token[]) send(data, start), channel_id=0, control-predecessors={recv}, frontend_attributes={_xla_send_recv_source_target_pairs="{{1,0}}"}
  recv-done = (u32[2], token[]) recv-done(recv), channel_id=0
  send-done = token[] send-done(send), channel_id=0, control-predecessors={recv}
  ROOT received = u32[2] get-tuple-element(recv-done), index=0
}
"""
    program = hlodbg.load(text)
    assert program.num_replicas == 2
    by_replica = {process.replica_id: results[0].tolist() for process, results in program.run().items()}
    assert by_replica == {0: [11, 11], 1: [0, 0]}


def test_tuple_form_all_to_all_without_groups_runs_on_as_many_replicas_as_operands():
    """collective_ops_test.cc's tuple-form all-to-all of four operands over replica_groups={}: one
    operand to each replica of the one group, so four replicas (XLA's verifier asks for as many)."""
    text = """HloModule exchange_four
ENTRY e {
  id = u32[] replica-id()
  ten = u32[] constant(10)
  a = u32[] add(id, ten)
  b = u32[] multiply(id, ten)
  c = u32[] subtract(ten, id)
  d = u32[] add(id, id)
  ROOT x = (u32[], u32[], u32[], u32[]) all-to-all(a, b, c, d), replica_groups={}
}
"""
    program = hlodbg.load(text)
    assert program.num_replicas == 4
    by_replica = {p.replica_id: [int(v) for v in leaves(r)] for p, r in program.run().items()}
    # replica j receives operand j of every replica i (a, b, c or d computed with id = i)
    expected = {0: [10, 11, 12, 13], 1: [0, 10, 20, 30], 2: [10, 9, 8, 7], 3: [0, 2, 4, 6]}
    assert by_replica == expected


def test_typed_ffi_backend_config_written_as_a_quoted_dictionary():
    """custom_call_test.cc quotes a typed-FFI custom call's attribute dictionary
    (`backend_config="{value = 2 : i32}"`); XLA reads the dictionary inside."""
    text = """HloModule quoted_dictionary
ENTRY e {
  ROOT c = f32[] custom-call(), custom_call_target="my_handler", api_version=API_VERSION_TYPED_FFI, backend_config="{value = 2 : i32}"
}
"""
    program = hlodbg.load(text)
    (call,) = [op for op in program.entry.ops if op.name == "stablehlo.custom_call"]
    assert int(call.attr("backend_config")["value"]) == 2


def test_send_and_recv_without_a_channel_id():
    """collective_ops_test.cc also leaves channel_id out where the frontend attribute names the
    peers (XLA's parser takes it); with neither, the recv is a located error when it runs."""
    text = """HloModule no_channel
ENTRY e {
  id = u32[] replica-id()
  start = token[] after-all()
  send = (u32[], u32[], token[]) send(id, start), frontend_attributes={_xla_send_recv_source_target_pairs="{{1,0}}"}
  recv = (u32[], u32[], token[]) recv(start), frontend_attributes={_xla_send_recv_source_target_pairs="{{1,0}}"}
  send-done = token[] send-done(send)
  recv-done = (u32[], token[]) recv-done(recv)
  ROOT received = u32[] get-tuple-element(recv-done), index=0
}
"""
    by_replica = {p.replica_id: int(r[0]) for p, r in hlodbg.load(text).run().items()}
    assert by_replica == {0: 1, 1: 0}
    unnamed = text.replace(', frontend_attributes={_xla_send_recv_source_target_pairs="{{1,0}}"}', "")
    with pytest.raises(ExecutionError, match=r":5:.*names no peer"):
        hlodbg.load(unnamed).run()


def test_aliasing_into_a_one_element_tuple_result():
    """import_emit_stablehlo.hlo: a custom call typed `(f32[2,3])` whose element {0} aliases an
    operand; the tuple is unpacked into the op's one result, and printed back as written."""
    text = """HloModule one_tuple_alias
ENTRY e {
  a = f32[2,3] parameter(0)
  b = (f32[], f32[2,3]) parameter(1)
  c = (f32[2,3]) custom-call(a, b), custom_call_target="foo", output_to_operand_aliasing={{0}: (1, {1})}
  ROOT r = f32[2,3] get-tuple-element(c), index=0
}
"""
    program = hlodbg.load(text)
    assert "output_to_operand_aliasing={{0}: (1, {1})}" in program.to_text()


@pytest.mark.parametrize("groups", ["", ", feature_group_count=2", ", batch_group_count=2"])
def test_a_convolution_past_the_im2col_budget_is_computed_in_pieces(monkeypatch, groups):
    """conv_depthwise_backprop_filter_test.cc has a dilated convolution whose im2col copy would
    take 51 GiB: past the budget the output positions are computed a slice at a time, with the
    same result."""
    from hlodbg.engine.ops import convolution

    kernel_in = 2 if "feature" in groups else 4
    text = f"""HloModule pieces
ENTRY e {{
  x = f32[4,7,6,4] parameter(0)
  k = f32[3,2,{kernel_in},4] parameter(1)
  ROOT c = f32[4,4,5,4] convolution(x, k), window={{size=3x2 pad=1_0x0_0 rhs_dilate=2x1}}, dim_labels=b01f_01io->b01f{groups}
}}
"""
    if "batch" in groups:
        text = text.replace("ROOT c = f32[4,4,5,4]", "ROOT c = f32[2,4,5,4]")
    rng = np.random.default_rng(38)
    x = rng.standard_normal((4, 7, 6, 4)).astype(np.float32)
    k = rng.standard_normal((3, 2, kernel_in, 4)).astype(np.float32)
    (whole,) = leaves(hlodbg.load(text).run(x, k))
    monkeypatch.setattr(convolution, "IM2COL_BYTES", 64)
    (pieces,) = leaves(hlodbg.load(text).run(x, k))
    np.testing.assert_allclose(pieces, whole, rtol=1e-6, atol=1e-6)


def test_an_entry_whose_root_is_a_one_element_tuple_prints_back():
    """import_emit_stablehlo.hlo's `ROOT c = (f32[2,3]) custom-call(...)`: the ENTRY returns the
    element, and the printed signature and ROOT keep the one-element tuple (XLA reads it back)."""
    text = """HloModule one_tuple_root
ENTRY e {
  a = f32[2,3] parameter(0)
  ROOT c = (f32[2,3]) custom-call(a), custom_call_target="Sharding", sharding={replicated}
}
"""
    printed = hlodbg.load(text).to_text()
    assert "-> (f32[2,3]) {" in printed and "ROOT %c = (f32[2,3]) custom-call(%a)" in printed
    hlodbg.load(printed)
