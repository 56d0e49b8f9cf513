"""Value summaries: every dtype family, NaN/Inf counting, tuples/tokens, empty and huge tensors."""
from __future__ import annotations

import json
import math
import tracemalloc

import ml_dtypes
import numpy as np
import pytest

from hlodbg.engine.debug import summary as summary_module
from hlodbg.engine.ir.dtypes import TOKEN
from hlodbg.engine.debug.summary import ValueSummary, summarize
from hlodbg.engine.ir.types import FLOAT_TYPE_NAMES, FloatType
from hlodbg.execution import summarize as summarize_for_json

INTEGERS = [
    (np.int8, "i8"), (np.int16, "i16"), (np.int32, "i32"), (np.int64, "i64"),
    (np.uint8, "ui8"), (np.uint16, "ui16"), (np.uint32, "ui32"), (np.uint64, "ui64"),
    (ml_dtypes.int4, "i4"), (ml_dtypes.uint4, "ui4"), (ml_dtypes.int2, "i2"), (ml_dtypes.uint2, "ui2"),
]
FLOATS = [(FloatType(name).numpy_dtype, name) for name in FLOAT_TYPE_NAMES if name != "tf32"]
# (dtype, MLIR spelling, sample values, Python type of min/max)
DTYPE_CASES = (
    [(dtype, spelling, [1, 0, -2, 1, 0, -1] if spelling == "i2" else [3, 0, 1, 2, 0, 1], int)
     for dtype, spelling in INTEGERS]
    + [(dtype, spelling, [0.5, 1, 2, 4] if spelling == "f8E8M0FNU" else [-1.5, 0, 0.5, 2, 0, 1], float)
       for dtype, spelling in FLOATS]
    + [(np.bool_, "i1", [True, False, True, True], bool)]
)


@pytest.mark.parametrize("dtype,spelling,data,number_type", DTYPE_CASES, ids=[c[1] for c in DTYPE_CASES])
def test_every_dtype_family_matches_numpy_in_float64(dtype, spelling, data, number_type):
    array = np.array(data).astype(dtype).reshape(2, -1)
    reference = array.astype(np.float64)  # the values as stored (after rounding to dtype)
    s = summarize(array)
    assert (s.kind, s.dtype, s.shape, s.size) == ("tensor", str(np.dtype(dtype)), array.shape, array.size)
    assert type(s.min) is number_type and type(s.max) is number_type
    assert s.min == reference.min() and s.max == reference.max()
    assert s.mean == pytest.approx(reference.mean(), rel=1e-12)
    assert s.std == pytest.approx(reference.std(), rel=1e-12)
    assert s.zeros == int(np.count_nonzero(reference == 0))
    assert (s.nan, s.inf, s.finite) == (0, 0, True)
    assert s.describe().startswith(f"2x{array.shape[1]}x{spelling} min ")


@pytest.mark.parametrize(
    "dtype,spelling",
    [(np.complex64, "complex<f32>"), (np.complex128, "complex<f64>")],
)
def test_complex_statistics_are_of_magnitudes(dtype, spelling):
    array = np.array([3 + 4j, 0, -1j, 1 + 0j], dtype)
    s = summarize(array)
    magnitudes = np.abs(array).astype(np.float64)
    assert (s.min, s.max, s.zeros) == (0.0, 5.0, 1)
    assert s.mean == pytest.approx(magnitudes.mean()) and s.std == pytest.approx(magnitudes.std())
    assert s.describe() == f"4x{spelling} |z| min 0 max 5 mean 1.75 std 1.92029"


def test_complex_nan_and_inf_count_parts():
    array = np.array([complex(np.inf, -np.inf), complex(np.nan, 1), complex(2, np.nan), complex(-np.inf, 0), 1j])
    s = summarize(array)
    # NaN: elements with a NaN part. Inf: each infinite part by its own sign.
    assert (s.nan, s.posinf, s.neginf, s.inf) == (2, 1, 2, 3)
    assert (s.min, s.max) == (1.0, 1.0) and not s.finite


