"""XLA HLO's own ops (engine/ir/opset/hlo.py, engine/ops/hlo.py, hlo_bitcast.py), written in
MLIR's generic form: they parse, verify and run; bitcast is checked against element orders worked
out by hand from XLA's layout rules; elided constants refuse to run with a message that says how
to get the full constant."""
from __future__ import annotations

import numpy as np
import pytest

import hlodbg
from hlodbg.engine import ExecutionError, VerifyError, parse_module
from hlodbg.engine.syntax.mlir.printer import print_module
from hlodbg.engine.verify import verify, verify_all

from .helpers import interpret


def _run(text: str, *args):
    verify(parse_module(text))
    return interpret(text, *args)


# -- fusion, conditional ---------------------------------------------------------------------------

FUSION = """
func.func private @fused_add(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.multiply %x, %y : tensor<4xf32>
  %1 = stablehlo.add %0, %y : tensor<4xf32>
  return %1 : tensor<4xf32>
}
func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "hlo.fusion"(%a, %b) {callee = @fused_add, kind = "kLoop"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}"""


def test_fusion_runs_its_computation_on_its_operands():
    a, b = np.arange(4, dtype=np.float32), np.full(4, 2, np.float32)
    (got,) = _run(FUSION, a, b)
    np.testing.assert_array_equal(got, a * b + b)


def test_fusion_prints_back_in_generic_form_and_parses_again():
    printed = print_module(parse_module(FUSION))
    assert '"hlo.fusion"(%a, %b)' in printed and "callee = @fused_add" in printed
    verify(parse_module(printed))


def test_fusion_is_a_frame_the_debugger_steps_into():
    from hlodbg.engine.run.interpreter import Interpreter, Listener

    entered = []

    class Recorder(Listener):
        def enter_frame(self, frame, args):
            entered.append((frame.function.sym_name, frame.owner.name if frame.owner is not None else None))

    program = hlodbg.load(FUSION)
    Interpreter(program.module, listeners=[Recorder()]).run("main", [np.ones(4, np.float32)] * 2)
    assert ("fused_add", "hlo.fusion") in entered


def test_fusion_with_the_wrong_signature_is_refused():
    bad = FUSION.replace('"hlo.fusion"(%a, %b)', '"hlo.fusion"(%a, %a, %b)').replace(
        "(tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>\n  return %0", "(tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>\n  return %0")
    with pytest.raises(VerifyError, match="passes 3 arguments but @fused_add takes 2"):
        verify(parse_module(bad))


CONDITIONAL = """
func.func @main(%i: tensor<{sel}>, %a: tensor<3xf32>, %b: tensor<3xf32>) -> tensor<3xf32> {{
  %0 = "hlo.conditional"(%i, %a, %b) ({{
    ^bb0(%x: tensor<3xf32>):
      %n = stablehlo.negate %x : tensor<3xf32>
      stablehlo.return %n : tensor<3xf32>
  }}, {{
    ^bb0(%y: tensor<3xf32>):
      %e = stablehlo.exponential %y : tensor<3xf32>
      stablehlo.return %e : tensor<3xf32>
  }}) : (tensor<{sel}>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}}"""


@pytest.mark.parametrize("selector, branch", [(True, 0), (False, 1)])
def test_conditional_with_a_pred_runs_region_0_when_true(selector, branch):
    a, b = np.array([1, 2, 3], np.float32), np.array([0, 1, 2], np.float32)
    (got,) = _run(CONDITIONAL.format(sel="i1"), np.array(selector), a, b)
    np.testing.assert_array_equal(got, -a if branch == 0 else np.exp(b))


@pytest.mark.parametrize("index, branch", [(0, 0), (1, 1), (2, 1), (-1, 1), (7, 1)])
def test_conditional_with_an_index_runs_the_last_branch_when_out_of_range(index, branch):
    a, b = np.array([1, 2, 3], np.float32), np.array([0, 1, 2], np.float32)
    (got,) = _run(CONDITIONAL.format(sel="i32"), np.array(index, np.int32), a, b)
    np.testing.assert_array_equal(got, -a if branch == 0 else np.exp(b))


