"""XLA layouts (engine/machine/layout.py): the text, sizes as XLA reports them, where each element
goes, and storage: store -> load is the identity for every dtype, rank and tiling, and the bytes
are where the index arithmetic says they are."""
from __future__ import annotations

from math import prod

import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hlodbg.engine.ir.dtypes import bit_width
from hlodbg.engine.ir.errors import HlodbgError
from hlodbg.engine.machine import layout as layout_module
from hlodbg.engine.machine.layout import COMBINE, Layout, LayoutError, format_shape, parse_shape

L = Layout.parse
BF16 = np.dtype(ml_dtypes.bfloat16)
F32 = np.dtype(np.float32)

DTYPES = [np.dtype(t) for t in (
    np.bool_, ml_dtypes.int2, ml_dtypes.int4, np.int8, np.int16, np.int32, np.int64,
    ml_dtypes.uint2, ml_dtypes.uint4, np.uint8, np.uint16, np.uint32, np.uint64,
    np.float16, ml_dtypes.bfloat16, np.float32, np.float64, np.complex64, np.complex128,
    ml_dtypes.float8_e3m4, ml_dtypes.float8_e4m3, ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e4m3fnuz,
    ml_dtypes.float8_e4m3b11fnuz, ml_dtypes.float8_e5m2, ml_dtypes.float8_e5m2fnuz,
    ml_dtypes.float8_e8m0fnu, ml_dtypes.float6_e2m3fn, ml_dtypes.float6_e3m2fn, ml_dtypes.float4_e2m1fn)]


def random_array(dtype: np.dtype, shape, rng: np.random.Generator) -> np.ndarray:
    """Every bit pattern the type has is fair game (NaN payloads, -0.0, subnormals): the array is
    drawn as raw bytes, masked to the type's bits for the sub-byte types."""
    raw = rng.integers(0, 256, size=(*shape, dtype.itemsize), dtype=np.uint8)
    if dtype == np.bool_:
        return raw[..., 0] % 2 == 1
    if dtype.itemsize == 1:
        raw = raw & ((1 << bit_width(dtype)) - 1)
    return raw.view(dtype).reshape(shape)


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and a.dtype == b.dtype and np.array_equal(
        np.ascontiguousarray(a).view(np.uint8), np.ascontiguousarray(b).view(np.uint8))


def naive_bytes(array: np.ndarray, layout: Layout) -> np.ndarray:
    """The buffer built element by element from linear_index, as one little-endian integer of
    bits: the reference store is checked against."""
    bits = layout.element_bits(array.dtype)
    nbytes = layout.physical_bytes(array.shape, array.dtype)
    raw = np.ascontiguousarray(array).view(np.uint8).reshape(*array.shape, array.dtype.itemsize)
    buffer = 0
    for index in np.ndindex(*array.shape):
        value = int.from_bytes(raw[index].tobytes(), "little") & ((1 << bits) - 1)
        buffer |= value << (layout.linear_index(index, array.shape) * bits)
    return np.frombuffer(buffer.to_bytes(nbytes, "little"), np.uint8)


# -- text -------------------------------------------------------------------------------------

ROUND_TRIP = ["{1,0:T(8,128)(2,1)}", "{}", "{:T(128)}", "{0:T(1024)(128)(2,1)}", "{1,0:T(8,128)S(1)}",
              "{1,0:T(2,2)}", "{1,0:T(2,4)(2,1,1,1)}", "{4,3,2,1,0:T(*,*,2,*,3)}", "{0,1:T(8,128)}",
              "{3,1,0,2:T(64,128)(8,1)E(4)S(1)}", "{1,0:T(8,128)(4,1)}", "{:S(2)}", "{0:T(512)(128)(4,1)}",
              "{1,0:T(8,128)L(1024)}", "{2,1,0:T(8,128)(2,1)S(1)}", "{1,0}", "{0}", "{0,1:T(2,128)S(5)}",
              "{:T(128)S(6)}", "{1,0:T(8,128)(8,1)L(4)E(4)S(1)}"]