# (dtype, values, nan, +inf, -inf, finite min, finite max)
NON_FINITE = [
    (np.float32, [1, np.nan, np.inf, -2, np.nan, -np.inf], 2, 1, 1, -2.0, 1.0),
    (np.float64, [np.nan, np.nan], 2, 0, 0, None, None),
    (np.float16, [np.inf, 65504, -np.inf], 0, 1, 1, 65504.0, 65504.0),
    (ml_dtypes.bfloat16, [np.nan, 0.5, np.inf, 3], 1, 1, 0, 0.5, 3.0),
    (ml_dtypes.float8_e5m2, [-np.inf, 1, np.nan], 1, 0, 1, 1.0, 1.0),
    (ml_dtypes.float8_e4m3fn, [np.nan, 448, -1], 1, 0, 0, -1.0, 448.0),  # no Inf in this type
    (ml_dtypes.float8_e4m3fnuz, [np.nan, 2], 1, 0, 0, 2.0, 2.0),
]


@pytest.mark.parametrize("dtype,data,nan,posinf,neginf,low,high", NON_FINITE, ids=[str(np.dtype(c[0])) for c in NON_FINITE])
def test_nan_and_inf_are_counted_and_left_out_of_statistics(dtype, data, nan, posinf, neginf, low, high):
    s = summarize(np.array(data, np.float64).astype(dtype))
    assert (s.nan, s.posinf, s.neginf, s.inf) == (nan, posinf, neginf, posinf + neginf)
    assert (s.min, s.max) == (low, high)
    assert s.finite is False
    if low is None:
        assert s.mean is None and s.std is None


def test_describe_line():
    s = summarize(np.array([[1, -2, 0], [np.nan, np.inf, 3]], np.float32))
    assert s.describe() == "2x3xf32 min -2 max 3 mean 0.5 std 1.80278 · 1 NaN · 1 +Inf"
    assert summarize(np.array([-np.inf, np.nan])).describe() == "2xf64 · 1 NaN · 1 -Inf"
    assert summarize(np.array(7, np.int32)).describe() == "i32 min 7 max 7 mean 7 std 0"
    assert summarize(np.array([True, False])).describe() == "2xi1 min false max true mean 0.5 std 0.5"


# (value, shape, size, dtype)
SCALARS_AND_EMPTY = [
    (np.array(2.5, np.float32), (), 1, "float32"),
    (np.float64(-1.0), (), 1, "float64"),
    (3, (), 1, "int64"),
    (np.zeros((0, 3), np.float32), (0, 3), 0, "float32"),
    (np.zeros((2, 0), ml_dtypes.bfloat16), (2, 0), 0, "bfloat16"),
    (np.zeros(0, np.int8), (0,), 0, "int8"),
    (np.zeros(0, np.bool_), (0,), 0, "bool"),
    (np.zeros(0, np.complex64), (0,), 0, "complex64"),
]


@pytest.mark.parametrize("value,shape,size,dtype", SCALARS_AND_EMPTY, ids=[f"{c[3]}{c[1]}" for c in SCALARS_AND_EMPTY])
def test_scalars_and_zero_size(value, shape, size, dtype):
    s = summarize(value)
    assert (s.shape, s.size, s.dtype) == (shape, size, dtype)
    if size == 0:
        assert (s.min, s.max, s.mean, s.std, s.nan, s.inf, s.zeros) == (None, None, None, None, 0, 0, 0)
        assert s.describe().endswith(" (empty)")
    else:
        assert s.min == s.max == float(np.asarray(value))


