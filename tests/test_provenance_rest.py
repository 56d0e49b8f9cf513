"""Element provenance of the remaining families (linalg, control flow, hlo.*, constants), against the evaluators."""
from __future__ import annotations

import numpy as np
import pytest

import hlodbg
import tests.provenance_harness as harness
from hlodbg.engine.ops.provenance import provenance, reach

from tests.provenance_harness import check_provenance, op_under_test

RNG = np.random.default_rng(17)


def lines(text: str, at, *args, result: int = 0, lang: str = "en") -> list[str]:
    op = op_under_test(hlodbg.load(text))
    return provenance(op, at, result=result, operands=[np.asarray(a) for a in args]).lines(lang)


def sources(text: str, at, result: int = 0) -> list[tuple]:
    op = op_under_test(hlodbg.load(text))
    return [(s.operand, s.index) for s in provenance(op, at, result=result).sources]


# -- cholesky -----------------------------------------------------------------------------------


def cholesky_program(shape: str, lower: bool) -> str:
    t = f"tensor<{shape}xf64>"
    return f"""
func.func @main(%a: {t}) -> {t} {{
  %0 = stablehlo.cholesky %a, lower = {str(lower).lower()} : {t}
  return %0 : {t}
}}
"""


def positive_definite(n: int, batch: tuple = ()) -> np.ndarray:
    m = RNG.normal(size=batch + (n, n))
    return m @ np.swapaxes(m, -1, -2) + 4 * n * np.eye(n)


@pytest.fixture
def small_steps(monkeypatch):
    """Perturb by a small step: a large one makes a positive definite matrix indefinite, and XLA then
    fills the whole factor with NaN (every element would seem to depend on every other)."""
    monkeypatch.setattr(harness, "perturbations", lambda value, dtype, scale: [value + 0.25, value - 0.25])


@pytest.mark.parametrize("lower", [True, False])
def test_cholesky(small_steps, lower):
    check_provenance(cholesky_program("4x4", lower), positive_definite(4))
    check_provenance(cholesky_program("2x3x3", lower), positive_definite(3, (2,)))


def test_cholesky_reads_the_leading_block_and_the_row():
    text = cholesky_program("4x4", True)
    assert sources(text, (3, 1)) == [(0, (0, 0)), (0, (1, 0)), (0, (1, 1)), (0, (3, 0)), (0, (3, 1))]
    assert sources(text, (1, 3)) == []
    assert lines(text, (3, 1), positive_definite(4)) == [
        "result(3, 1) = (operand(3, 1) - Σ of the products of the factor's entries [3, 0..0]·[1, 0..0]) / the pivot of column 1",
        "it reads the lower triangle of operand() in rows and columns 0..1 and row 3 up to column 1: 5 element(s); "
        "the other triangle is never read",
        "if a pivot is not positive (the matrix is not positive definite), the whole factor is NaN",
    ]
    upper = cholesky_program("4x4", False)
    assert sources(upper, (1, 3)) == [(0, (0, 0)), (0, (0, 1)), (0, (1, 1)), (0, (0, 3)), (0, (1, 3))]
    assert lines(upper, (3, 1), positive_definite(4)) == [
        "result(3, 1) is below the diagonal, which the upper factor leaves 0: no operand element"]


# -- triangular_solve ---------------------------------------------------------------------------


def solve_program(left: bool, lower: bool, unit: bool, transpose: str, batch: str = "") -> str:
    ta, tb = f"tensor<{batch}3x3xf64>", f"tensor<{batch}{'3x2' if left else '2x3'}xf64>"
    return f"""
func.func @main(%a: {ta}, %b: {tb}) -> {tb} {{
  %0 = "stablehlo.triangular_solve"(%a, %b) {{left_side = {str(left).lower()}, lower = {str(lower).lower()}, unit_diagonal = {str(unit).lower()}, transpose_a = #stablehlo<transpose {transpose}>}} : ({ta}, {tb}) -> {tb}
  return %0 : {tb}
}}
"""


@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("unit,transpose", [(False, "NO_TRANSPOSE"), (True, "NO_TRANSPOSE"), (False, "TRANSPOSE"),
                                            (True, "ADJOINT")])
def test_triangular_solve(left, lower, unit, transpose):
    a = RNG.normal(size=(3, 3)) + 3 * np.eye(3)
    b = RNG.normal(size=(3, 2) if left else (2, 3))
    check_provenance(solve_program(left, lower, unit, transpose), a, b)


def test_triangular_solve_batched():
    a = RNG.normal(size=(2, 3, 3)) + 3 * np.eye(3)
    check_provenance(solve_program(False, True, False, "TRANSPOSE", "2x"), a, RNG.normal(size=(2, 2, 3)))