@pytest.mark.parametrize("text", ROUND_TRIP)
def test_layout_text_round_trips(text):
    assert str(L(text)) == text
    assert L(text[1:-1]) == L(text)  # braces are optional


def test_layout_fields():
    layout = L("{3,1,0,2:T(64,128)(8,1)L(2)E(4)S(1)}")
    assert layout.minor_to_major == (3, 1, 0, 2)
    assert layout.tiles == ((64, 128), (8, 1))
    assert (layout.tail_padding_alignment, layout.element_size_in_bits, layout.memory_space) == (2, 4, 1)
    assert L("{4,3,2,1,0:T(*,*,2,*,3)}").tiles == ((COMBINE, COMBINE, 2, COMBINE, 3),)
    assert hash(L("{1,0:T(8,128)}")) == hash(L("1,0:T(8,128)"))


@pytest.mark.parametrize("text, message", [
    ("{1,0:T(8,128)", "expected '}'"),
    ("{1,0:T(8,128", "expected ',' or ')' in a tile at column 13"),
    ("{1,0;T(8,128)}", "at column 5"),
    ("{1,0:T8,128)}", "expected '(' after T at column 7"),
    ("{1,0:T(8,x)}", "expected a tile size or '*' at column 10"),
    ("{1,0:S(1)T(8,128)}", "column 10"),
    ("{1,0:E(4)L(2)}", "column 10"),
    ("{1,0:T(8,128)SC(0:1,2)}", "split config SC(...) at column 14 is not supported"),
    ("{1,0:D(D,C)T(8,128)}", "dim-level types D(...) (sparse arrays) at column 6"),
    ("{1,0:T(8,128)#(u32)}", "sparse index type #(...) at column 14"),
    ("{1,0:T(8,128)*(u32)}", "sparse pointer type *(...) at column 14"),
    ("{1,0:T(8,128)P(f32[2])}", "physical shape P(...)"),
    ("{1,0:T(8,128)M(8)}", "dynamic-shape metadata M(...)"),
    ("{1,0:T(0,128)}", "tile sizes must be positive"),
    ("{1,0:T(8,*)}", "is '*', but there is no more-minor dim"),
    ("{1,0:L(0)}", "L(n) needs n >= 1"),
])
def test_bad_layout_text_is_a_clear_error(text, message):
    with pytest.raises(LayoutError) as caught:
        L(text)
    assert message in str(caught.value)
    assert isinstance(caught.value, HlodbgError)


@pytest.mark.parametrize("text, rank, message", [
    ("{0,1,2:T(8,128)}", 2, "permutation of 0..1 for a rank-2 array, got (0,1,2)"),
    ("{0,0:T(8,128)}", 2, "permutation"),
    ("{0:T(8,128)}", 1, "has 2 dims, more than a rank-1 array"),
    ("{1,0:T(8,128)(2,1,1,1,1)}", 2, "more than the 4 dims tile 1 produces"),
    ("{0}", 0, "a scalar has no dims"),
])
def test_layout_that_does_not_fit_the_rank(text, rank, message):
    with pytest.raises(LayoutError, match=None) as caught:
        L(text).validate(rank)
    assert message in str(caught.value)


def test_shapes_parse_and_print():
    assert parse_shape("f32[3,5]{1,0:T(2,2)}") == (F32, (3, 5), L("{1,0:T(2,2)}"))
    assert parse_shape("bf16[4096]") == (BF16, (4096,), None)
    assert parse_shape("pred[]{:T(512)}") == (np.dtype(np.bool_), (), L("{:T(512)}"))
    names = {"pred": np.bool_, "s4": ml_dtypes.int4, "u2": ml_dtypes.uint2, "s64": np.int64,
             "f8e4m3fn": ml_dtypes.float8_e4m3fn, "f8e5m2": ml_dtypes.float8_e5m2, "c64": np.complex64,
             "f8e4m3b11fnuz": ml_dtypes.float8_e4m3b11fnuz, "f8e8m0fnu": ml_dtypes.float8_e8m0fnu,
             "f4e2m1fn": ml_dtypes.float4_e2m1fn, "c128": np.complex128, "f16": np.float16}
    for name, dtype in names.items():
        assert parse_shape(f"{name}[2]")[0] == np.dtype(dtype)
        assert format_shape(dtype, (2, 3)) == f"{name}[2,3]"
    for dtype in DTYPES:
        text = format_shape(dtype, (4, 2), L("{0,1:T(2,128)}"))
        assert parse_shape(text) == (dtype, (4, 2), L("{0,1:T(2,128)}"))


