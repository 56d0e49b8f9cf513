"""What the CLI (`hlodbg explain`, stop reports) and the debugger share of an op instance: one
OpValues, one element-index parser, one walk of the frames (engine/debug)."""
from __future__ import annotations

import pytest

from hlodbg.engine.debug.op_values import ElementIndexError, OpValues, parse_element_index


def test_one_parser_reads_an_element_as_explain_prints_it_and_checks_a_shape_when_given():
    for text in ("1,0,2", "(1, 0, 2)", "[1,0,2]", " 1 , 0 , 2 "):
        assert parse_element_index(text) == (1, 0, 2) == parse_element_index(text, (2, 1, 3))
    assert parse_element_index("()") == parse_element_index("") == parse_element_index("[]", ()) == ()
    with pytest.raises(ElementIndexError, match=r"numbers separated by commas \(1,0,2\), not '1,x'"):
        parse_element_index("1,x")
    with pytest.raises(ElementIndexError, match=r"--at '2,0': index 2 of dimension 0 is outside the result's shape \[2, 3\]"):
        parse_element_index("2,0", (2, 3), option="--at", subject="result #0 of %5")
    with pytest.raises(ElementIndexError, match=r"'1' has 1 index\(es\) but result #0 of %5 has rank 2"):
        parse_element_index("1", (2, 3), subject="result #0 of %5")
    with pytest.raises(ElementIndexError, match=r"is a scalar \(type tensor<f32>\): give --at '\(\)'"):
        parse_element_index("0", (), option="--at", subject="result #0 of %m", type_text="tensor<f32>")


def test_the_cli_and_the_debugger_use_the_same_op_values_and_parser():
    from hlodbg import explaining
    from hlodbg.ui import commands, controller, teaching

    assert explaining.OpValues is OpValues and controller.OpValues is OpValues
    assert teaching.OpValues is OpValues  # what the panes read
    assert commands.parse_element_index is parse_element_index is explaining.parse_element_index


def test_the_frames_of_a_stop_are_the_frames_the_debugger_shows():
    import numpy as np

    import hlodbg

    program = hlodbg.load("""
func.func @main(%x: tensor<f32>) -> tensor<f32> {
  %r = func.call @f(%x) : (tensor<f32>) -> tensor<f32>
  return %r : tensor<f32>
}
func.func @f(%y: tensor<f32>) -> tensor<f32> {
  %z = stablehlo.sqrt %y : tensor<f32>
  return %z : tensor<f32>
}
""")
    session = program.session([np.float32(4)], persist=False)
    session.run_to(next(op for op in program.module.walk() if op.name == "stablehlo.sqrt"))
    frame = session.trace.frames[session.position]
    assert [f.function.sym_name for f in frame.chain()] == [info.function for info in session.stack] == ["main", "f"]