def test_triangular_solve_names_the_substitution():
    text = solve_program(True, True, True, "NO_TRANSPOSE")
    assert sources(text, (1, 0)) == [(1, (0, 0)), (1, (1, 0)), (0, (1, 0))]
    assert lines(text, (1, 0), np.eye(3), np.ones((3, 2))) == [
        "op(a)·x = b with a lower: result(1, 0) is x(1, 0) of the system M·x = rhs, M = a lower",
        "x(1, 0) = (rhs(1, 0) - Σ over the rows already solved of M·x) / M(1, 1): rows 0..1 of column 0 take part",
        "unit_diagonal: the diagonal of a is taken as 1 and never read",
        "it reads a at 1 position(s) of its lower triangle and b at (0, 0)  (1, 0)",
    ]
    # x·a^T = b with a upper: back substitution over the columns of b's row.
    assert sources(solve_program(False, False, False, "TRANSPOSE"), (1, 2)) == [
        (1, (1, 2)), (0, (2, 2))]


# -- fft ----------------------------------------------------------------------------------------


def fft_program(kind: str, operand: str, result: str, lengths: str) -> str:
    return f"""
func.func @main(%x: {operand}) -> {result} {{
  %0 = stablehlo.fft %x, type = {kind}, length = [{lengths}] : ({operand}) -> {result}
  return %0 : {result}
}}
"""


def complex_values(*shape) -> np.ndarray:
    return (RNG.normal(size=shape) + 1j * RNG.normal(size=shape)).astype(np.complex64)


@pytest.mark.parametrize("kind,operand,result,lengths,value", [
    ("FFT", "tensor<2x4xcomplex<f32>>", "tensor<2x4xcomplex<f32>>", "4", complex_values(2, 4)),
    ("IFFT", "tensor<2x2x3xcomplex<f32>>", "tensor<2x2x3xcomplex<f32>>", "2, 3", complex_values(2, 2, 3)),
    ("RFFT", "tensor<2x5xf32>", "tensor<2x3xcomplex<f32>>", "5", RNG.normal(size=(2, 5)).astype(np.float32)),
    ("IRFFT", "tensor<2x3xcomplex<f32>>", "tensor<2x5xf32>", "5", complex_values(2, 3)),
    ("IRFFT", "tensor<3x3xcomplex<f32>>", "tensor<3x4xf32>", "3, 4", complex_values(3, 3)),
])
def test_fft(kind, operand, result, lengths, value):
    check_provenance(fft_program(kind, operand, result, lengths), value)


def test_irfft_explains_the_hermitian_reading():
    text = fft_program("IRFFT", "tensor<3xcomplex<f32>>", "tensor<4xf32>", "4")
    assert lines(text, (1,), complex_values(3)) == [
        "IRFFT over the last 1 dimension(s) (fft_length (4)): result(1) = Σ over n of operand()[n] · exp(+2πi·k·n/N) / 4, k = 1",
        "every one of the 3 element(s) of that transformed block counts: each has a non-zero weight",
        "IRFFT reads a Hermitian spectrum: the last dimension stores bins 0..2 of 4, and bin k stands for bin 4-k too "
        "(its complex conjugate)",
        "the imaginary parts of bin 0 and bin 2 cannot appear in a real signal and are not used",
    ]


# -- batch_norm ---------------------------------------------------------------------------------


def norm_program(name: str, operands: str, results: str, shape: str, feature_index: int) -> str:
    tx, tf = f"tensor<{shape}xf32>", f"tensor<{shape.split('x')[feature_index]}xf32>"
    types = {"x": tx, "f": tf}
    args = ", ".join(f"%a{k}: {types[c]}" for k, c in enumerate(operands))
    outs = [types[c] for c in results]
    result_type = outs[0] if len(outs) == 1 else "(" + ", ".join(outs) + ")"
    name_results = "%0" if len(outs) == 1 else f"%0:{len(outs)}"
    returned = "%0" if len(outs) == 1 else ", ".join(f"%0#{k}" for k in range(len(outs)))
    return f"""
func.func @main({args}) -> {result_type} {{
  {name_results} = "stablehlo.{name}"({", ".join(f"%a{k}" for k in range(len(operands)))}) {{epsilon = 1.0e-03 : f32, feature_index = {feature_index} : i64}} : ({", ".join(types[c] for c in operands)}) -> {result_type}
  return {returned} : {", ".join(outs)}
}}
"""


def floats(*shape) -> np.ndarray:
    return RNG.normal(size=shape).astype(np.float32)