@pytest.mark.parametrize("text, message", [
    ("q32[3]", "expected an XLA element type"),
    ("f32[3,5", "expected ',' or ']' in the dimensions at column 8"),
    ("f32[<=3]", "dynamic dimensions"),
    ("f32[3,5]{1,0,2}", "permutation"),
    ("f32[3,5]{1,0}x", "expected end of the shape at column 14"),
])
def test_bad_shape_text(text, message):
    with pytest.raises(LayoutError) as caught:
        parse_shape(text)
    assert message in str(caught.value)


# -- the worked examples (XLA's tiled_layout doc; ../shared/docs/tpu.md §1.7) ---------------------

def test_doc_examples():
    assert L("{1,0:T(2,2)}").linear_index((2, 3), (3, 5)) == 17
    location = L("{1,0:T(2,2)}").locate((2, 3), (3, 5), F32)
    assert (location.tile_index, location.tile_offset, location.tile_number) == ((1, 1), (0, 1), 4)
    assert L("{1,0:T(2,4)(2,1,1,1)}").linear_index((6, 5), (8, 8)) == 51
    combined = L("{4,3,2,1,0:T(*,*,2,*,3)}")
    assert combined.physical_shape((2, 7, 8, 11, 10)) == (56, 37, 2, 3)
    # ... which is F32[112,110] tiled by (2,3): same slot for every element.
    plain = L("{1,0:T(2,3)}")
    rng = np.random.default_rng(0)
    for _ in range(50):
        index = tuple(int(rng.integers(0, d)) for d in (2, 7, 8, 11, 10))
        flat = (np.ravel_multi_index(index[:3], (2, 7, 8)), np.ravel_multi_index(index[3:], (11, 10)))
        assert combined.linear_index(index, (2, 7, 8, 11, 10)) == plain.linear_index(flat, (112, 110))


def test_brief_worked_examples():
    f32 = L("{1,0:T(8,128)}")
    assert f32.physical_bytes((3, 5), F32) == 4096
    assert f32.locate((2, 3), (3, 5), F32).byte_offset == 1036

    bf16 = L("{1,0:T(8,128)(2,1)}")
    assert bf16.physical_shape((3, 5)) == (1, 1, 4, 128, 2, 1)
    assert bf16.physical_bytes((3, 5), BF16) == 2048
    assert bf16.locate((2, 3), (3, 5), BF16).linear_index == 262
    assert bf16.locate((2, 3), (3, 5), BF16).byte_offset == 524
    row3 = bf16.locate((3, 3), (4, 5), BF16)
    assert (row3.linear_index, row3.byte_offset, row3.word_index) == (263, 526, 131)
    assert bf16.locate((2, 3), (4, 5), BF16).word_mates == ((3, 3),)  # rows 2 and 3 share a word
    assert row3.word_mates == ((2, 3),)
    assert bf16.locate((2, 3), (3, 5), BF16).word_mates == ()  # row 3 of a [3,5] is padding

    vector = L("{0:T(1024)(128)(2,1)}")
    assert vector.physical_shape((4096,)) == (4, 4, 128, 2, 1)
    assert [vector.linear_index((i,), (4096,)) for i in (5, 133)] == [10, 11]
    assert vector.locate((5,), (4096,), BF16).word_mates == ((133,),)

    int4 = L("{1,0:T(8,128)(8,1)E(4)}")
    location = int4.locate((7, 1), (8, 256), ml_dtypes.int4)
    assert (location.linear_index, location.byte_offset, location.bit_offset) == (15, 7, 4)
    assert int4.locate((6, 1), (8, 256), ml_dtypes.int4).bit_offset == 0
    assert len(location.word_mates) == 7
    assert int4.physical_bytes((8, 256), ml_dtypes.int4) == 1024