def test_tuples_and_tokens():
    value = (np.array([1.0, np.nan], np.float32), TOKEN, (np.array([2], np.int8),))
    s = summarize(value)
    assert (s.kind, s.size, s.dtype, s.shape) == ("tuple", 3, "", ())
    first, token, inner = s.elements
    assert (first.nan, first.min) == (1, 1.0)
    assert (token.kind, token.size, token.elements) == ("token", 0, ())
    assert inner.kind == "tuple" and inner.elements[0].max == 2
    assert not s.finite and inner.finite and token.finite
    assert s.describe() == "tuple(2xf32 min 1 max 1 mean 1 std 0 · 1 NaN, token, tuple(1xi8 min 2 max 2 mean 2 std 0))"
    assert summarize(()).describe() == "tuple()"
    assert summarize(TOKEN) == ValueSummary(kind="token", dtype="", shape=(), size=0)


KEYS = ["kind", "dtype", "shape", "size", "nan", "posinf", "neginf", "min", "max", "mean", "std", "zeros", "elements", "sampled"]


@pytest.mark.parametrize(
    "value",
    [
        np.array([np.nan, np.inf, -np.inf, 1.5], np.float32),
        np.array([np.nan, np.nan]),
        (np.array([True]), TOKEN),
        np.array([1 + 2j], np.complex128),
        np.array([1, 2], ml_dtypes.int4),
        np.array([1e308, 1e308, -1e308]),  # float64 accumulation overflows: still valid JSON
    ],
)
def test_to_json_has_stable_keys_and_is_strict_json(value):
    data = summarize(value).to_json()
    assert list(data) == KEYS
    for element in data["elements"]:
        assert list(element) == KEYS
    assert json.loads(json.dumps(data, allow_nan=False)) == data


def test_to_json_spells_non_finite_statistics_as_strings():
    s = ValueSummary(kind="tensor", dtype="float64", shape=(1,), size=1, min=1.0, max=1.0, mean=math.inf,
                     std=math.nan)
    assert (s.to_json()["mean"], s.to_json()["std"]) == ("inf", "nan")


def test_mean_and_std_stay_accurate_with_a_large_offset():
    rng = np.random.default_rng(0)
    array = 1e9 + rng.standard_normal(10_000)
    s = summarize(array)
    assert s.mean == pytest.approx(array.mean(), rel=1e-15)
    assert s.std == pytest.approx(array.std(), rel=1e-9)


@pytest.mark.parametrize(
    "make",
    [
        lambda a: a,
        lambda a: a.T,  # Fortran order: read in memory order
        lambda a: a[:, ::2],  # strided: copied one block of rows at a time
        lambda a: a[::3, 1:].T,
        lambda a: a.reshape(1, 6, 40)[:, :, ::3],  # a leading axis of 1 is stepped into
    ],
    ids=["contiguous", "fortran", "strided", "strided-transposed", "leading-one"],
)
@pytest.mark.parametrize("dtype", [np.float32, np.int16, ml_dtypes.bfloat16, np.complex64])
def test_blocks_merge_to_the_whole_array_statistics(monkeypatch, make, dtype):
    monkeypatch.setattr(summary_module, "BLOCK", 7)  # many uneven blocks
    rng = np.random.default_rng(1)
    base = (rng.standard_normal((6, 40)) * 10).astype(dtype)
    if np.dtype(dtype).kind in "fcV":
        base[0, 3] = np.nan
        base[5, 38] = np.inf
    view = make(base)
    s = summarize(view)
    with monkeypatch.context() as m:
        m.setattr(summary_module, "BLOCK", 1 << 22)
        whole = summarize(np.ascontiguousarray(view))
    assert (s.nan, s.posinf, s.neginf, s.zeros, s.min, s.max) == (
        whole.nan, whole.posinf, whole.neginf, whole.zeros, whole.min, whole.max)
    assert s.mean == pytest.approx(whole.mean, rel=1e-12) and s.std == pytest.approx(whole.std, rel=1e-12)
    values = np.asarray(view).astype(np.complex128 if np.dtype(dtype).kind == "c" else np.float64)
    values = np.abs(values[np.isfinite(values)]) if np.dtype(dtype).kind == "c" else values[np.isfinite(values)]
    assert s.mean == pytest.approx(values.mean(), rel=1e-9)


