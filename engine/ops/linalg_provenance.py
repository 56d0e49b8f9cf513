"""Element provenance of linalg.py's ops: cholesky, triangular_solve, fft and the batch_norm ops.

These ops are not index arithmetic: a result element is a (non-linear) function of a whole set
of operand elements, so the answer is that set — the part of the matrix a factorisation or a
substitution has read by the time it writes the element, the transformed rows of an FFT, the
feature's elements across the batch and spatial dimensions of a batch norm — and the steps say
why, with the recurrence that reads it.

The sets are those of values in general position. Two value-dependent exceptions are stated in
the steps rather than in the sets: cholesky of a matrix that is not positive definite is NaN
everywhere (XLA CPU's expander, see linalg.py), and a batch_norm_grad product whose other factor
is exactly 0 stops depending on the element it multiplies.
"""
from __future__ import annotations

import itertools
from typing import Sequence

from ..ir.phrases import Phrase, field_text
from .provenance import ProvenanceQuery, Reached, Source, explains, reaches

MATRIX_ELEMENT = Phrase("matrix element")
DIAGONAL_ELEMENT = Phrase("diagonal element")
RIGHT_HAND_SIDE = Phrase("right-hand side element")
TRANSFORMED_ELEMENT = Phrase("transformed element")
FEATURE_ELEMENT = Phrase("element of the same feature")
SCALE = Phrase("scale")
OFFSET = Phrase("offset")
MEAN = Phrase("mean")
VARIANCE = Phrase("variance")
GRADIENT = Phrase("output gradient")

CHOLESKY_ZERO = {
    True: Phrase("result{index} is above the diagonal, which the lower factor leaves 0: no operand element"),
    False: Phrase("result{index} is below the diagonal, which the upper factor leaves 0: no operand element")}
CHOLESKY_PIVOT = Phrase("result{index} = sqrt(operand{index} - Σ of the squares of the factor's entries {before}): "
                        "the pivot of column {column}")
CHOLESKY_ENTRY = Phrase("result{index} = (operand{index} - Σ of the products of the factor's entries {before}) / "
                        "the pivot of column {column}")
CHOLESKY_READS = {True: Phrase("it reads the lower triangle of operand{batch} in rows and columns 0..{column} and row "
                               "{row} up to column {column}: {count} element(s); the other triangle is never read"),
                  False: Phrase("it reads the upper triangle of operand{batch} in rows and columns 0..{column} and "
                                "column {row} down to row {column}: {count} element(s); "
                                "the other triangle is never read")}
CHOLESKY_NOT_DEFINITE = Phrase("if a pivot is not positive (the matrix is not positive definite), "
                               "the whole factor is NaN")
SOLVE_FORM = Phrase("{equation} with {matrix} {triangle}: result{index} is x{x} of the system M·x = rhs, "
                    "M = {matrix} {triangle}")
SOLVE_ROW = Phrase("x{x} = (rhs{x} - Σ over the rows already solved of M·x) / M{diagonal}: rows {first}..{last} of "
                   "column {column} take part")
SOLVE_UNIT = Phrase("unit_diagonal: the diagonal of a is taken as 1 and never read")
SOLVE_READS = Phrase("it reads a at {a_count} position(s) of its {triangle} triangle and b at {b_elements}")
FFT_FORM = Phrase("{kind} over the last {rank} dimension(s) (fft_length {lengths}): result{index} = "
                  "Σ over n of operand{batch}[n] · exp({sign}2πi·k·n/N){scale}, k = {k}")
FFT_READS = Phrase("every one of the {count} element(s) of that transformed block counts: each has a non-zero weight")
IRFFT_HERMITIAN = Phrase("IRFFT reads a Hermitian spectrum: the last dimension stores bins 0..{half} of {length}, and "
                         "bin k stands for bin {length}-k too (its complex conjugate)")
IRFFT_IMAGINARY = Phrase("the imaginary part of bin 0 cannot appear in a real signal and is not used")
IRFFT_IMAGINARY_NYQUIST = Phrase("the imaginary parts of bin 0 and bin {nyquist} cannot appear in a real signal "
                                 "and are not used")
NORM_INFERENCE = Phrase("result{index} = scale{f} · (operand{index} - mean{f}) / "
                        "sqrt(variance{f} + epsilon {epsilon}) "
                        "+ offset{f}, feature {feature} (dimension feature_index {dim})")
NORM_TRAINING = Phrase("feature {feature} (dimension feature_index {dim}): its {count} element(s) across the other "
                       "dimensions give the batch mean and variance")
