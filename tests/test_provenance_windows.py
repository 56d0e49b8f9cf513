"""Element provenance of reduce_window and select_and_scatter, against the evaluator."""
from __future__ import annotations

import numpy as np
import pytest

import hlodbg
from hlodbg.engine.ops.provenance import ProvenanceError, provenance, reach

from tests.provenance_harness import check_provenance, op_under_test


def t(shape, element="f32"):
    return "tensor<" + "".join(f"{n}x" for n in shape) + element + ">"


def array(values):
    return "array<i64: " + ", ".join(map(str, values)) + ">"


def window_attrs(window, strides=None, base=None, dilations=None, padding=None) -> str:
    attrs = [f"window_dimensions = {array(window)}"]
    if strides:
        attrs.append(f"window_strides = {array(strides)}")
    if base:
        attrs.append(f"base_dilations = {array(base)}")
    if dilations:
        attrs.append(f"window_dilations = {array(dilations)}")
    if padding:
        rows = ", ".join(f"[{lo}, {hi}]" for lo, hi in padding)
        attrs.append(f"padding = dense<[{rows}]> : tensor<{len(padding)}x2xi64>")
    return ", ".join(attrs)


def reduce_window_program(shape, result_shape, body="add", inputs=1, **window) -> str:
    xs = [f"%x{k}: {t(shape)}" for k in range(inputs)]
    cs = [f"%c{k}: tensor<f32>" for k in range(inputs)]
    block = [f"%a{k}: tensor<f32>" for k in range(inputs)] + [f"%b{k}: tensor<f32>" for k in range(inputs)]
    lines = [f"    %s{k} = stablehlo.{body} %a{k}, %b{k} : tensor<f32>" for k in range(inputs)]
    outs = ", ".join([t(result_shape)] * inputs)
    name = f"%r:{inputs}" if inputs > 1 else "%r"
    returned = ", ".join(f"%r#{k}" for k in range(inputs)) if inputs > 1 else "%r"
    return f"""
func.func @main({", ".join(xs + cs)}) -> ({outs}) {{
  {name} = "stablehlo.reduce_window"({", ".join([f"%x{k}" for k in range(inputs)] + [f"%c{k}" for k in range(inputs)])}) <{{{window_attrs(**window)}}}> ({{
  ^bb0({", ".join(block)}):
{chr(10).join(lines)}
    stablehlo.return {", ".join(f"%s{k}" for k in range(inputs))} : {", ".join(["tensor<f32>"] * inputs)}
  }}) : ({", ".join([t(shape)] * inputs + ["tensor<f32>"] * inputs)}) -> ({outs})
  return {returned} : {outs}
}}"""


def run_results(text, *args) -> list:
    outputs = hlodbg.load(text).run(*args)
    return list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]


def values(*shape):
    return (np.arange(int(np.prod(shape)), dtype=np.float32) + 1).reshape(shape)


# -- reduce_window -----------------------------------------------------------------------------


def test_reduce_window_strides_and_padding():
    text = reduce_window_program((4, 5), (3, 3), window=(2, 3), strides=(2, 2), padding=((1, 1), (1, 1)))
    check_provenance(text, values(4, 5), np.float32(0.5))


def test_reduce_window_base_and_window_dilations_with_negative_padding():
    # dilated 4x3 → 7x5; padding (1, -1) and (-1, 2) → 7x6; window 2x2 dilated by 2 → span 3x3.
    text = reduce_window_program((4, 3), (3, 2), body="maximum", window=(2, 2), strides=(2, 2),
                                 base=(2, 2), dilations=(2, 2), padding=((1, -1), (-1, 2)))
    check_provenance(text, values(4, 3), np.float32(-3))


def test_reduce_window_with_a_general_body():
    # subtract is no reducer the evaluator folds with a ufunc: the body runs on each position in order.
    text = reduce_window_program((3, 3), (2, 2), body="subtract", window=(2, 2))
    check_provenance(text, values(3, 3), np.float32(2))
    op = op_under_test(hlodbg.load(text))
    x = values(3, 3)
    answer = provenance(op, (1, 0), operands=[x, np.float32(2)], results=run_results(text, x, np.float32(2)))
    assert answer.lines()[-2:] == [
        "the init values and the window's 4 operand element(s) of every input are combined in row-major order "
        "by the body, which may mix the inputs",
        "result(1, 0) = body(body(body(body(2, 4), 5), 7), 8) = -22",
    ]


def test_variadic_reduce_window_keeps_each_input_to_its_own_window():
    text = reduce_window_program((3, 4), (2, 2), inputs=2, window=(2, 2), padding=((0, 0), (1, 0)), strides=(1, 2))
    check_provenance(text, values(3, 4), values(3, 4) * -1, np.float32(0), np.float32(1))