def test_fifty_million_floats_are_summarised_in_blocks():
    array = np.ones(50_000_000, np.float32)
    array[3] = np.nan  # first block
    array[20_000_000] = np.inf  # a middle block
    array[-1] = -np.inf  # the last, partial block
    array[30_000_000] = -7
    array[40_000_001] = 0
    tracemalloc.start()
    try:
        s = summarize(array)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert (s.nan, s.posinf, s.neginf, s.zeros, s.min, s.max) == (1, 1, 1, 1, -7.0, 1.0)
    finite = 50_000_000 - 3
    assert s.mean == pytest.approx((finite - 1 - 8) / finite, rel=1e-12)
    assert peak < array.nbytes / 2, f"peak {peak / 1e6:.0f} MB for a {array.nbytes / 1e6:.0f} MB array"


@pytest.mark.parametrize("value", ["text", None, np.array(["a", "b"]), np.array([object()], dtype=object)])
def test_non_numeric_values_are_a_type_error(value):
    with pytest.raises(TypeError, match="cannot summarize a value of type"):
        summarize(value)


# hlodbg.execution.summarize (the JSON of `hlodbg run --json`) keeps its shape on top of ValueSummary.
JSON_SUMMARIES = [
    (np.array([1, np.nan, np.inf], np.float32),
     {"dtype": "float32", "shape": [3], "nan": 1, "inf": 1, "min": 1.0, "max": 1.0, "mean": 1.0,
      "values": [1.0, "nan", "inf"]}),
    (np.array([[1, 2]], np.int32), {"dtype": "int32", "shape": [1, 2], "min": 1, "max": 2, "mean": 1.5, "values": [1, 2]}),
    (np.array([True, False]), {"dtype": "bool", "shape": [2], "min": False, "max": True, "mean": 0.5, "values": [True, False]}),
    (np.array([-2, 3], ml_dtypes.int4), {"dtype": "int4", "shape": [2], "min": -2, "max": 3, "mean": 0.5, "values": [-2, 3]}),
    (np.array([0.5], ml_dtypes.bfloat16),
     {"dtype": "bfloat16", "shape": [1], "nan": 0, "inf": 0, "min": 0.5, "max": 0.5, "mean": 0.5, "values": [0.5]}),
    (np.array([1 + 2j], np.complex64), {"dtype": "complex64", "shape": [1], "nan": 0, "inf": 0, "values": [[1.0, 2.0]]}),
    (np.zeros((0, 2), np.float32), {"dtype": "float32", "shape": [0, 2]}),
    (np.arange(17, dtype=np.int8), {"dtype": "int8", "shape": [17], "min": 0, "max": 16, "mean": 8.0}),
    ((TOKEN, np.array(1.0)),
     {"kind": "tuple", "elements": [{"kind": "token"},
                                    {"dtype": "float64", "shape": [], "nan": 0, "inf": 0, "min": 1.0, "max": 1.0,
                                     "mean": 1.0, "values": [1.0]}]}),
]


@pytest.mark.parametrize("value,expected", JSON_SUMMARIES, ids=[str(i) for i in range(len(JSON_SUMMARIES))])
def test_run_json_summary_keeps_its_shape(value, expected):
    assert summarize_for_json(value) == expected


# -- values too big to summarise in full at every step: sampled first, exact on request -----------------

def _big_floats() -> np.ndarray:
    array = np.random.default_rng(3).standard_normal((300, 200)).astype(np.float32) * 2 + 5
    array[7, 3] = np.nan  # outside any sample of 1,000 of 60,000: still counted
    array[299, 199] = -np.inf
    array[150, 1] = 1e3  # the maximum, where no sample run reads
    array[4, 4] = 0.0
    return array