NORM_TRAINING_OUTPUT = Phrase("result{index} = scale{f} · (operand{index} - batch mean) / sqrt(batch variance + "
                              "epsilon {epsilon}) + offset{f}")
NORM_TRAINING_ALONE = Phrase("feature {feature} has one element: it is its own mean, so result{index} = offset{f}")
NORM_ALONE_VARIANCE = Phrase("feature {feature} has one element: its batch variance is always 0")
NORM_BATCH_STATISTIC = Phrase("{statistic}{f} is computed from the {count} element(s) of feature {feature}")
NORM_GRAD_OPERAND = Phrase("grad_operand{index} = scale{f} / sqrt(variance{f} + epsilon) / {count} · "
                           "({count}·grad_output{index} "
                           "- Σ grad_output - Σ grad_output·(operand - mean{f}) · (operand{index} - mean{f}) / "
                           "(variance{f} + epsilon)), sums over the {count} element(s) of feature {feature}")
NORM_GRAD_SCALE = Phrase("grad_scale{f} = Σ grad_output · (operand - mean{f}) / sqrt(variance{f} + epsilon) over the "
                         "{count} element(s) of feature {feature}")
NORM_GRAD_OFFSET = Phrase("grad_offset{f} = Σ grad_output over the {count} element(s) of feature {feature}")


# -- cholesky -----------------------------------------------------------------------------------


@explains("stablehlo.cholesky")
def cholesky_provenance(q: ProvenanceQuery):
    """lower: l[i, j] (i ≥ j) = (a[i, j] - Σ_{k<j} l[i, k]·l[j, k]) / l[j, j], l[j, j]² = a[j, j] - Σ l[j, k]².

    So l[i, j] reads the lower triangle of a's leading (j+1)×(j+1) block and a[i, 0..j]. upper is
    the same on the transposed indices (u = l^H of a's upper triangle read as lower).
    """
    lower = bool(q.attr("lower", False))
    *batch, row, column = q.index
    batch = tuple(batch)
    # Work in the lower factor's indices: (i, j) with i ≥ j.
    i, j = (row, column) if lower else (column, row)
    if i < j:
        return q.answer([], [(CHOLESKY_ZERO[lower], {"index": q.index})])
    read = [(p, k) for p in range(j + 1) for k in range(p + 1)]
    if i > j:
        read += [(i, k) for k in range(j + 1)]

    def at(p: int, k: int) -> tuple:
        return batch + ((p, k) if lower else (k, p))

    sources = [Source(0, at(p, k), DIAGONAL_ELEMENT if p == k else MATRIX_ELEMENT) for p, k in read]
    if j == 0:
        before = "-"
    elif i == j:
        before = f"[{j}, 0..{j - 1}]" if lower else f"[0..{j - 1}, {j}]"
    else:
        before = f"[{i}, 0..{j - 1}]·[{j}, 0..{j - 1}]" if lower else f"[0..{j - 1}, {i}]·[0..{j - 1}, {j}]"
    steps = [(CHOLESKY_PIVOT if i == j else CHOLESKY_ENTRY, {"index": q.index, "before": before, "column": j}),
             (CHOLESKY_READS[lower], {"batch": batch, "column": j, "row": i, "count": len(sources)}),
             (CHOLESKY_NOT_DEFINITE, {})]
    return q.answer(sources, steps)


# -- triangular_solve ---------------------------------------------------------------------------


def _solve_form(q: ProvenanceQuery) -> tuple[bool, bool]:
    """(M is lower, M[r, k] is a[k, r]) for the system M·x = rhs that triangular_solve solves.

    op(a) is a, a^T or a^H (transpose_a); `x·op(a) = b` (not left_side) is `op(a)^T·x^T = b^T`.
    Each transposition turns a lower matrix into an upper one.
    """
    lower, transposed = bool(q.attr("lower")), False
    if str(q.attr("transpose_a", "NO_TRANSPOSE")) != "NO_TRANSPOSE":
        lower, transposed = not lower, not transposed
    if not bool(q.attr("left_side")):
        lower, transposed = not lower, not transposed
    return lower, transposed


