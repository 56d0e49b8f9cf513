"""HLO text → IR: each opcode family lowered and compared with the StableHLO the MLIR frontend
reads for the same program; tuples, control flow and calls as IR, the pack rule, entry
flattening, the HLO facts, locations and located errors (test_hlo_lowering_run.py runs them)."""
from __future__ import annotations

import textwrap

import pytest

import hlodbg
from hlodbg.engine.ir.attributes import attribute_key
from hlodbg.engine.ir.errors import ParseError, VerifyError
from hlodbg.engine.ir.locations import name_stack, user_frame
from hlodbg.engine.syntax import frontend_for
from hlodbg.engine.syntax.hlo import HLO
from hlodbg.engine.syntax.mlir import MLIR
from hlodbg.engine.verify import verify

# The HLO facts an op keeps besides its StableHLO attributes.
_FACT_PREFIXES = ("hlo.", "xla_shape", "mhlo.")


def hlo(text: str):
    return HLO.parse_all(textwrap.dedent(text), "test.hlo")[0]


def mlir(text: str):
    return MLIR.parse_all(textwrap.dedent(text), "test.mlir")[0]


def semantic_attrs(op) -> dict:
    return {k: attribute_key(v) for k, v in op.attributes.items() if not k.startswith(_FACT_PREFIXES)}


def ops_named(module, name: str) -> list:
    return [op for op in module.walk() if op.name == name]


def assert_same_op(hlo_text: str, mlir_text: str, name: str) -> None:
    """The HLO instruction lowers to the op the MLIR frontend reads: same attributes, types."""
    got, want = ops_named(hlo(hlo_text), name), ops_named(mlir(mlir_text), name)
    assert got and len(got) == len(want), (got, want)
    for g, w in zip(got, want):
        assert semantic_attrs(g) == semantic_attrs(w)
        assert g.result_types == w.result_types
        assert [v.type for v in g.operands] == [v.type for v in w.operands]


def run(text: str, *args):
    return hlodbg.load(textwrap.dedent(text)).run(*args)


# -- attributes: the same as the StableHLO the MLIR frontend reads ---------------------------------


def test_compare_takes_its_default_type_from_the_element_type():
    assert_same_op(
        """
        ENTRY e {
          a = f32[4] parameter(0)
          b = s32[4] parameter(1)
          c = pred[4] compare(a, a), direction=LT
          d = pred[4] compare(b, b), direction=GE
          ROOT t = pred[4] compare(a, a), direction=EQ, type=TOTALORDER
        }""",
        """
        func.func @e(%a: tensor<4xf32>, %b: tensor<4xi32>) -> tensor<4xi1> {
          %c = stablehlo.compare LT, %a, %a, FLOAT : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
          %d = stablehlo.compare GE, %b, %b, SIGNED : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>
          %t = stablehlo.compare EQ, %a, %a, TOTALORDER : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
          return %t : tensor<4xi1>
        }""",
        "stablehlo.compare",
    )


def test_dot_becomes_dot_general_with_dims_and_precision():
    assert_same_op(
        """
        ENTRY e {
          a = f32[2,4,8] parameter(0)
          b = f32[2,8,3] parameter(1)
          ROOT d = f32[2,4,3] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}, operand_precision={highest,default}
        }""",
        """
        func.func @e(%a: tensor<2x4x8xf32>, %b: tensor<2x8x3xf32>) -> tensor<2x4x3xf32> {
          %d = stablehlo.dot_general %a, %b, batching_dims = [0] x [0], contracting_dims = [2] x [1], precision = [HIGHEST, DEFAULT] : (tensor<2x4x8xf32>, tensor<2x8x3xf32>) -> tensor<2x4x3xf32>
          return %d : tensor<2x4x3xf32>
        }""",
        "stablehlo.dot_general",
    )


def test_convolution_window_and_dim_labels():
    assert_same_op(
        """
        ENTRY e {
          x = f32[1,5,5,2] parameter(0)
          w = f32[3,3,2,4] parameter(1)
          ROOT c = f32[1,3,5,4] convolution(x, w), window={size=3x3 stride=2x1 pad=1_1x1_1 rhs_reversal=0x1}, dim_labels=b01f_01io->b01f
        }""",
        """
        func.func @e(%x: tensor<1x5x5x2xf32>, %w: tensor<3x3x2x4xf32>) -> tensor<1x3x5x4xf32> {
          %c = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [2, 1], pad = [[1, 1], [1, 1]], lhs_dilate = [1, 1], rhs_dilate = [1, 1], reverse = [false, true]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x5x5x2xf32>, tensor<3x3x2x4xf32>) -> tensor<1x3x5x4xf32>
          return %c : tensor<1x3x5x4xf32>
        }""",
        "stablehlo.convolution",
    )