def test_a_sampled_summary_says_so_and_keeps_min_max_and_nan_counts_exact():
    array = _big_floats()
    sampled = summarize(array, sample_above=1_000)
    exact = summarize(array, sample_above=1_000, exact=True)
    assert sampled.sampled == 1_000 and not sampled.exact and exact.exact and exact.sampled == 0
    assert (sampled.min, sampled.max, sampled.nan, sampled.posinf, sampled.neginf) == \
        (exact.min, exact.max, exact.nan, exact.posinf, exact.neginf) == (exact.min, 1e3, 1, 0, 1)
    assert not sampled.finite  # what NaN overlays read is never a guess
    assert "mean ≈" in sampled.describe() and "(≈ sampled 1k of 60k)" in sampled.describe()
    assert "≈" not in exact.describe()
    assert sampled.mean == pytest.approx(exact.mean, abs=0.3) and sampled.std == pytest.approx(2, rel=0.2)
    assert sampled.to_json()["sampled"] == 1_000 and summarize(array).sampled == 0  # default threshold: 100M


def test_an_exact_summary_of_a_big_value_matches_numpy():
    array = _big_floats()
    exact = summarize(array, sample_above=1_000, exact=True)
    finite = array[np.isfinite(array)].astype(np.float64)
    assert exact.min == finite.min() and exact.max == finite.max()
    assert exact.mean == pytest.approx(finite.mean(), rel=1e-12) and exact.std == pytest.approx(finite.std(), rel=1e-9)
    assert exact.zeros == 1


@pytest.mark.parametrize("array", [
    np.arange(50_000, dtype=np.int32).reshape(250, 200)[:, ::2],  # strided: sampled by index
    (np.random.default_rng(4).standard_normal(20_000) * (1 + 1j)).astype(np.complex64),
    np.arange(20_000, dtype=np.int64) % 3 == 0,  # booleans are counted in full: it is cheap
])
def test_sampling_other_dtypes(array):
    sampled, exact = summarize(array, sample_above=1_000), summarize(array, exact=True)
    assert sampled.sampled == (0 if array.dtype == np.bool_ else 1_000)
    assert (sampled.min, sampled.max, sampled.nan) == (exact.min, exact.max, exact.nan)
    assert sampled.mean == pytest.approx(exact.mean, rel=0.1)


def test_a_session_summarises_a_big_result_from_a_sample_until_asked_for_exact(monkeypatch):
    import hlodbg
    from hlodbg.engine.debug import summary as summary_module

    monkeypatch.setattr(summary_module, "SAMPLE_ABOVE", 1_000)
    program = hlodbg.load("func.func @main(%a: tensor<300x200xf32>) -> tensor<300x200xf32> {\n"
                          "  %0 = stablehlo.abs %a : tensor<300x200xf32>\n  return %0 : tensor<300x200xf32>\n}\n")
    session = program.session([_big_floats()], persist=False)
    session.continue_()
    assert session.summary(0).sampled and session.summary(0) is session.summary(0)  # cached
    exact = session.summary(0, exact=True)
    assert exact.exact and session.summary(0) is exact  # the exact one serves later questions
    session.close()


def test_the_inspector_marks_sampled_statistics_and_computes_exact_ones_on_request(monkeypatch):
    from hlodbg.engine.debug import summary as summary_module
    from hlodbg.ui.state import ValueView
    from hlodbg.ui.widgets.inspector import TensorInspector
    from hlodbg.ui.widgets.slice_entry import SliceEntry

    monkeypatch.setattr(summary_module, "SAMPLE_ABOVE", 1_000)
    array = _big_floats()
    inspector = TensorInspector()
    entry = SliceEntry(ValueView("%0", "tensor<300x200xf32>", array), array)
    inspector._entries, inspector._index = [entry], 0
    monkeypatch.setattr(inspector, "_refresh", lambda: None)  # not mounted: nothing to draw
    line = inspector._stats_line(entry).plain
    assert "mean ≈" in line and "(≈ sampled 1k of 60k; E: exact)" in line
    inspector.exact_statistics()
    line = inspector._stats_line(entry).plain
    assert entry.summary.exact and "sampled" not in line and "≈" not in line
    assert entry.summary.mean == summarize(array, exact=True).mean