@explains("stablehlo.triangular_solve")
def triangular_solve_provenance(q: ProvenanceQuery):
    """Forward (M lower) or back (M upper) substitution: x[i] reads rhs and M in rows up to i (or from i)."""
    left, unit = bool(q.attr("left_side")), bool(q.attr("unit_diagonal"))
    m_lower, transposed = _solve_form(q)
    *batch, row, column = q.index
    batch = tuple(batch)
    i, c = (row, column) if left else (column, row)  # x is a column system: x[i, c]
    m = q.operand_shape(0)[-1]
    rows = range(i + 1) if m_lower else range(i, m)

    def a_at(r: int, k: int) -> tuple:
        return batch + ((k, r) if transposed else (r, k))

    def b_at(r: int) -> tuple:
        return batch + ((r, c) if left else (c, r))

    a_read = [(r, k) for r in rows for k in (range(rows.start, r + 1) if m_lower else range(r, rows.stop))
              if not (unit and r == k)]
    sources = [Source(1, b_at(r), RIGHT_HAND_SIDE) for r in rows]
    sources += [Source(0, a_at(r, k), DIAGONAL_ELEMENT if r == k else MATRIX_ELEMENT) for r, k in a_read]
    transpose = str(q.attr("transpose_a", "NO_TRANSPOSE"))
    matrix = {"NO_TRANSPOSE": "a", "TRANSPOSE": "a^T", "ADJOINT": "a^H"}.get(transpose, transpose)
    if not left:
        matrix = f"({matrix})^T"
    equation = "op(a)·x = b" if left else "x·op(a) = b, i.e. op(a)^T·x^T = b^T"
    steps = [(SOLVE_FORM, {"equation": equation, "matrix": matrix, "triangle": "lower" if m_lower else "upper",
                           "index": q.index, "x": (i, c)}),
             (SOLVE_ROW, {"x": (i, c), "diagonal": (i, i), "first": rows.start, "last": rows.stop - 1, "column": c})]
    if unit:
        steps.append((SOLVE_UNIT, {}))
    b_elements = "  ".join(field_text(b_at(r)) for r in rows)
    steps.append((SOLVE_READS, {"a_count": len(a_read), "triangle": "lower" if bool(q.attr("lower")) else "upper",
                                "b_elements": b_elements}))
    return q.answer(sources, steps)


# -- fft ----------------------------------------------------------------------------------------