def test_conditional_branch_taking_the_wrong_operand_type_is_refused():
    bad = CONDITIONAL.format(sel="i1").replace("^bb0(%y: tensor<3xf32>)", "^bb0(%y: tensor<3xf64>)").replace(
        "stablehlo.exponential %y : tensor<3xf32>", "stablehlo.convert %y : (tensor<3xf64>) -> tensor<3xf32>")
    errors = verify_all(parse_module(bad))
    assert errors and "branch #1 must take its operand (tensor<3xf32>)" in errors[0].message


def test_conditional_pred_with_three_branches_is_refused():
    text = """
func.func @main(%p: tensor<i1>, %a: tensor<f32>) -> tensor<f32> {
  %0 = "hlo.conditional"(%p, %a, %a, %a) ({
    ^bb0(%x: tensor<f32>):
      stablehlo.return %x : tensor<f32>
  }, {
    ^bb0(%y: tensor<f32>):
      stablehlo.return %y : tensor<f32>
  }, {
    ^bb0(%z: tensor<f32>):
      stablehlo.return %z : tensor<f32>
  }) : (tensor<i1>, tensor<f32>, tensor<f32>, tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}"""
    with pytest.raises(VerifyError, match="a pred selects between 2 branches, got 3"):
        verify(parse_module(text))


# -- copies, markers, async ------------------------------------------------------------------------

MARKERS = """
func.func @main(%a: tensor<3xi32>) -> (tensor<3xi32>, tensor<3xi32>, tensor<3xi32>, tensor<3xi32>) {
  %c = "hlo.copy"(%a) : (tensor<3xi32>) -> tensor<3xi32>
  %s = "hlo.copy_start"(%c) : (tensor<3xi32>) -> tuple<tensor<3xi32>, tensor<3xi32>, tensor<ui32>>
  %d = "hlo.copy_done"(%s) : (tuple<tensor<3xi32>, tensor<3xi32>, tensor<ui32>>) -> tensor<3xi32>
  %m = "hlo.domain"(%d) : (tensor<3xi32>) -> tensor<3xi32>
  %t = stablehlo.after_all : !stablehlo.token
  %e = "hlo.add_dependency"(%m, %t) : (tensor<3xi32>, !stablehlo.token) -> tensor<3xi32>
  return %c, %d, %m, %e : tensor<3xi32>, tensor<3xi32>, tensor<3xi32>, tensor<3xi32>
}"""


def test_copies_and_markers_pass_values_on_and_copy_makes_a_fresh_array():
    a = np.array([4, 5, 6], np.int32)
    results = _run(MARKERS, a)
    for got in results:
        np.testing.assert_array_equal(got, a)
    assert not np.shares_memory(results[0], a)


ASYNC = """
func.func private @work(%x: tensor<2xf32>, %y: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.subtract %x, %y : tensor<2xf32>
  return %0 : tensor<2xf32>
}
func.func @main(%a: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<2xf32> {
  %s = "hlo.async_start"(%a, %b) {callee = @work} : (tensor<2xf32>, tensor<2xf32>) -> tuple<tuple<tensor<2xf32>, tensor<2xf32>>, tensor<2xf32>, tensor<ui32>>
  %u = "hlo.async_update"(%s) : (tuple<tuple<tensor<2xf32>, tensor<2xf32>>, tensor<2xf32>, tensor<ui32>>) -> tuple<tuple<tensor<2xf32>, tensor<2xf32>>, tensor<2xf32>, tensor<ui32>>
  %d = "hlo.async_done"(%u) : (tuple<tuple<tensor<2xf32>, tensor<2xf32>>, tensor<2xf32>, tensor<ui32>>) -> tensor<2xf32>
  return %d : tensor<2xf32>
}"""