def test_v5e_argument_bytes_and_ifrt_padding():
    # entry_computation_layout of a TPU v5e dump: memory_analysis() says 6656 argument bytes.
    args = [("{0,1:T(8,128)}", (16, 8)), ("{0,1:T(4,128)}", (8, 4)), ("{0:T(128)}", (4,))]
    assert [L(text).physical_bytes(shape, F32) for text, shape in args] == [4096, 2048, 512]
    # IFRT's memory-stats test: f32[12,16] sharded 2 ways, "the second dimension is padded to 128".
    assert L("{1,0:T(1,128)}").physical_bytes((6, 16), F32) == 3072
    assert L("{0,1:T(1,128)}").physical_bytes((6, 16), F32) == 8192


def test_sizes_follow_array_size():
    assert L("{:T(128)}").physical_bytes((), F32) == 512  # a scalar takes a whole tile
    assert L("{:T(512)}").physical_bytes((), np.bool_) == 512
    assert L("{}").physical_bytes((), F32) == 4
    assert L("{1,0:T(8,128)L(3000)}").physical_elements((8, 128)) == 3000
    assert L("{1,0:T(8,128)(8,1)E(4)}").physical_bytes((3, 5), ml_dtypes.int4) == 512
    assert L("{1,0:E(4)}").physical_bytes((3, 3), ml_dtypes.uint4) == 5  # ceil(9 * 4 / 8)
    assert L("{1,0}").physical_bytes((3, 3), ml_dtypes.uint4) == 9  # natural size: one byte each
    assert L("{1,0:T(8,128)S(1)}").physical_bytes((3, 5), F32) == 4096  # S(n) is metadata
    assert L("{2,1,0}").physical_bytes((2, 0, 3), F32) == 0


def test_element_size_must_fit_the_type():
    with pytest.raises(LayoutError, match=r"E\(4\) does not fit f32"):
        L("{0:E(4)}").physical_bytes((4,), F32)
    with pytest.raises(LayoutError, match=r"E\(2\) does not fit s4"):
        L("{0:E(2)}").physical_bytes((4,), ml_dtypes.int4)


def test_sub_tiles_that_pad_are_refused():
    with pytest.raises(LayoutError, match="sub-tiles add no padding"):
        L("{1,0:T(2,128)(4,1)}").physical_bytes((2, 3), np.int8)
    with pytest.raises(LayoutError, match=r"tile \(2,1,1,1\) pads"):
        L("{1,0:T(2,4)(2,1,1,1)}").store(np.zeros((6, 8), F32))


def test_locate_outside_the_array():
    with pytest.raises(LayoutError, match=r"index \(3,0\) is outside \[3,5\]"):
        L("{1,0:T(8,128)}").locate((3, 0), (3, 5), F32)


# -- storage ------------------------------------------------------------------------------------

def test_known_bytes():
    x = np.arange(15, dtype=np.float32).reshape(3, 5)
    buffer = L("{1,0:T(2,2)}").store(x)
    words = buffer.view(np.float32)
    assert words[17] == x[2, 3] and buffer.size == 2 * 3 * 4 * 4
    assert list(words[:4]) == [0, 1, 5, 6]  # tile (0,0): x[0,0], x[0,1], x[1,0], x[1,1]
    bf = np.arange(20, dtype=np.float32).reshape(4, 5).astype(BF16)
    packed = L("{1,0:T(8,128)(2,1)}").store(bf)
    word = packed[524:528].view(np.uint32)[0]  # little-endian: row 2 low half, row 3 high half
    assert word & 0xFFFF == bf[2, 3].view(np.uint16) and word >> 16 == bf[3, 3].view(np.uint16)
    nibbles = L("{1,0:T(8,128)(8,1)E(4)}").store(np.full((8, 256), 3, ml_dtypes.int4))
    assert nibbles[0] == 0x33 and nibbles.size == 1024
    assert L("{0:T(512)(128)(4,1)}").store(np.array([True])).tolist() == [1] + [0] * 511