def test_data_movement_attributes():
    assert_same_op(
        """
        ENTRY e {
          a = f32[4,8] parameter(0)
          z = f32[] constant(0)
          b = f32[2,4,8] broadcast(a), dimensions={1,2}
          p = f32[5,17] pad(a, z), padding=0_1x1_0_1
          s = f32[2,6] slice(a), slice={[0:4:2], [1:7]}
          t = f32[8,4] transpose(a), dimensions={1,0}
          r = f32[4,8] reverse(a), dimensions={1}
          c = f32[8,8] concatenate(a, a), dimensions={0}
          i = s32[4,3] iota(), iota_dimension=1
          ROOT q = f32[4,8] reduce-precision(a), exponent_bits=5, mantissa_bits=10
        }""",
        """
        func.func @e(%a: tensor<4x8xf32>) -> tensor<4x8xf32> {
          %z = stablehlo.constant dense<0.0> : tensor<f32>
          %b = stablehlo.broadcast_in_dim %a, dims = [1, 2] : (tensor<4x8xf32>) -> tensor<2x4x8xf32>
          %p = stablehlo.pad %a, %z, low = [0, 1], high = [1, 0], interior = [0, 1] : (tensor<4x8xf32>, tensor<f32>) -> tensor<5x17xf32>
          %s = stablehlo.slice %a [0:4:2, 1:7] : (tensor<4x8xf32>) -> tensor<2x6xf32>
          %t = stablehlo.transpose %a, dims = [1, 0] : (tensor<4x8xf32>) -> tensor<8x4xf32>
          %r = stablehlo.reverse %a, dims = [1] : tensor<4x8xf32>
          %c = stablehlo.concatenate %a, %a, dim = 0 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
          %i = stablehlo.iota dim = 1 : tensor<4x3xi32>
          %q = stablehlo.reduce_precision %a, format = e5m10 : tensor<4x8xf32>
          return %q : tensor<4x8xf32>
        }""",
        "stablehlo.pad",
    )
    module = hlo("""
        ENTRY e {
          a = f32[4,8] parameter(0)
          z = f32[] constant(0)
          b = f32[2,4,8] broadcast(a), dimensions={1,2}
          s = f32[2,6] slice(a), slice={[0:4:2], [1:7]}
          ROOT c = f32[8,8] concatenate(a, a), dimensions={0}
        }""")
    (slice_op,) = ops_named(module, "stablehlo.slice")
    assert tuple(slice_op.attributes["strides"]) == (2, 1)
    (bcast,) = ops_named(module, "stablehlo.broadcast_in_dim")
    assert tuple(bcast.attributes["broadcast_dimensions"]) == (1, 2)


def test_gather_fields_are_stablehlos():
    assert_same_op(
        """
        ENTRY e {
          a = f32[4,8] parameter(0)
          i = s32[2,1] parameter(1)
          ROOT g = f32[2,8] gather(a, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,8}
        }""",
        """
        func.func @e(%a: tensor<4x8xf32>, %i: tensor<2x1xi32>) -> tensor<2x8xf32> {
          %g = "stablehlo.gather"(%a, %i) {dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, slice_sizes = array<i64: 1, 8>, indices_are_sorted = false} : (tensor<4x8xf32>, tensor<2x1xi32>) -> tensor<2x8xf32>
          return %g : tensor<2x8xf32>
        }""",
        "stablehlo.gather",
    )