def test_async_start_runs_its_computation_and_done_returns_its_result():
    a, b = np.array([5, 7], np.float32), np.array([1, 2], np.float32)
    (got,) = _run(ASYNC, a, b)
    np.testing.assert_array_equal(got, a - b)


def test_async_start_whose_tuple_does_not_hold_its_operands_is_refused():
    bad = ASYNC.replace("tuple<tuple<tensor<2xf32>, tensor<2xf32>>,", "tuple<tuple<tensor<2xf32>>,")
    errors = verify_all(parse_module(bad))
    assert errors and "result must be tuple<tuple<operands...>, result, state...>" in errors[0].message


# -- bitcast ------------------------------------------------------------------------------------

BITCAST = """
func.func @main(%a: tensor<{ishape}xf32> {{xla_shape = "{ilayout}"}}) -> tensor<{oshape}xf32> {{
  %0 = "hlo.bitcast"(%a) {{xla_shape = "{olayout}"}} : (tensor<{ishape}xf32>) -> tensor<{oshape}xf32>
  return %0 : tensor<{oshape}xf32>
}}"""


def _bitcast(ishape, ilayout, oshape, olayout, a):
    text = BITCAST.format(ishape=ishape, ilayout=ilayout, oshape=oshape, olayout=olayout)
    (got,) = _run(text, a)
    return got


def test_bitcast_in_default_layouts_is_a_row_major_reshape():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    got = _bitcast("2x3", "f32[2,3]{1,0}", "3x2", "f32[3,2]{1,0}", a)
    np.testing.assert_array_equal(got, [[0, 1], [2, 3], [4, 5]])


def test_bitcast_of_a_column_major_operand_reads_its_columns_first():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    # {0,1}: dim 0 varies fastest, so memory holds a[0,0], a[1,0], a[0,1], a[1,1], a[0,2], a[1,2].
    got = _bitcast("2x3", "f32[2,3]{0,1}", "6", "f32[6]{0}", a)
    np.testing.assert_array_equal(got, [0, 3, 1, 4, 2, 5])


def test_bitcast_of_a_tiled_operand_reads_tile_by_tile():
    a = np.arange(16, dtype=np.float32).reshape(4, 4)
    # T(2,2): four 2x2 tiles in row-major tile order, each tile row-major inside.
    got = _bitcast("4x4", "f32[4,4]{1,0:T(2,2)}", "16", "f32[16]{0}", a)
    np.testing.assert_array_equal(got, [0, 1, 4, 5, 2, 3, 6, 7, 8, 9, 12, 13, 10, 11, 14, 15])


def test_bitcast_into_a_transposed_layout_is_a_transpose():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    # The same bytes read as f32[3,2]{0,1}: element (i, j) sits at j*3 + i.
    got = _bitcast("2x3", "f32[2,3]{1,0}", "3x2", "f32[3,2]{0,1}", a)
    np.testing.assert_array_equal(got, a.T)


def test_bitcast_to_another_element_type_of_the_same_width_keeps_the_bits():
    text = """
func.func @main(%a: tensor<2x2xf32> {xla_shape = "f32[2,2]{0,1}"}) -> tensor<4xi32> {
  %0 = "hlo.bitcast"(%a) {xla_shape = "s32[4]{0}"} : (tensor<2x2xf32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}"""
    a = np.array([[1.0, -2.0], [0.5, 3.0]], np.float32)
    (got,) = _run(text, a)
    np.testing.assert_array_equal(got, a.T.reshape(-1).view(np.int32))


def test_bitcast_without_layouts_on_either_side_uses_the_default():
    text = """
func.func @main(%a: tensor<2x3xf32>) -> tensor<6xf32> {
  %0 = "hlo.bitcast"(%a) : (tensor<2x3xf32>) -> tensor<6xf32>
  return %0 : tensor<6xf32>
}"""
    (got,) = _run(text, np.arange(6, dtype=np.float32).reshape(2, 3))
    np.testing.assert_array_equal(got, np.arange(6))