def test_reduce_window_steps_name_padding_holes_and_elements():
    text = reduce_window_program((3,), (4,), window=(3,), base=(2,), padding=((1, 0),))
    op = op_under_test(hlodbg.load(text))
    x = np.array([1, 2, 4], np.float32)
    answer = provenance(op, (0,), operands=[x, np.float32(10)], results=run_results(text, x, np.float32(10)))
    assert answer.lines() == [
        "window of result(0): starts at padded position (0) = (0) × window_strides (1); window_dimensions (3), "
        "each position o at (0) + o × window_dilations (1)",
        "window position (0) → padded position (0): padding ((1, 0)), reads the init value",
        "window position (1) → padded position (1) → operand(0) (minus low padding (1), divided by base_dilations (2))",
        "window position (2) → padded position (2): a hole between the elements spread by base_dilations (2), "
        "reads the init value",
        "the init value and the window's 1 operand element(s) are combined in row-major order by the body (add)",
        "result(0) = add(add(add(10, 10), 1), 10) = 31",
    ]
    assert [(s.operand, s.index, s.role.en) for s in answer.sources] == [(1, (), "init value"), (0, (0,), "window element")]
    assert [(r.result, r.index) for r in reach(op, 0, (1,), operands=[x, np.float32(10)])] == [(0, (1,)), (0, (2,)), (0, (3,))]


# -- select_and_scatter ------------------------------------------------------------------------


def select_and_scatter_program(shape, source_shape, direction="GE", **window) -> str:
    return f"""
func.func @main(%x: {t(shape)}, %s: {t(source_shape)}, %c: tensor<f32>) -> {t(shape)} {{
  %0 = "stablehlo.select_and_scatter"(%x, %s, %c) <{{{window_attrs(**window)}}}> ({{
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %p = stablehlo.compare {direction}, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  }}, {{
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %r = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %r : tensor<f32>
  }}) : ({t(shape)}, {t(source_shape)}, tensor<f32>) -> {t(shape)}
  return %0 : {t(shape)}
}}"""


# Distinct values, so that which element a window selects never hangs on a tie.
POOLED = np.array([[3, 9, 1, 4], [7, 2, 8, 6], [5, 11, 0, 10]], np.float32)


def test_select_and_scatter_overlapping_windows():
    text = select_and_scatter_program((3, 4), (2, 3), window=(2, 2))
    check_provenance(text, POOLED, values(2, 3), np.float32(0.5))


def test_select_and_scatter_min_with_strides_and_padding():
    text = select_and_scatter_program((3, 4), (2, 2), direction="LT", window=(2, 3), strides=(2, 2),
                                      padding=((1, 0), (1, 0)))
    check_provenance(text, POOLED, values(2, 2), np.float32(-1))


def test_select_and_scatter_steps_name_the_selected_element():
    text = select_and_scatter_program((3, 4), (2, 3), window=(2, 2))
    op = op_under_test(hlodbg.load(text))
    operands = [POOLED, values(2, 3), np.float32(0.5)]
    answer = provenance(op, (1, 2), operands=operands, results=run_results(text, *operands))
    assert answer.lines() == [
        "result(1, 2) starts as the init value 0.5",
        "the window of source(0, 1) covers this element, but select picks operand(0, 1); "
        "without it, select would pick this element",
        "the window of source(0, 2) covers operand((0, 2), (0, 3), (1, 2), (1, 3)); select picks operand(1, 2), "
        "this element: source(0, 2) = 3 is scattered here",
        "the window of source(1, 1) covers this element, but select picks operand(2, 1); "
        "without it, select would pick this element",
        "the window of source(1, 2) covers this element, but select picks operand(2, 3); "
        "without it, select would pick this element",
        "1 window(s) select this element; their source elements are combined with the init value in source order "
        "by scatter (add)",
        "result(1, 2) = add(0.5, 3) = 3.5",
    ]
    compared = "compared by select"
    assert [(s.operand, s.index, s.role.en) for s in answer.sources] == [
        (2, (), "init value"), (0, (1, 2), compared), (0, (0, 1), compared),
        (0, (0, 2), compared), (0, (0, 3), compared), (0, (1, 3), compared), (1, (0, 2), "scattered source element"),
        (0, (2, 1), compared), (0, (2, 3), compared)]
    # Element (0, 0) is covered by one window, which picks 9 at (0, 1): raising 3 would win it.
    lone = provenance(op, (0, 0), operands=operands)
    assert [(s.operand, s.index) for s in lone.sources] == [(2, ()), (0, (0, 0))]


def test_select_and_scatter_with_a_body_hlodbg_cannot_read_says_so():
    text = select_and_scatter_program((3, 4), (2, 3), window=(2, 2)).replace(
        "%p = stablehlo.compare GE, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>",
        "%m = stablehlo.maximum %a, %b : tensor<f32>\n    %p = stablehlo.compare EQ, %m, %a : (tensor<f32>, tensor<f32>) -> tensor<i1>")
    op = op_under_test(hlodbg.load(text))
    with pytest.raises(ProvenanceError, match="select_and_scatter.*one comparison of its two arguments"):
        provenance(op, (0, 0), operands=[POOLED, values(2, 3), np.float32(0)])


def test_reduce_window_needs_no_values_and_data_dependent_ops_ask_for_a_run():
    text = reduce_window_program((4, 5), (3, 3), window=(2, 3), strides=(2, 2), padding=((1, 1), (1, 1)))
    op = op_under_test(hlodbg.load(text))
    answer = provenance(op, (2, 2))  # the window depends on the attributes alone
    assert [(s.operand, s.index) for s in answer.sources] == [(1, ()), (0, (3, 3)), (0, (3, 4))]
    assert [(r.result, r.index) for r in reach(op, 0, (0, 1))] == [(0, (0, 0)), (0, (0, 1))]
    pooled = op_under_test(hlodbg.load(select_and_scatter_program((3, 4), (2, 3), window=(2, 2))))
    with pytest.raises(ProvenanceError, match="run the program to this op first"):
        provenance(pooled, (0, 0))