@pytest.mark.parametrize("shape,feature_index", [((2, 3), 1), ((2, 2, 3), 0), ((2, 3, 2), 2)])
def test_batch_norm_inference(shape, feature_index):
    n = shape[feature_index]
    text = norm_program("batch_norm_inference", "xffff", "x", "x".join(map(str, shape)), feature_index)
    check_provenance(text, floats(*shape), floats(n), floats(n), floats(n), np.abs(floats(n)) + 0.5)


@pytest.mark.parametrize("shape,feature_index", [((2, 3), 1), ((2, 2, 3), 0), ((1, 3), 1)])
def test_batch_norm_training(shape, feature_index):
    n = shape[feature_index]
    text = norm_program("batch_norm_training", "xff", "xff", "x".join(map(str, shape)), feature_index)
    check_provenance(text, floats(*shape), floats(n), floats(n))


@pytest.mark.parametrize("shape,feature_index", [((2, 3), 1), ((3, 2, 2), 0)])
def test_batch_norm_grad(shape, feature_index):
    n = shape[feature_index]
    text = norm_program("batch_norm_grad", "xfffx", "xff", "x".join(map(str, shape)), feature_index)
    check_provenance(text, floats(*shape), floats(n), floats(n), np.abs(floats(n)) + 0.5, floats(*shape))


def test_batch_norm_training_names_the_feature():
    text = norm_program("batch_norm_training", "xff", "xff", "2x3", 1)
    assert sources(text, (1,), result=1) == [(0, (0, 1)), (0, (1, 1))]
    assert lines(text, (0, 2), floats(2, 3), floats(3), floats(3)) == [
        "feature 2 (dimension feature_index 1): its 2 element(s) across the other dimensions give the batch mean and variance",
        "result(0, 2) = scale(2) · (operand(0, 2) - batch mean) / sqrt(batch variance + epsilon 0.001) + offset(2)",
    ]
    assert lines(text, (0, 2), floats(2, 3), floats(3), floats(3), lang="ja")[0] != lines(
        text, (0, 2), floats(2, 3), floats(3), floats(3))[0]


# -- control flow and constants -----------------------------------------------------------------

IF = """
func.func @main(%p: tensor<i1>, %x: tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>) {
  %y = stablehlo.negate %x : tensor<2x2xf32>
  %0:2 = "stablehlo.if"(%p) ({
    %c = stablehlo.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
    stablehlo.return %c, %y : tensor<2x2xf32>, tensor<2x2xf32>
  }, {
    %z = stablehlo.abs %y : tensor<2x2xf32>
    %w = stablehlo.add %z, %z : tensor<2x2xf32>
    stablehlo.return %y, %w : tensor<2x2xf32>, tensor<2x2xf32>
  }) : (tensor<i1>) -> (tensor<2x2xf32>, tensor<2x2xf32>)
  return %0#0, %0#1 : tensor<2x2xf32>, tensor<2x2xf32>
}
"""

X22 = np.array([[5.0, -6.0], [7.0, -8.0]], np.float32)


@pytest.mark.parametrize("pred", [True, False])
def test_if_reports_the_selector(pred):
    check_provenance(IF, np.array(pred), X22, op_name="stablehlo.if")


def test_if_says_what_the_taken_branch_returns():
    op = op_under_test(hlodbg.load(IF), "stablehlo.if")

    def said(pred, result):
        answer = provenance(op, (1, 0), result=result, operands=[np.array(pred)])
        assert [(s.operand, s.index, s.role.en) for s in answer.sources] == [(0, (), "branch selector")]
        return answer.lines()

    assert said(True, 0) == ["pred = true: the first branch (true_branch) runs",
                             "the branch returns a constant: result(1, 0) = 3"]
    assert said(True, 1)[1] == "the branch returns %y, defined outside the op (not one of its operands): result(1, 0) = %y(1, 0)"
    assert said(False, 1) == ["pred = false: the second branch (false_branch) runs",
                              "the branch computes result(1, 0) with its own ops (stablehlo.abs, stablehlo.add): "
                              "step into the branch to see which elements they read"]
    assert said(False, 1) != provenance(op, (1, 0), result=1, operands=[np.array(False)]).lines("hi")


CASE = """
func.func @main(%i: tensor<i32>) -> tensor<3xi32> {
  %0 = "stablehlo.case"(%i) ({
    %a = stablehlo.constant dense<[1, 2, 3]> : tensor<3xi32>
    stablehlo.return %a : tensor<3xi32>
  }, {
    %b = stablehlo.constant dense<[4, 5, 6]> : tensor<3xi32>
    stablehlo.return %b : tensor<3xi32>
  }, {
    %c = stablehlo.constant dense<[7, 8, 9]> : tensor<3xi32>
    stablehlo.return %c : tensor<3xi32>
  }) : (tensor<i32>) -> tensor<3xi32>
  return %0 : tensor<3xi32>
}
"""