def test_bitcast_missing_one_layout_against_a_non_default_one_is_refused():
    text = """
func.func @main(%a: tensor<2x3xf32> {xla_shape = "f32[2,3]{0,1}"}) -> tensor<6xf32> {
  %0 = "hlo.bitcast"(%a) : (tensor<2x3xf32>) -> tensor<6xf32>
  return %0 : tensor<6xf32>
}"""
    with pytest.raises(ExecutionError, match="the layout of the result is not given") as info:
        interpret(text, np.zeros((2, 3), np.float32))
    assert info.value.pos is not None and info.value.line == 3


def test_bitcast_between_buffers_of_different_sizes_is_refused():
    text = BITCAST.format(ishape="4x4", ilayout="f32[4,4]{1,0:T(8,8)}", oshape="16", olayout="f32[16]{0}")
    with pytest.raises(ExecutionError, match="holds 256 bytes but the result f32\\[16\\]\\{0\\} needs 64"):
        interpret(text, np.zeros((4, 4), np.float32))


# -- stochastic_convert, set_dimension_size, rng state, mulhi -------------------------------------

STOCHASTIC = """
func.func @main(%x: tensor<6xf32>, %r: tensor<6xui32>) -> tensor<6xi8> {
  %0 = "hlo.stochastic_convert"(%x, %r) : (tensor<6xf32>, tensor<6xui32>) -> tensor<6xi8>
  return %0 : tensor<6xi8>
}"""


def test_stochastic_convert_rounds_up_when_the_random_bits_are_below_the_fraction():
    x = np.array([2.25, 2.25, -2.75, -2.75, 300.0, -1000.5], np.float32)
    quarter = 1 << 30  # 0.25 as a 32-bit fraction
    r = np.array([quarter - 1, quarter, 3 * quarter - 1, 3 * quarter, 0, 0], np.uint32)
    (got,) = _run(STOCHASTIC, x, r)
    np.testing.assert_array_equal(got, [3, 2, -3, -2, 127, -128])


def test_set_dimension_size_keeps_the_array_and_checks_the_bound():
    text = """
func.func @main(%a: tensor<4xf32>, %n: tensor<i32>) -> tensor<4xf32> {
  %0 = "hlo.set_dimension_size"(%a, %n) {dimension = 0 : i64} : (tensor<4xf32>, tensor<i32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}"""
    a = np.arange(4, dtype=np.float32)
    (got,) = _run(text, a, np.array(3, np.int32))
    np.testing.assert_array_equal(got, a)
    with pytest.raises(ExecutionError, match="size 5 does not fit dimension 0 \\(bound 4\\)"):
        interpret(text, a, np.array(5, np.int32))


def test_stablehlo_set_dimension_size_runs_as_hlos_does():
    # It had provenance and a definition but no evaluator (tests/test_op_completeness.py found it).
    text = """
func.func @main(%a: tensor<4xf32>, %n: tensor<i32>) -> tensor<4xf32> {
  %0 = stablehlo.set_dimension_size %a, %n, dim = 0 : (tensor<4xf32>, tensor<i32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}"""
    a = np.arange(4, dtype=np.float32)
    (got,) = _run(text, a, np.array(2, np.int32))
    np.testing.assert_array_equal(got, a)
    with pytest.raises(ExecutionError, match="size 5 does not fit dimension 0 \\(bound 4\\)"):
        interpret(text, a, np.array(5, np.int32))


RNG_STATE = """
func.func @main() -> (tensor<2xui64>, tensor<2xui64>) {
  %0 = "hlo.rng_get_and_update_state"() {delta = 7 : i64} : () -> tensor<2xui64>
  %1 = "hlo.rng_get_and_update_state"() {delta = 7 : i64} : () -> tensor<2xui64>
  return %0, %1 : tensor<2xui64>, tensor<2xui64>
}"""


