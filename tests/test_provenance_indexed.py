"""Element provenance of gather, dynamic_gather, torch_index_select and scatter, against the evaluator."""
from __future__ import annotations

import numpy as np

import hlodbg
from hlodbg.engine.ops.provenance import provenance, reach

from tests.provenance_harness import check_provenance, op_under_test


def _ints(values) -> str:
    return "[" + ", ".join(map(str, values)) + "]"


def gather_program(operand_shape, indices_shape, result_shape, offset, collapsed, sim, ivd, sizes,
                   operand_batching=(), indices_batching=()) -> str:
    def t(shape, element):
        return "tensor<" + "".join(f"{n}x" for n in shape) + element + ">"

    attrs = (f"dimension_numbers = #stablehlo.gather<offset_dims = {_ints(offset)}, "
             f"collapsed_slice_dims = {_ints(collapsed)}, operand_batching_dims = {_ints(operand_batching)}, "
             f"start_indices_batching_dims = {_ints(indices_batching)}, start_index_map = {_ints(sim)}, "
             f"index_vector_dim = {ivd}>, slice_sizes = array<i64: {', '.join(map(str, sizes))}>")
    x, i, r = t(operand_shape, "f32"), t(indices_shape, "i32"), t(result_shape, "f32")
    return f"""
func.func @main(%x: {x}, %i: {i}) -> {r} {{
  %0 = "stablehlo.gather"(%x, %i) {{{attrs}}} : ({x}, {i}) -> {r}
  return %0 : {r}
}}"""


def values(*shape):
    return (np.arange(int(np.prod(shape)), dtype=np.float32) + 1).reshape(shape)


# -- gather ------------------------------------------------------------------------------------

ROWS = gather_program((4, 3), (2, 1), (2, 2), offset=[1], collapsed=[0], sim=[0], ivd=1, sizes=[1, 2])


def test_gather_collapsed_rows_with_a_clamped_start():
    check_provenance(ROWS, values(4, 3), np.array([[5], [1]], np.int32), held=(1,))


def test_gather_index_vector_dim_first_and_a_negative_start():
    text = gather_program((3, 4, 2), (2, 3), (2, 3, 2), offset=[0, 2], collapsed=[1], sim=[1, 0], ivd=0,
                          sizes=[2, 1, 2])
    indices = np.array([[0, 3, -2], [1, 7, 0]], np.int32)
    check_provenance(text, values(3, 4, 2), indices, held=(1,))


def test_gather_batching_dims():
    text = gather_program((2, 5, 3), (2, 2, 1), (2, 2, 2), offset=[2], collapsed=[1], sim=[1], ivd=2,
                          sizes=[1, 1, 2], operand_batching=[0], indices_batching=[0])
    indices = np.array([[[4], [0]], [[2], [9]]], np.int32)
    check_provenance(text, values(2, 5, 3), indices, held=(1,))


def test_gather_implicit_index_vector_and_offset_before_batch():
    text = gather_program((5, 2), (3,), (2, 3), offset=[0], collapsed=[0], sim=[0], ivd=1, sizes=[1, 2])
    check_provenance(text, values(5, 2), np.array([4, 0, 2], np.int32), held=(1,))


def test_gather_steps_show_the_clamp_with_numbers():
    op = op_under_test(hlodbg.load(ROWS))
    x, idx = values(4, 3), np.array([[5], [1]], np.int32)
    answer = provenance(op, (0, 1), operands=[x, idx])
    assert answer.lines() == [
        "result(0, 1): batch index (0) (result dimensions (0)), offset (1) (offset_dims (1))",
        "start_indices(0, :) = (5): the index vector of batch index (0) (index_vector_dim = 1)",
        "start_index_map[0] = 0: start along operand dimension 0 = clamp(idx(0, 0) = 5, 0, 3) → 3",
        "offset (1) → full offset (0, 1): 0 at collapsed_slice_dims (0) and operand_batching_dims ()",
        "result(0, 1) = operand[start=(clamp(idx(0, 0) = 5) → 3, 0) + offset (0, 1)] = operand(3, 1)",
    ]
    assert [(s.operand, s.index, s.role.en) for s in answer.sources] == [
        (1, (0, 0), "start index"), (0, (3, 1), "gathered element")]
    assert "clamp(idx(0, 0) = 5, 0, 3) → 3" in answer.steps[2].say("ja")
    assert [(r.result, r.index) for r in reach(op, 0, (3, 1), operands=[x, idx])] == [(0, (0, 1))]
    assert reach(op, 0, (3, 2), operands=[x, idx]) == []  # column 2 lies outside every slice
    assert [(r.result, r.index) for r in reach(op, 1, (1, 0), operands=[x, idx])] == [(0, (1, 0)), (0, (1, 1))]