@pytest.mark.parametrize("index", [0, 1])
def test_case(index):
    check_provenance(CASE, np.array(index, np.int32))


def test_case_out_of_range_runs_the_last_branch():
    assert lines(CASE, (2,), np.array(-4, np.int32)) == [
        "index = -4 is outside 0..2: the last branch, 2, runs", "the branch returns a constant: result(2) = 9"]


CONDITIONAL = """HloModule m

neg {
  a = f32[2] parameter(0)
  ROOT n = f32[2] negate(a)
}

same {
  ROOT a = f32[2] parameter(0)
}

ENTRY main {
  b = pred[] parameter(0)
  x = f32[2] parameter(1)
  y = f32[2] parameter(2)
  ROOT c = f32[2] conditional(b, x, y), true_computation=neg, false_computation=same
}
"""


def test_hlo_conditional_follows_the_branch_operand():
    x, y = np.array([1.0, 2.0], np.float32), np.array([3.0, 4.0], np.float32)
    check_provenance(CONDITIONAL, np.array(False), x, y)
    # The true branch computes from x: x is stepped into, not reported (held).
    check_provenance(CONDITIONAL, np.array(True), x, y, held=[1])
    op = op_under_test(hlodbg.load(CONDITIONAL))
    answer = provenance(op, (1,), operands=[np.array(False), x, y])
    assert [(s.operand, s.index) for s in answer.sources] == [(0, ()), (2, (1,))]
    assert answer.lines()[1] == "the branch returns its operand, operand 2 of the op: result(1) = %y(1)"


def test_optimization_barrier_and_constant():
    text = """
func.func @main(%x: tensor<2xf32>, %y: tensor<3xi32>) -> (tensor<2xf32>, tensor<3xi32>) {
  %0:2 = stablehlo.optimization_barrier %x, %y : tensor<2xf32>, tensor<3xi32>
  return %0#0, %0#1 : tensor<2xf32>, tensor<3xi32>
}
"""
    check_provenance(text, np.array([1.0, 2.0], np.float32), np.array([3, 4, 5], np.int32))
    constant = """
func.func @main() -> tensor<2x2xf32> {
  %0 = stablehlo.constant dense<[[1.5, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}
"""
    check_provenance(constant)
    assert lines(constant, (0, 0)) == ["a constant reads no operand: result(0, 0) = 1.5"]


# -- hlo.* --------------------------------------------------------------------------------------


def hlo_program(parameters: list[str], root: str) -> str:
    params = "\n".join(f"  p{k} = {shape} parameter({k})" for k, shape in enumerate(parameters))
    return f"HloModule m\n\nENTRY main {{\n{params}\n  ROOT r = {root}\n}}\n"


@pytest.mark.parametrize("operand,result,value", [
    ("f32[2,3]{0,1}", "f32[3,2]{1,0}", np.arange(6, dtype=np.float32).reshape(2, 3)),
    ("f32[2,3]{1,0}", "f32[6]{0}", np.arange(6, dtype=np.float32).reshape(2, 3)),
    ("f32[2,3,2]{1,2,0}", "f32[2,2,3]{2,1,0}", np.arange(12, dtype=np.float32).reshape(2, 3, 2)),
    ("u8[8]{0}", "u32[2]{0}", np.arange(1, 9, dtype=np.uint8)),
    ("u32[2]{0}", "u8[2,4]{1,0}", np.array([0x01020304, 0x05060708], np.uint32)),
    ("f32[4,4]{1,0:T(2,2)}", "f32[16]{0}", np.arange(16, dtype=np.float32).reshape(4, 4)),
    ("f32[3,2]{1,0:T(2,2)}", "f32[8]{0}", np.arange(6, dtype=np.float32).reshape(3, 2)),
])
def test_hlo_bitcast(operand, result, value):
    check_provenance(hlo_program([operand], f"{result} bitcast(p0)"), value)


def test_hlo_bitcast_names_the_bits():
    text = hlo_program(["u8[8]{0}"], "u32[2]{0} bitcast(p0)")
    assert lines(text, (1,)) == ["result(1) is slot 1 of the result's buffer in layout {0}: bits 32..63",
                                 "in the operand's layout {0} those bits hold operand (4)  (5)  (6)  (7)"]
    tiled = hlo_program(["f32[3,2]{1,0:T(2,2)}"], "f32[8]{0} bitcast(p0)")
    assert lines(tiled, (7,)) == ["result(7) is slot 7 of the result's buffer in layout {0}: bits 224..255",
                                  "1 slot(s) of those bits are padding of the operand's tiled layout: no element"]