def test_rng_state_counts_up_by_delta_from_zero_in_every_run():
    program = hlodbg.load(RNG_STATE)
    verify(program.module)
    from hlodbg.engine.run.interpreter import Interpreter

    interpreter = Interpreter(program.module)
    for _ in range(2):
        first, second = interpreter.run("main", [])
        np.testing.assert_array_equal(first, [0, 0])
        np.testing.assert_array_equal(second, [7, 0])


def test_rng_state_is_never_folded_as_a_constant():
    from hlodbg.engine.ir.opset import is_foldable, is_replayable

    assert not is_foldable("hlo.rng_get_and_update_state", False)
    assert not is_replayable("hlo.rng_get_and_update_state")


@pytest.mark.parametrize("mlir, dtype", [("i32", np.int32), ("ui32", np.uint32), ("i64", np.int64), ("ui64", np.uint64)])
def test_mulhi_is_the_high_half_of_the_double_width_product(mlir, dtype):
    text = f"""
func.func @main(%a: tensor<4x{mlir}>, %b: tensor<4x{mlir}>) -> tensor<4x{mlir}> {{
  %0 = "hlo.mulhi"(%a, %b) : (tensor<4x{mlir}>, tensor<4x{mlir}>) -> tensor<4x{mlir}>
  return %0 : tensor<4x{mlir}>
}}"""
    info = np.iinfo(dtype)
    a = np.array([info.max, info.min, 12345, info.max // 3], dtype)
    b = np.array([info.max, info.max, -7 if info.min else 7, 5], dtype)
    (got,) = _run(text, a, b)
    bits = info.bits
    want = [(int(x) * int(y)) >> bits for x, y in zip(a.tolist(), b.tolist())]
    np.testing.assert_array_equal(got, np.array(want, dtype=dtype))


# -- elided constants -------------------------------------------------------------------------------

ELIDED = """
func.func @main() -> tensor<64xf32> {
  %0 = stablehlo.constant dense_resource<__elided__> : tensor<64xf32>
  return %0 : tensor<64xf32>
}"""


def test_an_elided_constant_refuses_to_run_and_says_how_to_get_it():
    with pytest.raises(ExecutionError) as info:
        interpret(ELIDED)
    message = str(info.value)
    assert "were elided from the text" in message and "tensor<64xf32>" in message
    assert "--xla_dump_large_constants" in message and "short_parsable()" in message
    assert "--fill-elided random" in message
    assert info.value.line == 3


def test_an_elided_constant_verifies_prints_and_labels_without_its_elements():
    from hlodbg.engine.ir.attributes import ElidedElements, attribute_key
    from hlodbg.layouts.labels import key_attributes

    module = parse_module(ELIDED)
    verify(module)
    constant = module.functions["main"].body.operations[0]
    value = constant.attributes["value"]
    assert isinstance(value, ElidedElements) and value.type.shape == (64,)
    assert attribute_key(value) == attribute_key(ElidedElements(value.type))
    assert "dense_resource<__elided__> : tensor<64xf32>" in print_module(module)
    assert key_attributes(constant) == []


# -- ragged_all_to_all ----------------------------------------------------------------------------

RAGGED = """
func.func @main(%x: tensor<4xf32>, %out: tensor<5xf32>, %io: tensor<2xi32>, %ss: tensor<2xi32>,
                %oo: tensor<2xi32>, %rs: tensor<2xi32>) -> tensor<5xf32> {
  %0 = "hlo.ragged_all_to_all"(%x, %out, %io, %ss, %oo, %rs) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}
    : (tensor<4xf32>, tensor<5xf32>, tensor<2xi32>, tensor<2xi32>, tensor<2xi32>, tensor<2xi32>) -> tensor<5xf32>
  return %0 : tensor<5xf32>
}"""


def test_ragged_all_to_all_writes_each_sent_slice_where_its_sender_says():
    from hlodbg.engine.machine.process import ProcessId
    from hlodbg.engine.run.spmd import run_grid

    module = parse_module(RAGGED)
    verify(module)
    i32 = lambda *v: np.array(v, np.int32)  # noqa: E731
    out = np.full(5, -1, np.float32)
    # Replica 0 sends rows [0:1] to itself (at 0) and [1:4] to replica 1 (at 2);
    # replica 1 sends rows [0:2] to replica 0 (at 1) and [2:3] to itself (at 0).
    args = {
        ProcessId(0, 0): [np.array([10, 11, 12, 13], np.float32), out, i32(0, 1), i32(1, 3), i32(0, 2), i32(1, 2)],
        ProcessId(1, 0): [np.array([20, 21, 22, 23], np.float32), out, i32(0, 2), i32(2, 1), i32(1, 0), i32(3, 1)],
    }
    results = run_grid(module, args, num_replicas=2, num_partitions=1)
    np.testing.assert_array_equal(results[ProcessId(0, 0)][0], [10, 20, 21, -1, -1])
    np.testing.assert_array_equal(results[ProcessId(1, 0)][0], [22, -1, 11, 12, 13])


def test_ragged_all_to_all_with_recv_sizes_disagreeing_with_the_sender_is_refused():
    i32 = lambda *v: np.array(v, np.int32)  # noqa: E731
    text = RAGGED.replace("dense<[[0, 1]]> : tensor<1x2xi64>", "dense<[[0]]> : tensor<1x1xi64>")
    x, out = np.arange(4, dtype=np.float32), np.zeros(5, np.float32)
    (got,) = _run(text, x, out, i32(0, 2), i32(2, 2), i32(3, 0), i32(2, 2))
    np.testing.assert_array_equal(got, [2, 3, 0, 0, 1])
    with pytest.raises(ExecutionError, match="recv_sizes\\[0\\] = 1, but process .* sends 2 rows"):
        interpret(text, x, out, i32(0, 2), i32(2, 2), i32(3, 0), i32(1, 2))


# -- send / recv ----------------------------------------------------------------------------------

SEND_RECV = """
func.func @main(%a: tensor<3xf32>) -> tensor<3xf32> {
  %t = stablehlo.after_all : !stablehlo.token
  %s = "hlo.send"(%a, %t) {channel_handle = #stablehlo.channel_handle<handle = 5, type = 2>}
    : (tensor<3xf32>, !stablehlo.token) -> tuple<tensor<3xf32>, tensor<ui32>, !stablehlo.token>
  %sd = "hlo.send_done"(%s) : (tuple<tensor<3xf32>, tensor<ui32>, !stablehlo.token>) -> !stablehlo.token
  %r = "hlo.recv"(%sd) {channel_handle = #stablehlo.channel_handle<handle = 5, type = 3>}
    : (!stablehlo.token) -> tuple<tensor<3xf32>, tensor<ui32>, !stablehlo.token>
  %rd = "hlo.recv_done"(%r) : (tuple<tensor<3xf32>, tensor<ui32>, !stablehlo.token>) -> tuple<tensor<3xf32>, !stablehlo.token>
  %v = stablehlo.get_tuple_element %rd[0] : (tuple<tensor<3xf32>, !stablehlo.token>) -> tensor<3xf32>
  return %v : tensor<3xf32>
}"""


def test_recv_gets_what_send_sent_on_its_channel():
    a = np.array([1, 2, 3], np.float32)
    (got,) = _run(SEND_RECV, a)
    np.testing.assert_array_equal(got, a)


def test_recv_before_any_send_is_a_located_deadlock_error():
    text = SEND_RECV.replace("handle = 5, type = 3", "handle = 6, type = 3")
    with pytest.raises(ExecutionError, match="nothing was sent on channel 6") as info:
        interpret(text, np.zeros(3, np.float32))
    assert info.value.line == 7


def test_conditional_without_branches_is_refused():
    text = """
func.func @main(%i: tensor<i32>) -> () {
  "hlo.conditional"(%i) : (tensor<i32>) -> ()
  return
}"""
    with pytest.raises(VerifyError, match="needs at least one branch"):
        verify(parse_module(text))