def test_collective_grouping_attributes():
    assert_same_op(
        """
        HloModule m, replica_count=2
        sum {
          x = f32[] parameter(0)
          y = f32[] parameter(1)
          ROOT s = f32[] add(x, y)
        }
        ENTRY e {
          a = f32[4] parameter(0)
          ROOT r = f32[4] all-reduce(a), channel_id=1, replica_groups={{0,1}}, use_global_device_ids=true, to_apply=sum
        }""",
        """
        func.func @e(%a: tensor<4xf32>) -> tensor<4xf32> {
          %r = "stablehlo.all_reduce"(%a) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>, use_global_device_ids}> ({
          ^bb0(%x: tensor<f32>, %y: tensor<f32>):
            %s = stablehlo.add %x, %y : tensor<f32>
            stablehlo.return %s : tensor<f32>
          }) : (tensor<4xf32>) -> tensor<4xf32>
          return %r : tensor<4xf32>
        }""",
        "stablehlo.all_reduce",
    )
    module = hlo("""
        HloModule m, replica_count=4
        ENTRY e {
          a = f32[8] parameter(0)
          ROOT r = f32[8] all-to-all(a), replica_groups={{0,1},{2,3}}, dimensions={0}
        }""")
    (op,) = ops_named(module, "stablehlo.all_to_all")
    assert (int(op.attr("split_dimension")), int(op.attr("concat_dimension")), int(op.attr("split_count"))) == (0, 0, 2)
    assert "channel_handle" not in op.attributes
    assert module.num_replicas == 4


def test_multi_result_ops_are_packed_into_the_instructions_tuple():
    module = hlo("""
        ENTRY e {
          s = u64[2] parameter(0)
          ROOT r = (u64[2], u32[4]) rng-bit-generator(s), algorithm=rng_three_fry
        }""")
    (gen,) = ops_named(module, "stablehlo.rng_bit_generator")
    assert str(gen.attr("rng_algorithm")) == "THREE_FRY" and len(gen.results) == 2
    packs = [op for op in ops_named(module, "stablehlo.tuple") if "hlo.packs_results" in op.attributes]
    assert len(packs) == 1 and packs[0].results[0].name == "%r" and packs[0].operands == gen.results
    # the entry returns what its ROOT tuple was built from: no element reads to step through
    assert not ops_named(module, "stablehlo.get_tuple_element")
    assert module.entry.body.terminator.operands == gen.results
    assert module.entry.function_type.results == tuple(gen.result_types)


def test_conditional_lowers_with_one_operand_per_branch():
    module = hlo("""
        neg {
          p = f32[2] parameter(0)
          ROOT n = f32[2] negate(p)
        }
        same {
          p = f32[2] parameter(0)
          ROOT c = f32[2] copy(p)
        }
        ENTRY e {
          b = pred[] parameter(0)
          x = f32[2] parameter(1)
          ROOT c = f32[2] conditional(b, x, x), true_computation=neg, false_computation=same
        }""")
    (cond,) = ops_named(module, "hlo.conditional")
    assert len(cond.operands) == 3 and len(cond.regions) == 2
    assert [len(r.block.arguments) for r in cond.regions] == [1, 1]
    assert [str(n) for n in cond.attr("hlo.computations")] == ["neg", "same"]


def test_fusion_calls_a_private_function():
    module = hlo("""
        fused {
          p0 = f32[4] parameter(0)
          p1 = f32[4] parameter(1)
          ROOT m = f32[4] multiply(p0, p1)
        }
        ENTRY e {
          a = f32[4] parameter(0)
          ROOT f = f32[4] fusion(a, a), kind=kLoop, calls=fused
        }""")
    (fusion,) = ops_named(module, "hlo.fusion")
    assert str(fusion.attr("callee")) == "@fused" and fusion.attr("kind") == "kLoop"
    assert module.functions["fused"].visibility == "private"


def test_rng_gets_its_shape_operand():
    module = hlo("""
        ENTRY e {
          a = f32[] constant(0)
          b = f32[] constant(1)
          ROOT r = f32[3,2] rng(a, b), distribution=rng_uniform
        }""")
    (rng,) = ops_named(module, "stablehlo.rng")
    shape = rng.operands[2].defining_op
    assert "hlo.implicit" in shape.attributes and shape.attr("value").array.tolist() == [3, 2]


# -- HLO facts, locations, errors -------------------------------------------------------------------

LOCATED = """
    HloModule jit_f, entry_computation_layout={(f32[4]{0})->f32[4]{0}}

    FileNames
    1 "/src/model.py"

    FunctionNames
    1 "<module>"
    2 "f"

    FileLocations
    1 {file_name_id=1 function_name_id=1 line=10 end_line=10 column=4 end_column=9}
    2 {file_name_id=1 function_name_id=2 line=3 end_line=3 column=8 end_column=20}

    StackFrames
    1 {file_location_id=1 parent_frame_id=1}
    2 {file_location_id=2 parent_frame_id=2}

    ENTRY %main.3 (x.1: f32[4]) -> f32[4] {
      %x.1 = f32[4]{0} parameter(0), sharding={replicated}
      %t = f32[4]{0} tanh(%x.1), metadata={op_name="jit(f)/tanh" stack_frame_id=2}, statistics={visualizing_index=0}
      ROOT %s = f32[4]{0} sine(%t), metadata={op_name="jit(f)/sin" source_file="/src/model.py" source_line=4}, frontend_attributes={a="b"}
    }"""