def test_hlo_shuffle_and_pass_through_ops():
    value = np.arange(12, dtype=np.float32).reshape(3, 4)
    shuffle = hlo_program(["f32[3,4]"], "f32[3,4] shuffle(p0), dimensions={1,0}, mode=rotate, shifts={1,-1}")
    check_provenance(shuffle, value)
    assert lines(shuffle, (0, 3), value) == ["dimension 1 rotates left by 1: (3 + 1) mod 4 = 0",
                                             "dimension 0 rotates left by -1: (0 + -1) mod 3 = 2",
                                             "result(0, 3) = operand(2, 0)"]
    check_provenance(hlo_program(["f32[3,4]"], 'f32[3,4] domain(p0), domain={kind="sharding", '
                                 'entry={maximal device=0}, exit={maximal device=1}}'), value)
    dependency = """
func.func @main(%x: tensor<3xi32>) -> tensor<3xi32> {
  %t = stablehlo.after_all : !stablehlo.token
  %e = "hlo.add_dependency"(%x, %t) : (tensor<3xi32>, !stablehlo.token) -> tensor<3xi32>
  return %e : tensor<3xi32>
}
"""
    assert sources(dependency, (2,)) == [(0, (2,))]


def test_hlo_set_dimension_size():
    text = """
func.func @main(%a: tensor<4xf32>, %n: tensor<i32>) -> tensor<4xf32> {
  %0 = "hlo.set_dimension_size"(%a, %n) {dimension = 0 : i64} : (tensor<4xf32>, tensor<i32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
"""
    a = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
    check_provenance(text, a, np.array(2, np.int32), held=[1])
    assert lines(text, (3,), a, np.array(2, np.int32)) == [
        "dimension 0 is marked as holding 2 of its 4 elements; the array keeps every element: result(3) = operand(3)",
        "index 3 of dimension 0 is past the size 2: XLA treats the element as padding, hlodbg keeps operand(3)"]


# -- rng ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("distribution,a,b", [("UNIFORM", 1.0, 3.0), ("NORMAL", 1.0, 2.0)])
def test_rng(small_steps, distribution, a, b):
    text = f"""
func.func @main(%a: tensor<f32>, %b: tensor<f32>, %s: tensor<2xi64>) -> tensor<2x3xf32> {{
  %0 = stablehlo.rng %a, %b, %s, distribution = {distribution} : (tensor<f32>, tensor<f32>, tensor<2xi64>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}}
"""
    check_provenance(text, np.float32(a), np.float32(b), np.array([2, 3]), held=[2])
    assert [s.role.en for s in provenance(op_under_test(hlodbg.load(text)), (1, 2)).sources] == (
        ["lower bound a", "upper bound b"] if distribution == "UNIFORM" else ["mean a", "standard deviation b"])


@pytest.mark.parametrize("algorithm,words,out", [("THREE_FRY", 2, "2x3xui32"), ("PHILOX", 2, "5xui64"),
                                                 ("PHILOX", 3, "3xui32"), ("DEFAULT", 3, "2x2xui8")])
def test_rng_bit_generator(algorithm, words, out):
    state = f"tensor<{words}xui64>"
    text = f"""
func.func @main(%s: {state}) -> ({state}, tensor<{out}>) {{
  %0:2 = stablehlo.rng_bit_generator %s, algorithm = {algorithm} : ({state}) -> ({state}, tensor<{out}>)
  return %0#0, %0#1 : {state}, tensor<{out}>
}}
"""
    check_provenance(text, np.array([0x1234, 0xFFFFFFFFFFFFFFF0, 7][:words], np.uint64))
    op = op_under_test(hlodbg.load(text))
    if words == 3:
        answer = provenance(op, (2,), operands=[np.array([1, 2, 3], np.uint64)],
                            results=[np.array([1, 6, 3], np.uint64), None])
        assert answer.lines() == ["the counter's high word changes only by the carry out of its low word: "
                                  "output_state(2) = initial_state(2) + the carry of initial_state(1) + 4"]
        answer = provenance(op, (1,), operands=[np.array([1, 2, 3], np.uint64)],
                            results=[np.array([1, 6, 3], np.uint64), None])
        assert answer.lines() == ["the counter word advances past the blocks this op used: "
                                  "output_state(1) = initial_state(1) + 4 (mod 2^64)"]


# -- einsum, unary_einsum, dynamic_conv ---------------------------------------------------------


