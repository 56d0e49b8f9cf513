"""Constructs found in real HLO files (openxla/xla's tests, run through
benchmarks/hlo_real_files.py) that hlodbg mishandled: each re-typed here as a small module of our
own, with the behaviour XLA's parser and XLA:CPU show (../shared/docs/hlo_text.md §10)."""
from __future__ import annotations

import numpy as np
import pytest

import hlodbg
from hlodbg.engine.ir.errors import ExecutionError, ParseError
from hlodbg.engine.syntax.hlo.literals import parse_literal
from hlodbg.engine.syntax.hlo.parser import parse_hlo_modules


def test_all_gather_whose_result_needs_more_processes_than_the_grid_is_a_located_error():
    """An all-gather typed for four replicas in a module whose header says one (replica_groups={}):
    gathering the one process gives a quarter of the typed result, which must not flow on silently.
    (Without a replica_count the module runs on the four its types imply: test_hlo_xla_head.py.)"""
    text = """HloModule gather_four, replica_count=1
ENTRY main {
  x = f32[2,3] parameter(0)
  ROOT g = f32[2,12] all-gather(x), replica_groups={}, dimensions={1}
}
"""
    with pytest.raises(ExecutionError) as error:
        hlodbg.load(text).run(np.ones((2, 3), np.float32))
    message = str(error.value)
    assert ":4:" in message, message  # the all-gather's line
    assert "tensor<2x12xf32>" in message and "1 process" in message and "4 processes" in message, message


@pytest.mark.parametrize("element, text, expected", [
    ("bf16", "{-3.39e+38, 3.39e+38}", [-3.3895313892515355e+38, 3.3895313892515355e+38]),
    ("f16", "{-65505, 65519}", [-65504.0, 65504.0]),
    ("f32", "{-3.40282e+38, 3.40282e+38}", [-3.40282e+38, 3.40282e+38]),
    ("f8e4m3fn", "{460, -460}", [448.0, -448.0]),
])
def test_float_literals_beyond_the_largest_value_that_round_to_it_are_in_range(element, text, expected):
    """XLA's parser takes a float literal the type rounds to a finite value (its MinMaxValues test
    writes bf16 3.39e+38, past bf16's largest 3.3895e+38); only one that rounds to infinity (or,
    for types without infinity, to NaN) is out of range."""
    (module,) = parse_hlo_modules(f"ENTRY e {{\n  ROOT c = {element}[2] constant({text})\n}}\n", "min_max.hlo")
    constant = module.entry.root
    values = parse_literal(constant.literal, constant.literal_pos, constant.shape)
    np.testing.assert_allclose(values.astype(np.float64), expected, rtol=1e-6)


def test_omitted_shapes_of_nested_and_top_level_instructions_run_like_xla():
    """XLA's SimpleNesting, AmbiguousNames and TupleShapeInsideAnonymousInstr tests: instructions
    written without their shape, nested in operand lists or not (the lowering infers the shapes)."""
    text = """HloModule nesting
ENTRY e {
  sum = add(f32[3] parameter(0), f32[3] parameter(1))
  positive = compare(sum, maximum(sum, sum)), direction=GE
  both = tuple(sum, positive)
  ROOT first = get-tuple-element(tuple(multiply(sum, add(sum, sum)), both)), index=0
}
"""
    program = hlodbg.load(text)
    types = {v.name: str(v.type) for op in program.entry.ops for v in op.results}
    assert types["%positive"] == "tensor<3xi1>", types
    x, y = np.array([1, 2, 3], np.float32), np.array([1, 1, 1], np.float32)
    (result,) = program.run(x, y)
    np.testing.assert_array_equal(result, (x + y) * 2 * (x + y))


@pytest.mark.parametrize("text, line, col, message", [
    # XLA's PredecessorUndefined test: a control predecessor must be an instruction defined before.
    ("ENTRY e {\n  a = f32[] parameter(0)\n  b = f32[] negate(a), control-predecessors={%c}\n"
     "  ROOT c = f32[] exponential(a)\n}\n", 3, 46, "control predecessor 'c' is not defined before"),
    # XLA's ComputationShapeDoesNotMatchRootShape test: the signature's result shape is the root's.
    ("ENTRY e (a: f32[3]) -> f32[1] {\n  a = f32[3] parameter(0)\n  ROOT n = f32[3] negate(a)\n}\n",
     1, 24, "result shape f32[1] of computation 'e' is not the shape of its root 'n', f32[3]"),
])
def test_text_xla_refuses_for_its_names_and_signature_is_a_located_error(text, line, col, message):
    with pytest.raises(ParseError) as error:
        parse_hlo_modules(text, "bad.hlo")
    assert message in error.value.message and (error.value.line, error.value.col) == (line, col), error.value.render()