def test_locations_from_stack_frames_and_metadata():
    module = hlo(LOCATED)
    tanh, sine = module.entry.body.operations[:2]
    assert name_stack(tanh.location) == "jit(f)/tanh"
    frame = user_frame(tanh.location)
    assert (frame.filename, frame.line, frame.col) == ("/src/model.py", 3, 8)
    assert "<module>" in str(tanh.location)  # the caller frame is in the chain
    assert name_stack(sine.location) == "jit(f)/sin" and user_frame(sine.location).line == 4
    assert tanh.pos.line == 21 and tanh.results[0].name == "%t"


def test_hlo_facts_are_kept():
    module = hlo(LOCATED)
    tanh, sine = module.entry.body.operations[:2]
    assert tanh.attr("xla_shape") == "f32[4]{0}"
    assert dict(tanh.attr("hlo.extra")) == {"statistics": "{visualizing_index=0}"}
    assert dict(sine.attr("mhlo.frontend_attributes")) == {"a": "b"}
    assert "stack_frame_id=2" in tanh.attr("hlo.metadata")
    assert module.entry.arg_attrs(0)["mhlo.sharding"] == "{replicated}"
    assert module.attributes["hlo.language"] == "hlo"
    assert "entry_computation_layout" in module.attributes["hlo.header"]
    assert "FileNames" in module.attributes["hlo.stack_frames"]
    assert module.source.name == "test.hlo"


def test_unknown_opcode_is_a_located_error():
    with pytest.raises(ParseError) as e:
        hlo("""
            ENTRY e {
              a = f32[4] parameter(0)
              ROOT b = f32[4] frobnicate(a)
            }""")
    assert "unknown HLO opcode 'frobnicate'" in str(e.value) and "test.hlo:4:" in str(e.value)


def test_undefined_operand_and_wrong_inline_shape_are_located():
    with pytest.raises(ParseError, match=r"test.hlo:4:.*'nothere'"):
        hlo("""
            ENTRY e {
              a = f32[4] parameter(0)
              ROOT b = f32[4] negate(nothere)
            }""")
    with pytest.raises(ParseError, match=r"test.hlo:4:.*written with shape f32\[5\]"):
        hlo("""
            ENTRY e {
              a = f32[4] parameter(0)
              ROOT b = f32[4] negate(f32[5] a)
            }""")


def test_declared_shape_that_the_op_does_not_produce_fails_verification():
    with pytest.raises(VerifyError, match=r"<string>:4:"):
        hlodbg.load(textwrap.dedent("""
            ENTRY e {
              a = f32[4] parameter(0)
              ROOT b = f32[5] negate(a)
            }"""))


def test_frontend_is_picked_from_text_and_suffix():
    assert frontend_for("HloModule m\nENTRY e {\n  ROOT a = f32[] constant(1)\n}") is HLO
    assert frontend_for("ENTRY %e (p: f32[]) -> f32[] {\n  ROOT %p = f32[] parameter(0)\n}") is HLO
    assert frontend_for("", "dump.after_optimizations.txt") is HLO
    assert frontend_for("module {\n}") is MLIR


# -- the table read backwards (the printer's half) gives the attributes back -------------------------

ROUND_TRIP = """
    HloModule m, replica_count=2
    sum {
      x = f32[] parameter(0)
      y = f32[] parameter(1)
      ROOT s = f32[] add(x, y)
    }
    ENTRY e {
      a = f32[4,8] parameter(0)
      i = s32[2,1] parameter(1)
      x = f32[1,5,5,2] parameter(2)
      w = f32[3,3,2,4] parameter(3)
      z = f32[] constant(0)
      c = pred[4,8] compare(a, a), direction=LT, type=TOTALORDER
      d = f32[4,4] dot(a, a), lhs_contracting_dims={1}, rhs_contracting_dims={1}, operand_precision={highest,default}
      v = f32[1,3,5,4] convolution(x, w), window={size=3x3 stride=2x1 pad=1_1x1_1 rhs_reversal=0x1}, dim_labels=b01f_01io->b01f, feature_group_count=1
      p = f32[5,17] pad(a, z), padding=0_1x1_0_1
      s = f32[2,6] slice(a), slice={[0:4:2], [1:7]}
      g = f32[2,8] gather(a, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,8}, indices_are_sorted=true
      rw = f32[3,7] reduce-window(a, z), window={size=2x2 pad=0_1x0_0}, to_apply=sum
      ar = f32[4,8] all-reduce(a), channel_id=3, replica_groups={{0,1}}, use_global_device_ids=true, to_apply=sum
      ROOT t = f32[8,4] transpose(a), dimensions={1,0}
    }"""