@pytest.mark.parametrize("config,lhs,rhs,out", [
    ("ab,bc->ac", (2, 3), (3, 2), (2, 2)),
    ("bij,bjk->bki", (2, 2, 3), (2, 3, 2), (2, 2, 2)),
    ("ab,c->abc", (2, 2), (3,), (2, 2, 3)),
    ("ab,cb->a", (2, 3), (2, 3), (2,)),
    ("...ab,...bc->...ac", (2, 2, 3), (2, 3, 2), (2, 2, 2)),
])
def test_einsum(config, lhs, rhs, out):
    def t(shape):
        return f"tensor<{'x'.join(map(str, shape))}xf32>"

    text = f"""
func.func @main(%a: {t(lhs)}, %b: {t(rhs)}) -> {t(out)} {{
  %0 = stablehlo.einsum %a, %b, config = "{config}" : ({t(lhs)}, {t(rhs)}) -> {t(out)}
  return %0 : {t(out)}
}}
"""
    check_provenance(text, floats(*lhs) + 3, floats(*rhs) + 3)


@pytest.mark.parametrize("config,shape,out", [("ii->i", (3, 3), (3,)), ("ijk->kj", (2, 3, 2), (2, 3)),
                                              ("ij->", (2, 3), ()), ("iji->j", (2, 3, 2), (3,))])
def test_unary_einsum(config, shape, out):
    t_in, t_out = (f"tensor<{'x'.join(map(str, s))}{'x' if s else ''}f32>" for s in (shape, out))
    text = f"""
func.func @main(%a: {t_in}) -> {t_out} {{
  %0 = stablehlo.unary_einsum %a, config = "{config}" : ({t_in}) -> {t_out}
  return %0 : {t_out}
}}
"""
    check_provenance(text, floats(*shape))


def test_einsum_lists_its_terms():
    text = """
func.func @main(%a: tensor<2x3xf32>, %b: tensor<3x2xf32>) -> tensor<2x2xf32> {
  %0 = stablehlo.einsum %a, %b, config = "ab,bc->ac" : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}
"""
    assert lines(text, (1, 0), np.ones((2, 3), np.float32), np.ones((3, 2), np.float32)) == [
        "einsum_config ab,bc->ac: result(1, 0) sets a=1, c=0; the sum runs over b=0..2",
        "b = 0: lhs(1, 0) · rhs(0, 0) = 1 · 1", "b = 1: lhs(1, 1) · rhs(1, 0) = 1 · 1",
        "b = 2: lhs(1, 2) · rhs(2, 0) = 1 · 1"]


def test_dynamic_conv_reads_its_low_padding():
    text = """
func.func @main(%x: tensor<1x4x3x2xf32>, %w: tensor<2x2x2x2xf32>, %p: tensor<2x2xi64>) -> tensor<1x3x2x2xf32> {
  %0 = "stablehlo.dynamic_conv"(%x, %w, %p) {dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>, window_strides = array<i64: 2, 2>, feature_group_count = 1 : i64, batch_group_count = 1 : i64} : (tensor<1x4x3x2xf32>, tensor<2x2x2x2xf32>, tensor<2x2xi64>) -> tensor<1x3x2x2xf32>
  return %0 : tensor<1x3x2x2xf32>
}
"""
    pad = np.array([[1, 1], [1, 0]], np.int64)
    check_provenance(text, floats(1, 4, 3, 2), floats(2, 2, 2, 2), pad, held=[2])
    op = op_under_test(hlodbg.load(text))
    answer = provenance(op, (0, 0, 0, 1), operands=[floats(1, 4, 3, 2), floats(2, 2, 2, 2), pad])
    assert [(s.operand, s.index) for s in answer.sources if s.operand == 2] == [(2, (0, 0)), (2, (1, 0))]


# -- facts: sizes, device ids, the rng state; cross-replica-sum ----------------------------------


def test_get_dimension_size_reads_no_element():
    text = """
func.func @main(%x: tensor<2x3xf32>) -> tensor<i32> {
  %0 = stablehlo.get_dimension_size %x, dim = 1 : (tensor<2x3xf32>) -> tensor<i32>
  return %0 : tensor<i32>
}
"""
    check_provenance(text, floats(2, 3))
    assert lines(text, ()) == ["result() is the size of dimension 1 of the operand's shape (2, 3): 3; "
                               "no element of the operand is read"]


def test_replica_id_names_the_device():
    from hlodbg.engine.machine.process import ProcessId

    text = """
func.func @main() -> tensor<ui32> {
  %0 = stablehlo.replica_id : tensor<ui32>
  return %0 : tensor<ui32>
}
"""
    check_provenance(text)
    op = op_under_test(hlodbg.load(text))
    assert provenance(op, (), process=ProcessId(1, 0)).lines() == [
        "result() is the replica_id of the device the op runs on, (replica 1, partition 0): 1; no operand is read"]