@explains("stablehlo.fft")
def fft_provenance(q: ProvenanceQuery):
    """Every element of the transformed block (the last len(fft_length) dims) of the same batch index."""
    kind = str(q.attr("fft_type"))
    lengths = tuple(int(n) for n in q.attr("fft_length"))
    rank = len(lengths)
    shape = q.operand_shape(0)
    batch, k = tuple(q.index[:-rank]), tuple(q.index[-rank:])
    block = list(itertools.product(*(range(n) for n in shape[-rank:])))
    sources = [Source(0, batch + at, TRANSFORMED_ELEMENT) for at in block]
    inverse = kind in ("IFFT", "IRFFT")
    steps = [(FFT_FORM, {"kind": kind, "rank": rank, "lengths": lengths, "index": q.index, "batch": batch,
                         "sign": "+" if inverse else "-", "scale": f" / {_product(lengths)}" if inverse else "",
                         "k": k if rank > 1 else k[0]}),
             (FFT_READS, {"count": len(block)})]
    if kind == "IRFFT":
        length = lengths[-1]
        steps.append((IRFFT_HERMITIAN, {"half": length // 2, "length": length}))
        if rank == 1:
            even = length % 2 == 0
            steps.append((IRFFT_IMAGINARY_NYQUIST, {"nyquist": length // 2}) if even else (IRFFT_IMAGINARY, {}))
    return q.answer(sources, steps)


@reaches("stablehlo.fft")
def fft_reach(q: ProvenanceQuery, operand: int, index: tuple, device) -> list[Reached]:
    """An element reaches every element of its batch's transformed block of the result."""
    rank = len(q.attr("fft_length"))
    batch = tuple(index[:-rank])
    block = itertools.product(*(range(n) for n in q.result_shape(0)[-rank:]))
    return [Reached(0, batch + at, q.process) for at in block]


def _product(values: Sequence[int]) -> int:
    out = 1
    for v in values:
        out *= v
    return out


# -- batch_norm ---------------------------------------------------------------------------------


def _feature(q: ProvenanceQuery, feature: int) -> list[tuple]:
    """Every operand index of one feature: the batch and spatial dimensions around feature_index."""
    dim = int(q.attr("feature_index"))
    shape = list(q.operand_shape(0))
    shape[dim] = 1
    return [at[:dim] + (feature,) + at[dim + 1:] for at in itertools.product(*(range(n) for n in shape))]


@explains("stablehlo.batch_norm_inference")
def batch_norm_inference_provenance(q: ProvenanceQuery):
    dim = int(q.attr("feature_index"))
    f = q.index[dim]
    sources = [Source(0, q.index, FEATURE_ELEMENT)] + [Source(k, (f,), role) for k, role in
                                                      ((1, SCALE), (2, OFFSET), (3, MEAN), (4, VARIANCE))]
    return q.answer(sources, [(NORM_INFERENCE, {"index": q.index, "f": (f,), "feature": f, "dim": dim,
                                                "epsilon": float(q.attr("epsilon"))})])


@explains("stablehlo.batch_norm_training")
def batch_norm_training_provenance(q: ProvenanceQuery):
    """output: the feature's elements (through its batch mean and variance), scale and offset;
    batch_mean and batch_var: the feature's elements."""
    dim = int(q.attr("feature_index"))
    f = q.index[dim] if q.result == 0 else q.index[0]
    members = _feature(q, f)
    steps = [(NORM_TRAINING, {"feature": f, "dim": dim, "count": len(members)})]
    if q.result != 0:
        statistic = "batch_mean" if q.result == 1 else "batch_var"
        if q.result == 2 and len(members) == 1:  # one element does not vary
            return q.answer([], steps + [(NORM_ALONE_VARIANCE, {"feature": f})])
        steps.append((NORM_BATCH_STATISTIC, {"statistic": statistic, "f": (f,), "count": len(members), "feature": f}))
        return q.answer([Source(0, at, FEATURE_ELEMENT) for at in members], steps)
    if len(members) == 1:  # x - mean(x) is exactly 0: only the offset is left
        return q.answer([Source(2, (f,), OFFSET)], steps + [(NORM_TRAINING_ALONE, {"feature": f, "index": q.index,
                                                                                     "f": (f,)})])
    sources = [Source(0, at, FEATURE_ELEMENT) for at in members] + [Source(1, (f,), SCALE), Source(2, (f,), OFFSET)]
    steps.append((NORM_TRAINING_OUTPUT, {"index": q.index, "f": (f,), "epsilon": float(q.attr("epsilon"))}))
    return q.answer(sources, steps)


@explains("stablehlo.batch_norm_grad")
def batch_norm_grad_provenance(q: ProvenanceQuery):
    """Operands: operand, scale, mean, variance, grad_output; results: grad_operand, grad_scale, grad_offset."""
    dim = int(q.attr("feature_index"))
    f = q.index[dim] if q.result == 0 else q.index[0]
    members = _feature(q, f)
    fields = {"f": (f,), "count": len(members), "feature": f}
    gradients = [Source(4, at, GRADIENT) for at in members]
    if q.result == 2:
        return q.answer(gradients, [(NORM_GRAD_OFFSET, fields)])
    statistics = [Source(2, (f,), MEAN), Source(3, (f,), VARIANCE)]
    elements = [Source(0, at, FEATURE_ELEMENT) for at in members]
    if q.result == 1:
        return q.answer(elements + statistics + gradients, [(NORM_GRAD_SCALE, fields)])
    return q.answer(elements + [Source(1, (f,), SCALE)] + statistics + gradients,
                    [(NORM_GRAD_OPERAND, dict(fields, index=q.index))])


# The results each operand of a batch_norm op reaches (all of its feature's elements of result 0,
# element [f] of the per-feature results), as the forward answers above say. A feature of one
# element: its output is the offset alone and its variance a constant 0.
_NORM_REACHES = {
    "stablehlo.batch_norm_inference": {0: (0,), 1: (0,), 2: (0,), 3: (0,), 4: (0,)},
    "stablehlo.batch_norm_training": {0: (0, 1, 2), 1: (0,), 2: (0,)},
    "stablehlo.batch_norm_grad": {0: (0, 1), 1: (0,), 2: (0, 1), 3: (0, 1), 4: (0, 1, 2)},
}
_ALONE_REACHES = {0: (1,), 1: (), 2: (0,)}  # batch_norm_training with one element per feature


@reaches(*_NORM_REACHES)
def batch_norm_reach(q: ProvenanceQuery, operand: int, index: tuple, device) -> list[Reached]:
    dim = int(q.attr("feature_index"))
    whole = operand == 0 or (operand == 4 and q.op.name == "stablehlo.batch_norm_grad")
    f = index[dim] if whole else index[0]
    if q.op.name == "stablehlo.batch_norm_inference" and operand == 0:
        return [Reached(0, index, q.process)]
    members = _feature(q, f)
    results = _NORM_REACHES[q.op.name][operand]
    if q.op.name == "stablehlo.batch_norm_training" and len(members) == 1:
        results = _ALONE_REACHES[operand]
    reached = []
    for r in results:
        reached += [Reached(0, at, q.process) for at in members] if r == 0 else [Reached(r, (f,), q.process)]
    return reached