def test_a_signature_may_name_parameters_differently_and_omit_layouts():
    """What XLA accepts: signature names that differ from the parameter instructions' and shapes
    without the layouts the instructions carry (XLA checks only the result shape against the root)."""
    text = "ENTRY e (x: f32[2,3]) -> f32[2,3] {\n  a = f32[2,3]{0,1} parameter(0)\n  ROOT n = f32[2,3]{0,1} negate(a)\n}\n"
    (module,) = parse_hlo_modules(text, "ok.hlo")
    assert module.entry.root.name == "n"


@pytest.mark.parametrize("element, text", [("f64", "1.8e308"), ("f64", "{1, -1.8e308}"), ("c128", "(0, 1e309)")])
def test_f64_literals_past_the_largest_double_are_out_of_range(element, text):
    """XLA's ConstantF64Overflow test: `1.8e308` is not a double (Python would read it as inf)."""
    dims = "[2]" if text.startswith("{") else "[]"
    with pytest.raises(ParseError) as error:
        (module,) = parse_hlo_modules(f"ENTRY e {{\n  ROOT c = {element}{dims} constant({text})\n}}\n", "big.hlo")
        constant = module.entry.root
        parse_literal(constant.literal, constant.literal_pos, constant.shape)
    assert "out of range for f64" in error.value.message, error.value.render()


@pytest.mark.parametrize("eol", ["\r\n", "\r"])
def test_line_comments_end_at_any_line_ending(eol):
    """XLA's SlashSlashCommentMsDosEolFormat / MacEolFormat tests: `// ...` ends at a carriage
    return too, so old-Mac line endings do not swallow the rest of the module."""
    text = eol.join(["HloModule eol", "// header note", "ENTRY e {", "  // body note",
                     "  ROOT c = f32[2] constant({1, 2}) // trailing", "}"])
    (result,) = hlodbg.load(text).run()
    np.testing.assert_array_equal(result, [1, 2])


def test_omitted_shapes_of_dot_and_of_ops_calling_a_computation_are_inferred():
    """XLA's InferDotShape and InferShapeMixedExplicitShape tests: a dot's shape follows from its
    dimension numbers; call, fusion, conditional and while give their computation's root shape."""
    text = """HloModule infer
negate {
  x = f32[2] parameter(0)
  ROOT n = negate(x)
}
same {
  y = f32[2] parameter(0)
  ROOT c = copy(y)
}
ENTRY e {
  a = f32[3,2,5] parameter(0)
  b = f32[3,5,4] parameter(1)
  d = dot(a, b), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
  v = f32[2] parameter(2)
  p = pred[] parameter(3)
  k = call(v), to_apply=negate
  c = conditional(p, k, v), true_computation=negate, false_computation=same
  ROOT out = tuple(d, c)
}
"""
    program = hlodbg.load(text)
    types = {v.name: str(v.type) for op in program.entry.ops for v in op.results}
    assert (types["%d"], types["%k"], types["%c"]) == ("tensor<3x2x4xf32>", "tensor<2xf32>", "tensor<2xf32>"), types
    a, b = np.ones((3, 2, 5), np.float32), np.ones((3, 5, 4), np.float32)
    v = np.array([1, -2], np.float32)
    d, c = program.run(a, b, v, np.bool_(True))
    np.testing.assert_array_equal(d, np.full((3, 2, 4), 5, np.float32))
    np.testing.assert_array_equal(c, v)  # negate(negate(v))


def test_a_scalar_window_prints_no_window_attribute():
    """XLA's ReduceWindowScalar / SelectAndScatterScalar: a rank-0 window has no `window=`; the
    printer gave `window={size=}`, which neither parser reads back."""
    text = """HloModule scalar_windows
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ge {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=GE
}
ENTRY e {
  x = f32[] parameter(0)
  i = f32[] constant(1)
  r = f32[] reduce-window(x, i), to_apply=add
  ROOT s = f32[] select-and-scatter(r, x, i), select=ge, scatter=add
}
"""
    printed = hlodbg.load(text).to_text()
    assert "window=" not in printed, printed
    x = np.float32(3)
    assert hlodbg.load(printed).run(x) == hlodbg.load(text).run(x)