def test_cross_replica_sum_on_a_grid():
    from tests.provenance_grid_harness import check_grid_provenance
    from hlodbg.engine.machine.process import ProcessId

    text = """
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "stablehlo.cross-replica-sum"(%x) {replica_groups = dense<[[0, 2], [1, 3]]> : tensor<2x2xi64>} : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
"""
    inputs = {ProcessId(r, 0): [np.array([r + 1.0, 10.0 * r], np.float32)] for r in range(4)}
    check_grid_provenance(text, inputs, 4, 1)


def test_rng_state_reads_no_operand():
    text = """
func.func @main() -> tensor<2xui64> {
  %0 = "hlo.rng_get_and_update_state"() {delta = 4 : i64} : () -> tensor<2xui64>
  return %0 : tensor<2xui64>
}
"""
    check_provenance(text)
    assert lines(text, (1,)) == ["result(1) is a word of the run's random-number state counter (then advanced by "
                                 "delta 4): no operand is read"]


# -- chlo.ragged_dot ----------------------------------------------------------------------------


def ragged_program(lhs, rhs, out, groups, numbers: str) -> str:
    def t(shape, kind="f32"):
        return f"tensor<{'x'.join(map(str, shape))}x{kind}>"

    return f"""
func.func @main(%a: {t(lhs)}, %b: {t(rhs)}, %g: {t(groups, 'i64')}) -> {t(out)} {{
  %0 = "chlo.ragged_dot"(%a, %b, %g) {{ragged_dot_dimension_numbers = #chlo.ragged_dot<{numbers}>}} : ({t(lhs)}, {t(rhs)}, {t(groups, 'i64')}) -> {t(out)}
  return %0 : {t(out)}
}}
"""


NON_CONTRACTING = ("lhs_batching_dimensions = [], rhs_batching_dimensions = [], lhs_contracting_dimensions = [1], "
                   "rhs_contracting_dimensions = [1], lhs_ragged_dimensions = [0], rhs_group_dimensions = [0]")


@pytest.mark.parametrize("lhs,rhs,out,sizes,numbers", [
    ((5, 2), (3, 2, 2), (5, 2), [2, 1, 2], NON_CONTRACTING),
    ((5, 2), (3, 2, 2), (5, 2), [2, 1, 1], NON_CONTRACTING),
    ((2, 3, 2), (2, 2, 2, 2), (2, 3, 2), [1, 2],
     "lhs_batching_dimensions = [0], rhs_batching_dimensions = [1], lhs_contracting_dimensions = [2], "
     "rhs_contracting_dimensions = [2], lhs_ragged_dimensions = [1], rhs_group_dimensions = [0]"),
    ((2, 4), (4, 2), (2, 2, 2), [1, 3],
     "lhs_batching_dimensions = [], rhs_batching_dimensions = [], lhs_contracting_dimensions = [1], "
     "rhs_contracting_dimensions = [0], lhs_ragged_dimensions = [1], rhs_group_dimensions = []"),
    ((2, 2, 2), (2, 2, 2), (2, 2, 2), [1, 1],
     "lhs_batching_dimensions = [0], rhs_batching_dimensions = [0], lhs_contracting_dimensions = [2], "
     "rhs_contracting_dimensions = [1], lhs_ragged_dimensions = [0], rhs_group_dimensions = []"),
])
def test_ragged_dot(lhs, rhs, out, sizes, numbers):
    text = ragged_program(lhs, rhs, out, (len(sizes),), numbers)
    check_provenance(text, floats(*lhs) + 3, floats(*rhs) + 3, np.array(sizes, np.int64), held=[2])


def test_ragged_dot_names_the_group_of_a_row():
    text = ragged_program((5, 2), (3, 2, 2), (5, 2), (3,), NON_CONTRACTING)
    a, b = np.ones((5, 2), np.float32), np.ones((3, 2, 2), np.float32)
    said = lines(text, (2, 1), a, b, np.array([2, 1, 1]))
    assert said[0] == ("lhs dimension 0 is ragged: the groups hold rows 0: 0..1  1: 2..2  2: 3..3; row 2 is in group 1, "
                       "so it multiplies by rhs group 1 (rhs dimension 0)")
    assert said[1:] == ["k = 0: lhs(2, 0) · rhs(1, 0, 1) = 1 · 1", "k = 1: lhs(2, 1) · rhs(1, 1, 1) = 1 · 1"]
    assert lines(text, (4, 0), a, b, np.array([2, 1, 1]))[0].endswith("row 4 is in no group, so result(4, 0) = 0")


# -- custom_call annotations --------------------------------------------------------------------


@pytest.mark.parametrize("target", ["Sharding", "LayoutConstraint", "MoveToHost"])
def test_custom_call_annotations_pass_their_operand(target):
    text = f"""
func.func @main(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {{
  %0 = stablehlo.custom_call @{target}(%x) {{mhlo.sharding = "{{replicated}}"}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}}
"""
    check_provenance(text, floats(2, 3))