def test_dynamic_gather_and_torch_index_select():
    text = """
func.func @main(%x: tensor<4x3xf32>, %i: tensor<2x1xi32>, %s: tensor<2xi64>) -> tensor<2x2xf32> {
  %0 = "stablehlo.dynamic_gather"(%x, %i, %s) {dimension_numbers = #stablehlo.gather<offset_dims = [1],
      collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>} :
      (tensor<4x3xf32>, tensor<2x1xi32>, tensor<2xi64>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}"""
    check_provenance(text, values(4, 3), np.array([[2], [-1]], np.int32), np.array([1, 2]), held=(1, 2))
    select = """
func.func @main(%x: tensor<2x3x4xf32>, %i: tensor<2x2xi32>) -> tensor<2x3x2xf32> {
  %0 = "stablehlo.torch_index_select"(%x, %i) {dim = 2 : i64, batch_dims = 1 : i64} :
      (tensor<2x3x4xf32>, tensor<2x2xi32>) -> tensor<2x3x2xf32>
  return %0 : tensor<2x3x2xf32>
}"""
    check_provenance(select, values(2, 3, 4), np.array([[3, 0], [9, 1]], np.int32), held=(1,))


# -- scatter -----------------------------------------------------------------------------------


def scatter_program(input_shapes, indices_shape, update_shape, dn: str, body: str, element="f32") -> str:
    def t(shape):
        return "tensor<" + "".join(f"{n}x" for n in shape) + element + ">"

    n = len(input_shapes)
    inputs = [t(s) for s in input_shapes]
    idx = "tensor<" + "".join(f"{k}x" for k in indices_shape) + "i32>"
    updates = [t(update_shape)] * n
    params = [f"%x{k}: {ty}" for k, ty in enumerate(inputs)] + [f"%i: {idx}"] + \
             [f"%u{k}: {ty}" for k, ty in enumerate(updates)]
    operands = [f"%x{k}" for k in range(n)] + ["%i"] + [f"%u{k}" for k in range(n)]
    block = [f"%a{k}: tensor<{element}>" for k in range(n)] + [f"%b{k}: tensor<{element}>" for k in range(n)]
    name = f"%r:{n}" if n > 1 else "%r"
    returned = ", ".join(f"%r#{k}" for k in range(n)) if n > 1 else "%r"
    results = ", ".join(inputs)
    return f"""
func.func @main({", ".join(params)}) -> ({results}) {{
  {name} = "stablehlo.scatter"({", ".join(operands)}) ({{
  ^bb0({", ".join(block)}):
{body}
  }}) {{scatter_dimension_numbers = #stablehlo.scatter<{dn}>}} : ({", ".join(inputs + [idx] + updates)}) -> ({results})
  return {returned} : {results}
}}"""


ADD = """    %s = stablehlo.add %a0, %b0 : tensor<f32>
    stablehlo.return %s : tensor<f32>"""
OVERWRITE = "    stablehlo.return %b0 : tensor<f32>"
ROW_DN = ("update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], "
          "index_vector_dim = 1")


def test_scatter_add_with_duplicates():
    # Rows 1 and 3 take two updates each; row 0 none.
    text = scatter_program([(4, 2)], (3, 1), (3, 2), ROW_DN, ADD)
    check_provenance(text, values(4, 2), np.array([[1], [3], [1]], np.int32), values(3, 2) * 10, held=(1,))


def test_scatter_overwrite_keeps_the_last_update():
    text = scatter_program([(4, 2)], (3, 1), (3, 2), ROW_DN, OVERWRITE)
    check_provenance(text, values(4, 2), np.array([[1], [3], [1]], np.int32), values(3, 2) * 10, held=(1,))