def test_adapters_raise_the_attributes_they_lowered():
    from hlodbg.engine.syntax.hlo.opcodes import raise_attributes
    from hlodbg.engine.syntax.hlo.parser import parse_hlo_modules

    tree = parse_hlo_modules(textwrap.dedent(ROUND_TRIP), "test.hlo")[0]
    written = {i.name: i for i in tree.entry.instructions}
    module = hlo(ROUND_TRIP)
    checked = 0
    for op in module.entry.body.operations:
        inst = written.get(op.results[0].name.lstrip("%") if op.results else "")
        if inst is None or inst.opcode in ("parameter", "constant"):
            continue
        raised = raise_attributes(op)
        given = {k: a.text.replace(" ", "") for k, a in inst.attrs.items() if k not in ("to_apply",)}
        given.pop("feature_group_count", None)  # the default, not printed back
        assert {k: t.replace(" ", "") for k, t in raised.items()} == given, inst.name
        checked += 1
    assert checked == 9


def test_frame_chain_is_innermost_first_and_ends_at_parent_zero():
    from hlodbg.engine.ir.locations import CallSiteLoc, NameLoc
    from hlodbg.engine.syntax.hlo.facts import frame_chain, location
    from hlodbg.engine.syntax.hlo.tree import FileLocation, StackFrameTables

    tables = StackFrameTables(
        file_names={1: "/src/model.py"}, function_names={1: "<module>", 2: "f"},
        file_locations={1: FileLocation(1, 1, 10, 10, 4, 9), 2: FileLocation(1, 2, 3, 3, 8, 20)},
        frames={1: (1, 1), 2: (2, 2), 3: (2, 4)},  # frame 3 names itself as parent (4 - 1): a cycle ends it
    )
    loc = frame_chain(2, tables)
    assert isinstance(loc, CallSiteLoc)
    assert user_frame(loc).line == 3 and user_frame(loc.caller).line == 10
    assert name_stack(location({"op_name": "jit(f)/mul", "stack_frame_id": 2}, tables)) == "jit(f)/mul"
    assert isinstance(frame_chain(3, tables), NameLoc)  # one frame: no caller
    plain = location({"source_file": "a.py", "source_line": 7}, None)
    assert (plain.filename, plain.line) == ("a.py", 7)


def test_async_collective_pairs_keep_their_opcodes():
    module = hlo("""
        HloModule m, replica_count=2
        sum {
          x = f32[] parameter(0)
          y = f32[] parameter(1)
          ROOT s = f32[] add(x, y)
        }
        ENTRY e {
          a = f32[4] parameter(0)
          ags = (f32[4], f32[8]) all-gather-start(a), replica_groups={{0,1}}, dimensions={0}
          agd = f32[8] all-gather-done(ags)
          ars = f32[8] all-reduce-start(agd), replica_groups={{0,1}}, to_apply=sum
          ard = f32[8] all-reduce-done(ars)
          cps = (f32[8], f32[8], u32[], u32[]) collective-permute-start(ard), source_target_pairs={{0,1},{1,0}}
          ROOT cpd = f32[8] collective-permute-done(cps)
        }""")
    marked = {op.attr("hlo.opcode"): op for op in module.walk() if op.attr("hlo.opcode")}
    assert set(marked) == {"all-gather-start", "all-gather-done", "all-reduce-start", "all-reduce-done",
                           "collective-permute-start", "collective-permute-done"}
    # the collective runs at the start; the start's value is the tuple XLA gives it
    assert marked["all-reduce-start"].name == "stablehlo.all_reduce"
    assert marked["collective-permute-start"].name == "stablehlo.tuple"
    (permute,) = ops_named(module, "stablehlo.collective_permute")
    assert "replica_groups" not in permute.attributes