def test_custom_call_top_k_and_an_untraced_target():
    from hlodbg.engine.ops.provenance import ProvenanceError

    text = """
func.func @main(%x: tensor<2x4xf32>) -> (tensor<2x2xf32>, tensor<2x2xi32>) {
  %0:2 = stablehlo.custom_call @TopK(%x) : (tensor<2x4xf32>) -> (tensor<2x2xf32>, tensor<2x2xi32>)
  return %0#0, %0#1 : tensor<2x2xf32>, tensor<2x2xi32>
}
"""
    check_provenance(text, np.array([[3.0, 9.0, 1.0, 7.0], [2.0, 8.0, 6.0, 4.0]], np.float32))
    other = text.replace("@TopK", "@my_kernel")
    with pytest.raises(ProvenanceError, match="custom_call @my_kernel back to its operands .it can for @LayoutConstraint"):
        provenance(op_under_test(hlodbg.load(other)), (0, 0))


# -- hlo's element-wise ops (the element-wise category's answer) --------------------------------


def test_hlo_stochastic_convert_and_mulhi_read_the_same_index():
    convert = """
func.func @main(%x: tensor<4xf32>, %r: tensor<4xui32>) -> tensor<4xi8> {
  %0 = "hlo.stochastic_convert"(%x, %r) : (tensor<4xf32>, tensor<4xui32>) -> tensor<4xi8>
  return %0 : tensor<4xi8>
}
"""
    # Each random word decides its element's rounding (the bits here round some up, some down).
    check_provenance(convert, np.array([1.25, -2.5, 3.75, 0.5], np.float32),
                     np.array([1 << 30, 3 << 30, 1 << 31, 1 << 29], np.uint32))
    mulhi = """
func.func @main(%a: tensor<3xi32>, %b: tensor<3xi32>) -> tensor<3xi32> {
  %0 = "hlo.mulhi"(%a, %b) : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
  return %0 : tensor<3xi32>
}
"""
    check_provenance(mulhi, np.array([70000, -90000, 123456], np.int32), np.array([80000, 50000, -654321], np.int32))


def test_steps_speak_japanese_and_hindi():
    assert lines(CASE, (2,), np.array(-4, np.int32), lang="ja") == [
        "index = -4 は 0..2 の範囲外です：最後の分岐 2 が実行されます", "分岐は定数を返します：result(2) = 9"]
    text = cholesky_program("3x3", True)
    assert lines(text, (0, 2), positive_definite(3), lang="hi") == [
        "result(0, 2) विकर्ण के ऊपर है, जिसे निचला गुणनखंड 0 छोड़ देता है: कोई ऑपरेंड तत्व नहीं"]


def test_hlo_ragged_all_to_all_on_a_grid():
    from hlodbg.engine.machine.process import ProcessId
    from tests.provenance_grid_harness import check_grid_provenance

    text = """
func.func @main(%x: tensor<4x2xf32>, %out: tensor<5x2xf32>, %io: tensor<2xi32>, %ss: tensor<2xi32>,
                %oo: tensor<2xi32>, %rs: tensor<2xi32>) -> tensor<5x2xf32> {
  %0 = "hlo.ragged_all_to_all"(%x, %out, %io, %ss, %oo, %rs) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}
    : (tensor<4x2xf32>, tensor<5x2xf32>, tensor<2xi32>, tensor<2xi32>, tensor<2xi32>, tensor<2xi32>) -> tensor<5x2xf32>
  return %0 : tensor<5x2xf32>
}"""

    def i32(*v):
        return np.array(v, np.int32)

    # Replica 0 sends rows [0:1] to itself (at 0) and [1:4] to replica 1 (at 2);
    # replica 1 sends rows [0:2] to replica 0 (at 1) and [2:3] to itself (at 0).
    inputs = {
        ProcessId(0, 0): [floats(4, 2) + 10, floats(5, 2) - 10, i32(0, 1), i32(1, 3), i32(0, 2), i32(1, 2)],
        ProcessId(1, 0): [floats(4, 2) + 20, floats(5, 2) - 20, i32(0, 2), i32(2, 1), i32(1, 0), i32(3, 1)],
    }
    check_grid_provenance(text, inputs, 2, 1, held=(2, 3, 4, 5))


def test_cholesky_pivot_is_a_square_root():
    assert lines(cholesky_program("3x3", True), (2, 2), positive_definite(3))[0] == (
        "result(2, 2) = sqrt(operand(2, 2) - Σ of the squares of the factor's entries [2, 0..1]): the pivot of column 2")