# Windows of 2x2 at (row, column) starts; (3, 1) and (-1, 0) do not fit in a 4x3 operand.
WINDOW_DN = ("update_window_dims = [1, 2], scatter_dims_to_operand_dims = [0, 1], index_vector_dim = 1")
WINDOW_STARTS = np.array([[0, 0], [3, 1], [1, 1], [-1, 0]], np.int32)


def test_scatter_skips_windows_out_of_bounds():
    text = scatter_program([(4, 3)], (4, 2), (4, 2, 2), WINDOW_DN, ADD)
    check_provenance(text, values(4, 3), WINDOW_STARTS, values(4, 2, 2) * 10, held=(1,))


def test_scatter_steps_list_each_update_in_order_and_the_skipped_window():
    text = scatter_program([(4, 3)], (4, 2), (4, 2, 2), WINDOW_DN, ADD)
    op = op_under_test(hlodbg.load(text))
    x, u = values(4, 3), values(4, 2, 2) * 10
    outputs = hlodbg.load(text).run(x, WINDOW_STARTS, u)
    results = list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]
    answer = provenance(op, (1, 1), operands=[x, WINDOW_STARTS, u], results=results)
    assert answer.lines() == [
        "result #0(1, 1) starts as the original value of input #0: 5",
        "update(0, 1, 1) lands here: batch index (0), scatter_indices(0, :) = (0, 0) (window start (0, 0)), "
        "window offset (1, 1)",
        "update(2, 0, 0) lands here: batch index (2), scatter_indices(2, :) = (1, 1) (window start (1, 1)), "
        "window offset (0, 0)",
        "2 update(s) land here, combined with the original value in this order by update_computation (add)",
        "result(1, 1) = add(add(5, 40), 90) = 135",
    ]
    assert [(s.operand, s.index, s.role.en) for s in answer.sources] == [
        (0, (1, 1), "original value"),
        (1, (0, 0), "scatter index"), (1, (0, 1), "scatter index"), (2, (0, 1, 1), "update"),
        (1, (2, 0), "scatter index"), (1, (2, 1), "scatter index"), (2, (2, 0, 0), "update"),
    ]
    skipped = provenance(op, (3, 1), operands=[x, WINDOW_STARTS, u])
    assert skipped.lines()[1] == ("update(1, 0, 0) would land here, but its window (start (3, 1), size (2, 2)) "
                                  "does not fit in the operand shape (4, 3): skipped")
    assert [s.role.en for s in skipped.sources] == ["original value"]
    assert [(r.result, r.index) for r in reach(op, 2, (2, 1, 1), operands=[x, WINDOW_STARTS, u])] == [(0, (2, 2))]
    assert reach(op, 2, (1, 0, 0), operands=[x, WINDOW_STARTS, u]) == []


def test_scatter_batching_dims_and_index_vector_dim_first():
    dn = ("update_window_dims = [1], inserted_window_dims = [1], input_batching_dims = [0], "
          "scatter_indices_batching_dims = [1], scatter_dims_to_operand_dims = [1], index_vector_dim = 0")
    text = scatter_program([(2, 3, 2)], (1, 2), (2, 2), dn, ADD)
    # update row b goes to input[b, idx[0, b], :]
    check_provenance(text, values(2, 3, 2), np.array([[2, 0]], np.int32), values(2, 2) * 10, held=(1,))


def test_variadic_scatter_keeps_each_input_to_its_own_updates():
    body = """    %s = stablehlo.maximum %a0, %b0 : tensor<f32>
    %t = stablehlo.maximum %a1, %b1 : tensor<f32>
    stablehlo.return %s, %t : tensor<f32>, tensor<f32>"""
    text = scatter_program([(3, 2), (3, 2)], (2, 1), (2, 2), ROW_DN, body)
    check_provenance(text, values(3, 2), values(3, 2) * 0.5, np.array([[2], [2]], np.int32),
                     values(2, 2), values(2, 2) - 3, held=(2,))


def test_scatter_with_a_general_body_combines_in_update_order():
    body = """    %d = stablehlo.subtract %a0, %b0 : tensor<f32>
    %h = stablehlo.multiply %d, %d : tensor<f32>
    stablehlo.return %h : tensor<f32>"""
    text = scatter_program([(3, 2)], (3, 1), (3, 2), ROW_DN, body)
    check_provenance(text, values(3, 2), np.array([[0], [2], [0]], np.int32), values(3, 2) * 0.25, held=(1,))