def test_padding_is_zero_and_values_survive_special_bits():
    x = np.array([[-0.0, np.nan], [np.inf, 1e-45]], np.float32)
    x.view(np.uint32)[0, 1] = 0x7FC01234  # a NaN with a payload
    buffer = L("{0,1:T(2,128)}").store(x)
    assert buffer.size == 2 * 128 * 4 * 1
    assert not np.delete(buffer.view(np.uint32), [0, 1, 128, 129]).any()
    assert same_bits(L("{0,1:T(2,128)}").load(buffer, x.shape, x.dtype), x)


SEED_LAYOUTS = [
    ("{1,0:T(8,128)}", (20, 300)), ("{0,1:T(8,128)(2,1)}", (5, 17)), ("{0:T(1024)(128)(2,1)}", (1500,)),
    ("{:T(256)}", ()), ("{0:T(512)(128)(4,1)}", (1,)), ("{2,1,0:T(8,128)(4,1)}", (3, 9, 130)),
    ("{1,0:T(2,4)(2,1,1,1)}", (8, 8)), ("{4,3,2,1,0:T(*,*,2,*,3)}", (2, 7, 8, 11, 10)),
    ("{3,1,0,2:T(8,128)(8,1)L(8)E(4)}", (2, 3, 5, 7)), ("{0,2,1}", (3, 4, 5)),
    ("{1,0:T(4,8)(*,2,1)}", (9, 13)), ("{4,0,3,1,2:T(2,4)(2,1)}", (2, 3, 2, 5, 3)),
    # one tile across the minor dims: stored through a view of the padded array
    ("{1,0:T(8,128)}", (20, 100)), ("{0,1:T(8,128)}", (100, 20)), ("{2,0,1:T(4,128)L(1024)}", (3, 5, 70)),
]


@pytest.mark.parametrize("text, shape", SEED_LAYOUTS)
@pytest.mark.parametrize("dtype", [F32, BF16, np.dtype(np.bool_), np.dtype(ml_dtypes.int4),
                                   np.dtype(np.complex128), np.dtype(ml_dtypes.float6_e3m2fn)],
                         ids=str)
@pytest.mark.parametrize("small, viewed", [(0, 0), (1 << 40, 1 << 40), (1 << 40, 0)],
                         ids=["reshaped", "slot-map", "view"])
def test_store_matches_the_index_arithmetic(text, shape, dtype, small, viewed, monkeypatch):
    # Every way of storing: reshape/transpose, the slot map small arrays take, and the view of the
    # padded array a one-tiling layout with one tile across its minor dims gives.
    monkeypatch.setattr(layout_module, "SMALL", small)
    monkeypatch.setattr(layout_module, "VIEWED_FROM", viewed)
    layout = L(text)
    if layout.element_size_in_bits and (dtype.itemsize != 1 or bit_width(dtype) > layout.element_size_in_bits):
        layout = Layout(layout.minor_to_major, layout.tiles, layout.tail_padding_alignment)
    x = random_array(dtype, shape, np.random.default_rng(1))
    buffer = layout.store(x)
    assert np.array_equal(buffer, naive_bytes(x, layout))
    assert same_bits(layout.load(buffer, shape, dtype), x)


def test_linear_and_logical_index_are_inverse():
    layout, shape = L("{0,2,1:T(2,4)(2,1)}"), (5, 3, 6)
    slots = layout.physical_elements(shape)
    seen = set()
    for slot in range(slots):
        index = layout.logical_index(slot, shape)
        if index is not None:
            assert layout.linear_index(index, shape) == slot
            seen.add(index)
    assert len(seen) == prod(shape)