def test_groups_of_unequal_size_are_padded():
    module = hlo("""
        HloModule m, replica_count=3
        ENTRY e {
          a = f32[4] parameter(0)
          ROOT g = f32[8] all-gather(a), replica_groups={{0,1},{2}}, dimensions={0}
        }""")
    (gather,) = ops_named(module, "stablehlo.all_gather")
    assert gather.attr("replica_groups").array.tolist() == [[0, 1], [2, -1]]


def test_xla_dump_reports_are_named_not_parsed():
    with pytest.raises(ParseError, match=r"buffer-assignment report .* open the module itself: "
                                         r"dump/module_0001\.jit_f\.cpu_after_optimizations\.txt"):
        HLO.parse_all("BufferAssignment:\nallocation 0: size 4\n",
                      "dump/module_0001.jit_f.cpu_after_optimizations-buffer-assignment.txt")


def test_signature_with_layouts_is_recognized():
    assert HLO.recognizes("ENTRY %e (p: f32[4]{0}) -> f32[4]{0} {\n  ROOT %p = f32[4]{0} parameter(0)\n}")
    assert not HLO.recognizes("module {\n  func.func @f() {\n    return\n  }\n}")


def test_result_accuracy_is_stablehlos_and_sparsity_is_refused():
    assert_same_op(
        """
        ENTRY e {
          a = f32[4] parameter(0)
          ROOT t = f32[4] tanh(a), result_accuracy={tolerance={atol=0.5,rtol=0.25,ulps=2}}
        }""",
        """
        func.func @e(%a: tensor<4xf32>) -> tensor<4xf32> {
          %t = "stablehlo.tanh"(%a) {result_accuracy = #stablehlo.result_accuracy<atol = 5.000000e-01, rtol = 2.500000e-01, ulps = 2, mode = #stablehlo.result_accuracy_mode<TOLERANCE>>} : (tensor<4xf32>) -> tensor<4xf32>
          return %t : tensor<4xf32>
        }""",
        "stablehlo.tanh",
    )
    with pytest.raises(ParseError, match=r"test.hlo:5:.*sparsity= .*does not model"):
        hlo("""
            ENTRY e {
              a = f32[4,8] parameter(0)
              b = f32[8,4] parameter(1)
              ROOT d = f32[4,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sparsity=L.1@2:4
            }""")


def test_control_predecessors_are_kept_as_names():
    module = hlo("""
        ENTRY e {
          a = f32[2] parameter(0)
          b = f32[2] negate(a)
          ROOT c = f32[2] abs(a), control-predecessors={b}
        }""")
    (op,) = ops_named(module, "stablehlo.abs")
    assert list(op.attr("hlo.control_predecessors")) == ["b"]


def test_a_computation_used_inside_itself_is_a_located_error():
    with pytest.raises(ParseError, match=r"test.hlo:2:.*'loop' uses itself as a region"):
        hlo("""
            loop {
              x = f32[] parameter(0)
              y = f32[] parameter(1)
              z = f32[] constant(0)
              ROOT r = f32[] reduce(x, z), dimensions={}, to_apply=loop
            }
            ENTRY e {
              a = f32[] parameter(0)
              z = f32[] constant(0)
              ROOT r = f32[] reduce(a, z), dimensions={}, to_apply=loop
            }""")


def test_tuple_constant_of_the_wrong_arity_is_a_located_error():
    # (Tuple-shaped constants themselves lower: test_hlo_xla_head.py.)
    with pytest.raises(ParseError, match=r"test.hlo:3:.*tuple literal has 1 element"):
        hlo("""
            ENTRY e {
              ROOT c = (f32[], s32[]) constant((1))
            }""")


def test_opcode_without_an_ir_op_is_a_located_error():
    with pytest.raises(ParseError, match=r"test.hlo:4:.*'scaled-dot' is not supported"):
        hlo("""
            ENTRY e {
              a = f32[4] parameter(0)
              ROOT s = f32[4] scaled-dot(a, a, a, a)
            }""")