@st.composite
def layouts_and_shapes(draw):
    rank = draw(st.integers(0, 5))
    shape = tuple(draw(st.lists(st.integers(0 if rank else 1, 7), min_size=rank, max_size=rank)))
    minor_to_major = tuple(draw(st.permutations(range(rank))))
    tiles = []
    if draw(st.booleans()):
        length = draw(st.integers(1, max(rank, 1)))
        first = draw(st.lists(st.sampled_from([1, 2, 3, 4, 8, COMBINE]), min_size=length, max_size=length))
        first[-1] = abs(first[-1])
        tiles.append(tuple(first))
        # Sub-tiles dividing the first tile (no extra padding), possibly reaching the tile grid.
        if draw(st.booleans()):
            tiled = [t for t in first if t != COMBINE]
            sub = [draw(st.sampled_from([d for d in (1, 2, 4) if t % d == 0])) for t in tiled]
            tiles.append((1,) * draw(st.integers(0, len(sub))) + tuple(sub))
    tail = draw(st.sampled_from([1, 1, 3, 8]))
    return Layout(minor_to_major, tuple(tiles), tail), shape


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(layouts_and_shapes(), st.sampled_from(DTYPES), st.integers(0, 2**32 - 1), st.booleans())
def test_store_load_identity(layout_and_shape, dtype, seed, packed):
    layout, shape = layout_and_shape
    if packed and dtype.itemsize == 1 and bit_width(dtype) < 8:
        layout = Layout(layout.minor_to_major, layout.tiles, layout.tail_padding_alignment, bit_width(dtype))
    x = random_array(dtype, shape, np.random.default_rng(seed))
    buffer = layout.store(x)
    assert buffer.dtype == np.uint8 and buffer.size == layout.physical_bytes(shape, dtype)
    assert same_bits(layout.load(buffer, shape, dtype), x)
    if prod(shape) <= 64:
        assert np.array_equal(buffer, naive_bytes(x, layout))
    # the other ways of storing (small arrays: a slot map or a view; big ones: reshape and transpose)
    small, viewed = layout_module.SMALL, layout_module.VIEWED_FROM
    for layout_module.SMALL, layout_module.VIEWED_FROM in (
            (0 if prod(shape) <= small else 1 << 40, 1 << 40), (1 << 40, 0)):
        try:
            other = Layout(layout.minor_to_major, layout.tiles, layout.tail_padding_alignment,
                           layout.element_size_in_bits)
            assert np.array_equal(other.store(x), buffer)
            assert same_bits(other.load(buffer, shape, dtype), x)
        finally:
            layout_module.SMALL, layout_module.VIEWED_FROM = small, viewed


def test_a_kept_slot_map_stores_and_loads_as_the_layout_does():
    rng = np.random.default_rng(5)
    for text, shape, dtype in [("{1,0:T(8,128)}", (8, 8), F32), ("{:T(128)}", (), F32),
                               ("{0,1:T(8,128)(2,1)L(1024)}", (5, 17), BF16), ("{0:T(128)}", (6,), np.dtype(np.int32))]:
        layout = L(text)
        slot_map = layout.slot_map(shape, dtype)
        x = random_array(dtype, shape, rng)
        buffer = slot_map.store(x)
        assert np.array_equal(buffer, layout.store(x)) and np.array_equal(buffer, naive_bytes(x, layout))
        assert same_bits(slot_map.load(buffer), x)
    # not how these are stored: packed 4-bit elements, an array past SMALL, one taking the view
    assert L("{0:T(128)E(4)}").slot_map((6,), np.dtype(ml_dtypes.int4)) is None
    assert L("{1,0:T(8,128)}").slot_map((40, 128), F32) is None
    assert L("{1,0:T(8,128)}").slot_map((16, 64), F32) is None


def test_load_rejects_a_short_buffer():
    with pytest.raises(LayoutError, match="too short"):
        L("{1,0:T(8,128)}").load(np.zeros(100, np.uint8), (3, 5), F32)


def test_a_small_array_padded_far_is_stored_the_general_way():
    # 4 elements in a 2^20-element tile: no slot map over the whole buffer, same bytes and values.
    from hlodbg.engine.machine.layout import SMALL_BUFFER

    layout = Layout.parse("{0:T(1048576)}")
    values = np.array([1.5, -2.0, 3.25, 0.0], np.float32)
    assert layout.physical_elements((4,)) > SMALL_BUFFER and layout.slot_map((4,), values.dtype) is None
    buffer = layout.store(values)
    assert buffer.size == 4 << 20 and buffer[:16].view(np.float32).tolist() == values.tolist()
    assert not buffer[16:].any()
    np.testing.assert_array_equal(layout.load(buffer, (4,), values.dtype), values)