def test_infeed_packs_its_nested_tuple_and_outfeed_unpacks_its_data():
    module = hlo("""
        ENTRY e {
          tok = token[] after-all()
          inf = ((f32[2]), token[]) infeed(tok), infeed_config="cfg"
          d = (f32[2]) get-tuple-element(inf), index=0
          t2 = token[] get-tuple-element(inf), index=1
          ROOT o = token[] outfeed(d, t2), outfeed_shape=(f32[2]{0})
        }""")
    (infeed,) = ops_named(module, "stablehlo.infeed")
    assert [str(t) for t in infeed.result_types] == ["tensor<2xf32>", "!stablehlo.token"]
    assert infeed.attr("infeed_config") == "cfg"
    (outfeed,) = ops_named(module, "stablehlo.outfeed")
    assert [str(v.type) for v in outfeed.operands] == ["tensor<2xf32>", "!stablehlo.token"]
    verify(module)


def test_ragged_dot_dims_are_chlos():
    assert_same_op(
        """
        ENTRY e {
          a = f32[2,11,5] parameter(0)
          b = f32[3,2,5,7] parameter(1)
          g = s64[3] parameter(2)
          ROOT d = f32[2,11,7] ragged-dot(a, b, g), lhs_batch_dims={0}, rhs_batch_dims={1}, lhs_contracting_dims={2}, rhs_contracting_dims={2}, lhs_ragged_dims={1}, rhs_group_dims={0}
        }""",
        """
        func.func @e(%a: tensor<2x11x5xf32>, %b: tensor<3x2x5x7xf32>, %g: tensor<3xi64>) -> tensor<2x11x7xf32> {
          %d = "chlo.ragged_dot"(%a, %b, %g) {ragged_dot_dimension_numbers = #chlo.ragged_dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [1], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [2], lhs_ragged_dimensions = [1], rhs_group_dimensions = [0]>} : (tensor<2x11x5xf32>, tensor<3x2x5x7xf32>, tensor<3xi64>) -> tensor<2x11x7xf32>
          return %d : tensor<2x11x7xf32>
        }""",
        "chlo.ragged_dot",
    )


# XLA HEAD's opcodes (openxla/xla xla/hlo/ir/hlo_opcode.h @0725a3a, hlo_text.md §8): 136 names.
XLA_OPCODES = """
abs acos acosh add add-dependency after-all all-gather all-gather-done all-gather-start all-reduce
all-reduce-done all-reduce-start all-to-all and asin asinh async-done async-start async-update atan
atan2 atanh batch-norm-grad batch-norm-inference batch-norm-training bitcast bitcast-convert broadcast
call cbrt ceil cholesky clamp count-leading-zeros collective-broadcast collective-permute
collective-permute-done collective-permute-start collective-reduce compare complex concatenate
conditional constant convert convolution copy copy-done copy-start cosine cosh custom-call divide
domain dot dynamic-reshape dynamic-slice dynamic-update-slice erf exponential exponential-minus-one
fft floor fusion gather get-dimension-size get-tuple-element imag infeed iota is-finite log
log-plus-one logistic map maximum minimum mulhi multiply negate not opt-barrier or outfeed pad
parameter partition-id popcnt power ragged-all-to-all ragged-dot real recv recv-done reduce
reduce-precision reduce-scatter reduce-window remainder replica-id reshape reverse rng
rng-bit-generator rng-get-and-update-state round-nearest-afz round-nearest-even rsqrt scaled-dot scan
scatter select select-and-scatter send send-done set-dimension-size shift-left shift-right-arithmetic
shift-right-logical shuffle sign sine sinh slice sort sqrt stochastic-convert subtract tan tanh topk
transpose triangular-solve tuple while xor
""".split()


def test_the_table_covers_every_opcode_and_reads_back_one_way():
    from hlodbg.engine.ir.opset import OPS
    from hlodbg.engine.syntax.hlo.opcodes import TABLE, opcode_of

    assert len(XLA_OPCODES) == 136
    assert set(TABLE) == set(XLA_OPCODES) - {"parameter"}  # parameters are block arguments
    for entry in TABLE.values():  # one way back: each (IR op, marker) names one opcode
        assert opcode_of(entry.op, entry.marker).hlo == entry.hlo
    # only XLA HEAD's newest opcodes lack an IR op (lowering them is a located error)
    assert {e.hlo for e in TABLE.values() if e.op not in OPS} <= {"scaled-dot", "shuffle"}
    # the IR ops several opcodes share are told apart by their marker
    assert opcode_of("stablehlo.all_reduce", "all-reduce-start").hlo == "all-reduce-start"
    assert opcode_of("stablehlo.all_reduce").hlo == "all-reduce"
